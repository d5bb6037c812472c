//! Finite automata reduction by a SAT solver (`--far-solver`,
//! [`orchard_busy_beaver::far_sat`]): a real CaDiCaL finds a DFA the direct
//! search does not reach, and the certificate passes the audit's check; a
//! solver that answers a wrong model, or is not the job's (another hash),
//! or is not allowed, fails the attempt with one line and settles nothing;
//! the job refuses the solver without the last resort.
//!
//! The CaDiCaL test is skipped when `/usr/bin/cadical` is missing, unless
//! `ORCHARD_REQUIRE_SAT` is set (CI).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use orchard_busy_beaver::audit::dfa;
use orchard_busy_beaver::decide::LastResort;
use orchard_busy_beaver::far_sat::{self, ProgramSolver, Solver, SolverRef, Verdict};
use orchard_busy_beaver::{from_text, BusyBeaver, BusyBeaverParams, Workspace};
use orchard_core::{Host, SearchFamily};

/// Coq-BB5 settles it with a DFA of 10 states
/// (`Verifier_FAR_Hardcoded_Certificates.v`); the last resort's direct
/// search of 8 to 10 states does not reach one (docs/notes/busy-beaver.md).
const FAR_MACHINE: &str = "1RB1RA_1LC0LD_---1LD_1RE1LE_0RA0LB";

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("bb-far-solver-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A script in `dir` named `name`, executable.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

#[test]
fn cadical_finds_a_dfa_the_direct_search_does_not_and_it_verifies() {
    let Some(cadical) = orchard_core::testing::cadical() else {
        return;
    };
    let dir = temp_dir("cadical");
    let copy = dir.join("cadical");
    std::fs::copy(&cadical, &copy).unwrap();
    let r = SolverRef::from_path(copy.to_str().unwrap()).unwrap();
    let solver = ProgramSolver::new(Some(dir.clone()), &r);
    let (t, n) = from_text(FAR_MACHINE).unwrap();
    let (found, conflicts) = far_sat::search(&solver, &t, n);
    let (mirror, d) = found.unwrap().expect("a DFA");
    assert_eq!(d.len(), 2 * far_sat::SIZES[0]);
    assert_eq!(dfa::verify(&t, n, mirror, &d), Ok(()));
    assert!(conflicts > 0);
    // Through the workspace: the certificate the audit records.
    let mut ws = Workspace::with_limits(1000, 0, 0, 0, 0).with_far_solver(Some(Arc::new(solver)));
    let (found, _) = ws.far_by_solver(&t, n);
    assert!(matches!(found, Some(LastResort::Far { .. })));
    assert_eq!(ws.take_failure(), None);
    // A machine that halts has no certificate: the solver finds no model.
    let (h, hn) = from_text("1RB1LB_1LA---").unwrap();
    let solver = ProgramSolver::new(Some(dir.clone()), &r);
    assert_eq!(far_sat::search(&solver, &h, hn).0, Ok(None));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A solver that claims every formula satisfiable with every variable
/// true: not a DFA (each state has every successor).
#[derive(Debug)]
struct AllTrue;

impl Solver for AllTrue {
    fn solve(&self, _: Vec<u8>, vars: u32) -> Result<(Verdict, u64), String> {
        Ok((Verdict::Model(vec![true; vars as usize + 1]), 1))
    }
}

/// A solver whose model is a well-formed DFA that proves nothing: every
/// transition to state 0.
#[derive(Debug)]
struct OneState;

impl Solver for OneState {
    fn solve(&self, _: Vec<u8>, vars: u32) -> Result<(Verdict, u64), String> {
        let d = far_sat::SIZES[0];
        let mut model = vec![false; vars as usize + 1];
        for qb in 0..2 * d {
            model[1 + qb * d] = true;
        }
        Ok((Verdict::Model(model), 1))
    }
}

#[test]
fn a_wrong_model_fails_the_attempt_and_settles_nothing() {
    let (t, n) = from_text(FAR_MACHINE).unwrap();
    for solver in [Arc::new(AllTrue) as Arc<dyn Solver>, Arc::new(OneState)] {
        let (found, _) = far_sat::search(solver.as_ref(), &t, n);
        let e = found.unwrap_err();
        assert!(e.contains("is not a certificate"), "{e}");
        assert!(e.contains(FAR_MACHINE), "{e}");
        let mut ws = Workspace::with_limits(1000, 0, 0, 0, 0).with_far_solver(Some(solver));
        assert_eq!(ws.far_by_solver(&t, n).0, None);
        assert!(ws.take_failure().is_some());
        assert_eq!(ws.take_failure(), None, "reported once");
    }
}

#[test]
fn a_solver_not_allowed_or_of_another_hash_fails_with_one_line() {
    let (t, n) = from_text(FAR_MACHINE).unwrap();
    let submitted = temp_dir("submitted");
    let r = SolverRef::from_path(
        script(&submitted, "solver", "echo 's UNSATISFIABLE'; exit 20")
            .to_str()
            .unwrap(),
    )
    .unwrap();
    // The worker's copy answers the same but is another file.
    let allowed = temp_dir("allowed");
    script(&allowed, "solver", "echo 's UNSATISFIABLE' ; exit 20");
    let e = far_sat::search(&ProgramSolver::new(Some(allowed.clone()), &r), &t, n)
        .0
        .unwrap_err();
    assert!(e.contains(&r.sha256), "names the job's hash: {e}");
    assert!(!e.contains('\n'), "one line: {e}");
    // No --programs at all.
    let e = far_sat::search(&ProgramSolver::new(None, &r), &t, n)
        .0
        .unwrap_err();
    assert!(e.starts_with("far solver 'solver':"), "{e}");
    // The job's own file: it says unsatisfiable, and nothing is settled.
    let ok = ProgramSolver::new(Some(submitted.clone()), &r);
    assert_eq!(far_sat::search(&ok, &t, n).0, Ok(None));
    // An answer that does not parse.
    let garbled = temp_dir("garbled");
    let g = SolverRef::from_path(
        script(&garbled, "solver", "echo 's PERHAPS'; exit 10")
            .to_str()
            .unwrap(),
    )
    .unwrap();
    let e = far_sat::search(&ProgramSolver::new(Some(garbled.clone()), &g), &t, n)
        .0
        .unwrap_err();
    assert!(e.contains("PERHAPS"), "{e}");
    for d in [submitted, allowed, garbled] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn the_job_refuses_a_far_solver_without_the_last_resort_or_malformed() {
    let r = SolverRef {
        name: "cadical".into(),
        sha256: "0".repeat(64),
    };
    let params = |last_resort: bool, r: SolverRef| -> BusyBeaverParams {
        serde_json::from_value(serde_json::json!({
            "states": 5,
            "last_resort": last_resort,
            "far_solver": r,
        }))
        .unwrap()
    };
    let host = Host::default();
    assert!(BusyBeaver::new(params(true, r.clone()), &host).is_ok());
    let e = BusyBeaver::new(params(false, r.clone()), &host).unwrap_err();
    assert!(e.to_string().contains("far-solver"), "{e}");
    for bad in [
        SolverRef {
            name: "../cadical".into(),
            ..r.clone()
        },
        SolverRef {
            sha256: "xyz".into(),
            ..r.clone()
        },
    ] {
        let e = BusyBeaver::new(params(true, bad), &host).unwrap_err();
        assert!(e.to_string().contains("far-solver"), "{e}");
    }
    // A stored job without the field reads as one without a solver.
    let old: BusyBeaverParams =
        serde_json::from_value(serde_json::json!({ "states": 5, "last_resort": true })).unwrap();
    assert_eq!(old.far_solver, None);
    assert!(!serde_json::to_string(&old).unwrap().contains("far_solver"));
}
