//! A state of the window as the other half sees it: which slots still need
//! edges across the cut, and how (its *class*: two bits a slot), and which
//! path ends it pairs. A joined state and a right state close tours exactly
//! when their classes agree and their pairings close into one cycle
//! ([`one_cycle`]); the inner sweep, the right states and the meeting all
//! read states this way, so it stands apart from each.

use crate::frontier::{Slots, EMPTY, FULL};

#[inline(always)]
pub(super) fn degree(x: u8) -> u64 {
    match x {
        EMPTY => 0,
        FULL => 2,
        _ => 1,
    }
}

/// The class of `s` seen from the right (`need`: the degrees the right
/// must add, `2 - degree`; otherwise the degrees themselves) and the
/// pairing of its ends: the ends numbered in slot order, entry `k` (4 bits)
/// the number of the end paired with end `k`. Also the number of pairs.
#[inline]
pub(super) fn interface(s: &Slots, w: usize, need: bool) -> (u64, u64, u32) {
    let mut class = 0u64;
    let mut pairing = 0u64;
    let mut first_end = [u8::MAX; 16];
    let mut ends = 0u64;
    for (i, &x) in s.iter().enumerate().take(w) {
        let d = degree(x);
        let c = if need { 2 - d } else { d };
        class |= c << (2 * i);
        if d == 1 {
            let l = x as usize;
            if first_end[l] == u8::MAX {
                first_end[l] = ends as u8;
            } else {
                let k = u64::from(first_end[l]);
                pairing |= k << (4 * ends) | ends << (4 * k);
            }
            ends += 1;
        }
    }
    (class, pairing, (ends / 2) as u32)
}

/// The class of `s` seen from the right ([`interface`]'s first part
/// alone, without the pairing).
#[inline]
pub(super) fn need_class(s: &Slots, w: usize) -> u64 {
    let mut class = 0u64;
    for (i, &x) in s.iter().enumerate().take(w) {
        class |= (2 - degree(x)) << (2 * i);
    }
    class
}

/// Whether the paths of two pairings of the same `pairs * 2` ends close
/// into one cycle through all of them.
#[inline(always)]
pub fn one_cycle(a: u64, b: u64, pairs: u32) -> bool {
    let mut x = 0u64;
    let mut steps = 0;
    loop {
        let y = (a >> (4 * x)) & 15;
        x = (b >> (4 * y)) & 15;
        steps += 1;
        if x == 0 {
            return steps == pairs;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_cycle_walks_the_ends() {
        // Ends 0..4: (0 1)(2 3) against (1 2)(3 0) is one cycle; against
        // (0 1)(2 3) two.
        let a = 1 | 3 << 8 | 2 << 12;
        let b_one = 3 | 2 << 4 | 1 << 8;
        assert!(one_cycle(a, b_one, 2));
        assert!(!one_cycle(a, a, 2));
        // One pair against itself: a cycle of two edges-paths.
        assert!(one_cycle(1, 1, 1));
    }
}
