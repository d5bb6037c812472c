//! The search-family abstraction.
//!
//! A *family* is one kind of exhaustive search (Harary's game `hc`, ...). It
//! knows how to cut its search tree into *units* (subtree roots), how to
//! explore one unit within a node budget, and how to combine the *summaries*
//! of explored units into the job's answer. The coordinator and the worker
//! never see a family's types: they move opaque, versioned blobs (see
//! [`crate::codec`]) through [`DynFamily`] and [`PreparedJob`].
//!
//! Invariant that makes distributed counts exact: the units of a job always
//! partition the search tree. A unit is either finished (its summary covers its
//! whole subtree) or split (its summary covers what was explored, and the
//! returned `rest` units cover exactly what was not). Summaries are merged with
//! an associative, commutative operation, so the order in which units finish
//! does not matter.

use std::fmt::Debug;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use serde::{de::DeserializeOwned, Serialize};

use crate::codec::{self, CodecError};
use crate::estimate::Probe;

/// A parameter the user gave is invalid. The message names the parameter.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[error("invalid parameter --{name}: {reason}")]
pub struct ParamError {
    pub name: &'static str,
    pub reason: String,
}

impl ParamError {
    pub fn new(name: &'static str, reason: impl Into<String>) -> Self {
        ParamError {
            name,
            reason: reason.into(),
        }
    }
}

/// Why a unit could not be explored or a summary could not be merged.
#[derive(Debug, thiserror::Error)]
pub enum FamilyError {
    #[error("unknown search family '{0}'")]
    UnknownFamily(String),
    #[error(transparent)]
    Param(#[from] ParamError),
    #[error("malformed parameters: {0}")]
    ParamsJson(String),
    #[error("bad unit: {0}")]
    BadUnit(String),
    #[error(transparent)]
    Codec(#[from] CodecError),
    #[error("count overflow while merging {0}")]
    Overflow(&'static str),
    #[error("search exceeded its capacity: {0}")]
    Capacity(String),
    #[error("invalid environment variable {name}: {reason}")]
    Environment { name: &'static str, reason: String },
    #[error("bad lemmas: {0}")]
    BadLemmas(String),
}

/// What a worker hands to [`SearchFamily::explore`]: the budget and the
/// shared, lock-free channels between the search loop and the outside world.
///
/// The search loop reads these every few thousand nodes, never per node.
pub struct ExploreContext<'a> {
    /// Stop after about this many nodes and hand back the unexplored rest.
    pub budget: u64,
    /// Set from outside (cancellation, shutdown, an idle cluster asking for
    /// work): stop soon and hand back the unexplored rest.
    pub stop: &'a AtomicBool,
    /// A job-wide monotone bound shared by every unit of the job (for `hc`
    /// the best game length found so far). Families that do not use one
    /// ignore it. Only ever raised, with `fetch_max`.
    pub bound: &'a AtomicU64,
    /// Nodes explored so far in this unit, published for heartbeats.
    pub progress: &'a AtomicU64,
}

impl ExploreContext<'_> {
    /// Whether the outside world asked this exploration to stop.
    pub fn stop_requested(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// The result of exploring one unit.
#[derive(Debug, Clone)]
pub enum Exploration<S, U> {
    /// The whole subtree was explored.
    Finished(S),
    /// The budget ran out or a stop was requested: `explored` covers what was
    /// visited, `rest` covers exactly the rest of the subtree, in the order
    /// a sequential search would visit it. The coordinator leases the rest
    /// of a unit before the unit's later siblings, so the cluster consumes
    /// the tree in the sequential search's order.
    Split { explored: S, rest: Vec<U> },
}

/// One search family, with its own typed parameters, units and summaries.
pub trait SearchFamily: Send + Sync + 'static {
    /// The name on the command line and in the store (`hc`).
    const NAME: &'static str;
    /// One line for `--help`.
    const ABOUT: &'static str;

    /// Parameters, parsed from the command line by clap and stored as JSON.
    type Params: clap::Args + Serialize + DeserializeOwned + Clone + Debug + Send + Sync;
    /// The root of a subtree.
    type Unit: Serialize + DeserializeOwned + Clone + Debug + Send;
    /// What exploring some units produced. `Default` is the empty summary.
    type Summary: Serialize + DeserializeOwned + Clone + Debug + Default + Send;

    /// Checks the parameters; the error names the bad one.
    fn validate(params: &Self::Params) -> Result<(), ParamError>;

    /// Checks the settings this family reads from a worker's environment
    /// (such as a memory size), so that a misconfigured worker refuses to
    /// start instead of failing the units of a long job. The default: none.
    fn check_environment() -> Result<(), FamilyError> {
        Ok(())
    }

    /// Writes out now what this family keeps in the process across units
    /// for a later process to load (a cache, such as a transposition table
    /// snapshot). Called once by a worker process that stops gracefully,
    /// after its units have handed back their rest. The default: nothing.
    fn save_caches() {}

    /// The initial units of a job. They partition the search tree, and are
    /// listed in the order a sequential search would visit them: the
    /// coordinator leases units in that order (see [`Exploration::Split`]).
    fn root_units(params: &Self::Params) -> Vec<Self::Unit>;

    /// Explores one unit within `ctx.budget` nodes.
    fn explore(
        params: &Self::Params,
        unit: &Self::Unit,
        ctx: &ExploreContext<'_>,
    ) -> Result<Exploration<Self::Summary, Self::Unit>, FamilyError>;

    /// Folds `other` into `into`. Must be associative and commutative.
    fn merge(
        params: &Self::Params,
        into: &mut Self::Summary,
        other: Self::Summary,
    ) -> Result<(), FamilyError>;

    /// Nodes explored, as counted in a summary.
    fn nodes(summary: &Self::Summary) -> u64;

    /// The job-wide bound that a (merged) summary proves, for [`ExploreContext::bound`].
    fn bound(_summary: &Self::Summary) -> u64 {
        0
    }

    /// The answer: a JSON object, and the lines of the results file.
    fn report(params: &Self::Params, summary: &Self::Summary) -> FamilyReport;

    /// A short human label of a unit, for status displays.
    fn unit_label(params: &Self::Params, unit: &Self::Unit) -> String;

    /// Whether `unit` can no longer change the answer, given everything
    /// merged so far (e.g. in a game search, a sibling already won). The
    /// coordinator cancels such units instead of leasing them. The default:
    /// every unit matters.
    fn is_moot(_params: &Self::Params, _merged: &Self::Summary, _unit: &Self::Unit) -> bool {
        false
    }

    /// Whether [`SearchFamily::is_moot`] can ever say yes. When it can, the
    /// coordinator re-checks every live unit of a job after each merge, and
    /// asks [`SearchFamily::must_wait`] before leasing a unit.
    const HAS_MOOT_UNITS: bool = false;

    /// Whether leasing `unit` now would be speculative: an elder sibling of
    /// one of its ancestors, still unsettled, may yet make it moot (in a game
    /// search, a sibling may win first). The coordinator leases such units
    /// only once that sibling is settled ("young brothers wait"); an idle
    /// worker meanwhile makes running units split. The default: never.
    fn must_wait(_params: &Self::Params, _merged: &Self::Summary, _unit: &Self::Unit) -> bool {
        false
    }

    /// Whether this family's searches prove *lemmas*: facts about parts of
    /// the search tree that other units of the same job can reuse instead of
    /// searching them again (`hip-solve`: the value of a position whose
    /// subtree was expensive, which sibling units reach by other move
    /// orders). Threads of one worker share them in memory already; across
    /// workers they travel through the coordinator, which stores them with
    /// the job and hands them to every other worker of the job (see
    /// [`SearchFamily::take_lemmas`]). Lemmas only save work: a search gives
    /// the same answer with or without them.
    const SHARES_LEMMAS: bool = false;

    /// Lemmas this process proved since the last call, at most about
    /// `max_bytes` of them, encoded by the family (empty: none). The first
    /// call may only start collecting them.
    fn take_lemmas(_params: &Self::Params, _max_bytes: usize) -> Vec<u8> {
        Vec::new()
    }

    /// Checks that a blob of lemmas is well formed for these parameters
    /// (the coordinator checks every upload before storing it).
    fn check_lemmas(_params: &Self::Params, _lemmas: &[u8]) -> Result<(), FamilyError> {
        Err(FamilyError::BadLemmas(format!(
            "family {} shares no lemmas",
            Self::NAME
        )))
    }

    /// Makes lemmas another worker proved available to this process's
    /// searches; returns how many it took in. Checks them first, and takes
    /// in nothing from a malformed blob.
    fn learn_lemmas(params: &Self::Params, lemmas: &[u8]) -> Result<u64, FamilyError> {
        Self::check_lemmas(params, lemmas).map(|()| 0)
    }

    /// One random root-to-leaf walk down `unit`'s search tree, for Knuth's
    /// estimate of its size (see [`crate::estimate`]): from the unit's root,
    /// the number of children the real search would visit at each node on
    /// the walk, a child being chosen with `pick(n)` (uniform in `0..n`).
    /// `bound` is the job-wide bound to assume throughout (see
    /// [`ExploreContext::bound`]; families without one ignore it). The
    /// default, `Ok(None)`: this family cannot estimate.
    fn probe(
        _params: &Self::Params,
        _unit: &Self::Unit,
        _bound: u64,
        _pick: &mut dyn FnMut(u64) -> u64,
    ) -> Result<Option<Probe>, FamilyError> {
        Ok(None)
    }
}

/// The answer of a job as a family presents it.
#[derive(Debug, Clone)]
pub struct FamilyReport {
    /// One JSON object with the family's figures.
    pub json: serde_json::Value,
    /// A few human-readable lines for the terminal.
    pub text: Vec<String>,
    /// The lines of the results file (e.g. every maximal string), in order.
    pub results_lines: Vec<String>,
}

/// The type-erased view of a family: what the CLI, the coordinator and the
/// worker use.
pub trait DynFamily: Send + Sync {
    fn name(&self) -> &'static str;
    fn about(&self) -> &'static str;
    /// The clap subcommand for this family's parameters.
    fn command(&self) -> clap::Command;
    /// Parses and validates parameters from the family's clap subcommand,
    /// returning their canonical JSON.
    fn params_from_matches(&self, matches: &clap::ArgMatches) -> Result<String, FamilyError>;
    /// Parses and validates canonical JSON parameters into a job.
    fn prepare(&self, params_json: &str) -> Result<Arc<dyn PreparedJob>, FamilyError>;
    /// See [`SearchFamily::check_environment`].
    fn check_environment(&self) -> Result<(), FamilyError>;
    /// See [`SearchFamily::save_caches`].
    fn save_caches(&self);
}

/// A family bound to one job's parameters.
pub trait PreparedJob: Send + Sync {
    fn family(&self) -> &'static str;
    /// Canonical JSON of the parameters (identifies the job for resume).
    fn params_json(&self) -> String;
    fn root_units(&self) -> Vec<Vec<u8>>;
    fn explore(&self, unit: &[u8], ctx: &ExploreContext<'_>)
        -> Result<DynExploration, FamilyError>;
    /// A fresh, empty job-level aggregate.
    fn new_aggregate(&self) -> Box<dyn Aggregate>;
    fn unit_label(&self, unit: &[u8]) -> Result<String, FamilyError>;
    /// Checks that a blob is a well-formed unit of this family.
    fn check_unit(&self, unit: &[u8]) -> Result<(), FamilyError>;
    /// Checks that a blob is a well-formed summary of this family.
    fn check_summary(&self, summary: &[u8]) -> Result<(), FamilyError>;
    /// See [`SearchFamily::HAS_MOOT_UNITS`].
    fn has_moot_units(&self) -> bool;
    /// See [`SearchFamily::probe`]; `Ok(None)`: the family cannot estimate.
    fn probe(
        &self,
        unit: &[u8],
        bound: u64,
        pick: &mut dyn FnMut(u64) -> u64,
    ) -> Result<Option<Probe>, FamilyError>;
    /// See [`SearchFamily::SHARES_LEMMAS`].
    fn shares_lemmas(&self) -> bool;
    /// See [`SearchFamily::take_lemmas`].
    fn take_lemmas(&self, max_bytes: usize) -> Vec<u8>;
    /// See [`SearchFamily::check_lemmas`].
    fn check_lemmas(&self, lemmas: &[u8]) -> Result<(), FamilyError>;
    /// See [`SearchFamily::learn_lemmas`].
    fn learn_lemmas(&self, lemmas: &[u8]) -> Result<u64, FamilyError>;
}

/// The encoded result of exploring one unit.
#[derive(Debug, Clone)]
pub struct DynExploration {
    pub summary: Vec<u8>,
    pub nodes: u64,
    /// Empty when the unit finished.
    pub rest: Vec<Vec<u8>>,
}

/// The running, merged result of a job.
pub trait Aggregate: Send {
    fn absorb(&mut self, summary: &[u8]) -> Result<(), FamilyError>;
    fn nodes(&self) -> u64;
    fn bound(&self) -> u64;
    fn report(&self) -> FamilyReport;
    /// See [`SearchFamily::is_moot`]. A malformed unit is never moot.
    fn is_moot(&self, unit: &[u8]) -> bool;
    /// See [`SearchFamily::must_wait`]. A malformed unit never waits.
    fn must_wait(&self, unit: &[u8]) -> bool;
}

/// Erases a [`SearchFamily`] into a [`DynFamily`].
pub struct Erased<F>(std::marker::PhantomData<F>);

impl<F> Erased<F> {
    pub const fn new() -> Self {
        Erased(std::marker::PhantomData)
    }
}

impl<F> Default for Erased<F> {
    fn default() -> Self {
        Self::new()
    }
}

struct Job<F: SearchFamily> {
    params: F::Params,
}

struct Merged<F: SearchFamily> {
    params: F::Params,
    summary: F::Summary,
}

impl<F: SearchFamily> DynFamily for Erased<F> {
    fn name(&self) -> &'static str {
        F::NAME
    }

    fn about(&self) -> &'static str {
        F::ABOUT
    }

    fn command(&self) -> clap::Command {
        <F::Params as clap::Args>::augment_args(clap::Command::new(F::NAME).about(F::ABOUT))
    }

    fn params_from_matches(&self, matches: &clap::ArgMatches) -> Result<String, FamilyError> {
        let params = <F::Params as clap::FromArgMatches>::from_arg_matches(matches)
            .map_err(|e| FamilyError::ParamsJson(e.to_string()))?;
        F::validate(&params)?;
        Ok(serde_json::to_string(&params).expect("parameters serialise to JSON"))
    }

    fn prepare(&self, params_json: &str) -> Result<Arc<dyn PreparedJob>, FamilyError> {
        let params: F::Params = serde_json::from_str(params_json)
            .map_err(|e| FamilyError::ParamsJson(e.to_string()))?;
        F::validate(&params)?;
        Ok(Arc::new(Job::<F> { params }))
    }

    fn check_environment(&self) -> Result<(), FamilyError> {
        F::check_environment()
    }

    fn save_caches(&self) {
        F::save_caches()
    }
}

impl<F: SearchFamily> PreparedJob for Job<F> {
    fn family(&self) -> &'static str {
        F::NAME
    }

    fn params_json(&self) -> String {
        serde_json::to_string(&self.params).expect("parameters serialise to JSON")
    }

    fn root_units(&self) -> Vec<Vec<u8>> {
        F::root_units(&self.params)
            .iter()
            .map(codec::encode)
            .collect()
    }

    fn explore(
        &self,
        unit: &[u8],
        ctx: &ExploreContext<'_>,
    ) -> Result<DynExploration, FamilyError> {
        let unit: F::Unit = codec::decode(unit)?;
        Ok(match F::explore(&self.params, &unit, ctx)? {
            Exploration::Finished(summary) => DynExploration {
                nodes: F::nodes(&summary),
                summary: codec::encode(&summary),
                rest: Vec::new(),
            },
            Exploration::Split { explored, rest } => DynExploration {
                nodes: F::nodes(&explored),
                summary: codec::encode(&explored),
                rest: rest.iter().map(codec::encode).collect(),
            },
        })
    }

    fn new_aggregate(&self) -> Box<dyn Aggregate> {
        Box::new(Merged::<F> {
            params: self.params.clone(),
            summary: F::Summary::default(),
        })
    }

    fn unit_label(&self, unit: &[u8]) -> Result<String, FamilyError> {
        Ok(F::unit_label(
            &self.params,
            &codec::decode::<F::Unit>(unit)?,
        ))
    }

    fn check_unit(&self, unit: &[u8]) -> Result<(), FamilyError> {
        codec::decode::<F::Unit>(unit)?;
        Ok(())
    }

    fn check_summary(&self, summary: &[u8]) -> Result<(), FamilyError> {
        codec::decode::<F::Summary>(summary)?;
        Ok(())
    }

    fn has_moot_units(&self) -> bool {
        F::HAS_MOOT_UNITS
    }

    fn probe(
        &self,
        unit: &[u8],
        bound: u64,
        pick: &mut dyn FnMut(u64) -> u64,
    ) -> Result<Option<Probe>, FamilyError> {
        F::probe(&self.params, &codec::decode::<F::Unit>(unit)?, bound, pick)
    }

    fn shares_lemmas(&self) -> bool {
        F::SHARES_LEMMAS
    }

    fn take_lemmas(&self, max_bytes: usize) -> Vec<u8> {
        F::take_lemmas(&self.params, max_bytes)
    }

    fn check_lemmas(&self, lemmas: &[u8]) -> Result<(), FamilyError> {
        F::check_lemmas(&self.params, lemmas)
    }

    fn learn_lemmas(&self, lemmas: &[u8]) -> Result<u64, FamilyError> {
        F::learn_lemmas(&self.params, lemmas)
    }
}

impl<F: SearchFamily> Aggregate for Merged<F> {
    fn absorb(&mut self, summary: &[u8]) -> Result<(), FamilyError> {
        let other: F::Summary = codec::decode(summary)?;
        F::merge(&self.params, &mut self.summary, other)
    }

    fn nodes(&self) -> u64 {
        F::nodes(&self.summary)
    }

    fn bound(&self) -> u64 {
        F::bound(&self.summary)
    }

    fn report(&self) -> FamilyReport {
        F::report(&self.params, &self.summary)
    }

    fn is_moot(&self, unit: &[u8]) -> bool {
        codec::decode::<F::Unit>(unit).is_ok_and(|u| F::is_moot(&self.params, &self.summary, &u))
    }

    fn must_wait(&self, unit: &[u8]) -> bool {
        codec::decode::<F::Unit>(unit).is_ok_and(|u| F::must_wait(&self.params, &self.summary, &u))
    }
}

/// Explores a unit completely in this thread, following every split, and
/// merges the result. This is the reference single-process path that the
/// distributed result is compared against, and what tests use.
pub fn explore_all<F: SearchFamily>(
    params: &F::Params,
    units: Vec<F::Unit>,
    budget: u64,
) -> Result<F::Summary, FamilyError> {
    let stop = AtomicBool::new(false);
    let bound = AtomicU64::new(0);
    let progress = AtomicU64::new(0);
    let ctx = ExploreContext {
        budget,
        stop: &stop,
        bound: &bound,
        progress: &progress,
    };
    let mut total = F::Summary::default();
    let mut pending = units;
    while let Some(unit) = pending.pop() {
        match F::explore(params, &unit, &ctx)? {
            Exploration::Finished(s) => F::merge(params, &mut total, s)?,
            Exploration::Split { explored, rest } => {
                F::merge(params, &mut total, explored)?;
                pending.extend(rest);
            }
        }
    }
    Ok(total)
}
