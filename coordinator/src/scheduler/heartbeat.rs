//! Heartbeats: a worker's periodic word on the units it runs. A heartbeat
//! renews their leases, records their progress and the bounds the worker
//! found, adopts units a coordinator restart left pending while the worker
//! kept running them, and brings back cancellations and split requests
//! (asked for by [`Scheduler::request_splits`] when workers are idle).

use std::collections::HashSet;
use std::time::{Duration, Instant};

use super::lease::Lease;
use super::replicas::may_take;
use super::{Scheduler, WorkerId};
use crate::store::{JobId, UnitId, Write};

#[derive(Default)]
pub struct HeartbeatReply {
    pub cancel: Vec<UnitId>,
    pub split: Vec<UnitId>,
    pub bounds: Vec<(JobId, u64)>,
    pub writes: Vec<Write>,
}

impl Scheduler {
    /// No pending work: ask running units of live jobs to split off their
    /// rest, oldest leases first, at most `wanted` of them. Only units leased
    /// for at least `min_age` are asked, so tiny units are not churned, and
    /// only units whose family lets them (see `SearchFamily::split_on_idle`).
    pub fn request_splits(&mut self, wanted: usize, min_age: Duration) {
        let now = self.clock.now();
        let jobs = &self.jobs;
        let mut candidates: Vec<(Instant, UnitId)> = self
            .units
            .iter()
            .filter(|(_, u)| !u.split_requested && !u.reporting)
            .filter(|(_, u)| {
                // A verified job's units are explored whole (see `replicas`).
                jobs.get(&u.job).is_none_or(|j| {
                    j.replicas <= 1
                        && j.aggregate
                            .as_ref()
                            .is_none_or(|a| a.split_on_idle(&u.payload))
                })
            })
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

    /// A worker's heartbeat: renews its leases, records progress and bounds.
    /// Units it runs that are no longer its own are cancelled; units left
    /// pending by a coordinator restart are adopted back.
    pub fn heartbeat(
        &mut self,
        worker_id: WorkerId,
        running: &[(UnitId, u64)],
        bounds: &[(JobId, u64)],
    ) -> Option<HeartbeatReply> {
        let now = self.clock.now();
        let ttl = self.lease_ttl;
        // For adopting a verified job's unit (see `replicas::may_take`).
        let live_hosts = self.verified_job_hosts();
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
            let excluded = job.excluded.contains(&worker_id);
            let adoptable = !excluded
                && (job.replicas <= 1
                    || may_take(
                        unit,
                        worker_id,
                        &worker.hostname,
                        live_hosts.get(&unit.job).copied().unwrap_or(0),
                    ));
            let ours = match &unit.lease {
                Some(l) => l.worker == worker_id && !excluded,
                None if !unit.reporting && job.live() && adoptable => {
                    // Pending after a restart while this worker kept running it.
                    unit.lease = Some(Lease {
                        worker: worker_id,
                        since: now,
                        expires: now + ttl,
                    });
                    job.units_leased += 1;
                    worker.units.insert(uid);
                    // Out of the queue: it runs again.
                    job.pending.remove(&(unit.position.clone(), uid));
                    unit.held_by(worker_id);
                    true
                }
                None => false,
            };
            if !ours || !job.live() {
                if !ours {
                    self.counters.progress_refused += 1;
                }
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
}
