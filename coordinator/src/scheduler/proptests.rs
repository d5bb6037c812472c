//! A property test of the scheduler: random interleavings of leases,
//! heartbeats, reports (split, duplicate, late, aborted), lease expiry,
//! returned leases, cancellation and restarts from the committed writes
//! keep a job's units a partition of its tree and every count exact; run to
//! the end, the job merges every leaf exactly once.

use std::time::Duration;

use proptest::prelude::*;

use super::model::{Harness, TTL};
use super::report::PendingReport;
use super::{JobState, WorkerId};
use crate::store::UnitId;

const WORKERS: usize = 3;

#[derive(Debug, Clone)]
enum Op {
    Lease {
        w: usize,
        max: usize,
    },
    Heartbeat {
        w: usize,
    },
    /// A worker reports one of its units, explored within `budget` leaves;
    /// the report waits to be committed.
    Begin {
        w: usize,
        pick: usize,
        budget: u64,
    },
    Commit {
        pick: usize,
    },
    /// The commit failed.
    Abort {
        pick: usize,
    },
    /// A unit reported before is reported again.
    Again {
        pick: usize,
        budget: u64,
    },
    Return {
        w: usize,
    },
    Advance {
        ms: u64,
    },
    Restart,
}

fn op() -> impl Strategy<Value = Op> {
    let ttl = TTL.as_millis() as u64;
    prop_oneof![
        4 => (0..WORKERS, 1..4usize).prop_map(|(w, max)| Op::Lease { w, max }),
        2 => (0..WORKERS).prop_map(|w| Op::Heartbeat { w }),
        4 => (0..WORKERS, any::<usize>(), 1..12u64)
            .prop_map(|(w, pick, budget)| Op::Begin { w, pick, budget }),
        3 => any::<usize>().prop_map(|pick| Op::Commit { pick }),
        1 => any::<usize>().prop_map(|pick| Op::Abort { pick }),
        1 => (any::<usize>(), 1..12u64).prop_map(|(pick, budget)| Op::Again { pick, budget }),
        1 => (0..WORKERS).prop_map(|w| Op::Return { w }),
        2 => (0..2 * ttl).prop_map(|ms| Op::Advance { ms }),
        1 => Just(Op::Restart),
    ]
}

/// A worker as the test plays it: its id (until a restart makes it
/// register again) and the units it believes it runs.
struct Player {
    id: WorkerId,
    units: Vec<(UnitId, Vec<u8>)>,
}

struct Run {
    h: Harness,
    job: u64,
    leaves: u64,
    players: Vec<Player>,
    in_flight: Vec<PendingReport>,
    reported: Vec<(UnitId, Vec<u8>)>,
}

impl Run {
    /// The player's id, registering it again if the scheduler forgot it.
    fn id(&mut self, w: usize) -> WorkerId {
        if !self.h.s.knows_worker(self.players[w].id) {
            self.players[w].id = self.h.worker();
        }
        self.players[w].id
    }

    fn step(&mut self, op: &Op) {
        match *op {
            Op::Lease { w, max } => {
                let id = self.id(w);
                let got = self.h.lease(id, max);
                self.players[w].units.extend(got);
            }
            Op::Heartbeat { w } => {
                let id = self.id(w);
                let running: Vec<_> = self.players[w].units.iter().map(|u| (u.0, 1)).collect();
                let reply = self.h.s.heartbeat(id, &running, &[]).expect("registered");
                self.h.store.apply(&reply.writes);
                self.players[w]
                    .units
                    .retain(|u| !reply.cancel.contains(&u.0));
            }
            Op::Begin { w, pick, budget } => {
                let units = &mut self.players[w].units;
                if units.is_empty() {
                    return;
                }
                let (unit, payload) = units.remove(pick % units.len());
                // As the player that leased it: refused (never counted)
                // only if the unit went to another worker since a restart.
                let id = self.id(w);
                match self.h.begin_as(id, unit, &payload, budget) {
                    Ok(Some(p)) => self.in_flight.push(p),
                    Ok(None) | Err(super::SchedulerError::NotHeld(_)) => {}
                    Err(e) => panic!("a well-formed report refused: {e}"),
                }
                self.reported.push((unit, payload));
            }
            Op::Commit { pick } => {
                if !self.in_flight.is_empty() {
                    let p = self.in_flight.remove(pick % self.in_flight.len());
                    self.h.commit(p);
                }
            }
            Op::Abort { pick } => {
                if !self.in_flight.is_empty() {
                    let p = self.in_flight.remove(pick % self.in_flight.len());
                    self.h.s.abort_report(p.unit_id);
                }
            }
            Op::Again { pick, budget } => {
                if !self.reported.is_empty() {
                    let (unit, payload) = self.reported[pick % self.reported.len()].clone();
                    if let Some(p) = self.h.begin(unit, &payload, budget) {
                        self.in_flight.push(p);
                    }
                }
            }
            Op::Return { w } => {
                let id = self.id(w);
                let ids: Vec<_> = self.players[w].units.drain(..).map(|u| u.0).collect();
                self.h.s.return_leases(id, &ids);
            }
            Op::Advance { ms } => {
                self.h.advance(Duration::from_millis(ms));
            }
            Op::Restart => {
                let counts = |r: &Run| {
                    let j = r.h.s.job(r.job).unwrap();
                    (j.state(), j.units_total(), j.units_done(), j.nodes_done())
                };
                let before = counts(self);
                self.in_flight.clear();
                self.h.restart();
                // A job that is over keeps its state; its units are not loaded.
                if before.0 == JobState::Running {
                    assert_eq!(counts(self), before, "a restart changed the job");
                } else {
                    assert_eq!(counts(self).0, before.0);
                }
            }
        }
    }

    /// Commits what is in flight, then runs every unit left to the end.
    fn drain(&mut self) {
        for p in std::mem::take(&mut self.in_flight) {
            self.h.commit(p);
        }
        for _ in 0..10_000 {
            if self.h.s.job(self.job).unwrap().state() != JobState::Running {
                return;
            }
            self.h.advance(TTL);
            let w = self.h.worker();
            for (u, p) in self.h.lease(w, 1000) {
                assert!(self.h.report(u, &p, u64::MAX), "a fresh lease's report");
                self.h.check(self.job, self.leaves);
            }
        }
        panic!("the job does not finish");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    #[test]
    fn units_stay_a_partition_and_counts_stay_exact(
        leaves in 8..160u64,
        roots in 1..5u64,
        ops in proptest::collection::vec(op(), 1..80),
        cancel_at in proptest::option::weighted(0.15, 0..80usize),
    ) {
        let mut h = Harness::new();
        let job = h.submit("leaves", leaves, roots.min(leaves), None);
        let players = (0..WORKERS).map(|_| Player { id: h.worker(), units: Vec::new() }).collect();
        let mut run = Run { h, job, leaves, players, in_flight: Vec::new(), reported: Vec::new() };
        let mut cancelled = false;
        for (i, op) in ops.iter().enumerate() {
            if cancel_at == Some(i) {
                cancelled = run.h.cancel(job);
                prop_assert!(cancelled || run.h.s.job(job).unwrap().state() == JobState::Done);
            }
            run.step(op);
            run.h.check(job, leaves);
        }
        run.drain();
        let h = &mut run.h;
        let j = h.s.job(job).unwrap();
        let (stored, done, nodes) = h.store.counts(job);
        if cancelled {
            prop_assert_eq!(j.state(), JobState::Cancelled);
            prop_assert!(h.s.units.is_empty());
            h.restart();
            prop_assert_eq!(h.s.job(job).unwrap().state(), JobState::Cancelled);
            prop_assert!(h.store.loaded().units.is_empty());
        } else {
            prop_assert_eq!(j.state(), JobState::Done);
            let report = &h.finished[&job];
            prop_assert_eq!(report["leaves"].as_u64(), Some(leaves));
            prop_assert_eq!(report["distinct"].as_u64(), Some(leaves));
            prop_assert_eq!(report["twice"].as_u64(), Some(0));
            prop_assert_eq!(j.nodes_done(), leaves);
            prop_assert_eq!(j.units_done(), j.units_total());
            prop_assert_eq!((stored, done, nodes), (j.units_total(), j.units_total(), leaves));
        }
    }
}
