//! What a job leaves behind and what comes back from it: the results and
//! units files (every node accounted for, rebuilt from the database when
//! lost), backups (taken by hand or on schedule, never over what they must
//! not overwrite), and the same command run again, resuming or answering a
//! finished job from the database.

use crate::common;

use std::time::{Duration, Instant};

use common::db::{job_nodes, job_state, units};
use common::hc::run_hc;
use common::{run, run_json, run_on_two_workers, Proc, TempDir};

/// The units file of a job with splits and cancelled units: one line per
/// unit, each split unit's children after it, and the done units' nodes
/// adding up to the job's total.
#[test]
fn the_units_file_accounts_for_every_node() {
    let dir = TempDir::new("hipunits");
    let db = dir.path("u.db");
    let json = run_on_two_workers(
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
    );
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

/// A database restored from a backup onto a disk that lost the results
/// files: the coordinator writes every finished job's results and units
/// files again, from the units' stored results, identical to the originals.
#[test]
fn results_files_lost_with_the_disk_are_written_again_from_the_database() {
    let dir = TempDir::new("refiles");
    let spare = TempDir::new("refilesbackup");
    let db = dir.path("orchard.db");
    let db_arg = db.to_str().unwrap();
    let jobs: [&[&str]; 3] = [
        &["hc", "--columns", "3"],
        &["hip-draws", "--rows", "3", "--cols", "4"],
        &["hip-solve", "--rows", "3", "--cols", "4", "--double"],
    ];
    let mut originals = Vec::new();
    for family_args in jobs {
        let r = run_on_two_workers(db_arg, family_args);
        assert_eq!(r["state"], "done", "{r}");
        for key in ["results_file", "units_file"] {
            let path = std::path::PathBuf::from(r[key].as_str().unwrap());
            let text = std::fs::read_to_string(&path).unwrap();
            originals.push((path, text));
        }
    }
    // The results files list h(3)'s 3 maximal games and the 1236 draws of
    // 3x4, and give Double Hip 3x4's value (a draw, table B of the source)
    // with each opening's: a rebuild must find them all. Every units file
    // has its header, a line per unit and the totals.
    assert_eq!(originals[0].1.lines().count(), 3);
    assert_eq!(originals[2].1.lines().count(), 1236);
    let solve: Vec<&str> = originals[4].1.lines().collect();
    assert_eq!(solve[0], "Double Hip 3x4: draw", "{solve:?}");
    assert!(solve.iter().any(|l| l.starts_with("opening ")), "{solve:?}");
    assert!(solve.last().unwrap().starts_with("nodes explored: "));
    for (_, units) in originals.iter().skip(1).step_by(2) {
        assert!(units.lines().count() >= 3, "{units}");
    }

    let copy = spare.path("orchard.db");
    let out = run(&["backup", "--db", db_arg, copy.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The disk is lost; the backup comes back to the same place.
    std::fs::remove_dir_all(dir.path("results")).unwrap();
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{db_arg}{suffix}"));
    }
    std::fs::copy(&copy, &db).unwrap();

    for family_args in jobs {
        let r = run_on_two_workers(db_arg, family_args);
        assert_eq!(r["resumed"], true, "{r}");
    }
    for (path, text) in &originals {
        let again = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("{} not written again: {e}", path.display()));
        assert_eq!(&again, text, "{} differs from the original", path.display());
    }
}

#[test]
fn the_same_command_resumes_and_answers_the_same() {
    let dir = TempDir::new("resume");
    let first = run_hc(&dir, &["--columns", "3"]);
    let again = run_hc(&dir, &["--columns", "3"]);
    assert_eq!(first["resumed"], false);
    assert_eq!(again["resumed"], true);
    assert_eq!(first["job_id"], again["job_id"]);
    for key in ["h", "maximal_count", "nodes", "histogram", "results_file"] {
        assert_eq!(first[key], again[key], "{key}");
    }
}

/// A stopped `orchard run` leaves its database file whole on its own, the
/// write-ahead log folded in: a copy of the file alone, made by hand as
/// users do, holds the job, finished or interrupted (without the fold, the
/// latest commits lived only in `DB-wal`).
#[test]
fn a_stopped_run_leaves_the_database_file_whole_on_its_own() {
    let dir = TempDir::new("wholefile");
    let copy_alone = |db: &std::path::Path, name: &str| {
        std::fs::create_dir_all(dir.path(name)).unwrap();
        let copy = dir.path(name).join("copy.db");
        std::fs::copy(db, &copy).unwrap();
        copy
    };

    // Finished: the copy answers from the database.
    let first = run_hc(&dir, &["--columns", "3"]);
    let copy = copy_alone(&dir.path("orchard.db"), "finished");
    let copy = copy.to_str().unwrap();
    let again = run_json(&["run", "hc", "--columns", "3", "--json", "--db", copy]);
    assert_eq!(again["resumed"], true, "{again}");
    for key in ["h", "maximal_count", "nodes"] {
        assert_eq!(first[key], again[key], "{key}");
    }

    // Interrupted: the copy holds every unit as the stop left it.
    let db = dir.path("hip.db");
    let args = [
        common::hip::RUN_5X5_IN_SMALL_UNITS,
        &["--db", db.to_str().unwrap()],
    ]
    .concat();
    let mut run = Proc::spawn(&args, &dir.path("hip.log"));
    let deadline = Instant::now() + Duration::from_secs(120);
    while job_nodes(&db) < 1_000_000 {
        assert!(Instant::now() < deadline, "the run made no progress");
        std::thread::sleep(Duration::from_millis(100));
    }
    run.sigterm();
    let status = run
        .wait_for(Duration::from_secs(120))
        .expect("run stops on SIGTERM");
    assert_eq!(status.code(), Some(130), "interrupted");
    let copy = copy_alone(&db, "interrupted");
    assert_eq!(job_state(&copy, 1), "running");
    let (stored, copied) = (units(&db), units(&copy));
    assert!(stored.values().any(|u| u.0 == "done"), "some units done");
    assert_eq!(stored, copied, "the file alone holds every unit");
}

/// Two databases side by side each start with job 1, so their results
/// files would share a name: `--results-dir` keeps them apart.
#[test]
fn results_dir_keeps_side_by_side_runs_apart() {
    let dir = TempDir::new("resultsdir");
    let mut texts = Vec::new();
    for columns in ["2", "3"] {
        let db = dir.path(&format!("hc-{columns}.db"));
        let results = dir.path(&format!("results-{columns}"));
        let json = run_json(&[
            "run",
            "hc",
            "--columns",
            columns,
            "--db",
            db.to_str().unwrap(),
            "--results-dir",
            results.to_str().unwrap(),
            "--json",
        ]);
        assert_eq!(json["job_id"], 1);
        let file = std::path::PathBuf::from(json["results_file"].as_str().unwrap());
        assert_eq!(file.parent(), Some(results.as_path()), "{json}");
        texts.push(std::fs::read_to_string(&file).unwrap());
    }
    assert_ne!(texts[0], texts[1], "each run kept its own file");
    assert!(
        !dir.path("results").exists(),
        "nothing beside the databases"
    );
}

/// Running a finished job's command again answers from the database and
/// says so, with the job's own time rather than this process's.
#[test]
fn a_finished_job_run_again_is_answered_from_the_database() {
    let dir = TempDir::new("again");
    let db = dir.path("orchard.db");
    let args = ["run", "hc", "--columns", "2", "--db", db.to_str().unwrap()];
    let first = run(&args);
    assert!(first.status.success());
    let first = String::from_utf8_lossy(&first.stdout).to_string();
    assert!(first.contains("job 1 done in "), "{first}");
    let again = run(&args);
    assert!(again.status.success());
    let again = String::from_utf8_lossy(&again.stdout).to_string();
    assert!(again.contains("h(2) = 9"), "{again}");
    assert!(
        again.contains("job 1 was already done: ") && again.contains(" from submission to answer"),
        "{again}"
    );
}

#[test]
fn backup_refuses_what_it_must_not_overwrite() {
    let dir = TempDir::new("backupbad");
    let db = dir.path("orchard.db");
    let r = run_hc(&dir, &["--columns", "2"]);
    assert_eq!(r["h"], 9);
    let db_s = db.to_str().unwrap();
    let before = std::fs::read(&db).unwrap();

    // Onto a file that is not an earlier backup: refused, file untouched.
    let notes = dir.path("notes.txt");
    std::fs::write(&notes, b"my notes").unwrap();
    common::assert_one_line_error(
        &run(&["backup", "--db", db_s, notes.to_str().unwrap()]),
        "not an orchard database",
    );
    assert_eq!(std::fs::read(&notes).unwrap(), b"my notes");
    // Onto the database itself.
    common::assert_one_line_error(&run(&["backup", "--db", db_s, db_s]), "database itself");
    // From something that is not an orchard database, or nothing.
    common::assert_one_line_error(
        &run(&["backup", "--db", notes.to_str().unwrap(), "x.db"]),
        "not an orchard database",
    );
    common::assert_one_line_error(
        &run(&[
            "backup",
            "--db",
            dir.path("none.db").to_str().unwrap(),
            "x.db",
        ]),
        "no such database",
    );
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "the source is never written"
    );

    // The same refusals for a coordinator's --backup-to, before it creates
    // its database; and --backup-every alone.
    let fresh = dir.path("fresh.db");
    let fresh_s = fresh.to_str().unwrap();
    for (flags, needle) in [
        (
            vec!["--backup-to", notes.to_str().unwrap()],
            "not an orchard database",
        ),
        (vec!["--backup-to", fresh_s], "database itself"),
        (
            vec!["--backup-to", "/nonexistent-dir/b.db"],
            "does not exist",
        ),
        (vec!["--backup-every", "60"], "--backup-to"),
        (
            vec!["--backup-to", "b.db", "--backup-every", "0"],
            "--backup-every",
        ),
    ] {
        let mut args = vec!["run", "hc", "--columns", "2", "--db", fresh_s];
        args.extend_from_slice(&flags);
        common::assert_one_line_error(&run(&args), needle);
        assert!(
            !fresh.exists(),
            "{flags:?}: a refused run creates no database"
        );
    }
    assert_eq!(std::fs::read(&notes).unwrap(), b"my notes");

    // A good backup, replaced by the next one; each one answers as the original.
    let copy = dir.path("copy.db");
    for _ in 0..2 {
        let out = run(&["backup", "--db", db_s, copy.to_str().unwrap()]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let line = String::from_utf8_lossy(&out.stdout);
        assert!(line.contains("1 jobs (0 running)"), "{line}");
    }
    let again = run_json(&[
        "run",
        "hc",
        "--columns",
        "2",
        "--db",
        copy.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(again["resumed"], true);
    assert_eq!(again["h"], 9);
    assert_eq!(again["maximal_count"], r["maximal_count"]);
    // No temporary file is left behind.
    let leftovers: Vec<_> = std::fs::read_dir(dir.path("."))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// `--backup-to`: a coordinator backs its database up at startup and then
/// on schedule, while it serves.
#[test]
fn a_coordinator_backs_itself_up_on_schedule() {
    let dir = TempDir::new("backupsched");
    let backup = dir.path("elsewhere.db");
    let port = common::free_port();
    let url = format!("http://127.0.0.1:{port}");
    let _coord = common::start_coordinator_with(
        &dir,
        port,
        &[
            "--backup-to",
            backup.to_str().unwrap(),
            "--backup-every",
            "1",
        ],
    );
    common::wait_coordinator(&url, Duration::from_secs(20));
    let jobs_in = |path: &std::path::Path| -> i64 {
        let conn =
            rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                .unwrap();
        conn.query_row("SELECT count(*) FROM jobs", [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(jobs_in(&backup), 0, "the backup taken at startup");
    // No worker: the job stays running, and a later backup holds it.
    let job = common::submit_job(&url, &["hc", "--columns", "3"]);
    assert_eq!(job, 1);
    let deadline = Instant::now() + Duration::from_secs(30);
    while jobs_in(&backup) != 1 {
        assert!(Instant::now() < deadline, "no backup after the submission");
        std::thread::sleep(Duration::from_millis(100));
    }
}
