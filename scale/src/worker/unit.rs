//! One unit's life on a simulated worker's slot: held when leased, started
//! on a slot (or queued behind a running unit with lease-ahead), explored
//! by the synthetic family at once and then paid for in virtual time, cut
//! when a split request stops it, dropped when cancelled, and reported as
//! the run's [`SlotPolicy`] says. The reports themselves (retried until the
//! coordinator answers, counted in the run's stats) are here too: a unit's
//! end is the only thing that reports.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use orchard_core::{codec, Exploration};
use orchard_proto::v1::*;
use orchard_synthetic::Piece;
use tokio::sync::{Notify, OwnedSemaphorePermit};

use super::{call, micros_less, Busy, Held, Sim, SlotPolicy};

impl Sim {
    /// Holds a leased unit, not started.
    pub(super) fn hold(&self, id: u64) {
        self.held.lock().unwrap().insert(
            id,
            Held {
                stop: Arc::new(Notify::new()),
                pieces: Arc::new(AtomicU32::new(0)),
                cancelled: Arc::new(AtomicBool::new(false)),
                started: None,
                task: None,
            },
        );
    }

    /// Starts the task of a held unit: on `permit`'s slot, or it waits for
    /// one. Nothing if the unit was handed back meanwhile.
    pub(super) fn spawn_unit(
        self: &Arc<Self>,
        lease: UnitLease,
        permit: Option<OwnedSemaphorePermit>,
    ) {
        let mut held = self.held.lock().unwrap();
        let Some(h) = held.get_mut(&lease.unit_id) else {
            return;
        };
        let (stop, cancelled, pieces) = (h.stop.clone(), h.cancelled.clone(), h.pieces.clone());
        let task = tokio::spawn(self.clone().unit(lease, stop, cancelled, pieces, permit));
        h.task = Some(task.abort_handle());
    }

    /// The oldest unit leased ahead that is still held and not cancelled
    /// (a cancelled one is dropped).
    fn pop_ahead(&self) -> Option<UnitLease> {
        loop {
            let next = self.ahead.lock().unwrap().pop_front()?;
            let cancelled = match self.held.lock().unwrap().get(&next.unit_id) {
                Some(h) => h.cancelled.load(Ordering::SeqCst),
                None => continue,
            };
            if cancelled {
                self.run
                    .stats
                    .units_cancelled
                    .fetch_add(1, Ordering::Relaxed);
                self.leave(next.unit_id);
                continue;
            }
            return Some(next);
        }
    }

    /// Explores one unit in virtual time and reports it.
    async fn unit(
        self: Arc<Self>,
        lease: UnitLease,
        stop: Arc<Notify>,
        cancelled: Arc<AtomicBool>,
        pieces: Arc<AtomicU32>,
        permit: Option<OwnedSemaphorePermit>,
    ) {
        let id = lease.unit_id;
        let permit = match permit {
            Some(p) => p,
            None => self
                .slots
                .clone()
                .acquire_owned()
                .await
                .expect("slots stay open"),
        };
        let unit: Piece = match codec::decode(&lease.unit) {
            Ok(u) => u,
            Err(e) => {
                self.report(ReportRequest {
                    worker_id: self.id.load(Ordering::SeqCst),
                    unit_id: id,
                    error: format!("undecodable unit: {e}"),
                    ..Default::default()
                })
                .await;
                self.leave(id);
                return;
            }
        };
        let never = || false;
        let budget = lease.node_budget.max(1);
        let plan = self
            .run
            .job
            .explore_budget(&unit, budget, &never)
            .expect("the coordinator leases the tree's own units");
        let nodes = explored(&plan);
        let duration = Duration::from_secs_f64(nodes as f64 / self.speed);
        let t = Instant::now();
        {
            let mut held = self.held.lock().unwrap();
            let Some(h) = held.get_mut(&id) else {
                // Handed back before it started.
                return;
            };
            h.started = Some(t);
        }
        let busy = Busy::start(&self);
        self.changed.notify_waiters();
        let outcome = tokio::select! {
            _ = tokio::time::sleep(duration) => plan,
            _ = stop.notified() => {
                let paid = (t.elapsed().as_secs_f64() * self.speed) as u64;
                if paid >= nodes {
                    plan
                } else {
                    self.run.stats.units_cut.fetch_add(1, Ordering::Relaxed);
                    let k = pieces.load(Ordering::Relaxed).max(1);
                    self.run
                        .job
                        .explore_split(&unit, paid.max(1), k, budget)
                        .expect("the same unit again")
                }
            }
        };
        if cancelled.load(Ordering::SeqCst) {
            self.run
                .stats
                .units_cancelled
                .fetch_add(1, Ordering::Relaxed);
            self.leave(id);
            return;
        }
        let (summary, rest) = match outcome {
            Exploration::Finished(s) => (s, Vec::new()),
            Exploration::Split { explored, rest } => (explored, rest),
        };
        self.run
            .stats
            .rest_units
            .fetch_add(rest.len() as u64, Ordering::Relaxed);
        let req = ReportRequest {
            worker_id: self.id.load(Ordering::SeqCst),
            unit_id: id,
            nodes: summary.nodes,
            summary: codec::encode(&summary),
            rest: rest.iter().map(codec::encode).collect(),
            bound: 0,
            error: String::new(),
            stopped: false,
            ..Default::default()
        };
        match self.run.policy {
            SlotPolicy::Prefetch { .. } => {
                // The slot is free as soon as the exploration is; the report
                // travels while the next unit runs.
                drop(busy);
                drop(permit);
                self.report(req).await;
                self.leave(id);
            }
            SlotPolicy::ReportAndLease { lease_ahead } => {
                drop(busy);
                self.report_and_lease(id, req, permit, lease_ahead).await;
            }
            SlotPolicy::BlockingReport => {
                self.report(req).await;
                self.leave(id);
                drop(busy);
                drop(permit);
            }
            SlotPolicy::BackgroundReport => {
                // The slot is free once a report slot is had (at most one
                // report a slot in flight); the unit leaves the lease
                // loop's count at once, so the slot leases again.
                let in_flight = self.reporting.acquire().await.expect("stays open");
                drop(busy);
                drop(permit);
                self.leave(id);
                self.report(req).await;
                drop(in_flight);
            }
        }
    }

    /// Report-and-lease: the slot stays with the ended unit `id` until its
    /// report answers with the next unit (leased after the report's
    /// commit); the lease loop sees the slot held meanwhile, and asks with
    /// `Lease` only if the answer brought nothing. With `lease_ahead`, the
    /// slot's queued unit starts at once, on this slot, and the report
    /// commits while it runs.
    async fn report_and_lease(
        self: &Arc<Self>,
        id: u64,
        req: ReportRequest,
        permit: OwnedSemaphorePermit,
        lease_ahead: bool,
    ) {
        let stopping = self.stopping.load(Ordering::SeqCst);
        let mut permit = Some(permit);
        let mut started = Vec::new();
        if lease_ahead && !stopping {
            if let Some(next) = self.pop_ahead() {
                self.run.stats.ahead_started.fetch_add(1, Ordering::Relaxed);
                started.push(next.unit_id);
                self.spawn_unit(next, permit.take());
            }
        }
        let want = u32::from(!stopping && permit.is_some());
        let queue = u32::from(!stopping && lease_ahead);
        let mut leases = self
            .report_asking(req, want, queue, started)
            .await
            .into_iter();
        // Units to run come first in the answer, then queued ones; more
        // than asked are handed back.
        let run_now = if want > 0 { leases.next() } else { None };
        let queued = if queue > 0 { leases.next() } else { None };
        let mut back: Vec<u64> = leases.map(|l| l.unit_id).collect();
        if self.stopping.load(Ordering::SeqCst) {
            // Stopped while the call was out: handed back unstarted.
            back.extend(run_now.iter().chain(queued.iter()).map(|l| l.unit_id));
        } else {
            if let Some(l) = run_now {
                self.hold(l.unit_id);
                self.spawn_unit(l, permit.take());
            }
            if let Some(q) = queued {
                self.run.stats.ahead_leased.fetch_add(1, Ordering::Relaxed);
                self.hold(q.unit_id);
                self.ahead.lock().unwrap().push_back(q);
            }
        }
        self.hand_back(back).await;
        self.leave(id);
        drop(permit);
    }

    pub(super) fn leave(&self, id: u64) {
        self.held.lock().unwrap().remove(&id);
        self.changed.notify_waiters();
    }

    /// Reports until the coordinator answers.
    async fn report(&self, req: ReportRequest) {
        self.report_asking(req, 0, 0, Vec::new()).await;
    }

    /// Reports until the coordinator answers, asking for `want` units to
    /// run and `queue` to hold queued in the same call (report-and-lease,
    /// lease-ahead) and saying which queued units `started`; returns the
    /// units it leased.
    async fn report_asking(
        &self,
        req: ReportRequest,
        want: u32,
        queue: u32,
        started: Vec<u64>,
    ) -> Vec<UnitLease> {
        let req = ReportRequest {
            want_units: want,
            queue_units: queue,
            started_units: started,
            ..req
        };
        for _ in 0..100 {
            let mut c = self.client.clone();
            let t = Instant::now();
            match call(self.rtt(), c.report(req.clone())).await {
                Ok(r) => {
                    let st = &self.run.stats;
                    let took = micros_less(t, self.rtt());
                    let r = r.into_inner();
                    if want > 0 || queue > 0 {
                        st.report_lease_calls.fetch_add(1, Ordering::Relaxed);
                        st.report_lease_micros.fetch_add(took, Ordering::Relaxed);
                        st.report_leased
                            .fetch_add(r.leases.len() as u64, Ordering::Relaxed);
                    } else {
                        st.report_micros.fetch_add(took, Ordering::Relaxed);
                    }
                    if r.accepted {
                        self.run
                            .stats
                            .reports_accepted
                            .fetch_add(1, Ordering::Relaxed);
                        self.run.bucket();
                    } else {
                        self.run
                            .stats
                            .reports_ignored
                            .fetch_add(1, Ordering::Relaxed);
                    }
                    return r.leases;
                }
                Err(e) => {
                    self.run.stats.call_errors.fetch_add(1, Ordering::Relaxed);
                    if e.code() == tonic::Code::InvalidArgument
                        || e.code() == tonic::Code::FailedPrecondition
                        || e.code() == tonic::Code::NotFound
                    {
                        eprintln!("{}: report refused: {}", self.name, e.message());
                        return Vec::new();
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
        Vec::new()
    }
}

/// The nodes an exploration paid for, finished or cut.
fn explored<S: HasNodes, U>(x: &Exploration<S, U>) -> u64 {
    match x {
        Exploration::Finished(s) | Exploration::Split { explored: s, .. } => s.nodes(),
    }
}

trait HasNodes {
    fn nodes(&self) -> u64;
}

impl HasNodes for orchard_synthetic::SyntheticSummary {
    fn nodes(&self) -> u64 {
        self.nodes
    }
}
