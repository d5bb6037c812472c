//! One layer of the draws DP: a map from packed states (`[u64; W]`) to the
//! number of colourings reaching them, as an open-addressing table with
//! linear probing. A std `HashMap` costs about twice as much per insert
//! here (its SipHash, and its byte-wise hashing of arrays); the keys are
//! fixed-width words and the counts are never zero, so a zero count marks a
//! free slot and nothing else is stored.

/// A count the DP adds with overflow checks: `u64` when the colourings
/// below a unit cannot exceed it (the common case; a quarter less memory per
/// state than `u128`), else `u128`.
pub trait Count: Copy + Eq + Default + std::fmt::Debug {
    const ONE: Self;
    fn checked_add(self, other: Self) -> Option<Self>;
    fn wide(self) -> u128;
}

impl Count for u64 {
    const ONE: u64 = 1;
    #[inline(always)]
    fn checked_add(self, other: u64) -> Option<u64> {
        u64::checked_add(self, other)
    }
    fn wide(self) -> u128 {
        u128::from(self)
    }
}

impl Count for u128 {
    const ONE: u128 = 1;
    #[inline(always)]
    fn checked_add(self, other: u128) -> Option<u128> {
        u128::checked_add(self, other)
    }
    fn wide(self) -> u128 {
        self
    }
}

/// The states of one DP step and their counts.
pub struct Layer<const W: usize, V: Count> {
    keys: Vec<[u64; W]>,
    vals: Vec<V>,
    len: usize,
    /// Capacity minus one (a power of two minus one).
    mask: usize,
}

/// The table grows past this load (in tenths).
const MAX_LOAD_TENTHS: usize = 7;

#[inline(always)]
fn hash<const W: usize>(key: &[u64; W]) -> u64 {
    let mut h = 0u64;
    for &w in key {
        h = (h ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29);
    }
    (h ^ (h >> 32)).wrapping_mul(0xbf58_476d_1ce4_e5b9)
}

impl<const W: usize, V: Count> Layer<W, V> {
    /// A table that holds `states` states without growing.
    pub fn with_states(states: usize) -> Self {
        let cap = (states * 10 / MAX_LOAD_TENTHS + 1)
            .next_power_of_two()
            .max(16);
        Layer {
            keys: vec![[0; W]; cap],
            vals: vec![V::default(); cap],
            len: 0,
            mask: cap - 1,
        }
    }

    /// Bytes a table sized for `states` states takes.
    pub fn bytes_for(states: usize) -> usize {
        let cap = (states * 10 / MAX_LOAD_TENTHS + 1)
            .next_power_of_two()
            .max(16);
        cap * Self::slot_bytes()
    }

    pub fn slot_bytes() -> usize {
        std::mem::size_of::<[u64; W]>() + std::mem::size_of::<V>()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Bytes held by the table now.
    pub fn bytes(&self) -> usize {
        self.keys.len() * Self::slot_bytes()
    }

    /// Empties the table, keeping its memory if it is at least the size
    /// `states` needs, else reallocating to that size.
    pub fn reset(&mut self, states: usize) {
        let want = (states * 10 / MAX_LOAD_TENTHS + 1)
            .next_power_of_two()
            .max(16);
        if self.keys.len() >= want && self.keys.len() <= 4 * want {
            self.vals.fill(V::default());
            self.len = 0;
        } else {
            // Free the old table before allocating the new one.
            *self = Self::with_states(0);
            *self = Self::with_states(states);
        }
    }

    /// Whether the next add of a new state doubles the table (while it
    /// rehashes, the old and the new table, three times its bytes, live).
    #[inline(always)]
    pub fn grows_on_add(&self) -> bool {
        (self.len + 1) * 10 > (self.mask + 1) * MAX_LOAD_TENTHS
    }

    /// Adds `v` (non-zero) to the count of `key`; `None` on overflow.
    #[inline(always)]
    pub fn add(&mut self, key: [u64; W], v: V) -> Option<()> {
        if self.grows_on_add() {
            self.grow();
        }
        let mut i = hash(&key) as usize & self.mask;
        loop {
            if self.vals[i] == V::default() {
                self.keys[i] = key;
                self.vals[i] = v;
                self.len += 1;
                return Some(());
            }
            if self.keys[i] == key {
                self.vals[i] = self.vals[i].checked_add(v)?;
                return Some(());
            }
            i = (i + 1) & self.mask;
        }
    }

    fn grow(&mut self) {
        let mut bigger = Self::with_states(2 * self.len.max(8));
        for (k, v) in self.iter() {
            bigger.add(*k, v).expect("a count already held fits");
        }
        *self = bigger;
    }

    /// Every state and its count, in table order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u64; W], V)> + '_ {
        self.keys
            .iter()
            .zip(self.vals.iter())
            .filter(|(_, &v)| v != V::default())
            .map(|(k, &v)| (k, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_merge_and_grow() {
        let mut t: Layer<2, u64> = Layer::with_states(1);
        for i in 0..1000u64 {
            t.add([i % 300, i % 7], 1).unwrap();
        }
        // i mod 300 and i mod 7 together repeat with period 2100 > 1000.
        assert_eq!(t.len(), 1000);
        for i in 0..1000u64 {
            t.add([i % 300, i % 7], 2).unwrap();
        }
        assert_eq!(t.len(), 1000);
        assert!(t.iter().all(|(_, v)| v == 3));
        assert_eq!(t.iter().count(), 1000);
        let mut small: Layer<1, u64> = Layer::with_states(4);
        small.add([5], u64::MAX).unwrap();
        assert!(small.add([5], 1).is_none(), "overflow is reported");
        t.reset(10);
        assert_eq!((t.len(), t.iter().count()), (0, 0));
    }
}
