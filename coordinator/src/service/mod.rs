//! The gRPC services (`orchard.v1.WorkerService`, `orchard.v1.JobService`)
//! over the [`Scheduler`] and the [`Store`]: the state every handler shares
//! ([`Shared`]) and how the errors of the layers below become gRPC statuses.
//!
//! * [`workers`] — the worker-facing service.
//! * [`jobs`] — the client-facing service.
//! * [`finish`] — a job's end: its results and units files, and its record.
//!
//! The scheduler lock is never held across an await: each handler decides
//! under the lock, commits without it, and applies the outcome under the
//! lock again.

mod finish;
mod jobs;
mod workers;

use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::Notify;
use tonic::Status;

use crate::clock::Clock;
use crate::history::Histories;
use crate::scheduler::{Scheduler, SchedulerError};
use crate::store::{Store, StoreError};
use crate::CoordinatorConfig;

pub use jobs::Jobs;
#[cfg(test)]
pub(crate) use workers::report_writes;
pub use workers::Workers;

/// The most lease requests one event wakes one by one (past it, a request
/// woken takes several units: `max_units` of a lease is up to 64).
const MAX_WAKE: usize = 256;

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
    /// Each job's history, for the dashboard's charts (see
    /// [`crate::history`]); its own lock, never taken with the scheduler's.
    pub history: Mutex<Histories>,
    /// The coordinator has stopped serving and is about to fold its
    /// write-ahead log (see `Coordinator::serve`): set under the scheduler's
    /// lock before the fold, after which its tick sweeps nothing more, so
    /// that no write commits after the fold and the database file alone
    /// holds every job.
    pub stopped_serving: std::sync::atomic::AtomicBool,
}

impl Shared {
    pub fn lock(&self) -> MutexGuard<'_, Scheduler> {
        self.scheduler.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Wakes up to `units` lease requests waiting for work, one a unit made
    /// pending, instead of every one of them: at a thousand idle workers,
    /// waking all of them on every report cost a thousand lock round trips
    /// for one or two units. (Each waiting request registers before it
    /// looks, so a wake-up is never lost; a request that finds nothing
    /// waits on, and every request ends within `LEASE_WAIT` anyway.)
    pub fn wake_idle(&self, units: usize) {
        for _ in 0..units.min(MAX_WAKE) {
            self.work_available.notify_one();
        }
    }

    pub fn history(&self) -> MutexGuard<'_, Histories> {
        self.history.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A store error as the client sees it: a full disk is `Unavailable` (the
/// worker keeps its report and retries; nothing was written), the rest
/// `Internal`.
fn internal(e: StoreError) -> Status {
    match e {
        StoreError::DiskFull(_) => Status::unavailable(format!("coordinator: {e}")),
        _ => Status::internal(e.to_string()),
    }
}

fn scheduler_status(e: SchedulerError) -> Status {
    match e {
        SchedulerError::UnknownJob(_) => Status::not_found(e.to_string()),
        SchedulerError::Invalid(_) => Status::invalid_argument(e.to_string()),
        SchedulerError::NotHeld(_) => Status::permission_denied(e.to_string()),
        SchedulerError::NotRetryable(_) => Status::failed_precondition(e.to_string()),
    }
}
