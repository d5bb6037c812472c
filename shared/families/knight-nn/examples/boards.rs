//! The knight's network in one process (no cluster) on square boards:
//! `cargo run --release -p orchard-knight-nn --example boards -- RUNS SEED MAX_ITERATIONS SIDE...`.
use orchard_core::{explore_all, Host, SearchFamily};
use orchard_knight_nn::{Init, KnightNn, KnightNnParams};
fn main() {
    let a: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().unwrap())
        .collect();
    let (runs, seed, max_iterations) = (a[0], a[1], a[2] as u32);
    for &n in &a[3..] {
        let t = std::time::Instant::now();
        let p = KnightNnParams {
            rows: n as u32,
            cols: n as u32,
            runs,
            seed,
            max_iterations,
            init: Init::RandomOutput,
            update: if std::env::var("SEQ").is_ok() {
                orchard_knight_nn::Update::Sequential
            } else {
                orchard_knight_nn::Update::Parallel
            },
            unit_runs: None,
        };
        let job = KnightNn::new(p, &Host::default()).unwrap();
        let s = explore_all(&job, job.root_units(), u64::MAX).unwrap();
        let r = job.report(&s);
        println!(
            "{} | mean tours {} loops {} | loops {} | {:.2} s",
            r.text[0],
            r.json["mean_iterations_tours"],
            r.json["mean_iterations_multi_loop"],
            r.json["loops"],
            t.elapsed().as_secs_f64()
        );
    }
}
