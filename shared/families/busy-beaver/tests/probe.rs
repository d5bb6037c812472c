//! The `busy-beaver` probe walks exactly the tree the search counts, and
//! its estimates land within their error bars.

use orchard_busy_beaver::{BbUnit, BusyBeaver, BusyBeaverParams};
use orchard_core::testing::{
    assert_estimate_finds_the_search, assert_probe_rejects, assert_probe_walks_the_search,
};
use orchard_core::{Host, SearchFamily};

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
            table: [0; 10],
            subtree: true,
        });
        for unit in units {
            assert_probe_walks_the_search(&job, &unit, &format!("n = {n} below {unit:?}"));
        }
    }
}

#[test]
fn estimate_is_within_its_error_bar() {
    assert_estimate_finds_the_search::<BusyBeaver>("{\"states\":3}", 0.05);
}

#[test]
fn probe_rejects_bad_units() {
    let mut table = [0u8; 10];
    table[0] = 16; // state D in a 2-state job
    let bad = BbUnit {
        table,
        subtree: true,
    };
    assert_probe_rejects::<BusyBeaver>("{\"states\":2}", &bad);
}
