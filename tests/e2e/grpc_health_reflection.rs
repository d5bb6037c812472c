//! The coordinator as operators' generic gRPC tools see it: a Python client
//! (`tests/python/grpc_probe.py`, grpcio with its health and reflection
//! packages from PyPI) that has no copy of orchard's proto lists the
//! services by reflection, calls `JobService.Status` from the reflected
//! descriptors, and follows the standard health service while the
//! database is made unwritable for real and then writable again.
//!
//! The fault is the file system's: `chattr +i` on the database and its WAL
//! makes every write to them fail with EPERM, even for root and even
//! through descriptors already open (Linux checks the immutable flag on
//! each write). Needs a Python with `tests/python/requirements.txt`
//! installed (`ORCHARD_PYTHON`, default `python3`; .ci/run makes a venv
//! and sets it) and `chattr` with CAP_LINUX_IMMUTABLE; without them the
//! test fails and says which is missing.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::*;

const PROBE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/grpc_probe.py");

/// Runs the Python client with `args`; its stdout, or a panic that says why.
fn probe(args: &[&str]) -> String {
    let python = std::env::var("ORCHARD_PYTHON").unwrap_or_else(|_| "python3".to_string());
    let out = Command::new(&python)
        .arg(PROBE)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {python} (needed for this test): {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(
        out.status.code(),
        Some(3),
        "the Python gRPC client is not installed for {python}: {stderr}"
    );
    assert!(
        out.status.success(),
        "grpc_probe.py {args:?} failed ({}): {stderr}",
        out.status
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Files made immutable (`chattr +i`) until dropped, so that a failing
/// test still leaves files its temporary directory can remove.
struct Immutable(Vec<PathBuf>);

impl Immutable {
    fn set(files: &[&Path]) -> Immutable {
        let files: Vec<PathBuf> = files.iter().map(|f| f.to_path_buf()).collect();
        chattr("+i", &files);
        Immutable(files)
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        chattr("-i", &self.0);
    }
}

fn chattr(flag: &str, files: &[PathBuf]) {
    let out = Command::new("chattr")
        .arg(flag)
        .args(files)
        .output()
        .unwrap_or_else(|e| panic!("cannot run chattr (e2fsprogs; needed for this test): {e}"));
    assert!(
        out.status.success(),
        "chattr {flag} {files:?} failed (needs root and a file system with the immutable flag): {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Whether the Python client's packages are installed. CI installs them
/// and sets `ORCHARD_REQUIRE_GRPC_CLIENT`, so there the test cannot skip;
/// on a developer's machine without them it says so and is skipped.
fn client_installed() -> bool {
    let python = std::env::var("ORCHARD_PYTHON").unwrap_or_else(|_| "python3".to_string());
    let ok = Command::new(&python)
        .args(["-c", "import grpc, grpc_health.v1, grpc_reflection.v1alpha"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("ORCHARD_REQUIRE_GRPC_CLIENT").is_none(),
            "ORCHARD_REQUIRE_GRPC_CLIENT is set but {python} lacks grpcio, \
             grpcio-health-checking or grpcio-reflection"
        );
        eprintln!(
            "skipped: {python} lacks the gRPC client packages \
             (pip install -r tests/python/requirements.txt)"
        );
    }
    ok
}

#[test]
fn generic_clients_list_the_services_and_see_health_follow_the_database() {
    if !client_installed() {
        return;
    }
    let dir = TempDir::new("grpc-health");
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let addr = format!("127.0.0.1:{port}");
    let mut coordinator = start_coordinator_with(&dir, port, &[]);
    wait_coordinator(&url, Duration::from_secs(30));
    let job = submit_job(&url, &["queens", "--n", "6"]);

    // Reflection: every service, the standard ones included.
    let services: Vec<String> = serde_json::from_str(&probe(&["services", &addr])).unwrap();
    for name in [
        "orchard.v1.WorkerService",
        "orchard.v1.JobService",
        "grpc.health.v1.Health",
    ] {
        assert!(
            services.iter().any(|s| s == name),
            "{name} not listed: {services:?}"
        );
    }
    // The descriptors are complete enough to call a method with nothing
    // but them: the job just submitted, with its family and state.
    let status: serde_json::Value = serde_json::from_str(&probe(&[
        "call",
        &addr,
        "orchard.v1.JobService",
        "Status",
        "{}",
    ]))
    .unwrap();
    let jobs = status["jobs"].as_array().expect("jobs listed");
    assert_eq!(jobs.len(), 1, "{status}");
    assert_eq!(jobs[0]["job_id"], job.to_string(), "{status}"); // uint64: a JSON string
    assert_eq!(jobs[0]["family"], "queens", "{status}");
    assert_eq!(jobs[0]["state"], "JOB_STATE_RUNNING", "{status}");

    probe(&["wait", &addr, "SERVING", "30"]);

    // The database cannot be written: NOT_SERVING, for the server and for
    // each orchard service.
    let db = dir.path("coord.db");
    let wal = dir.path("coord.db-wal");
    assert!(wal.exists(), "the coordinator's database is in WAL mode");
    let fault = Immutable::set(&[&db, &wal]);
    probe(&["wait", &addr, "NOT_SERVING", "30"]);
    assert_eq!(probe(&["health", &addr]).trim(), "NOT_SERVING");

    // Writable again: SERVING again, and the job is still there.
    drop(fault);
    probe(&["wait", &addr, "SERVING", "30"]);
    let again = status_of(&url, job);
    assert_eq!(again["state"], "running", "{again}");

    coordinator.sigterm();
    let exit = coordinator
        .wait_for(Duration::from_secs(30))
        .expect("coordinator stops on SIGTERM");
    assert!(exit.success(), "coordinator exit: {exit}");
}

fn status_of(url: &str, job: u64) -> serde_json::Value {
    status(url, job).unwrap_or_else(|| panic!("status of job {job} at {url}"))
}
