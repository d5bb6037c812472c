//! The last few moves of a `hip-solve` search, searched plainly.
//!
//! Near the end of a game the machinery of [`Solver::search`] costs more
//! than it saves: a position's whole subtree is small, nearly every position
//! expanded there is met once (each table probe a cache miss, for a hit on
//! a minority of them), and of the move order only one rule still matters
//! much, *shared cells before your reserve* (a cell the opponent cannot take
//! keeps). So a position with little game left ([`plain_weight`] at most
//! [`PLAIN_MAX_WEIGHT`]) is searched by alpha-beta on the position alone: no
//! table, no canonical key, no scored order, no abstract endgames; only the
//! counted endgames ([`Solver::counted`]), which end most lines at once. It
//! expands more nodes than the full search would at these depths, each for
//! a fraction of the cost (docs/notes/hip-solver.md, "The last moves
//! searched plainly").
//!
//! Every position whose moves are generated here counts as a node, as in
//! the full search; the budget is not checked here (such a subtree is
//! small: at most 109 nodes on 4x7, 175 on the 6x6 positions of
//! `bench/hip-positions`, 233 on Double 5x6).

use super::search::{p1_moves, Pos, Solver};

/// Positions whose [`plain_weight`] is at most this are searched by
/// [`Solver::search_last_moves`]. The limit is on the game left, not the
/// empty cells: a cell dead for both players is never played and one dead
/// for one player is played by the other alone, so the empty cells
/// overstate the game left where many cells are dead (6x6 positions), and
/// a limit in empty cells that suited one board did not suit another.
/// Twelve (six shared cells) took 0.79 of the time of seven empty cells
/// on 6x6 positions, 0.93 on 5x6, 0.98-0.99 on 4x7 and 3x11 positions
/// (docs/notes/hip-solver.md, "The plain last moves by the game left").
pub const PLAIN_MAX_WEIGHT: u32 = 12;

/// How much game `pos` has left, as the search's cost below it grows: two
/// for each empty cell both players may take, one for each that only one
/// may take (dead for the other), none for a cell dead for both (neither
/// ever plays it). `empty` is the position's empty cells.
#[inline(always)]
pub fn plain_weight(pos: &Pos, empty: u64) -> u32 {
    let shared = empty & !(pos.d1 | pos.d2);
    let one_sided = empty & (pos.d1 ^ pos.d2);
    2 * shared.count_ones() + one_sided.count_ones()
}

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

    /// Random positions with a [`plain_weight`] of at most
    /// [`PLAIN_MAX_WEIGHT`] on six small boards, standard and Double: in
    /// each of the three windows, the plain search's fail-soft result bounds
    /// or equals plain minimax's value, and the full window gives it
    /// exactly.
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
                        if plain_weight(pos, empty) <= PLAIN_MAX_WEIGHT {
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
