//! A position of `hip-solve`'s search ([`Pos`]) and how a move changes it.
//!
//! A position is the pair of stone sets `(p1, p2)`; who moves follows from the
//! number of stones (see [`p1_moves`]), so the pair is the whole state.
//! Alongside it the search carries, per player, the *dead* cells: empty cells
//! where that player's stone would complete a square of his colour. They
//! only ever grow, are updated from the squares through the cell just played,
//! and make the rules one mask test: a move into a dead cell loses at once; a
//! player whose every empty cell is dead must play one and loses.
//!
//! Beside the stones a position keeps what makes its next move cheap: the
//! squares still open for each player and their stone counts, from which a
//! move finds its new dead cells, and the stones' images under the board's
//! symmetries, from which the canonical key is a few comparisons. Every
//! part of the search, the solver's units and the endgames reads positions
//! this way, so the type stands apart from the search that walks them.

use super::SquareCounts;
use crate::board::{Board, MAX_SYMMETRIES};
use crate::square_set::SquareSet;

/// Whether the first player places the next stone after `stones` stones.
/// Standard Hip alternates; in Double Hip the first player places one stone,
/// then each turn is two stones.
#[inline(always)]
pub fn p1_moves(stones: u32, double: bool) -> bool {
    if double {
        stones == 0 || ((stones - 1) / 2) % 2 == 1
    } else {
        stones.is_multiple_of(2)
    }
}

/// A position with its dead-cell masks and its images under the board's
/// symmetries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pos {
    pub p1: u64,
    pub p2: u64,
    /// Cells where a P1 (P2) stone would complete a P1 (P2) square.
    pub d1: u64,
    pub d2: u64,
    /// The squares no longer *open* for P1 (P2), as bits of
    /// [`Board::squares_through`]. A square is open for a player while it
    /// holds none of the other colour's stones, at most two of his, and no
    /// empty cell dead for him: only then can one of his moves give him a
    /// new dead cell. With no square open for either player the endgame is
    /// static (see [`crate::endgame`]).
    pub shut1: SquareSet,
    pub shut2: SquareSet,
    /// How many P1 (P2) stones each tracked square holds: the move order
    /// scores cells by them, and [`Pos::play`] finds new dead cells by them.
    /// Counted on every board, used only where
    /// [`Board::tracks_every_square`].
    pub in_squares1: SquareCounts,
    pub in_squares2: SquareCounts,
    /// `img1[g]`, `img2[g]`: the P1 and P2 stones under symmetry `g`, kept up
    /// to date move by move so that the canonical key is eight comparisons
    /// rather than sixteen bitboard transforms.
    img1: [u64; MAX_SYMMETRIES],
    img2: [u64; MAX_SYMMETRIES],
}

impl Pos {
    pub const EMPTY: Pos = Pos {
        p1: 0,
        p2: 0,
        d1: 0,
        d2: 0,
        shut1: SquareSet::EMPTY,
        shut2: SquareSet::EMPTY,
        in_squares1: SquareCounts::ZERO,
        in_squares2: SquareCounts::ZERO,
        img1: [0; MAX_SYMMETRIES],
        img2: [0; MAX_SYMMETRIES],
    };

    pub fn stones(&self) -> u32 {
        (self.p1 | self.p2).count_ones()
    }

    /// The canonical key (the smallest `(g(p1), g(p2))` over the board's
    /// symmetries, as [`Board::canonical2`]) and the `g` that gives it.
    #[inline(always)]
    pub fn key(&self, board: &Board) -> (u64, u64, usize) {
        let mut best = (self.img1[0], self.img2[0], 0);
        for g in 1..board.symmetries() {
            let (a, b) = (self.img1[g], self.img2[g]);
            if a < best.0 || (a == best.0 && b < best.1) {
                best = (a, b, g);
            }
        }
        best
    }

    /// The canonical key (`key`'s first two parts) of the position after
    /// the player to move (`p1`) plays `cell`, without making the move.
    #[inline(always)]
    pub fn key_after(&self, board: &Board, cell: usize, p1: bool) -> (u64, u64) {
        let images = &board.cell_images[cell];
        let mut best = (u64::MAX, u64::MAX);
        let n = board.symmetries();
        for ((&i1, &i2), &m) in self.img1[..n].iter().zip(&self.img2[..n]).zip(images) {
            let (a, b) = if p1 { (i1 | m, i2) } else { (i1, i2 | m) };
            if a < best.0 || (a == best.0 && b < best.1) {
                best = (a, b);
            }
        }
        best
    }

    /// The position after the player to move plays `cell` (which must be
    /// empty and not dead for him: the caller handles losing moves).
    #[inline(always)]
    pub fn play(&self, board: &Board, cell: usize, p1: bool) -> Pos {
        self.play_with(board, cell, p1, true)
    }

    /// [`Pos::play`] without the symmetry images, which only the table's
    /// keys read: for the plain last moves ([`crate::last_moves`]), whose
    /// positions never reach the table. The images of the result are
    /// stale.
    #[inline(always)]
    pub(crate) fn play_plain(&self, board: &Board, cell: usize, p1: bool) -> Pos {
        self.play_with(board, cell, p1, false)
    }

    #[inline(always)]
    fn play_with(&self, board: &Board, cell: usize, p1: bool, images: bool) -> Pos {
        let bit = 1u64 << cell;
        let (mine, opp, dead_before) = if p1 {
            (self.p1, self.p2, self.d1)
        } else {
            (self.p2, self.p1, self.d2)
        };
        let through = board.squares_through[cell];
        let mut dead = dead_before;
        if board.tracks_every_square() {
            // The squares through `cell` with two of my stones and none of
            // the opponent's: the fourth cell is dead for me now.
            let (in_mine, in_opp) = if p1 {
                (&self.in_squares1, &self.in_squares2)
            } else {
                (&self.in_squares2, &self.in_squares1)
            };
            // Mostly none, one or two such squares: the first two are read
            // without a test (`square_or_none` of no square is 0), the
            // rest, rarely any, by a loop (whose exit, taken after zero,
            // one or two rounds, was mispredicted often).
            let third = through & in_mine.two() & in_opp.none();
            let rest = third.without_first();
            let mut more = rest.without_first();
            let mut fourth = board.square_or_none[third.first_index()]
                | board.square_or_none[rest.first_index()];
            while !more.is_empty() {
                fourth |= board.squares[more.first_index()];
                more = more.without_first();
            }
            dead |= fourth & !(mine | bit);
        } else {
            for &m in board.others(cell) {
                // Two of the other three are mine (not three: `cell` is safe)
                // and the fourth is empty: it is dead for me now.
                let x = m & mine;
                if x & x.wrapping_sub(1) != 0 {
                    let x = m & !mine;
                    if x & opp == 0 {
                        dead |= x;
                    }
                }
            }
        }
        // My stone shuts every square through it for the opponent; each new
        // dead cell of mine shuts every square through it for me.
        // Mostly none or one new dead cell: the first without a test, as
        // above (`squares_through` of no cell is 0).
        let fresh = dead & !dead_before;
        let mut more = fresh & fresh.wrapping_sub(1);
        let mut shut_mine = board.squares_through[fresh.trailing_zeros() as usize];
        while more != 0 {
            shut_mine |= board.squares_through[more.trailing_zeros() as usize];
            more &= more - 1;
        }
        let mut next = *self;
        let cell_images = &board.cell_images[cell];
        if p1 {
            next.p1 = mine | bit;
            next.d1 = dead;
            next.shut1 |= shut_mine;
            next.shut2 |= through;
            next.in_squares1.add(through);
            if images {
                for (i, m) in next.img1.iter_mut().zip(cell_images) {
                    *i |= m;
                }
            }
        } else {
            next.p2 = mine | bit;
            next.d2 = dead;
            next.shut2 |= shut_mine;
            next.shut1 |= through;
            next.in_squares2.add(through);
            if images {
                for (i, m) in next.img2.iter_mut().zip(cell_images) {
                    *i |= m;
                }
            }
        }
        next
    }

    /// Whether the second player can play Gardner's pairing strategy from
    /// here (see the module doc of [`super`]): the position is symmetric under a pairing
    /// of `board` with the first player (`p1_to_move`) to move, or becomes
    /// so when the second player answers the first player's last stone.
    /// Standard Hip only (the caller checks).
    #[inline(always)]
    pub fn p2_can_pair(&self, board: &Board, p1_to_move: bool) -> bool {
        board.pairings.iter().any(|&g| {
            if p1_to_move {
                self.p2 == self.img1[g]
            } else {
                // P1's stones are the image of P2's and one more.
                let extra = self.p1 & !self.img2[g];
                self.img2[g] & !self.p1 == 0 && extra != 0 && extra & (extra - 1) == 0
            }
        })
    }

    /// Whether the player to move loses by playing `cell` (it completes a
    /// square of his colour).
    #[inline(always)]
    pub fn loses(&self, cell: usize, p1: bool) -> bool {
        let dead = if p1 { self.d1 } else { self.d2 };
        dead >> cell & 1 == 1
    }
}
