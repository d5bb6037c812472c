//! The coordinator's disk, as it fails: its database on a small tmpfs the
//! test mounts, filled up mid-job by another file. The coordinator must
//! refuse reports with a clear error and a metric (workers keep them and
//! retry), never damage the database, and go on by itself once space
//! returns; the answer must be the single process's.
//!
//! Mounting needs root (as on the CI machine and this project's sandbox); a
//! machine where `mount -t tmpfs` is refused fails the test with that
//! reason rather than skipping it.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::hc::{assert_same_answer, JOB, UNIT_BUDGET};
use common::{
    final_results, free_port, http_get, metric, run, status, submit_job, wait_coordinator,
    wait_status, Proc, TempDir,
};

/// A tmpfs mounted for the test, unmounted on drop.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(at: &Path, size: &str) -> Tmpfs {
        std::fs::create_dir_all(at).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .output()
            .expect("run mount");
        assert!(
            out.status.success(),
            "this test mounts a small tmpfs to fill it up, and needs root for that: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
        Tmpfs(at.to_path_buf())
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

fn counter(http: &str, name: &str) -> u64 {
    metric(
        &http_get(&format!("http://{http}/metrics")),
        &format!("{name} "),
    ) as u64
}

fn units_done(url: &str, job: u64) -> u64 {
    status(url, job).map_or(0, |s| s["units_done"].as_u64().unwrap_or(0))
}

#[test]
fn a_full_disk_stops_reports_until_space_returns_and_damages_nothing() {
    let dir = TempDir::new("diskfull");
    let disk = Tmpfs::mount(&dir.path("disk"), "16m");
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
    let worker = |name: &str| {
        Proc::spawn(
            &[
                "worker",
                "--coordinator",
                &url,
                "--threads",
                "1",
                "--name",
                name,
                "--give-up-after",
                "120",
            ],
            &dir.path(&format!("{name}.log")),
        )
    };
    let _w1 = worker("w1");
    let _w2 = worker("w2");
    let t = Instant::now();
    while units_done(&url, job) < 3 {
        assert!(t.elapsed() < Duration::from_secs(120), "no progress");
        std::thread::sleep(Duration::from_millis(20));
    }

    // Fill the disk; the next commits fail.
    let filler = disk.0.join("filler");
    fill(&filler);
    let t = Instant::now();
    while counter(&http, "orchard_store_disk_full") != 1 {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "the coordinator never said its disk was full"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(counter(&http, "orchard_store_commit_failures_total") >= 1);
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
    assert_eq!(counter(&http, "orchard_store_disk_full"), 0);
    assert_same_answer(&final_results(&url, job));

    // And the database is whole: SQLite's own check, and every checksum
    // orchard keeps (`orchard backup` verifies them all).
    let conn = rusqlite::Connection::open(&db).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    drop(conn);
    let copy = dir.path("copy.db");
    let out = run(&[
        "backup",
        "--db",
        db.to_str().unwrap(),
        copy.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "backup: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
