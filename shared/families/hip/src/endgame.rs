//! Exact values of *static* Hip endgames, by counting.
//!
//! A player can make a new dead cell for himself (a cell where his stone
//! would complete his square) only by playing into a square that holds none
//! of the opponent's stones and at most two of his own, with at least one
//! other empty cell: an *open* square for him. Once neither player has an
//! open square, no move changes what is dead for whom: every empty cell stays
//! in one of four classes until it is filled,
//!
//! * shared: safe for both players,
//! * the mover's reserve: dead for the opponent only,
//! * the opponent's reserve: dead for the mover only,
//! * dead for both,
//!
//! and each move just removes one safe cell of the mover. The game is then a
//! race decided by the four counts (and, in Double Hip, by whether the mover
//! places one or two more stones this turn): the player to move who has no
//! safe cell left loses, and a full board is a draw. [`Endgame`] holds that
//! value for every count, computed once per variant by the recurrence in
//! [`Endgame::build`], so the search ends such a position with one lookup
//! instead of searching out every order of the remaining moves.
//!
//! One step further: an endgame where exactly one square is still open, for
//! one player (its *owner*), is counted too. Its empty cells (two to four,
//! none dead for the owner) are each either shared or the owner's reserve;
//! the rest of the board is static. A move outside the square removes one
//! cell as before. The owner's stone in it removes one of its cells, and his
//! third stone there makes the last cell dead for him (a shared cell becomes
//! the opponent's reserve, a reserve cell dead for both); the opponent's
//! stone there (only into a shared cell: the others are dead for him) shuts
//! the square, and its cells join the static counts. [`OpenSquare`] and
//! [`Endgame::value_with`] hold those values for counts below
//! [`OPEN_SQUARE_COUNTS`].

use std::sync::OnceLock;

/// Counts up to this (the cells of a 64-cell board) are covered.
const SIZE: usize = 65;

/// Counts (shared, mine, theirs) of an endgame with one open square are
/// covered below this; the search falls back to searching above it.
pub const OPEN_SQUARE_COUNTS: u32 = 16;

/// The one square still open in an otherwise static endgame, seen by the
/// player to move: whose it is, and its empty cells that are shared (safe
/// for both) or the owner's reserve (dead for the other player). Two to four
/// cells in all, none dead for the owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenSquare {
    pub mine: bool,
    pub shared: u32,
    pub reserve: u32,
}

impl OpenSquare {
    /// The twelve (shared, reserve) splits of two to four cells, numbered.
    const CODES: usize = 12;

    fn code(self) -> usize {
        // Splits of 2 cells: 0..3, of 3: 3..7, of 4: 7..12.
        let cells = (self.shared + self.reserve) as usize;
        let first = [0, 0, 0, 3, 7][cells];
        usize::from(!self.mine) * Self::CODES + first + self.shared as usize
    }

    /// The same square seen by the other player.
    fn flip(self) -> OpenSquare {
        OpenSquare {
            mine: !self.mine,
            ..self
        }
    }
}

/// The value for the player to move of every static endgame of one variant,
/// and of every endgame with one open square (see the module doc).
pub struct Endgame {
    /// Indexed by [`Endgame::index`]; values -1, 0, 1 for the mover.
    values: Vec<i8>,
    /// Indexed by [`Endgame::index_with`].
    with_square: Vec<i8>,
}

// Process-wide on purpose: these are computed constants of the rules (the
// same for every board, job and process, never written after they are
// built), not search state; the jobs own all of their state.
static STANDARD: OnceLock<Endgame> = OnceLock::new();
static DOUBLE: OnceLock<Endgame> = OnceLock::new();

impl Endgame {
    /// The table of standard Hip (`double == false`) or Double Hip.
    pub fn get(double: bool) -> &'static Endgame {
        if double {
            DOUBLE.get_or_init(|| Endgame::build(true))
        } else {
            STANDARD.get_or_init(|| Endgame::build(false))
        }
    }

    #[inline(always)]
    fn index(again: bool, both_dead: bool, shared: usize, mine: usize, theirs: usize) -> usize {
        (((usize::from(again) * 2 + usize::from(both_dead)) * SIZE + shared) * SIZE + mine) * SIZE
            + theirs
    }

    /// The value for the player to move of a static endgame with `shared`
    /// cells safe for both, `mine` safe only for him, `theirs` safe only for
    /// the opponent and `both_dead` whether some empty cell is dead for both.
    /// `again`: after this stone the same player places another (the first
    /// stone of a Double Hip pair).
    #[inline(always)]
    pub fn value(&self, again: bool, both_dead: bool, shared: u32, mine: u32, theirs: u32) -> i8 {
        self.values[Self::index(
            again,
            both_dead,
            shared as usize,
            mine as usize,
            theirs as usize,
        )]
    }

    #[inline(always)]
    fn index_with(again: bool, both_dead: bool, open: OpenSquare, s: u32, m: u32, t: u32) -> usize {
        const N: usize = OPEN_SQUARE_COUNTS as usize;
        let head =
            (usize::from(again) * 2 + usize::from(both_dead)) * 2 * OpenSquare::CODES + open.code();
        ((head * N + s as usize) * N + m as usize) * N + t as usize
    }

    /// The value for the player to move of an endgame whose only open square
    /// is `open`, with `shared`, `mine` and `theirs` counting the other
    /// empty cells as in [`Endgame::value`], each below
    /// [`OPEN_SQUARE_COUNTS`].
    #[inline(always)]
    pub fn value_with(
        &self,
        again: bool,
        both_dead: bool,
        open: OpenSquare,
        shared: u32,
        mine: u32,
        theirs: u32,
    ) -> i8 {
        self.with_square[Self::index_with(again, both_dead, open, shared, mine, theirs)]
    }

    /// The values with one open square, by the moves of the module doc; the
    /// square's last move leads into the static table.
    fn build_with_square(&mut self, double: bool) {
        const N: u32 = OPEN_SQUARE_COUNTS;
        let size = 4 * 2 * OpenSquare::CODES * (N * N * N) as usize;
        self.with_square = vec![i8::MIN; size];
        for again in [false, true] {
            if again && !double {
                continue;
            }
            for both_dead in [false, true] {
                for mine in [false, true] {
                    for cells in 2..=4 {
                        for shared in 0..=cells {
                            let open = OpenSquare {
                                mine,
                                shared,
                                reserve: cells - shared,
                            };
                            for s in 0..N {
                                for m in 0..N {
                                    for t in 0..N {
                                        self.settle_with(double, again, both_dead, open, s, m, t);
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// One value of `with_square`, computing what it needs first (the counts
    /// only fall, so the recursion ends; counts leaving the table's range
    /// never arise, since no move adds to a count without removing a cell of
    /// the square).
    #[allow(clippy::too_many_arguments)]
    fn settle_with(
        &mut self,
        double: bool,
        again: bool,
        both_dead: bool,
        open: OpenSquare,
        s: u32,
        m: u32,
        t: u32,
    ) -> i8 {
        const N: u32 = OPEN_SQUARE_COUNTS;
        let i = Self::index_with(again, both_dead, open, s, m, t);
        if self.with_square[i] != i8::MIN {
            return self.with_square[i];
        }
        // The position after the mover's stone, as (both_dead, square or
        // none, shared, mine, theirs) from his side.
        let mut after: [(bool, Option<OpenSquare>, u32, u32, u32); 4] = [(false, None, 0, 0, 0); 4];
        let mut n = 0;
        if s > 0 {
            after[n] = (both_dead, Some(open), s - 1, m, t);
            n += 1;
        }
        if m > 0 {
            after[n] = (both_dead, Some(open), s, m - 1, t);
            n += 1;
        }
        if open.mine {
            // One of my cells of the square, shared or reserve.
            for (sh, re) in [(1, 0), (0, 1)] {
                if open.shared < sh || open.reserve < re {
                    continue;
                }
                let rest = OpenSquare {
                    shared: open.shared - sh,
                    reserve: open.reserve - re,
                    ..open
                };
                after[n] = match rest.shared + rest.reserve {
                    // My third stone: the last cell is dead for me.
                    1 if rest.shared == 1 => (both_dead, None, s, m, t + 1),
                    1 => (true, None, s, m, t),
                    _ => (both_dead, Some(rest), s, m, t),
                };
                n += 1;
            }
        } else if open.shared > 0 {
            // My stone shuts the opponent's square.
            after[n] = (both_dead, None, s + open.shared - 1, m, t + open.reserve);
            n += 1;
        }
        let v = if n == 0 {
            // No safe cell, and the square's cells are left: a loss.
            -1
        } else {
            let mut best = -1;
            for &(bd, sq, s2, m2, t2) in &after[..n] {
                let (next_again, s3, m3, t3, sq3) = if again {
                    (false, s2, m2, t2, sq)
                } else {
                    (double, s2, t2, m2, sq.map(OpenSquare::flip))
                };
                let v = match sq3 {
                    Some(q) => {
                        debug_assert!(s3 < N && m3 < N && t3 < N);
                        self.settle_with(double, next_again, bd, q, s3, m3, t3)
                    }
                    None => self.value(next_again, bd, s3, m3, t3),
                };
                best = best.max(if again { v } else { -v });
            }
            best
        };
        self.with_square[i] = v;
        v
    }

    /// The recurrence: with no safe cell the mover loses (a draw if the board
    /// is full); otherwise he plays a shared cell or one of his own, and the
    /// value is the better of the two. In standard Hip the opponent moves
    /// next; in Double Hip the mover places a second stone first when
    /// `again`, and the opponent's turn starts with `again` set.
    fn build(double: bool) -> Endgame {
        let mut values = vec![0i8; 2 * 2 * SIZE * SIZE * SIZE];
        // A move only removes cells, so filling by total count works.
        for total in 0..SIZE {
            for shared in 0..=total {
                for mine in 0..=total - shared {
                    let theirs = total - shared - mine;
                    for both_dead in [false, true] {
                        for again in [false, true] {
                            if again && !double {
                                continue;
                            }
                            let v = if shared + mine == 0 {
                                if theirs == 0 && !both_dead {
                                    0
                                } else {
                                    -1
                                }
                            } else {
                                let next = |s: usize, m: usize| -> i8 {
                                    if again {
                                        values[Self::index(false, both_dead, s, m, theirs)]
                                    } else {
                                        -values[Self::index(double, both_dead, s, theirs, m)]
                                    }
                                };
                                let a = if shared > 0 {
                                    next(shared - 1, mine)
                                } else {
                                    -1
                                };
                                let b = if mine > 0 { next(shared, mine - 1) } else { -1 };
                                a.max(b)
                            };
                            values[Self::index(again, both_dead, shared, mine, theirs)] = v;
                        }
                    }
                }
            }
        }
        let mut e = Endgame {
            values,
            with_square: Vec::new(),
        };
        e.build_with_square(double);
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The race played out move by move, every order tried.
    fn plain(double: bool, again: bool, dead: bool, s: u32, m: u32, t: u32) -> i8 {
        if s + m == 0 {
            return if t == 0 && !dead { 0 } else { -1 };
        }
        let mut best = -1;
        for (s2, m2) in [(s.wrapping_sub(1), m), (s, m.wrapping_sub(1))] {
            if s2 > s || m2 > m {
                continue;
            }
            let v = if again {
                plain(double, false, dead, s2, m2, t)
            } else {
                -plain(double, double, dead, s2, t, m2)
            };
            best = best.max(v);
        }
        best
    }

    #[test]
    fn table_matches_playing_the_race_out() {
        for double in [false, true] {
            let e = Endgame::get(double);
            for s in 0..7 {
                for m in 0..5 {
                    for t in 0..5 {
                        for dead in [false, true] {
                            for again in [false, double] {
                                assert_eq!(
                                    e.value(again, dead, s, m, t),
                                    plain(double, again, dead, s, m, t),
                                    "double {double} again {again} dead {dead} {s} {m} {t}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    /// Standard Hip in words: shared cells go one by one in turn, then each
    /// player lives on his reserve; with an odd number of shared cells the
    /// mover takes the last one and the opponent runs out first on a tie.
    #[test]
    fn standard_race_examples() {
        let e = Endgame::get(false);
        // Nothing shared: whoever has fewer own cells runs out first.
        assert_eq!(e.value(false, true, 0, 2, 1), 1);
        assert_eq!(e.value(false, true, 0, 1, 1), -1);
        // Equal reserves, no cell dead for both: the board fills up.
        assert_eq!(e.value(false, false, 0, 1, 1), 0);
        assert_eq!(e.value(false, false, 2, 1, 1), 0);
        // One shared cell left: the mover takes it and the opponent is first
        // to live on his reserve.
        assert_eq!(e.value(false, true, 1, 1, 1), 1);
    }
}
