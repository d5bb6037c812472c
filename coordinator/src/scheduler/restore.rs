//! Rebuilding the scheduler from the store at startup: jobs with their
//! counters, the aggregates of running jobs re-merged from their done
//! units' summaries, and their pending units live again (leases are not
//! stored: every unit starts pending, and a worker still running one adopts
//! it back at its next heartbeat).
//!
//! The families are looked up through the function the caller passes in,
//! so this module names no family registry.

use std::sync::Arc;
use std::time::Duration;

use orchard_core::PreparedJob;

use super::job::{FinalResult, Job};
use super::unit::{Replica, Unit};
use super::Scheduler;
use crate::clock::Clock;
use crate::status::JobState;
use crate::store::{Loaded, NewUnit};

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
