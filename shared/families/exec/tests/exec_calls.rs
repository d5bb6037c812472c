//! One call of a program, and the job's parameters: what the family does
//! with a program's answers, before any cluster.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use orchard_core::{Exploration, Host, LocalFlags, SearchFamily};
use orchard_exec::protocol::Call;
use orchard_exec::run::{call, CallError, Ended, Limits, Watch};
use orchard_exec::{Exec, ExecParams, ExecUnit};

fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn temp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("exec-calls-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

const LIMITS: Limits = Limits {
    timeout: Duration::from_secs(20),
    max_output: 1 << 20,
    grace: Duration::from_millis(500),
};

/// Runs `program explore` on unit `u`, asking it to stop after `stop_after`.
fn explore(program: &Path, stop_after: Option<Duration>) -> Result<Ended, CallError> {
    let stop = AtomicBool::new(false);
    let progress = AtomicU64::new(0);
    std::thread::scope(|s| {
        if let Some(after) = stop_after {
            let stop = &stop;
            s.spawn(move || {
                std::thread::sleep(after);
                stop.store(true, Ordering::Relaxed);
            });
        }
        call(
            program,
            Call::Explore,
            &[],
            Some("u"),
            1000,
            LIMITS,
            Watch {
                stop: &stop,
                progress: &progress,
            },
        )
    })
}

#[test]
fn a_stop_request_closes_stdin_and_the_rest_comes_back() {
    let dir = temp("stop");
    // Reads its unit, then waits for stdin to close, then hands back a rest.
    let p = script(
        &dir,
        "splits",
        "read unit\nwhile read x; do :; done\necho count x 1\necho rest u2\necho done",
    );
    let started = Instant::now();
    match explore(&p, Some(Duration::from_millis(200))).unwrap() {
        Ended::Report(r) => {
            assert_eq!(r.units, ["u2"]);
            assert_eq!(r.summary.counters["x"], 1);
        }
        other => panic!("{other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(10));
    // One that ignores the request is killed after the grace time; its
    // unit goes back whole.
    let p = script(&dir, "ignores", "read unit\nsleep 30\necho done");
    assert!(matches!(
        explore(&p, Some(Duration::from_millis(100))).unwrap(),
        Ended::Stopped
    ));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_program_sees_the_protocol_and_not_the_workers_environment() {
    let dir = temp("env");
    std::env::set_var("ORCHARD_TOKEN", "secret-token");
    let p = script(
        &dir,
        "env",
        "read unit\n[ -z \"$ORCHARD_TOKEN\" ] || { echo leaked >&2; exit 1; }\n\
         echo \"count budget $ORCHARD_BUDGET\"\necho \"count protocol $ORCHARD_EXEC_PROTOCOL\"\n\
         echo \"witness unit $unit\"\necho done",
    );
    match explore(&p, None).unwrap() {
        Ended::Report(r) => {
            assert_eq!(r.summary.counters["budget"], 1000);
            assert_eq!(r.summary.counters["protocol"], 1);
            assert_eq!(r.summary.witnesses["unit"], ["u"]);
        }
        other => panic!("{other:?}"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn params(program: &str) -> ExecParams {
    ExecParams {
        program: program.to_string(),
        sha256: "0".repeat(64),
        args: Vec::new(),
        units: vec!["a".into()],
        splits: false,
        timeout_secs: 10,
        max_output_mib: 1,
    }
}

#[test]
fn a_job_names_a_program_never_a_path() {
    for bad in ["../count", "/bin/sh", "a/b", "..", ".", ""] {
        let e = Exec::new(params(bad), &Host::default()).unwrap_err();
        assert_eq!(e.name, "program", "{bad}");
    }
    let mut p = params("count");
    p.sha256 = "ABC".into();
    assert!(Exec::new(p, &Host::default()).is_err());
    let mut p = params("count");
    p.units = vec!["two\nlines".into()];
    assert_eq!(
        Exec::new(p, &Host::default()).unwrap_err().name,
        "units-file"
    );
}

/// Through the family: the program is copied and checked by hash, its
/// report becomes a split or a finished unit, and a refusal is an attempt
/// that may succeed elsewhere.
#[test]
fn the_family_runs_only_the_allowed_program_of_the_jobs_hash() {
    let dir = temp("family");
    let p = script(
        &dir,
        "count",
        "read unit\necho count x 2\necho rest next\necho done",
    );
    let hash = orchard_exec::program::sha256_file(&p).unwrap();
    let host = Host {
        programs: Some(dir.clone()),
        ..Host::default()
    };
    let mut good = params("count");
    good.sha256 = hash;
    let job = Exec::new(good.clone(), &host).unwrap();
    let flags = LocalFlags::default();
    match job
        .explore(&ExecUnit::Text("a".into()), &flags.context(100))
        .unwrap()
    {
        Exploration::Split { explored, rest } => {
            assert_eq!(explored.counters["x"], 2);
            assert_eq!(explored.nodes, 1, "no nodes said: one per unit");
            assert_eq!(rest, [ExecUnit::Text("next".into())]);
        }
        other => panic!("{other:?}"),
    }
    // The file changes on disk: the job keeps running its first copy.
    std::fs::write(&p, "#!/bin/sh\necho count x 999\necho done\n").unwrap();
    let again = job
        .explore(&ExecUnit::Text("a".into()), &flags.context(100))
        .unwrap();
    assert!(
        matches!(again, Exploration::Split { ref explored, .. } if explored.counters["x"] == 2)
    );
    // A new job of the old hash is refused: the file differs now.
    let e = Exec::new(good, &host)
        .unwrap()
        .explore(&ExecUnit::Text("a".into()), &flags.context(100))
        .unwrap_err();
    assert!(e.is_retryable(), "{e}");
    assert!(e.to_string().contains("the job was submitted with"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
