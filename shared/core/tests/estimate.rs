//! Knuth's estimator: the driver on synthetic trees of known size. (Each
//! family's probe is checked against its own search in its crate's tests.)

use std::time::Duration;

use orchard_core::estimate::{calibrate, estimate, supported, EstimateError};
use orchard_core::testing::assert_within;
use orchard_core::{
    Capabilities, DynFamily, Erased, Exploration, ExploreContext, FamilyError, FamilyReport, Host,
    ParamError, PreparedJob, Probe, Probing, SearchFamily,
};
use serde::{Deserialize, Serialize};

// ---------------------------------------------------------------------------
// A synthetic family: a random-looking tree, fixed by its parameters.

#[derive(Debug, Clone, Serialize, Deserialize)]
struct TreeParams {
    seed: u64,
    /// Nodes at this depth are leaves.
    depth: u32,
    roots: u32,
    /// Every node of root `r` at depth `d` has `(r + d) % 3 + 1` children, so
    /// every probe of one root gives the same value.
    regular: bool,
    /// The family offers no probes.
    #[serde(default)]
    opaque: bool,
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

struct Tree(TreeParams);

impl SearchFamily for Tree {
    const NAME: &'static str = "tree";
    const ABOUT: &'static str = "a synthetic tree";
    type Params = TreeParams;
    type Unit = Node;
    type Summary = u64;

    fn new(p: TreeParams, _: &Host) -> Result<Self, ParamError> {
        Ok(Tree(p))
    }

    fn root_units(&self) -> Vec<Node> {
        (0..self.0.roots)
            .map(|r| Node {
                id: mix(self.0.seed ^ u64::from(r)),
                root: r,
                depth: 0,
            })
            .collect()
    }

    fn explore(
        &self,
        unit: &Node,
        _: &ExploreContext<'_>,
    ) -> Result<Exploration<u64, Node>, FamilyError> {
        Ok(Exploration::Finished(count(&self.0, unit)))
    }

    fn merge(&self, into: &mut u64, other: u64) -> Result<(), FamilyError> {
        *into += other;
        Ok(())
    }

    fn nodes(s: &u64) -> u64 {
        *s
    }

    fn report(&self, s: &u64) -> FamilyReport {
        FamilyReport {
            json: serde_json::json!({ "nodes": s }),
            text: Vec::new(),
            results_lines: Vec::new(),
        }
    }

    fn capabilities(&self) -> Capabilities<'_, Self> {
        Capabilities {
            probing: (!self.0.opaque).then_some(self),
            ..Capabilities::default()
        }
    }
}

impl Probing<Tree> for Tree {
    fn probe(
        &self,
        unit: &Node,
        _bound: u64,
        pick: &mut dyn FnMut(u64) -> u64,
    ) -> Result<Probe, FamilyError> {
        let mut n = unit.clone();
        let mut branching = Vec::new();
        loop {
            let k = children(&self.0, &n);
            if k == 0 {
                return Ok(Probe { branching });
            }
            branching.push(k as u32);
            n = child(&n, pick(k));
        }
    }
}

fn tree_job(p: &TreeParams) -> std::sync::Arc<dyn PreparedJob> {
    Erased::<Tree>::new()
        .prepare(&serde_json::to_string(p).unwrap(), &Host::default())
        .unwrap()
}

fn true_size(p: &TreeParams) -> u64 {
    Tree(p.clone())
        .root_units()
        .iter()
        .map(|r| count(p, r))
        .sum()
}

#[test]
fn regular_tree_is_estimated_exactly_by_every_probe() {
    let p = TreeParams {
        seed: 1,
        depth: 9,
        roots: 1,
        regular: true,
        opaque: false,
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
        opaque: false,
    };
    let truth = true_size(&p) as f64;
    let sizes: Vec<u64> = Tree(p.clone())
        .root_units()
        .iter()
        .map(|r| count(&p, r))
        .collect();
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
            opaque: false,
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
        opaque: false,
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
        opaque: false,
    };
    let opaque = tree_job(&TreeParams {
        opaque: true,
        ..p.clone()
    });
    assert!(!supported(opaque.as_ref()).unwrap());
    let err = estimate(opaque.as_ref(), 10, 1, 0).unwrap_err();
    assert!(matches!(err, EstimateError::Unsupported("tree")), "{err}");
    assert_eq!(
        err.to_string(),
        "search family 'tree' does not support estimates"
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
        opaque: false,
    };
    let c = calibrate(tree_job(&p).as_ref(), Duration::from_secs(30), 1_000).unwrap();
    assert!(c.finished);
    assert_eq!(c.nodes, true_size(&p));
}
