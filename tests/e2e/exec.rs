//! The `exec` family with real programs: a Python program against the
//! built-in family it mirrors, a C program that splits on request killed
//! with SIGKILL mid-unit (and its coordinator too), every bad behaviour of
//! a program failing its job with one clear line, a failed job retried once
//! its cause is gone, and workers refusing programs they were not allowed
//! or whose content differs.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::status;
use common::{assert_one_line_error, final_results, run, run_json, start_coordinator_with};
use common::{free_port, start_worker_with, submit_job, wait_coordinator, wait_status, TempDir};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/exec")
}

/// `examples/exec/collatz.c` compiled into `dir/programs/collatz`.
fn collatz(dir: &TempDir) -> PathBuf {
    let programs = dir.path("programs");
    std::fs::create_dir_all(&programs).unwrap();
    let out = programs.join("collatz");
    let cc = Command::new("cc")
        .args(["-O2", "-o"])
        .arg(&out)
        .arg(examples().join("collatz.c"))
        .status()
        .expect("a C compiler (cc)");
    assert!(cc.success());
    out
}

/// The plain count the collatz program's job must equal: numbers below
/// `n`, the sum of their steps, and the most steps with the witness the
/// merge keeps (of equal values, the smallest as text).
fn collatz_plain(n: u64) -> (u64, u64, u64, String) {
    let (mut sum, mut best, mut witness) = (0u64, 0u64, String::new());
    for k in 1..n {
        let (mut x, mut s) = (k, 0u64);
        while x != 1 {
            x = if x % 2 == 1 { 3 * x + 1 } else { x / 2 };
            s += 1;
        }
        sum += s;
        let text = k.to_string();
        if s > best || (s == best && text < witness) {
            best = s;
            witness = text;
        }
    }
    (n - 1, sum, best, witness)
}

/// `orchard run --json --db DB [--programs DIR] RUN_FLAGS... exec --program
/// PROGRAM EXEC_FLAGS...`: an exec job on this machine.
fn run_exec(
    programs: Option<&Path>,
    db: &Path,
    run_flags: &[&str],
    program: &Path,
    exec_flags: &[&str],
) -> std::process::Output {
    let mut args = vec!["run", "--json", "--db", db.to_str().unwrap()];
    if let Some(p) = programs {
        args.extend(["--programs", p.to_str().unwrap()]);
    }
    args.extend_from_slice(run_flags);
    args.extend(["exec", "--program", program.to_str().unwrap()]);
    args.extend_from_slice(exec_flags);
    run(&args)
}

/// [`run_exec`], asserting success; its JSON.
fn run_exec_json(
    programs: &Path,
    db: &Path,
    run_flags: &[&str],
    program: &Path,
    exec_flags: &[&str],
) -> serde_json::Value {
    let out = run_exec(Some(programs), db, run_flags, program, exec_flags);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_python_program_counts_what_the_built_in_family_counts() {
    let dir = TempDir::new("exec-python");
    let programs = examples();
    let program = programs.join("queens.py");
    for n in ["5", "6", "7", "8"] {
        let db = dir.path(&format!("exec-{n}.db"));
        let exec = run_exec_json(&programs, &db, &["--workers", "2"], &program, &["--arg", n]);
        let db = dir.path(&format!("queens-{n}.db"));
        let queens = run_json(&[
            "run",
            "--workers",
            "1",
            "--db",
            db.to_str().unwrap(),
            "--json",
            "queens",
            "--n",
            n,
        ]);
        assert_eq!(exec["state"], "done", "{exec}");
        assert_eq!(
            exec["counters"]["solutions"], queens["solutions"],
            "n = {n}: {exec} against {queens}"
        );
        assert_eq!(exec["sha256"].as_str().unwrap().len(), 64, "{exec}");
    }
}

/// A clean run, then the same job through a cluster whose worker is killed
/// with SIGKILL while its program explores a unit and whose coordinator is
/// killed and restarted: both equal the plain count, the killed worker's
/// program died with it, and its private copy of the program was removed.
#[test]
fn a_splitting_program_killed_mid_unit_keeps_the_totals_exact() {
    let dir = TempDir::new("exec-collatz");
    let program = collatz(&dir);
    let programs = dir.path("programs");
    let n = 20_000_000u64;
    let (numbers, steps, most, witness) = collatz_plain(n);
    let n_arg = n.to_string();
    let family = [
        "exec",
        "--program",
        program.to_str().unwrap(),
        "--splits",
        "--arg",
        &n_arg,
        "--arg",
        "3",
    ];
    let check = |r: &serde_json::Value| {
        assert_eq!(r["counters"]["numbers"], numbers, "{r}");
        assert_eq!(r["counters"]["steps"], steps, "{r}");
        assert_eq!(r["maxima"]["steps"]["value"], most, "{r}");
        assert_eq!(r["maxima"]["steps"]["witness"], witness.as_str(), "{r}");
        // Each number a node, and the roots call one (it says none).
        assert_eq!(r["nodes"], numbers + 1, "{r}");
    };

    check(&run_exec_json(
        &programs,
        &dir.path("clean.db"),
        &["--workers", "2", "--unit-budget", "300000"],
        &program,
        &family[3..],
    ));

    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let coordinator_flags = [
        "--lease-ttl",
        "2",
        "--heartbeat-interval",
        "0.2",
        "--unit-budget",
        "300000",
    ];
    let mut coordinator = start_coordinator_with(&dir, port, &coordinator_flags);
    wait_coordinator(&url, Duration::from_secs(30));
    let job = submit_job(&url, &family);
    let worker_flags = ["--programs", programs.to_str().unwrap()];
    let mut killed = start_worker_with(&dir, &url, "killed", &worker_flags);
    let _steady = start_worker_with(&dir, &url, "steady", &worker_flags);
    wait_status(&url, job, Duration::from_secs(60), |s| {
        s["units_done"].as_u64().unwrap_or(0) >= 3 && s["units_running"].as_u64().unwrap_or(0) >= 1
    });
    let killed_pid = killed.0.id();
    // The killed worker's private copies of the program.
    let copies = || -> Vec<PathBuf> {
        let marker = format!("orchard-exec-{killed_pid}-");
        std::fs::read_dir(std::env::temp_dir())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(&marker))
            .map(|e| e.path())
            .collect()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while copies().is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!copies().is_empty(), "the worker to kill made no copy");
    killed.sigkill();
    // Its program dies with it (PR_SET_PDEATHSIG): no orphan searching on.
    let orphans = || {
        let marker = format!("orchard-exec-{killed_pid}-");
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter(|e| {
                std::fs::read(e.path().join("cmdline"))
                    .map(|c| String::from_utf8_lossy(&c).contains(&marker))
                    .unwrap_or(false)
            })
            .count()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while orphans() > 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(orphans(), 0, "the killed worker's program still runs");
    std::thread::sleep(Duration::from_millis(500));
    coordinator.sigkill();
    let _coordinator = start_coordinator_with(&dir, port, &coordinator_flags);
    wait_coordinator(&url, Duration::from_secs(30));
    let _last = start_worker_with(&dir, &url, "last", &worker_flags);
    wait_status(&url, job, Duration::from_secs(180), |s| {
        s["state"] == "done"
    });
    check(&final_results(&url, job));
    // Its private copy of the program, which it could not remove, was
    // swept by the next worker to copy one: its lock died with it.
    let left = copies();
    assert!(
        left.is_empty(),
        "the killed worker's copy is left: {left:?}"
    );
}

/// A program that misbehaves fails its job after its attempts, with one
/// line naming the unit, what went wrong and the tail of its stderr, and
/// nothing of it merged.
#[test]
fn each_bad_program_behaviour_fails_its_job_with_one_clear_line() {
    let dir = TempDir::new("exec-bad");
    let programs = dir.path("programs");
    std::fs::create_dir_all(&programs).unwrap();
    let units = dir.path("units.txt");
    std::fs::write(&units, "first\nsecond\n").unwrap();
    let cases: [(&str, &str, &[&str], &str); 6] = [
        (
            "exits",
            "echo count x 1; echo boom >&2; exit 3",
            &[],
            "exited with status 3; stderr ends: boom",
        ),
        (
            "garbage",
            "echo count x 1; echo 'hello world'",
            &[],
            "printed what does not parse: line 2: not a statement",
        ),
        (
            "floods",
            "yes 'count x 1'",
            &["--max-output-mib", "1"],
            "printed more than 1048576 bytes and was killed",
        ),
        (
            "hangs",
            "echo count x 1; sleep 60",
            &["--timeout-secs", "1"],
            "ran past its time limit of 1 s and was killed",
        ),
        (
            "forgets",
            "echo count x 1",
            &[],
            "exited without printing `done`",
        ),
        (
            "signalled",
            "echo count x 1; kill -9 $$",
            &[],
            "exited with signal 9",
        ),
    ];
    for (name, body, flags, error) in cases {
        let program = programs.join(name);
        std::fs::write(&program, format!("#!/bin/sh\nread unit\n{body}\n")).unwrap();
        set_executable(&program);
        let db = dir.path(&format!("{name}.db"));
        let mut exec_flags = vec!["--units-file", units.to_str().unwrap()];
        exec_flags.extend_from_slice(flags);
        let out = run_exec(
            Some(&programs),
            &db,
            &["--workers", "1"],
            &program,
            &exec_flags,
        );
        assert_one_line_error(&out, error);
        assert_one_line_error(&out, "failed 3 attempts");
        assert_one_line_error(&out, &format!("program '{name}' on unit"));
        // Nothing of the failed attempts counts.
        let nodes = common::db::job_nodes(&db);
        assert_eq!(nodes, 0, "{name}: failed attempts merged {nodes} nodes");
    }
}

/// A program that fails on one unit while a file exists (a transient
/// fault: a full disk) fails its job after its attempts. With the file
/// gone, and the program's bytes (so its SHA-256) unchanged, `orchard
/// retry` puts the job back to running, and it ends with exactly a clean
/// run's answer: the units done before the failure are neither searched
/// nor merged again. Retrying an unknown job, or the job once done, is
/// refused with one line.
#[test]
fn a_failed_job_retried_once_its_cause_is_gone_ends_with_a_clean_runs_answer() {
    let dir = TempDir::new("exec-retry");
    let Flaky {
        programs,
        program,
        fault,
        units,
    } = flaky(&dir);
    let exec_flags = ["--units-file", units.to_str().unwrap()];
    let clean = run_exec_json(
        &programs,
        &dir.path("clean.db"),
        &["--workers", "1"],
        &program,
        &exec_flags,
    );
    assert_eq!(clean["counters"]["units"], 12, "{clean}");
    assert_eq!(clean["counters"]["sum"], 78, "{clean}");

    std::fs::write(&fault, "").unwrap();
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let _coordinator = start_coordinator_with(&dir, port, &[]);
    wait_coordinator(&url, Duration::from_secs(30));
    let mut family = vec!["exec", "--program", program.to_str().unwrap()];
    family.extend_from_slice(&exec_flags);
    let job = submit_job(&url, &family);
    let _worker = start_worker_with(
        &dir,
        &url,
        "worker",
        &["--programs", programs.to_str().unwrap()],
    );
    let failed = wait_status(&url, job, Duration::from_secs(120), |s| {
        s["state"] == "failed"
    });
    let error = failed["error"].as_str().unwrap();
    assert!(error.contains("failed 3 attempts"), "{failed}");
    assert!(error.contains("no space left"), "{failed}");
    let done_before = failed["units_done"].as_u64().unwrap();
    assert!(
        (1..12).contains(&done_before),
        "some units done, not all: {failed}"
    );

    let client = ["--coordinator", url.as_str()];
    let retry = |job: &str| {
        let mut args = vec!["retry", job];
        args.extend_from_slice(&client);
        run(&args)
    };
    assert_one_line_error(&retry("99"), "unknown job 99");
    // Still failed and untouched by the refusal.
    assert_eq!(status(&url, job).unwrap()["state"], "failed");

    std::fs::remove_file(&fault).unwrap();
    let mut args = vec!["retry", "--json"];
    let id = job.to_string();
    args.push(&id);
    args.extend_from_slice(&client);
    let retried = run_json(&args);
    assert_eq!(retried["retried"], true, "{retried}");
    assert_eq!(retried["units_done"], done_before, "{retried}");
    assert_eq!(
        retried["units_pending"].as_u64().unwrap() + done_before,
        12,
        "{retried}"
    );
    wait_status(&url, job, Duration::from_secs(120), |s| {
        s["state"] == "done"
    });
    let r = final_results(&url, job);
    for key in ["counters", "nodes", "sha256"] {
        assert_eq!(r[key], clean[key], "{key}: {r} against {clean}");
    }
    assert!(r.get("error").is_none(), "the failure's error cleared: {r}");

    let out = retry(&id);
    assert_one_line_error(&out, &format!("job {job} cannot be retried: it is done"));
    assert_eq!(status(&url, job).unwrap()["state"], "done");
}

/// A program that fails on unit 7 (of units 1..=12) while the file `fault`
/// exists, as a program meets a full disk: the same bytes, so the same
/// hash, before and after the fault is gone.
struct Flaky {
    programs: PathBuf,
    program: PathBuf,
    fault: PathBuf,
    units: PathBuf,
}

fn flaky(dir: &TempDir) -> Flaky {
    let programs = dir.path("programs");
    std::fs::create_dir_all(&programs).unwrap();
    let fault = dir.path("disk-full");
    let program = programs.join("flaky");
    std::fs::write(
        &program,
        format!(
            "#!/bin/sh\nread unit\n\
             if [ \"$unit\" = 7 ] && [ -e '{}' ]; then echo 'no space left' >&2; exit 3; fi\n\
             echo count units 1\necho count sum $unit\necho done\n",
            fault.display()
        ),
    )
    .unwrap();
    set_executable(&program);
    let units = dir.path("units.txt");
    let lines: String = (1..=12).map(|u| format!("{u}\n")).collect();
    std::fs::write(&units, lines).unwrap();
    Flaky {
        programs,
        program,
        fault,
        units,
    }
}

/// `orchard run` again with `--retry` continues the failed job of the same
/// command from where it stopped and ends with a clean run's answer;
/// `--retry` where nothing of these parameters failed is refused.
#[test]
fn orchard_run_with_retry_continues_the_failed_job_of_the_same_command() {
    let dir = TempDir::new("exec-run-retry");
    let Flaky {
        programs,
        program,
        fault,
        units,
    } = flaky(&dir);
    let exec_flags = ["--units-file", units.to_str().unwrap()];
    let one = ["--workers", "1"];
    let clean = run_exec_json(
        &programs,
        &dir.path("clean.db"),
        &one,
        &program,
        &exec_flags,
    );

    let refused = run_exec(
        Some(&programs),
        &dir.path("nothing-failed.db"),
        &["--workers", "1", "--retry"],
        &program,
        &exec_flags,
    );
    assert_one_line_error(&refused, "--retry: no failed job of these parameters");

    std::fs::write(&fault, "").unwrap();
    let db = dir.path("run.db");
    let failed = run_exec(Some(&programs), &db, &one, &program, &exec_flags);
    assert!(!failed.status.success(), "the job fails on unit 7");
    std::fs::remove_file(&fault).unwrap();
    let retried = run_exec_json(
        &programs,
        &db,
        &["--workers", "1", "--retry"],
        &program,
        &exec_flags,
    );
    assert_eq!(
        retried["resumed"], true,
        "the failed job, not a new one: {retried}"
    );
    for key in ["counters", "nodes", "sha256"] {
        assert_eq!(retried[key], clean[key], "{key}: {retried} against {clean}");
    }
}

/// A worker runs only what its operator allowed: no directory, a name not
/// in it, or a copy whose content differs from the job's is refused, with
/// one line naming both hashes for the last.
#[test]
fn workers_refuse_programs_not_allowed_or_of_another_version() {
    let dir = TempDir::new("exec-refuse");
    let allowed = dir.path("allowed");
    let submitted = dir.path("submitted");
    std::fs::create_dir_all(&allowed).unwrap();
    std::fs::create_dir_all(&submitted).unwrap();
    let script = "#!/bin/sh\nread unit\necho count x 1\necho done\n";
    std::fs::write(allowed.join("count"), script).unwrap();
    std::fs::write(
        submitted.join("count"),
        script.replace("count x 1", "count x 2"),
    )
    .unwrap();
    std::fs::write(submitted.join("other"), script).unwrap();
    for p in ["count", "other"] {
        set_executable(&submitted.join(p));
    }
    set_executable(&allowed.join("count"));
    let units = dir.path("units.txt");
    std::fs::write(&units, "u\n").unwrap();
    let units_flag = ["--units-file", units.to_str().unwrap()];
    let job = |programs: Option<&Path>, program: &Path, db: &str| {
        run_exec(
            programs,
            &dir.path(db),
            &["--workers", "1"],
            program,
            &units_flag,
        )
    };
    let out = job(None, &submitted.join("count"), "none.db");
    assert_one_line_error(&out, "this worker allows no external programs");
    let out = job(Some(&allowed), &submitted.join("other"), "other.db");
    assert_one_line_error(
        &out,
        "program 'other' is not among the programs this worker allows",
    );
    let out = job(Some(&allowed), &submitted.join("count"), "differs.db");
    let wanted = sha256(&submitted.join("count"));
    let found = sha256(&allowed.join("count"));
    assert_ne!(wanted, found);
    assert_one_line_error(
        &out,
        &format!("has sha256 {found}; the job was submitted with {wanted}"),
    );
    // The allowed copy itself runs.
    let r = run_exec_json(
        &allowed,
        &dir.path("same.db"),
        &["--workers", "1"],
        &allowed.join("count"),
        &units_flag,
    );
    assert_eq!(r["counters"]["x"], 1, "{r}");
}

fn sha256(path: &Path) -> String {
    orchard_exec::program::sha256_file(path).unwrap()
}

fn set_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A verified exec job (`--replicas 2`) gives the unverified answer, and
/// both write the extremes into the results file.
#[test]
fn an_exec_job_with_replicas_gives_the_same_answer_and_results_file() {
    let dir = TempDir::new("exec-replicas");
    let program = collatz(&dir);
    let programs = dir.path("programs");
    let (numbers, steps, most, witness) = collatz_plain(300_000);
    let run_with = |replicas: &str| {
        let db = dir.path(&format!("r{replicas}.db"));
        let results = dir.path(&format!("r{replicas}-results"));
        let run_flags = [
            "--workers",
            "2",
            "--unit-budget",
            "50000",
            "--replicas",
            replicas,
            "--results-dir",
            results.to_str().unwrap(),
        ];
        let exec_flags = ["--splits", "--arg", "300000", "--arg", "4"];
        run_exec_json(&programs, &db, &run_flags, &program, &exec_flags)
    };
    let (one, two) = (run_with("1"), run_with("2"));
    for r in [&one, &two] {
        assert_eq!(r["counters"]["numbers"], numbers, "{r}");
        assert_eq!(r["counters"]["steps"], steps, "{r}");
        assert_eq!(r["maxima"]["steps"]["value"], most, "{r}");
        assert_eq!(r["maxima"]["steps"]["witness"], witness.as_str(), "{r}");
        let file = std::fs::read_to_string(r["results_file"].as_str().unwrap()).unwrap();
        assert!(
            file.contains(&format!("max steps {most} {witness}")),
            "{file}"
        );
    }
    assert_eq!(two["replicas"], 2, "{two}");
    assert_eq!(two["mismatches"], 0, "{two}");
    assert!(two["verified_units"].as_u64().unwrap() >= 5, "{two}");
}
