//! The database's schema: creating it in an empty file, recognising an
//! orchard database by its header (`application_id`, `user_version`) and
//! refusing anything else before writing a byte, and migrating an older
//! schema version in place. And [`UnitState`], the words a unit row's
//! `state` column holds.

use std::path::Path;
use std::str::FromStr;

use rusqlite::types::{ToSql, ToSqlOutput, ValueRef};
use rusqlite::Connection;

use super::StoreError;

/// `PRAGMA application_id` of an orchard database: "ORCH".
pub const APPLICATION_ID: i32 = 0x4F52_4348;
/// `PRAGMA user_version`: the schema version. Older versions are migrated in
/// place when opened (see [`migrate`]).
pub const SCHEMA_VERSION: i32 = 7;

/// Where a stored unit is in its life: the `state` column of `units`.
/// A leased unit is still pending here: leases live in the scheduler's
/// memory only, and a restart hands the unit out again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnitState {
    /// Not searched yet (or leased, or given back).
    Pending,
    /// Searched: its result is in `results`.
    Done,
    /// Over without a result: moot, or its job was cancelled. Counted
    /// among its job's units, never searched.
    Cancelled,
}

impl UnitState {
    /// Every state, for the tests that take each one through the database.
    pub const ALL: [UnitState; 3] = [UnitState::Pending, UnitState::Done, UnitState::Cancelled];

    /// The word stored in the database (and printed in a units file): the
    /// only place these spellings live, so existing databases keep loading
    /// as long as they do not change.
    pub fn as_str(self) -> &'static str {
        match self {
            UnitState::Pending => "pending",
            UnitState::Done => "done",
            UnitState::Cancelled => "cancelled",
        }
    }
}

/// A `state` column holding a word [`UnitState`] has no name for: a
/// damaged or edited database, never something orchard writes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown state {0:?}")]
pub struct UnknownUnitState(pub String);

impl FromStr for UnitState {
    type Err = UnknownUnitState;

    fn from_str(s: &str) -> Result<UnitState, UnknownUnitState> {
        UnitState::ALL
            .into_iter()
            .find(|state| state.as_str() == s)
            .ok_or_else(|| UnknownUnitState(s.to_string()))
    }
}

impl std::fmt::Display for UnitState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Bound as a parameter, a state is its word: SQL names states through
/// parameters rather than literals of its own.
impl ToSql for UnitState {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(ValueRef::Text(
            self.as_str().as_bytes(),
        )))
    }
}

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

/// The columns that make a deleted, moved or edited row visible (schema
/// version 5, see [`super::digest`]): each job's count of unit rows, the
/// sum of their hashes, and the hash of the job row itself.
const JOB_SEALS: &str = "unit_count INTEGER NOT NULL DEFAULT 0,
                 unit_digest INTEGER NOT NULL DEFAULT 0,
                 row_crc INTEGER NOT NULL DEFAULT 0";

/// The tables of verified jobs (schema version 4): the replicas reported
/// for units not yet decided (deleted when their unit is done), and the
/// mismatches found between replicas, each with both summaries in the
/// family's words.
const CREATE_REPLICAS: &str = "CREATE TABLE replicas (
                 id INTEGER PRIMARY KEY AUTOINCREMENT,
                 unit_id INTEGER NOT NULL,
                 job_id INTEGER NOT NULL,
                 worker TEXT NOT NULL,
                 host TEXT NOT NULL,
                 nodes INTEGER NOT NULL,
                 bound INTEGER NOT NULL,
                 summary BLOB NOT NULL,
                 summary_crc INTEGER NOT NULL,
                 rest BLOB NOT NULL,
                 reported_ms INTEGER NOT NULL
             );
             CREATE INDEX replicas_by_unit ON replicas(unit_id);
             CREATE TABLE mismatches (
                 id INTEGER PRIMARY KEY AUTOINCREMENT,
                 job_id INTEGER NOT NULL,
                 unit_id INTEGER NOT NULL,
                 unit_label TEXT NOT NULL,
                 worker_a TEXT NOT NULL,
                 summary_a TEXT NOT NULL,
                 worker_b TEXT NOT NULL,
                 summary_b TEXT NOT NULL,
                 found_ms INTEGER NOT NULL
             );
             CREATE INDEX mismatches_by_job ON mismatches(job_id, id);";

/// What schema version 6 adds for durable exclusions: the `exclusions`
/// table (a job, the durable identity of a worker found on the losing side
/// of a vote and its label for people, the unit and mismatch that caused
/// it, when, and a checksum of the row, see [`super::digest::exclusion_hash`]);
/// each replica's worker identity (a replica stored before version 6 was
/// reported under its declared name, its `host`); and in each mismatch the
/// identities of both workers and which of them lost the vote.
const V6: &str = "CREATE TABLE exclusions (
                 id INTEGER PRIMARY KEY AUTOINCREMENT,
                 job_id INTEGER NOT NULL,
                 identity TEXT NOT NULL,
                 label TEXT NOT NULL,
                 unit_id INTEGER NOT NULL,
                 mismatch_id INTEGER,
                 found_ms INTEGER NOT NULL,
                 row_crc INTEGER NOT NULL,
                 UNIQUE (job_id, identity)
             );
             ALTER TABLE replicas ADD COLUMN identity TEXT NOT NULL DEFAULT '';
             ALTER TABLE replicas ADD COLUMN identity_label TEXT NOT NULL DEFAULT '';
             UPDATE replicas SET identity = 'name:' || host, identity_label = 'name:' || host;
             ALTER TABLE mismatches ADD COLUMN identity_a TEXT NOT NULL DEFAULT '';
             ALTER TABLE mismatches ADD COLUMN identity_b TEXT NOT NULL DEFAULT '';
             ALTER TABLE mismatches ADD COLUMN loser_a INTEGER NOT NULL DEFAULT 0;
             ALTER TABLE mismatches ADD COLUMN loser_b INTEGER NOT NULL DEFAULT 0;";

/// What schema version 7 adds: each job's count and digest of its rows
/// beside its units (replicas, mismatches, exclusions, lemmas; see
/// [`super::digest::Rows`]), computed by the migration from the rows it
/// finds; and `bound` joins what the job's `row_crc` covers.
const V7: &str = "ALTER TABLE jobs ADD COLUMN replica_count INTEGER NOT NULL DEFAULT 0;
             ALTER TABLE jobs ADD COLUMN replica_digest INTEGER NOT NULL DEFAULT 0;
             ALTER TABLE jobs ADD COLUMN mismatch_count INTEGER NOT NULL DEFAULT 0;
             ALTER TABLE jobs ADD COLUMN mismatch_digest INTEGER NOT NULL DEFAULT 0;
             ALTER TABLE jobs ADD COLUMN exclusion_count INTEGER NOT NULL DEFAULT 0;
             ALTER TABLE jobs ADD COLUMN exclusion_digest INTEGER NOT NULL DEFAULT 0;
             ALTER TABLE jobs ADD COLUMN lemma_count INTEGER NOT NULL DEFAULT 0;
             ALTER TABLE jobs ADD COLUMN lemma_digest INTEGER NOT NULL DEFAULT 0;";

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
pub(super) fn open_connection(path: &Path) -> Result<(Connection, Option<i32>), StoreError> {
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
                 error TEXT,
                 replicas INTEGER NOT NULL DEFAULT 1,
                 {JOB_SEALS}
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
             {CREATE_REPLICAS}
             {V6}
             {V7}
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
/// Version 2 added `units.discarded_nodes`, version 3 the `lemmas` table,
/// version 4 `jobs.replicas` and the `replicas` and `mismatches` tables
/// (every job of an older database ran with one replica, the default),
/// version 5 each job's unit count, unit digest and row checksum, computed
/// here from the rows as they are (see [`super::digest`]), version 6 the
/// `exclusions` table and the identities of replicas and mismatches ([`V6`]),
/// version 7 the seals of the rows beside the units ([`V7`]), computed
/// here from the rows as they are, like version 5's.
pub(crate) fn migrate(conn: &Connection, from: i32) -> Result<(), StoreError> {
    let v2 = if from < 2 {
        "ALTER TABLE units ADD COLUMN discarded_nodes INTEGER NOT NULL DEFAULT 0;"
    } else {
        ""
    };
    let v3 = if from < 3 { CREATE_LEMMAS } else { "" };
    let v4 = if from < 4 {
        format!(
            "ALTER TABLE jobs ADD COLUMN replicas INTEGER NOT NULL DEFAULT 1;\n{CREATE_REPLICAS}"
        )
    } else {
        String::new()
    };
    let v5 = if from < 5 {
        JOB_SEALS
            .split(',')
            .map(|c| format!("ALTER TABLE jobs ADD COLUMN {};\n", c.trim()))
            .collect::<String>()
    } else {
        String::new()
    };
    let v6 = if from < 6 { V6 } else { "" };
    let v7 = if from < 7 { V7 } else { "" };
    let tx = rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Immediate)?;
    tx.execute_batch(&format!(
        "{v2}
         {v3}
         {v4}
         {v5}
         {v6}
         {v7}
         PRAGMA user_version = {SCHEMA_VERSION};"
    ))?;
    super::digest::reseal_all(&tx)?;
    tx.commit()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_unit_state_goes_through_the_database_as_its_word() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE units (state TEXT NOT NULL)")
            .unwrap();
        for state in UnitState::ALL {
            conn.execute("INSERT INTO units (state) VALUES (?1)", [state])
                .unwrap();
            let stored: String = conn
                .query_row(
                    "SELECT state FROM units WHERE rowid = last_insert_rowid()",
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(stored, state.as_str());
            assert_eq!(stored.parse::<UnitState>(), Ok(state));
            assert_eq!(state.to_string(), stored);
        }
        // The words existing databases hold, pinned.
        let words: Vec<&str> = UnitState::ALL.iter().map(|s| s.as_str()).collect();
        assert_eq!(words, ["pending", "done", "cancelled"]);
    }

    #[test]
    fn a_word_orchard_has_no_state_for_is_refused_by_name() {
        for word in ["leased", "Done", "", "pending "] {
            let err = word.parse::<UnitState>().unwrap_err();
            assert_eq!(err, UnknownUnitState(word.to_string()));
            assert_eq!(err.to_string(), format!("unknown state {word:?}"));
        }
    }
}
