//! Sets of a board's squares, one bit per square: what the solver keeps per
//! position (the squares shut for each player, the stones each square holds)
//! and what it reads per move (the squares through a cell).
//!
//! Three 64-bit words, so that every square of the boards a solve can reach
//! has a bit: 6x7 has 140 squares, 6x8 175 (7x7, 196, keeps its last squares
//! untracked, see [`crate::board::TRACKED_SQUARES`]). A plain array rather
//! than a wider integer: Rust has none past `u128`, and the operations the
//! search needs (lowest member, drop the lowest member, count) are a few word
//! operations each, written branch-free below. The cost of the wider sets
//! against `u128` on the boards both fit is measured in BENCHMARKS.md
//! ("hip-solve", `bench/hip-cost.sh`).

use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Not};

const WORDS: usize = 3;

/// How many squares a set can hold.
pub const CAPACITY: usize = 64 * WORDS;

/// A set of squares: square `i` is bit `i % 64` of word `i / 64`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SquareSet([u64; WORDS]);

impl SquareSet {
    pub const EMPTY: SquareSet = SquareSet([0; WORDS]);
    pub const FULL: SquareSet = SquareSet([u64::MAX; WORDS]);

    /// The squares `0..n` (`n <= CAPACITY`).
    pub fn first(n: usize) -> SquareSet {
        assert!(n <= CAPACITY, "{n} squares: a set holds {CAPACITY}");
        let mut set = SquareSet::EMPTY;
        for (w, word) in set.0.iter_mut().enumerate() {
            let bits = n.saturating_sub(64 * w).min(64);
            *word = if bits == 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            };
        }
        set
    }

    /// The set holding square `i` alone.
    pub fn single(i: usize) -> SquareSet {
        let mut set = SquareSet::EMPTY;
        set.0[i / 64] = 1 << (i % 64);
        set
    }

    #[inline(always)]
    pub fn contains(&self, i: usize) -> bool {
        self.0[i / 64] >> (i % 64) & 1 == 1
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.0.iter().fold(0, |a, &w| a | w) == 0
    }

    /// How many squares the set holds.
    #[inline(always)]
    pub fn count(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }

    /// The smallest square of the set, [`CAPACITY`] if it is empty (as
    /// `trailing_zeros` of an empty integer is its width: tables indexed by
    /// it have one more entry, for none).
    #[inline(always)]
    pub fn first_index(&self) -> usize {
        let [a, b, c] = self.0;
        let tz = if a != 0 {
            a.trailing_zeros()
        } else if b != 0 {
            64 + b.trailing_zeros()
        } else {
            128 + c.trailing_zeros()
        };
        tz as usize
    }

    /// The set without its smallest square: `x & (x - 1)` with the borrow
    /// carried from word to word (a word that borrows nothing subtracts 0
    /// and keeps itself).
    #[inline(always)]
    pub fn without_first(&self) -> SquareSet {
        let [a, b, c] = self.0;
        let borrow_a = u64::from(a == 0);
        let borrow_b = borrow_a & u64::from(b == 0);
        SquareSet([
            a & a.wrapping_sub(1),
            b & b.wrapping_sub(borrow_a),
            c & c.wrapping_sub(borrow_b),
        ])
    }

    /// Whether the set holds at least two squares.
    #[inline(always)]
    pub fn has_two(&self) -> bool {
        !self.without_first().is_empty()
    }

    /// The squares of the set, smallest first.
    pub fn iter(&self) -> impl Iterator<Item = usize> {
        let mut rest = *self;
        std::iter::from_fn(move || {
            (!rest.is_empty()).then(|| {
                let i = rest.first_index();
                rest = rest.without_first();
                i
            })
        })
    }
}

macro_rules! word_op {
    ($op:ident, $f:ident, $assign:ident, $fa:ident, $sym:tt) => {
        impl $op for SquareSet {
            type Output = SquareSet;
            #[inline(always)]
            fn $f(self, o: SquareSet) -> SquareSet {
                SquareSet([self.0[0] $sym o.0[0], self.0[1] $sym o.0[1], self.0[2] $sym o.0[2]])
            }
        }
        impl $assign for SquareSet {
            #[inline(always)]
            fn $fa(&mut self, o: SquareSet) {
                *self = *self $sym o;
            }
        }
    };
}

word_op!(BitAnd, bitand, BitAndAssign, bitand_assign, &);
word_op!(BitOr, bitor, BitOrAssign, bitor_assign, |);
word_op!(BitXor, bitxor, BitXorAssign, bitxor_assign, ^);

impl Not for SquareSet {
    type Output = SquareSet;
    #[inline(always)]
    fn not(self) -> SquareSet {
        SquareSet(self.0.map(|w| !w))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The set as a plain list of its members, the second implementation
    /// each operation is checked against.
    fn members(set: &SquareSet) -> Vec<usize> {
        (0..CAPACITY).filter(|&i| set.contains(i)).collect()
    }

    fn from_members(m: &[usize]) -> SquareSet {
        m.iter()
            .fold(SquareSet::EMPTY, |s, &i| s | SquareSet::single(i))
    }

    /// Sets that stress the word boundaries: members near 0, 63/64,
    /// 127/128 and the top.
    fn a_set() -> impl Strategy<Value = Vec<usize>> {
        prop::collection::vec(
            prop_oneof![
                0..CAPACITY,
                60usize..68,
                124usize..132,
                (CAPACITY - 4)..CAPACITY
            ],
            0..12,
        )
    }

    proptest! {
        #[test]
        fn operations_agree_with_a_list_of_members(a in a_set(), b in a_set()) {
            let (sa, sb) = (from_members(&a), from_members(&b));
            let (mut la, mut lb) = (a.clone(), b.clone());
            la.sort_unstable();
            la.dedup();
            lb.sort_unstable();
            lb.dedup();
            prop_assert_eq!(members(&sa), la.clone());
            prop_assert_eq!(sa.count() as usize, la.len());
            prop_assert_eq!(sa.is_empty(), la.is_empty());
            prop_assert_eq!(sa.first_index(), la.first().copied().unwrap_or(CAPACITY));
            prop_assert_eq!(members(&sa.without_first()), la.get(1..).unwrap_or(&[]).to_vec());
            prop_assert_eq!(sa.has_two(), la.len() >= 2);
            prop_assert_eq!(sa.iter().collect::<Vec<_>>(), la.clone());
            let and: Vec<usize> = la.iter().copied().filter(|i| lb.contains(i)).collect();
            prop_assert_eq!(members(&(sa & sb)), and);
            let mut or = la.clone();
            or.extend(&lb);
            or.sort_unstable();
            or.dedup();
            prop_assert_eq!(members(&(sa | sb)), or);
            let xor: Vec<usize> = (0..CAPACITY).filter(|i| la.contains(i) != lb.contains(i)).collect();
            prop_assert_eq!(members(&(sa ^ sb)), xor);
            let not: Vec<usize> = (0..CAPACITY).filter(|i| !la.contains(i)).collect();
            prop_assert_eq!(members(&!sa), not);
        }
    }

    #[test]
    fn first_n_holds_exactly_the_first_n() {
        for n in [0, 1, 63, 64, 65, 105, 127, 128, 140, 191, 192] {
            assert_eq!(members(&SquareSet::first(n)), (0..n).collect::<Vec<_>>());
        }
    }
}
