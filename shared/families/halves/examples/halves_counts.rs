//! Prints the family's counts for a range of boards, in this thread, and
//! (for n <= 6) the plain reference's: `cargo run --release -p
//! orchard-halves --example halves_counts -- 2 8`.

use std::time::Instant;

use orchard_core::{explore_all, Host, SearchFamily};
use orchard_halves::{reference, Halves, HalvesParams};

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().unwrap())
        .collect();
    let (lo, hi) = (
        args.first().copied().unwrap_or(2),
        args.get(1).copied().unwrap_or(8),
    );
    let with_reference = args.get(2).copied().unwrap_or(6);
    for n in lo..=hi {
        let job = Halves::new(HalvesParams { n: n as u32 }, &Host::default()).unwrap();
        let t = Instant::now();
        let s = explore_all(&job, job.root_units(), u64::MAX).unwrap();
        println!(
            "n={n}: count {} cuts {} walks {} symmetric {} nodes {} ({:.2?})",
            s.count,
            s.walks / 2,
            s.walks,
            s.symmetric,
            s.nodes,
            t.elapsed()
        );
        if n <= with_reference {
            let t = Instant::now();
            let r = reference::divisions(n);
            println!(
                "  reference: divisions {} distinct {} half-turn {} translation {} quarter-turn {} mirror {} sets {} ({:.2?})",
                r.divisions,
                r.distinct.len(),
                r.half_turn,
                r.by_translation,
                r.by_quarter_turn,
                r.by_mirror,
                r.sets,
                t.elapsed()
            );
        }
    }
}
