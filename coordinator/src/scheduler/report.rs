//! A unit's report, in two steps around the commit. [`Scheduler::begin_report`]
//! checks it and reserves the unit (a second report of the same unit is
//! then ignored: the first one committed wins); the service commits it; then
//! [`Scheduler::complete_report`] merges the summary and makes the rest
//! units pending, or [`Scheduler::abort_report`] gives the unit back if the
//! commit failed.

use super::finish::Finishing;
use super::replicas::{verdict, Verification, MAX_EXTRA_REPLICAS};
use super::unit::{Replica, Unit};
use super::{Scheduler, SchedulerError, WorkerId};
use crate::identity::WorkerIdentity;
use crate::store::{JobId, MismatchRow, NewUnit, UnitId, Write};

/// What a worker's report of a unit says, decoded once from its
/// `ReportRequest`: the value the scheduler checks and reserves the unit
/// for (see [`Scheduler::begin_report`]).
#[derive(Debug, Clone)]
pub struct Report {
    /// The worker that reported.
    pub worker: WorkerId,
    pub unit_id: UnitId,
    /// The family's summary of the part of the unit it explored.
    pub summary: Vec<u8>,
    pub nodes: u64,
    /// The units it hands back (payloads): the part a stopped search did
    /// not reach, or a split of the family's own.
    pub rest: Vec<Vec<u8>>,
    /// The job-wide bound the worker knew when it reported.
    pub bound: u64,
    /// Its search was asked to stop early, so `rest` is what it did not
    /// reach.
    pub stopped: bool,
}

/// A report accepted for commit; see [`Scheduler::begin_report`].
pub struct PendingReport {
    pub unit_id: UnitId,
    pub job_id: JobId,
    /// The worker that reported.
    pub worker: WorkerId,
    pub summary: Vec<u8>,
    pub nodes: u64,
    pub rest: Vec<NewUnit>,
    pub bound: u64,
    /// For a unit of a verified job: what the report decides.
    pub verified: Option<Verification>,
}

impl PendingReport {
    /// The summary, nodes and worker description the unit is completed
    /// with, if this report completes it: its own, or for a verified job,
    /// the winning replica's once the replicas agree. `None`: the report is
    /// one more replica of a unit not decided yet.
    pub fn completion(&self) -> Option<(&[u8], u64, Option<&str>)> {
        match &self.verified {
            None => Some((&self.summary, self.nodes, None)),
            Some(v) => v
                .decided
                .as_ref()
                .map(|w| (w.summary.as_slice(), w.nodes, Some(w.describe.as_str()))),
        }
    }
}

impl Scheduler {
    /// Checks `report` and reserves its unit for its worker. Taken by
    /// value: its summary and rest move into the [`PendingReport`].
    /// `Ok(None)`: a late or duplicate report, to acknowledge and ignore. A
    /// report of a unit the worker was never leased since the coordinator
    /// started is refused ([`SchedulerError::NotHeld`]) and never counted.
    pub fn begin_report(
        &mut self,
        report: Report,
    ) -> Result<Option<PendingReport>, SchedulerError> {
        let (worker, unit_id) = (report.worker, report.unit_id);
        let Some(unit) = self.units.get_mut(&unit_id) else {
            self.counters.reports_ignored += 1;
            return Ok(None);
        };
        if !unit.may_report(worker) {
            self.counters.reports_refused += 1;
            return Err(SchedulerError::NotHeld(format!(
                "unit {unit_id} was not leased to worker {worker}: report refused"
            )));
        }
        if unit.reporting {
            self.counters.reports_ignored += 1;
            return Ok(None);
        }
        let job = self.jobs.get(&unit.job).expect("live unit has a job");
        if !job.live() {
            self.counters.reports_ignored += 1;
            return Ok(None);
        }
        let prepared = job.prepared.as_ref().expect("running job is prepared");
        prepared
            .check_summary(&report.summary)
            .map_err(|e| SchedulerError::Invalid(format!("unit {unit_id}: bad summary: {e}")))?;
        for r in &report.rest {
            prepared.check_unit(r).map_err(|e| {
                SchedulerError::Invalid(format!("unit {unit_id}: bad rest unit: {e}"))
            })?;
        }
        let job_id = unit.job;
        let verified = if job.replicas > 1 {
            match self.verify(&report)? {
                Some(v) => Some(v),
                None => {
                    self.counters.reports_ignored += 1;
                    self.release(worker, unit_id);
                    return Ok(None);
                }
            }
        } else {
            None
        };
        let Report {
            summary,
            nodes,
            rest,
            bound,
            ..
        } = report;
        // A verified unit's children are those its replicas agreed on (none
        // until they do).
        let rest = match &verified {
            None => rest,
            Some(v) => v
                .decided
                .as_ref()
                .map(|w| w.rest.clone())
                .unwrap_or_default(),
        };
        let unit = self.units.get_mut(&unit_id).expect("checked above");
        unit.reporting = true;
        let parent = unit.position.clone();
        let rest = self.number_children(&parent, rest);
        Ok(Some(PendingReport {
            unit_id,
            job_id,
            worker,
            summary,
            nodes,
            rest,
            bound,
            verified,
        }))
    }

    /// What a report of a unit of a verified job decides (see `replicas`).
    /// `None`: it is not a replica to count — a search stopped early (its
    /// worker was stopping), from a worker found lying in the job, or a
    /// second report of the same worker.
    fn verify(&self, report: &Report) -> Result<Option<Verification>, SchedulerError> {
        let (worker, unit_id) = (report.worker, report.unit_id);
        let unit = &self.units[&unit_id];
        let job = &self.jobs[&unit.job];
        let prepared = job.prepared.as_ref().expect("running job is prepared");
        if (report.stopped && !report.rest.is_empty())
            || self.is_excluded(unit.job, worker)
            || unit.replicas.iter().any(|r| r.worker == Some(worker))
        {
            return Ok(None);
        }
        let (describe, host, identity) = match self.workers.get(&worker) {
            Some(w) => (
                self.describe_worker(worker),
                w.hostname.clone(),
                w.durable.clone(),
            ),
            // Forgotten since it was leased the unit (it held it before a
            // restart): known by this run's number only.
            None => {
                let key = format!("worker:{worker}");
                let identity = WorkerIdentity {
                    label: key.clone(),
                    key,
                };
                (format!("worker {worker}"), String::new(), identity)
            }
        };
        let replica = Replica {
            worker: Some(worker),
            identity,
            describe,
            host,
            nodes: report.nodes,
            bound: report.bound,
            summary: report.summary.clone(),
            rest: report.rest.clone(),
        };
        let mut all: Vec<&Replica> = unit.replicas.iter().collect();
        all.push(&replica);
        // At least every bound the replicas' explorations saw.
        let bound = all.iter().map(|r| r.bound).fold(job.bound, u64::max);
        // What must agree: the family's verified part, and the units it
        // split off (a deterministic split of its own).
        let parts = all
            .iter()
            .map(|r| {
                prepared
                    .verified_part(&unit.payload, &r.summary, bound)
                    .map(|part| orchard_core::codec::encode(&(part, &r.rest)))
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| SchedulerError::Invalid(format!("unit {unit_id}: {e}")))?;
        let (new, earlier) = parts.split_last().expect("one part at least");
        let describe = |r: &Replica| {
            prepared
                .describe_summary(&r.summary)
                .unwrap_or_else(|e| format!("unreadable summary: {e}"))
        };
        // A mismatch: the report agrees with no earlier replica (one that
        // sides with an earlier replica adds a vote, not a disagreement).
        let disagrees = !earlier.is_empty() && !earlier.contains(new);
        let mismatch = disagrees.then(|| MismatchRow {
            unit_id,
            unit_label: prepared
                .unit_label(&unit.payload)
                .unwrap_or_else(|_| "?".into()),
            worker_a: all[0].describe.clone(),
            identity_a: all[0].identity.key.clone(),
            summary_a: describe(all[0]),
            worker_b: replica.describe.clone(),
            identity_b: replica.identity.key.clone(),
            summary_b: describe(&replica),
        });
        let k = job.replicas as usize;
        let decided = verdict(&parts, k);
        let liars = decided
            .map(|w| {
                all.iter()
                    .zip(&parts)
                    .filter(|(_, p)| **p != parts[w])
                    .map(|(r, _)| r.identity.clone())
                    .collect()
            })
            .unwrap_or_default();
        let no_majority = decided.is_none() && all.len() >= k + MAX_EXTRA_REPLICAS;
        let decided = decided.map(|w| all[w].clone());
        Ok(Some(Verification {
            replica,
            decided,
            mismatch,
            liars,
            no_majority,
        }))
    }

    /// Gives `worker`'s lease of `unit_id` back to the queue, if it holds it.
    fn release(&mut self, worker: WorkerId, unit_id: UnitId) {
        let Some(unit) = self.units.get_mut(&unit_id) else {
            return;
        };
        if unit.lease.as_ref().is_none_or(|l| l.worker != worker) {
            return;
        }
        unit.lease = None;
        if let Some(w) = self.workers.get_mut(&worker) {
            w.units.remove(&unit_id);
        }
        if let Some(job) = self.jobs.get_mut(&unit.job) {
            job.units_leased = job.units_leased.saturating_sub(1);
            job.pending.insert((unit.position.clone(), unit_id));
        }
    }

    /// The commit of a report failed: the unit goes back to its lease.
    pub fn abort_report(&mut self, unit_id: UnitId) {
        if let Some(u) = self.units.get_mut(&unit_id) {
            u.reporting = false;
            match u.lease.as_ref().map(|l| (l.since, l.queued)) {
                // Leased ahead and not started: not a candidate yet.
                Some((_, true)) => {}
                // Still running: it may be asked to split again (its entry
                // in `split_candidates` may have been taken meanwhile).
                Some((since, false)) => self.add_split_candidate(since, unit_id),
                // Its lease had expired before the failed report: it must
                // be waiting in the queue, or nobody would ever lease it.
                None => {
                    if let Some(job) = self.jobs.get_mut(&u.job) {
                        job.pending.insert((u.position.clone(), unit_id));
                    }
                }
            }
        }
    }

    /// Applies a committed report. Returns the job if it has just finished,
    /// and writes to queue (units cancelled as moot).
    pub fn complete_report(&mut self, mut r: PendingReport) -> (Option<Finishing>, Vec<Write>) {
        let job_id = r.job_id;
        // The reporter's own work, whatever is merged.
        if let Some(w) = self.workers.get_mut(&r.worker) {
            w.nodes_reported = w.nodes_reported.saturating_add(r.nodes);
        }
        if let Some(v) = r.verified.take() {
            let decided = self.apply_verification(&r, v);
            match decided {
                None => return (self.check_finished(job_id), Vec::new()),
                Some(w) => {
                    r.summary = w.summary;
                    r.nodes = w.nodes;
                }
            }
        }
        self.apply_report(r);
        let mut writes = self.sweep_moot(job_id);
        let (finishing, reopened) = self.settle(job_id);
        writes.extend(reopened);
        (finishing, writes)
    }

    /// The verification of a committed report of a verified job: the
    /// replica kept (and its lease given back) while undecided, the
    /// mismatch counted, the losers excluded from the job. Returns the
    /// winning replica when the unit is decided.
    fn apply_verification(&mut self, r: &PendingReport, v: Verification) -> Option<Replica> {
        let job_id = r.job_id;
        let job = self.jobs.get_mut(&job_id)?;
        if v.mismatch.is_some() {
            job.mismatches += 1;
        }
        if !v.liars.is_empty() {
            let identities: Vec<&str> = v.liars.iter().map(|l| l.label.as_str()).collect();
            tracing::warn!(
                job = job_id,
                unit = r.unit_id,
                workers = ?identities,
                "replicas disagreed: the workers outvoted get no more units of this job"
            );
            for l in &v.liars {
                job.excluded.insert(l.key.clone(), l.label.clone());
            }
        }
        if v.no_majority {
            job.state = super::JobState::Failed;
            job.error = Some(format!(
                "unit {}: its replicas disagree with no majority after {} reports (see the mismatches)",
                r.unit_id,
                job.replicas as usize + MAX_EXTRA_REPLICAS
            ));
        }
        if v.decided.is_some() {
            job.verified_units += 1;
        }
        // The liars' other leases of the job go back to the queue: those of
        // every registration under an excluded identity.
        let excluded = &job.excluded;
        let held: Vec<(WorkerId, UnitId)> = self
            .units
            .iter()
            .filter(|(_, u)| u.job == job_id && !u.reporting)
            .filter_map(|(&id, u)| u.lease.as_ref().map(|l| (l.worker, id)))
            .filter(|(w, _)| {
                self.workers
                    .get(w)
                    .is_some_and(|w| excluded.contains_key(&w.durable.key))
            })
            .collect();
        for (w, id) in held {
            self.release(w, id);
        }
        if v.decided.is_some() {
            return v.decided;
        }
        let unit = self.units.get_mut(&r.unit_id)?;
        unit.reporting = false;
        unit.replicas.push(v.replica);
        if unit.lease.is_none() {
            // Its lease had expired: it must be waiting in the queue.
            let position = unit.position.clone();
            if let Some(job) = self.jobs.get_mut(&job_id) {
                job.pending.insert((position, r.unit_id));
            }
        }
        self.release(r.worker, r.unit_id);
        None
    }

    fn apply_report(&mut self, r: PendingReport) {
        let Some(unit) = self.units.remove(&r.unit_id) else {
            return;
        };
        self.counters.reports += 1;
        if let Some(lease) = &unit.lease {
            if let Some(w) = self.workers.get_mut(&lease.worker) {
                w.units.remove(&r.unit_id);
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
        job.last_report = Some(self.clock.now());
        job.units_total += r.rest.len() as u64;
        job.nodes_done = job.nodes_done.saturating_add(r.nodes);
        if let Some(agg) = job.aggregate.as_mut() {
            job.merges += 1;
            if let Err(e) = agg.absorb(&r.summary) {
                job.state = super::JobState::Failed;
                job.error = Some(format!("merging unit {}: {e}", r.unit_id));
            } else {
                job.bound = job.bound.max(agg.bound()).max(r.bound);
            }
        }
        for u in r.rest {
            job.pending.insert((u.position.clone(), u.id));
            self.units.insert(u.id, Unit::new(r.job_id, u));
        }
    }
}
