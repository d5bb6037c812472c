//! The `magic-hexagon` probe walks exactly the tree the search counts, and
//! its estimates land within their error bars.

use orchard_core::estimate::{estimate, Rng};
use orchard_core::testing::{assert_expectation_is, assert_within, exact_expectation};
use orchard_core::{
    codec, explore_all, DynFamily, Erased, FamilyError, Host, Probing, SearchFamily,
};
use orchard_magic_hexagon::{Lines, MagicHexagon, MagicHexagonParams, Prefix};

fn job(order: u32, lines: Lines, sum: Option<u64>) -> MagicHexagon {
    MagicHexagon::new(MagicHexagonParams { order, lines, sum }, &Host::default()).unwrap()
}

#[test]
fn probe_expectation_is_the_search_node_count() {
    for j in [
        job(1, Lines::Rows, None),
        job(3, Lines::Rows, None),
        job(3, Lines::SidesAndSpokes, Some(23)),
        job(2, Lines::SidesAndSpokes, Some(8)),
    ] {
        let mut units = j.root_units();
        units.push(Prefix(vec![]));
        for unit in units {
            let nodes = explore_all(&j, vec![unit.clone()], u64::MAX).unwrap().nodes;
            let (expected, _walks) = exact_expectation(|pick| j.probe(&unit, 0, pick).unwrap());
            assert_expectation_is(&format!("below {unit:?}"), expected, nodes);
        }
    }
}

#[test]
fn estimate_is_within_its_error_bar() {
    for (params, max_rel_se) in [
        ("{\"order\":3}", 0.05),
        (
            "{\"order\":3,\"lines\":\"sides-and-spokes\",\"sum\":23}",
            0.05,
        ),
    ] {
        let erased = Erased::<MagicHexagon>::new()
            .prepare(params, &Host::default())
            .unwrap();
        let p: MagicHexagonParams = serde_json::from_str(params).unwrap();
        let j = MagicHexagon::new(p, &Host::default()).unwrap();
        let truth = explore_all(&j, j.root_units(), u64::MAX).unwrap().nodes;
        let e = estimate(erased.as_ref(), 20_000, 2026, 0).unwrap();
        assert_within(params, &e, truth as f64, max_rel_se);
    }
}

#[test]
fn probe_rejects_bad_units() {
    let erased = Erased::<MagicHexagon>::new()
        .prepare("{\"order\":3}", &Host::default())
        .unwrap();
    let mut rng = Rng::new(1);
    let bad = codec::encode(&Prefix(vec![3, 3]));
    let err = erased.probe(&bad, 0, &mut |n| rng.below(n)).unwrap_err();
    assert!(matches!(err, FamilyError::BadUnit(_)), "{err}");
}
