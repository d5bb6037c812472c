//! Plain n-gram closed position sets (see [`crate::decide`]): the local
//! configurations closed under the machine's steps, the far cells taken
//! from the n-grams met so far.

use crate::decide::Workspace;
use crate::machine::{Table, Transition};

impl Workspace {
    /// The n-gram closed position set with n-grams of `k` cells: true if
    /// the set of local configurations (the `k` cells left of the head, the
    /// state, the cell read, the `k` cells right of it) closed under the
    /// machine's steps holds no undefined transition.
    ///
    /// An n-gram is a `k`-bit number, bit 0 the cell next to the head.
    /// Invariant of the real runs: the local configuration is in the set,
    /// and every `k` consecutive cells left (right) of the head that do not
    /// touch it are an n-gram of the left (right) set. Moving right, the
    /// left n-gram that was next to the head joins the left set, the new
    /// left one is it shifted with the written cell, the new cell read is
    /// bit 0 of the right n-gram, and the new right n-gram is any of the
    /// right set that continues the old one's bits `1..k`. Sets only grow:
    /// passes over the configurations are repeated until none of the three
    /// changes.
    pub(crate) fn ngram_cps(&mut self, table: &Table, k: u32) -> bool {
        let mask = (1u32 << k) - 1;
        let key = |left: u32, state: u8, read: u8, right: u32| -> u32 {
            ((((left << k) | right) << 4) | (u32::from(state) << 1)) | u32::from(read)
        };
        for &c in &self.cps_list {
            self.cps_seen[c as usize / 64] &= !(1u64 << (c % 64));
        }
        self.cps_list.clear();
        self.cps_left.fill(0);
        self.cps_right.fill(0);
        self.cps_left[0] = 1;
        self.cps_right[0] = 1;
        let start = key(0, 0, 0, 0);
        self.cps_seen[start as usize / 64] |= 1u64 << (start % 64);
        self.cps_list.push(start);
        loop {
            let mut changed = false;
            let mut i = 0;
            while i < self.cps_list.len() {
                let c = self.cps_list[i];
                i += 1;
                let read = (c & 1) as u8;
                let state = ((c >> 1) & 7) as u8;
                let right = (c >> 4) & mask;
                let left = (c >> (4 + k)) & mask;
                let Some(t) = Transition::decode(table[2 * state as usize + read as usize]) else {
                    return false;
                };
                // The side the head leaves, the side it enters.
                let (from, into, sets) = if t.right {
                    (left, right, (&mut self.cps_left, &mut self.cps_right))
                } else {
                    (right, left, (&mut self.cps_right, &mut self.cps_left))
                };
                let (leaving, entering) = sets;
                changed |= set_bit(leaving, from);
                let behind = ((from << 1) | u32::from(t.write)) & mask;
                let read2 = (into & 1) as u8;
                for far in 0..2u32 {
                    let ahead = (into >> 1) | (far << (k - 1));
                    if !get_bit(entering, ahead) {
                        continue;
                    }
                    let next = if t.right {
                        key(behind, t.next, read2, ahead)
                    } else {
                        key(ahead, t.next, read2, behind)
                    };
                    if set_bit(&mut self.cps_seen, next) {
                        self.cps_list.push(next);
                        changed = true;
                    }
                }
            }
            if !changed {
                return true;
            }
        }
    }
}

/// Sets bit `i`; true if it was not set.
#[inline]
fn set_bit(bits: &mut [u64], i: u32) -> bool {
    let (w, b) = (i as usize / 64, 1u64 << (i % 64));
    let new = bits[w] & b == 0;
    bits[w] |= b;
    new
}

#[inline]
fn get_bit(bits: &[u64], i: u32) -> bool {
    bits[i as usize / 64] & (1u64 << (i % 64)) != 0
}
