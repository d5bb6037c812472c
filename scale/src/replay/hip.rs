//! The replay's [`Oracle`] for `hip-solve`: the family's own judge answers
//! which units are moot and which must wait (the code the coordinator
//! runs, `MootUnits::judge` on everything merged), so the replay follows
//! the job's winner guess, young brothers wait and cancellation exactly.
//!
//! A unit's cost and result come from the record where the unit ended.
//! Units that never ran in the recorded run (moot before they were
//! leased, or cancelled while running) are searched here, each on a fresh
//! job (an empty table of its own, as on a machine that has run nothing
//! else yet): the census. A unit is searched only as far as the replay
//! needs to know its cost (a speculative unit cancelled after x nodes
//! needs only "more than x"), with a budget that at least doubles from one
//! try to the next. What the census learns is kept in a file beside the
//! database (`DB.census`), so a second replay of the same record searches
//! only what the first did not need.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use orchard_core::{codec, Exploration, Host, LocalFlags, MootJudge, MootUnits, SearchFamily};
use orchard_hip::solve::{HipSolve, SolveParams, SolveSummary, SolveUnit};

use super::record::{Record, RecordError};
use super::Oracle;

/// Why a `hip-solve` replay could not go on.
#[derive(Debug, thiserror::Error)]
pub enum HipReplayError {
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error("the record is of family {0}, not hip-solve")]
    Family(String),
    #[error("the record's parameters: {0}")]
    Params(String),
    #[error("unit {id}: {reason}")]
    Unit { id: u64, reason: String },
    #[error("census file {path}: {source}")]
    Census {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A unit of the record, decoded.
struct Unit {
    id: u64,
    unit: SolveUnit,
    /// Nodes and summary: the record's, or the census's once searched.
    found: Option<(u64, SolveSummary)>,
    /// Without `found`: the census searched this many nodes without
    /// finishing it.
    at_least: u64,
    /// From the census, not the record.
    searched_here: bool,
    rest: Vec<usize>,
}

/// `hip-solve`'s answers for a replay (see the module's doc).
pub struct HipOracle {
    job: HipSolve,
    params: SolveParams,
    host: Host,
    units: Vec<Unit>,
    roots: Vec<usize>,
    merged: SolveSummary,
    judge: Box<dyn MootJudge<SolveUnit>>,
    census_path: PathBuf,
    /// Census results not yet written to the file.
    census_new: bool,
    /// The recorded run's nodes and discarded nodes.
    pub recorded_work: (u64, u64),
}

/// The smallest budget of a census search (each allocates a table).
const MIN_SEARCH: u64 = 1 << 17;

/// The census file: (unit id, nodes, encoded summary) of each unit the
/// census searched; without a summary, the nodes it searched without
/// finishing the unit.
type CensusFile = Vec<(u64, u64, Option<Vec<u8>>)>;

impl HipOracle {
    /// Reads the record at `db` and the census beside it, if any; units
    /// the census lacks are searched with a table of `cache_mib` MiB.
    pub fn open(db: &Path, cache_mib: Option<u64>) -> Result<HipOracle, HipReplayError> {
        let record = Record::read(db)?;
        if record.family != "hip-solve" {
            return Err(HipReplayError::Family(record.family));
        }
        let params: SolveParams = serde_json::from_str(&record.params_json)
            .map_err(|e| HipReplayError::Params(e.to_string()))?;
        let host = Host {
            cache_mib,
            ..Host::default()
        };
        let job = HipSolve::new(params.clone(), &host)
            .map_err(|e| HipReplayError::Params(e.to_string()))?;
        let census_path = PathBuf::from(format!("{}.census", db.display()));
        let census: HashMap<u64, (u64, Option<Vec<u8>>)> = match std::fs::read(&census_path) {
            Ok(bytes) => codec::decode::<CensusFile>(&bytes)
                .map_err(|e| HipReplayError::Census {
                    path: census_path.clone(),
                    source: std::io::Error::other(e),
                })?
                .into_iter()
                .map(|(id, n, s)| (id, (n, s)))
                .collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => HashMap::new(),
            Err(source) => {
                return Err(HipReplayError::Census {
                    path: census_path,
                    source,
                })
            }
        };
        let index: HashMap<u64, usize> = record
            .units
            .iter()
            .enumerate()
            .map(|(i, u)| (u.id, i))
            .collect();
        let mut units = Vec::with_capacity(record.units.len());
        let mut roots = Vec::new();
        for (i, row) in record.units.iter().enumerate() {
            let bad = |reason: String| HipReplayError::Unit { id: row.id, reason };
            let unit: SolveUnit = codec::decode(&row.payload).map_err(|e| bad(e.to_string()))?;
            let (found, at_least, searched_here) = match (&row.result, census.get(&row.id)) {
                (Some((n, s)), _) => (Some((*n, s)), 0, false),
                (None, Some((n, Some(s)))) => (Some((*n, s)), 0, true),
                (None, Some((n, None))) => (None, *n, true),
                (None, None) => (None, 0, false),
            };
            let found = match found {
                Some((n, s)) => Some((n, codec::decode(s).map_err(|e| bad(e.to_string()))?)),
                None => None,
            };
            units.push(Unit {
                id: row.id,
                unit,
                found,
                at_least,
                searched_here,
                rest: Vec::new(),
            });
            // A unit with a parent in the record is not a root: it is its
            // parent's rest (below, once every unit is decoded).
            if row.parent.and_then(|p| index.get(&p)).is_none() {
                roots.push(i);
            }
        }
        for (i, row) in record.units.iter().enumerate() {
            if let Some(&p) = row.parent.and_then(|p| index.get(&p)) {
                units[p].rest.push(i);
            }
        }
        let merged = SolveSummary::default();
        let judge = job.judge(&merged);
        Ok(HipOracle {
            job,
            params,
            host,
            units,
            roots,
            merged,
            judge,
            census_path,
            census_new: false,
            recorded_work: record.work(),
        })
    }

    /// Units in the record, units that ended in it, and units the census
    /// searched (in this process or an earlier one).
    pub fn counts(&self) -> (usize, usize, usize) {
        let searched = self.units.iter().filter(|u| u.searched_here).count();
        let recorded = self
            .units
            .iter()
            .filter(|u| u.found.is_some() && !u.searched_here)
            .count();
        (self.units.len(), recorded, searched)
    }

    /// Units the census finished, and the nodes of its last search of
    /// each unit it searched (finished or not).
    pub fn census(&self) -> (usize, u64) {
        let searched = self.units.iter().filter(|u| u.searched_here);
        let finished = searched.clone().filter(|u| u.found.is_some()).count();
        let nodes = searched
            .map(|u| u.found.as_ref().map_or(u.at_least, |f| f.0))
            .sum();
        (finished, nodes)
    }

    /// The family's report of what is merged (the root's value once a
    /// replay has ended).
    pub fn answer(&self) -> serde_json::Value {
        self.job.report(&self.merged).json
    }

    /// Writes what the census learnt beside the database, if it learnt
    /// anything since the last write.
    pub fn save_census(&mut self) -> Result<(), HipReplayError> {
        if !self.census_new {
            return Ok(());
        }
        let file: CensusFile = self
            .units
            .iter()
            .filter(|u| u.searched_here)
            .map(|u| match &u.found {
                Some((n, s)) => (u.id, *n, Some(codec::encode(s))),
                None => (u.id, u.at_least, None),
            })
            .collect();
        std::fs::write(&self.census_path, codec::encode(&file)).map_err(|source| {
            HipReplayError::Census {
                path: self.census_path.clone(),
                source,
            }
        })?;
        self.census_new = false;
        Ok(())
    }

    /// Searches unit `i` on a fresh job (the census) with a budget of
    /// `budget` nodes: found, or known to cost more.
    fn search(&mut self, i: usize, budget: u64) -> Result<(), HipReplayError> {
        let u = &self.units[i];
        let bad = |reason: String| HipReplayError::Unit { id: u.id, reason };
        let cold =
            HipSolve::new(self.params.clone(), &self.host).map_err(|e| bad(e.to_string()))?;
        let flags = LocalFlags::default();
        let explored = cold
            .explore(&u.unit, &flags.context(budget))
            .map_err(|e| bad(e.to_string()))?;
        let label = self.job.unit_label(&u.unit);
        let u = &mut self.units[i];
        match explored {
            Exploration::Finished(s) => {
                eprintln!("census: unit {} ({label}): {} nodes", u.id, s.nodes);
                u.found = Some((s.nodes, s));
            }
            Exploration::Split { explored, .. } => {
                eprintln!(
                    "census: unit {} ({label}): more than {} nodes",
                    u.id, explored.nodes
                );
                u.at_least = u.at_least.max(explored.nodes).max(budget);
            }
        }
        u.searched_here = true;
        self.census_new = true;
        Ok(())
    }
}

impl Oracle for HipOracle {
    type Error = HipReplayError;

    fn roots(&self) -> Vec<usize> {
        self.roots.clone()
    }

    fn rest(&self, unit: usize) -> Vec<usize> {
        self.units[unit].rest.clone()
    }

    fn cost_within(&mut self, unit: usize, budget: u64) -> Result<Option<u64>, HipReplayError> {
        let u = &self.units[unit];
        if u.found.is_none() && u.at_least < budget {
            // At least double the last try, so that a unit asked about
            // again and again costs at most twice its largest search.
            let b = budget.max(u.at_least.saturating_mul(2)).max(MIN_SEARCH);
            self.search(unit, b)?;
        }
        Ok(self.units[unit]
            .found
            .as_ref()
            .map(|f| f.0)
            .filter(|&n| n <= budget))
    }

    fn reset(&mut self) {
        self.merged = SolveSummary::default();
        self.judge = self.job.judge(&self.merged);
    }

    fn merge(&mut self, unit: usize) -> Result<(), HipReplayError> {
        let u = &self.units[unit];
        let found = u
            .found
            .as_ref()
            .expect("a unit's cost is found before it runs");
        self.job
            .merge(&mut self.merged, found.1.clone())
            .map_err(|e| HipReplayError::Unit {
                id: u.id,
                reason: e.to_string(),
            })?;
        self.judge = self.job.judge(&self.merged);
        Ok(())
    }

    fn is_moot(&self, unit: usize) -> bool {
        self.judge.is_moot(&self.units[unit].unit)
    }

    fn must_wait(&self, unit: usize) -> bool {
        self.judge.must_wait(&self.units[unit].unit)
    }
}
