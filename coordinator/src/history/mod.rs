//! Each job's history, for the dashboard's charts: samples of its progress
//! (nodes, units, node rate, ETA) taken at a fixed interval while it runs,
//! and one last sample when it ends.
//!
//! A long search must not grow its history without end: a job keeps at most
//! [`MAX_SAMPLES`]. When the next sample would pass that, every other sample
//! is dropped (the first and the latest stay) and the job's interval doubles,
//! so a history always spans the job's whole life, evenly, whether it ran a
//! minute or a month. Counters (nodes, units) are cumulative, so a thinned
//! curve is still exact at each of its points.
//!
//! The history lives beside the scheduler, not in it: it is read from the
//! job statuses the scheduler already computes (see [`Histories::record`]),
//! on the sampler task's clock, and kept in a side file next to the
//! database ([`mod@file`]) so that it survives a restart. It is derived and
//! decorative: it never changes an answer, and a damaged file is set aside
//! rather than stopping the coordinator.

pub mod file;

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::status::{JobState, JobStatus};
use crate::store::JobId;

/// Most samples kept per job.
pub const MAX_SAMPLES: usize = 512;

/// A job's progress at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// When, in milliseconds since the Unix epoch.
    pub t_ms: u64,
    pub nodes: u64,
    pub units_done: u64,
    pub units_running: u64,
    pub units_pending: u64,
    pub units_total: u64,
    pub nodes_per_second: f64,
    /// Seconds left at the current rate (0: unknown).
    pub eta_seconds: f64,
    /// Knuth's estimate of the job's total nodes (0: none).
    pub estimated_nodes: f64,
}

impl Sample {
    /// The sample a status gives at `t_ms`.
    fn of(s: &JobStatus, t_ms: u64) -> Sample {
        Sample {
            t_ms,
            nodes: s.nodes,
            units_done: s.units_done,
            units_running: s.units_running,
            units_pending: s.units_pending,
            units_total: s.units_total,
            nodes_per_second: s.nodes_per_second,
            eta_seconds: s.eta_seconds,
            estimated_nodes: s.estimated_nodes,
        }
    }
}

/// One job's samples, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// The least time between two samples, in milliseconds: the
    /// coordinator's interval, doubled each time the series was thinned.
    pub every_ms: u64,
    /// The job ended and its last sample was taken: nothing more is added.
    pub closed: bool,
    pub samples: Vec<Sample>,
}

impl Series {
    fn new(every_ms: u64) -> Series {
        Series {
            every_ms,
            closed: false,
            samples: Vec::new(),
        }
    }

    /// Adds `s` if it is due (a little early is on time: ticks jitter) or
    /// the job's last. Returns whether it was added.
    fn push(&mut self, s: Sample, last: bool) -> bool {
        if self.closed {
            return false;
        }
        let due = self
            .samples
            .last()
            .is_none_or(|p| s.t_ms >= p.t_ms.saturating_add(self.every_ms * 3 / 4));
        if !due && !last {
            return false;
        }
        if self.samples.len() >= MAX_SAMPLES {
            self.thin();
        }
        self.samples.push(s);
        self.closed = last;
        true
    }

    /// Drops every other sample, keeping the first and the latest, and
    /// doubles the interval.
    fn thin(&mut self) {
        let n = self.samples.len();
        let mut i = 0;
        self.samples.retain(|_| {
            let keep = i % 2 == 0 || i == n - 1;
            i += 1;
            keep
        });
        self.every_ms = self.every_ms.saturating_mul(2);
    }
}

/// The histories of every job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Histories {
    /// The interval a new job's history starts with, in milliseconds.
    every_ms: u64,
    jobs: BTreeMap<JobId, Series>,
}

impl Histories {
    /// No history yet; new jobs are sampled every `every` (at least 1 ms).
    pub fn new(every: Duration) -> Histories {
        Histories {
            every_ms: (every.as_millis() as u64).max(1),
            jobs: BTreeMap::new(),
        }
    }

    /// The histories kept in `loaded`, sampled from now on at this
    /// coordinator's interval, without the jobs `known` does not know (a
    /// side file newer than its database, e.g. a database restored from a
    /// backup).
    pub fn resume(&mut self, loaded: Histories, known: impl Fn(JobId) -> bool) {
        self.jobs = loaded
            .jobs
            .into_iter()
            .filter(|(id, _)| known(*id))
            .collect();
    }

    /// Whether a job's history is over (its last sample taken): the
    /// sampler need not compute its status any more.
    pub fn is_closed(&self, job: JobId) -> bool {
        self.jobs.get(&job).is_some_and(|s| s.closed)
    }

    /// One tick of the sampler at `now_ms`: a sample of each running job
    /// whose interval has passed, and the last sample of each job that has
    /// ended (at its finish time). Returns (whether anything was added,
    /// whether some job's history was closed).
    pub fn record(&mut self, now_ms: u64, statuses: &[JobStatus]) -> (bool, bool) {
        let (mut added, mut closed) = (false, false);
        for s in statuses {
            let every_ms = self.every_ms;
            let series = self
                .jobs
                .entry(s.job_id)
                .or_insert_with(|| Series::new(every_ms));
            let last = s.state != JobState::Running;
            let t_ms = if last && s.finished_unix_ms > 0 {
                s.finished_unix_ms
            } else {
                now_ms
            };
            if series.push(Sample::of(s, t_ms), last) {
                added = true;
                closed |= last;
            }
        }
        (added, closed)
    }

    /// Opens again the history of a job that runs again after it ended (a
    /// failed job retried): sampled from now on, after the samples of its
    /// first run, its end among them (the gap between them is the time it
    /// stood failed).
    pub fn reopen(&mut self, job: JobId) {
        if let Some(series) = self.jobs.get_mut(&job) {
            series.closed = false;
        }
    }

    /// A job's samples.
    pub fn series(&self, job: JobId) -> Option<&Series> {
        self.jobs.get(&job)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(job_id: JobId, state: JobState, nodes: u64, finished_unix_ms: u64) -> JobStatus {
        JobStatus {
            job_id,
            family: "test".into(),
            params_json: "{}".into(),
            state,
            units_total: 10,
            units_done: nodes / 100,
            units_running: 1,
            units_pending: 9 - nodes / 100,
            nodes,
            nodes_discarded: 0,
            lemma_bytes: 0,
            lemmas_observed: 0,
            nodes_per_second: 100.0,
            bound: 0,
            live_workers: 1,
            created_unix_ms: 0,
            finished_unix_ms,
            error: String::new(),
            estimated_nodes: 1000.0,
            estimated_nodes_error: 0.0,
            replicas: 1,
            verified_units: 0,
            mismatches: 0,
            waiting: String::new(),
            excluded: Vec::new(),
            eta_seconds: 5.0,
        }
    }

    #[test]
    fn samples_at_the_interval_and_once_at_the_end() {
        let mut h = Histories::new(Duration::from_secs(1));
        let running = |n| [status(1, JobState::Running, n, 0)];
        assert_eq!(h.record(1_000, &running(0)), (true, false));
        // Too early: not due.
        assert_eq!(h.record(1_300, &running(10)), (false, false));
        // A tick that comes a little early is on time.
        assert_eq!(h.record(1_900, &running(20)), (true, false));
        assert_eq!(
            h.record(2_500, &[status(1, JobState::Done, 30, 2_400)]),
            (true, true)
        );
        assert!(h.is_closed(1));
        assert_eq!(
            h.record(9_000, &[status(1, JobState::Done, 30, 2_400)]),
            (false, false)
        );
        let s = h.series(1).unwrap();
        let t: Vec<u64> = s.samples.iter().map(|s| s.t_ms).collect();
        assert_eq!(t, [1_000, 1_900, 2_400], "the last at the finish time");
        assert_eq!(s.samples.last().unwrap().nodes, 30);
    }

    #[test]
    fn a_retried_job_is_sampled_again_after_its_failure() {
        let mut h = Histories::new(Duration::from_secs(1));
        h.record(1_000, &[status(1, JobState::Running, 0, 0)]);
        h.record(2_000, &[status(1, JobState::Failed, 10, 1_500)]);
        assert!(h.is_closed(1));
        h.reopen(1);
        assert!(!h.is_closed(1));
        assert_eq!(
            h.record(9_000, &[status(1, JobState::Running, 10, 0)]),
            (true, false)
        );
        assert_eq!(
            h.record(9_900, &[status(1, JobState::Done, 30, 9_800)]),
            (true, true)
        );
        let t: Vec<u64> = h
            .series(1)
            .unwrap()
            .samples
            .iter()
            .map(|s| s.t_ms)
            .collect();
        assert_eq!(t, [1_000, 1_500, 9_000, 9_800]);
    }

    #[test]
    fn a_long_job_keeps_its_whole_life_in_bounded_samples() {
        let mut h = Histories::new(Duration::from_millis(10));
        let mut t = 0;
        for n in 0..100_000u64 {
            t += 10;
            h.record(t, &[status(7, JobState::Running, n, 0)]);
            assert!(h.series(7).unwrap().samples.len() <= MAX_SAMPLES);
        }
        h.record(t + 5, &[status(7, JobState::Done, 100_000, t + 5)]);
        let s = h.series(7).unwrap();
        assert!(s.samples.len() <= MAX_SAMPLES && s.samples.len() > MAX_SAMPLES / 4);
        assert_eq!(s.samples[0].t_ms, 10, "the first sample stays");
        assert_eq!(s.samples.last().unwrap().t_ms, t + 5, "and the last");
        assert!(s.every_ms >= 10 * 100_000 / MAX_SAMPLES as u64);
        // Evenly spread: no gap is more than twice the interval, and
        // counters stay in order.
        for w in s.samples.windows(2) {
            assert!(w[1].t_ms - w[0].t_ms <= 2 * s.every_ms, "{w:?}");
            assert!(w[1].nodes >= w[0].nodes);
        }
    }

    #[test]
    fn resuming_keeps_only_known_jobs() {
        let mut h = Histories::new(Duration::from_secs(1));
        h.record(
            1_000,
            &[
                status(1, JobState::Running, 0, 0),
                status(2, JobState::Running, 0, 0),
            ],
        );
        let mut again = Histories::new(Duration::from_secs(2));
        again.resume(h, |id| id == 2);
        assert!(again.series(1).is_none());
        assert_eq!(again.series(2).unwrap().samples.len(), 1);
    }
}
