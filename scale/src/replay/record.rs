//! The record a replay starts from: a finished job's database, as the
//! coordinator leaves it. Every unit's row has what the replay needs
//! except for units that never ran: its place (`position`, the lease
//! order; `parent_id`, the unit whose split made it), its payload (for
//! `hip-solve` the moves to its position), the nodes it searched before it
//! was cancelled as moot, and for a unit that ended its result
//! (`results.nodes`, the summary of what it found). So a run records
//! nothing beyond what the coordinator already stores; a unit that never
//! ran (moot before it was leased, or cancelled while running) has no cost
//! or result, and the family's side of the replay finds them by searching
//! the unit (see `hip`, the census).

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

/// Why a record could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("{path}: {source}")]
    Sql {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("{path}: {found} jobs, a record holds one")]
    Jobs { path: PathBuf, found: usize },
}

/// One unit's row.
#[derive(Debug, Clone)]
pub struct UnitRow {
    pub id: u64,
    pub parent: Option<u64>,
    pub payload: Vec<u8>,
    /// Nodes and summary, if the unit ended and was merged.
    pub result: Option<(u64, Vec<u8>)>,
    /// Nodes searched before it was cancelled as moot, if it was.
    pub discarded: u64,
}

/// A job's units in position order (the order the coordinator leases in),
/// with its family and parameters.
#[derive(Debug, Clone)]
pub struct Record {
    pub family: String,
    pub params_json: String,
    pub units: Vec<UnitRow>,
}

impl Record {
    /// The recorded run's work: nodes of the units that ended, and nodes
    /// discarded in units cancelled as moot.
    pub fn work(&self) -> (u64, u64) {
        let nodes = self
            .units
            .iter()
            .filter_map(|u| u.result.as_ref())
            .map(|r| r.0)
            .sum();
        (nodes, self.units.iter().map(|u| u.discarded).sum())
    }

    /// Reads the one job of the database at `path` (read-only).
    pub fn read(path: &Path) -> Result<Record, RecordError> {
        let sql = |source| RecordError::Sql {
            path: path.to_path_buf(),
            source,
        };
        let db =
            Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(sql)?;
        let jobs: Vec<(i64, String, String)> = db
            .prepare("SELECT id, family, params_json FROM jobs")
            .and_then(|mut s| {
                s.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                    .collect()
            })
            .map_err(sql)?;
        let [(job, family, params_json)] =
            <[_; 1]>::try_from(jobs).map_err(|j| RecordError::Jobs {
                path: path.to_path_buf(),
                found: j.len(),
            })?;
        let units = db
            .prepare(
                "SELECT u.id, u.parent_id, u.payload, u.discarded_nodes, r.nodes, r.summary \
                 FROM units u LEFT JOIN results r ON r.unit_id = u.id \
                 WHERE u.job_id = ?1 ORDER BY u.position, u.id",
            )
            .and_then(|mut s| {
                s.query_map([job], |r| {
                    let nodes: Option<i64> = r.get(4)?;
                    let summary: Option<Vec<u8>> = r.get(5)?;
                    Ok(UnitRow {
                        id: r.get::<_, i64>(0)? as u64,
                        parent: r.get::<_, Option<i64>>(1)?.map(|p| p as u64),
                        payload: r.get(2)?,
                        discarded: r.get::<_, i64>(3)? as u64,
                        result: nodes.zip(summary).map(|(n, s)| (n as u64, s)),
                    })
                })?
                .collect()
            })
            .map_err(sql)?;
        Ok(Record {
            family,
            params_json,
            units,
        })
    }
}
