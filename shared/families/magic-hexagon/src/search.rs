//! The `magic-hexagon` search loop: place the values `1..=H` in the cells
//! one at a time, in a fixed order chosen so that lines complete early,
//! never entering a value that cannot fit every line through its cell.
//!
//! **The puzzle.** [`Puzzle`] is any set of lines over `H <= 127` cells and
//! one target sum: the rows of a magic hexagon, or the chapter's twelve
//! sides and spokes. The search knows nothing of hexagons beyond the lines,
//! the cell order it is given as a preference and the symmetries as
//! permutations of the cells.
//!
//! **Cell order.** Greedy, once per job: the next cell is the one that
//! completes the most lines (the last empty cell of a line is forced: its
//! value is the line's sum minus the rest), ties broken by the preference
//! order (the outer ring first for rows, the centre first for sides and
//! spokes). For the order-3 hexagon this walks the outer ring (a corner and
//! the cell after it free, the next corner forced), then the inner ring
//! (one cell free, the others forced by the rows of four), then the centre:
//! seven free cells, as the chapter's "the hexagon is completely defined by
//! cells A-G" says.
//!
//! **Propagation.** Each line keeps the sum of its cells placed so far.
//! When a cell is placed, every line through it with `r` empty cells left
//! after it bounds its value: `sum - placed - (largest r values) <= v <=
//! sum - placed - (smallest r values)` (with `r = 0` both bounds are the
//! forced value). The candidates are the unused values in the intersection
//! of those intervals, one `u128` mask, so every node the search enters
//! satisfies every line's bound (a completed line sums exactly to the
//! target) and every leaf at depth `H` is an arrangement.
//!
//! **Units.** A unit is a [`crate::Prefix`]: the values of the first cells
//! of the order. When the budget runs out or a stop is requested the search
//! hands back, in search order, the prefix of every node it reached but did
//! not enter (the node where it stopped and the later siblings of every
//! node on its path), as `queens` does: their subtrees are exactly the part
//! it did not visit. Nothing allocates per node; a solution allocates only
//! when it is listed, a hand-back when it is made.

use orchard_core::{Exploration, ExploreContext, FamilyError, NodeMeter, Probe};

use super::{MagicHexagonSummary, Prefix, MAX_LISTED};

/// Most cells a puzzle may have: values are bits of a `u128` (bit `v` for
/// value `v`, bit 0 unused). The hexagon of order 7 has exactly 127.
pub const MAX_CELLS: usize = 127;

/// Most lines a puzzle may have (order 7 has 39 rows).
const MAX_LINES: usize = 64;

/// Most lines through one cell (the centre is on six spokes).
const MAX_LINES_PER_CELL: usize = 6;

/// How many nodes between two looks at the shared atomics.
const POLL_INTERVAL: u64 = 1 << 14;

/// The lines through the cell placed at one depth, with the bounds on the
/// sum of each line's cells placed after it.
#[derive(Debug, Clone, Copy, Default)]
struct Step {
    count: usize,
    line: [u8; MAX_LINES_PER_CELL],
    /// Smallest sum of the line's cells after this one: `1 + ... + r`.
    min_rest: [i64; MAX_LINES_PER_CELL],
    /// Largest: `H + (H-1) + ... + (H-r+1)`.
    max_rest: [i64; MAX_LINES_PER_CELL],
}

/// One search problem: the values `1..=cells` in `cells` cells, every line
/// summing to `sum`, arrangements compared up to `symmetries`.
#[derive(Debug, Clone)]
pub struct Puzzle {
    n: usize,
    sum: i64,
    lines: Vec<Vec<usize>>,
    /// The cell placed at each depth.
    order: Vec<u8>,
    steps: Vec<Step>,
    /// Permutations of the cells (`perm[i]`: where cell `i` goes), the
    /// identity left out.
    symmetries: Vec<Vec<u8>>,
}

/// Bits `lo..=hi` of a `u128`, for `1 <= lo <= hi <= 127`.
#[inline(always)]
fn range_mask(lo: i64, hi: i64) -> u128 {
    (u128::MAX >> (127 - hi)) & (u128::MAX << lo)
}

/// Which of `cands` (a non-empty mask) is the `i`-th lowest set bit.
fn nth_bit(mut cands: u128, i: u64) -> u128 {
    for _ in 0..i {
        cands &= cands - 1;
    }
    cands & cands.wrapping_neg()
}

/// What the search keeps about the cells placed so far.
#[derive(Clone)]
struct State {
    used: u128,
    line_sum: [i64; MAX_LINES],
    /// The value of each cell, reading order (0: empty).
    values: [u8; MAX_CELLS],
}

impl Puzzle {
    /// A puzzle over `cells` cells: `lines` (each a list of distinct cells),
    /// every one summing to `sum`; `preference` orders the cells for ties of
    /// the greedy order (a permutation of `0..cells`); `symmetries` are
    /// permutations of the cells that map lines onto lines (the identity
    /// may be among them). `Err` says which limit is exceeded.
    pub fn new(
        cells: usize,
        lines: Vec<Vec<usize>>,
        sum: i64,
        preference: &[usize],
        symmetries: Vec<Vec<u8>>,
    ) -> Result<Puzzle, String> {
        if cells == 0 || cells > MAX_CELLS {
            return Err(format!("{cells} cells; the search takes 1 to {MAX_CELLS}"));
        }
        if lines.len() > MAX_LINES {
            return Err(format!(
                "{} lines; the search takes at most {MAX_LINES}",
                lines.len()
            ));
        }
        let mut through = vec![Vec::new(); cells];
        for (l, line) in lines.iter().enumerate() {
            for &c in line {
                assert!(c < cells, "line {l} has cell {c} of {cells}");
                through[c].push(l);
            }
        }
        if let Some(c) = through.iter().position(|t| t.len() > MAX_LINES_PER_CELL) {
            return Err(format!(
                "cell {c} is on {} lines; the search takes at most {MAX_LINES_PER_CELL}",
                through[c].len()
            ));
        }
        let mut sorted = preference.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..cells).collect::<Vec<_>>(), "a permutation");

        // Greedy: complete the most lines; ties to the preference order.
        let mut placed = vec![false; cells];
        let mut order = Vec::with_capacity(cells);
        for _ in 0..cells {
            let mut best: Option<(usize, usize)> = None;
            for &c in preference.iter().filter(|&&c| !placed[c]) {
                let completes = through[c]
                    .iter()
                    .filter(|&&l| lines[l].iter().all(|&o| o == c || placed[o]))
                    .count();
                if best.is_none_or(|(k, _)| completes > k) {
                    best = Some((completes, c));
                }
            }
            let (_, c) = best.expect("a cell left");
            placed[c] = true;
            order.push(c as u8);
        }
        let n = cells as i64;
        let mut position = vec![0; cells];
        for (d, &c) in order.iter().enumerate() {
            position[c as usize] = d;
        }
        let steps = order
            .iter()
            .enumerate()
            .map(|(d, &c)| {
                let mut s = Step::default();
                for &l in &through[c as usize] {
                    let r = lines[l].iter().filter(|&&o| position[o] > d).count() as i64;
                    s.line[s.count] = l as u8;
                    s.min_rest[s.count] = r * (r + 1) / 2;
                    s.max_rest[s.count] = r * n - r * (r - 1) / 2;
                    s.count += 1;
                }
                s
            })
            .collect();
        let symmetries = symmetries
            .into_iter()
            .filter(|p| p.iter().enumerate().any(|(i, &j)| i != j as usize))
            .collect();
        Ok(Puzzle {
            n: cells,
            sum,
            lines,
            order,
            steps,
            symmetries,
        })
    }

    /// Number of cells (and largest value).
    pub fn cells(&self) -> usize {
        self.n
    }

    /// The target sum of every line.
    pub fn sum(&self) -> i64 {
        self.sum
    }

    /// The lines.
    pub fn lines(&self) -> &[Vec<usize>] {
        &self.lines
    }

    /// The cell placed at each depth of the search.
    pub fn order(&self) -> &[u8] {
        &self.order
    }

    /// The values the cell at depth `d` may take (as bits), given `st`.
    #[inline(always)]
    fn candidates(&self, d: usize, st: &State) -> u128 {
        let step = &self.steps[d];
        let mut lo = 1;
        let mut hi = self.n as i64;
        for j in 0..step.count {
            let need = self.sum - st.line_sum[step.line[j] as usize];
            lo = lo.max(need - step.max_rest[j]);
            hi = hi.min(need - step.min_rest[j]);
        }
        if lo > hi {
            return 0;
        }
        range_mask(lo, hi) & !st.used
    }

    #[inline(always)]
    fn place(&self, d: usize, v: u8, st: &mut State) {
        let step = &self.steps[d];
        st.used |= 1u128 << v;
        st.values[self.order[d] as usize] = v;
        for j in 0..step.count {
            st.line_sum[step.line[j] as usize] += i64::from(v);
        }
    }

    #[inline(always)]
    fn unplace(&self, d: usize, v: u8, st: &mut State) {
        let step = &self.steps[d];
        st.used &= !(1u128 << v);
        st.values[self.order[d] as usize] = 0;
        for j in 0..step.count {
            st.line_sum[step.line[j] as usize] -= i64::from(v);
        }
    }

    /// The state after `prefix`, checked: no longer than the order, every
    /// value a candidate where it is placed.
    fn replay(&self, prefix: &[u8]) -> Result<State, FamilyError> {
        if prefix.len() > self.n {
            return Err(FamilyError::BadUnit(format!(
                "prefix of {} values for {} cells",
                prefix.len(),
                self.n
            )));
        }
        let mut st = State {
            used: 0,
            line_sum: [0; MAX_LINES],
            values: [0; MAX_CELLS],
        };
        for (d, &v) in prefix.iter().enumerate() {
            if v == 0 || usize::from(v) > self.n || self.candidates(d, &st) >> v & 1 == 0 {
                return Err(FamilyError::BadUnit(format!(
                    "value {v} at step {} cannot be placed (used, out of range, or no line through cell {} can take it)",
                    d + 1,
                    self.order[d]
                )));
            }
            self.place(d, v, &mut st);
        }
        Ok(st)
    }

    /// Every valid prefix of `depth` values (at most the cell count), in
    /// search order: the root units.
    pub fn prefixes(&self, depth: usize) -> Vec<Prefix> {
        let depth = depth.min(self.n);
        let mut st = self.replay(&[]).expect("the empty prefix");
        let mut path = Vec::with_capacity(depth);
        let mut out = Vec::new();
        self.collect_prefixes(depth, &mut st, &mut path, &mut out);
        out
    }

    fn collect_prefixes(
        &self,
        depth: usize,
        st: &mut State,
        path: &mut Vec<u8>,
        out: &mut Vec<Prefix>,
    ) {
        let d = path.len();
        if d == depth {
            out.push(Prefix(path.clone()));
            return;
        }
        let mut cands = self.candidates(d, st);
        while cands != 0 {
            let bit = cands & cands.wrapping_neg();
            cands ^= bit;
            let v = bit.trailing_zeros() as u8;
            path.push(v);
            self.place(d, v, st);
            self.collect_prefixes(depth, st, path, out);
            self.unplace(d, v, st);
            path.pop();
        }
    }

    /// Explores the subtree below `unit` within `ctx`'s budget.
    pub fn explore(
        &self,
        unit: &Prefix,
        ctx: &ExploreContext<'_>,
    ) -> Result<Exploration<MagicHexagonSummary, Prefix>, FamilyError> {
        let st = self.replay(&unit.0)?;
        let mut path = Vec::with_capacity(self.n);
        path.extend_from_slice(&unit.0);
        let mut s = Search {
            puzzle: self,
            st,
            path,
            meter: NodeMeter::new(ctx, POLL_INTERVAL),
            summary: MagicHexagonSummary::default(),
            rest: Vec::new(),
        };
        s.visit();
        s.summary.nodes = s.meter.finish();
        s.summary.listed.sort_unstable();
        s.summary.listed.truncate(MAX_LISTED);
        Ok(Exploration::new(s.summary, s.rest))
    }

    /// One random walk from `unit` down to a leaf of the tree
    /// [`Puzzle::explore`] visits: at each node the number of candidates,
    /// one of them chosen with `pick`. A full arrangement and a node with
    /// no candidate are the leaves, as in the search.
    pub fn probe(
        &self,
        unit: &Prefix,
        pick: &mut dyn FnMut(u64) -> u64,
    ) -> Result<Probe, FamilyError> {
        let mut st = self.replay(&unit.0)?;
        let mut branching = Vec::new();
        for d in unit.0.len()..self.n {
            let cands = self.candidates(d, &st);
            let k = cands.count_ones();
            if k == 0 {
                break;
            }
            branching.push(k);
            let i = pick(u64::from(k));
            assert!(i < u64::from(k), "pick({k}) returned {i}");
            let v = nth_bit(cands, i).trailing_zeros() as u8;
            self.place(d, v, &mut st);
        }
        Ok(Probe { branching })
    }

    /// Whether `values` (an arrangement, reading order) is the
    /// lexicographically smallest of its images under the symmetries. The
    /// image under `perm` puts `values[i]` in cell `perm[i]`; an image of an
    /// arrangement is an arrangement (the symmetries map lines onto lines),
    /// so every orbit has exactly one smallest member.
    pub fn is_canonical(&self, values: &[u8]) -> bool {
        let n = self.n;
        assert_eq!(values.len(), n);
        let mut image = [0u8; MAX_CELLS];
        for perm in &self.symmetries {
            for (i, &v) in values.iter().enumerate() {
                image[perm[i] as usize] = v;
            }
            if image[..n] < *values {
                return false;
            }
        }
        true
    }
}

struct Search<'p, 'c, 'a> {
    puzzle: &'p Puzzle,
    st: State,
    /// The values placed so far, in search order.
    path: Vec<u8>,
    meter: NodeMeter<'c, 'a>,
    summary: MagicHexagonSummary,
    rest: Vec<Prefix>,
}

impl Search<'_, '_, '_> {
    /// Visits the node for the current `path`. Once stopping, every node
    /// not entered goes to `rest` instead, in search order; together they
    /// cover exactly what was not visited.
    fn visit(&mut self) {
        if !self.meter.enter() {
            self.rest.push(Prefix(self.path.clone()));
            return;
        }
        let d = self.path.len();
        if d == self.puzzle.n {
            self.solution();
            return;
        }
        let mut cands = self.puzzle.candidates(d, &self.st);
        while cands != 0 {
            let bit = cands & cands.wrapping_neg();
            cands ^= bit;
            let v = bit.trailing_zeros() as u8;
            self.path.push(v);
            if self.meter.stopping() {
                self.rest.push(Prefix(self.path.clone()));
            } else {
                self.puzzle.place(d, v, &mut self.st);
                self.visit();
                self.puzzle.unplace(d, v, &mut self.st);
            }
            self.path.pop();
        }
    }

    #[cold]
    fn solution(&mut self) {
        // Cannot overflow: bounded by the node budget, itself a u64.
        self.summary.solutions += 1;
        let values = &self.st.values[..self.puzzle.n];
        if self.puzzle.is_canonical(values) {
            self.summary.distinct += 1;
            let listed = &mut self.summary.listed;
            listed.push(values.to_vec());
            // Keep the smallest, whatever order they are found in.
            if listed.len() >= 2 * MAX_LISTED {
                listed.sort_unstable();
                listed.truncate(MAX_LISTED);
            }
        }
    }
}
