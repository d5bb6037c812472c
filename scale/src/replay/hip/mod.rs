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
//!
//! [`HipPnGame`] is the same family as the proof-number policy's game
//! (`super::pns`): the tree by the family's rules, leaves searched cold.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use orchard_core::{
    codec, Exploration, Host, LemmaExchange, LocalFlags, MootJudge, MootUnits, SearchFamily,
};
use orchard_hip::solve::{
    value_of, Expect, HipSolve, Key, SolveParams, SolveSummary, SolveUnit, StampedLemma, TreeNode,
    Window,
};

use super::pns::{PnGame, Position, Sharing};
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
    #[error("position {moves:?}: {reason}")]
    Position { moves: Vec<u8>, reason: String },
    #[error("census file {path}: {source}")]
    Census {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A `hip-solve` job read from its database, every unit's summary merged
/// by the family's own merge: what the proof-number replay and the proof
/// (`orchard-scale proof`) start from.
pub struct MergedJob {
    pub record: Record,
    pub params: SolveParams,
    /// The job, its table sized by the `cache_mib` it was read with.
    pub job: HipSolve,
    pub merged: SolveSummary,
    /// The units whose summaries were merged.
    pub units: usize,
}

/// The record at `db`, which must be a `hip-solve` job's, its parameters,
/// the host with a table of `cache_mib` MiB and the job made from them.
fn open_job(
    db: &Path,
    cache_mib: Option<u64>,
) -> Result<(Record, SolveParams, Host, HipSolve), HipReplayError> {
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
    let job =
        HipSolve::new(params.clone(), &host).map_err(|e| HipReplayError::Params(e.to_string()))?;
    Ok((record, params, host, job))
}

impl MergedJob {
    pub fn read(db: &Path, cache_mib: Option<u64>) -> Result<MergedJob, HipReplayError> {
        let (record, params, _, job) = open_job(db, cache_mib)?;
        let mut merged = SolveSummary::default();
        let mut units = 0;
        for row in &record.units {
            let bad = |reason: String| HipReplayError::Unit { id: row.id, reason };
            if let Some((_, s)) = &row.result {
                let s: SolveSummary = codec::decode(s).map_err(|e| bad(e.to_string()))?;
                job.merge(&mut merged, s).map_err(|e| bad(e.to_string()))?;
                units += 1;
            }
        }
        Ok(MergedJob {
            record,
            params,
            job,
            merged,
            units,
        })
    }
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
        let (record, params, host, job) = open_job(db, cache_mib)?;
        let census_path = PathBuf::from(format!("{}.census", db.display()));
        let census: HashMap<u64, (u64, Option<Vec<u8>>)> = read_census::<CensusFile>(&census_path)?
            .unwrap_or_default()
            .into_iter()
            .map(|(id, n, s)| (id, (n, s)))
            .collect();
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

/// `hip-solve` as the proof-number policy's game ([`PnGame`]): the
/// family's rules give the tree ([`HipSolve::tree_node`], one node per
/// canonical position), the family's solver the leaves. The question is
/// whether the first player reaches at least `target` (0: a draw, 1: a
/// win); a leaf is searched as a unit whose window asks exactly that
/// (`(target - 1, target)`), on a fresh job (an empty table sized to the
/// search: four entries a node of its budget, at most the job's), only as
/// far as the replay needs, with a budget that at least doubles from one
/// try to the next. What the searches learn is kept beside the database
/// (`DB.pn-census`, by canonical position and question).
///
/// The warm models ([`super::pns::Tables`]) search leaves on jobs that
/// persist across a replay's searches instead (each a `HipSolve` job, whose
/// table lives as long as the job: what a worker keeps from one unit to the
/// next), with the table a worker of the job would have (`--cache-mib`, else
/// the family's for the board); their costs depend on the history, so the
/// census neither answers nor keeps them. Streaming lemmas, each carries
/// the node count of its search when it was stored
/// ([`HipSolve::take_stamped_lemmas`]): a lemma stored `s` nodes into a
/// search started at `t` is published at `t + s + delay`.
pub struct HipPnGame {
    job: HipSolve,
    params: SolveParams,
    /// The largest table of a leaf's search, MiB.
    max_mib: u64,
    /// The warm models' tables: `cache_mib` as given.
    warm_host: Host,
    warm: Vec<HipSolve>,
    /// Sharing lemmas at a search's end: each published blob (when, by
    /// which table), and which tables learnt it.
    lemmas: Option<Vec<Published>>,
    /// Streaming lemmas: the delay, and each search's lemmas.
    stream: Option<(u64, Vec<Streamed>)>,
    target: i8,
    /// The most a leaf is searched for (the policy's budget).
    budget: u64,
    positions: Vec<PnPos>,
    index: HashMap<Key, usize>,
    census: HashMap<(Key, i8), (u64, Option<bool>)>,
    /// Where the census is kept (`None`: nowhere, a game made from
    /// parameters alone).
    census_path: Option<PathBuf>,
    census_new: bool,
    /// The record's root value (P1's interval), and the recorded run's
    /// nodes and discarded nodes.
    pub recorded_value: (i8, i8),
    pub recorded_work: (u64, u64),
    /// Leaf searches run in this process, and their nodes.
    pub searches: (usize, u64),
}

/// A search's lemmas, published at `at` by table `by`.
struct Published {
    at: u64,
    by: usize,
    blob: Vec<u8>,
    learnt: Vec<bool>,
}

/// A search's lemmas, streamed: the search started at `start` on table
/// `by`; its lemmas in the order stored (their stamps ascend: one search
/// is one solver, whose node count only grows); `learnt[t]`: how many of
/// them (a prefix) table `t` has learnt.
struct Streamed {
    start: u64,
    by: usize,
    lemmas: Vec<StampedLemma>,
    learnt: Vec<usize>,
}

impl Streamed {
    /// How many of its lemmas are published by time `t` with `delay`.
    fn published_by(&self, t: u64, delay: u64) -> usize {
        self.lemmas
            .partition_point(|l| self.start.saturating_add(l.at_node).saturating_add(delay) <= t)
    }
}

/// A position of the proof-number tree.
struct PnPos {
    moves: Vec<u8>,
    node: TreeNode,
    /// Nodes and answer, once a search finished; else the budget a search
    /// ran out of.
    found: Option<(u64, bool)>,
    at_least: u64,
}

/// The smallest budget of a leaf's search.
const MIN_LEAF_SEARCH: u64 = 1 << 12;

/// The proof-number census file: (key, target, nodes, answer) of each
/// position searched; without an answer, the budget it ran out of.
type PnCensusFile = Vec<(u64, u64, i8, u64, Option<bool>)>;

impl HipPnGame {
    /// Reads the record at `db` (for the job and its value) and the
    /// proof-number census beside it; `target`: the question (default:
    /// from the job's guess, a win where the first player is expected to
    /// win, else a draw); leaves are searched for at most `budget` nodes,
    /// with a table of at most `cache_mib` MiB (default 256).
    pub fn open(
        db: &Path,
        target: Option<i8>,
        budget: u64,
        cache_mib: Option<u64>,
    ) -> Result<HipPnGame, HipReplayError> {
        let MergedJob {
            record,
            params,
            merged,
            ..
        } = MergedJob::read(db, None)?;
        let recorded_value =
            value_of(&params, &merged, &[]).map_err(|e| HipReplayError::Params(e.to_string()))?;
        let census_path = PathBuf::from(format!("{}.pn-census", db.display()));
        let census = read_census::<PnCensusFile>(&census_path)?
            .unwrap_or_default()
            .into_iter()
            .map(|(a, b, t, n, v)| (((a, b), t), (n, v)))
            .collect();
        let mut game = HipPnGame::from_params(params, target, budget, cache_mib)?;
        game.census = census;
        game.census_path = Some(census_path);
        game.recorded_value = recorded_value;
        game.recorded_work = record.work();
        // The root was interned before the census was read.
        game.positions.clear();
        game.index.clear();
        game.intern(Vec::new())?;
        Ok(game)
    }

    /// The game of a job of parameters `params`, without a record or a
    /// census (nothing recorded: value (-1, 1), work 0); the rest as
    /// [`HipPnGame::open`].
    pub fn from_params(
        params: SolveParams,
        target: Option<i8>,
        budget: u64,
        cache_mib: Option<u64>,
    ) -> Result<HipPnGame, HipReplayError> {
        let job = HipSolve::new(params.clone(), &Host::default())
            .map_err(|e| HipReplayError::Params(e.to_string()))?;
        let target = target.unwrap_or(match params.expect {
            Some(Expect::First) => 1,
            _ => 0,
        });
        let warm_host = Host {
            cache_mib,
            ..Host::default()
        };
        let mut game = HipPnGame {
            job,
            params,
            max_mib: cache_mib.unwrap_or(256),
            warm_host,
            warm: Vec::new(),
            lemmas: None,
            stream: None,
            target,
            budget,
            positions: Vec::new(),
            index: HashMap::new(),
            census: HashMap::new(),
            census_path: None,
            census_new: false,
            recorded_value: (-1, 1),
            recorded_work: (0, 0),
            searches: (0, 0),
        };
        game.intern(Vec::new())?;
        Ok(game)
    }

    /// The depth of the job's root units.
    pub fn root_depth(&self) -> u32 {
        self.params.root_depth()
    }

    /// The question: does the first player reach at least this?
    pub fn target(&self) -> i8 {
        self.target
    }

    /// P1's value interval that an answer at the root means.
    pub fn value_of_answer(&self, answer: bool) -> (i8, i8) {
        let ceiling = self.positions[0].node.p1_ceiling;
        if answer {
            (self.target, ceiling)
        } else {
            (-1, self.target - 1)
        }
    }

    /// Positions searched (in this process or an earlier one), to the
    /// end, and their nodes (the last search of each).
    pub fn census_counts(&self) -> (usize, usize, u64) {
        let mine = self.census.iter().filter(|((_, t), _)| *t == self.target);
        let finished = mine.clone().filter(|(_, (_, v))| v.is_some()).count();
        let nodes = mine.clone().map(|(_, (n, _))| n).sum();
        (mine.count(), finished, nodes)
    }

    /// The position reached by `moves`, numbered once per canonical key.
    fn intern(&mut self, moves: Vec<u8>) -> Result<usize, HipReplayError> {
        let node = self
            .job
            .tree_node(&moves)
            .map_err(|e| HipReplayError::Params(e.to_string()))?;
        if let Some(&i) = self.index.get(&node.key) {
            return Ok(i);
        }
        let (found, at_least) = match self.census.get(&(node.key, self.target)) {
            Some(&(n, Some(v))) => (Some((n, v)), 0),
            Some(&(n, None)) => (None, n),
            None => (None, 0),
        };
        let i = self.positions.len();
        self.index.insert(node.key, i);
        self.positions.push(PnPos {
            moves,
            node,
            found,
            at_least,
        });
        Ok(i)
    }

    /// Writes what the searches learnt beside the database, if anything
    /// since the last write.
    pub fn save_census(&mut self) -> Result<(), HipReplayError> {
        let Some(census_path) = self.census_path.clone().filter(|_| self.census_new) else {
            return Ok(());
        };
        let mut file: PnCensusFile = self
            .census
            .iter()
            .map(|(&((a, b), t), &(n, v))| (a, b, t, n, v))
            .collect();
        file.sort_unstable();
        std::fs::write(&census_path, codec::encode(&file)).map_err(|source| {
            HipReplayError::Census {
                path: census_path.clone(),
                source,
            }
        })?;
        self.census_new = false;
        Ok(())
    }

    /// Searches position `p`'s question on `job` (its table as it is) for
    /// at most `budget` nodes: the nodes, and the answer if it finished.
    fn explore_on(
        &self,
        job: &HipSolve,
        p: usize,
        budget: u64,
    ) -> Result<(u64, Option<bool>), HipReplayError> {
        let pos = &self.positions[p];
        let bad = |reason: String| HipReplayError::Position {
            moves: pos.moves.clone(),
            reason,
        };
        let unit = SolveUnit {
            moves: pos.moves.clone(),
            window: Window::new(self.target - 1, self.target)
                .expect("a target of 0 or 1 makes a window"),
        };
        let flags = LocalFlags::default();
        let explored = job
            .explore(&unit, &flags.context(budget))
            .map_err(|e| bad(e.to_string()))?;
        Ok(match explored {
            Exploration::Finished(s) => {
                let (lo, hi) = s
                    .known
                    .get(&pos.node.key)
                    .map(|k| (k.lo, k.hi))
                    .ok_or_else(|| bad("the search recorded nothing of it".into()))?;
                let answer = if lo >= self.target {
                    true
                } else if hi < self.target {
                    false
                } else {
                    return Err(bad(format!("{lo}..={hi} does not answer the question")));
                };
                (s.nodes, Some(answer))
            }
            Exploration::Split { explored, .. } => (explored.nodes.max(budget), None),
        })
    }

    /// Searches position `p` on a fresh job for at most `budget` nodes.
    fn search(&mut self, p: usize, budget: u64) -> Result<(), HipReplayError> {
        let pos = &self.positions[p];
        let bad = |reason: String| HipReplayError::Position {
            moves: pos.moves.clone(),
            reason,
        };
        // Four entries a node, in MiB, a power of two.
        let mib = (budget.saturating_mul(32) >> 20)
            .max(1)
            .next_power_of_two()
            .min(self.max_mib);
        let host = Host {
            cache_mib: Some(mib),
            ..Host::default()
        };
        let cold = HipSolve::new(self.params.clone(), &host).map_err(|e| bad(e.to_string()))?;
        let key = pos.node.key;
        let label = self.job.unit_label(&SolveUnit {
            moves: pos.moves.clone(),
            window: Window::FULL,
        });
        let entry = self.explore_on(&cold, p, budget)?;
        self.searches.0 += 1;
        self.searches.1 += entry.0;
        let pos = &mut self.positions[p];
        match entry {
            (n, Some(v)) => pos.found = Some((n, v)),
            (n, None) => pos.at_least = pos.at_least.max(n),
        }
        self.census.insert((key, self.target), entry);
        self.census_new = true;
        if self.searches.0.is_multiple_of(250) {
            eprintln!(
                "pn census: {} searches, {} nodes (last: {label}, {} nodes, {:?})",
                self.searches.0, self.searches.1, entry.0, entry.1
            );
            self.save_census()?;
        }
        Ok(())
    }
}

impl PnGame for HipPnGame {
    type Error = HipReplayError;

    fn root(&mut self) -> Result<usize, HipReplayError> {
        Ok(0)
    }

    fn position(&mut self, p: usize) -> Result<Position, HipReplayError> {
        let node = &self.positions[p].node;
        let settled = match node.over {
            Some(v) => Some(v >= self.target),
            None => (node.p1_ceiling < self.target).then_some(false),
        };
        let or = node.p1_to_move;
        let kids = if settled.is_some() {
            Vec::new()
        } else {
            node.children.clone()
        };
        let mut children = Vec::with_capacity(kids.len());
        for m in kids {
            children.push(self.intern(m)?);
        }
        Ok(Position {
            or,
            settled,
            children,
        })
    }

    fn cost_within(
        &mut self,
        p: usize,
        budget: u64,
    ) -> Result<Option<(u64, bool)>, HipReplayError> {
        let pos = &self.positions[p];
        if pos.found.is_none() && pos.at_least < budget {
            let b = budget
                .max(pos.at_least.saturating_mul(2))
                .max(MIN_LEAF_SEARCH)
                .min(self.budget.max(budget));
            self.search(p, b)?;
        }
        Ok(self.positions[p].found.filter(|&(n, _)| n <= budget))
    }

    fn reset_tables(&mut self, tables: usize, sharing: Sharing) -> Result<(), HipReplayError> {
        self.warm = (0..tables)
            .map(|_| HipSolve::new(self.params.clone(), &self.warm_host))
            .collect::<Result<_, _>>()
            .map_err(|e| HipReplayError::Params(e.to_string()))?;
        self.lemmas = (sharing == Sharing::AtEnd).then(Vec::new);
        self.stream = match sharing {
            Sharing::Streamed { delay } => Some((delay, Vec::new())),
            _ => None,
        };
        if sharing != Sharing::None {
            // Taking (nothing yet) makes each table keep its lemmas.
            for job in &self.warm {
                job.take(0);
            }
        }
        Ok(())
    }

    fn search_on(
        &mut self,
        table: usize,
        p: usize,
        budget: u64,
        start: u64,
    ) -> Result<Option<(u64, bool)>, HipReplayError> {
        let tables = self.warm.len();
        if let Some(pool) = self.lemmas.as_mut() {
            for l in pool.iter_mut() {
                if l.at <= start && l.by != table && !l.learnt[table] {
                    self.warm[table]
                        .learn(&l.blob)
                        .map_err(|e| HipReplayError::Params(e.to_string()))?;
                    l.learnt[table] = true;
                }
            }
        }
        if let Some((delay, pool)) = self.stream.as_mut() {
            for l in pool.iter_mut().filter(|l| l.by != table) {
                let (from, to) = (l.learnt[table], l.published_by(start, *delay));
                if to > from {
                    self.warm[table]
                        .learn_stamped_lemmas(&l.lemmas[from..to])
                        .map_err(|e| HipReplayError::Params(e.to_string()))?;
                    l.learnt[table] = to;
                }
            }
        }
        let (nodes, answer) = self.explore_on(&self.warm[table], p, budget)?;
        if let Some((_, pool)) = self.stream.as_mut() {
            let mut lemmas = self.warm[table].take_stamped_lemmas();
            // Already in order (one solver); stable, so a tie keeps the
            // order stored.
            lemmas.sort_by_key(|l| l.at_node);
            if !lemmas.is_empty() {
                pool.push(Streamed {
                    start,
                    by: table,
                    lemmas,
                    learnt: vec![0; tables],
                });
            }
        }
        if let Some(pool) = self.lemmas.as_mut() {
            let blob = self.warm[table].take(usize::MAX);
            if !blob.is_empty() {
                pool.push(Published {
                    at: start + nodes.min(budget),
                    by: table,
                    blob,
                    learnt: vec![false; tables],
                });
            }
        }
        self.searches.0 += 1;
        self.searches.1 += nodes;
        Ok(answer.map(|v| (nodes, v)).filter(|&(n, _)| n <= budget))
    }

    fn cancelled(&mut self, table: usize, start: u64, at: u64) -> Result<(), HipReplayError> {
        if let Some((_, pool)) = self.stream.as_mut() {
            // A worker has one search at a time, and its searches start at
            // distinct times (each costs at least a node).
            if let Some(l) = pool
                .iter_mut()
                .rev()
                .find(|l| l.by == table && l.start == start)
            {
                let kept = l.published_by(at, 0);
                l.lemmas.truncate(kept);
            }
        }
        Ok(())
    }
}

/// A census file's entries, or `None` when there is no file yet (a replay
/// that has searched nothing).
fn read_census<T: serde::de::DeserializeOwned>(
    path: &std::path::Path,
) -> Result<Option<T>, HipReplayError> {
    let census = |source| HipReplayError::Census {
        path: path.to_path_buf(),
        source,
    };
    match std::fs::read(path) {
        Ok(bytes) => codec::decode::<T>(&bytes)
            .map(Some)
            .map_err(|e| census(std::io::Error::other(e))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(census(e)),
    }
}

#[cfg(test)]
mod tests;
