//! Hip through the cluster: `hip-solve` jobs on a real coordinator and real
//! workers over 127.0.0.1, with a worker and then the coordinator killed with
//! SIGKILL mid-job; and the `orchard run hip-*` JSON checked against the
//! source's tables and against the plain reference implementations.
//!
//! A game search's node count depends on how the tree was split (a unit cut
//! by a sibling's result is cancelled, not searched), so the cluster's answer
//! is compared with a single-process solve by value: the winner, every
//! opening's value interval (consistent with the reference's), and a
//! principal variation that is a legal game ending as the winner says.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use common::{run, run_json, wait_coordinator, wait_status, Proc, TempDir};
use orchard_core::{CacheSnapshot, Host, LemmaExchange, SearchFamily};
use orchard_hip::solve::explore_pruned;
use orchard_hip::{reference, HipSolve, SolveParams};

/// Standard Hip on 4x5 (a draw, Franke's table B): about 1.7e6 nodes in one
/// process, 4-5e6 through the cluster with this unit budget, in some 2000
/// units (most of them cancelled as moot), a few seconds on two cores.
const ROWS: u32 = 4;
const COLS: u32 = 5;
const UNIT_BUDGET: &str = "20000";

fn params() -> SolveParams {
    SolveParams::new(ROWS, COLS, false)
}

/// The report of the same job solved in this process (computed once for the
/// tests of this file).
fn single_process_answer() -> &'static serde_json::Value {
    static ANSWER: OnceLock<serde_json::Value> = OnceLock::new();
    ANSWER.get_or_init(|| {
        let job = HipSolve::new(params(), &Host::default()).unwrap();
        let run = explore_pruned(&job, job.root_units(), u64::MAX, false).unwrap();
        job.report(&run.summary).json
    })
}

fn interval(v: &serde_json::Value) -> (i64, i64) {
    (v[0].as_i64().unwrap(), v[1].as_i64().unwrap())
}

fn root_value(winner: u64) -> i64 {
    match winner {
        0 => 0,
        1 => 1,
        2 => -1,
        w => panic!("winner {w}"),
    }
}

/// Checks a `hip-solve` report against the rules: the winner is given, the
/// openings are the first moves up to symmetry (lowest cell of each class, in
/// cell order), none beats the root's value and one achieves it, and the
/// principal variation is a legal game that ends as the winner says.
fn check_report(json: &serde_json::Value, rows: usize, cols: usize, double: bool) {
    assert_eq!(json["family"], "hip-solve");
    assert!(json["nodes"].as_u64().unwrap() > 0, "{json}");
    let w = json["winner"].as_u64().expect("solved: winner 0, 1 or 2");
    let root = root_value(w);
    assert_eq!(interval(&json["value"]), (root, root));
    let names: Vec<String> = (0..rows * cols)
        .map(|i| format!("{}{}", char::from(b'a' + (i % cols) as u8), i / cols + 1))
        .collect();
    // The classes of first moves, from the reference's symmetries.
    let syms = reference::symmetries(rows, cols);
    let classes: Vec<&str> = (0..rows * cols)
        .filter(|&c| syms.iter().all(|g| g[c] >= c))
        .map(|c| names[c].as_str())
        .collect();
    let openings = json["openings"].as_array().unwrap();
    let cells: Vec<&str> = openings
        .iter()
        .map(|o| o["cell"].as_str().unwrap())
        .collect();
    assert_eq!(cells, classes, "one opening per class of first moves");
    let iv: Vec<(i64, i64)> = openings.iter().map(|o| interval(&o["value"])).collect();
    for (o, &(lo, hi)) in openings.iter().zip(&iv) {
        assert!(-1 <= lo && lo <= hi && hi <= 1, "{o}");
        assert!(lo <= root, "opening {o} beats the root's value {root}");
        if lo == hi {
            assert_eq!(o["winner"], root_value_to_winner(lo), "{o}");
        } else {
            assert!(o["winner"].is_null(), "{o}");
        }
    }
    assert!(
        iv.contains(&(root, root)),
        "no opening achieves {root}: {iv:?}"
    );
    // Replay the principal variation.
    let squares = reference::squares_by_subsets(rows, cols);
    let mut board = vec![0u8; rows * cols];
    let pv = json["pv"].as_array().unwrap();
    assert!(!pv.is_empty());
    let mut ended = false;
    for (s, name) in pv.iter().enumerate() {
        assert!(!ended, "the pv goes on after a lost move: {pv:?}");
        let i = names
            .iter()
            .position(|n| n == name.as_str().unwrap())
            .unwrap_or_else(|| panic!("pv cell {name}"));
        assert_eq!(board[i], 0, "the pv plays on a stone: {pv:?}");
        let who = reference::mover(s, double);
        board[i] = who;
        if squares.iter().any(|q| q.iter().all(|&x| board[x] == who)) {
            assert_eq!(w, if who == 1 { 2 } else { 1 }, "the pv's loser loses");
            ended = true;
        }
    }
    if !ended && board.iter().all(|&x| x != 0) {
        assert_eq!(w, 0, "a full board is a draw");
    }
}

fn root_value_to_winner(v: i64) -> serde_json::Value {
    serde_json::json!(match v {
        1 => 1,
        0 => 0,
        _ => 2,
    })
}

/// The cluster's answer is the single process's.
fn assert_same_answer(result: &serde_json::Value) {
    let want = single_process_answer();
    check_report(result, ROWS as usize, COLS as usize, false);
    check_report(want, ROWS as usize, COLS as usize, false);
    assert_eq!(result["winner"], want["winner"], "winner");
    // Franke's table B: standard 4x5 is a draw.
    assert_eq!(result["winner"], 0);
    let (got, exp) = (
        result["openings"].as_array().unwrap(),
        want["openings"].as_array().unwrap(),
    );
    assert_eq!(got.len(), exp.len());
    for (g, e) in got.iter().zip(exp) {
        assert_eq!(g["cell"], e["cell"]);
        // Both intervals contain the opening's true value.
        let ((a, b), (c, d)) = (interval(&g["value"]), interval(&e["value"]));
        assert!(a.max(c) <= b.min(d), "opening {g} vs single process {e}");
    }
}

fn start_coordinator(dir: &TempDir, port: u16, log: &str) -> Proc {
    start_coordinator_with(dir, port, log, &[])
}

fn start_coordinator_with(dir: &TempDir, port: u16, log: &str, extra: &[&str]) -> Proc {
    let mut flags = vec!["--lease-ttl", "2", "--unit-budget", UNIT_BUDGET];
    flags.extend_from_slice(extra);
    common::start_coordinator_logging_to(dir, port, log, &flags)
}

fn submit(url: &str) -> u64 {
    let r = run_json(&[
        "submit",
        "hip-solve",
        "--rows",
        &ROWS.to_string(),
        "--cols",
        &COLS.to_string(),
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

/// `orchard results` of a job that is still running: exit code 3 and the
/// answer so far, whose value intervals must each contain the true value
/// (here: intersect the single-process solve's intervals, which contain it).
fn check_interim_results(url: &str, job: u64) {
    let out = run(&["results", &job.to_string(), "--coordinator", url, "--json"]);
    assert_eq!(out.status.code(), Some(3), "not final: exit code 3");
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["state"], "running", "{r}");
    assert_eq!(r["final"], false, "{r}");
    let truth = single_process_answer();
    let overlaps = |a: (i64, i64), b: (i64, i64)| a.0.max(b.0) <= a.1.min(b.1);
    assert!(
        overlaps(interval(&r["value"]), interval(&truth["value"])),
        "{r}"
    );
    let openings = r["openings"].as_array().unwrap();
    let expected = truth["openings"].as_array().unwrap();
    assert_eq!(openings.len(), expected.len(), "{r}");
    for (o, e) in openings.iter().zip(expected) {
        assert_eq!(o["cell"], e["cell"]);
        assert!(
            overlaps(interval(&o["value"]), interval(&e["value"])),
            "opening {}: {} against {}",
            o["cell"],
            o["value"],
            e["value"]
        );
    }
    // The human form says it is not final.
    let out = run(&["results", &job.to_string(), "--coordinator", url]);
    assert_eq!(out.status.code(), Some(3));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("the answer so far (not final)"), "{text}");
    assert!(text.contains("opening a1: "), "{text}");
}

/// (state, lease_count, summary) of every unit, from the database.
fn units(db: &Path) -> HashMap<i64, (String, i64, Option<Vec<u8>>)> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT u.id, u.state, u.lease_count, r.summary FROM units u \
             LEFT JOIN results r ON r.unit_id = u.id",
        )
        .unwrap();
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                (
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, Option<Vec<u8>>>(3)?,
                ),
            ))
        })
        .unwrap();
    rows.map(Result::unwrap).collect()
}

fn job_state(db: &Path, job: u64) -> String {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row("SELECT state FROM jobs WHERE id = ?1", [job as i64], |r| {
        r.get(0)
    })
    .unwrap()
}

#[test]
fn a_hip_solve_worker_killed_mid_job_loses_nothing() {
    let dir = TempDir::new("hipkillworker");
    let port = common::free_port();
    let url = format!("http://127.0.0.1:{port}");
    let _coord = start_coordinator(&dir, port, "coordinator.log");
    wait_coordinator(&url, Duration::from_secs(20));
    let job = submit(&url);
    // A victim works alone and is killed; units are short and a worker
    // holds none between a report and its next lease, so the kill may miss:
    // then another victim is tried, until one dies holding a lease (its
    // lease is still counted as running: leases only end by expiry). The
    // database decides, after the lease has expired: a report the victim
    // sent just before it died may still have been on its way when the
    // status was read, and then its unit is done, not held.
    let mut attempts = 0;
    let held: Vec<i64> = loop {
        attempts += 1;
        assert!(attempts <= 20, "no victim died holding a lease");
        let done = common::status(&url, job).unwrap()["units_done"]
            .as_u64()
            .unwrap();
        let mut victim = common::start_worker(&dir, &url, &format!("victim-{attempts}"));
        wait_status(&url, job, Duration::from_secs(60), |s| {
            s["units_done"].as_u64().unwrap() >= done + 10
        });
        victim.sigkill();
        let s = common::status(&url, job).unwrap();
        assert_eq!(s["state"], "running", "the kill came mid-job: {s}");
        if s["units_running"] != 1 {
            continue;
        }
        // Nothing is merged until the lease expires (2 s), so the unit is
        // not cancelled as moot in the meantime (a sibling's result could
        // cut it).
        std::thread::sleep(Duration::from_secs(3));
        // The victim's unit: leased, never finished.
        let held: Vec<i64> = units(&dir.path("coord.db"))
            .into_iter()
            .filter(|(_, (state, leases, _))| state == "pending" && *leases >= 1)
            .map(|(id, _)| id)
            .collect();
        // One thread holds one unit; a victim killed while its lease
        // request was on the way may have left one more, unseen.
        if !held.is_empty() {
            break held;
        }
    };
    // With no worker left, the job is running: its answer so far is sound.
    check_interim_results(&url, job);
    let _survivor = common::start_worker(&dir, &url, "survivor");
    let _other = common::start_worker(&dir, &url, "other");
    let s = wait_status(&url, job, Duration::from_secs(300), |s| {
        s["state"] == "done"
    });
    assert_eq!(s["units_pending"], 0);
    assert_same_answer(&results(&url, job));
    // The victim's unit was leased again after its lease expired, or (a
    // unit that must wait for an elder sibling goes after the others, see
    // `must_wait`) that sibling decided its parent first and it was
    // cancelled as moot. Either way nothing was lost.
    let after = units(&dir.path("coord.db"));
    for id in held {
        let (state, leases, _) = &after[&id];
        assert!(
            (state == "done" && *leases >= 2) || state == "cancelled",
            "the victim's unit {id} ended {state} after {leases} leases"
        );
    }
}

#[test]
fn a_hip_solve_coordinator_killed_mid_job_resumes_from_its_database() {
    let dir = TempDir::new("hipkillcoord");
    let port = common::free_port();
    let url = format!("http://127.0.0.1:{port}");
    let db = dir.path("coord.db");
    let mut coord = start_coordinator(&dir, port, "coordinator-1.log");
    wait_coordinator(&url, Duration::from_secs(20));
    let job = submit(&url);
    let _w1 = common::start_worker(&dir, &url, "w1");
    let _w2 = common::start_worker(&dir, &url, "w2");
    wait_status(&url, job, Duration::from_secs(60), |s| {
        s["units_done"].as_u64().unwrap() >= 60
    });
    coord.sigkill();
    assert_eq!(job_state(&db, job), "running", "the kill came mid-job");
    let before = units(&db);
    let done_before: Vec<i64> = before
        .iter()
        .filter(|(_, u)| u.0 == "done")
        .map(|(&id, _)| id)
        .collect();
    assert!(!done_before.is_empty());
    let cancelled_before = before.values().filter(|u| u.0 == "cancelled").count();

    // Same database, same address: the workers reconnect by themselves.
    let http = format!("127.0.0.1:{}", common::free_port());
    let _coord2 = start_coordinator_with(&dir, port, "coordinator-2.log", &["--http", &http]);
    let s = wait_status(&url, job, Duration::from_secs(300), |s| {
        s["state"] == "done"
    });
    assert_same_answer(&results(&url, job));
    // The dashboard's picture of the tree counts every unit resolved,
    // before the restart too (cancelled ones are not loaded as units).
    assert_eq!(
        common::units_drawn_in_tree(&format!("http://{http}"), job),
        s["units_done"].as_u64().unwrap(),
        "units drawn in the tree against units resolved"
    );
    assert!(
        cancelled_before > 0,
        "units were cancelled before the kill, so the tree check above means something"
    );

    // Nothing completed before the kill was run again.
    let after = units(&db);
    for id in &done_before {
        let (state, leases, summary) = &before[id];
        let (state_after, leases_after, summary_after) = &after[id];
        assert_eq!(state_after, state);
        assert_eq!(
            leases_after, leases,
            "unit {id} done before the kill was leased again"
        );
        assert_eq!(summary_after, summary, "unit {id} result changed");
    }
    // And the restarted coordinator did run units (the job was not done).
    assert!(after.values().filter(|u| u.0 == "done").count() > done_before.len());
}

#[test]
fn a_backup_taken_mid_job_resumes_when_the_disk_is_lost() {
    let disk = TempDir::new("hipbackupdisk");
    let other = TempDir::new("hipbackupother");
    let port = common::free_port();
    let url = format!("http://127.0.0.1:{port}");
    let db = disk.path("coord.db");
    let copy = other.path("coord.db");
    let mut coord = start_coordinator(&disk, port, "coordinator-1.log");
    wait_coordinator(&url, Duration::from_secs(20));
    let job = submit(&url);
    let mut w1 = common::start_worker(&disk, &url, "w1");
    let mut w2 = common::start_worker(&disk, &url, "w2");
    wait_status(&url, job, Duration::from_secs(60), |s| {
        s["units_done"].as_u64().unwrap() >= 40
    });
    // Taken while the coordinator writes and the workers report.
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
    // Work goes on after the backup, then the machine and its disk are lost.
    let done_at_backup = units(&copy).values().filter(|u| u.0 == "done").count();
    wait_status(&url, job, Duration::from_secs(60), |s| {
        s["units_done"].as_u64().unwrap() as usize >= done_at_backup + 20
    });
    coord.sigkill();
    w1.sigkill();
    w2.sigkill();
    assert_eq!(job_state(&copy, job), "running", "the backup came mid-job");
    let before = units(&copy);
    assert!(before.values().any(|u| u.0 == "done"));
    assert!(before.values().any(|u| u.0 == "pending"));
    drop(disk);

    // The backup on the other disk resumes the job.
    let port = common::free_port();
    let url = format!("http://127.0.0.1:{port}");
    let _coord = start_coordinator(&other, port, "coordinator-2.log");
    wait_coordinator(&url, Duration::from_secs(20));
    let _w3 = common::start_worker(&other, &url, "w3");
    let _w4 = common::start_worker(&other, &url, "w4");
    wait_status(&url, job, Duration::from_secs(300), |s| {
        s["state"] == "done"
    });
    assert_same_answer(&results(&url, job));
    // What the backup held as done was not searched again.
    let after = units(&copy);
    for (id, (state, leases, summary)) in before.iter().filter(|(_, u)| u.0 == "done") {
        let (state_after, leases_after, summary_after) = &after[id];
        assert_eq!(state_after, state);
        assert_eq!(
            leases_after, leases,
            "unit {id} done in the backup was leased again"
        );
        assert_eq!(summary_after, summary, "unit {id} result changed");
    }
}

fn run_args<'a>(db: &'a str, args: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec!["run"];
    v.extend_from_slice(args);
    v.extend_from_slice(&["--db", db, "--workers", "2", "--json"]);
    v
}

#[test]
fn hip_draws_json_matches_table_a_and_the_reference() {
    let dir = TempDir::new("hipdrawsjson");
    // Table A of the source (draws, playable draws), and the brute-force
    // reference for every field on the boards it can enumerate.
    for (r, c, k, table) in [
        (2u32, 3u32, 2u32, Some((50u64, 20u64))),
        (3, 3, 2, Some((248, 92))),
        (3, 4, 2, Some((1236, 482))),
        (4, 4, 2, Some((5006, 2094))),
        (2, 3, 3, None),
        (3, 3, 3, None),
    ] {
        let db = dir.path(&format!("d{r}{c}{k}.db"));
        let (rs, cs, ks) = (r.to_string(), c.to_string(), k.to_string());
        let json = run_json(&run_args(
            db.to_str().unwrap(),
            &["hip-draws", "--rows", &rs, "--cols", &cs, "--colors", &ks],
        ));
        assert_eq!(json["family"], "hip-draws");
        if let Some((draws, playable)) = table {
            assert_eq!(json["draws"], draws, "{r}x{c}: {json}");
            assert_eq!(json["playable"], playable, "{r}x{c}: {json}");
        }
        if r * c <= 12 {
            let want = reference::draws(r as usize, c as usize, k as usize);
            assert_eq!(json["draws"], want.draws, "{r}x{c} k={k}");
            assert_eq!(json["playable"], want.playable, "{r}x{c} k={k}");
            assert_eq!(json["distinct"], want.distinct, "{r}x{c} k={k}");
        } else {
            assert!(json["distinct"].as_u64().unwrap() > 0);
        }
    }
    // 7x7 has no draw: every 7x7 draw would contain 6x6 draws, which the
    // job extends (the source's trick), and none extends.
    let db = dir.path("d77.db");
    let json = run_json(&run_args(
        db.to_str().unwrap(),
        &["hip-draws", "--rows", "7", "--cols", "7"],
    ));
    assert_eq!(json["method"], "seeds", "{json}");
    assert_eq!(json["draws"], 0);
    assert_eq!(json["playable"], 0);
    assert_eq!(json["distinct"], 0);
}

#[test]
fn hip_solve_json_matches_table_b_and_plain_minimax() {
    let dir = TempDir::new("hipsolvejson");
    // Franke's table B (winner 0 draw, 1 first player, 2 second player).
    for (r, c, double, winner) in [
        (2u32, 4u32, false, 0u64),
        (3, 3, false, 0),
        (3, 3, true, 2),
        (3, 4, false, 0),
        (3, 4, true, 0),
        (3, 5, true, 1),
        (4, 4, false, 0),
        (4, 5, true, 1),
        // Given as 5 x 3: solved as its transpose.
        (5, 3, false, 0),
    ] {
        let db = dir.path(&format!("s{r}{c}{double}.db"));
        let (rs, cs) = (r.to_string(), c.to_string());
        let mut args = vec!["hip-solve", "--rows", &rs, "--cols", &cs];
        if double {
            args.push("--double");
        }
        let json = run_json(&run_args(db.to_str().unwrap(), &args));
        let (rows, cols) = (r.min(c) as usize, r.max(c) as usize);
        assert_eq!(json["rows"], rows);
        assert_eq!(json["cols"], cols);
        assert_eq!(json["double"], double);
        assert_eq!(json["winner"], winner, "{r}x{c} double={double}: {json}");
        check_report(&json, rows, cols, double);
        // On boards small enough for plain minimax, every opening that the
        // job settled has the value minimax gives it.
        if rows * cols <= 9 {
            let mut board = vec![0u8; rows * cols];
            assert_eq!(
                i64::from(reference::minimax(rows, cols, double, &mut board)),
                root_value(winner)
            );
            for o in json["openings"].as_array().unwrap() {
                let name = o["cell"].as_str().unwrap().as_bytes();
                let cell = (name[1] - b'1') as usize * cols + (name[0] - b'a') as usize;
                board[cell] = 1;
                let v = i64::from(reference::minimax(rows, cols, double, &mut board));
                board[cell] = 0;
                let (lo, hi) = interval(&o["value"]);
                assert!(lo <= v && v <= hi, "{r}x{c} {o}: minimax says {v}");
            }
        }
    }
}

/// The units file of a job with splits and cancelled units: one line per
/// unit, each split unit's children after it, and the done units' nodes
/// adding up to the job's total.
#[test]
fn the_units_file_accounts_for_every_node() {
    let dir = TempDir::new("hipunits");
    let db = dir.path("u.db");
    let json = run_json(&run_args(
        db.to_str().unwrap(),
        &[
            "hip-solve",
            "--rows",
            "4",
            "--cols",
            "4",
            "--unit-budget",
            "5000",
        ],
    ));
    let path = json["units_file"].as_str().expect("units_file in the JSON");
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("# id\tparent\tstate\tnodes"),
        "{}",
        lines[0]
    );
    let mut seen = std::collections::HashSet::new();
    let (mut total, mut done, mut children, mut cancelled) = (0u64, 0, 0, 0);
    let mut discarded = 0u64;
    for line in &lines[1..lines.len() - 1] {
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 8, "{line}");
        let d: u64 = f[4].parse().unwrap();
        discarded += d;
        let id: u64 = f[0].parse().unwrap();
        if f[1] != "-" {
            let parent: u64 = f[1].parse().unwrap();
            assert!(
                seen.contains(&parent),
                "parent {parent} listed before {line}"
            );
            children += 1;
        }
        seen.insert(id);
        match f[2] {
            "done" => {
                let n: u64 = f[3].parse().unwrap();
                assert!(n > 0, "{line}");
                assert_eq!(d, 0, "a done unit discards nothing: {line}");
                total += n;
                done += 1;
            }
            "cancelled" => {
                assert_eq!(f[3], "-", "{line}");
                cancelled += 1;
            }
            other => panic!("a finished job has no {other} unit: {line}"),
        }
    }
    assert_eq!(total, json["nodes"].as_u64().unwrap(), "{json}");
    assert_eq!(
        discarded,
        json["nodes_discarded"].as_u64().unwrap(),
        "{json}"
    );
    assert!(
        children > 0 && cancelled > 0,
        "{children} split, {cancelled} cancelled"
    );
    assert_eq!(
        *lines.last().unwrap(),
        format!(
            "# {total} nodes in {done} done units of {}; {discarded} nodes discarded in {} units cancelled while running",
            lines.len() - 2,
            lines[1..lines.len() - 1]
                .iter()
                .filter(|l| l.split('\t').nth(4) != Some("0"))
                .count()
        )
    );
}

/// A database of schema version 1 (before `units.discarded_nodes` and the
/// `lemmas` table), holding an interrupted job, is migrated in place when
/// opened and the job resumes to the right answer; so is one of version 2;
/// a database of a newer version is refused, untouched.
#[test]
fn a_version_1_database_is_migrated_and_its_job_resumes() {
    let dir = TempDir::new("hipmigrate");
    let db = dir.path("m.db");
    let db_s = db.to_str().unwrap();
    let args = [
        "run",
        "hip-solve",
        "--rows",
        &ROWS.to_string(),
        "--cols",
        &COLS.to_string(),
        "--unit-budget",
        UNIT_BUDGET,
        "--db",
        db_s,
        "--workers",
        "1",
        "--json",
    ];
    let mut first = Proc::spawn(&args, &dir.path("first.log"));
    let done = |db: &Path| -> i64 {
        rusqlite::Connection::open(db)
            .and_then(|c| {
                c.query_row("SELECT count(*) FROM units WHERE state = 'done'", [], |r| {
                    r.get(0)
                })
            })
            .unwrap_or(0)
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while done(&db) < 20 {
        assert!(std::time::Instant::now() < deadline, "no units done");
        std::thread::sleep(Duration::from_millis(20));
    }
    first.signal("INT");
    let status = first.wait_for(Duration::from_secs(30)).expect("exits");
    assert_eq!(status.code(), Some(130), "interrupted, not finished");
    let before = units(&db);

    let version = |db: &Path| -> i64 {
        rusqlite::Connection::open(db)
            .unwrap()
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(version(&db), 3);
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(
            "DROP TABLE lemmas; ALTER TABLE units DROP COLUMN discarded_nodes;
             PRAGMA user_version = 1;",
        )
        .unwrap();
    }
    // While another coordinator holds the database, it is refused and left
    // at version 1 (the schema changes only under the lock).
    {
        let held = std::fs::File::open(&db).unwrap();
        held.lock().unwrap();
        let out = run(&args);
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("in use by another orchard coordinator"),
            "{err}"
        );
        assert_eq!(version(&db), 1);
    }
    let json = run_json(&args);
    assert_eq!(json["resumed"], true, "{json}");
    assert_eq!(json["winner"], 0, "4x5 is a draw: {json}");
    assert_eq!(version(&db), 3);
    // What was done before the migration was kept, not searched again.
    let after = units(&db);
    for (id, (state, leases, summary)) in &before {
        if state == "done" {
            assert_eq!(&after[id], &(state.clone(), *leases, summary.clone()));
        }
    }

    // Version 2 (before the `lemmas` table): migrated, the answer kept.
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch("DROP TABLE lemmas; PRAGMA user_version = 2;")
            .unwrap();
    }
    let json = run_json(&args);
    assert_eq!(json["winner"], 0, "{json}");
    assert_eq!(version(&db), 3);

    // A newer schema: one line, a non-zero exit, the file untouched.
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch("PRAGMA user_version = 4;").unwrap();
    }
    let bytes = std::fs::read(&db).unwrap();
    let out = run(&args);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("schema version 4 is not supported"), "{err}");
    assert_eq!(std::fs::read(&db).unwrap(), bytes);
}

#[test]
fn bad_hip_parameters_give_one_line_errors() {
    let dir = TempDir::new("hipbad");
    let db = dir.path("x.db");
    let db = db.to_str().unwrap();
    for family in ["hip-solve", "hip-draws"] {
        common::assert_one_line_error(
            &run(&["run", family, "--rows", "9", "--cols", "9", "--db", db]),
            "81 cells",
        );
        common::assert_one_line_error(
            &run(&["run", family, "--rows", "1", "--cols", "5", "--db", db]),
            "--rows",
        );
    }
    common::assert_one_line_error(
        &run(&[
            "run",
            "hip-draws",
            "--rows",
            "3",
            "--cols",
            "3",
            "--colors",
            "1",
            "--db",
            db,
        ]),
        "--colors",
    );
    common::assert_one_line_error(
        &run(&[
            "run",
            "hip-solve",
            "--rows",
            "3",
            "--cols",
            "3",
            "--depth",
            "9",
            "--db",
            db,
        ]),
        "--depth",
    );
    // A cache size the worker cannot use: refused before any job starts,
    // by `run` and by a worker (which would otherwise fail units of a job).
    for (value, args) in [
        (
            "lots",
            vec!["run", "hip-solve", "--rows", "3", "--cols", "3", "--db", db],
        ),
        ("0", vec!["worker", "--coordinator", "http://127.0.0.1:9"]),
    ] {
        let out = common::orchard()
            .args(&args)
            .env("ORCHARD_CACHE_MIB", value)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run orchard");
        common::assert_one_line_error(&out, "--cache-mib");
    }
    // None of them created a job: the first good one is job 1.
    let json = run_json(&[
        "run",
        "hip-solve",
        "--rows",
        "2",
        "--cols",
        "2",
        "--db",
        db,
        "--json",
    ]);
    assert_eq!(json["job_id"], 1, "{json}");
    assert_eq!(json["winner"], 0, "{json}");
}

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
    let _coord = start_coordinator(&dir, port, "coordinator.log");
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
    let job = submit(&url);
    let s = wait_status(&url, job, Duration::from_secs(300), |s| {
        s["state"] == "done"
    });
    let first = results(&url, job);
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
    let out = second(&[], &run_args);
    assert!(out.status.success(), "{out:?}");
    let again: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_same_answer(&again);
    let warm_nodes = again["nodes"].as_u64().unwrap();
    assert!(
        warm_nodes * 10 < cluster_nodes,
        "{warm_nodes} nodes with the snapshot, {cluster_nodes} without"
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

/// A counter of a worker's `/metrics`.
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
        .args([
            "run",
            "hip-solve",
            "--rows",
            "5",
            "--cols",
            "5",
            "--workers",
            "2",
        ])
        .args(["--unit-budget", "100000", "--db", db.to_str().unwrap()])
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

/// Nodes of the job's finished units, from the database.
fn job_nodes(db: &Path) -> u64 {
    let Ok(conn) =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
    else {
        return 0;
    };
    conn.query_row("SELECT coalesce(sum(nodes), 0) FROM results", [], |r| {
        r.get::<_, i64>(0)
    })
    .map_or(0, |n| n as u64)
}

fn worker_metric(addr: &str, name: &str) -> u64 {
    let text = common::http_get(&format!("http://{addr}/metrics"));
    common::metric(&text, &format!("{name} ")) as u64
}

/// Two worker processes (as on two machines) trade lemmas through the
/// coordinator: every byte stored is a byte a worker sent, each worker
/// learns what the other proved and never gets its own back, the answer is
/// table B's, and the job's lemmas are deleted when it ends. Over the wire:
/// a malformed blob is refused and not stored; a stored blob goes to other
/// sources, once; a job without lemmas to trade says so.
#[test]
fn workers_trade_lemmas_through_the_coordinator() {
    use orchard_proto::v1::worker_service_client::WorkerServiceClient;
    use orchard_proto::v1::ShareLemmasRequest;

    let dir = TempDir::new("hiplemmas");
    let port = common::free_port();
    let url = format!("http://127.0.0.1:{port}");
    // Units of 1e6 nodes: lemmas come from subtrees of 4096 nodes or more.
    let _coord = common::start_coordinator_logging_to(
        &dir,
        port,
        "coordinator.log",
        &["--unit-budget", "1000000"],
    );
    wait_coordinator(&url, Duration::from_secs(20));
    let metrics: Vec<String> = (0..2)
        .map(|_| format!("127.0.0.1:{}", common::free_port()))
        .collect();
    let workers: Vec<Proc> = metrics
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let name = format!("w{i}");
            Proc::spawn(
                &[
                    "worker",
                    "--coordinator",
                    &url,
                    "--threads",
                    "1",
                    "--name",
                    &name,
                    "--metrics",
                    m,
                ],
                &dir.path(&format!("{name}.log")),
            )
        })
        .collect();
    // Standard 4x6: a draw (Franke's table B), some 2.4e7 nodes through two
    // workers, long enough for several rounds of trading.
    let job = common::submit_job(&url, &["hip-solve", "--rows", "4", "--cols", "6"]);
    wait_status(&url, job, Duration::from_secs(600), |s| {
        s["state"] == "done"
    });
    let r = results(&url, job);
    check_report(&r, 4, 6, false);
    assert_eq!(r["winner"], 0, "4x6 is a draw: {r}");
    let stored = r["lemma_bytes"].as_u64().unwrap();
    let get = |i: usize, name: &str| worker_metric(&metrics[i], name);
    // A round of trading that began before the job ended may still be on
    // its way back to its worker.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let sent = loop {
        let sent = [0, 1].map(|i| get(i, "orchard_worker_lemma_bytes_sent_total"));
        if sent[0] + sent[1] == stored || std::time::Instant::now() > deadline {
            break sent;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let received = [0, 1].map(|i| get(i, "orchard_worker_lemma_bytes_received_total"));
    let learned = [0, 1].map(|i| get(i, "orchard_worker_lemmas_learned_total"));
    assert!(stored > 0, "{r}");
    assert_eq!(sent[0] + sent[1], stored, "sent {sent:?}");
    assert!(
        received[0] <= sent[1] && received[1] <= sent[0],
        "{received:?} {sent:?}"
    );
    assert!(learned[0] + learned[1] > 0, "learned {learned:?}");
    drop(workers);
    let db = dir.path("coord.db");
    let lemma_rows = |db: &Path| -> i64 {
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap()
            .query_row("SELECT count(*) FROM lemmas", [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(lemma_rows(&db), 0, "a finished job's lemmas are deleted");

    // The wire, with no workers: a 4x5 job that stays running, and valid
    // lemmas of 4x5 proved in this process.
    let local = HipSolve::new(params(), &Host::default()).unwrap();
    assert!(local.take(1 << 20).is_empty());
    orchard_core::explore_all(&local, local.root_units(), u64::MAX).unwrap();
    let blob = local.take(1 << 20);
    assert!(blob.len() > 100, "{} bytes of lemmas", blob.len());
    let job2 = submit(&url);
    let hc_job = common::submit_job(&url, &["hc", "--columns", "3"]);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut c = WorkerServiceClient::connect(url.clone()).await.unwrap();
        let req = |job_id: u64, lemmas: Vec<u8>, source: u64, after: u64| ShareLemmasRequest {
            worker_id: 0,
            job_id,
            lemmas,
            source,
            after,
        };
        let err = c
            .share_lemmas(req(job2, vec![1, 0, 0], 7, 0))
            .await
            .unwrap_err();
        assert_eq!(err.code(), tonic::Code::InvalidArgument, "{err:?}");
        assert!(err.message().contains("bad lemmas"), "{err:?}");
        let own = c
            .share_lemmas(req(job2, blob.clone(), 7, 0))
            .await
            .unwrap()
            .into_inner();
        assert!(
            own.stored && own.lemmas.is_empty() && !own.job_over,
            "{own:?}"
        );
        // The writer stores the blob soon after the answer.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let other = loop {
            let r = c
                .share_lemmas(req(job2, Vec::new(), 8, 0))
                .await
                .unwrap()
                .into_inner();
            if !r.lemmas.is_empty() || std::time::Instant::now() > deadline {
                break r;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        assert_eq!(
            other.lemmas,
            vec![blob.clone()],
            "the malformed blob was not stored"
        );
        assert!(!other.more && other.cursor > 0);
        let again = c
            .share_lemmas(req(job2, Vec::new(), 8, other.cursor))
            .await
            .unwrap()
            .into_inner();
        assert!(
            again.lemmas.is_empty() && again.cursor == other.cursor,
            "{again:?}"
        );
        let back = c
            .share_lemmas(req(job2, Vec::new(), 7, 0))
            .await
            .unwrap()
            .into_inner();
        assert!(back.lemmas.is_empty(), "a source's own lemmas came back");
        for over in [job, hc_job, 999] {
            let r = c
                .share_lemmas(req(over, blob.clone(), 9, 0))
                .await
                .unwrap()
                .into_inner();
            assert!(r.job_over && !r.stored, "job {over}: {r:?}");
        }
    });
    let s = common::status(&url, job2).unwrap();
    assert_eq!(s["lemma_bytes"], blob.len() as u64, "{s}");
    assert_eq!(lemma_rows(&db), 1);
}
