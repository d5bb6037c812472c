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

use std::sync::OnceLock;

/// Counts up to this (the cells of a 64-cell board) are covered.
const SIZE: usize = 65;

/// The value for the player to move of every static endgame of one variant.
pub struct Endgame {
    /// Indexed by [`Endgame::index`]; values -1, 0, 1 for the mover.
    values: Vec<i8>,
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
        Endgame { values }
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
