//! `hip-draws` against the plain reference (every colouring checked one by
//! one), against Franke's table of draws, and across methods and budgets.

use clap::{Args, FromArgMatches};
use orchard_core::{explore_all, Exploration, Host, LocalFlags, ParamError, SearchFamily};
use orchard_hip::{reference, DrawsParams, DrawsSummary, DrawsUnit, HipDraws, HipSolve, Method};

fn params(rows: u32, cols: u32, colors: u32, method: Method) -> DrawsParams {
    DrawsParams {
        rows,
        cols,
        colors,
        method,
        memory_limit: None,
    }
}

/// The job of these parameters.
fn job(p: &DrawsParams) -> HipDraws {
    HipDraws::new(p.clone(), &Host::default()).expect("valid parameters")
}

fn validate(p: &DrawsParams) -> Result<HipDraws, ParamError> {
    HipDraws::new(p.clone(), &Host::default())
}

fn run(p: &DrawsParams, budget: u64) -> DrawsSummary {
    let job = job(p);
    explore_all(&job, job.root_units(), budget).expect("search runs")
}

fn field(p: &DrawsParams, s: &DrawsSummary, name: &str) -> serde_json::Value {
    job(p).report(s).json[name].clone()
}

/// Every count the report gives, by every method, equals the reference.
#[test]
fn agrees_with_reference() {
    let cases = [
        (2, 2, 2),
        (2, 3, 2),
        (3, 3, 2),
        (2, 4, 2),
        (2, 5, 2),
        (3, 4, 2),
        (4, 4, 2),
        (3, 5, 2),
        (2, 2, 3),
        (2, 3, 3),
        (3, 3, 3),
        (2, 5, 3),
        (3, 4, 3),
        (2, 3, 4),
        (3, 3, 4),
        (2, 2, 5),
    ];
    for (r, c, k) in cases {
        let want = reference::draws(r as usize, c as usize, k as usize);
        for method in [Method::Seeds, Method::Profile] {
            let p = params(r, c, k, method);
            let s = run(&p, u64::MAX);
            let what = format!("{r}x{c}, {k} colours, {method:?}");
            assert_eq!(s.draws, u128::from(want.draws), "draws {what}");
            assert_eq!(s.playable, u128::from(want.playable), "playable {what}");
            assert_eq!(
                field(&p, &s, "distinct"),
                serde_json::json!(want.distinct),
                "distinct {what}"
            );
            assert_eq!(
                field(&p, &s, "distinct_playable"),
                serde_json::json!(want.distinct_playable),
                "distinct playable {what}"
            );
            let lines = job(&p).report(&s).results_lines;
            if method == Method::Seeds && want.draws <= 100_000 {
                assert!(lines == want.boards, "boards {what}");
            } else {
                assert!(lines.is_empty(), "no listing: {what}");
            }
        }
    }
}

/// Franke's table A: draws and playable draws, by the seeds method.
#[test]
fn table_a() {
    let table = [
        (2, 3, 50, 20),
        (3, 3, 248, 92),
        (3, 4, 1236, 482),
        (4, 4, 5006, 2094),
        (4, 5, 18282, 7236),
        (5, 5, 7120, 2704),
        (5, 6, 5684, 2316),
        (6, 6, 56, 24),
        (6, 7, 0, 0),
        (7, 7, 0, 0),
    ];
    for (r, c, draws, playable) in table {
        let p = params(r, c, 2, Method::Auto);
        let s = run(&p, u64::MAX);
        assert_eq!((s.draws, s.playable), (draws, playable), "{r}x{c}");
        let rep = job(&p).report(&s);
        assert_eq!(rep.json["draws"], serde_json::json!(draws));
        assert_eq!(rep.json["playable"], serde_json::json!(playable));
        assert_eq!(rep.results_lines.len() as u128, draws, "every draw listed");
        // Transposed parameters are the same job.
        let t = run(&params(c, r, 2, Method::Auto), u64::MAX);
        assert_eq!(
            (t.draws, t.playable, t.distinct),
            (s.draws, s.playable, s.distinct)
        );
    }
}

/// The profile method agrees with the seeds method on table A boards, two
/// colours (a check of the DP independent of the reference's board sizes).
#[test]
fn methods_agree_on_table_a() {
    for (r, c) in [(4, 4), (4, 5), (5, 5)] {
        let a = run(&params(r, c, 2, Method::Seeds), u64::MAX);
        let pp = params(r, c, 2, Method::Profile);
        let b = run(&pp, u64::MAX);
        assert_eq!((a.draws, a.playable), (b.draws, b.playable), "{r}x{c}");
        assert_eq!(
            field(&pp, &b, "distinct"),
            serde_json::json!(a.distinct),
            "{r}x{c}"
        );
        assert_eq!(
            field(&pp, &b, "distinct_playable"),
            serde_json::json!(a.distinct_playable)
        );
    }
}

/// Every 6x6 draw really has no monochromatic square, and they come in
/// orbits: the listed boards are closed under the symmetries.
#[test]
fn six_by_six_draws_are_draws() {
    let p = params(6, 6, 2, Method::Auto);
    let s = run(&p, u64::MAX);
    let lines = job(&p).report(&s).results_lines;
    assert_eq!(lines.len(), 56);
    let squares = reference::squares_by_subsets(6, 6);
    let set: std::collections::BTreeSet<&String> = lines.iter().collect();
    for line in &lines {
        let cells: Vec<u8> = line.bytes().filter(|&b| b != b'/').collect();
        assert_eq!(cells.len(), 36);
        assert!(!squares
            .iter()
            .any(|q| q.iter().all(|&i| cells[i] == cells[q[0]])));
        for m in reference::symmetries(6, 6) {
            let mut img = [0u8; 36];
            for i in 0..36 {
                img[m[i]] = cells[i];
            }
            let text: String = img
                .chunks(6)
                .map(|row| String::from_utf8(row.to_vec()).unwrap())
                .collect::<Vec<_>>()
                .join("/");
            assert!(set.contains(&text));
        }
    }
}

/// Tiny budgets split units many times; the counts must not change.
#[test]
fn splitting_does_not_change_counts() {
    for (r, c, k, method) in [
        (3, 4, 2, Method::Seeds),
        (3, 3, 3, Method::Profile),
        (4, 4, 2, Method::Seeds),
        (3, 3, 2, Method::Profile),
    ] {
        let p = params(r, c, k, method);
        let whole = run(&p, u64::MAX);
        for budget in [1, 7, 1000] {
            let split = run(&p, budget);
            let what = format!("{r}x{c} k={k} {method:?} budget {budget}");
            assert_eq!(split.draws, whole.draws, "{what}");
            assert_eq!(split.playable, whole.playable, "{what}");
            assert_eq!(split.distinct, whole.distinct, "{what}");
            assert_eq!(split.fixed_draws, whole.fixed_draws, "{what}");
            assert_eq!(split.fixed_playable, whole.fixed_playable, "{what}");
            let (mut a, mut b) = (split.boards.clone(), whole.boards.clone());
            a.sort();
            b.sort();
            assert!(a == b, "boards {what}");
        }
    }
}

/// Merging is commutative and associative (and the boards list obeys the
/// cap whatever the order).
#[test]
fn merge_is_order_independent() {
    let p = params(3, 4, 2, Method::Seeds);
    let ctx_budget = 50;
    let mut parts = Vec::new();
    let mut pending = job(&p).root_units();
    let flags = LocalFlags::default();
    let ctx = flags.context(ctx_budget);
    while let Some(u) = pending.pop() {
        match job(&p).explore(&u, &ctx).unwrap() {
            Exploration::Finished(s) => parts.push(s),
            Exploration::Split { explored, rest } => {
                parts.push(explored);
                pending.extend(rest);
            }
        }
    }
    assert!(parts.len() > 3);
    let fold = |order: &mut dyn Iterator<Item = &DrawsSummary>| {
        let mut t = DrawsSummary::default();
        for s in order {
            job(&p).merge(&mut t, s.clone()).unwrap();
        }
        t.boards.sort();
        t
    };
    let forward = fold(&mut parts.iter());
    let backward = fold(&mut parts.iter().rev());
    assert_eq!(forward, backward);
    // Tree-shaped merge: pairs first.
    let mut pairs: Vec<DrawsSummary> = parts
        .chunks(2)
        .map(|c| {
            let mut t = c[0].clone();
            if let Some(s) = c.get(1) {
                job(&p).merge(&mut t, s.clone()).unwrap();
            }
            t
        })
        .collect();
    let mut t = pairs.pop().unwrap();
    for s in pairs {
        job(&p).merge(&mut t, s).unwrap();
    }
    t.boards.sort();
    assert_eq!(t, forward);
    assert_eq!(t.draws, 1236);
}

#[test]
fn seeds_are_computed_by_a_first_tier_of_units() {
    // The root unit of 7x7 walks the 6x6 seed board and hands back its 56
    // draws as new units; they extend to no 7x7 draw.
    let p = params(7, 7, 2, Method::Auto);
    let roots = job(&p).root_units();
    assert_eq!(
        roots,
        vec![DrawsUnit::Seeds {
            prefixes: vec![vec![]]
        }]
    );
    let flags = LocalFlags::default();
    let ctx = flags.context(u64::MAX);
    match job(&p).explore(&roots[0], &ctx).unwrap() {
        Exploration::Split { explored, rest } => {
            assert_eq!(explored.draws, 0);
            let seeds: usize = rest
                .iter()
                .map(|u| match u {
                    DrawsUnit::Seeds { prefixes } => {
                        assert!(prefixes.iter().all(|s| s.len() == 36));
                        prefixes.len()
                    }
                    other => panic!("unexpected unit {other:?}"),
                })
                .sum();
            assert_eq!(seeds, 56);
        }
        other => panic!("expected the seeds back, got {other:?}"),
    }
}

#[test]
fn bad_parameters_name_the_parameter() {
    let e = validate(&params(9, 9, 2, Method::Auto)).unwrap_err();
    assert_eq!(e.name, "cols");
    assert!(e.to_string().contains("--cols"));
    assert_eq!(
        validate(&params(1, 4, 2, Method::Auto)).unwrap_err().name,
        "rows"
    );
    assert_eq!(
        validate(&params(3, 3, 1, Method::Auto)).unwrap_err().name,
        "colors"
    );
    assert_eq!(
        validate(&params(3, 3, 11, Method::Auto)).unwrap_err().name,
        "colors"
    );
    assert!(validate(&params(8, 8, 2, Method::Auto)).is_ok());
    assert!(validate(&params(5, 5, 3, Method::Auto)).is_ok());
}

#[test]
fn bad_units_are_rejected() {
    let p = params(3, 3, 2, Method::Seeds);
    // A colour out of range, and a prefix completing a one-colour square
    // (the first four cells in growth order form the top-left 2x2 square).
    for prefix in [vec![2], vec![0, 0, 0, 0]] {
        let u = DrawsUnit::Seeds {
            prefixes: vec![prefix],
        };
        assert!(explore_all(&job(&p), vec![u], 10).is_err());
    }
    let u = DrawsUnit::Fixed {
        sym: 9,
        prefixes: vec![vec![]],
    };
    assert!(explore_all(&job(&p), vec![u], 10).is_err());
    let p = params(3, 3, 3, Method::Profile);
    let u = DrawsUnit::Profile {
        prefix: vec![1],
        playable: false,
    };
    assert!(
        explore_all(&job(&p), vec![u], 10).is_err(),
        "not restricted-growth"
    );
}

/// The registry of the hip families, as the binary builds it.
fn registry() -> orchard_core::Registry {
    orchard_core::Registry::default()
        .with::<HipDraws>()
        .with::<HipSolve>()
}

/// The canonical JSON parameters of a `hip-draws` command line, as the
/// binary reads them (the family's `clap::Args`).
fn params_json(args: &[&str]) -> String {
    let m = DrawsParams::augment_args(clap::Command::new("hip-draws"))
        .try_get_matches_from(args)
        .unwrap();
    serde_json::to_string(&DrawsParams::from_arg_matches(&m).unwrap()).unwrap()
}

/// Through the registry and the type-erased, encoded path the coordinator
/// and worker use.
#[test]
fn runs_through_the_registry() {
    let registry = registry();
    assert!(registry.iter().any(|f| f.name() == "hip-draws"));
    let fam = registry.by_name("hip-draws").unwrap();
    let json = params_json(&["hip-draws", "--rows", "4", "--cols", "3", "--colors", "3"]);
    let job = fam.prepare(&json, &Host::default()).unwrap();
    let flags = LocalFlags::default();
    let ctx = flags.context(1 << 20);
    let mut agg = job.new_aggregate();
    let mut pending = job.root_units();
    while let Some(u) = pending.pop() {
        job.check_unit(&u).unwrap();
        let e = job.explore(&u, &ctx).unwrap();
        job.check_summary(&e.summary).unwrap();
        agg.absorb(&e.summary).unwrap();
        pending.extend(e.rest);
    }
    let want = reference::draws(3, 4, 3);
    let rep = agg.report();
    assert_eq!(rep.json["draws"], serde_json::json!(want.draws));
    assert_eq!(rep.json["playable"], serde_json::json!(want.playable));
    assert_eq!(rep.json["distinct"], serde_json::json!(want.distinct));
    let e = params_json(&["hip-draws", "--rows", "9", "--cols", "9"]);
    assert!(fam
        .prepare(&e, &Host::default())
        .err()
        .expect("refused")
        .to_string()
        .contains("--cols"));
}

/// A memory limit the whole-board DP does not fit splits its units into
/// prefixes until each fits; the counts do not change and no unit held more
/// than the limit.
#[test]
fn a_memory_limit_splits_units_exactly() {
    let whole_p = params(4, 5, 3, Method::Profile);
    let whole = run(&whole_p, u64::MAX);
    assert_eq!(whole.memory_splits, 0);
    assert!(
        whole.peak_dp_bytes > 1 << 20,
        "the test needs a DP over 1 MiB"
    );
    let mut p = whole_p.clone();
    p.memory_limit = Some(1);
    let split = run(&p, u64::MAX);
    assert!(split.memory_splits > 0);
    assert!(split.peak_dp_bytes <= 1 << 20);
    assert_eq!((split.draws, split.playable), (whole.draws, whole.playable));
    assert_eq!(split.fixed_draws, whole.fixed_draws);
    let rep = job(&p).report(&split);
    assert_eq!(rep.json["memory_limit_mib"], serde_json::json!(1));
    assert!(rep.text.iter().any(|l| l.contains("limit: 1 MiB")));
    let mut zero = whole_p;
    zero.memory_limit = Some(0);
    assert_eq!(validate(&zero).unwrap_err().name, "memory-limit");
}

/// The dashboard's boards are the first lines of the results file, cell for
/// cell, each `rows x cols`; a method that does not list boards draws none.
#[test]
fn the_figure_draws_the_first_listed_boards() {
    use orchard_core::figure::Figure;
    let p = params(3, 4, 2, Method::Seeds);
    let s = run(&p, u64::MAX);
    let lines = job(&p).report(&s).results_lines;
    assert!(
        lines.len() > 6,
        "enough boards to choose from: {}",
        lines.len()
    );
    let figures = job(&p).figures(&s, &[]);
    let [Figure::Boards(b)] = figures.as_slice() else {
        panic!("one board figure: {figures:?}")
    };
    assert_eq!(b.grids.len(), 6);
    assert_eq!(b.legend.len(), 2);
    for (g, line) in b.grids.iter().zip(&lines) {
        assert_eq!((g.rows, g.cols), (3, 4));
        let drawn: Vec<String> = g
            .cells
            .chunks(4)
            .map(|row| row.iter().map(|c| c.state.as_str()).collect())
            .collect();
        assert_eq!(&drawn.join("/"), line);
    }
    let p = params(3, 4, 2, Method::Profile);
    let s = run(&p, u64::MAX);
    let figures = job(&p).figures(&s, &[]);
    let [Figure::Boards(b)] = figures.as_slice() else {
        panic!("one board figure: {figures:?}")
    };
    assert!(
        b.grids.is_empty() && b.note.starts_with("not listed"),
        "{b:?}"
    );
}
