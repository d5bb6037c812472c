//! hc: the job the cluster tests run, and its answer from a single process.
//! The `--min-length` mode makes the node count independent of how the tree
//! was split, so a lost or doubled unit shows.

use std::sync::OnceLock;

use orchard_core::{explore_all, Host, SearchFamily};
use orchard_hc::{digits, HararyColumns, HcParams, RgsPrefix, Variant};

use super::process::{run_json, TempDir};

/// A job that takes several seconds of CPU (h'(4), every game of the whole
/// tree: about 2.5 x 10^8 nodes): long enough to kill things mid-way.
pub const COLUMNS: &str = "4";
pub const MIN_LENGTH: &str = "1";
pub const VARIANT: &str = "subsets";
pub const UNIT_BUDGET: &str = "3000000";

/// The job, as `orchard submit` takes it.
pub const JOB: &[&str] = &[
    "hc",
    "--columns",
    COLUMNS,
    "--variant",
    VARIANT,
    "--min-length",
    MIN_LENGTH,
];

/// The same search in this process, without the cluster: the figures and
/// the sorted maximal games (computed once per test binary).
pub fn single_process_answer() -> &'static (serde_json::Value, Vec<String>) {
    static ANSWER: OnceLock<(serde_json::Value, Vec<String>)> = OnceLock::new();
    ANSWER.get_or_init(|| {
        let p = HcParams {
            columns: COLUMNS.parse().unwrap(),
            variant: Variant::Subsets,
            min_length: Some(MIN_LENGTH.parse().unwrap()),
        };
        let job = HararyColumns::new(p, &Host::default()).unwrap();
        let s = explore_all(&job, vec![RgsPrefix(vec![])], u64::MAX).unwrap();
        let hist: serde_json::Map<String, serde_json::Value> = s
            .histogram
            .iter()
            .map(|(k, v)| (k.to_string(), (*v).into()))
            .collect();
        let mut games: Vec<String> = s.best_games.iter().map(|g| digits(g)).collect();
        games.sort();
        (
            serde_json::json!({
                "max_length": s.best,
                "maximal_count": s.best_count,
                "nodes": s.nodes,
                "histogram": hist,
            }),
            games,
        )
    })
}

/// The cluster's answer is the single process's, node for node, and so is
/// its results file.
pub fn assert_same_answer(result: &serde_json::Value) {
    let (want, games) = single_process_answer();
    for key in ["max_length", "maximal_count", "nodes", "histogram"] {
        assert_eq!(
            result[key], want[key],
            "{key}: cluster {} vs single process {}",
            result[key], want[key]
        );
    }
    let file = std::fs::read_to_string(result["results_file"].as_str().unwrap()).unwrap();
    let got: Vec<String> = file.lines().map(String::from).collect();
    assert_eq!(&got, games, "results file");
}

/// The node count of the whole search, from the single process.
pub fn true_nodes() -> f64 {
    single_process_answer().0["nodes"].as_f64().unwrap()
}

/// `orchard run hc EXTRA --json` on the database `orchard.db` in `dir`.
pub fn run_hc(dir: &TempDir, extra: &[&str]) -> serde_json::Value {
    let db = dir.path("orchard.db");
    let mut args = vec!["run", "hc", "--db", db.to_str().unwrap(), "--json"];
    args.extend_from_slice(extra);
    run_json(&args)
}
