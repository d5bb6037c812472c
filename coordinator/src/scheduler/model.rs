//! The tests' stand-in for the store and the service, so the scheduler is
//! tested without sockets or a database.
//!
//! [`ModelStore`] applies [`Write`]s to tables in memory the way
//! `store::writer::apply_one` applies them to SQLite, and produces the [`Loaded`]
//! that `store::load` would. [`Harness`] drives a [`Scheduler`] on a
//! [`ManualClock`] the way `service.rs` does: decide, commit the writes,
//! then apply (and finish a job once its last unit is merged).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use orchard_core::DynExploration;

use super::report::{PendingReport, Report};
use super::test_family;
use super::{FinalResult, Finishing, JobState, Retried, Scheduler, SchedulerError, WorkerId};
use crate::clock::ManualClock;
use crate::store::{
    ExclusionRow, JobId, JobRow, JobUnits, Loaded, MismatchRow, NewUnit, ReplicaRow, UnitId,
    UnitRow, UnitState, Write,
};

struct ModelUnit {
    job: JobId,
    position: Vec<u8>,
    state: UnitState,
    payload: Vec<u8>,
    summary: Option<Vec<u8>>,
    nodes: Option<u64>,
    discarded: u64,
}

impl ModelUnit {
    /// The unit as `store::load` returns its row.
    fn row(&self, id: UnitId) -> UnitRow {
        UnitRow {
            id,
            job_id: self.job,
            position: self.position.clone(),
            state: self.state,
            payload: self.payload.clone(),
            summary: self.summary.clone(),
        }
    }
}

/// The store's tables, in memory.
#[derive(Default)]
pub struct ModelStore {
    jobs: BTreeMap<JobId, JobRow>,
    units: BTreeMap<UnitId, ModelUnit>,
    /// The `replicas` table: reports of units not decided yet.
    pub replicas: Vec<(JobId, ReplicaRow)>,
    /// The `mismatches` table.
    pub mismatches: Vec<(JobId, MismatchRow)>,
    /// The `exclusions` table: (job, identity), one row each.
    pub exclusions: Vec<ExclusionRow>,
}

impl ModelStore {
    fn insert_units(&mut self, job: JobId, units: &[NewUnit]) {
        for u in units {
            let old = self.units.insert(
                u.id,
                ModelUnit {
                    job,
                    position: u.position.clone(),
                    state: UnitState::Pending,
                    payload: u.payload.clone(),
                    summary: None,
                    nodes: None,
                    discarded: 0,
                },
            );
            assert!(old.is_none(), "unit id {} inserted twice", u.id);
        }
    }

    /// Commits `writes` (as one transaction: the model cannot fail).
    pub fn apply(&mut self, writes: &[Write]) {
        for w in writes {
            match w {
                Write::InsertJob {
                    id,
                    family,
                    params_json,
                    created_ms,
                    replicas,
                } => {
                    let row = JobRow {
                        id: *id,
                        family: family.clone(),
                        params_json: params_json.clone(),
                        state: JobState::Running.as_str().into(),
                        bound: 0,
                        created_ms: *created_ms,
                        finished_ms: None,
                        result_json: None,
                        results_file: None,
                        error: None,
                        discarded_nodes: 0,
                        units_total: 0,
                        units_resolved: 0,
                        nodes: 0,
                        replicas: *replicas,
                        units_done: 0,
                        mismatches: 0,
                    };
                    assert!(self.jobs.insert(*id, row).is_none(), "job {id} twice");
                }
                Write::InsertUnits { job_id, units, .. } => self.insert_units(*job_id, units),
                Write::CompleteUnit {
                    unit_id,
                    job_id,
                    nodes,
                    summary,
                    rest,
                    ..
                } => {
                    let u = self.units.get_mut(unit_id).expect("completed unit exists");
                    // The results table's primary key: one result per unit.
                    assert!(u.summary.is_none(), "unit {unit_id} completed twice");
                    u.state = UnitState::Done;
                    u.summary = Some(summary.clone());
                    u.nodes = Some(*nodes);
                    self.insert_units(*job_id, rest);
                    self.replicas.retain(|(_, r)| r.unit_id != *unit_id);
                }
                Write::Replica {
                    unit_id,
                    job_id,
                    worker,
                    host,
                    identity,
                    nodes,
                    bound,
                    summary,
                    rest,
                    ..
                } => self.replicas.push((
                    *job_id,
                    ReplicaRow {
                        unit_id: *unit_id,
                        worker: worker.clone(),
                        host: host.clone(),
                        identity: identity.clone(),
                        nodes: *nodes,
                        bound: *bound,
                        summary: summary.clone(),
                        rest: rest.clone(),
                    },
                )),
                Write::Mismatch { job_id, row, .. } => {
                    self.mismatches.push((*job_id, row.clone()));
                }
                Write::Exclude {
                    job_id, identity, ..
                } => {
                    // UNIQUE (job_id, identity), inserted or ignored.
                    if !self
                        .exclusions
                        .iter()
                        .any(|e| e.job_id == *job_id && e.identity.key == identity.key)
                    {
                        self.exclusions.push(ExclusionRow {
                            job_id: *job_id,
                            identity: identity.clone(),
                        });
                    }
                }
                Write::Leased { .. } => {}
                Write::SetBound { job_id, bound } => {
                    if let Some(j) = self.jobs.get_mut(job_id) {
                        j.bound = j.bound.max(*bound);
                    }
                }
                Write::CancelUnits { units } => {
                    for (id, discarded) in units {
                        let pending = |u: &&mut ModelUnit| u.state == UnitState::Pending;
                        if let Some(u) = self.units.get_mut(id).filter(pending) {
                            u.state = UnitState::Cancelled;
                            u.discarded = *discarded;
                        }
                    }
                }
                Write::InsertLemmas { .. } | Write::EvictLemmas { .. } => {}
                Write::FinishJob {
                    job_id,
                    state,
                    finished_ms,
                    result_json,
                    results_file,
                    error,
                } => {
                    let j = self.jobs.get_mut(job_id).expect("finished job exists");
                    j.state = state.to_string();
                    j.finished_ms = Some(*finished_ms);
                    j.result_json = result_json.clone();
                    j.results_file = results_file.clone();
                    j.error = error.clone();
                    if *state == JobState::Cancelled.as_str() {
                        for u in self.units.values_mut() {
                            if u.job == *job_id && u.state == UnitState::Pending {
                                u.state = UnitState::Cancelled;
                            }
                        }
                    }
                    self.replicas.retain(|(j, _)| j != job_id);
                }
                Write::RetryJob { job_id } => {
                    let j = self.jobs.get_mut(job_id).expect("retried job exists");
                    j.state = JobState::Running.as_str().into();
                    j.finished_ms = None;
                    j.result_json = None;
                    j.results_file = None;
                    j.error = None;
                }
            }
        }
    }

    /// What `Store::job_units` reads of a job.
    pub fn job_units(&self, job: JobId) -> JobUnits {
        let of_job = || self.units.iter().filter(move |(_, u)| u.job == job);
        JobUnits {
            units: of_job()
                .filter(|(_, u)| matches!(u.state, UnitState::Pending | UnitState::Done))
                .map(|(&id, u)| u.row(id))
                .collect(),
            cancelled: of_job()
                .filter(|(_, u)| u.state == UnitState::Cancelled)
                .map(|(_, u)| u.position.clone())
                .collect(),
        }
    }

    /// Marks a failed job's pending units cancelled, as a coordinator of
    /// an earlier version did when a job failed.
    pub fn drop_pending_of_failed(&mut self, job: JobId) {
        for u in self.units.values_mut() {
            if u.job == job && u.state == UnitState::Pending {
                u.state = UnitState::Cancelled;
            }
        }
    }

    /// What `store::load` reads from these tables.
    pub fn loaded(&self) -> Loaded {
        let running = |job: JobId| {
            self.jobs
                .get(&job)
                .is_some_and(|j| j.state == JobState::Running.as_str())
        };
        let jobs = self
            .jobs
            .values()
            .map(|j| {
                let units = || self.units.values().filter(|u| u.job == j.id);
                JobRow {
                    discarded_nodes: units().map(|u| u.discarded).sum(),
                    units_total: units().count() as u64,
                    units_resolved: units()
                        .filter(|u| matches!(u.state, UnitState::Done | UnitState::Cancelled))
                        .count() as u64,
                    nodes: units().filter_map(|u| u.nodes).sum(),
                    units_done: units().filter(|u| u.state == UnitState::Done).count() as u64,
                    mismatches: self.mismatches.iter().filter(|(m, _)| *m == j.id).count() as u64,
                    ..j.clone()
                }
            })
            .collect();
        let units = self
            .units
            .iter()
            .filter(|(_, u)| {
                running(u.job) && matches!(u.state, UnitState::Pending | UnitState::Done)
            })
            .map(|(&id, u)| u.row(id))
            .collect();
        let cancelled = self
            .units
            .values()
            .filter(|u| running(u.job) && u.state == UnitState::Cancelled)
            .map(|u| (u.job, u.position.clone()))
            .collect();
        Loaded {
            jobs,
            units,
            cancelled,
            max_unit_id: self.units.keys().next_back().copied().unwrap_or(0),
            lemma_blobs: Vec::new(),
            replicas: self
                .replicas
                .iter()
                .filter(|(j, _)| running(*j))
                .map(|(_, r)| r.clone())
                .collect(),
            exclusions: self.exclusions.clone(),
        }
    }

    /// (units stored, units done, nodes of the done units) of a job.
    pub fn counts(&self, job: JobId) -> (u64, u64, u64) {
        let units = self.units.values().filter(|u| u.job == job);
        let done: Vec<_> = units
            .clone()
            .filter(|u| u.state == UnitState::Done)
            .collect();
        (
            units.count() as u64,
            done.len() as u64,
            done.iter().filter_map(|u| u.nodes).sum(),
        )
    }
}

impl Report {
    /// `worker`'s report of `unit_id` saying what `e` explored, as a worker
    /// sends it (`stopped`: its search was asked to stop early). The test
    /// family keeps no job-wide bound.
    pub fn explored(worker: WorkerId, unit_id: UnitId, e: DynExploration, stopped: bool) -> Report {
        Report {
            worker,
            unit_id,
            summary: e.summary,
            nodes: e.nodes,
            rest: e.rest,
            bound: 0,
            stopped,
        }
    }
}

pub const TTL: Duration = Duration::from_secs(30);

/// A scheduler on a manual clock, with the store modelled in memory.
pub struct Harness {
    pub clock: Arc<ManualClock>,
    pub s: Scheduler,
    pub store: ModelStore,
    /// The reports of jobs that finished, by job.
    pub finished: BTreeMap<JobId, serde_json::Value>,
}

impl Harness {
    pub fn new() -> Self {
        let clock = Arc::new(ManualClock::new());
        Harness {
            s: Scheduler::new(TTL, clock.clone()),
            clock,
            store: ModelStore::default(),
            finished: BTreeMap::new(),
        }
    }

    /// Submits a job of the test family.
    pub fn submit(&mut self, family: &str, leaves: u64, roots: u64, target: Option<u64>) -> JobId {
        self.submit_verified(family, leaves, roots, target, 1)
    }

    /// Submits a job of the test family whose units are each explored by
    /// `replicas` different workers.
    pub fn submit_verified(
        &mut self,
        family: &str,
        leaves: u64,
        roots: u64,
        target: Option<u64>,
        replicas: u32,
    ) -> JobId {
        self.submit_json(
            family,
            &test_family::params(leaves, roots, target),
            replicas,
        )
    }

    /// Submits a job of the test family with these parameters (JSON).
    pub fn submit_json(&mut self, family: &str, params_json: &str, replicas: u32) -> JobId {
        let job = test_family::prepare(family, params_json).expect("valid test job");
        let (id, writes) = self.s.create_job(job, replicas);
        self.store.apply(&writes);
        id
    }

    pub fn worker(&mut self) -> WorkerId {
        self.worker_on("test")
    }

    /// A worker registered under the name (host) `host`.
    pub fn worker_on(&mut self, host: &str) -> WorkerId {
        let families = vec!["leaves".to_string(), "leaves-moot".to_string()];
        self.s.register(host.into(), 4, families)
    }

    /// Leases up to `max` units to `worker`: their ids and payloads.
    pub fn lease(&mut self, worker: WorkerId, max: usize) -> Vec<(UnitId, Vec<u8>)> {
        let (granted, writes) = self.s.lease(worker, max);
        self.store.apply(&writes);
        granted
            .into_iter()
            .map(|g| (g.unit_id, g.payload.to_vec()))
            .collect()
    }

    /// The range of each leased unit, in the order granted.
    pub fn lease_ranges(&mut self, worker: WorkerId, max: usize) -> Vec<(u64, u64)> {
        self.lease(worker, max)
            .iter()
            .map(|(_, p)| test_family::range(p))
            .map(|r| (r.lo, r.hi))
            .collect()
    }

    /// A worker's report of `payload` explored within `budget` leaves, up
    /// to its reservation (`None`: ignored as late or duplicate). The
    /// reporting worker is the unit's holder (or one that held it).
    pub fn begin(&mut self, unit: UnitId, payload: &[u8], budget: u64) -> Option<PendingReport> {
        let worker = self
            .s
            .units
            .get(&unit)
            .and_then(|u| {
                u.lease
                    .as_ref()
                    .map(|l| l.worker)
                    .or(u.holders.first().copied())
            })
            .unwrap_or(0);
        self.begin_as(worker, unit, payload, budget)
            .expect("a well-formed report of a unit the worker held")
    }

    /// `worker`'s report of `payload` explored within `budget` leaves, up
    /// to its reservation, or why it was refused.
    pub fn begin_as(
        &mut self,
        worker: WorkerId,
        unit: UnitId,
        payload: &[u8],
        budget: u64,
    ) -> Result<Option<PendingReport>, super::SchedulerError> {
        let job_id = self
            .job_of(unit)
            .or_else(|| self.s.jobs.keys().next().copied())
            .expect("a job");
        let Some(prepared) = self.s.jobs[&job_id].prepared.clone() else {
            return Ok(None);
        };
        let e = test_family::explore(prepared.as_ref(), payload, budget);
        self.s
            .begin_report(Report::explored(worker, unit, e, budget != u64::MAX))
    }

    fn job_of(&self, unit: UnitId) -> Option<JobId> {
        self.s.units.get(&unit).map(|u| u.job)
    }

    /// Commits a reserved report, then applies it (and finishes the job if
    /// that was its last unit), as the service does.
    pub fn commit(&mut self, p: PendingReport) {
        let done_ms = self.clock_ms();
        self.store_report(&p, done_ms);
        let (finishing, writes) = self.s.complete_report(p);
        self.store.apply(&writes);
        if let Some(f) = finishing {
            self.finish(f);
        }
    }

    /// Commits a reserved report to the store only (the service's commit,
    /// before it applies the report).
    pub fn store_report(&mut self, p: &PendingReport, done_ms: u64) {
        self.store
            .apply(&crate::service::report_writes(p, "test".into(), done_ms));
    }

    /// Reports `unit` explored within `budget` and commits it; false when
    /// the report was ignored.
    pub fn report(&mut self, unit: UnitId, payload: &[u8], budget: u64) -> bool {
        match self.begin(unit, payload, budget) {
            Some(p) => {
                self.commit(p);
                true
            }
            None => false,
        }
    }

    fn clock_ms(&self) -> u64 {
        use crate::clock::Clock;
        self.clock.unix_ms()
    }

    /// Writes the end of a finished job and records it (`Shared::finish`
    /// without the files).
    pub fn finish(&mut self, f: Finishing) {
        let (state, result, error) = match f.report {
            Ok(r) => {
                self.finished.insert(f.job_id, r.json.clone());
                let json = serde_json::json!({ "result": r.json, "text": r.text });
                let result = FinalResult {
                    json: json.to_string(),
                    results_file: String::new(),
                };
                (JobState::Done, Some(result), None)
            }
            Err(e) => (JobState::Failed, None, Some(e)),
        };
        self.store.apply(&[Write::FinishJob {
            job_id: f.job_id,
            state: state.as_str(),
            finished_ms: self.clock_ms(),
            result_json: result.as_ref().map(|r| r.json.clone()),
            results_file: None,
            error: error.clone(),
        }]);
        self.s.job_finished(f.job_id, state, result, error);
    }

    /// Cancels a job as the service does; false if it was not running.
    pub fn cancel(&mut self, job: JobId) -> bool {
        if !self.s.begin_cancel(job).expect("known job") {
            return false;
        }
        self.store.apply(&[Write::FinishJob {
            job_id: job,
            state: JobState::Cancelled.as_str(),
            finished_ms: self.clock_ms(),
            result_json: None,
            results_file: None,
            error: None,
        }]);
        self.s.job_finished(job, JobState::Cancelled, None, None);
        true
    }

    /// Retries a failed job as the service does: begun, rebuilt from the
    /// store, committed, applied, and settled (`commit: false` stops after
    /// the commit, as a coordinator killed there would).
    pub fn retry(&mut self, job: JobId, commit: bool) -> Result<(), SchedulerError> {
        let (family, params) = self.s.begin_retry(job)?;
        let prepared = test_family::prepare(&family, &params).expect("the test family");
        let retried = match Retried::build(job, prepared, self.store.job_units(job)) {
            Ok(r) => r,
            Err(e) => {
                self.s.abort_retry(job);
                return Err(e);
            }
        };
        self.store.apply(&[Write::RetryJob { job_id: job }]);
        if !commit {
            return Ok(());
        }
        let (finishing, writes) = self.s.finish_retry(job, retried);
        self.store.apply(&writes);
        if let Some(f) = finishing {
            self.finish(f);
        }
        Ok(())
    }

    /// A worker's report that it could not explore `unit` (`retryable`:
    /// another attempt may succeed), as the service applies it.
    pub fn fail(&mut self, worker: WorkerId, unit: UnitId, retryable: bool) {
        if let Some(f) = self.s.fail_unit(worker, unit, "it broke", retryable) {
            self.finish(f);
        }
    }

    /// A coordinator restart: the scheduler rebuilt from what was
    /// committed, then swept and finished as `Coordinator::open` does.
    /// Workers are forgotten; reports in flight are lost.
    pub fn restart(&mut self) {
        self.s = Scheduler::from_store(
            self.store.loaded(),
            TTL,
            self.clock.clone(),
            &test_family::prepare,
        )
        .expect("the model store loads");
        let writes = self.s.sweep_all_moot();
        self.store.apply(&writes);
        let writes = self.s.reopen_all_unsettled();
        self.store.apply(&writes);
        for f in self.s.finished_on_load() {
            self.finish(f);
        }
    }

    /// Moves time forward and expires the leases that ran out.
    pub fn advance(&mut self, by: Duration) -> usize {
        self.clock.advance(by);
        self.s.expire_leases()
    }

    /// Checks that the live units of a running `job` and the leaves merged
    /// so far partition the job's leaves, and that every counter agrees
    /// with the units themselves.
    pub fn check(&self, job_id: JobId, leaves: u64) {
        let s = &self.s;
        let job = &s.jobs[&job_id];
        if job.state != JobState::Running {
            return;
        }
        let mut covered = vec![0u32; leaves as usize];
        let live: Vec<_> = s.units.iter().filter(|(_, u)| u.job == job_id).collect();
        for (_, u) in &live {
            let r = test_family::range(&u.payload);
            for leaf in r.lo..r.hi {
                covered[leaf as usize] += 1;
            }
        }
        let report = job.aggregate.as_ref().expect("running job").report().json;
        assert_eq!(report["twice"], 0, "a leaf merged twice");
        assert_eq!(report["leaves"], report["distinct"]);
        assert_eq!(job.nodes_done, report["leaves"].as_u64().unwrap());
        let merged = report["distinct"].as_u64().unwrap();
        let live_leaves = covered.iter().filter(|&&c| c > 0).count() as u64;
        assert!(covered.iter().all(|&c| c <= 1), "live units overlap");
        assert_eq!(merged + live_leaves, leaves, "live and merged leaves");
        // Counters.
        assert_eq!(job.units_total, job.units_done + live.len() as u64);
        let leased = live.iter().filter(|(_, u)| u.lease.is_some()).count() as u64;
        assert_eq!(job.units_leased, leased);
        for (&id, u) in &live {
            if u.lease.is_none() && !u.reporting {
                assert!(
                    job.pending.contains(&(u.position.clone(), id)),
                    "unit {id} lost"
                );
            }
            if let Some(l) = &u.lease {
                if let Some(w) = s.workers.get(&l.worker) {
                    assert!(w.units.contains(&id), "worker does not know its unit {id}");
                }
            }
        }
        // (The queue may also hold stale entries: units adopted by a
        // heartbeat, or done since; `lease` skips them.)
        // The store: every unit the scheduler counts is stored.
        let (stored, done, nodes) = self.store.counts(job_id);
        assert_eq!(stored, job.units_total, "units stored");
        assert_eq!(nodes, job.nodes_done, "nodes stored");
        let cancelled = stored - done - live.len() as u64;
        assert_eq!(done + cancelled, job.units_done);
    }
}
