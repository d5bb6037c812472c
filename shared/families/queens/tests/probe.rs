//! The `queens` probe walks exactly the tree the search counts, and its
//! estimates land within their error bars.

use orchard_core::testing::{
    assert_estimate_finds_the_search, assert_probe_rejects, assert_probe_walks_the_search,
};
use orchard_core::{Host, SearchFamily};
use orchard_queens::{ring, Method, Prefix, Queens, QueensParams};

fn job(n: u32) -> Queens {
    let method = Method::Mirror;
    Queens::new(QueensParams { n, method }, &Host::default()).unwrap()
}

fn ring_job(n: u32) -> Queens {
    let method = Method::Ring;
    Queens::new(QueensParams { n, method }, &Host::default()).unwrap()
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
fn ring_probe_expectation_is_the_search_node_count() {
    for n in 1..=9 {
        let job = ring_job(n);
        let mut units = job.root_units();
        if n == 9 {
            // Rings with an inner queen in row 4, wherever the search
            // would have started.
            for t in ring::root_rings(n).into_iter().take(6) {
                for c in 1..8 {
                    let unit = Prefix([&t[..], &[4, c]].concat());
                    if orchard_core::explore_all(&job, vec![unit.clone()], u64::MAX).is_ok() {
                        units.push(unit);
                    }
                }
            }
        }
        for unit in units {
            assert_probe_walks_the_search(&job, &unit, &format!("n = {n} below {unit:?}"));
        }
    }
}

#[test]
fn estimate_is_within_its_error_bar() {
    // A job stored without a method is a `mirror` job.
    assert_estimate_finds_the_search::<Queens>("{\"n\":10}", 0.05);
    assert_estimate_finds_the_search::<Queens>("{\"n\":11,\"method\":\"ring\"}", 0.05);
}

#[test]
fn probe_rejects_bad_units() {
    assert_probe_rejects::<Queens>("{\"n\":8}", &Prefix(vec![3, 3]));
    // Not the smallest of its images: its mirror image [3, 5, 4, 2] is.
    assert_probe_rejects::<Queens>("{\"n\":8,\"method\":\"ring\"}", &Prefix(vec![4, 2, 2, 4]));
}
