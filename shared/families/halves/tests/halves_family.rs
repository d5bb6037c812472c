//! The `halves` family against the plain reference implementation and the
//! published figures; splitting and merging must not change an answer.

use std::collections::BTreeSet;

use orchard_core::{explore_all, FamilyError, Host, SearchFamily};
use orchard_halves::board::symmetry;
use orchard_halves::{
    reference, HalfCut, Halves, HalvesParams, HalvesSummary, LIST_ALL_UP_TO, OPENING_MOVES,
};
use proptest::prelude::*;

fn job(n: u32) -> Halves {
    Halves::new(HalvesParams { n }, &Host::default()).unwrap()
}

/// The whole job, explored in this thread with `budget` nodes per call.
fn search(n: u32, budget: u64) -> HalvesSummary {
    let job = job(n);
    explore_all(&job, job.root_units(), budget).unwrap()
}

/// Like [`explore_all`], but the summary of every call kept apart.
fn pieces(n: u32, budget: u64) -> Vec<HalvesSummary> {
    let job = job(n);
    orchard_core::explore_pieces(&job, job.root_units(), budget).unwrap()
}

fn merged(n: u32, pieces: impl IntoIterator<Item = HalvesSummary>) -> HalvesSummary {
    orchard_core::merge_all(&job(n), pieces).unwrap()
}

/// The cells of the piece holding cell 0 that `walk` cuts, as the
/// reference's mask; checks on the way that the walk cuts the board into
/// two connected pieces of equal size, each the other's half-turn image.
fn piece_mask(n: usize, walk: &[u8]) -> u64 {
    let cells = job(n as u32).board().pieces(walk).expect("a complete walk");
    let mut a = 0u64;
    let mut b = 0u64;
    for (k, &x) in cells.iter().enumerate() {
        match x {
            0 => a |= 1 << k,
            1 => b |= 1 << k,
            _ => assert_eq!((k / n, k % n), (n / 2, n / 2), "only the centre is removed"),
        }
    }
    assert_eq!(
        a | b,
        reference::cells(n),
        "{walk:?}: two pieces cover the board"
    );
    assert!(reference::connected(n, a) && reference::connected(n, b));
    assert_eq!(
        reference::transform(n, 2, a),
        b,
        "{walk:?}: half-turn images"
    );
    a
}

/// The family's counts and its very divisions are the reference's, which
/// finds them from the definition (any isometry), for every board it can
/// enumerate; and every division the reference finds is a half-turn pair.
#[test]
fn agrees_with_reference() {
    for n in 2..=6usize {
        let want = reference::divisions(n);
        let s = search(n as u32, u64::MAX);
        assert_eq!(want.half_turn, want.divisions, "n = {n}: the theorem");
        assert_eq!(s.walks / 2, want.divisions, "cuts for n = {n}");
        assert_eq!(s.count, want.distinct.len() as u64, "count for n = {n}");
        assert_eq!(s.listed.len() as u64, s.count, "all listed for n = {n}");
        let found: BTreeSet<u64> = s
            .listed
            .iter()
            .map(|w| reference::canonical(n, piece_mask(n, w)))
            .collect();
        assert_eq!(found, want.distinct, "the divisions themselves, n = {n}");
    }
}

/// The reference itself on the 4 x 4 board: the chapter's six, and the
/// isometries that relate the halves (no quarter turn ever does).
#[test]
fn reference_on_four_by_four() {
    let r = reference::divisions(4);
    assert_eq!((r.divisions, r.distinct.len()), (22, 6));
    // Only the two straight cuts give halves that a translation or a
    // mirror also maps onto each other (two rectangles 2 x 4).
    assert_eq!(
        (r.by_translation, r.by_mirror, r.by_quarter_turn),
        (2, 2, 0)
    );
}

#[test]
fn published_figures() {
    // The chapter: N = 4 gives 6, N = 8 gives 92,263.
    assert_eq!(search(4, u64::MAX).count, 6);
    assert_eq!(search(8, u64::MAX).count, 92_263);
    // OEIS A003155, n = 2..9 (odd n without the centre cell).
    let a003155 = [1, 1, 6, 15, 255, 1897, 92_263, 1_972_653];
    for (k, &want) in a003155.iter().enumerate() {
        let n = k as u32 + 2;
        assert_eq!(search(n, u64::MAX).count, want, "n = {n}");
    }
}

/// The straight cut along a midline is the only walk with a symmetry of
/// its own (an odd board has none), and the orbits add up.
#[test]
fn orbits_add_up() {
    for n in 2..=9 {
        let s = search(n, u64::MAX);
        let straight = u64::from(n % 2 == 0);
        assert_eq!(s.symmetric, straight, "n = {n}");
        assert_eq!(s.walks, 8 * (s.count - straight) + 4 * straight, "n = {n}");
    }
}

/// Walks of every orientation, counted by brute force on small boards:
/// self-avoiding walks from the start to the edge that avoid their own
/// half-turn image, from every start (the 4 corners of the removed cell
/// on odd boards), with no symmetry reduction.
#[test]
fn walks_are_every_orientation() {
    fn count(n: i32, at: (i32, i32), seen: &mut BTreeSet<(i32, i32)>) -> u64 {
        let mut total = 0;
        for (dr, dc) in [(-1, 0), (0, 1), (1, 0), (0, -1)] {
            let to = (at.0 + dr, at.1 + dc);
            if to.0 == 0 || to.0 == n || to.1 == 0 || to.1 == n {
                total += 1;
            } else if !seen.contains(&to) {
                let image = symmetry(2, n, to);
                seen.insert(to);
                seen.insert(image);
                total += count(n, to, seen);
                seen.remove(&to);
                seen.remove(&image);
            }
        }
        total
    }
    for n in 2..=7i32 {
        let h = n / 2;
        let starts: Vec<(i32, i32)> = if n % 2 == 0 {
            vec![(h, h)]
        } else {
            vec![(h, h), (h, h + 1), (h + 1, h), (h + 1, h + 1)]
        };
        let mut total = 0;
        for &s in &starts {
            let mut seen: BTreeSet<(i32, i32)> = starts.iter().copied().collect();
            seen.insert(s);
            total += count(n, s, &mut seen);
        }
        assert_eq!(search(n as u32, u64::MAX).walks, total, "n = {n}");
    }
}

/// Past [`LIST_ALL_UP_TO`] the list is one division an opening (the
/// rule itself is checked against its definition in `orchard_core::merge`),
/// the same whatever the units and the merge order, each a different
/// division; the counts stay exact.
#[test]
fn large_boards_list_one_division_an_opening() {
    let n = LIST_ALL_UP_TO + 1;
    let units = pieces(n as u32, 5_000);
    assert!(units.len() > 20, "split into {} pieces", units.len());
    let forward = merged(n as u32, units.clone());
    let backward = merged(n as u32, units.into_iter().rev());
    assert_eq!(forward, backward);
    assert_eq!(forward.count, 92_263);
    assert!(forward.listed.windows(2).all(|w| w[0] < w[1]));
    let openings: BTreeSet<&[u8]> = forward
        .listed
        .iter()
        .map(|w| &w[..w.len().min(OPENING_MOVES)])
        .collect();
    assert_eq!(openings.len(), forward.listed.len(), "one an opening");
    assert!(forward.listed.len() > 10 && (forward.listed.len() as u64) < forward.count);
    let forms: BTreeSet<u64> = forward
        .listed
        .iter()
        .map(|w| reference::canonical(n, piece_mask(n, w)))
        .collect();
    assert_eq!(forms.len(), forward.listed.len(), "distinct divisions");
    // The unsplit search lists the same.
    let whole = search(n as u32, u64::MAX);
    assert_eq!(whole.listed, forward.listed);
    let report = job(n as u32).report(&forward);
    assert_eq!(report.results_lines.len(), forward.listed.len());
    assert_eq!(report.json["listed"], forward.listed.len());
    assert_eq!(report.json["listed_per_opening_moves"], OPENING_MOVES);
    // Up to the limit every division is listed.
    let small = search(LIST_ALL_UP_TO as u32, u64::MAX);
    assert_eq!(small.listed.len() as u64, small.count);
}

#[test]
fn splitting_does_not_change_the_summary() {
    for n in 2..=8 {
        let whole = search(n, u64::MAX);
        for budget in [1, 7, 100] {
            assert_eq!(search(n, budget), whole, "n = {n}, budget {budget}");
        }
    }
    // Below the empty prefix, whatever the budget, the same counts.
    let j = job(7);
    let whole = explore_all(&j, vec![HalfCut(vec![])], u64::MAX).unwrap();
    for budget in [1, 3, 50] {
        let split = explore_all(&j, vec![HalfCut(vec![])], budget).unwrap();
        assert_eq!(split, whole, "budget {budget}");
    }
    assert_eq!(whole.count, search(7, u64::MAX).count);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// Any order of merging the pieces of a split job gives the same summary.
    #[test]
    fn merge_order_does_not_matter(
        n in 4u32..=7,
        budget in 1u64..200,
        seed in any::<u64>(),
    ) {
        let j = job(n);
        let (merged, _) = orchard_core::testing::merged_in_any_order(&j, j.root_units(), budget, seed);
        prop_assert_eq!(merged, search(n, u64::MAX));
    }
}

#[test]
fn bad_units_are_rejected() {
    let bad: [(u32, Vec<u8>); 6] = [
        (8, vec![1]),       // E first: a mirror image of N
        (8, vec![0, 0, 3]), // W before any turn: the mirror image of E
        (8, vec![0, 2]),    // back onto the centre
        (4, vec![0, 0, 1]), // on past the edge
        (8, vec![0, 4]),    // no such move
        (5, vec![1]),       // odd: E from the corner mirrors N
    ];
    for (n, prefix) in bad {
        let err = explore_all(&job(n), vec![HalfCut(prefix.clone())], 10).unwrap_err();
        assert!(matches!(err, FamilyError::BadUnit(_)), "{prefix:?}: {err}");
    }
    let err = explore_all(&job(4), vec![HalfCut(vec![0; 200])], 10).unwrap_err();
    assert!(matches!(err, FamilyError::BadUnit(_)), "{err}");
}

#[test]
fn parameters_are_validated() {
    for n in [0, 1, 13, 100] {
        let e = Halves::new(HalvesParams { n }, &Host::default()).unwrap_err();
        assert_eq!(e.name, "n");
    }
    for n in [2, 3, 12] {
        assert!(Halves::new(HalvesParams { n }, &Host::default()).is_ok());
    }
}

#[test]
fn report_has_the_figures() {
    let r = job(4).report(&search(4, u64::MAX));
    for key in [
        "family",
        "n",
        "centre_removed",
        "count",
        "cuts",
        "walks",
        "symmetric",
        "nodes",
        "listed",
    ] {
        assert!(r.json.get(key).is_some(), "missing {key}");
    }
    assert_eq!(r.json["count"], 6);
    assert_eq!(r.json["cuts"], 22);
    assert_eq!(r.json["centre_removed"], false);
    assert_eq!(r.results_lines.len(), 6);
    // The straight cut down the middle comes first: N, N from the centre.
    assert_eq!(r.results_lines[0], "NN AABB/AABB/AABB/AABB");
    let r = job(3).report(&search(3, u64::MAX));
    assert_eq!(r.json["centre_removed"], true);
    assert_eq!(r.results_lines, ["N AAB/A.B/ABB"]);
}

/// A stop requested from outside hands back the whole unit below its
/// root, in search order, and exploring that rest gives the same answer.
#[test]
fn stop_hands_back_the_rest() {
    use orchard_core::{Exploration, LocalFlags};
    use std::sync::atomic::Ordering;
    let j = job(7);
    let unit = HalfCut(vec![0]);
    let whole = explore_all(&j, vec![unit.clone()], u64::MAX).unwrap();
    let flags = LocalFlags::default();
    flags.stop.store(true, Ordering::Relaxed);
    let Exploration::Split { explored, rest } = j.explore(&unit, &flags.context(u64::MAX)).unwrap()
    else {
        panic!("a stopped search must split");
    };
    assert_eq!((explored.nodes, explored.count), (1, 0));
    assert!(
        rest.windows(2).all(|w| w[0] < w[1]),
        "search order: {rest:?}"
    );
    assert!(rest.iter().all(|u| u.0.len() == 2 && u.0[0] == 0));
    let mut total = explored;
    let after = explore_all(&j, rest, u64::MAX).unwrap();
    j.merge(&mut total, after).unwrap();
    assert_eq!(total, whole);
}
