//! Reading a coordinator's SQLite database behind its back, read-only in
//! spirit: what the tests check against what the processes said.

use std::collections::HashMap;
use std::path::Path;

use rusqlite::{Connection, OpenFlags};

/// A unit as the database holds it: state, lease count, and the summary of
/// its result if it has one.
pub type Unit = (String, i64, Option<Vec<u8>>);

/// Every unit of the database, by id.
pub fn units(db: &Path) -> HashMap<i64, Unit> {
    let conn = Connection::open(db).unwrap();
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

/// The ids of the units in `state`.
pub fn ids_in_state(units: &HashMap<i64, Unit>, state: &str) -> Vec<i64> {
    units
        .iter()
        .filter(|(_, u)| u.0 == state)
        .map(|(&id, _)| id)
        .collect()
}

/// The state of job `job`.
pub fn job_state(db: &Path, job: u64) -> String {
    let conn = Connection::open(db).unwrap();
    conn.query_row("SELECT state FROM jobs WHERE id = ?1", [job as i64], |r| {
        r.get(0)
    })
    .unwrap()
}

/// How many units were leased more than once so far.
pub fn releases(db: &Path) -> i64 {
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    conn.query_row(
        "SELECT count(*) FROM units WHERE lease_count >= 2",
        [],
        |r| r.get(0),
    )
    .unwrap()
}

/// Nodes of the finished units, from the database (0 before it exists).
pub fn job_nodes(db: &Path) -> u64 {
    let Ok(conn) = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY) else {
        return 0;
    };
    conn.query_row("SELECT coalesce(sum(nodes), 0) FROM results", [], |r| {
        r.get::<_, i64>(0)
    })
    .map_or(0, |n| n as u64)
}

/// Nodes of the results reported by the worker named `hostname` (the
/// database names the reporter `worker ID (HOSTNAME, N threads)`).
pub fn nodes_reported_by(db: &Path, hostname: &str) -> u64 {
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    conn.query_row(
        "SELECT coalesce(sum(nodes), 0) FROM results WHERE worker LIKE ?1",
        [format!("% ({hostname}, %")],
        |r| r.get::<_, i64>(0),
    )
    .unwrap() as u64
}
