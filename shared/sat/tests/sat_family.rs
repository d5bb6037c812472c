//! The `sat` family against solvers that are shell scripts: what it does
//! with each kind of answer, and that it never counts a model it did not
//! check. (The real CaDiCaL runs in the end-to-end tests.)

use std::path::{Path, PathBuf};

use orchard_core::{Exploration, FamilyError, Host, LocalFlags, SearchFamily};
use orchard_exec::program::{sha256_bytes, sha256_file};
use orchard_sat::{Cube, Sat, SatParams, FULL};

/// (x1 or x2) and (not x1 or x2): satisfiable, every model has x2.
const CNF: &str = "p cnf 2 2\n1 2 0\n-1 2 0\n";

fn solver(dir: &Path, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join("solver");
    std::fs::write(&p, format!("#!/bin/sh\ncat > /dev/null\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

fn job(dir: &Path, body: &str) -> Sat {
    let p = solver(dir, body);
    let params = SatParams {
        cnf: CNF.into(),
        cnf_sha256: sha256_bytes(CNF.as_bytes()),
        cube_vars: vec![1],
        solver: "solver".into(),
        solver_sha256: sha256_file(&p).unwrap(),
        solver_args: Vec::new(),
        conflicts: 100,
        timeout_secs: 10,
    };
    let host = Host {
        programs: Some(dir.to_path_buf()),
        ..Host::default()
    };
    Sat::new(params, &host).unwrap()
}

fn temp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sat-family-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn explore(
    job: &Sat,
    cube: &[i32],
) -> Result<Exploration<orchard_sat::SatSummary, Cube>, FamilyError> {
    let flags = LocalFlags::default();
    job.explore(&Cube(cube.to_vec()), &flags.context(1000))
}

#[test]
fn a_checked_model_counts_and_a_wrong_one_never_does() {
    let dir = temp("models");
    let good = job(
        &dir,
        "echo 's SATISFIABLE'; echo 'v 1 2 0'; echo 'c conflicts: 7'; exit 10",
    );
    assert_eq!(good.root_units(), [Cube(vec![-1]), Cube(vec![1])]);
    match explore(&good, &[1]).unwrap() {
        Exploration::Finished(s) => {
            assert_eq!((s.sat_cubes, s.nodes, s.covered), (1, 8, FULL / 2));
            assert_eq!(s.models[0].true_vars, [1, 2]);
            assert_eq!(good.report(&s).json["verdict"], "satisfiable");
        }
        other => panic!("{other:?}"),
    }
    // Leaves clause 2 false.
    let bad = job(&dir, "echo 's SATISFIABLE'; echo 'v 1 -2 0'; exit 10");
    let e = explore(&bad, &[1]).unwrap_err();
    assert!(
        e.is_retryable() && e.to_string().contains("leaves clause 2 false"),
        "{e}"
    );
    // Satisfies the formula but not the cube.
    let off = job(&dir, "echo 's SATISFIABLE'; echo 'v 1 2 0'; exit 10");
    let e = explore(&off, &[-1]).unwrap_err();
    assert!(e.to_string().contains("contradicts the cube's -1"), "{e}");
    // An answer and an exit code that disagree.
    let odd = job(&dir, "echo 's UNSATISFIABLE'; exit 10");
    assert!(explore(&odd, &[1]).unwrap_err().is_retryable());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn undecided_cubes_split_and_decided_ones_cover_the_space() {
    let dir = temp("split");
    let unknown = job(&dir, "echo 'c UNKNOWN'; echo 'c conflicts: 100'; exit 0");
    match explore(&unknown, &[1]).unwrap() {
        Exploration::Split { explored, rest } => {
            assert_eq!(explored.split_cubes, 1);
            assert_eq!(explored.covered, 0);
            assert_eq!(rest, [Cube(vec![1, -2]), Cube(vec![1, 2])]);
        }
        other => panic!("{other:?}"),
    }
    // With every variable fixed a solver cannot be undecided: an error.
    assert!(explore(&unknown, &[1, 2]).is_err());
    let unsat = job(&dir, "echo 's UNSATISFIABLE'; exit 20");
    let mut total = orchard_sat::SatSummary::default();
    for cube in [vec![-1], vec![1, -2], vec![1, 2]] {
        match explore(&unsat, &cube).unwrap() {
            Exploration::Finished(s) => unsat.merge(&mut total, s).unwrap(),
            other => panic!("{other:?}"),
        }
        let verdict = unsat.report(&total).json["verdict"].clone();
        assert_eq!(
            verdict,
            if cube == [1, 2] {
                "unsatisfiable"
            } else {
                "unknown"
            }
        );
    }
    assert_eq!(total.covered, FULL);
    // A cube with a bad literal is refused before any call.
    assert!(matches!(
        explore(&unsat, &[3]),
        Err(FamilyError::BadUnit(_))
    ));
    assert!(matches!(
        explore(&unsat, &[1, -1]),
        Err(FamilyError::BadUnit(_))
    ));
    let _ = std::fs::remove_dir_all(&dir);
}
