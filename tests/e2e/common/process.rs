//! Running `orchard` processes: one-shot commands, children killed on drop,
//! and the temporary directories they work in.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub fn orchard() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_orchard"));
    c.env_remove("ORCHARD_COORDINATOR").env_remove("ORCHARD_DB");
    c
}

/// A fresh temporary directory, removed on drop (kept when its test fails,
/// or always with `ORCHARD_KEEP_TEST_DIRS` set, to look at a passing test's
/// database and logs).
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let dir =
            std::env::temp_dir().join(format!("orchard-test-{tag}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // Keep the logs and the database of a failed test.
            eprintln!("test files kept in {}", self.0.display());
            for entry in std::fs::read_dir(&self.0).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.extension().is_some_and(|e| e == "log") {
                    let log = std::fs::read_to_string(&path).unwrap_or_default();
                    let tail: Vec<&str> = log.lines().rev().take(15).collect();
                    eprintln!("--- last lines of {}:", path.display());
                    for line in tail.iter().rev() {
                        eprintln!("{line}");
                    }
                }
            }
            return;
        }
        if std::env::var_os("ORCHARD_KEEP_TEST_DIRS").is_some() {
            eprintln!(
                "test files kept in {} (ORCHARD_KEEP_TEST_DIRS)",
                self.0.display()
            );
            return;
        }
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A port that was free a moment ago.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Runs `orchard` with `args` to completion.
pub fn run(args: &[&str]) -> Output {
    orchard()
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run orchard")
}

/// Runs `orchard ... --json`, asserting success, and parses its JSON.
pub fn run_json(args: &[&str]) -> serde_json::Value {
    let out = run(args);
    assert!(
        out.status.success(),
        "orchard {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "orchard {args:?}: bad JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// A child process killed on drop.
pub struct Proc(pub Child);

impl Proc {
    pub fn spawn(args: &[&str], log: &Path) -> Proc {
        let log = std::fs::File::create(log).unwrap();
        let child = orchard()
            .args(args)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("spawn orchard");
        Proc(child)
    }

    pub fn sigkill(&mut self) {
        self.0.kill().expect("SIGKILL");
        self.0.wait().unwrap();
    }

    pub fn sigterm(&mut self) {
        self.signal("TERM");
    }

    /// Sends a signal by name (`STOP`, `CONT`, `TERM`).
    pub fn signal(&mut self, name: &str) {
        let pid = self.0.id().to_string();
        let ok = Command::new("kill")
            .args([&format!("-{name}"), &pid])
            .status()
            .unwrap();
        assert!(ok.success(), "kill -{name} {pid}");
    }

    /// Waits for exit, at most `limit`.
    pub fn wait_for(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Some(s) = self.0.try_wait().unwrap() {
                return Some(s);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Asserts a failed command that said one line, `error: ...`, containing `needle`.
pub fn assert_one_line_error(out: &Output, needle: &str) {
    assert!(!out.status.success(), "expected failure");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "one line of error, got: {err}"
    );
    assert!(err.starts_with("error:"), "{err}");
    assert!(err.contains(needle), "'{needle}' not in: {err}");
}

/// `orchard run JOB --db DB --workers 2 --json` (`job`: the family and its
/// flags), asserting success; its JSON.
pub fn run_on_two_workers(db: &str, job: &[&str]) -> serde_json::Value {
    let mut args = vec!["run"];
    args.extend_from_slice(job);
    args.extend_from_slice(&["--db", db, "--workers", "2", "--json"]);
    run_json(&args)
}

/// `orchard backup` of `db` to `copy`, verified.
pub fn backup(db: &Path, copy: &Path) {
    let out = run(&[
        "backup",
        "--db",
        db.to_str().unwrap(),
        copy.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "backup failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("verified"));
}
