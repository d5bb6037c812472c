//! The gRPC services (`orchard.v1.WorkerService`, `orchard.v1.JobService`)
//! over the [`Scheduler`] and the [`Store`].
//!
//! The scheduler lock is never held across an await: each handler decides
//! under the lock, commits without it, and applies the outcome under the
//! lock again.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use orchard_core::{FamilyError, PreparedJob};
use orchard_proto::v1::job_service_server::JobService;
use orchard_proto::v1::worker_service_server::WorkerService;
use orchard_proto::v1::*;
use orchard_proto::{LEMMA_PAGE_BYTES, MAX_LEMMA_UPLOAD_BYTES, PROTOCOL_VERSION};
use tokio::sync::Notify;
use tonic::{Request, Response, Status};

use crate::clock::Clock;
use crate::results::{rebuild_report, units_lines, write_results_file};
use crate::scheduler::{FinalResult, Finishing, JobState, Scheduler, SchedulerError};
use crate::store::{Store, StoreError, Write};
use crate::CoordinatorConfig;

/// State shared by every request handler.
pub struct Shared {
    pub scheduler: Mutex<Scheduler>,
    pub store: Store,
    pub config: CoordinatorConfig,
    /// The clock the scheduler reads too; stamps stored timestamps.
    pub clock: Arc<dyn Clock>,
    /// Woken when units become pending, for long-polling lease requests.
    pub work_available: Notify,
    /// Woken when a job finishes.
    pub job_finished: Notify,
}

impl Shared {
    pub fn lock(&self) -> MutexGuard<'_, Scheduler> {
        self.scheduler.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Writes the units file of a finished job (see
    /// [`crate::results::units_lines`]) beside its results file and returns
    /// its path; `None` (logged) if it could not be written, which does not
    /// fail the job: the answer stands without it.
    async fn write_units_file(
        &self,
        job_id: u64,
        family: &str,
        prepared: Option<Arc<dyn PreparedJob>>,
        dir: &std::path::Path,
    ) -> Option<String> {
        let path = dir.join(format!("job-{job_id}-{family}.units.tsv"));
        // Units cancelled by the job's last report were only enqueued; the
        // ledger is read on another connection and must see them.
        let written = match self.store.flush().await {
            Err(e) => Err(e.to_string()),
            Ok(()) => self.write_units_file_at(job_id, prepared, &path).await,
        };
        match written {
            Ok(()) => Some(path.display().to_string()),
            Err(e) => {
                tracing::warn!(job = job_id, "could not write {}: {e}", path.display());
                None
            }
        }
    }

    /// The units file of `job_id` from the ledger, written at `path`.
    async fn write_units_file_at(
        &self,
        job_id: u64,
        prepared: Option<Arc<dyn PreparedJob>>,
        path: &std::path::Path,
    ) -> Result<(), String> {
        let (store, target) = (self.store.clone(), path.to_path_buf());
        write_off_thread(move || {
            let rows = store.unit_ledger(job_id).map_err(|e| e.to_string())?;
            let label = |payload: &[u8]| {
                prepared
                    .as_ref()
                    .and_then(|p| p.unit_label(payload).ok())
                    .unwrap_or_else(|| "?".to_string())
            };
            let lines = units_lines(&rows, label).map_err(|e| e.to_string())?;
            write_results_file(&target, &lines).map_err(|e| e.to_string())
        })
        .await
    }

    /// Writes again the results and units files of finished jobs that are
    /// missing from disk (deleted, or a database restored from a backup on a
    /// machine that never had them), at the paths the database records, from
    /// the units' stored results (see [`crate::results::rebuild_report`]).
    /// A file that cannot be rebuilt or written is logged and left missing:
    /// the job's answer stays in the database either way.
    pub async fn restore_missing_files(&self) {
        let done: Vec<(u64, String, String, FinalResult)> = self
            .lock()
            .jobs()
            .filter(|j| j.state() == JobState::Done)
            .filter_map(|j| {
                let r = j.result()?.clone();
                Some((
                    j.id(),
                    j.family().to_string(),
                    j.params_json().to_string(),
                    r,
                ))
            })
            .collect();
        for (job_id, family, params_json, result) in done {
            let results = PathBuf::from(&result.results_file);
            let units = serde_json::from_str::<serde_json::Value>(&result.json)
                .ok()
                .and_then(|v| v["result"]["units_file"].as_str().map(PathBuf::from));
            let missing = |p: &PathBuf| !p.as_os_str().is_empty() && !p.exists();
            let prepared = self.config.prepare(&family, &params_json);
            if missing(&results) {
                let (store, target) = (self.store.clone(), results.clone());
                let job = prepared.clone();
                let rebuilt = write_off_thread(move || {
                    let summaries = store.done_summaries(job_id).map_err(|e| e.to_string())?;
                    let report = rebuild_report(job?.as_ref(), &summaries)?;
                    write_results_file(&target, &report.results_lines).map_err(|e| e.to_string())
                })
                .await;
                log_rewrite(job_id, "results", &results, rebuilt);
            }
            if let Some(units) = units.filter(missing) {
                let written = self
                    .write_units_file_at(job_id, prepared.ok(), &units)
                    .await;
                log_rewrite(job_id, "units", &units, written);
            }
        }
    }

    /// Writes the final report of a finished job, durably, then marks it.
    pub async fn finish(&self, f: Finishing) {
        let started = Instant::now();
        let (state, result, error) = match f.report {
            Ok(report) => {
                let dir: PathBuf = self.config.results_dir.clone();
                let name = format!("job-{}-{}.txt", f.job_id, f.family);
                let path = dir.join(name);
                let lines = report.results_lines;
                let path_for_write = path.clone();
                let written = write_off_thread(move || {
                    write_results_file(&path_for_write, &lines).map_err(|e| e.to_string())
                })
                .await;
                match written {
                    Ok(()) => {
                        let units = self
                            .write_units_file(f.job_id, &f.family, f.prepared.clone(), &dir)
                            .await;
                        let mut json = report.json;
                        let mut text = report.text;
                        if let Some(obj) = json.as_object_mut() {
                            obj.insert("results_file".into(), path.display().to_string().into());
                            if let Some(units) = &units {
                                obj.insert("units_file".into(), units.clone().into());
                            }
                        }
                        if let Some(units) = &units {
                            text.push(format!("units file (nodes per unit): {units}"));
                        }
                        let stored = serde_json::json!({ "result": json, "text": text });
                        (
                            JobState::Done,
                            Some(FinalResult {
                                json: stored.to_string(),
                                results_file: path.display().to_string(),
                            }),
                            None,
                        )
                    }
                    Err(e) => (
                        JobState::Failed,
                        None,
                        Some(format!("writing {}: {e}", path.display())),
                    ),
                }
            }
            Err(e) => (JobState::Failed, None, Some(e)),
        };
        let write = Write::FinishJob {
            job_id: f.job_id,
            state: state.as_str(),
            finished_ms: self.clock.unix_ms(),
            result_json: result.as_ref().map(|r| r.json.clone()),
            results_file: result.as_ref().map(|r| r.results_file.clone()),
            error: error.clone(),
        };
        if let Err(e) = self.store.commit(vec![write]).await {
            tracing::error!(job = f.job_id, "could not record the end of the job: {e}");
            return;
        }
        self.lock().job_finished(f.job_id, state, result, error);
        tracing::info!(
            job = f.job_id,
            state = state.as_str(),
            finish_ms = started.elapsed().as_millis() as u64,
            "job finished"
        );
        self.job_finished.notify_waiters();
    }
}

fn internal(e: StoreError) -> Status {
    Status::internal(e.to_string())
}

fn scheduler_status(e: SchedulerError) -> Status {
    match e {
        SchedulerError::UnknownJob(_) => Status::not_found(e.to_string()),
        SchedulerError::Invalid(_) => Status::invalid_argument(e.to_string()),
    }
}

/// The worker-facing service.
#[derive(Clone)]
pub struct Workers(pub Arc<Shared>);

/// The client-facing service.
#[derive(Clone)]
pub struct Jobs(pub Arc<Shared>);

/// How long a lease request waits for work before answering empty.
const LEASE_WAIT: Duration = Duration::from_millis(1000);

#[tonic::async_trait]
impl WorkerService for Workers {
    async fn register(
        &self,
        req: Request<RegisterRequest>,
    ) -> Result<Response<RegisterResponse>, Status> {
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
            s.register(r.hostname.clone(), r.threads, r.families)
        };
        tracing::info!(worker = id, host = %r.hostname, threads = r.threads, "worker registered");
        Ok(Response::new(RegisterResponse {
            worker_id: id,
            heartbeat_interval_ms: cfg.heartbeat_interval.as_millis() as u64,
            lease_ttl_ms: cfg.lease_ttl.as_millis() as u64,
        }))
    }

    async fn lease(&self, req: Request<LeaseRequest>) -> Result<Response<LeaseResponse>, Status> {
        let r = req.into_inner();
        let max = r.max_units.clamp(1, self.0.config.max_units_per_lease) as usize;
        let deadline = Instant::now() + LEASE_WAIT;
        loop {
            let notified = self.0.work_available.notified();
            let (granted, writes) = {
                let mut s = self.0.lock();
                if !s.knows_worker(r.worker_id) {
                    return Ok(Response::new(LeaseResponse {
                        unknown_worker: true,
                        ..Default::default()
                    }));
                }
                let (granted, writes) = s.lease(r.worker_id, max);
                if granted.is_empty() {
                    // Idle worker: ask running units to split off their rest.
                    s.request_splits(max, self.0.config.min_split_age);
                }
                (granted, writes)
            };
            if !writes.is_empty() {
                self.0.store.enqueue(writes);
            }
            if !granted.is_empty() {
                let budget = self.0.config.unit_budget;
                let leases = granted
                    .into_iter()
                    .map(|g| UnitLease {
                        unit_id: g.unit_id,
                        job_id: g.job_id,
                        family: g.family,
                        params_json: g.params_json,
                        unit: g.payload.to_vec(),
                        node_budget: budget,
                        bound: g.bound,
                    })
                    .collect();
                return Ok(Response::new(LeaseResponse {
                    leases,
                    retry_after_ms: 0,
                    unknown_worker: false,
                }));
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(Response::new(LeaseResponse {
                    leases: Vec::new(),
                    retry_after_ms: 200,
                    unknown_worker: false,
                }));
            }
            let _ = tokio::time::timeout(deadline - now, notified).await;
        }
    }

    async fn heartbeat(
        &self,
        req: Request<HeartbeatRequest>,
    ) -> Result<Response<HeartbeatResponse>, Status> {
        let r = req.into_inner();
        let running: Vec<(u64, u64)> = r.running.iter().map(|u| (u.unit_id, u.nodes)).collect();
        let bounds: Vec<(u64, u64)> = r.bounds.iter().map(|b| (b.job_id, b.bound)).collect();
        let reply = self.0.lock().heartbeat(r.worker_id, &running, &bounds);
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
        let r = req.into_inner();
        let worker = self.0.lock().describe_worker(r.worker_id);
        if !r.error.is_empty() {
            tracing::error!(unit = r.unit_id, %worker, "unit failed: {}", r.error);
            let finishing = self.0.lock().fail_unit(r.unit_id, &r.error);
            if let Some(f) = finishing {
                // A task of its own, like a report's commit (see below).
                let shared = self.0.clone();
                tokio::spawn(async move { shared.finish(f).await })
                    .await
                    .map_err(|e| Status::internal(format!("finishing the job failed: {e}")))?;
            }
            return Ok(Response::new(ReportResponse {
                accepted: true,
                bound: 0,
            }));
        }
        let pending = self
            .0
            .lock()
            .begin_report(r.unit_id, r.summary, r.nodes, r.rest, r.bound)
            .map_err(scheduler_status)?;
        let Some(pending) = pending else {
            tracing::debug!(unit = r.unit_id, "late or duplicate report ignored");
            return Ok(Response::new(ReportResponse {
                accepted: false,
                bound: 0,
            }));
        };
        let write = Write::CompleteUnit {
            unit_id: pending.unit_id,
            job_id: pending.job_id,
            nodes: pending.nodes,
            summary: pending.summary.clone(),
            worker,
            rest: pending.rest.clone(),
            done_ms: self.0.clock.unix_ms(),
        };
        // The rest runs as its own task: if the worker hangs up (killed
        // mid-report) tonic drops this handler, but a commit in flight may
        // still land, and the in-memory state must follow it. A handler
        // dropped here left the unit "reporting" for good: done on disk,
        // never merged, never leased again, the job never finished.
        let shared = self.0.clone();
        let unit_id = r.unit_id;
        let bound = tokio::spawn(async move {
            if let Err(e) = shared.store.commit(vec![write]).await {
                shared.lock().abort_report(unit_id);
                return Err(e);
            }
            let job_id = pending.job_id;
            let (finishing, bound) = {
                let mut s = shared.lock();
                let (finishing, writes) = s.complete_report(pending);
                if !writes.is_empty() {
                    shared.store.enqueue(writes);
                }
                let bound = s.job(job_id).map(|j| j.bound()).unwrap_or(0);
                (finishing, bound)
            };
            // New units, or units that were waiting for this one's result
            // (see `SearchFamily::must_wait`), may be ready for idle workers.
            shared.work_available.notify_waiters();
            if let Some(f) = finishing {
                shared.finish(f).await;
            }
            Ok(bound)
        })
        .await
        .map_err(|e| Status::internal(format!("report task failed: {e}")))?
        .map_err(internal)?;
        Ok(Response::new(ReportResponse {
            accepted: true,
            bound,
        }))
    }

    async fn return_leases(
        &self,
        req: Request<ReturnLeasesRequest>,
    ) -> Result<Response<ReturnLeasesResponse>, Status> {
        let r = req.into_inner();
        self.0.lock().return_leases(r.worker_id, &r.unit_ids);
        self.0.work_available.notify_waiters();
        Ok(Response::new(ReturnLeasesResponse {}))
    }

    /// Stores a worker's lemmas (checked by the family first: a malformed
    /// blob is refused, never stored) and answers with the job's lemmas of
    /// other workers after the worker's cursor. Lemmas only save work, so a
    /// job over its lemma budget simply stops storing them.
    async fn share_lemmas(
        &self,
        req: Request<ShareLemmasRequest>,
    ) -> Result<Response<ShareLemmasResponse>, Status> {
        let r = req.into_inner();
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
            let lemmas = tokio::task::spawn_blocking(move || match prepared.lemmas() {
                Some(exchange) => exchange.check(&lemmas).map(|()| lemmas),
                None => Err(FamilyError::BadLemmas(format!(
                    "family {} shares no lemmas",
                    prepared.family()
                ))),
            })
            .await
            .map_err(|e| Status::internal(e.to_string()))?
            .map_err(|e| Status::invalid_argument(e.to_string()))?;
            // Admitted and queued under one lock: a job being finished
            // admits nothing, and its end (which deletes its lemmas) is
            // queued after every blob it admitted.
            let mut s = self.0.lock();
            stored = s.admit_lemmas(r.job_id, lemmas.len() as u64);
            if stored {
                self.0.store.enqueue(vec![Write::InsertLemmas {
                    job_id: r.job_id,
                    source: r.source,
                    blob: lemmas,
                }]);
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

impl Jobs {
    /// Submits a job, or returns the identical job that already exists.
    pub async fn submit_job(&self, family: &str, params_json: &str) -> Result<(u64, bool), Status> {
        let prepared = self
            .0
            .config
            .prepare(family, params_json)
            .map_err(Status::invalid_argument)?;
        let (job_id, writes) = {
            let mut s = self.0.lock();
            if let Some(id) = s.find_job(family, &prepared.params_json()) {
                return Ok((id, true));
            }
            s.create_job(prepared)
        };
        // The job is in memory before it is durable; a crash in between
        // loses a job nobody was told about.
        self.0.store.commit(writes).await.map_err(internal)?;
        self.0.work_available.notify_waiters();
        tracing::info!(job = job_id, family, params = params_json, "job submitted");
        Ok((job_id, false))
    }
}

#[tonic::async_trait]
impl JobService for Jobs {
    async fn submit(
        &self,
        req: Request<SubmitRequest>,
    ) -> Result<Response<SubmitResponse>, Status> {
        let r = req.into_inner();
        let (job_id, existing) = self.submit_job(&r.family, &r.params_json).await?;
        Ok(Response::new(SubmitResponse { job_id, existing }))
    }

    async fn status(
        &self,
        req: Request<StatusRequest>,
    ) -> Result<Response<StatusResponse>, Status> {
        let r = req.into_inner();
        let mut s = self.0.lock();
        let ids: Vec<u64> = if r.job_id == 0 {
            s.job_ids()
        } else if s.job(r.job_id).is_some() {
            vec![r.job_id]
        } else {
            return Err(Status::not_found(format!("unknown job {}", r.job_id)));
        };
        let jobs = ids
            .into_iter()
            .filter_map(|id| s.status(id))
            .map(JobStatus::from)
            .collect();
        Ok(Response::new(StatusResponse { jobs }))
    }

    async fn results(
        &self,
        req: Request<ResultsRequest>,
    ) -> Result<Response<ResultsResponse>, Status> {
        let r = req.into_inner();
        let answer = self
            .0
            .lock()
            .answer(r.job_id)
            .ok_or_else(|| Status::not_found(format!("unknown job {}", r.job_id)))?;
        Ok(Response::new(answer.into()))
    }

    async fn cancel(
        &self,
        req: Request<CancelRequest>,
    ) -> Result<Response<CancelResponse>, Status> {
        let r = req.into_inner();
        let cancelled = self
            .0
            .lock()
            .begin_cancel(r.job_id)
            .map_err(scheduler_status)?;
        if cancelled {
            let write = Write::FinishJob {
                job_id: r.job_id,
                state: JobState::Cancelled.as_str(),
                finished_ms: self.0.clock.unix_ms(),
                result_json: None,
                results_file: None,
                error: None,
            };
            // A task of its own, so that a client hanging up cannot leave
            // the job half cancelled (see `report`).
            let shared = self.0.clone();
            let job_id = r.job_id;
            tokio::spawn(async move {
                shared.store.commit(vec![write]).await?;
                shared
                    .lock()
                    .job_finished(job_id, JobState::Cancelled, None, None);
                shared.job_finished.notify_waiters();
                Ok::<(), StoreError>(())
            })
            .await
            .map_err(|e| Status::internal(format!("cancelling failed: {e}")))?
            .map_err(internal)?;
        }
        Ok(Response::new(CancelResponse { cancelled }))
    }
}

/// Runs a file write (fsyncs included) on the blocking pool, so the gRPC
/// handlers keep running; a panic in it is an error like any other.
async fn write_off_thread(
    write: impl FnOnce() -> Result<(), String> + Send + 'static,
) -> Result<(), String> {
    tokio::task::spawn_blocking(write)
        .await
        .map_err(|e| e.to_string())
        .and_then(|r| r)
}

/// Says what [`Shared::restore_missing_files`] did with one missing file.
fn log_rewrite(job_id: u64, kind: &str, path: &std::path::Path, outcome: Result<(), String>) {
    match outcome {
        Ok(()) => tracing::warn!(
            job = job_id,
            "{kind} file {} was missing: written again from the database",
            path.display()
        ),
        Err(e) => tracing::warn!(
            job = job_id,
            "{kind} file {} is missing and could not be written again: {e}",
            path.display()
        ),
    }
}
