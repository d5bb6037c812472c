//! Registered workers: who they are, which families they run, which units
//! they hold, when they were last heard from (liveness is one lease time of
//! silence), how many nodes they reported (their rate), and under mutual
//! TLS the certificate they registered with.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::Notify;

use super::rate::RateMeter;
use super::{Scheduler, WorkerId};
use crate::identity::{PeerIdentity, WorkerIdentity};
use crate::store::{JobId, UnitId};

pub(super) struct Worker {
    pub(super) hostname: String,
    pub(super) threads: u32,
    pub(super) families: HashSet<String>,
    pub(super) last_seen: Instant,
    pub(super) units: HashSet<UnitId>,
    /// Nodes of the units this worker reported.
    pub(super) nodes_reported: u64,
    pub(super) rate: RateMeter,
    /// The client certificate it registered under (mutual TLS only).
    pub(super) identity: Option<PeerIdentity>,
    /// Who it is beyond this registration (its certificate's fingerprint,
    /// or its declared name): what a job's exclusion is checked against.
    pub(super) durable: WorkerIdentity,
    /// Woken when one of its units is asked to split, so that a waiting
    /// `AwaitSplits` call answers at once instead of the request waiting
    /// for the unit's next heartbeat (see [`Scheduler::take_split_requests`]).
    pub(super) split_signal: Arc<Notify>,
}

impl Scheduler {
    pub fn register(&mut self, hostname: String, threads: u32, families: Vec<String>) -> WorkerId {
        let id = self.next_worker;
        self.next_worker += 1;
        self.counters.registrations += 1;
        self.workers.insert(
            id,
            Worker {
                threads,
                families: families.into_iter().collect(),
                last_seen: self.clock.now(),
                units: HashSet::new(),
                nodes_reported: 0,
                rate: RateMeter::default(),
                durable: WorkerIdentity::of(None, &hostname),
                hostname,
                identity: None,
                split_signal: Arc::new(Notify::new()),
            },
        );
        id
    }

    /// What an `AwaitSplits` call of `worker` waits on (None: unknown
    /// worker). A signal given while no call waits is kept for the next.
    pub fn split_signal(&self, worker: WorkerId) -> Option<Arc<Notify>> {
        self.workers.get(&worker).map(|w| w.split_signal.clone())
    }

    /// The units of `worker` asked to split and not yet told so, marked as
    /// told (each split request is delivered once, by this or by the next
    /// heartbeat, whichever comes first). None: unknown worker. Counts as
    /// hearing from the worker. How many pieces each should be cut into:
    /// [`Scheduler::split_pieces`].
    pub fn take_split_requests(&mut self, worker: WorkerId) -> Option<Vec<UnitId>> {
        let now = self.clock.now();
        let w = self.workers.get_mut(&worker)?;
        w.last_seen = now;
        let mut split = Vec::new();
        for id in &w.units {
            if let Some(u) = self.units.get_mut(id) {
                let held = u.lease.as_ref().is_some_and(|l| l.worker == worker);
                if held && u.split_requested && !u.split_sent && !u.reporting {
                    u.split_sent = true;
                    split.push(*id);
                }
            }
        }
        Some(split)
    }

    /// Registered workers, live or not yet forgotten.
    pub fn worker_count(&self) -> usize {
        self.workers.len()
    }

    /// Forgets workers silent for ten lease times that hold no unit (a
    /// worker that comes back is told to register again).
    pub fn forget_dead_workers(&mut self) {
        let now = self.clock.now();
        let limit = self.lease_ttl * 10;
        self.workers
            .retain(|_, w| !w.units.is_empty() || now.duration_since(w.last_seen) < limit);
    }

    /// Records the client certificate `worker` registered under, which is
    /// then its durable identity (see [`WorkerIdentity`]).
    pub fn set_worker_identity(&mut self, worker: WorkerId, identity: Option<PeerIdentity>) {
        if let Some(w) = self.workers.get_mut(&worker) {
            w.durable = WorkerIdentity::of(identity.as_ref(), &w.hostname);
            w.identity = identity;
        }
    }

    /// Whether `worker` was found lying in `job` (by its durable identity,
    /// so also under an earlier registration or before a restart).
    pub(super) fn is_excluded(&self, job: JobId, worker: WorkerId) -> bool {
        match (self.jobs.get(&job), self.workers.get(&worker)) {
            (Some(j), Some(w)) => j.excluded.contains_key(&w.durable.key),
            _ => false,
        }
    }

    /// Whether a request naming `worker` that arrived under `identity` may
    /// speak for it: the worker registered under the same certificate (or,
    /// without mutual TLS, under none). An unknown worker is not refused
    /// here: it is told to register again.
    pub fn speaks_for(&self, worker: WorkerId, identity: Option<&PeerIdentity>) -> bool {
        self.workers
            .get(&worker)
            .is_none_or(|w| w.identity.as_ref() == identity)
    }

    /// The certificate `worker` registered under, for messages.
    pub fn worker_identity(&self, worker: WorkerId) -> Option<&PeerIdentity> {
        self.workers.get(&worker)?.identity.as_ref()
    }

    pub fn knows_worker(&self, worker: WorkerId) -> bool {
        self.workers.contains_key(&worker)
    }

    /// Workers heard from within one lease time.
    pub fn live_workers(&self) -> usize {
        let now = self.clock.now();
        self.workers
            .values()
            .filter(|w| now.duration_since(w.last_seen) < self.lease_ttl)
            .count()
    }

    /// Worker descriptions, for logs and status.
    pub fn describe_worker(&self, id: WorkerId) -> String {
        self.workers
            .get(&id)
            .map(|w| format!("worker {id} ({}, {} threads)", w.hostname, w.threads))
            .unwrap_or_else(|| format!("worker {id}"))
    }
}
