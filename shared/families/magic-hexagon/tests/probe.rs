//! The `magic-hexagon` probe walks exactly the tree the search counts, and
//! its estimates land within their error bars.

use orchard_core::testing::{
    assert_estimate_finds_the_search, assert_probe_rejects, assert_probe_walks_the_search,
};
use orchard_core::{Host, SearchFamily};
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
            assert_probe_walks_the_search(&j, &unit, &format!("below {unit:?}"));
        }
    }
}

#[test]
fn estimate_is_within_its_error_bar() {
    assert_estimate_finds_the_search::<MagicHexagon>("{\"order\":3}", 0.05);
    assert_estimate_finds_the_search::<MagicHexagon>(
        "{\"order\":3,\"lines\":\"sides-and-spokes\",\"sum\":23}",
        0.05,
    );
}

#[test]
fn probe_rejects_bad_units() {
    assert_probe_rejects::<MagicHexagon>("{\"order\":3}", &Prefix(vec![3, 3]));
}
