//! A unit's report, in two steps around the commit. [`Scheduler::begin_report`]
//! checks it and reserves the unit (a second report of the same unit is
//! then ignored: the first one committed wins); the service commits it; then
//! [`Scheduler::complete_report`] merges the summary and makes the rest
//! units pending, or [`Scheduler::abort_report`] gives the unit back if the
//! commit failed.

use super::finish::Finishing;
use super::unit::Unit;
use super::{Scheduler, SchedulerError};
use crate::store::{JobId, NewUnit, UnitId, Write};

/// A report accepted for commit; see [`Scheduler::begin_report`].
pub struct PendingReport {
    pub unit_id: UnitId,
    pub job_id: JobId,
    pub summary: Vec<u8>,
    pub nodes: u64,
    pub rest: Vec<NewUnit>,
    pub bound: u64,
}

impl Scheduler {
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
            self.counters.reports_ignored += 1;
            return Ok(None);
        };
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
        job.last_report = Some(self.clock.now());
        job.units_total += r.rest.len() as u64;
        job.nodes_done = job.nodes_done.saturating_add(r.nodes);
        if let Some(agg) = job.aggregate.as_mut() {
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
