//! The `latin` search loop: reduced Latin squares row by row. A node of the
//! tree is a reduced Latin rectangle (rows `0..r`, row 0 `0 1 ... n-1`,
//! column 0 `0 1 ... r-1`); its children are its extensions by one row
//! starting with symbol `r`, found cell by cell with two bitmasks (the
//! symbols used in the row so far, the symbols used in each column). The
//! rectangles of `n - 1` rows are the leaves: each column misses exactly one
//! symbol and each symbol is missing from exactly one column, so the last
//! row is forced and always completes the square. Nothing allocates in the
//! loop except a listed witness, the transversal list growing to its
//! largest size, and the units handed back when the budget runs out.
//!
//! The tree has no dead ends at the row level (every Latin rectangle
//! completes to a square, and the added rows can be sorted by their first
//! symbol), so Knuth's probes (`orchard estimate`) walk it without wasted
//! walks.

use super::analysis::{diagonal_row_orders, Analyser, Cells};
use super::{LatinSummary, Prefix, Witness, MAX_LISTED, MAX_ORDER};
use orchard_core::{Exploration, ExploreContext, FamilyError, NodeMeter, Probe};

const MAX: usize = MAX_ORDER as usize;

/// How many nodes between two looks at the shared atomics. With mates a
/// leaf costs some 75 nodes' worth (its transversals and their cover), so
/// this is lower than the other families'.
const POLL_INTERVAL: u64 = 1 << 10;

/// What the job asks of each complete square.
#[derive(Debug, Clone, Copy)]
pub struct Config {
    pub n: usize,
    pub mates: bool,
    pub diagonal: bool,
}

/// A reduced Latin rectangle being extended.
#[derive(Clone)]
struct Grid {
    n: usize,
    /// The `n` symbols, as a mask.
    full: u16,
    /// Rows placed (row 0 included).
    rows: usize,
    cells: Cells,
    /// The symbols used in each column by the rows placed.
    col_used: [u16; MAX],
}

impl Grid {
    /// The rectangle whose rows `1..` are `prefix`, checked: each row starts
    /// with its own index, is a permutation, and repeats no symbol of a
    /// column above it; and there are at most `n - 2` of them (a node has
    /// at most `n - 1` rows).
    fn replay(n: usize, prefix: &Prefix) -> Result<Grid, FamilyError> {
        let mut g = Grid {
            n,
            full: (1u16 << n) - 1,
            rows: 1,
            cells: [[0; MAX]; MAX],
            col_used: [0; MAX],
        };
        for c in 0..n {
            g.cells[0][c] = c as u8;
            g.col_used[c] = 1 << c;
        }
        let p = &prefix.0;
        if !p.len().is_multiple_of(n) {
            return Err(FamilyError::BadUnit(format!(
                "{} symbols are not whole rows of {n}",
                p.len()
            )));
        }
        let extra = p.len() / n;
        if extra + 1 > (n - 1).max(1) {
            return Err(FamilyError::BadUnit(format!(
                "{} rows given; a unit of order {n} has at most {}",
                extra + 1,
                (n - 1).max(1)
            )));
        }
        for (k, row) in p.chunks(n).enumerate() {
            let r = k + 1;
            if usize::from(row[0]) != r {
                return Err(FamilyError::BadUnit(format!(
                    "row {r} starts with {}, not {r}",
                    row[0]
                )));
            }
            let mut used = 0u16;
            for (c, &s) in row.iter().enumerate() {
                if usize::from(s) >= n {
                    return Err(FamilyError::BadUnit(format!(
                        "symbol {s} in row {r} of a square of order {n}"
                    )));
                }
                let bit = 1u16 << s;
                if used & bit != 0 || g.col_used[c] & bit != 0 {
                    return Err(FamilyError::BadUnit(format!(
                        "symbol {s} repeated in row {r} or column {c}"
                    )));
                }
                used |= bit;
                g.cells[r][c] = s;
                g.col_used[c] |= bit;
            }
            g.rows += 1;
        }
        Ok(g)
    }

    /// Rows `1..rows`, as a unit.
    fn prefix(&self) -> Prefix {
        let mut p = Vec::with_capacity((self.rows - 1) * self.n);
        for row in &self.cells[1..self.rows] {
            p.extend_from_slice(&row[..self.n]);
        }
        Prefix(p)
    }

    /// A leaf: writes the forced last row (when there is one).
    fn complete(&mut self) {
        let n = self.n;
        if self.rows == n - 1 && n >= 2 {
            let full = self.full;
            for c in 0..n {
                self.cells[n - 1][c] = (full & !self.col_used[c]).trailing_zeros() as u8;
            }
        }
    }

    fn is_leaf(&self) -> bool {
        self.rows >= (self.n - 1).max(1)
    }

    /// Starts the next row with its forced first symbol; returns the row's
    /// used symbols.
    fn open_row(&mut self) -> u16 {
        let r = self.rows;
        self.cells[r][0] = r as u8;
        self.col_used[0] |= 1 << r;
        1 << r
    }

    fn close_row(&mut self) {
        let r = self.rows;
        self.col_used[0] &= !(1 << r);
    }

    /// The symbols that fit in cell `c` of the open row.
    #[inline(always)]
    fn free(&self, c: usize, row_used: u16) -> u16 {
        self.full & !row_used & !self.col_used[c]
    }
}

pub fn explore(
    cfg: Config,
    unit: &Prefix,
    ctx: &ExploreContext<'_>,
) -> Result<Exploration<LatinSummary, Prefix>, FamilyError> {
    let grid = Grid::replay(cfg.n, unit)?;
    let mut s = Search {
        cfg,
        grid,
        meter: NodeMeter::new(ctx, POLL_INTERVAL),
        analyser: Analyser::new(cfg.n),
        mate: [[0; MAX]; MAX],
        summary: LatinSummary::default(),
        rest: Vec::new(),
    };
    s.visit();
    s.summary.nodes = s.meter.finish();
    s.summary.cover_steps = s.analyser.cover_steps;
    Ok(Exploration::new(s.summary, s.rest))
}

/// One random walk from `unit` down to a leaf of the tree [`explore`]
/// visits: at each inner node the number of its child rows, and one of
/// them chosen with `pick`.
pub fn probe(
    n: usize,
    unit: &Prefix,
    pick: &mut dyn FnMut(u64) -> u64,
) -> Result<Probe, FamilyError> {
    let mut g = Grid::replay(n, unit)?;
    let mut branching = Vec::new();
    while !g.is_leaf() {
        let row_used = g.open_row();
        let k = count_rows(&g, 1, row_used);
        let i = pick(k);
        assert!(i < k, "pick({k}) returned {i}");
        let mut skip = i;
        let found = nth_row(&mut g, 1, row_used, &mut skip);
        assert!(found, "the {i}th of {k} rows exists");
        branching.push(k as u32);
        // Commit the row: its symbols into the columns.
        for c in 1..n {
            g.col_used[c] |= 1 << g.cells[g.rows][c];
        }
        g.rows += 1;
    }
    Ok(Probe { branching })
}

/// How many ways the open row can be completed from cell `c` on.
fn count_rows(g: &Grid, c: usize, row_used: u16) -> u64 {
    if c == g.n {
        return 1;
    }
    let mut free = g.free(c, row_used);
    let mut total = 0;
    while free != 0 {
        let bit = free & free.wrapping_neg();
        free ^= bit;
        total += count_rows(g, c + 1, row_used | bit);
    }
    total
}

/// Writes into the open row its completion number `skip` (in search order)
/// from cell `c` on; true once written.
fn nth_row(g: &mut Grid, c: usize, row_used: u16, skip: &mut u64) -> bool {
    if c == g.n {
        if *skip == 0 {
            return true;
        }
        *skip -= 1;
        return false;
    }
    let mut free = g.free(c, row_used);
    while free != 0 {
        let bit = free & free.wrapping_neg();
        free ^= bit;
        g.cells[g.rows][c] = bit.trailing_zeros() as u8;
        if nth_row(g, c + 1, row_used | bit, skip) {
            return true;
        }
    }
    false
}

struct Search<'c, 'a> {
    cfg: Config,
    grid: Grid,
    meter: NodeMeter<'c, 'a>,
    analyser: Analyser,
    mate: Cells,
    summary: LatinSummary,
    rest: Vec<Prefix>,
}

impl Search<'_, '_> {
    /// Visits the rectangle in `grid`. Once stopping, every node reached
    /// but not entered goes to `rest` instead, in search order; together
    /// they cover exactly what was not visited.
    fn visit(&mut self) {
        if !self.meter.enter() {
            self.rest.push(self.grid.prefix());
            return;
        }
        if self.grid.is_leaf() {
            self.grid.complete();
            self.square();
            return;
        }
        let row_used = self.grid.open_row();
        self.fill(1, row_used);
        self.grid.close_row();
    }

    /// Fills cell `c` of the open row with each symbol that fits, lowest
    /// first (squares come in lexicographic order); a full row is a child.
    fn fill(&mut self, c: usize, row_used: u16) {
        if c == self.grid.n {
            self.grid.rows += 1;
            self.visit();
            self.grid.rows -= 1;
            return;
        }
        let mut free = self.grid.free(c, row_used);
        let r = self.grid.rows;
        while free != 0 {
            let bit = free & free.wrapping_neg();
            free ^= bit;
            self.grid.cells[r][c] = bit.trailing_zeros() as u8;
            self.grid.col_used[c] |= bit;
            self.fill(c + 1, row_used | bit);
            self.grid.col_used[c] ^= bit;
        }
    }

    /// A complete reduced square (its last row written by `complete`).
    fn square(&mut self) {
        let n = self.cfg.n;
        let sq = &self.grid.cells;
        // Cannot overflow: bounded by the node budget, itself a u64.
        self.summary.reduced += 1;
        if self.cfg.diagonal {
            self.summary.diagonal += diagonal_row_orders(sq, n);
        }
        if self.cfg.mates {
            let t = self.analyser.transversals(sq) as u32;
            *self.summary.transversals.entry(t).or_insert(0) += 1;
            if self.analyser.find_mate(&mut self.mate) {
                self.summary.with_mate += 1;
                // Found in lexicographic order: the first are the smallest.
                if self.summary.listed.len() < MAX_LISTED {
                    self.summary.listed.push(Witness {
                        square: flatten(sq, n),
                        mate: flatten(&self.mate, n),
                    });
                }
            }
        }
    }
}

fn flatten(sq: &Cells, n: usize) -> Vec<u8> {
    sq[..n]
        .iter()
        .flat_map(|row| row[..n].iter().copied())
        .collect()
}
