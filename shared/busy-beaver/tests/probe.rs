//! The `busy-beaver` probe walks exactly the tree the search counts, and
//! its estimates land within their error bars.

use orchard_busy_beaver::{BbUnit, BusyBeaver, BusyBeaverParams};
use orchard_core::estimate::{estimate, Rng};
use orchard_core::testing::{assert_expectation_is, assert_within, exact_expectation};
use orchard_core::{
    codec, explore_all, DynFamily, Erased, FamilyError, Host, Probing, SearchFamily,
};

fn job(states: u32) -> BusyBeaver {
    let p: BusyBeaverParams = serde_json::from_str(&format!("{{\"states\":{states}}}")).unwrap();
    BusyBeaver::new(p, &Host::default()).unwrap()
}

#[test]
fn probe_expectation_is_the_search_node_count() {
    for n in 1..=3 {
        let job = job(n);
        let mut units = job.root_units();
        // The whole tree from its root, as one unit.
        units.push(BbUnit {
            table: [0; 8],
            subtree: true,
        });
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
    let truth = explore_all(&job(3), job(3).root_units(), u64::MAX)
        .unwrap()
        .nodes;
    let erased = Erased::<BusyBeaver>::new()
        .prepare("{\"states\":3}", &Host::default())
        .unwrap();
    let e = estimate(erased.as_ref(), 20_000, 2026, 0).unwrap();
    assert_within("3 states", &e, truth as f64, 0.05);
}

#[test]
fn probe_rejects_bad_units() {
    let erased = Erased::<BusyBeaver>::new()
        .prepare("{\"states\":2}", &Host::default())
        .unwrap();
    let mut rng = Rng::new(1);
    let mut table = [0u8; 8];
    table[0] = 16; // state D in a 2-state job
    let bad = codec::encode(&BbUnit {
        table,
        subtree: true,
    });
    let err = erased.probe(&bad, 0, &mut |n| rng.below(n)).unwrap_err();
    assert!(matches!(err, FamilyError::BadUnit(_)), "{err}");
}
