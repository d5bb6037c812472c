//! Table 1 of Funabiki & Takefuji in one process (no cluster): for each of
//! the six games, `RUNS` runs (default 100) of the network with seed `SEED`
//! (default 1): convergence, mean iterations, distinct boards. Usage:
//! `cargo run --release -p orchard-hip-nn --example table1 -- [RUNS] [SEED] [MAX_ITERATIONS]`.

use orchard_core::{explore_all, Host, SearchFamily};
use orchard_hip_nn::{HipNn, HipNnParams};

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a number"))
        .collect();
    let runs = args.first().copied().unwrap_or(100);
    let seed = args.get(1).copied().unwrap_or(1);
    let max_iterations = args.get(2).copied().unwrap_or(1000) as u32;
    let update = if args.get(3).copied().unwrap_or(0) == 1 {
        orchard_hip_nn::Update::Sequential
    } else {
        orchard_hip_nn::Update::Parallel
    };
    for (game, (m, n)) in [(2, 4), (2, 6), (3, 6), (4, 8), (5, 10), (6, 12)]
        .into_iter()
        .enumerate()
    {
        let start = std::time::Instant::now();
        let job = HipNn::new(
            HipNnParams {
                players: m,
                size: n,
                runs,
                seed,
                max_iterations,
                update,
                unit_runs: None,
            },
            &Host::default(),
        )
        .unwrap();
        let s = explore_all(&job, job.root_units(), u64::MAX).unwrap();
        let r = job.report(&s);
        println!(
            "game #{}: {m} players {n}x{n}: converged {}/{} ({:.1}%), verified {}, mean it {:.1}, distinct {}, {:.2} s",
            game + 1,
            s.converged,
            s.runs,
            100.0 * s.verified as f64 / s.runs as f64,
            s.verified,
            r.json["mean_iterations"].as_f64().unwrap_or(f64::NAN),
            r.json["distinct_boards"],
            start.elapsed().as_secs_f64()
        );
    }
}
