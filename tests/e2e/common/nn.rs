//! hip-nn: the job the cluster tests run (runs of Funabiki & Takefuji's
//! network), and its answer from a single process. A run lost or counted
//! twice changes `runs`, the histogram and the node count, so the
//! comparison is exact.

use std::sync::OnceLock;

use orchard_core::{explore_all, Host, SearchFamily};
use orchard_hip_nn::{HipNn, HipNnParams, Update};

/// Two players on 6x6, 12,000 runs: about 10 s of CPU, most runs reaching
/// the 1000-step cutoff; a unit budget of 100,000 steps is some 120 runs.
pub const UNIT_BUDGET: &str = "100000";

/// The job, as `orchard submit` takes it.
pub const JOB: &[&str] = &[
    "hip-nn",
    "--players",
    "2",
    "--size",
    "6",
    "--runs",
    "12000",
    "--seed",
    "3",
];

/// The report of the same job in this process (once per test binary).
pub fn single_process_answer() -> &'static serde_json::Value {
    static ANSWER: OnceLock<serde_json::Value> = OnceLock::new();
    ANSWER.get_or_init(|| {
        let p = HipNnParams {
            players: 2,
            size: 6,
            runs: 12_000,
            seed: 3,
            max_iterations: 1000,
            update: Update::Parallel,
            unit_runs: None,
        };
        let job = HipNn::new(p, &Host::default()).unwrap();
        job.report(&explore_all(&job, job.root_units(), u64::MAX).unwrap())
            .json
    })
}

/// The cluster's `orchard results --json` is the single process's answer:
/// every run once (`runs`, the histogram, the node count), the same boards.
pub fn assert_same_answer(results: &serde_json::Value) {
    let want = single_process_answer();
    for key in [
        "runs",
        "converged",
        "verified",
        "rejected",
        "nodes",
        "histogram",
        "distinct_boards",
    ] {
        assert_eq!(results[key], want[key], "{key}: {results} vs {want}");
    }
    let (a, b) = (
        results["mean_iterations"].as_f64().unwrap(),
        want["mean_iterations"].as_f64().unwrap(),
    );
    assert!((a - b).abs() <= 1e-9 * b, "mean_iterations {a} vs {b}");
    assert_eq!(results["runs"], 12_000);
}
