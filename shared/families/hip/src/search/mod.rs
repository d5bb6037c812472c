//! The `hip-solve` search: alpha-beta negamax over the values {-1, 0, 1} with
//! a transposition table keyed on the canonical position (up to the board's
//! symmetries), on `u64` bitboards.
//!
//! A position ([`Pos`], with the rules of a move) is the pair of stone sets
//! and, per player, the *dead* cells where his stone would complete a
//! square of his colour.
//!
//! Move order (after the table's move): play where it does not create new
//! dead cells for yourself, does not obstruct the opponent's partial squares
//! (their dead cells are your private reserve), and does not spend your
//! reserve. Franke found the second factor the most important.
//!
//! Gardner's pairing argument bounds standard Hip on a board with an even
//! side: take a symmetry `g` of the board that pairs the cells (an
//! involution without a fixed cell, [`Board::pairings`]). From a position
//! symmetric under `g` with the first player to move, the second player
//! answers every move `m` by `g(m)` (empty, since the position was
//! symmetric and `g(m) != m`) and never completes a square first: a square
//! `S` of his would have its image `g(S)` all the first player's, completed
//! by `m` one move earlier, unless `g(S) = S`, and such a square pairs its
//! own corners, one stone of each colour a pair. So such a position is
//! worth at most a draw to the first player, and so is one where the second
//! player's answer restores the symmetry ([`Pos::p2_can_pair`]). The empty
//! board is one: on these boards the search only proves what the first
//! player can reach, never again the second player's draw.
//!
//! In Double Hip the two stones of a turn commute: `x` then `c` is the
//! position `c` then `x`. A node placing a turn's first stone hands each
//! child the first stones its earlier children searched without a cutoff,
//! and the child skips them as its second stone (each such pair is worth at
//! most what the earlier child returned, so at most the window's `alpha`);
//! the child's result is kept at least `alpha`, so a fail-low result stays
//! a true upper bound in the table. Without it every pair is met twice: a
//! table probe, and a whole search when the entry is gone or in the plain
//! last moves (docs/notes/hip-solver.md, "Each pair of a Double Hip turn once").
//!
//! Searches that share a table (the threads of a worker, `orchard run`'s
//! local workers) mark the positions they are inside ([`Table::enter`]),
//! and a search defers a child another one is inside until its other
//! children are searched, when the other's value is likely in the table
//! (Weill's ABDADA, without its exclusive first pass). Without it, two
//! searches of siblings whose subtrees transpose search the same positions
//! at the same time: see [`BUSY_MIN_WEIGHT`].
//!
//! Values are from the mover's point of view inside the search and from the
//! first player's (P1) point of view everywhere else, including the table.

mod pos;

use std::sync::atomic::Ordering;

use super::abstract_endgame::{AbstractEndgame, EndgameMemo, MAX_OPEN};
use super::board::Board;
use super::endgame::{Endgame, OpenSquare, OPEN_SQUARE_COUNTS};
use super::last_moves::{plain_weight, PLAIN_MAX_WEIGHT};
pub use super::order::{ordered_moves, tuned_weights, MoveOrder, MovePicker, Moves, SquareCounts};
use super::table::{Place, Table, TableEntry};
use orchard_core::ExploreContext;

pub use pos::{p1_moves, Pos};

/// How many nodes between two looks at the shared atomics.
const POLL_INTERVAL: u64 = 1 << 14;

/// Expected cut nodes whose [`plain_weight`] is at least this look up their
/// first children in the table before searching any (see [`Solver::etc`]).
/// Below it the probes cost more than they save; 20 took 0.92 of the time
/// of a threshold of ten empty cells on 6x6 positions and 0.985 on 4x7
/// (docs/notes/hip-solver.md, "The plain last moves by the game left").
const ETC_MIN_WEIGHT: u32 = 20;

/// The enhanced cutoff looks up this many children, the first in the move
/// order. Of its cutoffs on 4x7 and 5x6, 97-98% came from one of the first
/// four children, and looking up all of them asks the memory for about
/// twelve buckets a call (docs/notes/hip-solver.md, "Expected cut nodes").
const ETC_CHILDREN: usize = 4;

/// By default a position whose search took at least this many nodes is
/// offered to the table as a lemma for other workers (see
/// [`Table::offer_lemma`]; a job may say otherwise,
/// [`Table::lemma_min_nodes`]): about 0.09 byte of lemmas a node searched.
/// Fewer lemmas save less: at 4,096 on 5x5, 2 to 8 processes kept 7-30%
/// more nodes. More save more and cost bytes on the wire: on 4x7, 32 cut
/// sixteen processes' work by a quarter and sent eight times the bytes
/// (docs/notes/hip-across-machines.md, "Smaller lemmas").
pub const LEMMA_MIN_NODES: u64 = 1 << 8;

/// Positions whose [`plain_weight`] is at least this are marked busy while
/// a search is inside them, and their children (but the first) deferred
/// while another search is inside one. On Double 4x7, two local workers on
/// one table did 1.03 times one worker's nodes with the marks, 1.15
/// without (a second worker on the first opening's second reply, beside the
/// first reply's search); 4x7 at four workers 0.96 of the work; other boards
/// unchanged (docs/notes/hip-across-machines.md, "One table against many").
/// At 30 nearly as good, at 40 and 48 less; one search pays 0.3% more
/// instructions at 24 (cachegrind, Double 4x6), for the children's keys.
pub const BUSY_MIN_WEIGHT: u32 = 24;

/// One search: the board, the variant, the budget and the counters.
pub struct Solver<'a, 'c> {
    pub board: &'a Board,
    pub double: bool,
    pub table: &'a Table,
    endgame: &'static Endgame,
    /// The move order (after the table's move).
    pub order: MoveOrder,
    /// Nodes expanded (table hits and forced losses are free).
    pub nodes: u64,
    /// Of `nodes`, those of the plain last moves ([`super::last_moves`]).
    pub plain_nodes: u64,
    pub budget: u64,
    next_poll: u64,
    /// The budget ran out or a stop was requested: every search returns
    /// `None` from now on.
    pub aborted: bool,
    /// After an abort: the moves from the searched position down to the node
    /// where the search stopped, deepest first. Everything searched off this
    /// path is in the table; the nodes on it are the partly searched ones.
    pub abort_path: Vec<u8>,
    ctx: Option<&'a ExploreContext<'c>>,
    /// The endgames with two or three open squares valued so far.
    memo: EndgameMemo,
    /// The moves of the positions being searched, one picker per number of
    /// stones (see [`MovePicker`]).
    pickers: Vec<MovePicker>,
}

impl<'a, 'c> Solver<'a, 'c> {
    pub fn new(
        board: &'a Board,
        double: bool,
        table: &'a Table,
        ctx: Option<&'a ExploreContext<'c>>,
    ) -> Self {
        Solver {
            board,
            double,
            table,
            endgame: Endgame::get(double),
            order: MoveOrder::tuned(board, double),
            nodes: 0,
            plain_nodes: 0,
            budget: ctx.map_or(u64::MAX, |c| c.budget.max(1)),
            next_poll: POLL_INTERVAL,
            aborted: false,
            abort_path: Vec::new(),
            ctx,
            memo: EndgameMemo::new(double),
            pickers: (0..=board.n).map(|_| MovePicker::new(board)).collect(),
        }
    }

    /// The canonical key of a position and the symmetry that gives it.
    #[inline(always)]
    pub fn key(&self, pos: &Pos) -> (u64, u64, usize) {
        pos.key(self.board)
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
        self.order.moves(self.board, pos, p1, exclude)
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

    /// Enhanced transposition cutoff: a move whose resulting position the
    /// table already knows to be worth at least `beta` to the player to move
    /// (`p1`), with its value, found by probing the first [`ETC_CHILDREN`]
    /// children before searching any. In a placement game most positions are
    /// reached by many move orders, so a sibling's subtree has often settled
    /// one of them. `first`: those children, best first (an associated
    /// function, so that they can be read from the search's picker).
    fn etc(
        board: &Board,
        table: &Table,
        pos: &Pos,
        p1: bool,
        first: &[u8],
        beta: i8,
    ) -> Option<(i8, u8)> {
        // All the buckets are requested before any is read, so that the
        // cache misses overlap instead of queueing.
        let mut places = [Place::default(); ETC_CHILDREN];
        for (place, &c) in places.iter_mut().zip(first) {
            let (k1, k2) = pos.key_after(board, c as usize, p1);
            *place = table.place(k1, k2);
            table.prefetch(place);
        }
        for (place, &c) in places.iter().zip(first) {
            if let Some((lo, hi, _)) = table.probe_at(place) {
                let v = if p1 { lo } else { -hi };
                if v >= beta {
                    return Some((v, c));
                }
            }
        }
        None
    }

    /// The value for the player to move (`p1`) of a position with at most
    /// one square open (see [`super::endgame`]), by counting; `None` if more
    /// are open (or the counts are past the table's).
    #[inline(always)]
    pub fn counted(&self, pos: &Pos, empty: u64, stones: u32, p1: bool) -> Option<i8> {
        let every = self.board.every_square;
        let (open1, open2) = (every & !pos.shut1, every & !pos.shut2);
        let open = open1 | open2;
        if open.has_two() || !(open1 & open2).is_empty() {
            return None;
        }
        let (dmine, dopp) = if p1 {
            (pos.d1, pos.d2)
        } else {
            (pos.d2, pos.d1)
        };
        let again = self.double && p1_moves(stones + 1, true) == p1;
        let both_dead = empty & dmine & dopp != 0;
        if open.is_empty() {
            // A static endgame.
            let safe = empty & !dmine;
            return Some(self.endgame.value(
                again,
                both_dead,
                (safe & !dopp).count_ones(),
                (safe & dopp).count_ones(),
                (empty & dmine & !dopp).count_ones(),
            ));
        }
        // One square open, for its owner: its cells apart.
        let owner_is_p1 = !open1.is_empty();
        let square = self.board.squares[open.first_index()] & empty;
        let other_dead = if owner_is_p1 { pos.d2 } else { pos.d1 };
        let owned = OpenSquare {
            mine: owner_is_p1 == p1,
            shared: (square & !other_dead).count_ones(),
            reserve: (square & other_dead).count_ones(),
        };
        let rest = empty & !square;
        let safe = rest & !dmine;
        let (s, m, t) = (
            (safe & !dopp).count_ones(),
            (safe & dopp).count_ones(),
            (rest & dmine & !dopp).count_ones(),
        );
        if s.max(m).max(t) >= OPEN_SQUARE_COUNTS {
            return None;
        }
        Some(self.endgame.value_with(again, both_dead, owned, s, m, t))
    }

    /// The value for the player to move (`p1`) of a position with two or
    /// three squares open, by the memo of abstract endgames
    /// ([`super::abstract_endgame`]); `None` with fewer or more.
    pub fn counted_abstract(&mut self, pos: &Pos, empty: u64, stones: u32, p1: bool) -> Option<i8> {
        let every = self.board.every_square;
        let (open1, open2) = (every & !pos.shut1, every & !pos.shut2);
        let open = (open1.count() + open2.count()) as usize;
        if !(2..=MAX_OPEN).contains(&open) {
            return None;
        }
        let (dmine, dopp) = if p1 {
            (pos.d1, pos.d2)
        } else {
            (pos.d2, pos.d1)
        };
        // The open squares' empty cells, and which of them each is in.
        let mut squares = [0u64; MAX_OPEN];
        let mut owned = [false; MAX_OPEN];
        let mut n = 0;
        for (set, owner_is_p1) in [(open1, true), (open2, false)] {
            for square in set.iter() {
                squares[n] = self.board.squares[square] & empty;
                owned[n] = owner_is_p1 == p1;
                n += 1;
            }
        }
        let kernel = squares.iter().fold(0, |u, &s| u | s);
        let rest = empty & !kernel;
        let safe = rest & !dmine;
        let mut e = AbstractEndgame::new(
            self.double && p1_moves(stones + 1, true) == p1,
            rest & dmine & dopp != 0,
            (safe & !dopp).count_ones(),
            (safe & dopp).count_ones(),
            (rest & dmine & !dopp).count_ones(),
        );
        e.squares = n;
        e.owned = owned;
        let mut cells = kernel;
        while cells != 0 {
            let c = cells.trailing_zeros();
            cells &= cells - 1;
            let in_squares = (0..n).fold(0u8, |m, q| m | ((squares[q] >> c & 1) as u8) << q);
            e.cell(in_squares, dmine >> c & 1 == 1, dopp >> c & 1 == 1);
        }
        Some(self.memo.value(self.endgame, &e))
    }

    /// The value of `pos` for the player to move, searched in the window
    /// `(alpha, beta)` (fail-soft: a result `<= alpha` is an upper bound, `>=
    /// beta` a lower bound). `None`: aborted.
    pub fn search(&mut self, pos: &Pos, alpha: i8, beta: i8) -> Option<i8> {
        self.search_skipping(pos, alpha, beta, 0, true)
    }

    /// [`Solver::search`] of the second stone of a Double Hip turn, whose
    /// parent has already searched the first stones in `skip` without a
    /// cutoff. The two stones of a turn commute: the pair `{x, c}` for a
    /// `c` in `skip` is the pair `{c, x}` that `c`'s search covered, and
    /// worth at most what that search returned, which is at most `alpha`.
    /// So those cells are not tried here, and the result is never below
    /// `alpha` (a result `<= alpha` stays a true upper bound).
    ///
    /// `cut`: whether the node is expected to cut off (Knuth and Moore's
    /// node types). A node expected to cut off expects its first child to
    /// refute everything (the child is an all-node: every move of the
    /// opponent's tried), and an all-node expects each of its children to
    /// cut off; a node whose first child did not cut off is an all-node from
    /// then on. The second stone of a Double Hip turn keeps its parent's
    /// type (the same player chooses both), and [`Solver::search`] starts
    /// from a cut node. Only the enhanced cutoff and the prefetch of the next
    /// sibling's bucket read it, never the values: the cutoff is looked for
    /// only where one is expected (on 4x7 and 5x6, second-player wins, it
    /// cut off at 3-6% of the first player's nodes and 30% of the second
    /// player's), and the next sibling is prefetched only where it is likely
    /// to be searched.
    fn search_skipping(
        &mut self,
        pos: &Pos,
        mut alpha: i8,
        mut beta: i8,
        skip: u64,
        mut cut: bool,
    ) -> Option<i8> {
        let alpha_in = alpha;
        let board = self.board;
        let occ = pos.p1 | pos.p2;
        let empty = board.full & !occ;
        // The last moves (a full board among them) are searched plainly.
        let weight = plain_weight(pos, empty);
        if weight <= PLAIN_MAX_WEIGHT {
            return Some(self.search_last_moves(pos, alpha, beta, skip));
        }
        let empties = empty.count_ones();
        let stones = occ.count_ones();
        let p1 = p1_moves(stones, self.double);
        let dmine = if p1 { pos.d1 } else { pos.d2 };
        if empty & !dmine == 0 {
            return Some(-1);
        }
        // The position's bucket is on its way while the rules below are
        // checked (a position they settle has asked for it in vain).
        let key = self.key(pos);
        let place = self.table.place(key.0, key.1);
        self.table.prefetch(&place);
        if let Some(v) = self.counted(pos, empty, stones, p1) {
            return Some(v);
        }
        // A player with no dead cell and no square open for him never gets
        // one, so he can never lose: the value is at least a draw for him.
        let dopp = if p1 { pos.d2 } else { pos.d1 };
        let (shut_mine, shut_opp) = if p1 {
            (pos.shut1, pos.shut2)
        } else {
            (pos.shut2, pos.shut1)
        };
        let safe_mine = shut_mine == board.every_square && empty & dmine == 0;
        let safe_opp = shut_opp == board.every_square && empty & dopp == 0;
        if safe_mine {
            if safe_opp || beta <= 0 {
                return Some(0);
            }
            alpha = alpha.max(0);
        }
        if safe_opp {
            if alpha >= 0 {
                return Some(0);
            }
            beta = beta.min(0);
        }
        if !self.double && pos.p2_can_pair(board, p1) {
            // The second player can pair moves: at most a draw for the first.
            if p1 {
                if alpha >= 0 {
                    return Some(0);
                }
                beta = beta.min(0);
            } else {
                if beta <= 0 {
                    return Some(0);
                }
                alpha = alpha.max(0);
            }
        }
        // Every position searched here (a weight above `PLAIN_MAX_WEIGHT`)
        // goes through the table.
        let mut tt_move = None;
        if let Some((lo, hi, mv)) = self.table.probe_at(&place) {
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
        // Not in the table: with two or three squares open, the abstract
        // endgame's value, kept in the table too.
        if let Some(v) = self.counted_abstract(pos, empty, stones, p1) {
            let v1 = if p1 { v } else { -v };
            self.table.store_at(&place, v1, v1, 255, empties as u8);
            return Some(v);
        }
        if self.aborted || self.nodes >= self.budget {
            self.aborted = true;
            return None;
        }
        self.nodes += 1;
        let first_node = self.nodes;
        if self.nodes >= self.next_poll {
            self.poll();
        }
        let (a0, b0) = (alpha, beta);
        // The skipped pairs are worth at most `alpha_in` (see above).
        let mut best = if skip != 0 { alpha_in } else { -1i8 };
        let mut best_move = 255u8;
        // Placing the first stone of a Double Hip turn (the child has the
        // same mover): the first stones searched so far, which the later
        // siblings skip as their second stone.
        let pairs = p1_moves(stones + 1, self.double) == p1;
        let mut tried = 0u64;
        // The table's move first: if it cuts off, the others are never scored.
        let first = tt_move.filter(|&f| (empty & !dmine & !skip) >> f & 1 == 1);
        let exclude = skip | first.map_or(0, |f| 1 << f);
        let listed_from = usize::from(first.is_some());
        let depth = stones as usize;
        // Whether the children are likely searched with the table (a move
        // takes one or two from the weight, more where it kills cells), so
        // that their buckets are worth asking for early.
        let children_probe = weight > PLAIN_MAX_WEIGHT + 2;
        let mut scored = false;
        // Whether the enhanced cutoff has asked for the first children's
        // buckets.
        let mut etc_looked_up = false;
        // Busy marks: a child another search is inside now waits until the
        // other children are searched (its value may be in the table by
        // then).
        let busy = weight >= self.table.busy_weight();
        if busy {
            self.table.enter(key.0, key.1);
        }
        let mut deferred = [0u8; 64];
        let (mut deferred_len, mut deferred_next) = (0usize, 0usize);
        let mut i = 0usize;
        loop {
            let c = if let (Some(f), 0) = (first, i) {
                f
            } else if deferred_next > 0 {
                // The second pass: `deferred_next - 1` is the next one's index.
                if deferred_next > deferred_len {
                    break;
                }
                deferred_next += 1;
                deferred[deferred_next - 2] as usize
            } else {
                if !scored {
                    let picker = &mut self.pickers[depth];
                    picker.reset();
                    self.order.score(board, pos, p1, exclude, picker);
                    scored = true;
                    if cut && weight >= ETC_MIN_WEIGHT {
                        etc_looked_up = true;
                        let first = picker.first(ETC_CHILDREN);
                        if let Some((v, c)) = Self::etc(board, self.table, pos, p1, first, beta) {
                            best = v;
                            best_move = c;
                            break;
                        }
                    }
                }
                match self.pickers[depth].get(i - listed_from) {
                    Some(c) => c as usize,
                    None if deferred_len > 0 => {
                        deferred_next = 2;
                        deferred[0] as usize
                    }
                    None => break,
                }
            };
            i += 1;
            if busy && i > 1 && deferred_next == 0 {
                let (k1, k2) = pos.key_after(board, c, p1);
                if self.table.is_busy(k1, k2) {
                    deferred[deferred_len] = c as u8;
                    deferred_len += 1;
                    continue;
                }
            }
            // While `c`'s subtree is searched, the next sibling's bucket can
            // be on its way from memory.
            if scored && !cut && children_probe {
                if let Some(next) = self.pickers[depth].get(i - listed_from) {
                    let (k1, k2) = pos.key_after(board, next as usize, p1);
                    self.table.prefetch(&self.table.place(k1, k2));
                }
            }
            // The first child's bucket: no sibling asked for it, and unless
            // the enhanced cutoff looked it up, nothing has (the child asks
            // too, but only a few instructions before it reads).
            if i == 1 && children_probe && !etc_looked_up {
                let (k1, k2) = pos.key_after(board, c, p1);
                self.table.prefetch(&self.table.place(k1, k2));
            }
            let child = pos.play(board, c, p1);
            let r = if pairs {
                self.search_skipping(&child, alpha, beta, tried, cut)
            } else {
                self.search_skipping(&child, -beta, -alpha, 0, !cut)
                    .map(|v| -v)
            };
            let Some(v) = r else {
                // Unwinding an abort: note the path, deepest move first.
                self.abort_path.push(c as u8);
                if busy {
                    self.table.leave(key.0, key.1);
                }
                return None;
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
            tried |= 1 << c;
            cut = false;
        }
        if busy {
            self.table.leave(key.0, key.1);
        }
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
        self.table.store_at(&place, lo, hi, mv, empties as u8);
        if self.nodes - first_node >= self.table.lemma_min_nodes()
            && (lo, hi) != (-1, 1)
            && self.table.wants_lemmas()
        {
            self.table.offer_lemma(
                TableEntry {
                    k1: key.0,
                    k2: key.1,
                    lo,
                    hi,
                    mv,
                    empty: empties as u8,
                },
                self.nodes,
            );
        }
        Some(best)
    }
}

/// Solves the empty board of a game into `table`: P1's value and nodes
/// (the tests of the table's users fill a table this way).
#[cfg(test)]
pub(crate) fn solve_empty_board(board: &Board, table: &Table, double: bool) -> (i8, u64) {
    let mut s = Solver::new(board, double, table, None);
    let v = s.search(&Pos::EMPTY, -1, 1).unwrap();
    (v, s.nodes)
}

#[cfg(test)]
pub(crate) mod tests;
