//! The coordinator's in-memory state: jobs, live units, leases, workers.
//!
//! This module is synchronous and does no I/O: it decides, and returns the
//! [`Write`]s that make a decision durable. [`crate::service`] commits them
//! and only then calls back in to apply results (see the invariants in
//! [`crate::store`]).
//!
//! A unit is *live* while it is pending or leased. Done and cancelled units
//! leave memory; their summaries live on in the job's aggregate and in the
//! store.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use orchard_core::{Aggregate, FamilyReport, PreparedJob};

use crate::store::{JobId, Loaded, NewUnit, UnitId, Write};

pub type WorkerId = u64;

/// Makes the job of a family and its parameters (the coordinator's
/// registry lookup), for jobs restored from the store.
pub type PrepareJob<'a> = dyn Fn(&str, &str) -> Result<Arc<dyn PreparedJob>, String> + 'a;

/// Milliseconds since the Unix epoch, for stored timestamps.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobState {
    Running,
    Done,
    Cancelled,
    Failed,
}

impl JobState {
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Running => "running",
            JobState::Done => "done",
            JobState::Cancelled => "cancelled",
            JobState::Failed => "failed",
        }
    }

    fn parse(s: &str) -> JobState {
        match s {
            "done" => JobState::Done,
            "cancelled" => JobState::Cancelled,
            "running" => JobState::Running,
            _ => JobState::Failed,
        }
    }
}

/// The final answer of a finished job.
#[derive(Debug, Clone, Default)]
pub struct FinalResult {
    pub json: String,
    pub text: Vec<String>,
    pub results_file: String,
}

/// Nodes-per-second over a sliding window of samples.
#[derive(Debug, Default)]
struct RateMeter {
    samples: VecDeque<(Instant, u64)>,
}

impl RateMeter {
    const WINDOW: Duration = Duration::from_secs(20);

    fn sample(&mut self, now: Instant, nodes: u64) {
        self.samples.push_back((now, nodes));
        while self.samples.len() > 2 && now.duration_since(self.samples[0].0) > Self::WINDOW {
            self.samples.pop_front();
        }
    }

    fn rate(&self) -> f64 {
        match (self.samples.front(), self.samples.back()) {
            (Some(a), Some(b)) if b.0 > a.0 => {
                b.1.saturating_sub(a.1) as f64 / (b.0 - a.0).as_secs_f64()
            }
            _ => 0.0,
        }
    }
}

pub struct Job {
    pub id: JobId,
    pub family: String,
    pub params_json: String,
    pub state: JobState,
    pub bound: u64,
    prepared: Option<Arc<dyn PreparedJob>>,
    aggregate: Option<Box<dyn Aggregate>>,
    /// Pending units by position: leased first-to-last in the sequential
    /// search order (see [`NewUnit::position`]).
    pending: BTreeSet<(Vec<u8>, UnitId)>,
    pub units_total: u64,
    pub units_done: u64,
    pub units_leased: u64,
    pub nodes_done: u64,
    /// Nodes searched in units that were cancelled as moot while running
    /// (speculative work that a sibling's result made useless), as their
    /// workers last reported them. Not in `nodes_done`, which counts the
    /// nodes of the merged summaries (the answer's own count).
    pub nodes_discarded: u64,
    /// Bytes of lemmas stored for the job (see [`Scheduler::admit_lemmas`]).
    pub lemma_bytes: u64,
    pub created_ms: u64,
    pub finished_ms: Option<u64>,
    pub result: Option<FinalResult>,
    pub error: Option<String>,
    /// Set while the final report is being written, so it happens once.
    finishing: bool,
    /// When the last unit report was applied.
    pub last_report: Option<Instant>,
    /// Whether the family can declare units moot (see `sweep_moot`).
    has_moot_units: bool,
    /// Units resolved per tree prefix, for the dashboard's picture.
    done_by_prefix: BTreeMap<Vec<u8>, u64>,
    /// Knuth's estimate of the total nodes: (nodes, standard error, the
    /// bound the probes assumed). Refreshed when the bound rises.
    pub estimate: Option<(f64, f64, u64)>,
    rate: RateMeter,
    /// The last answer so far, with the (units done, units known) it was
    /// computed at (see [`Scheduler::interim_report`]).
    interim: Option<((u64, u64), InterimReport)>,
}

impl Job {
    fn live(&self) -> bool {
        self.state == JobState::Running && !self.finishing
    }

    /// A unit at `position` is done or cancelled.
    fn resolved(&mut self, position: &[u8]) {
        self.units_done += 1;
        *self
            .done_by_prefix
            .entry(tree_prefix(position))
            .or_insert(0) += 1;
    }
}

struct Unit {
    job: JobId,
    position: Vec<u8>,
    payload: Arc<Vec<u8>>,
    lease: Option<Lease>,
    /// A report for this unit is being committed.
    reporting: bool,
    progress_nodes: u64,
    split_requested: bool,
    split_sent: bool,
}

struct Lease {
    worker: WorkerId,
    since: Instant,
    expires: Instant,
}

struct Worker {
    hostname: String,
    threads: u32,
    families: HashSet<String>,
    last_seen: Instant,
    units: HashSet<UnitId>,
    /// Nodes of the units this worker reported.
    nodes_reported: u64,
    rate: RateMeter,
}

/// Monotone counters, for metrics.
#[derive(Debug, Default, Clone, Copy)]
pub struct Counters {
    pub lease_expiries: u64,
    pub reports: u64,
    pub units_cancelled: u64,
    pub registrations: u64,
}

/// How deep the dashboard's picture of the search tree goes.
pub const TREE_DEPTH: usize = 2;

/// How many units that should wait one lease call looks past (see
/// [`Scheduler::lease`]).
const MAX_WAIT_CHECKS: usize = 512;

/// The first [`TREE_DEPTH`] levels of a unit position.
fn tree_prefix(position: &[u8]) -> Vec<u8> {
    position[..position.len().min(4 * TREE_DEPTH)].to_vec()
}

/// A position as 1-based child indices joined by dots ("" is the root).
pub fn position_label(position: &[u8]) -> String {
    position
        .chunks(4)
        .map(|c| {
            let mut b = [0u8; 4];
            b[..c.len()].copy_from_slice(c);
            (u32::from_be_bytes(b) as u64 + 1).to_string()
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// A running job's answer so far: the family's report on what has been
/// merged (see [`Scheduler::interim_report`]), without the results lines.
#[derive(Debug, Clone)]
pub struct InterimReport {
    pub json: serde_json::Value,
    pub text: Vec<String>,
}

/// A unit handed to a worker.
pub struct Granted {
    pub unit_id: UnitId,
    pub job_id: JobId,
    pub family: String,
    pub params_json: String,
    pub payload: Arc<Vec<u8>>,
    pub bound: u64,
}

/// A report accepted for commit; see [`Scheduler::begin_report`].
pub struct PendingReport {
    pub unit_id: UnitId,
    pub job_id: JobId,
    pub summary: Vec<u8>,
    pub nodes: u64,
    pub rest: Vec<NewUnit>,
    pub bound: u64,
}

/// Why a request was refused.
#[derive(Debug, thiserror::Error)]
pub enum SchedulerError {
    #[error("unknown job {0}")]
    UnknownJob(JobId),
    #[error("{0}")]
    Invalid(String),
}

/// A job that has no live unit left and must be finished.
pub struct Finishing {
    pub job_id: JobId,
    pub family: String,
    /// The family bound to the job's parameters (for unit labels).
    pub prepared: Option<Arc<dyn PreparedJob>>,
    pub report: Result<FamilyReport, String>,
}

/// The most lemmas one job keeps in the database (they go when it ends).
/// Past this, workers keep their lemmas to themselves.
pub const MAX_LEMMA_BYTES_PER_JOB: u64 = 1 << 30;

pub struct Scheduler {
    pub jobs: BTreeMap<JobId, Job>,
    pub counters: Counters,
    units: HashMap<UnitId, Unit>,
    workers: HashMap<WorkerId, Worker>,
    next_unit: UnitId,
    next_job: JobId,
    next_worker: WorkerId,
    lease_ttl: Duration,
}

impl Scheduler {
    /// Rebuilds the state from the store. Jobs whose family or parameters
    /// cannot be loaded are marked failed, with the reason.
    pub fn from_store(
        loaded: Loaded,
        lease_ttl: Duration,
        prepare: &PrepareJob<'_>,
    ) -> Result<Scheduler, String> {
        let mut s = Scheduler {
            jobs: BTreeMap::new(),
            counters: Counters::default(),
            units: HashMap::new(),
            workers: HashMap::new(),
            next_unit: loaded.max_unit_id + 1,
            next_job: 1,
            next_worker: 1,
            lease_ttl,
        };
        for row in loaded.jobs {
            s.next_job = s.next_job.max(row.id + 1);
            let mut job = Job {
                id: row.id,
                family: row.family.clone(),
                params_json: row.params_json.clone(),
                state: JobState::parse(&row.state),
                bound: row.bound,
                prepared: None,
                aggregate: None,
                pending: BTreeSet::new(),
                units_total: 0,
                units_done: 0,
                units_leased: 0,
                nodes_done: 0,
                nodes_discarded: row.discarded_nodes,
                lemma_bytes: 0,
                created_ms: row.created_ms,
                finished_ms: row.finished_ms,
                result: None,
                error: row.error.clone(),
                finishing: false,
                last_report: None,
                has_moot_units: false,
                done_by_prefix: BTreeMap::new(),
                estimate: None,
                rate: RateMeter::default(),
                interim: None,
            };
            if job.state == JobState::Done {
                job.result = Some(FinalResult {
                    json: row.result_json.unwrap_or_default(),
                    text: Vec::new(),
                    results_file: row.results_file.unwrap_or_default(),
                });
            }
            if job.state == JobState::Running {
                match prepare(&row.family, &row.params_json) {
                    Ok(p) => {
                        job.has_moot_units = p.has_moot_units();
                        job.aggregate = Some(p.new_aggregate());
                        job.prepared = Some(p);
                    }
                    Err(e) => {
                        job.state = JobState::Failed;
                        job.error = Some(format!("cannot resume: {e}"));
                    }
                }
            }
            s.jobs.insert(job.id, job);
        }
        for (job_id, bytes) in loaded.lemma_bytes {
            if let Some(job) = s.jobs.get_mut(&job_id) {
                job.lemma_bytes = bytes;
            }
        }
        // Cancelled units are over: counted, and drawn in the tree.
        for (job_id, position) in loaded.cancelled {
            if let Some(job) = s.jobs.get_mut(&job_id).filter(|j| j.aggregate.is_some()) {
                job.units_total += 1;
                job.resolved(&position);
            }
        }
        for u in loaded.units {
            let Some(job) = s.jobs.get_mut(&u.job_id) else {
                continue;
            };
            let Some(agg) = job.aggregate.as_mut() else {
                continue;
            };
            job.units_total += 1;
            if u.state == "done" {
                let summary = u.summary.unwrap_or_default();
                agg.absorb(&summary).map_err(|e| {
                    format!(
                        "job {}: stored result of unit {} unusable: {e}",
                        job.id, u.id
                    )
                })?;
                job.resolved(&u.position);
            } else {
                job.pending.insert((u.position.clone(), u.id));
                let unit = NewUnit {
                    id: u.id,
                    position: u.position,
                    payload: u.payload,
                };
                s.units.insert(u.id, new_unit(u.job_id, unit));
            }
        }
        for job in s.jobs.values_mut() {
            if let Some(agg) = &job.aggregate {
                job.nodes_done = agg.nodes();
                job.bound = job.bound.max(agg.bound());
            }
        }
        Ok(s)
    }

    /// Finds a job with the same family and canonical parameters that is
    /// running or done.
    pub fn find_job(&self, family: &str, params_json: &str) -> Option<JobId> {
        self.jobs
            .values()
            .find(|j| {
                j.family == family
                    && j.params_json == params_json
                    && matches!(j.state, JobState::Running | JobState::Done)
            })
            .map(|j| j.id)
    }

    /// Creates a job with its root units. Returns the id and the writes.
    pub fn create_job(&mut self, prepared: Arc<dyn PreparedJob>) -> (JobId, Vec<Write>) {
        let id = self.next_job;
        self.next_job += 1;
        let created_ms = now_ms();
        let roots = self.number_children(&[], prepared.root_units());
        let writes = vec![
            Write::InsertJob {
                id,
                family: prepared.family().to_string(),
                params_json: prepared.params_json(),
                created_ms,
            },
            Write::InsertUnits {
                job_id: id,
                parent: None,
                units: roots.clone(),
            },
        ];
        let has_moot_units = prepared.has_moot_units();
        let mut job = Job {
            id,
            family: prepared.family().to_string(),
            params_json: prepared.params_json(),
            state: JobState::Running,
            bound: 0,
            aggregate: Some(prepared.new_aggregate()),
            prepared: Some(prepared),
            pending: BTreeSet::new(),
            units_total: roots.len() as u64,
            units_done: 0,
            units_leased: 0,
            nodes_done: 0,
            nodes_discarded: 0,
            lemma_bytes: 0,
            created_ms,
            finished_ms: None,
            result: None,
            error: None,
            finishing: false,
            last_report: None,
            has_moot_units,
            done_by_prefix: BTreeMap::new(),
            estimate: None,
            rate: RateMeter::default(),
            interim: None,
        };
        for u in roots {
            job.pending.insert((u.position.clone(), u.id));
            self.units.insert(u.id, new_unit(id, u));
        }
        self.jobs.insert(id, job);
        (id, writes)
    }

    pub fn register(&mut self, hostname: String, threads: u32, families: Vec<String>) -> WorkerId {
        let id = self.next_worker;
        self.next_worker += 1;
        self.counters.registrations += 1;
        self.workers.insert(
            id,
            Worker {
                hostname,
                threads,
                families: families.into_iter().collect(),
                last_seen: Instant::now(),
                units: HashSet::new(),
                nodes_reported: 0,
                rate: RateMeter::default(),
            },
        );
        id
    }

    /// Registered workers, live or not yet forgotten.
    pub fn worker_count(&self) -> usize {
        self.workers.len()
    }

    /// Forgets workers silent for ten lease times that hold no unit (a
    /// worker that comes back is told to register again).
    pub fn forget_dead_workers(&mut self) {
        let now = Instant::now();
        let limit = self.lease_ttl * 10;
        self.workers
            .retain(|_, w| !w.units.is_empty() || now.duration_since(w.last_seen) < limit);
    }

    pub fn knows_worker(&self, worker: WorkerId) -> bool {
        self.workers.contains_key(&worker)
    }

    /// Workers heard from within one lease time.
    pub fn live_workers(&self) -> usize {
        let now = Instant::now();
        self.workers
            .values()
            .filter(|w| now.duration_since(w.last_seen) < self.lease_ttl)
            .count()
    }

    /// Leases up to `max` pending units to `worker`, in position order.
    /// Returns the grants and the writes to queue. (Moot units never wait
    /// here: [`Scheduler::sweep_moot`] removes them as soon as a merge makes
    /// them moot, and checks whether that finished the job.)
    pub fn lease(&mut self, worker_id: WorkerId, max: usize) -> (Vec<Granted>, Vec<Write>) {
        let now = Instant::now();
        let ttl = self.lease_ttl;
        let mut granted = Vec::new();
        let Some(worker) = self.workers.get_mut(&worker_id) else {
            return (granted, Vec::new());
        };
        worker.last_seen = now;
        for job in self.jobs.values_mut() {
            if granted.len() >= max {
                break;
            }
            if !job.live() || !worker.families.contains(&job.family) {
                continue;
            }
            // Units that should wait for a sibling (see `must_wait`) go after
            // the others: leased only when nothing else is pending, so an
            // idle worker speculates rather than waits. Past
            // `MAX_WAIT_CHECKS` of them in one call, units are leased in
            // plain order (bounded work under the lock).
            let mut waiting = std::collections::VecDeque::new();
            while granted.len() < max {
                let ((position, uid), waited) = match job.pending.pop_first() {
                    Some(next) => (next, false),
                    None => match waiting.pop_front() {
                        Some(next) => (next, true),
                        None => break,
                    },
                };
                let Some(unit) = self.units.get_mut(&uid) else {
                    continue;
                };
                if unit.lease.is_some() || unit.reporting {
                    continue;
                }
                if job.has_moot_units
                    && !waited
                    && waiting.len() < MAX_WAIT_CHECKS
                    && job
                        .aggregate
                        .as_ref()
                        .is_some_and(|a| a.must_wait(&unit.payload))
                {
                    waiting.push_back((position, uid));
                    continue;
                }
                unit.lease = Some(Lease {
                    worker: worker_id,
                    since: now,
                    expires: now + ttl,
                });
                unit.split_requested = false;
                unit.split_sent = false;
                unit.progress_nodes = 0;
                job.units_leased += 1;
                worker.units.insert(uid);
                granted.push(Granted {
                    unit_id: uid,
                    job_id: job.id,
                    family: job.family.clone(),
                    params_json: job.params_json.clone(),
                    payload: unit.payload.clone(),
                    bound: job.bound,
                });
            }
            job.pending.extend(waiting);
        }
        let mut writes = Vec::new();
        if !granted.is_empty() {
            writes.push(Write::Leased {
                unit_ids: granted.iter().map(|g| g.unit_id).collect(),
            });
        }
        (granted, writes)
    }

    /// No pending work: ask running units of live jobs to split off their
    /// rest, oldest leases first, at most `wanted` of them. Only units leased
    /// for at least `min_age` are asked, so tiny units are not churned.
    pub fn request_splits(&mut self, wanted: usize, min_age: Duration) {
        let now = Instant::now();
        let mut candidates: Vec<(Instant, UnitId)> = self
            .units
            .iter()
            .filter(|(_, u)| !u.split_requested && !u.reporting)
            .filter_map(|(&id, u)| u.lease.as_ref().map(|l| (l.since, id)))
            .filter(|(since, _)| now.duration_since(*since) >= min_age)
            .collect();
        candidates.sort();
        for (_, id) in candidates.into_iter().take(wanted) {
            if let Some(u) = self.units.get_mut(&id) {
                u.split_requested = true;
            }
        }
    }

    /// Whether any live job has pending units.
    pub fn has_pending(&self) -> bool {
        self.jobs
            .values()
            .any(|j| j.live() && !j.pending.is_empty())
    }

    /// A worker's heartbeat: renews its leases, records progress and bounds.
    /// Units it runs that are no longer its own are cancelled; units left
    /// pending by a coordinator restart are adopted back.
    pub fn heartbeat(
        &mut self,
        worker_id: WorkerId,
        running: &[(UnitId, u64)],
        bounds: &[(JobId, u64)],
    ) -> Option<HeartbeatReply> {
        let now = Instant::now();
        let ttl = self.lease_ttl;
        let worker = self.workers.get_mut(&worker_id)?;
        worker.last_seen = now;
        let mut reply = HeartbeatReply::default();
        let mut jobs_seen = HashSet::new();
        for &(uid, nodes) in running {
            let Some(unit) = self.units.get_mut(&uid) else {
                reply.cancel.push(uid);
                continue;
            };
            let job = self.jobs.get_mut(&unit.job).expect("live unit has a job");
            let ours = match &unit.lease {
                Some(l) => l.worker == worker_id,
                None if !unit.reporting && job.live() => {
                    // Pending after a restart while this worker kept running it.
                    unit.lease = Some(Lease {
                        worker: worker_id,
                        since: now,
                        expires: now + ttl,
                    });
                    job.units_leased += 1;
                    worker.units.insert(uid);
                    true
                }
                None => false,
            };
            if !ours || !job.live() {
                reply.cancel.push(uid);
                continue;
            }
            if let Some(l) = unit.lease.as_mut() {
                l.expires = now + ttl;
            }
            unit.progress_nodes = nodes;
            if unit.split_requested && !unit.split_sent {
                unit.split_sent = true;
                reply.split.push(uid);
            }
            jobs_seen.insert(unit.job);
        }
        for &(job_id, bound) in bounds {
            if let Some(job) = self.jobs.get_mut(&job_id) {
                if bound > job.bound && job.live() {
                    job.bound = bound;
                    reply.writes.push(Write::SetBound { job_id, bound });
                }
            }
        }
        for job_id in jobs_seen {
            if let Some(job) = self.jobs.get(&job_id) {
                reply.bounds.push((job_id, job.bound));
            }
        }
        Some(reply)
    }

    /// Checks a report and reserves the unit for it. `Ok(None)`: a late or
    /// duplicate report, to acknowledge and ignore.
    pub fn begin_report(
        &mut self,
        unit_id: UnitId,
        summary: Vec<u8>,
        nodes: u64,
        rest: Vec<Vec<u8>>,
        bound: u64,
    ) -> Result<Option<PendingReport>, SchedulerError> {
        let Some(unit) = self.units.get_mut(&unit_id) else {
            return Ok(None);
        };
        if unit.reporting {
            return Ok(None);
        }
        let job = self.jobs.get(&unit.job).expect("live unit has a job");
        if !job.live() {
            return Ok(None);
        }
        let prepared = job.prepared.as_ref().expect("running job is prepared");
        prepared
            .check_summary(&summary)
            .map_err(|e| SchedulerError::Invalid(format!("unit {unit_id}: bad summary: {e}")))?;
        for r in &rest {
            prepared.check_unit(r).map_err(|e| {
                SchedulerError::Invalid(format!("unit {unit_id}: bad rest unit: {e}"))
            })?;
        }
        unit.reporting = true;
        let job_id = unit.job;
        let parent = unit.position.clone();
        let rest = self.number_children(&parent, rest);
        Ok(Some(PendingReport {
            unit_id,
            job_id,
            summary,
            nodes,
            rest,
            bound,
        }))
    }

    /// A worker could not explore a unit: the job fails with its message
    /// (retrying a deterministic failure elsewhere would loop forever).
    pub fn fail_unit(&mut self, unit_id: UnitId, message: &str) -> Option<Finishing> {
        let job_id = self.units.get(&unit_id)?.job;
        let job = self.jobs.get_mut(&job_id)?;
        if !job.live() {
            return None;
        }
        job.state = JobState::Failed;
        job.error = Some(format!("unit {unit_id} failed: {message}"));
        self.check_finished(job_id)
    }

    /// The commit of a report failed: the unit goes back to its lease.
    pub fn abort_report(&mut self, unit_id: UnitId) {
        if let Some(u) = self.units.get_mut(&unit_id) {
            u.reporting = false;
            if u.lease.is_none() {
                // Its lease had expired before the failed report: it must
                // be waiting in the queue, or nobody would ever lease it.
                if let Some(job) = self.jobs.get_mut(&u.job) {
                    job.pending.insert((u.position.clone(), unit_id));
                }
            }
        }
    }

    /// Applies a committed report. Returns the job if it has just finished,
    /// and writes to queue (units cancelled as moot).
    pub fn complete_report(&mut self, r: PendingReport) -> (Option<Finishing>, Vec<Write>) {
        let job_id = r.job_id;
        self.apply_report(r);
        let writes = self.sweep_moot(job_id);
        (self.check_finished(job_id), writes)
    }

    fn apply_report(&mut self, r: PendingReport) {
        let Some(unit) = self.units.remove(&r.unit_id) else {
            return;
        };
        self.counters.reports += 1;
        if let Some(lease) = &unit.lease {
            if let Some(w) = self.workers.get_mut(&lease.worker) {
                w.units.remove(&r.unit_id);
                w.nodes_reported = w.nodes_reported.saturating_add(r.nodes);
            }
        }
        let Some(job) = self.jobs.get_mut(&r.job_id) else {
            return;
        };
        if unit.lease.is_some() {
            job.units_leased = job.units_leased.saturating_sub(1);
        } else {
            // Its lease had expired: it was waiting to be leased again.
            job.pending.remove(&(unit.position.clone(), r.unit_id));
        }
        job.resolved(&unit.position);
        job.last_report = Some(Instant::now());
        job.units_total += r.rest.len() as u64;
        job.nodes_done = job.nodes_done.saturating_add(r.nodes);
        if let Some(agg) = job.aggregate.as_mut() {
            if let Err(e) = agg.absorb(&r.summary) {
                job.state = JobState::Failed;
                job.error = Some(format!("merging unit {}: {e}", r.unit_id));
            } else {
                job.bound = job.bound.max(agg.bound()).max(r.bound);
            }
        }
        for u in r.rest {
            job.pending.insert((u.position.clone(), u.id));
            self.units.insert(u.id, new_unit(r.job_id, u));
        }
    }

    /// Cancels every live unit of `job_id` that can no longer change the
    /// answer (families with [`PreparedJob::has_moot_units`] only). Leased
    /// ones are dropped too: their workers learn it at the next heartbeat.
    pub fn sweep_moot(&mut self, job_id: JobId) -> Vec<Write> {
        let Some(job) = self.jobs.get_mut(&job_id) else {
            return Vec::new();
        };
        if !job.has_moot_units || !job.live() {
            return Vec::new();
        }
        let Some(agg) = job.aggregate.as_ref() else {
            return Vec::new();
        };
        let moot: Vec<UnitId> = self
            .units
            .iter()
            .filter(|(_, u)| u.job == job_id && !u.reporting && agg.is_moot(&u.payload))
            .map(|(&id, _)| id)
            .collect();
        let mut cancelled = Vec::with_capacity(moot.len());
        for id in &moot {
            let unit = self.units.remove(id).expect("listed above");
            let discarded = if unit.lease.is_some() {
                unit.progress_nodes
            } else {
                0
            };
            cancelled.push((*id, discarded));
            job.nodes_discarded = job.nodes_discarded.saturating_add(discarded);
            match &unit.lease {
                Some(lease) => {
                    job.units_leased = job.units_leased.saturating_sub(1);
                    if let Some(w) = self.workers.get_mut(&lease.worker) {
                        w.units.remove(id);
                    }
                }
                None => {
                    job.pending.remove(&(unit.position.clone(), *id));
                }
            }
            job.resolved(&unit.position);
            self.counters.units_cancelled += 1;
        }
        if moot.is_empty() {
            Vec::new()
        } else {
            tracing::debug!(
                job = job_id,
                units = moot.len(),
                "units cancelled: they cannot change the answer"
            );
            vec![Write::CancelUnits { units: cancelled }]
        }
    }

    /// [`Scheduler::sweep_moot`] for every job (after loading).
    pub fn sweep_all_moot(&mut self) -> Vec<Write> {
        let ids: Vec<JobId> = self.jobs.keys().copied().collect();
        ids.into_iter().flat_map(|id| self.sweep_moot(id)).collect()
    }

    /// Whether `job_id` has no live unit left; if so, starts finishing it.
    pub fn check_finished(&mut self, job_id: JobId) -> Option<Finishing> {
        let job = self.jobs.get_mut(&job_id)?;
        if job.state == JobState::Failed && !job.finishing {
            job.finishing = true;
            return Some(Finishing {
                job_id,
                family: job.family.clone(),
                prepared: job.prepared.clone(),
                report: Err(job.error.clone().unwrap_or_default()),
            });
        }
        if !job.live() || job.units_done < job.units_total {
            return None;
        }
        job.finishing = true;
        let report = job
            .aggregate
            .as_ref()
            .map(|a| a.report())
            .ok_or_else(|| "no aggregate".to_string());
        Some(Finishing {
            job_id,
            family: job.family.clone(),
            prepared: job.prepared.clone(),
            report,
        })
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

    /// Jobs that ended while nobody reported (e.g. loaded complete).
    pub fn finished_on_load(&mut self) -> Vec<Finishing> {
        let ids: Vec<JobId> = self.jobs.keys().copied().collect();
        ids.into_iter()
            .filter_map(|id| self.check_finished(id))
            .collect()
    }

    /// Records the end of a job after its final write committed.
    pub fn job_finished(
        &mut self,
        job_id: JobId,
        state: JobState,
        result: Option<FinalResult>,
        error: Option<String>,
    ) {
        let stale: Vec<UnitId> = self
            .units
            .iter()
            .filter(|(_, u)| u.job == job_id)
            .map(|(&id, _)| id)
            .collect();
        for id in stale {
            self.units.remove(&id);
        }
        if let Some(job) = self.jobs.get_mut(&job_id) {
            job.state = state;
            job.finishing = false;
            job.finished_ms = Some(now_ms());
            job.result = result;
            if error.is_some() {
                job.error = error;
            }
            job.aggregate = None;
            job.pending.clear();
            job.units_leased = 0;
        }
    }

    /// Starts cancelling a job. Returns false if it was not running.
    pub fn begin_cancel(&mut self, job_id: JobId) -> Result<bool, SchedulerError> {
        let job = self
            .jobs
            .get_mut(&job_id)
            .ok_or(SchedulerError::UnknownJob(job_id))?;
        if !job.live() {
            return Ok(false);
        }
        job.finishing = true;
        Ok(true)
    }

    /// Units whose lease ran out go back to the front of their job's queue.
    pub fn expire_leases(&mut self) -> usize {
        let now = Instant::now();
        let mut expired = 0;
        for (&id, unit) in self.units.iter_mut() {
            let Some(lease) = &unit.lease else { continue };
            if unit.reporting || lease.expires > now {
                continue;
            }
            tracing::warn!(
                unit = id,
                worker = lease.worker,
                "lease expired; unit goes back to the queue"
            );
            self.counters.lease_expiries += 1;
            if let Some(w) = self.workers.get_mut(&lease.worker) {
                w.units.remove(&id);
            }
            unit.lease = None;
            if let Some(job) = self.jobs.get_mut(&unit.job) {
                job.units_leased = job.units_leased.saturating_sub(1);
                job.pending.insert((unit.position.clone(), id));
            }
            expired += 1;
        }
        expired
    }

    /// Units given back by a worker that is leaving.
    pub fn return_leases(&mut self, worker_id: WorkerId, unit_ids: &[UnitId]) {
        for id in unit_ids {
            let Some(unit) = self.units.get_mut(id) else {
                continue;
            };
            if unit.reporting || unit.lease.as_ref().is_none_or(|l| l.worker != worker_id) {
                continue;
            }
            unit.lease = None;
            if let Some(job) = self.jobs.get_mut(&unit.job) {
                job.units_leased = job.units_leased.saturating_sub(1);
                job.pending.insert((unit.position.clone(), *id));
            }
        }
        if let Some(w) = self.workers.get_mut(&worker_id) {
            for id in unit_ids {
                w.units.remove(id);
            }
        }
    }

    /// A snapshot of a job's progress, sampling its node rate.
    pub fn status(&mut self, job_id: JobId) -> Option<JobSnapshot> {
        let live_workers = self.live_workers() as u32;
        let running_nodes: u64 = self
            .units
            .values()
            .filter(|u| u.job == job_id && u.lease.is_some())
            .map(|u| u.progress_nodes)
            .sum();
        let job = self.jobs.get_mut(&job_id)?;
        let nodes = job.nodes_done.saturating_add(running_nodes);
        if job.state == JobState::Running {
            job.rate.sample(Instant::now(), nodes);
        }
        Some(JobSnapshot {
            job_id,
            family: job.family.clone(),
            params_json: job.params_json.clone(),
            state: job.state.as_str(),
            units_total: job.units_total,
            units_done: job.units_done,
            units_running: job.units_leased,
            units_pending: job
                .units_total
                .saturating_sub(job.units_done + job.units_leased),
            nodes,
            nodes_discarded: job.nodes_discarded,
            lemma_bytes: job.lemma_bytes,
            bound: job.bound,
            nodes_per_second: if job.state == JobState::Running {
                job.rate.rate()
            } else {
                0.0
            },
            created_ms: job.created_ms,
            finished_ms: job.finished_ms.unwrap_or(0),
            live_workers,
            error: job.error.clone().unwrap_or_default(),
            result: job.result.clone(),
            last_report: job.last_report,
            estimated_nodes: job.estimate.map_or(0.0, |e| e.0),
            estimated_nodes_error: job.estimate.map_or(0.0, |e| e.1),
            eta_seconds: match (job.state, job.estimate) {
                (JobState::Running, Some((total, _, _))) if job.rate.rate() > 0.0 => {
                    (total - nodes as f64).max(0.0) / job.rate.rate()
                }
                _ => 0.0,
            },
        })
    }

    /// The family of `job_id` if the job is running and its family shares
    /// lemmas (see `SearchFamily::SHARES_LEMMAS`); `None`: the job is over,
    /// unknown, or has no lemmas.
    pub fn lemma_job(&self, job_id: JobId) -> Option<Arc<dyn PreparedJob>> {
        let job = self.jobs.get(&job_id)?;
        let prepared = job.prepared.as_ref()?;
        (job.state == JobState::Running && prepared.lemmas().is_some()).then(|| prepared.clone())
    }

    /// Counts `len` more bytes of lemmas against the job's share of the
    /// database ([`MAX_LEMMA_BYTES_PER_JOB`]); false: they do not fit, or
    /// the job is not running or is being finished (its end, which deletes
    /// its lemmas, may be on its way to the store: a blob queued after it
    /// would outlive the job).
    pub fn admit_lemmas(&mut self, job_id: JobId, len: u64) -> bool {
        let Some(job) = self.jobs.get_mut(&job_id) else {
            return false;
        };
        if job.state != JobState::Running
            || job.finishing
            || job.lemma_bytes.saturating_add(len) > MAX_LEMMA_BYTES_PER_JOB
        {
            return false;
        }
        job.lemma_bytes += len;
        true
    }

    /// Running jobs whose estimate is missing or assumed a lower bound than
    /// the job now has: (job, prepared family, current bound).
    pub fn estimates_due(&self) -> Vec<(JobId, Arc<dyn PreparedJob>, u64)> {
        self.jobs
            .values()
            .filter(|j| j.live())
            .filter(|j| j.estimate.is_none_or(|(_, _, b)| b < j.bound))
            .filter_map(|j| j.prepared.clone().map(|p| (j.id, p, j.bound)))
            .collect()
    }

    /// Snapshots of every job, oldest first.
    pub fn statuses(&mut self) -> Vec<JobSnapshot> {
        let ids: Vec<JobId> = self.jobs.keys().copied().collect();
        ids.into_iter().filter_map(|id| self.status(id)).collect()
    }

    /// Gives new units ids and their positions below `parent`, in order.
    fn number_children(&mut self, parent: &[u8], payloads: Vec<Vec<u8>>) -> Vec<NewUnit> {
        payloads
            .into_iter()
            .enumerate()
            .map(|(i, payload)| {
                let id = self.next_unit;
                self.next_unit += 1;
                NewUnit {
                    id,
                    position: child_position(parent, i),
                    payload,
                }
            })
            .collect()
    }

    /// Worker descriptions, for logs and status.
    pub fn describe_worker(&self, id: WorkerId) -> String {
        self.workers
            .get(&id)
            .map(|w| format!("worker {id} ({}, {} threads)", w.hostname, w.threads))
            .unwrap_or_else(|| format!("worker {id}"))
    }
}

/// A worker as the dashboard shows it.
#[derive(Debug, Clone)]
pub struct WorkerSnapshot {
    pub id: WorkerId,
    pub hostname: String,
    pub threads: u32,
    pub live: bool,
    pub units: usize,
    pub nodes: u64,
    pub nodes_per_second: f64,
    pub seconds_since_seen: f64,
}

/// One cell of the dashboard's picture of a job's search tree: the units
/// under one tree prefix and their states.
#[derive(Debug, Clone)]
pub struct TreeCell {
    pub prefix: String,
    pub done: u64,
    pub running: u64,
    pub pending: u64,
}

impl Scheduler {
    /// Every worker, with its node rate (sampled now).
    pub fn workers_snapshot(&mut self) -> Vec<WorkerSnapshot> {
        let now = Instant::now();
        let ttl = self.lease_ttl;
        let units = &self.units;
        let mut out: Vec<WorkerSnapshot> = self
            .workers
            .iter_mut()
            .map(|(&id, w)| {
                let running: u64 = w
                    .units
                    .iter()
                    .filter_map(|u| units.get(u))
                    .map(|u| u.progress_nodes)
                    .sum();
                let nodes = w.nodes_reported.saturating_add(running);
                w.rate.sample(now, nodes);
                WorkerSnapshot {
                    id,
                    hostname: w.hostname.clone(),
                    threads: w.threads,
                    live: now.duration_since(w.last_seen) < ttl,
                    units: w.units.len(),
                    nodes,
                    nodes_per_second: w.rate.rate(),
                    seconds_since_seen: now.duration_since(w.last_seen).as_secs_f64(),
                }
            })
            .collect();
        out.sort_by_key(|w| w.id);
        out
    }

    /// The job's units grouped by the first levels of their positions.
    pub fn tree(&self, job_id: JobId) -> Vec<TreeCell> {
        let Some(job) = self.jobs.get(&job_id) else {
            return Vec::new();
        };
        let mut cells: BTreeMap<Vec<u8>, (u64, u64, u64)> = job
            .done_by_prefix
            .iter()
            .map(|(p, &d)| (p.clone(), (d, 0, 0)))
            .collect();
        for u in self.units.values().filter(|u| u.job == job_id) {
            let c = cells.entry(tree_prefix(&u.position)).or_default();
            if u.lease.is_some() {
                c.1 += 1;
            } else {
                c.2 += 1;
            }
        }
        cells
            .into_iter()
            .map(|(p, (done, running, pending))| TreeCell {
                prefix: position_label(&p),
                done,
                running,
                pending,
            })
            .collect()
    }
}

/// The position of the `index`-th child of the unit at `parent`.
fn child_position(parent: &[u8], index: usize) -> Vec<u8> {
    let mut p = Vec::with_capacity(parent.len() + 4);
    p.extend_from_slice(parent);
    p.extend_from_slice(&u32::try_from(index).unwrap_or(u32::MAX).to_be_bytes());
    p
}

fn new_unit(job: JobId, u: NewUnit) -> Unit {
    Unit {
        job,
        position: u.position,
        payload: Arc::new(u.payload),
        lease: None,
        reporting: false,
        progress_nodes: 0,
        split_requested: false,
        split_sent: false,
    }
}

#[derive(Default)]
pub struct HeartbeatReply {
    pub cancel: Vec<UnitId>,
    pub split: Vec<UnitId>,
    pub bounds: Vec<(JobId, u64)>,
    pub writes: Vec<Write>,
}

#[derive(Debug, Clone)]
pub struct JobSnapshot {
    pub job_id: JobId,
    pub family: String,
    pub params_json: String,
    pub state: &'static str,
    pub units_total: u64,
    pub units_done: u64,
    pub units_running: u64,
    pub units_pending: u64,
    pub nodes: u64,
    /// See [`Job::nodes_discarded`].
    pub nodes_discarded: u64,
    pub lemma_bytes: u64,
    pub bound: u64,
    pub nodes_per_second: f64,
    pub created_ms: u64,
    pub finished_ms: u64,
    pub live_workers: u32,
    pub error: String,
    pub result: Option<FinalResult>,
    pub last_report: Option<Instant>,
    pub estimated_nodes: f64,
    pub estimated_nodes_error: f64,
    pub eta_seconds: f64,
}
