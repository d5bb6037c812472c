//! The sweep's width square by square, for the cost estimates in
//! docs/notes/knight-tours.md: `profile ROWS COLS [MAX_STATES] [--halves [--chunks=K [--only=J]]]`
//! prints, for each square, the states expanded there, the states of the next layer,
//! the most bytes the layers held while it was processed, the tours closed
//! so far and the time, and stops (saying where) when a layer would exceed
//! MAX_STATES states (default 60 million). With `--halves` it sweeps to the
//! meeting only (module `join`) and then prints what the meeting did; with
//! `--chunks=K` the left states meet the right ones in K parts (sorted by
//! key, `join::meet_in_parts`), one after the other (`--only=J`: the first
//! J parts only, for an estimate): less memory, more work (states of different
//! parts never merge).
use std::time::Instant;

use orchard_knight_tours::frontier::Frontier;
use orchard_knight_tours::join::{self, Meeting, Mirror};
use orchard_knight_tours::table::Packed;
use orchard_knight_tours::Sweep;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let halves = args.iter().any(|a| a == "--halves");
    let chunks: usize = args
        .iter()
        .find_map(|a| a.strip_prefix("--chunks="))
        .map_or(1, |c| c.parse().expect("--chunks=K"));
    let only: usize = args
        .iter()
        .find_map(|a| a.strip_prefix("--only="))
        .map_or(usize::MAX, |c| c.parse().expect("--only=J"));
    let a: Vec<u64> = args
        .iter()
        .filter(|a| !a.starts_with("--"))
        .map(|s| {
            s.parse()
                .expect("profile ROWS COLS [MAX_STATES] [--halves]")
        })
        .collect();
    let f = Frontier::new(a[0] as usize, a[1] as usize);
    let cap = a.get(2).copied().unwrap_or(60_000_000);
    let meeting = if halves {
        Some(Meeting::new(&f).expect("a board long enough for two halves"))
    } else {
        None
    };
    let stop_at = meeting.as_ref().map_or(f.n, |m| m.left);
    let t = Instant::now();
    let mut sweep = Sweep::new(&f, 0, &[(Frontier::START, 1)]).unwrap();
    let mut tours: u128 = 0;
    let mut peak_bytes = 0;
    let mut mirror = None;
    while !sweep.done() && sweep.square() < stop_at {
        let v = sweep.square();
        if let Some(m) = meeting.as_ref().filter(|m| m.right == v) {
            let mi = Mirror::new(&f, m, sweep.layer()).unwrap();
            println!(
                "right states (layer {v}) turned: {} states, {} bytes, t {:.1?}",
                mi.len(),
                mi.bytes(),
                t.elapsed()
            );
            mirror = Some(mi);
        }
        let mirror_bytes = mirror.as_ref().map_or(0, |m| m.bytes() as u64);
        let r = match sweep.advance(cap, &mut |_| {}) {
            Ok(r) => r,
            Err(e) => {
                println!("square {v}: {e}; stopped");
                println!("peak bytes so far {peak_bytes}");
                return;
            }
        };
        tours += r.closed;
        peak_bytes = peak_bytes.max(r.peak_bytes + mirror_bytes);
        println!(
            "square {v} (col {} row {}): states {} next {} bytes {} tours {tours} t {:.1?}",
            v / f.h,
            v % f.h,
            r.expanded,
            sweep.layer().len(),
            r.peak_bytes + mirror_bytes,
            t.elapsed()
        );
    }
    let nodes = sweep.nodes();
    if let (Some(m), Some(mirror)) = (&meeting, &mirror) {
        let left = sweep.layer().len();
        let mut layer = sweep.into_layer();
        let per = layer.len().div_ceil(chunks.max(1)).max(1);
        if only < chunks {
            // The first `only` parts of the sorted layer, cut the same way.
            let mut states: Vec<(u64, u128)> = layer.iter().collect();
            states.sort_unstable();
            states.truncate(only * per);
            layer = Packed::from_states(&states).unwrap();
            println!(
                "only the first {only} of {chunks} parts ({} left states) meet: \
                 the tours below are partial",
                layer.len()
            );
        }
        let met = match join::meet_in_parts(&f, m, mirror, layer, per, cap, &mut |_| true) {
            Ok(x) => x.expect("never stopped"),
            Err(e) => {
                println!("meeting: {e}; stopped");
                return;
            }
        };
        tours += met.tours;
        peak_bytes = peak_bytes.max(met.peak_bytes + mirror.bytes() as u64);
        println!(
            "meeting at square {}: left states {left}, inner states expanded {}, joined states {} \
             ({} of a class found, {} matched), pairs walked {}, bytes {}, t {:.1?}",
            m.left,
            met.inner_states,
            met.joined,
            met.classes_found,
            met.matched,
            met.pairs,
            met.peak_bytes + mirror.bytes() as u64,
            t.elapsed()
        );
    }
    println!(
        "{}x{}: tours {tours} nodes {nodes} peak bytes {peak_bytes} time {:.2?}",
        a[0],
        a[1],
        t.elapsed()
    );
}
