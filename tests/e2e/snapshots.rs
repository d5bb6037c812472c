//! hip-solve's table snapshots (`--cache-dir`): what one process settled
//! carries to the next, a damaged snapshot is refused and left alone, and an
//! interrupted run saves its snapshot as it stops.

use crate::common;

use std::time::Duration;

use common::db::{job_nodes, job_state};
use common::family::HIP_SOLVE;
use common::hip::{assert_same_answer, COLS, ROWS};
use common::{final_results, wait_coordinator, wait_status, Proc, TempDir};
use orchard_core::{CacheSnapshot, Host, SearchFamily};
use orchard_hip::{HipSolve, SolveParams};

/// Table snapshots (`--cache-dir`, here through `ORCHARD_CACHE_DIR`): a
/// worker creates the directory and writes back what its table settled, and
/// a later process of the same game loads it and solves the game again in a
/// fraction of the nodes, with the same answer. A damaged snapshot stops
/// `run` and `worker` with one line, and is left as it was.
#[test]
fn table_snapshots_carry_settled_positions_to_the_next_process() {
    let dir = TempDir::new("hiptables");
    // Not there yet: the worker creates it.
    let tables = dir.path("tables");
    let snapshot = tables.join(format!("hip-{ROWS}x{COLS}.cache"));
    let port = common::free_port();
    let url = format!("http://127.0.0.1:{port}");
    let _coord = HIP_SOLVE.start_coordinator(&dir, port, "coordinator.log", &[]);
    wait_coordinator(&url, Duration::from_secs(20));
    let log = std::fs::File::create(dir.path("worker.log")).unwrap();
    let worker = common::orchard()
        .args(["worker", "--coordinator", &url, "--threads", "2"])
        .env("RUST_LOG", "info")
        .env("ORCHARD_CACHE_DIR", &tables)
        .env("ORCHARD_CACHE_SAVE_SECS", "1")
        .stdin(std::process::Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .expect("spawn orchard worker");
    let _worker = Proc(worker);
    let job = HIP_SOLVE.submit(&url);
    let s = wait_status(&url, job, Duration::from_secs(300), |s| {
        s["state"] == "done"
    });
    let first = final_results(&url, job);
    assert_same_answer(&first);
    let cluster_nodes = s["nodes"].as_u64().unwrap();
    // A snapshot written after the job ended holds everything it settled.
    let ended = std::time::SystemTime::now();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !std::fs::metadata(&snapshot)
        .and_then(|m| m.modified())
        .is_ok_and(|t| t > ended)
    {
        assert!(
            std::time::Instant::now() < deadline,
            "no snapshot written after the job"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(_worker);

    let db = dir.path("second.db");
    let second = |extra_env: &[(&str, &str)], args: &[&str]| {
        let mut cmd = common::orchard();
        cmd.args(args)
            .env("ORCHARD_CACHE_DIR", &tables)
            .stdin(std::process::Stdio::null());
        for (k, v) in extra_env {
            cmd.env(k, v);
        }
        cmd.output().expect("run orchard")
    };
    let run_args = [
        "run",
        "hip-solve",
        "--rows",
        "4",
        "--cols",
        "5",
        "--workers",
        "1",
        "--db",
        db.to_str().unwrap(),
        "--json",
    ];
    // The same `run` twice, one process each: cold (an empty cache
    // directory of its own), then warm from the worker's snapshot. One worker
    // makes both searches the same walk, so the ratio measures the snapshot
    // alone (Gardner's pairing bound keeps this walk shallow: the snapshot
    // cuts it to about a sixth, not the tenth it cut before the bound).
    let cold_db = dir.path("cold.db");
    let cold_tables = dir.path("cold-tables");
    let mut cold_args = run_args.to_vec();
    cold_args[9] = cold_db.to_str().unwrap();
    let out = second(
        &[("ORCHARD_CACHE_DIR", cold_tables.to_str().unwrap())],
        &cold_args,
    );
    assert!(out.status.success(), "{out:?}");
    let cold: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_same_answer(&cold);
    let cold_nodes = cold["nodes"].as_u64().unwrap();
    let out = second(&[], &run_args);
    assert!(out.status.success(), "{out:?}");
    let again: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_same_answer(&again);
    let warm_nodes = again["nodes"].as_u64().unwrap();
    assert!(
        warm_nodes * 3 < cold_nodes,
        "{warm_nodes} nodes with the snapshot, {cold_nodes} without \
         ({cluster_nodes} in the cluster's first solve)"
    );

    // Damaged: refused at startup, by `run` and by a worker, untouched.
    let mut bytes = std::fs::read(&snapshot).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x01;
    std::fs::write(&snapshot, &bytes).unwrap();
    let other_db = dir.path("third.db");
    let mut refused_run = run_args.to_vec();
    refused_run[9] = other_db.to_str().unwrap();
    for args in [
        refused_run,
        vec!["worker", "--coordinator", "http://127.0.0.1:9"],
    ] {
        let out = second(&[], &args);
        common::assert_one_line_error(&out, "delete it to start cold");
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(err.contains("checksum"), "{err}");
        assert!(err.contains(&format!("hip-{ROWS}x{COLS}.cache")), "{err}");
        assert_eq!(std::fs::read(&snapshot).unwrap(), bytes, "left as it was");
    }
    assert!(!other_db.exists(), "a refused run creates no database");
    let out = second(
        &[("ORCHARD_CACHE_SAVE_SECS", "soon")],
        &["worker", "--coordinator", "http://127.0.0.1:9"],
    );
    common::assert_one_line_error(&out, "--cache-save-secs");
}

/// An interrupted `orchard run` writes its table snapshot as it stops,
/// though the periodic saver has not ticked: a resume starts warm.
#[test]
fn an_interrupted_run_saves_its_table_snapshot() {
    let dir = TempDir::new("hiptablestop");
    let tables = dir.path("tables");
    let snapshot = tables.join("hip-5x5.cache");
    let db = dir.path("run.db");
    let log = std::fs::File::create(dir.path("run.log")).unwrap();
    let child = common::orchard()
        .args(common::hip::RUN_5X5_IN_SMALL_UNITS)
        .args(["--db", db.to_str().unwrap()])
        .env("RUST_LOG", "info")
        .args(["--cache-dir", tables.to_str().unwrap()])
        .args(["--cache-save-secs", "86400"])
        .stdin(std::process::Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .expect("spawn orchard run");
    let mut run = Proc(child);
    // Let the searches fill the table (5x5 takes some 15 million nodes).
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while job_nodes(&db) < 2_000_000 {
        assert!(
            std::time::Instant::now() < deadline,
            "the run made no progress"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(!snapshot.exists(), "the saver has not ticked");
    run.sigterm();
    let status = run
        .wait_for(Duration::from_secs(120))
        .expect("run stops on SIGTERM");
    assert_eq!(status.code(), Some(130), "interrupted");
    assert_eq!(job_state(&db, 1), "running", "the job was not finished");
    // The file's frame, then the family's own checks of every entry.
    let bytes = orchard_worker::cache::read_cache_file(&snapshot).expect("a whole snapshot file");
    let p = SolveParams::new(5, 5, false);
    let entries = HipSolve::new(p, &Host::default())
        .unwrap()
        .restore(&bytes)
        .expect("a sound snapshot written at the stop");
    assert!(entries > 0, "the snapshot holds the settled positions");
}
