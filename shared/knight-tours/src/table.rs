//! The states of one layer of the sweep and their counts: an open-addressing
//! hash table (linear probing, Fibonacci hashing) over two flat arrays, so a
//! state costs 24 bytes of payload and nothing is allocated per insertion.

use orchard_core::FamilyError;

/// No state has this key (its partner bits would be all ones).
const VACANT: u64 = u64::MAX;

/// Keys and exact counts.
pub struct Table {
    keys: Vec<u64>,
    counts: Vec<u128>,
    len: usize,
    /// `64 - log2(capacity)`.
    shift: u32,
}

impl Table {
    /// An empty table with room for about `n` states before it grows.
    pub fn with_capacity(n: usize) -> Table {
        let cap = (n.max(8) * 4 / 3).next_power_of_two();
        Table {
            keys: vec![VACANT; cap],
            counts: vec![0; cap],
            len: 0,
            shift: 64 - cap.trailing_zeros(),
        }
    }

    /// States held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no state is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes taken by the two arrays.
    pub fn bytes(&self) -> usize {
        self.keys.len() * (8 + 16)
    }

    #[inline(always)]
    fn home(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// Adds `count` to the state `key`.
    #[inline]
    pub fn add(&mut self, key: u64, count: u128) -> Result<(), FamilyError> {
        if (self.len + 1) * 4 > self.keys.len() * 3 {
            self.grow();
        }
        let mask = self.keys.len() - 1;
        let mut i = self.home(key);
        loop {
            let k = self.keys[i];
            if k == key {
                self.counts[i] = self.counts[i]
                    .checked_add(count)
                    .ok_or(FamilyError::Overflow("knight-tours state count"))?;
                return Ok(());
            }
            if k == VACANT {
                self.keys[i] = key;
                self.counts[i] = count;
                self.len += 1;
                return Ok(());
            }
            i = (i + 1) & mask;
        }
    }

    fn grow(&mut self) {
        let old = std::mem::replace(self, Table::with_capacity(self.keys.len()));
        for (k, c) in old.iter() {
            // Counts were summed already; re-inserting distinct keys cannot overflow.
            let _ = self.add(k, c);
        }
    }

    /// The states, in slot order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u128)> + '_ {
        self.keys
            .iter()
            .zip(&self.counts)
            .filter(|(&k, _)| k != VACANT)
            .map(|(&k, &c)| (k, c))
    }

    /// Slots of the table (occupied or not), for resumable walks.
    pub fn slots(&self) -> usize {
        self.keys.len()
    }

    /// The state in slot `i`, if any.
    #[inline]
    pub fn slot(&self, i: usize) -> Option<(u64, u128)> {
        let k = self.keys[i];
        (k != VACANT).then(|| (k, self.counts[i]))
    }

    /// Empties the table, keeping its memory.
    pub fn clear(&mut self) {
        self.keys.fill(VACANT);
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_and_grows() {
        let mut t = Table::with_capacity(1);
        for i in 0..10_000u64 {
            t.add(i % 777, 1).unwrap();
        }
        assert_eq!(t.len(), 777);
        let total: u128 = t.iter().map(|(_, c)| c).sum();
        assert_eq!(total, 10_000);
        assert!(t.add(3, u128::MAX).is_err());
        t.clear();
        assert!(t.is_empty());
        assert_eq!(t.iter().count(), 0);
    }
}
