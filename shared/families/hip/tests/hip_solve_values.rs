//! `hip-solve`'s values against plain minimax (from the empty board, from
//! random positions, with threads sharing the table, on positions Gardner's
//! pairing argument bounds) and against Franke's table of game values.

mod common;

use common::*;
use orchard_core::{explore_all, SearchFamily};
use orchard_hip::solve::{explore_pruned, value_of};
use orchard_hip::{reference, HipSolve, SolveUnit};

/// A random position reached by `stones` legal moves none of which ends the
/// game, as (moves, cells), or None if play ended earlier.
fn random_position(
    rows: usize,
    cols: usize,
    double: bool,
    stones: usize,
    rng: &mut Lcg,
) -> Option<(Vec<u8>, Vec<u8>)> {
    let squares = reference::squares_by_subsets(rows, cols);
    let mut cells = vec![0u8; rows * cols];
    let mut moves = Vec::new();
    for s in 0..stones {
        let who = reference::mover(s, double);
        let ok: Vec<usize> = (0..cells.len())
            .filter(|&i| {
                cells[i] == 0 && {
                    cells[i] = who;
                    let bad = squares.iter().any(|q| q.iter().all(|&c| cells[c] == who));
                    cells[i] = 0;
                    !bad
                }
            })
            .collect();
        if ok.is_empty() {
            return None;
        }
        let c = ok[rng.next(ok.len())];
        cells[c] = who;
        moves.push(c as u8);
    }
    (moves.len() < cells.len()).then_some((moves, cells))
}

#[test]
fn agrees_with_plain_minimax_from_the_empty_board() {
    for (r, c) in [(2, 2), (2, 3), (3, 3), (2, 4), (2, 5)] {
        for double in [false, true] {
            let mut cells = vec![0u8; r * c];
            let want = reference::minimax(r, c, double, &mut cells);
            let p = params(r as u32, c as u32, double);
            let j = job(&p);
            let s = explore_all(&j, j.root_units(), u64::MAX).unwrap();
            assert_eq!(winner(&p, &s), code(want), "{r}x{c} double={double}");
            assert_eq!(
                j.solve_position(&[]).unwrap().value,
                want,
                "{r}x{c} double={double}, one search"
            );
        }
    }
}

/// Random positions part-way through games on boards too big for the
/// reference from the start, standard and Double Hip, solved as units with
/// and without splitting.
#[test]
fn agrees_with_plain_minimax_from_random_positions() {
    let mut rng = Lcg(7);
    for (r, c, stones, count) in [
        (3, 3, 2, 12),
        (3, 4, 4, 12),
        (2, 6, 4, 8),
        (3, 5, 6, 8),
        (4, 4, 8, 12),
    ] {
        for double in [false, true] {
            let p = at_depth0(r as u32, c as u32, double);
            let j = job(&p);
            let mut done = 0;
            while done < count {
                let Some((moves, mut cells)) = random_position(r, c, double, stones, &mut rng)
                else {
                    continue;
                };
                done += 1;
                let want = reference::minimax(r, c, double, &mut cells);
                let what = format!("{r}x{c} double={double} after {moves:?}");
                assert_eq!(j.solve_position(&moves).unwrap().value, want, "{what}");
                for budget in [u64::MAX, 3] {
                    let unit = SolveUnit::new(moves.clone());
                    let s = explore_all(&j, vec![unit], budget).unwrap();
                    let (lo, hi) = value_of(&p, &s, &moves).unwrap();
                    let what = format!("{what} budget {budget}: {lo}..={hi}");
                    assert!(lo <= want && want <= hi, "{what}");
                    // Exact, except a first player's win where no unit of
                    // the job needs it (the root is capped at a draw).
                    let cap = root_cap(r, c, double);
                    assert!(lo == hi || (want >= cap && lo == cap), "{what}");
                }
            }
        }
    }
}

/// Four threads solving positions of the same games at once share each
/// job's transposition table (each reads what the others stored, and they
/// store into the same buckets), and every value still agrees with plain
/// minimax.
#[test]
fn threads_sharing_the_table_agree_with_plain_minimax() {
    // (rows, cols, double, stones): positions the plain minimax solves fast.
    let games = [(4, 4, false, 8), (3, 5, true, 6), (4, 4, true, 8)];
    // One job per game, shared by the four threads.
    let jobs: Vec<HipSolve> = games
        .iter()
        .map(|&(r, c, double, _)| job(&at_depth0(r as u32, c as u32, double)))
        .collect();
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let (games, jobs) = (&games, &jobs);
            s.spawn(move || {
                let mut rng = Lcg(100 + t);
                for (&(r, c, double, stones), j) in games.iter().zip(jobs) {
                    let mut done = 0;
                    while done < 10 {
                        let Some((moves, mut cells)) =
                            random_position(r, c, double, stones + rng.next(2), &mut rng)
                        else {
                            continue;
                        };
                        done += 1;
                        let want = reference::minimax(r, c, double, &mut cells);
                        let got = j.solve_position(&moves).unwrap().value;
                        assert_eq!(got, want, "{r}x{c} double={double} after {moves:?}");
                    }
                }
            });
        }
    });
}

/// Double Hip's edge cases, found by search and checked against the
/// reference: a mover at the first stone of his pair with only losing cells
/// loses at once, and a board filling up in the middle of a turn is a draw.
#[test]
fn double_hip_edge_cases() {
    // The move order: P1 once, then pairs.
    let order: Vec<u8> = (0..9).map(|s| reference::mover(s, true)).collect();
    assert_eq!(order, [1, 2, 2, 1, 1, 2, 2, 1, 1]);
    // 2x2: P1, P2, P2, then P1's pair is cut short by the full board: a draw.
    let j = job(&at_depth0(2, 2, true));
    assert_eq!(j.solve_position(&[0, 1, 2]).unwrap().value, 0);
    // A first stone of a pair with only losing cells.
    let mut rng = Lcg(11);
    let j = job(&at_depth0(4, 4, true));
    let squares = reference::squares_by_subsets(4, 4);
    let mut found = 0;
    for _ in 0..5_000 {
        let stones = 9 + rng.next(6);
        let Some((moves, mut cells)) = random_position(4, 4, true, stones, &mut rng) else {
            continue;
        };
        let s = moves.len();
        let who = reference::mover(s, true);
        let first_of_pair = s >= 1 && (s - 1) % 2 == 0;
        let empty: Vec<usize> = (0..16).filter(|&i| cells[i] == 0).collect();
        let all_lose = empty.into_iter().all(|i| {
            cells[i] = who;
            let bad = squares.iter().any(|q| q.iter().all(|&c| cells[c] == who));
            cells[i] = 0;
            bad
        });
        if first_of_pair && all_lose {
            let want = if who == 1 { -1 } else { 1 };
            assert_eq!(reference::minimax(4, 4, true, &mut cells), want);
            assert_eq!(j.solve_position(&moves).unwrap().value, want, "{moves:?}");
            found += 1;
        }
    }
    assert!(found > 0, "no such position found");
}

/// Franke's table of game values (the winner column): every board up to 4x5,
/// and 5x5, in both variants.
#[test]
fn table_b_winners() {
    let standard = [
        (2, 2, 0),
        (2, 3, 0),
        (2, 4, 0),
        (2, 5, 0),
        (3, 3, 0),
        (3, 4, 0),
        (3, 5, 0),
        (4, 4, 0),
        (4, 5, 0),
        (5, 5, 2),
    ];
    let double = [
        (2, 2, 0),
        (2, 3, 0),
        (2, 4, 0),
        (2, 5, 0),
        (3, 3, 2),
        (3, 4, 0),
        (3, 5, 1),
        (4, 4, 0),
        (4, 5, 1),
        (5, 5, 1),
    ];
    for (is_double, table) in [(false, standard), (true, double)] {
        for (r, c, w) in table {
            let p = params(r, c, is_double);
            let j = job(&p);
            let s = explore_pruned(&j, j.root_units(), u64::MAX, false)
                .unwrap()
                .summary;
            let rep = j.report(&s);
            assert_eq!(
                rep.json["winner"],
                serde_json::json!(w),
                "{r}x{c} double={is_double}"
            );
            check_report(&p, &rep.json);
        }
    }
}

/// The most the first player can get on the empty board by the rules
/// alone: a draw where the second player of standard Hip can pair moves (a
/// symmetry of the board, from the reference's own list, that is an
/// involution without a fixed cell), else a win.
fn root_cap(rows: usize, cols: usize, double: bool) -> i8 {
    let n = rows * cols;
    let pairs = reference::symmetries(rows, cols)
        .into_iter()
        .any(|g| (0..n).all(|i| g[i] != i && g[g[i]] == i));
    if pairs && !double {
        0
    } else {
        1
    }
}

/// Gardner's pairing argument, which the solver and the recorded tree use
/// as a bound (a position symmetric under a fixed-point-free involution of
/// the board, first player to move, or one stone short of it with the
/// second to move, is worth at most a draw to the first player in standard
/// Hip), checked by plain minimax on such positions of small boards with an
/// even side; and the solver's values of them, as one search and as units
/// with and without splitting, agree with plain minimax.
#[test]
fn pairing_positions_agree_with_plain_minimax() {
    let mut rng = Lcg(11);
    let mut checked = 0;
    for (r, c, pairs) in [(2, 4, 1), (3, 4, 2), (2, 6, 2), (4, 4, 3), (3, 6, 4)] {
        let squares = reference::squares_by_subsets(r, c);
        let n = r * c;
        // The pairings, from the reference's own list of symmetries.
        let pairings: Vec<Vec<usize>> = reference::symmetries(r, c)
            .into_iter()
            .filter(|g| (0..n).all(|i| g[i] != i && g[g[i]] == i))
            .collect();
        assert!(!pairings.is_empty(), "{r}x{c} has an even side");
        let p = at_depth0(r as u32, c as u32, false);
        let j = job(&p);
        for trial in 0..24 {
            let g = &pairings[trial % pairings.len()];
            let mut cells = vec![0u8; n];
            let mut moves = Vec::new();
            let legal = |cells: &mut Vec<u8>, i: usize, who: u8| {
                cells[i] = who;
                let ok = !squares.iter().any(|q| q.iter().all(|&x| cells[x] == who));
                cells[i] = 0;
                ok
            };
            // `pairs` moves each answered by its image, then (odd trials)
            // one more first-player stone.
            let extra = usize::from(trial % 2 == 1);
            for k in 0..pairs + extra {
                let free: Vec<usize> = (0..n)
                    .filter(|&i| {
                        cells[i] == 0
                            && legal(&mut cells, i, 1)
                            && (k == pairs || (cells[g[i]] == 0 && legal(&mut cells, g[i], 2)))
                    })
                    .collect();
                let Some(&m) = free.get(rng.next(free.len().max(1))) else {
                    break;
                };
                cells[m] = 1;
                moves.push(m as u8);
                if k < pairs {
                    cells[g[m]] = 2;
                    moves.push(g[m] as u8);
                }
            }
            if moves.len() != 2 * pairs + extra {
                continue;
            }
            let want = reference::minimax(r, c, false, &mut cells);
            let what = format!("{r}x{c} after {moves:?}");
            assert!(want <= 0, "pairing argument fails: {what} is worth {want}");
            assert_eq!(j.solve_position(&moves).unwrap().value, want, "{what}");
            for budget in [u64::MAX, 3] {
                let unit = SolveUnit::new(moves.clone());
                let s = explore_all(&j, vec![unit], budget).unwrap();
                assert_eq!(
                    value_of(&p, &s, &moves).unwrap(),
                    (want, want),
                    "{what} budget {budget}"
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 80, "only {checked} positions checked");
}
