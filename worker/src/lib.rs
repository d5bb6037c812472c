//! The orchard worker.
//!
//! A worker registers with a coordinator, keeps one unit per thread of its
//! rayon pool, and for each unit: explores it through the job's search family
//! (budget, stop flag and the job-wide bound shared lock-free with the search
//! loop), then reports the summary and the unexplored rest. A heartbeat task
//! renews leases, publishes progress and bounds, and relays the
//! coordinator's cancellations and split requests to the search loops. A
//! lemma task trades the families' lemmas (facts a search proved that save
//! other workers' searches work) with the coordinator.
//!
//! * [`connection`] — reaching the coordinator, with retry and backoff.
//! * [`jobs`] — the jobs the process has open, shared by its threads.
//! * [`cache`] — the files of the jobs' cache snapshots.
//! * [`runner`] — the worker's state, its lease loop and its other loops.
//! * `slot` — one pool thread's units: explore, report (which leases the
//!   next), and a unit held queued to start the moment one ends.
//! * [`heartbeat`] — lease renewal and the coordinator's orders, at the
//!   interval the coordinator asks for.
//! * `lemmas` — the lemma exchange between workers, through the coordinator.
//! * [`metrics`] — the worker's counters for Prometheus.

pub mod cache;
pub mod connection;
pub mod heartbeat;
pub mod jobs;
mod lemmas;
pub mod metrics;
pub mod runner;
mod slot;

pub use cache::{CacheDir, CacheError};
pub use jobs::OpenJobs;
pub use lemmas::DEFAULT_LEMMA_INTERVAL;
pub use metrics::WorkerMetrics;
pub use runner::{run_worker, WorkerConfig, WorkerStats};

#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error(transparent)]
    Access(#[from] orchard_proto::access::AccessError),
    #[error(
        "could not reach the coordinator at {url} for {secs} s, giving up (last error: {last})"
    )]
    Unreachable {
        url: String,
        secs: u64,
        last: String,
    },
    #[error("the coordinator refused this worker: {0}")]
    Refused(String),
    #[error("cannot start the thread pool: {0}")]
    Pool(String),
}
