//! Databases written by earlier versions of orchard: migrated in place when
//! opened, under the coordinator's lock, and their jobs resume; a database
//! of a newer version is refused and left alone.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::db::units;
use common::hip::{COLS, ROWS, UNIT_BUDGET};
use common::{run, run_json, Proc, TempDir};

/// What version 7 added (each job's seals of its replica, mismatch,
/// exclusion and lemma rows), taken away: a database of version 6 (whose
/// job row checksums, not covering `bound`, the migration computes again).
const DOWN_TO_6: &str = "ALTER TABLE jobs DROP COLUMN replica_count;
                         ALTER TABLE jobs DROP COLUMN replica_digest;
                         ALTER TABLE jobs DROP COLUMN mismatch_count;
                         ALTER TABLE jobs DROP COLUMN mismatch_digest;
                         ALTER TABLE jobs DROP COLUMN exclusion_count;
                         ALTER TABLE jobs DROP COLUMN exclusion_digest;
                         ALTER TABLE jobs DROP COLUMN lemma_count;
                         ALTER TABLE jobs DROP COLUMN lemma_digest;";

/// What version 6 added (the `exclusions` table, the identities of
/// replicas and mismatches), taken away: a database of version 5.
const DOWN_TO_5: &str = "DROP TABLE exclusions;
                         ALTER TABLE replicas DROP COLUMN identity;
                         ALTER TABLE replicas DROP COLUMN identity_label;
                         ALTER TABLE mismatches DROP COLUMN identity_a;
                         ALTER TABLE mismatches DROP COLUMN identity_b;
                         ALTER TABLE mismatches DROP COLUMN loser_a;
                         ALTER TABLE mismatches DROP COLUMN loser_b;";

/// What version 5 added (each job's unit count, unit digest and row
/// checksum), taken away: a database of version 4 (once [`DOWN_TO_5`] ran).
const DOWN_TO_4: &str = "ALTER TABLE jobs DROP COLUMN unit_count;
                         ALTER TABLE jobs DROP COLUMN unit_digest;
                         ALTER TABLE jobs DROP COLUMN row_crc;";

/// What versions 5 and 4 added (`jobs.replicas`, the `replicas` and
/// `mismatches` tables), taken away: a database of version 3 (once
/// [`DOWN_TO_6`] and [`DOWN_TO_5`] ran).
const DOWN_TO_3: &str = "ALTER TABLE jobs DROP COLUMN unit_count;
                         ALTER TABLE jobs DROP COLUMN unit_digest;
                         ALTER TABLE jobs DROP COLUMN row_crc;
                         DROP TABLE replicas; DROP TABLE mismatches;
                         ALTER TABLE jobs DROP COLUMN replicas;";

/// A database of schema version 1 (before `units.discarded_nodes` and the
/// `lemmas` table), holding an interrupted job, is migrated in place when
/// opened and the job resumes to the right answer; so are ones of versions
/// 2, 3 and 4 (whose seals are computed from the rows they hold, and then
/// catch a row deleted), 5 (whose stored replicas get their worker's
/// identity from its declared name) and 6 (whose replica, mismatch and
/// lemma rows get their seals, and then catch a row changed); a database
/// of a newer version is refused, untouched.
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
    assert_eq!(version(&db), 7);
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(&format!(
            "{DOWN_TO_6} {DOWN_TO_5} {DOWN_TO_3} DROP TABLE lemmas; ALTER TABLE units DROP COLUMN discarded_nodes;
             PRAGMA user_version = 1;"
        ))
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
    assert_eq!(version(&db), 7);
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
        conn.execute_batch(&format!(
            "{DOWN_TO_6} {DOWN_TO_5} {DOWN_TO_3} DROP TABLE lemmas; PRAGMA user_version = 2;"
        ))
        .unwrap();
    }
    let json = run_json(&args);
    assert_eq!(json["winner"], 0, "{json}");
    assert_eq!(version(&db), 7);

    // Version 3 (before verified jobs): migrated, its job one of a single
    // replica, the answer kept.
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(&format!(
            "{DOWN_TO_6} {DOWN_TO_5} {DOWN_TO_3} PRAGMA user_version = 3;"
        ))
        .unwrap();
    }
    let json = run_json(&args);
    assert_eq!(json["winner"], 0, "{json}");
    assert_eq!(json["replicas"], 1, "{json}");
    assert_eq!(version(&db), 7);
    let replicas: i64 = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row("SELECT replicas FROM jobs", [], |r| r.get(0))
        .unwrap();
    assert_eq!(replicas, 1);

    // Version 4 (before each job's seals): migrated, its seals computed
    // from the rows it holds, so that it opens again as it is...
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(&format!(
            "{DOWN_TO_6} {DOWN_TO_5} {DOWN_TO_4} PRAGMA user_version = 4;"
        ))
        .unwrap();
    }
    let json = run_json(&args);
    assert_eq!(json["winner"], 0, "{json}");
    assert_eq!(version(&db), 7);
    let json = run_json(&args);
    assert_eq!(json["winner"], 0, "{json}");

    // Version 5 (before durable exclusions), with a replica and a mismatch
    // stored: migrated, the replica's worker known by its declared name
    // (its host column), the mismatch's identities empty and no loser, no
    // exclusion; it opens again as it is.
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(&format!(
            "{DOWN_TO_6} {DOWN_TO_5} PRAGMA user_version = 5;
             INSERT INTO replicas (unit_id, job_id, worker, host, nodes, bound, summary,
                                   summary_crc, rest, reported_ms)
             VALUES (1, 1, 'worker 7 (old-host, 1 threads)', 'old-host', 1, 0, x'00', 0, x'00', 0);
             INSERT INTO mismatches (job_id, unit_id, unit_label, worker_a, summary_a,
                                     worker_b, summary_b, found_ms)
             VALUES (1, 1, 'root', 'a', 'x', 'b', 'y', 0);"
        ))
        .unwrap();
    }
    let json = run_json(&args);
    assert_eq!(json["winner"], 0, "{json}");
    assert_eq!(version(&db), 7);
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        let identity: (String, String) = conn
            .query_row("SELECT identity, identity_label FROM replicas", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        assert_eq!(identity, ("name:old-host".into(), "name:old-host".into()));
        let mismatch: (String, String, i64, i64) = conn
            .query_row(
                "SELECT identity_a, identity_b, loser_a, loser_b FROM mismatches",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .unwrap();
        assert_eq!(mismatch, (String::new(), String::new(), 0, 0));
        let exclusions: i64 = conn
            .query_row("SELECT count(*) FROM exclusions", [], |r| r.get(0))
            .unwrap();
        assert_eq!(exclusions, 0);
    }
    let json = run_json(&args);
    assert_eq!(json["winner"], 0, "{json}");
    // Version 6 (before the seals of the rows beside the units), with a
    // lemma row stored besides the replica and the mismatch: migrated, its
    // seals computed from the rows it holds, so that it opens again as it
    // is; a lemma row or a mismatch row changed after it is refused in one
    // line naming the job and the kind of row, the file untouched.
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(&format!(
            "{DOWN_TO_6} PRAGMA user_version = 6;
             INSERT INTO lemmas (job_id, source, blob, blob_crc) VALUES (1, 5, x'0102', 0);"
        ))
        .unwrap();
    }
    let json = run_json(&args);
    assert_eq!(json["winner"], 0, "{json}");
    assert_eq!(version(&db), 7);
    let json = run_json(&args);
    assert_eq!(json["winner"], 0, "{json}");
    for (change, undo, needle) in [
        (
            "UPDATE lemmas SET source = 6",
            "UPDATE lemmas SET source = 5",
            "job 1: its lemma rows do not match their digest",
        ),
        (
            "UPDATE mismatches SET job_id = 2",
            "UPDATE mismatches SET job_id = 1",
            "job 1: 1 of its 1 mismatch rows missing",
        ),
        (
            "UPDATE replicas SET nodes = 2",
            "UPDATE replicas SET nodes = 1",
            "job 1: its replica rows do not match their digest",
        ),
    ] {
        let edit = |sql: &str| {
            let conn = rusqlite::Connection::open(&db).unwrap();
            conn.execute_batch(sql).unwrap();
        };
        edit(change);
        let bytes = std::fs::read(&db).unwrap();
        let out = run(&args);
        assert!(!out.status.success(), "{change}: opened");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{change}: {err}");
        assert!(err.contains(needle), "{change}: {err}");
        assert!(
            std::fs::read(&db).unwrap() == bytes,
            "{change}: the file changed"
        );
        edit(undo);
    }
    let json = run_json(&args);
    assert_eq!(json["winner"], 0, "{json}");

    // ... and a unit row deleted after it is refused: one line naming the
    // job and what is missing, a non-zero exit, the file untouched.
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch("DELETE FROM units WHERE id = (SELECT max(id) FROM units);")
            .unwrap();
    }
    let bytes = std::fs::read(&db).unwrap();
    let out = run(&args);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("job 1: 1 of its") && err.contains("unit rows missing"),
        "{err}"
    );
    assert_eq!(std::fs::read(&db).unwrap(), bytes);

    // A newer schema: one line, a non-zero exit, the file untouched.
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch("PRAGMA user_version = 8;").unwrap();
    }
    let bytes = std::fs::read(&db).unwrap();
    let out = run(&args);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("schema version 8 is not supported"), "{err}");
    assert_eq!(std::fs::read(&db).unwrap(), bytes);
}
