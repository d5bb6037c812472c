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
//! starts a leaf ([`Tables::Lemmas`]: a search publishes its lemmas when it
//! ends, or would have ended had it not been cancelled). A leaf's cost then depends on
//! what its table saw before, so it is searched, to its end or its budget,
//! when its worker starts it, in the order of virtual time (workers that
//! start at the same time in worker order); a search cancelled after x
//! nodes counts x nodes, but its table keeps all it stored (optimistic: a
//! real worker stops storing at the cancellation).
//!
//! What it leaves out, as the order policy does: lemmas' delays (and, but
//! for [`Tables::Lemmas`], lemmas), round trips (leases, expansions and
//! cancellations are instant), and the coordinator's own time on the tree.

use std::collections::HashMap;

use super::{Outcome, Row};

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
    /// (a replay starts); with `lemmas`, the tables share lemmas.
    fn reset_tables(&mut self, tables: usize, lemmas: bool) -> Result<(), Self::Error>;
    /// The warm models: searches `p`'s question on table `table` (whose
    /// contents persist from one search to the next) for at most `budget`
    /// nodes, starting at time `start`: the nodes and the answer, or `None`
    /// if the budget ran out. Sharing lemmas, the table first learns those
    /// published by then, and the search publishes its own at its end.
    fn search_on(
        &mut self,
        table: usize,
        p: usize,
        budget: u64,
        start: u64,
    ) -> Result<Option<(u64, bool)>, Self::Error>;
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

/// Proof numbers' infinity.
const INF: u64 = u64::MAX / 4;

#[derive(Debug, Clone)]
struct Node {
    pos: usize,
    parent: Option<usize>,
    or: bool,
    children: Vec<usize>,
    expanded: bool,
    /// The position has children to expand into.
    expandable: bool,
    /// An open leaf's proof and disproof numbers, before virtual ones.
    init: (u64, u64),
    value: Option<bool>,
    /// A worker searches this leaf.
    held: bool,
    /// Proof and disproof numbers, held leaves counted virtually.
    pn: u64,
    dn: u64,
    /// Open leaves below that no worker holds.
    free: u64,
}

/// The tree at the coordinator.
struct Tree {
    nodes: Vec<Node>,
    /// What is settled, by position (a transposition settles for free).
    settled: HashMap<usize, bool>,
    /// The nodes of each position.
    by_pos: HashMap<usize, Vec<usize>>,
    /// Positions settled since [`Tree::update`] last looked.
    newly: Vec<usize>,
    virtual_pn: u64,
    mobility: bool,
}

impl Tree {
    /// A new node for position `pos`, settled if the rules or the tree
    /// already know its answer.
    fn add<G: PnGame>(
        &mut self,
        game: &mut G,
        pos: usize,
        parent: Option<usize>,
    ) -> Result<usize, G::Error> {
        let p = game.position(pos)?;
        let value = p.settled.or_else(|| self.settled.get(&pos).copied());
        let i = self.nodes.len();
        let kids = (p.children.len() as u64).max(1);
        let init = match (self.mobility, p.or) {
            (false, _) => (1, 1),
            (true, true) => (1, kids),
            (true, false) => (kids, 1),
        };
        self.nodes.push(Node {
            pos,
            parent,
            or: p.or,
            children: Vec::new(),
            expanded: false,
            expandable: !p.children.is_empty(),
            init,
            value,
            held: false,
            pn: 1,
            dn: 1,
            free: 1,
        });
        self.by_pos.entry(pos).or_default().push(i);
        self.refresh(i);
        Ok(i)
    }

    /// Expands leaf `i`: its children become leaves.
    fn expand<G: PnGame>(&mut self, game: &mut G, i: usize) -> Result<(), G::Error> {
        let kids = game.position(self.nodes[i].pos)?.children;
        let mut made = Vec::with_capacity(kids.len());
        for k in kids {
            made.push(self.add(game, k, Some(i))?);
        }
        let n = &mut self.nodes[i];
        n.children = made;
        n.expanded = true;
        Ok(())
    }

    /// Recomputes node `i` from its children (or its own state); whether
    /// anything changed.
    fn refresh(&mut self, i: usize) -> bool {
        let n = &self.nodes[i];
        let before = (n.pn, n.dn, n.free, n.value);
        let (mut value, pn, dn, free);
        value = n.value;
        if value.is_none() && n.expanded {
            let kids = n.children.iter().map(|&c| &self.nodes[c]);
            let (sum_pn, sum_dn, min_pn, min_dn, f) =
                kids.fold((0u64, 0u64, INF, INF, 0u64), |(sp, sd, mp, md, f), k| {
                    (
                        (sp + k.pn).min(INF),
                        (sd + k.dn).min(INF),
                        mp.min(k.pn),
                        md.min(k.dn),
                        f + k.free,
                    )
                });
            let (p, d) = if n.or {
                (min_pn, sum_dn)
            } else {
                (sum_pn, min_dn)
            };
            if p == 0 {
                value = Some(true);
            } else if d == 0 {
                value = Some(false);
            }
            (pn, dn, free) = match value {
                Some(_) => (0, 0, 0),
                None => (p, d, f),
            };
        } else {
            let v = if n.held { self.virtual_pn } else { 0 };
            (pn, dn, free) = (
                n.init.0 + v,
                n.init.1 + v,
                u64::from(!n.held && value.is_none()),
            );
        }
        let (pn, dn) = match value {
            Some(true) => (0, INF),
            Some(false) => (INF, 0),
            None => (pn, dn),
        };
        let pos = n.pos;
        let n = &mut self.nodes[i];
        n.pn = pn;
        n.dn = dn;
        n.free = if value.is_some() { 0 } else { free };
        n.value = value;
        if let Some(v) = value {
            if self.settled.insert(pos, v).is_none() {
                self.newly.push(pos);
            }
        }
        before != (pn, dn, self.nodes[i].free, value)
    }

    /// Refreshes `i` and its ancestors, as far as something changes; a
    /// position newly settled settles its other nodes (transpositions),
    /// and their ancestors in turn.
    fn update(&mut self, i: usize) {
        let mut work = vec![i];
        while let Some(mut i) = work.pop() {
            loop {
                let changed = self.refresh(i);
                match self.nodes[i].parent {
                    Some(p) if changed => i = p,
                    _ => break,
                }
            }
            for pos in std::mem::take(&mut self.newly) {
                let v = self.settled[&pos];
                for &j in &self.by_pos[&pos] {
                    if self.nodes[j].value.is_none() {
                        self.nodes[j].value = Some(v);
                        work.push(j);
                    }
                }
            }
        }
    }

    /// The most-proving leaf no worker holds (see the module's doc).
    fn most_proving(&self) -> Option<usize> {
        let mut i = 0;
        if self.nodes[0].free == 0 {
            return None;
        }
        while self.nodes[i].expanded {
            let n = &self.nodes[i];
            let open = n
                .children
                .iter()
                .copied()
                .filter(|&c| self.nodes[c].free > 0);
            i = if n.or {
                open.min_by_key(|&c| self.nodes[c].pn)
            } else {
                open.min_by_key(|&c| self.nodes[c].dn)
            }
            .expect("a node with a free leaf has a child with one");
        }
        Some(i)
    }

    /// Marks every open leaf of `i`'s position held by a worker (or no
    /// longer): one search settles them all.
    fn hold(&mut self, i: usize, held: bool) {
        let pos = self.nodes[i].pos;
        for j in self.by_pos[&pos].clone() {
            let n = &mut self.nodes[j];
            if !n.expanded && n.value.is_none() && n.held != held {
                n.held = held;
                self.update(j);
            }
        }
    }

    /// Whether some node of `i`'s position is outside every settled
    /// subtree (the root may still need its answer).
    fn needed(&self, i: usize) -> bool {
        self.by_pos[&self.nodes[i].pos]
            .iter()
            .any(|&j| !self.under_settled(j))
    }

    /// Whether node `i` or one of its ancestors is settled.
    fn under_settled(&self, mut i: usize) -> bool {
        loop {
            let n = &self.nodes[i];
            if n.value.is_some() {
                return true;
            }
            match n.parent {
                Some(p) => i = p,
                None => return false,
            }
        }
    }
}

/// A leaf on a worker.
#[derive(Debug, Clone, Copy)]
struct Held {
    leaf: usize,
    start: u64,
    /// When its search ends and how (`Some(v)`: settled to `v`; `None`:
    /// out of budget), once known.
    end: Option<(u64, Option<bool>)>,
}

/// Replays the job under the proof-number policy with `workers` workers.
/// Deterministic: ties go to the lowest worker and the first child.
pub fn replay_pn<G: PnGame>(
    game: &mut G,
    policy: PnPolicy,
    workers: usize,
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
    match policy.tables {
        Tables::Cold => {}
        Tables::Worker => game.reset_tables(slots.len(), false)?,
        Tables::Job => game.reset_tables(1, false)?,
        Tables::Lemmas => game.reset_tables(slots.len(), true)?,
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
            let Some(leaf) = tree.most_proving() else {
                break;
            };
            tree.hold(leaf, true);
            // The warm models search the leaf now, on its worker's table.
            let table = match policy.tables {
                Tables::Cold => None,
                Tables::Worker | Tables::Lemmas => Some(w),
                Tables::Job => Some(0),
            };
            let end = match table {
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
        for slot in slots.iter_mut() {
            let Some(h) = *slot else { continue };
            if !tree.needed(h.leaf) {
                out.outcome.discarded += now - h.start;
                out.outcome.cancelled_running += 1;
                *slot = None;
                tree.hold(h.leaf, false);
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
/// one-worker replay (as [`super::table`]'s), and against a yardstick
/// given by the caller (the order policy's one worker: the recorded run).
#[derive(Debug, Clone, Copy)]
pub struct PnRow {
    pub row: Row,
    pub pn: PnOutcome,
    /// (nodes + discarded) / the yardstick's nodes.
    pub w_yardstick: f64,
    /// The yardstick's nodes / (N T(N)).
    pub efficiency_yardstick: f64,
}

/// What [`pn_table`] calls with each row as it is made.
pub type RowDone<'a, G> = dyn FnMut(&mut G, &PnRow) -> Result<(), <G as PnGame>::Error> + 'a;

/// Replays with each of `workers` (and one worker, the yardstick of W(N)
/// and efficiency as the order policy's table has them); `yardstick`:
/// another one-worker work, in nodes, for the second pair of figures;
/// `done` sees each row as it is made (with the game: to keep what it
/// learnt so far).
pub fn pn_table<G: PnGame>(
    game: &mut G,
    policy: PnPolicy,
    workers: &[usize],
    yardstick: u64,
    done: &mut RowDone<'_, G>,
) -> Result<Vec<PnRow>, G::Error> {
    let one = replay_pn(game, policy, 1)?;
    workers
        .iter()
        .map(|&n| {
            let o = if n == 1 {
                one
            } else {
                replay_pn(game, policy, n)?
            };
            let span = n as f64 * o.outcome.makespan.max(1) as f64;
            let row = PnRow {
                row: Row {
                    outcome: o.outcome,
                    w: o.outcome.work() as f64 / one.outcome.work().max(1) as f64,
                    efficiency: one.outcome.makespan as f64 / span,
                },
                pn: o,
                w_yardstick: o.outcome.work() as f64 / yardstick.max(1) as f64,
                efficiency_yardstick: yardstick as f64 / span,
            };
            done(game, &row)?;
            Ok(row)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-made game: positions with children, a side to move, answers
    /// the rules give, and for the others a cost and an answer (what the
    /// solver would find); it counts what it was asked.
    #[derive(Default)]
    struct Tiny {
        or: Vec<bool>,
        settled: Vec<Option<bool>>,
        children: Vec<Vec<usize>>,
        cost: Vec<(u64, bool)>,
        /// How often each position's cost was asked for.
        asked: Vec<usize>,
        /// The warm models' tables: the positions each one searched.
        tables: Vec<Vec<usize>>,
        /// Shared lemmas: (published at, by table, position).
        lemmas: Option<Vec<(u64, usize, usize)>>,
    }

    impl Tiny {
        /// Adds a position; returns its number.
        fn pos(&mut self, or: bool, children: &[usize], cost: u64, answer: bool) -> usize {
            self.or.push(or);
            self.settled.push(None);
            self.children.push(children.to_vec());
            self.cost.push((cost, answer));
            self.asked.push(0);
            self.or.len() - 1
        }

        /// A position the rules settle.
        fn over(&mut self, answer: bool) -> usize {
            let p = self.pos(true, &[], 0, answer);
            self.settled[p] = Some(answer);
            p
        }
    }

    impl PnGame for Tiny {
        type Error = ();
        /// The last position added.
        fn root(&mut self) -> Result<usize, ()> {
            Ok(self.or.len() - 1)
        }
        fn position(&mut self, p: usize) -> Result<Position, ()> {
            Ok(Position {
                or: self.or[p],
                settled: self.settled[p],
                children: self.children[p].clone(),
            })
        }
        fn cost_within(&mut self, p: usize, budget: u64) -> Result<Option<(u64, bool)>, ()> {
            self.asked[p] += 1;
            Ok(Some(self.cost[p]).filter(|&(c, _)| c <= budget))
        }
        fn reset_tables(&mut self, tables: usize, lemmas: bool) -> Result<(), ()> {
            self.tables = vec![Vec::new(); tables];
            self.lemmas = lemmas.then(Vec::new);
            Ok(())
        }
        /// A warm table: a position whose parent the table searched, or
        /// another table published by `start`, costs half its cost.
        fn search_on(
            &mut self,
            table: usize,
            p: usize,
            budget: u64,
            start: u64,
        ) -> Result<Option<(u64, bool)>, ()> {
            let learnt = self.lemmas.iter().flatten();
            let learnt = learnt.filter(|&&(at, _, _)| at <= start).map(|l| l.2);
            let warm = self.tables[table]
                .iter()
                .copied()
                .chain(learnt)
                .any(|q| self.children[q].contains(&p));
            self.tables[table].push(p);
            let (cost, answer) = self.cost[p];
            let cost = if warm { cost / 2 } else { cost };
            if let Some(l) = self.lemmas.as_mut() {
                l.push((start + cost.min(budget), table, p));
            }
            Ok(Some((cost, answer)).filter(|&(c, _)| c <= budget))
        }
    }

    fn policy(budget: u64, depth: u32) -> PnPolicy {
        PnPolicy {
            budget,
            virtual_pn: 1,
            depth,
            mobility: false,
            tables: Tables::Cold,
        }
    }

    fn tree(game: &mut Tiny, depth: u32) -> Tree {
        let mut t = Tree {
            nodes: Vec::new(),
            settled: HashMap::new(),
            by_pos: HashMap::new(),
            newly: Vec::new(),
            virtual_pn: 1,
            mobility: false,
        };
        let root = game.root().unwrap();
        t.add(game, root, None).unwrap();
        let mut level = vec![0];
        for _ in 0..depth {
            let mut next = Vec::new();
            for i in level {
                if t.nodes[i].value.is_none() && t.nodes[i].expandable {
                    t.expand(game, i).unwrap();
                    t.update(i);
                    next.extend(t.nodes[i].children.clone());
                }
            }
            level = next;
        }
        t
    }

    /// OR root over two AND nodes of two and three leaves: the root's
    /// proof number is the smaller AND's (2), its disproof number the sum
    /// of the ANDs' (1 + 1); proving one leaf of the small AND leaves it
    /// 1, disproving a leaf of it disproves it (the root's disproof number
    /// falls to 1), and disproving the other AND disproves the root.
    #[test]
    fn proof_numbers_propagate() {
        let mut g = Tiny::default();
        let l: Vec<usize> = (0..5).map(|_| g.pos(true, &[], 10, true)).collect();
        let a = g.pos(false, &[l[0], l[1]], 100, true);
        let b = g.pos(false, &[l[2], l[3], l[4]], 100, true);
        g.pos(true, &[a, b], 1000, true);
        let mut t = tree(&mut g, 2);
        assert_eq!((t.nodes[0].pn, t.nodes[0].dn, t.nodes[0].free), (2, 2, 5));
        let leaf = |t: &Tree, p: usize| t.nodes.iter().position(|n| n.pos == p).unwrap();
        let (a_node, b_node) = (leaf(&t, a), leaf(&t, b));
        assert_eq!((t.nodes[a_node].pn, t.nodes[a_node].dn), (2, 1));
        assert_eq!((t.nodes[b_node].pn, t.nodes[b_node].dn), (3, 1));
        let l0 = leaf(&t, l[0]);
        t.nodes[l0].value = Some(true);
        t.update(l0);
        assert_eq!((t.nodes[a_node].pn, t.nodes[a_node].dn), (1, 1));
        assert_eq!((t.nodes[0].pn, t.nodes[0].dn, t.nodes[0].free), (1, 2, 4));
        let l1 = leaf(&t, l[1]);
        t.nodes[l1].value = Some(false);
        t.update(l1);
        assert_eq!(t.nodes[a_node].value, Some(false));
        assert_eq!((t.nodes[a_node].pn, t.nodes[a_node].dn), (INF, 0));
        assert_eq!((t.nodes[0].pn, t.nodes[0].dn, t.nodes[0].free), (3, 1, 3));
        assert_eq!(t.nodes[0].value, None);
        let l3 = leaf(&t, l[3]);
        t.nodes[l3].value = Some(false);
        t.update(l3);
        assert_eq!(t.nodes[0].value, Some(false));
        assert_eq!((t.nodes[0].pn, t.nodes[0].dn, t.nodes[0].free), (INF, 0, 0));
        assert_eq!(t.most_proving(), None);
        // Settled by a move that ends the game: an OR node with a child
        // the rules prove is proven when made.
        let mut g = Tiny::default();
        let x = g.pos(true, &[], 10, false);
        let won = g.over(true);
        g.pos(true, &[x, won], 10, false);
        let t = tree(&mut g, 1);
        assert_eq!(t.nodes[0].value, Some(true));
    }

    /// Virtual proof numbers: a held leaf counts 1 + virtual, so the next
    /// walk goes elsewhere; every walk ends at a leaf no worker holds.
    #[test]
    fn virtual_proof_numbers_spread_the_workers() {
        // OR root over AND a (two leaves) and AND b (three leaves).
        let mut g = Tiny::default();
        let l: Vec<usize> = (0..5).map(|_| g.pos(true, &[], 10, true)).collect();
        let a = g.pos(false, &[l[0], l[1]], 100, true);
        let b = g.pos(false, &[l[2], l[3], l[4]], 100, true);
        g.pos(true, &[a, b], 1000, true);
        let mut t = tree(&mut g, 2);
        t.virtual_pn = 2;
        let mut held = Vec::new();
        while let Some(leaf) = t.most_proving() {
            assert!(!t.nodes[leaf].held);
            t.nodes[leaf].held = true;
            t.update(leaf);
            held.push(t.nodes[leaf].pos);
        }
        // Virtual 2: a's pn 2 < b's 3: l0; then a is (1 + 2) + 1 = 4 > b's
        // 3: l2; then b is 3 + 2 = 5 > a's 4: l1; then a is held whole (no
        // free leaf): l3, l4.
        assert_eq!(held, vec![l[0], l[2], l[1], l[3], l[4]]);
        // Without virtual numbers the walk would take a's leaves first.
        let mut t = tree(&mut g, 2);
        t.virtual_pn = 0;
        let mut held = Vec::new();
        while let Some(leaf) = t.most_proving() {
            t.nodes[leaf].held = true;
            t.update(leaf);
            held.push(t.nodes[leaf].pos);
        }
        assert_eq!(held, vec![l[0], l[1], l[2], l[3], l[4]]);
    }

    /// Mobility: an open OR leaf starts at (1, its moves), an AND leaf at
    /// (its moves, 1); virtual numbers add to both.
    #[test]
    fn mobility_weighs_an_open_leaf_by_its_moves() {
        let mut g = Tiny::default();
        let l: Vec<usize> = (0..5).map(|_| g.pos(true, &[], 10, true)).collect();
        let a = g.pos(false, &[l[0], l[1]], 100, true);
        let b = g.pos(true, &[l[2], l[3], l[4]], 100, true);
        g.pos(true, &[a, b], 1000, true);
        let mut t = tree(&mut g, 0);
        t.mobility = true;
        t.expand(&mut g, 0).unwrap();
        t.update(0);
        let (na, nb) = (t.nodes[0].children[0], t.nodes[0].children[1]);
        assert_eq!((t.nodes[na].pn, t.nodes[na].dn), (2, 1));
        assert_eq!((t.nodes[nb].pn, t.nodes[nb].dn), (1, 3));
        // The OR root: least proof number, sum of disproof numbers.
        assert_eq!((t.nodes[0].pn, t.nodes[0].dn), (1, 4));
        assert_eq!(t.most_proving(), Some(nb));
        t.hold(nb, true);
        assert_eq!((t.nodes[nb].pn, t.nodes[nb].dn), (2, 4));
        assert_eq!((t.nodes[0].pn, t.nodes[0].dn), (2, 5));
        assert_eq!(t.most_proving(), Some(na));
    }

    /// Two workers on an OR root over two leaves: the cheap one proves
    /// the root, the other's search is cancelled and its nodes so far
    /// discarded; the expensive one's cost is asked only as far as needed.
    #[test]
    fn a_settled_root_cancels_the_other_workers() {
        let mut g = Tiny::default();
        let slow = g.pos(false, &[], 500, true);
        let fast = g.pos(false, &[], 30, true);
        g.pos(true, &[slow, fast], 10_000, true);
        let one = replay_pn(&mut g, policy(1000, 1), 1).unwrap();
        assert_eq!(one.root, Some(true));
        // One worker takes the first child (ties: move order) and proves.
        assert_eq!((one.outcome.nodes, one.outcome.makespan), (500, 500));
        assert_eq!(one.outcome.discarded, 0);
        let two = replay_pn(&mut g, policy(1000, 1), 2).unwrap();
        assert_eq!(two.root, Some(true));
        assert_eq!((two.outcome.nodes, two.outcome.discarded), (30, 30));
        assert_eq!(
            (two.outcome.makespan, two.outcome.cancelled_running),
            (30, 1)
        );
        // A subtree settled under a running leaf: AND a over leaves x (10,
        // disproved) and y (400): x disproves a, y is cancelled at 10;
        // the root (OR over a and z) goes on with z.
        let mut g = Tiny::default();
        let x = g.pos(true, &[], 10, false);
        let y = g.pos(true, &[], 400, true);
        let a = g.pos(false, &[y, x], 0, false);
        let z = g.pos(false, &[], 50, true);
        g.pos(true, &[a, z], 0, true);
        let out = replay_pn(&mut g, policy(1000, 2), 3).unwrap();
        assert_eq!(out.root, Some(true));
        // y, z, x start at 0; x ends at 10 (a disproved, y cancelled at
        // 10), z ends at 50 and proves the root.
        assert_eq!((out.outcome.nodes, out.outcome.discarded), (60, 10));
        assert_eq!(
            (out.outcome.makespan, out.outcome.cancelled_running),
            (50, 1)
        );
        assert_eq!(out.leaves_solved, 2);
    }

    /// A leaf whose search runs out of budget is expanded after the budget
    /// (its nodes count), and its children settle it.
    #[test]
    fn a_leaf_over_budget_is_expanded() {
        let mut g = Tiny::default();
        let c1 = g.pos(true, &[], 40, false);
        let c2 = g.pos(true, &[], 60, true);
        let big = g.pos(false, &[c1, c2], 5000, false);
        g.pos(true, &[big], 0, false);
        let out = replay_pn(&mut g, policy(100, 1), 1).unwrap();
        assert_eq!(out.root, Some(false));
        // big: 100 nodes then expanded; c1 (40) disproves it; c2 never runs.
        assert_eq!((out.expansions, out.budget_nodes), (1, 100));
        assert_eq!((out.outcome.nodes, out.outcome.makespan), (140, 140));
        assert_eq!((out.leaves_solved, out.tree_nodes), (1, 4));
        assert_eq!(g.asked[c2], 0);
        // With a budget above its cost, big is settled whole.
        let out = replay_pn(&mut g, policy(10_000, 1), 1).unwrap();
        assert_eq!((out.expansions, out.outcome.nodes), (0, 5000));
    }

    /// The warm models: a leaf is searched on its worker's table (worker
    /// tables) or on the one table (job), so that a child of a position
    /// searched on the same table costs less (the game's model: half).
    /// AND `big` over c2 (60, proved) and c1 (40, disproved), budget 100:
    /// `big` runs out on worker 0 and is expanded; worker 0 takes c2, worker
    /// 1 takes c1.
    #[test]
    fn warm_tables_price_a_leaf_by_what_its_table_saw() {
        let mut g = Tiny::default();
        let c1 = g.pos(true, &[], 40, false);
        let c2 = g.pos(true, &[], 60, true);
        let big = g.pos(false, &[c2, c1], 5000, false);
        g.pos(true, &[big], 0, false);
        let run = |g: &mut Tiny, tables, n| {
            let p = PnPolicy {
                tables,
                ..policy(100, 1)
            };
            let out = replay_pn(g, p, n).unwrap();
            assert_eq!(out.root, Some(false));
            let o = out.outcome;
            (o.nodes, o.discarded, o.makespan)
        };
        // Cold: c1 (40) disproves big at 140; c2 is cancelled at 40 nodes.
        assert_eq!(run(&mut g, Tables::Cold, 2), (140, 40, 140));
        // Worker tables: c2 is warm on worker 0 (30), c1 cold on worker 1
        // (40): c2 ends at 130, c1 disproves at 140.
        assert_eq!(run(&mut g, Tables::Worker, 2), (170, 0, 140));
        // The job's table: c1 is warm too (20) and disproves at 120; c2
        // is cancelled at 20 nodes.
        assert_eq!(run(&mut g, Tables::Job, 2), (120, 20, 120));
        // Lemmas: big's search, published at its end (100), warms c1 on
        // worker 1 as the job's table does.
        assert_eq!(run(&mut g, Tables::Lemmas, 2), (120, 20, 120));
        // One worker: the two models are one; c2 (30) then c1 (20).
        assert_eq!(run(&mut g, Tables::Worker, 1), (150, 0, 150));
        assert_eq!(run(&mut g, Tables::Job, 1), (150, 0, 150));
        // The cold model never searches on a table.
        g.tables.clear();
        run(&mut g, Tables::Cold, 2);
        assert!(g.tables.is_empty());
    }

    /// A position met twice (a transposition) is searched once: the
    /// second leaf is settled by the first's answer, for nothing.
    #[test]
    fn a_transposition_settles_for_free() {
        let mut g = Tiny::default();
        let t = g.pos(false, &[], 70, true);
        let u = g.pos(false, &[], 20, true);
        let a = g.pos(true, &[t], 0, true);
        let b = g.pos(true, &[u, t], 0, true);
        g.pos(false, &[a, b], 0, true);
        // AND root: a needs t; b needs t or u. One worker: t proves a, and
        // b's leaf t is proven by the same answer.
        let out = replay_pn(&mut g, policy(1000, 2), 1).unwrap();
        assert_eq!(out.root, Some(true));
        assert_eq!((out.outcome.nodes, out.leaves_solved), (70, 1));
    }

    /// A position met twice is searched by one worker at a time, and its
    /// search goes on while one of its nodes is still needed.
    #[test]
    fn a_transposition_is_held_once_and_cancelled_when_no_node_needs_it() {
        // AND root over a (OR: t) and b (OR: t, u); two workers: t (both
        // nodes held) and u; u proves b at 20, t proves a at 70.
        let mut g = Tiny::default();
        let t = g.pos(false, &[], 70, true);
        let u = g.pos(false, &[], 20, true);
        let a = g.pos(true, &[t], 0, true);
        let b = g.pos(true, &[t, u], 0, true);
        g.pos(false, &[a, b], 0, true);
        let out = replay_pn(&mut g, policy(1000, 2), 2).unwrap();
        assert_eq!(out.root, Some(true));
        assert_eq!((out.outcome.nodes, out.outcome.makespan), (90, 70));
        assert_eq!((out.outcome.discarded, out.leaves_solved), (0, 2));
        // OR root over a (AND: x, t) and b (AND: y, t); three workers take
        // x, y and t. x disproves a at 10: t is still needed under b; y
        // disproves b and the root at 15: t is cancelled then.
        let mut g = Tiny::default();
        let x = g.pos(true, &[], 10, false);
        let y = g.pos(true, &[], 15, false);
        let t = g.pos(true, &[], 100, true);
        let a = g.pos(false, &[x, t], 0, false);
        let b = g.pos(false, &[y, t], 0, false);
        g.pos(true, &[a, b], 0, false);
        let out = replay_pn(&mut g, policy(1000, 2), 3).unwrap();
        assert_eq!(out.root, Some(false));
        assert_eq!((out.outcome.nodes, out.outcome.makespan), (25, 15));
        assert_eq!(
            (out.outcome.discarded, out.outcome.cancelled_running),
            (15, 1)
        );
    }

    /// One worker's replay settles the root to the value of the game: a
    /// random tree's answer by plain AND/OR evaluation, whatever the budget
    /// (every leaf settled whole, or expanded down to the tree's ends).
    #[test]
    fn one_worker_settles_the_games_answer() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut rand = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for round in 0..40 {
            let mut g = Tiny::default();
            // Bottom-up: leaves first, each level's nodes over the last's.
            let mut level: Vec<usize> = (0..(4 + rand(8)))
                .map(|_| {
                    let v = rand(2) == 0;
                    if rand(5) == 0 {
                        g.over(v)
                    } else {
                        g.pos(true, &[], 1 + rand(50), v)
                    }
                })
                .collect();
            let mut or = round % 2 == 0;
            while level.len() > 1 {
                let mut next = Vec::new();
                let mut i = 0;
                while i < level.len() {
                    let k = (1 + rand(3) as usize).min(level.len() - i);
                    let kids = level[i..i + k].to_vec();
                    let v = if or {
                        kids.iter().any(|&c| g.cost[c].1)
                    } else {
                        kids.iter().all(|&c| g.cost[c].1)
                    };
                    // An inner node costs its subtree's leaves' cost.
                    let cost = kids.iter().map(|&c| g.cost[c].0).sum::<u64>() + 1;
                    next.push(g.pos(or, &kids, cost, v));
                    i += k;
                }
                level = next;
                or = !or;
            }
            let want = g.cost[level[0]].1;
            for budget in [1, 10, 1000] {
                for depth in [0, 1] {
                    for n in [1, 3] {
                        for tables in [Tables::Cold, Tables::Worker, Tables::Job, Tables::Lemmas] {
                            let p = PnPolicy {
                                tables,
                                ..policy(budget, depth)
                            };
                            let out = replay_pn(&mut g, p, n).unwrap();
                            assert_eq!(
                                out.root,
                                Some(want),
                                "round {round} budget {budget} N {n} {tables:?}"
                            );
                        }
                    }
                }
            }
        }
    }
}
