//! The `magic-hexagon` family against the plain reference implementation
//! and the chapter's statements; splitting and merging must not change an
//! answer; orders without an integral row sum are settled without a search.

use orchard_core::{explore_all, FamilyError, Host, SearchFamily};
use orchard_magic_hexagon::{
    reference, Hexagon, Lines, MagicHexagon, MagicHexagonParams, MagicHexagonSummary, Prefix,
    Puzzle, MAX_ORDER,
};
use proptest::prelude::*;

fn job(order: u32, lines: Lines, sum: Option<u64>) -> MagicHexagon {
    MagicHexagon::new(MagicHexagonParams { order, lines, sum }, &Host::default()).unwrap()
}

fn magic(order: u32) -> MagicHexagon {
    job(order, Lines::Rows, None)
}

fn exercise(sum: u64) -> MagicHexagon {
    job(3, Lines::SidesAndSpokes, Some(sum))
}

/// The whole job, explored in this thread with `budget` nodes per call.
fn search(job: &MagicHexagon, budget: u64) -> MagicHexagonSummary {
    explore_all(job, job.root_units(), budget).unwrap()
}

/// The chapter's letters (figure 6.11) of the cells, in this crate's
/// reading order: the figure's vertical columns `H J L`, `B E N P`,
/// `A D G R S`, `C F O Q`, `I K M` are our rows.
const LETTERS: [char; 19] = [
    'H', 'J', 'L', 'B', 'E', 'N', 'P', 'A', 'D', 'G', 'R', 'S', 'C', 'F', 'O', 'Q', 'I', 'K', 'M',
];

fn cell(letter: char) -> usize {
    LETTERS.iter().position(|&l| l == letter).unwrap()
}

fn sorted_lines(lines: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = lines
        .iter()
        .map(|l| {
            let mut l = l.clone();
            l.sort_unstable();
            l
        })
        .collect();
    out.sort();
    out
}

fn lettered(words: &[&str]) -> Vec<Vec<usize>> {
    let lines: Vec<Vec<usize>> = words
        .iter()
        .map(|w| w.chars().map(cell).collect())
        .collect();
    sorted_lines(&lines)
}

#[test]
fn order_3_agrees_with_reference() {
    let s = search(&magic(3), u64::MAX);
    let all = reference::arrangements(3, &reference::rows(3), 38);
    let distinct = reference::distinct(3, &all);
    assert_eq!(s.solutions, all.len() as u64);
    assert_eq!(s.distinct, distinct.len() as u64);
    assert_eq!(s.listed, distinct.into_iter().collect::<Vec<_>>());
    // Adams's hexagon, the only one, in its usual presentation.
    assert_eq!((s.solutions, s.distinct), (12, 1));
    assert_eq!(
        magic(3).report(&s).results_lines,
        ["3 17 18 / 19 7 1 11 / 16 2 5 6 9 / 12 4 8 14 / 10 13 15"]
    );
}

#[test]
fn exercise_agrees_with_reference() {
    // Every sum a line of three cells can have, 23 the exercise's.
    for sum in 6..=54 {
        let s = search(&exercise(sum), u64::MAX);
        let all = reference::arrangements(3, &reference::sides_and_spokes(3), sum as i64);
        let distinct = reference::distinct(3, &all);
        assert_eq!(s.solutions, all.len() as u64, "sum {sum}");
        assert_eq!(s.distinct, distinct.len() as u64, "sum {sum}");
        assert_eq!(
            s.listed,
            distinct.into_iter().collect::<Vec<_>>(),
            "sum {sum}"
        );
        assert_eq!(
            s.solutions,
            12 * s.distinct,
            "no arrangement is its own image"
        );
    }
    let s = search(&exercise(23), u64::MAX);
    assert_eq!((s.solutions, s.distinct), (24, 2));
}

#[test]
fn order_2_sides_and_spokes_agree_with_reference() {
    for sum in 1..=15 {
        let j = job(2, Lines::SidesAndSpokes, Some(sum));
        let s = search(&j, u64::MAX);
        let all = reference::arrangements(2, &reference::sides_and_spokes(2), sum as i64);
        assert_eq!(s.solutions, all.len() as u64, "sum {sum}");
        assert_eq!(s.distinct, reference::distinct(2, &all).len() as u64);
    }
}

/// The geometry's lines are the reference's, built another way.
#[test]
fn lines_agree_with_reference() {
    for k in 1..=5 {
        let h = Hexagon::new(k);
        assert_eq!(
            sorted_lines(&h.rows()),
            sorted_lines(&reference::rows(k as i32))
        );
        if (2..=3).contains(&k) {
            assert_eq!(
                sorted_lines(&h.sides_and_spokes()),
                sorted_lines(&reference::sides_and_spokes(k as i32))
            );
        }
    }
}

/// The reading of figure 6.11: the chapter's lines are this crate's lines,
/// and the exercise's twelve lines are its six sides and six spokes.
#[test]
fn the_chapters_lettering() {
    let h = Hexagon::new(3);
    assert_eq!(
        sorted_lines(&h.rows()),
        lettered(&[
            "HJL", "BENP", "ADGRS", "CFOQ", "IKM", // the figure's columns
            "ABH", "CDEJ", "IFGNL", "KORP", "MQS", // A + B + H, ...
            "ACI", "BDFK", "HEGOM", "JNRQ", "LPS",
        ])
    );
    assert_eq!(
        sorted_lines(&h.sides_and_spokes()),
        lettered(&[
            "ABH", "HJL", "LPS", "SQM", "MKI", "ICA", // sides
            "GDA", "GEH", "GNL", "GRS", "GOM", "GFI", // spokes
        ])
    );
}

/// The chapter's statements about the order-3 hexagon hold in every
/// arrangement found, and its hint is one of them.
#[test]
fn the_chapters_statements() {
    let s = search(&magic(3), u64::MAX);
    let all: Vec<Vec<u8>> = s
        .listed
        .iter()
        .flat_map(|a| reference::images(3, a))
        .collect();
    assert_eq!(all.len() as u64, s.solutions);
    let v = |a: &[u8], l: char| i32::from(a[cell(l)]);
    for a in &all {
        // Statement 2: (A) is not 1 or 2.
        assert!(v(a, 'A') > 2);
        // Statement 5.
        let g = v(a, 'G');
        assert_eq!(v(a, 'P'), g + v(a, 'D') + v(a, 'F'));
        assert_eq!(v(a, 'Q'), g + v(a, 'E') + v(a, 'D'));
        assert_eq!(v(a, 'K'), g + v(a, 'N') + v(a, 'E'));
        assert_eq!(v(a, 'C'), g + v(a, 'R') + v(a, 'N'));
        assert_eq!(v(a, 'B'), g + v(a, 'O') + v(a, 'R'));
        assert_eq!(v(a, 'J'), g + v(a, 'F') + v(a, 'O'));
        // Statement 6.
        assert!((1..=8).contains(&g));
        // Statement 4: B > C goes with E > F.
        assert_eq!(v(a, 'B') > v(a, 'C'), v(a, 'E') > v(a, 'F'));
    }
    // The hint: A = 9, B = 14, C = 11, G = 5.
    assert!(all
        .iter()
        .any(|a| (v(a, 'A'), v(a, 'B'), v(a, 'C'), v(a, 'G')) == (9, 14, 11, 5)));
    // Statements 3 and 4 leave two arrangements: the program "would find
    // only one other rotation".
    let kept = all
        .iter()
        .filter(|a| (8..=14).contains(&v(a, 'A')) && v(a, 'B') > v(a, 'C'))
        .count();
    assert_eq!(kept, 2);
}

/// Only orders 1 and 3 have an integral row sum, up to the largest order
/// accepted; every other one is settled by the argument, with no node.
#[test]
fn the_integrality_argument() {
    for k in 1..=MAX_ORDER {
        let j = magic(k);
        assert_eq!(j.reason().is_none(), k == 1 || k == 3, "order {k}");
        if j.reason().is_some() {
            let s = search(&j, u64::MAX);
            assert_eq!(s, MagicHexagonSummary::default());
            let r = j.report(&s);
            assert_eq!(r.json["method"], "argument");
            assert_eq!(r.json["solutions"], 0);
            assert_eq!(r.json["nodes"], 0);
            assert!(r.json["sum"].is_null());
        }
    }
    let r = magic(4).reason().unwrap().to_string();
    assert!(r.contains("703/7, not an integer"), "{r}");
    // A sum other than the forced one.
    let j = job(3, Lines::Rows, Some(39));
    assert!(j.reason().unwrap().contains("190/5 = 38, not 39"));
    assert_eq!(search(&j, u64::MAX).nodes, 0);
    let j = job(3, Lines::Rows, Some(38));
    assert!(j.reason().is_none());
    assert_eq!(search(&j, 1000), search(&magic(3), u64::MAX));
}

/// The argument agrees with a search where a search can go: order 2 has no
/// magic arrangement for any sum, by the family's search engine and by the
/// reference, run on the rows directly.
#[test]
fn order_2_has_no_magic_arrangement_for_any_sum() {
    let h = Hexagon::new(2);
    for sum in 1..=28 {
        let p = Puzzle::new(
            7,
            h.rows(),
            sum,
            &(0..7).collect::<Vec<_>>(),
            h.symmetries(),
        )
        .unwrap();
        let units = p.prefixes(0);
        let flags = orchard_core::LocalFlags::default();
        let mut solutions = 0;
        for u in units {
            match p.explore(&u, &flags.context(u64::MAX)).unwrap() {
                orchard_core::Exploration::Finished(s) => solutions += s.solutions,
                orchard_core::Exploration::Split { .. } => unreachable!(),
            }
        }
        assert_eq!(solutions, 0, "sum {sum}");
        assert!(reference::arrangements(2, &reference::rows(2), sum).is_empty());
    }
}

#[test]
fn order_1_is_trivial() {
    let s = search(&magic(1), u64::MAX);
    assert_eq!((s.solutions, s.distinct), (1, 1));
    assert_eq!(magic(1).report(&s).results_lines, ["1"]);
    assert_eq!(
        reference::arrangements(1, &reference::rows(1), 1),
        [vec![1]]
    );
}

#[test]
fn splitting_does_not_change_the_summary() {
    let whole = search(&magic(3), u64::MAX);
    for budget in [100, 5_000, 100_000] {
        assert_eq!(search(&magic(3), budget), whole, "budget {budget}");
    }
    let whole = search(&exercise(23), u64::MAX);
    for budget in [1, 7, 1_000] {
        assert_eq!(search(&exercise(23), budget), whole, "budget {budget}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(30))]

    /// Any order of merging the pieces of a split job gives the same summary.
    #[test]
    fn merge_order_does_not_matter(budget in 200u64..5000, seed in any::<u64>()) {
        let j = exercise(23);
        let (merged, _) = orchard_core::testing::merged_in_any_order(&j, j.root_units(), budget, seed);
        prop_assert_eq!(merged, search(&j, u64::MAX));
    }
}

#[test]
fn units_below_a_prefix_partition_the_search() {
    // The root units' summaries add up to the whole, and each unit finds
    // exactly the reference's arrangements that extend it.
    let j = exercise(23);
    let p = j.puzzle().unwrap();
    let all = reference::arrangements(3, &reference::sides_and_spokes(3), 23);
    let order = p.order().to_vec();
    let mut total = 0;
    for u in j.root_units() {
        let s = explore_all(&j, vec![u.clone()], 3).unwrap();
        let want = all
            .iter()
            .filter(|a| {
                u.0.iter()
                    .enumerate()
                    .all(|(d, &v)| a[order[d] as usize] == v)
            })
            .count();
        assert_eq!(s.solutions, want as u64, "below {u:?}");
        total += s.solutions;
    }
    assert_eq!(total, 24);
}

#[test]
fn bad_units_are_rejected() {
    let j = magic(3);
    let first = j.puzzle().unwrap().prefixes(2)[0].0.clone();
    let forced_wrong = {
        // The third cell completes a side: any value but 38 minus the two
        // others fails.
        let s = explore_all(&j, vec![Prefix(first.clone())], u64::MAX).unwrap();
        assert!(s.nodes > 0);
        let forced = 38 - first[0] - first[1];
        let other = (1..=19)
            .find(|v| *v != forced && !first.contains(v))
            .unwrap();
        let mut p = first.clone();
        p.push(other);
        p
    };
    let bad = [
        vec![0],
        vec![20],
        vec![first[0], first[0]],
        forced_wrong,
        vec![1; 20],
    ];
    for prefix in bad {
        let err = explore_all(&j, vec![Prefix(prefix.clone())], 10).unwrap_err();
        assert!(matches!(err, FamilyError::BadUnit(_)), "{prefix:?}: {err}");
    }
    let err = explore_all(&magic(4), vec![Prefix(vec![1])], 10).unwrap_err();
    assert!(matches!(err, FamilyError::BadUnit(_)), "{err}");
}

#[test]
fn parameters_are_validated() {
    let new = |order, lines, sum| {
        MagicHexagon::new(MagicHexagonParams { order, lines, sum }, &Host::default())
    };
    for (order, lines, sum, name) in [
        (0, Lines::Rows, None, "order"),
        (MAX_ORDER + 1, Lines::Rows, None, "order"),
        (3, Lines::Rows, Some(0), "sum"),
        (3, Lines::SidesAndSpokes, None, "sum"),
        (4, Lines::SidesAndSpokes, Some(23), "order"),
        (1, Lines::SidesAndSpokes, Some(1), "order"),
    ] {
        let e = new(order, lines, sum).unwrap_err();
        assert_eq!(e.name, name, "{order} {lines:?} {sum:?}: {e}");
    }
    assert!(new(MAX_ORDER, Lines::Rows, None).is_ok());
    // The parameters' JSON: the lines default to rows, the sum to none.
    let p: MagicHexagonParams = serde_json::from_str("{\"order\":3}").unwrap();
    assert_eq!((p.lines, p.sum), (Lines::Rows, None));
    let p: MagicHexagonParams =
        serde_json::from_str("{\"order\":3,\"lines\":\"sides-and-spokes\",\"sum\":23}").unwrap();
    assert_eq!((p.lines, p.sum), (Lines::SidesAndSpokes, Some(23)));
}

#[test]
fn report_has_the_figures() {
    let j = exercise(23);
    let r = j.report(&search(&j, u64::MAX));
    for key in [
        "family",
        "order",
        "lines",
        "sum",
        "cells",
        "line_count",
        "method",
        "reason",
        "solutions",
        "distinct",
        "nodes",
        "listed",
        "first",
    ] {
        assert!(r.json.get(key).is_some(), "missing {key}");
    }
    assert_eq!(r.json["family"], "magic-hexagon");
    assert_eq!(r.json["lines"], "sides-and-spokes");
    assert_eq!(r.json["method"], "search");
    assert!(r.json["reason"].is_null());
    assert_eq!(r.json["solutions"], 24);
    assert_eq!(r.results_lines.len(), 2);
    for line in &r.results_lines {
        let rows: Vec<Vec<u32>> = line
            .split(" / ")
            .map(|row| row.split(' ').map(|v| v.parse().unwrap()).collect())
            .collect();
        assert_eq!(
            rows.iter().map(Vec::len).collect::<Vec<_>>(),
            [3, 4, 5, 4, 3]
        );
        let mut vals: Vec<u32> = rows.concat();
        vals.sort_unstable();
        assert_eq!(vals, (1..=19).collect::<Vec<_>>());
    }
}
