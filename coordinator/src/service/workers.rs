//! The worker-facing service (`orchard.v1.WorkerService`): registering,
//! leasing units (a long poll while there is no work), heartbeats, unit
//! reports, sharing lemmas, and handing leases back.
//!
//! Under mutual TLS a worker is known by its client certificate: it is
//! recorded at registration, and a request naming the worker that arrives
//! under another certificate is refused (`PermissionDenied`), so that one
//! worker cannot lease, report or hand back units as another.
//!
//! A report is committed before it is acknowledged; the commit and what
//! follows it run as a task of their own, so that a worker hanging up
//! cannot leave the in-memory state behind the database. A report may also
//! ask for the next units (`want_units`, report-and-lease): they are leased
//! after the commit, as a `Lease` call would lease them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use orchard_core::{FamilyError, PreparedJob};
use orchard_proto::v1::worker_service_server::WorkerService;
use orchard_proto::v1::*;
use orchard_proto::{LEMMA_PAGE_BYTES, MAX_LEMMA_UPLOAD_BYTES, PROTOCOL_VERSION};
use tonic::{Request, Response, Status};

use super::{internal, scheduler_status, Shared};
use crate::identity::PeerIdentity;
use crate::scheduler::{PendingReport, Report};
use crate::store::{StoreError, Write};

/// The worker-facing service.
#[derive(Clone)]
pub struct Workers(pub Arc<Shared>);

/// How long a lease request waits for work before answering empty.
const LEASE_WAIT: Duration = Duration::from_millis(1000);

/// Whether a lease request with no work to grant waits for some (see
/// [`Workers::lease_units`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Wait {
    /// Up to [`LEASE_WAIT`]: the `Lease` call.
    Always,
    /// Up to [`LEASE_WAIT`] while some job runs: a report's lease half.
    WhileJobsRun,
}

impl Workers {
    /// Refuses a request naming `worker` that arrived under another client
    /// certificate than the one the worker registered with.
    fn check_speaks_for(&self, worker: u64, peer: Option<&PeerIdentity>) -> Result<(), Status> {
        let s = self.0.lock();
        if s.speaks_for(worker, peer) {
            return Ok(());
        }
        let label = |id: Option<&PeerIdentity>| {
            id.map(PeerIdentity::label)
                .unwrap_or_else(|| "no certificate".into())
        };
        let (registered, came) = (label(s.worker_identity(worker)), label(peer));
        drop(s);
        tracing::warn!(
            worker,
            %registered,
            %came,
            "refused a request for a worker registered under another certificate"
        );
        Err(Status::permission_denied(format!(
            "worker {worker} registered under certificate {registered}; this request came under {came}"
        )))
    }

    /// Leases up to `max_units` (clamped to the configured most) to
    /// `worker`, waiting up to `LEASE_WAIT` for work: the `Lease` call, and
    /// the lease half of a report-and-lease (`ReportRequest::want_units`).
    ///
    /// `Wait::WhileJobsRun` (the report-and-lease) answers at once, empty,
    /// when no job is running, and when the last one ends during the wait:
    /// no unit can come then but from a new job, which the worker's own
    /// `Lease` call waits for. Otherwise the report that finished a job
    /// held its worker's slot for a whole `LEASE_WAIT`, and `orchard run`
    /// took a second longer than its job (the worker drains its slots
    /// before it stops).
    async fn lease_units(&self, worker: u64, max_units: u32, wait: Wait) -> LeaseResponse {
        let max = max_units.clamp(1, self.0.config.max_units_per_lease) as usize;
        let deadline = Instant::now() + LEASE_WAIT;
        // The call's slots count as idle while it waits (see
        // `Scheduler::request_splits_for_idle`), off again however the call
        // ends.
        let mut idle: Option<IdleSlots> = None;
        loop {
            // Registered as a waiter before looking, so that a wake-up
            // between the look and the wait is not lost (see `wake_idle`).
            let notified = self.0.work_available.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let (granted, writes) = {
                let mut s = self.0.lock();
                if !s.knows_worker(worker) {
                    return LeaseResponse {
                        unknown_worker: true,
                        ..Default::default()
                    };
                }
                let (granted, writes) = s.lease(worker, max);
                if granted.is_empty() {
                    if wait == Wait::WhileJobsRun && !s.any_job_running() {
                        return LeaseResponse {
                            retry_after_ms: 0,
                            ..Default::default()
                        };
                    }
                    // Idle worker: running units are asked to split off
                    // their rest when the splits in flight do not cover the
                    // idle slots; looked at again each time the call is
                    // woken without work (a rest that came back in fewer
                    // pieces than asked wakes as many calls as were asked).
                    if idle.is_none() {
                        idle = Some(IdleSlots::new(s.idle_slots(), max));
                    }
                    s.request_splits_for_idle(self.0.config.min_split_age);
                }
                (granted, writes)
            };
            if !writes.is_empty() {
                self.0.store.enqueue(writes);
            }
            if !granted.is_empty() {
                drop(idle.take());
                return LeaseResponse {
                    leases: self.unit_leases(granted),
                    retry_after_ms: 0,
                    unknown_worker: false,
                };
            }
            let now = Instant::now();
            if now >= deadline {
                return LeaseResponse {
                    leases: Vec::new(),
                    retry_after_ms: 200,
                    unknown_worker: false,
                };
            }
            let _ = tokio::time::timeout(deadline - now, notified).await;
        }
    }
}

impl Workers {
    /// Leases up to `max_units` (clamped to the configured most) for
    /// `worker` to hold queued (see `Scheduler::lease_ahead`), without
    /// waiting for work.
    fn lease_ahead(&self, worker: u64, max_units: u32) -> Vec<UnitLease> {
        let max = max_units.min(self.0.config.max_units_per_lease) as usize;
        let (granted, writes) = self.0.lock().lease_ahead(worker, max);
        if !writes.is_empty() {
            self.0.store.enqueue(writes);
        }
        self.unit_leases(granted)
    }

    /// The wire form of granted units.
    fn unit_leases(&self, granted: Vec<crate::scheduler::Granted>) -> Vec<UnitLease> {
        let budget = self.0.config.unit_budget;
        granted
            .into_iter()
            .map(|g| UnitLease {
                unit_id: g.unit_id,
                job_id: g.job_id,
                family: g.family,
                params_json: g.params_json,
                unit: g.payload.to_vec(),
                // A verified job's replicas explore whole units.
                node_budget: if g.whole { u64::MAX } else { budget },
                bound: g.bound,
            })
            .collect()
    }
}

#[tonic::async_trait]
impl WorkerService for Workers {
    async fn register(
        &self,
        req: Request<RegisterRequest>,
    ) -> Result<Response<RegisterResponse>, Status> {
        let identity = PeerIdentity::of_request(&req);
        let r = req.into_inner();
        if r.protocol_version != PROTOCOL_VERSION {
            return Err(Status::failed_precondition(format!(
                "worker speaks protocol {}, coordinator {}",
                r.protocol_version, PROTOCOL_VERSION
            )));
        }
        if r.threads == 0 || r.threads > 4096 {
            return Err(Status::invalid_argument(
                "threads must be between 1 and 4096",
            ));
        }
        if r.hostname.len() > 256 || r.families.len() > 256 {
            return Err(Status::invalid_argument("hostname or family list too long"));
        }
        let cfg = &self.0.config;
        let id = {
            let mut s = self.0.lock();
            s.forget_dead_workers();
            if s.worker_count() >= cfg.max_workers {
                return Err(Status::resource_exhausted(format!(
                    "{} workers are registered, the most this coordinator accepts",
                    cfg.max_workers
                )));
            }
            let id = s.register(r.hostname.clone(), r.threads, r.families);
            s.set_worker_identity(id, identity.clone());
            id
        };
        let certificate = identity.as_ref().map(PeerIdentity::label);
        tracing::info!(worker = id, host = %r.hostname, threads = r.threads, ?certificate, "worker registered");
        Ok(Response::new(RegisterResponse {
            worker_id: id,
            heartbeat_interval_ms: cfg.heartbeat_interval.as_millis() as u64,
            lease_ttl_ms: cfg.lease_ttl.as_millis() as u64,
        }))
    }

    async fn lease(&self, req: Request<LeaseRequest>) -> Result<Response<LeaseResponse>, Status> {
        let peer = PeerIdentity::of_request(&req);
        let r = req.into_inner();
        self.check_speaks_for(r.worker_id, peer.as_ref())?;
        Ok(Response::new(
            self.lease_units(r.worker_id, r.max_units, Wait::Always)
                .await,
        ))
    }

    async fn heartbeat(
        &self,
        req: Request<HeartbeatRequest>,
    ) -> Result<Response<HeartbeatResponse>, Status> {
        let peer = PeerIdentity::of_request(&req);
        let r = req.into_inner();
        self.check_speaks_for(r.worker_id, peer.as_ref())?;
        let running: Vec<(u64, u64)> = r.running.iter().map(|u| (u.unit_id, u.nodes)).collect();
        let bounds: Vec<(u64, u64)> = r.bounds.iter().map(|b| (b.job_id, b.bound)).collect();
        let reply = {
            let mut s = self.0.lock();
            s.heartbeat(r.worker_id, &running, &bounds)
                .map(|mut reply| {
                    // Queued units the worker must drop are cancelled as
                    // running ones are (after the running ones, so that a
                    // unit listed twice is judged as running).
                    reply.cancel.extend(s.renew_queued(r.worker_id, &r.queued));
                    reply
                })
        };
        let Some(reply) = reply else {
            return Ok(Response::new(HeartbeatResponse {
                unknown_worker: true,
                ..Default::default()
            }));
        };
        if !reply.writes.is_empty() {
            self.0.store.enqueue(reply.writes);
        }
        Ok(Response::new(HeartbeatResponse {
            cancel_units: reply.cancel,
            split_units: reply.split,
            split_pieces: reply.split_pieces,
            bounds: reply
                .bounds
                .into_iter()
                .map(|(job_id, bound)| JobBound { job_id, bound })
                .collect(),
            unknown_worker: false,
        }))
    }

    async fn report(
        &self,
        req: Request<ReportRequest>,
    ) -> Result<Response<ReportResponse>, Status> {
        let peer = PeerIdentity::of_request(&req);
        let r = req.into_inner();
        self.check_speaks_for(r.worker_id, peer.as_ref())?;
        let worker = {
            let mut s = self.0.lock();
            // Lease-ahead: units that started since the worker's last word
            // may be asked to split from now on, whatever this report is.
            if !r.started_units.is_empty() {
                s.start_queued(r.worker_id, &r.started_units);
            }
            s.describe_worker(r.worker_id)
        };
        if !r.error.is_empty() {
            if r.retryable {
                tracing::info!(unit = r.unit_id, %worker, "unit attempt failed: {}", r.error);
            } else {
                tracing::error!(unit = r.unit_id, %worker, "unit failed: {}", r.error);
            }
            let finishing = self
                .0
                .lock()
                .fail_unit(r.worker_id, r.unit_id, &r.error, r.retryable);
            if let Some(f) = finishing {
                // A task of its own, like a report's commit (see below).
                let shared = self.0.clone();
                tokio::spawn(async move { shared.finish(f).await })
                    .await
                    .map_err(|e| Status::internal(format!("finishing the job failed: {e}")))?;
            }
            return Ok(Response::new(ReportResponse {
                accepted: true,
                ..Default::default()
            }));
        }
        let report = Report {
            worker: r.worker_id,
            unit_id: r.unit_id,
            summary: r.summary,
            nodes: r.nodes,
            rest: r.rest,
            bound: r.bound,
            stopped: r.stopped,
        };
        let pending = self.0.lock().begin_report(report).map_err(|e| {
            tracing::warn!(unit = r.unit_id, %worker, "report refused: {e}");
            scheduler_status(e)
        })?;
        let Some(pending) = pending else {
            tracing::debug!(unit = r.unit_id, "late or duplicate report ignored");
            return Ok(Response::new(ReportResponse {
                accepted: false,
                ..Default::default()
            }));
        };
        let writes = report_writes(&pending, worker, self.0.clock.unix_ms());
        // The rest runs as its own task: if the worker hangs up (killed
        // mid-report) tonic drops this handler, but a commit in flight may
        // still land, and the in-memory state must follow it. A handler
        // dropped here left the unit "reporting" for good: done on disk,
        // never merged, never leased again, the job never finished.
        let shared = self.0.clone();
        let unit_id = r.unit_id;
        let bound = tokio::spawn(async move {
            if let Err(e) = shared.store.commit(writes).await {
                shared.lock().abort_report(unit_id);
                return Err(e);
            }
            let job_id = pending.job_id;
            let (finishing, bound, wake_all, new_units) = {
                let mut s = shared.lock();
                // A split's rest: the calls it was asked for are woken,
                // those its pieces do not serve to ask for another split.
                let asked = s.take_split_in_flight(unit_id) as usize;
                let new_units = pending.rest.len().max(asked);
                let (finishing, writes) = s.complete_report(pending);
                // Units the job's answer still needed once none was left
                // (see `Scheduler::reopen_unsettled`): work for everyone.
                let reopened = Write::any_inserts_units(&writes);
                if !writes.is_empty() {
                    shared.store.enqueue(writes);
                }
                let job = s.job(job_id);
                let bound = job.map(|j| j.bound()).unwrap_or(0);
                (
                    finishing,
                    bound,
                    reopened || job.is_some_and(|j| j.leases_wait()),
                    new_units,
                )
            };
            // New units may be ready for idle workers: as many woken as
            // there are units. Units that were waiting for this one's
            // result (see `MootJudge::speculation`), or a verified job's
            // (which only some workers may take), wake every idle worker.
            if wake_all {
                shared.work_available.notify_waiters();
            } else {
                shared.wake_idle(new_units);
            }
            if let Some(f) = finishing {
                shared.finish(f).await;
            }
            Ok(bound)
        })
        .await
        .map_err(|e| Status::internal(format!("report task failed: {e}")))?
        .map_err(internal)?;
        // Report-and-lease: the unit's slot is free, and the report is
        // durable (committed above), so the lease comes after it, never
        // instead of it. Leased here, in the call's handler: a worker that
        // hung up leases nothing, and a lease whose answer is lost on the
        // way comes back when it expires, as a `Lease` call's would.
        let (mut leases, retry_after_ms) = if r.want_units > 0 {
            let l = self
                .lease_units(r.worker_id, r.want_units, Wait::WhileJobsRun)
                .await;
            (l.leases, l.retry_after_ms)
        } else {
            (Vec::new(), 0)
        };
        // Lease-ahead: the units to hold queued, after those to run now
        // (none if those found no work), at once: no wait for work.
        if r.queue_units > 0 && (r.want_units == 0 || !leases.is_empty()) {
            leases.extend(self.lease_ahead(r.worker_id, r.queue_units));
        }
        Ok(Response::new(ReportResponse {
            accepted: true,
            bound,
            leases,
            retry_after_ms,
        }))
    }

    /// Holds the call until one of the worker's units is asked to split
    /// (see `Scheduler::request_splits`) or `wait_ms` passes (capped at
    /// half the lease time, so a worker that loops on it never looks dead
    /// to a proxy's idle timeout for long). Split requests then reach a
    /// busy worker within a round trip instead of at its next heartbeat:
    /// the generations of splits that fan one unit out to a thousand idle
    /// workers take round trips, not heartbeat intervals.
    async fn await_splits(
        &self,
        req: Request<AwaitSplitsRequest>,
    ) -> Result<Response<AwaitSplitsResponse>, Status> {
        let peer = PeerIdentity::of_request(&req);
        let r = req.into_inner();
        self.check_speaks_for(r.worker_id, peer.as_ref())?;
        let cap = (self.0.config.lease_ttl / 2).max(Duration::from_millis(1));
        let deadline = Instant::now() + Duration::from_millis(u64::from(r.wait_ms)).min(cap);
        let Some(signal) = self.0.lock().split_signal(r.worker_id) else {
            return Ok(Response::new(AwaitSplitsResponse {
                unknown_worker: true,
                ..Default::default()
            }));
        };
        loop {
            // A signal given since the last look is kept by the `Notify`
            // (one permit), so none is lost between the look and the wait.
            let split = {
                let mut s = self.0.lock();
                s.take_split_requests(r.worker_id).map(|split| {
                    let k = if split.is_empty() {
                        1
                    } else {
                        s.split_pieces(&split)
                    };
                    (split, k)
                })
            };
            let Some((split, k)) = split else {
                return Ok(Response::new(AwaitSplitsResponse {
                    unknown_worker: true,
                    ..Default::default()
                }));
            };
            let now = Instant::now();
            if !split.is_empty() || now >= deadline {
                return Ok(Response::new(AwaitSplitsResponse {
                    split_pieces: vec![k; split.len()],
                    split_units: split,
                    unknown_worker: false,
                }));
            }
            let _ = tokio::time::timeout(deadline - now, signal.notified()).await;
        }
    }

    async fn return_leases(
        &self,
        req: Request<ReturnLeasesRequest>,
    ) -> Result<Response<ReturnLeasesResponse>, Status> {
        let peer = PeerIdentity::of_request(&req);
        let r = req.into_inner();
        self.check_speaks_for(r.worker_id, peer.as_ref())?;
        self.0.lock().return_leases(r.worker_id, &r.unit_ids);
        self.0.work_available.notify_waiters();
        Ok(Response::new(ReturnLeasesResponse {}))
    }

    /// Stores a worker's lemmas (checked by the family first: a malformed
    /// blob is refused, never stored; shown to the job, which may schedule
    /// by them, `LemmaExchange::observe`) and answers with the job's lemmas of
    /// other workers after the worker's cursor. The job keeps its newest
    /// lemmas, at most `lemma_store_bytes` (the oldest make room): a
    /// worker whose cursor is behind them skips what was evicted.
    async fn share_lemmas(
        &self,
        req: Request<ShareLemmasRequest>,
    ) -> Result<Response<ShareLemmasResponse>, Status> {
        let peer = PeerIdentity::of_request(&req);
        let r = req.into_inner();
        self.check_speaks_for(r.worker_id, peer.as_ref())?;
        let over = || {
            Ok(Response::new(ShareLemmasResponse {
                job_over: true,
                ..Default::default()
            }))
        };
        let Some(prepared) = self.0.lock().lemma_job(r.job_id) else {
            return over();
        };
        if r.lemmas.len() > MAX_LEMMA_UPLOAD_BYTES {
            return Err(Status::invalid_argument(format!(
                "{} bytes of lemmas in one request (at most {MAX_LEMMA_UPLOAD_BYTES})",
                r.lemmas.len()
            )));
        }
        let mut stored = false;
        if !r.lemmas.is_empty() {
            let (prepared, lemmas) = (prepared.clone(), r.lemmas);
            let (lemmas, observed) = tokio::task::spawn_blocking(move || {
                check_and_observe(prepared.as_ref(), &lemmas).map(|observed| (lemmas, observed))
            })
            .await
            .map_err(|e| Status::internal(e.to_string()))?
            .map_err(|e| Status::invalid_argument(e.to_string()))?;
            // Admitted and queued under one lock: a job being finished
            // admits nothing, and its end (which deletes its lemmas) is
            // queued after every blob it admitted.
            let mut s = self.0.lock();
            if observed {
                s.lemmas_observed(r.job_id);
            }
            if let Some(evicted) = s.admit_lemmas(r.job_id, lemmas.len() as u64) {
                stored = true;
                let mut writes = vec![Write::InsertLemmas {
                    job_id: r.job_id,
                    source: r.source,
                    blob: lemmas,
                }];
                if evicted > 0 {
                    writes.push(Write::EvictLemmas {
                        job_id: r.job_id,
                        count: evicted,
                    });
                }
                self.0.store.enqueue(writes);
            }
        }
        let store = self.0.store.clone();
        let page = tokio::task::spawn_blocking(move || {
            store.lemmas_after(r.job_id, r.after, r.source, LEMMA_PAGE_BYTES)
        })
        .await
        .map_err(|e| Status::internal(e.to_string()))?
        .map_err(internal)?;
        Ok(Response::new(ShareLemmasResponse {
            stored,
            lemmas: page.blobs,
            cursor: page.cursor,
            more: page.more,
            job_over: false,
        }))
    }
}

/// Checks a blob of lemmas for its job and shows it to the job (see
/// `orchard_core::LemmaExchange`): whether the job's schedule may have
/// changed. A malformed blob is refused before the job sees any of it.
fn check_and_observe(prepared: &dyn PreparedJob, lemmas: &[u8]) -> Result<bool, FamilyError> {
    let exchange = prepared.lemmas().ok_or_else(|| {
        FamilyError::BadLemmas(format!("family {} shares no lemmas", prepared.family()))
    })?;
    exchange.check(lemmas)?;
    Ok(exchange.observe(lemmas))
}

/// The source no worker is: [`Shared::observe_stored_lemmas`] reads every
/// worker's blobs (a worker picks its source at random, so one that picked
/// this would only have its lemmas left unobserved).
const EVERY_SOURCE: u64 = 0;

impl Shared {
    /// Shows a running job lemmas proved in this process, without storing
    /// them or handing them to any worker: `orchard run`'s local workers
    /// share one table, so they trade no lemmas, and the job schedules by
    /// them all the same (`hip-solve`'s guess of the winner). Blocking (the
    /// family reads the whole blob): call it off the async runtime.
    /// `Ok(false)`: the job is not running, or learnt nothing from them.
    pub fn observe_lemmas(&self, job_id: u64, lemmas: &[u8]) -> Result<bool, FamilyError> {
        let Some(prepared) = self.lock().lemma_job(job_id) else {
            return Ok(false);
        };
        let observed = check_and_observe(prepared.as_ref(), lemmas)?;
        if observed {
            self.lock().lemmas_observed(job_id);
        }
        Ok(observed)
    }

    /// Shows each running job the lemmas stored with it (see
    /// `orchard_core::LemmaExchange::observe`), at startup before any
    /// worker leases: what a job learnt from them before a restart
    /// (`hip-solve`'s guess of the winner from its eldest line) would
    /// otherwise be lost, since workers never send a lemma twice, and its
    /// judge would schedule by less than it knew (and make units yield the
    /// wrong way). Reads at most the store's window of lemmas per job.
    /// Lemmas only schedule and save work, so a job whose lemmas cannot be
    /// read (or whose family fails on them) is logged and left to schedule
    /// without them: the coordinator still starts.
    pub async fn observe_stored_lemmas(&self) {
        let jobs: Vec<_> = {
            let s = self.lock();
            (s.job_ids().into_iter())
                .filter_map(|id| s.lemma_job(id).map(|prepared| (id, prepared)))
                .collect()
        };
        for (job_id, prepared) in jobs {
            let store = self.store.clone();
            let read = tokio::task::spawn_blocking(move || -> Result<bool, StoreError> {
                let Some(exchange) = prepared.lemmas() else {
                    return Ok(false);
                };
                let (mut cursor, mut observed) = (0, false);
                loop {
                    let page =
                        store.lemmas_after(job_id, cursor, EVERY_SOURCE, LEMMA_PAGE_BYTES)?;
                    for blob in &page.blobs {
                        observed |= exchange.observe(blob);
                    }
                    cursor = page.cursor;
                    if !page.more {
                        return Ok(observed);
                    }
                }
            })
            .await;
            match read {
                Ok(Ok(true)) => self.lock().lemmas_observed(job_id),
                Ok(Ok(false)) => {}
                Ok(Err(e)) => tracing::warn!(job = job_id, "its stored lemmas unread: {e}"),
                Err(e) => tracing::warn!(job = job_id, "observing its stored lemmas failed: {e}"),
            }
        }
    }
}

/// A lease call's slots counted as waiting for work while it lives (see
/// `Scheduler::split_pieces`): dropped when the call answers, or when the
/// worker hangs up and tonic drops the call.
struct IdleSlots {
    counter: Arc<AtomicUsize>,
    slots: usize,
}

impl IdleSlots {
    fn new(counter: Arc<AtomicUsize>, slots: usize) -> IdleSlots {
        counter.fetch_add(slots, Ordering::Relaxed);
        IdleSlots { counter, slots }
    }
}

impl Drop for IdleSlots {
    fn drop(&mut self) {
        self.counter.fetch_sub(self.slots, Ordering::Relaxed);
    }
}

/// The writes that make a report durable, in one transaction: the unit
/// done with its summary and rest; or, for a verified job, the replica
/// recorded (the unit done only once its replicas agree, with the winning
/// replica's summary), and a mismatch found with an earlier replica.
pub(crate) fn report_writes(p: &PendingReport, worker: String, now_ms: u64) -> Vec<Write> {
    let mut writes = Vec::new();
    if let Some(v) = &p.verified {
        if let Some(row) = &v.mismatch {
            writes.push(Write::Mismatch {
                job_id: p.job_id,
                row: row.clone(),
                found_ms: now_ms,
            });
        }
    }
    match p.completion() {
        Some((summary, nodes, by)) => writes.push(Write::CompleteUnit {
            unit_id: p.unit_id,
            job_id: p.job_id,
            nodes,
            summary: summary.to_vec(),
            worker: by.map_or(worker, str::to_string),
            rest: p.rest.clone(),
            done_ms: now_ms,
        }),
        None => {
            let r = &p
                .verified
                .as_ref()
                .expect("only a replica is undecided")
                .replica;
            writes.push(Write::Replica {
                unit_id: p.unit_id,
                job_id: p.job_id,
                worker: r.describe.clone(),
                host: r.host.clone(),
                identity: r.identity.clone(),
                nodes: r.nodes,
                bound: r.bound,
                summary: r.summary.clone(),
                rest: r.rest.clone(),
                reported_ms: now_ms,
            });
        }
    }
    // The outvoted, excluded by identity in the same transaction.
    if let Some(v) = &p.verified {
        for l in &v.liars {
            writes.push(Write::Exclude {
                job_id: p.job_id,
                unit_id: p.unit_id,
                identity: l.clone(),
                found_ms: now_ms,
            });
        }
    }
    writes
}
