//! `hip-draws --method sandwich` (inner rows walked, outer rows counted per
//! leaf) against the plain reference (every colouring checked one by one),
//! against the profile DP and the seeds walk on larger boards, across
//! budgets, and its probe against the nodes it counts.

use orchard_core::testing::{assert_expectation_is, exact_expectation};
use orchard_core::{explore_all, Host, ParamError, Probing, SearchFamily};
use orchard_hip::{reference, DrawsParams, DrawsSummary, DrawsUnit, HipDraws, Method};

fn params(rows: u32, cols: u32, colors: u32, method: Method) -> DrawsParams {
    DrawsParams {
        rows,
        cols,
        colors,
        method,
        memory_limit: None,
    }
}

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

/// The four counts of the report: draws, playable, distinct, distinct
/// playable.
fn counts(p: &DrawsParams, s: &DrawsSummary) -> [serde_json::Value; 4] {
    let json = job(p).report(s).json;
    ["draws", "playable", "distinct", "distinct_playable"].map(|k| json[k].clone())
}

/// Every count equals the reference's, on boards whose playable stone counts
/// are equal (3x3 with three colours) and unequal (3x3 with two or four
/// colours), with one and two inner rows.
#[test]
fn agrees_with_reference() {
    for (r, c, k) in [
        (3, 3, 2),
        (3, 4, 2),
        (3, 5, 2),
        (4, 4, 2),
        (3, 3, 3),
        (3, 4, 3),
        (3, 3, 4),
    ] {
        let want = reference::draws(r as usize, c as usize, k as usize);
        let p = params(r, c, k, Method::Sandwich);
        let s = run(&p, u64::MAX);
        assert_eq!(
            counts(&p, &s),
            [
                want.draws,
                want.playable,
                want.distinct,
                want.distinct_playable
            ]
            .map(serde_json::Value::from),
            "{r}x{c}, {k} colours"
        );
        assert!(job(&p).report(&s).results_lines.is_empty(), "no listing");
    }
}

/// On boards too large for the reference: the same four counts as the
/// profile DP with three and four colours (4x4 with three has unequal
/// playable stone counts, 6/5/5; 5x5 with three is 139,061,870,448 draws),
/// and as the seeds walk with two (Franke's 56 draws of 6x6).
#[test]
fn agrees_with_the_other_methods() {
    for (r, c, k, other) in [
        (4, 4, 3, Method::Profile),
        (3, 5, 3, Method::Profile),
        (4, 5, 3, Method::Profile),
        (5, 5, 3, Method::Profile),
        (4, 5, 4, Method::Profile),
        (5, 5, 2, Method::Seeds),
        (5, 6, 2, Method::Seeds),
        (6, 6, 2, Method::Seeds),
    ] {
        let a = params(r, c, k, Method::Sandwich);
        let b = params(r, c, k, other);
        let (sa, sb) = (run(&a, u64::MAX), run(&b, u64::MAX));
        assert_eq!(counts(&a, &sa), counts(&b, &sb), "{r}x{c}, {k} colours");
        assert!(sa.draws > 0, "{r}x{c}, {k} colours: something to count");
    }
}

/// Tiny budgets split the walk many times (each unit handing back its
/// untried siblings); the counts do not change.
#[test]
fn splitting_does_not_change_counts() {
    for (r, c, k) in [(4, 4, 3), (3, 5, 2), (4, 5, 2)] {
        let p = params(r, c, k, Method::Sandwich);
        let whole = run(&p, u64::MAX);
        for budget in [1, 7, 1000] {
            let split = run(&p, budget);
            let what = format!("{r}x{c} k={k} budget {budget}");
            assert_eq!(
                (split.draws, split.playable),
                (whole.draws, whole.playable),
                "{what}"
            );
            assert_eq!(split.fixed_draws, whole.fixed_draws, "{what}");
            assert_eq!(split.nodes, whole.nodes, "{what}: each node once");
        }
    }
}

/// The probe of the sandwich walk is unbiased: its expectation is the
/// number of nodes the walk counts.
#[test]
fn the_probe_expectation_is_the_walk_node_count() {
    for (r, c, k) in [(3, 3, 2), (3, 4, 3), (4, 4, 3)] {
        let p = params(r, c, k, Method::Sandwich);
        let job = job(&p);
        let root = DrawsUnit::Sandwich {
            prefixes: vec![vec![]],
        };
        assert!(job.root_units().contains(&root));
        let (expected, _) = exact_expectation(|pick| job.probe(&root, 0, pick).unwrap());
        let nodes = explore_all(&job, vec![root], u64::MAX).unwrap().nodes;
        assert_expectation_is(&format!("sandwich {r}x{c} k={k}"), expected, nodes);
    }
}

/// Boards the method does not fit, and a memory limit below its tables, are
/// refused naming the parameter; nothing is refused that fits.
#[test]
fn bad_parameters_name_the_parameter() {
    for (r, c, k) in [(2, 5, 3), (4, 6, 3), (3, 7, 4)] {
        let e = validate(&params(r, c, k, Method::Sandwich)).unwrap_err();
        assert_eq!(e.name, "method", "{r}x{c} k={k}: {e}");
        assert!(e.to_string().contains("use --method profile"), "{e}");
    }
    assert!(validate(&params(6, 6, 3, Method::Sandwich)).is_ok());
    let mut p = params(6, 6, 3, Method::Sandwich);
    p.memory_limit = Some(1);
    let e = validate(&p).unwrap_err();
    assert_eq!(e.name, "memory-limit", "{e}");
    p.memory_limit = Some(64);
    assert!(validate(&p).is_ok());
}

/// A memory limit between the smallest tables and the default ones shrinks
/// the outer rows' memos instead of refusing the job: the counts stay the
/// same and every unit's tables keep within the limit.
#[test]
fn a_tight_memory_limit_shrinks_the_memo_not_the_counts() {
    let free = params(5, 5, 3, Method::Sandwich);
    let roomy = run(&free, u64::MAX);
    assert!(roomy.peak_dp_bytes > 3 << 20, "{}", roomy.peak_dp_bytes);
    let mut tight = free.clone();
    tight.memory_limit = Some(3);
    let s = run(&tight, u64::MAX);
    assert_eq!(counts(&tight, &s), counts(&free, &roomy));
    assert_eq!(s.nodes, roomy.nodes);
    assert!(s.peak_dp_bytes <= 3 << 20, "{}", s.peak_dp_bytes);
    assert!(s.peak_dp_bytes > 0);
}

/// Prefixes that are not restricted-growth colourings of the inner cells
/// without a one-colour square are refused, not counted.
#[test]
fn bad_units_are_rejected() {
    let p = params(4, 4, 3, Method::Sandwich);
    // Inner cells in walk order: 4 5 6 7 / 8 9 10 11. Cells 4, 5, 8, 9 are a
    // square.
    for prefix in [vec![1], vec![0, 3], vec![0, 0, 1, 1, 0, 0], vec![0; 9]] {
        let u = DrawsUnit::Sandwich {
            prefixes: vec![prefix.clone()],
        };
        assert!(
            explore_all(&job(&p), vec![u], u64::MAX).is_err(),
            "{prefix:?}"
        );
    }
}
