//! Helpers for the end-to-end tests: real `orchard` processes on 127.0.0.1.

#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub fn orchard() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_orchard"));
    c.env_remove("ORCHARD_COORDINATOR").env_remove("ORCHARD_DB");
    c
}

/// A fresh temporary directory, removed on drop.
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

/// The value of the first line of a Prometheus text `body` that starts with
/// `line_prefix` (a metric's name and labels).
#[allow(dead_code)] // not every test file reads metrics
pub fn metric(body: &str, line_prefix: &str) -> f64 {
    body.lines()
        .find(|l| l.starts_with(line_prefix))
        .unwrap_or_else(|| panic!("no '{line_prefix}' in:\n{body}"))
        .rsplit(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// Submits a job (`family_args`: the family and its flags) to the
/// coordinator at `url`; returns its id.
#[allow(dead_code)] // not every test file submits this way
pub fn submit_job(url: &str, family_args: &[&str]) -> u64 {
    let mut args = vec!["submit"];
    args.extend_from_slice(family_args);
    args.extend_from_slice(&["--coordinator", url, "--json"]);
    let r = run_json(&args);
    r["job_id"]
        .as_u64()
        .unwrap_or_else(|| panic!("no job id: {r}"))
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

/// `orchard status JOB --json` against `url`, or None if unreachable.
pub fn status(url: &str, job: u64) -> Option<serde_json::Value> {
    let out = run(&["status", &job.to_string(), "--coordinator", url, "--json"]);
    if !out.status.success() {
        return None;
    }
    serde_json::from_slice(&out.stdout).ok()
}

/// Polls until `pred` holds for the job's status, at most `limit`.
pub fn wait_status(
    url: &str,
    job: u64,
    limit: Duration,
    pred: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let deadline = Instant::now() + limit;
    let mut last = None;
    loop {
        if let Some(s) = status(url, job) {
            if pred(&s) {
                return s;
            }
            assert_ne!(s["state"], "failed", "job failed: {s}");
            last = Some(s);
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {limit:?} waiting for job {job} at {url}; last status: {last:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Waits until a coordinator answers at `url`.
pub fn wait_coordinator(url: &str, limit: Duration) {
    let deadline = Instant::now() + limit;
    while run(&["status", "--coordinator", url, "--json"])
        .status
        .code()
        != Some(0)
    {
        assert!(
            Instant::now() < deadline,
            "coordinator at {url} did not come up"
        );
        std::thread::sleep(Duration::from_millis(100));
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

/// A worker process with one thread, named `name`, logging to `NAME.log`.
pub fn start_worker(dir: &TempDir, url: &str, name: &str) -> Proc {
    start_worker_with(dir, url, name, &[])
}

/// [`start_worker`] with `extra` flags.
pub fn start_worker_with(dir: &TempDir, url: &str, name: &str, extra: &[&str]) -> Proc {
    let mut args = vec![
        "worker",
        "--coordinator",
        url,
        "--threads",
        "1",
        "--name",
        name,
        "--give-up-after",
        "60",
    ];
    args.extend_from_slice(extra);
    Proc::spawn(&args, &dir.path(&format!("{name}.log")))
}

/// A coordinator on 127.0.0.1:`port` with its database `coord.db` in `dir`,
/// logging to `coordinator.log`, with `extra` flags. Not waited for.
#[allow(dead_code)] // not every test file starts its coordinator this way
pub fn start_coordinator_with(dir: &TempDir, port: u16, extra: &[&str]) -> Proc {
    start_coordinator_logging_to(dir, port, "coordinator.log", extra)
}

/// [`start_coordinator_with`], logging to `log` in `dir` (a test that
/// restarts its coordinator keeps each life's log).
#[allow(dead_code)] // not every test file starts its coordinator this way
pub fn start_coordinator_logging_to(dir: &TempDir, port: u16, log: &str, extra: &[&str]) -> Proc {
    let db = dir.path("coord.db");
    let listen = format!("127.0.0.1:{port}");
    let mut args = vec![
        "coordinator",
        "--listen",
        &listen,
        "--db",
        db.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    Proc::spawn(&args, &dir.path(log))
}

/// GET over plain HTTP/1.1 with std only (no client dependency needed);
/// panics unless the answer is 200. Returns the body.
#[allow(dead_code)] // not every test file reads the dashboard
pub fn http_get(url: &str) -> String {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest
        .split_once('/')
        .map(|(h, p)| (h, format!("/{p}")))
        .unwrap_or((rest, "/".into()));
    let mut s = std::net::TcpStream::connect(host).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let (head, body) = out.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{url}: {head}");
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        // De-chunk.
        let mut body = body;
        let mut plain = String::new();
        loop {
            let (size, rest) = body.split_once("\r\n").unwrap();
            let n = usize::from_str_radix(size.trim(), 16).unwrap();
            if n == 0 {
                break;
            }
            plain.push_str(&rest[..n]);
            body = &rest[n + 2..];
        }
        plain
    } else {
        body.to_string()
    }
}

/// [`http_get`], the body parsed as JSON.
#[allow(dead_code)] // not every test file reads the dashboard
pub fn http_get_json(url: &str) -> serde_json::Value {
    serde_json::from_str(&http_get(url)).unwrap_or_else(|e| panic!("{url}: {e}"))
}

/// How many resolved (done or cancelled) units the dashboard's picture of
/// job `job`'s tree draws, from the coordinator's HTTP address `http`
/// (`http://host:port`).
#[allow(dead_code)] // not every test file reads the dashboard
pub fn units_drawn_in_tree(http: &str, job: u64) -> u64 {
    http_get_json(&format!("{http}/api/jobs/{job}/tree"))["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["done"].as_u64().unwrap())
        .sum()
}
