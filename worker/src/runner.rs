//! The worker: its state, shared by its tasks, and the loops that run it.
//!
//! Concurrency: one permit per pool thread (a slot, see `crate::slot`).
//! The lease loop asks with `Lease` for as many units as it has free
//! permits and starts a slot on each unit granted; a slot's reports ask for
//! its next units, and it frees its permit only when an answer leaves it
//! with no unit to run. Beside the lease loop run the heartbeat, the
//! `AwaitSplits` poll, the lemma exchange and the wait for shutdown
//! (`spawn_loops`).
//! Shutdown stops every running unit at its next poll; each hands back its
//! unexplored rest in its report, and the worker returns once every slot
//! is free (`drain`), so no explored node is lost.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use orchard_core::PreparedJob;
use orchard_proto::v1::*;
use orchard_proto::PROTOCOL_VERSION;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

use crate::connection::{client, with_retry, Client};
use crate::heartbeat::{await_splits_loop, heartbeat_loop, HeartbeatSchedule};
use crate::jobs::OpenJobs;
use crate::lemmas::lemma_loop;
use crate::slot::{beyond, return_leases, start_unit, Coordinator, Rpc};
use crate::{WorkerError, WorkerMetrics};

/// How a worker runs.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// `http://host:port` of the coordinator.
    pub coordinator: String,
    /// The families this worker searches and the jobs it has open (shared
    /// by the local workers of one process).
    pub jobs: Arc<OpenJobs>,
    /// Threads exploring units (one unit per thread).
    pub threads: usize,
    /// Name reported to the coordinator (defaults to the host name).
    pub name: String,
    /// Give up after failing to reach the coordinator this long.
    pub give_up_after: Duration,
    /// Bearer token the coordinator requires, if any.
    pub token: Option<String>,
    /// The CA certificate to verify a TLS coordinator (`https://` address),
    /// and this worker's own certificate for one that requires it.
    pub tls: orchard_proto::access::ClientTls,
    /// Counters to keep up to date (for `/metrics`).
    pub metrics: Arc<WorkerMetrics>,
    /// How often to trade lemmas with the coordinator (see [`lemma_loop`]);
    /// none for the workers of `orchard run`, which share one process.
    pub lemma_interval: Option<Duration>,
}

/// What a worker did, returned when it stops.
#[derive(Debug, Default, Clone)]
pub struct WorkerStats {
    pub units_reported: u64,
    pub units_split: u64,
    pub nodes: u64,
}

/// A unit being explored.
pub(crate) struct Running {
    pub(crate) job_id: u64,
    pub(crate) stop: Arc<AtomicBool>,
    pub(crate) progress: Arc<AtomicU64>,
    /// Set when the coordinator cancelled it: the result is dropped.
    pub(crate) cancelled: Arc<AtomicBool>,
    /// How many pieces a split request asked for (`ExploreContext::pieces`).
    pub(crate) pieces: Arc<AtomicU32>,
}

impl Running {
    /// A split request for idle workers: the pieces wanted (0 or absent,
    /// from an older coordinator: 1), then the stop.
    pub(crate) fn split(&self, pieces: Option<u32>) {
        self.pieces
            .store(pieces.unwrap_or(1).max(1), Ordering::Relaxed);
        self.stop.store(true, Ordering::Release);
    }
}

/// A job this worker has seen: its prepared family and its shared bound.
pub(crate) struct JobHandle {
    pub(crate) prepared: Arc<dyn PreparedJob>,
    pub(crate) bound: Arc<AtomicU64>,
    /// Where the next `ShareLemmas` request for this job starts.
    pub(crate) lemma_cursor: AtomicU64,
    /// The coordinator said the job is over: no more lemmas for it.
    pub(crate) lemmas_over: AtomicBool,
}

pub(crate) struct State {
    pub(crate) config: WorkerConfig,
    pub(crate) client: Client,
    /// The calls the slots make ([`crate::slot::Coordinator`]): `client`
    /// itself in a worker, a fake in the slots' tests.
    pub(crate) coordinator: Box<dyn Coordinator>,
    pub(crate) worker_id: AtomicU64,
    /// How often to heartbeat, as the coordinator said at registration.
    pub(crate) heartbeat: Mutex<HeartbeatSchedule>,
    pub(crate) running: Mutex<HashMap<u64, Running>>,
    /// Units leased ahead, held queued by a slot (see [`crate::slot`]), each with
    /// whether the coordinator cancelled it meanwhile.
    pub(crate) queued: Mutex<HashMap<u64, bool>>,
    pub(crate) jobs: Mutex<HashMap<u64, Arc<JobHandle>>>,
    pub(crate) stopping: AtomicBool,
    /// Woken when `stopping` is set, to cut a waiting lease call short.
    pub(crate) stop_notify: tokio::sync::Notify,
    pub(crate) stats: Mutex<WorkerStats>,
    /// First fatal error seen by a background task.
    pub(crate) fatal: Mutex<Option<WorkerError>>,
    pub(crate) pool: rayon::ThreadPool,
}

impl State {
    /// A worker not registered yet, with `config.threads` (at least one)
    /// pool threads and a client that connects on its first call.
    pub(crate) fn new(config: WorkerConfig) -> Result<State, WorkerError> {
        let threads = config.threads.max(1);
        config
            .metrics
            .threads
            .store(threads as u64, Ordering::Relaxed);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("orchard-search-{i}"))
            .build()
            .map_err(|e| WorkerError::Pool(e.to_string()))?;
        let client = client(&config.coordinator, config.token.as_deref(), &config.tls)?;
        Ok(State {
            coordinator: Box::new(Rpc(client.clone())),
            client,
            config: WorkerConfig { threads, ..config },
            worker_id: AtomicU64::new(0),
            heartbeat: Mutex::new(HeartbeatSchedule::default()),
            running: Mutex::new(HashMap::new()),
            queued: Mutex::new(HashMap::new()),
            jobs: Mutex::new(HashMap::new()),
            stopping: AtomicBool::new(false),
            stop_notify: tokio::sync::Notify::new(),
            stats: Mutex::new(WorkerStats::default()),
            fatal: Mutex::new(None),
            pool,
        })
    }

    pub(crate) fn fail(&self, e: WorkerError) {
        tracing::error!("{e}");
        self.fatal.lock().unwrap().get_or_insert(e);
        self.stop_all();
    }

    /// Stops leasing, and stops every running unit at its next poll.
    pub(crate) fn stop_all(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        self.stop_notify.notify_waiters();
        for r in self.running.lock().unwrap().values() {
            r.stop.store(true, Ordering::Relaxed);
        }
    }

    pub(crate) async fn register(&self) -> Result<(), WorkerError> {
        let req = RegisterRequest {
            hostname: self.config.name.clone(),
            threads: self.config.threads as u32,
            protocol_version: PROTOCOL_VERSION,
            families: self.config.jobs.family_names(),
        };
        let resp = with_retry(
            &self.config.coordinator,
            self.config.give_up_after,
            "register",
            || {
                let mut c = self.client.clone();
                let req = req.clone();
                async move { c.register(req).await }
            },
        )
        .await?
        .into_inner();
        self.worker_id.store(resp.worker_id, Ordering::SeqCst);
        let schedule =
            HeartbeatSchedule::from_coordinator(resp.heartbeat_interval_ms, resp.lease_ttl_ms);
        *self.heartbeat.lock().unwrap() = schedule;
        tracing::info!(worker = resp.worker_id, coordinator = %self.config.coordinator, "registered");
        Ok(())
    }

    pub(crate) fn id(&self) -> u64 {
        self.worker_id.load(Ordering::SeqCst)
    }

    pub(crate) fn job(&self, lease: &UnitLease) -> Result<Arc<JobHandle>, String> {
        let known = |jobs: &HashMap<u64, Arc<JobHandle>>| {
            let j = jobs.get(&lease.job_id)?;
            j.bound.fetch_max(lease.bound, Ordering::Relaxed);
            Some(j.clone())
        };
        if let Some(j) = known(&self.jobs.lock().unwrap()) {
            return Ok(j);
        }
        // A job new here: let go of the jobs with no unit running here, so
        // that `OpenJobs` can close them (and free, say, their tables).
        {
            let busy = running_jobs(&self.running.lock().unwrap());
            self.jobs.lock().unwrap().retain(|id, _| busy.contains(id));
        }
        // Opened without the lock on `jobs`, which the heartbeat takes: a
        // job's cache may load for longer than a lease lasts.
        let prepared = self
            .config
            .jobs
            .open(&lease.family, &lease.params_json)
            .map_err(|e| e.to_string())?;
        let mut jobs = self.jobs.lock().unwrap();
        // Another slot may have opened it meanwhile: one handle a job.
        if let Some(j) = known(&jobs) {
            return Ok(j);
        }
        let handle = Arc::new(JobHandle {
            prepared,
            bound: Arc::new(AtomicU64::new(lease.bound)),
            lemma_cursor: AtomicU64::new(0),
            lemmas_over: AtomicBool::new(false),
        });
        jobs.insert(lease.job_id, handle.clone());
        Ok(handle)
    }
}

/// Runs a worker until `shutdown` completes (then returns its leases and
/// exits cleanly) or the coordinator cannot be reached any more.
pub async fn run_worker(
    config: WorkerConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<WorkerStats, WorkerError> {
    let state = Arc::new(State::new(config)?);
    state.register().await?;
    // A slot is held from its unit's lease to the answer that leaves it
    // with no unit to run (see `crate::slot`).
    let slots = Arc::new(Semaphore::new(state.config.threads));
    let loops = spawn_loops(&state, shutdown);
    lease_loop(&state, &slots).await;
    drain(&state, &slots, loops).await
}

/// Starts the tasks beside the lease loop: the heartbeat, the
/// `AwaitSplits` poll, the lemma exchange if the worker trades lemmas, and
/// the wait for `shutdown`, which stops the worker. Returns the tasks that
/// run until aborted.
fn spawn_loops(
    state: &Arc<State>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Vec<JoinHandle<()>> {
    let mut loops = vec![
        tokio::spawn(heartbeat_loop(state.clone())),
        tokio::spawn(await_splits_loop(state.clone())),
    ];
    if let Some(every) = state.config.lemma_interval {
        loops.push(tokio::spawn(lemma_loop(state.clone(), every)));
    }
    let state = state.clone();
    tokio::spawn(async move {
        shutdown.await;
        tracing::info!("shutting down: stopping units and handing back their rest");
        state.stop_all();
    });
    loops
}

/// Asks with `Lease` for as many units as there are free slots, and starts
/// a slot on each unit granted, until the worker stops or the coordinator
/// is gone (`State::fail`). An empty answer says when to ask again
/// (`retry_after_ms`, at most 5 s); a stop cuts a waiting call short.
async fn lease_loop(state: &Arc<State>, slots: &Arc<Semaphore>) {
    let mut idle_delay = Duration::from_millis(0);
    while !state.stopping.load(Ordering::SeqCst) {
        let stopped = state.stop_notify.notified();
        tokio::pin!(stopped);
        if state.stopping.load(Ordering::SeqCst) {
            break;
        }
        let free = slots.available_permits();
        if free == 0 {
            // Wait for a unit to finish.
            tokio::select! {
                permit = slots.clone().acquire_owned() => drop(permit),
                _ = &mut stopped => {}
            }
            continue;
        }
        let req = LeaseRequest {
            worker_id: state.id(),
            max_units: free as u32,
        };
        let call = async {
            tokio::time::sleep(idle_delay).await;
            with_retry(
                &state.config.coordinator,
                state.config.give_up_after,
                "lease",
                || {
                    let mut c = state.client.clone();
                    async move { c.lease(req).await }
                },
            )
            .await
        };
        let resp = tokio::select! {
            r = call => r,
            _ = &mut stopped => break,
        };
        let resp = match resp {
            Ok(r) => r.into_inner(),
            Err(e) => {
                state.fail(e);
                break;
            }
        };
        if resp.unknown_worker {
            if let Err(e) = state.register().await {
                state.fail(e);
                break;
            }
            continue;
        }
        idle_delay = Duration::from_millis(if resp.leases.is_empty() {
            resp.retry_after_ms.min(5000)
        } else {
            0
        });
        let (mut fit, extra) = beyond(resp.leases, free, "lease");
        while let Some(lease) = fit.pop_front() {
            match slots.clone().try_acquire_owned() {
                Ok(permit) => start_unit(state, lease, permit),
                Err(_) => {
                    // Only this loop takes slots, so this is a bug: the
                    // units are handed back rather than run or held.
                    tracing::warn!(units = fit.len() + 1, "no free slot for a leased unit");
                    let mut back = vec![lease.unit_id];
                    back.extend(fit.drain(..).map(|l| l.unit_id));
                    return_leases(state, back).await;
                }
            }
        }
        if !extra.is_empty() {
            return_leases(state, extra).await;
        }
    }
}

/// Waits until every slot is free: every running unit stops and reports
/// its rest, and every report is answered (each holds its slot until
/// then). Then ends `loops` and returns what the worker did, or the first
/// fatal error.
async fn drain(
    state: &State,
    slots: &Semaphore,
    loops: Vec<JoinHandle<()>>,
) -> Result<WorkerStats, WorkerError> {
    let _all = slots
        .acquire_many(state.config.threads as u32)
        .await
        .expect("semaphore open");
    for l in loops {
        l.abort();
    }
    if let Some(e) = state.fatal.lock().unwrap().take() {
        return Err(e);
    }
    let stats = state.stats.lock().unwrap().clone();
    tracing::info!(
        units = stats.units_reported,
        nodes = stats.nodes,
        "worker stopped"
    );
    Ok(stats)
}

/// The jobs of the units running here, each once.
pub(crate) fn running_jobs(running: &HashMap<u64, Running>) -> Vec<u64> {
    let mut ids: Vec<u64> = running.values().map(|r| r.job_id).collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// Sets the in-flight node figure of `/metrics` to the progress of the
/// units in `running` (called with the lock held, so that a finished unit
/// leaves the figure before its report counts its nodes).
pub(crate) fn publish_in_flight(running: &HashMap<u64, Running>, metrics: &WorkerMetrics) {
    let in_flight = running
        .values()
        .map(|r| r.progress.load(Ordering::Relaxed))
        .sum();
    metrics.nodes_in_flight.store(in_flight, Ordering::Relaxed);
}
