//! The `queens` search loop: row-by-row backtracking with three bitmasks,
//! the columns and the two diagonals attacked by the queens placed so far,
//! as seen from the next row. Moving down a row shifts one diagonal mask
//! left and the other right; the free squares of a row are the bits set in
//! none of the three. Nothing allocates in the loop except when a distinct
//! solution is listed, or when the budget runs out and the rest is handed
//! back.

use super::{listing, Prefix, QueensSummary, MAX_N};
use orchard_core::merge::Openings;
use orchard_core::{Exploration, ExploreContext, FamilyError, NodeMeter, Probe};

/// How many nodes between two looks at the shared atomics.
const POLL_INTERVAL: u64 = 1 << 14;

/// Subtrees with at most this many rows left are counted whole by
/// [`Search::count_below`], without the budget checks and the hand-back
/// bookkeeping of [`Search::visit`] (which make the loop 1.4 times slower
/// than a plain counter: docs/notes/chapter-6.md), provided the budget left
/// covers the largest such subtree could be ([`KERNEL_MAX_NODES`]): so the
/// budget is never overshot, and a stop request waits for at most that
/// many nodes.
const KERNEL_ROWS: usize = 10;

/// The most nodes below a node with [`KERNEL_ROWS`] rows left: every
/// sequence of 1 to 10 distinct columns, sum of 10!/(10-k)! for k = 1..10.
const KERNEL_MAX_NODES: u64 = 9_864_100;

/// The squares attacked in the next row, and the queens placed so far.
#[derive(Clone, Copy)]
struct Board {
    /// One bit per column of the board.
    all: u64,
    columns: u64,
    /// Attacked along a diagonal going down to the left (shifted left).
    left: u64,
    /// Attacked along a diagonal going down to the right (shifted right).
    right: u64,
}

impl Board {
    fn new(n: u32) -> Board {
        Board {
            all: (1u64 << n) - 1,
            columns: 0,
            left: 0,
            right: 0,
        }
    }

    /// The free squares of the next row, one bit per column.
    #[inline(always)]
    fn free(&self) -> u64 {
        self.all & !(self.columns | self.left | self.right)
    }

    /// The board one row down, with a queen on `bit` of the current row.
    #[inline(always)]
    fn place(&self, bit: u64) -> Board {
        Board {
            all: self.all,
            columns: self.columns | bit,
            left: (self.left | bit) << 1,
            right: (self.right | bit) >> 1,
        }
    }

    /// The board below `prefix`, checked: every queen on the board and
    /// attacked by none above it.
    fn replay(n: u32, prefix: &Prefix) -> Result<Board, FamilyError> {
        if prefix.0.len() > n as usize {
            return Err(FamilyError::BadUnit(format!(
                "prefix of {} rows on a board of {n}",
                prefix.0.len()
            )));
        }
        let mut board = Board::new(n);
        for (row, &col) in prefix.0.iter().enumerate() {
            if u32::from(col) >= n {
                return Err(FamilyError::BadUnit(format!(
                    "queen in row {} at column {}, off a board of {n}",
                    row + 1,
                    u32::from(col) + 1
                )));
            }
            let bit = 1u64 << col;
            if board.free() & bit == 0 {
                return Err(FamilyError::BadUnit(format!(
                    "queen in row {} at column {} is attacked",
                    row + 1,
                    u32::from(col) + 1
                )));
            }
            board = board.place(bit);
        }
        Ok(board)
    }
}

pub fn explore(
    n: u32,
    unit: &Prefix,
    ctx: &ExploreContext<'_>,
) -> Result<Exploration<QueensSummary, Prefix>, FamilyError> {
    let board = Board::replay(n, unit)?;
    let mut path = Vec::with_capacity(n as usize);
    path.extend_from_slice(&unit.0);
    let mut s = Search {
        n: n as usize,
        path,
        meter: NodeMeter::new(ctx, POLL_INTERVAL),
        summary: QueensSummary::default(),
        listing: listing(n),
        rest: Vec::new(),
    };
    s.visit(board);
    s.summary.nodes = s.meter.finish();
    Ok(Exploration::new(s.summary, s.rest))
}

/// One random walk from `unit` down to a leaf of the tree [`explore`]
/// visits: at each node, the number of free squares of the next row, and
/// one of them chosen with `pick`. A full board and a row with no free
/// square are the leaves, as in the search.
pub fn probe(
    n: u32,
    unit: &Prefix,
    pick: &mut dyn FnMut(u64) -> u64,
) -> Result<Probe, FamilyError> {
    let mut board = Board::replay(n, unit)?;
    let mut branching = Vec::new();
    for _row in unit.0.len()..n as usize {
        let mut free = board.free();
        let k = free.count_ones();
        if k == 0 {
            break;
        }
        branching.push(k);
        let i = pick(u64::from(k));
        assert!(i < u64::from(k), "pick({k}) returned {i}");
        for _ in 0..i {
            free &= free - 1;
        }
        board = board.place(free & free.wrapping_neg());
    }
    Ok(Probe { branching })
}

struct Search<'c, 'a> {
    n: usize,
    /// The columns of the queens placed so far, one per row.
    path: Vec<u8>,
    meter: NodeMeter<'c, 'a>,
    summary: QueensSummary,
    /// Which distinct solutions the summary lists.
    listing: Openings,
    rest: Vec<Prefix>,
}

impl Search<'_, '_> {
    /// Visits the node for the current `path`, whose next row is `board`.
    /// Once stopping, every node not entered goes to `rest` instead, in
    /// search order; together they cover exactly what was not visited.
    fn visit(&mut self, board: Board) {
        if !self.meter.enter() {
            self.rest.push(Prefix(self.path.clone()));
            return;
        }
        if self.path.len() == self.n {
            self.solution();
            return;
        }
        if self.n - self.path.len() <= KERNEL_ROWS && self.meter.remaining() >= KERNEL_MAX_NODES {
            self.count_below(board);
            return;
        }
        // Lowest column first: solutions come in lexicographic order.
        let mut free = board.free();
        while free != 0 {
            let bit = free & free.wrapping_neg();
            free ^= bit;
            self.path.push(bit.trailing_zeros() as u8);
            if self.meter.stopping() {
                self.rest.push(Prefix(self.path.clone()));
            } else {
                self.visit(board.place(bit));
            }
            self.path.pop();
        }
    }

    /// Counts the subtree below the current `path` (its next row is
    /// `board`) in one plain loop: an explicit stack of the free squares of
    /// each row, the queen placed on each row kept as a bit. The same nodes
    /// in the same order as [`Search::visit`] would visit them.
    fn count_below(&mut self, board: Board) {
        // Row `base + i` is entry `i`; at most KERNEL_ROWS rows are left.
        let base = self.path.len();
        let last = self.n - 1 - base;
        let mut boards = [board; KERNEL_ROWS];
        let mut free = [0u64; KERNEL_ROWS];
        let mut placed = [0u64; KERNEL_ROWS];
        let mut nodes = 0u64;
        let mut d = 0;
        free[0] = board.free();
        loop {
            let f = free[d];
            if f == 0 {
                if d == 0 {
                    break;
                }
                d -= 1;
                continue;
            }
            let bit = f & f.wrapping_neg();
            free[d] = f ^ bit;
            placed[d] = bit;
            nodes += 1;
            if d == last {
                let columns = placed[..=d].iter().map(|b| b.trailing_zeros() as u8);
                self.path.extend(columns);
                self.solution();
                self.path.truncate(base);
                continue;
            }
            let next = boards[d].place(bit);
            d += 1;
            boards[d] = next;
            free[d] = next.free();
        }
        self.meter.count(nodes);
    }

    #[cold]
    fn solution(&mut self) {
        // Cannot overflow: bounded by twice the node budget, itself a u64
        // (and checked where summaries are merged).
        self.summary.met += 1;
        self.summary.solutions += mirror_weight(&self.path);
        if is_canonical(&self.path) {
            self.summary.distinct += 1;
            self.listing.note(&mut self.summary.listed, &self.path);
        }
    }
}

/// How many solutions solution `p` stands for when only the root units'
/// half of the tree is searched: itself and its mirror image (2) when its
/// first queen is in the left half, or in the middle column with the second
/// queen in the left half; 0 when it is in the other half (its mirror image
/// is the one counted); 1 on the 1 x 1 board, its own mirror image.
pub fn mirror_weight(p: &[u8]) -> u64 {
    let n = p.len();
    if n <= 1 {
        return 1;
    }
    let m = (n - 1) as u8;
    let side = |c: u8| (2 * c).cmp(&m);
    match side(p[0]).then(side(p[1])) {
        std::cmp::Ordering::Less => 2,
        std::cmp::Ordering::Greater => 0,
        // Middle column twice: two attacking queens, never a solution.
        std::cmp::Ordering::Equal => unreachable!("two queens in the middle column"),
    }
}

/// Whether solution `p` (`p[row]` = column, a permutation of `0..n`) is the
/// lexicographically smallest of its images under the eight symmetries of
/// the square. The symmetry taking the queen at `(r, c)` to `(r2, c2)` maps
/// the solution to the one with `image[r2] = c2`; written row by row, each
/// image is `p` or its inverse permutation read through the mirror `m - x`
/// (table below). The images are compared row by row as they are read,
/// and the first row nearly always decides: this is called on every
/// solution met (one node in sixty on a 16 x 16 board).
pub fn is_canonical(p: &[u8]) -> bool {
    let n = p.len();
    assert!(n <= MAX_N as usize);
    let Some(m) = (n as u8).checked_sub(1) else {
        return true;
    };
    let mut inv = [0u8; MAX_N as usize];
    for (r, &c) in p.iter().enumerate() {
        inv[c as usize] = r as u8;
    }
    let inv = &inv[..n];
    let at = |k: usize| m as usize - k;
    // image[k] for symmetry s, (r, c) -> (r2, c2):
    let image = |s: u8, k: usize| -> u8 {
        match s {
            1 => m - p[k],       // (r, m - c): mirror left-right
            2 => p[at(k)],       // (m - r, c): mirror top-bottom
            3 => m - p[at(k)],   // (m - r, m - c): half turn
            4 => inv[k],         // (c, r): main diagonal
            5 => m - inv[at(k)], // (m - c, m - r): other diagonal
            6 => m - inv[k],     // (c, m - r): quarter turn
            _ => inv[at(k)],     // (m - c, r): three quarter turns
        }
    };
    for s in 1..8 {
        for (k, &c) in p.iter().enumerate() {
            let v = image(s, k);
            if v < c {
                return false;
            }
            if v > c {
                break;
            }
        }
    }
    true
}
