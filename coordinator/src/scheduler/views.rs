//! Read-only pictures of the state, for `status`, the dashboard and
//! `/metrics`: job snapshots (with rates and ETA), worker snapshots, and
//! the picture of a job's search tree. Taking a snapshot samples the rate
//! meters, which is the only state a view changes.

use std::collections::BTreeMap;
use std::time::Duration;

use super::unit::{position_label, tree_prefix};
use super::{Scheduler, WorkerId};
use crate::identity::PeerIdentity;
use crate::status::{JobAnswer, JobState, JobStatus};
use crate::store::JobId;

/// A worker as the dashboard shows it.
#[derive(Debug, Clone)]
pub struct WorkerSnapshot {
    pub id: WorkerId,
    pub hostname: String,
    pub threads: u32,
    pub live: bool,
    pub units: usize,
    pub nodes: u64,
    pub nodes_per_second: f64,
    pub seconds_since_seen: f64,
    /// The client certificate it registered under (mutual TLS only).
    pub identity: Option<PeerIdentity>,
}

/// One cell of the dashboard's picture of a job's search tree: the units
/// under one tree prefix and their states.
#[derive(Debug, Clone)]
pub struct TreeCell {
    pub prefix: String,
    pub done: u64,
    pub running: u64,
    pub pending: u64,
}

impl Scheduler {
    /// A job's progress, sampling its node rate.
    pub fn status(&mut self, job_id: JobId) -> Option<JobStatus> {
        let live_workers = self.live_workers() as u32;
        let now = self.clock.now();
        let (mut running_nodes, mut queued) = (0u64, 0u64);
        for u in self.units.values().filter(|u| u.job == job_id) {
            if u.running() {
                running_nodes += u.progress_nodes;
            } else if u.lease.is_some() {
                queued += 1;
            }
        }
        let waiting = self.waiting_reason(job_id);
        let job = self.jobs.get_mut(&job_id)?;
        let nodes = job.nodes_done.saturating_add(running_nodes);
        if job.state == JobState::Running {
            job.rate.sample(now, nodes);
        }
        Some(JobStatus {
            job_id,
            family: job.family.clone(),
            params_json: job.params_json.clone(),
            state: job.state,
            units_total: job.units_total,
            units_done: job.units_done,
            // Units leased ahead and not started count as pending.
            units_running: job.units_leased.saturating_sub(queued),
            units_pending: job
                .units_total
                .saturating_sub(job.units_done + job.units_leased)
                + queued,
            nodes,
            nodes_discarded: job.nodes_discarded,
            lemma_bytes: job.lemma_bytes,
            lemmas_observed: job.observations,
            bound: job.bound,
            nodes_per_second: if job.state == JobState::Running {
                job.rate.rate()
            } else {
                0.0
            },
            created_unix_ms: job.created_ms,
            finished_unix_ms: job.finished_ms.unwrap_or(0),
            live_workers,
            error: job.error.clone().unwrap_or_default(),
            estimated_nodes: job.estimate.map_or(0.0, |e| e.nodes),
            estimated_nodes_error: job.estimate.map_or(0.0, |e| e.std_error),
            eta_seconds: job.eta_seconds(nodes),
            replicas: job.replicas,
            verified_units: job.verified_units,
            mismatches: job.mismatches,
            waiting,
            excluded: job.excluded.values().cloned().collect(),
        })
    }

    /// The progress of every job, oldest first.
    pub fn statuses(&mut self) -> Vec<JobStatus> {
        let ids: Vec<JobId> = self.jobs.keys().copied().collect();
        ids.into_iter().filter_map(|id| self.status(id)).collect()
    }

    /// A job's answer: the stored final one of a done job; the answer so far
    /// of a running one (see [`Scheduler::interim_report`]); none yet (a
    /// `Null` result) otherwise.
    pub fn answer(&mut self, job_id: JobId) -> Option<JobAnswer> {
        let status = self.status(job_id)?;
        if let Some(r) = self.jobs[&job_id].result.clone() {
            // Stored as {"result": {...}, "text": [...]}.
            let stored: serde_json::Value = serde_json::from_str(&r.json).unwrap_or_default();
            let text = stored["text"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|l| l.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default();
            return Some(JobAnswer {
                is_final: status.state == JobState::Done,
                status,
                result: stored["result"].clone(),
                text,
                results_file: r.results_file,
            });
        }
        let (result, text) = match self.interim_report(job_id) {
            Some(r) => (r.json, r.text),
            None => (serde_json::Value::Null, Vec::new()),
        };
        Some(JobAnswer {
            status,
            result,
            text,
            results_file: String::new(),
            is_final: false,
        })
    }

    /// How long ago the job's last unit report was applied.
    pub fn since_last_report(&self, job_id: JobId) -> Option<Duration> {
        let last = self.jobs.get(&job_id)?.last_report?;
        Some(self.clock.now().saturating_duration_since(last))
    }

    /// Every worker, with its node rate (sampled now).
    pub fn workers_snapshot(&mut self) -> Vec<WorkerSnapshot> {
        let now = self.clock.now();
        let ttl = self.lease_ttl;
        let units = &self.units;
        let mut out: Vec<WorkerSnapshot> = self
            .workers
            .iter_mut()
            .map(|(&id, w)| {
                let running: u64 = w
                    .units
                    .iter()
                    .filter_map(|u| units.get(u))
                    .map(|u| u.progress_nodes)
                    .sum();
                let nodes = w.nodes_reported.saturating_add(running);
                w.rate.sample(now, nodes);
                WorkerSnapshot {
                    id,
                    hostname: w.hostname.clone(),
                    threads: w.threads,
                    live: now.duration_since(w.last_seen) < ttl,
                    units: w.units.len(),
                    nodes,
                    nodes_per_second: w.rate.rate(),
                    seconds_since_seen: now.duration_since(w.last_seen).as_secs_f64(),
                    identity: w.identity.clone(),
                }
            })
            .collect();
        out.sort_by_key(|w| w.id);
        out
    }

    /// The job's units grouped by the first levels of their positions.
    pub fn tree(&self, job_id: JobId) -> Vec<TreeCell> {
        let Some(job) = self.jobs.get(&job_id) else {
            return Vec::new();
        };
        let mut cells: BTreeMap<Vec<u8>, (u64, u64, u64)> = job
            .done_by_prefix
            .iter()
            .map(|(p, &d)| (p.clone(), (d, 0, 0)))
            .collect();
        for u in self.units.values().filter(|u| u.job == job_id) {
            let c = cells.entry(tree_prefix(&u.position)).or_default();
            if u.running() {
                c.1 += 1;
            } else {
                c.2 += 1;
            }
        }
        cells
            .into_iter()
            .map(|(p, (done, running, pending))| TreeCell {
                prefix: position_label(&p),
                done,
                running,
                pending,
            })
            .collect()
    }
}
