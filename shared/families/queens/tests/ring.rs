//! The `queens` family's `ring` method (the border queens first, up to the
//! eight symmetries, then the most constrained line) against the plain
//! reference implementation, the `mirror` method and the published
//! figures; splitting and merging must not change an answer.

use orchard_core::{explore_all, FamilyError, Host, SearchFamily};

use orchard_queens::{reference, ring, Method, Prefix, Queens, QueensParams, QueensSummary};
use proptest::prelude::*;

fn job(n: u32, method: Method) -> Queens {
    Queens::new(QueensParams { n, method }, &Host::default()).unwrap()
}

fn search(n: u32, method: Method, budget: u64) -> QueensSummary {
    let job = job(n, method);
    explore_all(&job, job.root_units(), budget).unwrap()
}

/// The ring of a solution (`p[row]` = column): `[a, b, c, d]`.
fn ring_of(p: &[u8]) -> [u8; 4] {
    let m = p.len() as u8 - 1;
    let row_of = |col: u8| p.iter().position(|&c| c == col).unwrap() as u8;
    [p[0], p[m as usize], row_of(0), row_of(m)]
}

#[test]
fn agrees_with_reference() {
    for n in 1..=10 {
        let all = reference::solutions(n);
        let distinct = reference::distinct(&all);
        let s = search(n as u32, Method::Ring, u64::MAX);
        assert_eq!(s.solutions, all.len() as u64, "solutions for n = {n}");
        assert_eq!(s.distinct, distinct.len() as u64, "distinct for n = {n}");
        assert_eq!(
            s.listed,
            distinct.into_iter().collect::<Vec<_>>(),
            "n = {n}"
        );
    }
}

/// Below each root ring the search meets exactly the reference's solutions
/// with that ring.
#[test]
fn each_ring_meets_its_solutions() {
    for n in [6, 8, 9] {
        let all = reference::solutions(n);
        let job = job(n as u32, Method::Ring);
        let roots = ring::root_rings(n as u32);
        let mut met = 0;
        for &t in &roots {
            let s = explore_all(&job, vec![Prefix(t.to_vec())], 3).unwrap();
            let want = all.iter().filter(|p| ring_of(p) == t).count() as u64;
            assert_eq!(s.met, want, "n = {n}, ring {t:?}");
            met += s.met;
        }
        // A ring in each orbit: about an eighth of the solutions met.
        assert!(
            met * 4 <= all.len() as u64,
            "n = {n}: {met} of {}",
            all.len()
        );
    }
}

/// A unit is a set of queens: below a ring and one inner queen anywhere
/// (not where the search would have put its first), exactly the solutions
/// holding them.
#[test]
fn a_unit_is_every_completion_of_its_queens() {
    let n = 9usize;
    let all = reference::solutions(n);
    let job = job(n as u32, Method::Ring);
    let mut tried = 0;
    for t in ring::root_rings(n as u32) {
        for r in 1..n as u8 - 1 {
            for c in 1..n as u8 - 1 {
                let unit = Prefix([&t[..], &[r, c]].concat());
                let Ok(s) = explore_all(&job, vec![unit], 2) else {
                    continue; // on a ring line, or attacked
                };
                let want = all
                    .iter()
                    .filter(|p| ring_of(p) == t && p[r as usize] == c)
                    .count() as u64;
                assert_eq!(s.met, want, "ring {t:?}, queen ({r}, {c})");
                tried += 1;
            }
        }
    }
    assert!(tried > 500, "{tried} units");
}

#[test]
fn agrees_with_mirror() {
    for n in 11..=13 {
        let ring = search(n, Method::Ring, u64::MAX);
        let mirror = search(n, Method::Mirror, u64::MAX);
        assert_eq!(ring.solutions, mirror.solutions, "n = {n}");
        assert_eq!(ring.distinct, mirror.distinct, "n = {n}");
        assert_eq!(ring.listed, mirror.listed, "n = {n}");
        assert!(3 * ring.met < mirror.met, "n = {n}: a ring in each orbit");
        assert!(3 * ring.nodes < mirror.nodes, "n = {n}: fewer nodes");
    }
}

/// Every board has a root unit, even one without a ring (n = 2, 3): a job
/// with none would never finish.
#[test]
fn every_board_has_a_root_unit() {
    for n in 1..=12 {
        let roots = job(n, Method::Ring).root_units();
        assert!(!roots.is_empty(), "n = {n}");
        assert_eq!(ring::root_rings(n).is_empty(), n == 2 || n == 3, "n = {n}");
    }
    let s = search(3, Method::Ring, 1);
    assert_eq!((s.nodes, s.solutions, s.distinct), (1, 0, 0));
}

#[test]
fn published_figures() {
    // OEIS A000170 and A002562, n = 1..12.
    let totals = [1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200];
    let distinct = [1, 0, 0, 1, 2, 1, 6, 12, 46, 92, 341, 1787];
    for n in 1..=12 {
        let s = search(n, Method::Ring, u64::MAX);
        assert_eq!(s.solutions, totals[n as usize - 1], "solutions for n = {n}");
        assert_eq!(s.distinct, distinct[n as usize - 1], "distinct for n = {n}");
    }
}

#[test]
fn splitting_does_not_change_the_summary() {
    for n in 1..=9 {
        let whole = search(n, Method::Ring, u64::MAX);
        for budget in [1, 7, 100] {
            assert_eq!(
                search(n, Method::Ring, budget),
                whole,
                "n = {n}, budget {budget}"
            );
        }
    }
    let j = job(14, Method::Ring);
    let whole = explore_all(&j, j.root_units(), u64::MAX).unwrap();
    let split = orchard_core::explore_pieces(&j, j.root_units(), 500).unwrap();
    assert!(split.len() > 2 * j.root_units().len(), "the units split");
    assert!(split.iter().all(|s| s.nodes <= 500));
    assert_eq!(orchard_core::merge_all(&j, split).unwrap(), whole);
    assert_eq!((whole.solutions, whole.distinct), (365_596, 45_752));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(50))]

    /// Any order of merging the pieces of a split job gives the same summary.
    #[test]
    fn merge_order_does_not_matter(
        n in 4u32..=9,
        budget in 1u64..50,
        seed in any::<u64>(),
    ) {
        let j = job(n, Method::Ring);
        let (merged, _) = orchard_core::testing::merged_in_any_order(&j, j.root_units(), budget, seed);
        prop_assert_eq!(merged, search(n, Method::Ring, u64::MAX));
    }
}

#[test]
fn bad_units_are_rejected() {
    let t = ring::root_rings(8)[0];
    let bad = [
        vec![],                           // no ring
        vec![3],                          // one border queen
        vec![3, 8],                       // a group off the board
        vec![1, 3, 4, 5, 2],              // half a pair after the ring
        vec![4, 2, 2, 4],                 // not the smallest of its images
        vec![0, 3, 5, 6],                 // corner in row 0 but column 0's queen elsewhere
        vec![1, 3, 1, 5],                 // (0, 1) and (1, 0) on a diagonal
        vec![1, 1, 4, 5],                 // two queens in column 1
        [&t[..], &[0, 3]].concat(),       // an inner queen in row 0
        [&t[..], &[3, 7]].concat(),       // an inner queen in the last column
        [&t[..], &[3, 8]].concat(),       // off the board
        [&t[..], &[3]].concat(),          // half a pair
        [&t[..], &[3, 3, 3, 5]].concat(), // two queens in row 3
    ];
    for units in bad {
        let err = explore_all(&job(8, Method::Ring), vec![Prefix(units.clone())], 10).unwrap_err();
        assert!(matches!(err, FamilyError::BadUnit(_)), "{units:?}: {err}");
    }
}

/// A job stored before `ring` existed has no method in its parameters: it
/// is read as the `mirror` job it was (its units are rows of columns).
#[test]
fn stored_parameters_without_a_method_are_mirror() {
    let p: QueensParams = serde_json::from_str("{\"n\":8}").unwrap();
    assert_eq!(p.method, Method::Mirror);
    let p: QueensParams = serde_json::from_str("{\"n\":8,\"method\":\"ring\"}").unwrap();
    assert_eq!(p.method, Method::Ring);
    let r = job(8, Method::Ring).report(&search(8, Method::Ring, u64::MAX));
    assert_eq!(r.json["method"], "ring");
    assert_eq!(r.results_lines[0], "1 5 8 6 3 7 2 4");
}
