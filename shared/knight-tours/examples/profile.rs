//! The sweep's width square by square, for the cost estimates in
//! BENCHMARKS.md: `profile ROWS COLS [MAX_STATES]` prints, for each square,
//! the states expanded there, the tours closed so far, the table's memory
//! and the time, and stops (saying where) when a layer would exceed
//! MAX_STATES states (default 60 million, about 4 GiB).
use std::time::Instant;

use orchard_knight_tours::frontier::Frontier;
use orchard_knight_tours::table::Table;

fn main() {
    let a: Vec<u64> = std::env::args()
        .skip(1)
        .map(|s| s.parse().unwrap())
        .collect();
    let f = Frontier::new(a[0] as usize, a[1] as usize);
    let cap = a.get(2).copied().unwrap_or(60_000_000) as usize;
    let t = Instant::now();
    let mut cur = Table::with_capacity(1);
    cur.add(Frontier::START, 1).unwrap();
    let mut tours: u128 = 0;
    let mut nodes: u64 = 0;
    for v in 0..f.n {
        if cur.is_empty() {
            break;
        }
        let mut next = Table::with_capacity(cur.len());
        for (k, c) in cur.iter() {
            nodes += 1;
            let r = f.step(v, k, &mut |nk| next.add(nk, c).unwrap());
            tours += c * u128::from(r.closed);
            if next.len() > cap {
                println!("square {v}: over {cap} states, stopped");
                return;
            }
        }
        println!(
            "square {v} (col {} row {}): states {} next {} bytes {} tours {tours} t {:.1?}",
            v / f.h,
            v % f.h,
            cur.len(),
            next.len(),
            cur.bytes() + next.bytes(),
            t.elapsed()
        );
        cur = next;
    }
    println!(
        "{}x{}: tours {tours} nodes {nodes} time {:.2?}",
        a[0],
        a[1],
        t.elapsed()
    );
}
