//! Heartbeats: a worker's periodic word on the units it runs. A heartbeat
//! renews their leases, records their progress and the bounds the worker
//! found, adopts units a coordinator restart left pending while the worker
//! kept running them, and brings back cancellations and split requests
//! (asked for by [`Scheduler::request_splits`] when workers are idle).

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use std::collections::BTreeMap;

use super::job::Job;
use super::lease::Lease;
use super::replicas::may_take;
use super::unit::Unit;
use super::{Scheduler, WorkerId};
use crate::store::{JobId, UnitId, Write};

#[derive(Default)]
pub struct HeartbeatReply {
    pub cancel: Vec<UnitId>,
    pub split: Vec<UnitId>,
    /// For each of `split`: how many pieces the idle workers would take
    /// (see [`Scheduler::split_pieces`]).
    pub split_pieces: Vec<u32>,
    pub bounds: Vec<(JobId, u64)>,
    pub writes: Vec<Write>,
}

impl Scheduler {
    /// No pending work: ask running units of live jobs to split off their
    /// rest, oldest leases first, at most `wanted` of them. Returns how many
    /// were asked. Only units leased for at least `min_age` are asked, so
    /// tiny units are not churned, and only units whose family lets them
    /// (see `SearchFamily::split_on_idle`). Takes the oldest entries of
    /// `split_candidates`: O(log n) a unit asked or an entry found stale,
    /// each entry taken once, instead of a scan of every live unit on every
    /// empty lease (which at a thousand idle workers was most of the
    /// coordinator's time under the lock).
    pub fn request_splits(&mut self, wanted: usize, min_age: Duration) -> usize {
        let now = self.clock.now();
        let mut asked = 0;
        while asked < wanted {
            let Some(&(since, id)) = self.split_candidates.first() else {
                break;
            };
            if now.duration_since(since) < min_age {
                // The rest are younger still.
                break;
            }
            self.split_candidates.pop_first();
            if let Some(u) = self.units.get_mut(&id) {
                if is_split_candidate(u, since) && splits_on_idle(&self.jobs, u) {
                    u.split_requested = true;
                    asked += 1;
                    // Its holder's `AwaitSplits` call, if any, answers now.
                    let holder = u.lease.as_ref().map(|l| l.worker);
                    if let Some(w) = holder.and_then(|w| self.workers.get(&w)) {
                        w.split_signal.notify_one();
                    }
                }
            }
        }
        asked
    }

    /// Records a lease that began at `since` among the units to ask to
    /// split; sweeps the stale entries once they outnumber the live units
    /// (so the set stays within twice the live units, at O(1) amortised).
    pub(super) fn add_split_candidate(&mut self, since: Instant, id: UnitId) {
        self.split_candidates.insert((since, id));
        if self.split_candidates.len() > 2 * self.units.len() + 1024 {
            let units = &self.units;
            self.split_candidates.retain(|&(since, id)| {
                units.get(&id).is_some_and(|u| is_split_candidate(u, since))
            });
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
        let mut adopted = Vec::new();
        for &(uid, nodes) in running {
            let Some(unit) = self.units.get_mut(&uid) else {
                reply.cancel.push(uid);
                continue;
            };
            let job = self.jobs.get_mut(&unit.job).expect("live unit has a job");
            let excluded = job.excluded.contains_key(&worker.durable.key);
            let adoptable = !excluded
                && (job.replicas <= 1
                    || may_take(
                        unit,
                        worker_id,
                        &worker.durable.key,
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
                    adopted.push((now, uid));
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
        for (since, uid) in adopted {
            self.add_split_candidate(since, uid);
        }
        if !reply.split.is_empty() {
            let k = self.split_pieces(&reply.split);
            reply.split_pieces = vec![k; reply.split.len()];
        }
        Some(reply)
    }

    /// The counter of worker slots waiting in lease calls for work: the
    /// service adds a call's slots while it waits and takes them off when it
    /// answers (however it ends).
    pub fn idle_slots(&self) -> Arc<AtomicUsize> {
        self.idle_slots.clone()
    }

    /// The k of a k-way hand-back: the split requests for `units` are being
    /// delivered now; into how many pieces each should cut its rest so that
    /// the waiting slots get one each: the idle slots shared among every
    /// split whose rest is still to come (these included), at least 1 and
    /// at most [`MAX_SPLIT_PIECES`]. A hint (see
    /// `orchard_core::ExploreContext::pieces`): a family may ignore it. A
    /// rest that comes back makes units that wake as many waiting calls.
    pub fn split_pieces(&mut self, units: &[UnitId]) -> u32 {
        let now = self.clock.now();
        self.splits_in_flight.extend(units.iter().copied());
        // Splits whose rest came back (the unit reported, or its lease
        // ended) leave the set; pruned at most every 10 ms (O(set)).
        if self
            .splits_pruned
            .is_none_or(|t| now.duration_since(t) >= SPLITS_PRUNE_EVERY)
        {
            let live = &self.units;
            self.splits_in_flight.retain(|id| {
                live.get(id)
                    .is_some_and(|u| u.split_sent && u.lease.is_some())
            });
            self.splits_pruned = Some(now);
        }
        let idle = self.idle_slots.load(Ordering::Relaxed);
        let sharing = self.splits_in_flight.len().max(units.len()).max(1);
        idle.div_ceil(sharing).clamp(1, MAX_SPLIT_PIECES as usize) as u32
    }
}

/// The most pieces one split request asks for: a rest cut into thousands of
/// units costs as many rows in one transaction, and the fan-out to 10,000
/// workers takes two generations of splits at this k.
pub const MAX_SPLIT_PIECES: u32 = 256;

/// How often the set of splits in flight is pruned.
const SPLITS_PRUNE_EVERY: Duration = Duration::from_millis(10);

/// Whether the entry `(since, unit)` of `split_candidates` still stands for
/// a running lease that was not asked to split yet.
fn is_split_candidate(u: &Unit, since: Instant) -> bool {
    !u.split_requested && !u.reporting && u.lease.as_ref().is_some_and(|l| l.since == since)
}

/// Whether the unit's job lets it be split for idle workers: a verified
/// job's units are explored whole (see `replicas`), and a family may keep
/// some units whole (`SearchFamily::split_on_idle`).
fn splits_on_idle(jobs: &BTreeMap<JobId, Job>, u: &Unit) -> bool {
    jobs.get(&u.job).is_none_or(|j| {
        j.replicas <= 1
            && j.aggregate
                .as_ref()
                .is_none_or(|a| a.split_on_idle(&u.payload))
    })
}
