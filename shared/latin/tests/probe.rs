//! The `latin` probe walks exactly the tree the search counts, and its
//! estimates land within their error bars.

use orchard_core::estimate::{estimate, Rng};
use orchard_core::testing::{assert_expectation_is, assert_within, exact_expectation};
use orchard_core::{
    codec, explore_all, DynFamily, Erased, FamilyError, Host, Probing, SearchFamily,
};
use orchard_latin::{Latin, LatinParams, Prefix};

fn job(n: u32) -> Latin {
    Latin::new(LatinParams::order(n), &Host::default()).unwrap()
}

#[test]
fn probe_expectation_is_the_search_node_count() {
    for n in 1..=6 {
        let job = job(n);
        let mut units = job.root_units();
        units.push(Prefix(vec![]));
        if n == 6 {
            units.push(Prefix(vec![1, 2, 0, 4, 5, 3, 2, 0, 1, 5, 3, 4]));
        }
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
    let n = 6;
    let truth = explore_all(&job(n), job(n).root_units(), u64::MAX)
        .unwrap()
        .nodes;
    let erased = Erased::<Latin>::new()
        .prepare(&format!("{{\"order\":{n}}}"), &Host::default())
        .unwrap();
    let e = estimate(erased.as_ref(), 20_000, 2026, 0).unwrap();
    assert_within("order 6", &e, truth as f64, 0.05);
}

#[test]
fn probe_rejects_bad_units() {
    let erased = Erased::<Latin>::new()
        .prepare("{\"order\":5}", &Host::default())
        .unwrap();
    let mut rng = Rng::new(1);
    let bad = codec::encode(&Prefix(vec![1, 1, 3, 4, 0]));
    let err = erased.probe(&bad, 0, &mut |n| rng.below(n)).unwrap_err();
    assert!(matches!(err, FamilyError::BadUnit(_)), "{err}");
}
