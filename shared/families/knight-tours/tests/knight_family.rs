//! The `knight-tours` family against the plain depth-first search and the
//! published figures; splitting (tiny budgets, stops, hand-backs cut into
//! several units) and merging in any order must not change an answer.

use std::sync::atomic::Ordering;

use orchard_core::{
    explore_all, explore_pieces, merge_all, Exploration, FamilyError, Host, LocalFlags,
    SearchFamily,
};
use orchard_knight_tours::{
    reference, units_of, Frontier, KnightParams, KnightTours, KnightUnit, Layer, MeetPart, Method,
    TourSummary, MAX_MEET_PARTS,
};
use proptest::prelude::*;

fn job(rows: u32, cols: u32) -> KnightTours {
    job_by(rows, cols, Method::default())
}

fn job_by(rows: u32, cols: u32, method: Method) -> KnightTours {
    job_parts(
        rows,
        cols,
        method,
        orchard_knight_tours::join::MEET_PART_STATES,
    )
}

fn job_parts(rows: u32, cols: u32, method: Method, meet_part_states: usize) -> KnightTours {
    KnightTours::new(
        KnightParams {
            rows,
            cols,
            max_states: 1 << 30,
            method,
            meet_part_states,
        },
        &Host::default(),
    )
    .unwrap()
}

/// Layers as units of the job.
fn layers(units: Vec<Layer>) -> Vec<KnightUnit> {
    units.into_iter().map(KnightUnit::Layer).collect()
}

fn search(rows: u32, cols: u32, budget: u64) -> TourSummary {
    search_by(rows, cols, budget, Method::default())
}

fn search_by(rows: u32, cols: u32, budget: u64, method: Method) -> TourSummary {
    let j = job_by(rows, cols, method);
    explore_all(&j, j.root_units(), budget).unwrap()
}

/// The summary without the memory figure, which depends on how the job was
/// cut (each unit sizes its own tables).
fn counts(mut s: TourSummary) -> TourSummary {
    s.peak_bytes = 0;
    s
}

trait WithoutRebuild {
    fn without_rebuild(self) -> Self;
}

impl WithoutRebuild for TourSummary {
    /// The summary but for the states swept to rebuild the meeting layer.
    fn without_rebuild(mut self) -> TourSummary {
        self.rebuilt = 0;
        self
    }
}

/// The sweep alone, without the colour shortcut of the root unit (which
/// applies to units at square 0): the states after square 0, swept on.
fn sweep_without_shortcut(rows: u32, cols: u32) -> u128 {
    let j = job(rows, cols);
    let f = j.frontier();
    let mut after0 = Vec::new();
    f.step(0, Frontier::START, &mut |k| after0.push((k, 1u128)));
    let units = units_of(1, after0);
    explore_all(&j, layers(units), u64::MAX).unwrap().tours
}

#[test]
fn agrees_with_the_depth_first_search() {
    // Every board of up to 30 squares with both sides at least 3 (smaller
    // boards have no closed tour and are checked below), plus the 6 x 6.
    let mut boards = Vec::new();
    for r in 1..=6u32 {
        for c in r..=10u32 {
            if r * c <= 30 || (r, c) == (6, 6) {
                boards.push((r, c));
            }
        }
    }
    for (r, c) in boards {
        let want = reference::count(r as usize, c as usize);
        for (rows, cols) in [(r, c), (c, r)] {
            for method in [Method::Halves, Method::Sweep] {
                let s = search_by(rows, cols, u64::MAX, method);
                assert_eq!(s.tours, u128::from(want), "{rows} x {cols} {method:?}");
                assert!(s.nodes > 0);
            }
        }
    }
}

#[test]
fn published_figures() {
    // 6 x 6 (A001230), 3 x 2n (A070030), 5 x 2n (A175855), 6 x n (A175881).
    let cases: [(u32, u32, u128); 11] = [
        (6, 6, 9_862),
        (3, 10, 16),
        (3, 12, 176),
        (3, 14, 1_536),
        (3, 16, 15_424),
        (3, 20, 1_448_416),
        (5, 6, 8),
        (5, 8, 44_202),
        (5, 10, 13_311_268),
        (6, 5, 8),
        (6, 7, 1_067_638),
    ];
    for (r, c, want) in cases {
        for method in [Method::Halves, Method::Sweep] {
            let s = search_by(r, c, u64::MAX, method);
            assert_eq!(s.tours, want, "{r} x {c} {method:?}");
        }
    }
}

#[test]
fn odd_boards_have_none_and_the_sweep_agrees() {
    for (r, c) in [(3, 5), (3, 7), (5, 5), (5, 7), (3, 9)] {
        let s = search(r, c, u64::MAX);
        assert_eq!(s.tours, 0);
        assert_eq!(s.nodes, 1, "the root unit stops at once");
        assert_eq!(sweep_without_shortcut(r, c), 0, "{r} x {c}");
    }
    // And on an even board the sweep from square 1 finds everything.
    assert_eq!(sweep_without_shortcut(5, 6), 8);
    assert_eq!(sweep_without_shortcut(3, 12), 176);
}

#[test]
fn tiny_budgets_give_the_same_counts() {
    for method in [Method::Halves, Method::Sweep] {
        for (r, c) in [(3, 12), (5, 6), (4, 7), (6, 6)] {
            let whole = search_by(r, c, u64::MAX, method);
            for budget in [1, 5, 100, 4096, 5000] {
                let j = job_by(r, c, method);
                let pieces = explore_pieces(&j, j.root_units(), budget).unwrap();
                // A hand-back comes between squares only: the halves sweep
                // half the squares, so about half the pieces.
                if budget < 100 {
                    assert!(pieces.len() > 5, "{r} x {c}: {} pieces", pieces.len());
                }
                let s = merge_all(&j, pieces).unwrap();
                // Hand-backs are whole layers: nothing is swept twice.
                assert_eq!(
                    counts(s),
                    counts(whole.clone()),
                    "{r} x {c}, budget {budget}, {method:?}"
                );
            }
        }
    }
}

#[test]
fn pieces_merge_in_any_order() {
    let j = job(5, 6);
    for seed in 0..8 {
        let (merged, pieces) =
            orchard_core::testing::merged_in_any_order(&j, j.root_units(), 20, seed);
        assert!(pieces > 2, "the budget splits the job");
        assert_eq!(merged.tours, 8);
    }
}

#[test]
fn a_layer_cut_into_many_units_counts_the_same() {
    // Sweep 6 x 6 to square 12, then cut that layer into units of a few
    // states each: the sum over the units is still 9862.
    let j = job(6, 6);
    let f = j.frontier();
    let mut layer: std::collections::BTreeMap<u64, u128> = [(Frontier::START, 1)].into();
    for v in 0..12 {
        let mut next = std::collections::BTreeMap::new();
        for (&k, &c) in &layer {
            let r = f.step(v, k, &mut |nk| *next.entry(nk).or_insert(0) += c);
            assert_eq!(r.closed, 0);
        }
        layer = next;
    }
    let states: Vec<(u64, u128)> = layer.into_iter().collect();
    assert!(states.len() > 100);
    let units: Vec<Layer> = states
        .chunks(7)
        .map(|c| Layer {
            square: 12,
            states: c.to_vec(),
        })
        .collect();
    let cut = explore_all(&j, layers(units), 1000).unwrap();
    assert_eq!(cut.tours, 9862);
    // States of different units never merge: the cut costs work.
    let whole = search(6, 6, u64::MAX);
    let after: u64 = whole.states[12..].iter().sum();
    assert!(cut.nodes > 2 * after, "{} vs {after}", cut.nodes);
    assert_eq!(units_of(12, states.clone()).len(), 1);
    assert_eq!(
        explore_all(&j, layers(units_of(12, states)), u64::MAX)
            .unwrap()
            .tours,
        9862
    );
}

#[test]
fn a_stop_hands_the_unit_back_whole_or_in_parts() {
    let j = job(6, 6);
    let flags = LocalFlags::default();
    flags.stop.store(true, Ordering::Relaxed);
    let root = j.root_units();
    match j.explore(&root[0], &flags.context(u64::MAX)).unwrap() {
        Exploration::Split { explored, rest } => {
            assert_eq!(explored.nodes, 0);
            assert_eq!(rest, root);
        }
        Exploration::Finished(_) => panic!("a stopped unit must be handed back"),
    }
    // Stopped while sweeping (the quantum is the budget when smaller): the
    // rest covers exactly what was not counted.
    let flags = LocalFlags::default();
    let ctx = flags.context(2000);
    let mut pending = root;
    let mut total = TourSummary::default();
    let mut stops = 0;
    while let Some(u) = pending.pop() {
        flags.stop.store(stops < 5, Ordering::Relaxed);
        match j.explore(&u, &ctx).unwrap() {
            Exploration::Finished(s) => j.merge(&mut total, s).unwrap(),
            Exploration::Split { explored, rest } => {
                stops += 1;
                j.merge(&mut total, explored).unwrap();
                pending.extend(rest);
            }
        }
    }
    assert_eq!(total.tours, 9862);
    assert_eq!(counts(total), counts(search(6, 6, u64::MAX)));
    assert!(stops >= 5);
}

#[test]
fn bad_parameters_and_units_are_rejected() {
    let p = |rows, cols| KnightParams {
        rows,
        cols,
        max_states: 10,
        method: Method::default(),
        meet_part_states: 1,
    };
    assert!(KnightTours::new(p(0, 5), &Host::default()).is_err());
    assert!(KnightTours::new(p(9, 9), &Host::default()).is_err());
    assert!(KnightTours::new(p(8, 1001), &Host::default()).is_err());
    let e = KnightTours::new(p(10, 12), &Host::default()).unwrap_err();
    assert!(e.to_string().contains("short side"), "{e}");
    assert!(KnightTours::new(p(12, 8), &Host::default()).is_ok());
    let j = job(3, 4);
    let ctx_flags = LocalFlags::default();
    let ctx = ctx_flags.context(u64::MAX);
    let bad = [
        Layer {
            square: 13,
            states: vec![(0, 1)],
        },
        Layer {
            square: 0,
            states: vec![(u64::MAX, 1)],
        },
        Layer {
            square: 0,
            states: vec![(0, 0)],
        },
    ];
    for u in layers(bad.to_vec()) {
        assert!(
            matches!(j.explore(&u, &ctx), Err(FamilyError::BadUnit(_))),
            "{u:?}"
        );
    }
    // A layer too wide for --max-states fails instead of exhausting memory.
    let small = KnightTours::new(p(6, 6), &Host::default()).unwrap();
    let r = explore_all(&small, small.root_units(), u64::MAX);
    assert!(matches!(r, Err(FamilyError::Capacity(_))), "{r:?}");
}

#[test]
fn transposed_boards_and_the_report() {
    let s = search(3, 10, u64::MAX);
    let t = search(10, 3, u64::MAX);
    assert_eq!(s.tours, t.tours);
    let j = job(10, 3);
    let r = j.report(&t);
    assert_eq!(r.json["tours"], "16");
    assert_eq!(r.json["tours_u64"], 16);
    assert_eq!(r.json["rows"], 10);
    assert_eq!(r.json["cols"], 3);
    assert_eq!(r.json["family"], "knight-tours");
    assert_eq!(r.results_lines.len(), 30);
    let closed: u128 = t.closed.iter().sum();
    assert_eq!(closed, 16);
    assert!(r.text[0].contains("16 closed"));
}

#[test]
fn reference_lists_each_tour_once() {
    let tours = reference::tours(5, 6);
    assert_eq!(tours.len() as u64, reference::count(5, 6));
    let adj = reference::neighbours(5, 6);
    for t in &tours {
        let mut seen = 0u64;
        for (i, &s) in t.iter().enumerate() {
            seen |= 1 << s;
            let next = t[(i + 1) % t.len()];
            assert!(adj[s as usize] & 1 << next != 0, "a knight's move");
        }
        assert_eq!(seen.count_ones(), 30);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn any_budget_gives_the_same_answer(
        (r, c) in prop_oneof![Just((3u32, 10u32)), Just((4, 5)), Just((5, 6)), Just((3, 14))],
        budget in 1u64..20_000,
    ) {
        let whole = search(r, c, u64::MAX);
        let s = search(r, c, budget);
        prop_assert_eq!(s.tours, whole.tours);
    }
}

/// Bytes a part unit takes encoded, at most (the codec's version byte, the
/// enum's tag and seven varints): the root unit's report carries one per
/// part, at most `MAX_MEET_PARTS`, so it stays under 4096 x 48 = 192 KiB
/// whatever the board (handing back the states instead would carry
/// ~460 MB on 8 x 8).
const PART_UNIT_BYTES: usize = 48;

/// The root unit's meeting layer, handed back as units that name their
/// part: many small units (parts of 1, 7, 100 left states), each met by a
/// job of its own (another worker: it rebuilds the layer) and again by the
/// job that swept the root (its kept layer). The parts add up to the
/// reference's count and the sweep's; the job's states per square are the
/// same as in one unit, and its nodes are the half sweep's once plus the
/// parts' meetings (the rebuilds go to `rebuilt` only).
#[test]
fn the_meeting_is_handed_back_as_named_parts_and_they_add_up() {
    for (rows, cols) in [(5, 6), (6, 6), (6, 5), (5, 8)] {
        let whole = search(rows, cols, u64::MAX);
        assert_eq!(whole.rebuilt, 0, "one process keeps its layer");
        assert_eq!(
            whole.tours,
            search_by(rows, cols, u64::MAX, Method::Sweep).tours
        );
        if rows * cols <= 36 {
            assert_eq!(
                whole.tours,
                u128::from(reference::count(rows as usize, cols as usize))
            );
        }
        for part_states in [1, 7, 100] {
            let at = format!("{rows} x {cols}, parts of {part_states}");
            let j = job_parts(rows, cols, Method::Halves, part_states);
            let root = &j.root_units()[0];
            let flags = LocalFlags::default();
            let Exploration::Split { explored, rest } =
                j.explore(root, &flags.context(u64::MAX)).unwrap()
            else {
                panic!("{at}: the root unit met its layer itself");
            };
            assert_eq!(explored.tours, 0, "{at}: no tour closes in a half");
            let parts: Vec<MeetPart> = rest
                .iter()
                .map(|u| match u {
                    KnightUnit::Part(p) => p.clone(),
                    KnightUnit::Layer(l) | KnightUnit::Whole(l) => {
                        panic!("{at}: a layer at square {}", l.square)
                    }
                })
                .collect();
            let left = parts[0].left_states;
            let k = parts.len() as u64;
            assert_eq!(k, left.div_ceil(part_states as u64).min(4096), "{at}");
            assert!(k > 1, "{at}: {left} left states in one part");
            let report = orchard_core::codec::encode(&rest);
            assert!(report.len() <= PART_UNIT_BYTES * rest.len(), "{at}");
            for u in &rest {
                let bytes = orchard_core::codec::encode(u).len();
                assert!(bytes <= PART_UNIT_BYTES, "{at}: {bytes} bytes");
            }
            let mut total = explored.clone();
            let mut rebuilt = TourSummary::default();
            let mut fresh_runs = 0;
            for (i, u) in rest.iter().enumerate() {
                let KnightUnit::Part(p) = u else {
                    unreachable!()
                };
                assert_eq!((p.part, p.parts, p.left_states), (i as u32, k as u32, left));
                let here = match j.explore(u, &flags.context(u64::MAX)).unwrap() {
                    Exploration::Finished(s) => s,
                    e => panic!("{at}: part {i} split: {e:?}"),
                };
                assert_eq!(here.rebuilt, 0, "{at}: the root's layer was kept");
                if [0, k / 2, k - 1].contains(&(i as u64)) {
                    // A fresh job: what a worker that never swept the root
                    // does (and a re-run after a lost lease). The same
                    // part, whoever meets it: the same summary but for the
                    // rebuild (and so the replicas' comparison).
                    let fresh = job_parts(rows, cols, Method::Halves, part_states);
                    let again = match fresh.explore(u, &flags.context(u64::MAX)).unwrap() {
                        Exploration::Finished(s) => s,
                        e => panic!("{at}: part {i} split: {e:?}"),
                    };
                    assert_eq!(
                        again.rebuilt, explored.nodes,
                        "{at}: the rebuild sweeps the half once"
                    );
                    assert_eq!(again.clone().without_rebuild(), here, "{at}, part {i}");
                    assert_eq!(
                        j.verified_part(u, &again, 0),
                        j.verified_part(u, &here, 0),
                        "{at}, part {i}"
                    );
                    j.merge(&mut rebuilt, again).unwrap();
                    fresh_runs += 1;
                }
                j.merge(&mut total, here).unwrap();
            }
            assert_eq!(total.tours, whole.tours, "{at}");
            assert_eq!(total.states, whole.states, "{at}");
            assert_eq!(total.rebuilt, 0, "{at}");
            assert_eq!(rebuilt.rebuilt, fresh_runs * explored.nodes, "{at}");
            let meeting = j.frontier().n
                - explored
                    .states
                    .iter()
                    .rev()
                    .take_while(|&&x| x == 0)
                    .count();
            assert!(meeting > 0 && meeting < j.frontier().n);
            // The half sweep's states once in the nodes, then the parts'.
            assert_eq!(
                explored.nodes,
                whole.states[..meeting].iter().sum::<u64>(),
                "{at}"
            );
            // The sequential path goes through the same part units.
            let seq = explore_all(&j, j.root_units(), u64::MAX).unwrap();
            assert_eq!(counts(seq), counts(total), "{at}");
        }
    }
}

/// Part units that do not name a part of this job's meeting are refused
/// with one line each, never a panic or a count of other states: out of
/// range, another board, another square, another layer (size or
/// fingerprint), a job that does not meet halves; also after the codec.
#[test]
fn hostile_part_units_are_refused() {
    let j = job_parts(6, 6, Method::Halves, 7);
    let flags = LocalFlags::default();
    let ctx = flags.context(u64::MAX);
    let Exploration::Split { rest, .. } = j.explore(&j.root_units()[0], &ctx).unwrap() else {
        panic!("6 x 6: no parts");
    };
    let KnightUnit::Part(good) = rest[1].clone() else {
        panic!("6 x 6: a layer handed back");
    };
    let with = |f: &dyn Fn(&mut MeetPart)| {
        let mut p = good.clone();
        f(&mut p);
        p
    };
    let cases: Vec<(MeetPart, &str)> = vec![
        (with(&|p| p.part = p.parts), "part"),
        (with(&|p| p.part = u32::MAX), "part"),
        (with(&|p| p.parts = 0), "parts"),
        (with(&|p| p.parts = MAX_MEET_PARTS + 1), "parts"),
        (with(&|p| p.rows = 5), "board"),
        (with(&|p| p.cols = 8), "board"),
        (with(&|p| p.square += 1), "square"),
        (with(&|p| p.left_states = u64::from(p.parts) - 1), "states"),
        (with(&|p| p.left_states += 1), "layer"),
        (with(&|p| p.fingerprint ^= 1), "fingerprint"),
    ];
    // A fresh job too: the checks after the rebuild.
    let fresh = job_parts(6, 6, Method::Halves, 7);
    for (p, what) in cases {
        for job in [&j, &fresh] {
            let bytes = orchard_core::codec::encode(&KnightUnit::Part(p.clone()));
            let u: KnightUnit = orchard_core::codec::decode(&bytes).unwrap();
            match job.explore(&u, &ctx) {
                Err(FamilyError::BadUnit(e)) => {
                    assert!(e.contains("meeting part"), "{what}: {e}");
                    assert!(!e.contains('\n'), "one line: {e}");
                }
                r => panic!("{what}: {p:?} gave {r:?}"),
            }
        }
    }
    let sweep = job_parts(6, 6, Method::Sweep, 7);
    let r = sweep.explore(&KnightUnit::Part(good.clone()), &ctx);
    assert!(matches!(r, Err(FamilyError::BadUnit(_))), "{r:?}");
    // The good one still counts, on either job.
    for job in [&j, &fresh] {
        assert!(matches!(
            job.explore(&KnightUnit::Part(good.clone()), &ctx),
            Ok(Exploration::Finished(_))
        ));
    }
    // Truncated bytes of a part are a codec error, not a unit.
    let bytes = orchard_core::codec::encode(&KnightUnit::Part(good));
    for n in 0..bytes.len() {
        assert!(orchard_core::codec::decode::<KnightUnit>(&bytes[..n]).is_err());
    }
    // The part size is checked with the parameters.
    let p = |n| KnightParams {
        rows: 6,
        cols: 6,
        max_states: 10,
        method: Method::default(),
        meet_part_states: n,
    };
    let e = KnightTours::new(p(0), &Host::default()).unwrap_err();
    assert!(e.to_string().contains("meet-part-states"), "{e}");
    assert!(KnightTours::new(p((1 << 24) + 1), &Host::default()).is_err());
}

/// A root unit stopped by its budget before the meeting hands back its
/// whole layer as one unit that says so (`Whole`); that unit, reaching the
/// meeting, hands back the named parts as the root would, and the count is
/// the reference's. A layer cut into several units meets its own states.
#[test]
fn a_whole_layer_handed_back_still_hands_back_the_parts() {
    for (rows, cols) in [(6, 6), (5, 8)] {
        let j = job_parts(rows, cols, Method::Halves, 5);
        let flags = LocalFlags::default();
        let mut pending = j.root_units();
        assert!(matches!(pending[0], KnightUnit::Whole(_)));
        let (mut wholes, mut parts) = (0, 0);
        let mut total = TourSummary::default();
        while let Some(u) = pending.pop() {
            match &u {
                KnightUnit::Whole(_) => wholes += 1,
                KnightUnit::Part(_) => parts += 1,
                KnightUnit::Layer(l) => panic!("a cut layer at square {}", l.square),
            }
            match j.explore(&u, &flags.context(50)).unwrap() {
                Exploration::Finished(s) => j.merge(&mut total, s).unwrap(),
                Exploration::Split { explored, rest } => {
                    j.merge(&mut total, explored).unwrap();
                    pending.extend(rest);
                }
            }
        }
        assert!(wholes > 3, "{rows} x {cols}: {wholes} whole layers");
        // A whole layer at the meeting square, past the right states'
        // square, in a fresh job: it never saw the right states, and its
        // parts must sweep for them, not turn the meeting layer.
        let f = j.frontier();
        let mut sweep = orchard_knight_tours::Sweep::new(f, 0, &[(Frontier::START, 1)]).unwrap();
        let meeting = orchard_knight_tours::join::Meeting::new(f).unwrap();
        assert_eq!(meeting.right + 1, meeting.left, "{rows} x {cols}");
        while sweep.square() < meeting.left {
            sweep.advance(u64::MAX, &mut |_| {}).unwrap();
        }
        let late = KnightUnit::Whole(Layer {
            square: meeting.left as u32,
            states: sweep.layer().iter().collect(),
        });
        let fresh = job_parts(rows, cols, Method::Halves, 5);
        let late = explore_all(&fresh, vec![late], u64::MAX).unwrap();
        assert_eq!(late.tours, total.tours, "{rows} x {cols}");
        assert_eq!(late.rebuilt, 0, "{rows} x {cols}: the layer was kept");
        assert!(parts > 3, "{rows} x {cols}: {parts} parts");
        assert_eq!(
            total.tours,
            search_by(rows, cols, u64::MAX, Method::Sweep).tours
        );
        assert_eq!(total.states, search(rows, cols, u64::MAX).states);
    }
}

/// A stop that comes while a part is being met (a shutdown, a cancel)
/// abandons the meeting and hands the part back whole, its states not
/// counted, instead of holding the stop until the part ends (an 8 x 8
/// part is minutes to hours); met again, it counts what it would have.
#[test]
fn a_part_stopped_mid_meeting_is_handed_back_whole() {
    let j = job_parts(6, 8, Method::Halves, 1 << 20);
    let flags = LocalFlags::default();
    let Exploration::Split { rest, .. } = j
        .explore(&j.root_units()[0], &flags.context(u64::MAX))
        .unwrap()
    else {
        panic!("6 x 8: the root met its layer itself");
    };
    let part = rest[0].clone();
    assert!(matches!(part, KnightUnit::Part(_)), "{part:?}");
    let whole = match j.explore(&part, &flags.context(u64::MAX)).unwrap() {
        Exploration::Finished(s) => s,
        e => panic!("an unstopped part split: {e:?}"),
    };
    assert!(whole.tours > 0 && whole.nodes > 0);
    // The stop is raised as soon as the meeting reports progress.
    let flags = LocalFlags::default();
    let stopped = std::thread::scope(|scope| {
        scope.spawn(|| {
            while flags.progress.load(Ordering::Relaxed) == 0 {
                std::hint::spin_loop();
            }
            flags.stop.store(true, Ordering::Relaxed);
        });
        j.explore(&part, &flags.context(u64::MAX)).unwrap()
    });
    match stopped {
        Exploration::Split { explored, rest } => {
            assert_eq!(explored.nodes, 0, "nothing of the abandoned part counted");
            assert_eq!(explored.tours, 0);
            assert_eq!(rest, vec![part.clone()]);
        }
        Exploration::Finished(s) => panic!(
            "the stop came after {} of {} states and the part ran to its end",
            flags.progress.load(Ordering::Relaxed),
            s.nodes
        ),
    }
    let again = match j
        .explore(&part, &LocalFlags::default().context(u64::MAX))
        .unwrap()
    {
        Exploration::Finished(s) => s,
        e => panic!("the part met again split: {e:?}"),
    };
    assert_eq!(counts(again), counts(whole));
}
