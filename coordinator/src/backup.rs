//! Backups of a coordinator's database, taken while it runs.
//!
//! The store survives crashes of the processes on its machine; it does not
//! survive the loss of that machine's disk. A search of several days needs
//! a copy elsewhere, and the copy must be one the coordinator can resume
//! from: a consistent snapshot (one read transaction, so it never holds half
//! of a split), verified before it replaces the previous backup.
//!
//! Invariants:
//! * The source is opened read-only: a backup never writes to it, and a
//!   coordinator using it goes on undisturbed (WAL readers do not block the
//!   writer).
//! * The copy is written to a temporary file beside the destination,
//!   checked (`PRAGMA integrity_check`, then loaded exactly as a
//!   coordinator loads it, every stored checksum included), fsync'd, and
//!   only then renamed over the destination; the directory is fsync'd
//!   after. A failure at any step leaves the previous backup as it was.
//! * The destination, when it exists, must itself be an orchard database:
//!   a backup never overwrites anything else.
//!
//! Results files (written when a job finishes) live beside the database and
//! are not part of the backup; everything needed to resume or to report a
//! job's answer is in the database.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags, ToSql};

use crate::status::JobState;
use crate::store::{self, StoreError, UnitState, SCHEMA_VERSION};

/// What a backup holds, as counted in the verified copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackupSummary {
    pub jobs: u64,
    /// Jobs still running (the ones a resume continues).
    pub running_jobs: u64,
    pub units: u64,
    pub done_units: u64,
    /// Size of the backup file.
    pub bytes: u64,
}

/// Copies the orchard database `src` to `dst` (see the module invariants).
pub fn backup(src: &Path, dst: &Path) -> Result<BackupSummary, StoreError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| StoreError::Io { path, source }
    };
    if !src.is_file() {
        return Err(StoreError::Io {
            path: src.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such database"),
        });
    }
    check_target(src, dst)?;
    let source = Connection::open_with_flags(src, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    check_header(&source, src)?;
    let dir = target_dir(dst);
    let name = dst
        .file_name()
        .ok_or_else(|| refused(dst, "not a file name".into()))?;
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let _ = std::fs::remove_file(&tmp);
    let result = (|| {
        // One read transaction: a consistent snapshot, compacted.
        source.execute(
            "VACUUM INTO ?1",
            [tmp.to_str()
                .ok_or_else(|| refused(&tmp, "not UTF-8".into()))?],
        )?;
        let summary = verify(&tmp)?;
        std::fs::File::open(&tmp)
            .and_then(|f| f.sync_all())
            .map_err(io(&tmp))?;
        std::fs::rename(&tmp, dst).map_err(io(dst))?;
        std::fs::File::open(&dir)
            .and_then(|d| d.sync_all())
            .map_err(io(&dir))?;
        Ok(summary)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Whether `dst` may receive a backup of `src`: its directory exists, and it
/// is not `src` itself nor a file other than an earlier backup. Checked
/// before every backup, and by a coordinator before it opens its database
/// (a bad `--backup-to` is refused before anything is written).
pub fn check_target(src: &Path, dst: &Path) -> Result<(), StoreError> {
    if same_file(src, dst) {
        return Err(refused(dst, "is the database itself".into()));
    }
    if !target_dir(dst).is_dir() {
        return Err(refused(dst, "its directory does not exist".into()));
    }
    if dst.exists() {
        let earlier = Connection::open_with_flags(dst, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(StoreError::from)
            .and_then(|conn| check_header(&conn, dst));
        if earlier.is_err() {
            return Err(refused(
                dst,
                "exists and is not an orchard database; only an earlier backup is replaced".into(),
            ));
        }
    }
    Ok(())
}

fn target_dir(dst: &Path) -> PathBuf {
    match dst.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn refused(path: &Path, reason: String) -> StoreError {
    StoreError::Refused {
        path: path.to_path_buf(),
        reason,
    }
}

/// True when `a` and `b` name the same file (existing or not).
fn same_file(a: &Path, b: &Path) -> bool {
    let resolved = |p: &Path| -> Option<PathBuf> {
        if let Ok(c) = p.canonicalize() {
            return Some(c);
        }
        Some(target_dir(p).canonicalize().ok()?.join(p.file_name()?))
    };
    matches!((resolved(a), resolved(b)), (Some(a), Some(b)) if a == b)
}

/// An orchard database of a schema this build can read (see
/// [`store::schema_version`]; an empty database is not one).
fn check_header(conn: &Connection, path: &Path) -> Result<i32, StoreError> {
    store::schema_version(conn, path)?.ok_or_else(|| StoreError::Foreign {
        path: path.to_path_buf(),
        reason: "empty database".into(),
    })
}

/// Checks the copy as a coordinator would load it (a copy of an older
/// schema is brought up to date first, so that it is ready to resume).
fn verify(copy: &Path) -> Result<BackupSummary, StoreError> {
    let conn = Connection::open(copy)?;
    let version = check_header(&conn, copy)?;
    let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
    if check != "ok" {
        return Err(StoreError::Corrupt(format!(
            "the copy fails SQLite's integrity check: {check}"
        )));
    }
    // The copy is a plain file, not a WAL database: it must be usable alone.
    conn.query_row("PRAGMA journal_mode = DELETE", [], |_| Ok(()))?;
    if version < SCHEMA_VERSION {
        store::migrate(&conn, version)?;
    }
    let loaded = store::load(&conn)?;
    let count = |sql: &str, params: &[&dyn ToSql]| -> Result<u64, StoreError> {
        let n: i64 = conn.query_row(sql, params, |r| r.get(0))?;
        Ok(u64::try_from(n).unwrap_or(0))
    };
    let units = count("SELECT count(*) FROM units", &[])?;
    let done_units = count(
        "SELECT count(*) FROM units WHERE state = ?1",
        &[&UnitState::Done],
    )?;
    drop(conn);
    let bytes = std::fs::metadata(copy)
        .map_err(|source| StoreError::Io {
            path: copy.to_path_buf(),
            source,
        })?
        .len();
    Ok(BackupSummary {
        jobs: loaded.jobs.len() as u64,
        running_jobs: loaded
            .jobs
            .iter()
            .filter(|j| j.state == JobState::Running.as_str())
            .count() as u64,
        units,
        done_units,
        bytes,
    })
}
