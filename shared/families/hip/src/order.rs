//! The static move order of `hip-solve` (after the table's move): play
//! where it does not create new dead cells for yourself, does not obstruct
//! the opponent's partial squares (their dead cells are your private
//! reserve), and does not spend your reserve. Franke found the second factor
//! the most important. The search ([`crate::search`]) and the unit tree use
//! it.

use super::board::Board;
use super::search::Pos;
use super::square_set::SquareSet;

/// How many of one player's stones each tracked square holds (0 to 3: a
/// fourth would complete it), bit-sliced over the square sets of
/// [`Board::squares_through`]: bit `i` of `low` and `high` are the two
/// bits of `squares[i]`'s count. A stone adds one to every square through
/// its cell in a few word operations, and the move order then scores a cell
/// by a handful of popcounts instead of walking its squares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SquareCounts {
    low: SquareSet,
    high: SquareSet,
}

impl SquareCounts {
    pub const ZERO: SquareCounts = SquareCounts {
        low: SquareSet::EMPTY,
        high: SquareSet::EMPTY,
    };

    /// One more stone in each of `squares` (none of which holds three).
    #[inline(always)]
    pub fn add(&mut self, squares: SquareSet) {
        self.high ^= self.low & squares;
        self.low ^= squares;
    }

    /// The squares holding none of the player's stones, one, two.
    #[inline(always)]
    pub fn none(&self) -> SquareSet {
        !(self.low | self.high)
    }

    #[inline(always)]
    pub fn one(&self) -> SquareSet {
        self.low & !self.high
    }

    #[inline(always)]
    pub fn two(&self) -> SquareSet {
        self.high & !self.low
    }

    /// The count of square `i`.
    pub fn count(&self, i: usize) -> u32 {
        u32::from(self.low.contains(i)) | u32::from(self.high.contains(i)) << 1
    }
}

/// Move-ordering penalties of standard Hip: a new dead cell of mine,
/// obstructing one or two opponent stones, spending my reserve, extending a
/// partial square of mine, starting a new one. First tuned on the nodes of
/// 4x4 to 4x6 (6,2,3,3,0,2: nodes a half to a tenth of no ordering's), then,
/// once the last moves were searched plainly, by coordinate descent on the
/// CPU time of the whole games of 4x7 and 5x5 and positions of 6x6 and of
/// the 4x9 long run, in steps of half the old unit (docs/notes/hip-solver.md, "The
/// standard move order tuned on time"): against the rest, a new dead cell
/// of one's own costs much less (7 against 12 half-units), obstructing two
/// stones and spending the reserve a little less, and extending a partial
/// square of one's own a little.
pub const WEIGHTS: [i32; 6] = [7, 4, 4, 5, 1, 4];

/// The same penalties for Double Hip, tuned on its own games by coordinate
/// descent from the standard weights of then (6,2,3,3,0,2) on the CPU time
/// (not the nodes: an order that saves plain last moves can cost
/// full-search nodes, which cost several times as much) of the whole games
/// of Double 4x7, 5x5 and 3x8 and six positions of the Double 4x9 long run
/// (docs/notes/hip-solver.md, "A move order of Double Hip's own"): spending the
/// reserve costs more, obstructing two opponent stones less, extending a
/// partial square of one's own a little.
pub const DOUBLE_WEIGHTS: [i32; 6] = [6, 2, 2, 8, 1, 2];

/// The same penalties for standard Hip on a board three cells wide (the
/// last long run of table B is 3x11), tuned by the same descent from
/// [`WEIGHTS`] on eight positions of 3x11 ten and twelve stones deep
/// (docs/notes/hip-solver.md, "A move order for three rows"): spending the reserve
/// costs far more (13 half-units, not 5). On such a board most squares are
/// 2x2 blocks and a player's reserve is the few cells the opponent's
/// partial squares leave him. 0.75-0.79 of the time on thirteen other
/// 3x11 positions, 0.82 on the whole 3x9 game, 1.3 on 3x8's (a second).
pub const THREE_ROW_WEIGHTS: [i32; 6] = [9, 4, 5, 13, 1, 4];

/// The weights the solver uses for the rules (Double Hip or not) on a board
/// of `rows` x `cols`.
pub const fn tuned_weights(rows: usize, cols: usize, double: bool) -> [i32; 6] {
    if double {
        DOUBLE_WEIGHTS
    } else if rows == 3 || cols == 3 {
        THREE_ROW_WEIGHTS
    } else {
        WEIGHTS
    }
}

/// A static move order: the penalties of [`WEIGHTS`] (or of other weights,
/// for tuning them: see the `hip_one_core` example), laid out for the inner
/// loop of [`MoveOrder::moves`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MoveOrder {
    /// `penalty[dead][mine][opp]`: what each empty cell of a square with
    /// `mine` of my stones and `opp` of the opponent's costs. `dead`: one of
    /// its empty cells is dead for me. Of a square of mine with two empty
    /// cells, playing one makes the other dead for me, unless it is dead
    /// already; and when one of the two is dead, the other is the only one
    /// that could be scored and gets nothing (the dead one is never a
    /// candidate), so the penalty is all or nothing on `dead`.
    penalty: [[[i32; 4]; 4]; 2],
    /// What playing into my reserve (a cell dead for the opponent) costs.
    reserve: i32,
    /// The same penalties as `penalty`, by the kind of square the fast
    /// scoring counts ([`SquareCounts`]): a square of mine with two stones
    /// and its other empty cell not dead for me, one of mine (and none of
    /// the opponent's), one of the opponent's, two of them, an empty one.
    weight: [i32; 5],
}

impl MoveOrder {
    /// The order the solver uses under the rules (Double Hip or not) on
    /// `board` ([`tuned_weights`]).
    pub const fn tuned(board: &Board, double: bool) -> MoveOrder {
        MoveOrder::new(tuned_weights(board.rows, board.cols, double))
    }

    /// The order of six weights, in the order of [`WEIGHTS`].
    pub const fn new(w: [i32; 6]) -> MoveOrder {
        let mut t = [[[0; 4]; 4]; 2];
        let mut dead = 0;
        while dead < 2 {
            t[dead][0][0] = w[5];
            t[dead][1][0] = w[4];
            t[dead][0][1] = w[1];
            t[dead][0][2] = w[2];
            dead += 1;
        }
        t[0][2][0] = w[0];
        MoveOrder {
            penalty: t,
            reserve: w[3],
            weight: [w[0], w[4], w[1], w[2], w[5]],
        }
    }
}

/// The moves of a position, best first.
pub struct Moves {
    pub cells: [u8; 64],
    pub len: usize,
}

/// How many keys [`MovePicker::pick_next`] compares at once: the board's
/// cells are scanned in blocks of this many (four SSE registers of `u32`).
const PICK_LANES: usize = 16;

/// Added to a score (at most 0 with the solver's weights, and far above
/// minus this with any weights a board's squares can sum) so that the
/// packed key is positive.
const SCORE_BIAS: i32 = 1 << 20;

/// The moves of a position, picked best first as the search asks for them.
///
/// A search node that cuts off asks for one move, and most expanded nodes
/// do (on 4x7, 14.8 of 25.7 million cut off by their first move); sorting
/// all the moves there was wasted, and the insertion sort's unpredictable
/// loop exits cost more than its instructions. Each cell's score is packed
/// with the cell into one key, larger for the better move and, at equal
/// scores, for the lower cell (the order of a stable sort of the cells by
/// score), and stored at the cell's index: the best move is the largest
/// key, found by a branch-free scan of the board's cells, and each further
/// move another scan (a sort of the rest once a second move is asked for
/// cost more: its mispredicted branches are what the picker avoids). The
/// search keeps one picker per number of stones, so that a node neither
/// builds nor copies one.
pub struct MovePicker {
    /// `keys[c]`: cell `c`'s packed key while it is a candidate.
    keys: [u32; 64],
    /// The keys scanned: the board's cells rounded up to [`PICK_LANES`].
    span: usize,
    /// The moves picked so far, best first.
    order: [u8; 64],
    picked: usize,
    /// How many moves in all.
    pub len: usize,
}

impl MovePicker {
    /// A picker with no moves yet, for [`MoveOrder::score`].
    #[inline(always)]
    pub fn new(board: &Board) -> MovePicker {
        MovePicker {
            keys: [0; 64],
            span: board.n.div_ceil(PICK_LANES) * PICK_LANES,
            order: [0; 64],
            picked: 0,
            len: 0,
        }
    }

    /// Adds `cell` with score `score`.
    #[inline(always)]
    fn add(&mut self, cell: usize, score: i32) {
        let biased = score + SCORE_BIAS;
        debug_assert!((1..1 << 25).contains(&biased), "score {score}");
        self.keys[cell] = (biased as u32) << 6 | (63 - cell as u32);
        self.len += 1;
    }

    /// Empties the picker for the next position's moves.
    #[inline(always)]
    pub fn reset(&mut self) {
        // By blocks, so that the stores are inline (a fill of `span` keys
        // is a call to memset).
        for block in self.keys[..self.span].chunks_exact_mut(PICK_LANES) {
            block.copy_from_slice(&[0; PICK_LANES]);
        }
        self.picked = 0;
        self.len = 0;
    }

    /// Picks the best move not picked yet (there must be one): the largest
    /// key, by a branch-free scan of the board's cells.
    #[inline(always)]
    fn pick_next(&mut self) {
        let mut lanes = [0u32; PICK_LANES];
        for block in self.keys[..self.span].chunks_exact(PICK_LANES) {
            for (lane, &k) in lanes.iter_mut().zip(block) {
                *lane = (*lane).max(k);
            }
        }
        let best = lanes.iter().fold(0, |a, &k| a.max(k));
        let cell = 63 - (best & 63) as usize;
        self.keys[cell] = 0;
        self.order[self.picked] = cell as u8;
        self.picked += 1;
    }

    /// The `j`-th best move (from 0), if there are more than `j`.
    #[inline(always)]
    pub fn get(&mut self, j: usize) -> Option<u8> {
        if j >= self.len {
            return None;
        }
        while j >= self.picked {
            self.pick_next();
        }
        Some(self.order[j])
    }

    /// The best `n` moves (all of them if there are fewer), best first.
    #[inline(always)]
    pub fn first(&mut self, n: usize) -> &[u8] {
        let n = n.min(self.len);
        if n > 0 {
            self.get(n - 1);
        }
        &self.order[..n]
    }
}

/// The safe moves of the player to move in the solver's order under the
/// rules (see [`crate::search::Solver::moves`]), for the unit tree.
#[inline]
pub fn ordered_moves(board: &Board, pos: &Pos, p1: bool, double: bool, exclude: u64) -> Moves {
    MoveOrder::tuned(board, double).moves(board, pos, p1, exclude)
}

impl MoveOrder {
    /// See [`crate::search::Solver::moves`]: all of them, sorted.
    pub fn moves(&self, board: &Board, pos: &Pos, p1: bool, exclude: u64) -> Moves {
        let mut picker = MovePicker::new(board);
        self.score(board, pos, p1, exclude, &mut picker);
        let mut out = Moves {
            cells: [0; 64],
            len: picker.len,
        };
        out.cells[..picker.len].copy_from_slice(picker.first(picker.len));
        out
    }

    /// Scores the moves of [`Self::moves`] into `out`, a new or
    /// [`MovePicker::reset`] picker, which gives them in the same order, a
    /// move at a time.
    #[inline(always)]
    pub fn score(&self, board: &Board, pos: &Pos, p1: bool, exclude: u64, out: &mut MovePicker) {
        let (mine, opp, dmine, dopp) = if p1 {
            (pos.p1, pos.p2, pos.d1, pos.d2)
        } else {
            (pos.p2, pos.p1, pos.d2, pos.d1)
        };
        let empty = board.full & !(mine | opp);
        let safe = empty & !dmine & !exclude;
        if safe == 0 {
            return;
        }
        if board.tracks_every_square() {
            self.score_by_counts(board, pos, p1, safe, dopp, out);
            return;
        }
        // Each candidate sums, over the squares through it (the masks of their
        // other three cells), a penalty indexed by the square's category: how
        // many of my stones, how many of the opponent's, whether its other empty
        // cell is dead for me. Branch-free, and the sum stays in a register.
        let mut m = safe;
        while m != 0 {
            let c = m.trailing_zeros() as usize;
            m &= m - 1;
            let mut sc = if dopp >> c & 1 == 1 { -self.reserve } else { 0 };
            for &o in board.others(c) {
                let dead = usize::from(o & empty & dmine != 0);
                let (a, b) = ((o & mine).count_ones(), (o & opp).count_ones());
                sc -= self.penalty[dead][a as usize][b as usize];
            }
            out.add(c, sc);
        }
    }

    /// [`Self::moves`] on a board whose squares are all tracked: each
    /// candidate's score from the kinds of square through it, as sets
    /// ([`SquareCounts`]), by popcounts. The same scores as the walk over
    /// the squares, so the same order.
    #[inline(always)]
    fn score_by_counts(
        &self,
        board: &Board,
        pos: &Pos,
        p1: bool,
        safe: u64,
        dopp: u64,
        out: &mut MovePicker,
    ) {
        let (mine, opp, shut_mine) = if p1 {
            (&pos.in_squares1, &pos.in_squares2, pos.shut1)
        } else {
            (&pos.in_squares2, &pos.in_squares1, pos.shut2)
        };
        let (mine0, opp0) = (mine.none(), opp.none());
        let kinds = [
            mine.two() & opp0 & !shut_mine,
            mine.one() & opp0,
            mine0 & opp.one(),
            mine0 & opp.two(),
            mine0 & opp0,
        ];
        let mut m = safe;
        while m != 0 {
            let c = m.trailing_zeros() as usize;
            m &= m - 1;
            let through = board.squares_through[c];
            let mut sc = if dopp >> c & 1 == 1 { -self.reserve } else { 0 };
            for (&kind, &w) in kinds.iter().zip(&self.weight) {
                sc -= w * (through & kind).count() as i32;
            }
            out.add(c, sc);
        }
    }
}
