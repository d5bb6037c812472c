//! The `hc` family against the published figures and against the plain
//! reference implementation.

use orchard_core::{explore_all, Host, ParamError, SearchFamily};
use orchard_hc::{digits, reference, HararyColumns, HcParams, HcSummary, RgsPrefix, Variant};
use proptest::prelude::*;

fn params(columns: u32, variant: Variant, min_length: Option<u32>) -> HcParams {
    HcParams {
        columns,
        variant,
        min_length,
    }
}

fn job(p: &HcParams) -> Result<HararyColumns, ParamError> {
    HararyColumns::new(p.clone(), &Host::default())
}

fn search(p: &HcParams, prefix: Vec<u8>, budget: u64) -> HcSummary {
    explore_all(&job(p).unwrap(), vec![RgsPrefix(prefix)], budget).expect("search runs")
}

fn sorted_games(s: &HcSummary) -> Vec<String> {
    let mut g: Vec<String> = s.best_games.iter().map(|g| digits(g)).collect();
    g.sort();
    g
}

#[test]
fn published_h_values_pairs() {
    // (c, h, maximal games)
    for (c, h, count) in [(1, 3, 1), (2, 9, 1), (3, 24, 3)] {
        let s = search(&params(c, Variant::Pairs, None), vec![], u64::MAX);
        assert_eq!(s.best + 1, h, "h({c})");
        assert_eq!(s.best_count, count, "maximal games for c = {c}");
        assert_eq!(s.best_games.len() as u64, count);
    }
    let s = search(&params(3, Variant::Pairs, None), vec![], u64::MAX);
    assert_eq!(
        sorted_games(&s),
        [
            "11212221331333313323212",
            "11212221331333331323212",
            "11212221331333333323212"
        ]
    );
}

#[test]
fn published_h_values_subsets() {
    for (c, h, count) in [(1, 3, 1), (2, 9, 1), (3, 22, 1), (4, 47, 5)] {
        let s = search(&params(c, Variant::Subsets, None), vec![], u64::MAX);
        assert_eq!(s.best + 1, h, "h'({c})");
        assert_eq!(s.best_count, count, "maximal games for c = {c}");
    }
    let s = search(&params(3, Variant::Subsets, None), vec![], u64::MAX);
    assert_eq!(sorted_games(&s), ["112122213333333333221"]);
}

/// Small budgets force many splits; the merged answer must not change, and
/// in `--min-length` mode (fixed horizon) not even the node count may change.
#[test]
fn splitting_does_not_change_the_answer() {
    for variant in [Variant::Pairs, Variant::Subsets] {
        let p = params(3, variant, Some(15));
        let whole = search(&p, vec![], u64::MAX);
        for budget in [1, 7, 1000] {
            let split = search(&p, vec![], budget);
            assert_eq!(split.nodes, whole.nodes, "{variant:?} budget {budget}");
            assert_eq!(split.histogram, whole.histogram);
            assert_eq!(split.best_count, whole.best_count);
            assert_eq!(sorted_games(&split), sorted_games(&whole));
        }
        let p = params(3, variant, None);
        let whole = search(&p, vec![], u64::MAX);
        let split = search(&p, vec![], 50);
        assert_eq!(
            (split.best, split.best_count),
            (whole.best, whole.best_count)
        );
    }
}

#[test]
fn bad_prefix_is_rejected() {
    let p = params(2, Variant::Pairs, None);
    // Column 3 does not exist with two columns.
    assert!(explore_all(&job(&p).unwrap(), vec![RgsPrefix(vec![0, 2])], 10).is_err());
    // Not restricted-growth: column 2 before column 1... (0-based 1 first).
    assert!(explore_all(&job(&p).unwrap(), vec![RgsPrefix(vec![1])], 10).is_err());
    // 3 = 1 + 2 in column 1.
    assert!(explore_all(&job(&p).unwrap(), vec![RgsPrefix(vec![0, 0, 0])], 10).is_err());
}

#[test]
fn parameters_are_validated() {
    for bad in [0, 7] {
        let e = job(&params(bad, Variant::Pairs, None)).unwrap_err();
        assert_eq!(e.name, "columns");
    }
    let e = job(&params(3, Variant::Pairs, Some(0))).unwrap_err();
    assert_eq!(e.name, "min-length");
    assert!(job(&params(6, Variant::Subsets, Some(100))).is_ok());
}

/// Generates a random legal RGS prefix by walking the reference rules.
fn legal_prefix(columns: usize, variant: Variant, choices: &[u8]) -> Vec<u8> {
    let mut game: Vec<u8> = Vec::new();
    for &pick in choices {
        let used = game.iter().map(|&x| x as usize + 1).max().unwrap_or(0);
        let n = game.len() as u32 + 1;
        let options: Vec<u8> = (0..(used + 1).min(columns) as u8)
            .filter(|&col| {
                let members: Vec<u32> = (0..game.len())
                    .filter(|&i| game[i] == col)
                    .map(|i| i as u32 + 1)
                    .collect();
                reference::may_place(variant, &members, n)
            })
            .collect();
        if options.is_empty() {
            break;
        }
        game.push(options[pick as usize % options.len()]);
    }
    game
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Below any prefix, for any L, the search counts exactly the games the
    /// reference enumerates: histogram for lengths >= L, the longest length,
    /// and every longest game. Also the default (maximum-finding) mode.
    #[test]
    fn agrees_with_reference(
        columns in 1usize..=3,
        subsets in any::<bool>(),
        choices in proptest::collection::vec(any::<u8>(), 0..12),
        min_length in 1u32..26,
        budget in prop_oneof![Just(u64::MAX), 1u64..200],
    ) {
        let variant = if subsets { Variant::Subsets } else { Variant::Pairs };
        let prefix = legal_prefix(columns, variant, &choices);
        let all = reference::ended_games(columns, variant, &prefix).unwrap();

        let reaching: Vec<Vec<u8>> = all.iter().filter(|g| g.len() as u32 >= min_length).cloned().collect();
        let p = params(columns as u32, variant, Some(min_length));
        let got = search(&p, prefix.clone(), budget);
        prop_assert_eq!(&got.histogram, &reference::histogram(&reaching));
        let best = reaching.iter().map(|g| g.len()).max().unwrap_or(0) as u32;
        prop_assert_eq!(got.best, best);
        let mut want: Vec<String> = reaching.iter().filter(|g| g.len() as u32 == best).map(|g| digits(g)).collect();
        want.sort();
        prop_assert_eq!(sorted_games(&got), want.clone());

        let p = params(columns as u32, variant, None);
        let got = search(&p, prefix, budget);
        let best = all.iter().map(|g| g.len()).max().unwrap() as u32;
        prop_assert_eq!(got.best, best);
        let mut want: Vec<String> = all.iter().filter(|g| g.len() as u32 == best).map(|g| digits(g)).collect();
        want.sort();
        prop_assert_eq!(sorted_games(&got), want);
    }
}

/// Games beyond the listing cap are counted but not listed, and a longer
/// game resets the listing.
#[test]
fn listing_cap_keeps_counts_exact() {
    use orchard_hc::MAX_LISTED_GAMES;
    let p = params(3, Variant::Pairs, None);
    let mut a = HcSummary {
        best: 10,
        best_count: MAX_LISTED_GAMES as u64,
        best_games: vec![vec![0; 10]; MAX_LISTED_GAMES],
        ..Default::default()
    };
    let b = HcSummary {
        best: 10,
        best_count: 2,
        best_games: vec![vec![0; 10]; 2],
        ..Default::default()
    };
    job(&p).unwrap().merge(&mut a, b).unwrap();
    assert_eq!(a.best_count, MAX_LISTED_GAMES as u64 + 2);
    assert!(a.best_games_dropped);
    assert_eq!(a.best_games.len(), MAX_LISTED_GAMES);
    let report = job(&p).unwrap().report(&a);
    assert!(
        report.results_lines.is_empty(),
        "an incomplete list is not written"
    );
    assert_eq!(report.json["maximal_listed"], false);
    let longer = HcSummary {
        best: 11,
        best_count: 1,
        best_games: vec![vec![0; 11]],
        ..Default::default()
    };
    job(&p).unwrap().merge(&mut a, longer).unwrap();
    assert!(!a.best_games_dropped);
    assert_eq!((a.best, a.best_count, a.best_games.len()), (11, 1, 1));
}

/// The dashboard's histogram is the reference's count of ended games by
/// length, one bar per length, in order; without `--min-length`, one bar:
/// the longest games.
#[test]
fn the_histogram_figure_counts_games_by_length() {
    use orchard_core::figure::Figure;
    let p = params(3, Variant::Pairs, Some(1));
    let j = job(&p).unwrap();
    let s = search(&p, vec![], u64::MAX);
    let want = reference::histogram(&reference::ended_games(3, Variant::Pairs, &[]).unwrap());
    let figures = j.figures(&s, &[]);
    let [Figure::Histogram(h)] = figures.as_slice() else {
        panic!("one histogram: {figures:?}");
    };
    let bars: Vec<(String, u64)> = h.bars.iter().map(|b| (b.label.clone(), b.value)).collect();
    let want: Vec<(String, u64)> = want.iter().map(|(l, n)| (l.to_string(), *n)).collect();
    assert!(want.len() > 5, "a histogram with some shape: {want:?}");
    assert_eq!(bars, want);

    let p = params(3, Variant::Pairs, None);
    let j = job(&p).unwrap();
    assert!(
        j.figures(&HcSummary::default(), &[]).is_empty(),
        "nothing found, nothing drawn"
    );
    let s = search(&p, vec![], u64::MAX);
    let figures = j.figures(&s, &[]);
    let [Figure::Histogram(h)] = figures.as_slice() else {
        panic!("one histogram: {figures:?}");
    };
    assert_eq!(h.bars.len(), 1);
    assert_eq!((h.bars[0].label.as_str(), h.bars[0].value), ("23", 3));
}
