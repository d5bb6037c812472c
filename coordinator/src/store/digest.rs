//! What makes a deleted, moved or edited row visible (schema versions 5
//! and 7).
//!
//! The CRCs cover blobs one row at a time; they cannot see a row that is
//! no longer there. So every job row also holds:
//!
//! * `unit_count`, the number of its unit rows, and `unit_digest`, the
//!   wrapping sum (mod 2^64) of one hash per unit row, over every column a
//!   count or an answer is read from: the unit's id, job, parent, position,
//!   state, payload checksum and discarded nodes, and its result's job,
//!   nodes and summary checksum. A sum, not a chain: it does not depend on
//!   the order rows are written in, and a row's change is subtracting its
//!   old hash and adding its new one. The writer keeps both exact in the
//!   same transaction as every unit insert and update (see [`Deltas`]), so
//!   no crash between two writes can leave them apart from the rows.
//! * `row_crc`, a hash of the job row's own columns: its family,
//!   parameters, state, answer (`result_json`), results file, error and
//!   (since version 7) `bound`. Rewritten whenever the writer writes those
//!   (a job's insert, its end, and every bound a report raises).
//! * Since version 7, the same count and digest for each job's rows of the
//!   four tables beside its units ([`Rows`]): the replicas waiting for a
//!   vote, the mismatches found (with which side lost), the exclusions of
//!   workers found lying, and the lemmas shared (their length and CRC, not
//!   their bytes: a damaged blob is skipped when served, lemmas only save
//!   work). Each row's hash covers its key (`id`, `seq`) and every column
//!   orchard reads, so a row moved to another job or altered is seen. The
//!   writer keeps them like the unit seals: each row's hash read before and
//!   after every insert, update and delete, in the same transaction.
//!
//! At open, [`crate::store::load()`] counts every job's rows of each kind and
//! sums their hashes; any difference refuses the database in one line
//! naming the job and the kind of row.
//!
//! The hash is the first 8 bytes of a SHA-256 (ring, already in the build)
//! of each column's type and bytes: stable across builds and platforms, and
//! a changed cell of any type changes it.

use std::collections::HashMap;

use rusqlite::types::ValueRef;
use rusqlite::{params, Connection, OptionalExtension, Row, Transaction};

use super::UnitState;

/// The columns of a unit row (with its result's) that [`unit_hash`]
/// covers, in order; `u` is the unit, `r` its result (left-joined).
pub(crate) const UNIT_COLUMNS: &str = "u.id, u.job_id, u.parent_id, u.position, u.state, \
     u.payload_crc, u.discarded_nodes, r.job_id, r.nodes, r.summary_crc";
/// How many columns [`UNIT_COLUMNS`] lists.
pub(crate) const UNIT_COLUMN_COUNT: usize = 10;
/// The columns of a job row that `row_crc` covers, in order (`bound`
/// since schema version 7).
pub(crate) const JOB_COLUMNS: &str = "id, family, params_json, state, created_ms, finished_ms, \
     result_json, results_file, error, replicas, bound";
/// How many columns [`JOB_COLUMNS`] lists.
const JOB_COLUMN_COUNT: usize = 11;

/// The kinds of row each job keeps a count and a digest of, in its own
/// columns (`<kind>_count`, `<kind>_digest`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Rows {
    /// Unit rows with their results (schema version 5).
    Units,
    /// The rows of the tables beside them (schema version 7).
    Replicas,
    Mismatches,
    Exclusions,
    Lemmas,
}

impl Rows {
    /// The kinds kept since schema version 7, beside the units.
    pub(crate) const BESIDE_UNITS: [Rows; 4] = [
        Rows::Replicas,
        Rows::Mismatches,
        Rows::Exclusions,
        Rows::Lemmas,
    ];

    /// The job's columns holding the count and the digest of its rows.
    pub(crate) fn seal_columns(self) -> (&'static str, &'static str) {
        match self {
            Rows::Units => ("unit_count", "unit_digest"),
            Rows::Replicas => ("replica_count", "replica_digest"),
            Rows::Mismatches => ("mismatch_count", "mismatch_digest"),
            Rows::Exclusions => ("exclusion_count", "exclusion_digest"),
            Rows::Lemmas => ("lemma_count", "lemma_digest"),
        }
    }

    /// What one row is called in an error.
    pub(crate) fn noun(self) -> &'static str {
        match self {
            Rows::Units => "unit",
            Rows::Replicas => "replica",
            Rows::Mismatches => "mismatch",
            Rows::Exclusions => "exclusion",
            Rows::Lemmas => "lemma",
        }
    }

    /// The table holding rows of this kind (not units).
    pub(crate) fn table(self) -> &'static str {
        self.table_columns().0
    }

    /// The table and the columns a row's hash covers, its job's id second
    /// (for the tables beside the units; a unit's are [`UNIT_COLUMNS`]).
    fn table_columns(self) -> (&'static str, &'static str) {
        match self {
            Rows::Units => unreachable!("unit rows are read with their results"),
            Rows::Replicas => (
                "replicas",
                "id, job_id, unit_id, worker, host, nodes, bound, summary_crc, rest, \
                 reported_ms, identity, identity_label",
            ),
            Rows::Mismatches => (
                "mismatches",
                "id, job_id, unit_id, unit_label, worker_a, summary_a, worker_b, summary_b, \
                 found_ms, identity_a, identity_b, loser_a, loser_b",
            ),
            Rows::Exclusions => (
                "exclusions",
                "id, job_id, identity, label, unit_id, mismatch_id, found_ms, row_crc",
            ),
            Rows::Lemmas => ("lemmas", "seq, job_id, source, length(blob), blob_crc"),
        }
    }
}

/// The job and hash of every row of kind `rows` (not units) that `filter`
/// (an SQL condition on the table's columns, with `params`) selects.
pub(crate) fn row_hashes(
    conn: &Connection,
    rows: Rows,
    filter: &str,
    params: impl rusqlite::Params,
) -> rusqlite::Result<Vec<(i64, u64)>> {
    let (table, columns) = rows.table_columns();
    let n = columns.split(',').count();
    let mut stmt = conn.prepare_cached(&format!("SELECT {columns} FROM {table} WHERE {filter}"))?;
    let mut found = stmt.query(params)?;
    let mut out = Vec::new();
    while let Some(r) = found.next()? {
        let values = (0..n)
            .map(|i| r.get_ref(i))
            .collect::<rusqlite::Result<Vec<_>>>()?;
        out.push((r.get(1)?, hash_values(values)));
    }
    Ok(out)
}

/// Every job's count and digest of its rows of kind `rows` (not units),
/// computed from the rows as they are; `job`: of that job alone. A row
/// whose job does not exist has its sum too (the caller finds it).
pub(crate) fn sums_beside_units(
    conn: &Connection,
    rows: Rows,
    job: Option<i64>,
) -> rusqlite::Result<HashMap<i64, (i64, u64)>> {
    let found = match job {
        Some(job) => row_hashes(conn, rows, "job_id = ?1", params![job])?,
        None => row_hashes(conn, rows, "1", [])?,
    };
    let mut sums: HashMap<i64, (i64, u64)> = HashMap::new();
    for (job, hash) in found {
        let d = sums.entry(job).or_default();
        d.0 += 1;
        d.1 = d.1.wrapping_add(hash);
    }
    Ok(sums)
}

/// The hash of a row's values, each with its type, so that `1` and `'1'`
/// differ, and with its length, so that no two rows run into each other.
pub(crate) fn hash_values<'a>(values: impl IntoIterator<Item = ValueRef<'a>>) -> u64 {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    for v in values {
        let (tag, bytes): (u8, std::borrow::Cow<'_, [u8]>) = match v {
            ValueRef::Null => (0, (&[][..]).into()),
            ValueRef::Integer(i) => (1, i.to_le_bytes().to_vec().into()),
            ValueRef::Real(f) => (2, f.to_le_bytes().to_vec().into()),
            ValueRef::Text(t) => (3, t.into()),
            ValueRef::Blob(b) => (4, b.into()),
        };
        ctx.update(&[tag]);
        ctx.update(&(bytes.len() as u64).to_le_bytes());
        ctx.update(&bytes);
    }
    let d = ctx.finish();
    u64::from_le_bytes(d.as_ref()[..8].try_into().expect("SHA-256 has 32 bytes"))
}

/// The hash of the unit row read by a query selecting [`UNIT_COLUMNS`]
/// from column `first` on.
pub(crate) fn unit_hash(row: &Row<'_>, first: usize) -> rusqlite::Result<u64> {
    let values = (first..first + UNIT_COLUMN_COUNT)
        .map(|i| row.get_ref(i))
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(hash_values(values))
}

/// The hash of a unit row as the writer inserts it: pending, no result.
pub(crate) fn new_unit_hash(
    id: i64,
    job_id: i64,
    parent: Option<i64>,
    position: &[u8],
    payload_crc: i64,
) -> u64 {
    hash_values([
        ValueRef::Integer(id),
        ValueRef::Integer(job_id),
        parent.map_or(ValueRef::Null, ValueRef::Integer),
        ValueRef::Blob(position),
        ValueRef::Text(UnitState::Pending.as_str().as_bytes()),
        ValueRef::Integer(payload_crc),
        ValueRef::Integer(0),
        ValueRef::Null,
        ValueRef::Null,
        ValueRef::Null,
    ])
}

/// The job and hash of unit `id` as stored now (`None`: no such row).
pub(crate) fn stored_unit(tx: &Transaction<'_>, id: i64) -> rusqlite::Result<Option<(i64, u64)>> {
    tx.prepare_cached(&format!(
        "SELECT {UNIT_COLUMNS} FROM units u LEFT JOIN results r ON r.unit_id = u.id
         WHERE u.id = ?1"
    ))?
    .query_row(params![id], |r| Ok((r.get::<_, i64>(1)?, unit_hash(r, 0)?)))
    .optional()
}

/// The `row_crc` of the job row read by a query selecting [`JOB_COLUMNS`]
/// from column `first` on.
pub(crate) fn job_hash(row: &Row<'_>, first: usize) -> rusqlite::Result<i64> {
    let values = (first..first + JOB_COLUMN_COUNT)
        .map(|i| row.get_ref(i))
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(hash_values(values) as i64)
}

/// The columns of an exclusion row (schema version 6) that its `row_crc`
/// covers, in order: all but its `id`.
pub(crate) const EXCLUSION_COLUMNS: &str =
    "job_id, identity, label, unit_id, mismatch_id, found_ms";

/// The `row_crc` of the exclusion row read by a query selecting
/// [`EXCLUSION_COLUMNS`] from column `first` on. An exclusion row edited
/// (another identity, another job) is refused at open; one deleted is not
/// seen by its own checksum, but its mismatch still names the loser (see
/// `load`).
pub(crate) fn exclusion_hash(row: &Row<'_>, first: usize) -> rusqlite::Result<i64> {
    let values = (first..first + 6)
        .map(|i| row.get_ref(i))
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(hash_values(values) as i64)
}

/// Rewrites the `row_crc` of job `id` from its columns as stored now.
pub(crate) fn seal_job(tx: &Connection, id: i64) -> rusqlite::Result<()> {
    let hash: Option<i64> = tx
        .prepare_cached(&format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?1"))?
        .query_row(params![id], |r| job_hash(r, 0))
        .optional()?;
    if let Some(hash) = hash {
        tx.prepare_cached("UPDATE jobs SET row_crc = ?2 WHERE id = ?1")?
            .execute(params![id, hash])?;
    }
    Ok(())
}

/// The changes to each job's counts and digests made by one transaction,
/// written to the job rows once, just before it commits (one read and one
/// write per job and kind of row touched, however many reports it holds).
#[derive(Default)]
pub(crate) struct Deltas(HashMap<(i64, Rows), (i64, u64)>);

impl Deltas {
    /// A unit row of `job` with hash `hash` was inserted.
    pub(crate) fn add(&mut self, job: i64, hash: u64) {
        self.add_row(Rows::Units, job, hash);
    }

    /// A row of kind `rows` of `job` with hash `hash` was inserted.
    pub(crate) fn add_row(&mut self, rows: Rows, job: i64, hash: u64) {
        let d = self.0.entry((job, rows)).or_default();
        d.0 += 1;
        d.1 = d.1.wrapping_add(hash);
    }

    /// A row of kind `rows` of `job` with hash `hash` was deleted.
    pub(crate) fn remove_row(&mut self, rows: Rows, job: i64, hash: u64) {
        let d = self.0.entry((job, rows)).or_default();
        d.0 -= 1;
        d.1 = d.1.wrapping_sub(hash);
    }

    /// A unit row changed from `before` to `after` (each its job and hash,
    /// as [`stored_unit`] read them; `None`: no row).
    pub(crate) fn replace(&mut self, before: Option<(i64, u64)>, after: Option<(i64, u64)>) {
        if before == after {
            return;
        }
        if let Some((job, hash)) = before {
            self.remove_row(Rows::Units, job, hash);
        }
        if let Some((job, hash)) = after {
            self.add(job, hash);
        }
    }

    /// Rows of kind `rows` changed from `before` to `after` (each a list
    /// of jobs and hashes, as [`row_hashes`] read them).
    pub(crate) fn replace_rows(&mut self, rows: Rows, before: &[(i64, u64)], after: &[(i64, u64)]) {
        for &(job, hash) in before {
            self.remove_row(rows, job, hash);
        }
        for &(job, hash) in after {
            self.add_row(rows, job, hash);
        }
    }

    /// Adds the changes to the job rows (a job row that does not exist
    /// has nothing to keep).
    pub(crate) fn write(self, tx: &Transaction<'_>) -> rusqlite::Result<()> {
        for ((job, rows), (count, digest)) in self.0 {
            if count == 0 && digest == 0 {
                continue;
            }
            let (count_column, digest_column) = rows.seal_columns();
            let stored: Option<(i64, i64)> = tx
                .prepare_cached(&format!(
                    "SELECT {count_column}, {digest_column} FROM jobs WHERE id = ?1"
                ))?
                .query_row(params![job], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()?;
            if let Some((c, d)) = stored {
                tx.prepare_cached(&format!(
                    "UPDATE jobs SET {count_column} = ?2, {digest_column} = ?3 WHERE id = ?1"
                ))?
                .execute(params![
                    job,
                    c.wrapping_add(count),
                    (d as u64).wrapping_add(digest) as i64
                ])?;
            }
        }
        Ok(())
    }
}

/// The count and digest of each job's unit rows, computed from the rows as
/// they are; `job`: of that job alone.
fn unit_sums(conn: &Connection, job: Option<i64>) -> rusqlite::Result<HashMap<i64, (i64, u64)>> {
    let mut sums: HashMap<i64, (i64, u64)> = HashMap::new();
    let mut stmt = conn.prepare(&format!(
        "SELECT {UNIT_COLUMNS} FROM units u LEFT JOIN results r ON r.unit_id = u.id
         WHERE ?1 IS NULL OR u.job_id = ?1"
    ))?;
    let mut rows = stmt.query(params![job])?;
    while let Some(r) = rows.next()? {
        let job: i64 = r.get(1)?;
        let d = sums.entry(job).or_default();
        d.0 += 1;
        d.1 = d.1.wrapping_add(unit_hash(r, 0)?);
    }
    Ok(sums)
}

/// Writes every seal of job `job` (all jobs: `None`) computed from the
/// rows as they are: the counts and digests of each kind of its rows, and
/// its `row_crc`.
fn reseal(conn: &Connection, job: Option<i64>) -> rusqlite::Result<()> {
    let mut kinds = vec![(Rows::Units, unit_sums(conn, job)?)];
    for rows in Rows::BESIDE_UNITS {
        kinds.push((rows, sums_beside_units(conn, rows, job)?));
    }
    let ids: Vec<i64> = conn
        .prepare("SELECT id FROM jobs WHERE ?1 IS NULL OR id = ?1")?
        .query_map(params![job], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for id in ids {
        for (rows, sums) in &kinds {
            let (count, digest) = sums.get(&id).copied().unwrap_or_default();
            let (count_column, digest_column) = rows.seal_columns();
            conn.execute(
                &format!("UPDATE jobs SET {count_column} = ?2, {digest_column} = ?3 WHERE id = ?1"),
                params![id, count, digest as i64],
            )?;
        }
        seal_job(conn, id)?;
    }
    Ok(())
}

/// Every job's seals computed from the rows as they are (for the
/// migrations to versions 5 and 7, which must start from the rows they
/// find), written to the job rows.
pub(crate) fn reseal_all(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    reseal(tx, None)
}

/// Makes the checksum of job `job_id`'s row match the row as it is now, in
/// the database behind `conn`: for a tool or a test that edits a job row on
/// purpose (a test making a finished job look unfinished, to have its
/// stored units loaded), which the coordinator would otherwise refuse at
/// open as damaged.
pub fn reseal_job_row(conn: &Connection, job_id: u64) -> Result<(), super::StoreError> {
    Ok(seal_job(conn, super::to_i64(job_id))?)
}

/// Makes every seal of job `job_id` match its rows as they are now (the
/// counts and digests of its units, replicas, mismatches, exclusions and
/// lemmas, and its row's checksum): for a test that writes rows on purpose
/// (lemmas, say), which the coordinator would otherwise refuse at open.
pub fn reseal_job(conn: &Connection, job_id: u64) -> Result<(), super::StoreError> {
    Ok(reseal(conn, Some(super::to_i64(job_id)))?)
}
