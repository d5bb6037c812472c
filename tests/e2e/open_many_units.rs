//! Opening a database of many unit rows: the coordinator recomputes every
//! job's seals (the count and digest of its unit rows,
//! `coordinator/src/store/digest.rs`) when it opens a database, so the cost
//! grows with the rows; this module builds a job of many done units and
//! checks that it opens with its figures and that a unit row deleted is
//! still refused. The times are printed, never asserted
//! (`bench/open-time.sh` runs a million rows; BENCHMARKS.md records them).

use crate::common;
use common::{env_u64, TempDir};

use std::time::Instant;

use orchard::Families;
use orchard_coordinator::{Coordinator, CoordinatorConfig};
use rusqlite::Connection;

/// This process's CPU time (user and system) so far, from /proc.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command name (which may hold spaces).
    let fields: Vec<&str> = stat
        .rsplit_once(") ")
        .map_or(Vec::new(), |(_, f)| f.split(' ').collect());
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime are fields 14 and 15 of the line, 11 and 12 here.
    (ticks(11) + ticks(12)) / 100.0
}

/// Opening a database whose job holds many unit rows, every one with its
/// result, recomputes every seal (each job's count and digest of its unit
/// rows): the open must succeed and show the job's figures, and a unit
/// row deleted must still be refused. `ORCHARD_OPEN_UNITS` (default
/// 20,000) sets the number of rows; `bench/open-time.sh` runs a million and
/// prints the times recorded in BENCHMARKS.md (printed here, never
/// asserted).
#[test]
fn a_database_of_many_units_opens_with_every_seal_checked() {
    let units = env_u64("ORCHARD_OPEN_UNITS", 20_000) as i64;
    let dir = TempDir::new("open-many");
    let db = dir.path("many.db");
    let db_s = db.to_str().unwrap();
    // A real database (job 1, a small synthetic run to its end)...
    let out = common::run(&[
        "run",
        "synthetic",
        "--nodes",
        "1000",
        "--db",
        db_s,
        "--results-dir",
        dir.path("results").to_str().unwrap(),
        "--workers",
        "1",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // ... and job 2, a copy of job 1 holding `units` done units with their
    // results, written in SQL, sealed by the store's own code.
    let started = Instant::now();
    let conn = Connection::open(&db).unwrap();
    conn.execute_batch(&format!(
        "BEGIN;
         INSERT INTO jobs (id, family, params_json, state, bound, created_ms, finished_ms,
                           result_json, results_file, error, replicas)
         SELECT 2, family, params_json, state, bound, created_ms, finished_ms, result_json,
                results_file, error, replicas FROM jobs WHERE id = 1;
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {units})
         INSERT INTO units (id, job_id, parent_id, position, state, payload, payload_crc, done_ms)
         SELECT 1000000000 + i, 2, NULL, CAST(printf('%010d', i) AS BLOB), 'done',
                zeroblob(12), 0, 1 FROM n;
         INSERT INTO results (unit_id, job_id, nodes, summary, summary_crc, worker, reported_ms)
         SELECT id, 2, 100, zeroblob(24), 0, 'worker 1 (host, 1 threads)', 1
         FROM units WHERE job_id = 2;
         COMMIT;"
    ))
    .unwrap();
    let written = started.elapsed();
    let (cpu, started) = (cpu_seconds(), Instant::now());
    orchard_coordinator::reseal_job(&conn, 2).unwrap();
    let sealed = (started.elapsed(), cpu_seconds() - cpu);
    drop(conn);
    let config = {
        let mut c = CoordinatorConfig::beside(&db, Families::builtin().registry);
        c.results_dir = dir.path("results");
        c
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (cpu, started) = (cpu_seconds(), Instant::now());
    let c = rt.block_on(Coordinator::open(&db, config.clone())).unwrap();
    let opened = (started.elapsed(), cpu_seconds() - cpu);
    let status = &c.answer(2).unwrap().status;
    assert_eq!(status.units_total, units as u64);
    assert_eq!(status.nodes, 100 * units as u64);
    drop(c);
    drop(rt);
    println!(
        "open time: {units} unit rows written in {:.1} s; sealed in {:.2} s ({:.2} s CPU); \
         the coordinator opened them in {:.2} s ({:.2} s CPU)",
        written.as_secs_f64(),
        sealed.0.as_secs_f64(),
        sealed.1,
        opened.0.as_secs_f64(),
        opened.1
    );
    // One unit row deleted: refused in one line naming the job.
    let copy = dir.path("deleted.db");
    std::fs::copy(&db, &copy).unwrap();
    Connection::open(&copy)
        .unwrap()
        .execute_batch(
            "DELETE FROM results WHERE unit_id = 1000000001;
             DELETE FROM units WHERE id = 1000000001;",
        )
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let err = rt
        .block_on(Coordinator::open(&copy, config))
        .err()
        .expect("opened with a unit row deleted")
        .to_string();
    assert!(
        err.contains(&format!("job 2: 1 of its {units} unit rows missing")),
        "{err}"
    );
}
