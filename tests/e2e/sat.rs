//! Cube-and-conquer with a real SAT solver, Debian's CaDiCaL: Schur's
//! S(4) = 44 by running the search, [1..44] coloured (the model checked
//! here again, by the definition) and [1..45] refuted in every cube;
//! S(3) = 13 with the user's cubes from an iCNF, and cubes with a gap or a
//! malformed line refused before anything is stored.
//! Skipped when CaDiCaL is missing, unless `ORCHARD_REQUIRE_SAT` is set (CI).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{run_json, TempDir};

/// The CNF of `examples/sat/schur.py ARGS` in `dir`.
fn schur(dir: &TempDir, args: &[&str]) -> PathBuf {
    let out = Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sat/schur.py"))
        .args(args)
        .output()
        .expect("python3");
    assert!(out.status.success());
    let path = dir.path(&format!("schur-{}.cnf", args.join("-")));
    std::fs::write(&path, out.stdout).unwrap();
    path
}

/// `orchard run sat` on `cnf` with CaDiCaL allowed, two workers.
fn solve(dir: &TempDir, cadical: &Path, cnf: &Path, extra: &[&str]) -> serde_json::Value {
    let programs = dir.path("programs");
    if !programs.exists() {
        std::fs::create_dir_all(&programs).unwrap();
        std::os::unix::fs::symlink(cadical, programs.join("cadical")).unwrap();
    }
    let db = dir.path(&format!(
        "{}.db",
        cnf.file_stem().unwrap().to_str().unwrap()
    ));
    let mut args = vec![
        "run",
        "--programs",
        programs.to_str().unwrap(),
        "--workers",
        "2",
        "--db",
        db.to_str().unwrap(),
        "--json",
        "sat",
        "--cnf",
        cnf.to_str().unwrap(),
        "--solver",
        cadical.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    run_json(&args)
}

#[test]
fn schur_s4_is_44_by_cube_and_conquer() {
    let Some(cadical) = orchard_core::testing::cadical() else {
        return;
    };
    let dir = TempDir::new("sat-schur");
    let (k, n) = (4usize, 44usize);
    let r = solve(
        &dir,
        &cadical,
        &schur(&dir, &["4", "44"]),
        &["--cubes", "4"],
    );
    assert_eq!(r["verdict"], "satisfiable", "{r}");
    // The model, checked again by the definition: each number one colour,
    // no x + y = z (x = y allowed) in one colour.
    let true_vars: Vec<usize> = r["models"][0]["true_vars"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as usize)
        .filter(|&v| v <= n * k)
        .collect();
    let mut colour = vec![None; n + 1];
    for v in true_vars {
        let (i, c) = ((v - 1) / k + 1, (v - 1) % k);
        assert!(colour[i].is_none(), "{i} has two colours");
        colour[i] = Some(c);
    }
    for x in 1..=n {
        assert!(colour[x].is_some(), "{x} has no colour");
        for y in x..=n - x {
            assert!(
                colour[x] != colour[y] || colour[y] != colour[x + y],
                "{x} + {y} = {} in one colour",
                x + y
            );
        }
    }

    let r = solve(
        &dir,
        &cadical,
        &schur(&dir, &["4", "45"]),
        &["--cubes", "5", "--conflicts", "20000"],
    );
    assert_eq!(r["verdict"], "unsatisfiable", "{r}");
    assert_eq!(r["covered"], 1.0, "{r}");
    assert_eq!(r["sat_cubes"], 0, "{r}");
    let cubes = r["unsat_cubes"].as_u64().unwrap();
    let split = r["split_cubes"].as_u64().unwrap();
    // 32 root cubes; each split adds one cube.
    assert_eq!(cubes, 32 + split, "{r}");
}

/// `examples/sat/cubes.py CNF VARS`: `cnf` with every sign pattern of
/// `vars` as its iCNF cubes, in `dir`.
fn icnf(dir: &TempDir, cnf: &Path, vars: &str) -> PathBuf {
    let out = Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sat/cubes.py"))
        .arg(cnf)
        .arg(vars)
        .output()
        .expect("python3");
    assert!(out.status.success());
    let path = dir.path(&format!(
        "{}-cubes.icnf",
        cnf.file_stem().unwrap().to_str().unwrap()
    ));
    std::fs::write(&path, out.stdout).unwrap();
    path
}

#[test]
fn schur_s3_with_the_users_cubes_and_gaps_refused() {
    let Some(cadical) = orchard_core::testing::cadical() else {
        return;
    };
    let dir = TempDir::new("sat-icnf");
    // S(3) = 13. The cubes: the colours of 2 and 3 (variables 4..=9).
    for (n, verdict) in [("13", "satisfiable"), ("14", "unsatisfiable")] {
        let cubes = icnf(&dir, &schur(&dir, &["3", n]), "4,5,6,7,8,9");
        let r = solve(&dir, &cadical, &cubes, &["--conflicts", "300"]);
        assert_eq!(r["verdict"], verdict, "{r}");
        assert_eq!(
            (&r["root_cubes"], &r["user_cubes"]),
            (&64.into(), &true.into()),
            "{r}"
        );
        if verdict == "unsatisfiable" {
            assert_eq!(r["covered"], 1.0, "{r}");
            let split = r["split_cubes"].as_u64().unwrap();
            assert_eq!(r["unsat_cubes"].as_u64().unwrap(), 64 + split, "{r}");
        }
    }

    // The last cube left out: refused in one line naming it, nothing stored.
    let full = std::fs::read_to_string(dir.path("schur-3-14-cubes.icnf")).unwrap();
    let gapped = dir.path("gapped.icnf");
    let last = full.trim_end().rfind('\n').unwrap();
    std::fs::write(&gapped, &full[..=last]).unwrap();
    let db = dir.path("gapped.db");
    let run = |file: &Path| {
        common::run(&[
            "run",
            "--db",
            db.to_str().unwrap(),
            "--workers",
            "1",
            "sat",
            "--cnf",
            file.to_str().unwrap(),
            "--solver",
            cadical.to_str().unwrap(),
        ])
    };
    common::assert_one_line_error(&run(&gapped), "none holds 4 5 6 7 8 9");
    assert!(!db.exists(), "nothing stored");
    // A malformed cube line: its line number.
    let broken = dir.path("broken.icnf");
    std::fs::write(&broken, full.replacen("a -4 -5", "a -4 x", 1)).unwrap();
    let lineno = full.lines().position(|l| l.starts_with("a -4 -5")).unwrap() + 1;
    common::assert_one_line_error(
        &run(&broken),
        &format!("line {lineno}: \"x\" is not a literal"),
    );
    assert!(!db.exists(), "nothing stored");
}

/// `--first-model`: the job ends at its first checked model, the cubes
/// still undecided cancelled. The formula is `x1 or PHP(12, 11)`: the cube
/// `1` is satisfied at once, the cube `-1` is the pigeonhole formula of 12
/// pigeons in 11 holes, which CaDiCaL cannot refute in the length of a
/// test. So the job can only end if the model makes that cube moot.
#[test]
fn first_model_ends_the_job_and_cancels_the_hard_cube() {
    let Some(cadical) = orchard_core::testing::cadical() else {
        return;
    };
    let dir = TempDir::new("sat-first-model");
    let (pigeons, holes) = (12usize, 11usize);
    let var = |p: usize, h: usize| 2 + p * holes + h;
    let mut clauses: Vec<Vec<i64>> = Vec::new();
    for p in 0..pigeons {
        clauses.push((0..holes).map(|h| var(p, h) as i64).collect());
    }
    for h in 0..holes {
        for p in 0..pigeons {
            for q in p + 1..pigeons {
                clauses.push(vec![-(var(p, h) as i64), -(var(q, h) as i64)]);
            }
        }
    }
    let vars = 1 + pigeons * holes;
    let mut cnf = format!("p cnf {vars} {}\n", clauses.len());
    for c in &clauses {
        let lits: Vec<String> = std::iter::once(1i64)
            .chain(c.iter().copied())
            .map(|l| l.to_string())
            .collect();
        cnf.push_str(&format!("{} 0\n", lits.join(" ")));
    }
    let path = dir.path("php.cnf");
    std::fs::write(&path, cnf).unwrap();
    let r = solve(
        &dir,
        &cadical,
        &path,
        &["--cube-vars", "1", "--first-model", "--conflicts", "20000"],
    );
    assert_eq!(r["verdict"], "satisfiable", "{r}");
    assert_eq!(r["first_model"], true, "{r}");
    assert_eq!(r["models"][0]["cube"], serde_json::json!([1]), "{r}");
    assert!(
        r["models"][0]["true_vars"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!(1)),
        "{r}"
    );
    assert_eq!(
        r["unsat_cubes"], 0,
        "the pigeonhole cube is never refuted: {r}"
    );
    assert!(r["covered"].as_f64().unwrap() < 1.0, "{r}");
}
