//! n-gram closed position sets over an *augmented* tape alphabet, the
//! variants of bbchallenge's NGramCPS decider that settle what the plain
//! binary one (in [`crate::decide`]) cannot: each cell carries, besides its
//! bit, what the head did there (The bbchallenge Collaboration 2025,
//! section "n-gram Closed Position Set", "Tape alphabet augmentations"):
//!
//! * **history** of length `h`: the last `h` (state, symbol read) pairs of
//!   the head's visits to the cell, newest first;
//! * **LRU**: every (state, symbol read) pair seen at the cell once, most
//!   recently seen first.
//!
//! The augmented machine runs exactly as the plain one (its transitions
//! look at the bit only), so if its closed set holds no undefined
//! transition, neither run ever reaches one. The closure is the one of
//! [`crate::decide`]'s plain sets, with cells named by interned symbols: a
//! local configuration is (left n-gram, state, cell read, right n-gram), an
//! n-gram `k` interned symbols packed 16 bits each, slot 0 next to the
//! head; each side's set maps its n-grams' `k - 1` cells next to the head
//! to the far cells seen with them. The containers live in the workspace
//! and are cleared, not freed, between machines.
//!
//! An n-gram is a `u128`: its `k` slots are `128 / k` bits wide (16 at
//! most), so longer n-grams leave room for fewer distinct symbols; a set
//! that needs more gives up. History of length 0 is the plain binary
//! alphabet, for n-grams longer than the bitset closure of
//! [`crate::decide`] can hold.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use crate::machine::{Table, Transition};

/// How cells are augmented.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Augment {
    /// The last `h` visits (at most 10; 0: the bit alone).
    History(u32),
    /// Each (state, read) pair once, most recent first.
    Lru,
}

/// A multiplicative hasher for the small integer keys here (SipHash is
/// not needed: the keys are not adversarial).
#[derive(Default, Clone, Copy)]
pub struct Mix(u64);

impl Hasher for Mix {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u128(&mut self, x: u128) {
        self.write_u64(x as u64);
        self.write_u64((x >> 64) as u64);
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_u32(&mut self, x: u32) {
        self.write_u64(u64::from(x));
    }
    fn write_u16(&mut self, x: u16) {
        self.write_u64(u64::from(x));
    }
    fn write_u8(&mut self, x: u8) {
        self.write_u64(u64::from(x));
    }
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
}

type Build = BuildHasherDefault<Mix>;

/// The reusable containers of the augmented closed position sets.
#[derive(Default)]
pub struct Cps {
    /// Interned symbols: augmented symbol -> id, and back.
    ids: HashMap<u64, u16, Build>,
    symbols: Vec<u64>,
    /// Most symbols a slot can name (`2^width`).
    max_symbols: usize,
    /// Bits of one slot of an n-gram.
    width: u32,
    /// Local configurations met, and their list.
    seen: HashSet<Config, Build>,
    list: Vec<Config>,
    /// Each side's n-grams, and its near cells -> far cells.
    grams: [HashSet<u128, Build>; 2],
    far: [HashMap<u128, Vec<u16>, Build>; 2],
}

/// A local configuration: left n-gram, right n-gram, symbol read, state.
type Config = (u128, u128, u16, u8);

/// Longest n-grams of [`Cps::decide`].
pub const MAX_K: u32 = 24;

/// The new augmented symbol of a cell the head leaves in state `state`,
/// having read `sym`, writing `write`.
fn update(sym: u64, state: u8, write: u8, how: Augment) -> u64 {
    let pair = 1 + 2 * u64::from(state) + (sym & 1); // 1..=8: 4 bits
    let list = sym >> 1;
    let list = match how {
        Augment::History(h) => ((list << 4) | pair) & ((1u64 << (4 * h)) - 1),
        Augment::Lru => {
            // Drop `pair` where it is, then put it first.
            let mut rest = 0u64;
            let mut shift = 0;
            let mut l = list;
            while l != 0 {
                let p = l & 15;
                if p != pair {
                    rest |= p << shift;
                    shift += 4;
                }
                l >>= 4;
            }
            (rest << 4) | pair
        }
    };
    (list << 1) | u64::from(write)
}

impl Cps {
    /// Local configurations the last [`Cps::decide`] met.
    pub fn configs(&self) -> usize {
        self.list.len()
    }

    fn intern(&mut self, sym: u64) -> Option<u16> {
        if let Some(&id) = self.ids.get(&sym) {
            return Some(id);
        }
        if self.symbols.len() >= self.max_symbols {
            return None;
        }
        let id = self.symbols.len() as u16;
        self.ids.insert(sym, id);
        self.symbols.push(sym);
        Some(id)
    }

    /// Adds n-gram `g` (of `k` cells) to side `side`; true if new.
    fn add_gram(&mut self, side: usize, g: u128, k: u32) -> bool {
        if !self.grams[side].insert(g) {
            return false;
        }
        let near = g & ((1u128 << (self.width * (k - 1))) - 1);
        let far = (g >> (self.width * (k - 1))) as u16;
        self.far[side].entry(near).or_default().push(far);
        true
    }

    fn add_config(&mut self, c: Config) -> bool {
        if self.seen.insert(c) {
            self.list.push(c);
            true
        } else {
            false
        }
    }

    /// Whether the closed set with n-grams of `k` cells (2..=[`MAX_K`])
    /// of the machine augmented by `how` avoids every undefined
    /// transition, meeting at most `gas` local configurations.
    pub fn decide(&mut self, table: &Table, k: u32, how: Augment, gas: usize) -> bool {
        assert!((2..=MAX_K).contains(&k));
        let w = (128 / k).min(16);
        self.width = w;
        self.max_symbols = 1 << w;
        self.ids.clear();
        self.symbols.clear();
        self.seen.clear();
        self.list.clear();
        for side in 0..2 {
            self.grams[side].clear();
            for v in self.far[side].values_mut() {
                v.clear();
            }
        }
        let mask = if w * k == 128 {
            u128::MAX
        } else {
            (1u128 << (w * k)) - 1
        };
        let zero = self.intern(0).expect("the first symbol");
        debug_assert_eq!(zero, 0);
        // n-grams of blank cells are 0 (id 0 in every slot).
        self.add_gram(0, 0, k);
        self.add_gram(1, 0, k);
        self.add_config((0, 0, 0, 0));
        loop {
            let mut changed = false;
            let mut i = 0;
            while i < self.list.len() {
                let (left, right, mid, state) = self.list[i];
                i += 1;
                if self.list.len() > gas {
                    return false;
                }
                let sym = self.symbols[mid as usize];
                let Some(t) = Transition::decode(table[2 * state as usize + (sym & 1) as usize])
                else {
                    return false;
                };
                let Some(written) = self.intern(update(sym, state, t.write, how)) else {
                    return false;
                };
                // Side 0 is the left, 1 the right.
                let (from, into, leaving, entering) = if t.right {
                    (left, right, 0, 1)
                } else {
                    (right, left, 1, 0)
                };
                changed |= self.add_gram(leaving, from, k);
                let behind = ((from << w) | u128::from(written)) & mask;
                let read = (into & ((1 << w) - 1)) as u16;
                let near = into >> w;
                let Some(fars) = self.far[entering].get(&near) else {
                    continue;
                };
                // The entering side's list does not change in this loop
                // (only the leaving side's may).
                for j in 0..fars.len() {
                    let far = self.far[entering][&near][j];
                    let ahead = near | (u128::from(far) << (w * (k - 1)));
                    let c = if t.right {
                        (behind, ahead, read, t.next)
                    } else {
                        (ahead, behind, read, t.next)
                    };
                    changed |= self.add_config(c);
                }
            }
            if !changed {
                return true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histories_keep_the_last_visits() {
        // Read 0 in A, write 1: history [(A,0)].
        let s = update(0, 0, 1, Augment::History(2));
        assert_eq!(s, (1 << 1) | 1);
        // Read that 1 in C (state 2), write 0: [(C,1), (A,0)].
        let s2 = update(s, 2, 0, Augment::History(2));
        assert_eq!(s2 >> 1, (1 << 4) | (1 + 4 + 1));
        assert_eq!(s2 & 1, 0);
        // A third visit drops the oldest.
        let s3 = update(s2, 1, 1, Augment::History(2));
        assert_eq!(s3 >> 1, ((1 + 4 + 1) << 4) | (1 + 2));
    }

    #[test]
    fn lru_moves_a_pair_to_the_front() {
        let a0 = update(0, 0, 1, Augment::Lru); // [(A,0)]
        let b1 = update(a0, 1, 0, Augment::Lru); // [(B,1), (A,0)]
        assert_eq!(b1 >> 1, (1 << 4) | (1 + 2 + 1));
        let a0again = update(b1, 0, 1, Augment::Lru); // reads 0 in A: [(A,0), (B,1)]
        assert_eq!(a0again >> 1, ((1 + 2 + 1) << 4) | 1);
    }
}
