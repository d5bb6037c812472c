//! The lemma exchange: every `--lemma-interval` (four times a second
//! unless told otherwise, [`DEFAULT_LEMMA_INTERVAL`]), for each job running
//! here whose family shares lemmas (see `orchard_core::LemmaExchange`), sends what
//! this process's searches proved and takes in what other workers sent.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use orchard_proto::v1::*;
use orchard_proto::MAX_LEMMA_UPLOAD_BYTES;

use crate::runner::{running_jobs, JobHandle, State};

/// How often a worker trades lemmas with the coordinator unless told
/// otherwise (`orchard worker --lemma-interval`): often, since a lemma a few
/// seconds late is one another process has already re-proved (traded every
/// 2 s, with lemmas of 4,096 nodes or more, 5x5 on 8 processes searches
/// 6.05 times the nodes of one process, against 5.35 every 250 ms with
/// lemmas of 256: `bench/hip-wn.sh`, docs/notes/hip-across-machines.md).
/// Ten times faster gained less than the runs' noise (the same notes,
/// "Across processes: shared busy marks, the trade interval, small lemmas").
/// A round with nothing to send or take is one small call.
pub const DEFAULT_LEMMA_INTERVAL: Duration = Duration::from_millis(250);

/// Trades lemmas for every job with a unit running here whose family has
/// them: sends what this process's searches proved since the last round,
/// takes in what other workers sent. Best effort: lemmas only save work, so
/// a failed round is logged and the next one goes on (a job's lemmas taken
/// in a failed round are not sent again).
pub(crate) async fn lemma_loop(state: Arc<State>, every: Duration) {
    // Identifies this process's lemmas to the coordinator, which never
    // sends them back; random, so that it survives a coordinator restart
    // (worker ids do not).
    let source = {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u32(std::process::id());
        h.finish() | 1
    };
    let mut interval = tokio::time::interval(every);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        interval.tick().await;
        let jobs: Vec<(u64, Arc<JobHandle>)> = {
            let running = state.running.lock().unwrap();
            let jobs = state.jobs.lock().unwrap();
            running_jobs(&running)
                .into_iter()
                .filter_map(|id| {
                    let j = jobs.get(&id)?;
                    (j.prepared.lemmas().is_some() && !j.lemmas_over.load(Ordering::Relaxed))
                        .then(|| (id, j.clone()))
                })
                .collect()
        };
        for (job_id, job) in jobs {
            match trade_lemmas(&state, source, job_id, &job).await {
                Ok(()) => {}
                Err(s) if s.code() == tonic::Code::Unimplemented => {
                    tracing::warn!("the coordinator does not trade lemmas (an older version)");
                    return;
                }
                Err(s) => tracing::warn!(job = job_id, "lemmas not traded: {}", s.message()),
            }
        }
    }
}

/// One round of [`lemma_loop`] for one job.
async fn trade_lemmas(
    state: &Arc<State>,
    source: u64,
    job_id: u64,
    job: &Arc<JobHandle>,
) -> Result<(), tonic::Status> {
    let take = |job: &Arc<JobHandle>| {
        let prepared = job.prepared.clone();
        tokio::task::spawn_blocking(move || {
            prepared
                .lemmas()
                .map(|l| l.take(MAX_LEMMA_UPLOAD_BYTES))
                .unwrap_or_default()
        })
    };
    let mut upload = take(job).await.unwrap_or_default();
    let metrics = &state.config.metrics;
    loop {
        // A full upload: more may be waiting.
        let full = upload.len() >= MAX_LEMMA_UPLOAD_BYTES / 2;
        let sent = upload.len() as u64;
        let req = ShareLemmasRequest {
            worker_id: state.id(),
            job_id,
            lemmas: upload,
            source,
            after: job.lemma_cursor.load(Ordering::Relaxed),
        };
        let resp = state.client.clone().share_lemmas(req).await?.into_inner();
        if resp.job_over {
            job.lemmas_over.store(true, Ordering::Relaxed);
            return Ok(());
        }
        if resp.stored {
            metrics.lemma_bytes_sent.fetch_add(sent, Ordering::Relaxed);
        }
        if !resp.lemmas.is_empty() {
            let bytes: u64 = resp.lemmas.iter().map(|b| b.len() as u64).sum();
            metrics
                .lemma_bytes_received
                .fetch_add(bytes, Ordering::Relaxed);
            let prepared = job.prepared.clone();
            let learned = tokio::task::spawn_blocking(move || {
                let mut learned = 0;
                let Some(exchange) = prepared.lemmas() else {
                    return 0;
                };
                for blob in &resp.lemmas {
                    match exchange.learn(blob) {
                        Ok(n) => learned += n,
                        Err(e) => tracing::warn!(job = job_id, "lemmas ignored: {e}"),
                    }
                }
                learned
            })
            .await
            .unwrap_or(0);
            metrics.lemmas_learned.fetch_add(learned, Ordering::Relaxed);
            tracing::debug!(job = job_id, bytes, learned, "lemmas learned");
        }
        job.lemma_cursor.store(resp.cursor, Ordering::Relaxed);
        if !resp.more && !full {
            return Ok(());
        }
        upload = if full {
            take(job).await.unwrap_or_default()
        } else {
            Vec::new()
        };
    }
}
