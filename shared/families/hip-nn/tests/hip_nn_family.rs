//! The `hip-nn` family against its plain second implementations: the fast
//! network against the literal procedure (the same trajectory, bit for
//! bit), the exact check against a brute-force square enumeration, and
//! splitting and merging that must not change a summary.

use orchard_core::{explore_all, explore_pieces, Host, SearchFamily};
use orchard_hip_nn::geometry::{parse, Geometry, Violation};
use orchard_hip_nn::{reference, render, run_seed, Constants, HipNn, HipNnParams, HipNnSummary};
use orchard_hip_nn::{Network, Outcome, Update};
use proptest::prelude::*;

fn job(players: u32, size: u32, runs: u64, seed: u64, max_iterations: u32) -> HipNn {
    HipNn::new(
        HipNnParams {
            players,
            size,
            runs,
            seed,
            max_iterations,
            update: Update::Parallel,
            unit_runs: None,
        },
        &Host::default(),
    )
    .unwrap()
}

#[test]
fn fast_network_follows_the_literal_procedure() {
    // Small games, many seeds: converged and unconverged runs, ties at U_max.
    for update in [Update::Parallel, Update::Sequential] {
        let mut converged = 0;
        let mut unconverged = 0;
        for (m, n, runs, cutoff) in [
            (2, 2, 20, 50),
            (2, 4, 60, 300),
            (3, 6, 8, 300),
            (2, 6, 6, 120),
            (4, 4, 30, 200),
            (4, 8, 2, 150),
        ] {
            let geo = Geometry::new(n);
            let mut net = Network::new(&geo, m, Constants::PAPER, update);
            for k in 0..runs {
                let fast = net.run(7, k, cutoff);
                let (slow, u) = reference::run(n, m, Constants::PAPER, update, 7, k, cutoff);
                assert_eq!(fast, slow, "{m} players {n}x{n}, run {k}");
                let same_bits = net
                    .inputs()
                    .iter()
                    .zip(&u)
                    .all(|(a, b)| a.to_bits() == b.to_bits());
                assert!(
                    same_bits,
                    "{m} players {n}x{n}, run {k}: final inputs differ"
                );
                match fast {
                    Outcome::Converged { .. } => converged += 1,
                    Outcome::Unconverged => unconverged += 1,
                }
            }
        }
        assert!(
            converged > 20 && unconverged >= 3,
            "{update:?}: {converged} {unconverged}"
        );
    }
}

#[test]
fn squares_through_each_cell_are_the_b_term_of_equation_4() {
    // Every square through a cell once, as the (p, q) sum of equation (4)
    // has it: the brute-force squares through the cell, as sets.
    for n in 2..=7 {
        let geo = Geometry::new(n);
        let brute = reference::squares_by_distances(n);
        assert_eq!(geo.squares.len(), brute.len(), "{n}x{n}");
        assert_eq!(geo.squares.len(), n * n * (n * n - 1) / 12);
        for cell in 0..n * n {
            let mut got: Vec<Vec<usize>> = geo
                .others(cell)
                .iter()
                .map(|o| {
                    let mut q: Vec<usize> = o.iter().map(|&c| c as usize).collect();
                    q.push(cell);
                    q.sort_unstable();
                    q
                })
                .collect();
            got.sort();
            let want: Vec<Vec<usize>> = brute
                .iter()
                .filter(|q| q.contains(&cell))
                .map(|q| q.to_vec())
                .collect();
            assert_eq!(got, want, "{n}x{n} cell {cell}");
        }
    }
}

/// A random board of `m` players, `n^2/m` cells each.
fn board_from(n: usize, m: usize, mut x: u64) -> Vec<u8> {
    let mut b: Vec<u8> = (0..n * n).map(|i| (i % m) as u8).collect();
    for i in (1..b.len()).rev() {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        b.swap(i, (x >> 33) as usize % (i + 1));
    }
    b
}

#[test]
fn exact_check_agrees_with_brute_force() {
    let mut draws = 0;
    for (n, m) in [(4, 2), (4, 4), (5, 5), (6, 2), (6, 3), (6, 4)] {
        let geo = Geometry::new(n);
        let brute = reference::squares_by_distances(n);
        for seed in 0..300u64 {
            let b = board_from(n, m, seed);
            let bad = reference::has_one_player_square(&b, &brute);
            assert_eq!(
                geo.check(&b, m).is_err(),
                bad,
                "{n}x{n} {m}: {}",
                render(&b, n)
            );
            draws += u64::from(!bad);
        }
        // Counts are checked too.
        let mut b = board_from(n, m, 1);
        b[0] = (b[0] + 1) % m as u8;
        assert!(matches!(
            geo.check(&b, m),
            Err(Violation::Count { .. }) | Err(Violation::Square(_))
        ));
        b[0] = m as u8;
        assert!(matches!(geo.check(&b, m), Err(Violation::Player { .. })));
    }
    assert!(draws > 100, "the sample has draws: {draws}");
}

#[test]
fn canonical_forms_are_orbit_invariants() {
    let geo = Geometry::new(6);
    for seed in 0..50 {
        let b = board_from(6, 3, seed);
        let c = geo.canonical(&b);
        let pat = geo.pattern(&b);
        for p in &geo.perms {
            let mut img = vec![0u8; b.len()];
            for (cell, &v) in b.iter().enumerate() {
                img[p[cell] as usize] = v;
            }
            assert_eq!(geo.canonical(&img), c);
            // Renaming the players changes the board, not the pattern.
            let renamed: Vec<u8> = img.iter().map(|&v| (v + 1) % 3).collect();
            assert_eq!(geo.pattern(&renamed), pat);
        }
        assert!(c <= b);
        assert_eq!(parse(&render(&c, 6)).unwrap(), c);
    }
}

#[test]
fn runs_are_reproducible_alone_and_seeds_distinct() {
    let seeds: std::collections::BTreeSet<u64> = (0..10_000).map(|k| run_seed(42, k)).collect();
    assert_eq!(seeds.len(), 10_000);
    // A unit of one run gives that run's part of the whole job.
    let j = job(2, 4, 40, 3, 300);
    let whole = explore_all(&j, j.root_units(), u64::MAX).unwrap();
    let mut parts = HipNnSummary::default();
    for k in 0..40 {
        let one = explore_all(
            &j,
            vec![orchard_core::runs::RunRange {
                start: k,
                end: k + 1,
            }],
            1,
        )
        .unwrap();
        assert_eq!(one.runs, 1);
        j.merge(&mut parts, one).unwrap();
    }
    assert_eq!(parts, whole);
}

#[test]
fn every_summary_verified_and_consistent() {
    for (m, n) in [(2, 4), (3, 6), (2, 6)] {
        let j = job(m, n, 60, 11, 400);
        let s = explore_all(&j, j.root_units(), u64::MAX).unwrap();
        assert_eq!(s.runs, 60);
        assert_eq!(s.rejected, 0);
        assert_eq!(s.converged, s.verified);
        assert_eq!(s.histogram.values().sum::<u64>(), s.verified);
        assert_eq!(
            s.histogram
                .iter()
                .map(|(k, v)| u64::from(*k) * v)
                .sum::<u64>(),
            s.iterations
        );
        assert_eq!(s.boards.values().sum::<u64>(), s.verified);
        assert_eq!(s.nodes, s.iterations + (s.runs - s.verified) * 400);
        let geo = Geometry::new(n as usize);
        for b in s.boards.keys() {
            let board = parse(b).unwrap();
            assert_eq!(geo.canonical(&board), board, "listed in canonical form");
            assert!(geo.check(&board, m as usize).is_ok());
            // Centre-symmetric, as step (13) makes every board.
            assert!(board.iter().zip(board.iter().rev()).all(|(a, b)| a == b));
        }
        let r = j.report(&s);
        assert_eq!(r.json["runs"], 60);
        assert_eq!(r.json["verified"], s.verified);
        assert_eq!(r.results_lines.len(), s.boards.len());
    }
}

fn summary_with_budget(budget: u64) -> HipNnSummary {
    let j = job(3, 6, 50, 5, 300);
    explore_all(&j, j.root_units(), budget).unwrap()
}

#[test]
fn tiny_budgets_give_the_same_summary() {
    let whole = summary_with_budget(u64::MAX);
    for budget in [1, 10, 100, 1000] {
        assert_eq!(summary_with_budget(budget), whole, "budget {budget}");
    }
    // Every split hands back exactly the runs not started.
    let j = job(3, 6, 50, 5, 300);
    let pieces = explore_pieces(&j, j.root_units(), 1).unwrap();
    assert_eq!(pieces.len(), 50);
    assert!(pieces.iter().all(|p| p.runs == 1));
}

#[test]
fn bad_parameters_and_units_are_refused() {
    let p = |players, size, runs| HipNnParams {
        players,
        size,
        runs,
        seed: 0,
        max_iterations: 10,
        update: Update::Parallel,
        unit_runs: None,
    };
    for (params, name) in [
        (p(2, 5, 10), "size"),
        (p(2, 18, 10), "size"),
        (p(5, 6, 10), "players"),
        (p(1, 4, 10), "players"),
        (p(2, 4, 0), "runs"),
    ] {
        assert_eq!(HipNn::new(params, &Host::default()).unwrap_err().name, name);
    }
    let j = job(2, 4, 10, 0, 10);
    let flags = orchard_core::LocalFlags::default();
    for (start, end) in [(3, 3), (5, 11), (12, 13)] {
        assert!(j
            .explore(
                &orchard_core::runs::RunRange { start, end },
                &flags.context(10)
            )
            .is_err());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Merging the pieces of a split job in any order gives one summary.
    #[test]
    fn merge_is_order_independent(budget in 1u64..2000, shuffle in any::<u64>()) {
        let j = job(2, 4, 30, 9, 200);
        orchard_core::testing::merged_in_any_order(&j, j.root_units(), budget, shuffle);
    }
}
