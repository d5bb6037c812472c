//! The `latin` probe walks exactly the tree the search counts, and its
//! estimates land within their error bars.

use orchard_core::testing::{
    assert_estimate_finds_the_search, assert_probe_rejects, assert_probe_walks_the_search,
};
use orchard_core::{Host, SearchFamily};
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
            assert_probe_walks_the_search(&job, &unit, &format!("n = {n} below {unit:?}"));
        }
    }
}

#[test]
fn estimate_is_within_its_error_bar() {
    assert_estimate_finds_the_search::<Latin>("{\"order\":6}", 0.05);
}

#[test]
fn probe_rejects_bad_units() {
    assert_probe_rejects::<Latin>("{\"order\":5}", &Prefix(vec![1, 1, 3, 4, 0]));
}
