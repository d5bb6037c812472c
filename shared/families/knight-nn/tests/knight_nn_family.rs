//! The `knight-nn` family against its plain second implementation (the
//! paper's `p x p` arrays, the same trajectory bit for bit), the exact tour
//! check, and splitting and merging that must not change a summary.

use orchard_core::runs::RunRange;
use orchard_core::{explore_all, explore_pieces, Host, SearchFamily};
use orchard_knight_nn::{
    check_tour, reference, Graph, Init, KnightNn, KnightNnParams, KnightNnSummary, Network,
    Outcome, Update,
};
use proptest::prelude::*;

fn params(rows: u32, cols: u32, runs: u64, seed: u64, max_iterations: u32) -> KnightNnParams {
    KnightNnParams {
        rows,
        cols,
        runs,
        seed,
        max_iterations,
        init: Init::RandomOutput,
        update: Update::Parallel,
        unit_runs: None,
    }
}

fn job(rows: u32, cols: u32, runs: u64, seed: u64, max_iterations: u32) -> KnightNn {
    KnightNn::new(
        params(rows, cols, runs, seed, max_iterations),
        &Host::default(),
    )
    .unwrap()
}

#[test]
fn fast_network_follows_the_paper_arrays() {
    for update in [Update::Parallel, Update::Sequential] {
        let (mut tours, mut loops, mut none) = (0, 0, 0);
        for (r, c, runs, cutoff) in [
            (3, 4, 30, 60),
            (5, 6, 30, 300),
            (6, 6, 40, 300),
            (4, 5, 20, 100),
            (8, 8, 12, 400),
            (5, 5, 5, 50),
            (6, 6, 100, 500),
        ] {
            let graph = Graph::new(r, c);
            let mut net = Network::new(&graph, Init::RandomOutput, update);
            for k in 0..runs {
                let fast = net.run(5, k, cutoff);
                let (slow, outputs) =
                    reference::run(r, c, Init::RandomOutput, update, 5, k, cutoff);
                assert_eq!(net.outputs(), &outputs[..], "{r}x{c} run {k}");
                match fast {
                    Outcome::Tour {
                        iterations,
                        ref tour,
                    } => {
                        assert_eq!(slow, Some((iterations, 1)), "{r}x{c} run {k}");
                        assert!(check_tour(r, c, tour));
                        tours += 1;
                    }
                    Outcome::Loops {
                        iterations,
                        loops: l,
                    } => {
                        assert!(l >= 2);
                        assert_eq!(slow, Some((iterations, l)), "{r}x{c} run {k}");
                        loops += 1;
                    }
                    Outcome::Unconverged => {
                        assert_eq!(slow, None, "{r}x{c} run {k}");
                        none += 1;
                    }
                }
            }
        }
        assert!(loops > 5 && none > 5, "{update:?}: {tours} {loops} {none}");
        if update == Update::Sequential {
            assert!(tours > 5, "{tours}");
        }
    }
}

#[test]
fn tour_check_is_exact() {
    // A closed tour of 3 x 4 does not exist; 5 x 6 and 6 x 6 ones come
    // from the network; every corruption of them is refused.
    let j = job(6, 6, 200, 1, 1000);
    let s = explore_all(&j, j.root_units(), u64::MAX).unwrap();
    assert!(!s.examples.is_empty());
    for tour in s.examples.values() {
        assert!(check_tour(6, 6, tour));
        let mut t = tour.clone();
        t.swap(3, 17);
        assert!(!check_tour(6, 6, &t), "swapped squares");
        let mut t = tour.clone();
        t.rotate_left(5);
        assert!(check_tour(6, 6, &t), "any starting square");
        t.reverse();
        assert!(check_tour(6, 6, &t), "either direction");
        t.pop();
        assert!(!check_tour(6, 6, &t), "a square missing");
        t.push(t[0]);
        assert!(!check_tour(6, 6, &t), "a square twice");
        assert!(!check_tour(4, 9, tour), "another board shape");
    }
    // An open path closed by a non-move is refused: 0, 7 on 3 x 4 ...
    assert!(!check_tour(2, 2, &[0, 3, 1, 2]));
}

#[test]
fn summaries_add_up() {
    for (r, c) in [(6, 6), (5, 6), (8, 8), (3, 4), (5, 5)] {
        let j = job(r, c, 100, 3, 500);
        let s = explore_all(&j, j.root_units(), u64::MAX).unwrap();
        assert_eq!(s.runs, 100);
        assert_eq!(s.tours + s.multi_loop + s.unconverged, 100);
        assert_eq!(s.rejected, 0);
        assert_eq!(s.tour_histogram.values().sum::<u64>(), s.tours);
        assert_eq!(s.loop_histogram.values().sum::<u64>(), s.multi_loop);
        assert_eq!(s.loops.values().sum::<u64>(), s.tours + s.multi_loop);
        assert_eq!(s.loops.get(&1).copied().unwrap_or(0), s.tours);
        assert_eq!(
            s.nodes,
            s.tour_iterations + s.loop_iterations + 500 * s.unconverged
        );
        if r * c % 2 == 1 {
            // A 2-factor of a bipartite graph needs an even number of squares.
            assert_eq!(s.unconverged, 100, "{r}x{c}");
        }
        if (r, c) == (3, 4) {
            assert_eq!(s.tours, 0, "3 x 4 has no closed tour");
        }
        let rep = j.report(&s);
        assert_eq!(rep.json["runs"], 100);
        assert_eq!(rep.results_lines.len(), s.examples.len());
    }
}

#[test]
fn runs_are_reproducible_alone() {
    let j = job(6, 6, 30, 8, 300);
    let whole = explore_all(&j, j.root_units(), u64::MAX).unwrap();
    let mut parts = KnightNnSummary::default();
    for k in (0..30).rev() {
        let one = explore_all(
            &j,
            vec![RunRange {
                start: k,
                end: k + 1,
            }],
            1,
        )
        .unwrap();
        j.merge(&mut parts, one).unwrap();
    }
    assert_eq!(parts, whole);
}

#[test]
fn tiny_budgets_give_the_same_summary() {
    let j = job(6, 8, 40, 2, 300);
    let whole = explore_all(&j, j.root_units(), u64::MAX).unwrap();
    for budget in [1, 7, 100, 5000] {
        assert_eq!(
            explore_all(&j, j.root_units(), budget).unwrap(),
            whole,
            "budget {budget}"
        );
    }
    let pieces = explore_pieces(&j, j.root_units(), 1).unwrap();
    assert_eq!(pieces.len(), 40);
}

#[test]
fn bad_parameters_and_units_are_refused() {
    for (p, name) in [
        (params(0, 6, 1, 0, 1), "rows"),
        (params(6, 65, 1, 0, 1), "cols"),
        (params(6, 6, 0, 0, 1), "runs"),
    ] {
        assert_eq!(KnightNn::new(p, &Host::default()).unwrap_err().name, name);
    }
    let j = job(6, 6, 10, 0, 10);
    let flags = orchard_core::LocalFlags::default();
    for (start, end) in [(3, 3), (5, 11)] {
        assert!(j
            .explore(&RunRange { start, end }, &flags.context(10))
            .is_err());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn merge_is_order_independent(budget in 1u64..3000, shuffle in any::<u64>()) {
        let j = job(6, 6, 40, 4, 300);
        orchard_core::testing::merged_in_any_order(&j, j.root_units(), budget, shuffle);
    }
}
