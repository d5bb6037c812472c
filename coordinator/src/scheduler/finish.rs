//! The end of a job. A job ends when no live unit is left (done), when a
//! unit fails (failed), or when a user cancels it. Ending takes two steps
//! around the store, like a report: the scheduler marks the job *finishing*
//! (it leases and accepts nothing more, and the end happens once), the
//! service writes the results and commits the end, then
//! [`Scheduler::job_finished`] records it and drops the job's live units.

use std::sync::Arc;

use orchard_core::{FamilyReport, Figure, PreparedJob};

use super::job::FinalResult;
use super::{Scheduler, SchedulerError};
use crate::status::JobState;
use crate::store::{JobId, UnitId};

/// A job that has no live unit left and must be finished.
pub struct Finishing {
    pub job_id: JobId,
    pub family: String,
    /// The family bound to the job's parameters (for unit labels).
    pub prepared: Option<Arc<dyn PreparedJob>>,
    pub report: Result<FamilyReport, String>,
    /// The family's figures of the final answer (see
    /// [`orchard_core::figure`]), stored with it.
    pub figures: Vec<Figure>,
    /// Workers that explored each unit, and units whose replicas agreed
    /// (for the results file of a verified job).
    pub replicas: u32,
    pub verified_units: u64,
}

impl Scheduler {
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
                figures: Vec::new(),
                replicas: job.replicas,
                verified_units: job.verified_units,
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
        let figures = job
            .aggregate
            .as_ref()
            .map(|a| a.figures(&[]))
            .unwrap_or_default();
        Some(Finishing {
            job_id,
            family: job.family.clone(),
            prepared: job.prepared.clone(),
            report,
            figures,
            replicas: job.replicas,
            verified_units: job.verified_units,
        })
    }

    /// Jobs that ended while nobody reported (e.g. loaded complete).
    pub fn finished_on_load(&mut self) -> Vec<Finishing> {
        let ids: Vec<JobId> = self.jobs.keys().copied().collect();
        ids.into_iter()
            .filter_map(|id| self.check_finished(id))
            .collect()
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
        let finished_ms = self.clock.unix_ms();
        if let Some(job) = self.jobs.get_mut(&job_id) {
            job.state = state;
            job.finishing = false;
            job.finished_ms = Some(finished_ms);
            job.result = result;
            if error.is_some() {
                job.error = error;
            }
            job.aggregate = None;
            job.pending.clear();
            job.units_leased = 0;
        }
    }
}
