//! The `halves` probe walks exactly the tree the search counts, and its
//! estimates land within their error bars.

use orchard_core::estimate::{estimate, Rng};
use orchard_core::testing::{assert_expectation_is, assert_within, exact_expectation};
use orchard_core::{
    codec, explore_all, DynFamily, Erased, FamilyError, Host, Probing, SearchFamily,
};
use orchard_halves::{HalfCut, Halves, HalvesParams};

fn job(n: u32) -> Halves {
    Halves::new(HalvesParams { n }, &Host::default()).unwrap()
}

#[test]
fn probe_expectation_is_the_search_node_count() {
    for n in 2..=8 {
        let job = job(n);
        let mut units = job.root_units();
        units.push(HalfCut(vec![]));
        units.push(HalfCut(vec![0]));
        for unit in units {
            let nodes = explore_all(&job, vec![unit.clone()], u64::MAX)
                .unwrap()
                .nodes;
            let (expected, _walks) = exact_expectation(|pick| job.probe(&unit, 0, pick).unwrap());
            assert_expectation_is(&format!("n = {n} below {unit:?}"), expected, nodes);
        }
    }
}

#[test]
fn estimate_is_within_its_error_bar() {
    let n = 8;
    let truth = explore_all(&job(n), job(n).root_units(), u64::MAX)
        .unwrap()
        .nodes;
    let erased = Erased::<Halves>::new()
        .prepare(&format!("{{\"n\":{n}}}"), &Host::default())
        .unwrap();
    let e = estimate(erased.as_ref(), 20_000, 2026, 0).unwrap();
    assert_within("n = 8", &e, truth as f64, 0.1);
}

#[test]
fn probe_rejects_bad_units() {
    let erased = Erased::<Halves>::new()
        .prepare("{\"n\":8}", &Host::default())
        .unwrap();
    let mut rng = Rng::new(1);
    let bad = codec::encode(&HalfCut(vec![0, 2]));
    let err = erased.probe(&bad, 0, &mut |n| rng.below(n)).unwrap_err();
    assert!(matches!(err, FamilyError::BadUnit(_)), "{err}");
}
