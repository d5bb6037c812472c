//! The worker's main loop.
//!
//! Concurrency: one permit per pool thread. The lease loop asks for as many
//! units as it has free permits; each granted unit runs on the rayon pool
//! and, when done, is reported by a tokio task whose report also asks for
//! the permit's next unit (report-and-lease) and for one to hold queued
//! (lease-ahead), which starts on the permit when its unit ends, while the
//! report commits; the permit is freed only if an answer leaves it with no
//! unit to run.
//! Shutdown stops every running unit at its next poll; each hands back its
//! unexplored rest in its report, so no explored node is lost.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use orchard_core::{DynExploration, ExploreContext, PreparedJob};
use orchard_proto::v1::*;
use orchard_proto::PROTOCOL_VERSION;
use tokio::sync::{oneshot, Semaphore};

use crate::connection::{client, with_retry, Client};
use crate::heartbeat::{await_splits_loop, heartbeat_loop, HeartbeatSchedule};
use crate::jobs::OpenJobs;
use crate::lemmas::lemma_loop;
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
    /// Trade lemmas with the coordinator (see [`lemma_loop`]). Off for the
    /// workers of `orchard run`, which share one process.
    pub share_lemmas: bool,
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
    pub(crate) worker_id: AtomicU64,
    /// How often to heartbeat, as the coordinator said at registration.
    pub(crate) heartbeat: Mutex<HeartbeatSchedule>,
    pub(crate) running: Mutex<HashMap<u64, Running>>,
    /// Units leased ahead, held queued by a slot (see [`slot`]), each with
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
    pub(crate) fn fail(&self, e: WorkerError) {
        tracing::error!("{e}");
        self.fatal.lock().unwrap().get_or_insert(e);
        self.stop_all();
    }

    /// Stops leasing, and stops every running unit at its next poll.
    fn stop_all(&self) {
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

    fn job(&self, lease: &UnitLease) -> Result<Arc<JobHandle>, String> {
        let busy = running_jobs(&self.running.lock().unwrap());
        let mut jobs = self.jobs.lock().unwrap();
        if let Some(j) = jobs.get(&lease.job_id) {
            j.bound.fetch_max(lease.bound, Ordering::Relaxed);
            return Ok(j.clone());
        }
        // A job new here: let go of the jobs with no unit running here, so
        // that `OpenJobs` can close them (and free, say, their tables).
        jobs.retain(|id, _| busy.contains(id));
        let prepared = self
            .config
            .jobs
            .open(&lease.family, &lease.params_json)
            .map_err(|e| e.to_string())?;
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
    let state = Arc::new(State {
        client: client(&config.coordinator, config.token.as_deref(), &config.tls)?,
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
    });
    state.register().await?;

    // A slot is held from its unit's lease to that unit's report, which
    // asks for the slot's next unit (see `start_unit`).
    let slots = Arc::new(Semaphore::new(threads));
    let heartbeat = tokio::spawn(heartbeat_loop(state.clone()));
    let splits = tokio::spawn(await_splits_loop(state.clone()));
    let lemmas = state
        .config
        .share_lemmas
        .then(|| tokio::spawn(lemma_loop(state.clone())));
    {
        let state = state.clone();
        tokio::spawn(async move {
            shutdown.await;
            tracing::info!("shutting down: stopping units and handing back their rest");
            state.stop_all();
        });
    }

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
                Ok(permit) => start_unit(&state, lease, permit),
                Err(_) => {
                    // Only this loop takes slots, so this is a bug: the
                    // units are handed back rather than run or held.
                    tracing::warn!(units = fit.len() + 1, "no free slot for a leased unit");
                    let mut back = vec![lease.unit_id];
                    back.extend(fit.drain(..).map(|l| l.unit_id));
                    return_leases(&state, back).await;
                }
            }
        }
        if !extra.is_empty() {
            return_leases(&state, extra).await;
        }
    }

    // Drain: every running unit stops and reports its rest, and every
    // report is answered (each holds its slot until then).
    let _all = slots
        .acquire_many(threads as u32)
        .await
        .expect("semaphore open");
    heartbeat.abort();
    splits.abort();
    if let Some(l) = lemmas {
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

/// Starts a slot on a leased unit: a tokio task runs the slot's units one
/// after another until an answer leaves it without one (see [`slot`]).
fn start_unit(state: &Arc<State>, lease: UnitLease, permit: tokio::sync::OwnedSemaphorePermit) {
    let first = launch(state, lease);
    tokio::spawn(slot(state.clone(), first, permit));
}

/// A slot: the slot (`permit`) is held from its first unit's lease until
/// an answer leaves it with no unit to run.
///
/// Each unit's report asks for the slot's next unit (`want_units`,
/// report-and-lease), so one call a unit does both, and for one unit to
/// hold queued (`queue_units`, lease-ahead): when a unit ends, the queued
/// one starts at once and the report (asking only for the next queued one,
/// and saying which started: `started_units`) travels and commits while it
/// runs, so the slot does not wait for the commit. A slot holds at most one
/// queued unit; it is handed back if the worker stops (or comes back by
/// expiry). The lease loop asks with `Lease` only for slots an answer left
/// empty. What each of the two gives, with simulated workers
/// (`orchard-scale --no-report-lease`, `--no-lease-ahead`), is in
/// docs/notes/scale.md.
async fn slot(state: Arc<State>, mut current: Launched, permit: tokio::sync::OwnedSemaphorePermit) {
    let mut queued: Option<UnitLease> = None;
    loop {
        let landed = land(&state, current).await;
        let stopping = state.stopping.load(Ordering::SeqCst);
        let ahead = queued.take().and_then(|q| take_queued(&state, q));
        let mut next = None;
        match ahead {
            Some(q) if stopping => return_leases(&state, vec![q.unit_id]).await,
            Some(q) => next = Some(q),
            None => {}
        }
        let started: Vec<u64> = next.iter().map(|q| q.unit_id).collect();
        let mut running = next.map(|q| launch(&state, q));
        let Some(landed) = landed else {
            // Cancelled: no report. A queued unit that started now is
            // told by the next heartbeat (it lists it running).
            match running {
                Some(r) => {
                    current = r;
                    continue;
                }
                None => break,
            }
        };
        let ask = if stopping {
            Ask::default()
        } else {
            Ask {
                want: u32::from(running.is_none()),
                queue: 1,
                started,
            }
        };
        let (want, queue) = (ask.want, ask.queue);
        let leases = report(&state, landed, ask).await;
        let stopping = state.stopping.load(Ordering::SeqCst);
        // Run-now units come first in the answer, then the queued ones.
        let (mut fit, mut back) = beyond(leases, (want + queue) as usize, "report");
        if want > 0 {
            // A unit leased while stopping starts stopped: it reports its
            // whole rest at once.
            running = fit.pop_front().map(|n| launch(&state, n));
        }
        if let Some(q) = fit.pop_front() {
            if stopping {
                back.push(q.unit_id);
            } else {
                state.queued.lock().unwrap().insert(q.unit_id, false);
                queued = Some(q);
            }
        }
        back.extend(fit.drain(..).map(|l| l.unit_id));
        if !back.is_empty() {
            return_leases(&state, back).await;
        }
        match running {
            Some(r) => current = r,
            None => break,
        }
    }
    // An answer without a unit to run brings none to queue; kept safe.
    if let Some(q) = queued.and_then(|q| take_queued(&state, q)) {
        return_leases(&state, vec![q.unit_id]).await;
    }
    drop(permit);
}

/// The slot's queued unit, taken out of the worker's queued set (which
/// heartbeats renew); None if the coordinator cancelled it meanwhile.
fn take_queued(state: &State, q: UnitLease) -> Option<UnitLease> {
    let cancelled = state.queued.lock().unwrap().remove(&q.unit_id);
    match cancelled {
        Some(false) => Some(q),
        _ => {
            tracing::debug!(unit = q.unit_id, "queued unit cancelled; dropped");
            None
        }
    }
}

/// A unit started on a slot.
enum Launched {
    /// Its job could not be opened: reported as failed.
    Failed {
        unit_id: u64,
        bound: u64,
        error: String,
    },
    Running {
        unit_id: u64,
        job: Arc<JobHandle>,
        outcome: oneshot::Receiver<Result<DynExploration, UnitError>>,
        stop: Arc<AtomicBool>,
        cancelled: Arc<AtomicBool>,
    },
}

/// Why a unit could not be explored, as reported.
struct UnitError {
    message: String,
    /// Another attempt may succeed (`FamilyError::Attempt`).
    retryable: bool,
}

/// A unit that ended, to report.
struct Landed {
    unit_id: u64,
    bound: u64,
    outcome: Result<DynExploration, UnitError>,
    stopped: bool,
}

/// Starts exploring one leased unit on the pool.
fn launch(state: &Arc<State>, lease: UnitLease) -> Launched {
    let unit_id = lease.unit_id;
    let job = match state.job(&lease) {
        Ok(j) => j,
        Err(e) => {
            return Launched::Failed {
                unit_id,
                bound: lease.bound,
                error: format!("cannot load job {}: {e}", lease.job_id),
            }
        }
    };
    let stop = Arc::new(AtomicBool::new(state.stopping.load(Ordering::SeqCst)));
    let progress = Arc::new(AtomicU64::new(0));
    let cancelled = Arc::new(AtomicBool::new(false));
    let pieces = Arc::new(AtomicU32::new(0));
    state
        .config
        .metrics
        .units_running
        .fetch_add(1, Ordering::Relaxed);
    state.running.lock().unwrap().insert(
        unit_id,
        Running {
            job_id: lease.job_id,
            stop: stop.clone(),
            progress: progress.clone(),
            cancelled: cancelled.clone(),
            pieces: pieces.clone(),
        },
    );
    let (tx, rx) = oneshot::channel();
    let stopped = stop.clone();
    let budget = lease.node_budget.max(1);
    let payload = lease.unit;
    let bound = job.bound.clone();
    let prepared = job.prepared.clone();
    state.pool.spawn(move || {
        let ctx = ExploreContext {
            budget,
            stop: &stopped,
            bound: &bound,
            progress: &progress,
            pieces: &pieces,
        };
        let _ = tx.send(prepared.explore(&payload, &ctx).map_err(|e| UnitError {
            retryable: e.is_retryable(),
            message: e.to_string(),
        }));
    });
    Launched::Running {
        unit_id,
        job,
        outcome: rx,
        stop,
        cancelled,
    }
}

/// Waits for a launched unit's end; None if it was cancelled (its result
/// is dropped).
async fn land(state: &Arc<State>, launched: Launched) -> Option<Landed> {
    let (unit_id, job, rx, stop, cancelled) = match launched {
        Launched::Failed {
            unit_id,
            bound,
            error,
        } => {
            return Some(Landed {
                unit_id,
                bound,
                outcome: Err(UnitError {
                    message: error,
                    retryable: false,
                }),
                stopped: false,
            })
        }
        Launched::Running {
            unit_id,
            job,
            outcome,
            stop,
            cancelled,
        } => (unit_id, job, outcome, stop, cancelled),
    };
    let outcome = rx.await.unwrap_or_else(|_| {
        Err(UnitError {
            message: "search thread panicked".to_string(),
            retryable: false,
        })
    });
    {
        // The unit's nodes leave the in-flight figure before its report
        // adds them to the reported one, so `/metrics` never counts them
        // twice (the heartbeat refreshes the figure only once an interval).
        let mut running = state.running.lock().unwrap();
        running.remove(&unit_id);
        let m = &state.config.metrics;
        publish_in_flight(&running, m);
        m.units_running.fetch_sub(1, Ordering::Relaxed);
    }
    if cancelled.load(Ordering::SeqCst) {
        state
            .config
            .metrics
            .units_cancelled
            .fetch_add(1, Ordering::Relaxed);
        tracing::debug!(unit = unit_id, "cancelled unit dropped");
        return None;
    }
    Some(Landed {
        unit_id,
        bound: job.bound.load(Ordering::Relaxed),
        outcome,
        stopped: stop.load(Ordering::Relaxed),
    })
}

/// What a report asks for beside the report: units to run now on the slot
/// it frees (`want_units`), units to hold queued (`queue_units`), and the
/// queued units that started (`started_units`).
#[derive(Default)]
struct Ask {
    want: u32,
    queue: u32,
    started: Vec<u64>,
}

/// The one rule for an answer that brings more units than were asked for
/// (a misbehaving or future coordinator): the first `asked` are kept, the
/// others are handed back (`return_leases`), with a warning, never run and
/// never a panic. Returns the kept leases and the ids to hand back; `call`
/// names the call in the warning.
pub(crate) fn beyond(
    leases: Vec<UnitLease>,
    asked: usize,
    call: &str,
) -> (VecDeque<UnitLease>, Vec<u64>) {
    let mut kept: VecDeque<UnitLease> = leases.into();
    let extra: Vec<u64> = kept
        .drain(asked.min(kept.len())..)
        .map(|l| l.unit_id)
        .collect();
    if !extra.is_empty() {
        tracing::warn!(
            call,
            asked,
            extra = extra.len(),
            "the coordinator leased more units than asked for; handing the extra back"
        );
    }
    (kept, extra)
}

/// Gives leased units back to the coordinator (best effort: a lease not
/// given back expires).
async fn return_leases(state: &Arc<State>, unit_ids: Vec<u64>) {
    let mut c = state.client.clone();
    let req = ReturnLeasesRequest {
        worker_id: state.id(),
        unit_ids,
    };
    if let Err(e) = c.return_leases(req).await {
        tracing::warn!("could not hand back leases: {e}");
    }
}

/// Reports one unit, retrying until the coordinator has it (`stopped`: its
/// search was asked to stop early), and asks in the same call for `want`
/// units for the slot it freed (report-and-lease) and `queue` to hold
/// queued (lease-ahead), saying which queued units started: returns the
/// units leased (those to run first). A failed unit's report asks for none.
/// A retry after a lost answer is a duplicate, which leases nothing (a unit
/// the lost answer carried comes back when its lease expires).
async fn report(state: &Arc<State>, landed: Landed, ask: Ask) -> Vec<UnitLease> {
    let Landed {
        unit_id,
        bound,
        outcome,
        stopped,
    } = landed;
    let req = match outcome {
        Ok(x) => {
            let mut stats = state.stats.lock().unwrap();
            stats.units_reported += 1;
            stats.nodes += x.nodes;
            let m = &state.config.metrics;
            m.units_reported.fetch_add(1, Ordering::Relaxed);
            m.nodes_reported.fetch_add(x.nodes, Ordering::Relaxed);
            if !x.rest.is_empty() {
                stats.units_split += 1;
                m.units_split.fetch_add(1, Ordering::Relaxed);
            }
            ReportRequest {
                worker_id: state.id(),
                unit_id,
                summary: x.summary,
                nodes: x.nodes,
                rest: x.rest,
                bound,
                error: String::new(),
                retryable: false,
                stopped,
                want_units: ask.want,
                queue_units: ask.queue,
                started_units: ask.started,
            }
        }
        Err(e) => {
            // A failed attempt that may succeed elsewhere is the
            // coordinator's to judge; only a unit's own failure is an
            // error here.
            if e.retryable {
                tracing::info!(unit = unit_id, "unit attempt failed: {}", e.message);
            } else {
                tracing::error!(unit = unit_id, "unit failed: {}", e.message);
            }
            ReportRequest {
                worker_id: state.id(),
                unit_id,
                bound,
                error: e.message,
                retryable: e.retryable,
                started_units: ask.started,
                ..Default::default()
            }
        }
    };
    let result = with_retry(
        &state.config.coordinator,
        state.config.give_up_after,
        "report",
        || {
            let mut c = state.client.clone();
            // Under the id the worker has now: after a coordinator restart
            // it registered again, and only units it holds under that id
            // (or units nobody leased since the restart) take its reports.
            let req = ReportRequest {
                worker_id: state.id(),
                ..req.clone()
            };
            async move { c.report(req).await }
        },
    )
    .await;
    match result {
        Ok(resp) => {
            let resp = resp.into_inner();
            if !resp.accepted {
                tracing::debug!(
                    unit = unit_id,
                    "report was a duplicate; ignored by the coordinator"
                );
            }
            resp.leases
        }
        Err(WorkerError::Refused(msg)) => {
            tracing::error!(unit = unit_id, "report refused: {msg}");
            Vec::new()
        }
        Err(e) => {
            state.fail(e);
            Vec::new()
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn leases(ids: &[u64]) -> Vec<UnitLease> {
        ids.iter()
            .map(|&unit_id| UnitLease {
                unit_id,
                ..Default::default()
            })
            .collect()
    }

    fn ids(kept: &VecDeque<UnitLease>) -> Vec<u64> {
        kept.iter().map(|l| l.unit_id).collect()
    }

    #[test]
    fn extra_leases_are_handed_back_not_run() {
        // A `Lease` answer with more units than free slots, and a report's
        // answer with more than `want_units`: the same rule for both.
        let (kept, extra) = beyond(leases(&[7, 8, 9]), 1, "lease");
        assert_eq!(ids(&kept), [7]);
        assert_eq!(extra, [8, 9]);
        let (kept, extra) = beyond(leases(&[4, 5]), 0, "report");
        assert!(kept.is_empty());
        assert_eq!(extra, [4, 5]);
    }

    #[test]
    fn leases_within_the_count_are_all_kept() {
        let (kept, extra) = beyond(leases(&[1, 2]), 3, "lease");
        assert_eq!(ids(&kept), [1, 2]);
        assert!(extra.is_empty());
        let (kept, extra) = beyond(Vec::new(), 2, "report");
        assert!(kept.is_empty() && extra.is_empty());
    }
}
