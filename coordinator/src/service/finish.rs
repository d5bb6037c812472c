//! A job's end and its files: writing the results file and the units
//! file of a finished job, then recording its end ([`Shared::finish`]);
//! and, at startup, writing again those files of finished jobs that have
//! gone missing ([`Shared::restore_missing_files`]).
//!
//! A job ends from several places (a report, a failed unit, startup), and
//! its files are written the same way each time: on the blocking pool
//! ([`write_off_thread`]), and a units file that cannot be written never
//! fails the job's answer.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use orchard_core::PreparedJob;

use super::Shared;
use crate::results::{rebuild_report, units_lines, verification_lines, write_results_file};
use crate::scheduler::{FinalResult, Finishing, JobState};
use crate::store::Write;

impl Shared {
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
        let done: Vec<(u64, String, String, FinalResult, u32)> = self
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
                    j.replicas(),
                ))
            })
            .collect();
        for (job_id, family, params_json, result, replicas) in done {
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
                    let mismatches = store.mismatches(job_id).map_err(|e| e.to_string())?;
                    let mut lines = report.results_lines;
                    // Every done unit of a verified job was verified.
                    let verified = summaries.len() as u64;
                    lines.extend(verification_lines(replicas, verified, &mismatches));
                    write_results_file(&target, &lines).map_err(|e| e.to_string())
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

    /// The closing lines of a verified job's results file (see
    /// [`verification_lines`]), its mismatches read from the store.
    async fn verification(
        &self,
        job_id: u64,
        replicas: u32,
        verified_units: u64,
    ) -> Result<Vec<String>, String> {
        if replicas <= 1 {
            return Ok(Vec::new());
        }
        self.store.flush().await.map_err(|e| e.to_string())?;
        let store = self.store.clone();
        let mismatches = tokio::task::spawn_blocking(move || store.mismatches(job_id))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())?;
        Ok(verification_lines(replicas, verified_units, &mismatches))
    }

    /// Writes the final report of a finished job, durably, then marks it.
    pub async fn finish(&self, f: Finishing) {
        let started = Instant::now();
        let (state, result, error) = match f.report {
            Ok(report) => {
                let dir: PathBuf = self.config.results_dir.clone();
                let name = format!("job-{}-{}.txt", f.job_id, f.family);
                let path = dir.join(name);
                let mut lines = report.results_lines;
                match self
                    .verification(f.job_id, f.replicas, f.verified_units)
                    .await
                {
                    Ok(v) => lines.extend(v),
                    Err(e) => tracing::warn!(job = f.job_id, "mismatches unreadable: {e}"),
                }
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
                        let stored = serde_json::json!({
                            "result": json,
                            "text": text,
                            "figures": f.figures,
                        });
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
        // Reports waiting for work stop waiting if this was the last job
        // running (see `Workers::lease_units`).
        self.work_available.notify_waiters();
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
