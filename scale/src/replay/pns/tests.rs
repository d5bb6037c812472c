//! The proof-number replay on hand-made games and real boards.

use super::tree::INF;
use super::*;

/// A streamed lemma of [`Tiny`]: (search start, stamp, by table,
/// position searched).
type TinyLemma = (u64, u64, usize, usize);

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
    /// Streamed lemmas: the delay, and each search's lemma; a search of
    /// `p` stores its lemma halfway through.
    stream: Option<(u64, Vec<TinyLemma>)>,
    /// Positions whose search also warms these (beside their children).
    warms: Vec<Vec<usize>>,
    /// The cancellations the replay reported: (table, start, at).
    cancelled: Vec<(usize, u64, u64)>,
}

impl Tiny {
    /// Adds a position; returns its number.
    fn pos(&mut self, or: bool, children: &[usize], cost: u64, answer: bool) -> usize {
        self.or.push(or);
        self.settled.push(None);
        self.children.push(children.to_vec());
        self.cost.push((cost, answer));
        self.asked.push(0);
        self.warms.push(Vec::new());
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
    fn reset_tables(&mut self, tables: usize, sharing: Sharing) -> Result<(), ()> {
        self.tables = vec![Vec::new(); tables];
        self.lemmas = (sharing == Sharing::AtEnd).then(Vec::new);
        self.stream = match sharing {
            Sharing::Streamed { delay } => Some((delay, Vec::new())),
            _ => None,
        };
        self.cancelled.clear();
        Ok(())
    }
    /// A warm table: a position whose parent (or a position that warms
    /// it) the table searched, or another table published by `start`,
    /// costs half its cost.
    fn search_on(
        &mut self,
        table: usize,
        p: usize,
        budget: u64,
        start: u64,
    ) -> Result<Option<(u64, bool)>, ()> {
        let learnt = self.lemmas.iter().flatten();
        let learnt = learnt.filter(|&&(at, _, _)| at <= start).map(|l| l.2);
        let streamed = self.stream.iter().flat_map(|(delay, l)| {
            l.iter()
                .filter(move |&&(s, stamp, by, _)| {
                    by != table && s.saturating_add(stamp).saturating_add(*delay) <= start
                })
                .map(|l| l.3)
        });
        let warm = self.tables[table]
            .iter()
            .copied()
            .chain(learnt)
            .chain(streamed)
            .any(|q| self.children[q].contains(&p) || self.warms[q].contains(&p));
        self.tables[table].push(p);
        let (cost, answer) = self.cost[p];
        let cost = if warm { cost / 2 } else { cost };
        if let Some(l) = self.lemmas.as_mut() {
            l.push((start + cost.min(budget), table, p));
        }
        if let Some((_, l)) = self.stream.as_mut() {
            if cost / 2 <= budget {
                l.push((start, cost / 2, table, p));
            }
        }
        Ok(Some((cost, answer)).filter(|&(c, _)| c <= budget))
    }
    /// Streaming, a lemma stored after the cancellation is dropped.
    fn cancelled(&mut self, table: usize, start: u64, at: u64) -> Result<(), ()> {
        self.cancelled.push((table, start, at));
        if let Some((_, l)) = self.stream.as_mut() {
            l.retain(|&(s, stamp, by, _)| !(by == table && s == start && s + stamp > at));
        }
        Ok(())
    }
}

fn policy(budget: u64, depth: u32) -> PnPolicy {
    PnPolicy {
        budget,
        virtual_pn: 1,
        depth,
        mobility: false,
        tables: Tables::Cold,
        affinity: 0,
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
    // Streaming: big's lemma would be stored at 2500, after its budget
    // ran out: none is, and it is the worker tables' run.
    assert_eq!(run(&mut g, Tables::Stream { delay: 0 }, 2), (170, 0, 140));
    // The cold model never searches on a table.
    g.tables.clear();
    run(&mut g, Tables::Cold, 2);
    assert!(g.tables.is_empty());
}

/// Streamed lemmas: AND root over P (a leaf without children: searched to
/// its end, 160 nodes, its lemma stored at 80, warming X), R (99) and Q
/// (OR over X, 5000: runs out at 100 and is expanded). Three workers take
/// P, R and Q at 0; R's worker (idle from 99) takes X at 100, its table
/// having seen neither P nor Q. X costs 200 cold, 100 warm: warm exactly
/// when P's lemma is published by 100 (80 + delay <= 100); worker tables
/// never warm it. (Lemmas at a search's end warm it through Q's search,
/// published when its budget ran out at 100, X below it; streamed, Q's
/// lemma would be stored at 2500, past its budget, so it never is.)
#[test]
fn a_streamed_lemma_saves_nodes_only_after_its_delay() {
    let mut g = Tiny::default();
    let x = g.pos(true, &[], 200, true);
    let p = g.pos(true, &[], 160, true);
    g.warms[p].push(x);
    let r = g.pos(true, &[], 99, true);
    let q = g.pos(true, &[x], 5000, true);
    g.pos(false, &[p, r, q], 0, true);
    let run = |g: &mut Tiny, tables| {
        let pol = PnPolicy {
            tables,
            ..policy(100, 1)
        };
        let out = replay_pn(g, pol, 3).unwrap();
        assert_eq!(out.root, Some(true), "{tables:?}");
        let o = out.outcome;
        (o.nodes, o.discarded, o.makespan)
    };
    // P 160, R 99, Q 100, X 200 (from 100 to 300).
    let cold = (559, 0, 300);
    // X warm: 100 nodes, from 100 to 200.
    let warm = (459, 0, 200);
    assert_eq!(run(&mut g, Tables::Worker), cold);
    assert_eq!(run(&mut g, Tables::Lemmas), warm);
    assert_eq!(run(&mut g, Tables::Stream { delay: 0 }), warm);
    assert_eq!(run(&mut g, Tables::Stream { delay: 20 }), warm);
    assert_eq!(run(&mut g, Tables::Stream { delay: 21 }), cold);
    assert_eq!(run(&mut g, Tables::Stream { delay: u64::MAX }), cold);
    assert!(g.cancelled.is_empty());
}

/// The replay tells the game which search it cancels, on which table and
/// when (the game drops, streaming, what that search stored after). The
/// second game of `a_settled_root_cancels_the_other_workers`: y, z and x
/// start at 0, y on worker 1; x disproves `a` at 10 and y is cancelled
/// then, before its lemma (at 200) was stored.
#[test]
fn a_cancelled_search_is_reported_to_the_game() {
    let mut g = Tiny::default();
    let x = g.pos(true, &[], 10, false);
    let y = g.pos(true, &[], 400, true);
    let a = g.pos(false, &[y, x], 0, false);
    let z = g.pos(false, &[], 50, true);
    g.pos(true, &[a, z], 0, true);
    for tables in [Tables::Worker, Tables::Stream { delay: 0 }] {
        let pol = PnPolicy {
            tables,
            ..policy(1000, 2)
        };
        let out = replay_pn(&mut g, pol, 3).unwrap();
        assert_eq!(out.root, Some(true));
        let o = out.outcome;
        assert_eq!((o.nodes, o.discarded, o.makespan), (60, 10, 50));
        assert_eq!(g.cancelled, vec![(1, 0, 10)], "{tables:?}");
    }
    // x's and z's lemmas (at 5 and 25) are kept; y's never was stored.
    let kept: Vec<usize> = g.stream.as_ref().unwrap().1.iter().map(|l| l.3).collect();
    assert_eq!(kept, vec![z, x]);
    // The cold model has no tables to tell.
    g.cancelled.clear();
    replay_pn(&mut g, policy(1000, 2), 3).unwrap();
    assert!(g.cancelled.is_empty());
}

/// Affinity: one worker, worker tables, budget 100, an OR root over
/// AND nodes `a` (children a1, a2, each 40 nodes cold, proved) and `b`
/// (one child, 5000 nodes, disproved). `a` runs out first and is
/// expanded; its proof number (2) is then twice `b`'s (1). The plain
/// walk goes to `b` and its 5000-node child (2500, warm after `b`) before
/// coming back to `a`'s children (warm too: 20 each); with an
/// affinity of 200% the worker stays under `a`, which proves the root.
#[test]
fn affinity_keeps_a_worker_under_the_leaf_it_expanded() {
    let mut g = Tiny::default();
    let a1 = g.pos(true, &[], 40, true);
    let a2 = g.pos(true, &[], 40, true);
    let a = g.pos(false, &[a1, a2], 5000, true);
    let b1 = g.pos(true, &[], 5000, false);
    let b = g.pos(false, &[b1], 5000, false);
    g.pos(true, &[a, b], 0, true);
    let run = |g: &mut Tiny, affinity| {
        let p = PnPolicy {
            tables: Tables::Worker,
            affinity,
            ..policy(100, 1)
        };
        let out = replay_pn(g, p, 1).unwrap();
        assert_eq!(out.root, Some(true));
        (out.outcome.nodes, out.expansions, out.leaves_solved)
    };
    // a (100, expanded), b (100, expanded), b1 (2500), a1, a2 (20 each).
    assert_eq!(run(&mut g, 0), (2740, 2, 3));
    // Within 150% is not enough: 2 > 1.5.
    assert_eq!(run(&mut g, 150), (2740, 2, 3));
    // a (100), a1, a2: b is never searched.
    assert_eq!(run(&mut g, 200), (140, 1, 2));
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
                    for tables in [
                        Tables::Cold,
                        Tables::Worker,
                        Tables::Job,
                        Tables::Lemmas,
                        Tables::Stream { delay: 0 },
                        Tables::Stream { delay: 5 },
                    ] {
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

/// An OR root over AND a (two leaves, one of them false: a is false) and
/// AND b (three true leaves: b, and so the root, is true), leaves of
/// different costs.
fn two_ands() -> Tiny {
    let mut g = Tiny::default();
    let l: Vec<usize> = (0..5).map(|i| g.pos(true, &[], 10 + i, i != 1)).collect();
    let a = g.pos(false, &[l[0], l[1]], 100, false);
    let b = g.pos(false, &[l[2], l[3], l[4]], 100, true);
    g.pos(true, &[a, b], 1000, true);
    g
}

/// A table of replays makes the one-worker replay, and the figures
/// against it, only when the worker counts hold 1: without it the rows
/// are the same replays, their game asked exactly what those replays
/// ask, and only the figures against the yardstick are given.
#[test]
fn a_table_without_one_worker_replays_only_the_counts_asked() {
    let p = policy(1000, 2);
    let rows_of = |g: &mut Tiny, workers: &[usize]| {
        pn_table(g, p, workers, 100, &mut |_| {}, &mut |_, _| Ok(())).unwrap()
    };
    let mut with_one = two_ands();
    let full = rows_of(&mut with_one, &[1, 2]);
    let mut without = two_ands();
    let part = rows_of(&mut without, &[2]);
    let mut alone = two_ands();
    let two = replay_pn(&mut alone, p, 2).unwrap();
    assert_eq!(without.asked, alone.asked);
    assert_ne!(with_one.asked, alone.asked);
    assert_eq!(part.len(), 1);
    assert_eq!(part[0].pn, two);
    assert_eq!(part[0].own, None);
    assert_eq!(full[1].pn, two);
    let own = full[1].own.expect("1 was asked");
    let one = full[0].pn.outcome;
    assert_eq!(own.w, two.outcome.work() as f64 / one.work() as f64);
    assert_eq!(full[0].own.map(|f| f.w), Some(1.0));
    assert_eq!(part[0].w_yardstick, two.outcome.work() as f64 / 100.0);
    assert_eq!(
        part[0].efficiency_yardstick,
        100.0 / (2.0 * two.outcome.makespan as f64)
    );
}

/// The watch sees the outcome grow leaf by leaf: one call a leaf search
/// that ended, work and virtual time never falling, the last call's
/// figures the replay's own.
#[test]
fn the_watch_sees_every_ended_leaf_search() {
    let mut g = two_ands();
    let mut seen: Vec<PnOutcome> = Vec::new();
    let out = replay_pn_watched(&mut g, policy(1000, 2), 2, &mut |o| seen.push(*o)).unwrap();
    assert_eq!(seen.len(), out.outcome.units_done);
    assert!(seen.windows(2).all(|w| {
        w[0].outcome.nodes <= w[1].outcome.nodes && w[0].outcome.makespan <= w[1].outcome.makespan
    }));
    let last = seen.last().expect("a leaf was searched");
    assert_eq!(last.outcome.nodes, out.outcome.nodes);
    assert_eq!(last.outcome.makespan, out.outcome.makespan);
    assert!(seen.iter().all(|o| o.root.is_none()));
}
