//! Hip: the 4x5 game the cluster tests solve, the answer of a single
//! process to compare with, and the checks of a `hip-solve` report against
//! the rules and the plain reference implementations.
//!
//! A game search's node count depends on how the tree was split (a unit cut
//! by a sibling's result is cancelled, not searched), so the cluster's answer
//! is compared with a single-process solve by value: the winner, every
//! opening's value interval (consistent with the reference's), and a
//! principal variation that is a legal game ending as the winner says.

use std::sync::OnceLock;

use orchard_core::{Host, SearchFamily};
use orchard_hip::solve::explore_pruned;
use orchard_hip::{reference, HipSolve, SolveParams};

use super::process::run;

/// Standard Hip on 4x5 (a draw, Franke's table B): about 1.7e6 nodes in one
/// process, 4-5e6 through the cluster with this unit budget, in some 2000
/// units (most of them cancelled as moot), a few seconds on two cores.
pub const ROWS: u32 = 4;
pub const COLS: u32 = 5;
pub const UNIT_BUDGET: &str = "20000";

/// The job, as `orchard submit` takes it.
pub const JOB: &[&str] = &["hip-solve", "--rows", "4", "--cols", "5"];
/// `orchard run` of standard Hip 5x5 on two workers in small units (some 15
/// million nodes, a few seconds): long enough to interrupt midway.
pub const RUN_5X5_IN_SMALL_UNITS: &[&str] = &[
    "run",
    "hip-solve",
    "--rows",
    "5",
    "--cols",
    "5",
    "--workers",
    "2",
    "--unit-budget",
    "100000",
];

pub fn params() -> SolveParams {
    SolveParams::new(ROWS, COLS, false)
}

/// The report of the same job solved in this process (computed once per
/// test binary).
pub fn single_process_answer() -> &'static serde_json::Value {
    static ANSWER: OnceLock<serde_json::Value> = OnceLock::new();
    ANSWER.get_or_init(|| {
        let job = HipSolve::new(params(), &Host::default()).unwrap();
        let run = explore_pruned(&job, job.root_units(), u64::MAX, false).unwrap();
        job.report(&run.summary).json
    })
}

pub fn interval(v: &serde_json::Value) -> (i64, i64) {
    (v[0].as_i64().unwrap(), v[1].as_i64().unwrap())
}

pub fn root_value(winner: u64) -> i64 {
    match winner {
        0 => 0,
        1 => 1,
        2 => -1,
        w => panic!("winner {w}"),
    }
}

/// Checks a `hip-solve` report against the rules: the winner is given, the
/// openings are the first moves up to symmetry (lowest cell of each class, in
/// cell order), none beats the root's value and one achieves it, and the
/// principal variation is a legal game that ends as the winner says.
pub fn check_report(json: &serde_json::Value, rows: usize, cols: usize, double: bool) {
    assert_eq!(json["family"], "hip-solve");
    assert!(json["nodes"].as_u64().unwrap() > 0, "{json}");
    let w = json["winner"].as_u64().expect("solved: winner 0, 1 or 2");
    let root = root_value(w);
    assert_eq!(interval(&json["value"]), (root, root));
    let names: Vec<String> = (0..rows * cols)
        .map(|i| format!("{}{}", char::from(b'a' + (i % cols) as u8), i / cols + 1))
        .collect();
    // The classes of first moves, from the reference's symmetries.
    let syms = reference::symmetries(rows, cols);
    let classes: Vec<&str> = (0..rows * cols)
        .filter(|&c| syms.iter().all(|g| g[c] >= c))
        .map(|c| names[c].as_str())
        .collect();
    let openings = json["openings"].as_array().unwrap();
    let cells: Vec<&str> = openings
        .iter()
        .map(|o| o["cell"].as_str().unwrap())
        .collect();
    assert_eq!(cells, classes, "one opening per class of first moves");
    let iv: Vec<(i64, i64)> = openings.iter().map(|o| interval(&o["value"])).collect();
    for (o, &(lo, hi)) in openings.iter().zip(&iv) {
        assert!(-1 <= lo && lo <= hi && hi <= 1, "{o}");
        assert!(lo <= root, "opening {o} beats the root's value {root}");
        if lo == hi {
            assert_eq!(o["winner"], root_value_to_winner(lo), "{o}");
        } else {
            assert!(o["winner"].is_null(), "{o}");
        }
    }
    assert!(
        iv.contains(&(root, root)),
        "no opening achieves {root}: {iv:?}"
    );
    // Replay the principal variation.
    let squares = reference::squares_by_subsets(rows, cols);
    let mut board = vec![0u8; rows * cols];
    let pv = json["pv"].as_array().unwrap();
    assert!(!pv.is_empty());
    let mut ended = false;
    for (s, name) in pv.iter().enumerate() {
        assert!(!ended, "the pv goes on after a lost move: {pv:?}");
        let i = names
            .iter()
            .position(|n| n == name.as_str().unwrap())
            .unwrap_or_else(|| panic!("pv cell {name}"));
        assert_eq!(board[i], 0, "the pv plays on a stone: {pv:?}");
        let who = reference::mover(s, double);
        board[i] = who;
        if squares.iter().any(|q| q.iter().all(|&x| board[x] == who)) {
            assert_eq!(w, if who == 1 { 2 } else { 1 }, "the pv's loser loses");
            ended = true;
        }
    }
    if !ended && board.iter().all(|&x| x != 0) {
        assert_eq!(w, 0, "a full board is a draw");
    }
}

pub fn root_value_to_winner(v: i64) -> serde_json::Value {
    serde_json::json!(match v {
        1 => 1,
        0 => 0,
        _ => 2,
    })
}

/// The cluster's answer is the single process's.
pub fn assert_same_answer(result: &serde_json::Value) {
    let want = single_process_answer();
    check_report(result, ROWS as usize, COLS as usize, false);
    check_report(want, ROWS as usize, COLS as usize, false);
    assert_eq!(result["winner"], want["winner"], "winner");
    // Franke's table B: standard 4x5 is a draw.
    assert_eq!(result["winner"], 0);
    let (got, exp) = (
        result["openings"].as_array().unwrap(),
        want["openings"].as_array().unwrap(),
    );
    assert_eq!(got.len(), exp.len());
    for (g, e) in got.iter().zip(exp) {
        assert_eq!(g["cell"], e["cell"]);
        // Both intervals contain the opening's true value.
        let ((a, b), (c, d)) = (interval(&g["value"]), interval(&e["value"]));
        assert!(a.max(c) <= b.min(d), "opening {g} vs single process {e}");
    }
}

/// `orchard results` of a job that is still running: exit code 3 and the
/// answer so far, whose value intervals must each contain the true value
/// (here: intersect the single-process solve's intervals, which contain it).
pub fn check_interim_results(url: &str, job: u64) {
    let out = run(&["results", &job.to_string(), "--coordinator", url, "--json"]);
    assert_eq!(out.status.code(), Some(3), "not final: exit code 3");
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["state"], "running", "{r}");
    assert_eq!(r["final"], false, "{r}");
    let truth = single_process_answer();
    let overlaps = |a: (i64, i64), b: (i64, i64)| a.0.max(b.0) <= a.1.min(b.1);
    assert!(
        overlaps(interval(&r["value"]), interval(&truth["value"])),
        "{r}"
    );
    let openings = r["openings"].as_array().unwrap();
    let expected = truth["openings"].as_array().unwrap();
    assert_eq!(openings.len(), expected.len(), "{r}");
    for (o, e) in openings.iter().zip(expected) {
        assert_eq!(o["cell"], e["cell"]);
        assert!(
            overlaps(interval(&o["value"]), interval(&e["value"])),
            "opening {}: {} against {}",
            o["cell"],
            o["value"],
            e["value"]
        );
    }
    // The human form says it is not final.
    let out = run(&["results", &job.to_string(), "--coordinator", url]);
    assert_eq!(out.status.code(), Some(3));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("the answer so far (not final)"), "{text}");
    assert!(text.contains("opening a1: "), "{text}");
}
