//! The yardstick of the template's speed: the same search (pairs placed
//! largest first on a bit mask) as a plain single-threaded program, with no
//! units, budget or cluster. `cargo run --release --example plain -- 12`
//! prints the pairings and nodes of `n = 12`; `bench/langford.sh` times it
//! against `langford run langford --n 12 --workers 1`.

fn count(n: u32, k: u32, row: u64, nodes: &mut u64) -> u64 {
    *nodes += 1;
    if k == 0 {
        return 1;
    }
    let mut sequences = 0;
    let span = k + 1;
    let mut p = 0;
    while p + span < 2 * n {
        let taken = (1u64 << p) | (1u64 << (p + span));
        if row & taken == 0 {
            sequences += count(n, k - 1, row | taken, nodes);
        }
        p += 1;
    }
    sequences
}

fn main() {
    let n: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .filter(|n| (1..=24).contains(n))
        .unwrap_or_else(|| {
            eprintln!("usage: plain N (1..=24)");
            std::process::exit(2)
        });
    let mut nodes = 0;
    let sequences = count(n, n, 0, &mut nodes);
    println!("n = {n}: {} pairings, {nodes} nodes", sequences / 2);
}
