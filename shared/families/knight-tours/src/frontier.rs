//! The frontier (transfer-matrix) count of closed knight's tours.
//!
//! **The order.** The board is laid with its short side `h` across and its
//! long side along, and the squares are numbered column by column:
//! square `v` is column `v / h`, row `v % h`. A knight's move from `v` to a
//! later square goes one column on and two rows up or down (`v + h - 2`,
//! `v + h + 2`) or two columns on and one row (`v + 2h - 1`, `v + 2h + 1`),
//! so every edge joins squares at most `2h + 1` apart.
//!
//! **The sweep.** The squares are *processed* in order. Processing `v`
//! chooses which of its edges to later squares the tour uses, so that `v`
//! has exactly two tour edges (its edges to earlier squares were chosen when
//! those were processed). After `v`, every square before `v + 1` is done,
//! and the chosen edges form vertex-disjoint paths (never a cycle, except the
//! last edge of the whole tour). What the rest of the sweep needs to know of
//! them is the *frontier state* before square `p`: for each of the `W = 2h +
//! 1` squares `p .. p + 2h` (no earlier square reaches further) its degree so
//! far, 0, 1 or 2, and for the squares of degree 1, which two are the ends of
//! the same path. Two partial tours with the same state have exactly the
//! same completions, so the sweep keeps one count per state (a hash table)
//! instead of one branch per partial tour: that is the whole gain over a
//! depth-first search, and why the count is exact (it is a sum over disjoint
//! classes of partial tours, each completed the same way).
//!
//! **Closing.** An edge between the two ends of one path would close a cycle.
//! It is taken only when it is the last edge of `v` and every later square
//! already has degree 2 (so all squares lie on that cycle): a complete tour,
//! counted with the state's multiplicity and dropped from the table.
//!
//! **Pruning.** A state in which some unprocessed square can no longer get
//! its two edges (too few unprocessed neighbours of degree below 2) is
//! dropped as soon as that happens: only when a square is processed or
//! becomes full can a neighbour lose a potential partner, so only their
//! neighbours are checked. This removes 5% to 95% of the states (most on
//! square boards, whose corners and edges are tight); it never removes a
//! state with a completion.
//!
//! **Undirected.** A tour is a set of edges, so each undirected closed tour
//! is counted once, with no orientation or start square to divide out.
//!
//! **Keys.** A state is packed into a `u64` (see [`Frontier::encode`]): two
//! bits per square of the window (empty, first end of a path, second end,
//! full), then for every second end three bits, the position of its partner
//! among the paths still open at that point. `W <= 17` squares give at most
//! 8 paths, so `24 + 34 = 58` bits: boards up to 8 wide.

/// Widest board side the keys hold (`2 * 8 + 1 = 17` window squares).
pub const MAX_SHORT_SIDE: usize = 8;

/// Most window squares: `2 * MAX_SHORT_SIDE + 1`.
pub(crate) const MAX_W: usize = 2 * MAX_SHORT_SIDE + 1;

/// Slot code of a square with no edge yet; 1..=8 are path labels.
pub(crate) const EMPTY: u8 = 0;
/// Slot code of a square with two edges.
pub(crate) const FULL: u8 = 15;

/// Bits of the key below the degree codes: the partner indices of at most 8
/// second ends, 3 bits each.
const PARTNER_BITS: u32 = 24;

/// A decoded frontier state: the slot codes of the window's squares.
pub(crate) type Slots = [u8; MAX_W + 1];

/// The board and everything the sweep precomputes about it.
#[derive(Debug, Clone)]
pub struct Frontier {
    /// Short side (rows of the sweep).
    pub h: usize,
    /// Long side (columns of the sweep).
    pub len: usize,
    /// Squares.
    pub n: usize,
    /// Window squares, `2h + 1`.
    pub w: usize,
    /// For each square, its later neighbours as offsets, ascending.
    pub(crate) fwd: Vec<Vec<u8>>,
    /// For each square, all its neighbours.
    pub(crate) adj: Vec<Vec<u16>>,
}

/// What processing one state at one square gave: successors go to `emit`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StepResult {
    /// Complete tours closed at this square (each worth the state's count).
    pub closed: u32,
}

impl Frontier {
    /// The sweep of an `rows x cols` board, oriented with the short side
    /// across (the count does not depend on the orientation). The caller
    /// checks that the short side is at most [`MAX_SHORT_SIDE`].
    pub fn new(rows: usize, cols: usize) -> Frontier {
        let (h, len) = if rows <= cols {
            (rows, cols)
        } else {
            (cols, rows)
        };
        assert!((1..=MAX_SHORT_SIDE).contains(&h), "short side {h}");
        let n = h * len;
        let mut fwd = vec![Vec::new(); n];
        let mut adj = vec![Vec::new(); n];
        for v in 0..n {
            let (c, r) = (v / h, (v % h) as isize);
            for (dc, dr) in [(1, -2), (1, 2), (2, -1), (2, 1)] {
                let rr = r + dr;
                if c + dc < len && rr >= 0 && (rr as usize) < h {
                    let u = (c + dc) * h + rr as usize;
                    fwd[v].push((u - v) as u8);
                    adj[v].push(u as u16);
                    adj[u].push(v as u16);
                }
            }
            fwd[v].sort_unstable();
        }
        Frontier {
            h,
            len,
            n,
            w: 2 * h + 1,
            fwd,
            adj,
        }
    }

    /// The key of the state before square 0: no edge anywhere.
    pub const START: u64 = 0;

    /// Packs slot codes into the canonical key (the labels' values do not
    /// matter, only which squares share one).
    #[inline]
    pub fn encode(&self, s: &Slots) -> u64 {
        let mut deg: u64 = 0;
        let mut partners: u64 = 0;
        let mut pbits = 0;
        // Labels of the paths open so far, in the order they were opened.
        let mut open = [0u8; 8];
        let mut n_open = 0;
        for (i, &x) in s.iter().enumerate().take(self.w) {
            let code: u64 = match x {
                EMPTY => 0,
                FULL => 3,
                label => {
                    if let Some(k) = open[..n_open].iter().position(|&o| o == label) {
                        partners |= (k as u64) << pbits;
                        pbits += 3;
                        open.copy_within(k + 1..n_open, k);
                        n_open -= 1;
                        2
                    } else {
                        open[n_open] = label;
                        n_open += 1;
                        1
                    }
                }
            };
            deg |= code << (2 * i);
        }
        debug_assert_eq!(n_open, 0, "unpaired path end");
        (deg << PARTNER_BITS) | partners
    }

    /// Unpacks a key into slot codes, labels 1, 2, ... in order of first
    /// ends. Rejects keys that no state has (for units read from outside).
    pub fn decode(&self, key: u64) -> Option<Slots> {
        let mut s = [EMPTY; MAX_W + 1];
        let deg = key >> PARTNER_BITS;
        let mut partners = key & ((1 << PARTNER_BITS) - 1);
        if deg >> (2 * self.w) != 0 {
            return None;
        }
        let mut open = [0u8; 8];
        let mut n_open = 0;
        let mut next = 1u8;
        for (i, slot) in s.iter_mut().enumerate().take(self.w) {
            *slot = match (deg >> (2 * i)) & 3 {
                0 => EMPTY,
                3 => FULL,
                1 => {
                    if n_open == 8 {
                        return None;
                    }
                    open[n_open] = next;
                    n_open += 1;
                    next += 1;
                    next - 1
                }
                _ => {
                    let k = (partners & 7) as usize;
                    partners >>= 3;
                    if k >= n_open {
                        return None;
                    }
                    let label = open[k];
                    open.copy_within(k + 1..n_open, k);
                    n_open -= 1;
                    label
                }
            };
        }
        if n_open != 0 || partners != 0 {
            return None;
        }
        Some(s)
    }

    /// Whether `key` can be the state before square `p`: it decodes, and no
    /// square past the board has an edge. (Whether partial tours reach it is
    /// not checked; a state no partial tour reaches just has no completion
    /// counted twice, and units come from the family's own hand-backs.)
    pub fn valid_at(&self, p: usize, key: u64) -> bool {
        match self.decode(key) {
            None => false,
            Some(s) => (0..self.w).all(|i| p + i < self.n || s[i] == EMPTY),
        }
    }

    /// Adds the edge between slot 0 and slot `j` (neither full; slots run
    /// to `w`, the square that enters the window with this step). `Err` if
    /// it closes a cycle.
    #[inline(always)]
    fn add_edge(s: &mut Slots, j: usize, w: usize) -> Result<(), ()> {
        let (a, b) = (s[0], s[j]);
        match (a, b) {
            (EMPTY, EMPTY) => {
                // A fresh label: at most 8 are in use, 9 is free.
                s[0] = 9;
                s[j] = 9;
            }
            (EMPTY, y) => {
                s[0] = y;
                s[j] = FULL;
            }
            (x, EMPTY) => {
                s[j] = x;
                s[0] = FULL;
            }
            (x, y) if x == y => return Err(()),
            (x, y) => {
                s[0] = FULL;
                s[j] = FULL;
                // The far end of b's path now pairs with the far end of a's.
                for slot in s[1..=w].iter_mut() {
                    if *slot == y {
                        *slot = x;
                        break;
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether the cycle just closed at square `v` (through slots 0 and `j`)
    /// holds every square: no square beyond the window, and every later
    /// square in it full.
    fn closes_all(&self, v: usize, s: &Slots, j: usize) -> bool {
        if v + self.w + 1 < self.n {
            return false;
        }
        (1..=self.w)
            .take_while(|&i| v + i < self.n)
            .all(|i| i == j || s[i] == FULL)
    }

    /// Whether the square at slot `i` of a state before square `p` can still
    /// get its missing edges.
    #[inline]
    fn can_finish(&self, p: usize, s: &Slots, i: usize) -> bool {
        let u = p + i;
        let need = match s[i] {
            EMPTY => 2,
            FULL => return true,
            _ => 1,
        };
        let mut avail = 0;
        for &x in &self.adj[u] {
            let x = x as usize;
            if x >= p && (x - p >= self.w || s[x - p] != FULL) {
                avail += 1;
                if avail >= need {
                    return true;
                }
            }
        }
        false
    }

    /// After square `v` was processed (state `s`, already shifted so that
    /// slot 0 is square `v + 1`): whether every square that may have lost a
    /// potential partner (the later neighbours of `v`, and the neighbours of
    /// those that became full) can still finish.
    fn feasible(&self, v: usize, s: &Slots) -> bool {
        let p = v + 1;
        for &o in &self.fwd[v] {
            let i = o as usize - 1;
            if s[i] == FULL {
                for &x in &self.adj[p + i] {
                    let x = x as usize;
                    if x >= p && x - p < self.w && !self.can_finish(p, s, x - p) {
                        return false;
                    }
                }
            } else if !self.can_finish(p, s, i) {
                return false;
            }
        }
        true
    }

    /// Processes square `v` in the state `key` (the state before `v`): every
    /// way of giving `v` its missing edges to later squares. Each successor
    /// (the state before `v + 1`) goes to `emit`, once per way; the tours
    /// closed here are counted in the result.
    #[inline]
    pub fn step(&self, v: usize, key: u64, emit: &mut impl FnMut(u64)) -> StepResult {
        let s = self.decode(key).expect("keys in the table decode");
        let mut out = StepResult::default();
        let w = self.w;
        let mut finish = |t: &Slots| {
            let mut shifted = [EMPTY; MAX_W + 1];
            shifted[..w].copy_from_slice(&t[1..=w]);
            if self.feasible(v, &shifted) {
                emit(self.encode(&shifted));
            }
        };
        let fwd = &self.fwd[v];
        match s[0] {
            FULL => finish(&s),
            EMPTY => {
                for (a, &j1) in fwd.iter().enumerate() {
                    let j1 = j1 as usize;
                    if s[j1] == FULL {
                        continue;
                    }
                    let mut t1 = s;
                    // Slot 0 is empty, so the first edge cannot close.
                    let _ = Self::add_edge(&mut t1, j1, w);
                    for &j2 in &fwd[a + 1..] {
                        let j2 = j2 as usize;
                        if t1[j2] == FULL {
                            continue;
                        }
                        let mut t2 = t1;
                        match Self::add_edge(&mut t2, j2, w) {
                            Ok(()) => finish(&t2),
                            Err(()) => {
                                if self.closes_all(v, &t1, j2) {
                                    out.closed += 1;
                                }
                            }
                        }
                    }
                }
            }
            _ => {
                for &j in fwd {
                    let j = j as usize;
                    if s[j] == FULL {
                        continue;
                    }
                    let mut t = s;
                    match Self::add_edge(&mut t, j, w) {
                        Ok(()) => finish(&t),
                        Err(()) => {
                            if self.closes_all(v, &s, j) {
                                out.closed += 1;
                            }
                        }
                    }
                }
            }
        }
        out
    }

    /// Squares of each colour (`(r + c) % 2`): a closed tour alternates
    /// colours, so it exists only if they are equal.
    pub fn colours(&self) -> (usize, usize) {
        let even = (0..self.n)
            .filter(|&v| (v / self.h + v % self.h).is_multiple_of(2))
            .count();
        (even, self.n - even)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip() {
        let f = Frontier::new(8, 8);
        let mut s = [EMPTY; MAX_W + 1];
        // Paths 3-5, 1-9, 2-16, 7-8; squares 0 and 12 full.
        for (i, x) in [
            (3, 4),
            (5, 4),
            (1, 2),
            (9, 2),
            (2, 7),
            (16, 7),
            (7, 5),
            (8, 5),
        ] {
            s[i] = x;
        }
        s[0] = FULL;
        s[12] = FULL;
        let k = f.encode(&s);
        let d = f.decode(k).unwrap();
        assert_eq!(f.encode(&d), k);
        for i in 0..17 {
            for j in 0..17 {
                let same = s[i] == s[j] && !matches!(s[i], EMPTY | FULL);
                assert_eq!(same, d[i] == d[j] && !matches!(d[i], EMPTY | FULL));
            }
            assert_eq!(s[i] == FULL, d[i] == FULL);
            assert_eq!(s[i] == EMPTY, d[i] == EMPTY);
        }
        assert!(f.decode(u64::MAX).is_none());
        assert_eq!(f.decode(Frontier::START), Some([EMPTY; MAX_W + 1]));
    }
}
