//! Heartbeats: a worker's periodic word on the units it runs. A heartbeat
//! renews their leases, records their progress and the bounds the worker
//! found, adopts units a coordinator restart left pending while the worker
//! kept running them, and brings back cancellations and split requests
//! (asked for by [`Scheduler::request_splits_for_idle`] when workers are
//! idle).

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
    /// coordinator's time under the lock). Each is asked for one piece
    /// until its request is delivered; the service asks through
    /// [`Scheduler::request_splits_for_idle`] instead, which asks only as
    /// many as the idle slots need.
    #[cfg(test)]
    pub fn request_splits(&mut self, wanted: usize, min_age: Duration) -> usize {
        let mut asked = 0;
        while asked < wanted && self.ask_split(min_age, 1) {
            asked += 1;
        }
        asked
    }

    /// A lease call found no work for its slots (counted in
    /// [`Scheduler::idle_slots`]): asks running units to split only when
    /// the splits in flight cannot cover the idle slots (the pieces already
    /// asked for, summed), each new one for the slots still uncovered but
    /// at least 1 / `IDLE_SHARE` of the idle ones, at most
    /// [`MAX_SPLIT_PIECES`] (its k is settled when the request is
    /// delivered, see [`Scheduler::split_pieces`]). One unit asked for 256
    /// pieces instead of 256 units asked for one: at 10,000 idle workers,
    /// asking one more unit per empty lease call made the splits in flight
    /// as many as the idle slots, and k fell to 1. Returns how many units
    /// were asked.
    pub fn request_splits_for_idle(&mut self, min_age: Duration) -> usize {
        self.prune_splits_in_flight();
        let idle = self.idle_slots.load(Ordering::Relaxed);
        let mut uncovered = idle.saturating_sub(self.split_cover);
        let least = idle.div_ceil(IDLE_SHARE);
        let mut asked = 0;
        while uncovered > 0 {
            let k = uncovered.max(least).min(MAX_SPLIT_PIECES as usize);
            if !self.ask_split(min_age, k as u32) {
                break;
            }
            uncovered = uncovered.saturating_sub(k);
            asked += 1;
        }
        asked
    }

    /// Asks the oldest split candidate leased for at least `min_age` to
    /// split into about `pieces` pieces (counted in flight until its rest
    /// comes back). False when there is none.
    fn ask_split(&mut self, min_age: Duration, pieces: u32) -> bool {
        let now = self.clock.now();
        loop {
            let Some(&(since, id)) = self.split_candidates.first() else {
                return false;
            };
            if now.duration_since(since) < min_age {
                // The rest are younger still.
                return false;
            }
            self.split_candidates.pop_first();
            if let Some(u) = self.units.get_mut(&id) {
                if is_split_candidate(u, since) && splits_on_idle(&self.jobs, u) {
                    u.split_requested = true;
                    // Its holder's `AwaitSplits` call, if any, answers now.
                    let holder = u.lease.as_ref().map(|l| l.worker);
                    if let Some(w) = holder.and_then(|w| self.workers.get(&w)) {
                        w.split_signal.notify_one();
                    }
                    self.set_split_in_flight(id, pieces);
                    return true;
                }
            }
        }
    }

    /// Records `unit`'s split as asked for `pieces` pieces.
    pub(super) fn set_split_in_flight(&mut self, unit: UnitId, pieces: u32) {
        let before = self.splits_in_flight.insert(unit, pieces).unwrap_or(0);
        self.split_cover = self.split_cover + pieces as usize - before as usize;
    }

    /// The pieces `unit`'s split was asked for, taken out of the splits in
    /// flight (its rest came back); 0 if it was not asked to split.
    pub fn take_split_in_flight(&mut self, unit: UnitId) -> u32 {
        let k = self.splits_in_flight.remove(&unit).unwrap_or(0);
        self.split_cover -= k as usize;
        k
    }

    /// Drops the splits whose rest will not come (the unit's lease ended,
    /// or it was leased again), at most every 10 ms (O(set)).
    fn prune_splits_in_flight(&mut self) {
        let now = self.clock.now();
        if self
            .splits_pruned
            .is_some_and(|t| now.duration_since(t) < SPLITS_PRUNE_EVERY)
        {
            return;
        }
        let live = &self.units;
        self.splits_in_flight.retain(|id, _| {
            live.get(id)
                .is_some_and(|u| u.split_requested && (u.lease.is_some() || u.reporting))
        });
        self.split_cover = self.splits_in_flight.values().map(|&k| k as usize).sum();
        self.splits_pruned = Some(now);
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
                        queued: false,
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
                if l.queued {
                    // Leased ahead, and running now (its start was not
                    // told in a report): a split candidate from now on.
                    l.queued = false;
                    l.since = now;
                    adopted.push((now, uid));
                }
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

    /// A heartbeat's units leased ahead and not started
    /// (`HeartbeatRequest::queued`): the worker's own are renewed (they stay
    /// queued); the others are returned, to be dropped by the worker (the
    /// lease ended, or a restart forgot it: a queued unit is never adopted).
    pub fn renew_queued(&mut self, worker_id: WorkerId, queued: &[UnitId]) -> Vec<UnitId> {
        let now = self.clock.now();
        let ttl = self.lease_ttl;
        let mut drop = Vec::new();
        for &uid in queued {
            let live = self.units.get_mut(&uid).and_then(|u| {
                let job = self.jobs.get(&u.job)?;
                let l = u.lease.as_mut()?;
                (l.worker == worker_id && job.live()).then_some(l)
            });
            match live {
                Some(l) => l.expires = now + ttl,
                None => drop.push(uid),
            }
        }
        drop
    }

    /// The counter of worker slots waiting in lease calls for work: the
    /// service adds a call's slots while it waits and takes them off when it
    /// answers (however it ends).
    pub fn idle_slots(&self) -> Arc<AtomicUsize> {
        self.idle_slots.clone()
    }

    /// The k of a k-way hand-back: the split requests for `units` are being
    /// delivered now; into how many pieces each should cut its rest so that
    /// the waiting slots get one each: the idle slots that the other splits
    /// in flight do not cover (the pieces they were asked for), shared
    /// among `units`, at least 1 / `IDLE_SHARE` of the idle slots and 1,
    /// at most [`MAX_SPLIT_PIECES`]; recorded
    /// as what these splits cover until their rest comes back. A hint (see
    /// `orchard_core::ExploreContext::pieces`): a family may ignore it or
    /// cut fewer (`orchard_core::pieces_within`). A rest that comes back
    /// wakes as many waiting calls as were asked for.
    pub fn split_pieces(&mut self, units: &[UnitId]) -> u32 {
        self.prune_splits_in_flight();
        let mine: usize = units
            .iter()
            .map(|id| self.splits_in_flight.get(id).copied().unwrap_or(0) as usize)
            .sum();
        let others = self.split_cover - mine;
        let idle = self.idle_slots.load(Ordering::Relaxed);
        let k = idle
            .saturating_sub(others)
            .div_ceil(units.len().max(1))
            .max(idle.div_ceil(IDLE_SHARE))
            .clamp(1, MAX_SPLIT_PIECES as usize) as u32;
        for &id in units {
            self.set_split_in_flight(id, k);
        }
        k
    }
}

/// The most pieces one split request asks for: a rest cut into thousands of
/// units costs as many rows in one transaction, and the fan-out to 10,000
/// workers takes two generations of splits at this k.
pub const MAX_SPLIT_PIECES: u32 = 256;

/// A split asks for at least 1 / `IDLE_SHARE` of the idle slots, however
/// few the splits in flight leave uncovered: idle calls come one at a time,
/// and a split for each one's single slot left every call waiting for a
/// split's whole round (delivery, cut, report, commit); the pieces beyond
/// the uncovered slots wait as pending units for the next calls, which then
/// lease at once (the family keeps them above its piece floor).
const IDLE_SHARE: usize = 16;

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
    jobs.get(&u.job).is_none_or(|j| j.may_split(u))
}

impl Job {
    /// Whether `u`, a unit of this job, may be asked to split: never in a
    /// verified job (its replicas explore whole units, see `replicas`), and
    /// only where the family lets it (`SearchFamily::split_on_idle`).
    pub(super) fn may_split(&self, u: &Unit) -> bool {
        self.replicas <= 1 && (self.aggregate.as_ref()).is_none_or(|a| a.split_on_idle(&u.payload))
    }
}
