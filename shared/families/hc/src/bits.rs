//! Fixed-width bitsets for the `hc` search: bit `i` stands for the number `i`.
//!
//! The search is generic over [`Bits`] so that c <= 4 runs on a single `u128`
//! (h(4) = 67 fits with room for the look-ahead window) while c = 5, 6 use a
//! wider array. Bits shifted past the capacity are dropped: the search never
//! tests a bit at or beyond [`Bits::CAPACITY`] (it stops with an error first).

use std::ops::{BitAnd, BitOr, BitOrAssign, Not};

pub trait Bits:
    Copy + Eq + BitOr<Output = Self> + BitAnd<Output = Self> + Not<Output = Self> + BitOrAssign
{
    /// Number of representable bits.
    const CAPACITY: u32;
    const ZERO: Self;
    fn bit(i: u32) -> Self;
    fn test(&self, i: u32) -> bool;
    /// Shift towards higher numbers by `k` (`k < CAPACITY`).
    fn shl(self, k: u32) -> Self;
    /// Bits `lo..=hi` set (`lo <= hi < CAPACITY`).
    fn range(lo: u32, hi: u32) -> Self;
    fn is_zero(&self) -> bool;
    /// Index of the lowest set bit, if any.
    fn lowest(&self) -> Option<u32>;
    /// This set without its lowest bit.
    fn without_lowest(self) -> Self;
}

impl Bits for u128 {
    const CAPACITY: u32 = 128;
    const ZERO: Self = 0;

    #[inline(always)]
    fn bit(i: u32) -> Self {
        1u128 << i
    }
    #[inline(always)]
    fn test(&self, i: u32) -> bool {
        (*self >> i) & 1 != 0
    }
    #[inline(always)]
    fn shl(self, k: u32) -> Self {
        self << k
    }
    #[inline(always)]
    fn range(lo: u32, hi: u32) -> Self {
        let upto_hi = if hi >= 127 {
            u128::MAX
        } else {
            (1u128 << (hi + 1)) - 1
        };
        upto_hi & !((1u128 << lo) - 1)
    }
    #[inline(always)]
    fn is_zero(&self) -> bool {
        *self == 0
    }
    #[inline(always)]
    fn lowest(&self) -> Option<u32> {
        (*self != 0).then(|| self.trailing_zeros())
    }
    #[inline(always)]
    fn without_lowest(self) -> Self {
        self & self.wrapping_sub(1)
    }
}

/// `64 * W` bits in little-endian words.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Wide<const W: usize>(pub [u64; W]);

impl<const W: usize> BitOr for Wide<W> {
    type Output = Self;
    #[inline(always)]
    fn bitor(mut self, o: Self) -> Self {
        for i in 0..W {
            self.0[i] |= o.0[i];
        }
        self
    }
}

impl<const W: usize> BitOrAssign for Wide<W> {
    #[inline(always)]
    fn bitor_assign(&mut self, o: Self) {
        *self = *self | o;
    }
}

impl<const W: usize> BitAnd for Wide<W> {
    type Output = Self;
    #[inline(always)]
    fn bitand(mut self, o: Self) -> Self {
        for i in 0..W {
            self.0[i] &= o.0[i];
        }
        self
    }
}

impl<const W: usize> Not for Wide<W> {
    type Output = Self;
    #[inline(always)]
    fn not(mut self) -> Self {
        for w in self.0.iter_mut() {
            *w = !*w;
        }
        self
    }
}

impl<const W: usize> Bits for Wide<W> {
    const CAPACITY: u32 = 64 * W as u32;
    const ZERO: Self = Wide([0; W]);

    fn bit(i: u32) -> Self {
        let mut z = Self::ZERO;
        z.0[(i / 64) as usize] = 1 << (i % 64);
        z
    }
    fn test(&self, i: u32) -> bool {
        (self.0[(i / 64) as usize] >> (i % 64)) & 1 != 0
    }
    fn shl(self, k: u32) -> Self {
        let words = (k / 64) as usize;
        let bits = k % 64;
        let mut out = Self::ZERO;
        for i in (words..W).rev() {
            let src = i - words;
            let mut v = self.0[src] << bits;
            if bits != 0 && src > 0 {
                v |= self.0[src - 1] >> (64 - bits);
            }
            out.0[i] = v;
        }
        out
    }
    fn range(lo: u32, hi: u32) -> Self {
        let mut out = Self::ZERO;
        for i in lo..=hi {
            out.0[(i / 64) as usize] |= 1 << (i % 64);
        }
        out
    }
    fn is_zero(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }
    fn lowest(&self) -> Option<u32> {
        self.0
            .iter()
            .enumerate()
            .find(|(_, &w)| w != 0)
            .map(|(i, w)| 64 * i as u32 + w.trailing_zeros())
    }
    fn without_lowest(mut self) -> Self {
        if let Some(w) = self.0.iter_mut().find(|w| **w != 0) {
            *w &= *w - 1;
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The wide bitset must behave exactly like u128 on the bits both hold.
    #[test]
    fn wide_agrees_with_u128() {
        let samples: [u128; 4] = [
            0,
            1,
            0xdead_beef_0123_4567_89ab_cdef_f00d_cafe,
            u128::MAX >> 3,
        ];
        for &a in &samples {
            let w = Wide::<2>([a as u64, (a >> 64) as u64]);
            let back = |x: Wide<2>| x.0[0] as u128 | (x.0[1] as u128) << 64;
            for k in [0, 1, 5, 63, 64, 65, 100, 127] {
                assert_eq!(back(w.shl(k)), a.shl(k), "shl {k}");
                assert_eq!(w.test(k), a.test(k));
            }
            assert_eq!(w.lowest(), a.lowest());
            assert_eq!(back(w.without_lowest()), a.without_lowest());
        }
        for (lo, hi) in [(0, 0), (3, 70), (64, 127), (1, 127)] {
            let w = Wide::<2>::range(lo, hi);
            assert_eq!(w.0[0] as u128 | (w.0[1] as u128) << 64, u128::range(lo, hi));
        }
    }
}
