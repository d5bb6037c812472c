//! The single writer: one thread owns the writing connection and applies
//! every [`Write`], in the order sent.
//!
//! It groups every write queued while the previous commit was being synced
//! into the next transaction, so a busy coordinator pays one fsync for many
//! reports. [`Store::commit`] waits for its writes to be durable,
//! [`Store::enqueue`] does not, and [`Store::flush`] waits for everything
//! sent before it. [`Store::probe`] commits a write of its own, to learn
//! whether the database can still be written, and every commit's outcome
//! is published to [`Store::commit_outcomes`] (the coordinator's health).
//! [`Store::fold_wal`] moves the write-ahead log into the database file, so
//! that a stopped coordinator leaves the file whole on its own.

use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc};
use std::thread;

use rusqlite::{params, Connection};
use tokio::sync::{oneshot, watch};

use super::digest::{
    exclusion_hash, new_unit_hash, row_hashes, seal_job, stored_unit, Deltas, Rows,
    EXCLUSION_COLUMNS,
};
use super::{
    crc, to_i64, JobId, NewUnit, Store, StoreError, StoreHealth, UnitId, UnitState, WorkerIdentity,
    Write, SCHEMA_VERSION,
};
use crate::status::JobState;

/// Why a commit failed, as the writer tells the waiting caller.
#[derive(Debug, Clone)]
pub(super) struct CommitError {
    message: String,
    /// SQLITE_FULL: the disk is full (SQLite's unix layer turns ENOSPC on a
    /// write into it).
    disk_full: bool,
}

impl From<rusqlite::Error> for CommitError {
    fn from(e: rusqlite::Error) -> CommitError {
        let disk_full = e.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull);
        CommitError {
            message: e.to_string(),
            disk_full,
        }
    }
}

/// Writes sent to the writer together, and where to say they committed
/// (`None`: queued without waiting, see [`Store::enqueue`]).
pub(super) struct Batch {
    writes: Vec<Write>,
    done: Option<oneshot::Sender<Result<(), CommitError>>>,
    /// What the writer does besides committing `writes`.
    kind: BatchKind,
}

/// What a [`Batch`] asks of the writer besides committing its writes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum BatchKind {
    /// Nothing: the writes are all.
    Writes,
    /// A [`Store::probe`]: the transaction must write a page even if the
    /// writes are none.
    Probe,
    /// A [`Store::fold_wal`]: checkpoint the write-ahead log into the
    /// database file after the transaction.
    FoldWal,
}

/// The outcome of the writer's latest commit: `None` when it succeeded,
/// the error when it failed.
pub type CommitOutcome = Option<String>;

/// Starts the writer thread on `conn`; it holds `lock` (the database's
/// flock, see [`Store::open`]) for as long as it runs. The receiver follows
/// the outcome of every commit.
pub(super) fn start(
    conn: Connection,
    lock: std::fs::File,
    health: Arc<StoreHealth>,
) -> (mpsc::Sender<Batch>, watch::Receiver<CommitOutcome>) {
    let (tx, rx) = mpsc::channel::<Batch>();
    let (outcomes, outcomes_rx) = watch::channel(None);
    thread::Builder::new()
        .name("orchard-store".into())
        .spawn(move || {
            let _lock = lock;
            writer(conn, rx, outcomes, &health)
        })
        .expect("spawn store writer thread");
    (tx, outcomes_rx)
}

impl Store {
    /// Commits `writes` in one transaction (possibly grouped with others)
    /// and returns once they are durable.
    pub async fn commit(&self, writes: Vec<Write>) -> Result<(), StoreError> {
        self.send_and_wait(writes, BatchKind::Writes).await
    }

    /// Commits a write that changes nothing (the page holding the schema
    /// version, rewritten with the version it has) and returns once it is
    /// durable: whether the database can be written right now, asked the
    /// only way that cannot be fooled — through the writer's own
    /// connection, down to the disk. An empty transaction would not do:
    /// SQLite writes nothing for it.
    pub async fn probe(&self) -> Result<(), StoreError> {
        self.send_and_wait(Vec::new(), BatchKind::Probe).await
    }

    /// Commits everything sent before it, then copies the write-ahead log
    /// into the database file and empties it (SQLite's `wal_checkpoint
    /// (TRUNCATE)`), and returns once that is done. In WAL mode the latest
    /// commits live in `DB-wal` until SQLite checkpoints them (every few
    /// megabytes), and a connection that is never closed (the writer's lives
    /// as long as the process) never checkpoints the rest: the file `DB`
    /// alone, copied after a stop, would lack them. A coordinator that stops
    /// serving calls this, so that its database file holds every job as the
    /// stop left it. A reader still open may hold part of the log back; the
    /// log then still has it, which is no loss.
    pub async fn fold_wal(&self) -> Result<(), StoreError> {
        self.send_and_wait(Vec::new(), BatchKind::FoldWal).await
    }

    /// Follows the outcome of every commit (probes included): the error of
    /// the latest one, or `None` when it succeeded.
    pub fn commit_outcomes(&self) -> watch::Receiver<CommitOutcome> {
        self.outcomes.clone()
    }

    async fn send_and_wait(&self, writes: Vec<Write>, kind: BatchKind) -> Result<(), StoreError> {
        let (done, wait) = oneshot::channel();
        self.tx
            .send(Batch {
                writes,
                done: Some(done),
                kind,
            })
            .map_err(|_| StoreError::WriterGone)?;
        match wait.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) if e.disk_full => Err(StoreError::DiskFull(e.message)),
            Ok(Err(e)) => Err(StoreError::CommitFailed(e.message)),
            Err(_) => Err(StoreError::WriterGone),
        }
    }

    /// Queues `writes` without waiting for them (bookkeeping whose loss in a
    /// crash is harmless, such as lease counts).
    pub fn enqueue(&self, writes: Vec<Write>) {
        let _ = self.tx.send(Batch {
            writes,
            done: None,
            kind: BatchKind::Writes,
        });
    }

    /// Waits until every write sent before this call has committed (the
    /// writer applies batches in the order they were sent), so that a read
    /// on another connection, such as [`Store::unit_ledger`], sees them.
    pub async fn flush(&self) -> Result<(), StoreError> {
        self.commit(Vec::new()).await
    }
}

/// The writer thread: groups queued batches into one transaction each.
fn writer(
    mut conn: Connection,
    rx: mpsc::Receiver<Batch>,
    outcomes: watch::Sender<CommitOutcome>,
    health: &StoreHealth,
) {
    while let Ok(first) = rx.recv() {
        let mut batches = vec![first];
        while let Ok(more) = rx.try_recv() {
            batches.push(more);
            if batches.len() >= 4096 {
                break;
            }
        }
        let t0 = std::time::Instant::now();
        let outcome = apply(&mut conn, &batches).map_err(CommitError::from);
        tracing::trace!(
            batches = batches.len(),
            micros = t0.elapsed().as_micros() as u64,
            "store commit"
        );
        match &outcome {
            Ok(()) => {
                if health.failing.swap(false, Ordering::Relaxed) {
                    tracing::warn!("store commits succeed again");
                }
                health.disk_full.store(false, Ordering::Relaxed);
            }
            Err(e) => {
                health.commit_failures.fetch_add(1, Ordering::Relaxed);
                health.failing.store(true, Ordering::Relaxed);
                health.disk_full.store(e.disk_full, Ordering::Relaxed);
                if e.disk_full {
                    tracing::error!(
                        "store commit failed, the disk is full: {}; reports are refused \
                         (workers keep them and retry) until space returns",
                        e.message
                    );
                } else {
                    tracing::error!("store commit failed: {}", e.message);
                }
            }
        }
        if outcome.is_ok() && batches.iter().any(|b| b.kind == BatchKind::FoldWal) {
            fold_wal(&conn);
        }
        outcomes.send_if_modified(|latest| {
            let now = outcome.as_ref().err().map(|e| e.message.clone());
            let changed = *latest != now;
            *latest = now;
            changed
        });
        for b in batches {
            if let Some(done) = b.done {
                let _ = done.send(outcome.clone());
            }
        }
    }
}

/// Checkpoints the whole write-ahead log into the database file and
/// truncates it (see [`Store::fold_wal`]). A failure costs nothing but the
/// fold: every commit is durable in the log already.
fn fold_wal(conn: &Connection) {
    let folded = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, i64>(2)?,
        ))
    });
    match folded {
        Ok((0, _, _)) => tracing::debug!("write-ahead log folded into the database file"),
        Ok((_, log, done)) => tracing::debug!(
            log,
            done,
            "write-ahead log folded in part: a reader holds the rest"
        ),
        Err(e) => tracing::warn!("cannot fold the write-ahead log into the database file: {e}"),
    }
}

fn apply(conn: &mut Connection, batches: &[Batch]) -> Result<(), rusqlite::Error> {
    let tx = conn.transaction()?;
    let mut deltas = Deltas::default();
    for w in batches.iter().flat_map(|b| &b.writes) {
        apply_one(&tx, w, &mut deltas)?;
    }
    deltas.write(&tx)?;
    if batches.iter().any(|b| b.kind == BatchKind::Probe) {
        // Dirties page 1, so the commit appends a frame to the WAL and
        // syncs it, as any real write would.
        tx.execute_batch(&format!("PRAGMA user_version = {SCHEMA_VERSION}"))?;
    }
    tx.commit()
}

fn insert_units(
    tx: &rusqlite::Transaction<'_>,
    job_id: JobId,
    parent: Option<UnitId>,
    units: &[NewUnit],
    deltas: &mut Deltas,
) -> Result<(), rusqlite::Error> {
    let mut stmt = tx.prepare_cached(
        "INSERT INTO units (id, job_id, parent_id, position, state, payload, payload_crc)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    for u in units {
        let payload_crc = crc(&u.payload);
        stmt.execute(params![
            to_i64(u.id),
            to_i64(job_id),
            parent.map(to_i64),
            u.position,
            UnitState::Pending,
            u.payload,
            payload_crc
        ])?;
        deltas.add(
            to_i64(job_id),
            new_unit_hash(
                to_i64(u.id),
                to_i64(job_id),
                parent.map(to_i64),
                &u.position,
                payload_crc,
            ),
        );
    }
    Ok(())
}

/// Applies one write; the changes it makes to unit rows are added to
/// `deltas` (each row's hash read before and after the change, so the
/// digest follows whatever SQL did, see [`super::digest`]).
fn apply_one(
    tx: &rusqlite::Transaction<'_>,
    w: &Write,
    deltas: &mut Deltas,
) -> Result<(), rusqlite::Error> {
    match w {
        Write::InsertJob {
            id,
            family,
            params_json,
            created_ms,
            replicas,
        } => {
            tx.execute(
                "INSERT INTO jobs (id, family, params_json, state, created_ms, replicas) VALUES (?1, ?2, ?3, 'running', ?4, ?5)",
                params![to_i64(*id), family, params_json, to_i64(*created_ms), replicas],
            )?;
            seal_job(tx, to_i64(*id))?;
        }
        Write::InsertUnits {
            job_id,
            parent,
            units,
        } => insert_units(tx, *job_id, *parent, units, deltas)?,
        Write::CompleteUnit {
            unit_id,
            job_id,
            nodes,
            summary,
            worker,
            rest,
            done_ms,
        } => {
            let before = stored_unit(tx, to_i64(*unit_id))?;
            tx.prepare_cached("UPDATE units SET state = ?3, done_ms = ?2 WHERE id = ?1")?
                .execute(params![to_i64(*unit_id), to_i64(*done_ms), UnitState::Done])?;
            tx.prepare_cached(
                "INSERT INTO results (unit_id, job_id, nodes, summary, summary_crc, worker, reported_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                to_i64(*unit_id),
                to_i64(*job_id),
                to_i64(*nodes),
                summary,
                crc(summary),
                worker,
                to_i64(*done_ms)
            ])?;
            deltas.replace(before, stored_unit(tx, to_i64(*unit_id))?);
            insert_units(tx, *job_id, Some(*unit_id), rest, deltas)?;
            let unit = params![to_i64(*unit_id)];
            delete_rows(tx, Rows::Replicas, "unit_id = ?1", unit, deltas)?;
        }
        Write::Replica {
            unit_id,
            job_id,
            worker,
            host,
            identity,
            nodes,
            bound,
            summary,
            rest,
            reported_ms,
        } => {
            tx.prepare_cached(
                "INSERT INTO replicas (unit_id, job_id, worker, host, nodes, bound, summary, summary_crc, rest, reported_ms, identity, identity_label)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            )?
            .execute(params![
                to_i64(*unit_id),
                to_i64(*job_id),
                worker,
                host,
                to_i64(*nodes),
                to_i64(*bound),
                summary,
                crc(summary),
                orchard_core::codec::encode(rest),
                to_i64(*reported_ms),
                identity.key,
                identity.label
            ])?;
            track_insert(tx, Rows::Replicas, "id", deltas)?;
        }
        Write::Exclude {
            job_id,
            unit_id,
            identity,
            found_ms,
        } => exclude(tx, *job_id, *unit_id, identity, *found_ms, deltas)?,
        Write::Mismatch {
            job_id,
            row,
            found_ms,
        } => {
            tx.prepare_cached(
                "INSERT INTO mismatches (job_id, unit_id, unit_label, worker_a, summary_a, worker_b, summary_b, found_ms, identity_a, identity_b)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )?
            .execute(params![
                to_i64(*job_id),
                to_i64(row.unit_id),
                row.unit_label,
                row.worker_a,
                row.summary_a,
                row.worker_b,
                row.summary_b,
                to_i64(*found_ms),
                row.identity_a,
                row.identity_b
            ])?;
            track_insert(tx, Rows::Mismatches, "id", deltas)?;
        }
        Write::Leased { unit_ids } => {
            let mut stmt =
                tx.prepare_cached("UPDATE units SET lease_count = lease_count + 1 WHERE id = ?1")?;
            for id in unit_ids {
                stmt.execute(params![to_i64(*id)])?;
            }
        }
        Write::SetBound { job_id, bound } => {
            // Only a raised bound rewrites the row (and its checksum).
            let raised = tx
                .prepare_cached("UPDATE jobs SET bound = ?2 WHERE id = ?1 AND bound < ?2")?
                .execute(params![to_i64(*job_id), to_i64(*bound)])?;
            if raised > 0 {
                seal_job(tx, to_i64(*job_id))?;
            }
        }
        Write::CancelUnits { units } => cancel_units(tx, units, deltas)?,
        Write::FinishJob {
            job_id,
            state,
            finished_ms,
            result_json,
            results_file,
            error,
        } => {
            tx.execute(
                "UPDATE jobs SET state = ?2, finished_ms = ?3, result_json = ?4, results_file = ?5, error = ?6 WHERE id = ?1",
                params![to_i64(*job_id), state, to_i64(*finished_ms), result_json, results_file, error],
            )?;
            seal_job(tx, to_i64(*job_id))?;
            // A failed job keeps its pending units for a retry; they are
            // not searched while it is not running (only running jobs'
            // units are loaded).
            if *state == JobState::Cancelled.as_str() {
                cancel_pending_units(tx, *job_id, deltas)?;
            }
            for rows in [Rows::Replicas, Rows::Lemmas] {
                let job = params![to_i64(*job_id)];
                delete_rows(tx, rows, "job_id = ?1", job, deltas)?;
            }
        }
        Write::RetryJob { job_id } => {
            tx.execute(
                "UPDATE jobs SET state = 'running', finished_ms = NULL, result_json = NULL,
                     results_file = NULL, error = NULL
                 WHERE id = ?1",
                params![to_i64(*job_id)],
            )?;
            seal_job(tx, to_i64(*job_id))?;
        }
        Write::InsertLemmas {
            job_id,
            source,
            blob,
        } => {
            tx.prepare_cached(
                "INSERT INTO lemmas (job_id, source, blob, blob_crc) VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![to_i64(*job_id), *source as i64, blob, crc(blob)])?;
            track_insert(tx, Rows::Lemmas, "seq", deltas)?;
        }
        Write::EvictLemmas { job_id, count } => {
            let oldest = "seq IN (SELECT seq FROM lemmas WHERE job_id = ?1 ORDER BY seq LIMIT ?2)";
            let job = params![to_i64(*job_id), to_i64(*count)];
            delete_rows(tx, Rows::Lemmas, oldest, job, deltas)?;
        }
    }
    Ok(())
}

/// Cancels each of `units` that is still pending (one done meanwhile keeps
/// its result), recording the nodes a worker had searched in it, which
/// the job's figures count as discarded.
fn cancel_units(
    tx: &rusqlite::Transaction<'_>,
    units: &[(UnitId, u64)],
    deltas: &mut Deltas,
) -> Result<(), rusqlite::Error> {
    let mut stmt = tx.prepare_cached(
        "UPDATE units SET state = ?3, discarded_nodes = ?2
         WHERE id = ?1 AND state = ?4",
    )?;
    for (id, discarded) in units {
        let before = stored_unit(tx, to_i64(*id))?;
        let (cancelled, pending) = (UnitState::Cancelled, UnitState::Pending);
        if stmt.execute(params![to_i64(*id), to_i64(*discarded), cancelled, pending])? > 0 {
            deltas.replace(before, stored_unit(tx, to_i64(*id))?);
        }
    }
    Ok(())
}

/// Cancels every pending unit of cancelled job `job_id` in one statement,
/// reading each row's hash before and after it: the job's seal must follow
/// every unit row the statement changes.
fn cancel_pending_units(
    tx: &rusqlite::Transaction<'_>,
    job_id: JobId,
    deltas: &mut Deltas,
) -> Result<(), rusqlite::Error> {
    let pending: Vec<i64> = tx
        .prepare_cached("SELECT id FROM units WHERE job_id = ?1 AND state = ?2")?
        .query_map(params![to_i64(job_id), UnitState::Pending], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let before = pending
        .iter()
        .map(|&id| stored_unit(tx, id))
        .collect::<Result<Vec<_>, _>>()?;
    tx.execute(
        "UPDATE units SET state = ?3 WHERE job_id = ?1 AND state = ?2",
        params![to_i64(job_id), UnitState::Pending, UnitState::Cancelled],
    )?;
    for (&id, before) in pending.iter().zip(before) {
        deltas.replace(before, stored_unit(tx, id)?);
    }
    Ok(())
}

/// Deletes the rows of kind `rows` that `filter` (with `params`) selects,
/// taking their hashes out of their jobs' seals first: a row gone without
/// its seal following would read as one deleted behind orchard's back.
fn delete_rows(
    tx: &rusqlite::Transaction<'_>,
    rows: Rows,
    filter: &str,
    params: &[&dyn rusqlite::ToSql],
    deltas: &mut Deltas,
) -> Result<(), rusqlite::Error> {
    let gone = row_hashes(tx, rows, filter, params)?;
    deltas.replace_rows(rows, &gone, &[]);
    tx.prepare_cached(&format!("DELETE FROM {} WHERE {filter}", rows.table()))?
        .execute(params)?;
    Ok(())
}

/// The row of kind `rows` just inserted (its key column `key` is the last
/// rowid) is added to its job's seal.
fn track_insert(
    tx: &rusqlite::Transaction<'_>,
    rows: Rows,
    key: &str,
    deltas: &mut Deltas,
) -> Result<(), rusqlite::Error> {
    let id = tx.last_insert_rowid();
    let new = row_hashes(tx, rows, &format!("{key} = ?1"), params![id])?;
    deltas.replace_rows(rows, &[], &new);
    Ok(())
}

/// `identity` is excluded from job `job_id` for losing the vote of unit
/// `unit_id` (see [`Write::Exclude`]): the unit's mismatches that name it
/// say it lost, and the exclusion row points at the latest of them (or the
/// unit's latest mismatch, when it sided with another loser and so never
/// appeared in one). Excluded twice (a stored replica outvoted after a
/// restart, for one already excluded): the first row stays.
fn exclude(
    tx: &rusqlite::Transaction<'_>,
    job_id: JobId,
    unit_id: UnitId,
    identity: &WorkerIdentity,
    found_ms: u64,
    deltas: &mut Deltas,
) -> Result<(), rusqlite::Error> {
    let (job, unit) = (to_i64(job_id), to_i64(unit_id));
    let unit_mismatches = "job_id = ?1 AND unit_id = ?2";
    let before = row_hashes(tx, Rows::Mismatches, unit_mismatches, params![job, unit])?;
    tx.prepare_cached(
        "UPDATE mismatches SET loser_a = 1 WHERE job_id = ?1 AND unit_id = ?2 AND identity_a = ?3",
    )?
    .execute(params![job, unit, identity.key])?;
    tx.prepare_cached(
        "UPDATE mismatches SET loser_b = 1 WHERE job_id = ?1 AND unit_id = ?2 AND identity_b = ?3",
    )?
    .execute(params![job, unit, identity.key])?;
    let after = row_hashes(tx, Rows::Mismatches, unit_mismatches, params![job, unit])?;
    deltas.replace_rows(Rows::Mismatches, &before, &after);
    let mismatch: Option<i64> = tx
        .prepare_cached(
            "SELECT coalesce(
                 (SELECT max(id) FROM mismatches WHERE job_id = ?1 AND unit_id = ?2
                    AND (identity_a = ?3 OR identity_b = ?3)),
                 (SELECT max(id) FROM mismatches WHERE job_id = ?1 AND unit_id = ?2))",
        )?
        .query_row(params![job, unit, identity.key], |r| r.get(0))?;
    let inserted = tx
        .prepare_cached(
            "INSERT OR IGNORE INTO exclusions (job_id, identity, label, unit_id, mismatch_id, found_ms, row_crc)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0)",
        )?
        .execute(params![
            job,
            identity.key,
            identity.label,
            unit,
            mismatch,
            to_i64(found_ms)
        ])?;
    if inserted > 0 {
        let id = tx.last_insert_rowid();
        let hash: i64 = tx
            .prepare_cached(&format!(
                "SELECT {EXCLUSION_COLUMNS} FROM exclusions WHERE id = ?1"
            ))?
            .query_row(params![id], |r| exclusion_hash(r, 0))?;
        tx.prepare_cached("UPDATE exclusions SET row_crc = ?2 WHERE id = ?1")?
            .execute(params![id, hash])?;
        let new = row_hashes(tx, Rows::Exclusions, "id = ?1", params![id])?;
        deltas.replace_rows(Rows::Exclusions, &[], &new);
    }
    Ok(())
}

#[cfg(test)]
mod tests;
