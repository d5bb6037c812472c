//! How a search loop honours its unit's budget and the outside world's stop
//! requests without touching shared memory at every node.
//!
//! Every family's `explore` promises the same three things (see
//! [`ExploreContext`]): count the nodes it expands, stop after about
//! `budget` of them, and stop soon when asked; and, while it runs, publish
//! its count for heartbeats. A [`NodeMeter`] is that promise in one place:
//! the count and the budget are plain fields (the search's own cache line),
//! and the shared atomics are read only every `interval` nodes, in a cold
//! call.
//!
//! The meter only says *when* to stop. What a search hands back then (the
//! prefixes it reached but did not enter) is the family's: together with
//! what it explored they must cover the unit exactly.
//!
//! Loops that keep their count in a register and check it against a limit
//! they compute themselves (the queens ring, the knight's tours
//! sweep), that count steps rather than nodes (`busy-beaver`), or whose
//! searcher also runs outside any unit (`hip-solve`'s solver) do the same
//! by hand.

use std::sync::atomic::Ordering;

use crate::family::ExploreContext;

/// The node count of one exploration, its budget, and whether it is
/// stopping.
pub struct NodeMeter<'c, 'a> {
    nodes: u64,
    budget: u64,
    next_poll: u64,
    interval: u64,
    stopping: bool,
    ctx: &'c ExploreContext<'a>,
}

impl<'c, 'a> NodeMeter<'c, 'a> {
    /// A meter for an exploration under `ctx` that reads the shared atomics
    /// every `interval` nodes, and once now: a stop asked for before the
    /// unit started is honoured before its first node (the whole unit is
    /// then handed back, a valid rest).
    pub fn new(ctx: &'c ExploreContext<'a>, interval: u64) -> Self {
        let mut meter = NodeMeter {
            nodes: 0,
            budget: ctx.budget.max(1),
            next_poll: 0,
            interval: interval.max(1),
            stopping: false,
            ctx,
        };
        meter.poll();
        meter
    }

    /// Enters a node: counts it and returns `true`; or, once the budget is
    /// spent or a stop was asked for, returns `false` without counting, now
    /// and at every later call. A node entered may still see
    /// [`NodeMeter::stopping`] turn true (the poll at its count): its
    /// children are then handed back.
    #[inline(always)]
    pub fn enter(&mut self) -> bool {
        self.enter_with(|_| ())
    }

    /// [`NodeMeter::enter`], and at each poll also `on_poll(ctx)`: for a
    /// search that reads more of the context than the stop flag (`hc` reads
    /// the job's bound).
    #[inline(always)]
    pub fn enter_with(&mut self, on_poll: impl FnOnce(&ExploreContext<'a>)) -> bool {
        if self.stopping || self.nodes >= self.budget {
            self.stopping = true;
            return false;
        }
        self.nodes += 1;
        if self.nodes >= self.next_poll {
            self.poll();
            on_poll(self.ctx);
        }
        true
    }

    /// Stops the exploration (a search that cannot go on): every later
    /// [`NodeMeter::enter`] returns `false`.
    pub fn stop(&mut self) {
        self.stopping = true;
    }

    /// The context the meter reads.
    pub fn ctx(&self) -> &'c ExploreContext<'a> {
        self.ctx
    }

    /// Whether the exploration is stopping: every node not yet entered goes
    /// back as the rest.
    #[inline(always)]
    pub fn stopping(&self) -> bool {
        self.stopping
    }

    /// The nodes the budget still allows: what a kernel that runs
    /// unmetered (and cannot stop) may take at most.
    pub fn remaining(&self) -> u64 {
        self.budget.saturating_sub(self.nodes)
    }

    /// Counts `nodes` entered by such a kernel, at most
    /// [`NodeMeter::remaining`] (so the count cannot overflow); the next
    /// [`NodeMeter::enter`] polls if an interval has passed.
    pub fn count(&mut self, nodes: u64) {
        debug_assert!(nodes <= self.remaining(), "a kernel overran the budget");
        self.nodes += nodes;
    }

    /// The nodes entered so far.
    #[inline(always)]
    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    /// Publishes the final count and returns it.
    pub fn finish(self) -> u64 {
        self.ctx.progress.store(self.nodes, Ordering::Relaxed);
        self.nodes
    }

    /// Publishes the count and reads the stop flag.
    #[cold]
    #[inline(never)]
    fn poll(&mut self) {
        self.next_poll = self.nodes + self.interval;
        self.ctx.progress.store(self.nodes, Ordering::Relaxed);
        if self.ctx.stop_requested() {
            self.stopping = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64};

    fn with_ctx(budget: u64, stop: bool, f: impl FnOnce(&ExploreContext<'_>)) {
        let (stop, bound, progress, pieces) = (
            AtomicBool::new(stop),
            AtomicU64::new(0),
            AtomicU64::new(0),
            AtomicU32::new(0),
        );
        f(&ExploreContext {
            budget,
            stop: &stop,
            bound: &bound,
            progress: &progress,
            pieces: &pieces,
        });
    }

    /// The budget lets exactly that many nodes in, then none; the progress
    /// is published at every interval and at the end.
    #[test]
    fn the_budget_lets_in_that_many_nodes_and_progress_is_published() {
        with_ctx(10, false, |ctx| {
            let mut meter = NodeMeter::new(ctx, 4);
            let mut published = Vec::new();
            while meter.enter() {
                published.push(ctx.progress.load(Ordering::Relaxed));
            }
            assert_eq!(meter.nodes(), 10);
            assert!(meter.stopping());
            assert!(!meter.enter(), "a stopped meter stays stopped");
            assert_eq!(published, [0, 0, 0, 4, 4, 4, 4, 8, 8, 8]);
            assert_eq!(meter.finish(), 10);
            assert_eq!(ctx.progress.load(Ordering::Relaxed), 10);
        });
        // A budget of 0 is one node: every unit makes progress.
        with_ctx(0, false, |ctx| {
            let mut meter = NodeMeter::new(ctx, 4);
            assert!(meter.enter());
            assert!(!meter.enter());
        });
    }

    /// A stop asked for before the start lets no node in; one asked for
    /// while running is seen at the next poll, not before.
    #[test]
    fn a_stop_is_seen_at_the_start_and_at_the_next_poll() {
        with_ctx(100, true, |ctx| {
            let mut meter = NodeMeter::new(ctx, 4);
            assert!(!meter.enter());
            assert_eq!(meter.nodes(), 0);
        });
        with_ctx(100, false, |ctx| {
            let mut meter = NodeMeter::new(ctx, 4);
            assert!(meter.enter() && meter.enter());
            ctx.stop.store(true, Ordering::Relaxed);
            assert!(meter.enter() && !meter.stopping(), "node 3: no poll yet");
            assert!(
                meter.enter(),
                "node 4 is entered, and its poll sees the stop"
            );
            assert!(meter.stopping());
            assert!(!meter.enter());
            assert_eq!(meter.nodes(), 4);
        });
    }
}
