//! The proof's bounded memo of decided questions, shared by the extension
//! (`(position, bound)` pairs proven or refuted) and the plain search
//! (`(position, v)`: whether the first player's value is at least `v`).
//!
//! Two generations: entries go into the younger until it holds half the
//! cap, then the older is dropped and the younger takes its place. An
//! entry found in the older moves into the younger, so what the search
//! keeps meeting stays. A forgotten entry is decided again when met: it
//! costs time, never the verdict (each entry is a fact decided below it).
//! Clearing the whole memo when it fills would forget the positions the
//! search is in the middle of, and every entry near the top of a deep
//! search is met again on the way back.

use std::collections::HashMap;
use std::hash::Hash;

/// At most `cap` decided questions, in two generations (see the module).
pub(super) struct Memo<K> {
    young: HashMap<K, bool>,
    old: HashMap<K, bool>,
    half: usize,
    /// Entries dropped with an older generation.
    pub(super) forgotten: u64,
}

impl<K: Hash + Eq + Copy> Memo<K> {
    pub(super) fn new(cap: usize) -> Memo<K> {
        Memo {
            young: HashMap::new(),
            old: HashMap::new(),
            half: (cap / 2).max(1),
            forgotten: 0,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.young.len() + self.old.len()
    }

    pub(super) fn get(&mut self, key: &K) -> Option<bool> {
        if let Some(&known) = self.young.get(key) {
            return Some(known);
        }
        // Moved, not copied: an entry lives in one generation, so the
        // cap holds and `forgotten` counts entries really dropped.
        let known = self.old.remove(key)?;
        self.insert(*key, known);
        Some(known)
    }

    pub(super) fn insert(&mut self, key: K, holds: bool) {
        if self.young.len() >= self.half {
            self.forgotten += self.old.len() as u64;
            self.old = std::mem::take(&mut self.young);
        }
        self.young.insert(key, holds);
    }
}

#[cfg(test)]
mod tests {
    use super::Memo;

    #[test]
    fn the_younger_generation_keeps_what_is_met_again() {
        let mut memo = Memo::new(4);
        memo.insert(1u32, true);
        memo.insert(2, false);
        // The young generation is full (half the cap): 1 and 2 age.
        memo.insert(3, true);
        assert_eq!(memo.get(&1), Some(true), "found in the older, copied young");
        // 3 and 1 fill the young one again; the next insert drops 2.
        memo.insert(4, false);
        assert_eq!(memo.get(&2), None);
        assert_eq!(memo.forgotten, 1);
        assert_eq!(memo.get(&1), Some(true));
        assert_eq!(memo.get(&3), Some(true));
        assert_eq!(memo.get(&4), Some(false));
        assert!(memo.len() <= 4);
    }
}
