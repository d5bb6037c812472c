//! Rebuilding the scheduler from the store at startup: jobs with their
//! counters, the aggregates of running jobs re-merged from their done
//! units' summaries, and their pending units live again (leases are not
//! stored: every unit starts pending, and a worker still running one adopts
//! it back at its next heartbeat).
//!
//! A failed job taken up again (`orchard retry`) is rebuilt the same way,
//! from its units as the store kept them ([`Retried`]).
//!
//! The families are looked up through the function the caller passes in,
//! so this module names no family registry.

use std::sync::Arc;
use std::time::Duration;

use orchard_core::{Aggregate, PreparedJob};

use super::job::{FinalResult, Job};
use super::unit::{Replica, Unit};
use super::{Scheduler, SchedulerError};
use crate::clock::Clock;
use crate::status::JobState;
use crate::store::{JobId, JobUnits, Loaded, NewUnit, UnitRow, UnitState};

/// Binds a family, by name, to a job's canonical JSON parameters.
pub type PrepareFn<'a> = &'a dyn Fn(&str, &str) -> Result<Arc<dyn PreparedJob>, String>;

impl Scheduler {
    /// Rebuilds the state from the store. Jobs whose family or parameters
    /// cannot be loaded (`prepare` fails: `prepare(family, params_json)`)
    /// are marked failed, with the reason.
    pub fn from_store(
        loaded: Loaded,
        lease_ttl: Duration,
        clock: Arc<dyn Clock>,
        prepare: PrepareFn<'_>,
    ) -> Result<Scheduler, String> {
        let mut s = Scheduler::new(lease_ttl, clock.clone());
        s.next_unit = loaded.max_unit_id + 1;
        // Worker ids are not stored: number this run's workers from the
        // milliseconds since the epoch, after every earlier run's (unless
        // one registered a worker a millisecond), so that a report a worker
        // sends under its id of a previous run is never taken for another
        // worker's (see `Unit::may_report`).
        s.next_worker = clock.unix_ms().max(1);
        for row in loaded.jobs {
            s.next_job = s.next_job.max(row.id + 1);
            let mut job = Job::new(
                row.id,
                row.family.clone(),
                row.params_json.clone(),
                JobState::parse(&row.state),
                row.created_ms,
            );
            job.bound = row.bound;
            job.replicas = row.replicas;
            job.mismatches = row.mismatches;
            job.nodes_discarded = row.discarded_nodes;
            job.finished_ms = row.finished_ms;
            job.error = row.error.clone();
            if job.state != JobState::Running {
                // Its units are not loaded: its figures come from the store.
                job.units_total = row.units_total;
                job.units_done = row.units_resolved;
                job.nodes_done = row.nodes;
                if job.replicas > 1 {
                    job.verified_units = row.units_done;
                }
            }
            if job.state == JobState::Done {
                job.result = Some(FinalResult {
                    json: row.result_json.unwrap_or_default(),
                    results_file: row.results_file.unwrap_or_default(),
                });
            }
            if job.state == JobState::Running {
                match prepare(&row.family, &row.params_json) {
                    Ok(p) => job.attach(p),
                    Err(e) => {
                        job.state = JobState::Failed;
                        job.error = Some(format!("cannot resume: {e}"));
                    }
                }
            }
            s.jobs.insert(job.id, job);
        }
        for (job_id, blobs) in loaded.lemma_blobs {
            if let Some(job) = s.jobs.get_mut(&job_id) {
                job.lemma_bytes = blobs.iter().sum();
                job.lemma_blobs = blobs.into();
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
            if u.state == UnitState::Done {
                let summary = u.summary.unwrap_or_default();
                agg.absorb(&summary).map_err(|e| {
                    format!(
                        "job {}: stored result of unit {} unusable: {e}",
                        job.id, u.id
                    )
                })?;
                job.resolved(&u.position);
                if job.replicas > 1 {
                    job.verified_units += 1;
                }
            } else {
                job.pending.insert((u.position.clone(), u.id));
                let unit = NewUnit {
                    id: u.id,
                    position: u.position,
                    payload: u.payload,
                };
                s.units.insert(u.id, Unit::new(u.job_id, unit));
            }
        }
        // Replicas of undecided units: known by their host and identity
        // (worker ids do not survive a restart).
        for r in loaded.replicas {
            if let Some(unit) = s.units.get_mut(&r.unit_id) {
                unit.replicas.push(Replica {
                    worker: None,
                    identity: r.identity,
                    describe: r.worker,
                    host: r.host,
                    nodes: r.nodes,
                    bound: r.bound,
                    summary: r.summary,
                    rest: r.rest,
                });
            }
        }
        // Workers found lying stay excluded, by identity: whoever registers
        // under it again is refused the job's units.
        for e in loaded.exclusions {
            if let Some(job) = s.jobs.get_mut(&e.job_id) {
                job.excluded.insert(e.identity.key, e.identity.label);
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
}

/// A failed job as a retry takes it up again, rebuilt from its stored units
/// (see [`crate::store::Store::job_units`]) before anything is committed:
/// what cannot be rebuilt, or not exactly, refuses the retry and leaves the
/// job as it was. Built off the scheduler's lock (merging every done unit's
/// summary again takes as long as at startup); applied by
/// [`Scheduler::finish_retry`].
pub struct Retried {
    pub(super) prepared: Arc<dyn PreparedJob>,
    /// The done units' summaries, each merged once.
    pub(super) aggregate: Box<dyn Aggregate>,
    /// The units to search: those the job had not searched when it failed.
    pub(super) pending: Vec<UnitRow>,
    /// The positions of the units done or cancelled as moot.
    pub(super) resolved: Vec<Vec<u8>>,
    /// Units done.
    pub(super) done: u64,
}

impl Retried {
    /// Rebuilds job `job_id`, bound to its family by `prepared`, from its
    /// stored units. Refused when a summary cannot be merged (the job would
    /// fail again on it), and when the job kept no unsearched unit but has
    /// cancelled ones: then some of those may be units a coordinator of an
    /// earlier version dropped when the job failed, which cannot be told
    /// from units cancelled as moot, and ending the job without them could
    /// give a wrong answer. A job that fails keeps its unsearched units, so
    /// one that failed on a unit has at least that one.
    pub fn build(
        job_id: JobId,
        prepared: Arc<dyn PreparedJob>,
        stored: JobUnits,
    ) -> Result<Retried, SchedulerError> {
        let refused = |why: String| {
            SchedulerError::NotRetryable(format!("job {job_id} cannot be retried: {why}"))
        };
        let (pending, done): (Vec<UnitRow>, Vec<UnitRow>) = stored
            .units
            .into_iter()
            .partition(|u| u.state == UnitState::Pending);
        if pending.is_empty() && !stored.cancelled.is_empty() {
            return Err(refused(
                "it kept no unsearched unit while some of its units are cancelled (units an \
                 earlier orchard dropped when the job failed cannot be told from units pruned \
                 as moot); submit it again"
                    .into(),
            ));
        }
        let mut aggregate = prepared.new_aggregate();
        let mut resolved = stored.cancelled;
        for u in &done {
            aggregate
                .absorb(u.summary.as_deref().unwrap_or_default())
                .map_err(|e| {
                    refused(format!(
                        "the stored result of unit {} is unusable: {e}",
                        u.id
                    ))
                })?;
            resolved.push(u.position.clone());
        }
        Ok(Retried {
            prepared,
            aggregate,
            pending,
            resolved,
            done: done.len() as u64,
        })
    }
}
