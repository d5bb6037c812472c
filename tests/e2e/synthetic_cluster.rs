//! The `synthetic` family through the real binary: its answer is checked by
//! the family itself (node count and cut-independent checksum), so a
//! cluster that loses or repeats a subtree under splits, kills and
//! hand-backs says so in `exact`.

use crate::common;

use std::time::Duration;

use common::{final_results, run_on_two_workers, start_coordinator_with, start_worker};
use common::{free_port, submit_job, wait_coordinator, wait_status, TempDir};

#[test]
fn two_workers_count_the_tree_exactly() {
    let dir = TempDir::new("synthetic-two");
    let db = dir.path("run.db");
    let r = run_on_two_workers(
        db.to_str().unwrap(),
        &[
            "synthetic",
            "--nodes",
            "100000000000",
            "--seed",
            "7",
            "--root-units",
            "3",
            "--unit-budget",
            "5000000000",
        ],
    );
    assert_eq!(r["state"], "done", "{r}");
    assert_eq!(r["exact"], true, "{r}");
    assert_eq!(r["nodes"], 100_000_000_000u64, "{r}");
    assert_eq!(r["checksum"], r["expected_checksum"], "{r}");
}

/// Units that cost real time (`--node-cost-ns`), split by budget and by
/// idle workers' requests; one worker killed holding a lease (its unit
/// expires and runs again), another stopped with SIGTERM (it hands back
/// its rest), a third finishing the job: still exactly the tree.
#[test]
fn kills_splits_and_hand_backs_keep_the_count_exact() {
    let dir = TempDir::new("synthetic-kill");
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let _coord = start_coordinator_with(
        &dir,
        port,
        &[
            "--lease-ttl",
            "1",
            "--heartbeat-interval",
            "0.1",
            "--unit-budget",
            "20000",
        ],
    );
    wait_coordinator(&url, Duration::from_secs(30));
    // 200,000 nodes of 20 µs: 4 s of work, in units of at most 0.4 s.
    let job = submit_job(
        &url,
        &[
            "synthetic",
            "--nodes",
            "200000",
            "--seed",
            "3",
            "--node-cost-ns",
            "20000",
        ],
    );
    let mut killed = start_worker(&dir, &url, "killed");
    let mut stopped = start_worker(&dir, &url, "stopped");
    wait_status(&url, job, Duration::from_secs(60), |s| {
        s["units_done"].as_u64().unwrap_or(0) >= 2 && s["units_running"].as_u64().unwrap_or(0) >= 1
    });
    killed.sigkill();
    stopped.sigterm();
    assert!(stopped.wait_for(Duration::from_secs(30)).is_some());
    let _last = start_worker(&dir, &url, "last");
    wait_status(&url, job, Duration::from_secs(120), |s| {
        s["state"] == "done"
    });
    let r = final_results(&url, job);
    assert_eq!(r["exact"], true, "{r}");
    assert_eq!(r["nodes"], 200_000, "{r}");
}
