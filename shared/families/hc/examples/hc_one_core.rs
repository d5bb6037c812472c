//! Runs an `hc` search on one core, in this process, without the cluster:
//! the single-thread baseline for BENCHMARKS.md.
//!
//! `cargo run --release -p orchard-hc --example hc_one_core -- 4 pairs`

use std::time::Instant;

use orchard_core::{explore_all, Host, SearchFamily};
use orchard_hc::{HararyColumns, HcParams, RgsPrefix, Variant};

fn main() {
    let mut args = std::env::args().skip(1);
    let columns: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(3);
    let variant = match args.next().as_deref() {
        Some("subsets") => Variant::Subsets,
        _ => Variant::Pairs,
    };
    let min_length = args.next().and_then(|a| a.parse().ok());
    let prefix: Vec<u8> = args
        .next()
        .map(|s| s.bytes().map(|b| b - b'1').collect())
        .unwrap_or_default();
    let p = HcParams {
        columns,
        variant,
        min_length,
    };
    let start = Instant::now();
    let job = HararyColumns::new(p, &Host::default()).expect("valid parameters");
    let s = explore_all(&job, vec![RgsPrefix(prefix)], u64::MAX).expect("search");
    let secs = start.elapsed().as_secs_f64();
    for line in job.report(&s).text {
        println!("{line}");
    }
    println!(
        "{:.2} s, {:.3e} nodes/s on one core",
        secs,
        s.nodes as f64 / secs
    );
}
