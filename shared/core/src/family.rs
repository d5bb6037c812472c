//! The search-family abstraction: the part every family implements.
//!
//! A *family* is one kind of exhaustive search (Harary's game `hc`, Hip, ...).
//! A value of a family type is one *job* of it: the family's parameters,
//! checked, plus whatever the job keeps while it runs in one process (a
//! transposition table, a memo). It knows how to cut its search tree into
//! *units* (subtree roots), how to explore one unit within a node budget, and
//! how to combine the *summaries* of explored units into the job's answer.
//! What only some families need (moot units, lemmas, cache snapshots, probes
//! for estimates) are optional capabilities, see [`crate::capability`].
//!
//! The coordinator and the worker never see a family's types: they move
//! opaque, versioned blobs (see [`crate::codec`]) through the type-erased
//! boundary of [`crate::erased`].
//!
//! **Architecture invariant** (what makes distributed counts exact): the units
//! of a job always partition the search tree. A unit is either finished (its
//! summary covers its whole subtree) or split (its summary covers what was
//! explored, and the returned `rest` units cover exactly what was not).
//! Summaries are merged with an associative, commutative operation, so the
//! order in which units finish does not matter.

use std::fmt::Debug;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use serde::{de::DeserializeOwned, Serialize};

use crate::capability::Capabilities;
use crate::error::{FamilyError, ParamError};
use crate::figure::Figure;

/// What the process that hosts a job lends it. A worker passes its settings;
/// the coordinator, which never explores, passes [`Host::default`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Host {
    /// Memory a job's in-process cache (a transposition table) may take, in
    /// MiB; `None`: the family's own default for the job's size.
    pub cache_mib: Option<u64>,
    /// The directory of the external programs this host's operator allows
    /// jobs to run (the `exec` family); `None`: none. A job names a program
    /// in it by file name only, never by path.
    pub programs: Option<std::path::PathBuf>,
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
    /// Set beside `stop` when the stop is a split request for idle workers:
    /// about how many pieces they would take (0 or 1: no wish). A hint a
    /// family may honour by handing its rest back as about that many units
    /// of similar size instead of its usual cut (the k-way hand-back,
    /// `synthetic` does); the rest must partition the unexplored part
    /// either way. Families that ignore it behave as before.
    pub pieces: &'a AtomicU32,
}

impl ExploreContext<'_> {
    /// Whether the outside world asked this exploration to stop.
    pub fn stop_requested(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// How many pieces a split request asked the rest to be cut into (at
    /// least 1; see [`ExploreContext::pieces`]).
    pub fn pieces_wanted(&self) -> u32 {
        self.pieces.load(Ordering::Relaxed).max(1)
    }
}

/// A piece of a k-way hand-back holds at least this share of a unit's
/// budget (1 / `PIECE_FLOOR_DIVISOR`): the coordinator asks for as many
/// pieces as there are idle slots, up to hundreds, and a small rest cut
/// that many ways makes units whose lease and report cost more than their
/// work (a rest of 10 s of work cut 256 ways is 40 ms a unit).
pub const PIECE_FLOOR_DIVISOR: u64 = 8;

/// The pieces to cut a rest of `rest_nodes` nodes into when `wanted` were
/// asked for and a unit's budget is `budget` nodes: `wanted`, but at most
/// one per `budget / PIECE_FLOOR_DIVISOR` nodes of the rest, and at least 1.
/// For families that know the size of their rest (see
/// [`ExploreContext::pieces`]); a family that does not may ignore it.
pub fn pieces_within(wanted: u32, rest_nodes: u64, budget: u64) -> u32 {
    let floor = (budget / PIECE_FLOOR_DIVISOR).max(1);
    let most = (rest_nodes / floor).min(u64::from(u32::MAX)) as u32;
    wanted.min(most).max(1)
}

/// The channels of an exploration run outside a worker (the sequential
/// path, estimates, tests and measurements): nobody asks it to stop, and
/// its bound starts where it is told.
#[derive(Debug, Default)]
pub struct LocalFlags {
    pub stop: AtomicBool,
    pub bound: AtomicU64,
    pub progress: AtomicU64,
    pub pieces: AtomicU32,
}

impl LocalFlags {
    /// Flags whose job-wide bound starts at `bound`.
    pub fn with_bound(bound: u64) -> Self {
        LocalFlags {
            bound: AtomicU64::new(bound),
            ..LocalFlags::default()
        }
    }

    /// A context over these flags with a node budget.
    pub fn context(&self, budget: u64) -> ExploreContext<'_> {
        ExploreContext {
            budget,
            stop: &self.stop,
            bound: &self.bound,
            progress: &self.progress,
            pieces: &self.pieces,
        }
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

impl<S, U> Exploration<S, U> {
    /// `Finished` when nothing is left (`rest` empty), else `Split`.
    pub fn new(explored: S, rest: Vec<U>) -> Self {
        if rest.is_empty() {
            Exploration::Finished(explored)
        } else {
            Exploration::Split { explored, rest }
        }
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

/// One search family; a value of it is one job, with its own typed
/// parameters, units and summaries.
///
/// API boundary: this trait (with [`crate::capability`]) is all a family
/// implements; the cluster reaches it only through [`crate::Erased`].
pub trait SearchFamily: Sized + Send + Sync + 'static {
    /// The name on the command line and in the store (`hc`).
    const NAME: &'static str;
    /// One line for `--help`.
    const ABOUT: &'static str;

    /// Parameters, stored as JSON (canonical: the job's identity on resume).
    /// The binary's command line reads them through the family's
    /// `clap::Args` implementation (see the binary's registry).
    type Params: Serialize + DeserializeOwned + Clone + Debug + Send + Sync;
    /// The root of a subtree.
    type Unit: Serialize + DeserializeOwned + Clone + Debug + Send;
    /// What exploring some units produced. `Default` is the empty summary.
    type Summary: Serialize + DeserializeOwned + Clone + Debug + Default + Send;

    /// Checks the parameters (the error names the bad one) and makes the
    /// job. Cheap and free of I/O: the coordinator makes one per job to
    /// merge and check reports; memory a search needs is taken on first use.
    fn new(params: Self::Params, host: &Host) -> Result<Self, ParamError>;

    /// The initial units of the job. They partition the search tree, and are
    /// listed in the order a sequential search would visit them: the
    /// coordinator leases units in that order (see [`Exploration::Split`]).
    fn root_units(&self) -> Vec<Self::Unit>;

    /// Explores one unit within `ctx.budget` nodes. Called from many threads
    /// at once.
    fn explore(
        &self,
        unit: &Self::Unit,
        ctx: &ExploreContext<'_>,
    ) -> Result<Exploration<Self::Summary, Self::Unit>, FamilyError>;

    /// Folds `other` into `into`. Must be associative and commutative;
    /// counters add with checked arithmetic ([`FamilyError::Overflow`]).
    fn merge(&self, into: &mut Self::Summary, other: Self::Summary) -> Result<(), FamilyError>;

    /// Nodes explored, as counted in a summary.
    fn nodes(summary: &Self::Summary) -> u64;

    /// The answer: a JSON object, and the lines of the results file.
    fn report(&self, summary: &Self::Summary) -> FamilyReport;

    /// Pictures of the answer so far, for the dashboard (see
    /// [`crate::figure`]): the family decides what is worth drawing from a
    /// merged summary; `running` are the job's units being explored right
    /// now (empty once the job is over), for a figure that shows where the
    /// search is. Called under the coordinator's lock, at most once per
    /// change of the job's units: keep it about as cheap as
    /// [`SearchFamily::report`]. The default: none.
    fn figures(&self, _summary: &Self::Summary, _running: &[Self::Unit]) -> Vec<Figure> {
        Vec::new()
    }

    /// Whether an idle cluster may ask a running `unit` to stop early and
    /// hand back its rest (work stealing). A unit that keeps nothing of what
    /// it did when it stops early — a dynamic programme, whose layers are
    /// only worth their final sum — says no, and is then stopped only for
    /// cancellation, shutdown or its node budget. The default: yes.
    fn split_on_idle(&self, _unit: &Self::Unit) -> bool {
        true
    }

    /// The part of a unit's summary that every correct exploration of the
    /// *whole* unit produces, compared between the replicas of a verified job
    /// (`--replicas K`): two replicas agree when their verified parts are
    /// equal bytes. `bound` is the job-wide bound when the replicas are
    /// compared (at least every bound their explorations saw).
    ///
    /// The default is the whole summary, node counts included: right for a
    /// deterministic search. A family whose summary legitimately differs
    /// between two correct runs (node counts that depend on an in-process
    /// table, lemmas, or the shared bound) keeps only what cannot differ.
    fn verified_part(&self, _unit: &Self::Unit, summary: &Self::Summary, _bound: u64) -> Vec<u8> {
        crate::codec::encode(summary)
    }

    /// A short human label of a unit, for status displays.
    fn unit_label(&self, unit: &Self::Unit) -> String {
        format!("{unit:?}")
    }

    /// The job-wide bound that a (merged) summary proves, for
    /// [`ExploreContext::bound`]. The default: none (0).
    fn bound(_summary: &Self::Summary) -> u64 {
        0
    }

    /// The optional capabilities this job has. The default: none.
    fn capabilities(&self) -> Capabilities<'_, Self> {
        Capabilities::default()
    }
}

#[cfg(test)]
mod tests {
    use super::{pieces_within, PIECE_FLOOR_DIVISOR};

    #[test]
    fn pieces_are_no_smaller_than_the_floor() {
        let budget = 800;
        let floor = budget / PIECE_FLOOR_DIVISOR;
        // A large rest: as many pieces as asked.
        assert_eq!(pieces_within(256, 1_000_000, budget), 256);
        // A rest of 10 floors: 10 pieces, not 256.
        assert_eq!(pieces_within(256, 10 * floor, budget), 10);
        assert_eq!(pieces_within(256, 10 * floor + floor - 1, budget), 10);
        // Never fewer than one, nor more than asked.
        assert_eq!(pieces_within(256, floor - 1, budget), 1);
        assert_eq!(pieces_within(0, 1_000_000, budget), 1);
        assert_eq!(pieces_within(3, 1_000_000, budget), 3);
        // A budget under the divisor: a floor of one node.
        assert_eq!(pieces_within(256, 100, 1), 100);
    }
}
