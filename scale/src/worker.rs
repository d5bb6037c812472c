//! A simulated worker: the real protocol over a real gRPC channel (register,
//! lease, heartbeat, report, hand-back on stop), the search replaced by the
//! synthetic family's instant exploration followed by a wait of virtual
//! time, `nodes / speed`.
//!
//! It behaves as `orchard worker --threads SLOTS` does (see
//! `worker/src/runner.rs` and `worker/src/slot.rs`): it asks for as many units as it has free slots,
//! heartbeats at the coordinator's interval with each unit's progress, and
//! when a heartbeat brings a split request for a unit it cuts the unit at
//! the nodes its virtual time has paid for and reports them with the rest
//! handed back (the family explores the same first nodes and fans the rest
//! out, exactly as a real search stopped there would). A cancelled unit is
//! dropped. Leaving: *killed* (every task aborted, nothing reported: its
//! leases expire) or *stopped* (running units cut and reported with their
//! rest, units not started handed back with `ReturnLeases`).
//!
//! A split request's `split_pieces` (the k-way hand-back) is passed to the
//! family's cut, as the real worker passes it through
//! `ExploreContext::pieces`.
//!
//! As the real worker does, a slot whose unit ended asks for its next unit
//! in that unit's report (`want_units`, report-and-lease): one call a unit
//! instead of a report and a lease; the slot waits for the report's commit
//! and the lease, and asks with `Lease` only when the answer brought
//! nothing. Each report also asks for one unit to hold queued beside the
//! running one (`queue_units`, lease-ahead): when a unit ends, the slot's
//! queued unit starts at once and the report (saying it started:
//! `started_units`) commits while it runs.
//!
//! Switches turn these off, so that what each gives can be measured
//! (docs/notes/scale.md): without `lease_ahead`, report-and-lease alone;
//! without `report_lease`, a slot is freed as soon as its unit's
//! exploration ends, the report travelling in the background (at most one
//! report a slot in flight) while the lease loop asks with `Lease`; with
//! `blocking_reports`, the slot waits for the report's acknowledgement.
//!
//! `prefetch` is what the real worker does not do: it keeps that many units
//! leased ahead of its free slots; so the lease round trips overlap work
//! instead of adding to it.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use orchard_core::{codec, Exploration};
use orchard_proto::v1::worker_service_client::WorkerServiceClient;
use orchard_proto::v1::*;
use orchard_synthetic::{Piece, Synthetic};
use tokio::sync::{watch, Notify, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tonic::transport::Channel;

/// Counters of the whole run, and the accepted reports per 100 ms.
pub struct Stats {
    pub reports_accepted: AtomicU64,
    pub reports_ignored: AtomicU64,
    pub units_cut: AtomicU64,
    pub units_cancelled: AtomicU64,
    pub rest_units: AtomicU64,
    pub split_requests: AtomicU64,
    pub lease_calls: AtomicU64,
    pub empty_leases: AtomicU64,
    pub heartbeats: AtomicU64,
    pub call_errors: AtomicU64,
    pub registered: AtomicU64,
    /// Workers running at least one unit now (for the fan-out times).
    pub busy_workers: AtomicU64,
    /// Split requests that came by `AwaitSplits` rather than a heartbeat.
    pub prompt_splits: AtomicU64,
    /// The pieces the split requests asked for, summed (the k-way
    /// hand-back: `split_pieces / split_requests` is the mean k).
    pub split_pieces: AtomicU64,
    /// Microseconds the coordinator took to answer (the injected round
    /// trip not counted): reports (their commit included), and lease calls
    /// that brought units.
    pub report_micros: AtomicU64,
    pub lease_micros: AtomicU64,
    /// Reports that asked for the next unit, the units they brought, and
    /// the microseconds they took (commit and wait for work included).
    pub report_lease_calls: AtomicU64,
    pub report_leased: AtomicU64,
    pub report_lease_micros: AtomicU64,
    /// Units that came leased ahead (queued), and those that started.
    pub ahead_leased: AtomicU64,
    pub ahead_started: AtomicU64,
    /// Accepted reports per 100 ms since the job started.
    pub buckets: Vec<AtomicU64>,
}

impl Stats {
    pub fn new(seconds: usize) -> Stats {
        Stats {
            reports_accepted: AtomicU64::new(0),
            reports_ignored: AtomicU64::new(0),
            units_cut: AtomicU64::new(0),
            units_cancelled: AtomicU64::new(0),
            rest_units: AtomicU64::new(0),
            split_requests: AtomicU64::new(0),
            lease_calls: AtomicU64::new(0),
            empty_leases: AtomicU64::new(0),
            heartbeats: AtomicU64::new(0),
            call_errors: AtomicU64::new(0),
            registered: AtomicU64::new(0),
            busy_workers: AtomicU64::new(0),
            prompt_splits: AtomicU64::new(0),
            split_pieces: AtomicU64::new(0),
            report_micros: AtomicU64::new(0),
            lease_micros: AtomicU64::new(0),
            report_lease_calls: AtomicU64::new(0),
            report_leased: AtomicU64::new(0),
            report_lease_micros: AtomicU64::new(0),
            ahead_leased: AtomicU64::new(0),
            ahead_started: AtomicU64::new(0),
            buckets: (0..seconds * 10).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// The most reports accepted in any window of one second.
    pub fn peak_per_second(&self) -> u64 {
        let b: Vec<u64> = self
            .buckets
            .iter()
            .map(|x| x.load(Ordering::Relaxed))
            .collect();
        b.windows(10).map(|w| w.iter().sum()).max().unwrap_or(0)
    }
}

/// What every simulated worker shares.
pub struct Run {
    pub job: Synthetic,
    pub rtt: Duration,
    pub slots: u32,
    /// Units leased ahead of the free slots (0: as the real worker).
    pub prefetch: u32,
    /// A slot waits for its unit's report to be acknowledged before it
    /// leases again (off: the slot is freed when the exploration ends, at
    /// most one report a slot in flight).
    pub blocking_reports: bool,
    /// A slot whose unit ended asks for its next unit in the unit's report
    /// (`ReportRequest::want_units`, report-and-lease: one call a unit), as
    /// the real worker does; off: the report travels in
    /// the background and the lease loop asks with `Lease`. Ignored with
    /// `prefetch` and `blocking_reports`.
    pub report_lease: bool,
    /// With `report_lease`: each report also asks for one unit to hold
    /// queued (`ReportRequest::queue_units`, lease-ahead), which starts
    /// on the slot when its unit ends, as the real worker does.
    pub lease_ahead: bool,
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

    async fn lease_loop(self: Arc<Self>) {
        let capacity = (self.run.slots + self.run.prefetch) as usize;
        loop {
            if self.stopping.load(Ordering::SeqCst) {
                return;
            }
            let changed = self.changed.notified();
            // Units leased ahead wait for a running unit's slot, not a free one.
            let ahead = self.ahead.lock().unwrap().len();
            let held = self.held.lock().unwrap().len().saturating_sub(ahead);
            if held >= capacity {
                let _ = tokio::time::timeout(Duration::from_millis(200), changed).await;
                continue;
            }
            let mut c = self.client.clone();
            let req = LeaseRequest {
                worker_id: self.id.load(Ordering::SeqCst),
                max_units: (capacity - held) as u32,
            };
            self.run.stats.lease_calls.fetch_add(1, Ordering::Relaxed);
            let t = Instant::now();
            let resp = match call(self.rtt(), c.lease(req)).await {
                Ok(r) => r.into_inner(),
                Err(_) => {
                    self.run.stats.call_errors.fetch_add(1, Ordering::Relaxed);
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    continue;
                }
            };
            if resp.unknown_worker {
                if !self.register().await {
                    return;
                }
                continue;
            }
            if !resp.leases.is_empty() {
                self.run
                    .stats
                    .lease_micros
                    .fetch_add(micros_less(t, self.rtt()), Ordering::Relaxed);
            }
            if resp.leases.is_empty() {
                self.run.stats.empty_leases.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(resp.retry_after_ms.min(5000))).await;
                continue;
            }
            self.take(resp.leases);
        }
    }

    /// Holds leased units and starts a task for each (it waits for a slot).
    fn take(self: &Arc<Self>, leases: Vec<UnitLease>) {
        for lease in leases {
            self.hold(lease.unit_id);
            self.spawn_unit(lease, None);
        }
    }

    /// Holds a leased unit, not started.
    fn hold(&self, id: u64) {
        self.held.lock().unwrap().insert(
            id,
            Held {
                stop: Arc::new(Notify::new()),
                pieces: Arc::new(AtomicU32::new(0)),
                cancelled: Arc::new(AtomicBool::new(false)),
                started: None,
                task: None,
            },
        );
    }

    /// Starts the task of a held unit: on `permit`'s slot, or it waits for
    /// one. Nothing if the unit was handed back meanwhile.
    fn spawn_unit(self: &Arc<Self>, lease: UnitLease, permit: Option<OwnedSemaphorePermit>) {
        let mut held = self.held.lock().unwrap();
        let Some(h) = held.get_mut(&lease.unit_id) else {
            return;
        };
        let (stop, cancelled, pieces) = (h.stop.clone(), h.cancelled.clone(), h.pieces.clone());
        let task = tokio::spawn(self.clone().unit(lease, stop, cancelled, pieces, permit));
        h.task = Some(task.abort_handle());
    }

    /// The oldest unit leased ahead that is still held and not cancelled
    /// (a cancelled one is dropped).
    fn pop_ahead(&self) -> Option<UnitLease> {
        loop {
            let next = self.ahead.lock().unwrap().pop_front()?;
            let cancelled = match self.held.lock().unwrap().get(&next.unit_id) {
                Some(h) => h.cancelled.load(Ordering::SeqCst),
                None => continue,
            };
            if cancelled {
                self.run
                    .stats
                    .units_cancelled
                    .fetch_add(1, Ordering::Relaxed);
                self.leave(next.unit_id);
                continue;
            }
            return Some(next);
        }
    }

    /// Explores one unit in virtual time and reports it.
    async fn unit(
        self: Arc<Self>,
        lease: UnitLease,
        stop: Arc<Notify>,
        cancelled: Arc<AtomicBool>,
        pieces: Arc<AtomicU32>,
        permit: Option<OwnedSemaphorePermit>,
    ) {
        let id = lease.unit_id;
        let permit = match permit {
            Some(p) => p,
            None => self
                .slots
                .clone()
                .acquire_owned()
                .await
                .expect("slots stay open"),
        };
        let unit: Piece = match codec::decode(&lease.unit) {
            Ok(u) => u,
            Err(e) => {
                self.report(ReportRequest {
                    worker_id: self.id.load(Ordering::SeqCst),
                    unit_id: id,
                    error: format!("undecodable unit: {e}"),
                    ..Default::default()
                })
                .await;
                self.leave(id);
                return;
            }
        };
        let never = || false;
        let budget = lease.node_budget.max(1);
        let plan = self
            .run
            .job
            .explore_budget(&unit, budget, &never)
            .expect("the coordinator leases the tree's own units");
        let nodes = explored(&plan);
        let duration = Duration::from_secs_f64(nodes as f64 / self.speed);
        let t = Instant::now();
        {
            let mut held = self.held.lock().unwrap();
            let Some(h) = held.get_mut(&id) else {
                // Handed back before it started.
                return;
            };
            h.started = Some(t);
        }
        let busy = Busy::start(&self);
        self.changed.notify_waiters();
        let outcome = tokio::select! {
            _ = tokio::time::sleep(duration) => plan,
            _ = stop.notified() => {
                let paid = (t.elapsed().as_secs_f64() * self.speed) as u64;
                if paid >= nodes {
                    plan
                } else {
                    self.run.stats.units_cut.fetch_add(1, Ordering::Relaxed);
                    let k = pieces.load(Ordering::Relaxed).max(1);
                    self.run
                        .job
                        .explore_split(&unit, paid.max(1), k, budget)
                        .expect("the same unit again")
                }
            }
        };
        if cancelled.load(Ordering::SeqCst) {
            self.run
                .stats
                .units_cancelled
                .fetch_add(1, Ordering::Relaxed);
            self.leave(id);
            return;
        }
        let (summary, rest) = match outcome {
            Exploration::Finished(s) => (s, Vec::new()),
            Exploration::Split { explored, rest } => (explored, rest),
        };
        self.run
            .stats
            .rest_units
            .fetch_add(rest.len() as u64, Ordering::Relaxed);
        let req = ReportRequest {
            worker_id: self.id.load(Ordering::SeqCst),
            unit_id: id,
            nodes: summary.nodes,
            summary: codec::encode(&summary),
            rest: rest.iter().map(codec::encode).collect(),
            bound: 0,
            error: String::new(),
            stopped: false,
            ..Default::default()
        };
        if self.run.prefetch > 0 {
            // The slot is free as soon as the exploration is; the report
            // travels while the next unit runs.
            drop(busy);
            drop(permit);
            self.report(req).await;
            self.leave(id);
        } else if self.run.report_lease && !self.run.blocking_reports {
            // Report-and-lease: the slot stays with this unit until its
            // report answers with the next unit (leased after the report's
            // commit); the lease loop sees the slot held meanwhile, and
            // asks with `Lease` only if the answer brought nothing.
            drop(busy);
            let stopping = self.stopping.load(Ordering::SeqCst);
            // Lease-ahead: the slot's queued unit starts now, on this
            // slot, and the report commits while it runs.
            let mut permit = Some(permit);
            let mut started = Vec::new();
            if self.run.lease_ahead && !stopping {
                if let Some(next) = self.pop_ahead() {
                    self.run.stats.ahead_started.fetch_add(1, Ordering::Relaxed);
                    started.push(next.unit_id);
                    self.spawn_unit(next, permit.take());
                }
            }
            let want = u32::from(!stopping && permit.is_some());
            let queue = u32::from(!stopping && self.run.lease_ahead);
            let mut leases = self
                .report_asking(req, want, queue, started)
                .await
                .into_iter();
            // Units to run come first in the answer, then queued ones;
            // more than asked are handed back.
            let run_now = if want > 0 { leases.next() } else { None };
            let queued = if queue > 0 { leases.next() } else { None };
            let mut back: Vec<u64> = leases.map(|l| l.unit_id).collect();
            if self.stopping.load(Ordering::SeqCst) {
                // Stopped while the call was out: handed back unstarted.
                back.extend(run_now.iter().chain(queued.iter()).map(|l| l.unit_id));
            } else {
                if let Some(l) = run_now {
                    self.hold(l.unit_id);
                    self.spawn_unit(l, permit.take());
                }
                if let Some(q) = queued {
                    self.run.stats.ahead_leased.fetch_add(1, Ordering::Relaxed);
                    self.hold(q.unit_id);
                    self.ahead.lock().unwrap().push_back(q);
                }
            }
            self.hand_back(back).await;
            self.leave(id);
            drop(permit);
        } else if self.run.blocking_reports {
            self.report(req).await;
            self.leave(id);
            drop(busy);
            drop(permit);
        } else {
            // The real worker: the slot is free once a report slot is had
            // (at most one report a slot in flight); the unit leaves the
            // lease loop's count at once, so the slot leases again.
            let in_flight = self.reporting.acquire().await.expect("stays open");
            drop(busy);
            drop(permit);
            self.leave(id);
            self.report(req).await;
            drop(in_flight);
        }
    }

    /// A split request: the pieces asked for (absent from an older
    /// coordinator: 1), then the stop.
    fn split(&self, h: &Held, pieces: Option<u32>) {
        let k = pieces.unwrap_or(1).max(1);
        self.run
            .stats
            .split_pieces
            .fetch_add(u64::from(k), Ordering::Relaxed);
        h.pieces.store(k, Ordering::Relaxed);
        h.stop.notify_one();
    }

    fn leave(&self, id: u64) {
        self.held.lock().unwrap().remove(&id);
        self.changed.notify_waiters();
    }

    /// Reports until the coordinator answers.
    async fn report(&self, req: ReportRequest) {
        self.report_asking(req, 0, 0, Vec::new()).await;
    }

    /// Reports until the coordinator answers, asking for `want` units to
    /// run and `queue` to hold queued in the same call (report-and-lease,
    /// lease-ahead) and saying which queued units `started`; returns the
    /// units it leased.
    async fn report_asking(
        &self,
        req: ReportRequest,
        want: u32,
        queue: u32,
        started: Vec<u64>,
    ) -> Vec<UnitLease> {
        let req = ReportRequest {
            want_units: want,
            queue_units: queue,
            started_units: started,
            ..req
        };
        for _ in 0..100 {
            let mut c = self.client.clone();
            let t = Instant::now();
            match call(self.rtt(), c.report(req.clone())).await {
                Ok(r) => {
                    let st = &self.run.stats;
                    let took = micros_less(t, self.rtt());
                    let r = r.into_inner();
                    if want > 0 || queue > 0 {
                        st.report_lease_calls.fetch_add(1, Ordering::Relaxed);
                        st.report_lease_micros.fetch_add(took, Ordering::Relaxed);
                        st.report_leased
                            .fetch_add(r.leases.len() as u64, Ordering::Relaxed);
                    } else {
                        st.report_micros.fetch_add(took, Ordering::Relaxed);
                    }
                    if r.accepted {
                        self.run
                            .stats
                            .reports_accepted
                            .fetch_add(1, Ordering::Relaxed);
                        self.run.bucket();
                    } else {
                        self.run
                            .stats
                            .reports_ignored
                            .fetch_add(1, Ordering::Relaxed);
                    }
                    return r.leases;
                }
                Err(e) => {
                    self.run.stats.call_errors.fetch_add(1, Ordering::Relaxed);
                    if e.code() == tonic::Code::InvalidArgument
                        || e.code() == tonic::Code::FailedPrecondition
                        || e.code() == tonic::Code::NotFound
                    {
                        eprintln!("{}: report refused: {}", self.name, e.message());
                        return Vec::new();
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
        Vec::new()
    }

    /// Split requests as soon as the coordinator makes them (a long poll
    /// beside the heartbeats). Stops for good if the coordinator does not
    /// know the call (an older one): heartbeats still bring the requests.
    async fn await_splits_loop(self: Arc<Self>) {
        loop {
            let every = *self.heartbeat.lock().unwrap();
            let mut c = self.client.clone();
            let req = AwaitSplitsRequest {
                worker_id: self.id.load(Ordering::SeqCst),
                wait_ms: every.as_millis().min(u32::MAX as u128) as u32,
            };
            let t = Instant::now();
            let resp = match call(self.rtt(), c.await_splits(req)).await {
                Ok(r) => r.into_inner(),
                Err(e) if e.code() == tonic::Code::Unimplemented => return,
                Err(_) => {
                    self.run.stats.call_errors.fetch_add(1, Ordering::Relaxed);
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    continue;
                }
            };
            if resp.unknown_worker {
                // The heartbeat loop registers again.
                tokio::time::sleep(every).await;
                continue;
            }
            {
                let held = self.held.lock().unwrap();
                for (i, id) in resp.split_units.iter().enumerate() {
                    if let Some(h) = held.get(id) {
                        self.run
                            .stats
                            .split_requests
                            .fetch_add(1, Ordering::Relaxed);
                        self.run.stats.prompt_splits.fetch_add(1, Ordering::Relaxed);
                        self.split(h, resp.split_pieces.get(i).copied());
                    }
                }
            }
            if resp.split_units.is_empty() && t.elapsed() < every / 2 {
                // Answered early with nothing: do not spin.
                tokio::time::sleep(every / 2).await;
            }
        }
    }

    async fn heartbeat_loop(self: Arc<Self>) {
        loop {
            let every = *self.heartbeat.lock().unwrap();
            tokio::time::sleep(every).await;
            // With lease-ahead, units not started are listed as queued
            // (renewed, not started); before it, all as running.
            let (running, queued) = {
                let held = self.held.lock().unwrap();
                let mut running = Vec::new();
                let mut queued = Vec::new();
                for (&unit_id, h) in held.iter() {
                    match h.started {
                        None if self.run.lease_ahead => queued.push(unit_id),
                        started => running.push(UnitProgress {
                            unit_id,
                            nodes: started
                                .map_or(0, |t| (t.elapsed().as_secs_f64() * self.speed) as u64),
                        }),
                    }
                }
                (running, queued)
            };
            let mut c = self.client.clone();
            let req = HeartbeatRequest {
                worker_id: self.id.load(Ordering::SeqCst),
                running,
                bounds: Vec::new(),
                queued,
            };
            self.run.stats.heartbeats.fetch_add(1, Ordering::Relaxed);
            let resp = match call(self.rtt(), c.heartbeat(req)).await {
                Ok(r) => r.into_inner(),
                Err(_) => {
                    self.run.stats.call_errors.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
            };
            if resp.unknown_worker {
                if !self.register().await {
                    return;
                }
                continue;
            }
            let held = self.held.lock().unwrap();
            for id in resp.cancel_units {
                if let Some(h) = held.get(&id) {
                    h.cancelled.store(true, Ordering::SeqCst);
                    h.stop.notify_one();
                }
            }
            for (i, id) in resp.split_units.iter().enumerate() {
                if let Some(h) = held.get(id) {
                    self.run
                        .stats
                        .split_requests
                        .fetch_add(1, Ordering::Relaxed);
                    self.split(h, resp.split_pieces.get(i).copied());
                }
            }
        }
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

fn explored<S: HasNodes, U>(x: &Exploration<S, U>) -> u64 {
    match x {
        Exploration::Finished(s) | Exploration::Split { explored: s, .. } => s.nodes(),
    }
}

trait HasNodes {
    fn nodes(&self) -> u64;
}

impl HasNodes for orchard_synthetic::SyntheticSummary {
    fn nodes(&self) -> u64 {
        self.nodes
    }
}
