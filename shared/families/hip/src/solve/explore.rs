//! Exploring one unit (the body of [`SearchFamily::explore`]): an
//! alpha-beta search of the unit's position, node by node at its root so
//! that the children it did not settle can be handed back, and [`Harvest`],
//! which keeps what an aborted search settled below the child it stopped
//! in. The only code that turns a budget into a split lives here.
//!
//! [`SearchFamily::explore`]: orchard_core::SearchFamily::explore

use std::collections::BTreeMap;

use super::game::{absolute, Game};
use super::pv::table_pv;
use super::summary::{Key, SolveSummary, SolveUnit, Window};
use super::HipSolve;
use crate::search::{Pos, Solver};
use orchard_core::{Exploration, ExploreContext, FamilyError};

/// Solves `unit` within the context's budget, or splits it: the children
/// it did not settle go back as the rest (see [`Harvest`]).
pub(super) fn explore_unit(
    job: &HipSolve,
    unit: &SolveUnit,
    ctx: &ExploreContext<'_>,
) -> Result<Exploration<SolveSummary, SolveUnit>, FamilyError> {
    let p = &job.params;
    let game = Game::new(p);
    let pos = game.replay(&unit.moves)?;
    let mut summary = SolveSummary {
        nodes: 1,
        known: BTreeMap::new(),
    };
    let (key, sym) = game.key(&pos);
    let p1 = game.p1_to_move(&pos);
    let mut solver = Solver::new(&game.board, p.double, job.table(), Some(ctx));
    // A unit is solved like a search node, except that the children
    // it did not settle are handed back instead of abandoned.
    let moves = solver.moves(&pos, p1, 0);
    // What the rules alone say of this position, in the mover's view: at
    // most a draw for the first player where the second can pair moves.
    let own = absolute(-1, game.p1_ceiling(&pos), p1);
    // What matters to the root: the unit's window (see `Window`), and
    // where the second player can pair moves at the root (a board with an
    // even side, standard Hip), the first player gets at most a draw
    // anywhere in the game, so a unit only needs to settle whether he
    // reaches it. The window of the search, mover's view.
    let cap = game.p1_ceiling(&Pos::EMPTY);
    let (floor, ceiling) = absolute(unit.window.lo, unit.window.hi.min(cap), p1);
    let (floor, ceiling) = (floor.max(own.0), ceiling.min(own.1));
    let mut alpha = floor;
    let mut best = -1i8;
    let mut rest = Vec::new();
    let mut seen: Vec<Key> = Vec::new();
    let mut pending: Vec<SolveUnit> = Vec::new();
    let mut unsearched: Vec<Vec<u8>> = Vec::new();
    if floor >= ceiling {
        // The rules already answer all the window asks (a unit made on
        // another board, or by hand): nothing to search.
        let (lo, hi) = absolute(own.0, own.1, p1);
        summary.record(key, lo, hi, false, Vec::new())?;
        return Ok(Exploration::Finished(summary));
    }
    for &c in &moves.cells[..moves.len] {
        let child = pos.play(&game.board, c as usize, p1);
        let v = if game.full(&child) {
            0
        } else {
            let (ck, _) = game.key(&child);
            if seen.contains(&ck) {
                continue; // a symmetric move
            }
            seen.push(ck);
            let same = game.p1_to_move(&child) == p1;
            let searching = !solver.aborted;
            let r = if solver.aborted {
                // Only the table may still settle it, for free: it is
                // known, a win, or cannot beat what we have.
                let (lo, hi) = child_bounds(&solver, &game, &child, p1);
                if lo >= ceiling || lo == hi {
                    Some(lo)
                } else if hi <= alpha {
                    Some(hi)
                } else {
                    None
                }
            } else if same {
                solver.search(&child, alpha, ceiling)
            } else {
                solver.search(&child, -ceiling, -alpha).map(|v| -v)
            };
            match r {
                Some(v) => {
                    // Fail-soft: v <= alpha is an upper bound, v >= ceiling
                    // a lower one.
                    let (lo, hi) = if v <= alpha {
                        (-1, v)
                    } else if v >= ceiling {
                        (v, 1)
                    } else {
                        (v, v)
                    };
                    let (lo_c, hi_c) = if same { (lo, hi) } else { (-hi, -lo) };
                    let child_p1 = game.p1_to_move(&child);
                    let (alo, ahi) = absolute(lo_c, hi_c, child_p1);
                    if (alo, ahi) != (-1, 1) {
                        summary.record(ck, alo, ahi, false, Vec::new())?;
                    }
                    v
                }
                None => {
                    let mut moves = unit.moves.clone();
                    moves.push(c);
                    if searching {
                        // This child's search ran out: keep what it
                        // settled, hand back only what it did not.
                        // Its window is what the children settled so far
                        // leave to it (all recorded above).
                        let path: Vec<u8> = solver.abort_path.iter().rev().copied().collect();
                        let (lo, hi) = absolute(alpha, ceiling, p1);
                        let mut h = Harvest {
                            solver: &solver,
                            game: &game,
                            summary: &mut summary,
                            units: &mut pending,
                        };
                        h.node(child, &mut moves, &path, HARVEST_LEVELS, (lo, hi))?;
                    } else {
                        // Its window is set below, from every child
                        // settled by then.
                        unsearched.push(moves);
                    }
                    continue;
                }
            }
        };
        if v > best {
            best = v;
            alpha = alpha.max(v);
            if alpha >= ceiling {
                break;
            }
        }
    }
    summary.nodes += solver.nodes;
    if best >= ceiling || (pending.is_empty() && unsearched.is_empty()) {
        // Settled within the window: the best it allows was found, or every
        // child is known. Fail-soft, as a search node: at or below the floor
        // an upper bound, at or above the ceiling a lower one, each within
        // what the rules say.
        let (lo, hi) = if best <= floor {
            (own.0, best.max(own.0))
        } else if best >= ceiling {
            (best.min(own.1), own.1)
        } else {
            (best, best)
        };
        let (lo, hi) = absolute(lo, hi, p1);
        let empties = (game.board.full & !(pos.p1 | pos.p2)).count_ones() as u8;
        solver.table.store(key.0, key.1, lo, hi, 255, empties);
        if lo < hi {
            summary.record(key, lo, hi, false, Vec::new())?;
            return Ok(Exploration::Finished(summary));
        }
        let pv = table_pv(&mut solver, &game, pos, best);
        let pv = pv
            .iter()
            .map(|&c| game.board.perms[sym][c as usize])
            .collect();
        summary.record(key, lo, hi, false, pv)?;
        return Ok(Exploration::Finished(summary));
    }
    summary.record(key, -1, 1, true, Vec::new())?;
    // The children never searched: what the settled ones leave to them.
    // (alpha < ceiling here: the loop stops when it reaches it; the full
    // window, always sound, if not.)
    let (lo, hi) = absolute(alpha, ceiling, p1);
    let window = Window::new(lo, hi).unwrap_or(Window::FULL);
    rest.extend(pending);
    rest.extend(
        unsearched
            .into_iter()
            .map(|moves| SolveUnit { moves, window }),
    );
    Ok(Exploration::Split {
        explored: summary,
        rest,
    })
}

/// How many partly searched positions below a unit an aborted search
/// expands (see [`Harvest`]); deeper ones are handed back whole.
const HARVEST_LEVELS: usize = 12;

/// What an aborted search leaves behind. The search stopped somewhere on a
/// path of partly searched positions; everything it finished off that path
/// is in the table. Each position on the path (up to a depth) is recorded as
/// expanded, its children's table intervals are recorded, and the children
/// the table does not settle become units, in search order. So a split loses
/// only the work below the last expanded position, instead of the whole
/// partly searched child of the unit.
///
/// The record stays sound: an expanded position's value is the minimax of
/// its children (`Eval`), and each child is then covered by the rules (a
/// losing or filling move), by an exact interval from the table, or by a
/// unit, or is the next position on the path.
struct Harvest<'s, 'a, 'b, 'c> {
    solver: &'s Solver<'a, 'c>,
    game: &'s Game,
    summary: &'b mut SolveSummary,
    units: &'b mut Vec<SolveUnit>,
}

impl Harvest<'_, '_, '_, '_> {
    /// `pos`, reached by `moves`, partly searched along `path` (its moves,
    /// first move first; empty where the search stopped), in `window`
    /// (P1's view, see [`Window`]).
    fn node(
        &mut self,
        pos: Pos,
        moves: &mut Vec<u8>,
        path: &[u8],
        levels: usize,
        window: (i8, i8),
    ) -> Result<(), FamilyError> {
        let game = self.game;
        let Some(w) = Window::new(window.0, window.1) else {
            return Ok(()); // the window asks nothing (see `narrow`)
        };
        if path.is_empty() || levels == 0 {
            self.units.push(SolveUnit {
                moves: moves.clone(),
                window: w,
            });
            return Ok(());
        }
        let p1 = game.p1_to_move(&pos);
        let (key, _) = game.key(&pos);
        self.summary.record(key, -1, 1, true, Vec::new())?;
        let next = path[0] as usize;
        let next_key = game.key(&pos.play(&game.board, next, p1)).0;
        let list = self.solver.moves(&pos, p1, 0);
        // The children and what the table knows of them (P1's view), the
        // one on the path included: a full board is a draw by the rules.
        let mut seen: Vec<Key> = Vec::new();
        let mut kids: Vec<(u8, Pos, Key, i8, i8)> = Vec::new();
        for &c in &list.cells[..list.len] {
            let child = pos.play(&game.board, c as usize, p1);
            let ck = game.key(&child).0;
            let (lo, hi) = if game.full(&child) {
                (0, 0)
            } else {
                let (lo, hi) = table_interval(self.solver, &child);
                (lo, hi.min(game.p1_ceiling(&child)))
            };
            if seen.contains(&ck) {
                continue;
            }
            seen.push(ck);
            kids.push((c, child, ck, lo, hi));
        }
        // What the children settle leaves this window to each of them.
        let window = narrow(window, p1, kids.iter().map(|k| (k.3, k.4)));
        let child_window = Window::new(window.0, window.1);
        for &(c, child, ck, lo, hi) in &kids {
            if game.full(&child) {
                continue; // a draw, by the rules
            }
            if (lo, hi) != (-1, 1) {
                // Recorded, since the window above may rest on it.
                self.summary.record(ck, lo, hi, false, Vec::new())?;
            }
            let Some(w) = child_window else {
                continue;
            };
            if w.answered_by(lo, hi) {
                continue;
            }
            if ck == next_key {
                // Follow the path in the frame the search used.
                let on_path = pos.play(&game.board, next, p1);
                moves.push(next as u8);
                self.node(on_path, moves, &path[1..], levels - 1, window)?;
                moves.pop();
                continue;
            }
            moves.push(c);
            self.units.push(SolveUnit {
                moves: moves.clone(),
                window: w,
            });
            moves.pop();
        }
        Ok(())
    }
}

/// The window (P1's view) that a position's children are searched in, from
/// the position's own and what its children are known to be (P1's
/// intervals): for the first player to move, nothing at or below the best
/// lower bound of a child matters any more; for the second, nothing at or
/// above the least upper bound. (A child's own bound may be among them: its
/// search then settles whether it does better than it is known to.) An
/// empty window (`lo >= hi`) asks nothing: the children already decide.
pub(super) fn narrow(window: (i8, i8), p1: bool, kids: impl Iterator<Item = (i8, i8)>) -> (i8, i8) {
    let (mut lo, mut hi) = window;
    for (klo, khi) in kids {
        if p1 {
            lo = lo.max(klo);
        } else {
            hi = hi.min(khi);
        }
    }
    (lo, hi)
}

/// P1's interval for a (not full) position from the table.
fn table_interval(solver: &Solver<'_, '_>, pos: &Pos) -> (i8, i8) {
    let (k1, k2, _) = solver.key(pos);
    solver
        .table
        .probe(k1, k2)
        .map_or((-1, 1), |(lo, hi, _)| (lo, hi))
}

/// The mover-of-the-parent's interval for `child` from the table.
fn child_bounds(solver: &Solver<'_, '_>, game: &Game, child: &Pos, parent_p1: bool) -> (i8, i8) {
    if game.full(child) {
        return (0, 0);
    }
    let (lo, hi) = table_interval(solver, child);
    // P1's interval to the parent mover's view.
    if parent_p1 {
        (lo, hi)
    } else {
        (-hi, -lo)
    }
}
