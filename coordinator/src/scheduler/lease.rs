//! Leases: which pending unit goes to which worker, and how a unit comes
//! back to pending when its lease ends without a report.
//!
//! Pending units are leased in position order (the sequential search's
//! order). For families with moot units, a unit the family says must wait
//! ("young brothers wait": its speculation is not 0) goes after the others,
//! the least speculative first. A lease ends with a
//! report (see `report`), by expiry (its worker went silent for the lease
//! time), or by the worker giving it back.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Instant;

use super::replicas::may_take;
use super::{Scheduler, WorkerId};
use crate::store::{JobId, UnitId, Write};

/// How many units that should wait one lease call looks past (see
/// [`Scheduler::lease`]).
pub(super) const MAX_WAIT_CHECKS: usize = 512;

/// A unit's lease: who holds it, since when, until when.
pub(super) struct Lease {
    pub(super) worker: WorkerId,
    pub(super) since: Instant,
    pub(super) expires: Instant,
    /// Leased ahead (`Scheduler::lease_ahead`) and not started yet: not a
    /// split candidate (it has no progress) until the worker says it
    /// started (`Scheduler::start_queued`, or a heartbeat listing it).
    pub(super) queued: bool,
}

/// A unit handed to a worker.
pub struct Granted {
    /// The unit is a replica of a verified job: explored whole, without a
    /// node budget (see `replicas`).
    pub whole: bool,
    pub unit_id: UnitId,
    pub job_id: JobId,
    pub family: String,
    pub params_json: String,
    pub payload: Arc<Vec<u8>>,
    pub bound: u64,
}

/// Lease expiries logged one by one per call of `expire_leases`.
const LOGGED_EXPIRIES: usize = 10;

impl Scheduler {
    /// Leases up to `max` pending units to `worker`, in position order.
    /// Returns the grants and the writes to queue. (Moot units never wait
    /// here: [`Scheduler::sweep_moot`] removes them as soon as a merge makes
    /// them moot, and checks whether that finished the job.)
    pub fn lease(&mut self, worker_id: WorkerId, max: usize) -> (Vec<Granted>, Vec<Write>) {
        self.lease_as(worker_id, max, false)
    }

    /// Lease-ahead: up to `max` pending units for `worker` to hold queued
    /// beside its running ones (`ReportRequest::queue_units`), so that a
    /// slot's next unit is there before its current one ends. None while a
    /// lease call waits for work (`idle_slots`): a unit queued behind a
    /// running one must not be one an idle slot could run now. A queued
    /// lease is not a split candidate until it starts
    /// ([`Scheduler::start_queued`]); otherwise it is a lease like any
    /// other (renewed by heartbeats, handed back, or back by expiry).
    pub fn lease_ahead(&mut self, worker_id: WorkerId, max: usize) -> (Vec<Granted>, Vec<Write>) {
        if max == 0 || self.idle_slots.load(std::sync::atomic::Ordering::Relaxed) > 0 {
            return (Vec::new(), Vec::new());
        }
        self.lease_as(worker_id, max, true)
    }

    /// The queued units of `worker` among `unit_ids` started: from now on
    /// their leases run (renewed, and split candidates from now).
    pub fn start_queued(&mut self, worker_id: WorkerId, unit_ids: &[UnitId]) {
        let now = self.clock.now();
        let ttl = self.lease_ttl;
        let mut started = Vec::new();
        for id in unit_ids {
            let Some(l) = self.units.get_mut(id).and_then(|u| u.lease.as_mut()) else {
                continue;
            };
            if l.worker == worker_id && l.queued {
                l.queued = false;
                l.since = now;
                l.expires = now + ttl;
                started.push(*id);
            }
        }
        for id in started {
            self.add_split_candidate(now, id);
        }
    }

    fn lease_as(
        &mut self,
        worker_id: WorkerId,
        max: usize,
        queued: bool,
    ) -> (Vec<Granted>, Vec<Write>) {
        let now = self.clock.now();
        let ttl = self.lease_ttl;
        let mut granted = Vec::new();
        // Live hosts that can take each verified job's units (see
        // `replicas::may_take`), before the worker is borrowed.
        let live_hosts = self.verified_job_hosts();
        let workers_known = self.workers.len();
        let Some(worker) = self.workers.get_mut(&worker_id) else {
            return (granted, Vec::new());
        };
        worker.last_seen = now;
        let mut new_leases = Vec::new();
        for job in self.jobs.values_mut() {
            if granted.len() >= max {
                break;
            }
            if !job.live()
                || !worker.families.contains(&job.family)
                || job.excluded.contains_key(&worker.durable.key)
            {
                continue;
            }
            let verified = job.replicas > 1;
            // A verified job's units this worker may not take (it explored
            // them, or its host did): put back after the call, looked past
            // at most `MAX_WAIT_CHECKS` of them.
            let mut skipped = Vec::new();
            // Units that should wait for a sibling (see `speculation`) go
            // after the others: leased only when nothing else is pending, so
            // an idle worker speculates rather than waits, and then the
            // least speculative first (by position among equals). Past
            // `MAX_WAIT_CHECKS` of them in one call, units are leased in
            // plain order (bounded work under the lock).
            let mut waiting: BTreeSet<(u32, Vec<u8>, UnitId)> = BTreeSet::new();
            while granted.len() < max {
                let ((position, uid), waited) = match job.pending.pop_first() {
                    Some(next) => (next, false),
                    None => match waiting.pop_first() {
                        Some((_, position, uid)) => ((position, uid), true),
                        None => break,
                    },
                };
                let Some(unit) = self.units.get_mut(&uid) else {
                    continue;
                };
                if unit.lease.is_some() || unit.reporting {
                    continue;
                }
                if unit.failed_on.contains(&worker_id) && unit.failed_on.len() < workers_known {
                    // Its attempt here failed: another worker tries it
                    // first (one that has not failed it may be leasing now).
                    skipped.push((position, uid));
                    if skipped.len() >= MAX_WAIT_CHECKS {
                        break;
                    }
                    continue;
                }
                if verified {
                    let hosts = live_hosts.get(&job.id).copied().unwrap_or(0);
                    if !may_take(
                        unit,
                        worker_id,
                        &worker.durable.key,
                        &worker.hostname,
                        hosts,
                    ) {
                        skipped.push((position, uid));
                        if skipped.len() >= MAX_WAIT_CHECKS {
                            break;
                        }
                        continue;
                    }
                }
                if job.has_moot_units && !waited && waiting.len() < MAX_WAIT_CHECKS {
                    let speculation = job.unit_speculation(unit);
                    if speculation > 0 {
                        waiting.insert((speculation, position, uid));
                        continue;
                    }
                }
                if job.has_moot_units {
                    // What the job merged since the unit was made may let
                    // it ask less (a narrower window): the worker gets
                    // that, and a lease that comes back keeps it.
                    if let Some(narrowed) = job.narrowed(&unit.payload) {
                        unit.payload = Arc::new(narrowed);
                        self.counters.units_narrowed += 1;
                    }
                }
                unit.lease = Some(Lease {
                    worker: worker_id,
                    since: now,
                    expires: now + ttl,
                    queued,
                });
                unit.split_requested = false;
                unit.split_sent = false;
                unit.progress_nodes = 0;
                unit.held_by(worker_id);
                job.units_leased += 1;
                worker.units.insert(uid);
                if !queued {
                    new_leases.push((now, uid));
                }
                granted.push(Granted {
                    whole: verified,
                    unit_id: uid,
                    job_id: job.id,
                    family: job.family.clone(),
                    params_json: job.params_json.clone(),
                    payload: unit.payload.clone(),
                    bound: job.bound,
                });
            }
            job.pending.extend(
                waiting
                    .into_iter()
                    .map(|(_, position, uid)| (position, uid)),
            );
            job.pending.extend(skipped);
        }
        for (since, uid) in new_leases {
            self.add_split_candidate(since, uid);
        }
        let mut writes = Vec::new();
        if !granted.is_empty() {
            writes.push(Write::Leased {
                unit_ids: granted.iter().map(|g| g.unit_id).collect(),
            });
        }
        (granted, writes)
    }

    /// Units whose lease ran out go back to the front of their job's queue.
    /// Logged a line a lease for the first `LOGGED_EXPIRIES` of a call (the
    /// fault tests read them), then one line for the rest: a coordinator
    /// that falls behind at 10,000 workers expires leases by the thousand a
    /// second, and a line each was 54 MB of log in four minutes, written
    /// under the scheduler's lock. The total is
    /// `orchard_lease_expiries_total` in `/metrics`.
    pub fn expire_leases(&mut self) -> usize {
        let now = self.clock.now();
        let mut expired = 0;
        for (&id, unit) in self.units.iter_mut() {
            let Some(lease) = &unit.lease else { continue };
            if unit.reporting || lease.expires > now {
                continue;
            }
            if expired < LOGGED_EXPIRIES {
                tracing::warn!(
                    unit = id,
                    worker = lease.worker,
                    "lease expired; unit goes back to the queue"
                );
            }
            self.counters.lease_expiries += 1;
            if let Some(w) = self.workers.get_mut(&lease.worker) {
                w.units.remove(&id);
            }
            unit.lease = None;
            if let Some(job) = self.jobs.get_mut(&unit.job) {
                job.units_leased = job.units_leased.saturating_sub(1);
                job.pending.insert((unit.position.clone(), id));
            }
            expired += 1;
        }
        if expired > LOGGED_EXPIRIES {
            tracing::warn!(
                more = expired - LOGGED_EXPIRIES,
                "more leases expired; their units go back to the queue"
            );
        }
        expired
    }

    /// Units given back by a worker that is leaving.
    pub fn return_leases(&mut self, worker_id: WorkerId, unit_ids: &[UnitId]) {
        let mut kept = Vec::new();
        for id in unit_ids {
            let Some(unit) = self.units.get_mut(id) else {
                continue;
            };
            if unit.lease.as_ref().is_none_or(|l| l.worker != worker_id) {
                // Not this worker's: nothing to give back.
                self.counters.returns_refused += 1;
                continue;
            }
            if unit.reporting {
                // Its report is being committed: the lease stays, and so
                // does the worker's hold on it.
                kept.push(*id);
                continue;
            }
            unit.lease = None;
            if let Some(job) = self.jobs.get_mut(&unit.job) {
                job.units_leased = job.units_leased.saturating_sub(1);
                job.pending.insert((unit.position.clone(), *id));
            }
        }
        if let Some(w) = self.workers.get_mut(&worker_id) {
            for id in unit_ids.iter().filter(|id| !kept.contains(id)) {
                w.units.remove(id);
            }
        }
    }
}
