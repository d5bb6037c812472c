//! The worker obeys the settings the coordinator sends at registration: it
//! heartbeats at the coordinator's interval, not at one of its own; and a
//! coordinator refuses an interval that would let leases expire.

use crate::common;

use std::time::{Duration, Instant};

use common::{
    assert_one_line_error, free_port, http_get, metric, run, start_coordinator_with,
    start_worker_with, wait_coordinator, TempDir,
};

#[test]
fn the_worker_heartbeats_at_the_coordinators_interval() {
    let dir = TempDir::new("heartbeat-interval");
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let _coord = start_coordinator_with(
        &dir,
        port,
        &["--heartbeat-interval", "2", "--lease-ttl", "30"],
    );
    wait_coordinator(&url, Duration::from_secs(30));
    let metrics_port = free_port();
    let metrics_addr = format!("127.0.0.1:{metrics_port}");
    let _worker = start_worker_with(&dir, &url, "w", &["--metrics", &metrics_addr]);
    let metrics = format!("http://127.0.0.1:{metrics_port}/metrics");
    let heartbeats = || {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(body) = std::panic::catch_unwind(|| http_get(&metrics)) {
                return metric(&body, "orchard_worker_heartbeats_total ");
            }
            assert!(Instant::now() < deadline, "worker metrics never came up");
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    let first = heartbeats();
    let started = Instant::now();
    std::thread::sleep(Duration::from_secs(5));
    let later = heartbeats();
    let elapsed = started.elapsed().as_secs_f64();
    // Every 2 s: at most elapsed / 2 + 1 more (a worker of its own mind,
    // at 500 ms, would have sent about 10).
    assert!(
        later - first <= elapsed / 2.0 + 1.0,
        "{} heartbeats in {elapsed:.1} s at a 2 s interval",
        later - first
    );
    assert!(later >= 1.0, "the worker heartbeats at all");
}

#[test]
fn an_interval_that_would_let_leases_expire_is_refused() {
    let dir = TempDir::new("heartbeat-refused");
    let db = dir.path("coord.db");
    let out = run(&[
        "coordinator",
        "--listen",
        "127.0.0.1:0",
        "--db",
        db.to_str().unwrap(),
        "--heartbeat-interval",
        "20",
        "--lease-ttl",
        "30",
    ]);
    assert_one_line_error(
        &out,
        "--heartbeat-interval 20 is over a third of --lease-ttl 30",
    );
    assert!(!db.exists(), "nothing was written");
}
