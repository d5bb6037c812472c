//! The `queens` family's `mirror` method against the plain reference
//! implementation and the published figures; splitting and merging must not
//! change an answer. (`ring` is in `tests/ring.rs`.)

use orchard_core::{explore_all, FamilyError, Host, SearchFamily};
use std::collections::BTreeMap;

use orchard_queens::{
    reference, Method, Prefix, Queens, QueensParams, QueensSummary, LIST_ALL_UP_TO, OPENING_ROWS,
};
use proptest::prelude::*;

fn job(n: u32) -> Queens {
    let method = Method::Mirror;
    Queens::new(QueensParams { n, method }, &Host::default()).unwrap()
}

/// The whole job, explored in this thread with `budget` nodes per call.
fn search(n: u32, budget: u64) -> QueensSummary {
    let job = job(n);
    explore_all(&job, job.root_units(), budget).unwrap()
}

/// Like [`explore_all`], but the summary of every call kept apart.
fn pieces(n: u32, budget: u64) -> Vec<QueensSummary> {
    let job = job(n);
    orchard_core::explore_pieces(&job, job.root_units(), budget).unwrap()
}

fn merged(n: u32, pieces: impl IntoIterator<Item = QueensSummary>) -> QueensSummary {
    orchard_core::merge_all(&job(n), pieces).unwrap()
}

#[test]
fn agrees_with_reference() {
    for n in 1..=10 {
        let all = reference::solutions(n);
        let distinct = reference::distinct(&all);
        let s = search(n as u32, u64::MAX);
        assert_eq!(s.solutions, all.len() as u64, "solutions for n = {n}");
        assert_eq!(s.distinct, distinct.len() as u64, "distinct for n = {n}");
        // Both take the smallest image as the canonical form.
        assert_eq!(
            s.listed,
            distinct.into_iter().collect::<Vec<_>>(),
            "n = {n}"
        );
    }
}

#[test]
fn agrees_with_reference_below_every_two_row_prefix() {
    let n = 8;
    let all = reference::solutions(n);
    for a in 0..n as u8 {
        for b in 0..n as u8 {
            if a.abs_diff(b) <= 1 {
                continue; // attacking: see bad_units_are_rejected
            }
            let s = explore_all(&job(n as u32), vec![Prefix(vec![a, b])], 5).unwrap();
            let want = all.iter().filter(|p| p[..2] == [a, b]).count();
            assert_eq!(s.met, want as u64, "below {a} {b}");
            let weighted: u64 = all
                .iter()
                .filter(|p| p[..2] == [a, b])
                .map(|p| orchard_queens::mirror_weight(p))
                .sum();
            assert_eq!(s.solutions, weighted, "below {a} {b}");
        }
    }
}

#[test]
fn published_figures() {
    // OEIS A000170, n = 1..12.
    let totals = [1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200];
    // The chapter's distinct patterns for n = 4..12 (none for n = 2, 3).
    let distinct = [1, 0, 0, 1, 2, 1, 6, 12, 46, 92, 341, 1787];
    for n in 1..=12 {
        let s = search(n, u64::MAX);
        assert_eq!(s.solutions, totals[n as usize - 1], "solutions for n = {n}");
        assert_eq!(s.distinct, distinct[n as usize - 1], "distinct for n = {n}");
    }
    // Knuth's profile of the 8-queens tree: 2057 nodes with the empty root.
    let s = explore_all(&job(8), vec![Prefix(vec![])], u64::MAX).unwrap();
    assert_eq!(s.nodes, 2057);
    // The root units: the left half of the first row, half of 2056.
    assert_eq!(search(8, u64::MAX).nodes, 1028, "the root units' subtrees");
}

/// Past [`LIST_ALL_UP_TO`] the list is the smallest distinct solution of
/// each two-row opening, by the reference's own solutions, whatever the
/// units (cut small here) and the merge order.
#[test]
fn large_boards_list_the_smallest_of_each_opening() {
    let n = LIST_ALL_UP_TO as usize + 1;
    // The reference's permutations would take a minute at n = 13: the
    // solutions from a plain row-by-row backtracking, then the reference's
    // smallest images.
    fn place(n: usize, p: &mut Vec<u8>, out: &mut Vec<Vec<u8>>) {
        if p.len() == n {
            out.push(p.clone());
            return;
        }
        let r = p.len();
        for c in 0..n as u8 {
            let safe = p
                .iter()
                .enumerate()
                .all(|(i, &q)| q != c && usize::from(q.abs_diff(c)) != r - i);
            if safe {
                p.push(c);
                place(n, p, out);
                p.pop();
            }
        }
    }
    let mut all = Vec::new();
    place(n, &mut Vec::new(), &mut all);
    let distinct = reference::distinct(&all);
    let mut want: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    for p in distinct.iter().rev() {
        want.insert(p[..OPENING_ROWS].to_vec(), p.clone());
    }
    let want: Vec<Vec<u8>> = want.into_values().collect();
    let units = pieces(n as u32, 20_000);
    assert!(units.len() > 100, "{} units", units.len());
    assert!(
        units.iter().all(|u| u.listed.len() <= n * n),
        "a unit lists one solution an opening at most"
    );
    let forward = merged(n as u32, units.clone());
    let backward = merged(n as u32, units.into_iter().rev());
    assert_eq!(forward, backward);
    assert_eq!((forward.solutions, forward.distinct), (73_712, 9_233));
    assert_eq!(forward.listed, want);
    assert!(want.len() < distinct.len());
    let report = job(n as u32).report(&forward);
    assert_eq!(report.results_lines.len(), want.len());
    assert_eq!(report.json["listed"], want.len());
    assert_eq!(report.json["listed_per_opening_rows"], OPENING_ROWS);
    // Up to the limit every distinct solution is listed.
    let small = search(LIST_ALL_UP_TO, u64::MAX);
    assert_eq!(small.listed.len() as u64, small.distinct);
    assert_eq!(small.distinct, 1_787);
}

#[test]
fn splitting_does_not_change_the_summary() {
    for n in 1..=9 {
        let whole = search(n, u64::MAX);
        for budget in [1, 7, 100] {
            assert_eq!(search(n, budget), whole, "n = {n}, budget {budget}");
        }
    }
    // Budgets around the plain counter's bound: units that count some
    // subtrees whole and visit others node by node, then hand back.
    let whole = search(15, u64::MAX);
    for budget in [10_000_000, 15_000_000] {
        let split = pieces(15, budget);
        assert!(split.len() > 8, "budget {budget}: the units split");
        assert!(split.iter().all(|s| s.nodes <= budget));
        assert_eq!(merged(15, split), whole, "budget {budget}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(50))]

    /// Any order of merging the pieces of a split job gives the same summary.
    #[test]
    fn merge_order_does_not_matter(
        n in 4u32..=8,
        budget in 1u64..50,
        seed in any::<u64>(),
    ) {
        let j = job(n);
        let (merged, _) = orchard_core::testing::merged_in_any_order(&j, j.root_units(), budget, seed);
        prop_assert_eq!(merged, search(n, u64::MAX));
    }
}

#[test]
fn bad_units_are_rejected() {
    let bad = [
        vec![0, 1],       // diagonal
        vec![2, 5, 2],    // same column
        vec![0, 4, 7, 3], // diagonal with the first row
        vec![8],          // off the board
        vec![0; 9],       // more rows than the board
    ];
    for prefix in bad {
        let err = explore_all(&job(8), vec![Prefix(prefix.clone())], 10).unwrap_err();
        assert!(matches!(err, FamilyError::BadUnit(_)), "{prefix:?}: {err}");
    }
}

#[test]
fn parameters_are_validated() {
    for n in [0, 33] {
        for method in [Method::Mirror, Method::Ring] {
            let e = Queens::new(QueensParams { n, method }, &Host::default()).unwrap_err();
            assert_eq!(e.name, "n");
        }
    }
    let method = Method::Ring;
    assert!(Queens::new(QueensParams { n: 32, method }, &Host::default()).is_ok());
}

#[test]
fn report_has_the_figures() {
    let r = job(8).report(&search(8, u64::MAX));
    for key in ["family", "n", "solutions", "distinct", "nodes", "listed"] {
        assert!(r.json.get(key).is_some(), "missing {key}");
    }
    assert_eq!(r.json["solutions"], 92);
    assert_eq!(r.results_lines.len(), 12);
    assert_eq!(r.results_lines[0], "1 5 8 6 3 7 2 4");
}

/// The root units cover half the tree and weigh each solution; the whole
/// tree (every first-row placement) gives the same totals, having met every
/// solution once.
#[test]
fn half_the_tree_counts_what_the_whole_tree_does() {
    for n in 1..=11u32 {
        let job = job(n);
        let half = explore_all(&job, job.root_units(), u64::MAX).unwrap();
        let whole_units = (0..n as u8).map(|c| Prefix(vec![c])).collect();
        let whole = explore_all(&job, whole_units, 1000).unwrap();
        assert_eq!(half.solutions, whole.solutions, "n = {n}");
        assert_eq!(whole.met, whole.solutions, "n = {n}");
        assert_eq!(half.distinct, whole.distinct, "n = {n}");
        assert_eq!(half.listed, whole.listed, "n = {n}");
        if n >= 4 {
            assert!(2 * half.nodes < whole.nodes + n as u64, "n = {n}");
        }
    }
}

/// A summary without the `met` field (its `solutions` the solutions met)
/// fails to decode instead of being misread.
#[test]
fn summaries_of_the_old_layout_are_refused() {
    #[derive(serde::Serialize)]
    struct OldSummary {
        nodes: u64,
        solutions: u64,
        distinct: u64,
        listed: Vec<Vec<u8>>,
    }
    let old = OldSummary {
        nodes: 10,
        solutions: 4,
        distinct: 1,
        listed: vec![vec![1, 3, 0, 2]],
    };
    let bytes = orchard_core::codec::encode(&old);
    assert!(orchard_core::codec::decode::<QueensSummary>(&bytes).is_err());
}
