//! The heartbeat: every interval the coordinator asked for, renews the
//! leases of the units running here, publishes their progress and the jobs'
//! bounds, and brings back cancellations, split requests and bounds.
//!
//! The interval and the lease time come from the coordinator at
//! registration ([`HeartbeatSchedule`]): a worker that heartbeats slower than
//! the coordinator expects loses its leases; one that heartbeats faster
//! costs the coordinator for nothing.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use orchard_proto::v1::*;

use crate::connection::with_retry;
use crate::runner::{publish_in_flight, running_jobs, Running, State};

/// When to heartbeat, from what the coordinator sent at registration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeartbeatSchedule {
    /// Time between two heartbeats.
    pub interval: Duration,
    /// How long one heartbeat call may take before it is sent again.
    pub call_timeout: Duration,
}

impl Default for HeartbeatSchedule {
    /// Until registration answers: the coordinator's own defaults.
    fn default() -> Self {
        HeartbeatSchedule::from_coordinator(500, 30_000)
    }
}

impl HeartbeatSchedule {
    /// The schedule for a coordinator that asks for a heartbeat every
    /// `interval_ms` and expires a lease after `lease_ttl_ms` without one.
    /// The interval is obeyed, but kept to at most a third of the lease time
    /// (so that a lost heartbeat or two never lets a lease expire) and at
    /// least 10 ms; 0 (an older coordinator that sends nothing) means the
    /// default. A call may take up to the rest of the lease time.
    pub fn from_coordinator(interval_ms: u64, lease_ttl_ms: u64) -> Self {
        let lease = Duration::from_millis(if lease_ttl_ms == 0 {
            30_000
        } else {
            lease_ttl_ms
        });
        let asked = Duration::from_millis(if interval_ms == 0 { 500 } else { interval_ms });
        let interval = asked.min(lease / 3).max(Duration::from_millis(10));
        HeartbeatSchedule {
            interval,
            call_timeout: lease
                .saturating_sub(interval)
                .max(Duration::from_millis(100)),
        }
    }
}

/// Renews leases, publishes progress and bounds, applies cancellations,
/// split requests and bounds from the coordinator.
pub(crate) async fn heartbeat_loop(state: Arc<State>) {
    loop {
        let schedule = *state.heartbeat.lock().unwrap();
        tokio::time::sleep(schedule.interval).await;
        let (running, bounds) = {
            let running = state.running.lock().unwrap();
            let jobs = state.jobs.lock().unwrap();
            let progress: Vec<UnitProgress> = running
                .iter()
                .map(|(&unit_id, r)| UnitProgress {
                    unit_id,
                    nodes: r.progress.load(Ordering::Relaxed),
                })
                .collect();
            publish_in_flight(&running, &state.config.metrics);
            let bounds: Vec<JobBound> = running_jobs(&running)
                .into_iter()
                .filter_map(|id| {
                    jobs.get(&id).map(|j| JobBound {
                        job_id: id,
                        bound: j.bound.load(Ordering::Relaxed),
                    })
                })
                .collect();
            (progress, bounds)
        };
        let queued: Vec<u64> = {
            let queued = state.queued.lock().unwrap();
            queued
                .iter()
                .filter(|(_, &cancelled)| !cancelled)
                .map(|(&id, _)| id)
                .collect()
        };
        let req = HeartbeatRequest {
            worker_id: state.id(),
            running,
            bounds,
            queued,
        };
        let resp = with_retry(
            &state.config.coordinator,
            state.config.give_up_after,
            "heartbeat",
            || {
                let mut c = state.client.clone();
                let mut req = tonic::Request::new(req.clone());
                // A heartbeat that arrives after the lease expired renews
                // nothing: give up on this attempt and send a fresh one.
                req.set_timeout(schedule.call_timeout);
                async move { c.heartbeat(req).await }
            },
        )
        .await;
        state
            .config
            .metrics
            .heartbeats
            .fetch_add(1, Ordering::Relaxed);
        let resp = match resp {
            Ok(r) => r.into_inner(),
            Err(e) => {
                state.fail(e);
                return;
            }
        };
        if resp.unknown_worker {
            if let Err(e) = state.register().await {
                state.fail(e);
                return;
            }
            continue;
        }
        let running = state.running.lock().unwrap();
        let mut queued = state.queued.lock().unwrap();
        cancel_units(&running, &mut queued, &resp.cancel_units);
        split_units(&running, &resp.split_units, &resp.split_pieces);
        let jobs = state.jobs.lock().unwrap();
        for b in resp.bounds {
            if let Some(j) = jobs.get(&b.job_id) {
                j.bound.fetch_max(b.bound, Ordering::Relaxed);
            }
        }
    }
}

/// Split requests as soon as the coordinator makes them: a long poll
/// (`AwaitSplits`) beside the heartbeats, answered when one of this
/// worker's units is asked to split or after an interval. Without it a
/// request waits for the next heartbeat, and a job fanning out from one
/// unit to many idle workers takes a heartbeat interval per generation of
/// splits. Ends for good against an older coordinator (UNIMPLEMENTED):
/// heartbeats still bring the requests. Errors are not fatal here (the
/// heartbeat and the lease calls decide when the coordinator is gone):
/// the poll waits an interval and asks again.
pub(crate) async fn await_splits_loop(state: Arc<State>) {
    loop {
        let schedule = *state.heartbeat.lock().unwrap();
        let wait = schedule.interval;
        let mut c = state.client.clone();
        let mut req = tonic::Request::new(AwaitSplitsRequest {
            worker_id: state.id(),
            wait_ms: wait.as_millis().min(u128::from(u32::MAX)) as u32,
        });
        req.set_timeout(wait + schedule.call_timeout);
        let started = std::time::Instant::now();
        let resp = match c.await_splits(req).await {
            Ok(r) => r.into_inner(),
            Err(e) if e.code() == tonic::Code::Unimplemented => {
                tracing::debug!("the coordinator has no AwaitSplits: splits come with heartbeats");
                return;
            }
            Err(_) => {
                tokio::time::sleep(wait).await;
                continue;
            }
        };
        if !resp.split_units.is_empty() {
            let running = state.running.lock().unwrap();
            split_units(&running, &resp.split_units, &resp.split_pieces);
        } else if resp.unknown_worker || started.elapsed() < wait / 2 {
            // Registering again is the heartbeat's business; an early
            // empty answer must not make this loop spin.
            tokio::time::sleep(wait / 2).await;
        }
    }
}

/// Applies the coordinator's cancellations: a unit leased ahead is marked
/// to be dropped instead of started, and a running one stops at its next
/// poll and its result is dropped (see `crate::slot`).
pub(crate) fn cancel_units(
    running: &HashMap<u64, Running>,
    queued: &mut HashMap<u64, bool>,
    units: &[u64],
) {
    for id in units {
        if let Some(cancelled) = queued.get_mut(id) {
            *cancelled = true;
        }
        if let Some(r) = running.get(id) {
            r.cancelled.store(true, Ordering::SeqCst);
            r.stop.store(true, Ordering::Relaxed);
        }
    }
}

/// Asks the running units named by a heartbeat's or an `AwaitSplits`
/// answer to split, each into the pieces beside it (`split_pieces[i]` for
/// `units[i]`; absent from an older coordinator).
fn split_units(running: &HashMap<u64, Running>, units: &[u64], pieces: &[u32]) {
    for (i, id) in units.iter().enumerate() {
        if let Some(r) = running.get(id) {
            r.split(pieces.get(i).copied());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn the_coordinators_interval_is_obeyed() {
        let s = HeartbeatSchedule::from_coordinator(2_000, 60_000);
        assert_eq!(s.interval, ms(2_000));
        assert_eq!(s.call_timeout, ms(58_000));
        assert_eq!(
            HeartbeatSchedule::from_coordinator(100, 1_000).interval,
            ms(100)
        );
    }

    #[test]
    fn a_lease_never_expires_for_want_of_a_heartbeat() {
        // Asked for a heartbeat slower than the lease: a third of the lease.
        let s = HeartbeatSchedule::from_coordinator(5_000, 3_000);
        assert_eq!(s.interval, ms(1_000));
        assert_eq!(s.call_timeout, ms(2_000));
    }

    #[test]
    fn nothing_sent_means_the_defaults_and_nonsense_is_bounded() {
        assert_eq!(
            HeartbeatSchedule::from_coordinator(0, 0),
            HeartbeatSchedule::default()
        );
        assert_eq!(HeartbeatSchedule::default().interval, ms(500));
        let tiny = HeartbeatSchedule::from_coordinator(1, 20);
        assert_eq!(tiny.interval, ms(10));
        assert_eq!(tiny.call_timeout, ms(100));
    }
}
