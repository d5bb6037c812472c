//! One outer row at a leaf of the sandwich walk: its allowed colourings,
//! counted by coupling signature and stone-count code, and remembered.
//!
//! What the inner rows ask of an outer row is a short list: per colour, the
//! cells that may not take it (`forbid`) and the pairs of cells that may not
//! both take it (`partners`), plus which coupling squares are live. Leaves
//! that differ deep in the walk mostly ask the same thing of the top row
//! (and often of the bottom one): on 6x6 with three colours, 600,000 leaves
//! asked the top row only 85,000 distinct things. So the tally is kept in a
//! direct-mapped memo keyed by exactly that list; a hit replays the stored
//! histogram instead of building the row's table and enumerating its
//! `k^cols` colourings. The key is the whole input of the tally (compared in
//! full, not by hash), so a hit is the count the enumeration would give.

use super::{mono, Sandwich, MAX_COUPLING_BITS};
use crate::dfs::MAX_COLORS;

/// The flag of [`OuterRow::row`] entries whose set may not be one colour.
const BAD: u16 = 1 << 15;
/// Memo slots per outer row (a power of two) where memory allows; a unit
/// under a tighter `--memory-limit` gets fewer (see [`Sandwich::fit_memory`]).
pub(super) const MEMO_SLOTS: usize = 1 << 12;
/// Most histogram entries one slot holds; a tally with more is not kept.
const MEMO_ENTRIES: usize = 256;
/// A slot holding nothing.
const EMPTY: u32 = u32::MAX;

pub(super) struct OuterRow {
    /// The top row (else the bottom one).
    top: bool,
    /// `hist[sig * codes + code]`: the row's allowed colourings with coupling
    /// signature `sig` and stone-count code `code`; `total[sig]` their sum
    /// over codes. Valid for the `sigs` signatures of the last
    /// [`OuterRow::count`].
    pub hist: Vec<u64>,
    pub total: Vec<u64>,
    /// The indices of `hist` the last enumeration made nonzero.
    touched: Vec<u32>,
    /// The tally's input: `forbid[c]`, then `partners[a][c]` for every cell
    /// `a`, then the live coupling bits (four `u16`s).
    key: Vec<u16>,
    /// `row[c << cols | S]`: [`BAD`] if the cell set `S` may not be all
    /// colour `c`, else the signature bits of the live coupling bits
    /// `j * k + c` whose cells in this row lie in `S`.
    row: Vec<u16>,
    memo: Memo,
}

/// How [`OuterRow::count`] came by its tally.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tallied {
    /// From the memo.
    Remembered,
    /// Enumerated, and kept in the memo.
    Kept,
    /// Enumerated, with more entries than a slot holds.
    NotKept,
}

/// Direct-mapped: slot `i` holds the key `keys[i * key_len..]` and its
/// histogram's nonzero entries `(index, count)` in
/// `entries[i * MEMO_ENTRIES..][..len[i]]`; there are `len.len()` slots, a
/// power of two.
struct Memo {
    keys: Vec<u16>,
    len: Vec<u32>,
    entries: Vec<(u32, u32)>,
}

impl OuterRow {
    pub fn new(s: &Sandwich, top: bool) -> OuterRow {
        let sigs = 1usize << MAX_COUPLING_BITS;
        let key_len = key_len(s);
        let slots = s.memo_slots;
        OuterRow {
            top,
            hist: vec![0; sigs * s.codes],
            total: vec![0; sigs],
            touched: Vec::with_capacity(s.k.pow(s.cols as u32)),
            key: vec![0; key_len],
            row: vec![0; s.k << s.cols],
            memo: Memo {
                keys: vec![0; slots * key_len],
                len: vec![EMPTY; slots],
                entries: vec![(0, 0); slots * MEMO_ENTRIES],
            },
        }
    }

    /// Bytes of the tables of one outer row of `s`: what [`OuterRow::new`]
    /// allocates (the test `bytes_are_what_a_row_allocates` holds the two
    /// together).
    pub fn bytes(s: &Sandwich) -> u64 {
        let sigs = 1usize << MAX_COUPLING_BITS;
        let key_len = key_len(s);
        let slots = s.memo_slots;
        (sigs * s.codes * 8
            + sigs * 8
            + s.k.pow(s.cols as u32) * 4
            + key_len * 2
            + (s.k << s.cols) * 2
            + slots * key_len * 2
            + slots * 4
            + slots * MEMO_ENTRIES * 8) as u64
    }

    /// Fills `hist` and `total` for the leaf last given to
    /// [`OuterRow::constrain`], with the live coupling bits `live` given
    /// signature bits `sig_bit` (`sigs` signatures).
    pub fn count(&mut self, s: &Sandwich, live: u64, sig_bit: &[u8; 64], sigs: usize) -> Tallied {
        let tail = self.key.len() - 4;
        for (i, word) in self.key[tail..].iter_mut().enumerate() {
            *word = (live >> (16 * i)) as u16;
        }
        self.hist[..sigs * s.codes].fill(0);
        self.total[..sigs].fill(0);
        let key_len = self.key.len();
        let slot = slot_of(&self.key, self.memo.len.len());
        let len = self.memo.len[slot];
        if len != EMPTY && self.memo.keys[slot * key_len..(slot + 1) * key_len] == self.key[..] {
            let at = slot * MEMO_ENTRIES;
            for &(index, n) in &self.memo.entries[at..at + len as usize] {
                self.hist[index as usize] += u64::from(n);
                self.total[index as usize / s.codes] += u64::from(n);
            }
            return Tallied::Remembered;
        }
        self.fill_row(s, live, sig_bit);
        let full = (1usize << s.cols) - 1;
        self.touched.clear();
        let mut tally = Tally {
            hist: &mut self.hist,
            total: &mut self.total,
            touched: &mut self.touched,
        };
        split(s, &self.row, 0, full, 0, 0, 1, &mut tally);
        // Keep it, if it fits a slot.
        let n = self.touched.len();
        if n > MEMO_ENTRIES {
            self.memo.len[slot] = EMPTY;
            return Tallied::NotKept;
        }
        let at = slot * MEMO_ENTRIES;
        for (entry, &index) in self.memo.entries[at..at + n].iter_mut().zip(&self.touched) {
            // A count is at most k^cols <= 2^16 colourings.
            *entry = (index, self.hist[index as usize] as u32);
        }
        self.memo.len[slot] = n as u32;
        self.memo.keys[slot * key_len..(slot + 1) * key_len].copy_from_slice(&self.key);
        Tallied::Kept
    }

    /// Whether some allowed colouring of this row makes all of `cells`
    /// colour `c` (as far as single squares tell: no cell of them is
    /// forbidden `c` and no pair of them are partners in `c`; a set that
    /// passes may still be ruled out only through its supersets, so `true`
    /// is a may, `false` a must not).
    pub fn may_be_mono(&self, s: &Sandwich, c: usize, cells: u16) -> bool {
        let k = s.k;
        if self.key[c] & cells != 0 {
            return false;
        }
        let mut rest = cells;
        while rest != 0 {
            let a = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            if self.key[k + a * k + c] & cells != 0 {
                return false;
            }
        }
        true
    }

    /// Takes the leaf whose colour boards are `bb`: the forbidden cells and
    /// pairs per colour that its inner colours put on this row (with the
    /// live bits given to [`OuterRow::count`], the tally's whole input).
    pub fn constrain(&mut self, s: &Sandwich, bb: &[u64; MAX_COLORS]) {
        let k = s.k;
        self.key.fill(0);
        let (forbid, partners) = self.key.split_at_mut(k);
        for q in if self.top { &s.top } else { &s.bottom } {
            let Some(c) = mono(bb, k, q.inner) else {
                continue;
            };
            if q.row.count_ones() == 1 {
                forbid[c] |= q.row;
            } else {
                let a = q.row.trailing_zeros() as usize;
                let b = 15 - q.row.leading_zeros() as usize;
                partners[a * k + c] |= 1 << b;
                partners[b * k + c] |= 1 << a;
            }
        }
    }

    /// Fills `row` from the key: which sets may not be all one colour, and
    /// which live coupling bits each set makes one colour.
    fn fill_row(&mut self, s: &Sandwich, live: u64, sig_bit: &[u8; 64]) {
        let k = s.k;
        let cells = 1usize << s.cols;
        for c in 0..k {
            let forbid = self.key[c];
            let row = &mut self.row[c * cells..(c + 1) * cells];
            row[0] = 0;
            for set in 1..cells {
                let low = set.trailing_zeros() as usize;
                let bad = row[set & (set - 1)] == BAD
                    || forbid >> low & 1 == 1
                    || usize::from(self.key[k + low * k + c]) & set != 0;
                row[set] = if bad { BAD } else { 0 };
            }
        }
        // Every superset of a live coupling's cells in this row makes it one
        // colour there.
        let mut live = live;
        while live != 0 {
            let bit = live.trailing_zeros() as usize;
            live &= live - 1;
            let (j, c) = (bit / k, bit % k);
            let cells_of = usize::from(if self.top {
                s.coupling[j].top
            } else {
                s.coupling[j].bottom
            });
            let sig = 1u16 << sig_bit[bit];
            let row = &mut self.row[c * cells..(c + 1) * cells];
            let free = (cells - 1) & !cells_of;
            let mut sub = free;
            loop {
                row[cells_of | sub] |= sig;
                if sub == 0 {
                    break;
                }
                sub = (sub - 1) & free;
            }
        }
    }
}

/// The `u16`s of a tally's key (see [`OuterRow::key`]).
fn key_len(s: &Sandwich) -> usize {
    s.k + s.cols * s.k + 4
}

/// The memo slot of a key among `slots` (an FxHash-style mix; slots are
/// compared in full).
fn slot_of(key: &[u16], slots: usize) -> usize {
    let mut h = 0u64;
    for &w in key {
        h = (h.rotate_left(5) ^ u64::from(w)).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    (h >> 32) as usize & (slots - 1)
}

/// Where [`split`] counts the colourings it finds.
struct Tally<'a> {
    hist: &'a mut [u64],
    total: &'a mut [u64],
    touched: &'a mut Vec<u32>,
}

/// Colour `c` takes each subset of the cells `rest` in turn (colours `..c`
/// took the others, making signature `sig` and radix code `code` so far),
/// and the later colours split what is left; the last takes all of it.
#[allow(clippy::too_many_arguments)]
fn split(
    s: &Sandwich,
    row: &[u16],
    c: usize,
    rest: usize,
    sig: u16,
    code: usize,
    place: usize,
    tally: &mut Tally<'_>,
) {
    let cells = 1usize << s.cols;
    let mine = &row[c * cells..(c + 1) * cells];
    let last = &row[(s.k - 1) * cells..s.k * cells];
    let mut sub = rest;
    loop {
        let e = sig | mine[sub];
        if e & BAD == 0 {
            let code = code + sub.count_ones() as usize * place;
            if c + 2 == s.k {
                let e = e | last[rest ^ sub];
                if e & BAD == 0 {
                    let index = e as usize * s.codes + s.compact[code] as usize;
                    if tally.hist[index] == 0 {
                        tally.touched.push(index as u32);
                    }
                    tally.hist[index] += 1;
                    tally.total[e as usize] += 1;
                }
            } else {
                split(
                    s,
                    row,
                    c + 1,
                    rest ^ sub,
                    e,
                    code,
                    place * (s.cols + 1),
                    tally,
                );
            }
        }
        if sub == 0 {
            break;
        }
        sub = (sub - 1) & rest;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Board;

    /// The live coupling bits of the inner colours `bb` as the walk finds
    /// them (before it leaves out the bits a row can never set), and the
    /// signature bit of each.
    fn live_bits(s: &Sandwich, bb: &[u64; MAX_COLORS]) -> (u64, [u8; 64], usize) {
        let (mut live, mut sig_bit, mut n) = (0u64, [0u8; 64], 0);
        for (j, cp) in s.coupling.iter().enumerate() {
            for c in 0..s.k {
                if cp.inner & bb[c] == cp.inner {
                    live |= 1 << (j * s.k + c);
                    sig_bit[j * s.k + c] = n as u8;
                    n += 1;
                }
            }
        }
        (live, sig_bit, n)
    }

    /// What the vectors of `row` hold, in bytes, from their capacities.
    fn allocated(row: &OuterRow) -> u64 {
        fn b<T>(v: &Vec<T>) -> usize {
            v.capacity() * std::mem::size_of::<T>()
        }
        let m = &row.memo;
        (b(&row.hist)
            + b(&row.total)
            + b(&row.touched)
            + b(&row.key)
            + b(&row.row)
            + b(&m.keys)
            + b(&m.len)
            + b(&m.entries)) as u64
    }

    /// [`OuterRow::bytes`], which a unit's `--memory-limit` is checked
    /// against, is what [`OuterRow::new`] allocates, for every memo size.
    #[test]
    fn bytes_are_what_a_row_allocates() {
        for (rows, cols, k) in [(4, 4, 2), (5, 5, 3), (6, 6, 3), (5, 5, 4)] {
            let board = Board::new(rows, cols);
            let mut s = Sandwich::new(&board, k).expect("supported");
            for slots in [MEMO_SLOTS, 16, 1] {
                s.memo_slots = slots;
                let row = OuterRow::new(&s, true);
                assert_eq!(
                    OuterRow::bytes(&s),
                    allocated(&row),
                    "{rows}x{cols} k={k}, {slots} slots"
                );
            }
        }
    }

    /// A remembered tally is the tally: rows counted with a warm memo (keys
    /// seen before, slots taken over by other keys, tallies too big to keep)
    /// equal the same rows enumerated afresh.
    #[test]
    fn the_memo_gives_what_the_enumeration_counts() {
        for (rows, cols, k) in [(6, 6, 3), (5, 5, 4)] {
            let board = Board::new(rows, cols);
            let s = Sandwich::new(&board, k).expect("supported");
            let mut seed = 0x9e37_79b9_7f4a_7c15u64;
            let mut next = move || {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed
            };
            // A pool of inner colourings, met again and again in random
            // order: more of them than the memo has slots, so slots change
            // hands.
            let pool: Vec<[u64; MAX_COLORS]> = (0..2 * MEMO_SLOTS)
                .map(|_| {
                    let mut bb = [0u64; MAX_COLORS];
                    for cell in cols..(rows - 1) * cols {
                        bb[(next() % k as u64) as usize] |= 1 << cell;
                    }
                    bb
                })
                .collect();
            let mut warm = [OuterRow::new(&s, true), OuterRow::new(&s, false)];
            let mut cold = [OuterRow::new(&s, true), OuterRow::new(&s, false)];
            let mut seen = [0usize; 3];
            for _ in 0..6 * MEMO_SLOTS {
                let bb = &pool[(next() % pool.len() as u64) as usize];
                let (live, sig_bit, nbits) = live_bits(&s, bb);
                let sigs = 1 << nbits;
                for (w, c) in warm.iter_mut().zip(cold.iter_mut()) {
                    w.constrain(&s, bb);
                    let how = w.count(&s, live, &sig_bit, sigs);
                    seen[how as usize] += 1;
                    c.memo.len.fill(EMPTY);
                    c.constrain(&s, bb);
                    assert_ne!(c.count(&s, live, &sig_bit, sigs), Tallied::Remembered);
                    let cells = sigs * s.codes;
                    assert_eq!(
                        w.hist[..cells],
                        c.hist[..cells],
                        "{rows}x{cols} k={k} {how:?}"
                    );
                    assert_eq!(
                        w.total[..sigs],
                        c.total[..sigs],
                        "{rows}x{cols} k={k} {how:?}"
                    );
                }
            }
            assert!(seen[0] > 0 && seen[1] > 0, "{rows}x{cols} k={k}: {seen:?}");
            if k == 4 {
                assert!(
                    seen[2] > 0,
                    "{rows}x{cols} k={k}: no tally too big: {seen:?}"
                );
            }
        }
    }
}
