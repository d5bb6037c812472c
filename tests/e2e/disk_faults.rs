//! The coordinator's disk, as it fails: its database on a small tmpfs the
//! test mounts, filled up mid-job by another file; and a database file
//! damaged behind its back (a flipped bit, a torn page). The coordinator must
//! refuse reports with a clear error and a metric (workers keep them and
//! retry), never damage the database, and go on by itself once space
//! returns; the answer must be the single process's.
//!
//! Mounting needs root (as on the CI machine and this project's sandbox);
//! where `mount -t tmpfs` is refused the full-disk test says so and is
//! skipped, except in CI (`ORCHARD_REQUIRE_MOUNT`), where it fails.

use crate::common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::hc::{assert_same_answer, JOB, UNIT_BUDGET};
use common::{
    backup, final_results, free_port, metric_at, run, start_worker, status, submit_job, units_done,
    wait_coordinator, wait_status, Proc, TempDir,
};

/// A tmpfs mounted for the test, unmounted on drop.
struct Tmpfs(PathBuf);

impl Tmpfs {
    /// The mount, or `None` where this machine refuses it (not root): CI
    /// sets `ORCHARD_REQUIRE_MOUNT`, so there a refusal fails the test.
    fn mount(at: &Path, size: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(at).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .output()
            .expect("run mount");
        if out.status.success() {
            return Some(Tmpfs(at.to_path_buf()));
        }
        let why = String::from_utf8_lossy(&out.stderr).trim().to_string();
        assert!(
            std::env::var_os("ORCHARD_REQUIRE_MOUNT").is_none(),
            "ORCHARD_REQUIRE_MOUNT is set but mounting a tmpfs failed (needs root): {why}"
        );
        eprintln!("skipped: this test mounts a tmpfs to fill it up, and needs root: {why}");
        None
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Writes zeros to `path` until the disk says it is full.
fn fill(path: &Path) {
    let mut f = std::fs::File::create(path).unwrap();
    let chunk = vec![0u8; 64 * 1024];
    loop {
        if f.write_all(&chunk).is_err() {
            break;
        }
    }
    // Whatever fits of a smaller write, so not even a page is left.
    for size in [4096, 512, 1] {
        while f.write_all(&chunk[..size]).is_ok() {}
    }
}

#[test]
fn a_full_disk_stops_reports_until_space_returns_and_damages_nothing() {
    let dir = TempDir::new("diskfull");
    let Some(disk) = Tmpfs::mount(&dir.path("disk"), "16m") else {
        return;
    };
    let db = disk.0.join("coord.db");
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let http = format!("127.0.0.1:{}", free_port());
    let listen = format!("127.0.0.1:{port}");
    let _c = Proc::spawn(
        &[
            "coordinator",
            "--listen",
            &listen,
            "--db",
            db.to_str().unwrap(),
            "--unit-budget",
            UNIT_BUDGET,
            "--http",
            &http,
        ],
        &dir.path("coordinator.log"),
    );
    wait_coordinator(&url, Duration::from_secs(20));
    let job = submit_job(&url, JOB);
    let _w1 = start_worker(&dir, &url, "w1");
    let _w2 = start_worker(&dir, &url, "w2");
    wait_status(&url, job, Duration::from_secs(120), |s| {
        s["units_done"].as_u64().unwrap_or(0) >= 3
    });

    // Fill the disk; the next commits fail.
    let filler = disk.0.join("filler");
    fill(&filler);
    let t = Instant::now();
    while metric_at(&http, "orchard_store_disk_full") != 1 {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "the coordinator never said its disk was full"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(metric_at(&http, "orchard_store_commit_failures_total") >= 1);
    // Nothing is accepted while it is full (a report already committing
    // may land first).
    std::thread::sleep(Duration::from_millis(500));
    let done = units_done(&url, job);
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        units_done(&url, job),
        done,
        "reports accepted on a full disk"
    );
    assert_eq!(status(&url, job).unwrap()["state"], "running");
    // The workers were told why, in one line, and kept their reports.
    let told = ["w1", "w2"].iter().any(|w| {
        std::fs::read_to_string(dir.path(&format!("{w}.log")))
            .unwrap()
            .contains("disk is full")
    });
    assert!(told, "a worker's log says the coordinator's disk is full");

    // Space returns: the coordinator goes on by itself.
    std::fs::remove_file(&filler).unwrap();
    wait_status(&url, job, Duration::from_secs(300), |s| {
        s["state"] == "done"
    });
    assert_eq!(metric_at(&http, "orchard_store_disk_full"), 0);
    assert_same_answer(&final_results(&url, job));

    // And the database is whole: SQLite's own check, and every checksum
    // orchard keeps (`orchard backup` verifies them all).
    let conn = rusqlite::Connection::open(&db).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    drop(conn);
    backup(&db, &dir.path("copy.db"));
}

/// Where `needle` first occurs in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// A copy of `good` whose job looks unfinished (so the next `orchard run`
/// loads every stored summary), damaged at file level by `damage`, which is
/// given the file's bytes and the offset of the longest stored summary.
fn damaged_copy(good: &Path, to: &Path, damage: impl Fn(&mut Vec<u8>, usize)) {
    // Everything into the main file first: a copy of it alone must be whole.
    rusqlite::Connection::open(good)
        .unwrap()
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
        .unwrap();
    std::fs::copy(good, to).unwrap();
    let summary: Vec<u8> = {
        let conn = rusqlite::Connection::open(to).unwrap();
        // The job row's checksum made to match (an edit on purpose).
        conn.execute_batch("UPDATE jobs SET state = 'running';")
            .unwrap();
        orchard_coordinator::reseal_job_row(&conn, 1).unwrap();
        conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
            .unwrap();
        conn.query_row(
            "SELECT summary FROM results ORDER BY length(summary) DESC LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap()
    };
    let mut bytes = std::fs::read(to).unwrap();
    let at = find(&bytes, &summary).expect("the summary is in the file");
    assert_eq!(find(&bytes[at + 1..], &summary), None, "found once");
    damage(&mut bytes, at);
    std::fs::write(to, &bytes).unwrap();
}

/// A bit flipped inside a stored summary (which SQLite cannot see) and a
/// torn page (4 KiB of zeros where the summary's page was): each refused
/// with one line, the file left as it was, and a backup taken before still
/// answers.
#[test]
fn a_bit_flip_or_a_torn_page_is_refused_and_the_backup_still_answers() {
    let dir = TempDir::new("damaged");
    let good = dir.path("good.db");
    let args = |db: &Path| {
        vec![
            "run".to_string(),
            "hc".into(),
            "--columns".into(),
            "3".into(),
            "--unit-budget".into(),
            "20000".into(),
            "--db".into(),
            db.to_str().unwrap().into(),
            "--json".into(),
        ]
    };
    let run_on = |db: &Path| {
        let a = args(db);
        run(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let first = run_on(&good);
    assert!(first.status.success());
    let answer: serde_json::Value = serde_json::from_slice(&first.stdout).unwrap();
    assert_eq!(answer["h"], 24, "h(3) = 24");
    let backup = dir.path("backup.db");
    let out = run(&[
        "backup",
        "--db",
        good.to_str().unwrap(),
        backup.to_str().unwrap(),
    ]);
    assert!(out.status.success());

    let flipped = dir.path("flipped.db");
    damaged_copy(&good, &flipped, |b, at| b[at + 3] ^= 0x10);
    let torn = dir.path("torn.db");
    damaged_copy(&good, &torn, |b, at| {
        let page = at / 4096 * 4096;
        b[page..page + 4096].fill(0);
    });
    // orchard's checksum sees the flip; SQLite sees the torn page.
    for (db, needle) in [(&flipped, "checksum mismatch"), (&torn, "malformed")] {
        let before = std::fs::read(db).unwrap();
        common::assert_one_line_error(&run_on(db), needle);
        let copy = dir.path("copy-of-damaged.db");
        common::assert_one_line_error(
            &run(&[
                "backup",
                "--db",
                db.to_str().unwrap(),
                copy.to_str().unwrap(),
            ]),
            "",
        );
        assert!(!copy.exists(), "no backup made of a damaged database");
        assert_eq!(std::fs::read(db).unwrap(), before, "left as it was");
    }

    // The backup taken before answers as the original did.
    let again = run_on(&backup);
    assert!(again.status.success());
    let again: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    for key in ["h", "maximal_count", "nodes", "first_maximal"] {
        assert_eq!(again[key], answer[key], "{key}");
    }
}
