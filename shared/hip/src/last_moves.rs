//! The last few moves of a `hip-solve` search, searched plainly.
//!
//! Near the end of a game the machinery of [`Solver::search`] costs more
//! than it saves: at seven empty cells or fewer a position's whole subtree is
//! small, nearly every position expanded there is met once (each table
//! probe a cache miss, for a hit on a minority of them), and of the move
//! order only one rule still matters much, *shared cells before your
//! reserve* (a cell the opponent cannot take keeps). So at
//! [`LAST_MOVES_MAX_EMPTY`] empty cells or fewer the search is alpha-beta on
//! the position alone: no table, no canonical key, no scored order, no
//! abstract endgames; only the counted endgames ([`Solver::counted`]),
//! which end most lines at once. It expands more nodes than the full search
//! would at these depths, each for a fraction of the cost (BENCHMARKS.md,
//! "The last moves searched plainly").
//!
//! Every position whose moves are generated here counts as a node, as in
//! the full search; the budget is not checked (a subtree of seven empty
//! cells is at most some ten thousand nodes).

use super::search::{p1_moves, Pos, Solver};

/// Positions with at most this many empty cells are searched by
/// [`Solver::search_last_moves`]. 6 from session 33 (5 and 7 were slower on
/// 4x6 and 5x5 then); 7 from session 49, once the full search's nodes had
/// become cheaper in instructions but not in waits for the table: 0.88-0.92
/// of the time on 4x7, 5x5, 3x11 and 6x6 positions, for 1.5 times the
/// nodes (BENCHMARKS.md, "Session 49").
pub const LAST_MOVES_MAX_EMPTY: u32 = 7;

impl Solver<'_, '_> {
    /// The value of `pos` for the player to move in the window `(alpha,
    /// beta)`, fail-soft, as [`Solver::search`] (never aborted); a second
    /// stone of a Double Hip turn skips the cells in `skip`, as
    /// [`Solver::search`] does (the result is then at least `alpha`).
    pub(crate) fn search_last_moves(
        &mut self,
        pos: &Pos,
        mut alpha: i8,
        beta: i8,
        skip: u64,
    ) -> i8 {
        let board = self.board;
        let occ = pos.p1 | pos.p2;
        let empty = board.full & !occ;
        if empty == 0 {
            return 0;
        }
        let stones = occ.count_ones();
        let p1 = p1_moves(stones, self.double);
        let (dmine, dopp) = if p1 {
            (pos.d1, pos.d2)
        } else {
            (pos.d2, pos.d1)
        };
        let safe = empty & !dmine;
        if safe == 0 {
            return -1;
        }
        if let Some(v) = self.counted(pos, empty, stones, p1) {
            return v;
        }
        self.nodes += 1;
        self.plain_nodes += 1;
        let again = p1_moves(stones + 1, self.double) == p1;
        let mut best = if skip != 0 { alpha } else { -1i8 };
        let mut tried = 0u64;
        // Shared cells first, then the reserve, each in cell order.
        let safe = safe & !skip;
        for mut cells in [safe & !dopp, safe & dopp] {
            while cells != 0 {
                let c = cells.trailing_zeros() as usize;
                cells &= cells - 1;
                let child = pos.play_plain(board, c, p1);
                let v = if again {
                    self.search_last_moves(&child, alpha, beta, tried)
                } else {
                    -self.search_last_moves(&child, -beta, -alpha, 0)
                };
                if v > best {
                    best = v;
                    if v > alpha {
                        alpha = v;
                        if alpha >= beta {
                            return best;
                        }
                    }
                }
                tried |= 1 << c;
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Board;
    use crate::search::tests::{below, plain_minimax, random_game};
    use crate::table::Table;

    /// Random positions with at most [`LAST_MOVES_MAX_EMPTY`] empty cells on
    /// six small boards, standard and Double: in each of the three windows,
    /// the plain search's fail-soft result bounds or equals plain minimax's
    /// value, and the full window gives it exactly.
    #[test]
    fn last_moves_agree_with_plain_minimax() {
        let mut below = below(0x2545_f491_4f6c_dd1du64);
        let mut checked = [0usize; 3];
        for (rows, cols) in [(3, 4), (4, 4), (3, 5), (4, 5), (5, 5), (3, 6)] {
            let board = Board::new(rows, cols);
            for double in [false, true] {
                let table = Table::new(&board, double, Some(1));
                let mut solver = Solver::new(&board, double, &table, None);
                for _ in 0..40 {
                    random_game(&board, double, &mut below, |pos, p1, empty| {
                        if empty.count_ones() <= LAST_MOVES_MAX_EMPTY {
                            let plain = plain_minimax(&board, double, pos);
                            let plain = if p1 { plain } else { -plain };
                            let exact = solver.search_last_moves(pos, -1, 1, 0);
                            assert_eq!(exact, plain, "{rows}x{cols} double {double}: {pos:?}");
                            for (alpha, beta) in [(-1, 0), (0, 1)] {
                                let v = solver.search_last_moves(pos, alpha, beta, 0);
                                assert!(
                                    (v <= alpha && plain <= v) || (v >= beta && plain >= v),
                                    "{rows}x{cols} double {double}: ({alpha}, {beta}) gave {v}, \
                                     value {plain}: {pos:?}"
                                );
                            }
                            checked[(plain + 1) as usize] += 1;
                        }
                        true
                    });
                }
                // Every node of the plain search is a plain node.
                assert_eq!(solver.plain_nodes, solver.nodes, "{rows}x{cols}");
            }
        }
        // Losses, draws and wins for the mover, each met often enough that
        // a wrong rule shows.
        assert!(checked.iter().all(|&n| n > 100), "{checked:?}");
    }
}
