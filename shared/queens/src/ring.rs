//! The `ring` method: every symmetry of the square used, and the most
//! constrained line filled first.
//!
//! **The ring.** Every solution has exactly one queen in each of the four
//! border lines (row 0, row `n - 1`, column 0, column `n - 1`); a queen in a
//! corner stands on two of them, and at most one corner holds a queen (any
//! two corners share a line or a diagonal). The ring of a solution is those
//! three or four queens, written [`Ring`] `[a, b, c, d]`: the column of the
//! queen in row 0, the column of the one in the last row, the row of the one
//! in column 0, the row of the one in the last column. The eight symmetries
//! of the square map border to border, so they act on rings; a root unit is
//! a ring that is the smallest of its images (compared as `[a, b, c, d]`),
//! about one ring in eight. This is the pre-placement of the Q27 project
//! (which places two rings; one is enough here).
//!
//! **Counting.** A symmetry `g` maps the solutions with ring `ρ` one to one
//! onto those with ring `g ρ`, so the solutions with a ring in the orbit of
//! `ρ` number `|orbit(ρ)| = 8 / |stab(ρ)|` times the completions of `ρ`.
//! The orbits of solutions (the distinct ones) whose ring lies in that orbit
//! are the orbits of `stab(ρ)` on the completions of `ρ`: with a trivial
//! stabiliser (nearly every ring) each completion is one distinct solution;
//! otherwise a completion counts if it is the smallest of its images under
//! `stab(ρ)` (themselves completions of `ρ`). Each unit's figures are exact
//! on their own; merging is a sum.
//!
//! **Units.** A unit is a set of queens: the ring, then inner queens as
//! `(row, column)` pairs ([`Prefix`] `[a, b, c, d, r1, c1, r2, c2, ...]`).
//! Its subtree is every completion of that set, whatever order the search
//! fills it in. Above the rings, a group `[a, b]` (the root units) has the
//! groups `[a, b, c]` as children, and those have the root rings beginning
//! with `a, b, c`: each a node of the tree, so that splitting a group
//! leaves the node count unchanged. The search fills the line (an inner row or column still
//! empty) with the fewest free squares, row before column and lowest index
//! on ties; the children of a node are that line's free squares, which
//! partition the node's completions (each has exactly one queen on the
//! line). When the budget runs out, the search hands back each child not
//! entered as a unit of its own, so the units handed back cover exactly what
//! was not visited, whatever rule chose the lines: the choice decides only
//! the shape and size of the tree, never what it covers. With the most
//! constrained line first (`Board::choose`) the search visits 0.074 of the
//! `mirror` search's nodes on 17 x 17 and 0.067 on 18 x 18 (`bench/queens.sh
//! 18 2`), and n = 21 took 8.46e11 nodes where `mirror`'s estimate is
//! 1.61e13 (0.053); the runs and their commands are in
//! docs/notes/chapter-6.md.

use std::sync::atomic::Ordering;

use super::{listing, Prefix, QueensSummary, MAX_N};
use orchard_core::merge::Openings;
use orchard_core::{Exploration, ExploreContext, FamilyError, Probe};

/// How many nodes between two looks at the shared atomics.
const POLL_INTERVAL: u64 = 1 << 14;

/// Most lines a board has: rows and columns below [`MAX_N`].
const MAX: usize = MAX_N as usize;

/// The queens of the border lines: `[a, b, c, d]` = the column of the queen
/// in row 0, of the queen in row `n - 1`, the row of the queen in column 0,
/// of the queen in column `n - 1`.
pub type Ring = [u8; 4];

/// The eight symmetries of the square, as maps of squares: symmetry `g`
/// takes `(r, c)` to `image(g, r, c, m)` on a board whose last index is `m`.
/// 0 is the identity; the table is that of [`crate::is_canonical`].
#[inline]
pub fn image(g: u8, r: u8, c: u8, m: u8) -> (u8, u8) {
    match g {
        0 => (r, c),
        1 => (r, m - c),
        2 => (m - r, c),
        3 => (m - r, m - c),
        4 => (c, r),
        5 => (m - c, m - r),
        6 => (c, m - r),
        _ => (m - c, r),
    }
}

/// The squares of ring `t`, one per border line (a corner queen twice), or
/// `None` when `t` does not describe one queen per border line.
fn ring_squares(t: Ring, n: u8) -> Option<[(u8, u8); 4]> {
    let m = n.checked_sub(1)?;
    let [a, b, c, d] = t;
    if a > m || b > m || c > m || d > m {
        return None;
    }
    // A corner queen is named by both of its lines, or by neither.
    if (a == 0) != (c == 0) || (a == m) != (d == 0) || (b == 0) != (c == m) || (b == m) != (d == m)
    {
        return None;
    }
    Some([(0, a), (m, b), (c, 0), (d, m)])
}

fn attack(p: (u8, u8), q: (u8, u8)) -> bool {
    p.0 == q.0 || p.1 == q.1 || p.0.abs_diff(q.0) == p.1.abs_diff(q.1)
}

/// The ring of a set of squares holding one queen per border line.
fn ring_of(squares: &[(u8, u8)], m: u8) -> Ring {
    let mut t = [0; 4];
    for &(r, c) in squares {
        if r == 0 {
            t[0] = c;
        }
        if r == m {
            t[1] = c;
        }
        if c == 0 {
            t[2] = r;
        }
        if c == m {
            t[3] = r;
        }
    }
    t
}

/// A ring checked: one queen per border line, none attacking another.
struct CheckedRing {
    /// One per border line: a corner queen is there twice.
    squares: [(u8, u8); 4],
    /// The symmetries (bit `g`) that map the ring onto itself.
    stabiliser: u8,
    /// Whether the ring is the smallest of its images.
    canonical: bool,
}

fn check_ring(t: Ring, n: u8) -> Option<CheckedRing> {
    let squares = ring_squares(t, n)?;
    for (i, &p) in squares.iter().enumerate() {
        if squares[i + 1..].iter().any(|&q| q != p && attack(p, q)) {
            return None;
        }
    }
    let m = n - 1;
    let mut stabiliser = 0u8;
    let mut canonical = true;
    for g in 0..8 {
        let u = ring_of(&squares.map(|(r, c)| image(g, r, c, m)), m);
        if u < t {
            canonical = false;
        }
        if u == t {
            stabiliser |= 1 << g;
        }
    }
    Some(CheckedRing {
        squares,
        stabiliser,
        canonical,
    })
}

/// The root units of the `ring` method: `[a, b]` for every pair of border
/// queens (row 0, last row) that begins a ring in [`root_rings`], in
/// increasing order. A unit per ring would be thousands of units of
/// milliseconds on boards that take seconds. A board without a ring (2 x 2,
/// 3 x 3: no solution) has the one group `[0, 0]`, which holds no ring: a
/// job needs a unit to finish (the coordinator finishes a job when its
/// last unit is done).
pub fn root_units(n: u32) -> Vec<Vec<u8>> {
    let mut units: Vec<Vec<u8>> = root_rings(n).iter().map(|t| t[..2].to_vec()).collect();
    units.dedup();
    if units.is_empty() {
        units.push(vec![0, 0]);
    }
    units
}

/// Every ring that is the smallest of its images, in increasing order.
/// Empty for n = 2 and 3 (no solutions).
pub fn root_rings(n: u32) -> Vec<Ring> {
    let n = n as u8;
    let mut rings = Vec::new();
    for a in 0..n {
        for b in 0..n {
            for c in 0..n {
                for d in 0..n {
                    let t = [a, b, c, d];
                    if check_ring(t, n).is_some_and(|r| r.canonical) {
                        rings.push(t);
                    }
                }
            }
        }
    }
    rings
}

/// What is still free below a set of queens. Diagonals are kept as
/// occupied bits: `up` indexes `r + c`, `down` indexes `c - r + m`, and
/// `down_t` the same diagonals as `r - c + m`, so that a row's free
/// columns and a column's free rows are each three shifts away.
#[derive(Clone, Copy, Default)]
struct Board {
    /// Inner rows still without a queen.
    rows: u64,
    /// Inner columns still without a queen.
    cols: u64,
    up: u64,
    down: u64,
    down_t: u64,
}

/// A line to fill: an inner row or column, and its free squares (columns of
/// the row, or rows of the column).
#[derive(Clone, Copy, Default)]
struct Line {
    is_row: bool,
    index: u8,
    free: u64,
}

impl Line {
    /// The square of this line at position `x` (a column or a row).
    #[inline(always)]
    fn square(&self, x: u8) -> (u8, u8) {
        if self.is_row {
            (self.index, x)
        } else {
            (x, self.index)
        }
    }
}

impl Board {
    #[inline(always)]
    fn row_free(&self, r: u32, m: u32) -> u64 {
        self.cols & !(self.up >> r) & !(self.down >> (m - r))
    }

    #[inline(always)]
    fn col_free(&self, c: u32, m: u32) -> u64 {
        self.rows & !(self.up >> c) & !(self.down_t >> (m - c))
    }

    /// Marks a queen on `(r, c)`, which must be free.
    #[inline(always)]
    fn place(&self, r: u8, c: u8, m: u8) -> Board {
        let (r, c, m) = (u32::from(r), u32::from(c), u32::from(m));
        Board {
            rows: self.rows & !(1 << r),
            cols: self.cols & !(1 << c),
            up: self.up | 1 << (r + c),
            down: self.down | 1 << (c + m - r),
            down_t: self.down_t | 1 << (r + m - c),
        }
    }

    /// Whether `(r, c)` is attacked along a diagonal.
    fn diagonal_taken(&self, r: u8, c: u8, m: u8) -> bool {
        let (r, c, m) = (u32::from(r), u32::from(c), u32::from(m));
        self.up >> (r + c) & 1 == 1 || self.down >> (c + m - r) & 1 == 1
    }

    /// The empty line with the fewest free squares, a row before a column
    /// and the lowest index on ties; the columns are not looked at when a
    /// row has no free square (the node is dead). `None` when every line is
    /// filled. The loops take a minimum of keys, over every row: stopping
    /// at the first line with one free square would miss the emptier (dead)
    /// lines behind it, and on `queens --n 17` visits 1.19 times the nodes
    /// in 1.13 times the CPU (docs/notes/chapter-6.md).
    #[inline(always)]
    fn choose(&self, m: u32) -> Option<Line> {
        if self.rows == 0 {
            return None;
        }
        // Each line's key: its free squares' count, then rows before
        // columns, then the index; the least key is the line chosen.
        let mut best = u32::MAX;
        let mut rows = self.rows;
        while rows != 0 {
            let r = rows.trailing_zeros();
            rows &= rows - 1;
            let key = self.row_free(r, m).count_ones() << 7 | r;
            best = best.min(key);
        }
        if best >> 7 != 0 {
            let mut cols = self.cols;
            while cols != 0 {
                let c = cols.trailing_zeros();
                cols &= cols - 1;
                let key = self.col_free(c, m).count_ones() << 7 | 64 | c;
                best = best.min(key);
            }
        }
        let index = best & 63;
        Some(if best & 64 == 0 {
            Line {
                is_row: true,
                index: index as u8,
                free: self.row_free(index, m),
            }
        } else {
            Line {
                is_row: false,
                index: index as u8,
                free: self.col_free(index, m),
            }
        })
    }
}

/// A unit replayed: its ring checked, its queens placed.
struct Start {
    board: Board,
    /// `solution[r]` = the column of row `r`'s queen, for the unit's queens.
    solution: [u8; MAX],
    /// The symmetries of the ring (bit `g`).
    stabiliser: u8,
}

fn bad(why: String) -> FamilyError {
    FamilyError::BadUnit(why)
}

fn replay(n: u32, unit: &Prefix) -> Result<Start, FamilyError> {
    let p = &unit.0;
    if p.len() < 4 || !p.len().is_multiple_of(2) {
        return Err(bad(format!(
            "a ring unit is a ring of 4 entries and (row, column) pairs, got {} entries",
            p.len()
        )));
    }
    let n8 = n as u8;
    let m = n8 - 1;
    let ring: Ring = [p[0], p[1], p[2], p[3]];
    let checked = check_ring(ring, n8).ok_or_else(|| {
        bad(format!(
            "{ring:?} is not one queen per border line without attacks on a board of {n}"
        ))
    })?;
    if !checked.canonical {
        return Err(bad(format!(
            "ring {ring:?} is not the smallest of its images"
        )));
    }
    // Rows and columns 1 ..= m - 1 (none on boards below 3 x 3).
    let inner = ((1u64 << m) - 1) & !1;
    let mut board = Board {
        rows: inner,
        cols: inner,
        ..Board::default()
    };
    let mut solution = [0u8; MAX];
    for (r, c) in checked.squares {
        // A corner queen twice: placing is idempotent.
        board = board.place(r, c, m);
        solution[r as usize] = c;
    }
    for pair in p[4..].chunks(2) {
        let (r, c) = (pair[0], pair[1]);
        if r > m || c > m {
            return Err(bad(format!("queen ({r}, {c}) off a board of {n}")));
        }
        if board.rows >> r & 1 == 0 || board.cols >> c & 1 == 0 {
            return Err(bad(format!(
                "queen ({r}, {c}): its row or column is a border line or holds a queen"
            )));
        }
        if board.diagonal_taken(r, c, m) {
            return Err(bad(format!("queen ({r}, {c}) is attacked on a diagonal")));
        }
        board = board.place(r, c, m);
        solution[r as usize] = c;
    }
    Ok(Start {
        board,
        solution,
        stabiliser: checked.stabiliser,
    })
}

pub fn explore(
    n: u32,
    unit: &Prefix,
    ctx: &ExploreContext<'_>,
) -> Result<Exploration<QueensSummary, Prefix>, FamilyError> {
    let mut s = Search {
        n: n as usize,
        m: n - 1,
        base: Vec::new(),
        stabiliser: 1,
        weight: 8,
        solution: [0; MAX],
        nodes: 0,
        budget: ctx.budget.max(1),
        next_poll: 0,
        stopping: false,
        ctx,
        summary: QueensSummary::default(),
        listing: listing(n),
        rest: Vec::new(),
    };
    s.poll();
    if unit.0.len() < 4 {
        let by_c = rings_of_group(n, &unit.0)?;
        s.nodes += 1; // the group's own node
        match *unit.0 {
            [a, b] => s.pair(a, b, &by_c),
            _ => s.rings(by_c.first().map_or(&[][..], |r| r), &[]),
        }
    } else {
        let start = replay(n, unit)?;
        s.nodes += 1; // the unit's own node
        s.ring(unit.0.clone(), start);
    }
    s.summary.nodes = s.nodes;
    ctx.progress.store(s.nodes, Ordering::Relaxed);
    Ok(Exploration::new(s.summary, s.rest))
}

/// The rings of a group unit, `[a, b]` or `[a, b, c]`: the rings of
/// [`root_rings`] that begin with it, in increasing order, by `c` (only the
/// `c` with rings).
fn rings_of_group(n: u32, group: &[u8]) -> Result<Vec<Vec<Ring>>, FamilyError> {
    if group.len() < 2 || group.iter().any(|&x| u32::from(x) >= n) {
        return Err(bad(format!(
            "a ring group is 2 or 3 entries below {n}, got {group:?}"
        )));
    }
    let n8 = n as u8;
    let (a, b) = (group[0], group[1]);
    let cs = match group.get(2) {
        Some(&c) => c..=c,
        None => 0..=n8 - 1,
    };
    let mut by_c = Vec::new();
    for c in cs {
        let rings: Vec<Ring> = (0..n8)
            .map(|d| [a, b, c, d])
            .filter(|&t| check_ring(t, n8).is_some_and(|r| r.canonical))
            .collect();
        if !rings.is_empty() {
            by_c.push(rings);
        }
    }
    Ok(by_c)
}

/// One random walk from `unit` down to a leaf of the tree [`explore`]
/// visits: at each node the number of free squares of the line the search
/// would fill, and one of them chosen with `pick`.
pub fn probe(
    n: u32,
    unit: &Prefix,
    pick: &mut dyn FnMut(u64) -> u64,
) -> Result<Probe, FamilyError> {
    let mut branching = Vec::new();
    let mut choose = |k: usize| {
        branching.push(k as u32);
        let i = pick(k as u64);
        assert!(i < k as u64, "pick({k}) returned {i}");
        i as usize
    };
    let start = if unit.0.len() < 4 {
        let by_c = rings_of_group(n, &unit.0)?;
        let rings = match (unit.0.len(), by_c.len()) {
            (_, 0) => return Ok(Probe { branching }),
            (2, k) => &by_c[choose(k)],
            _ => &by_c[0],
        };
        replay(n, &Prefix(rings[choose(rings.len())].to_vec()))?
    } else {
        replay(n, unit)?
    };
    let m = n - 1;
    let mut board = start.board;
    while let Some(line) = board.choose(m) {
        let k = line.free.count_ones();
        if k == 0 {
            break;
        }
        branching.push(k);
        let i = pick(u64::from(k));
        assert!(i < u64::from(k), "pick({k}) returned {i}");
        let mut free = line.free;
        for _ in 0..i {
            free &= free - 1;
        }
        let (r, c) = line.square(free.trailing_zeros() as u8);
        board = board.place(r, c, m as u8);
    }
    Ok(Probe { branching })
}

struct Search<'c, 'a> {
    n: usize,
    m: u32,
    /// The queens the current ring's search started from (its units'
    /// prefix when handed back): the ring, and a unit's inner queens.
    base: Vec<u8>,
    stabiliser: u8,
    /// Solutions each completion stands for: the size of its ring's orbit.
    weight: u64,
    /// `solution[r]`: the column of row `r`'s queen on the current path.
    solution: [u8; MAX],
    nodes: u64,
    budget: u64,
    next_poll: u64,
    stopping: bool,
    ctx: &'c ExploreContext<'a>,
    summary: QueensSummary,
    listing: Openings,
    rest: Vec<Prefix>,
}

impl Search<'_, '_> {
    fn poll(&mut self) {
        self.next_poll = self.nodes + POLL_INTERVAL;
        self.ctx.progress.store(self.nodes, Ordering::Relaxed);
        if self.ctx.stop_requested() {
            self.stopping = true;
        }
    }

    /// Searches an `[a, b]` group: its children are the `[a, b, c]` groups
    /// (`by_c`), each counted as a node.
    fn pair(&mut self, a: u8, b: u8, by_c: &[Vec<Ring>]) {
        for (i, rings) in by_c.iter().enumerate() {
            if self.stopping || self.nodes >= self.budget {
                self.stopping = true;
                let groups = by_c[i..].iter().map(|r| Prefix(vec![a, b, r[0][2]]));
                self.rest.extend(groups);
                return;
            }
            self.nodes += 1;
            self.rings(rings, &by_c[i + 1..]);
            if self.stopping {
                return;
            }
        }
    }

    /// Searches the rings of an `[a, b, c]` group in turn, each counted as
    /// a node. When the budget runs out it hands back the rest of the ring
    /// it is in, the rings not started one by one, and the `later` groups
    /// of an `[a, b]` unit.
    fn rings(&mut self, rings: &[Ring], later: &[Vec<Ring>]) {
        let n = self.n as u32;
        for (i, &t) in rings.iter().enumerate() {
            if !self.stopping && self.nodes < self.budget {
                self.nodes += 1;
                if self.nodes >= self.next_poll {
                    self.poll();
                }
                let start = replay(n, &Prefix(t.to_vec())).expect("a ring of root_rings");
                self.ring(t.to_vec(), start);
                if !self.stopping {
                    continue;
                }
                // The ring's own rest is handed back already.
                self.hand_back_rings(&rings[i + 1..], later);
            } else {
                self.stopping = true;
                self.hand_back_rings(&rings[i..], later);
            }
            return;
        }
    }

    #[cold]
    fn hand_back_rings(&mut self, rings: &[Ring], later: &[Vec<Ring>]) {
        self.rest.extend(rings.iter().map(|t| Prefix(t.to_vec())));
        let groups = later.iter().map(|r| Prefix(r[0][..3].to_vec()));
        self.rest.extend(groups);
    }

    /// Searches below one ring (and a unit's inner queens), already
    /// counted as a node.
    fn ring(&mut self, base: Vec<u8>, start: Start) {
        self.base = base;
        self.stabiliser = start.stabiliser;
        self.weight = 8 / u64::from(start.stabiliser.count_ones());
        self.solution = start.solution;
        self.run(start.board);
    }

    /// Visits the ring's subtree depth first with an explicit stack: entry
    /// `d` holds the board before the queen of depth `d`, the line being
    /// filled there (its `free` = the squares not yet entered) and the
    /// square entered last.
    fn run(&mut self, root: Board) {
        let m = self.m;
        let m8 = m as u8;
        let Some(first) = root.choose(m) else {
            self.completion();
            return;
        };
        let mut boards = [Board::default(); MAX];
        let mut lines = [Line::default(); MAX];
        let mut placed = [(0u8, 0u8); MAX];
        boards[0] = root;
        lines[0] = first;
        let mut d = 0usize;
        // The node count lives in a register; the budget, a stop request
        // and the next poll are looked at when it reaches `limit`.
        let mut nodes = self.nodes;
        let mut limit = self.budget.min(self.next_poll);
        loop {
            let free = lines[d].free;
            if free == 0 {
                if d == 0 {
                    break;
                }
                d -= 1;
                continue;
            }
            if nodes >= limit || self.stopping {
                self.nodes = nodes;
                if nodes >= self.budget {
                    self.stopping = true;
                } else if nodes >= self.next_poll {
                    self.poll();
                }
                if self.stopping {
                    self.hand_back(&lines[..=d], &placed[..d]);
                    return;
                }
                limit = self.budget.min(self.next_poll);
            }
            let bit = free & free.wrapping_neg();
            lines[d].free = free ^ bit;
            nodes += 1;
            let (r, c) = lines[d].square(bit.trailing_zeros() as u8);
            placed[d] = (r, c);
            self.solution[r as usize] = c;
            let next = boards[d].place(r, c, m8);
            match next.choose(m) {
                None => self.completion(),
                Some(line) if line.free == 0 => {}
                Some(line) => {
                    d += 1;
                    boards[d] = next;
                    lines[d] = line;
                }
            }
        }
        self.nodes = nodes;
    }

    /// Hands back every square not entered, deepest first (the order the
    /// search would have met them): the unit's queens, the queens of the
    /// path above that depth, and the square.
    #[cold]
    fn hand_back(&mut self, lines: &[Line], placed: &[(u8, u8)]) {
        for d in (0..lines.len()).rev() {
            let mut free = lines[d].free;
            while free != 0 {
                let bit = free & free.wrapping_neg();
                free ^= bit;
                let (r, c) = lines[d].square(bit.trailing_zeros() as u8);
                let mut p = self.base.clone();
                for &(pr, pc) in &placed[..d] {
                    p.extend([pr, pc]);
                }
                p.extend([r, c]);
                self.rest.push(Prefix(p));
            }
        }
    }

    /// A completion of the unit's ring: `self.solution` is a solution.
    #[cold]
    fn completion(&mut self) {
        let images = Images::of(&self.solution[..self.n]);
        // Cannot overflow: at most 8 times the node budget, a u64, and
        // checked where summaries are merged.
        self.summary.met += 1;
        self.summary.solutions += self.weight;
        if self.stabiliser != 1 && images.least(self.stabiliser) != 0 {
            return; // a smaller completion stands for this orbit
        }
        self.summary.distinct += 1;
        // The listing names each orbit by its smallest member, as the
        // `mirror` method does.
        let mut least = [0u8; MAX];
        let g = images.least(0xff);
        for (k, entry) in least[..self.n].iter_mut().enumerate() {
            *entry = images.entry(g, k);
        }
        self.listing
            .note(&mut self.summary.listed, &least[..self.n]);
    }
}

/// The eight images of a solution (`p[row]` = column), read entry by entry
/// without writing them out: image `g` of [`image`] has `entry(g, k)` in
/// row `k`.
struct Images<'p> {
    p: &'p [u8],
    inverse: [u8; MAX],
    m: usize,
}

impl<'p> Images<'p> {
    fn of(p: &'p [u8]) -> Images<'p> {
        let mut inverse = [0u8; MAX];
        for (r, &c) in p.iter().enumerate() {
            inverse[c as usize] = r as u8;
        }
        Images {
            p,
            inverse,
            m: p.len() - 1,
        }
    }

    #[inline]
    fn entry(&self, g: u8, k: usize) -> u8 {
        let (p, inv, m) = (self.p, &self.inverse, self.m);
        let mu = m as u8;
        match g {
            0 => p[k],
            1 => mu - p[k],
            2 => p[m - k],
            3 => mu - p[m - k],
            4 => inv[k],
            5 => mu - inv[m - k],
            6 => mu - inv[k],
            _ => inv[m - k],
        }
    }

    /// The symmetry of `group` (bit `g`; the identity among them) whose
    /// image is the smallest, the lowest `g` on ties. Images are compared
    /// row by row and the first row nearly always decides.
    fn least(&self, group: u8) -> u8 {
        let mut best = 0;
        for g in 1..8 {
            if group >> g & 1 == 0 {
                continue;
            }
            for k in 0..=self.m {
                let (x, y) = (self.entry(g, k), self.entry(best, k));
                if x != y {
                    if x < y {
                        best = g;
                    }
                    break;
                }
            }
        }
        best
    }
}

/// A unit as the dashboard and the results name it, 1-based: the ring as
/// `ring a b c d`, then `r:c` for each inner queen.
pub fn label(p: &[u8]) -> String {
    let mut words: Vec<String> = Vec::with_capacity(1 + p.len() / 2);
    let ring: Vec<String> = p.iter().take(4).map(|x| (x + 1).to_string()).collect();
    words.push(format!("ring {}", ring.join(" ")));
    for pair in p.get(4..).unwrap_or_default().chunks(2) {
        if let [r, c] = pair {
            words.push(format!("{}:{}", r + 1, c + 1));
        }
    }
    words.join(" ")
}
