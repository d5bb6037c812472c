//! One `latin` job explored in this thread, without the cluster: the
//! figures and the time, for measuring the search itself.
//!
//! `cargo run --release -p orchard-latin --example latin_one_core -- ORDER [MATES] [DIAGONAL] [UNITS]`
//! (MATES and DIAGONAL: true or false, default true; UNITS: only the first
//! so many root units, for timing a part of a large job).

use std::time::Instant;

use orchard_core::{explore_all, Host, SearchFamily};
use orchard_latin::{Latin, LatinParams};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |i: usize| args.get(i).is_none_or(|a| a == "true");
    let params = LatinParams {
        order: args.first().map_or(6, |a| a.parse().expect("an order")),
        mates: flag(1),
        diagonal: flag(2),
    };
    let job = Latin::new(params, &Host::default()).expect("valid parameters");
    let start = Instant::now();
    let mut units = job.root_units();
    if let Some(k) = args.get(3) {
        units.truncate(k.parse().expect("a number of units"));
    }
    let summary = explore_all(&job, units, u64::MAX).expect("search");
    let secs = start.elapsed().as_secs_f64();
    let report = job.report(&summary);
    println!("{}", report.json);
    for line in report.text {
        println!("{line}");
    }
    println!("{secs:.3} s");
}
