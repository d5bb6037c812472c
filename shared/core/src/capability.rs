//! What only some families need, as optional capabilities.
//!
//! A family that has one implements its trait (on the job type or on a part
//! of it) and names it in [`crate::SearchFamily::capabilities`]:
//!
//! ```ignore
//! fn capabilities(&self) -> Capabilities<'_, Self> {
//!     Capabilities { probing: Some(self), ..Capabilities::default() }
//! }
//! ```
//!
//! The cluster asks for a capability through the erased job
//! ([`crate::PreparedJob`]) and does without it when a family has none.

use crate::error::FamilyError;
use crate::family::SearchFamily;
use crate::probe::Probe;

/// The optional capabilities of one job.
pub struct Capabilities<'a, F: SearchFamily> {
    /// Units that later results make unnecessary (a game search's sibling
    /// already won).
    pub moot_units: Option<&'a dyn MootUnits<F>>,
    /// Random probes for Knuth's estimate of the search's size.
    pub probing: Option<&'a dyn Probing<F>>,
    /// Facts proved by one worker's searches that other workers reuse.
    pub lemmas: Option<&'a dyn LemmaExchange>,
    /// An in-process cache worth keeping across a worker's restarts.
    pub cache: Option<&'a dyn CacheSnapshot>,
}

impl<F: SearchFamily> Default for Capabilities<'_, F> {
    fn default() -> Self {
        Capabilities {
            moot_units: None,
            probing: None,
            lemmas: None,
            cache: None,
        }
    }
}

/// Units whose result can no longer change the answer.
///
/// When a family has this capability, the coordinator cancels the live
/// units of a job that have become moot as units merge, and asks whether a
/// unit must wait before leasing it. It asks about many units against one
/// merged summary, so the questions go through a [`MootJudge`] made for a
/// summary ([`MootUnits::judge`]): whatever the answers need from the whole
/// summary (a game search's pass over its recorded tree) is worked out
/// there once, not once a unit. Asking per unit would cost the coordinator
/// the live units times the summary's size after every report, which on a
/// `hip-solve` job of a few thousand units made it the cluster's
/// bottleneck; even once a report, the pass grows with the job, so the
/// coordinator makes a new judge only every so often and keeps using the
/// last one meanwhile (see `coordinator/src/scheduler/moot.rs`).
///
/// What that asks of a family: a judge answers for the summary it was made
/// from, and a unit it calls moot against a summary stays moot against
/// every summary merged from it (merging only ever settles more), as long
/// as the unit existed when that summary was merged; the coordinator asks
/// a judge only about units that did.
pub trait MootUnits<F: SearchFamily>: Send + Sync {
    /// The answers for units against `merged`, everything merged so far.
    fn judge(&self, merged: &F::Summary) -> Box<dyn MootJudge<F::Unit>>;

    /// [`MootJudge::is_moot`] for one unit (a judge made and dropped).
    fn is_moot(&self, merged: &F::Summary, unit: &F::Unit) -> bool {
        self.judge(merged).is_moot(unit)
    }

    /// [`MootJudge::must_wait`] for one unit (a judge made and dropped).
    fn must_wait(&self, merged: &F::Summary, unit: &F::Unit) -> bool {
        self.judge(merged).must_wait(unit)
    }

    /// [`MootJudge::speculation`] for one unit (a judge made and dropped).
    fn speculation(&self, merged: &F::Summary, unit: &F::Unit) -> u32 {
        self.judge(merged).speculation(unit)
    }

    /// The units the answer still needs when no unit of the job is left:
    /// empty when `merged` settles the answer. A family whose units can be
    /// cancelled or narrowed relies on an argument that the units it keeps
    /// are enough; this is the check of that argument at the end of a job,
    /// and the repair if it ever fails. The coordinator asks it (of the
    /// whole merged summary) once a job's last live unit is done, and
    /// instead of finishing the job makes these units pending, stored
    /// like any other (a job that asks twice in a row for the same units
    /// fails: they cannot settle it). The default: nothing is ever missing.
    fn still_needed(&self, _merged: &F::Summary) -> Vec<F::Unit> {
        Vec::new()
    }
}

/// [`MootUnits`]' answers against one merged summary.
pub trait MootJudge<U>: Send + Sync {
    /// Whether `unit` can no longer change the answer, given everything
    /// merged (e.g. in a game search, a sibling already won).
    fn is_moot(&self, unit: &U) -> bool;

    /// How speculative leasing `unit` now would be: 0 if the answer needs
    /// it whatever its siblings find; else at least 1, the more the likelier
    /// it is to be made moot (in a game search, an elder sibling of one of
    /// its ancestors is still unsettled and may yet make it moot; the more
    /// such elders, the more ways to lose it). The coordinator leases the
    /// units of 0 first, in position order, and the others ("young brothers
    /// wait") only when nothing else is pending, the least speculative
    /// first, so that idle workers spread over the units most likely to be
    /// needed rather than over one position's youngest. The default: 0.
    fn speculation(&self, _unit: &U) -> u32 {
        0
    }

    /// Whether `unit` must wait: its [`MootJudge::speculation`] is not 0.
    fn must_wait(&self, unit: &U) -> bool {
        self.speculation(unit) > 0
    }

    /// The unit as it should be searched now, if everything merged lets it
    /// ask less than it does (a game search's unit needs only whether its
    /// position beats what a sibling is known to reach: a narrower
    /// alpha-beta window). The coordinator leases the narrowed unit in its
    /// place (not in a verified job, whose replicas must search the same
    /// unit); the stored unit is unchanged, so after a restart the unit is
    /// narrowed again, or searched as it was stored. So a narrowed unit must
    /// settle at least what the root still needs of the unit, by the
    /// summary this judge was made from and by every summary merged from
    /// it, and so must the unit as stored. The default: never narrowed.
    fn narrow(&self, _unit: &U) -> Option<U> {
        None
    }
}

/// Random root-to-leaf walks of the real search's tree, for Knuth's estimate
/// of its size (see [`crate::estimate`]).
pub trait Probing<F: SearchFamily>: Send + Sync {
    /// One random walk down `unit`'s search tree: from the unit's root, the
    /// number of children the real search would visit at each node on the
    /// walk, a child being chosen with `pick(n)` (uniform in `0..n`). `bound`
    /// is the job-wide bound to assume throughout (see
    /// [`crate::ExploreContext::bound`]; families without one ignore it).
    fn probe(
        &self,
        unit: &F::Unit,
        bound: u64,
        pick: &mut dyn FnMut(u64) -> u64,
    ) -> Result<Probe, FamilyError>;
}

/// *Lemmas*: facts about parts of the search tree that other units of the
/// same job reuse instead of searching them again (`hip-solve`: the value of
/// a position whose subtree was expensive, which sibling units reach by other
/// move orders). A worker's threads share them in memory already; across
/// workers they travel through the coordinator, which stores them with the
/// job and hands them to every other worker of the job. Lemmas only save
/// work: a search gives the same answer with or without them.
pub trait LemmaExchange: Send + Sync {
    /// Lemmas this job proved in this process since the last call, at most
    /// about `max_bytes` of them, encoded by the family (empty: none).
    fn take(&self, max_bytes: usize) -> Vec<u8>;

    /// Checks that a blob of lemmas is well formed for this job (the
    /// coordinator checks every upload before storing it).
    fn check(&self, lemmas: &[u8]) -> Result<(), FamilyError>;

    /// Makes lemmas another worker proved available to this job's searches;
    /// returns how many it took in. Checks them first, and takes in nothing
    /// from a malformed blob.
    fn learn(&self, lemmas: &[u8]) -> Result<u64, FamilyError>;

    /// Shows the job a blob of lemmas the coordinator stores (checked, from
    /// any worker), so that it may schedule by what its workers prove
    /// before a unit of theirs ends (`hip-solve`: the value of a position
    /// on its principal variation is its guess of the winner). Returns
    /// true if the answers of the job's [`MootJudge`] may have changed: the
    /// coordinator then makes a new judge. What a job learns here may
    /// change only the order in which units are searched, never a value:
    /// a lemma is a worker's claim, not a merged result.
    fn observe(&self, _lemmas: &[u8]) -> bool {
        false
    }
}

/// An in-process cache (a transposition table) that a later process may load
/// instead of starting cold.
///
/// The family only encodes and decodes; the worker owns the file: it writes
/// the snapshot under its cache directory every few minutes and when it stops
/// gracefully (checksummed, fsync'd, atomically replaced), and hands it back
/// when it next opens the same job. A snapshot is a cache: losing one costs
/// work, never an answer, so `restore` must check every entry it takes in.
pub trait CacheSnapshot: Send + Sync {
    /// The file name (no directory, no extension) of this job's snapshot;
    /// jobs that can share a cache (the same game) give the same name.
    fn cache_name(&self) -> String;

    /// The cache's content worth keeping now, encoded; `None`: nothing yet.
    fn snapshot(&self) -> Option<Vec<u8>>;

    /// Takes in a snapshot written by [`CacheSnapshot::snapshot`] (of this
    /// or an earlier process); returns how many entries it took in. A
    /// malformed snapshot is refused whole.
    fn restore(&self, snapshot: &[u8]) -> Result<u64, FamilyError>;
}
