//! One-word entries for boards of at most 40 cells: eight to a cache line.
//!
//! Why: a long search is bounded by how many positions its table holds. On
//! 4x7 with a table of 16 MiB the solver needs 260 million nodes, with 64 MiB
//! 99 million (docs/notes/hip-solver.md, "The packed table"); the giants of table B
//! (3x11, Double 4x9) search hundreds of times more positions than an 8 GiB
//! table of three-word entries holds. Packing four times the entries into
//! the same memory is worth as much as four times the memory.
//!
//! How a key shrinks to part of a word, exactly:
//!
//! 1. A position is a word over {empty, P1, P2} of `cells` letters, so
//!    `t = sum of 3^i * digit(i)` numbers it; `t < 3^cells <= 2^K` with
//!    `K = ceil(cells * log2 3)`, 64 bits for 40 cells. (Up to 32 cells
//!    `t = p1 | p2 << cells`, `K = 2 * cells`, is cheaper to compute.)
//! 2. `m = mix(t)`, a bijection of the `K`-bit numbers (multiplications by
//!    odd constants and xor-shifts, each invertible modulo `2^K`), spreads
//!    the keys over the buckets.
//! 3. The bucket is `m`'s low `b` bits, and the entry stores the rest,
//!    `m >> b` (the *tag*, at most [`TAG_BITS`] bits: `b` is raised where
//!    needed). Bucket and tag give back `m`, hence `t`, hence the key: a
//!    tag that matches within its bucket is the same position, never
//!    another one that happens to share bits.
//!
//! An entry is one `u64` (tag, empty cells, best move, value interval), read
//! and written with single atomic operations, so no reader can see half of
//! one store and half of another: the table needs no lock.

use std::sync::atomic::{AtomicU64, Ordering};

use super::{merge, TableEntry};

/// The largest board whose positions number at most `2^64`.
pub const MAX_CELLS: usize = 40;
/// Entries per bucket: one cache line of words.
const SLOTS: usize = 8;
/// Bits of an entry left for the tag: 64 less the value interval (3 bits),
/// the best move (6) and the empty cells (6).
pub const TAG_BITS: u32 = 49;
const DATA_BITS: u32 = 64 - TAG_BITS;
/// The move field's "no move".
const NO_MOVE: u64 = 63;

/// The intervals `lo..=hi` of P1's value, numbered from 1 (0: a vacant slot).
const INTERVALS: [(i8, i8); 7] = [(2, -2), (-1, -1), (-1, 0), (-1, 1), (0, 0), (0, 1), (1, 1)];

#[inline(always)]
fn interval_code(lo: i8, hi: i8) -> u64 {
    // INTERVALS' numbers by (lo + 1, hi + 1); 0 for anything else.
    const CODES: [[u64; 3]; 3] = [[1, 2, 3], [0, 4, 5], [0, 0, 6]];
    match (
        usize::try_from(i16::from(lo) + 1),
        usize::try_from(i16::from(hi) + 1),
    ) {
        (Ok(l), Ok(h)) if l < 3 && h < 3 => CODES[l][h],
        _ => 0,
    }
}

/// `POW3_BITS[x] = sum of 3^j over the bits j of the byte x`: the base-3
/// number of the cells of one player within eight cells.
const POW3_BITS: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut x = 0;
    while x < 256 {
        let (mut v, mut p, mut j) = (0u64, 1u64, 0);
        while j < 8 {
            if x >> j & 1 == 1 {
                v += p;
            }
            p *= 3;
            j += 1;
        }
        t[x] = v;
        x += 1;
    }
    t
};

/// The inverse for decoding: `DIGITS[r]` for `r < 3^8` is the pair of bytes
/// (P1's cells, P2's cells) whose base-3 number is `r`.
static DIGITS: [(u8, u8); 6561] = {
    let mut t = [(0u8, 0u8); 6561];
    let mut r = 0;
    while r < 6561 {
        let (mut a, mut b, mut x, mut j) = (0u8, 0u8, r, 0);
        while j < 8 {
            match x % 3 {
                1 => a |= 1 << j,
                2 => b |= 1 << j,
                _ => {}
            }
            x /= 3;
            j += 1;
        }
        t[r] = (a, b);
        r += 1;
    }
    t
};

/// The base-3 number of a position of at most 40 cells (`p1`, `p2`
/// disjoint).
#[inline(always)]
fn ternary(p1: u64, p2: u64) -> u64 {
    let mut t = 0u64;
    let mut scale = 1u64;
    for chunk in 0..5 {
        let (a, b) = ((p1 >> (8 * chunk)) as u8, (p2 >> (8 * chunk)) as u8);
        t = t.wrapping_add(scale.wrapping_mul(POW3_BITS[a as usize] + 2 * POW3_BITS[b as usize]));
        scale = scale.wrapping_mul(6561);
    }
    t
}

fn from_ternary(mut t: u64) -> (u64, u64) {
    let (mut p1, mut p2) = (0u64, 0u64);
    for chunk in 0..5 {
        let (a, b) = DIGITS[(t % 6561) as usize];
        p1 |= u64::from(a) << (8 * chunk);
        p2 |= u64::from(b) << (8 * chunk);
        t /= 6561;
    }
    (p1, p2)
}

const C1: u64 = 0x9e37_79b9_7f4a_7c15;
const C2: u64 = 0xbf58_476d_1ce4_e5b9;

/// The inverse of an odd number modulo `2^64` (Newton's iteration).
const fn inverse(c: u64) -> u64 {
    let mut x = c;
    let mut i = 0;
    while i < 6 {
        x = x.wrapping_mul(2u64.wrapping_sub(c.wrapping_mul(x)));
        i += 1;
    }
    x
}

/// The key layout of one table: how a position becomes a number of `K`
/// bits, and how those split into bucket and tag.
#[derive(Debug, Clone, Copy)]
pub struct Packing {
    /// On boards of at most 32 cells the number is simply `p1 | p2 << cells`
    /// (`Some(cells)`): two more bits a cell than base 3 needs, but a shift
    /// instead of ten table lookups. Larger boards use base 3 (`None`).
    binary: Option<u32>,
    /// `2^K - 1`.
    key_mask: u64,
    /// The xor-shift of `mix`: at least half of `K`, so that it is its own
    /// inverse.
    shift: u32,
    /// log2 of the number of buckets.
    bucket_bits: u32,
}

impl Packing {
    /// The layout for a board of `cells <= MAX_CELLS` cells and at least
    /// `2^bucket_bits` buckets ([`Packing::bucket_bits`] may be more: the
    /// tag must fit its field).
    pub fn new(cells: usize, bucket_bits: u32) -> Packing {
        assert!(cells <= MAX_CELLS, "{cells} cells do not pack");
        let binary = (cells <= 32).then_some(cells as u32);
        let key_bits = match binary {
            Some(n) => (2 * n).max(1),
            None => 128 - (3u128.pow(cells as u32) - 1).leading_zeros(),
        };
        let key_mask = if key_bits >= 64 {
            u64::MAX
        } else {
            (1 << key_bits) - 1
        };
        Packing {
            binary,
            key_mask,
            shift: key_bits.div_ceil(2),
            bucket_bits: bucket_bits.max(key_bits.saturating_sub(TAG_BITS)),
        }
    }

    pub fn bucket_bits(&self) -> u32 {
        self.bucket_bits
    }

    #[inline(always)]
    fn mix(&self, t: u64) -> u64 {
        let mut x = t.wrapping_mul(C1) & self.key_mask;
        x ^= x >> self.shift;
        x = x.wrapping_mul(C2) & self.key_mask;
        x ^ x >> self.shift
    }

    fn unmix(&self, m: u64) -> u64 {
        let mut x = m ^ m >> self.shift;
        x = x.wrapping_mul(inverse(C2)) & self.key_mask;
        x ^= x >> self.shift;
        x.wrapping_mul(inverse(C1)) & self.key_mask
    }

    /// The bucket and the tag of a canonical key.
    #[inline(always)]
    pub fn locate(&self, k1: u64, k2: u64) -> (usize, u64) {
        let t = match self.binary {
            Some(n) => k1 | k2 << n,
            None => ternary(k1, k2),
        };
        let m = self.mix(t);
        (
            (m & ((1u64 << self.bucket_bits) - 1)) as usize,
            m >> self.bucket_bits,
        )
    }

    /// The key whose entry in bucket `bucket` has tag `tag`.
    fn key(&self, bucket: usize, tag: u64) -> (u64, u64) {
        let t = self.unmix(tag << self.bucket_bits | bucket as u64);
        match self.binary {
            Some(n) => (t & ((1u64 << n) - 1), t >> n),
            None => from_ternary(t),
        }
    }
}

/// Eight one-word entries. All zeros is a valid, vacant bucket.
#[repr(C, align(64))]
pub struct PackedBucket {
    words: [AtomicU64; SLOTS],
}

/// An entry's word: tag, empty cells, move, interval (0: vacant).
fn word(tag: u64, lo: i8, hi: i8, mv: u8, empty: u8) -> u64 {
    let mv = if usize::from(mv) < MAX_CELLS {
        u64::from(mv)
    } else {
        NO_MOVE
    };
    tag << DATA_BITS | u64::from(empty & 63) << 9 | mv << 3 | interval_code(lo, hi)
}

/// The interval code of a word (0: vacant).
#[inline(always)]
fn code(w: u64) -> usize {
    (w & 7) as usize
}

fn empty_of(w: u64) -> u8 {
    (w >> 9 & 63) as u8
}

/// P1's interval and the move (255: none) of a used word.
#[inline(always)]
fn fields(w: u64) -> (i8, i8, u8) {
    let (lo, hi) = INTERVALS[code(w)];
    let mv = (w >> 3 & 63) as u8;
    (lo, hi, if u64::from(mv) == NO_MOVE { 255 } else { mv })
}

impl PackedBucket {
    #[inline(always)]
    fn read(&self) -> [u64; SLOTS] {
        std::array::from_fn(|i| self.words[i].load(Ordering::Relaxed))
    }

    /// P1's interval and best move stored for the key with tag `tag`.
    #[inline(always)]
    pub fn probe(&self, tag: u64) -> Option<(i8, i8, u8)> {
        self.read()
            .into_iter()
            .find(|&w| code(w) != 0 && w >> DATA_BITS == tag)
            .map(fields)
    }

    /// Records `lo..=hi` for the key with tag `tag`: intersected with its
    /// entry if it has one, else in a vacant slot, else in place of the
    /// entry with the fewest empty cells (the cheapest to search again).
    /// Two threads storing into one bucket at once can lose one of the two
    /// stores (the table then knows less, never something false).
    #[inline(always)]
    pub fn store(&self, tag: u64, lo: i8, hi: i8, mv: u8, empty: u8) {
        let words = self.read();
        if let Some(i) = words
            .iter()
            .position(|&w| code(w) != 0 && w >> DATA_BITS == tag)
        {
            let (lo, hi, mv) = merge(fields(words[i]), (lo, hi, mv));
            self.words[i].store(word(tag, lo, hi, mv, empty), Ordering::Relaxed);
            return;
        }
        let victim = words.iter().position(|&w| code(w) == 0).unwrap_or_else(|| {
            (0..SLOTS)
                .min_by_key(|&i| empty_of(words[i]))
                .expect("a bucket has slots")
        });
        self.words[victim].store(word(tag, lo, hi, mv, empty), Ordering::Relaxed);
    }

    /// The used entries of bucket number `bucket`, with their keys.
    pub fn entries(
        &self,
        packing: &Packing,
        bucket: usize,
        min_empty: u8,
        f: &mut impl FnMut(&TableEntry),
    ) {
        for w in self.read() {
            if code(w) != 0 && empty_of(w) >= min_empty {
                let (k1, k2) = packing.key(bucket, w >> DATA_BITS);
                let (lo, hi, mv) = fields(w);
                f(&TableEntry {
                    k1,
                    k2,
                    lo,
                    hi,
                    mv,
                    empty: empty_of(w),
                });
            }
        }
    }

    /// Adds the used entries' empty-cell counts to `counts`.
    pub fn count_by_empty(&self, counts: &mut [u64; 65]) {
        for w in self.read() {
            if code(w) != 0 {
                counts[usize::from(empty_of(w))] += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn random_position(cells: usize, next: &mut impl FnMut() -> u64) -> (u64, u64) {
        let (mut p1, mut p2) = (0u64, 0u64);
        for c in 0..cells {
            match next() % 3 {
                1 => p1 |= 1 << c,
                2 => p2 |= 1 << c,
                _ => {}
            }
        }
        (p1, p2)
    }

    /// Every step of the key's packing inverts: base 3, the mix, and the
    /// split into bucket and tag, on boards of 4 to 40 cells (40: a 64-bit
    /// key) and with buckets from few (the tag field's limit raises them) to
    /// many; and distinct positions never share bucket and tag.
    #[test]
    fn a_key_is_recovered_from_its_bucket_and_tag() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for cells in [4, 6, 16, 25, 30, 32, 33, 36, 40] {
            for bits in [1, 10, 20, 27] {
                let p = Packing::new(cells, bits);
                assert!(p.bucket_bits() >= bits);
                let mut seen = std::collections::HashMap::new();
                for _ in 0..20_000 {
                    let (p1, p2) = random_position(cells, &mut next);
                    assert_eq!(from_ternary(ternary(p1, p2)), (p1, p2));
                    let t = ternary(p1, p2);
                    assert_eq!(p.unmix(p.mix(t)), t, "{cells} cells");
                    let (bucket, tag) = p.locate(p1, p2);
                    assert!(bucket < 1 << p.bucket_bits());
                    assert!(tag < 1 << TAG_BITS, "{cells} cells, {bits} bits");
                    assert_eq!(p.key(bucket, tag), (p1, p2), "{cells} cells");
                    if let Some(other) = seen.insert((bucket, tag), (p1, p2)) {
                        assert_eq!(other, (p1, p2), "two positions, one place");
                    }
                }
            }
        }
        // The extremes of the largest board.
        let full = (1u64 << 40) - 1;
        assert_eq!(from_ternary(ternary(0, full)), (0, full));
        assert_eq!(ternary(0, full), 3u64.pow(40) - 1);
    }

    /// A bucket's slots: values narrow, a full bucket gives up its entry
    /// with the fewest empty cells and keeps the new one, every interval and
    /// move round-trips, and "no move" stays none.
    #[test]
    fn a_bucket_keeps_the_expensive_entries() {
        let b = PackedBucket {
            words: Default::default(),
        };
        for (lo, hi) in INTERVALS[1..].iter().copied() {
            b.store(1, lo, hi, 255, 5);
            assert_eq!(b.probe(1), Some((lo, hi, 255)));
            b.words[0].store(0, Ordering::Relaxed);
        }
        // Anything that is not one of the intervals codes as vacant.
        for (lo, hi) in [
            (2, -2),
            (1, 0),
            (0, -1),
            (i8::MAX, i8::MIN),
            (-2, 1),
            (0, 2),
        ] {
            assert_eq!(interval_code(lo, hi), 0, "({lo}, {hi})");
        }
        b.store(2, -1, 1, 7, 9);
        b.store(2, 0, 1, 255, 9);
        b.store(2, -1, 0, 255, 9);
        assert_eq!(b.probe(2), Some((0, 0, 7)));
        // Seven more fill the bucket; the eighth takes the place of tag 2
        // (9 empty cells, the cheapest).
        for tag in 10..10 + SLOTS as u64 {
            b.store(tag, 1, 1, 39, 20 + tag as u8);
        }
        assert_eq!(b.probe(2), None);
        assert!((10..10 + SLOTS as u64).all(|t| b.probe(t) == Some((1, 1, 39))));
        // Then the cheapest is tag 10 (30 empty cells), even for a newcomer
        // with fewer: the newest entry is always kept.
        b.store(99, -1, -1, 0, 3);
        assert_eq!(b.probe(10), None);
        assert_eq!(b.probe(99), Some((-1, -1, 0)));
        assert_eq!(b.probe(11), Some((1, 1, 39)));
    }
}
