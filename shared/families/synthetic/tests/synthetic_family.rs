//! The `synthetic` family against its materialised reference and its known
//! size: budgets, random cuts and stops must never lose or repeat a node.

use std::sync::atomic::Ordering;
use std::time::Duration;

use orchard_core::{explore_all, Exploration, Host, LocalFlags, SearchFamily};
use orchard_synthetic::{reference, Piece, Synthetic, SyntheticParams, SyntheticSummary, Tree};
use proptest::prelude::*;

fn params(seed: u64, nodes: u64, tail: u32, branching: u32, root_units: u64) -> SyntheticParams {
    SyntheticParams {
        seed,
        nodes,
        tail,
        branching,
        root_units,
        node_cost_ns: 0,
    }
}

fn job(p: SyntheticParams) -> Synthetic {
    Synthetic::new(p, &Host::default()).unwrap()
}

fn assert_exact(job: &Synthetic, s: &SyntheticSummary) {
    let answer = job.answer(s);
    assert_eq!(s.nodes, job.tree().nodes, "node count");
    assert_eq!(s.checksum, job.tree().expected_checksum(), "checksum");
    assert!(answer.exact);
}

#[test]
fn the_reference_has_the_size_and_checksum_asked_for() {
    for (seed, nodes, tail, branching, roots) in [
        (1, 1, 1, 8, 1),
        (2, 2, 0, 2, 2),
        (3, 1000, 1, 8, 1),
        (4, 5000, 2, 4, 7),
        (5, 3333, 0, 3, 3),
        (6, 4000, 4, 16, 10),
    ] {
        let job = job(params(seed, nodes, tail, branching, roots));
        let all = reference::nodes(job.tree());
        assert_eq!(all.len() as u64, nodes);
        let sum = all.iter().fold(0u64, |a, v| a.wrapping_add(v.hash));
        assert_eq!(sum, job.tree().expected_checksum());
        assert!(all.iter().all(|v| v.path.len() == 1 || {
            let parent = &v.path[..v.path.len() - 1];
            all.iter().any(|p| p.path == parent)
        }));
        let whole = explore_all(&job, job.root_units(), u64::MAX).unwrap();
        assert_exact(&job, &whole);
    }
}

/// The reference's nodes a piece covers: below its root, from its start
/// on in depth-first order (the order of paths, a prefix first).
fn covered<'a>(all: &'a [reference::Visited], p: &Piece) -> Vec<&'a reference::Visited> {
    let mut start = p.root.clone();
    start.extend_from_slice(&p.from);
    all.iter()
        .filter(|v| v.path.starts_with(&p.root) && v.path >= start)
        .collect()
}

/// Exploring a unit with budget b visits the first b nodes of its subtree
/// in depth-first order, and hands back pieces that cover exactly the
/// rest: one per level of the path at most (fanned out, as the family
/// does), or one piece resuming where the walk stopped.
#[test]
fn a_budgeted_exploration_is_the_references_first_nodes_and_its_rest_the_others() {
    let job = job(params(11, 2000, 1, 5, 3));
    let all = reference::nodes(job.tree());
    let flags = LocalFlags::default();
    // Whole subtrees, and pieces that start inside one.
    let mut units: Vec<Piece> = (0..3).map(|i| Piece::subtree(vec![i])).collect();
    for (root, from) in [
        (vec![0], vec![1]),
        (vec![1], vec![0, 2]),
        (vec![2, 0], vec![1, 0]),
    ] {
        if job
            .tree()
            .locate(&[root.clone(), from.clone()].concat())
            .is_ok()
        {
            units.push(Piece { root, from });
        }
    }
    assert!(units.len() > 4);
    for unit in &units {
        let below = covered(&all, unit);
        for budget in [1, 2, 3, 7, 50, 333, below.len() as u64 - 1, 100_000] {
            // 0: explored by the family; 1: cut as a stop request does;
            // 2: the tree's walk with the rest as one resuming piece.
            for way in 0..3 {
                let x = match way {
                    0 => job.explore(unit, &flags.context(budget)).unwrap(),
                    1 => job.explore_cut(unit, budget).unwrap(),
                    _ => {
                        let (count, rest) = job
                            .tree()
                            .explore(&unit.root, &unit.from, budget, &|| false, false)
                            .unwrap();
                        let explored = SyntheticSummary {
                            nodes: count.nodes,
                            checksum: count.checksum,
                        };
                        let rest: Vec<Piece> = rest
                            .into_iter()
                            .map(|(root, from)| Piece { root, from })
                            .collect();
                        assert!(rest.len() <= 1, "one resuming piece at most");
                        Exploration::new(explored, rest)
                    }
                };
                let (explored, rest) = match x {
                    Exploration::Finished(s) => (s, vec![]),
                    Exploration::Split { explored, rest } => (explored, rest),
                };
                let b = (budget as usize).min(below.len());
                let what = format!("unit {unit:?} budget {budget} way {way}");
                assert_eq!(explored.nodes, b as u64, "{what}");
                let first = below[..b].iter().fold(0u64, |a, v| a.wrapping_add(v.hash));
                assert_eq!(explored.checksum, first, "{what}");
                // The rest: disjoint pieces, in search order, covering
                // exactly the nodes after the first b.
                let pieces: Vec<&reference::Visited> =
                    rest.iter().flat_map(|r| covered(&all, r)).collect();
                let after: Vec<_> = below[b..].to_vec();
                assert_eq!(pieces, after, "{what}");
                // Fanned out: one range of siblings per level at most.
                let depth = after.first().map_or(0, |v| v.path.len() - unit.root.len());
                assert!(rest.len() <= depth.max(1), "{what}: {} pieces", rest.len());
                // Ranges at the shallowest levels only, one resuming piece
                // below them.
                assert!(
                    rest.len() <= orchard_synthetic::SHALLOW_LEVELS + 1,
                    "{what}: {} pieces",
                    rest.len()
                );
            }
        }
    }
}

/// The k-way hand-back (a split request for k idle workers): the rest cut
/// into at least k pieces where the tree has that many nodes left, the
/// pieces disjoint, in search order, and together with the explored nodes
/// exactly the unit's nodes, node for node against the reference; the
/// pieces of similar size (none larger than the largest of the usual cut).
#[test]
fn a_k_way_cut_hands_back_k_pieces_that_cover_exactly_the_rest() {
    let job = job(params(13, 3000, 2, 5, 2));
    let all = reference::nodes(job.tree());
    let units = [
        Piece::subtree(vec![0]),
        Piece::subtree(vec![1]),
        Piece {
            root: vec![0],
            from: vec![1],
        },
    ];
    for unit in &units {
        let below = covered(&all, unit);
        for nodes in [1, 5, 40, 333, below.len() as u64 - 1] {
            let Exploration::Split { rest: usual, .. } = job.explore_cut(unit, nodes).unwrap()
            else {
                panic!("cut before its end")
            };
            let largest_usual = usual.iter().map(|p| covered(&all, p).len()).max().unwrap();
            for k in [1u32, 2, 3, 8, 30, 256, 10_000] {
                let what = format!("unit {unit:?} cut at {nodes}, k {k}");
                let (explored, rest) = match job.explore_cut_into(unit, nodes, k).unwrap() {
                    Exploration::Finished(s) => (s, vec![]),
                    Exploration::Split { explored, rest } => (explored, rest),
                };
                let left = below.len() - nodes as usize;
                assert!(
                    rest.len() >= (k as usize).min(left / 2).max(1).min(left),
                    "{what}: {} pieces for {left} nodes",
                    rest.len()
                );
                // Every node once: the explored ones (the cut's first nodes
                // and the roots of subtrees cut below them) and the pieces.
                let mut seen: Vec<&reference::Visited> =
                    rest.iter().flat_map(|r| covered(&all, r)).collect();
                let sorted = {
                    let mut s = seen.clone();
                    s.sort_by(|a, b| a.path.cmp(&b.path));
                    s
                };
                assert_eq!(seen, sorted, "{what}: the pieces in search order");
                let pieced = seen.len();
                seen.dedup_by(|a, b| a.path == b.path);
                assert_eq!(seen.len(), pieced, "{what}: pieces overlap");
                assert_eq!(explored.nodes as usize + pieced, below.len(), "{what}");
                let sum =
                    |v: &[&reference::Visited]| v.iter().fold(0u64, |a, x| a.wrapping_add(x.hash));
                assert_eq!(
                    explored.checksum.wrapping_add(sum(&seen)),
                    sum(&below),
                    "{what}: checksum"
                );
                let largest = rest.iter().map(|p| covered(&all, p).len()).max().unwrap();
                assert!(
                    largest <= largest_usual,
                    "{what}: {largest} > {largest_usual}"
                );
                if k == 1 {
                    assert_eq!(rest, usual, "{what}: k = 1 is the usual cut");
                }
            }
        }
    }
}

/// The piece floor: a rest cut for k idle workers is cut into no more
/// pieces than it holds floors (an eighth of the unit budget, at least one
/// piece), however many are asked; as many as asked when it is large; the
/// pieces still cover exactly the rest, node for node.
#[test]
fn a_k_way_cut_makes_no_piece_below_the_floor() {
    let job = job(params(13, 3000, 2, 5, 2));
    let all = reference::nodes(job.tree());
    let unit = Piece::subtree(vec![0]);
    let below = covered(&all, &unit);
    for nodes in [1, 40, 333, below.len() as u64 - 50] {
        for budget in [8u64, 80, 800, 8_000] {
            let floor = (budget / orchard_core::PIECE_FLOOR_DIVISOR).max(1) as usize;
            let what = format!("cut at {nodes}, budget {budget}");
            let Exploration::Split { rest: usual, .. } = job.explore_cut(&unit, nodes).unwrap()
            else {
                panic!("cut before its end")
            };
            let Exploration::Split { explored, rest } =
                job.explore_split(&unit, nodes, 256, budget).unwrap()
            else {
                panic!("{what}: nothing left")
            };
            let pieced: usize = rest.iter().map(|p| covered(&all, p).len()).sum();
            assert_eq!(explored.nodes as usize + pieced, below.len(), "{what}");
            let rest_nodes = below.len() - nodes as usize;
            let most = (rest_nodes / floor).clamp(1, 256).max(usual.len());
            assert!(
                rest.len() <= most,
                "{what}: {} pieces of a rest of {rest_nodes}, floor {floor}",
                rest.len()
            );
            if rest_nodes / floor >= 512 {
                assert!(rest.len() >= 256, "{what}: {} pieces", rest.len());
            }
        }
    }
}

/// A stop that asks for k pieces through `ExploreContext::pieces` gets them
/// from `explore` (the worker's path), and a stop that asks for none (a
/// shutdown) the usual cut; both merge to the tree with the rest explored.
#[test]
fn a_stop_asking_for_pieces_gets_them_through_the_context() {
    let job = job(params(21, 50_000, 2, 8, 1));
    for k in [0u32, 1, 16, 100] {
        let flags = LocalFlags::default();
        flags.stop.store(true, Ordering::Relaxed);
        flags.pieces.store(k, Ordering::Relaxed);
        let x = job
            .explore(&Piece::subtree(vec![0]), &flags.context(100))
            .unwrap();
        let Exploration::Split { explored, rest } = x else {
            panic!("a stopped exploration finished")
        };
        if k <= 1 {
            assert_eq!(rest, vec![Piece::subtree(vec![0])]);
        } else {
            assert!(rest.len() >= k as usize, "k {k}: {} pieces", rest.len());
        }
        let after = explore_all(&job, rest, 1_000).unwrap();
        let mut total = explored;
        job.merge(&mut total, after).unwrap();
        assert_exact(&job, &total);
    }
}

/// Splits the job's units at random budgets, and merges the pieces in a
/// shuffled order, as a cluster would.
fn random_cuts(job: &Synthetic, budgets: &[u64], order_seed: u64) -> SyntheticSummary {
    let flags = LocalFlags::default();
    let mut pending = job.root_units();
    let mut pieces = Vec::new();
    let mut i = 0;
    while let Some(unit) = pending.pop() {
        let budget = budgets[i % budgets.len()];
        i += 1;
        // Some turns cut the unit as a stop request would (rest fanned
        // out), some as one for k idle workers (the k-way hand-back).
        let x = match i % 4 {
            1 => job.explore_cut(&unit, budget).unwrap(),
            2 => job
                .explore_cut_into(&unit, budget, 1 + (budget % 40) as u32)
                .unwrap(),
            // A k-way cut whose pieces the floor of a unit budget bounds.
            3 => job
                .explore_split(&unit, budget, 1 + (budget % 200) as u32, 8 * budget)
                .unwrap(),
            _ => job.explore(&unit, &flags.context(budget)).unwrap(),
        };
        match x {
            Exploration::Finished(s) => pieces.push(s),
            Exploration::Split { explored, rest } => {
                pieces.push(explored);
                pending.extend(rest);
            }
        }
    }
    let mut state = order_seed;
    for k in (1..pieces.len()).rev() {
        state = orchard_synthetic::tree::mix(state);
        pieces.swap(k, (state % (k as u64 + 1)) as usize);
    }
    orchard_core::merge_all(job, pieces).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn any_cuts_merge_to_the_known_size(
        seed in any::<u64>(),
        nodes in 1u64..20_000,
        tail in 0u32..=4,
        branching in 2u32..=12,
        roots in 1u64..=16,
        budgets in prop::collection::vec(1u64..300, 1..8),
        order in any::<u64>(),
    ) {
        let roots = roots.min(nodes);
        let job = job(params(seed, nodes, tail, branching, roots));
        let s = random_cuts(&job, &budgets, order);
        prop_assert_eq!(s.nodes, nodes);
        prop_assert_eq!(s.checksum, job.tree().expected_checksum());
    }

}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn huge_trees_too(seed in any::<u64>(), tail in 1u32..=3, budget in 1u64 << 30..1u64 << 40) {
        let nodes = 1u64 << 44;
        let job = job(params(seed, nodes, tail, 8, 4));
        let s = random_cuts(&job, &[budget, budget / 3 + 1, budget / 7 + 1], seed);
        prop_assert!(job.answer(&s).exact);
    }
}

/// A stop request cuts the exploration where it is; the rest is handed back.
#[test]
fn a_stop_hands_back_everything() {
    let job = job(params(5, 10_000, 1, 8, 1));
    let flags = LocalFlags::default();
    flags.stop.store(true, Ordering::Relaxed);
    match job
        .explore(&Piece::subtree(vec![0]), &flags.context(100))
        .unwrap()
    {
        Exploration::Split { explored, rest } => {
            assert_eq!(explored.nodes, 0);
            assert_eq!(rest, vec![Piece::subtree(vec![0])]);
        }
        Exploration::Finished(_) => panic!("a stopped exploration finished"),
    }
}

/// With a real node cost, a stop request arriving mid-unit cuts the unit to
/// what was paid for; the pieces still merge to the tree.
#[test]
fn a_real_time_unit_stopped_midway_splits_exactly() {
    let mut p = params(8, 5_000, 2, 6, 1);
    p.node_cost_ns = 100_000; // 0.1 ms a node: the unit would take 0.5 s
    let job = job(p);
    let flags = LocalFlags::default();
    let ctx = flags.context(u64::MAX);
    let x = std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(60));
            flags.stop.store(true, Ordering::Relaxed);
        });
        job.explore(&Piece::subtree(vec![0]), &ctx).unwrap()
    });
    let Exploration::Split { explored, rest } = x else {
        panic!("a unit of 0.5 s stopped after 60 ms finished")
    };
    assert!(explored.nodes >= 1 && explored.nodes < 5_000);
    let after = explore_all(&job, rest, 1_000).unwrap();
    let mut total = explored;
    job.merge(&mut total, after).unwrap();
    assert_exact(&job, &total);
}

/// The subtree sizes are heavy-tailed: at a depth where there are
/// thousands of subtrees, the largest 1% of them hold most of the nodes
/// (with the default tail, 2; `examples/shape.rs` prints the figures of
/// every tail and depth).
#[test]
fn a_few_subtrees_hold_most_of_the_work() {
    let tree = Tree::new(1, 1 << 40, 2, 8, 1);
    let mut level = vec![tree.top()[0]];
    let mut depth = 0;
    while level.len() < 20_000 {
        level = level.iter().flat_map(|n| tree.children(n)).collect();
        depth += 1;
    }
    let mut sizes: Vec<u64> = level.iter().map(|n| n.size).collect();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    let total: u64 = sizes.iter().sum();
    let top: u64 = sizes[..sizes.len() / 100].iter().sum();
    let share = top as f64 / total as f64;
    eprintln!(
        "depth {depth}: {} subtrees, the largest 1% hold {:.1}% of the nodes below",
        sizes.len(),
        100.0 * share
    );
    assert!(share > 0.6, "top 1% hold only {:.1}%", 100.0 * share);
    // Evenly shared (tail 0), they do not.
    let even = Tree::new(1, 1 << 40, 0, 8, 1);
    let mut level = vec![even.top()[0]];
    while level.len() < 20_000 {
        level = level.iter().flat_map(|n| even.children(n)).collect();
    }
    let total: u64 = level.iter().map(|n| n.size).sum();
    let biggest = level.iter().map(|n| n.size).max().unwrap();
    assert!((biggest as f64) < 100.0 * total as f64 / level.len() as f64 / 10.0);
}

#[test]
fn bad_parameters_and_units_are_refused() {
    let bad = [
        params(1, 0, 1, 8, 1),
        params(1, 10, 1, 8, 11),
        params(1, 10, 1, 1, 1),
        params(1, 10, 1, 65, 1),
        params(1, 10, 5, 8, 1),
    ];
    for p in bad {
        let e = Synthetic::new(p.clone(), &Host::default()).unwrap_err();
        assert!(!e.to_string().is_empty(), "{p:?}");
    }
    let job = job(params(1, 100, 1, 4, 2));
    let flags = LocalFlags::default();
    for unit in [
        Piece::subtree(vec![]),
        Piece::subtree(vec![2]),
        Piece::subtree(vec![0, 9]),
        Piece::subtree(vec![0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
        Piece {
            root: vec![0],
            from: vec![9],
        },
        Piece {
            root: vec![],
            from: vec![0],
        },
    ] {
        assert!(job.explore(&unit, &flags.context(10)).is_err(), "{unit:?}");
    }
}

/// The report says exact only for the whole tree.
#[test]
fn the_report_flags_a_lost_or_doubled_subtree() {
    let job = job(params(3, 10_000, 1, 8, 4));
    let whole = explore_all(&job, job.root_units(), 100).unwrap();
    assert!(job.answer(&whole).exact);
    let one = explore_all(&job, vec![Piece::subtree(vec![0])], 100).unwrap();
    let mut doubled = whole.clone();
    job.merge(&mut doubled, one.clone()).unwrap();
    assert!(!job.answer(&doubled).exact);
    let three = explore_all(&job, job.root_units()[1..].to_vec(), 100).unwrap();
    assert!(!job.answer(&three).exact);
    let json = job.report(&whole).json;
    assert_eq!(json["exact"], true);
    assert_eq!(json["nodes"], 10_000);
}
