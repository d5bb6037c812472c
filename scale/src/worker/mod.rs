//! A simulated worker: the real protocol over a real gRPC channel (register,
//! lease, heartbeat, report, hand-back on stop), the search replaced by the
//! synthetic family's instant exploration followed by a wait of virtual
//! time, `nodes / speed`. It stands in for `orchard worker --threads SLOTS`
//! (see `worker/src/runner.rs` and `worker/src/slot.rs`) so that thousands
//! of workers fit in one process and the coordinator is measured, not the
//! search.
//!
//! This file holds what a worker is (its shared [`Run`], its [`Plan`], its
//! state) and its life: register, run until the job is done or it leaves,
//! leave *killed* (every task aborted, nothing reported: its leases expire)
//! or *stopped* (running units cut and reported with their rest, units not
//! started handed back with `ReturnLeases`). The rest, by concept:
//!
//! - `calls`: the calls that run beside the units (the lease loop, the
//!   heartbeats with each unit's progress, the `AwaitSplits` long poll),
//!   and how a split request or a cancellation reaches a unit;
//! - `unit`: one unit's life on a slot: explored, cut at the nodes its
//!   virtual time has paid for when a split request stops it (the family
//!   explores the same first nodes and fans the rest out into the
//!   request's `split_pieces`, exactly as a real search stopped there
//!   would), dropped when cancelled, then reported as the slot's policy
//!   says;
//! - `policy`: [`SlotPolicy`], how a slot reports and gets its next unit;
//! - `stats`: the run's counters.

mod calls;
mod policy;
mod stats;
mod unit;

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use orchard_proto::v1::worker_service_client::WorkerServiceClient;
use orchard_proto::v1::*;
use orchard_synthetic::Synthetic;
use tokio::sync::{watch, Notify, Semaphore};
use tokio::task::JoinSet;
use tonic::transport::Channel;

pub use policy::SlotPolicy;
pub use stats::Stats;

/// What every simulated worker shares.
pub struct Run {
    pub job: Synthetic,
    pub rtt: Duration,
    pub slots: u32,
    /// How a slot reports its unit and gets its next one.
    pub policy: SlotPolicy,
    /// Units held but not started are listed in heartbeats as queued
    /// (renewed, not split candidates), as the real worker lists its
    /// queued unit; off (`--no-lease-ahead`), as running with no progress.
    pub heartbeat_lists_queued: bool,
    /// Long-poll `AwaitSplits` beside the heartbeats (off, or refused by an
    /// older coordinator: split requests come with heartbeats only).
    pub await_splits: bool,
    pub stats: Stats,
    /// When the job was submitted (None before).
    pub started: watch::Receiver<Option<Instant>>,
    pub done: watch::Receiver<bool>,
    pub registered: Notify,
}

impl Run {
    /// Counts an accepted report in its 100 ms bucket.
    fn bucket(&self) {
        if let Some(t0) = *self.started.borrow() {
            let i = (t0.elapsed().as_millis() / 100) as usize;
            if let Some(b) = self.stats.buckets.get(i) {
                b.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// How a worker leaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leave {
    /// Like a killed machine: nothing reported, its leases expire.
    Kill,
    /// Like SIGTERM: running units reported with their rest, the others
    /// handed back.
    Stop,
}

/// One worker's part in the run.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    pub speed: f64,
    /// Joins this long after the job starts (None: registered before).
    pub join_at: Option<Duration>,
    /// Leaves this long after the job starts.
    pub leave_at: Option<(Duration, Leave)>,
}

/// A unit held by a worker: running, or leased ahead and waiting for a slot.
struct Held {
    stop: Arc<Notify>,
    /// The pieces the split request asked for (0: none asked).
    pieces: Arc<AtomicU32>,
    cancelled: Arc<AtomicBool>,
    /// When it started and when it will end, once running.
    started: Option<Instant>,
    /// Its task, aborted when the worker is killed.
    task: Option<tokio::task::AbortHandle>,
}

struct Sim {
    run: Arc<Run>,
    client: WorkerServiceClient<Channel>,
    name: String,
    speed: f64,
    id: AtomicU64,
    heartbeat: Mutex<Duration>,
    held: Mutex<HashMap<u64, Held>>,
    slots: Arc<Semaphore>,
    /// Units leased ahead (held, not started), for the next slot whose
    /// unit ends (`lease_ahead`).
    ahead: Mutex<VecDeque<UnitLease>>,
    /// Reports in flight, at most one a slot (as the real worker).
    reporting: Semaphore,
    /// A unit left the worker (or started): the lease loop may ask again.
    changed: Notify,
    stopping: AtomicBool,
    /// Units running now (not leased ahead).
    running: AtomicU64,
}

/// One call after half a round trip, answered after the other half.
async fn call<T>(rtt: Duration, f: impl std::future::Future<Output = T>) -> T {
    if !rtt.is_zero() {
        tokio::time::sleep(rtt / 2).await;
    }
    let r = f.await;
    if !rtt.is_zero() {
        tokio::time::sleep(rtt / 2).await;
    }
    r
}

/// Runs one simulated worker until the job is done or it leaves.
pub async fn simulate(
    run: Arc<Run>,
    client: WorkerServiceClient<Channel>,
    name: String,
    plan: Plan,
) {
    if let Some(after) = plan.join_at {
        let t0 = start_time(&run).await;
        tokio::time::sleep_until((t0 + after).into()).await;
    }
    let sim = Arc::new(Sim {
        slots: Arc::new(Semaphore::new(run.slots as usize)),
        ahead: Mutex::new(VecDeque::new()),
        reporting: Semaphore::new(run.slots as usize),
        run: run.clone(),
        client,
        name,
        speed: plan.speed,
        id: AtomicU64::new(0),
        heartbeat: Mutex::new(Duration::from_millis(500)),
        held: Mutex::new(HashMap::new()),
        changed: Notify::new(),
        stopping: AtomicBool::new(false),
        running: AtomicU64::new(0),
    });
    if !sim.register().await {
        return;
    }
    run.stats.registered.fetch_add(1, Ordering::Relaxed);
    run.registered.notify_waiters();
    let mut tasks = JoinSet::new();
    tasks.spawn(sim.clone().heartbeat_loop());
    tasks.spawn(sim.clone().lease_loop());
    if run.await_splits {
        tasks.spawn(sim.clone().await_splits_loop());
    }
    let mut done = run.done.clone();
    let leave_after = plan.leave_at.map(|(after, _)| after);
    let left = tokio::select! {
        _ = done.wait_for(|d| *d) => None,
        _ = async {
            match leave_after {
                Some(after) => {
                    let t0 = start_time(&run).await;
                    tokio::time::sleep_until((t0 + after).into()).await
                }
                None => std::future::pending().await,
            }
        } => plan.leave_at.map(|(_, how)| how),
    };
    if left == Some(Leave::Stop) {
        sim.stop().await;
        // Running units report their cut, then the worker goes.
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline && !sim.held.lock().unwrap().is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    tasks.abort_all();
    for h in sim.held.lock().unwrap().values() {
        if let Some(t) = &h.task {
            t.abort();
        }
    }
}

/// When the job started (waits for it).
async fn start_time(run: &Run) -> Instant {
    let mut rx = run.started.clone();
    let t0 = *rx
        .wait_for(|s| s.is_some())
        .await
        .expect("the run outlives its workers");
    t0.expect("waited for")
}

impl Sim {
    fn rtt(&self) -> Duration {
        self.run.rtt
    }

    /// Registers (again); false if the coordinator refuses for good.
    async fn register(&self) -> bool {
        for _ in 0..100 {
            let mut c = self.client.clone();
            let req = RegisterRequest {
                hostname: self.name.clone(),
                threads: self.run.slots,
                protocol_version: orchard_proto::PROTOCOL_VERSION,
                families: vec!["synthetic".into()],
            };
            match call(self.rtt(), c.register(req)).await {
                Ok(r) => {
                    let r = r.into_inner();
                    self.id.store(r.worker_id, Ordering::SeqCst);
                    let every = Duration::from_millis(r.heartbeat_interval_ms.max(10));
                    let lease = Duration::from_millis(r.lease_ttl_ms.max(30));
                    *self.heartbeat.lock().unwrap() = every.min(lease / 3);
                    return true;
                }
                Err(e) => {
                    self.run.stats.call_errors.fetch_add(1, Ordering::Relaxed);
                    if e.code() == tonic::Code::ResourceExhausted {
                        eprintln!("{}: {}", self.name, e.message());
                        return false;
                    }
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
        }
        false
    }

    /// Graceful stop: no more leases; running units cut, waiting ones
    /// handed back.
    async fn stop(self: &Arc<Self>) {
        self.stopping.store(true, Ordering::SeqCst);
        self.ahead.lock().unwrap().clear();
        let waiting: Vec<u64> = {
            let mut held = self.held.lock().unwrap();
            for h in held.values() {
                h.stop.notify_one();
            }
            let waiting: Vec<u64> = held
                .iter()
                .filter(|(_, h)| h.started.is_none())
                .map(|(&id, _)| id)
                .collect();
            for id in &waiting {
                held.remove(id);
            }
            waiting
        };
        self.hand_back(waiting).await;
        self.changed.notify_waiters();
    }

    /// Gives back leased units that will not start (`ReturnLeases`).
    async fn hand_back(&self, unit_ids: Vec<u64>) {
        if unit_ids.is_empty() {
            return;
        }
        let mut c = self.client.clone();
        let req = ReturnLeasesRequest {
            worker_id: self.id.load(Ordering::SeqCst),
            unit_ids,
        };
        let _ = call(self.rtt(), c.return_leases(req)).await;
    }
}

/// A unit running on a worker: counts the worker busy while it has one.
struct Busy<'a>(&'a Sim);

impl<'a> Busy<'a> {
    fn start(sim: &'a Sim) -> Busy<'a> {
        if sim.running.fetch_add(1, Ordering::SeqCst) == 0 {
            sim.run.stats.busy_workers.fetch_add(1, Ordering::SeqCst);
        }
        Busy(sim)
    }
}

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        if self.0.running.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.run.stats.busy_workers.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// Microseconds since `t`, less the injected round trip.
fn micros_less(t: Instant, rtt: Duration) -> u64 {
    t.elapsed().saturating_sub(rtt).as_micros() as u64
}
