//! The calls a simulated worker makes beside its units: the lease loop
//! (as many units as free slots, plus the policy's prefetch), the
//! heartbeats (each unit's progress in virtual time; the answer brings
//! cancellations and split requests) and the `AwaitSplits` long poll
//! (split requests as soon as the coordinator makes them). A split request
//! or a cancellation reaches a unit through its [`Held`] entry.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use orchard_proto::v1::*;

use super::{call, micros_less, Held, Sim};

impl Sim {
    pub(super) async fn lease_loop(self: Arc<Self>) {
        let capacity = (self.run.slots + self.run.policy.prefetch()) as usize;
        loop {
            if self.stopping.load(Ordering::SeqCst) {
                return;
            }
            let changed = self.changed.notified();
            // Units leased ahead wait for a running unit's slot, not a free one.
            let ahead = self.ahead.lock().unwrap().len();
            let held = self.held.lock().unwrap().len().saturating_sub(ahead);
            if held >= capacity {
                let _ = tokio::time::timeout(Duration::from_millis(200), changed).await;
                continue;
            }
            let mut c = self.client.clone();
            let req = LeaseRequest {
                worker_id: self.id.load(Ordering::SeqCst),
                max_units: (capacity - held) as u32,
            };
            self.run.stats.lease_calls.fetch_add(1, Ordering::Relaxed);
            let t = Instant::now();
            let resp = match call(self.rtt(), c.lease(req)).await {
                Ok(r) => r.into_inner(),
                Err(_) => {
                    self.run.stats.call_errors.fetch_add(1, Ordering::Relaxed);
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    continue;
                }
            };
            if resp.unknown_worker {
                if !self.register().await {
                    return;
                }
                continue;
            }
            if !resp.leases.is_empty() {
                self.run
                    .stats
                    .lease_micros
                    .fetch_add(micros_less(t, self.rtt()), Ordering::Relaxed);
            }
            if resp.leases.is_empty() {
                self.run.stats.empty_leases.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(resp.retry_after_ms.min(5000))).await;
                continue;
            }
            self.take(resp.leases);
        }
    }

    /// Holds leased units and starts a task for each (it waits for a slot).
    fn take(self: &Arc<Self>, leases: Vec<UnitLease>) {
        for lease in leases {
            self.hold(lease.unit_id);
            self.spawn_unit(lease, None);
        }
    }

    /// Split requests as soon as the coordinator makes them (a long poll
    /// beside the heartbeats). Stops for good if the coordinator does not
    /// know the call (an older one): heartbeats still bring the requests.
    pub(super) async fn await_splits_loop(self: Arc<Self>) {
        loop {
            let every = *self.heartbeat.lock().unwrap();
            let mut c = self.client.clone();
            let req = AwaitSplitsRequest {
                worker_id: self.id.load(Ordering::SeqCst),
                wait_ms: every.as_millis().min(u32::MAX as u128) as u32,
            };
            let t = Instant::now();
            let resp = match call(self.rtt(), c.await_splits(req)).await {
                Ok(r) => r.into_inner(),
                Err(e) if e.code() == tonic::Code::Unimplemented => return,
                Err(_) => {
                    self.run.stats.call_errors.fetch_add(1, Ordering::Relaxed);
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    continue;
                }
            };
            if resp.unknown_worker {
                // The heartbeat loop registers again.
                tokio::time::sleep(every).await;
                continue;
            }
            {
                let held = self.held.lock().unwrap();
                self.split_requested(&held, &resp.split_units, &resp.split_pieces, true);
            }
            if resp.split_units.is_empty() && t.elapsed() < every / 2 {
                // Answered early with nothing: do not spin.
                tokio::time::sleep(every / 2).await;
            }
        }
    }

    pub(super) async fn heartbeat_loop(self: Arc<Self>) {
        loop {
            let every = *self.heartbeat.lock().unwrap();
            tokio::time::sleep(every).await;
            // With lease-ahead, units not started are listed as queued
            // (renewed, not started); before it, all as running.
            let (running, queued) = {
                let held = self.held.lock().unwrap();
                let mut running = Vec::new();
                let mut queued = Vec::new();
                for (&unit_id, h) in held.iter() {
                    match h.started {
                        None if self.run.heartbeat_lists_queued => queued.push(unit_id),
                        started => running.push(UnitProgress {
                            unit_id,
                            nodes: started
                                .map_or(0, |t| (t.elapsed().as_secs_f64() * self.speed) as u64),
                        }),
                    }
                }
                (running, queued)
            };
            let mut c = self.client.clone();
            let req = HeartbeatRequest {
                worker_id: self.id.load(Ordering::SeqCst),
                running,
                bounds: Vec::new(),
                queued,
            };
            self.run.stats.heartbeats.fetch_add(1, Ordering::Relaxed);
            let resp = match call(self.rtt(), c.heartbeat(req)).await {
                Ok(r) => r.into_inner(),
                Err(_) => {
                    self.run.stats.call_errors.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
            };
            if resp.unknown_worker {
                if !self.register().await {
                    return;
                }
                continue;
            }
            let held = self.held.lock().unwrap();
            for id in resp.cancel_units {
                if let Some(h) = held.get(&id) {
                    h.cancelled.store(true, Ordering::SeqCst);
                    h.stop.notify_one();
                }
            }
            self.split_requested(&held, &resp.split_units, &resp.split_pieces, false);
        }
    }

    /// Split requests for `units` (each with its pieces, if the coordinator
    /// said), counted, and `prompt` ones (by `AwaitSplits`) apart; units no
    /// longer held are skipped.
    fn split_requested(
        &self,
        held: &HashMap<u64, Held>,
        units: &[u64],
        pieces: &[u32],
        prompt: bool,
    ) {
        for (i, id) in units.iter().enumerate() {
            if let Some(h) = held.get(id) {
                let stats = &self.run.stats;
                stats.split_requests.fetch_add(1, Ordering::Relaxed);
                if prompt {
                    stats.prompt_splits.fetch_add(1, Ordering::Relaxed);
                }
                self.split(h, pieces.get(i).copied());
            }
        }
    }

    /// A split request: the pieces asked for (absent from an older
    /// coordinator: 1), then the stop.
    fn split(&self, h: &Held, pieces: Option<u32>) {
        let k = pieces.unwrap_or(1).max(1);
        self.run
            .stats
            .split_pieces
            .fetch_add(u64::from(k), Ordering::Relaxed);
        h.pieces.store(k, Ordering::Relaxed);
        h.stop.notify_one();
    }
}
