//! The durable store: one SQLite database (WAL, `synchronous = FULL`) with
//! the tables `jobs`, `units`, `results` and `lemmas`, and for verified
//! jobs `replicas`, `mismatches` and `exclusions`.
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
//! This module holds the handle ([`Store`]), opening it (under the
//! database's lock), and the types that cross its boundary (the
//! [`Write`]s, the rows, [`Loaded`]). The rest, one concern each:
//!
//! * [`schema`] — creating the database, recognising an orchard one,
//!   migrating an older schema; the words of a unit's [`UnitState`].
//! * [`writer`] — the one writer thread and its grouped commits.
//! * [`load`](mod@load) — the state read at startup.
//! * [`digest`] — each job's unit count and digest, and its row's
//!   checksum, that make a deleted, moved or edited row visible.
//! * [`ledger`] — a job's units and results read back, for its files.
//! * [`lemmas`] — the shared lemmas read back, a page at a time.

mod digest;
mod ledger;
mod lemmas;
mod load;
mod schema;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{mpsc, Arc};

use rusqlite::Connection;

pub use crate::identity::WorkerIdentity;

pub use digest::{reseal_job, reseal_job_row};
pub(crate) use load::load;
pub(crate) use schema::{migrate, schema_version};
pub use schema::{UnitState, SCHEMA_VERSION};
use writer::Batch;
pub use writer::CommitOutcome;

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
    /// A commit failed because the disk is full: nothing of it was written,
    /// and the next commit may succeed once space returns.
    #[error("the database's disk is full ({0}); nothing was written, retry when space returns")]
    DiskFull(String),
    /// A commit failed for another reason (read-only, failing disk): the
    /// writes of that transaction were rolled back, none is durable.
    #[error("database write failed: {0}")]
    CommitFailed(String),
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
    /// Workers that explore each unit (1: reports trusted as they come).
    pub replicas: u32,
    /// Units done (for a verified job: whose replicas agreed) and the
    /// mismatches recorded, for the status of a job that is over.
    pub units_done: u64,
    pub mismatches: u64,
}

/// A replica's report of a unit not yet decided, as loaded at startup.
#[derive(Debug, Clone)]
pub struct ReplicaRow {
    pub unit_id: UnitId,
    /// The worker's description and name (host) when it reported.
    pub worker: String,
    pub host: String,
    /// The worker's durable identity (schema version 6; a replica stored
    /// before it is known by its declared name, `name:<host>`).
    pub identity: WorkerIdentity,
    pub nodes: u64,
    pub bound: u64,
    pub summary: Vec<u8>,
    /// The units the family split off in this replica.
    pub rest: Vec<Vec<u8>>,
}

/// A worker's identity excluded from a job (schema version 6), as loaded
/// at startup.
#[derive(Debug, Clone)]
pub struct ExclusionRow {
    pub job_id: JobId,
    pub identity: WorkerIdentity,
}

/// A recorded disagreement between two replicas of a unit.
#[derive(Debug, Clone)]
pub struct MismatchRow {
    pub unit_id: UnitId,
    pub unit_label: String,
    pub worker_a: String,
    /// The durable identities of both workers (keys of
    /// [`WorkerIdentity`]; empty in a mismatch stored before schema
    /// version 6). Which of them lost the vote is recorded once it is
    /// decided (`loser_a`, `loser_b` in the table).
    pub identity_a: String,
    pub summary_a: String,
    pub worker_b: String,
    pub identity_b: String,
    pub summary_b: String,
}

/// A mismatch as stored, with the verdict the vote gave (see
/// [`Write::Exclude`]): which side lost, if the vote was decided.
#[derive(Debug, Clone)]
pub struct RecordedMismatch {
    pub row: MismatchRow,
    /// Whether worker A, worker B was found on the losing side (outvoted
    /// by the majority of the unit's replicas). Neither: the vote was not
    /// decided when the job ended.
    pub loser_a: bool,
    pub loser_b: bool,
}

/// A unit row as loaded at startup.
#[derive(Debug, Clone)]
pub struct UnitRow {
    pub id: UnitId,
    pub job_id: JobId,
    pub position: Vec<u8>,
    pub state: UnitState,
    pub payload: Vec<u8>,
    /// The committed summary, for done units.
    pub summary: Option<Vec<u8>>,
}

/// A failed job's units as a retry reads them (see [`Store::job_units`]).
#[derive(Debug, Clone, Default)]
pub struct JobUnits {
    /// Its pending units (those it had not searched when it failed) and
    /// its done ones, with their summaries.
    pub units: Vec<UnitRow>,
    /// The positions of its units cancelled as moot.
    pub cancelled: Vec<Vec<u8>>,
}

/// One unit of a job as the units file lists it (see [`Store::unit_ledger`]).
#[derive(Debug, Clone)]
pub struct LedgerRow {
    pub id: UnitId,
    /// The unit whose split produced it (none for a root unit).
    pub parent: Option<UnitId>,
    pub state: UnitState,
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
        replicas: u32,
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
    /// One replica's report of a unit of a verified job, kept until the
    /// unit is decided (its `CompleteUnit` deletes it).
    Replica {
        unit_id: UnitId,
        job_id: JobId,
        worker: String,
        host: String,
        identity: WorkerIdentity,
        nodes: u64,
        bound: u64,
        summary: Vec<u8>,
        rest: Vec<Vec<u8>>,
        reported_ms: u64,
    },
    /// Two replicas of a unit disagreed.
    Mismatch {
        job_id: JobId,
        row: MismatchRow,
        found_ms: u64,
    },
    /// A worker found on the losing side of a vote in `unit_id` gets no
    /// more units of the job: the exclusion row (sealed with its CRC), and
    /// the unit's mismatch rows naming the identity marked as lost. Written
    /// in the transaction of the report that decided the vote.
    Exclude {
        job_id: JobId,
        unit_id: UnitId,
        identity: WorkerIdentity,
        found_ms: u64,
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
    /// The job's `count` oldest blobs of lemmas are deleted, to keep its
    /// share of the store within its window (see
    /// `Scheduler::admit_lemmas`).
    EvictLemmas {
        job_id: JobId,
        count: u64,
    },
    /// The job is over: its state, answer or error. Its lemmas and the
    /// replicas of its undecided units are deleted. A cancelled job's
    /// pending units are cancelled; a failed job's stay pending, so that
    /// [`Write::RetryJob`] can take it up again exactly where it stopped.
    FinishJob {
        job_id: JobId,
        state: &'static str,
        finished_ms: u64,
        result_json: Option<String>,
        results_file: Option<String>,
        error: Option<String>,
    },
    /// A failed job runs again (see `Scheduler::begin_retry`): its state
    /// `running`, its end, answer and error cleared. Its units are as it
    /// left them: the pending ones are searched, the done ones stay done.
    RetryJob {
        job_id: JobId,
    },
}

impl Write {
    /// Whether `writes` add units to a job: work for every idle worker,
    /// not only the one that asked (see `Scheduler::reopen_unsettled`).
    pub fn any_inserts_units(writes: &[Write]) -> bool {
        writes
            .iter()
            .any(|w| matches!(w, Write::InsertUnits { .. }))
    }
}

/// Handle to the store. Cheap to clone.
#[derive(Clone)]
pub struct Store {
    tx: mpsc::Sender<Batch>,
    outcomes: tokio::sync::watch::Receiver<CommitOutcome>,
    path: PathBuf,
    health: Arc<StoreHealth>,
}

/// What the writer thread has seen of the disk, for `/metrics` and health
/// checks: updated after every commit.
#[derive(Debug, Default)]
pub struct StoreHealth {
    /// Commits that failed (each rolled back whole).
    pub commit_failures: AtomicU64,
    /// Whether the last commit failed because the disk was full.
    pub disk_full: AtomicBool,
    /// Whether the last commit failed (for any reason).
    pub failing: AtomicBool,
}

impl Store {
    /// What the writer has seen of the disk so far.
    pub fn health(&self) -> &StoreHealth {
        &self.health
    }
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

/// Everything needed to rebuild the coordinator's state.
pub struct Loaded {
    pub jobs: Vec<JobRow>,
    /// Units of unfinished jobs (pending, and done with their summaries).
    pub units: Vec<UnitRow>,
    /// (job, position) of every unit of an unfinished job that was
    /// cancelled as moot: over, but counted among the job's units.
    pub cancelled: Vec<(JobId, Vec<u8>)>,
    pub max_unit_id: UnitId,
    /// The length of each blob of lemmas stored per running job, oldest
    /// first.
    pub lemma_blobs: Vec<(JobId, Vec<u64>)>,
    /// Replica reports of the pending units of running jobs.
    pub replicas: Vec<ReplicaRow>,
    /// Every job's excluded workers, each row checked against its CRC.
    pub exclusions: Vec<ExclusionRow>,
}

impl Store {
    /// Opens the database and loads the state of every job. Starts the
    /// writer thread.
    pub fn open(path: &Path) -> Result<(Store, Loaded), StoreError> {
        let (conn, old_version) = schema::open_connection(path)?;
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
        let health = Arc::new(StoreHealth::default());
        let (tx, outcomes) = writer::start(conn, lock, health.clone());
        Ok((
            Store {
                tx,
                outcomes,
                path: path.to_path_buf(),
                health,
            },
            loaded,
        ))
    }

    /// A read-only connection of its own (the database is in WAL mode, so
    /// reading does not block the writer).
    fn reader(&self) -> Result<Connection, StoreError> {
        Ok(Connection::open_with_flags(
            &self.path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?)
    }
}
