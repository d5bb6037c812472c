//! The client-facing service (`orchard.v1.JobService`): submitting a job
//! (or finding the identical one), its status, its results, cancelling it,
//! retrying it once it failed.
//!
//! A submitted job, a cancellation and a retry are committed before they
//! are answered.

use std::sync::Arc;

use orchard_proto::v1::job_service_server::JobService;
use orchard_proto::v1::*;
use tonic::{Request, Response, Status};

use super::{internal, scheduler_status, Shared};
use crate::scheduler::{JobState, Retried, MAX_REPLICAS};
use crate::store::{StoreError, Write};

/// The client-facing service.
#[derive(Clone)]
pub struct Jobs(pub Arc<Shared>);

impl Jobs {
    /// Submits a job whose units are each explored by `replicas` different
    /// workers (0 counts as 1), or returns the identical job that already
    /// exists.
    pub async fn submit_job(
        &self,
        family: &str,
        params_json: &str,
        replicas: u32,
    ) -> Result<(u64, bool), Status> {
        let replicas = replicas.max(1);
        if replicas > MAX_REPLICAS {
            return Err(Status::invalid_argument(format!(
                "replicas must be between 1 and {MAX_REPLICAS}, got {replicas}"
            )));
        }
        let prepared = self
            .0
            .config
            .prepare(family, params_json)
            .map_err(Status::invalid_argument)?;
        let (job_id, writes) = {
            let mut s = self.0.lock();
            if let Some(id) = s.find_job(family, &prepared.params_json(), replicas) {
                return Ok((id, true));
            }
            s.create_job(prepared, replicas)
        };
        // The job is in memory before it is durable; a crash in between
        // loses a job nobody was told about.
        self.0.store.commit(writes).await.map_err(internal)?;
        // A family may have nothing to search (no root unit): no report
        // will ever end such a job, so it ends here, with the family's
        // report of nothing merged.
        let finishing = self.0.lock().check_finished(job_id);
        if let Some(f) = finishing {
            self.0.finish(f).await;
        }
        self.0.work_available.notify_waiters();
        tracing::info!(
            job = job_id,
            family,
            params = params_json,
            replicas,
            "job submitted"
        );
        Ok((job_id, false))
    }

    /// Retries failed job `job_id` (see [`crate::scheduler::Scheduler::begin_retry`]):
    /// rebuilt from its stored units, then `Write::RetryJob` committed,
    /// then running again in memory. Everything that can refuse the retry
    /// comes before the commit, so a refused retry leaves the job failed;
    /// a coordinator stopped after the commit resumes the job like any
    /// running one. Returns (units pending, units done).
    pub async fn retry_job(&self, job_id: u64) -> Result<(u64, u64), Status> {
        let (family, params_json) = self
            .0
            .lock()
            .begin_retry(job_id)
            .map_err(scheduler_status)?;
        match self.rebuild_and_commit(job_id, &family, &params_json).await {
            Ok(retried) => {
                let (counts, finishing, writes) = {
                    let mut s = self.0.lock();
                    let (finishing, writes) = s.finish_retry(job_id, retried);
                    let counts = s
                        .status(job_id)
                        .map(|st| (st.units_pending, st.units_done))
                        .unwrap_or_default();
                    (counts, finishing, writes)
                };
                // Its charts go on after its first run's.
                self.0.history().reopen(job_id);
                if !writes.is_empty() {
                    self.0.store.commit(writes).await.map_err(internal)?;
                }
                if let Some(f) = finishing {
                    self.0.finish(f).await;
                }
                self.0.work_available.notify_waiters();
                tracing::info!(job = job_id, family, "job retried");
                Ok(counts)
            }
            Err(e) => {
                self.0.lock().abort_retry(job_id);
                Err(e)
            }
        }
    }

    /// The failed job rebuilt from the store (off the lock and off the
    /// async threads: every done unit's summary is merged again), then the
    /// retry committed.
    async fn rebuild_and_commit(
        &self,
        job_id: u64,
        family: &str,
        params_json: &str,
    ) -> Result<Retried, Status> {
        let prepared = self.0.config.prepare(family, params_json).map_err(|e| {
            Status::failed_precondition(format!("job {job_id} cannot be retried: {e}"))
        })?;
        let store = self.0.store.clone();
        let retried = tokio::task::spawn_blocking(move || {
            let stored = store.job_units(job_id).map_err(internal)?;
            Retried::build(job_id, prepared, stored).map_err(scheduler_status)
        })
        .await
        .map_err(|e| Status::internal(format!("retrying failed: {e}")))??;
        self.0
            .store
            .commit(vec![Write::RetryJob { job_id }])
            .await
            .map_err(internal)?;
        Ok(retried)
    }
}

#[tonic::async_trait]
impl JobService for Jobs {
    async fn submit(
        &self,
        req: Request<SubmitRequest>,
    ) -> Result<Response<SubmitResponse>, Status> {
        let r = req.into_inner();
        let (job_id, existing) = self
            .submit_job(&r.family, &r.params_json, r.replicas)
            .await?;
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
        let workers = if r.job_id == 0 {
            s.workers_snapshot()
                .into_iter()
                .map(|w| WorkerInfo {
                    worker_id: w.id,
                    hostname: w.hostname,
                    threads: w.threads,
                    live: w.live,
                    units: w.units as u64,
                    nodes: w.nodes,
                    certificate: w
                        .identity
                        .as_ref()
                        .map(|i| i.name.clone())
                        .unwrap_or_default(),
                    certificate_sha256: w.identity.map(|i| i.sha256).unwrap_or_default(),
                })
                .collect()
        } else {
            Vec::new()
        };
        Ok(Response::new(StatusResponse { jobs, workers }))
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

    async fn retry(&self, req: Request<RetryRequest>) -> Result<Response<RetryResponse>, Status> {
        let job_id = req.into_inner().job_id;
        // A task of its own, so that a client hanging up cannot leave the
        // retry half made (committed, not applied: see `cancel`).
        let jobs = self.clone();
        let (units_pending, units_done) = tokio::spawn(async move { jobs.retry_job(job_id).await })
            .await
            .map_err(|e| Status::internal(format!("retrying failed: {e}")))??;
        Ok(Response::new(RetryResponse {
            units_pending,
            units_done,
        }))
    }
}
