//! A slot: one pool thread's units, from the lease of the first to the
//! report that leaves the slot with nothing to run.
//!
//! A module of its own because it is where the worker's promises to the
//! coordinator are kept, and so what its tests check, against a fake
//! coordinator ([`Coordinator`]) and a family of the tests' own:
//!
//! * every unit that ends is reported, its report retried until the
//!   coordinator has it (or the worker gives the coordinator up), unless
//!   the coordinator cancelled it: then its result is dropped unreported;
//! * a slot holds its permit from its first unit's lease until an answer
//!   leaves it with no unit to run, so the lease loop never asks for a
//!   slot that is busy;
//! * a slot holds at most one unit queued, listed in `State::queued` (which
//!   heartbeats renew) from the answer that leased it until it starts, is
//!   handed back, or is dropped because the coordinator cancelled it; a
//!   queued unit that starts is named in the next report
//!   (`started_units`);
//! * an answer never makes a slot run or hold more than it asked for: the
//!   extra is handed back ([`beyond`]);
//! * once the worker stops, a slot asks for nothing and hands its queued
//!   unit back instead of starting it.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use orchard_core::{DynExploration, ExploreContext};
use orchard_proto::v1::*;
use tokio::sync::{oneshot, OwnedSemaphorePermit};
use tonic::Status;

use crate::connection::{with_retry, Client};
use crate::runner::{publish_in_flight, JobHandle, Running, State};
use crate::WorkerError;

/// One attempt of a call to the coordinator, in flight.
pub(crate) type Call<T> = Pin<Box<dyn Future<Output = Result<T, Status>> + Send>>;

/// The calls a slot makes to the coordinator, one attempt each. Retrying
/// stays with the caller (a report is retried, a hand-back is not), so a
/// fake coordinator sees the same calls, attempts and order as the real
/// one. The real one is [`Rpc`]; tests drive slots with a fake.
pub(crate) trait Coordinator: Send + Sync {
    /// `Report`, which may also lease (report-and-lease, lease-ahead).
    fn report(&self, req: ReportRequest) -> Call<ReportResponse>;
    /// `ReturnLeases`.
    fn return_leases(&self, req: ReturnLeasesRequest) -> Call<()>;
}

/// The coordinator over gRPC.
pub(crate) struct Rpc(pub(crate) Client);

impl Coordinator for Rpc {
    fn report(&self, req: ReportRequest) -> Call<ReportResponse> {
        let mut c = self.0.clone();
        Box::pin(async move { Ok(c.report(req).await?.into_inner()) })
    }

    fn return_leases(&self, req: ReturnLeasesRequest) -> Call<()> {
        let mut c = self.0.clone();
        Box::pin(async move { c.return_leases(req).await.map(drop) })
    }
}

/// Starts a slot on a leased unit: a tokio task runs the slot's units one
/// after another until an answer leaves it without one (see [`slot`]).
pub(crate) fn start_unit(state: &Arc<State>, lease: UnitLease, permit: OwnedSemaphorePermit) {
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
async fn slot(state: Arc<State>, mut current: Launched, permit: OwnedSemaphorePermit) {
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
    let stop = Arc::new(AtomicBool::new(state.stopping.load(Ordering::SeqCst)));
    let progress = Arc::new(AtomicU64::new(0));
    let cancelled = Arc::new(AtomicBool::new(false));
    let pieces = Arc::new(AtomicU32::new(0));
    // Running from here, before its job is opened: opening a job may load
    // a large cache first (a 16 GiB hip-solve table restores for longer
    // than a lease lasts), and the heartbeat renews only the units listed
    // here.
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
    let job = match state.job(&lease) {
        Ok(j) => j,
        Err(e) => {
            state.running.lock().unwrap().remove(&unit_id);
            return Launched::Failed {
                unit_id,
                bound: lease.bound,
                error: format!("cannot load job {}: {e}", lease.job_id),
            };
        }
    };
    state
        .config
        .metrics
        .units_running
        .fetch_add(1, Ordering::Relaxed);
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
pub(crate) async fn return_leases(state: &Arc<State>, unit_ids: Vec<u64>) {
    let req = ReturnLeasesRequest {
        worker_id: state.id(),
        unit_ids,
    };
    if let Err(e) = state.coordinator.return_leases(req).await {
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
            // Under the id the worker has now: after a coordinator restart
            // it registered again, and only units it holds under that id
            // (or units nobody leased since the restart) take its reports.
            state.coordinator.report(ReportRequest {
                worker_id: state.id(),
                ..req.clone()
            })
        },
    )
    .await;
    match result {
        Ok(resp) => {
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

#[cfg(test)]
#[path = "slot_tests.rs"]
mod tests;
