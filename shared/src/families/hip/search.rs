//! The `hip-solve` search: alpha-beta negamax over the values {-1, 0, 1} with
//! a transposition table keyed on the canonical position (up to the board's
//! symmetries), on `u64` bitboards.
//!
//! A position is the pair of stone sets `(p1, p2)`; who moves follows from the
//! number of stones (see [`p1_moves`]), so the pair is the whole state.
//! Alongside it the search carries, per player, the *dead* cells: empty cells
//! where that player's stone would complete a square of his colour. They
//! only ever grow, are updated from the squares through the cell just played,
//! and make the rules one mask test: a move into a dead cell loses at once; a
//! player whose every empty cell is dead must play one and loses.
//!
//! Move order (after the table's move): play where it does not create new
//! dead cells for yourself, does not obstruct the opponent's partial squares
//! (their dead cells are your private reserve), and does not spend your
//! reserve. Franke found the second factor the most important.
//!
//! Values are from the mover's point of view inside the search and from the
//! first player's (P1) point of view everywhere else, including the table.

use std::cell::RefCell;
use std::sync::atomic::Ordering;

use super::board::Board;
use crate::family::ExploreContext;

/// How many nodes between two looks at the shared atomics.
const POLL_INTERVAL: u64 = 1 << 14;

/// Positions with fewer empty cells than this are not stored in the table
/// (they are cheaper to search than to canonicalise).
const TT_MIN_EMPTY: u32 = 4;

/// Move-ordering penalties, tuned on 4x4 to 4x6 boards (node counts halve to
/// tenth against no ordering): a new dead cell of mine, obstructing one or two
/// opponent stones, spending my reserve, extending a partial square of mine,
/// starting a new one.
const WEIGHTS: [i32; 6] = [6, 2, 3, 3, 0, 2];

/// Table size: 2^20 buckets of two entries, 48 MiB.
const TT_BITS: u32 = 20;

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

/// A position with its dead-cell masks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pos {
    pub p1: u64,
    pub p2: u64,
    /// Cells where a P1 (P2) stone would complete a P1 (P2) square.
    pub d1: u64,
    pub d2: u64,
}

impl Pos {
    pub const EMPTY: Pos = Pos {
        p1: 0,
        p2: 0,
        d1: 0,
        d2: 0,
    };

    pub fn stones(&self) -> u32 {
        (self.p1 | self.p2).count_ones()
    }

    /// The position after the player to move plays `cell` (which must be
    /// empty and not dead for him: the caller handles losing moves).
    #[inline(always)]
    pub fn play(&self, board: &Board, cell: usize, p1: bool) -> Pos {
        let bit = 1u64 << cell;
        let (mine, opp, dead) = if p1 {
            (self.p1, self.p2, self.d1)
        } else {
            (self.p2, self.p1, self.d2)
        };
        let mut dead = dead;
        for &m in board.others(cell) {
            // Two of the other three are mine (not three: `cell` is safe).
            let x = m & mine;
            if x & x.wrapping_sub(1) != 0 {
                let x = m & !mine;
                if x & opp == 0 {
                    dead |= x;
                }
            }
        }
        if p1 {
            Pos {
                p1: mine | bit,
                p2: opp,
                d1: dead,
                d2: self.d2,
            }
        } else {
            Pos {
                p1: opp,
                p2: mine | bit,
                d1: self.d1,
                d2: dead,
            }
        }
    }

    /// Whether the player to move loses by playing `cell` (it completes a
    /// square of his colour).
    #[inline(always)]
    pub fn loses(&self, cell: usize, p1: bool) -> bool {
        let dead = if p1 { self.d1 } else { self.d2 };
        dead >> cell & 1 == 1
    }
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    k1: u64,
    k2: u64,
    /// P1's value lies in `lo..=hi`; `lo > hi` marks an empty slot.
    lo: i8,
    hi: i8,
    /// Best move in the canonical frame (255: none).
    mv: u8,
    empty: u8,
}

const VACANT: Entry = Entry {
    k1: 0,
    k2: 0,
    lo: 2,
    hi: -2,
    mv: 255,
    empty: 0,
};

/// The transposition table: two-entry buckets (one kept for the larger
/// subtree, one always replaced). Values are facts about positions, so a
/// table stays valid across units of the same game; it is kept per thread and
/// reused until a job with another board or variant comes.
pub struct Table {
    tag: (usize, usize, bool),
    entries: Vec<Entry>,
    mask: usize,
}

thread_local! {
    static TABLE: RefCell<Option<Table>> = const { RefCell::new(None) };
}

/// Runs `f` with this thread's table for the given game, allocating or
/// clearing it if it served another game.
pub fn with_table<T>(board: &Board, double: bool, f: impl FnOnce(&mut Table) -> T) -> T {
    TABLE.with(|cell| {
        let mut slot = cell.borrow_mut();
        let tag = (board.rows, board.cols, double);
        let bits = TT_BITS.min(board.n as u32 + 4);
        let fresh = match slot.as_ref() {
            Some(t) => t.tag != tag,
            None => true,
        };
        if fresh {
            *slot = Some(Table {
                tag,
                entries: vec![VACANT; 2usize << bits],
                mask: (1usize << bits) - 1,
            });
        }
        f(slot.as_mut().expect("table allocated"))
    })
}

#[inline(always)]
fn hash(k1: u64, k2: u64) -> u64 {
    let x = k1.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ k2.wrapping_mul(0xc2b2_ae3d_27d4_eb4f);
    x ^ (x >> 31)
}

impl Table {
    /// P1's interval and best canonical move for a canonical key.
    #[inline(always)]
    pub fn probe(&self, k1: u64, k2: u64) -> Option<(i8, i8, u8)> {
        let b = (hash(k1, k2) as usize & self.mask) * 2;
        for e in &self.entries[b..b + 2] {
            if e.k1 == k1 && e.k2 == k2 && e.lo <= e.hi {
                return Some((e.lo, e.hi, e.mv));
            }
        }
        None
    }

    /// Records that P1's value lies in `lo..=hi` (intersected with what the
    /// table knew).
    #[inline(always)]
    pub fn store(&mut self, k1: u64, k2: u64, lo: i8, hi: i8, mv: u8, empty: u8) {
        let b = (hash(k1, k2) as usize & self.mask) * 2;
        let bucket = &mut self.entries[b..b + 2];
        for e in bucket.iter_mut() {
            if e.k1 == k1 && e.k2 == k2 && e.lo <= e.hi {
                let (nlo, nhi) = (e.lo.max(lo), e.hi.min(hi));
                if nlo <= nhi {
                    e.lo = nlo;
                    e.hi = nhi;
                } else {
                    // Cannot happen with exact searches; keep the newer.
                    e.lo = lo;
                    e.hi = hi;
                }
                if mv != 255 {
                    e.mv = mv;
                }
                return;
            }
        }
        let new = Entry {
            k1,
            k2,
            lo,
            hi,
            mv,
            empty,
        };
        if bucket[0].lo > bucket[0].hi || empty >= bucket[0].empty {
            bucket[1] = bucket[0];
            bucket[0] = new;
        } else {
            bucket[1] = new;
        }
    }
}

/// One search: the board, the variant, the budget and the counters.
pub struct Solver<'a, 'c> {
    pub board: &'a Board,
    pub double: bool,
    pub table: &'a mut Table,
    /// Nodes expanded (table hits and forced losses are free).
    pub nodes: u64,
    pub budget: u64,
    next_poll: u64,
    /// The budget ran out or a stop was requested: every search returns
    /// `None` from now on.
    pub aborted: bool,
    ctx: Option<&'a ExploreContext<'c>>,
}

/// The moves of a position, best first.
pub struct Moves {
    pub cells: [u8; 64],
    pub len: usize,
}

impl<'a, 'c> Solver<'a, 'c> {
    pub fn new(
        board: &'a Board,
        double: bool,
        table: &'a mut Table,
        ctx: Option<&'a ExploreContext<'c>>,
    ) -> Self {
        Solver {
            board,
            double,
            table,
            nodes: 0,
            budget: ctx.map_or(u64::MAX, |c| c.budget.max(1)),
            next_poll: POLL_INTERVAL,
            aborted: false,
            ctx,
        }
    }

    /// The canonical key of a position and the symmetry that gives it.
    #[inline(always)]
    pub fn key(&self, pos: &Pos) -> (u64, u64, usize) {
        self.board.canonical2(pos.p1, pos.p2)
    }

    /// The safe moves of the player to move (`p1`) except `exclude`, best
    /// first.
    ///
    /// A cell's score sums, over the squares through it that can still become
    /// one colour, what playing there does: a square of mine with two of my
    /// stones (playing makes its last cell dead for me), a square with one or
    /// two of the opponent's stones and none of mine (playing obstructs it, so
    /// it never gives the opponent a dead cell, which would be my reserve), an
    /// empty square (playing starts a partial square of mine); plus whether the
    /// cell is my reserve already. The squares are walked once per node, not
    /// once per candidate.
    #[inline]
    pub fn moves(&self, pos: &Pos, p1: bool, exclude: u64) -> Moves {
        ordered_moves(self.board, pos, p1, exclude)
    }

    fn poll(&mut self) {
        self.next_poll = self.nodes + POLL_INTERVAL;
        if let Some(ctx) = self.ctx {
            ctx.progress.store(self.nodes, Ordering::Relaxed);
            if ctx.stop_requested() {
                self.aborted = true;
            }
        }
    }

    /// The value of `pos` for the player to move, searched in the window
    /// `(alpha, beta)` (fail-soft: a result `<= alpha` is an upper bound, `>=
    /// beta` a lower bound). `None`: aborted.
    pub fn search(&mut self, pos: &Pos, mut alpha: i8, mut beta: i8) -> Option<i8> {
        let board = self.board;
        let occ = pos.p1 | pos.p2;
        let empty = board.full & !occ;
        if empty == 0 {
            return Some(0);
        }
        let stones = occ.count_ones();
        let p1 = p1_moves(stones, self.double);
        let dmine = if p1 { pos.d1 } else { pos.d2 };
        if empty & !dmine == 0 {
            return Some(-1);
        }
        let empties = empty.count_ones();
        let mut tt_move = None;
        let mut key = (0, 0, 0);
        let use_table = empties >= TT_MIN_EMPTY;
        if use_table {
            key = self.key(pos);
            if let Some((lo, hi, mv)) = self.table.probe(key.0, key.1) {
                let (lo, hi) = if p1 { (lo, hi) } else { (-hi, -lo) };
                if lo >= beta || lo == hi {
                    return Some(lo);
                }
                if hi <= alpha {
                    return Some(hi);
                }
                alpha = alpha.max(lo);
                beta = beta.min(hi);
                if mv != 255 {
                    tt_move = Some(board.perms[board.inverse[key.2]][mv as usize] as usize);
                }
            }
        }
        if self.aborted || self.nodes >= self.budget {
            self.aborted = true;
            return None;
        }
        self.nodes += 1;
        if self.nodes >= self.next_poll {
            self.poll();
        }
        let (a0, b0) = (alpha, beta);
        let mut best = -1i8;
        let mut best_move = 255u8;
        // The table's move first: if it cuts off, the others are never scored.
        let mut first = [0u8; 1];
        let mut exclude = 0u64;
        if let Some(f) = tt_move.filter(|&f| (empty & !dmine) >> f & 1 == 1) {
            first[0] = f as u8;
            exclude = 1 << f;
        }
        let mut moves: Option<Moves> = None;
        let mut i = 0usize;
        loop {
            let c = if exclude != 0 && i == 0 {
                first[0] as usize
            } else {
                let list = moves.get_or_insert_with(|| self.moves(pos, p1, exclude));
                let j = i - usize::from(exclude != 0);
                if j >= list.len {
                    break;
                }
                list.cells[j] as usize
            };
            i += 1;
            let child = pos.play(board, c, p1);
            let v = if p1_moves(stones + 1, self.double) == p1 {
                self.search(&child, alpha, beta)?
            } else {
                -self.search(&child, -beta, -alpha)?
            };
            if v > best {
                best = v;
                best_move = c as u8;
                if v > alpha {
                    alpha = v;
                    if alpha >= beta {
                        break;
                    }
                }
            }
        }
        if use_table {
            let (lo, hi) = if best <= a0 {
                (-1, best)
            } else if best >= b0 {
                (best, 1)
            } else {
                (best, best)
            };
            let (lo, hi) = if p1 { (lo, hi) } else { (-hi, -lo) };
            let mv = if best_move == 255 {
                255
            } else {
                board.perms[key.2][best_move as usize]
            };
            self.table.store(key.0, key.1, lo, hi, mv, empties as u8);
        }
        Some(best)
    }
}

/// See [`Solver::moves`].
#[inline]
pub fn ordered_moves(board: &Board, pos: &Pos, p1: bool, exclude: u64) -> Moves {
    let (mine, opp, dmine, dopp) = if p1 {
        (pos.p1, pos.p2, pos.d1, pos.d2)
    } else {
        (pos.p2, pos.p1, pos.d2, pos.d1)
    };
    let empty = board.full & !(mine | opp);
    let safe = empty & !dmine & !exclude;
    let mut out = Moves {
        cells: [0; 64],
        len: 0,
    };
    if safe == 0 {
        return out;
    }
    let w = &WEIGHTS;
    let mut score = [0i32; 64];
    for &sq in &board.squares {
        let e = sq & empty;
        if e == 0 {
            continue;
        }
        let (mo, op) = (sq & mine, sq & opp);
        if mo != 0 && op != 0 {
            continue; // Can never be one colour.
        }
        let (a, b) = (small_count(mo), small_count(op));
        if b == 0 {
            match a {
                0 => add(&mut score, e, -w[5]),
                1 => add(&mut score, e, -w[4]),
                2 => {
                    // Playing one empty cell makes the other dead for me.
                    let x = e.trailing_zeros() as usize;
                    let y = (e & (e - 1)).trailing_zeros() as usize;
                    if dmine >> y & 1 == 0 {
                        score[x] -= w[0];
                    }
                    if dmine >> x & 1 == 0 {
                        score[y] -= w[0];
                    }
                }
                _ => {}
            }
        } else if a == 0 {
            match b {
                1 => add(&mut score, e, -w[1]),
                2 => add(&mut score, e, -w[2]),
                _ => {}
            }
        }
    }
    let mut m = safe;
    let mut keys = [0i32; 64];
    while m != 0 {
        let c = m.trailing_zeros() as usize;
        m &= m - 1;
        let sc = score[c] - if dopp >> c & 1 == 1 { w[3] } else { 0 };
        // Insertion sort, stable in cell order.
        let mut i = out.len;
        while i > 0 && keys[i - 1] < sc {
            out.cells[i] = out.cells[i - 1];
            keys[i] = keys[i - 1];
            i -= 1;
        }
        out.cells[i] = c as u8;
        keys[i] = sc;
        out.len += 1;
    }
    out
}

/// The number of cells in a set of at most four cells, without a popcount
/// instruction (not in the baseline x86-64 target).
#[inline(always)]
fn small_count(m: u64) -> u32 {
    let m2 = m & m.wrapping_sub(1);
    let m3 = m2 & m2.wrapping_sub(1);
    let m4 = m3 & m3.wrapping_sub(1);
    u32::from(m != 0) + u32::from(m2 != 0) + u32::from(m3 != 0) + u32::from(m4 != 0)
}

/// Adds `v` to the score of every cell of `cells`.
#[inline(always)]
fn add(score: &mut [i32; 64], mut cells: u64, v: i32) {
    while cells != 0 {
        score[cells.trailing_zeros() as usize] += v;
        cells &= cells - 1;
    }
}
