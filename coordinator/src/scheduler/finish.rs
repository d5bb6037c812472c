//! The end of a job. A job ends when no live unit is left (done), when a
//! unit fails (failed), or when a user cancels it. Ending takes two steps
//! around the store, like a report: the scheduler marks the job *finishing*
//! (it leases and accepts nothing more, and the end happens once), the
//! service writes the results and commits the end, then
//! [`Scheduler::job_finished`] records it and drops the job's live units.
//!
//! A failed job can be taken up again (`orchard retry`): it keeps its
//! unsearched units in the store (see `Write::FinishJob`), and a retry
//! rebuilds it from there ([`Scheduler::begin_retry`], then
//! [`Scheduler::finish_retry`] once `Write::RetryJob` committed).

use std::sync::Arc;

use orchard_core::{FamilyReport, Figure, PreparedJob};

use super::job::FinalResult;
use super::rate::RateMeter;
use super::restore::Retried;
use super::unit::{child_position, Unit};
use super::{Scheduler, SchedulerError, WorkerId};

/// Attempts at a unit, each failed in a way another may not be (see
/// [`Scheduler::fail_unit`]), before its job fails: enough to ride out a
/// crashed or misconfigured worker, few enough that a program that always
/// fails stops its job within minutes.
pub const UNIT_ATTEMPTS: u32 = 3;
use crate::status::JobState;
use crate::store::{JobId, NewUnit, UnitId, Write};

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
    /// [`Scheduler::reopen_unsettled`], then [`Scheduler::check_finished`]:
    /// what to do once a job's units may all be done. Returns the writes to
    /// queue (the units reopened) and the job if it is over.
    pub fn settle(&mut self, job_id: JobId) -> (Option<Finishing>, Vec<Write>) {
        let writes = self.reopen_unsettled(job_id);
        (self.check_finished(job_id), writes)
    }

    /// When a running job has no live unit left but its family says the
    /// answer still needs units (`orchard_core::MootUnits::still_needed`,
    /// asked of everything merged), makes those units pending, under a new
    /// top-level position after every unit made so far, and returns the
    /// write that stores them: the job goes on instead of ending with an
    /// unsettled answer. A family asked twice in a row for the same units
    /// cannot settle the job with them: the job fails, saying so, rather
    /// than loop. Counted in `units_reopened` and logged: a search whose
    /// units were enough never comes here.
    pub fn reopen_unsettled(&mut self, job_id: JobId) -> Vec<Write> {
        let Some(job) = self.jobs.get_mut(&job_id) else {
            return Vec::new();
        };
        if !job.live() || job.units_done < job.units_total || !job.has_moot_units {
            return Vec::new();
        }
        let Some(needed) = job.aggregate.as_ref().map(|a| a.still_needed()) else {
            return Vec::new();
        };
        if needed.is_empty() {
            return Vec::new();
        }
        if job.reopened.as_ref() == Some(&needed) {
            job.state = JobState::Failed;
            job.error = Some(format!(
                "the answer is still unsettled after the {} units the family asked for were searched, \
                 and it asks for the same units again",
                needed.len()
            ));
            return Vec::new();
        }
        job.reopened = Some(needed.clone());
        let parent = child_position(&[], usize::try_from(job.units_total).unwrap_or(usize::MAX));
        let units = self.number_children(&parent, needed);
        tracing::warn!(
            job = job_id,
            units = units.len(),
            "no unit was left but the answer is not settled: searching the units it still needs"
        );
        self.counters.units_reopened += units.len() as u64;
        let job = self.jobs.get_mut(&job_id).expect("looked up above");
        job.units_total += units.len() as u64;
        for u in &units {
            job.pending.insert((u.position.clone(), u.id));
            self.units.insert(u.id, Unit::new(job_id, u.clone()));
        }
        vec![Write::InsertUnits {
            job_id,
            parent: None,
            units,
        }]
    }

    /// [`Scheduler::reopen_unsettled`] for every job (after loading: a
    /// coordinator that stopped between a job's last report and the
    /// units reopened after it).
    pub fn reopen_all_unsettled(&mut self) -> Vec<Write> {
        let ids: Vec<JobId> = self.jobs.keys().copied().collect();
        ids.into_iter()
            .flat_map(|id| self.reopen_unsettled(id))
            .collect()
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

    /// A worker could not explore a unit. A failure another attempt may
    /// not meet (`retryable`: an external program crashed, hung, printed
    /// garbage) sends the unit back to the queue, for another worker
    /// first, until [`UNIT_ATTEMPTS`] attempts failed; any other failure,
    /// or the last attempt's, fails the job with its message (retrying a
    /// deterministic failure would loop forever). Nothing of a failed
    /// attempt is merged.
    pub fn fail_unit(
        &mut self,
        worker_id: WorkerId,
        unit_id: UnitId,
        message: &str,
        retryable: bool,
    ) -> Option<Finishing> {
        let unit = self.units.get_mut(&unit_id)?;
        let job_id = unit.job;
        let job = self.jobs.get_mut(&job_id)?;
        if !job.live() {
            return None;
        }
        let held = unit.lease.as_ref().is_some_and(|l| l.worker == worker_id) && !unit.reporting;
        let attempts = if retryable {
            unit.failed_on.push(worker_id);
            unit.failed_on.len() as u32
        } else {
            1
        };
        if retryable && attempts < UNIT_ATTEMPTS {
            if held {
                unit.lease = None;
                job.units_leased = job.units_leased.saturating_sub(1);
                job.pending.insert((unit.position.clone(), unit_id));
                if let Some(w) = self.workers.get_mut(&worker_id) {
                    w.units.remove(&unit_id);
                }
            }
            tracing::info!(
                unit = unit_id,
                attempt = attempts,
                "unit attempt failed; it goes back to the queue: {message}"
            );
            return None;
        }
        job.state = JobState::Failed;
        job.error = Some(if attempts > 1 {
            format!("unit {unit_id} failed {attempts} attempts, the last: {message}")
        } else {
            format!("unit {unit_id} failed: {message}")
        });
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

    /// Starts retrying a failed job: checks that it is failed and that its
    /// end is recorded, and marks it so that a second retry is refused
    /// until this one is finished ([`Scheduler::finish_retry`]) or given up
    /// ([`Scheduler::abort_retry`]). Returns the job's family and
    /// parameters, to bind again: a retry runs the job it was, with the
    /// same parameters (an `exec` job the same program hash).
    ///
    /// Only a failed job: a running one has nothing to retry, a done one is
    /// final, and a cancelled one dropped its unsearched units when it was
    /// cancelled (cancelled like the units pruned as moot, so which ones
    /// would have to be searched is not known).
    pub fn begin_retry(&mut self, job_id: JobId) -> Result<(String, String), SchedulerError> {
        let job = self
            .jobs
            .get_mut(&job_id)
            .ok_or(SchedulerError::UnknownJob(job_id))?;
        let only = "; only a failed job can be";
        let why = match (job.state, job.finishing) {
            (JobState::Failed, false) => None,
            (JobState::Failed, true) => Some("its end, or a retry of it, is being recorded".into()),
            (JobState::Running, _) => Some(format!("it is running{only}")),
            (JobState::Done, _) => Some(format!("it is done{only}")),
            (JobState::Cancelled, _) => Some(format!(
                "it was cancelled, which dropped its unsearched units (submit it again){only}"
            )),
        };
        if let Some(why) = why {
            return Err(SchedulerError::NotRetryable(format!(
                "job {job_id} cannot be retried: {why}"
            )));
        }
        job.finishing = true;
        Ok((job.family.clone(), job.params_json.clone()))
    }

    /// Gives up a retry begun with [`Scheduler::begin_retry`] before its
    /// write committed: the job stays failed, as it was.
    pub fn abort_retry(&mut self, job_id: JobId) {
        if let Some(job) = self.jobs.get_mut(&job_id) {
            if job.state == JobState::Failed {
                job.finishing = false;
            }
        }
    }

    /// Applies a retry once `Write::RetryJob` committed: the job runs
    /// again from `retried` (its stored units, rebuilt by
    /// [`Retried::build`]): its pending units live, with no failed attempt
    /// (the one that failed the job among them), its done units merged once
    /// in its aggregate, its error and end cleared. Then settles it, as a
    /// report would: a job with no unit left to search ends (or goes on with
    /// the units its family says the answer still needs); the writes and
    /// the end are the caller's to commit.
    pub fn finish_retry(
        &mut self,
        job_id: JobId,
        retried: Retried,
    ) -> (Option<Finishing>, Vec<Write>) {
        let Some(job) = self.jobs.get_mut(&job_id) else {
            return (None, Vec::new());
        };
        let Retried {
            prepared,
            aggregate,
            pending,
            resolved,
            done,
        } = retried;
        job.state = JobState::Running;
        job.finishing = false;
        job.error = None;
        job.finished_ms = None;
        job.result = None;
        job.reopened = None;
        job.interim = None;
        job.figures = None;
        job.estimate = None;
        job.rate = RateMeter::default();
        job.last_report = None;
        // Judges made before are of another aggregate: none may be reused.
        job.moot_judge = None;
        job.merges += 1;
        // Its lemmas were deleted when it failed.
        job.lemma_bytes = 0;
        job.lemma_blobs.clear();
        job.has_moot_units = prepared.has_moot_units();
        job.prepared = Some(prepared);
        job.nodes_done = aggregate.nodes();
        job.bound = job.bound.max(aggregate.bound());
        job.aggregate = Some(aggregate);
        job.units_total = (resolved.len() + pending.len()) as u64;
        job.units_done = 0;
        job.done_by_prefix.clear();
        for position in &resolved {
            job.resolved(position);
        }
        if job.replicas > 1 {
            job.verified_units = done;
        }
        job.units_leased = 0;
        job.pending.clear();
        // No worker holds them: a worker that still lists one (its lease
        // was dropped with the job's units when the job failed) would
        // otherwise count as holding it.
        let ids: std::collections::HashSet<UnitId> = pending.iter().map(|u| u.id).collect();
        for w in self.workers.values_mut() {
            w.units.retain(|id| !ids.contains(id));
        }
        for u in pending {
            job.pending.insert((u.position.clone(), u.id));
            let unit = NewUnit {
                id: u.id,
                position: u.position,
                payload: u.payload,
            };
            self.units.insert(u.id, Unit::new(job_id, unit));
        }
        tracing::info!(
            job = job_id,
            units = self.jobs[&job_id].pending.len(),
            "failed job retried: its unsearched units are back in the queue"
        );
        let (finishing, writes) = self.settle(job_id);
        (finishing, writes)
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
