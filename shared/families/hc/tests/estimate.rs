//! The `hc` probe against the real search's node counts, and `hc`
//! estimates against known sizes.

use std::time::Duration;

use orchard_core::estimate::{calibrate, estimate, Rng};
use orchard_core::testing::{assert_expectation_is, assert_within, exact_expectation};
use orchard_core::{
    codec, explore_all, DynFamily, Erased, FamilyError, Host, PreparedJob, Probing, SearchFamily,
};
use orchard_hc::{HararyColumns, HcParams, RgsPrefix, Variant};
use std::sync::Arc;

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

fn job(p: &HcParams) -> HararyColumns {
    HararyColumns::new(p.clone(), &Host::default()).unwrap()
}

fn erased(p: &HcParams) -> Arc<dyn PreparedJob> {
    Erased::<HararyColumns>::new()
        .prepare(&serde_json::to_string(p).unwrap(), &Host::default())
        .unwrap()
}

fn hc_nodes(p: &HcParams, prefix: &[u8]) -> u64 {
    explore_all(&job(p), vec![RgsPrefix(prefix.to_vec())], u64::MAX)
        .unwrap()
        .nodes
}

/// The exact expectation of Knuth's estimator over `unit`'s tree as the
/// probe sees it: every walk, enumerated by scripting `pick`, weighted by its
/// probability. Equal to the tree's node count if and only if the probe
/// walks exactly the tree whose nodes are counted (up to rounding).
fn expected_estimate(p: &HcParams, unit: &RgsPrefix, bound: u64) -> (f64, u64) {
    let job = job(p);
    exact_expectation(|pick| job.probe(unit, bound, pick).unwrap())
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
        assert_expectation_is(&format!("{p:?} below {prefix:?}"), expected, nodes);
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
        assert_expectation_is(
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
        let job = erased(&p);
        let e = estimate(job.as_ref(), probes, 2026, 0).unwrap();
        assert_within(&format!("{p:?}"), &e, truth, max_rel_se);
    }
}

#[test]
fn hc_calibration_finishes_small_searches_exactly() {
    let job = erased(&hc(3, Variant::Pairs, None));
    let c = calibrate(job.as_ref(), Duration::from_secs(30), 500).unwrap();
    assert!(c.finished);
    assert_eq!(c.nodes, 3_339);
    assert_eq!(c.bound, 23);
    assert!(c.nodes_per_second() > 0.0);
    // Stopped by the time limit: not finished, the nodes so far.
    let big = erased(&hc(4, Variant::Subsets, Some(1)));
    let c = calibrate(big.as_ref(), Duration::from_millis(20), 10_000).unwrap();
    assert!(!c.finished);
    assert!(c.nodes >= 10_000 && c.nodes < 254_312_984);
}

#[test]
fn hc_probe_rejects_bad_units() {
    let p = hc(3, Variant::Pairs, Some(1));
    let job = erased(&p);
    let mut rng = Rng::new(1);
    // "13": not a restricted-growth string.
    let bad = codec::encode(&RgsPrefix(vec![0, 2]));
    let err = job.probe(&bad, 0, &mut |n| rng.below(n)).unwrap_err();
    assert!(matches!(err, FamilyError::BadUnit(_)), "{err}");
}
