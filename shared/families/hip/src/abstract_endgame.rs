//! Endgames with two or three open squares, valued by a memoised search over
//! their abstract form.
//!
//! [`super::endgame`] counts the endgames with no square open and with one.
//! With a few more, the position still reduces to a small game: what matters
//! is the open squares' empty cells (each with the open squares it lies in,
//! and whether it is dead for either player) and, for every other empty cell,
//! only its class (shared, one player's reserve, dead for both), as in the
//! static endgame. Moves follow the same rules as [`super::endgame`]'s one
//! square: the owner's stone in an open square removes one of its cells and
//! his third stone makes the last one dead for him (which shuts his other
//! open squares through that cell); the opponent's stone shuts it; a cell in
//! no open square any more joins the static counts. Positions of the same
//! abstract form (cells of the same kind are interchangeable) share one
//! value, found once per search by [`EndgameMemo`].

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::endgame::Endgame;

/// At most this many (square, owner) pairs open.
pub const MAX_OPEN: usize = 3;
/// Their empty cells: at most four each.
const MAX_CELLS: usize = 4 * MAX_OPEN;
/// A cell's kind: the bits of the open squares it lies in (`1 << q`), and
/// whether it is dead for the player to move, or for the other.
const DEAD_ME: u8 = 1 << MAX_OPEN;
const DEAD_OPP: u8 = DEAD_ME << 1;
/// The memo is cleared when it holds this many values (about 40 MiB).
const MEMO_CAP: usize = 1 << 20;

/// An endgame in abstract form, from the side of the player to move.
#[derive(Debug, Clone, Copy)]
pub struct AbstractEndgame {
    /// After this stone the same player places another (Double Hip).
    pub again: bool,
    /// Some empty cell is dead for both players.
    pub both_dead: bool,
    /// The other empty cells: shared, the mover's reserve, the opponent's.
    pub shared: u32,
    pub mine: u32,
    pub theirs: u32,
    /// The open squares, and whether each is the mover's.
    pub squares: usize,
    pub owned: [bool; MAX_OPEN],
    /// The open squares' empty cells, each as its kind.
    pub cells: usize,
    pub kinds: [u8; MAX_CELLS],
}

impl AbstractEndgame {
    /// An endgame with no open square yet: set [`Self::squares`] and
    /// [`Self::owned`], then add their cells with [`Self::cell`].
    pub fn new(again: bool, both_dead: bool, shared: u32, mine: u32, theirs: u32) -> Self {
        AbstractEndgame {
            again,
            both_dead,
            shared,
            mine,
            theirs,
            squares: 0,
            owned: [false; MAX_OPEN],
            cells: 0,
            kinds: [0; MAX_CELLS],
        }
    }

    /// Adds an open cell of the given kind.
    pub fn cell(&mut self, in_squares: u8, dead_me: bool, dead_opp: bool) {
        let mut kind = in_squares;
        if dead_me {
            kind |= DEAD_ME;
        }
        if dead_opp {
            kind |= DEAD_OPP;
        }
        self.kinds[self.cells] = kind;
        self.cells += 1;
    }

    /// The memo's key: everything above, the cells sorted by kind.
    fn key(&self) -> u128 {
        let mut kinds = self.kinds;
        kinds[..self.cells].sort_unstable();
        let mut k = u128::from(self.again) | u128::from(self.both_dead) << 1;
        k |= u128::from(self.shared) << 2
            | u128::from(self.mine) << 9
            | u128::from(self.theirs) << 16;
        k |= (self.squares as u128) << 23;
        for (q, &mine) in self.owned[..self.squares].iter().enumerate() {
            k |= u128::from(mine) << (25 + q);
        }
        for (i, &kind) in kinds[..self.cells].iter().enumerate() {
            k |= u128::from(kind) << (28 + 5 * i);
        }
        k
    }

    /// The same endgame seen by the other player, whose turn it is.
    fn flip(&self, double: bool) -> Self {
        let mut e = *self;
        e.again = double;
        std::mem::swap(&mut e.mine, &mut e.theirs);
        for owned in &mut e.owned[..e.squares] {
            *owned = !*owned;
        }
        for kind in &mut e.kinds[..e.cells] {
            let swapped = (*kind & DEAD_ME != 0, *kind & DEAD_OPP != 0);
            *kind &= !(DEAD_ME | DEAD_OPP);
            if swapped.1 {
                *kind |= DEAD_ME;
            }
            if swapped.0 {
                *kind |= DEAD_OPP;
            }
        }
        e
    }

    /// The mover fills open cell `i` (not dead for him).
    fn play(&self, i: usize) -> Self {
        let mut e = *self;
        let kind = e.kinds[i];
        e.cells -= 1;
        e.kinds[i] = e.kinds[e.cells];
        let mut shut = 0u8;
        for q in 0..e.squares {
            if kind >> q & 1 == 0 {
                continue;
            }
            if !e.owned[q] {
                shut |= 1 << q;
                continue;
            }
            // My third stone in it leaves one cell, dead for me now.
            let mut left = (0..e.cells).filter(|&j| e.kinds[j] >> q & 1 == 1);
            if let (Some(j), None) = (left.next(), left.next()) {
                e.kinds[j] |= DEAD_ME;
                shut |= 1 << q;
            }
        }
        // A square of mine with a cell dead for me is shut.
        for q in 0..e.squares {
            if e.owned[q]
                && e.kinds[..e.cells]
                    .iter()
                    .any(|&k| k >> q & 1 == 1 && k & DEAD_ME != 0)
            {
                shut |= 1 << q;
            }
        }
        if shut == 0 {
            return e;
        }
        let mut out = AbstractEndgame::new(e.again, e.both_dead, e.shared, e.mine, e.theirs);
        let mut renumber = [0u8; MAX_OPEN];
        for q in (0..e.squares).filter(|&q| shut >> q & 1 == 0) {
            renumber[q] = 1 << out.squares;
            out.owned[out.squares] = e.owned[q];
            out.squares += 1;
        }
        for &kind in &e.kinds[..e.cells] {
            let in_squares = (0..e.squares)
                .filter(|&q| kind >> q & 1 == 1)
                .fold(0, |m, q| m | renumber[q]);
            let dead = (kind & DEAD_ME != 0, kind & DEAD_OPP != 0);
            if in_squares != 0 {
                out.cell(in_squares, dead.0, dead.1);
                continue;
            }
            match dead {
                (true, true) => out.both_dead = true,
                (true, false) => out.theirs += 1,
                (false, true) => out.mine += 1,
                (false, false) => out.shared += 1,
            }
        }
        out
    }
}

/// A fast hash of a `u128` key (the memo is private to one search).
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }

    fn write_u128(&mut self, x: u128) {
        let v = (x as u64) ^ ((x >> 64) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let v = (v ^ v >> 29).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        self.0 = v ^ v >> 32;
    }
}

/// The values of abstract endgames met by one search, by their key.
pub struct EndgameMemo {
    double: bool,
    values: HashMap<u128, i8, BuildHasherDefault<KeyHasher>>,
}

impl EndgameMemo {
    pub fn new(double: bool) -> Self {
        EndgameMemo {
            double,
            values: HashMap::default(),
        }
    }

    /// The value of `e` for the player to move: every move tried (one per
    /// kind of cell), down to the static endgame.
    pub fn value(&mut self, endgame: &Endgame, e: &AbstractEndgame) -> i8 {
        if e.squares == 0 {
            return endgame.value(e.again, e.both_dead, e.shared, e.mine, e.theirs);
        }
        let key = e.key();
        if let Some(&v) = self.values.get(&key) {
            return v;
        }
        let mut after = [*e; 2 + MAX_CELLS];
        let mut n = 0;
        if e.shared > 0 {
            after[n].shared -= 1;
            n += 1;
        }
        if e.mine > 0 {
            after[n] = *e;
            after[n].mine -= 1;
            n += 1;
        }
        let mut tried = 0u32;
        for i in 0..e.cells {
            let kind = e.kinds[i];
            if kind & DEAD_ME != 0 || tried >> kind & 1 == 1 {
                continue;
            }
            tried |= 1 << kind;
            after[n] = e.play(i);
            n += 1;
        }
        let v = if n == 0 {
            // No safe cell: a loss, the board not being full.
            -1
        } else {
            let mut best = -1;
            for next in &after[..n] {
                let v = if e.again {
                    self.value(
                        endgame,
                        &AbstractEndgame {
                            again: false,
                            ..*next
                        },
                    )
                } else {
                    -self.value(endgame, &next.flip(self.double))
                };
                best = best.max(v);
                if best == 1 {
                    break;
                }
            }
            best
        };
        if self.values.len() >= MEMO_CAP {
            self.values.clear();
        }
        self.values.insert(key, v);
        v
    }
}
