//! Runs a Hip job on one core, in this process, without the cluster: the
//! single-thread baseline for BENCHMARKS.md.
//!
//! `cargo run --release -p orchard-shared --example hip_one_core -- solve 5 5 [double]`
//! `cargo run --release -p orchard-shared --example hip_one_core -- direct 5 5 [double]` (one search, no units)
//! `cargo run --release -p orchard-shared --example hip_one_core -- draws 7 7 [colours] [seeds|profile]`

use std::time::Instant;

use orchard_shared::families::hip::{DrawsParams, HipDraws, HipSolve, Method, SolveParams};
use orchard_shared::family::{explore_all, SearchFamily};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize, d: u32| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(d);
    let (rows, cols) = (num(1, 4), num(2, 4));
    let start = Instant::now();
    let (text, nodes) = match args.first().map(String::as_str) {
        Some("draws") => {
            let mut p = DrawsParams::new(rows, cols, num(3, 2));
            p.method = match args.get(4).map(String::as_str) {
                Some("seeds") => Method::Seeds,
                Some("profile") => Method::Profile,
                _ => Method::Auto,
            };
            HipDraws::validate(&p).expect("parameters");
            let s =
                explore_all::<HipDraws>(&p, HipDraws::root_units(&p), u64::MAX).expect("search");
            (HipDraws::report(&p, &s).text, s.nodes)
        }
        Some("direct") => {
            let p = SolveParams::new(rows, cols, args.get(3).is_some_and(|a| a == "double"));
            let (v, nodes) =
                orchard_shared::families::hip::solve::solve_position(&p, &[]).expect("search");
            (vec![format!("value for the first player: {v}")], nodes)
        }
        _ => {
            let mut p = SolveParams::new(rows, cols, args.get(3).is_some_and(|a| a == "double"));
            p.depth = std::env::var("HIP_DEPTH").ok().and_then(|d| d.parse().ok());
            HipSolve::validate(&p).expect("parameters");
            let units = HipSolve::root_units(&p);
            let n = units.len();
            let (s, skipped) = if args.get(4).is_some_and(|a| a == "all") {
                (
                    explore_all::<HipSolve>(&p, units, u64::MAX).expect("search"),
                    0,
                )
            } else {
                let run = orchard_shared::families::hip::solve::explore_pruned(
                    &p,
                    units,
                    u64::MAX,
                    false,
                )
                .expect("search");
                (run.summary, run.skipped)
            };
            let mut text = HipSolve::report(&p, &s).text;
            text.push(format!("{n} root units, {skipped} units skipped as moot"));
            (text, s.nodes)
        }
    };
    let secs = start.elapsed().as_secs_f64();
    for line in text {
        println!("{line}");
    }
    println!(
        "{nodes} nodes, {secs:.2} s, {:.3e} nodes/s on one core",
        nodes as f64 / secs
    );
}
