//! What a user gets wrong, and what goes wrong around them: bad parameters
//! for every family give one line of error and a non-zero exit, creating
//! nothing; corrupt or foreign databases are refused and left alone; an
//! unreachable coordinator is said so; one coordinator per database.

use crate::common;

use std::time::{Duration, Instant};

use common::{run, run_json, TempDir};

#[test]
fn bad_parameters_give_one_line_errors() {
    let dir = TempDir::new("badparams");
    let db = dir.path("x.db");
    let db = db.to_str().unwrap();
    common::assert_one_line_error(
        &run(&["run", "hc", "--columns", "0", "--db", db]),
        "--columns",
    );
    common::assert_one_line_error(
        &run(&["run", "hc", "--columns", "7", "--db", db]),
        "--columns",
    );
    common::assert_one_line_error(
        &run(&["run", "hc", "--columns", "x", "--db", db]),
        "--columns",
    );
    common::assert_one_line_error(
        &run(&["run", "nosuchgame", "--columns", "3", "--db", db]),
        "nosuchgame",
    );
    common::assert_one_line_error(
        &run(&[
            "run",
            "hc",
            "--columns",
            "3",
            "--variant",
            "triples",
            "--db",
            db,
        ]),
        "triples",
    );
    assert!(
        !dir.path("x.db").exists(),
        "a rejected command creates no database"
    );
}

#[test]
fn bad_busy_beaver_certificates_give_one_line_errors() {
    let dir = TempDir::new("badcerts");
    let db = dir.path("x.db");
    let db = db.to_str().unwrap();
    let coq = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/shared/families/busy-beaver/certificates/coq-bb5-large-wfar.txt"
    );
    let text = std::fs::read_to_string(coq).unwrap();
    let bb = |file: &str| {
        run(&[
            "run",
            "busy-beaver",
            "--states",
            "5",
            "--certificates",
            file,
            "--db",
            db,
        ])
    };
    common::assert_one_line_error(&bb(dir.path("none.txt").to_str().unwrap()), "none.txt");
    // A line that is not a certificate, named by its number.
    let garbled = dir.path("garbled.txt");
    std::fs::write(&garbled, format!("{text}1RB---_0RC wfar 2 0,0;0,0\n")).unwrap();
    common::assert_one_line_error(&bb(garbled.to_str().unwrap()), "line 19");
    // A certificate that does not prove its machine (one weight dropped),
    // named by its machine.
    let damaged = dir.path("damaged.txt");
    std::fs::write(&damaged, text.replacen("4,-1;18,0", "4,0;18,0", 1)).unwrap();
    common::assert_one_line_error(
        &bb(damaged.to_str().unwrap()),
        "1RB0RC_1LC0LE_0LD0LB_1RA---_1LB0RD",
    );
    assert!(
        !dir.path("x.db").exists(),
        "a rejected command creates no database"
    );
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

#[test]
fn bad_queens_parameters_give_one_line_errors() {
    let dir = TempDir::new("queensbad");
    let db = dir.path("x.db");
    let db = db.to_str().unwrap();
    for n in ["0", "33", "x"] {
        common::assert_one_line_error(&run(&["run", "queens", "--n", n, "--db", db]), "--n");
    }
    common::assert_one_line_error(
        &run(&["run", "queens", "--n", "8", "--columns", "3", "--db", db]),
        "--columns",
    );
    assert!(
        !dir.path("x.db").exists(),
        "a rejected command creates no database"
    );
}

#[test]
fn corrupt_or_foreign_database_is_refused_and_left_alone() {
    let dir = TempDir::new("baddb");
    // Not SQLite at all.
    let garbage = dir.path("garbage.db");
    let bytes: Vec<u8> = (0..8192u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    std::fs::write(&garbage, &bytes).unwrap();
    assert_refused_and_untouched(&garbage, "not an orchard database", "garbage file");

    // A SQLite database of some other program.
    let foreign = dir.path("foreign.db");
    {
        let conn = rusqlite::Connection::open(&foreign).unwrap();
        conn.execute_batch("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('keep me');")
            .unwrap();
    }
    assert_refused_and_untouched(&foreign, "not an orchard database", "foreign database");

    // An orchard database with a corrupted stored unit: refused at load, not used.
    let good = dir.path("good.db");
    let r = run_json(&[
        "run",
        "hc",
        "--columns",
        "2",
        "--db",
        good.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(r["h"], 9);
    {
        let conn = rusqlite::Connection::open(&good).unwrap();
        // Make job 1 look unfinished and flip a byte of a stored summary.
        conn.execute_batch(
            "UPDATE jobs SET state = 'running';
             UPDATE results SET summary = zeroblob(length(summary)) WHERE unit_id = (SELECT min(unit_id) FROM results);",
        )
        .unwrap();
        // The job row's checksum made to match (an edit on purpose).
        orchard_coordinator::reseal_job_row(&conn, 1).unwrap();
    }
    common::assert_one_line_error(&run_hc_2(&good), "summary checksum mismatch");
}

/// `orchard run hc --columns 2` on the database `db`.
fn run_hc_2(db: &std::path::Path) -> std::process::Output {
    run(&["run", "hc", "--columns", "2", "--db", db.to_str().unwrap()])
}

/// `orchard run` on `db` fails with one line containing `needle`, and `db`
/// (`what`) is left as it was.
fn assert_refused_and_untouched(db: &std::path::Path, needle: &str, what: &str) {
    let before = std::fs::read(db).unwrap();
    common::assert_one_line_error(&run_hc_2(db), needle);
    assert_eq!(std::fs::read(db).unwrap(), before, "{what} untouched");
}

#[test]
fn worker_gives_up_on_a_dead_coordinator() {
    let port = common::free_port();
    let url = format!("http://127.0.0.1:{port}");
    let started = Instant::now();
    let out = run(&["worker", "--coordinator", &url, "--give-up-after", "2"]);
    let took = started.elapsed();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("retrying"), "says it retries: {err}");
    let last = err.trim_end().lines().last().unwrap();
    assert!(
        last.starts_with("error: could not reach the coordinator"),
        "{last}"
    );
    assert!(
        took >= Duration::from_secs(2),
        "retried for the configured time"
    );
    assert!(took < Duration::from_secs(30), "then gave up");
}

/// A worker's bad flags are refused before it tries the coordinator.
#[test]
fn bad_worker_flags_give_one_line_errors() {
    let url = format!("http://127.0.0.1:{}", common::free_port());
    for (flags, needle) in [
        (&["--lemma-interval", "0"][..], "--lemma-interval"),
        (&["--lemma-interval", "0.001"], "at least 0.005 s"),
        (&["--lemma-interval", "soon"], "--lemma-interval"),
        (&["--lemma-interval", "0.05", "--no-lemmas"], "--no-lemmas"),
        (&["--threads", "0"], "--threads"),
    ] {
        let mut args = vec!["worker", "--coordinator", &url, "--give-up-after", "30"];
        args.extend_from_slice(flags);
        let started = Instant::now();
        common::assert_one_line_error(&run(&args), needle);
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{flags:?} refused without waiting for the coordinator"
        );
    }
}

#[test]
fn client_commands_report_an_unreachable_coordinator() {
    let url = format!("http://127.0.0.1:{}", common::free_port());
    common::assert_one_line_error(
        &run(&["status", "--coordinator", &url]),
        "cannot reach the coordinator",
    );
}

#[test]
fn one_coordinator_per_database() {
    let dir = TempDir::new("inuse");
    let db = dir.path("shared.db");
    let port = common::free_port();
    let url = format!("http://127.0.0.1:{port}");
    let _coord = common::Proc::spawn(
        &[
            "coordinator",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--db",
            db.to_str().unwrap(),
        ],
        &dir.path("coordinator.log"),
    );
    common::wait_coordinator(&url, Duration::from_secs(20));
    let out = run_hc_2(&db);
    common::assert_one_line_error(&out, "in use by another orchard coordinator");
}
