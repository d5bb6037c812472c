//! Knuth's estimator: the driver on synthetic trees of known size, and the
//! `hc` probe against the real search's node counts.

use std::time::Duration;

use orchard_shared::codec;
use orchard_shared::estimate::{calibrate, estimate, supported, EstimateError, Probe, Rng};
use orchard_shared::families::hc::{HararyColumns, HcParams, RgsPrefix, Variant};
use orchard_shared::family::{
    explore_all, DynFamily, Erased, Exploration, ExploreContext, FamilyError, FamilyReport,
    ParamError, PreparedJob, SearchFamily,
};
use serde::{Deserialize, Serialize};

// ---------------------------------------------------------------------------
// A synthetic family: a random-looking tree, fixed by its parameters.

#[derive(Debug, Clone, Serialize, Deserialize, clap::Args)]
struct TreeParams {
    #[arg(long)]
    seed: u64,
    /// Nodes at this depth are leaves.
    #[arg(long)]
    depth: u32,
    #[arg(long)]
    roots: u32,
    /// Every node of root `r` at depth `d` has `(r + d) % 3 + 1` children, so
    /// every probe of one root gives the same value.
    #[arg(long)]
    regular: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Node {
    id: u64,
    root: u32,
    depth: u32,
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn children(p: &TreeParams, n: &Node) -> u64 {
    if n.depth >= p.depth.saturating_sub(n.root) {
        0
    } else if p.regular {
        u64::from((n.root + n.depth) % 3 + 1)
    } else {
        // 0..=3 children, 1.75 on average: irregular, but alive.
        [0, 1, 1, 2, 2, 2, 3, 3][(mix(n.id) % 8) as usize]
    }
}

fn child(n: &Node, j: u64) -> Node {
    Node {
        id: mix(n.id.wrapping_mul(31).wrapping_add(j + 1)),
        root: n.root,
        depth: n.depth + 1,
    }
}

fn count(p: &TreeParams, n: &Node) -> u64 {
    1 + (0..children(p, n))
        .map(|j| count(p, &child(n, j)))
        .sum::<u64>()
}

struct Tree;

impl SearchFamily for Tree {
    const NAME: &'static str = "tree";
    const ABOUT: &'static str = "a synthetic tree";
    type Params = TreeParams;
    type Unit = Node;
    type Summary = u64;

    fn validate(_: &TreeParams) -> Result<(), ParamError> {
        Ok(())
    }

    fn root_units(p: &TreeParams) -> Vec<Node> {
        (0..p.roots)
            .map(|r| Node {
                id: mix(p.seed ^ u64::from(r)),
                root: r,
                depth: 0,
            })
            .collect()
    }

    fn explore(
        p: &TreeParams,
        unit: &Node,
        _: &ExploreContext<'_>,
    ) -> Result<Exploration<u64, Node>, FamilyError> {
        Ok(Exploration::Finished(count(p, unit)))
    }

    fn merge(_: &TreeParams, into: &mut u64, other: u64) -> Result<(), FamilyError> {
        *into += other;
        Ok(())
    }

    fn nodes(s: &u64) -> u64 {
        *s
    }

    fn report(_: &TreeParams, s: &u64) -> FamilyReport {
        FamilyReport {
            json: serde_json::json!({ "nodes": s }),
            text: Vec::new(),
            results_lines: Vec::new(),
        }
    }

    fn unit_label(_: &TreeParams, u: &Node) -> String {
        format!("{u:?}")
    }

    fn probe(
        p: &TreeParams,
        unit: &Node,
        _bound: u64,
        pick: &mut dyn FnMut(u64) -> u64,
    ) -> Result<Option<Probe>, FamilyError> {
        let mut n = unit.clone();
        let mut branching = Vec::new();
        loop {
            let k = children(p, &n);
            if k == 0 {
                return Ok(Some(Probe { branching }));
            }
            branching.push(k as u32);
            n = child(&n, pick(k));
        }
    }
}

/// The same tree, but the family does not implement `probe`.
struct Opaque;

impl SearchFamily for Opaque {
    const NAME: &'static str = "opaque";
    const ABOUT: &'static str = "a synthetic tree without probes";
    type Params = TreeParams;
    type Unit = Node;
    type Summary = u64;

    fn validate(_: &TreeParams) -> Result<(), ParamError> {
        Ok(())
    }
    fn root_units(p: &TreeParams) -> Vec<Node> {
        Tree::root_units(p)
    }
    fn explore(
        p: &TreeParams,
        unit: &Node,
        ctx: &ExploreContext<'_>,
    ) -> Result<Exploration<u64, Node>, FamilyError> {
        Tree::explore(p, unit, ctx)
    }
    fn merge(p: &TreeParams, into: &mut u64, other: u64) -> Result<(), FamilyError> {
        Tree::merge(p, into, other)
    }
    fn nodes(s: &u64) -> u64 {
        *s
    }
    fn report(p: &TreeParams, s: &u64) -> FamilyReport {
        Tree::report(p, s)
    }
    fn unit_label(p: &TreeParams, u: &Node) -> String {
        Tree::unit_label(p, u)
    }
}

fn tree_job(p: &TreeParams) -> std::sync::Arc<dyn PreparedJob> {
    Erased::<Tree>::new()
        .prepare(&serde_json::to_string(p).unwrap())
        .unwrap()
}

fn true_size(p: &TreeParams) -> u64 {
    Tree::root_units(p).iter().map(|r| count(p, r)).sum()
}

/// |estimate - truth| within 4 standard errors, and the error bar is not so
/// wide that the check says nothing.
fn assert_within(what: &str, e: &orchard_shared::estimate::Estimate, truth: f64, max_rel_se: f64) {
    let err = (e.nodes - truth).abs();
    assert!(
        err <= 4.0 * e.std_error,
        "{what}: estimate {} ± {} vs true {truth}: off by {:.2} standard errors",
        e.nodes,
        e.std_error,
        err / e.std_error
    );
    assert!(
        e.std_error <= max_rel_se * truth,
        "{what}: standard error {} is over {max_rel_se} of {truth}",
        e.std_error
    );
    assert!(e.low95 <= e.nodes && e.nodes <= e.high95);
}

#[test]
fn regular_tree_is_estimated_exactly_by_every_probe() {
    let p = TreeParams {
        seed: 1,
        depth: 9,
        roots: 1,
        regular: true,
    };
    let truth = true_size(&p);
    // 1 + 1 + 2 + 6 + 6 + 12 + 36 + 36 + 72 + 216
    assert_eq!(truth, 388);
    let e = estimate(tree_job(&p).as_ref(), 50, 3, 0).unwrap();
    assert_eq!(e.nodes, truth as f64);
    assert_eq!(e.std_error, 0.0);
    assert_eq!(e.probes, 50);
    assert_eq!(e.max_depth, 9);
}

#[test]
fn several_root_units_are_weighted_by_their_number() {
    // Roots of different sizes: a driver that forgot to multiply by the
    // number of roots would be off by a factor of 4.
    let p = TreeParams {
        seed: 5,
        depth: 12,
        roots: 4,
        regular: true,
    };
    let truth = true_size(&p) as f64;
    let sizes: Vec<u64> = Tree::root_units(&p).iter().map(|r| count(&p, r)).collect();
    assert!(sizes.windows(2).all(|w| w[0] != w[1]), "{sizes:?}");
    let e = estimate(tree_job(&p).as_ref(), 20_000, 11, 0).unwrap();
    assert_within("4 regular roots", &e, truth, 0.02);
}

#[test]
fn irregular_tree_is_within_its_error_bar() {
    for seed in [1u64, 2, 3] {
        let p = TreeParams {
            seed,
            depth: 16,
            roots: 3,
            regular: false,
        };
        let truth = true_size(&p) as f64;
        assert!(truth > 5_000.0, "tree too small: {truth}");
        let e = estimate(tree_job(&p).as_ref(), 50_000, seed, 0).unwrap();
        assert_within(&format!("irregular tree {seed}"), &e, truth, 0.1);
    }
}

#[test]
fn estimates_are_reproducible_by_seed() {
    let p = TreeParams {
        seed: 9,
        depth: 20,
        roots: 2,
        regular: false,
    };
    let job = tree_job(&p);
    let a = estimate(job.as_ref(), 1_000, 42, 0).unwrap();
    let b = estimate(job.as_ref(), 1_000, 42, 0).unwrap();
    let c = estimate(job.as_ref(), 1_000, 43, 0).unwrap();
    assert_eq!(a, b);
    assert_ne!(a.nodes, c.nodes);
}

#[test]
fn families_without_probes_and_zero_probes_are_refused() {
    let p = TreeParams {
        seed: 1,
        depth: 5,
        roots: 1,
        regular: true,
    };
    let opaque = Erased::<Opaque>::new()
        .prepare(&serde_json::to_string(&p).unwrap())
        .unwrap();
    assert!(!supported(opaque.as_ref()).unwrap());
    let err = estimate(opaque.as_ref(), 10, 1, 0).unwrap_err();
    assert!(matches!(err, EstimateError::Unsupported("opaque")), "{err}");
    assert_eq!(
        err.to_string(),
        "search family 'opaque' does not support estimates"
    );
    let job = tree_job(&p);
    assert!(supported(job.as_ref()).unwrap());
    assert!(matches!(
        estimate(job.as_ref(), 0, 1, 0),
        Err(EstimateError::NoProbes)
    ));
}

#[test]
fn calibration_runs_the_real_search() {
    let p = TreeParams {
        seed: 4,
        depth: 15,
        roots: 3,
        regular: false,
    };
    let c = calibrate(tree_job(&p).as_ref(), Duration::from_secs(30), 1_000).unwrap();
    assert!(c.finished);
    assert_eq!(c.nodes, true_size(&p));
}

// ---------------------------------------------------------------------------
// hc

fn hc(columns: u32, variant: Variant, min_length: Option<u32>) -> HcParams {
    HcParams {
        columns,
        variant,
        min_length,
    }
}

/// The first maximal games of h(4) and h'(4).
const H4: &str = "112122213313333133232124144444144422144144144444412223331331331222";
const H4_SUBSETS: &str = "1121222133333333331242444444444444444444444212";

/// A game as 0-based columns.
fn digits(game: &str) -> Vec<u8> {
    game.bytes().map(|b| b - b'1').collect()
}

fn hc_nodes(p: &HcParams, prefix: &[u8]) -> u64 {
    explore_all::<HararyColumns>(p, vec![RgsPrefix(prefix.to_vec())], u64::MAX)
        .unwrap()
        .nodes
}

/// The exact expectation of Knuth's estimator over `unit`'s tree as the
/// probe sees it: every walk, enumerated by scripting `pick`, weighted by its
/// probability. Equal to the tree's node count if and only if the probe
/// walks exactly the tree whose nodes are counted (up to rounding).
fn expected_estimate(p: &HcParams, unit: &RgsPrefix, bound: u64) -> (f64, u64) {
    expected_over_walks(|pick| HararyColumns::probe(p, unit, bound, pick).unwrap().unwrap())
}

/// The exact expectation of Knuth's estimator for a probe function, and the
/// number of distinct walks: every walk enumerated by scripting `pick`,
/// weighted by its probability.
fn expected_over_walks(probe: impl Fn(&mut dyn FnMut(u64) -> u64) -> Probe) -> (f64, u64) {
    let mut total = 0.0;
    let mut walks = 0;
    let mut scripts: Vec<Vec<u64>> = vec![Vec::new()];
    while let Some(script) = scripts.pop() {
        let mut step = 0;
        let probe = probe(&mut |n| {
            let i = script.get(step).copied().unwrap_or(0);
            assert!(i < n);
            step += 1;
            i
        });
        let d = &probe.branching;
        if script.len() < d.len() {
            for j in 0..u64::from(d[script.len()]) {
                let mut s = script.clone();
                s.push(j);
                scripts.push(s);
            }
        } else {
            assert_eq!(script.len(), d.len());
            let prob: f64 = d.iter().map(|&k| 1.0 / f64::from(k)).product();
            total += prob * probe.estimate();
            walks += 1;
        }
    }
    (total, walks)
}

fn assert_close(what: &str, expected: f64, nodes: u64) {
    let rel = (expected - nodes as f64).abs() / nodes as f64;
    assert!(
        rel < 1e-9,
        "{what}: expected estimate {expected} but the search visits {nodes} nodes"
    );
}

#[test]
fn hc_probe_expectation_is_the_search_node_count() {
    let cases: Vec<(HcParams, Vec<u8>)> = vec![
        (hc(1, Variant::Pairs, Some(1)), vec![]),
        (hc(2, Variant::Pairs, Some(1)), vec![]),
        (hc(2, Variant::Subsets, Some(3)), vec![]),
        (hc(3, Variant::Pairs, Some(1)), vec![]),
        (hc(3, Variant::Pairs, Some(18)), vec![]),
        (hc(3, Variant::Subsets, Some(1)), vec![]),
        (hc(3, Variant::Subsets, Some(15)), vec![]),
        (hc(3, Variant::Pairs, Some(10)), vec![0, 0, 1]),
        (hc(4, Variant::Pairs, Some(66)), digits(&H4[..36])),
        (hc(4, Variant::Subsets, Some(46)), digits(&H4_SUBSETS[..8])),
        (hc(4, Variant::Subsets, Some(30)), digits(&H4_SUBSETS[..10])),
    ];
    for (p, prefix) in &cases {
        let nodes = hc_nodes(p, prefix);
        let (expected, walks) = expected_estimate(p, &RgsPrefix(prefix.to_vec()), 0);
        assert!(walks > 1 || p.columns == 1, "{p:?}: a single walk");
        assert_close(&format!("{p:?} below {prefix:?}"), expected, nodes);
    }
}

#[test]
fn hc_default_mode_probe_walks_the_tree_of_a_fixed_horizon() {
    // With the horizon assumed from the start, the default mode's tree is
    // the one `--min-length H` searches.
    for (columns, variant, h, prefix) in [
        (3, Variant::Pairs, 23, vec![]),
        (3, Variant::Pairs, 20, vec![]),
        (3, Variant::Subsets, 21, vec![]),
        (4, Variant::Subsets, 46, digits(&H4_SUBSETS[..8])),
    ] {
        let fixed = hc_nodes(&hc(columns, variant, Some(h)), &prefix);
        let (expected, _) =
            expected_estimate(&hc(columns, variant, None), &RgsPrefix(prefix), h.into());
        assert_close(
            &format!("c={columns} {variant:?} bound {h}"),
            expected,
            fixed,
        );
    }
}

#[test]
fn hc_estimates_are_within_their_error_bar() {
    for (p, probes, max_rel_se) in [
        (hc(3, Variant::Pairs, Some(1)), 20_000, 0.05),
        (hc(3, Variant::Subsets, Some(1)), 20_000, 0.05),
        (hc(3, Variant::Pairs, Some(18)), 20_000, 0.05),
        (hc(4, Variant::Subsets, Some(46)), 20_000, 0.2),
    ] {
        let truth = hc_nodes(&p, &[]) as f64;
        let job = Erased::<HararyColumns>::new()
            .prepare(&serde_json::to_string(&p).unwrap())
            .unwrap();
        let e = estimate(job.as_ref(), probes, 2026, 0).unwrap();
        assert_within(&format!("{p:?}"), &e, truth, max_rel_se);
    }
}

#[test]
fn hc_calibration_finishes_small_searches_exactly() {
    let job = Erased::<HararyColumns>::new()
        .prepare(&serde_json::to_string(&hc(3, Variant::Pairs, None)).unwrap())
        .unwrap();
    let c = calibrate(job.as_ref(), Duration::from_secs(30), 500).unwrap();
    assert!(c.finished);
    assert_eq!(c.nodes, 3_339);
    assert_eq!(c.bound, 23);
    assert!(c.nodes_per_second() > 0.0);
    // Stopped by the time limit: not finished, the nodes so far.
    let big = Erased::<HararyColumns>::new()
        .prepare(&serde_json::to_string(&hc(4, Variant::Subsets, Some(1))).unwrap())
        .unwrap();
    let c = calibrate(big.as_ref(), Duration::from_millis(20), 10_000).unwrap();
    assert!(!c.finished);
    assert!(c.nodes >= 10_000 && c.nodes < 254_312_984);
}

#[test]
fn hc_probe_rejects_bad_units() {
    let p = hc(3, Variant::Pairs, Some(1));
    let job = Erased::<HararyColumns>::new()
        .prepare(&serde_json::to_string(&p).unwrap())
        .unwrap();
    let mut rng = Rng::new(1);
    // "13": not a restricted-growth string.
    let bad = codec::encode(&RgsPrefix(vec![0, 2]));
    let err = job.probe(&bad, 0, &mut |n| rng.below(n)).unwrap_err();
    assert!(matches!(err, FamilyError::BadUnit(_)), "{err}");
}

// ---------------------------------------------------------------------------
// hip-draws: the walk behind the seeds method.

use orchard_shared::families::hip::{DrawsParams, HipDraws};

/// The nodes a `hip-draws` job counts over all its units (each node of the
/// walk once: a seed handed back is counted by its own unit).
fn draws_tree_nodes(p: &DrawsParams) -> u64 {
    explore_all::<HipDraws>(p, HipDraws::root_units(p), u64::MAX)
        .unwrap()
        .nodes
}

#[test]
fn hip_draws_probe_expectation_is_the_walk_node_count() {
    for (r, c) in [(2, 3), (3, 3), (3, 4), (4, 4)] {
        let p = DrawsParams::new(r, c, 2);
        let units = HipDraws::root_units(&p);
        assert_eq!(units.len(), 1, "{r}x{c}: one root unit");
        let (expected, _) =
            expected_over_walks(|pick| HipDraws::probe(&p, &units[0], 0, pick).unwrap().unwrap());
        assert_close(
            &format!("hip-draws {r}x{c}"),
            expected,
            draws_tree_nodes(&p),
        );
    }
}

/// Hip 4x4 (issue 4's check): the estimate of the whole job against the
/// nodes its units count, within the error bar. A profile job (k > 2) has
/// no tree to probe and is refused.
#[test]
fn hip_draws_estimates_are_within_their_error_bar() {
    for (r, c) in [(4, 4), (4, 5)] {
        let p = DrawsParams::new(r, c, 2);
        let truth = draws_tree_nodes(&p) as f64;
        let job = Erased::<HipDraws>::new()
            .prepare(&serde_json::to_string(&p).unwrap())
            .unwrap();
        let e = estimate(job.as_ref(), 20_000, 2026, 0).unwrap();
        assert_within(&format!("hip-draws {r}x{c}"), &e, truth, 0.1);
    }
    let job = Erased::<HipDraws>::new()
        .prepare(&serde_json::to_string(&DrawsParams::new(4, 4, 3)).unwrap())
        .unwrap();
    assert!(estimate(job.as_ref(), 100, 1, 0).is_err());
}
