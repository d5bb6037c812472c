//! The durable store: one SQLite database (WAL, `synchronous = FULL`) with
//! the tables `jobs`, `units`, `results` and `lemmas`.
//!
//! Invariants:
//! * A result is committed before it is acknowledged to the worker: the
//!   service awaits [`Store::commit`] before answering.
//! * Marking a unit done, storing its summary and inserting the units split
//!   off it happen in one transaction, so the stored units always partition
//!   each job's search tree.
//! * Every unit payload and summary carries a CRC32, checked when loaded; a
//!   mismatch is reported as corruption, never silently used. Lemmas carry
//!   one too; a damaged lemma is skipped (lemmas only save work).
//! * Opening never writes to a file that is not an empty or orchard
//!   database: a foreign or corrupt file is refused before any write.
//!
//! Writes go through one writer thread that groups every write queued while
//! the previous commit was being synced into the next transaction, so a busy
//! coordinator pays one fsync for many reports.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread;

use rusqlite::{params, Connection, OptionalExtension};
use tokio::sync::oneshot;

/// `PRAGMA application_id` of an orchard database: "ORCH".
pub const APPLICATION_ID: i32 = 0x4F52_4348;
/// `PRAGMA user_version`: the schema version. Older versions are migrated in
/// place when opened (see [`migrate`]).
pub const SCHEMA_VERSION: i32 = 3;

/// The lemmas table (schema version 3): blobs of lemmas in the order they
/// were stored (`seq`, never reused), with the CRC32 of each.
const CREATE_LEMMAS: &str = "CREATE TABLE lemmas (
                 seq INTEGER PRIMARY KEY AUTOINCREMENT,
                 job_id INTEGER NOT NULL,
                 source INTEGER NOT NULL,
                 blob BLOB NOT NULL,
                 blob_crc INTEGER NOT NULL
             );
             CREATE INDEX lemmas_by_job ON lemmas(job_id, seq);";

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: not an orchard database ({reason})")]
    Foreign { path: PathBuf, reason: String },
    #[error("{path}: database schema version {found} is not supported (this build uses {SCHEMA_VERSION})")]
    Version { path: PathBuf, found: i32 },
    /// An operation that would overwrite what it must not (see [`crate::backup`]).
    #[error("{path}: {reason}")]
    Refused { path: PathBuf, reason: String },
    #[error("database corrupt: {0}")]
    Corrupt(String),
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("the store's writer thread has stopped")]
    WriterGone,
    #[error("{0}: in use by another orchard coordinator (one coordinator per database)")]
    InUse(PathBuf),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

pub type JobId = u64;
pub type UnitId = u64;

/// A job row as loaded at startup.
#[derive(Debug, Clone)]
pub struct JobRow {
    pub id: JobId,
    pub family: String,
    pub params_json: String,
    pub state: String,
    pub bound: u64,
    pub created_ms: u64,
    pub finished_ms: Option<u64>,
    pub result_json: Option<String>,
    pub results_file: Option<String>,
    pub error: Option<String>,
    /// Nodes that cancelled units had searched before they were cancelled.
    pub discarded_nodes: u64,
    /// Units of the job, all states; those done or cancelled; and the nodes
    /// of its stored results. A job that is over keeps these figures in its
    /// status after a restart (its units are not loaded).
    pub units_total: u64,
    pub units_resolved: u64,
    pub nodes: u64,
}

/// A unit row as loaded at startup.
#[derive(Debug, Clone)]
pub struct UnitRow {
    pub id: UnitId,
    pub job_id: JobId,
    pub position: Vec<u8>,
    pub state: String,
    pub payload: Vec<u8>,
    /// The committed summary, for done units.
    pub summary: Option<Vec<u8>>,
}

/// One unit of a job as the units file lists it (see [`Store::unit_ledger`]).
#[derive(Debug, Clone)]
pub struct LedgerRow {
    pub id: UnitId,
    /// The unit whose split produced it (none for a root unit).
    pub parent: Option<UnitId>,
    /// `done`, `cancelled` or `pending`.
    pub state: String,
    /// How many times it was leased (more than once: a lease expired).
    pub leases: u64,
    pub payload: Vec<u8>,
    /// For a done unit: the nodes it reported and the worker that did.
    pub nodes: Option<u64>,
    pub worker: Option<String>,
    /// For a unit cancelled while a worker searched it: the nodes that
    /// worker had reported in its last heartbeat (work thrown away).
    pub discarded: u64,
}

/// A unit to insert: its id, its place in the search order, its payload.
#[derive(Debug, Clone)]
pub struct NewUnit {
    pub id: UnitId,
    /// Where the unit sits in the sequential search order: the path of
    /// child indices from the job's root, each a big-endian u32, so that
    /// comparing positions as bytes compares them in search order.
    pub position: Vec<u8>,
    pub payload: Vec<u8>,
}

/// One change to the durable state. Applied in order within a transaction.
#[derive(Debug)]
pub enum Write {
    InsertJob {
        id: JobId,
        family: String,
        params_json: String,
        created_ms: u64,
    },
    InsertUnits {
        job_id: JobId,
        parent: Option<UnitId>,
        units: Vec<NewUnit>,
    },
    /// The unit's result: done, its summary, and the rest split off it.
    CompleteUnit {
        unit_id: UnitId,
        job_id: JobId,
        nodes: u64,
        summary: Vec<u8>,
        worker: String,
        rest: Vec<NewUnit>,
        done_ms: u64,
    },
    /// Counts a lease (for auditing re-runs after failures).
    Leased {
        unit_ids: Vec<UnitId>,
    },
    SetBound {
        job_id: JobId,
        bound: u64,
    },
    /// Units cancelled as moot, each with the nodes a worker had already
    /// searched in it (0 if it was not running).
    CancelUnits {
        units: Vec<(UnitId, u64)>,
    },
    /// Lemmas a worker shared (see the `ShareLemmas` RPC). Queued without
    /// waiting: losing some in a crash only loses work they would save.
    InsertLemmas {
        job_id: JobId,
        source: u64,
        blob: Vec<u8>,
    },
    /// The job is over: its state, answer or error. Its lemmas are deleted.
    FinishJob {
        job_id: JobId,
        state: &'static str,
        finished_ms: u64,
        result_json: Option<String>,
        results_file: Option<String>,
        error: Option<String>,
    },
}

struct Batch {
    writes: Vec<Write>,
    done: Option<oneshot::Sender<Result<(), String>>>,
}

/// Handle to the store. Cheap to clone.
#[derive(Clone)]
pub struct Store {
    tx: mpsc::Sender<Batch>,
    path: PathBuf,
}

fn crc(bytes: &[u8]) -> i64 {
    i64::from(crc32fast::hash(bytes))
}

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn to_u64(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

/// What the header of the database behind `conn` says: `None` for an empty
/// database (no schema yet), the schema version of an orchard database this
/// build can read, and an error for anything else (a file that is not
/// SQLite fails at the first read). Reads only.
pub(crate) fn schema_version(conn: &Connection, path: &Path) -> Result<Option<i32>, StoreError> {
    let foreign = |reason: String| StoreError::Foreign {
        path: path.to_path_buf(),
        reason,
    };
    let app_id: i32 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .map_err(|e| foreign(e.to_string()))?;
    let version: i32 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(|e| foreign(e.to_string()))?;
    let tables: i64 = conn
        .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
        .map_err(|e| foreign(e.to_string()))?;
    if app_id == 0 && version == 0 && tables == 0 {
        Ok(None)
    } else if app_id != APPLICATION_ID {
        Err(foreign(format!("application_id is {app_id:#x}")))
    } else if !(1..=SCHEMA_VERSION).contains(&version) {
        Err(StoreError::Version {
            path: path.to_path_buf(),
            found: version,
        })
    } else {
        Ok(Some(version))
    }
}

/// Opens (or creates) the database at `path`, refusing foreign or corrupt
/// files before writing anything. `Some(version)`: an older schema that
/// [`migrate`] must bring up to date, which the caller does only once it
/// holds the database's lock.
fn open_connection(path: &Path) -> Result<(Connection, Option<i32>), StoreError> {
    let conn = Connection::open(path)?;
    // Reading the header is the first access: nothing is written before it.
    let version = schema_version(&conn, path)?;
    if version.is_none() {
        conn.execute_batch("PRAGMA journal_mode = WAL;")?;
        conn.execute_batch(&format!(
            "BEGIN;
             PRAGMA application_id = {APPLICATION_ID};
             PRAGMA user_version = {SCHEMA_VERSION};
             CREATE TABLE jobs (
                 id INTEGER PRIMARY KEY,
                 family TEXT NOT NULL,
                 params_json TEXT NOT NULL,
                 state TEXT NOT NULL,
                 bound INTEGER NOT NULL DEFAULT 0,
                 created_ms INTEGER NOT NULL,
                 finished_ms INTEGER,
                 result_json TEXT,
                 results_file TEXT,
                 error TEXT
             );
             CREATE TABLE units (
                 id INTEGER PRIMARY KEY,
                 job_id INTEGER NOT NULL REFERENCES jobs(id),
                 parent_id INTEGER,
                 position BLOB NOT NULL,
                 state TEXT NOT NULL,
                 payload BLOB NOT NULL,
                 payload_crc INTEGER NOT NULL,
                 lease_count INTEGER NOT NULL DEFAULT 0,
                 done_ms INTEGER,
                 discarded_nodes INTEGER NOT NULL DEFAULT 0
             );
             CREATE INDEX units_by_job_state ON units(job_id, state);
             CREATE TABLE results (
                 unit_id INTEGER PRIMARY KEY REFERENCES units(id),
                 job_id INTEGER NOT NULL,
                 nodes INTEGER NOT NULL,
                 summary BLOB NOT NULL,
                 summary_crc INTEGER NOT NULL,
                 worker TEXT NOT NULL,
                 reported_ms INTEGER NOT NULL
             );
             {CREATE_LEMMAS}
             COMMIT;"
        ))?;
    } else {
        conn.execute_batch("PRAGMA journal_mode = WAL;")?;
    }
    conn.execute_batch("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;")?;
    Ok((conn, version.filter(|&v| v < SCHEMA_VERSION)))
}

/// Brings a database of an older schema version up to [`SCHEMA_VERSION`], in
/// one transaction (a crash leaves it at the old version, untouched).
/// Version 2 added `units.discarded_nodes`, version 3 the `lemmas` table.
pub(crate) fn migrate(conn: &Connection, from: i32) -> Result<(), StoreError> {
    let v2 = if from < 2 {
        "ALTER TABLE units ADD COLUMN discarded_nodes INTEGER NOT NULL DEFAULT 0;"
    } else {
        ""
    };
    conn.execute_batch(&format!(
        "BEGIN IMMEDIATE;
         {v2}
         {CREATE_LEMMAS}
         PRAGMA user_version = {SCHEMA_VERSION};
         COMMIT;"
    ))?;
    Ok(())
}

/// Everything needed to rebuild the coordinator's state.
pub struct Loaded {
    pub jobs: Vec<JobRow>,
    /// Units of unfinished jobs (pending, and done with their summaries).
    pub units: Vec<UnitRow>,
    /// (job, position) of every unit of an unfinished job that was
    /// cancelled as moot: over, but counted among the job's units.
    pub cancelled: Vec<(JobId, Vec<u8>)>,
    pub max_unit_id: UnitId,
    /// Bytes of lemmas stored per running job.
    pub lemma_bytes: Vec<(JobId, u64)>,
}

/// Lemmas read for one worker (see [`Store::lemmas_after`]).
#[derive(Debug, Default)]
pub struct LemmaPage {
    pub blobs: Vec<Vec<u8>>,
    /// The `seq` of the last row read: where the next page starts.
    pub cursor: u64,
    /// Rows were left for the next page.
    pub more: bool,
}

impl Store {
    /// Opens the database and loads the state of every job. Starts the
    /// writer thread.
    pub fn open(path: &Path) -> Result<(Store, Loaded), StoreError> {
        let (conn, old_version) = open_connection(path)?;
        // Two coordinators on one database would hand out the same units
        // under different ids: hold an exclusive advisory lock (flock, which
        // does not interfere with SQLite's own fcntl locks) for as long as
        // the writer runs.
        let lock = std::fs::File::open(path).map_err(|source| StoreError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(StoreError::InUse(path.to_path_buf()))
            }
            Err(std::fs::TryLockError::Error(source)) => {
                return Err(StoreError::Io {
                    path: path.to_path_buf(),
                    source,
                })
            }
        }
        // Only the holder of the lock changes the schema (not a second
        // coordinator about to be refused, under a running one's feet).
        if let Some(from) = old_version {
            migrate(&conn, from)?;
            tracing::info!(
                path = %path.display(),
                "database schema migrated from version {from} to {SCHEMA_VERSION}"
            );
        }
        let loaded = load(&conn)?;
        let (tx, rx) = mpsc::channel::<Batch>();
        thread::Builder::new()
            .name("orchard-store".into())
            .spawn(move || {
                let _lock = lock;
                writer(conn, rx)
            })
            .expect("spawn store writer thread");
        Ok((
            Store {
                tx,
                path: path.to_path_buf(),
            },
            loaded,
        ))
    }

    /// Commits `writes` in one transaction (possibly grouped with others)
    /// and returns once they are durable.
    pub async fn commit(&self, writes: Vec<Write>) -> Result<(), StoreError> {
        let (done, wait) = oneshot::channel();
        self.tx
            .send(Batch {
                writes,
                done: Some(done),
            })
            .map_err(|_| StoreError::WriterGone)?;
        match wait.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(StoreError::Corrupt(e)),
            Err(_) => Err(StoreError::WriterGone),
        }
    }

    /// Every unit of a job, in id order, with the nodes each reported. Read
    /// on a connection of its own (read-only: the database is in WAL mode,
    /// so this does not block the writer), and only after the writes it must
    /// see have committed.
    pub fn unit_ledger(&self, job_id: JobId) -> Result<Vec<LedgerRow>, StoreError> {
        let conn = self.reader()?;
        let mut stmt = conn.prepare(
            "SELECT u.id, u.parent_id, u.state, u.lease_count, u.payload, r.nodes, r.worker,
                    u.discarded_nodes
             FROM units u LEFT JOIN results r ON r.unit_id = u.id
             WHERE u.job_id = ?1 ORDER BY u.id",
        )?;
        let rows = stmt.query_map(params![to_i64(job_id)], |r| {
            Ok(LedgerRow {
                id: to_u64(r.get(0)?),
                parent: r.get::<_, Option<i64>>(1)?.map(to_u64),
                state: r.get(2)?,
                leases: to_u64(r.get(3)?),
                payload: r.get(4)?,
                nodes: r.get::<_, Option<i64>>(5)?.map(to_u64),
                worker: r.get(6)?,
                discarded: to_u64(r.get(7)?),
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The stored results of a job's done units, in id order, each checked
    /// against its CRC: everything its aggregate was built from, so a
    /// finished job's report can be built again (see
    /// [`crate::results::rebuild_report`]). Read like [`Store::unit_ledger`].
    pub fn done_summaries(&self, job_id: JobId) -> Result<Vec<Vec<u8>>, StoreError> {
        let conn = self.reader()?;
        let mut stmt = conn.prepare(
            "SELECT u.id, r.summary, r.summary_crc
             FROM units u JOIN results r ON r.unit_id = u.id
             WHERE u.job_id = ?1 AND u.state = 'done' ORDER BY u.id",
        )?;
        let mut rows = stmt.query(params![to_i64(job_id)])?;
        let mut summaries = Vec::new();
        while let Some(r) = rows.next()? {
            let summary: Vec<u8> = r.get(1)?;
            if crc(&summary) != r.get::<_, i64>(2)? {
                return Err(StoreError::Corrupt(format!(
                    "unit {}: summary checksum mismatch",
                    to_u64(r.get(0)?)
                )));
            }
            summaries.push(summary);
        }
        Ok(summaries)
    }

    /// A read-only connection of its own (the database is in WAL mode, so
    /// reading does not block the writer).
    fn reader(&self) -> Result<Connection, StoreError> {
        Ok(Connection::open_with_flags(
            &self.path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?)
    }

    /// The lemmas of `job_id` stored after `after` by other sources than
    /// `source`, oldest first, up to about `max_bytes` (at least one blob).
    /// A blob whose CRC does not match is skipped with a warning. Read on a
    /// connection of its own, like [`Store::unit_ledger`]: rows the writer
    /// has not committed yet come in a later page (the writer commits them
    /// in `seq` order, so a cursor never passes over one).
    pub fn lemmas_after(
        &self,
        job_id: JobId,
        after: u64,
        source: u64,
        max_bytes: usize,
    ) -> Result<LemmaPage, StoreError> {
        let conn = self.reader()?;
        let mut stmt = conn.prepare(
            "SELECT seq, source, blob, blob_crc FROM lemmas
             WHERE job_id = ?1 AND seq > ?2 ORDER BY seq",
        )?;
        let mut rows = stmt.query(params![to_i64(job_id), to_i64(after)])?;
        let mut page = LemmaPage {
            cursor: after,
            ..LemmaPage::default()
        };
        let mut bytes = 0usize;
        while let Some(r) = rows.next()? {
            let seq = to_u64(r.get(0)?);
            if r.get::<_, i64>(1)? == source as i64 {
                page.cursor = seq;
                continue;
            }
            let blob: Vec<u8> = r.get(2)?;
            if !page.blobs.is_empty() && bytes + blob.len() > max_bytes {
                page.more = true;
                break;
            }
            page.cursor = seq;
            if crc(&blob) != r.get::<_, i64>(3)? {
                tracing::warn!(job = job_id, seq, "lemma blob checksum mismatch; skipped");
                continue;
            }
            bytes += blob.len();
            page.blobs.push(blob);
        }
        Ok(page)
    }

    /// Queues `writes` without waiting for them (bookkeeping whose loss in a
    /// crash is harmless, such as lease counts).
    pub fn enqueue(&self, writes: Vec<Write>) {
        let _ = self.tx.send(Batch { writes, done: None });
    }

    /// Waits until every write sent before this call has committed (the
    /// writer applies batches in the order they were sent), so that a read
    /// on another connection, such as [`Store::unit_ledger`], sees them.
    pub async fn flush(&self) -> Result<(), StoreError> {
        self.commit(Vec::new()).await
    }
}

pub(crate) fn load(conn: &Connection) -> Result<Loaded, StoreError> {
    let mut jobs = Vec::new();
    let mut stmt = conn.prepare(
        "SELECT id, family, params_json, state, bound, created_ms, finished_ms, result_json, results_file, error,
                (SELECT coalesce(sum(u.discarded_nodes), 0) FROM units u WHERE u.job_id = jobs.id),
                (SELECT count(*) FROM units u WHERE u.job_id = jobs.id),
                (SELECT count(*) FROM units u WHERE u.job_id = jobs.id AND u.state IN ('done', 'cancelled')),
                (SELECT coalesce(sum(r.nodes), 0) FROM results r WHERE r.job_id = jobs.id)
         FROM jobs ORDER BY id",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok(JobRow {
            id: to_u64(r.get(0)?),
            family: r.get(1)?,
            params_json: r.get(2)?,
            state: r.get(3)?,
            bound: to_u64(r.get(4)?),
            created_ms: to_u64(r.get(5)?),
            finished_ms: r.get::<_, Option<i64>>(6)?.map(to_u64),
            result_json: r.get(7)?,
            results_file: r.get(8)?,
            error: r.get(9)?,
            discarded_nodes: to_u64(r.get(10)?),
            units_total: to_u64(r.get(11)?),
            units_resolved: to_u64(r.get(12)?),
            nodes: to_u64(r.get(13)?),
        })
    })?;
    for row in rows {
        jobs.push(row?);
    }
    let mut units = Vec::new();
    let mut stmt = conn.prepare(
        "SELECT u.id, u.job_id, u.state, u.payload, u.payload_crc, r.summary, r.summary_crc, u.position
         FROM units u JOIN jobs j ON j.id = u.job_id
         LEFT JOIN results r ON r.unit_id = u.id
         WHERE j.state = 'running' AND u.state IN ('pending', 'done')
         ORDER BY u.id",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let id = to_u64(r.get(0)?);
        let state: String = r.get(2)?;
        let payload: Vec<u8> = r.get(3)?;
        if crc(&payload) != r.get::<_, i64>(4)? {
            return Err(StoreError::Corrupt(format!(
                "unit {id}: payload checksum mismatch"
            )));
        }
        let summary: Option<Vec<u8>> = r.get(5)?;
        if state == "done" {
            let Some(s) = &summary else {
                return Err(StoreError::Corrupt(format!(
                    "unit {id}: done without a result"
                )));
            };
            if crc(s) != r.get::<_, i64>(6)? {
                return Err(StoreError::Corrupt(format!(
                    "unit {id}: summary checksum mismatch"
                )));
            }
        }
        units.push(UnitRow {
            id,
            job_id: to_u64(r.get(1)?),
            position: r.get(7)?,
            state,
            payload,
            summary,
        });
    }
    let mut stmt = conn.prepare(
        "SELECT u.job_id, u.position FROM units u JOIN jobs j ON j.id = u.job_id
         WHERE j.state = 'running' AND u.state = 'cancelled'",
    )?;
    let cancelled = stmt
        .query_map([], |r| Ok((to_u64(r.get(0)?), r.get(1)?)))?
        .collect::<Result<Vec<_>, _>>()?;
    let max_unit_id: Option<i64> = conn
        .query_row("SELECT max(id) FROM units", [], |r| r.get(0))
        .optional()?
        .flatten();
    let mut stmt = conn.prepare(
        "SELECT l.job_id, sum(length(l.blob)) FROM lemmas l JOIN jobs j ON j.id = l.job_id
         WHERE j.state = 'running' GROUP BY l.job_id",
    )?;
    let lemma_bytes = stmt
        .query_map([], |r| Ok((to_u64(r.get(0)?), to_u64(r.get(1)?))))?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Loaded {
        jobs,
        units,
        cancelled,
        max_unit_id: max_unit_id.map(to_u64).unwrap_or(0),
        lemma_bytes,
    })
}

/// The writer thread: groups queued batches into one transaction each.
fn writer(mut conn: Connection, rx: mpsc::Receiver<Batch>) {
    while let Ok(first) = rx.recv() {
        let mut batches = vec![first];
        while let Ok(more) = rx.try_recv() {
            batches.push(more);
            if batches.len() >= 4096 {
                break;
            }
        }
        let t0 = std::time::Instant::now();
        let outcome = apply(&mut conn, &batches).map_err(|e| e.to_string());
        tracing::trace!(
            batches = batches.len(),
            micros = t0.elapsed().as_micros() as u64,
            "store commit"
        );
        if let Err(e) = &outcome {
            tracing::error!("store commit failed: {e}");
        }
        for b in batches {
            if let Some(done) = b.done {
                let _ = done.send(outcome.clone());
            }
        }
    }
}

fn apply(conn: &mut Connection, batches: &[Batch]) -> Result<(), rusqlite::Error> {
    let tx = conn.transaction()?;
    for w in batches.iter().flat_map(|b| &b.writes) {
        apply_one(&tx, w)?;
    }
    tx.commit()
}

fn insert_units(
    tx: &rusqlite::Transaction<'_>,
    job_id: JobId,
    parent: Option<UnitId>,
    units: &[NewUnit],
) -> Result<(), rusqlite::Error> {
    let mut stmt = tx.prepare_cached(
        "INSERT INTO units (id, job_id, parent_id, position, state, payload, payload_crc)
         VALUES (?1, ?2, ?3, ?4, 'pending', ?5, ?6)",
    )?;
    for u in units {
        stmt.execute(params![
            to_i64(u.id),
            to_i64(job_id),
            parent.map(to_i64),
            u.position,
            u.payload,
            crc(&u.payload)
        ])?;
    }
    Ok(())
}

fn apply_one(tx: &rusqlite::Transaction<'_>, w: &Write) -> Result<(), rusqlite::Error> {
    match w {
        Write::InsertJob {
            id,
            family,
            params_json,
            created_ms,
        } => {
            tx.execute(
                "INSERT INTO jobs (id, family, params_json, state, created_ms) VALUES (?1, ?2, ?3, 'running', ?4)",
                params![to_i64(*id), family, params_json, to_i64(*created_ms)],
            )?;
        }
        Write::InsertUnits {
            job_id,
            parent,
            units,
        } => insert_units(tx, *job_id, *parent, units)?,
        Write::CompleteUnit {
            unit_id,
            job_id,
            nodes,
            summary,
            worker,
            rest,
            done_ms,
        } => {
            tx.prepare_cached("UPDATE units SET state = 'done', done_ms = ?2 WHERE id = ?1")?
                .execute(params![to_i64(*unit_id), to_i64(*done_ms)])?;
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
            insert_units(tx, *job_id, Some(*unit_id), rest)?;
        }
        Write::Leased { unit_ids } => {
            let mut stmt =
                tx.prepare_cached("UPDATE units SET lease_count = lease_count + 1 WHERE id = ?1")?;
            for id in unit_ids {
                stmt.execute(params![to_i64(*id)])?;
            }
        }
        Write::SetBound { job_id, bound } => {
            tx.prepare_cached("UPDATE jobs SET bound = max(bound, ?2) WHERE id = ?1")?
                .execute(params![to_i64(*job_id), to_i64(*bound)])?;
        }
        Write::CancelUnits { units } => {
            let mut stmt = tx.prepare_cached(
                "UPDATE units SET state = 'cancelled', discarded_nodes = ?2
                 WHERE id = ?1 AND state = 'pending'",
            )?;
            for (id, discarded) in units {
                stmt.execute(params![to_i64(*id), to_i64(*discarded)])?;
            }
        }
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
            if *state != "done" {
                tx.execute(
                    "UPDATE units SET state = 'cancelled' WHERE job_id = ?1 AND state = 'pending'",
                    params![to_i64(*job_id)],
                )?;
            }
            tx.execute(
                "DELETE FROM lemmas WHERE job_id = ?1",
                params![to_i64(*job_id)],
            )?;
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
        }
    }
    Ok(())
}
