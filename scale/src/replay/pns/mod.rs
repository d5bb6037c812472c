//! The proof-number policy of the replay (`--policy pn`): the coordinator
//! holds the top of the game tree as a proof-number tree over one yes/no
//! question (for `hip-solve`: does the first player reach at least a draw,
//! or a win), and N workers settle its leaves with the family's own solver.
//! The policy of Čížek, Balko & Schmid's massively parallel proof-number
//! search (2025), with a budget instead of their inner df-pn:
//!
//! - the tree starts expanded to a depth (the job's root units' by
//!   default); every position is a node, its children the game's, one per
//!   canonical child; what the rules settle (a finished game, a ceiling
//!   below the question) is settled when the node is made;
//! - proof and disproof numbers as in plain proof-number search: an open
//!   leaf 1 and 1 (with `mobility`, the standard initialisation by
//!   mobility: where the prover moves 1 and its number of moves, where the
//!   other player moves the reverse, so that an unexplored position
//!   weighs what disproving, or proving, it needs at least; without it, a
//!   position whose every move must be refuted looks as cheap as one
//!   move, and the walk tries every sibling before it goes one ply
//!   deeper), a proven node 0 and infinity, a disproven one infinity and
//!   0; at a node where the prover moves (OR) the proof number is the
//!   least of its children's and the disproof number their sum; at the
//!   other's (AND) the reverse;
//! - an idle worker takes the most-proving leaf: from the root, at an OR
//!   node the child of least proof number, at an AND node the child of
//!   least disproof number (ties: the first in the search's move order),
//!   among the children with a leaf no worker holds; a leaf a worker holds
//!   counts *virtually* as `1 + virtual` for both numbers (Kaneko's virtual
//!   proof numbers: the workers already under a node are its likely
//!   increase), so the next worker is steered elsewhere, and the walk never
//!   ends at a held leaf: N workers hold N distinct leaves;
//! - a worker searches its leaf with a budget of `budget` nodes: if the
//!   leaf's cost (the family's solver on a fresh job, as a machine that ran
//!   nothing else yet) is within it, the leaf is settled after that many
//!   nodes; otherwise, after `budget` nodes, the coordinator expands it
//!   (its children become leaves) and the budget's nodes count as work;
//! - a settled node settles its parents as proof numbers say; every held
//!   leaf below a settled node, or whose position (up to symmetry) is
//!   settled elsewhere in the tree, is cancelled, its nodes so far counted
//!   as discarded; an open leaf whose position is settled elsewhere is
//!   settled when a walk reaches it, for nothing.
//!
//! Expansion by budget rather than by a cost threshold: the coordinator
//! never knows a position's cost before some worker has searched it, and a
//! worker's budget running out is what the coordinator already acts on
//! (the split). The budget is the policy's one granularity knob: the
//! largest amount of work a leaf can add to the critical path, and the
//! work lost on each expansion.
//!
//! Tables (`tables`, [`Tables`]): by default every leaf costs its cold cost
//! (a fresh job, an empty table: the cost is a property of the position and
//! is asked for only as far as the replay needs it). The warm models keep
//! tables across leaves instead: each worker's own table, persisting across
//! the leaves it searches ([`Tables::Worker`]), or one table that every
//! worker's search reads and writes ([`Tables::Job`], an optimistic bound
//! on a job-wide table of settled positions), or each worker's own table
//! and the lemmas the other workers' searches published by the time it
//! starts a leaf: [`Tables::Lemmas`], a search publishes its lemmas when it
//! ends, or would have ended had it not been cancelled; [`Tables::Stream`],
//! each lemma a fixed delay after its search stored it, as a real worker
//! sends them while it searches (a cancelled search's lemmas stored after
//! the cancellation are never sent). A leaf's cost then depends on
//! what its table saw before, so it is searched, to its end or its budget,
//! when its worker starts it, in the order of virtual time (workers that
//! start at the same time in worker order); a search cancelled after x
//! nodes counts x nodes, but its table keeps all it stored (optimistic: a
//! real worker stops storing at the cancellation). A worker learns lemmas
//! only when it starts a leaf, not while it searches one (pessimistic: a
//! real worker learns them as they come).
//!
//! What it leaves out, as the order policy does: round trips (leases,
//! expansions and cancellations are instant), lemmas' delays but for
//! [`Tables::Stream`]'s (and, but for it and [`Tables::Lemmas`], lemmas),
//! and the coordinator's own time on the tree.

use std::collections::HashMap;

use super::Outcome;

/// What the proof-number policy asks of the job: the game tree and the
/// cost and answer of a leaf. Positions are numbered by the game, equal
/// numbers for equal positions (up to symmetry).
pub trait PnGame {
    type Error;
    /// The root position.
    fn root(&mut self) -> Result<usize, Self::Error>;
    /// What the rules say of position `p` (see [`Position`]).
    fn position(&mut self, p: usize) -> Result<Position, Self::Error>;
    /// What settling `p`'s question costs a worker that starts from
    /// nothing, in nodes, and the answer, if the cost is at most `budget`
    /// (`None`: more). Asked with no larger a budget than the replay needs.
    fn cost_within(&mut self, p: usize, budget: u64) -> Result<Option<(u64, bool)>, Self::Error>;
    /// The warm models: forgets every table and makes `tables` empty ones
    /// (a replay starts), which share lemmas as `sharing` says.
    fn reset_tables(&mut self, tables: usize, sharing: Sharing) -> Result<(), Self::Error>;
    /// The warm models: searches `p`'s question on table `table` (whose
    /// contents persist from one search to the next) for at most `budget`
    /// nodes, starting at time `start`: the nodes and the answer, or `None`
    /// if the budget ran out. Sharing lemmas, the table first learns those
    /// published by then, and the search publishes its own (at its end, or
    /// each a delay after it stored it: [`Sharing`]).
    fn search_on(
        &mut self,
        table: usize,
        p: usize,
        budget: u64,
        start: u64,
    ) -> Result<Option<(u64, bool)>, Self::Error>;
    /// The warm models: the search that started at `start` on table
    /// `table` is cancelled at time `at`. Streaming lemmas
    /// ([`Sharing::Streamed`]), what it stored after `at` is never
    /// published (a real worker stops at the cancellation); the other
    /// models ignore it (their tables reproduce as before it existed).
    fn cancelled(&mut self, table: usize, start: u64, at: u64) -> Result<(), Self::Error>;
}

/// How the warm tables share lemmas ([`PnGame::reset_tables`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sharing {
    /// Not at all: a table sees its own searches only.
    None,
    /// A search's lemmas when it ends ([`Tables::Lemmas`]).
    AtEnd,
    /// Each lemma `delay` nodes of virtual time after its search stored
    /// it ([`Tables::Stream`]).
    Streamed { delay: u64 },
}

/// Where a leaf's search finds what earlier searches stored (see the
/// module's doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tables {
    /// A fresh, empty table every leaf.
    #[default]
    Cold,
    /// A table per worker, kept across the leaves it searches.
    Worker,
    /// One table for all the workers.
    Job,
    /// A table per worker, and the lemmas of the others' ended searches.
    Lemmas,
    /// A table per worker, and the lemmas of the others' searches, each
    /// `delay` nodes of virtual time after it was stored (0: the most a
    /// real exchange could do; a real worker trades every 250 ms, about
    /// 1e6 nodes of one core).
    Stream { delay: u64 },
}

impl Tables {
    /// The table a leaf of worker `w` is searched on (`None`: a fresh one).
    fn of_worker(self, w: usize) -> Option<usize> {
        match self {
            Tables::Cold => None,
            Tables::Worker | Tables::Lemmas | Tables::Stream { .. } => Some(w),
            Tables::Job => Some(0),
        }
    }
}

/// A position of the tree as the rules see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Position {
    /// The prover moves here (an OR node).
    pub or: bool,
    /// The answer if the rules alone give it.
    pub settled: Option<bool>,
    /// The positions after each move, in the search's move order. A
    /// position with none and no answer from the rules is a leaf only a
    /// worker's search settles, whatever its cost (never expanded).
    pub children: Vec<usize>,
}

/// The policy's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PnPolicy {
    /// Nodes a worker searches a leaf for before the coordinator expands it.
    pub budget: u64,
    /// What a held leaf adds to its proof and disproof numbers.
    pub virtual_pn: u64,
    /// Plies the tree is expanded to before any worker starts.
    pub depth: u32,
    /// An open leaf starts at its mobility (see the module's doc) rather
    /// than at 1 and 1.
    pub mobility: bool,
    /// What a leaf's search finds in its table.
    pub tables: Tables,
    /// Affinity, in per cent (0: none): an idle worker's walk prefers the
    /// way to the leaf it searched last, where its own table saw the
    /// most, over a best child whose number is at least `100 / affinity`
    /// of it (see [`tree::Tree::most_proving_toward`]).
    pub affinity: u64,
}

/// What a proof-number replay found beyond the [`Outcome`] (whose `nodes`
/// include the searches that ran out of budget, as a split's explored part
/// counts in a real run; `units_done` counts every leaf search that ended,
/// settled or expanded; nothing is pending, so `cancelled_pending` and
/// `speculative` are 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PnOutcome {
    pub outcome: Outcome,
    /// Leaves expanded after their budget ran out, and the nodes spent so.
    pub expansions: usize,
    pub budget_nodes: u64,
    /// Leaves settled by a worker's search.
    pub leaves_solved: usize,
    /// Nodes in the tree at the end.
    pub tree_nodes: usize,
    /// The root's answer (`None`: the replay ended without one, a bug).
    pub root: Option<bool>,
}

mod tree;

use tree::Tree;

/// A leaf on a worker.
#[derive(Debug, Clone, Copy)]
struct Held {
    leaf: usize,
    start: u64,
    /// When its search ends and how (`Some(v)`: settled to `v`; `None`:
    /// out of budget), once known.
    end: Option<(u64, Option<bool>)>,
}

/// [`replay_pn_watched`] unwatched.
#[cfg(test)]
pub fn replay_pn<G: PnGame>(
    game: &mut G,
    policy: PnPolicy,
    workers: usize,
) -> Result<PnOutcome, G::Error> {
    replay_pn_watched(game, policy, workers, &mut |_| {})
}

/// Replays the job under the proof-number policy with `workers` workers.
/// Deterministic: ties go to the lowest worker and the first child.
/// `watch` sees the outcome so far (its makespan the virtual time reached,
/// its root `None`) each time a leaf's search ends: a replay of a large
/// record runs for hours before its row.
pub fn replay_pn_watched<G: PnGame>(
    game: &mut G,
    policy: PnPolicy,
    workers: usize,
    watch: &mut dyn FnMut(&PnOutcome),
) -> Result<PnOutcome, G::Error> {
    let budget = policy.budget.max(1);
    let mut tree = Tree {
        nodes: Vec::new(),
        settled: HashMap::new(),
        by_pos: HashMap::new(),
        newly: Vec::new(),
        virtual_pn: policy.virtual_pn,
        mobility: policy.mobility,
    };
    let root = game.root()?;
    tree.add(game, root, None)?;
    // The top of the tree, expanded at the coordinator before any worker
    // starts, breadth first.
    let mut level = vec![0usize];
    for _ in 0..policy.depth {
        let mut next = Vec::new();
        for i in level {
            if tree.nodes[i].expandable && !tree.under_settled(i) {
                tree.expand(game, i)?;
                tree.update(i);
                next.extend(tree.nodes[i].children.iter().copied());
            }
        }
        level = next;
    }
    let mut slots: Vec<Option<Held>> = vec![None; workers.max(1)];
    // The leaf each worker searched last, for the affinity.
    let mut home: Vec<Option<usize>> = vec![None; slots.len()];
    match policy.tables {
        Tables::Cold => {}
        Tables::Worker => game.reset_tables(slots.len(), Sharing::None)?,
        Tables::Job => game.reset_tables(1, Sharing::None)?,
        Tables::Lemmas => game.reset_tables(slots.len(), Sharing::AtEnd)?,
        Tables::Stream { delay } => game.reset_tables(slots.len(), Sharing::Streamed { delay })?,
    }
    let mut out = PnOutcome {
        outcome: Outcome::none(workers),
        expansions: 0,
        budget_nodes: 0,
        leaves_solved: 0,
        tree_nodes: 0,
        root: None,
    };
    let mut now = 0u64;
    while tree.nodes[0].value.is_none() {
        for (w, slot) in slots.iter_mut().enumerate() {
            if slot.is_some() {
                continue;
            }
            let Some(leaf) = tree.most_proving_toward(home[w], policy.affinity) else {
                break;
            };
            home[w] = Some(leaf);
            tree.hold(leaf, true);
            // The warm models search the leaf now, on its worker's table.
            let end = match policy.tables.of_worker(w) {
                None => None,
                Some(t) => {
                    let cap = leaf_cap(&tree, leaf, budget);
                    Some(match game.search_on(t, tree.nodes[leaf].pos, cap, now)? {
                        Some((cost, v)) if cost <= cap => (now + cost, Some(v)),
                        _ => (now + cap, None),
                    })
                }
            };
            *slot = Some(Held {
                leaf,
                start: now,
                end,
            });
        }
        if tree.nodes[0].value.is_some() {
            break;
        }
        let Some(w) = next_end(game, &tree, &mut slots, budget)? else {
            break;
        };
        let done = slots[w].take().expect("found above");
        let (end, settled) = done.end.expect("known once it is the next to end");
        now = end;
        out.outcome.nodes += end - done.start;
        out.outcome.units_done += 1;
        out.outcome.makespan = now;
        out.tree_nodes = tree.nodes.len();
        watch(&out);
        tree.hold(done.leaf, false);
        match settled {
            Some(v) => {
                out.leaves_solved += 1;
                tree.nodes[done.leaf].value = Some(v);
                tree.update(done.leaf);
            }
            None => {
                out.expansions += 1;
                out.budget_nodes += end - done.start;
                // Every node of the position: it is one position.
                let pos = tree.nodes[done.leaf].pos;
                for j in tree.by_pos[&pos].clone() {
                    if !tree.nodes[j].expanded && tree.nodes[j].value.is_none() {
                        tree.expand(game, j)?;
                        tree.update(j);
                    }
                }
            }
        }
        // Cancel what the tree no longer needs: a held leaf none of whose
        // nodes (transpositions) is outside a settled subtree.
        for (w, slot) in slots.iter_mut().enumerate() {
            let Some(h) = *slot else { continue };
            if !tree.needed(h.leaf) {
                out.outcome.discarded += now - h.start;
                out.outcome.cancelled_running += 1;
                *slot = None;
                tree.hold(h.leaf, false);
                if let Some(t) = policy.tables.of_worker(w) {
                    game.cancelled(t, h.start, now)?;
                }
            }
        }
    }
    // Whatever still runs when the root is settled is cancelled.
    for h in slots.iter().flatten() {
        out.outcome.discarded += now - h.start;
        out.outcome.cancelled_running += 1;
    }
    out.outcome.makespan = now;
    out.tree_nodes = tree.nodes.len();
    out.root = tree.nodes[0].value;
    Ok(out)
}

/// The worker whose leaf search ends first (ties: the lowest worker),
/// asking the game only as far as the earliest end known so far and the
/// budget. `None`: no worker holds a leaf.
fn next_end<G: PnGame>(
    game: &mut G,
    tree: &Tree,
    slots: &mut [Option<Held>],
    budget: u64,
) -> Result<Option<usize>, G::Error> {
    let mut first: Option<(u64, usize)> = slots
        .iter()
        .enumerate()
        .filter_map(|(w, s)| s.and_then(|h| h.end).map(|e| (e.0, w)))
        .min();
    for (w, slot) in slots.iter_mut().enumerate() {
        let Some(h) = slot.as_mut().filter(|h| h.end.is_none()) else {
            continue;
        };
        let cap = leaf_cap(tree, h.leaf, budget);
        let ask = first.map_or(cap, |(e, _)| (e - h.start).min(cap));
        let end = match game.cost_within(tree.nodes[h.leaf].pos, ask)? {
            Some((cost, v)) => Some((h.start + cost, Some(v))),
            None if ask >= cap => Some((h.start + cap, None)),
            None => None,
        };
        if let Some(e) = end {
            h.end = Some(e);
            if first.is_none_or(|f| (e.0, w) < f) {
                first = Some((e.0, w));
            }
        }
    }
    Ok(first.map(|(_, w)| w))
}

/// The most a worker searches leaf `i` for: the budget, or to its end if
/// it has no children to expand into.
fn leaf_cap(tree: &Tree, i: usize, budget: u64) -> u64 {
    if tree.nodes[i].expandable {
        budget
    } else {
        u64::MAX
    }
}

/// One row of a proof-number replay table: the figures against its own
/// one-worker replay (as [`super::table`]'s), if that was made, and
/// against a yardstick given by the caller (the order policy's one worker:
/// the recorded run).
#[derive(Debug, Clone, Copy)]
pub struct PnRow {
    pub pn: PnOutcome,
    /// W(N) and efficiency against the policy's own one-worker replay;
    /// `None` where the worker counts asked leave out 1 (see [`pn_table`]).
    pub own: Option<OwnFigures>,
    /// (nodes + discarded) / the yardstick's nodes.
    pub w_yardstick: f64,
    /// The yardstick's nodes / (N T(N)).
    pub efficiency_yardstick: f64,
}

/// A row's W(N) and efficiency against the policy's own one-worker replay.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OwnFigures {
    /// (nodes + discarded) / the one-worker replay's.
    pub w: f64,
    /// T(1) / (N T(N)).
    pub efficiency: f64,
}

/// What [`pn_table`] calls with each row as it is made.
pub type RowDone<'a, G> = dyn FnMut(&mut G, &PnRow) -> Result<(), <G as PnGame>::Error> + 'a;

/// Replays with each of `workers`; `yardstick`: a one-worker work, in
/// nodes (the recorded run's), for the W(N) and efficiency every row has;
/// `watch` sees each replay's progress ([`replay_pn_watched`]); `done`
/// sees each row as it is made (with the game: to keep what it learnt so
/// far). The figures against the policy's own one-worker
/// replay are made only when `workers` holds 1, replayed first: on a
/// large record that replay alone costs several times the recorded run,
/// and the recorded run is the comparison that matters.
pub fn pn_table<G: PnGame>(
    game: &mut G,
    policy: PnPolicy,
    workers: &[usize],
    yardstick: u64,
    watch: &mut dyn FnMut(&PnOutcome),
    done: &mut RowDone<'_, G>,
) -> Result<Vec<PnRow>, G::Error> {
    let one = if workers.contains(&1) {
        Some(replay_pn_watched(game, policy, 1, watch)?)
    } else {
        None
    };
    workers
        .iter()
        .map(|&n| {
            let o = match one {
                Some(one) if n == 1 => one,
                _ => replay_pn_watched(game, policy, n, watch)?,
            };
            let span = n as f64 * o.outcome.makespan.max(1) as f64;
            let row = PnRow {
                pn: o,
                own: one.map(|one| OwnFigures {
                    w: o.outcome.work() as f64 / one.outcome.work().max(1) as f64,
                    efficiency: one.outcome.makespan as f64 / span,
                }),
                w_yardstick: o.outcome.work() as f64 / yardstick.max(1) as f64,
                efficiency_yardstick: yardstick as f64 / span,
            };
            done(game, &row)?;
            Ok(row)
        })
        .collect()
}

#[cfg(test)]
mod tests;
