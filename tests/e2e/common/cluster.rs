//! A cluster of processes: a coordinator, workers, and the client commands
//! that submit jobs and read their status and results.

use std::path::Path;
use std::time::{Duration, Instant};

use super::db::job_nodes;
use super::process::{run, run_json, Proc, TempDir};

/// Submits a job (`family_args`: the family and its flags) to the
/// coordinator at `url`; returns its id.
pub fn submit_job(url: &str, family_args: &[&str]) -> u64 {
    let mut args = vec!["submit"];
    args.extend_from_slice(family_args);
    args.extend_from_slice(&["--coordinator", url, "--json"]);
    let r = run_json(&args);
    r["job_id"]
        .as_u64()
        .unwrap_or_else(|| panic!("no job id: {r}"))
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

/// A worker process with one thread, named `name`, logging to `NAME.log`.
pub fn start_worker(dir: &TempDir, url: &str, name: &str) -> Proc {
    start_worker_with(dir, url, name, &[])
}

/// [`start_worker`] with `extra` flags.
pub fn start_worker_with(dir: &TempDir, url: &str, name: &str, extra: &[&str]) -> Proc {
    start_worker_logging_to(dir, url, name, name, extra)
}

/// A one-thread worker named `name` logging to `LOG.log`: a machine that
/// comes back after a kill keeps its name, each life its own log. It gives
/// up after 60 s without the coordinator unless `extra` says otherwise.
pub fn start_worker_logging_to(
    dir: &TempDir,
    url: &str,
    name: &str,
    log: &str,
    extra: &[&str],
) -> Proc {
    let mut args = vec![
        "worker",
        "--coordinator",
        url,
        "--threads",
        "1",
        "--name",
        name,
    ];
    if !extra.contains(&"--give-up-after") {
        args.extend_from_slice(&["--give-up-after", "60"]);
    }
    args.extend_from_slice(extra);
    Proc::spawn(&args, &dir.path(&format!("{log}.log")))
}

/// Units of job `job` done so far, or 0 while the coordinator at `url`
/// does not answer.
pub fn units_done(url: &str, job: u64) -> u64 {
    status(url, job).map_or(0, |s| s["units_done"].as_u64().unwrap_or(0))
}

/// A coordinator on 127.0.0.1:`port` with its database `coord.db` in `dir`,
/// logging to `coordinator.log`, with `extra` flags. Not waited for.
pub fn start_coordinator_with(dir: &TempDir, port: u16, extra: &[&str]) -> Proc {
    start_coordinator_logging_to(dir, port, "coordinator.log", extra)
}

/// [`start_coordinator_with`], logging to `log` in `dir` (a test that
/// restarts its coordinator keeps each life's log).
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

/// Freezes `workers` (SIGSTOP; the caller thaws them), lets a report on its
/// way land, and asserts that the answer so far of the running job `job`
/// (`orchard results`, not final: exit code 3) counts exactly the nodes of
/// the results stored in the coordinator's database `db`, each once. A
/// result merged twice in memory shows here, where a restarted coordinator,
/// which rebuilds its totals from the stored results, would hide it (a
/// report is committed before it is merged).
pub fn freeze_and_check_answer_so_far<'a>(
    workers: impl IntoIterator<Item = &'a mut Proc>,
    url: &str,
    job: u64,
    db: &Path,
) {
    for w in workers {
        w.signal("STOP");
    }
    std::thread::sleep(Duration::from_millis(300));
    let out = run(&["results", &job.to_string(), "--coordinator", url, "--json"]);
    assert_eq!(out.status.code(), Some(3), "not final: exit code 3");
    let so_far: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        so_far["nodes"],
        job_nodes(db),
        "the answer so far against the stored results: {so_far}"
    );
}

/// `orchard results JOB --json` of a finished job, asserting it is final.
pub fn final_results(url: &str, job: u64) -> serde_json::Value {
    let r = run_json(&["results", &job.to_string(), "--coordinator", url, "--json"]);
    assert_eq!(r["final"], true, "{r}");
    r
}
