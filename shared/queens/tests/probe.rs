//! The `queens` probe walks exactly the tree the search counts, and its
//! estimates land within their error bars.

use orchard_core::testing::{
    assert_estimate_finds_the_search, assert_probe_rejects, assert_probe_walks_the_search,
};
use orchard_core::{Host, SearchFamily};
use orchard_queens::{Prefix, Queens, QueensParams};

fn job(n: u32) -> Queens {
    Queens::new(QueensParams { n }, &Host::default()).unwrap()
}

#[test]
fn probe_expectation_is_the_search_node_count() {
    for n in 1..=8 {
        let job = job(n);
        let mut units = job.root_units();
        units.push(Prefix(vec![]));
        if n >= 6 {
            units.push(Prefix(vec![1, 3]));
        }
        for unit in units {
            assert_probe_walks_the_search(&job, &unit, &format!("n = {n} below {unit:?}"));
        }
    }
}

#[test]
fn estimate_is_within_its_error_bar() {
    assert_estimate_finds_the_search::<Queens>("{\"n\":10}", 0.05);
}

#[test]
fn probe_rejects_bad_units() {
    assert_probe_rejects::<Queens>("{\"n\":8}", &Prefix(vec![3, 3]));
}
