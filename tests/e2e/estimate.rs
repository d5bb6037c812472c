//! `orchard estimate` as a user runs it: the estimate against the node count
//! of the real run, reproducibility, and bad input.

use crate::common;

use common::{run, run_json, TempDir};

fn estimate_json(extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["estimate", "hc", "--json", "--measure-seconds", "0.2"];
    args.extend_from_slice(extra);
    run_json(&args)
}

fn f(v: &serde_json::Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("no number '{key}' in {v}"))
}

#[test]
fn estimate_is_within_its_error_bar_of_the_real_count() {
    let dir = TempDir::new("estimate");
    let db = dir.path("orchard.db");
    let db = db.to_str().unwrap();
    for (columns, variant, min_length) in [("3", "pairs", "1"), ("3", "subsets", "1")] {
        let params = [
            "--columns",
            columns,
            "--variant",
            variant,
            "--min-length",
            min_length,
        ];
        let mut args = vec!["run", "hc", "--db", db, "--json", "--workers", "1"];
        args.extend_from_slice(&params);
        let truth = run_json(&args)["nodes"].as_u64().unwrap();

        let mut args = params.to_vec();
        args.extend_from_slice(&["--probes", "20000", "--seed", "7", "--cores", "4"]);
        let e = estimate_json(&args);
        let (nodes, se) = (f(&e, "estimated_nodes"), f(&e, "std_error"));
        assert!(
            (nodes - truth as f64).abs() <= 4.0 * se && se < 0.05 * truth as f64,
            "c={columns} {variant}: estimate {nodes} ± {se}, true {truth}"
        );
        assert_eq!(e["probes"], 20000);
        assert_eq!(e["seed"], 7);
        assert_eq!(e["cores"], 4);
        let interval = e["interval_95"].as_array().unwrap();
        assert!(interval[0].as_f64().unwrap() <= nodes && nodes <= interval[1].as_f64().unwrap());
        let rate = f(&e, "nodes_per_second");
        assert!(rate > 0.0);
        let projected = f(&e, "projected_seconds");
        assert!((projected - nodes / rate).abs() <= 1e-9 * projected);
        assert!((f(&e, "projected_seconds_on_cores") - projected / 4.0).abs() <= 1e-9 * projected);
        // These trees are small: the measuring run finishes them.
        assert_eq!(e["exact_nodes"].as_u64(), Some(truth));

        // The same seed gives the same estimate.
        let again = estimate_json(&args);
        assert_eq!(again["estimated_nodes"], e["estimated_nodes"]);
        assert_eq!(again["std_error"], e["std_error"]);
    }
}

#[test]
fn default_mode_assumes_the_bound_the_measuring_run_found() {
    // h(3) = 24: the measuring run finishes, and the probes assume length 23.
    let e = estimate_json(&["--columns", "3", "--probes", "2000", "--seed", "1"]);
    assert_eq!(e["bound"], 23);
    assert_eq!(e["exact_nodes"], 3339);
    assert!(f(&e, "estimated_nodes") > 0.0);
}

#[test]
fn text_output_has_the_estimate_and_the_projection() {
    let out = run(&[
        "estimate",
        "hc",
        "--columns",
        "3",
        "--min-length",
        "1",
        "--probes",
        "1000",
        "--seed",
        "3",
        "--measure-seconds",
        "0.1",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("estimated nodes: "), "{text}");
    assert!(text.contains("seed 3"), "{text}");
    assert!(text.contains("nodes/s on one core"), "{text}");
    assert!(text.contains("projected time: "), "{text}");
}

#[test]
fn bad_input_gives_one_line_errors() {
    common::assert_one_line_error(
        &run(&["estimate", "hip-solve", "--rows", "3", "--cols", "3"]),
        "search family 'hip-solve' does not support estimates",
    );
    common::assert_one_line_error(
        &run(&["estimate", "hc", "--columns", "3", "--probes", "0"]),
        "--probes",
    );
    common::assert_one_line_error(
        &run(&["estimate", "hc", "--columns", "3", "--cores", "0"]),
        "--cores",
    );
    common::assert_one_line_error(
        &run(&["estimate", "hc", "--columns", "3", "--measure-seconds", "0"]),
        "--measure-seconds",
    );
    common::assert_one_line_error(&run(&["estimate", "hc", "--columns", "7"]), "--columns");
    common::assert_one_line_error(
        &run(&["estimate", "hc", "--columns", "3", "--min-length", "0"]),
        "--min-length",
    );
    common::assert_one_line_error(&run(&["estimate", "nosuchgame"]), "nosuchgame");
}
