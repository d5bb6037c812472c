//! The network between workers and the coordinator, as it fails: real
//! worker and coordinator processes, with a fault proxy (`common::proxy`)
//! on the workers' side of the connection adding latency, resetting
//! connections, and cutting the network for longer than a lease. The job is
//! h'(4) with `--min-length` (its node count does not depend on the cut,
//! so a result counted twice or lost shows); the answer must be the single
//! process's every time.

use crate::common;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::hc::{assert_same_answer, JOB, UNIT_BUDGET};
use common::proxy::FaultProxy;
use common::{
    final_results, free_port, metric_at, start_coordinator_with, start_worker_with, submit_job,
    units_done, units_held_by, wait_coordinator, wait_status, Proc, TempDir,
};

const LEASE_TTL: &str = "2";

/// A worker with one thread named `name`, reaching the coordinator at `url`.
fn worker(dir: &TempDir, url: &str, name: &str) -> Proc {
    start_worker_with(dir, url, name, &[])
}

/// A coordinator on a free port with a 2 s lease and its dashboard's
/// `/metrics`; returns it, its gRPC address and its HTTP address.
fn coordinator(dir: &TempDir) -> (Proc, String, String) {
    let port = free_port();
    let http = format!("127.0.0.1:{}", free_port());
    let c = start_coordinator_with(
        dir,
        port,
        &[
            "--unit-budget",
            UNIT_BUDGET,
            "--lease-ttl",
            LEASE_TTL,
            "--heartbeat-interval",
            "0.5",
            "--http",
            &http,
        ],
    );
    let url = format!("http://127.0.0.1:{port}");
    wait_coordinator(&url, Duration::from_secs(20));
    (c, url, http)
}

fn wait_done(url: &str, job: u64) -> serde_json::Value {
    wait_status(url, job, Duration::from_secs(300), |s| s["state"] == "done");
    final_results(url, job)
}

/// The (unit, worker id) of every "lease expired" line of a coordinator's
/// log.
fn expired_leases(log: &Path) -> Vec<(i64, u64)> {
    let text = std::fs::read_to_string(log).unwrap();
    let field = |line: &str, key: &str| -> Option<String> {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(key).map(str::to_string))
    };
    text.lines()
        .filter(|l| l.contains("lease expired"))
        .filter_map(|l| {
            Some((
                field(l, "unit=")?.parse().ok()?,
                field(l, "worker=")?.parse().ok()?,
            ))
        })
        .collect()
}

/// Partitions `proxy` once the job has done a few units and, after the
/// cut, the coordinator still counts a unit held by one of `workers` (so a
/// lease will expire); a cut that fell between two units is healed and
/// tried again.
fn cut_while_holding(proxy: &FaultProxy, url: &str, http: &str, job: u64, workers: &[&str]) {
    let held = || -> u64 { workers.iter().map(|w| units_held_by(http, w)).sum() };
    let t = Instant::now();
    loop {
        assert!(
            t.elapsed() < Duration::from_secs(120),
            "never cut while holding a unit"
        );
        if units_done(url, job) < 2 || held() == 0 {
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        proxy.partition();
        std::thread::sleep(Duration::from_millis(200));
        if held() > 0 {
            return;
        }
        proxy.heal();
    }
}

/// 25 ms each way on every chunk, and every connection reset once a second
/// five times: the workers reconnect and the answer is the same. (More
/// resets only make it slower: a worker's retries back off to 5 s.)
#[test]
fn latency_and_connection_resets_change_nothing() {
    let dir = TempDir::new("netfault-resets");
    let (_c, url, _http) = coordinator(&dir);
    let proxy = Arc::new(FaultProxy::start(url.trim_start_matches("http://")));
    proxy.set_latency(25);
    let job = submit_job(&url, JOB);
    let _w1 = worker(&dir, &proxy.url(), "w1");
    let _w2 = worker(&dir, &proxy.url(), "w2");
    let done = Arc::new(AtomicBool::new(false));
    let resets = {
        let (proxy, done) = (proxy.clone(), done.clone());
        std::thread::spawn(move || {
            let mut n = 0;
            while n < 5 && !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(1000));
                proxy.reset_all();
                n += 1;
            }
            n
        })
    };
    let result = wait_done(&url, job);
    done.store(true, Ordering::Relaxed);
    let resets = resets.join().unwrap();
    assert_same_answer(&result);
    assert_eq!(resets, 5, "the job ended before the resets did");
    assert!(
        proxy.connections() > 2,
        "the workers reconnected after the resets ({} connections)",
        proxy.connections()
    );
}

/// A worker cut off for longer than its lease, while another worker does
/// the whole job: when the network comes back, its report of the unit it
/// held arrives late, is acknowledged and ignored, and nothing is counted
/// twice.
#[test]
fn a_worker_partitioned_past_its_lease_reports_late_and_is_ignored() {
    let dir = TempDir::new("netfault-late");
    let (_c, url, http) = coordinator(&dir);
    let proxy = FaultProxy::start(url.trim_start_matches("http://"));
    let job = submit_job(&url, JOB);
    let _cut = worker(&dir, &proxy.url(), "cut");
    cut_while_holding(&proxy, &url, &http, job, &["cut"]);
    let ignored_before = metric_at(&http, "orchard_reports_ignored_total");
    let _other = worker(&dir, &url, "other");
    let result = wait_done(&url, job);
    assert_same_answer(&result);
    assert!(
        metric_at(&http, "orchard_lease_expiries_total") >= 1,
        "the cut worker's lease expired"
    );
    proxy.heal();
    // The cut worker comes back with the result of the unit it held (or
    // of its rest): acknowledged, ignored.
    let t = Instant::now();
    while metric_at(&http, "orchard_reports_ignored_total") <= ignored_before {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "the cut worker's late report never arrived"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // And the answer did not move.
    assert_same_answer(&final_results(&url, job));
}

/// Every worker cut off from the coordinator for three lease times: they
/// keep the results they finish meanwhile and deliver them when the network
/// comes back; a unit whose lease expired but which nobody leased again is
/// done by that late report, not searched twice.
#[test]
fn workers_keep_their_results_while_the_coordinator_is_unreachable() {
    let dir = TempDir::new("netfault-unreachable");
    let (_c, url, http) = coordinator(&dir);
    let proxy = FaultProxy::start(url.trim_start_matches("http://"));
    let job = submit_job(&url, JOB);
    let _w1 = worker(&dir, &proxy.url(), "w1");
    let _w2 = worker(&dir, &proxy.url(), "w2");
    cut_while_holding(&proxy, &url, &http, job, &["w1", "w2"]);
    let cut = Instant::now();
    // Reports that crossed just before the cut are committed within
    // moments; after that, three lease times without a word from either
    // worker.
    std::thread::sleep(Duration::from_millis(500));
    let done_at_cut = units_done(&url, job);
    std::thread::sleep(Duration::from_secs(6));
    assert_eq!(
        units_done(&url, job),
        done_at_cut,
        "nothing reached the coordinator through the partition"
    );
    let expired = metric_at(&http, "orchard_lease_expiries_total");
    assert!(expired >= 1, "the workers' leases expired during the cut");
    proxy.heal();
    let result = wait_done(&url, job);
    assert_same_answer(&result);
    // Each lease that expired during the cut: the holder's kept result
    // came back and was counted (the unit's result is the holder's), or it
    // came back after another worker had searched the unit again, and was
    // acknowledged and ignored.
    let expired = expired_leases(&dir.path("coordinator.log"));
    assert!(!expired.is_empty(), "the coordinator logged the expiries");
    let conn = rusqlite::Connection::open(dir.path("coord.db")).unwrap();
    let from_holder = expired
        .iter()
        .filter(|(unit, worker)| {
            let by: String = conn
                .query_row(
                    "SELECT worker FROM results WHERE unit_id = ?1",
                    [unit],
                    |r| r.get(0),
                )
                .unwrap();
            by.starts_with(&format!("worker {worker} ("))
        })
        .count();
    let ignored = metric_at(&http, "orchard_reports_ignored_total");
    assert!(
        from_holder >= 1 || ignored >= 1,
        "none of the {} results held through the {:?} cut came back ({expired:?})",
        expired.len(),
        cut.elapsed()
    );
}
