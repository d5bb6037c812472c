//! What the search asks of every complete square: its transversals, whether
//! they contain an orthogonal mate, and how many row orders make it a
//! diagonal Latin square.
//!
//! **Mates through transversals.** A Latin square `M` is orthogonal to `L`
//! when the `n^2` pairs `(L[i][j], M[i][j])` are all different. Then the
//! cells where `M` holds one symbol `k` meet every row and every column once
//! (`M` is Latin) and carry `n` different symbols of `L` (the pairs differ):
//! they are a *transversal* of `L`. Conversely `n` disjoint transversals of
//! `L` partition its cells, and writing `k` in the cells of the `k`-th gives
//! a mate. So `L` has a mate iff its cells are an exact cover by `n` of its
//! transversals. Every transversal meets row 0 in exactly one cell, so the
//! transversals fall into `n` groups by that cell, and a cover takes exactly
//! one from each group: the cover search takes the group of cell `(0, 0)`
//! first, then `(0, 1)`, and so on, each disjoint from those taken. Labelling
//! the transversal through `(0, k)` with `k` makes the mate's first row
//! `0 1 ... n-1`, so the mate reported is also normalised.
//!
//! **Diagonal squares.** A Latin square is *diagonal* when both its main
//! diagonal and its anti-diagonal are transversals. The property is not kept
//! by permuting rows, so reduced squares alone do not answer whether
//! diagonal squares exist; squares with the first row `0 1 ... n-1` do
//! (relabelling the symbols of any diagonal square gives one). Each of them
//! is one reduced square with its rows `1..n` put in another order (sort the
//! rows by their first symbol: row 0 stays first, the first column becomes
//! `0 1 ... n-1`), so counting, for every reduced square, the orders of its
//! rows `1..n` that make it diagonal counts each of them exactly once.
//!
//! The transversal search goes row by row, depth first; the last three
//! rows are finished straight-line (the six ways to give the three free
//! columns to them), which saves most of the mispredicted branches of the
//! deepest levels (`bench/latin.sh 7`; docs/notes/chapter-6.md).
//!
//! Everything here works on fixed arrays and a scratch list that keeps its
//! capacity from square to square: nothing allocates per square once the
//! list has grown to the largest number of transversals met.

use crate::MAX_ORDER;

const MAX: usize = MAX_ORDER as usize;

/// A complete square: `cells[i][j]` is the symbol (0-based) in row `i`,
/// column `j`; only the first `n` rows and columns are used.
pub type Cells = [[u8; MAX]; MAX];

/// The scratch space of the leaf analysis, one per exploration.
pub struct Analyser {
    n: usize,
    /// Every transversal as a mask of cells (bit `i * n + j`), grouped by
    /// the column of its row-0 cell, in search order.
    transversals: Vec<u128>,
    /// `group[k]..group[k + 1]`: the transversals through cell `(0, k)`.
    group: [usize; MAX + 1],
    /// The square being analysed (a copy: one argument fewer in the
    /// recursion, which keeps its arguments in registers).
    sq: Cells,
    /// `pos[i][s]`: the column of symbol `s` in row `i` of the square.
    pos: [[u8; MAX]; MAX],
    /// The transversal taken from each group by the cover search.
    chosen: [usize; MAX],
    /// Transversals tried by the cover searches (for the report).
    pub cover_steps: u64,
}

impl Analyser {
    pub fn new(n: usize) -> Analyser {
        assert!((1..=MAX).contains(&n));
        Analyser {
            n,
            transversals: Vec::new(),
            group: [0; MAX + 1],
            sq: [[0; MAX]; MAX],
            pos: [[0; MAX]; MAX],
            chosen: [0; MAX],
            cover_steps: 0,
        }
    }

    /// Finds every transversal of `sq`; returns how many.
    pub fn transversals(&mut self, sq: &Cells) -> usize {
        let n = self.n;
        let all = (1u16 << n) - 1;
        self.sq = *sq;
        for (i, row) in sq[..n].iter().enumerate() {
            for (c, &s) in row[..n].iter().enumerate() {
                self.pos[i][usize::from(s)] = c as u8;
            }
        }
        self.transversals.clear();
        // Row 0 is 0 1 ... n-1 in a reduced square, but the analysis does
        // not rely on it.
        for (c, &s) in sq[0][..n].iter().enumerate() {
            self.group[c] = self.transversals.len();
            if n == 1 {
                self.transversals.push(1);
            } else {
                self.extend(1, all & !(1 << c), all & !(1 << s), 1u128 << c);
            }
        }
        self.group[n] = self.transversals.len();
        self.transversals.len()
    }

    /// Extends a partial transversal of rows `0..row` (`cols`, `syms`: the
    /// columns and symbols still free; `cells`: its cells).
    fn extend(&mut self, row: usize, cols: u16, syms: u16, cells: u128) {
        let n = self.n;
        if row == n - 1 {
            // One column and one symbol left (order 2 only: larger orders
            // finish earlier).
            let c = cols.trailing_zeros() as usize;
            if syms & (1 << self.sq[row][c]) != 0 {
                self.transversals.push(cells | 1u128 << (row * n + c));
            }
            return;
        }
        if row == n - 2 {
            // Two columns a < b and two symbols left: the last two rows
            // take a and b or b and a, with different symbols, both free
            // (order 3 only: larger orders finish below).
            let a = cols.trailing_zeros() as usize;
            let b = (cols & (cols - 1)).trailing_zeros() as usize;
            let (up, down) = (self.sq[row], self.sq[row + 1]);
            let fits = |x: u8, y: u8| x != y && (syms >> x) & (syms >> y) & 1 != 0;
            if fits(up[a], down[b]) {
                self.transversals
                    .push(cells | 1u128 << (row * n + a) | 1u128 << (row * n + n + b));
            }
            if fits(up[b], down[a]) {
                self.transversals
                    .push(cells | 1u128 << (row * n + b) | 1u128 << (row * n + n + a));
            }
            return;
        }
        if row == n - 3 {
            // Three columns and three symbols left: each of the six ways
            // to give the columns to the last three rows, in search order,
            // is a transversal iff its symbols are the three free ones.
            let a = cols.trailing_zeros() as usize;
            let rest = cols & (cols - 1);
            let b = rest.trailing_zeros() as usize;
            let c = (rest & (rest - 1)).trailing_zeros() as usize;
            self.finish3(row, syms, cells, a, b, c);
            self.finish3(row, syms, cells, a, c, b);
            self.finish3(row, syms, cells, b, a, c);
            self.finish3(row, syms, cells, b, c, a);
            self.finish3(row, syms, cells, c, a, b);
            self.finish3(row, syms, cells, c, b, a);
            return;
        }
        // The free columns whose symbol in this row is free too.
        let mut fit = 0u16;
        let mut free = syms;
        while free != 0 {
            fit |= 1 << self.pos[row][free.trailing_zeros() as usize];
            free &= free - 1;
        }
        fit &= cols;
        while fit != 0 {
            let c = fit.trailing_zeros() as usize;
            fit &= fit - 1;
            self.extend(
                row + 1,
                cols & !(1 << c),
                syms & !(1 << self.sq[row][c]),
                cells | 1u128 << (row * n + c),
            );
        }
    }

    /// Rows `row`, `row + 1`, `row + 2` in columns `x`, `y`, `z`: a
    /// transversal iff their symbols are the three free ones.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn finish3(&mut self, row: usize, syms: u16, cells: u128, x: usize, y: usize, z: usize) {
        let sq = &self.sq;
        let got = (1u16 << sq[row][x]) | (1u16 << sq[row + 1][y]) | (1u16 << sq[row + 2][z]);
        if got == syms {
            let n = self.n;
            self.transversals.push(
                cells
                    | 1u128 << (row * n + x)
                    | 1u128 << (row * n + n + y)
                    | 1u128 << (row * n + 2 * n + z),
            );
        }
    }

    /// After [`Analyser::transversals`]: whether `n` of them partition the
    /// cells, and if so one such cover, the transversal through `(0, k)`
    /// at index `k`, written as the mate it makes into `mate`.
    pub fn find_mate(&mut self, mate: &mut Cells) -> bool {
        if (0..self.n).any(|k| self.group[k] == self.group[k + 1]) {
            return false;
        }
        if !self.cover(0, 0) {
            return false;
        }
        let n = self.n;
        for (k, &t) in self.chosen[..n].iter().enumerate() {
            let mut cells = self.transversals[t];
            while cells != 0 {
                let cell = cells.trailing_zeros() as usize;
                cells &= cells - 1;
                mate[cell / n][cell % n] = k as u8;
            }
        }
        true
    }

    /// Takes a transversal through `(0, k)` disjoint from `covered`, then
    /// the rest; true once all `n` are taken.
    fn cover(&mut self, k: usize, covered: u128) -> bool {
        if k == self.n {
            return true;
        }
        for t in self.group[k]..self.group[k + 1] {
            self.cover_steps += 1;
            let cells = self.transversals[t];
            if cells & covered == 0 {
                self.chosen[k] = t;
                if self.cover(k + 1, covered | cells) {
                    return true;
                }
            }
        }
        false
    }
}

/// The orders of rows `1..n` of `sq` (row 0 kept first) that make it a
/// diagonal square: how many diagonal squares with `sq`'s first row are
/// `sq` with its rows reordered.
pub fn diagonal_row_orders(sq: &Cells, n: usize) -> u64 {
    if n == 1 {
        return 1;
    }
    let rows = ((1u16 << n) - 1) & !1;
    place_row(sq, n, 1, rows, 1 << sq[0][0], 1 << sq[0][n - 1])
}

/// Puts each free row at position `pos` whose cells on the two diagonals
/// carry symbols not yet on them.
fn place_row(sq: &Cells, n: usize, pos: usize, rows: u16, main: u16, anti: u16) -> u64 {
    if pos == n {
        return 1;
    }
    let mut count = 0;
    let mut free = rows;
    while free != 0 {
        let r = free.trailing_zeros() as usize;
        free &= free - 1;
        let m = 1u16 << sq[r][pos];
        let a = 1u16 << sq[r][n - 1 - pos];
        if main & m == 0 && anti & a == 0 {
            count += place_row(sq, n, pos + 1, rows & !(1 << r), main | m, anti | a);
        }
    }
    count
}
