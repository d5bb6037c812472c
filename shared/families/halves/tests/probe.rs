//! The `halves` probe walks exactly the tree the search counts, and its
//! estimates land within their error bars.

use orchard_core::testing::{
    assert_estimate_finds_the_search, assert_probe_rejects, assert_probe_walks_the_search,
};
use orchard_core::{Host, SearchFamily};
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
            assert_probe_walks_the_search(&job, &unit, &format!("n = {n} below {unit:?}"));
        }
    }
}

#[test]
fn estimate_is_within_its_error_bar() {
    assert_estimate_finds_the_search::<Halves>("{\"n\":8}", 0.1);
}

#[test]
fn probe_rejects_bad_units() {
    assert_probe_rejects::<Halves>("{\"n\":8}", &HalfCut(vec![0, 2]));
}
