//! The `grundy` family against the plain reference implementation, the
//! published nim-values (OEIS A002188) and the chapter's table; splitting
//! and merging must not change an answer.

use std::collections::HashMap;

use orchard_core::{explore_all, Exploration, FamilyError, Host, SearchFamily};
use orchard_grundy::{
    reference, search, Grundy, GrundyParams, GrundySummary, GrundyUnit, MISERE_LIMIT,
};
use proptest::prelude::*;

fn job(max: u32, misere_max: Option<u32>) -> Grundy {
    Grundy::new(
        GrundyParams {
            max,
            misere_max,
            list: false,
        },
        &Host::default(),
    )
    .unwrap()
}

/// The whole job, explored in this thread with `budget` nodes per call.
fn search(max: u32, misere_max: Option<u32>, budget: u64) -> GrundySummary {
    let job = job(max, misere_max);
    explore_all(&job, job.root_units(), budget).unwrap()
}

fn report_list(s: &GrundySummary, job: &Grundy, key: &str) -> Vec<u32> {
    serde_json::from_value(job.report(s).json[key].clone()).unwrap()
}

#[test]
fn nim_values_agree_with_reference() {
    let want = reference::nim_values(25);
    let s = search(25, Some(0), u64::MAX);
    let got: Vec<u32> = s.nim_prefix().iter().map(|&v| u32::from(v)).collect();
    assert_eq!(got, want);
}

#[test]
fn nim_values_agree_with_a002188() {
    // OEIS A002188 (%S, %T, %U lines), offset 0: a(0) = 0.
    let published = [
        0, 0, 0, 1, 0, 2, 1, 0, 2, 1, 0, 2, 1, 3, 2, 1, 3, 2, 4, 3, 0, 4, 3, 0, 4, 3, 0, 4, 1, 2,
        3, 1, 2, 4, 1, 2, 4, 1, 2, 4, 1, 5, 4, 1, 5, 4, 1, 5, 4, 1, 0, 2, 1, 0, 2, 1, 5, 2, 1, 3,
        2, 1, 3, 2, 4, 3, 2, 4, 3, 2, 4, 3, 2, 4, 3, 2, 4, 3, 2, 4, 5, 2, 4, 5, 2, 4, 3, 7, 4, 3,
        7, 4, 3, 7, 4, 3, 5, 2, 3, 5, 2, 3, 5, 2, 3,
    ];
    let s = search(published.len() as u32 - 1, Some(0), u64::MAX);
    let got: Vec<u16> = s.nim_prefix();
    assert_eq!(got, published.to_vec());
    // And the reference agrees on the part it can reach.
    let r = reference::nim_values(25);
    assert_eq!(
        r,
        published[..=25]
            .iter()
            .map(|&v| u32::from(v))
            .collect::<Vec<_>>()
    );
}

#[test]
fn losses_agree_with_reference() {
    let job = job(20, Some(20));
    let s = explore_all(&job, job.root_units(), u64::MAX).unwrap();
    assert_eq!(
        report_list(&s, &job, "normal_losses"),
        reference::losses(20, false)
    );
    assert_eq!(
        report_list(&s, &job, "misere_losses"),
        reference::losses(20, true)
    );
}

/// Misère play further: the reference keeps every heap and simplifies
/// nothing, so this checks dropping the dead heaps of 1 and 2.
#[test]
fn misere_losses_agree_with_reference_to_40() {
    let job = job(40, Some(40));
    let s = explore_all(&job, job.root_units(), u64::MAX).unwrap();
    let want = reference::losses(40, true);
    assert_eq!(want, [3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33, 36, 39]);
    assert_eq!(report_list(&s, &job, "misere_losses"), want);
}

/// Values far beyond the reference's reach: the rare "sparse" values listed
/// by Flammenkamp ("Sprague-Grundy Values of Grundy's Game").
#[test]
fn nim_values_agree_with_flammenkamps_sparse_values() {
    let sparse = [
        (28, 1),
        (50, 0),
        (53, 0),
        (61, 1),
        (87, 7),
        (90, 7),
        (93, 7),
        (146, 6),
        (152, 6),
        (158, 11),
        (167, 11),
        (181, 12),
        (190, 12),
        (196, 10),
        (231, 10),
    ];
    let g = search(250, Some(0), u64::MAX).nim_prefix();
    for (n, v) in sparse {
        assert_eq!(g[n], v, "g({n})");
    }
}

#[test]
fn moves_are_winning_moves() {
    let job = job(20, Some(20));
    let s = explore_all(&job, job.root_units(), u64::MAX).unwrap();
    let g = s.nim_prefix();
    let mut normal = HashMap::new();
    let mut misere = HashMap::new();
    for n in 1..=20u32 {
        let mv = search::normal_move(&g, n as usize);
        assert_eq!(
            mv.is_some(),
            reference::wins(&[n], false, &mut normal),
            "{n}"
        );
        if let Some((a, b)) = mv {
            assert!(a > b && a + b == n);
            assert!(
                reference::is_winning_move(a, b, false),
                "normal {n}: {a},{b}"
            );
        }
        let o = s.misere[&n];
        assert_eq!(o.win, reference::wins(&[n], true, &mut misere), "{n}");
        match o.mv {
            Some((a, b)) => {
                assert!(a > b && a + b == n);
                assert!(
                    reference::is_winning_move(a, b, true),
                    "misère {n}: {a},{b}"
                );
            }
            // Only heaps 1 and 2 are won without a move.
            None => assert!(!o.win || n <= 2, "{n}"),
        }
    }
}

/// The chapter's table (section 6.2) for heaps 1..=30: heap, ordinary
/// value, ordinary move, misère value, misère move; `?` is the chapter's
/// "a win in either version", a move `(0, 0)` none.
type Row = (u32, char, (u32, u32), char, (u32, u32));

const CHAPTER: [Row; 30] = [
    (1, 'L', (0, 0), 'W', (0, 0)),
    (2, 'L', (0, 0), 'W', (0, 0)),
    (3, 'W', (2, 1), 'L', (0, 0)),
    (4, 'L', (0, 0), 'W', (3, 1)),
    (5, '?', (4, 1), '?', (3, 2)),
    (6, 'W', (4, 2), 'L', (0, 0)),
    (7, 'L', (0, 0), 'W', (6, 1)),
    (8, '?', (7, 1), '?', (6, 2)),
    (9, 'W', (7, 2), 'L', (0, 0)),
    (10, 'L', (0, 0), 'W', (9, 1)),
    (11, '?', (10, 1), '?', (9, 2)),
    (12, 'W', (10, 2), 'L', (0, 0)),
    (13, '?', (8, 5), '?', (8, 5)),
    (14, '?', (10, 4), '?', (12, 2)),
    (15, 'W', (12, 3), 'L', (0, 0)),
    (16, '?', (11, 5), '?', (11, 5)),
    (17, '?', (10, 7), '?', (15, 2)),
    (18, 'W', (15, 3), 'L', (0, 0)),
    (19, '?', (11, 8), '?', (11, 8)),
    (20, 'L', (0, 0), 'L', (0, 0)),
    (21, '?', (20, 1), 'L', (0, 0)),
    (22, '?', (20, 2), '?', (20, 2)),
    (23, 'L', (0, 0), 'L', (0, 0)),
    (24, '?', (23, 1), '?', (23, 1)),
    (25, '?', (23, 2), '?', (23, 2)),
    (26, 'L', (0, 0), 'L', (0, 0)),
    (27, '?', (26, 1), '?', (26, 1)),
    (28, '?', (26, 2), '?', (26, 2)),
    (29, '?', (13, 16), '?', (13, 16)),
    (30, '?', (26, 4), '?', (26, 4)),
];

/// Where the family and the reference differ from the chapter's table: the
/// normal-play column agrees everywhere (W/L and every move); the misère
/// column agrees up to 19 and is wrong from 20 on, where the chapter's
/// misère column repeats the normal one: it calls 20, 23 and 26 losses,
/// though 20 = 18 + 2 leaves a heap of 18, a loss by the chapter's own
/// table (likewise 23 = 21 + 2), and calls 24, 27 and 30 wins, which are
/// losses; its misère moves for 22, 24, 25, 27, 28, 29 and 30 all leave the
/// opponent a win.
#[test]
fn chapter_table() {
    let job = job(30, Some(30));
    let s = explore_all(&job, job.root_units(), u64::MAX).unwrap();
    let g = s.nim_prefix();
    let mut memo = HashMap::new();
    let (mut wl_differs, mut move_loses) = (Vec::new(), Vec::new());
    for (n, ov, om, mv, mm) in CHAPTER {
        // Normal play: all agree.
        assert_eq!(ov != 'L', g[n as usize] != 0, "normal {n}");
        assert_eq!(ov != 'L', reference::wins(&[n], false, &mut HashMap::new()));
        if om != (0, 0) {
            assert!(reference::is_winning_move(om.0, om.1, false), "normal {n}");
            assert_eq!(g[om.0 as usize], g[om.1 as usize], "normal {n}");
        }
        // Misère play: the family and the reference agree...
        let win = reference::wins(&[n], true, &mut memo);
        assert_eq!(s.misere[&n].win, win, "misère {n}");
        // ... and the chapter does not always.
        if (mv != 'L') != win {
            wl_differs.push(n);
        }
        if mm != (0, 0) && !reference::is_winning_move(mm.0, mm.1, true) {
            move_loses.push(n);
        }
    }
    assert_eq!(wl_differs, [20, 23, 24, 26, 27, 30]);
    assert_eq!(move_loses, [22, 24, 25, 27, 28, 29, 30]);
}

/// Every call's summary kept apart, exploring with `budget` nodes per call.
fn pieces(job: &Grundy, budget: u64) -> Vec<GrundySummary> {
    orchard_core::explore_pieces(job, job.root_units(), budget).unwrap()
}

fn merged(job: &Grundy, pieces: impl IntoIterator<Item = GrundySummary>) -> GrundySummary {
    orchard_core::merge_all(job, pieces).unwrap()
}

#[test]
fn splitting_does_not_change_the_summary() {
    // Several root units (max >= 1000), explored last-first by a fresh job
    // (so every unit but the first recomputes its prefix) and in small
    // budgets: the same nim-values and the same node count.
    let whole = search(3000, Some(0), u64::MAX);
    assert_eq!(job(3000, Some(0)).root_units().len(), 8);
    assert_eq!(whole.nim.len(), 1, "one run of heaps 1..=3000");
    // The node count: the splits (a, n - a), a < n - a, of every heap.
    assert_eq!(whole.nodes, (1..=3000u64).map(|n| (n - 1) / 2).sum::<u64>());
    for budget in [1, 1000, 100_000] {
        let j = job(3000, Some(0));
        let split = merged(&j, pieces(&j, budget));
        assert_eq!(split, whole, "budget {budget}");
    }
    // Misère units: the same outcomes (node counts depend on the memo).
    let whole = search(40, Some(40), u64::MAX);
    for budget in [1, 50, 1000] {
        let j = job(40, Some(40));
        let split = merged(&j, pieces(&j, budget));
        assert_eq!(split.nim, whole.nim, "budget {budget}");
        assert_eq!(split.misere, whole.misere, "budget {budget}");
    }
}

#[test]
fn a_split_hands_back_exactly_the_rest() {
    let j = job(100, Some(20));
    let flags = orchard_core::LocalFlags::default();
    match j
        .explore(
            &GrundyUnit::Normal { from: 10, to: 100 },
            &flags.context(100),
        )
        .unwrap()
    {
        Exploration::Split { explored, rest } => {
            let (&from, run) = explored.nim.iter().next().unwrap();
            let last = from + run.len() as u32 - 1;
            assert_eq!(from, 10);
            assert_eq!(
                rest,
                [GrundyUnit::Normal {
                    from: last + 1,
                    to: 100
                }]
            );
        }
        Exploration::Finished(_) => panic!("a budget of 100 splits a range of 91 heaps"),
    }
    // A stop request splits too, after one heap.
    flags.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    match j
        .explore(
            &GrundyUnit::Misere { from: 5, to: 20 },
            &flags.context(u64::MAX),
        )
        .unwrap()
    {
        Exploration::Split { explored, rest } => {
            assert_eq!(explored.misere.keys().copied().collect::<Vec<_>>(), [5]);
            assert_eq!(rest, [GrundyUnit::Misere { from: 6, to: 20 }]);
        }
        Exploration::Finished(_) => panic!("stop requested"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// Any order of merging the pieces of a split job gives the same summary.
    #[test]
    fn merge_order_does_not_matter(
        max in 1u32..=1500,
        budget in 1u64..5000,
        seed in any::<u64>(),
    ) {
        let j = job(max, None);
        let (merged, _) = orchard_core::testing::merged_in_any_order(&j, j.root_units(), budget, seed);
        prop_assert_eq!(merged.nim_prefix().len() as u32, max + 1);
    }
}

#[test]
fn overlapping_summaries_are_rejected() {
    let j = job(50, Some(10));
    let flags = orchard_core::LocalFlags::default();
    let explore = |u| match j.explore(&u, &flags.context(u64::MAX)).unwrap() {
        Exploration::Finished(s) => s,
        Exploration::Split { .. } => panic!("unlimited budget"),
    };
    let a = explore(GrundyUnit::Normal { from: 1, to: 30 });
    let b = explore(GrundyUnit::Normal { from: 20, to: 50 });
    let mut total = a.clone();
    let err = j.merge(&mut total, b).unwrap_err();
    assert!(matches!(err, FamilyError::BadUnit(_)), "{err}");
    let m = explore(GrundyUnit::Misere { from: 1, to: 10 });
    let mut total = m.clone();
    assert!(j.merge(&mut total, m).is_err());
}

#[test]
fn bad_parameters_are_rejected() {
    let bad = [
        (0, None, "max"),
        (orchard_grundy::MAX_N + 1, None, "max"),
        (10, Some(11), "misere-max"),
        (1000, Some(MISERE_LIMIT + 1), "misere-max"),
    ];
    for (max, misere_max, name) in bad {
        let p = GrundyParams {
            max,
            misere_max,
            list: false,
        };
        let err = Grundy::new(p, &Host::default()).unwrap_err();
        assert_eq!(err.name, name, "max {max}, misere_max {misere_max:?}");
    }
    assert_eq!(job(10, None).misere_max(), 10);
    assert_eq!(job(1000, None).misere_max(), 30);
    assert_eq!(job(1000, Some(0)).misere_max(), 0);
}

#[test]
fn bad_units_are_rejected() {
    let bad = [
        GrundyUnit::Normal { from: 0, to: 5 },
        GrundyUnit::Normal { from: 6, to: 5 },
        GrundyUnit::Normal { from: 1, to: 51 },
        GrundyUnit::Misere { from: 0, to: 3 },
        GrundyUnit::Misere { from: 1, to: 21 },
    ];
    for unit in bad {
        let err = explore_all(&job(50, Some(20)), vec![unit], 10).unwrap_err();
        assert!(matches!(err, FamilyError::BadUnit(_)), "{unit:?}: {err}");
    }
}

#[test]
fn report() {
    let job = Grundy::new(
        GrundyParams {
            max: 2000,
            misere_max: Some(8),
            list: false,
        },
        &Host::default(),
    )
    .unwrap();
    let s = explore_all(&job, job.root_units(), u64::MAX).unwrap();
    let r = job.report(&s);
    assert_eq!(r.json["family"], "grundy");
    assert_eq!(r.json["max"], 2000);
    assert_eq!(r.json["misere_max"], 8);
    assert_eq!(r.json["complete"], true);
    assert!(r.json["nim_values"].is_null(), "not listed beyond 1000");
    assert_eq!(r.json["misere_losses"], serde_json::json!([3, 6]));
    let losses = report_list(&s, &job, "normal_losses");
    assert_eq!(losses[..8], [1, 2, 4, 7, 10, 20, 23, 26]);
    assert_eq!(r.results_lines.len(), 2000);
    assert_eq!(r.results_lines[7], "8 2 normal:W 7,1 misere:W 6,2");
    assert_eq!(r.results_lines[8], "9 1 normal:W 7,2");
    assert_eq!(r.results_lines[19], "20 0 normal:L -");
    assert_eq!(r.json["nodes"], s.nodes);
    // Splits examined: floor((n - 1) / 2) per heap.
    let splits: u64 = (1..=2000u64).map(|n| (n - 1) / 2).sum();
    assert!(s.nodes >= splits);

    // A partial summary reports what it covers.
    let partial = job.report(&GrundySummary::default());
    assert_eq!(partial.json["complete"], false);
    assert!(partial.results_lines.is_empty());
}

#[test]
fn nim_values_are_listed_for_small_jobs_or_on_request() {
    let j = job(30, None);
    let s = explore_all(&j, j.root_units(), u64::MAX).unwrap();
    let listed: Vec<u16> = serde_json::from_value(j.report(&s).json["nim_values"].clone()).unwrap();
    assert_eq!(listed, s.nim_prefix()[1..]);
    let j = Grundy::new(
        GrundyParams {
            max: 1001,
            misere_max: Some(0),
            list: true,
        },
        &Host::default(),
    )
    .unwrap();
    let s = explore_all(&j, j.root_units(), u64::MAX).unwrap();
    assert_eq!(
        j.report(&s).json["nim_values"].as_array().unwrap().len(),
        1001
    );
}

/// A table whose splits `(a, n - a)`, `a = 1..=k`, have the XORs `0..k`.
fn synthetic(k: usize) -> (Vec<u16>, usize) {
    let n = 2 * k + 1;
    let mut g = vec![0u16; n];
    for (a, v) in g[1..=k].iter_mut().enumerate() {
        *v = a as u16; // g(a + 1) = a
    }
    (g, n)
}

/// The mex beyond the stack table, at its edge, and beyond 16 bits.
#[test]
fn nim_value_mex_widths() {
    let (g, n) = synthetic(1500);
    assert_eq!(search::nim_value(&g, n, 2048).unwrap(), (1500, 1500));
    let (g, n) = synthetic(1024);
    assert_eq!(search::nim_value(&g, n, 1024).unwrap().0, 1024);
    let (g, n) = synthetic(65536);
    let err = search::nim_value(&g, n, 65536).unwrap_err();
    assert!(matches!(err, FamilyError::Capacity(_)), "{err}");
    assert_eq!(search::width(0), 1);
    assert_eq!(search::width(230), 256);
    assert_eq!(search::width(256), 512);
}

/// Threads of one process sharing a job (as a worker's do): a thread handed
/// a later range waits for the thread computing the values below it rather
/// than recompute them; the answer is the same.
#[test]
fn threads_share_the_table() {
    let whole = search(4000, Some(20), u64::MAX);
    for threads in [2, 3] {
        let j = job(4000, Some(20));
        let queue = std::sync::Mutex::new(j.root_units());
        let total = std::sync::Mutex::new(GrundySummary::default());
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| {
                    let flags = orchard_core::LocalFlags::default();
                    loop {
                        // Leased in order: the first unit first.
                        let unit = {
                            let mut q = queue.lock().unwrap();
                            if q.is_empty() {
                                break;
                            }
                            q.remove(0)
                        };
                        let (s, rest) = match j.explore(&unit, &flags.context(200_000)).unwrap() {
                            Exploration::Finished(s) => (s, vec![]),
                            Exploration::Split { explored, rest } => (explored, rest),
                        };
                        j.merge(&mut total.lock().unwrap(), s).unwrap();
                        let mut q = queue.lock().unwrap();
                        for (i, r) in rest.into_iter().enumerate() {
                            q.insert(i, r);
                        }
                    }
                });
            }
        });
        let total = total.into_inner().unwrap();
        assert_eq!(total.nim, whole.nim, "{threads} threads");
        assert_eq!(total.misere, whole.misere, "{threads} threads");
    }
}
