//! The cluster as it runs across machines: a coordinator and workers as real
//! processes talking gRPC over 127.0.0.1, with workers and the coordinator
//! killed with SIGKILL mid-job. The answer must equal a single-process
//! search, node for node (the `--min-length` mode makes the node count
//! independent of how the tree was split, so a lost or doubled unit shows).

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use common::{http_get_json, run_json, wait_coordinator, wait_status, Proc, TempDir};
use orchard_core::{explore_all, Host, SearchFamily};
use orchard_hc::{digits, HararyColumns, HcParams, RgsPrefix, Variant};

/// A job that takes several seconds of CPU (h'(4), every game of the whole
/// tree: about 2.5 x 10^8 nodes): long enough to kill things mid-way.
const COLUMNS: &str = "4";
const MIN_LENGTH: &str = "1";
const VARIANT: &str = "subsets";

/// The same search in this process, without the cluster.
fn single_process_answer() -> (serde_json::Value, Vec<String>) {
    let p = HcParams {
        columns: COLUMNS.parse().unwrap(),
        variant: Variant::Subsets,
        min_length: Some(MIN_LENGTH.parse().unwrap()),
    };
    let job = HararyColumns::new(p, &Host::default()).unwrap();
    let s = explore_all(&job, vec![RgsPrefix(vec![])], u64::MAX).unwrap();
    let hist: serde_json::Map<String, serde_json::Value> = s
        .histogram
        .iter()
        .map(|(k, v)| (k.to_string(), (*v).into()))
        .collect();
    let mut games: Vec<String> = s.best_games.iter().map(|g| digits(g)).collect();
    games.sort();
    (
        serde_json::json!({
            "max_length": s.best,
            "maximal_count": s.best_count,
            "nodes": s.nodes,
            "histogram": hist,
        }),
        games,
    )
}

fn assert_same_answer(result: &serde_json::Value) {
    let (want, games) = single_process_answer();
    for key in ["max_length", "maximal_count", "nodes", "histogram"] {
        assert_eq!(
            result[key], want[key],
            "{key}: cluster {} vs single process {}",
            result[key], want[key]
        );
    }
    let file = std::fs::read_to_string(result["results_file"].as_str().unwrap()).unwrap();
    let got: Vec<String> = file.lines().map(String::from).collect();
    assert_eq!(got, games, "results file");
}

fn start_coordinator(dir: &TempDir, port: u16, log: &str) -> Proc {
    common::start_coordinator_logging_to(dir, port, log, &COORDINATOR_FLAGS)
}

/// A two-second lease, so that a frozen worker's unit expires quickly.
const COORDINATOR_FLAGS: [&str; 4] = ["--lease-ttl", "2", "--unit-budget", "3000000"];

/// The same coordinator (logging to `coordinator.log`) with `extra` flags.
fn start_coordinator_with(dir: &TempDir, port: u16, extra: &[&str]) -> Proc {
    let mut flags = COORDINATOR_FLAGS.to_vec();
    flags.extend_from_slice(extra);
    common::start_coordinator_with(dir, port, &flags)
}

/// How many units the coordinator says the worker named "victim" holds,
/// from the dashboard's API.
fn victim_units(http: &str) -> u64 {
    let api = http_get_json(&format!("http://{http}/api/jobs"));
    api["workers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["hostname"] == "victim")
        .map_or(0, |w| w["units"].as_u64().unwrap())
}

fn submit(url: &str) -> u64 {
    let r = run_json(&[
        "submit",
        "hc",
        "--columns",
        COLUMNS,
        "--variant",
        VARIANT,
        "--min-length",
        MIN_LENGTH,
        "--coordinator",
        url,
        "--json",
    ]);
    r["job_id"].as_u64().unwrap()
}

fn results(url: &str, job: u64) -> serde_json::Value {
    let r = run_json(&["results", &job.to_string(), "--coordinator", url, "--json"]);
    assert_eq!(r["final"], true, "{r}");
    r
}

/// How many units were leased more than once so far.
fn releases(db: &Path) -> i64 {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    conn.query_row(
        "SELECT count(*) FROM units WHERE lease_count >= 2",
        [],
        |r| r.get(0),
    )
    .unwrap()
}

/// (lease_count, summary) of every unit that was done, from the database.
fn done_units(db: &Path) -> HashMap<i64, (i64, Vec<u8>)> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("SELECT u.id, u.lease_count, r.summary FROM units u JOIN results r ON r.unit_id = u.id WHERE u.state = 'done'")
        .unwrap();
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                (r.get::<_, i64>(1)?, r.get::<_, Vec<u8>>(2)?),
            ))
        })
        .unwrap();
    rows.map(Result::unwrap).collect()
}

#[test]
fn a_worker_killed_mid_job_loses_nothing() {
    let dir = TempDir::new("killworker");
    let port = common::free_port();
    let http_port = common::free_port();
    let url = format!("http://127.0.0.1:{port}");
    let http = format!("127.0.0.1:{http_port}");
    let _coord = start_coordinator_with(&dir, port, &["--http", &http]);
    wait_coordinator(&url, Duration::from_secs(20));
    let job = submit(&url);
    let mut victim = common::start_worker(&dir, &url, "victim");
    let _survivor = common::start_worker(&dir, &url, "survivor");
    let _third = common::start_worker(&dir, &url, "third");
    // Kill the victim while it holds a lease, so that its unit must expire
    // and be leased again. A kill between two of its units would leave
    // nothing to re-lease, so the victim is frozen (SIGSTOP) and the
    // coordinator asked, once any report already in flight has landed,
    // whether the frozen victim still holds a unit. If it does not, it is
    // thawed at once and frozen again later (a fast machine finishes the
    // whole job in under ten seconds, so no time is spent waiting on a
    // victim that holds nothing). If it does, it is killed once a lease has
    // expired and its unit has gone to another worker.
    let db = dir.path("coord.db");
    wait_status(&url, job, Duration::from_secs(120), |s| {
        s["units_done"].as_u64().unwrap() >= 20
    });
    let mut attempts = 0;
    loop {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while victim_units(&http) == 0 {
            assert!(
                std::time::Instant::now() < deadline,
                "the victim never held a unit"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let before = releases(&db);
        victim.signal("STOP");
        std::thread::sleep(Duration::from_millis(300));
        let frozen_with_a_unit = victim_units(&http) > 0;
        // The lease TTL is 2 s.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let mut released = false;
        while frozen_with_a_unit && !released && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(200));
            released = releases(&db) > before;
        }
        if released {
            victim.sigkill();
            break;
        }
        victim.signal("CONT");
        let s = common::status(&url, job).unwrap();
        assert_eq!(s["state"], "running", "the job ended before the kill: {s}");
        attempts += 1;
        assert!(
            attempts < 50,
            "the victim's lease never went to another worker"
        );
    }
    let s = wait_status(&url, job, Duration::from_secs(600), |s| {
        s["state"] == "done"
    });
    assert_eq!(s["state"], "done");
    let r = results(&url, job);
    assert_same_answer(&r);
    // The victim's units were leased again after their leases expired.
    let units = done_units(&dir.path("coord.db"));
    assert!(
        units.values().any(|(leases, _)| *leases >= 2),
        "some unit was re-leased"
    );
}

#[test]
fn a_coordinator_killed_mid_job_resumes_from_its_database() {
    let dir = TempDir::new("killcoord");
    let port = common::free_port();
    let url = format!("http://127.0.0.1:{port}");
    let db = dir.path("coord.db");
    let mut coord = start_coordinator(&dir, port, "coordinator-1.log");
    wait_coordinator(&url, Duration::from_secs(20));
    let job = submit(&url);
    let _w1 = common::start_worker(&dir, &url, "w1");
    let _w2 = common::start_worker(&dir, &url, "w2");
    wait_status(&url, job, Duration::from_secs(120), |s| {
        s["units_done"].as_u64().unwrap() >= 30
    });
    coord.sigkill();
    let before = done_units(&db);
    assert!(!before.is_empty());

    // Same database, same address: the workers reconnect by themselves.
    let _coord2 = start_coordinator(&dir, port, "coordinator-2.log");
    let s = wait_status(&url, job, Duration::from_secs(600), |s| {
        s["state"] == "done"
    });
    assert_eq!(s["state"], "done");
    assert_same_answer(&results(&url, job));

    // Nothing completed before the kill was run again.
    let after = done_units(&db);
    for (id, (leases, summary)) in &before {
        let (leases_after, summary_after) = &after[id];
        assert_eq!(
            leases_after, leases,
            "unit {id} done before the kill was leased again"
        );
        assert_eq!(summary_after, summary, "unit {id} result changed");
    }
}

#[test]
fn sigterm_makes_a_worker_hand_back_its_work_and_exit_cleanly() {
    let dir = TempDir::new("sigterm");
    let port = common::free_port();
    let url = format!("http://127.0.0.1:{port}");
    let _coord = start_coordinator(&dir, port, "coordinator.log");
    wait_coordinator(&url, Duration::from_secs(20));
    let job = submit(&url);
    let mut w = common::start_worker(&dir, &url, "leaver");
    wait_status(&url, job, Duration::from_secs(120), |s| {
        s["units_done"].as_u64().unwrap() >= 5
    });
    w.sigterm();
    let status = w
        .wait_for(Duration::from_secs(20))
        .expect("worker exits after SIGTERM");
    assert!(status.success(), "clean exit: {status:?}");
    // Its leases came back at once: nothing is left running.
    let s = wait_status(&url, job, Duration::from_secs(5), |s| {
        s["units_running"] == 0
    });
    assert_eq!(s["state"], "running");
    let _w2 = common::start_worker(&dir, &url, "finisher");
    wait_status(&url, job, Duration::from_secs(600), |s| {
        s["state"] == "done"
    });
    assert_same_answer(&results(&url, job));
    // The coordinator's own estimate of the job's size (Knuth's probes,
    // unbiased here: the horizon is fixed) is within its error bar.
    let s = common::status(&url, job).unwrap();
    let (est, err) = (
        s["estimated_nodes"].as_f64().unwrap(),
        s["estimated_nodes_error"].as_f64().unwrap(),
    );
    let truth = single_process_answer().0["nodes"].as_f64().unwrap();
    assert!(est > 0.0 && err > 0.0, "an estimate was made: {s}");
    assert!(
        (est - truth).abs() <= 5.0 * err,
        "estimate {est} +- {err} vs true {truth}"
    );
}
