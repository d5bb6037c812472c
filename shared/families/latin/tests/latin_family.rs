//! The `latin` family against the plain reference implementation and the
//! published figures; splitting and merging must not change an answer.

use orchard_core::{explore_all, explore_pieces, merge_all, FamilyError, Host, SearchFamily};
use orchard_latin::reference::{self, Square};
use orchard_latin::{Latin, LatinParams, LatinSummary, Prefix, MAX_LISTED};
use proptest::prelude::*;

fn job(n: u32) -> Latin {
    Latin::new(LatinParams::order(n), &Host::default()).unwrap()
}

/// The whole job, explored in this thread with `budget` nodes per call.
fn search(n: u32, budget: u64) -> LatinSummary {
    let job = job(n);
    explore_all(&job, job.root_units(), budget).unwrap()
}

/// Every listed witness: a reduced square, its mate orthogonal to it by
/// the plain check, the mate's first row `0 1 ... n-1`.
fn check_witnesses(n: usize, s: &LatinSummary) {
    for w in &s.listed {
        let sq = reference::unflat(&w.square, n);
        let mate = reference::unflat(&w.mate, n);
        assert!(reference::is_latin(&sq), "{sq:?}");
        assert!((0..n).all(|i| sq[0][i] == i as u8 && sq[i][0] == i as u8));
        assert!(reference::is_orthogonal(&sq, &mate), "{sq:?} {mate:?}");
        assert!((0..n).all(|j| mate[0][j] == j as u8), "{mate:?}");
    }
    assert!(s.listed.windows(2).all(|w| w[0].square < w[1].square));
}

#[test]
fn agrees_with_reference_on_squares_mates_and_transversals() {
    for n in 1..=5 {
        let squares = reference::reduced_squares(n);
        let s = search(n as u32, u64::MAX);
        assert_eq!(s.reduced, squares.len() as u64, "reduced, n = {n}");
        // Mates found directly, cell by cell, without transversals.
        let with_mate: Vec<&Square> = squares
            .iter()
            .filter(|sq| {
                let mate = reference::find_mate(sq);
                if let Some(m) = &mate {
                    assert!(reference::is_orthogonal(sq, m));
                }
                mate.is_some()
            })
            .collect();
        assert_eq!(s.with_mate, with_mate.len() as u64, "with mate, n = {n}");
        // Every one of them listed (the counts are small), in order.
        let listed: Vec<Vec<u8>> = s.listed.iter().map(|w| w.square.clone()).collect();
        let want: Vec<Vec<u8>> = with_mate.iter().map(|sq| reference::flat(sq)).collect();
        assert_eq!(listed, want, "n = {n}");
        check_witnesses(n, &s);
        // Transversals counted over all n! permutations of each square.
        let mut histogram = std::collections::BTreeMap::new();
        for sq in &squares {
            *histogram
                .entry(reference::transversals(sq) as u32)
                .or_insert(0u64) += 1;
        }
        assert_eq!(s.transversals, histogram, "n = {n}");
    }
}

#[test]
fn order_6_agrees_with_reference() {
    let squares = reference::reduced_squares(6);
    let s = search(6, u64::MAX);
    assert_eq!(s.reduced, squares.len() as u64);
    let mut histogram = std::collections::BTreeMap::new();
    for sq in &squares {
        *histogram
            .entry(reference::transversals(sq) as u32)
            .or_insert(0u64) += 1;
    }
    assert_eq!(s.transversals, histogram);
    assert_eq!(s.with_mate, 0);
    assert!(s.listed.is_empty());
}

/// Euler's 36 officers by the plain direct search (no transversals): no
/// reduced square of order 6 has a mate (a few seconds).
#[test]
fn order_6_has_no_mate_by_direct_search() {
    let squares = reference::reduced_squares(6);
    assert_eq!(squares.len(), 9408);
    for sq in &squares {
        assert_eq!(reference::find_mate(sq), None, "{sq:?}");
    }
}

/// For orders up to 4, a square has a mate iff one of all the Latin squares
/// of its order is orthogonal to it (576 for order 4).
#[test]
fn mates_agree_with_brute_force_over_all_squares() {
    for n in 1..=4 {
        let all = reference::latin_squares(n);
        let want = reference::reduced_squares(n)
            .iter()
            .filter(|sq| all.iter().any(|m| reference::is_orthogonal(sq, m)))
            .count();
        assert_eq!(search(n as u32, u64::MAX).with_mate, want as u64, "n = {n}");
    }
    assert_eq!(reference::latin_squares(4).len(), 576);
}

#[test]
fn diagonal_squares_agree_with_reference() {
    for n in 1..=6 {
        let s = search(n as u32, u64::MAX);
        assert_eq!(s.diagonal, reference::diagonal_squares(n), "n = {n}");
    }
}

#[test]
fn published_figures() {
    // OEIS A000315, reduced Latin squares of orders 1..6.
    let reduced = [1, 1, 1, 4, 56, 9408];
    // OEIS A090741, the most transversals of a Latin square of order n.
    let most = [1, 0, 3, 8, 15, 32];
    // OEIS A274806, diagonal squares with the first row in order.
    let diagonal = [1, 0, 0, 2, 8, 128];
    for n in 1..=6u32 {
        let s = search(n, u64::MAX);
        let i = n as usize - 1;
        assert_eq!(s.reduced, reduced[i], "n = {n}");
        assert_eq!(*s.transversals.keys().next_back().unwrap(), most[i]);
        assert_eq!(s.diagonal, diagonal[i], "n = {n}");
        // Graeco-Latin squares exist for every order but 2 and 6.
        assert_eq!(s.with_mate == 0, n == 2 || n == 6, "n = {n}");
    }
    // Fisher and Yates (1934): none of the 9408 has a mate (Tarry, 1900).
    assert_eq!(search(6, u64::MAX).with_mate, 0);
    // Order 7, squares only: 16,942,080.
    let job = Latin::new(
        LatinParams {
            order: 7,
            mates: false,
            diagonal: false,
        },
        &Host::default(),
    )
    .unwrap();
    let s = explore_all(&job, job.root_units(), u64::MAX).unwrap();
    assert_eq!(s.reduced, 16_942_080);
    assert_eq!(job.root_units().len(), 309);
    let r = job.report(&s);
    assert_eq!(r.json["latin_squares"], 61_479_419_904_000u64);
    assert!(r.json["with_orthogonal_mate"].is_null());
    assert!(r.json["transversals"].is_null());
    assert!(r.json["diagonal_squares"].is_null());
    assert!(r.results_lines.is_empty());
}

#[test]
fn splitting_does_not_change_the_summary() {
    for n in 1..=6 {
        let whole = search(n, u64::MAX);
        for budget in [1, 7, 100] {
            assert_eq!(search(n, budget), whole, "n = {n}, budget {budget}");
        }
    }
}

/// Past the listing cap the counts stay exact, and the list is the
/// smallest squares with a mate whatever the merge order: two units of
/// order 7, split into many pieces.
#[test]
fn listing_cap_keeps_the_smallest() {
    let job = job(7);
    let units: Vec<Prefix> = job.root_units().into_iter().take(2).collect();
    let whole = explore_all(&job, units.clone(), u64::MAX).unwrap();
    let p = explore_pieces(&job, units, 5_000).unwrap();
    assert!(p.len() > 10);
    let forward = merge_all(&job, p.clone()).unwrap();
    let backward = merge_all(&job, p.into_iter().rev()).unwrap();
    assert_eq!(forward, backward);
    assert_eq!(forward, whole);
    assert!(forward.with_mate > MAX_LISTED as u64);
    assert_eq!(forward.listed.len(), MAX_LISTED);
    check_witnesses(7, &forward);
    let report = job.report(&forward);
    assert_eq!(report.results_lines.len(), MAX_LISTED);
    assert_eq!(report.json["listed"], MAX_LISTED);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// Any order of merging the pieces of a split job gives the same summary.
    #[test]
    fn merge_order_does_not_matter(
        n in 3u32..=6,
        budget in 1u64..50,
        seed in any::<u64>(),
    ) {
        let j = job(n);
        let (merged, _) = orchard_core::testing::merged_in_any_order(&j, j.root_units(), budget, seed);
        prop_assert_eq!(merged, search(n, u64::MAX));
    }
}

#[test]
fn units_below_every_second_row_agree_with_reference() {
    let n = 5;
    let squares = reference::reduced_squares(n);
    let job = job(n as u32);
    for unit in job.root_units() {
        let s = explore_all(&job, vec![unit.clone()], 3).unwrap();
        let want = squares.iter().filter(|sq| sq[1] == unit.0).count();
        assert_eq!(s.reduced, want as u64, "below {unit:?}");
    }
    assert_eq!(
        job.root_units().len(),
        11,
        "derangements of 5 starting with 1"
    );
}

#[test]
fn bad_units_are_rejected() {
    let bad = [
        vec![0, 1, 2, 3],                         // row 1 starting with 0
        vec![1, 1, 3, 2],                         // repeated symbol in the row
        vec![1, 0, 3, 4],                         // symbol off the square
        vec![1, 2, 3],                            // not whole rows
        vec![1, 0, 3, 2, 2, 0, 3, 1],             // column 1 repeats 0
        vec![1, 0, 3, 2, 2, 3, 0, 1, 3, 2, 1, 0], // 4 rows: a unit has at most 3
    ];
    for prefix in bad {
        let err = explore_all(&job(4), vec![Prefix(prefix.clone())], 10).unwrap_err();
        assert!(matches!(err, FamilyError::BadUnit(_)), "{prefix:?}: {err}");
    }
}

#[test]
fn parameters_are_validated() {
    for order in [0, 11] {
        let e = Latin::new(LatinParams::order(order), &Host::default()).unwrap_err();
        assert_eq!(e.name, "order");
    }
    assert!(Latin::new(LatinParams::order(10), &Host::default()).is_ok());
    // Parameters stored without the switches: both on.
    let p: LatinParams = serde_json::from_str("{\"order\":5}").unwrap();
    assert_eq!(p, LatinParams::order(5));
}

#[test]
fn report_has_the_figures() {
    let r = job(5).report(&search(5, u64::MAX));
    for key in [
        "family",
        "order",
        "mates",
        "diagonal",
        "reduced",
        "with_orthogonal_mate",
        "latin_squares",
        "transversals",
        "diagonal_squares",
        "nodes",
        "listed",
    ] {
        assert!(r.json.get(key).is_some(), "missing {key}");
    }
    assert_eq!(r.json["reduced"], 56);
    assert_eq!(r.json["latin_squares"], 161_280);
    assert_eq!(r.json["transversals"]["min"], 3);
    assert_eq!(r.json["transversals"]["max"], 15);
    assert_eq!(r.results_lines.len() as u64, r.json["with_orthogonal_mate"]);
    assert_eq!(
        r.results_lines[0],
        "square 01234/12340/23401/34012/40123 mate 01234/40123/34012/23401/12340"
    );
}
