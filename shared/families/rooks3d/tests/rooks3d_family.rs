//! The `rooks3d` family against the plain reference implementation and the
//! book's figures; splitting and merging must not change an answer.

use std::collections::BTreeSet;
use std::sync::atomic::Ordering;

use orchard_core::{explore_all, Exploration, FamilyError, Host, LocalFlags, SearchFamily};
use orchard_rooks3d::{
    complete, formula, is_canonical, reference, Prefix, Rooks3d, Rooks3dParams, Rooks3dSummary,
    FREE_CELLS, MAX_PER_LINE, SYMMETRIES,
};
use proptest::prelude::*;

/// The chapter's table, R = 1..6.
const BOOK: [u64; 6] = [12, 132, 847, 3921, 14506, 45402];

fn job(r: u32) -> Rooks3d {
    Rooks3d::new(Rooks3dParams { per_line: r }, &Host::default()).unwrap()
}

/// The whole job, explored in this thread with `budget` nodes per call.
fn search(r: u32, budget: u64) -> Rooks3dSummary {
    let job = job(r);
    explore_all(&job, job.root_units(), budget).unwrap()
}

/// R = 1..4 are the book's counts; R = 5, 6 are not (see the crate
/// documentation): the true counts, which the reference confirms.
#[test]
fn published_figures() {
    for r in 1..=4 {
        assert_eq!(search(r, u64::MAX).count, BOOK[r as usize - 1], "R = {r}");
    }
    assert_eq!(search(5, u64::MAX).count, 14_286);
    assert_eq!(search(6, u64::MAX).count, 43_687);
    // R = 1: the twelve 3 x 3 Latin squares fall into two classes. Every
    // symmetry fixes the centre cell, so the 4 squares with a rook there
    // (symbol 1 in the middle) and the 8 without cannot meet; the reference
    // confirms each set is one orbit.
    let s = search(1, u64::MAX);
    assert_eq!((s.count, s.distinct), (12, 2));
}

/// The formula, read as `R(R+1)[...] / 4032 + 1`, is the book's whole
/// table (so the table's last rows came from it), and the true count for
/// R <= 4 only.
#[test]
fn the_formula_is_the_table_not_the_count() {
    assert_eq!(formula(0), 1);
    for r in 1..=6u32 {
        assert_eq!(formula(r), u128::from(BOOK[r as usize - 1]), "R = {r}");
    }
    for r in 1..=8u32 {
        let count = u128::from(search(r, u64::MAX).count);
        assert_eq!(formula(r) == count, r <= 4, "R = {r}");
    }
}

#[test]
fn agrees_with_reference() {
    for r in 1..=6u8 {
        let all = reference::placements(r);
        let distinct = reference::distinct(&all);
        let s = search(u32::from(r), u64::MAX);
        assert_eq!(s.count, all.len() as u64, "count for R = {r}");
        assert_eq!(s.distinct, distinct.len() as u64, "distinct for R = {r}");
        // The same classes, not just as many: each reference minimum is
        // canonical for the search, and the search's canonical test agrees
        // with "is the reference minimum" on every placement.
        for x in &all {
            let flat: [u8; 27] = x.concat().concat().try_into().unwrap();
            assert_eq!(is_canonical(&flat), distinct.contains(x), "R = {r}, {x:?}");
        }
    }
}

/// Below each root unit the search finds exactly the reference placements
/// with those first two cells.
#[test]
fn agrees_with_reference_below_every_root_unit() {
    let r = 3;
    let all = reference::placements(r);
    let job = job(u32::from(r));
    for unit in job.root_units() {
        let s = explore_all(&job, vec![unit.clone()], 5).unwrap();
        let want = all
            .iter()
            .filter(|x| x[0][0][0] == unit.0[0] && x[0][0][1] == unit.0[1])
            .count();
        assert_eq!(s.count, want as u64, "below {unit:?}");
    }
}

/// `complete` rebuilds exactly the reference placements from their free
/// cells.
#[test]
fn complete_rebuilds_placements() {
    let r = 4;
    for x in reference::placements(r) {
        let flat: [u8; 27] = x.concat().concat().try_into().unwrap();
        let free = FREE_CELLS.map(|n| flat[n]);
        assert_eq!(complete(r, &free), flat);
    }
}

/// The index table is a group of 48 distinct permutations of the cells,
/// closed under composition, and gives the reference's images.
#[test]
fn symmetries_form_the_group_of_the_cube() {
    let set: BTreeSet<[u8; 27]> = SYMMETRIES.iter().copied().collect();
    assert_eq!(set.len(), 48);
    assert_eq!(SYMMETRIES[0], core::array::from_fn(|n| n as u8));
    for g in &SYMMETRIES {
        let mut seen = [false; 27];
        for &m in g {
            seen[m as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
        for h in &SYMMETRIES {
            let composed: [u8; 27] = core::array::from_fn(|n| g[h[n] as usize]);
            assert!(set.contains(&composed));
        }
    }
    // The centre cell is fixed by every symmetry; corners go to corners.
    assert!(SYMMETRIES.iter().all(|g| g[13] == 13));
    let x = reference::placements(2)[17];
    let flat: [u8; 27] = x.concat().concat().try_into().unwrap();
    let ours: BTreeSet<[u8; 27]> = SYMMETRIES
        .iter()
        .map(|g| core::array::from_fn(|n| flat[g[n] as usize]))
        .collect();
    let theirs: BTreeSet<[u8; 27]> = reference::images(&x)
        .iter()
        .map(|y| y.concat().concat().try_into().unwrap())
        .collect();
    assert_eq!(ours, theirs);
}

#[test]
fn splitting_does_not_change_the_summary() {
    for r in 1..=5 {
        let whole = search(r, u64::MAX);
        for budget in [1, 7, 100] {
            assert_eq!(search(r, budget), whole, "R = {r}, budget {budget}");
        }
    }
}

/// Nodes are counted once whatever the splitting, and a stop request hands
/// the unit back untouched.
#[test]
fn a_stop_hands_back_the_unit() {
    let job = job(3);
    let unit = job.root_units()[4].clone();
    let flags = LocalFlags::default();
    flags.stop.store(true, Ordering::Relaxed);
    let ctx = flags.context(u64::MAX);
    match job.explore(&unit, &ctx).unwrap() {
        Exploration::Split { explored, rest } => {
            assert_eq!(explored, Rooks3dSummary::default());
            assert_eq!(rest, vec![unit]);
        }
        Exploration::Finished(_) => panic!("a stopped unit finished"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// Any order of merging the pieces of a split job gives the same summary.
    #[test]
    fn merge_order_does_not_matter(
        r in 1u32..=4,
        budget in 1u64..200,
        seed in any::<u64>(),
    ) {
        let j = job(r);
        let (merged, _) = orchard_core::testing::merged_in_any_order(&j, j.root_units(), budget, seed);
        prop_assert_eq!(merged, search(r, u64::MAX));
    }
}

#[test]
fn merge_overflow_is_an_error() {
    let job = job(2);
    let mut a = Rooks3dSummary {
        count: u64::MAX,
        ..Rooks3dSummary::default()
    };
    let b = Rooks3dSummary {
        count: 1,
        ..Rooks3dSummary::default()
    };
    assert!(matches!(
        job.merge(&mut a, b),
        Err(FamilyError::Overflow(_))
    ));
}

#[test]
fn bad_units_are_rejected() {
    // R = 3; the cells are x000 x001 x010 x011, then layer 1's.
    let bad = [
        vec![4],                         // more than R in a cell
        vec![2, 2],                      // x002 = R - 2 - 2 < 0
        vec![2, 0, 2],                   // x020 < 0
        vec![0, 0, 0, 0],                // x022 = 0 + 0 + 0 + 0 - R < 0
        vec![0, 1, 2, 2],                // x012 = R - 2 - 2 < 0
        vec![3, 0, 0, 0, 1],             // x200 = R - 3 - 1 < 0
        vec![1, 1, 1, 1, 1, 1, 1, 1, 0], // more than eight cells
    ];
    for prefix in bad {
        let err = explore_all(&job(3), vec![Prefix(prefix.clone())], 10).unwrap_err();
        assert!(matches!(err, FamilyError::BadUnit(_)), "{prefix:?}: {err}");
    }
    // The empty prefix, a full placement and a dead end are all fine.
    let all = explore_all(&job(3), vec![Prefix(vec![])], 10).unwrap();
    assert_eq!(all.count, 847);
    let leaf = explore_all(&job(3), vec![Prefix(vec![1, 1, 1, 1, 1, 1, 1, 1])], 10).unwrap();
    assert_eq!((leaf.count, leaf.nodes), (1, 1));
}

#[test]
fn parameters_are_validated() {
    for per_line in [0, MAX_PER_LINE + 1, u32::MAX] {
        let e = Rooks3d::new(Rooks3dParams { per_line }, &Host::default()).unwrap_err();
        assert_eq!(e.name, "per-line");
        assert!(e.to_string().contains("--per-line"), "{e}");
    }
    assert!(Rooks3d::new(
        Rooks3dParams {
            per_line: MAX_PER_LINE
        },
        &Host::default()
    )
    .is_ok());
    // The formula stays exact and within a u64 up to the largest R.
    assert!(u64::try_from(formula(MAX_PER_LINE)).is_ok());
}

#[test]
fn report_has_the_figures() {
    let r = job(3).report(&search(3, u64::MAX));
    for key in [
        "family", "per_line", "count", "distinct", "nodes", "formula",
    ] {
        assert!(r.json.get(key).is_some(), "missing {key}");
    }
    assert_eq!(r.json["family"], "rooks3d");
    assert_eq!(r.json["per_line"], 3);
    assert_eq!(r.json["count"], 847);
    assert_eq!(r.json["formula"], 847);
    assert_eq!(r.json["formula_matches"], true);
    let r = job(5).report(&search(5, u64::MAX));
    assert_eq!(r.json["formula"], 14_506);
    assert_eq!(r.json["formula_matches"], false);
}
