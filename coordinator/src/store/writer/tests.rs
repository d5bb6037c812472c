//! The seals kept by the writer against the seals computed from the
//! rows afresh, after every kind of write the coordinator makes.

use std::path::PathBuf;

use super::*;
use crate::store::{digest, load, schema, MismatchRow, WorkerIdentity};

/// A fresh database file, removed on drop.
struct TempDb(PathBuf);

impl TempDb {
    fn new(name: &str) -> TempDb {
        let p =
            std::env::temp_dir().join(format!("orchard-store-{}-{name}.db", std::process::id()));
        let db = TempDb(p);
        db.remove();
        db
    }

    fn remove(&self) {
        for ext in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{ext}", self.0.display()));
        }
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        self.remove();
    }
}

fn units(ids: &[u64]) -> Vec<NewUnit> {
    ids.iter()
        .map(|&id| NewUnit {
            id,
            position: id.to_be_bytes().to_vec(),
            payload: vec![id as u8; 3 + id as usize % 5],
        })
        .collect()
}

fn complete(unit_id: UnitId, job_id: JobId, rest: &[u64]) -> Write {
    Write::CompleteUnit {
        unit_id,
        job_id,
        nodes: 100 + unit_id,
        summary: vec![7; unit_id as usize],
        worker: "w".into(),
        rest: units(rest),
        done_ms: 5,
    }
}

fn job(id: JobId) -> Write {
    Write::InsertJob {
        id,
        family: "synthetic".into(),
        params_json: format!("{{\"seed\":{id}}}"),
        created_ms: 1,
        replicas: 1,
    }
}

fn commit(conn: &mut Connection, writes: Vec<Vec<Write>>) -> Result<(), rusqlite::Error> {
    let batches: Vec<Batch> = writes
        .into_iter()
        .map(|writes| Batch {
            writes,
            done: None,
            kind: BatchKind::Writes,
        })
        .collect();
    apply(conn, &batches)
}

/// Each job's seals as stored: its id, row_crc, and the count and
/// digest of each kind of its rows.
fn seals(conn: &Connection) -> Vec<Vec<i64>> {
    let mut columns = vec!["id".to_string(), "row_crc".to_string()];
    for rows in [Rows::Units].into_iter().chain(Rows::BESIDE_UNITS) {
        let (c, d) = rows.seal_columns();
        columns.extend([c.to_string(), d.to_string()]);
    }
    conn.prepare(&format!(
        "SELECT {} FROM jobs ORDER BY id",
        columns.join(", ")
    ))
    .unwrap()
    .query_map([], |r| (0..columns.len()).map(|i| r.get(i)).collect())
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

/// The seals kept write by write equal the seals computed from the
/// rows afresh (as the migration does), and the state loads.
fn assert_exact(conn: &mut Connection) {
    let kept = seals(conn);
    let tx = conn.transaction().unwrap();
    digest::reseal_all(&tx).unwrap();
    let fresh = seals(&tx);
    tx.rollback().unwrap();
    assert_eq!(kept, fresh);
    load(conn).unwrap();
}

#[test]
fn the_seals_follow_every_write_exactly() {
    let db = TempDb::new("seals");
    let (mut conn, _) = schema::open_connection(&db.0).unwrap();
    // Jobs and root units, several batches in one transaction.
    commit(
        &mut conn,
        vec![
            vec![job(1), job(2), job(3)],
            vec![Write::InsertUnits {
                job_id: 1,
                parent: None,
                units: units(&[1, 2, 3, 4]),
            }],
            vec![
                Write::InsertUnits {
                    job_id: 2,
                    parent: None,
                    units: units(&[5, 6]),
                },
                Write::InsertUnits {
                    job_id: 3,
                    parent: None,
                    units: units(&[7, 8, 9]),
                },
            ],
        ],
    )
    .unwrap();
    assert_exact(&mut conn);
    // Units done with their rest split off, leases, bounds, a replica
    // and a mismatch, units cancelled as moot (one already done: no
    // change), in one transaction.
    commit(
        &mut conn,
        vec![
            vec![complete(1, 1, &[10, 11]), complete(10, 1, &[12])],
            vec![
                Write::Leased {
                    unit_ids: vec![2, 3, 12],
                },
                Write::SetBound {
                    job_id: 1,
                    bound: 9,
                },
                Write::Replica {
                    unit_id: 5,
                    job_id: 2,
                    worker: "a".into(),
                    host: "h".into(),
                    identity: WorkerIdentity::of(None, "a"),
                    nodes: 3,
                    bound: 0,
                    summary: vec![1],
                    rest: vec![],
                    reported_ms: 2,
                },
                Write::Mismatch {
                    job_id: 2,
                    row: MismatchRow {
                        unit_id: 5,
                        unit_label: "5".into(),
                        worker_a: "a".into(),
                        identity_a: "name:a".into(),
                        summary_a: "x".into(),
                        worker_b: "b".into(),
                        identity_b: "name:b".into(),
                        summary_b: "y".into(),
                    },
                    found_ms: 3,
                },
                // b lost the vote (twice over: the second is ignored).
                Write::Exclude {
                    job_id: 2,
                    unit_id: 5,
                    identity: WorkerIdentity::of(None, "b"),
                    found_ms: 4,
                },
                Write::Exclude {
                    job_id: 2,
                    unit_id: 5,
                    identity: WorkerIdentity::of(None, "b"),
                    found_ms: 5,
                },
                Write::CancelUnits {
                    units: vec![(3, 40), (1, 7)],
                },
                Write::Replica {
                    unit_id: 6,
                    job_id: 2,
                    worker: "c".into(),
                    host: "h".into(),
                    identity: WorkerIdentity::of(None, "c"),
                    nodes: 4,
                    bound: 0,
                    summary: vec![2],
                    rest: vec![vec![1, 2]],
                    reported_ms: 2,
                },
                Write::InsertLemmas {
                    job_id: 2,
                    source: 1,
                    blob: vec![5; 10],
                },
                Write::InsertLemmas {
                    job_id: 2,
                    source: 1,
                    blob: vec![6; 3],
                },
                Write::SetBound {
                    job_id: 2,
                    bound: 4,
                },
                complete(7, 3, &[]),
            ],
        ],
    )
    .unwrap();
    assert_exact(&mut conn);
    // The exclusion is loaded, points at its mismatch, which names the
    // loser.
    let loaded = load(&conn).unwrap();
    let excluded: Vec<(JobId, String)> = loaded
        .exclusions
        .iter()
        .map(|e| (e.job_id, e.identity.key.clone()))
        .collect();
    assert_eq!(excluded, [(2, "name:b".to_string())]);
    let (losers, pointed): ((i64, i64), i64) = conn
        .query_row(
            "SELECT m.loser_a, m.loser_b, e.mismatch_id = m.id
             FROM mismatches m JOIN exclusions e ON e.unit_id = m.unit_id",
            [],
            |r| Ok(((r.get(0)?, r.get(1)?), r.get(2)?)),
        )
        .unwrap();
    assert_eq!((losers, pointed), ((0, 1), 1));
    // A transaction that fails half way (a unit reported twice) is
    // rolled back whole, the seals with it.
    let before = seals(&conn);
    assert!(commit(
        &mut conn,
        vec![vec![complete(2, 1, &[13]), complete(1, 1, &[])]]
    )
    .is_err());
    assert_eq!(seals(&conn), before);
    assert_exact(&mut conn);
    // Jobs that end: one done with its answer, one cancelled (its
    // pending units cancelled in bulk).
    commit(
        &mut conn,
        vec![vec![
            complete(2, 1, &[]),
            complete(4, 1, &[]),
            complete(11, 1, &[]),
            complete(12, 1, &[]),
            Write::FinishJob {
                job_id: 1,
                state: "done",
                finished_ms: 9,
                result_json: Some("{\"nodes\":1}".into()),
                results_file: Some("/tmp/r.json".into()),
                error: None,
            },
            Write::FinishJob {
                job_id: 3,
                state: "cancelled",
                finished_ms: 9,
                result_json: None,
                results_file: None,
                error: Some("cancelled".into()),
            },
        ]],
    )
    .unwrap();
    assert_exact(&mut conn);
    let states: Vec<String> = conn
        .prepare("SELECT state FROM units WHERE job_id = 3 ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(states, ["done", "cancelled", "cancelled"]);

    // What the seals are for: a row deleted, moved, edited, or a job's
    // answer changed, each refused naming the job.
    // (SQLite's own foreign keys off: a damaged file does not keep them.)
    conn.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
    for (sql, needle) in [
        ("DELETE FROM units WHERE id = 9", "job 3: 1 of its 3 unit rows missing"),
        (
            "UPDATE units SET job_id = 1 WHERE id = 6",
            "job 1: 8 unit rows where 7 were written",
        ),
        // Two units swapped between jobs: the counts are right.
        (
            "UPDATE units SET job_id = CASE id WHEN 6 THEN 3 ELSE 2 END WHERE id IN (6, 8)",
            "job 2: its unit rows do not match",
        ),
        ("UPDATE results SET nodes = 1 WHERE unit_id = 11", "job 1: its unit rows do not match"),
        ("UPDATE units SET position = x'00' WHERE id = 12", "job 1: its unit rows do not match"),
        ("UPDATE jobs SET result_json = '{\"nodes\":2}' WHERE id = 1", "job 1: its row does not match"),
        (
            "UPDATE exclusions SET identity = 'name:c'",
            "job 2: an exclusion row does not match its checksum",
        ),
        (
            "UPDATE exclusions SET job_id = 1",
            "job 1: an exclusion row does not match its checksum",
        ),
        (
            "DELETE FROM exclusions",
            "job 2: a mismatch says name:b lost the vote, but its exclusion row is missing",
        ),
        // The rows beside the units (schema version 7): deleted, moved
        // to another job, altered; and the job's bound.
        ("DELETE FROM replicas WHERE unit_id = 6", "job 2: 1 of its 2 replica rows missing"),
        (
            "UPDATE replicas SET job_id = 1 WHERE unit_id = 6",
            "job 1: 1 replica rows where 0 were written",
        ),
        ("UPDATE replicas SET nodes = 5", "job 2: its replica rows do not match"),
        ("UPDATE replicas SET rest = (SELECT rest FROM replicas WHERE unit_id = 6) WHERE unit_id = 5", "job 2: its replica rows do not match"),
        ("DELETE FROM mismatches", "job 2: 1 of its 1 mismatch rows missing"),
        ("UPDATE mismatches SET loser_b = 0, loser_a = 1, identity_a = 'name:b', identity_b = 'name:a'", "job 2: its mismatch rows do not match"),
        ("UPDATE mismatches SET summary_b = 'x'", "job 2: its mismatch rows do not match"),
        ("UPDATE mismatches SET job_id = 7", "job 7: a mismatch says name:b lost the vote"),
        (
            "UPDATE mismatches SET job_id = 7, loser_b = 0",
            "job 2: 1 of its 1 mismatch rows missing",
        ),
        (
            "UPDATE exclusions SET label = 'name:c'",
            "job 2: an exclusion row does not match its checksum",
        ),
        (
            "DELETE FROM lemmas WHERE seq = (SELECT min(seq) FROM lemmas)",
            "job 2: 1 of its 2 lemma rows missing",
        ),
        (
            "UPDATE lemmas SET job_id = 3 WHERE seq = (SELECT min(seq) FROM lemmas)",
            "job 2: 1 of its 2 lemma rows missing",
        ),
        ("UPDATE lemmas SET blob = x'05', blob_crc = 0", "job 2: its lemma rows do not match"),
        ("UPDATE lemmas SET source = 9", "job 2: its lemma rows do not match"),
        (
            "UPDATE lemmas SET job_id = 7 WHERE job_id = 2; UPDATE jobs SET lemma_count = 0, lemma_digest = 0 WHERE id = 2",
            "a lemma row belongs to job 7, which does not exist",
        ),
        ("UPDATE jobs SET bound = 0 WHERE id = 2", "job 2: its row does not match"),
        (
            "INSERT INTO results (unit_id, job_id, nodes, summary, summary_crc, worker, reported_ms)
             VALUES (99, 1, 5, x'', 0, 'w', 0)",
            "the result of unit 99 in job 1 belongs to no unit",
        ),
    ] {
        let tx = conn.transaction().unwrap();
        tx.execute_batch(sql).unwrap();
        let err = load(&tx).err().unwrap_or_else(|| panic!("{sql}: loaded")).to_string();
        assert!(err.contains(needle), "{sql}: {err}");
        tx.rollback().unwrap();
    }
    load(&conn).unwrap();
}

/// The jobs and units in a copy of `db`'s file alone, as a copy made by
/// hand would be (without the `-wal` beside it); `None` when the copy does
/// not even hold the tables.
fn counts_in_a_copy_of_the_file_alone(db: &TempDb, copy: &TempDb) -> Option<(i64, i64)> {
    copy.remove();
    std::fs::copy(&db.0, &copy.0).unwrap();
    let conn = Connection::open(&copy.0).unwrap();
    let count = |table: &str| {
        conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .ok()
    };
    Some((count("jobs")?, count("units")?))
}

/// Until the log is folded, the latest commits live in `DB-wal` only; after
/// [`Store::fold_wal`], the database file alone holds every one of them.
#[tokio::test]
async fn a_folded_log_leaves_the_database_file_whole_on_its_own() {
    let db = TempDb::new("fold");
    let copy = TempDb::new("fold-copy");
    let (store, _) = Store::open(&db.0).unwrap();
    store.commit(vec![job(1)]).await.unwrap();
    store
        .commit(vec![Write::InsertUnits {
            job_id: 1,
            parent: None,
            units: units(&[1, 2, 3]),
        }])
        .await
        .unwrap();
    assert_ne!(
        counts_in_a_copy_of_the_file_alone(&db, &copy),
        Some((1, 3)),
        "without a fold, the file alone lacks the latest commits"
    );
    store.fold_wal().await.unwrap();
    assert_eq!(counts_in_a_copy_of_the_file_alone(&db, &copy), Some((1, 3)));
    // The store goes on writing after a fold.
    store.commit(vec![job(2)]).await.unwrap();
    store.fold_wal().await.unwrap();
    assert_eq!(counts_in_a_copy_of_the_file_alone(&db, &copy), Some((2, 3)));
}

/// A failed job keeps its pending units (a cancelled job's are
/// cancelled), [`Store::job_units`] reads back what a retry rebuilds it
/// from, and [`Write::RetryJob`] makes it running again with its end and
/// error cleared: the seals exact throughout, and a store opened after the
/// retry loads its units as a running job's.
#[tokio::test]
async fn a_failed_job_keeps_its_unsearched_units_for_a_retry() {
    let db = TempDb::new("retry");
    let (mut conn, _) = schema::open_connection(&db.0).unwrap();
    let finish = |job_id, state| Write::FinishJob {
        job_id,
        state,
        finished_ms: 9,
        result_json: None,
        results_file: None,
        error: Some(format!("unit of job {job_id} failed")),
    };
    commit(
        &mut conn,
        vec![vec![
            job(1),
            job(2),
            Write::InsertUnits {
                job_id: 1,
                parent: None,
                units: units(&[1, 2, 3, 4]),
            },
            Write::InsertUnits {
                job_id: 2,
                parent: None,
                units: units(&[6, 7]),
            },
            complete(1, 1, &[5]),
            Write::CancelUnits {
                units: vec![(2, 0)],
            },
            finish(1, "failed"),
            finish(2, "cancelled"),
        ]],
    )
    .unwrap();
    assert_exact(&mut conn);
    let states = |conn: &Connection, job: i64| -> Vec<(i64, String)> {
        conn.prepare("SELECT id, state FROM units WHERE job_id = ?1 ORDER BY id")
            .unwrap()
            .query_map([job], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    let named = |v: &[(i64, &str)]| -> Vec<(i64, String)> {
        v.iter().map(|&(id, s)| (id, s.to_string())).collect()
    };
    assert_eq!(
        states(&conn, 1),
        named(&[
            (1, "done"),
            (2, "cancelled"),
            (3, "pending"),
            (4, "pending"),
            (5, "pending")
        ])
    );
    assert_eq!(
        states(&conn, 2),
        named(&[(6, "cancelled"), (7, "cancelled")])
    );
    drop(conn);

    let (store, loaded) = Store::open(&db.0).unwrap();
    assert_eq!(loaded.jobs[0].state, "failed");
    assert!(
        loaded.units.is_empty(),
        "a failed job's units are not loaded"
    );
    let stored = store.job_units(1).unwrap();
    let of = |state: UnitState| -> Vec<UnitId> {
        stored
            .units
            .iter()
            .filter(|u| u.state == state)
            .map(|u| u.id)
            .collect()
    };
    assert_eq!(of(UnitState::Pending), [3, 4, 5]);
    assert_eq!(of(UnitState::Done), [1]);
    assert_eq!(stored.units[0].summary.as_deref(), Some(&[7u8][..]));
    assert_eq!(stored.cancelled, [2u64.to_be_bytes().to_vec()]);
    store
        .commit(vec![Write::RetryJob { job_id: 1 }])
        .await
        .unwrap();
    let mut conn = Connection::open(&db.0).unwrap();
    assert_exact(&mut conn);
    let loaded = load(&conn).unwrap();
    let row = &loaded.jobs[0];
    assert_eq!(
        (row.state.as_str(), row.error.as_deref(), row.finished_ms),
        ("running", None, None)
    );
    let mut ids: Vec<UnitId> = loaded.units.iter().map(|u| u.id).collect();
    ids.sort();
    assert_eq!(
        ids,
        [1, 3, 4, 5],
        "the done and pending units of a running job"
    );
    assert_eq!(loaded.cancelled.len(), 1);
    // A unit row changed behind the store's back is refused, not searched.
    conn.execute_batch("PRAGMA foreign_keys = OFF; UPDATE units SET position = x'00' WHERE id = 4")
        .unwrap();
    let err = store.job_units(1).unwrap_err().to_string();
    assert!(
        err.contains("job 1: its unit rows do not match their seal"),
        "{err}"
    );
}

/// A unit row whose `state` holds a word orchard never writes (the
/// scheduler's "leased" is not one: a lease is never stored) is refused
/// when the store opens, naming the unit and the word.
#[test]
fn a_unit_state_orchard_never_writes_is_refused_by_name() {
    let db = TempDb::new("unknown-state");
    let (mut conn, _) = schema::open_connection(&db.0).unwrap();
    let roots = Write::InsertUnits {
        job_id: 1,
        parent: None,
        units: units(&[1, 2]),
    };
    commit(&mut conn, vec![vec![job(1), roots]]).unwrap();
    assert_eq!(load(&conn).unwrap().units.len(), 2);
    conn.execute_batch("UPDATE units SET state = 'leased' WHERE id = 2")
        .unwrap();
    let err = load(&conn).err().expect("refused").to_string();
    assert_eq!(err, "database corrupt: unit 2: unknown state \"leased\"");
}

/// A job's oldest blobs of lemmas are evicted (its window of the store, see
/// `Scheduler::admit_lemmas`): only its own, oldest first; the seals
/// follow, and a restart sees the blobs left in the order they came.
#[test]
fn evicting_lemmas_deletes_a_jobs_oldest_blobs_and_keeps_the_seals() {
    let db = TempDb::new("evict");
    let (mut conn, _) = schema::open_connection(&db.0).unwrap();
    let lemmas = |job_id: JobId, byte: u8, len: usize| Write::InsertLemmas {
        job_id,
        source: 1,
        blob: vec![byte; len],
    };
    commit(
        &mut conn,
        vec![
            vec![job(1), job(2)],
            vec![
                lemmas(1, 1, 10),
                lemmas(2, 2, 20),
                lemmas(1, 3, 30),
                lemmas(1, 4, 40),
            ],
        ],
    )
    .unwrap();
    assert_exact(&mut conn);
    commit(
        &mut conn,
        vec![vec![Write::EvictLemmas {
            job_id: 1,
            count: 2,
        }]],
    )
    .unwrap();
    assert_exact(&mut conn);
    let left: Vec<(i64, Vec<u8>)> = conn
        .prepare("SELECT job_id, blob FROM lemmas ORDER BY seq")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(left, [(2, vec![2; 20]), (1, vec![4; 40])]);
    let loaded = load(&conn).unwrap();
    assert_eq!(loaded.lemma_blobs, [(1, vec![40]), (2, vec![20])]);
}
