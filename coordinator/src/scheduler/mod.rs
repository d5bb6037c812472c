//! The coordinator's in-memory state: jobs, live units, leases, workers.
//!
//! This module is synchronous and does no I/O: it decides, and returns the
//! [`Write`](crate::store::Write)s that make a decision durable.
//! [`crate::service`] commits them and only then calls back in to apply
//! results (see the invariants in [`crate::store`]). It does not read the
//! clock either: time comes from the [`Clock`] it is given, so tests drive
//! it with a `ManualClock` (in [`crate::clock`], compiled for tests only).
//!
//! A unit is *live* while it is pending or leased. Done and cancelled units
//! leave memory; their summaries live on in the job's aggregate and in the
//! store.
//!
//! The [`Scheduler`] is one struct; each concept it handles has a file of
//! its own, which adds the methods of that concept:
//!
//! * `job` — [`Job`] (its [`JobState`] is [`crate::status`]'s): a job's counters, its aggregate, its
//!   estimate and ETA, the cache of its interim answer; creating jobs.
//! * `unit` — live units, their positions in the search order, the
//!   numbering of new units.
//! * `lease` — leasing in position order with young brothers waiting,
//!   lease expiry, leases given back.
//! * `heartbeat` — what a worker's heartbeat renews, adopts and learns,
//!   and the split requests it carries.
//! * `report` — a unit's report: begun (reserved), aborted, completed.
//! * `moot` — units cancelled because they can no longer change the answer.
//! * `replicas` — verified jobs: which worker may take a unit's next
//!   replica, and when a unit's replicas agree.
//! * `finish` — the end of a job: finished, failed or cancelled; a failed
//!   job retried.
//! * `worker` — registered workers and their liveness.
//! * `restore` — rebuilding the state from the store at startup, and a
//!   failed job's from its stored units for a retry.
//! * `views` — snapshots for status, the dashboard and metrics.
//! * `figures` — a job's figures for the dashboard, drawn by its family.
//! * `lemmas` — each job's share of the lemma store.
//! * `rate` — node rates over a sliding window.

mod figures;
mod finish;
mod heartbeat;
mod job;
mod lease;
mod lemmas;
mod moot;
mod rate;
mod replicas;
mod report;
mod restore;
mod unit;
mod views;
mod worker;

#[cfg(test)]
mod finish_tests;
#[cfg(test)]
mod model;
#[cfg(test)]
mod proptests;
#[cfg(test)]
mod retry_tests;
#[cfg(test)]
mod test_family;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod trust_tests;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use crate::status::JobState;
pub use finish::Finishing;
pub use job::{Estimate, FinalResult, Job};
pub use lease::Granted;
pub use lemmas::MAX_LEMMA_BYTES_PER_JOB;
pub use replicas::MAX_REPLICAS;
pub use report::{PendingReport, Report};
pub use restore::Retried;
pub use unit::TREE_DEPTH;

use crate::clock::Clock;
use crate::store::{JobId, UnitId};
use unit::Unit;
use worker::Worker;

pub type WorkerId = u64;

/// Monotone counters, for metrics.
#[derive(Debug, Default, Clone, Copy)]
pub struct Counters {
    pub lease_expiries: u64,
    pub reports: u64,
    /// Reports acknowledged and ignored: late (the unit was done by
    /// another worker meanwhile), duplicate, or of a job no longer live.
    pub reports_ignored: u64,
    pub units_cancelled: u64,
    /// Units leased narrowed (see `orchard_core::MootJudge::narrow`).
    pub units_narrowed: u64,
    /// Leased units that yielded because a new judge ranked them more
    /// speculative: running ones asked to split, ones leased ahead put back
    /// (see `Scheduler::yield_speculation`).
    pub speculation_yields: u64,
    /// Units a family said its answer still needed once a job had no unit
    /// left (see `orchard_core::MootUnits::still_needed`): a safety net
    /// that should stay at zero.
    pub units_reopened: u64,
    pub registrations: u64,
    /// Requests about a unit the worker does not hold, refused and not
    /// counted: reports (refused with an error), progress in heartbeats
    /// (the unit is cancelled on the worker) and leases given back.
    pub reports_refused: u64,
    pub progress_refused: u64,
    pub returns_refused: u64,
}

/// Why a request was refused.
#[derive(Debug, thiserror::Error)]
pub enum SchedulerError {
    #[error("unknown job {0}")]
    UnknownJob(JobId),
    #[error("{0}")]
    Invalid(String),
    /// A report of a unit the worker was never leased.
    #[error("{0}")]
    NotHeld(String),
    /// A retry of a job that is not failed, or that cannot be retried
    /// exactly (see [`Scheduler::begin_retry`], [`Retried::build`]).
    #[error("{0}")]
    NotRetryable(String),
}

pub struct Scheduler {
    jobs: BTreeMap<JobId, Job>,
    counters: Counters,
    units: HashMap<UnitId, Unit>,
    /// Leased units by lease start, oldest first: whom to ask to split
    /// when workers are idle, in O(log n) a unit instead of a scan of every
    /// live unit (see [`Scheduler::request_splits_for_idle`]). Entries are
    /// checked when taken (a lease that ended leaves its entry behind) and
    /// the set is swept when stale entries outnumber the live units.
    split_candidates: BTreeSet<(Instant, UnitId)>,
    /// Units asked to split whose rest has not come back yet, with the
    /// pieces each was asked for, pruned lazily (see
    /// [`Scheduler::request_splits_for_idle`]), and those pieces summed:
    /// the idle slots the splits in flight cover.
    splits_in_flight: HashMap<UnitId, u32>,
    split_cover: usize,
    splits_pruned: Option<Instant>,
    /// Worker slots waiting in lease calls for work, counted by the service
    /// (see [`Scheduler::idle_slots`]): what a split's pieces are for.
    idle_slots: Arc<AtomicUsize>,
    workers: HashMap<WorkerId, Worker>,
    next_unit: UnitId,
    next_job: JobId,
    next_worker: WorkerId,
    lease_ttl: Duration,
    /// The most bytes of lemmas one job keeps (see [`Scheduler::admit_lemmas`]).
    lemma_store_bytes: u64,
    clock: Arc<dyn Clock>,
}

impl Scheduler {
    /// A scheduler with no job and no worker (see
    /// [`Scheduler::from_store`] to resume a database's jobs).
    pub fn new(lease_ttl: Duration, clock: Arc<dyn Clock>) -> Scheduler {
        Scheduler {
            jobs: BTreeMap::new(),
            counters: Counters::default(),
            units: HashMap::new(),
            split_candidates: BTreeSet::new(),
            splits_in_flight: HashMap::new(),
            split_cover: 0,
            splits_pruned: None,
            idle_slots: Arc::new(AtomicUsize::new(0)),
            workers: HashMap::new(),
            next_unit: 1,
            next_job: 1,
            next_worker: 1,
            lease_ttl,
            lemma_store_bytes: lemmas::MAX_LEMMA_BYTES_PER_JOB,
            clock,
        }
    }

    /// The job `id`, if known.
    pub fn job(&self, id: JobId) -> Option<&Job> {
        self.jobs.get(&id)
    }

    /// Every job, oldest first.
    pub fn jobs(&self) -> impl Iterator<Item = &Job> {
        self.jobs.values()
    }

    /// Whether some job is still running (finishing included): only then
    /// can units become pending without a new job being submitted.
    pub fn any_job_running(&self) -> bool {
        self.jobs
            .values()
            .any(|j| j.state() == crate::status::JobState::Running)
    }

    /// The ids of every job, oldest first.
    pub fn job_ids(&self) -> Vec<JobId> {
        self.jobs.keys().copied().collect()
    }

    /// The monotone counters, for metrics.
    pub fn counters(&self) -> Counters {
        self.counters
    }
}
