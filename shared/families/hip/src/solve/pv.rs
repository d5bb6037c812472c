//! Principal variations: a solved unit's line, proven move by move from the
//! table right after its search ([`table_pv`]), and the root's line, walked
//! through the recorded tree down to a solved unit's own line
//! ([`recorded_pv`]). Both are one concept, a line that keeps the value,
//! read from two sources.

use super::eval::Eval;
use super::game::{Child, Game};
use super::summary::SolveSummary;
use crate::search::{Pos, Solver};

/// A principal variation after solving `pos` (whose value for the mover
/// is `v`): at each step the first move, in search order, that keeps the
/// value, proven by a null-window search (nearly free: the table has just
/// seen these positions). The budget does not apply to these searches.
pub(super) fn table_pv(
    solver: &mut Solver<'_, '_>,
    game: &Game,
    mut pos: Pos,
    mut v: i8,
) -> Vec<u8> {
    let (budget, aborted) = (solver.budget, solver.aborted);
    solver.budget = u64::MAX;
    solver.aborted = false;
    let mut pv = Vec::new();
    while !game.full(&pos) {
        let p1 = game.p1_to_move(&pos);
        let empty = game.board.full & !(pos.p1 | pos.p2);
        let moves = solver.moves(&pos, p1, 0);
        if moves.len == 0 {
            // Forced to complete a square: any move loses.
            pv.push(empty.trailing_zeros() as u8);
            break;
        }
        let mut next = None;
        for &c in &moves.cells[..moves.len] {
            let child = pos.play(&game.board, c as usize, p1);
            let same = game.p1_to_move(&child) == p1;
            // Whether the child is worth at least `v` to the mover.
            let keeps = v == -1
                || match (same, game.full(&child)) {
                    (_, true) => v <= 0,
                    (true, false) => solver.search(&child, v - 1, v).is_some_and(|x| x >= v),
                    (false, false) => solver.search(&child, -v, 1 - v).is_some_and(|x| x <= -v),
                };
            if keeps {
                next = Some((c, child, if same { v } else { -v }));
                break;
            }
        }
        match next {
            Some((c, child, cv)) => {
                pv.push(c);
                pos = child;
                v = cv;
            }
            None => break,
        }
    }
    solver.budget = budget;
    solver.aborted = aborted;
    pv
}

/// The root's principal variation when its value `lo..=hi` is known (empty
/// otherwise): through the recorded tree, by `e`, then the solved unit's
/// own line.
pub(super) fn recorded_pv(
    game: &Game,
    e: &mut Eval<'_>,
    s: &SolveSummary,
    lo: i8,
    hi: i8,
) -> Vec<u8> {
    let board = &game.board;
    let mut pv: Vec<u8> = Vec::new();
    if lo == hi {
        // In the first player's terms every position on the line has the
        // root's value.
        let v = lo;
        let mut pos = Pos::EMPTY;
        loop {
            if game.full(&pos) {
                break;
            }
            let (key, g) = game.key(&pos);
            let known = s.known.get(&key);
            if let Some(k) = known.filter(|k| !k.pv.is_empty() && !e.expands(&pos, Some(k))) {
                let inv = board.inverse[g];
                // A unit's line is data from a worker: a cell off the board
                // ends it (a damaged summary must not bring the report down).
                pv.extend(
                    k.pv.iter()
                        .map(|&c| c as usize)
                        .take_while(|&c| c < board.n)
                        .map(|c| board.perms[inv][c]),
                );
                break;
            }
            if !e.expands(&pos, known) {
                break;
            }
            let p1 = game.p1_to_move(&pos);
            let mut next = None;
            for (c, child) in game.children(&pos) {
                let (clo, chi, cpos) = match child {
                    Child::Loses => {
                        let w = if p1 { -1 } else { 1 };
                        (w, w, None)
                    }
                    Child::Pos(cp) => {
                        let (a, b, _) = e.eval(&cp);
                        (a, b, Some(cp))
                    }
                };
                if clo == v && chi == v {
                    let safe = cpos.is_some();
                    // Prefer a move that does not end the game at once.
                    if next.is_none() || (safe && matches!(next, Some((_, None)))) {
                        next = Some((c, cpos));
                    }
                }
            }
            match next {
                Some((c, Some(cp))) => {
                    pv.push(c as u8);
                    pos = *cp;
                }
                Some((c, None)) => {
                    pv.push(c as u8);
                    break;
                }
                None => break,
            }
        }
    }
    pv
}
