//! Jobs: what the scheduler knows of one search — its state, its unit and
//! node counters, its aggregate (the merged summaries), its estimate and
//! ETA, and the cache of its interim answer — and the creation of jobs.
//!
//! A job's fields are written only by the scheduler (the other files of
//! this module); the rest of the coordinator reads them through getters and
//! sets the one thing it computes outside, the estimate, with
//! [`Scheduler::set_estimate`].

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;
use std::time::Instant;

use orchard_core::{Aggregate, PreparedJob};

use super::figures::FiguresKey;
use super::moot::MootJudgeSlot;
use super::rate::RateMeter;
use super::unit::{tree_prefix, Unit};
use super::Scheduler;
use crate::status::JobState;
use crate::store::{JobId, UnitId, Write};

/// The final answer of a finished job.
#[derive(Debug, Clone, Default)]
pub struct FinalResult {
    /// `{"result": {...}, "text": [...]}`, as stored.
    pub json: String,
    pub results_file: String,
}

/// A running job's answer so far: the family's report on what has been
/// merged (see [`Scheduler::interim_report`]), without the results lines.
#[derive(Debug, Clone)]
pub struct InterimReport {
    pub json: serde_json::Value,
    pub text: Vec<String>,
}

/// Knuth's estimate of a job's total nodes (see
/// `orchard_core::estimate`), with the bound its probes assumed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub nodes: f64,
    pub std_error: f64,
    /// The job bound the probes assumed: the estimate is redone when the
    /// job's bound rises past it.
    pub assumed_bound: u64,
}

pub struct Job {
    pub(super) id: JobId,
    pub(super) family: String,
    pub(super) params_json: String,
    pub(super) state: JobState,
    pub(super) bound: u64,
    pub(super) prepared: Option<Arc<dyn PreparedJob>>,
    pub(super) aggregate: Option<Box<dyn Aggregate>>,
    /// Pending units by position: leased first-to-last in the sequential
    /// search order (see [`crate::store::NewUnit::position`]).
    pub(super) pending: BTreeSet<(Vec<u8>, UnitId)>,
    pub(super) units_total: u64,
    pub(super) units_done: u64,
    pub(super) units_leased: u64,
    pub(super) nodes_done: u64,
    /// Nodes searched in units that were cancelled as moot while running
    /// (speculative work that a sibling's result made useless), as their
    /// workers last reported them. Not in `nodes_done`, which counts the
    /// nodes of the merged summaries (the answer's own count).
    pub(super) nodes_discarded: u64,
    /// Bytes of lemmas stored for the job (see [`Scheduler::admit_lemmas`]):
    /// the sum of `lemma_blobs`.
    pub(super) lemma_bytes: u64,
    /// The length of each blob of lemmas stored for the job, oldest first:
    /// what the window evicts first.
    pub(super) lemma_blobs: VecDeque<u64>,
    pub(super) created_ms: u64,
    pub(super) finished_ms: Option<u64>,
    pub(super) result: Option<FinalResult>,
    pub(super) error: Option<String>,
    /// Set while the final report is being written, so it happens once.
    pub(super) finishing: bool,
    /// When the last unit report was applied.
    pub(super) last_report: Option<Instant>,
    /// Whether the family can declare units moot (see `sweep_moot`).
    pub(super) has_moot_units: bool,
    /// Summaries merged into the aggregate since the coordinator started.
    pub(super) merges: u64,
    /// Blobs of lemmas that changed what the job schedules by (see
    /// `orchard_core::LemmaExchange::observe`), since the coordinator
    /// started. With `merges`, what a judge is made from (see `moot`).
    pub(super) observations: u64,
    /// The family's last judge of moot units (see `moot`).
    pub(super) moot_judge: Option<MootJudgeSlot>,
    /// The units the family last said the answer still needed when no unit
    /// was left (see [`Scheduler::reopen_unsettled`]), in this process.
    pub(super) reopened: Option<Vec<Vec<u8>>>,
    /// Units resolved per tree prefix, for the dashboard's picture.
    pub(super) done_by_prefix: BTreeMap<Vec<u8>, u64>,
    /// Refreshed when the bound rises (see [`Scheduler::estimates_due`]).
    pub(super) estimate: Option<Estimate>,
    pub(super) rate: RateMeter,
    /// The last answer so far, with the (units done, units known) it was
    /// computed at (see [`Scheduler::interim_report`]).
    pub(super) interim: Option<((u64, u64), InterimReport)>,
    /// The last figures of the running job, with what they were computed
    /// from (see [`Scheduler::figures`]).
    pub(super) figures: Option<(FiguresKey, Vec<orchard_core::Figure>)>,
    /// Workers that explore each unit (see `replicas`); 1: every report
    /// is trusted as it comes.
    pub(super) replicas: u32,
    /// Units merged after their replicas agreed (verified jobs only).
    pub(super) verified_units: u64,
    /// Reports found to disagree with another replica of their unit.
    pub(super) mismatches: u64,
    /// Workers found on the losing side of a mismatch, by durable identity
    /// (key to label, see [`crate::identity::WorkerIdentity`]): they get no
    /// more units of this job. Stored (`exclusions`) in the transaction of
    /// the report that decided the vote, and loaded at open: an exclusion
    /// outlives the process and the worker's registration.
    pub(super) excluded: BTreeMap<String, String>,
}

impl Job {
    /// A job with no unit, no aggregate and no result yet.
    pub(super) fn new(
        id: JobId,
        family: String,
        params_json: String,
        state: JobState,
        created_ms: u64,
    ) -> Job {
        Job {
            id,
            family,
            params_json,
            state,
            bound: 0,
            prepared: None,
            aggregate: None,
            pending: BTreeSet::new(),
            units_total: 0,
            units_done: 0,
            units_leased: 0,
            nodes_done: 0,
            nodes_discarded: 0,
            lemma_bytes: 0,
            lemma_blobs: VecDeque::new(),
            created_ms,
            finished_ms: None,
            result: None,
            error: None,
            finishing: false,
            last_report: None,
            has_moot_units: false,
            merges: 0,
            observations: 0,
            moot_judge: None,
            reopened: None,
            done_by_prefix: BTreeMap::new(),
            estimate: None,
            rate: RateMeter::default(),
            interim: None,
            figures: None,
            replicas: 1,
            verified_units: 0,
            mismatches: 0,
            excluded: BTreeMap::new(),
        }
    }

    /// Binds the job to its family: its aggregate starts empty.
    pub(super) fn attach(&mut self, prepared: Arc<dyn PreparedJob>) {
        self.has_moot_units = prepared.has_moot_units();
        self.aggregate = Some(prepared.new_aggregate());
        self.prepared = Some(prepared);
    }

    pub fn id(&self) -> JobId {
        self.id
    }

    pub fn family(&self) -> &str {
        &self.family
    }

    /// The canonical JSON of the job's parameters.
    pub fn params_json(&self) -> &str {
        &self.params_json
    }

    pub fn state(&self) -> JobState {
        self.state
    }

    /// The job-wide bound (see `ExploreContext::bound`).
    pub fn bound(&self) -> u64 {
        self.bound
    }

    /// The final answer, once the job is done.
    pub fn result(&self) -> Option<&FinalResult> {
        self.result.as_ref()
    }

    /// Workers that explore each unit (1: unverified).
    pub fn replicas(&self) -> u32 {
        self.replicas
    }

    /// Whether some of the job's pending units may be leased only to some
    /// workers or only later (a verified job's, see `replicas`; a family
    /// with moot units, see `MootJudge::speculation`): then a report wakes
    /// every idle worker, not one a new unit.
    pub fn leases_wait(&self) -> bool {
        self.replicas > 1 || self.has_moot_units
    }

    /// Whether the job runs and is not being finished.
    pub(super) fn live(&self) -> bool {
        self.state == JobState::Running && !self.finishing
    }

    /// A unit at `position` is done or cancelled.
    pub(super) fn resolved(&mut self, position: &[u8]) {
        self.units_done += 1;
        *self
            .done_by_prefix
            .entry(tree_prefix(position))
            .or_insert(0) += 1;
    }

    /// Seconds left at the current rate for a running job that has
    /// searched `nodes` of its estimate; 0 when unknown.
    pub(super) fn eta_seconds(&self, nodes: u64) -> f64 {
        match (self.state, self.estimate) {
            (JobState::Running, Some(e)) if self.rate.rate() > 0.0 => {
                (e.nodes - nodes as f64).max(0.0) / self.rate.rate()
            }
            _ => 0.0,
        }
    }
}

/// Read by the tests; the views read the fields directly.
#[cfg(test)]
impl Job {
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Units known: live, done and cancelled.
    pub fn units_total(&self) -> u64 {
        self.units_total
    }

    /// Units resolved: done or cancelled.
    pub fn units_done(&self) -> u64 {
        self.units_done
    }

    pub fn units_leased(&self) -> u64 {
        self.units_leased
    }

    /// Nodes of the merged summaries.
    pub fn nodes_done(&self) -> u64 {
        self.nodes_done
    }

    /// See the field `nodes_discarded`.
    pub fn nodes_discarded(&self) -> u64 {
        self.nodes_discarded
    }
}

impl Scheduler {
    /// Finds a job with the same family, canonical parameters and replicas
    /// that is running or done.
    pub fn find_job(&self, family: &str, params_json: &str, replicas: u32) -> Option<JobId> {
        self.jobs_of(family, params_json, replicas)
            .find(|j| matches!(j.state, JobState::Running | JobState::Done))
            .map(|j| j.id)
    }

    /// The jobs of `family` with these canonical parameters and replicas.
    fn jobs_of<'a>(
        &'a self,
        family: &'a str,
        params_json: &'a str,
        replicas: u32,
    ) -> impl Iterator<Item = &'a Job> {
        self.jobs.values().filter(move |j| {
            j.family == family && j.params_json == params_json && j.replicas == replicas
        })
    }

    /// The last job of these parameters that failed, with its error: what
    /// `orchard run --retry` continues instead of starting afresh.
    pub fn find_failed_job(
        &self,
        family: &str,
        params_json: &str,
        replicas: u32,
    ) -> Option<(JobId, String)> {
        self.jobs_of(family, params_json, replicas)
            .filter(|j| j.state == JobState::Failed)
            .max_by_key(|j| j.id)
            .map(|j| (j.id, j.error.clone().unwrap_or_default()))
    }

    /// Writes each stored job's parameters in their canonical form
    /// (`canonical(family, params)`, `None`: left as stored). A job stored by
    /// an older build may leave out a parameter its family has gained since,
    /// with a default; it is the same job written differently, and
    /// [`Scheduler::find_job`] must find it when the same command is given
    /// again, not start it afresh beside it. Only memory changes: the row
    /// keeps what was stored.
    pub fn canonicalize_params(&mut self, canonical: &dyn Fn(&str, &str) -> Option<String>) {
        for job in self.jobs.values_mut() {
            if let Some(params) = canonical(&job.family, &job.params_json) {
                job.params_json = params;
            }
        }
    }

    /// Creates a job with its root units, each to be explored by `replicas`
    /// different workers (1: unverified). Returns the id and the writes.
    pub fn create_job(
        &mut self,
        prepared: Arc<dyn PreparedJob>,
        replicas: u32,
    ) -> (JobId, Vec<Write>) {
        let id = self.next_job;
        self.next_job += 1;
        let created_ms = self.clock.unix_ms();
        let roots = self.number_children(&[], prepared.root_units());
        let writes = vec![
            Write::InsertJob {
                id,
                family: prepared.family().to_string(),
                params_json: prepared.params_json(),
                created_ms,
                replicas,
            },
            Write::InsertUnits {
                job_id: id,
                parent: None,
                units: roots.clone(),
            },
        ];
        let mut job = Job::new(
            id,
            prepared.family().to_string(),
            prepared.params_json(),
            JobState::Running,
            created_ms,
        );
        job.attach(prepared);
        job.replicas = replicas.max(1);
        job.units_total = roots.len() as u64;
        for u in roots {
            job.pending.insert((u.position.clone(), u.id));
            self.units.insert(u.id, Unit::new(id, u));
        }
        self.jobs.insert(id, job);
        (id, writes)
    }

    /// The answer so far of a job that has not finished: the family's report
    /// on everything merged until now (for a game, the openings' values
    /// known so far; for a maximum, the best found so far). Not final; a
    /// running job's answer can still change. `None` when the job is
    /// finished, unknown, or has no aggregate (cancelled, failed to load).
    /// Kept until the next merge or cancellation, so that a dashboard
    /// polling every second does not recompute it under the lock.
    pub fn interim_report(&mut self, job_id: JobId) -> Option<InterimReport> {
        let job = self.jobs.get_mut(&job_id)?;
        if job.result.is_some() {
            return None;
        }
        let agg = job.aggregate.as_ref()?;
        let key = (job.units_done, job.units_total);
        if job.interim.as_ref().is_none_or(|(k, _)| *k != key) {
            let r = agg.report();
            let report = InterimReport {
                json: r.json,
                text: r.text,
            };
            job.interim = Some((key, report));
        }
        job.interim.as_ref().map(|(_, r)| r.clone())
    }

    /// Running jobs whose estimate is missing or assumed a lower bound than
    /// the job now has: (job, prepared family, current bound).
    pub fn estimates_due(&self) -> Vec<(JobId, Arc<dyn PreparedJob>, u64)> {
        self.jobs
            .values()
            .filter(|j| j.live())
            .filter(|j| j.estimate.is_none_or(|e| e.assumed_bound < j.bound))
            .filter_map(|j| j.prepared.clone().map(|p| (j.id, p, j.bound)))
            .collect()
    }

    /// Records the estimate of a job's size computed for
    /// [`Scheduler::estimates_due`]. False, and nothing recorded: the job is
    /// unknown, or no longer live. An estimate runs beside the job, so one
    /// can come back after the job has finished; a finished job keeps the
    /// estimate it ended with, so that its status (and "how far off the
    /// estimate was") does not change after the end.
    pub fn set_estimate(&mut self, job_id: JobId, estimate: Estimate) -> bool {
        let Some(job) = self.jobs.get_mut(&job_id).filter(|j| j.live()) else {
            return false;
        };
        job.estimate = Some(estimate);
        true
    }
}
