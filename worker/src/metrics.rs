//! A worker's own figures, for Prometheus (`orchard worker --metrics ADDR`).
//! Updated lock-free by the slot loop and the runner; rendered on demand.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

/// Live counters of one worker.
#[derive(Debug, Default)]
pub struct WorkerMetrics {
    pub threads: AtomicU64,
    pub units_running: AtomicU64,
    pub units_reported: AtomicU64,
    pub units_split: AtomicU64,
    pub units_cancelled: AtomicU64,
    /// Nodes of reported units.
    pub nodes_reported: AtomicU64,
    /// Nodes explored so far by running units (refreshed every heartbeat).
    pub nodes_in_flight: AtomicU64,
    /// Bytes of lemmas sent to the coordinator and stored there.
    pub lemma_bytes_sent: AtomicU64,
    /// Bytes of other workers' lemmas received.
    pub lemma_bytes_received: AtomicU64,
    /// Lemmas taken into this worker's searches.
    pub lemmas_learned: AtomicU64,
    /// Heartbeats sent (answered or not).
    pub heartbeats: AtomicU64,
}

impl WorkerMetrics {
    /// The Prometheus text format.
    pub fn render(&self) -> String {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let mut out = String::new();
        let mut one = |name: &str, kind: &str, help: &str, v: u64| {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {v}"
            );
        };
        one(
            "orchard_worker_threads",
            "gauge",
            "Search threads.",
            get(&self.threads),
        );
        one(
            "orchard_worker_heartbeats_total",
            "counter",
            "Heartbeats sent, at the interval the coordinator asked for.",
            get(&self.heartbeats),
        );
        one(
            "orchard_worker_units_running",
            "gauge",
            "Units being explored.",
            get(&self.units_running),
        );
        one(
            "orchard_worker_units_reported_total",
            "counter",
            "Units reported.",
            get(&self.units_reported),
        );
        one(
            "orchard_worker_units_split_total",
            "counter",
            "Reported units that handed back an unexplored rest.",
            get(&self.units_split),
        );
        one(
            "orchard_worker_units_cancelled_total",
            "counter",
            "Units dropped because the coordinator cancelled them.",
            get(&self.units_cancelled),
        );
        one(
            "orchard_worker_nodes_total",
            "counter",
            "Search-tree nodes explored (reported units plus running progress); rate() gives nodes per second.",
            get(&self.nodes_reported).saturating_add(get(&self.nodes_in_flight)),
        );
        one(
            "orchard_worker_lemma_bytes_sent_total",
            "counter",
            "Bytes of lemmas this worker shared (stored by the coordinator).",
            get(&self.lemma_bytes_sent),
        );
        one(
            "orchard_worker_lemma_bytes_received_total",
            "counter",
            "Bytes of other workers' lemmas received.",
            get(&self.lemma_bytes_received),
        );
        one(
            "orchard_worker_lemmas_learned_total",
            "counter",
            "Other workers' lemmas taken into this worker's searches.",
            get(&self.lemmas_learned),
        );
        out
    }
}
