//! `hip-draws`' `sandwich` method: the draws of an `R x C` board counted as
//! its inner rows' colourings, each with the number of ways to add the two
//! outer rows.
//!
//! Why: with three colours the frontier DP of [`crate::profile`] holds every
//! partial square's status, and on 6x6, whose tilted squares reach across
//! the board, its widest layer would be some 1e11 states. The outer rows of
//! a board are different: a square has at most two cells in one row, so once
//! the inner rows `1..R-1` are coloured, what a square asks of the top row
//! is a forbidden colour for one cell or a forbidden colour pair for two,
//! and only a handful of squares (the *coupling* squares) touch both the top
//! and the bottom row. So:
//!
//! 1. Walk the colourings of the inner rows (row-major) that have no
//!    monochromatic square among themselves: restricted-growth colours (one
//!    walk per orbit under colour permutations), and only the colouring that
//!    is smallest among its images under the board symmetries that keep the
//!    outer rows outer (the half turn and the two mirrors).
//! 2. At each such leaf, list the top rows allowed by the squares between
//!    the top row and the inner rows, by their stone counts and by which
//!    live coupling squares they make one colour on top; the same for the
//!    bottom row.
//! 3. Join the two lists: a top row and a bottom row go together unless some
//!    coupling square is then one colour. A subset-sum transform over the
//!    coupling bits makes the join a product of table entries.
//!
//! 6x6 with three colours has 24 inner cells: some 3e9 canonical leaves,
//! each a few microseconds, instead of terabytes of DP layers. What one leaf
//! does with one outer row is [`outer_row`]'s: the tally of the row's
//! colourings, remembered across leaves that ask the same of it. The walk
//! keeps no other state between leaves; a unit's tables (the memos, mostly)
//! take some 18 MiB whatever the board, allocated once per unit.

use super::board::Board;
use super::dfs::{falling, pick_prefix, playable_target, MAX_COLORS};
use orchard_core::{ExploreContext, FamilyError, NodeMeter, Probe};
use outer_row::OuterRow;

mod outer_row;

/// Widest outer row: row sets are `u16` masks indexing tables of
/// `2^cols` entries.
pub const MAX_COLS: usize = 10;
/// Most colourings of one outer row a leaf may list (`k^cols`): a bound on
/// a leaf's time.
const MAX_ROW_COLOURINGS: u64 = 1 << 16;
/// Most coupling bits (coupling squares times their possible colours).
const MAX_COUPLING_BITS: usize = 12;
/// Most stone-count codes of one row, `(cols + 1)^(k - 1)`.
const MAX_CODES: usize = 4096;
/// A radix code of counts that exceed the row (see [`Sandwich::compact`]).
const NO_COMPACT: u16 = u16::MAX;
/// No stone-count code (see [`Scratch::want`]).
const NO_CODE: usize = usize::MAX;
/// How many walk nodes between two looks at the shared atomics.
const POLL_INTERVAL: u64 = 1 << 12;

/// A square with cells in one outer row and the inner rows only.
#[derive(Debug, Clone, Copy)]
struct OuterSquare {
    /// Its cells in the outer row, as a row mask (bit `j` is column `j`).
    row: u16,
    /// Its inner cells (board mask; never empty).
    inner: u64,
}

/// A square with cells in both outer rows.
#[derive(Debug, Clone, Copy)]
struct Coupling {
    top: u16,
    bottom: u16,
    /// Its inner cells (board mask; empty for the squares on the outer rows
    /// only, which may then be one colour in any colour).
    inner: u64,
}

/// The layout of the count for one board and colour count.
pub struct Sandwich {
    k: usize,
    cols: usize,
    /// The inner cells in walk order (row-major).
    order: Vec<usize>,
    /// `checks[check_start[t]..check_start[t + 1]]`: the inner squares whose
    /// last cell in walk order is step `t`.
    check_start: Vec<usize>,
    checks: Vec<u64>,
    top: Vec<OuterSquare>,
    bottom: Vec<OuterSquare>,
    coupling: Vec<Coupling>,
    /// For each symmetry that keeps the outer rows (not the identity):
    /// `images[i][t]` is the walk step whose colour the image puts at step `t`.
    images: Vec<Vec<u8>>,
    /// Stones per colour in a playable board.
    target: [u32; MAX_COLORS],
    /// Stone-count codes of one row, numbered densely: `compact[r]` is the
    /// code of the counts whose radix code `r = sum_c n_c (cols + 1)^c` over
    /// the first `k - 1` colours (`NO_COMPACT` where they exceed the row),
    /// and `digits[code]` are the counts of every colour. Dense codes keep
    /// the histograms (and the playable join over them) about half as wide.
    codes: usize,
    compact: Vec<u16>,
    digits: Vec<[u8; MAX_COLORS]>,
    /// Memo slots per outer row (see [`Sandwich::fit_memory`]).
    memo_slots: usize,
}

/// What one unit's walk found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SandwichOut {
    /// Walk nodes (inner cells coloured, leaves included).
    pub nodes: u64,
    pub draws: u128,
    pub playable: u128,
    /// Unexplored prefixes (the budget ran out or a stop was asked for).
    pub rest: Vec<Vec<u8>>,
    /// Bytes of the scratch tables.
    pub scratch_bytes: u64,
}

/// Why a board cannot be counted this way.
pub fn unsupported(board: &Board, k: usize) -> Option<String> {
    if board.rows < 3 {
        return Some(format!(
            "a {}x{} board has no inner rows",
            board.rows, board.cols
        ));
    }
    if board.cols > MAX_COLS {
        return Some(format!("rows of {} cells (at most {MAX_COLS})", board.cols));
    }
    if (k as u64)
        .checked_pow(board.cols as u32)
        .unwrap_or(u64::MAX)
        > MAX_ROW_COLOURINGS
    {
        return Some(format!(
            "{k}^{} colourings of an outer row (at most {MAX_ROW_COLOURINGS})",
            board.cols
        ));
    }
    if (board.cols + 1).pow(k as u32 - 1) > MAX_CODES {
        return Some(format!("too many stone counts of a row with {k} colours"));
    }
    let couplings = coupling_squares(board);
    if couplings.len() * k > 64 {
        return Some(format!(
            "{} coupling squares between the outer rows with {k} colours (at most 64 pairs)",
            couplings.len()
        ));
    }
    let bits = couplings
        .iter()
        .map(|c| if c.inner == 0 { k } else { 1 })
        .sum::<usize>();
    if bits > MAX_COUPLING_BITS {
        return Some(format!(
            "{bits} coupling bits between the outer rows (at most {MAX_COUPLING_BITS})"
        ));
    }
    None
}

fn row_mask(board: &Board, row: usize) -> u64 {
    ((1u64 << board.cols) - 1) << (row * board.cols)
}

/// The cells of `sq` in board row `row`, as a row mask.
fn in_row(board: &Board, sq: u64, row: usize) -> u16 {
    ((sq & row_mask(board, row)) >> (row * board.cols)) as u16
}

fn coupling_squares(board: &Board) -> Vec<Coupling> {
    let last = board.rows - 1;
    let outer = row_mask(board, 0) | row_mask(board, last);
    board
        .squares
        .iter()
        .filter(|&&sq| sq & row_mask(board, 0) != 0 && sq & row_mask(board, last) != 0)
        .map(|&sq| Coupling {
            top: in_row(board, sq, 0),
            bottom: in_row(board, sq, last),
            inner: sq & !outer,
        })
        .collect()
}

impl Sandwich {
    /// The layout, or `None` where [`unsupported`] says why not.
    pub fn new(board: &Board, k: usize) -> Option<Sandwich> {
        if unsupported(board, k).is_some() {
            return None;
        }
        let (rows, cols) = (board.rows, board.cols);
        let last = rows - 1;
        let order: Vec<usize> = (cols..last * cols).collect();
        let mut step_of = [usize::MAX; 64];
        for (t, &cell) in order.iter().enumerate() {
            step_of[cell] = t;
        }
        let inner_mask = order.iter().fold(0u64, |m, &c| m | 1 << c);
        let mut by_step: Vec<Vec<u64>> = vec![Vec::new(); order.len()];
        let (mut top, mut bottom) = (Vec::new(), Vec::new());
        for &sq in &board.squares {
            let (t, b) = (in_row(board, sq, 0), in_row(board, sq, last));
            match (t != 0, b != 0) {
                (false, false) => {
                    let mut m = sq;
                    let mut at = 0;
                    while m != 0 {
                        at = at.max(step_of[m.trailing_zeros() as usize]);
                        m &= m - 1;
                    }
                    by_step[at].push(sq);
                }
                (true, false) => top.push(OuterSquare {
                    row: t,
                    inner: sq & inner_mask,
                }),
                (false, true) => bottom.push(OuterSquare {
                    row: b,
                    inner: sq & inner_mask,
                }),
                (true, true) => {}
            }
        }
        let mut check_start = Vec::with_capacity(order.len() + 1);
        let mut checks = Vec::new();
        for list in by_step {
            check_start.push(checks.len());
            checks.extend(list);
        }
        check_start.push(checks.len());
        let outer = row_mask(board, 0) | row_mask(board, last);
        let images = (1..board.symmetries())
            .filter(|&g| board.transform(g, outer) == outer)
            .map(|g| {
                let inv = board.inverse[g];
                order
                    .iter()
                    .map(|&cell| step_of[board.perms[inv][cell] as usize] as u8)
                    .collect()
            })
            .collect();
        let radix = cols + 1;
        let mut compact = Vec::new();
        let mut digits = Vec::new();
        for code in 0..radix.pow(k as u32 - 1) {
            let mut d = [0u8; MAX_COLORS];
            let mut rest = code;
            let mut sum = 0;
            for slot in d.iter_mut().take(k - 1) {
                *slot = (rest % radix) as u8;
                sum += rest % radix;
                rest /= radix;
            }
            if sum > cols {
                compact.push(NO_COMPACT);
            } else {
                d[k - 1] = (cols - sum) as u8;
                compact.push(digits.len() as u16);
                digits.push(d);
            }
        }
        let codes = digits.len();
        let coupling = coupling_squares(board);
        Some(Sandwich {
            k,
            cols,
            order,
            check_start,
            checks,
            top,
            bottom,
            coupling,
            images,
            target: playable_target(board.n, k),
            codes,
            compact,
            digits,
            memo_slots: outer_row::MEMO_SLOTS,
        })
    }

    /// Bytes of one unit's scratch tables (what a worker holds per unit).
    pub fn scratch_bytes(&self) -> u64 {
        2 * OuterRow::bytes(self)
    }

    /// Shrinks the outer rows' memos (halving their slots, down to one)
    /// until a unit's tables fit `limit` bytes: a unit under a tight
    /// `--memory-limit` remembers less and runs slower, but counts the same.
    /// `false` if even one slot does not fit.
    pub fn fit_memory(&mut self, limit: u64) -> bool {
        while self.scratch_bytes() > limit && self.memo_slots > 1 {
            self.memo_slots /= 2;
        }
        self.scratch_bytes() <= limit
    }

    /// Whether colouring step `t` with `x` keeps every inner square
    /// completed there non-monochromatic, given the colour boards `bb`.
    #[inline(always)]
    fn fits(&self, t: usize, x_board: u64) -> bool {
        let with = x_board | 1u64 << self.order[t];
        self.checks[self.check_start[t]..self.check_start[t + 1]]
            .iter()
            .all(|&sq| sq & with != sq)
    }

    /// The colour boards of a prefix, checked: restricted growth, every
    /// digit a colour, no monochromatic inner square.
    fn replay(&self, prefix: &[u8]) -> Result<([u64; MAX_COLORS], usize), FamilyError> {
        if prefix.len() > self.order.len() {
            return Err(FamilyError::BadUnit(format!(
                "prefix of {} cells, the inner rows have {}",
                prefix.len(),
                self.order.len()
            )));
        }
        let mut bb = [0u64; MAX_COLORS];
        let mut used = 0;
        for (t, &x) in prefix.iter().enumerate() {
            let x = x as usize;
            if x >= self.k || x > used || !self.fits(t, bb[x]) {
                return Err(FamilyError::BadUnit(format!(
                    "prefix {prefix:?} is not a restricted-growth colouring without monochromatic squares"
                )));
            }
            used = used.max(x + 1);
            bb[x] |= 1u64 << self.order[t];
        }
        Ok((bb, used))
    }

    /// Counts the draws (and the playable draws) below every prefix, each
    /// standing for its orbit under colour permutations and the symmetries
    /// that keep the outer rows outer.
    pub fn count(
        &self,
        prefixes: &[Vec<u8>],
        ctx: &ExploreContext<'_>,
    ) -> Result<SandwichOut, FamilyError> {
        let mut w = Walk {
            s: self,
            bb: [0; MAX_COLORS],
            path: Vec::with_capacity(self.order.len()),
            meter: NodeMeter::new(ctx, POLL_INTERVAL),
            leaf: Scratch::new(self),
            out: SandwichOut::default(),
        };
        w.out.scratch_bytes = self.scratch_bytes();
        for prefix in prefixes {
            let (bb, used) = self.replay(prefix)?;
            w.bb = bb;
            w.path.clear();
            w.path.extend_from_slice(prefix);
            w.visit(used);
        }
        w.out.nodes = w.meter.finish();
        Ok(w.out)
    }
}

impl Sandwich {
    /// One random descent of the inner walk below `prefixes` for Knuth's
    /// estimate (every inner colouring the walk visits is a node, canonical
    /// or not; a unit of several prefixes is a root with one child each).
    pub fn probe(
        &self,
        prefixes: &[Vec<u8>],
        pick: &mut dyn FnMut(u64) -> u64,
    ) -> Result<Probe, FamilyError> {
        let mut branching = Vec::new();
        let Some(prefix) = pick_prefix(prefixes, &mut branching, pick) else {
            return Ok(Probe { branching });
        };
        let (mut bb, mut used) = self.replay(prefix)?;
        for t in prefix.len()..self.order.len() {
            let mut fits = [0usize; MAX_COLORS];
            let mut n = 0;
            for (x, &b) in bb.iter().enumerate().take((used + 1).min(self.k)) {
                if self.fits(t, b) {
                    fits[n] = x;
                    n += 1;
                }
            }
            if n == 0 {
                break;
            }
            branching.push(n as u32);
            let x = fits[pick(n as u64) as usize];
            bb[x] |= 1u64 << self.order[t];
            used = used.max(x + 1);
        }
        Ok(Probe { branching })
    }
}

/// Per-leaf tables, allocated once per unit.
struct Scratch {
    /// The live coupling bits `j * k + c` of this leaf (coupling `j` can be
    /// all colour `c`), and the signature bit each is given.
    live: u64,
    sig_bit: [u8; 64],
    /// The top and bottom rows' colourings by coupling signature and
    /// stone-count code.
    top: OuterRow,
    bottom: OuterRow,
    /// Signatures with a top row.
    top_sigs: Vec<u16>,
    /// Per top row code, the bottom row's code that makes a playable board.
    want: Vec<usize>,
    /// The stone counts the outer rows must supply, and how many colour
    /// permutations ask for each.
    needs: Vec<([u32; MAX_COLORS], u32)>,
    /// Which signatures' rows of the bottom histogram are not all zero
    /// (during its subset sums).
    nonzero: Vec<bool>,
}

impl Scratch {
    fn new(s: &Sandwich) -> Scratch {
        let sigs = 1usize << MAX_COUPLING_BITS;
        Scratch {
            live: 0,
            sig_bit: [0; 64],
            top: OuterRow::new(s, true),
            bottom: OuterRow::new(s, false),
            top_sigs: Vec::with_capacity(sigs),
            want: vec![0; s.codes],
            needs: Vec::new(),
            nonzero: vec![false; sigs],
        }
    }
}

struct Walk<'a, 'c> {
    s: &'a Sandwich,
    bb: [u64; MAX_COLORS],
    path: Vec<u8>,
    meter: NodeMeter<'a, 'c>,
    leaf: Scratch,
    out: SandwichOut,
}

impl Walk<'_, '_> {
    fn visit(&mut self, used: usize) {
        if !self.meter.enter() {
            self.out.rest.push(self.path.clone());
            return;
        }
        let t = self.path.len();
        if t == self.s.order.len() {
            self.at_leaf(used);
            return;
        }
        let bit = 1u64 << self.s.order[t];
        for x in 0..(used + 1).min(self.s.k) {
            if !self.s.fits(t, self.bb[x]) {
                continue;
            }
            self.bb[x] |= bit;
            self.path.push(x as u8);
            self.visit(used.max(x + 1));
            self.path.pop();
            self.bb[x] &= !bit;
            if self.meter.stopping() && self.path.len() == t {
                // Hand back the colours not yet tried at this step.
                for y in x + 1..(used + 1).min(self.s.k) {
                    if self.s.fits(t, self.bb[y]) {
                        let mut q = self.path.clone();
                        q.push(y as u8);
                        self.out.rest.push(q);
                    }
                }
                return;
            }
        }
    }

    /// The number of images of the leaf's orbit (up to colours) if the leaf
    /// is the smallest of them, else `None`.
    fn canonical_weight(&self) -> Option<u128> {
        let m = &self.path;
        let mut equal = 1u128;
        for src in &self.s.images {
            let mut relabel = [u8::MAX; MAX_COLORS];
            let mut next = 0u8;
            let mut same = true;
            for (t, &from) in src.iter().enumerate() {
                let c = m[from as usize] as usize;
                if relabel[c] == u8::MAX {
                    relabel[c] = next;
                    next += 1;
                }
                let v = relabel[c];
                if v != m[t] {
                    if v < m[t] {
                        return None;
                    }
                    same = false;
                    break;
                }
            }
            equal += u128::from(same);
        }
        // Orbit-stabiliser: the images that are the leaf itself form the
        // stabiliser, so there are |H| / |stabiliser| distinct images.
        Some((self.s.images.len() as u128 + 1) / equal)
    }

    fn at_leaf(&mut self, used: usize) {
        let Some(weight) = self.canonical_weight() else {
            return;
        };
        let s = self.s;
        let k = s.k;
        let sc = &mut self.leaf;
        sc.top.constrain(s, &self.bb);
        sc.bottom.constrain(s, &self.bb);
        // The live coupling bits of this leaf: coupling `j` can be all
        // colour `c` given its inner cells, and both outer rows may give
        // their cells of it colour `c` (a bit one row can never set joins
        // nothing, so it is left out, and the join is that much smaller).
        sc.live = 0;
        let mut nbits = 0;
        for (j, cp) in s.coupling.iter().enumerate() {
            let colours = if cp.inner == 0 {
                0..k
            } else if let Some(c) = mono(&self.bb, k, cp.inner) {
                c..c + 1
            } else {
                continue;
            };
            for c in colours {
                if sc.top.may_be_mono(s, c, cp.top) && sc.bottom.may_be_mono(s, c, cp.bottom) {
                    sc.live |= 1 << (j * k + c);
                    sc.sig_bit[j * k + c] = nbits;
                    nbits += 1;
                }
            }
        }
        let nbits = nbits as usize;
        let sigs = 1usize << nbits;
        sc.top.count(s, sc.live, &sc.sig_bit, sigs);
        sc.bottom.count(s, sc.live, &sc.sig_bit, sigs);
        sc.top_sigs.clear();
        for sig in 0..sigs {
            if sc.top.total[sig] != 0 {
                sc.top_sigs.push(sig as u16);
            }
        }
        // Playable: the completions whose stones make the playable counts,
        // summed over the colour permutations of the leaf.
        let playable = self.playable(used, nbits);
        self.out.playable += playable * weight;
        let sc = &mut self.leaf;
        // Subset sums over the bottom's signatures: `total[u]` becomes the
        // bottom rows whose signature lies inside `u`, so the bottom rows
        // compatible with a top signature `s` are `total[!s]`.
        for i in 0..nbits {
            let b = 1usize << i;
            for u in 0..sigs {
                if u & b != 0 {
                    sc.bottom.total[u] += sc.bottom.total[u ^ b];
                }
            }
        }
        let full = sigs - 1;
        let mut draws = 0u64;
        for &sig in &sc.top_sigs {
            let sig = usize::from(sig);
            draws += sc.top.total[sig] * sc.bottom.total[full ^ sig];
        }
        self.out.draws += u128::from(draws) * falling(k, used) * weight;
    }

    /// The playable completions of the leaf's colour orbit.
    fn playable(&mut self, used: usize, nbits: usize) -> u128 {
        let s = self.s;
        let k = s.k;
        let mut inner = [0u32; MAX_COLORS];
        for (c, slot) in inner.iter_mut().enumerate().take(k) {
            *slot = self.bb[c].count_ones();
        }
        // The stone counts the outer rows must supply under each colour
        // permutation; identical needs are counted once and multiplied.
        let needs = &mut self.leaf.needs;
        needs.clear();
        let mut perm = [0usize; MAX_COLORS];
        for (i, p) in perm.iter_mut().enumerate().take(k) {
            *p = i;
        }
        loop {
            let mut need = [0u32; MAX_COLORS];
            let ok = (0..k).all(|x| {
                let t = s.target[perm[x]];
                if t < inner[x] || t - inner[x] > 2 * s.cols as u32 {
                    return false;
                }
                need[x] = t - inner[x];
                true
            });
            if ok {
                match needs.iter_mut().find(|(n, _)| *n == need) {
                    Some((_, times)) => *times += 1,
                    None => needs.push((need, 1)),
                }
            }
            if !next_permutation(&mut perm[..k]) {
                break;
            }
        }
        if needs.is_empty() {
            return 0;
        }
        let sc = &mut self.leaf;
        let sigs = 1usize << nbits;
        let codes = s.codes;
        // Subset sums of the bottom histogram, per code (the rows still all
        // zero add nothing: `nonzero` follows which are not).
        for u in 0..sigs {
            sc.nonzero[u] = sc.bottom.total[u] != 0;
        }
        for i in 0..nbits {
            let b = 1usize << i;
            for u in 0..sigs {
                if u & b != 0 && sc.nonzero[u ^ b] {
                    sc.nonzero[u] = true;
                    let (lo, hi) = sc.bottom.hist.split_at_mut(u * codes);
                    let from = &lo[(u ^ b) * codes..((u ^ b) + 1) * codes];
                    for (d, &v) in hi[..codes].iter_mut().zip(from) {
                        *d += v;
                    }
                }
            }
        }
        let full = sigs - 1;
        let radix = s.cols + 1;
        let mut total = 0u128;
        for &(need, times) in &sc.needs {
            // The bottom row's code for each top row's code (none when the
            // top row already has too many stones of some colour).
            for (code, want) in sc.want.iter_mut().enumerate() {
                let d = &s.digits[code];
                let mut w = 0usize;
                let mut place = 1usize;
                for c in 0..k {
                    let (nd, td) = (need[c], u32::from(d[c]));
                    if td > nd || nd - td > s.cols as u32 {
                        w = NO_CODE;
                        break;
                    }
                    if c + 1 < k {
                        w += (nd - td) as usize * place;
                        place *= radix;
                    }
                }
                *want = match s.compact.get(w) {
                    Some(&c) if c != NO_COMPACT => c as usize,
                    _ => NO_CODE,
                };
            }
            let mut sum = 0u64;
            for &sig in &sc.top_sigs {
                let sig = sig as usize;
                let top = &sc.top.hist[sig * codes..(sig + 1) * codes];
                let bottom = &sc.bottom.hist[(full ^ sig) * codes..((full ^ sig) + 1) * codes];
                for (&n, &want) in top.iter().zip(&sc.want) {
                    if n != 0 && want != NO_CODE {
                        sum += n * bottom[want];
                    }
                }
            }
            total += u128::from(sum) * u128::from(times);
        }
        // Each distinct colouring of the orbit was counted once per
        // permutation of the colours the leaf does not use (the same count
        // each time: those permutations map the completions onto themselves).
        let repeats = (1..=(k - used)).map(|v| v as u128).product::<u128>();
        debug_assert_eq!(total % repeats, 0);
        total / repeats
    }
}

/// The colour of every cell of `cells`, if they all have one colour.
#[inline(always)]
fn mono(bb: &[u64; MAX_COLORS], k: usize, cells: u64) -> Option<usize> {
    (0..k).find(|&c| bb[c] & cells == cells)
}

/// The next permutation in lexicographic order; `false` after the last.
fn next_permutation(p: &mut [usize]) -> bool {
    let n = p.len();
    if n < 2 {
        return false;
    }
    let mut i = n - 1;
    while i > 0 && p[i - 1] >= p[i] {
        i -= 1;
    }
    if i == 0 {
        return false;
    }
    let mut j = n - 1;
    while p[j] <= p[i - 1] {
        j -= 1;
    }
    p.swap(i - 1, j);
    p[i..].reverse();
    true
}
