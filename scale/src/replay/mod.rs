//! Replay: a job's scheduling with N simulated workers in virtual time,
//! from a record of its units, to predict how its work and wall time grow
//! with the number of machines (issue 65). Each unit has a cost in nodes,
//! a place among the others (the units a split of it made) and what it
//! found; an [`Oracle`] answers the family's questions (is this unit moot
//! now, must it wait for an elder sibling), so the replay leases units as
//! the coordinator's scheduler does:
//!
//! - pending units go in position order (the sequential search's order),
//!   those that must wait ("young brothers wait") after the others, so an
//!   idle worker speculates on a must-wait unit only when nothing else is
//!   pending;
//! - a unit ends `cost` nodes after it starts (one node per unit of
//!   virtual time on every worker); its result is merged and the units its
//!   split made become pending;
//! - after each merge every live unit that became moot is cancelled: a
//!   pending one is never run, a running one stops, and the nodes it had
//!   searched count as discarded.
//!
//! What it leaves out, and so where it can disagree with a real run: a
//! unit costs the same whichever worker runs it and whatever ran before it
//! (a real worker's table holds what its earlier units settled, lemmas
//! bring what other workers settled, so a unit's cost depends on both);
//! splits by request (an idle worker with nothing pending, not even a
//! must-wait unit, asks a running unit to split, and the pieces' costs are
//! not in the record: here that worker stays idle); round trips, heartbeat
//! delays and the judge's refresh interval (here cancellation and leasing
//! are instant); a unit's window narrowed at lease time (here it finds
//! what the record says).
//!
//! That is the coordinator's policy (`--policy order`); `pns` replays
//! another, a proof-number tree over the top of the game tree held at the
//! coordinator, to predict what building it would give.

pub mod hip;
pub mod pns;
pub mod record;

use std::collections::BTreeSet;

/// What the replay asks of the job: its units and the family's answers.
/// Units are numbered in position order (the order the coordinator leases
/// pending units in).
pub trait Oracle {
    type Error;
    /// The units pending when the job starts, in position order.
    fn roots(&self) -> Vec<usize>;
    /// The units a split of `unit` made (its rest), pending once it ends.
    fn rest(&self, unit: usize) -> Vec<usize>;
    /// What `unit` costs, in nodes, if it is at most `budget` (`None`: it
    /// costs more). Asked with a budget as large as the replay needs to
    /// know (up to the next event's time), so that an oracle that has to
    /// search a unit to learn its cost searches no further than that.
    fn cost_within(&mut self, unit: usize, budget: u64) -> Result<Option<u64>, Self::Error>;
    /// Forgets everything merged (a replay starts).
    fn reset(&mut self);
    /// Merges what `unit` found.
    fn merge(&mut self, unit: usize) -> Result<(), Self::Error>;
    /// Whether `unit` can no longer change the answer, given what was merged.
    fn is_moot(&self, unit: usize) -> bool;
    /// Whether leasing `unit` now would be speculative (young brothers wait).
    fn must_wait(&self, unit: usize) -> bool;
}

/// What one replay with N workers found; time in nodes of one worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    pub workers: usize,
    /// Nodes of the units that ended (were merged).
    pub nodes: u64,
    /// Nodes searched in units cancelled as moot while running.
    pub discarded: u64,
    /// When the last unit ended.
    pub makespan: u64,
    pub units_done: usize,
    /// Units cancelled while running, and while pending (never run).
    pub cancelled_running: usize,
    pub cancelled_pending: usize,
    /// Units leased while they had to wait (speculation).
    pub speculative: usize,
}

impl Outcome {
    /// Nothing done yet, by `workers` workers.
    pub fn none(workers: usize) -> Outcome {
        Outcome {
            workers,
            nodes: 0,
            discarded: 0,
            makespan: 0,
            units_done: 0,
            cancelled_running: 0,
            cancelled_pending: 0,
            speculative: 0,
        }
    }
}

impl Outcome {
    /// The work done, kept and discarded.
    pub fn work(&self) -> u64 {
        self.nodes + self.discarded
    }
}

/// A unit on a worker.
#[derive(Debug, Clone, Copy)]
struct Running {
    unit: usize,
    start: u64,
    /// When it ends, once the oracle said (see [`Oracle::cost_within`]).
    end: Option<u64>,
}

/// Replays the job with `workers` workers (see the module's doc).
/// Deterministic: ties go to the lowest worker and the first unit in
/// position order.
pub fn replay<O: Oracle>(oracle: &mut O, workers: usize) -> Result<Outcome, O::Error> {
    oracle.reset();
    let mut pending: BTreeSet<usize> = oracle.roots().into_iter().collect();
    let mut slots: Vec<Option<Running>> = vec![None; workers.max(1)];
    let mut out = Outcome::none(workers);
    let mut now = 0u64;
    loop {
        for slot in slots.iter_mut().filter(|s| s.is_none()) {
            let free = pending.iter().copied().find(|&u| !oracle.must_wait(u));
            let Some(unit) = free.or_else(|| pending.first().copied()) else {
                break;
            };
            out.speculative += usize::from(free.is_none());
            pending.remove(&unit);
            *slot = Some(Running {
                unit,
                start: now,
                end: None,
            });
        }
        let Some(w) = next_end(oracle, &mut slots)? else {
            break;
        };
        let done = slots[w].take().expect("found above");
        let end = done.end.expect("known once it is the next to end");
        now = end;
        out.nodes += end - done.start;
        out.units_done += 1;
        oracle.merge(done.unit)?;
        pending.extend(oracle.rest(done.unit));
        for slot in slots.iter_mut() {
            if let Some(r) = *slot {
                if oracle.is_moot(r.unit) {
                    out.discarded += now - r.start;
                    out.cancelled_running += 1;
                    *slot = None;
                }
            }
        }
        let moot: Vec<usize> = pending
            .iter()
            .copied()
            .filter(|&u| oracle.is_moot(u))
            .collect();
        for u in moot {
            pending.remove(&u);
            out.cancelled_pending += 1;
        }
    }
    out.makespan = now;
    Ok(out)
}

/// The worker whose unit ends first (ties: the lowest worker), finding
/// the ends the oracle did not give yet only as far as the earliest end
/// known so far: a unit that ends later needs no cost. `None`: no unit
/// runs.
fn next_end<O: Oracle>(
    oracle: &mut O,
    slots: &mut [Option<Running>],
) -> Result<Option<usize>, O::Error> {
    let mut first: Option<(u64, usize)> = slots
        .iter()
        .enumerate()
        .filter_map(|(w, s)| s.and_then(|r| r.end).map(|e| (e, w)))
        .min();
    for (w, slot) in slots.iter_mut().enumerate() {
        let Some(r) = slot.as_mut().filter(|r| r.end.is_none()) else {
            continue;
        };
        let budget = first.map_or(u64::MAX, |(e, _)| e - r.start);
        if let Some(cost) = oracle.cost_within(r.unit, budget)? {
            let end = r.start + cost;
            r.end = Some(end);
            if first.is_none_or(|f| (end, w) < f) {
                first = Some((end, w));
            }
        }
    }
    Ok(first.map(|(_, w)| w))
}

/// One row of a replay table: N, the outcome, and the figures against the
/// one-worker replay.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub outcome: Outcome,
    /// (nodes + discarded) / the one-worker replay's nodes.
    pub w: f64,
    /// T(1) / (N T(N)).
    pub efficiency: f64,
}

/// Replays with each of `workers` (and one worker, the yardstick).
pub fn table<O: Oracle>(oracle: &mut O, workers: &[usize]) -> Result<Vec<Row>, O::Error> {
    let one = replay(oracle, 1)?;
    workers
        .iter()
        .map(|&n| {
            let o = if n == 1 { one } else { replay(oracle, n)? };
            Ok(Row {
                outcome: o,
                w: o.work() as f64 / one.work().max(1) as f64,
                efficiency: one.makespan as f64 / (n as f64 * o.makespan.max(1) as f64),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-made job: units with costs, elder siblings that cut off
    /// younger ones (once `cuts[i]` is merged, the units it lists are
    /// moot), and units that wait while an elder is not merged.
    struct Tiny {
        costs: Vec<u64>,
        cuts: Vec<Vec<usize>>,
        /// `waits_for[i]`: the unit i waits for, if any.
        waits_for: Vec<Option<usize>>,
        rest: Vec<Vec<usize>>,
        roots: Vec<usize>,
        merged: Vec<bool>,
    }

    impl Tiny {
        fn new(costs: &[u64]) -> Tiny {
            let n = costs.len();
            Tiny {
                costs: costs.to_vec(),
                cuts: vec![Vec::new(); n],
                waits_for: vec![None; n],
                rest: vec![Vec::new(); n],
                roots: (0..n).collect(),
                merged: vec![false; n],
            }
        }
    }

    impl Oracle for Tiny {
        type Error = ();
        fn roots(&self) -> Vec<usize> {
            self.roots.clone()
        }
        fn rest(&self, unit: usize) -> Vec<usize> {
            self.rest[unit].clone()
        }
        fn cost_within(&mut self, unit: usize, budget: u64) -> Result<Option<u64>, ()> {
            Ok(Some(self.costs[unit]).filter(|&c| c <= budget))
        }
        fn reset(&mut self) {
            self.merged.iter_mut().for_each(|m| *m = false);
        }
        fn merge(&mut self, unit: usize) -> Result<(), ()> {
            self.merged[unit] = true;
            Ok(())
        }
        fn is_moot(&self, unit: usize) -> bool {
            (0..self.costs.len()).any(|e| self.merged[e] && self.cuts[e].contains(&unit))
        }
        fn must_wait(&self, unit: usize) -> bool {
            self.waits_for[unit].is_some_and(|e| !self.merged[e])
        }
    }

    /// Two siblings: the elder (10 nodes) cuts off the younger (30), which
    /// waits for it. One worker never runs the younger; two run it
    /// speculatively and discard the 10 nodes it searched when the elder
    /// ended: W(2) = 20 / 10.
    #[test]
    fn an_elder_sibling_that_cuts_off_makes_the_speculation_discarded() {
        let mut t = Tiny::new(&[10, 30]);
        t.cuts[0] = vec![1];
        t.waits_for[1] = Some(0);
        let rows = table(&mut t, &[1, 2, 4]).unwrap();
        let one = rows[0].outcome;
        assert_eq!((one.nodes, one.discarded, one.makespan), (10, 0, 10));
        assert_eq!((one.units_done, one.cancelled_pending), (1, 1));
        let two = rows[1].outcome;
        assert_eq!((two.nodes, two.discarded, two.makespan), (10, 10, 10));
        assert_eq!((two.cancelled_running, two.speculative), (1, 1));
        assert_eq!(rows[1].w, 2.0);
        assert_eq!(rows[1].efficiency, 0.5);
        // Four workers: nothing more to lease.
        assert_eq!(rows[2].outcome, Outcome { workers: 4, ..two });
    }

    /// The younger sibling, cheaper, ends first and cuts off the elder
    /// (as [0,24] refuted before [0,4] on 5x5 at N = 2): the elder's
    /// nodes so far are discarded.
    #[test]
    fn a_younger_sibling_that_ends_first_cuts_off_the_elder() {
        let mut t = Tiny::new(&[50, 20]);
        t.cuts[0] = vec![1];
        t.cuts[1] = vec![0];
        t.waits_for[1] = Some(0);
        let rows = table(&mut t, &[1, 2]).unwrap();
        assert_eq!((rows[0].outcome.work(), rows[0].outcome.makespan), (50, 50));
        let two = rows[1].outcome;
        assert_eq!((two.nodes, two.discarded, two.makespan), (20, 20, 20));
        assert_eq!(rows[1].w, 40.0 / 50.0);
        assert_eq!(rows[1].efficiency, 50.0 / 40.0);
    }

    /// Independent units spread over the workers; a split's rest becomes
    /// pending when its unit ends.
    #[test]
    fn independent_units_and_a_split_rest_fill_the_workers() {
        let mut t = Tiny::new(&[40, 10, 10, 20, 20]);
        t.roots = vec![0, 1, 2];
        t.rest[1] = vec![3, 4];
        let rows = table(&mut t, &[1, 2, 3]).unwrap();
        assert_eq!(rows[0].outcome.makespan, 100);
        // Two: 0 on one worker (0..40); 1, then 3 and 4 and 2 on the other
        // in position order: 1 (0..10), 2 (10..20), 3 (20..40), 4 (40..60).
        assert_eq!(rows[1].outcome.makespan, 60);
        assert_eq!(rows[1].w, 1.0);
        // Three: 0 (0..40), 1 (0..10) then 3 (10..30), 2 (0..10) then 4 (10..30).
        assert_eq!(rows[2].outcome.makespan, 40);
        assert_eq!(rows[2].outcome.units_done, 5);
    }

    #[test]
    fn a_replay_is_deterministic() {
        let mut t = Tiny::new(&[7, 3, 9, 3, 5, 8, 2, 6]);
        t.cuts[2] = vec![5, 6];
        t.waits_for[5] = Some(2);
        t.waits_for[6] = Some(2);
        t.cuts[4] = vec![0];
        let a = table(&mut t, &[1, 2, 3, 4, 8]).unwrap();
        let b = table(&mut t, &[1, 2, 3, 4, 8]).unwrap();
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.outcome, y.outcome);
        }
    }
}
