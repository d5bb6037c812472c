//! The run's counters, shared by every simulated worker and read once at
//! the end for the JSON line: calls made and answered, the coordinator's
//! answer times, and the accepted reports per 100 ms (for the peak of
//! durable reports per second). Atomics, so that thousands of workers
//! count without a lock.

use std::sync::atomic::{AtomicU64, Ordering};

/// Counters of the whole run, and the accepted reports per 100 ms.
pub struct Stats {
    pub reports_accepted: AtomicU64,
    pub reports_ignored: AtomicU64,
    pub units_cut: AtomicU64,
    pub units_cancelled: AtomicU64,
    pub rest_units: AtomicU64,
    pub split_requests: AtomicU64,
    pub lease_calls: AtomicU64,
    pub empty_leases: AtomicU64,
    pub heartbeats: AtomicU64,
    pub call_errors: AtomicU64,
    pub registered: AtomicU64,
    /// Workers running at least one unit now (for the fan-out times).
    pub busy_workers: AtomicU64,
    /// Split requests that came by `AwaitSplits` rather than a heartbeat.
    pub prompt_splits: AtomicU64,
    /// The pieces the split requests asked for, summed (the k-way
    /// hand-back: `split_pieces / split_requests` is the mean k).
    pub split_pieces: AtomicU64,
    /// Microseconds the coordinator took to answer (the injected round
    /// trip not counted): reports (their commit included), and lease calls
    /// that brought units.
    pub report_micros: AtomicU64,
    pub lease_micros: AtomicU64,
    /// Reports that asked for the next unit, the units they brought, and
    /// the microseconds they took (commit and wait for work included).
    pub report_lease_calls: AtomicU64,
    pub report_leased: AtomicU64,
    pub report_lease_micros: AtomicU64,
    /// Units that came leased ahead (queued), and those that started.
    pub ahead_leased: AtomicU64,
    pub ahead_started: AtomicU64,
    /// Accepted reports per 100 ms since the job started.
    pub buckets: Vec<AtomicU64>,
}

impl Stats {
    pub fn new(seconds: usize) -> Stats {
        Stats {
            reports_accepted: AtomicU64::new(0),
            reports_ignored: AtomicU64::new(0),
            units_cut: AtomicU64::new(0),
            units_cancelled: AtomicU64::new(0),
            rest_units: AtomicU64::new(0),
            split_requests: AtomicU64::new(0),
            lease_calls: AtomicU64::new(0),
            empty_leases: AtomicU64::new(0),
            heartbeats: AtomicU64::new(0),
            call_errors: AtomicU64::new(0),
            registered: AtomicU64::new(0),
            busy_workers: AtomicU64::new(0),
            prompt_splits: AtomicU64::new(0),
            split_pieces: AtomicU64::new(0),
            report_micros: AtomicU64::new(0),
            lease_micros: AtomicU64::new(0),
            report_lease_calls: AtomicU64::new(0),
            report_leased: AtomicU64::new(0),
            report_lease_micros: AtomicU64::new(0),
            ahead_leased: AtomicU64::new(0),
            ahead_started: AtomicU64::new(0),
            buckets: (0..seconds * 10).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// The most reports accepted in any window of one second.
    pub fn peak_per_second(&self) -> u64 {
        let b: Vec<u64> = self
            .buckets
            .iter()
            .map(|x| x.load(Ordering::Relaxed))
            .collect();
        b.windows(10).map(|w| w.iter().sum()).max().unwrap_or(0)
    }
}
