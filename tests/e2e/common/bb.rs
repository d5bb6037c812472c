//! busy-beaver: the 4-card job the cluster tests run, and its answer from a
//! single process. Every count is a sum over the machines, and the results
//! file lists each machine once, sorted: a unit lost or merged twice
//! changes the counts and the file, so the comparison is exact.

use std::sync::OnceLock;

use orchard_busy_beaver::{BusyBeaver, BusyBeaverParams};
use orchard_core::{explore_all, Host, SearchFamily};

/// Units of at most 20,000 machines: the job (some six seconds on two
/// workers) runs in a few hundred of them, the splits for idle workers
/// included, so that a kill lands mid-job.
pub const UNIT_BUDGET: &str = "20000";

/// The job, as `orchard submit` takes it.
pub const JOB: &[&str] = &["busy-beaver", "--states", "4"];

/// The report of the same job in this process, and its results file as
/// the coordinator writes it (computed once per test binary).
pub fn single_process_answer() -> &'static (serde_json::Value, String) {
    static ANSWER: OnceLock<(serde_json::Value, String)> = OnceLock::new();
    ANSWER.get_or_init(|| {
        let p = BusyBeaverParams {
            states: 4,
            step_limit: orchard_busy_beaver::DEFAULT_STEP_LIMIT,
            depth: orchard_busy_beaver::DEFAULT_DEPTH,
            ngram: orchard_busy_beaver::DEFAULT_NGRAM,
            long_limit: orchard_busy_beaver::DEFAULT_LONG_LIMIT,
            halt_horizon: orchard_busy_beaver::DEFAULT_HALT_HORIZON,
            deep_gas: orchard_busy_beaver::DEFAULT_DEEP_GAS,
            far_solver: None,
            certificates: None,
            last_resort: true,
            mitm_wfar: true,
        };
        let job = BusyBeaver::new(p, &Host::default()).unwrap();
        let report = job.report(&explore_all(&job, job.root_units(), u64::MAX).unwrap());
        let file: String = report
            .results_lines
            .iter()
            .map(|l| format!("{l}\n"))
            .collect();
        (report.json, file)
    })
}

/// The cluster's `orchard results --json` is the single process's report,
/// key for key (the counts, per decider and per stage, the maxima and
/// their champions, the histogram, the re-checks), and its results file is
/// the single process's byte for byte.
pub fn assert_same_answer(results: &serde_json::Value) {
    let (want, file) = single_process_answer();
    for (key, value) in want.as_object().unwrap() {
        assert_eq!(
            &results[key], value,
            "{key}: cluster {} vs single process {value}",
            results[key]
        );
    }
    // bbchallenge's count of the 4-card tree, every machine decided.
    assert_eq!(results["machines"], 858_909, "{results}");
    assert_eq!(results["undecided"], 0, "{results}");
    let got = std::fs::read_to_string(results["results_file"].as_str().unwrap()).unwrap();
    assert_eq!(
        got.lines().count(),
        858_909,
        "one line per machine in the results file"
    );
    assert!(
        got == *file,
        "the results file differs from the single process's"
    );
}
