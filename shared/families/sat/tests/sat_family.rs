//! The `sat` family against solvers that are shell scripts: what it does
//! with each kind of answer, and that it never counts a model it did not
//! check. The user's cubes (iCNF) are checked against the real CaDiCaL
//! where it is installed: the same answers as orchard's own cubes, and
//! coverage decided alike by the solver, the direct search and enumeration.

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
        cover_with_formula: false,
        timeout_secs: 10,
        first_model: false,
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
            let report = good.report(&s);
            assert_eq!(report.json["verdict"], "satisfiable");
            assert!(report.results_lines[0].starts_with("verdict satisfiable formula-sha256 "));
            assert!(report.results_lines[0].ends_with(" covered 0.5"));
            assert_eq!(report.results_lines[1..], ["cube 1 model-true 1 2"]);
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
        let report = unsat.report(&total);
        let expected = if cube == [1, 2] {
            "unsatisfiable"
        } else {
            "unknown"
        };
        assert_eq!(report.json["verdict"], expected);
        // The results file says the verdict even with no model to list.
        let head = format!("verdict {expected} formula-sha256 ");
        assert_eq!(report.results_lines.len(), 1);
        assert!(report.results_lines[0].starts_with(&head), "{report:?}");
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

/// Every assignment of variables 1..=2, as iCNF cube lines, plus `extra`.
fn icnf(extra: &str) -> String {
    format!("p inccnf\n1 2 0\n-1 2 0\na -1 -2 0\na -1 2 0\na 1 -2 0\na 1 2 0\n{extra}")
}

fn icnf_job(dir: &Path, body: &str, text: &str) -> Sat {
    let p = solver(dir, body);
    let params = SatParams {
        cnf: text.into(),
        cnf_sha256: sha256_bytes(text.as_bytes()),
        cube_vars: Vec::new(),
        solver: "solver".into(),
        solver_sha256: sha256_file(&p).unwrap(),
        solver_args: Vec::new(),
        conflicts: 100,
        cover_with_formula: false,
        timeout_secs: 10,
        first_model: false,
    };
    let host = Host {
        programs: Some(dir.to_path_buf()),
        ..Host::default()
    };
    Sat::new(params, &host).unwrap()
}

#[test]
fn user_cubes_are_the_root_units_and_unsat_needs_every_one_decided() {
    let dir = temp("icnf");
    let unsat = "echo 's UNSATISFIABLE'; exit 20";
    // Overlapping: the four patterns of 1, 2 and the cube 1 again.
    let job = icnf_job(&dir, unsat, &icnf("a 1 0\n"));
    let roots = job.root_units();
    assert_eq!(
        roots,
        [vec![-1, -2], vec![-1, 2], vec![1, -2], vec![1, 2], vec![1]].map(Cube)
    );
    let mut total = orchard_sat::SatSummary::default();
    for (i, cube) in roots.iter().enumerate() {
        assert_eq!(job.report(&total).json["verdict"], "unknown", "{i}");
        match explore(&job, &cube.0).unwrap() {
            Exploration::Finished(s) => job.merge(&mut total, s).unwrap(),
            other => panic!("{other:?}"),
        }
    }
    // Shares 4 x 1/4 + 1/2: over the whole space, yet every cube counted.
    assert_eq!(total.covered, FULL + FULL / 2);
    let r = job.report(&total).json;
    assert_eq!(
        (
            &r["verdict"],
            &r["covered"],
            &r["root_cubes"],
            &r["user_cubes"]
        ),
        (
            &"unsatisfiable".into(),
            &1.0.into(),
            &5.into(),
            &true.into()
        )
    );
    // A share counted twice would pass the total: refused, not "covered".
    let again = total.clone();
    assert!(job.merge(&mut total, again).is_err());

    // Undecided user cubes split as orchard's own do, halving their share.
    let unknown = icnf_job(&dir, "echo 'c conflicts: 100'; exit 0", &icnf(""));
    match explore(&unknown, &[1]).unwrap() {
        Exploration::Split { explored, rest } => {
            assert_eq!(explored.covered, 0);
            assert_eq!(rest, [Cube(vec![1, -2]), Cube(vec![1, 2])]);
        }
        other => panic!("{other:?}"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn stored_icnf_parameters_are_checked_again() {
    let dir = temp("icnf-params");
    let p = solver(&dir, "exit 0");
    let host = Host {
        programs: Some(dir.clone()),
        ..Host::default()
    };
    let params = |text: &str, cube_vars: Vec<u32>| SatParams {
        cnf: text.into(),
        cnf_sha256: sha256_bytes(text.as_bytes()),
        cube_vars,
        solver: "solver".into(),
        solver_sha256: sha256_file(&p).unwrap(),
        solver_args: Vec::new(),
        conflicts: 100,
        cover_with_formula: false,
        timeout_secs: 10,
        first_model: false,
    };
    let e = Sat::new(params(&icnf(""), vec![1]), &host).unwrap_err();
    assert!(e.to_string().contains("own cubes"), "{e}");
    let e = Sat::new(params(&icnf("a 1 -1 0\n"), vec![]), &host).unwrap_err();
    assert!(e.to_string().contains("line 8"), "{e}");
    // 600 copies of the cube 1, each half the space: 300 times the whole.
    let many = format!("p inccnf\n1 2 0\n{}", "a 1 0\n".repeat(600));
    let e = Sat::new(params(&many, vec![]), &host).unwrap_err();
    assert!(e.to_string().contains("beyond 2^8"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `examples/sat/schur.py K N`: [1..N] in K colours, sum-free.
fn schur(k: u32, n: u32) -> String {
    schur_with(&[&k.to_string(), &n.to_string()]).expect("schur.py")
}

/// `examples/sat/schur.py ARGS`: the CNF, or the script's error.
fn schur_with(args: &[&str]) -> Result<String, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../examples/sat/schur.py");
    let out = std::process::Command::new("python3")
        .arg(script)
        .args(args)
        .output()
        .expect("python3");
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(String::from_utf8(out.stdout).unwrap())
}

/// The colour (0-based) of each of 1..=n in CaDiCaL's answer to `cnf`
/// (K colours, variable (i - 1) * K + c + 1, read as the family reads an
/// answer), or None if unsatisfiable.
fn colouring(cadical: &Path, cnf: &str, k: usize, n: usize) -> Option<Vec<usize>> {
    use std::io::Write;
    let mut child = std::process::Command::new(cadical)
        .arg("-q")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("cadical");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(cnf.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let vars = (2 * n * k) as u32;
    let text = String::from_utf8(out.stdout).unwrap();
    let (answer, _) = orchard_sat::read_answer(vars, out.status.code(), &text).unwrap();
    let model = match answer {
        orchard_sat::Answer::Sat(model) => model,
        orchard_sat::Answer::Unsat => return None,
        orchard_sat::Answer::Unknown => panic!("no answer: {text}"),
    };
    let colour = |i: usize| {
        let on: Vec<usize> = (0..k).filter(|&c| model[(i - 1) * k + c + 1]).collect();
        assert_eq!(on.len(), 1, "number {i}: colours {on:?}");
        on[0]
    };
    Some((1..=n).map(colour).collect())
}

/// The template options of `schur.py` (`--prefix`, `--colour-in`), which
/// the WS(5) >= 196 search uses: a model keeps both, a prefix that breaks
/// the rule or a colour kept off too much leaves no model, and a prefix
/// that does not fit is refused.
#[test]
fn schur_templates_constrain_the_colouring_and_nothing_else() {
    let Some(cadical) = orchard_core::testing::cadical() else {
        return;
    };
    let weak = |args: &[&str]| {
        let mut all = vec!["3", "23", "--weak"];
        all.extend_from_slice(args);
        schur_with(&all).unwrap()
    };
    // WS(3) = 23: a colouring, whose first twelve colours as a prefix
    // still leave one, and it starts with them.
    let free = colouring(&cadical, &weak(&[]), 3, 23).expect("WS(3) >= 23");
    let prefix: String = free[..12]
        .iter()
        .map(|c| char::from(b'1' + *c as u8))
        .collect();
    let fixed = colouring(&cadical, &weak(&["--prefix", &prefix]), 3, 23).unwrap();
    assert_eq!(fixed[..12], free[..12]);
    // Renamed by first appearance: "33" is "11".
    let renamed = colouring(&cadical, &weak(&["--prefix", "33"]), 3, 23).unwrap();
    assert_eq!(renamed[..2], [0, 0]);
    // 1 + 2 = 3 in one colour is not weakly sum-free.
    assert!(colouring(&cadical, &weak(&["--prefix", "111"]), 3, 23).is_none());
    // Colour 3 only on 20..23: 1..19 in two colours, beyond WS(2) = 8.
    assert!(colouring(&cadical, &weak(&["--colour-in", "3:20-23"]), 3, 23).is_none());
    let late = colouring(&cadical, &weak(&["--colour-in", "3:5-23"]), 3, 23).unwrap();
    assert!(late[..4].iter().all(|&c| c != 2), "{late:?}");
    let e = schur_with(&["2", "8", "--weak", "--prefix", "123"]).unwrap_err();
    assert!(e.contains("does not fit"), "{e}");
    let e = schur_with(&["2", "8", "--weak", "--colour-in", "3:1-8"]).unwrap_err();
    assert!(e.contains("colour 3 of 2"), "{e}");
}

/// `cnf` as an iCNF with `cubes` as its cube lines.
fn with_cubes(cnf: &str, cubes: &[Vec<i32>]) -> String {
    let mut s = String::from("p inccnf\n");
    for line in cnf.lines().filter(|l| !l.starts_with('p')) {
        s.push_str(line);
        s.push('\n');
    }
    for c in cubes {
        let lits: Vec<String> = c.iter().map(i32::to_string).collect();
        s.push_str(&format!("a {} 0\n", lits.join(" ")));
    }
    s
}

/// Every sign pattern of `vars`.
fn patterns(vars: &[i32]) -> Vec<Vec<i32>> {
    (0..1u32 << vars.len())
        .map(|b| {
            vars.iter()
                .enumerate()
                .map(|(i, &v)| if b >> i & 1 == 1 { v } else { -v })
                .collect()
        })
        .collect()
}

/// The job made as the command line makes it (the iCNF's coverage checked
/// with the real solver), then every unit solved in one process.
fn run_locally(
    dir: &Path,
    cadical: &Path,
    text: &str,
    cube_vars: &[u32],
    cover_with_formula: bool,
) -> Result<serde_json::Value, String> {
    let programs = dir.join("programs");
    if !programs.exists() {
        std::fs::create_dir_all(&programs).unwrap();
        std::os::unix::fs::symlink(cadical, programs.join("cadical")).unwrap();
    }
    let file = dir.join("f.cnf");
    std::fs::write(&file, text).unwrap();
    let params = orchard_sat::SatArgs {
        cnf: file,
        cubes: None,
        cube_vars: cube_vars.to_vec(),
        solver: cadical.to_path_buf(),
        solver_args: Vec::new(),
        conflicts: 300,
        cover_with_formula,
        timeout_secs: 600,
        first_model: false,
    }
    .resolve()?;
    let host = Host {
        programs: Some(programs),
        ..Host::default()
    };
    let job = Sat::new(params, &host).unwrap();
    let mut total = orchard_sat::SatSummary::default();
    let mut todo = job.root_units();
    while let Some(cube) = todo.pop() {
        match explore(&job, &cube.0).unwrap() {
            Exploration::Finished(s) => job.merge(&mut total, s).unwrap(),
            Exploration::Split { explored, rest } => {
                job.merge(&mut total, explored).unwrap();
                todo.extend(rest);
            }
        }
    }
    Ok(job.report(&total).json)
}

#[test]
fn a_cube_file_gives_the_answer_of_orchards_own_cubes() {
    let Some(cadical) = orchard_core::testing::cadical() else {
        return;
    };
    let dir = temp("schur");
    // S(3) = 13: [1..13] in 3 colours is satisfiable, [1..14] is not.
    for (n, verdict) in [(13, "satisfiable"), (14, "unsatisfiable")] {
        let cnf = schur(3, n);
        let own = run_locally(&dir, &cadical, &cnf, &[4, 5, 6], false).unwrap();
        assert_eq!(own["verdict"], verdict, "{own}");
        // The colours of 2 and 3 (variables 4..=9), every pattern.
        let cubes = patterns(&[4, 5, 6, 7, 8, 9]);
        let r = run_locally(&dir, &cadical, &with_cubes(&cnf, &cubes), &[], false).unwrap();
        assert_eq!(r["verdict"], verdict, "{r}");
        assert_eq!(r["root_cubes"], 64, "{r}");
        if verdict == "unsatisfiable" {
            assert_eq!(
                (&r["covered"], &r["unsat_cubes"]),
                (&1.0.into(), &64.into()),
                "{r}"
            );
        }
        // Overlapping cubes: the patterns of 4, 5 and those of 4, 5, 6.
        let mut overlapping = patterns(&[4, 5]);
        overlapping.extend(patterns(&[4, 5, 6]));
        let r = run_locally(&dir, &cadical, &with_cubes(&cnf, &overlapping), &[], false).unwrap();
        assert_eq!(r["verdict"], verdict, "{r}");
        // One pattern short: refused before any cube is solved, naming the
        // pattern left out.
        let short = &cubes[..63];
        let e = run_locally(&dir, &cadical, &with_cubes(&cnf, short), &[], false).unwrap_err();
        assert!(e.contains("none holds 4 5 6 7 8 9"), "{e}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn gaps_the_formula_refutes_are_accepted_on_request_and_no_others() {
    let Some(cadical) = orchard_core::testing::cadical() else {
        return;
    };
    let dir = temp("gaps");
    let cubes = patterns(&[4, 5, 6, 7, 8, 9]);
    // Cubes that give 2 two colours (4 and 5 both true) refute themselves by
    // the formula's "one colour each": a lookahead cuber leaves them out.
    let refuted: Vec<Vec<i32>> = cubes
        .iter()
        .filter(|c| !(c.contains(&4) && c.contains(&5)))
        .cloned()
        .collect();
    assert_eq!(refuted.len(), 48);
    for (n, verdict) in [(13, "satisfiable"), (14, "unsatisfiable")] {
        let text = with_cubes(&schur(3, n), &refuted);
        let e = run_locally(&dir, &cadical, &text, &[], false).unwrap_err();
        assert!(e.contains("do not cover every assignment"), "{e}");
        let r = run_locally(&dir, &cadical, &text, &[], true).unwrap();
        assert_eq!(
            (&r["verdict"], &r["cover_with_formula"]),
            (&verdict.into(), &true.into()),
            "{r}"
        );
        if verdict == "satisfiable" {
            // The root cube of a model left out: a gap the formula does not
            // refute, refused even on request.
            let found: Vec<i32> = serde_json::from_value(r["models"][0]["cube"].clone()).unwrap();
            let missing: Vec<Vec<i32>> = refuted
                .iter()
                .filter(|c| !found.starts_with(c))
                .cloned()
                .collect();
            assert_eq!(missing.len(), 47, "{found:?}");
            let e = run_locally(
                &dir,
                &cadical,
                &with_cubes(&schur(3, n), &missing),
                &[],
                true,
            )
            .unwrap_err();
            assert!(
                e.contains("the cubes miss a model of the formula: none holds"),
                "{e}"
            );
        }
    }
    // Only with an iCNF.
    let e = run_locally(&dir, &cadical, &schur(3, 13), &[4], true).unwrap_err();
    assert!(e.contains("only with an iCNF"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_solver_and_the_direct_search_agree_on_coverage() {
    let Some(cadical) = orchard_core::testing::cadical() else {
        return;
    };
    // Small pseudo-random cube sets over 5 variables, some covering.
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut verdicts = [0usize; 2];
    for _ in 0..60 {
        let n = 1 + next() % 12;
        let cubes: Vec<Vec<i32>> = (0..n)
            .map(|_| {
                let mut c: Vec<i32> = Vec::new();
                for v in 1..=5i32 {
                    match next() % 3 {
                        0 => c.push(v),
                        1 => c.push(-v),
                        _ => {}
                    }
                    if c.len() == 2 {
                        break;
                    }
                }
                c
            })
            .collect();
        let direct = orchard_sat::cover::direct(&cubes, 5, u64::MAX).unwrap();
        let solver = orchard_sat::cover::by_solver(
            &cubes,
            5,
            None,
            &cadical,
            std::time::Duration::from_secs(60),
        );
        // By enumeration: the cubes cover iff every assignment is in one.
        let covers = (0..32u32).all(|b| {
            cubes.iter().any(|c| {
                c.iter()
                    .all(|&l| (b >> (l.unsigned_abs() - 1) & 1 == 1) == (l > 0))
            })
        });
        assert_eq!(direct.is_ok(), covers, "{cubes:?}");
        assert_eq!(solver.is_ok(), covers, "{cubes:?}: {solver:?}");
        verdicts[covers as usize] += 1;
        // Whatever escape is named, no cube holds it.
        for escape in [
            direct.err(),
            solver.err().map(|e| match e {
                orchard_sat::cover::CoverError::Uncovered(l) => l,
                other => panic!("{other}"),
            }),
        ]
        .into_iter()
        .flatten()
        {
            assert!(
                !cubes.iter().any(|c| c.iter().all(|l| escape.contains(l))),
                "{cubes:?}: {escape:?}"
            );
        }
    }
    assert!(verdicts[0] > 5 && verdicts[1] > 5, "{verdicts:?}");
}
