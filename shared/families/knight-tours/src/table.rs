//! The states of one layer of the sweep and their exact counts, in 16 bytes
//! a state.
//!
//! **Two forms.** A layer is *built* in a [`Table`] (open addressing, linear
//! probing) while the states of the layer before it are expanded, and then
//! *packed* ([`Table::into_packed`]) into a [`Packed`] layer: the same slots
//! moved to the front of their arrays, in place, and the rest given back.
//! The sweep holds one packed layer (being expanded) and one table (being
//! built), never two tables, and it gives the packed layer's memory back
//! piece by piece as it expands it (see `sweep`), so the peak is about the
//! larger of the two layers, not their sum.
//!
//! **Shards.** Both forms are cut into [`SHARDS`] shards by the top bits of
//! the key's hash. A shard grows on its own (by half, not doubling), so a
//! table never holds an old and a new copy of itself at the peak, only one
//! shard's; and a packed layer frees one shard at a time as it is expanded.
//!
//! **Counts.** A slot is a `u64` key and a `u64` count. Counts reach
//! `u64::MAX` only on long boards (the 5 x 20 sweep's do; the 8 x 8 total is
//! below 2^44): a count that does not fit is kept exactly in a side map of
//! `u128` counts (`wide`), and its slot holds [`WIDE`]. Every sum is checked;
//! a count beyond `u128` is an error, never a wrong number.

use std::collections::HashMap;

use orchard_core::FamilyError;

/// No state has this key (its partner bits would be all ones).
const VACANT: u64 = u64::MAX;

/// The slot count of a state whose count is in the side map.
pub const WIDE: u64 = u64::MAX;

/// Shards of a table or a packed layer (a power of two).
pub const SHARDS: usize = 64;
const SHARD_BITS: u32 = SHARDS.trailing_zeros();

/// Smallest shard table.
const MIN_SHARD_SLOTS: usize = 8;

/// A shard table grows when more than `LOAD_NUM / LOAD_DEN` of its slots
/// are taken (linear probing stays short below 0.8), by half its size.
const LOAD_NUM: usize = 4;
const LOAD_DEN: usize = 5;

/// Bytes a side-map entry takes, about (key, count, control byte, spare
/// capacity of the map).
const WIDE_ENTRY_BYTES: usize = 48;

/// One state: its packed key (see `frontier`) and its count, or [`WIDE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct Slot {
    pub key: u64,
    pub count: u64,
}

const EMPTY_SLOT: Slot = Slot {
    key: VACANT,
    count: 0,
};

/// Bytes of one slot.
pub const SLOT_BYTES: usize = std::mem::size_of::<Slot>();

#[inline(always)]
fn hash(key: u64) -> u64 {
    key.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

#[inline(always)]
fn shard_of(h: u64) -> usize {
    (h >> (64 - SHARD_BITS)) as usize
}

/// Slot `h` maps to in a shard of `cap` slots (the bits below the shard's,
/// scaled to `cap`: any capacity, not only powers of two).
#[inline(always)]
fn home(h: u64, cap: usize) -> usize {
    ((u128::from(h << SHARD_BITS) * cap as u128) >> 64) as usize
}

/// Adds `count` to the exact count of `key` in `wide`, whose slot held
/// `slot` (a `u64` count, or [`WIDE`] when it is in `wide` already); the
/// new slot count.
#[inline]
fn add_count(
    wide: &mut HashMap<u64, u128>,
    key: u64,
    slot: u64,
    count: u128,
) -> Result<u64, FamilyError> {
    let overflow = FamilyError::Overflow("knight-tours state count");
    if slot == WIDE {
        let c = wide
            .get_mut(&key)
            .expect("a wide slot has a side-map entry");
        *c = c.checked_add(count).ok_or(overflow)?;
        return Ok(WIDE);
    }
    let sum = u128::from(slot).checked_add(count).ok_or(overflow)?;
    match u64::try_from(sum) {
        Ok(s) if s != WIDE => Ok(s),
        _ => {
            wide.insert(key, sum);
            Ok(WIDE)
        }
    }
}

#[derive(Debug, Clone)]
struct Shard {
    slots: Vec<Slot>,
    len: usize,
}

impl Shard {
    fn with_slots(cap: usize) -> Shard {
        Shard {
            slots: vec![EMPTY_SLOT; cap.max(MIN_SHARD_SLOTS)],
            len: 0,
        }
    }

    /// The slot of `key` (its own, or the vacant one where it would go).
    #[inline(always)]
    fn find(&self, h: u64, key: u64) -> usize {
        let cap = self.slots.len();
        let mut i = home(h, cap);
        loop {
            let k = self.slots[i].key;
            if k == key || k == VACANT {
                return i;
            }
            i += 1;
            if i == cap {
                i = 0;
            }
        }
    }

    fn grow(&mut self) {
        let cap = self.slots.len();
        let old = std::mem::replace(&mut self.slots, vec![EMPTY_SLOT; cap + cap / 2]);
        for s in old.into_iter().filter(|s| s.key != VACANT) {
            let i = self.find(hash(s.key), s.key);
            self.slots[i] = s;
        }
    }
}

/// A layer being built: states and counts, summed as they are added.
#[derive(Debug, Clone)]
pub struct Table {
    shards: Vec<Shard>,
    wide: HashMap<u64, u128>,
    len: usize,
}

impl Table {
    /// An empty table sized for about `expected` states (it grows past
    /// that a shard at a time).
    pub fn with_capacity(expected: usize) -> Table {
        let per_shard = expected.div_ceil(SHARDS) * LOAD_DEN / LOAD_NUM + 1;
        Table {
            shards: (0..SHARDS).map(|_| Shard::with_slots(per_shard)).collect(),
            wide: HashMap::new(),
            len: 0,
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

    /// Bytes held: every slot, taken or not, and the side map.
    pub fn bytes(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.slots.capacity() * SLOT_BYTES)
            .sum::<usize>()
            + self.wide.capacity() * WIDE_ENTRY_BYTES
    }

    /// Adds `count` to the state `key` (a new state starts at 0).
    #[inline]
    pub fn add(&mut self, key: u64, count: u128) -> Result<(), FamilyError> {
        debug_assert_ne!(key, VACANT);
        let h = hash(key);
        let shard = &mut self.shards[shard_of(h)];
        if (shard.len + 1) * LOAD_DEN > shard.slots.len() * LOAD_NUM {
            shard.grow();
        }
        let i = shard.find(h, key);
        let slot = &mut shard.slots[i];
        if slot.key == VACANT {
            slot.key = key;
            slot.count = add_count(&mut self.wide, key, 0, count)?;
            shard.len += 1;
            self.len += 1;
        } else {
            slot.count = add_count(&mut self.wide, key, slot.count, count)?;
        }
        Ok(())
    }

    /// The layer packed: every shard's states moved to the front of its
    /// array in place, the vacant rest given back.
    pub fn into_packed(self) -> Packed {
        let shards = self
            .shards
            .into_iter()
            .map(|shard| {
                let mut slots = shard.slots;
                let mut taken = 0;
                for i in 0..slots.len() {
                    if slots[i].key != VACANT {
                        slots[taken] = slots[i];
                        taken += 1;
                    }
                }
                debug_assert_eq!(taken, shard.len);
                slots.truncate(taken);
                slots.shrink_to_fit();
                slots
            })
            .collect();
        Packed {
            shards,
            wide: self.wide,
            len: self.len,
        }
    }
}

/// A layer built: its states packed, 16 bytes each, in no useful order.
#[derive(Debug, Clone, Default)]
pub struct Packed {
    shards: Vec<Vec<Slot>>,
    wide: HashMap<u64, u128>,
    len: usize,
}

impl Packed {
    /// The states given (repeated keys summed; counts checked).
    pub fn from_states(states: &[(u64, u128)]) -> Result<Packed, FamilyError> {
        let mut t = Table::with_capacity(states.len());
        for &(k, c) in states {
            t.add(k, c)?;
        }
        Ok(t.into_packed())
    }

    /// States held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no state is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.capacity() * SLOT_BYTES)
            .sum::<usize>()
            + self.wide.capacity() * WIDE_ENTRY_BYTES
    }

    /// The states and their exact counts.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u128)> + '_ {
        self.shards
            .iter()
            .flatten()
            .map(|s| (s.key, Self::count_of(&self.wide, s)))
    }

    /// Hands the layer to `each` a shard at a time, each shard's memory
    /// given back as soon as `each` returns: the layer is gone afterwards.
    /// `each` gets the shard's states, the side map for their wide counts
    /// ([`Packed::count_of`]), and the bytes the layer still holds,
    /// this shard included.
    pub fn consume<E>(
        self,
        mut each: impl FnMut(&[Slot], &HashMap<u64, u128>, usize) -> Result<(), E>,
    ) -> Result<(), E> {
        let wide_bytes = self.wide.capacity() * WIDE_ENTRY_BYTES;
        let mut held: usize = self
            .shards
            .iter()
            .map(|s| s.capacity() * SLOT_BYTES)
            .sum::<usize>()
            + wide_bytes;
        for shard in self.shards {
            each(&shard, &self.wide, held)?;
            held -= shard.capacity() * SLOT_BYTES;
        }
        Ok(())
    }

    /// The exact count of `s`, given the layer's side map (`consume` hands
    /// it over).
    #[inline(always)]
    pub fn count_of(wide: &HashMap<u64, u128>, s: &Slot) -> u128 {
        if s.count == WIDE {
            wide[&s.key]
        } else {
            u128::from(s.count)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_and_grows() {
        let mut t = Table::with_capacity(1);
        for i in 0..100_000u64 {
            t.add(i % 7_777, 1).unwrap();
        }
        assert_eq!(t.len(), 7_777);
        let p = t.into_packed();
        assert_eq!(p.len(), 7_777);
        let total: u128 = p.iter().map(|(_, c)| c).sum();
        assert_eq!(total, 100_000);
        let mut keys: Vec<u64> = p.iter().map(|(k, _)| k).collect();
        keys.sort_unstable();
        assert_eq!(keys, (0..7_777).collect::<Vec<_>>());
        assert_eq!(p.bytes(), 7_777 * SLOT_BYTES, "packed exactly");
    }

    #[test]
    fn counts_past_u64_go_to_the_side_map_exactly() {
        let big = u128::from(u64::MAX);
        let mut t = Table::with_capacity(4);
        // 5: reaches u64::MAX - 1 exactly (still a plain slot), then one more
        // makes u64::MAX (the marker value: must go wide), then more.
        t.add(5, big - 2).unwrap();
        t.add(5, 1).unwrap();
        t.add(6, big - 1).unwrap();
        t.add(7, 3).unwrap();
        let plain = t.clone().into_packed();
        assert_eq!(plain.iter().find(|&(k, _)| k == 5).unwrap().1, big - 1);
        assert!(plain.wide.is_empty());
        t.add(5, 1).unwrap();
        t.add(5, big * 1000).unwrap();
        // A count beyond u64 on its first add.
        t.add(8, big * 3 + 7).unwrap();
        // Wide counts keep summing with small ones.
        t.add(8, 1).unwrap();
        let p = t.into_packed();
        let get = |k: u64| p.iter().find(|&(x, _)| x == k).unwrap().1;
        assert_eq!(get(5), big + big * 1000);
        assert_eq!(get(6), big - 1);
        assert_eq!(get(7), 3);
        assert_eq!(get(8), big * 3 + 8);
        assert_eq!(p.wide.len(), 2);
        let mut seen = 0u128;
        p.consume(|shard, wide, _| {
            for s in shard {
                seen += Packed::count_of(wide, s);
            }
            Ok::<(), ()>(())
        })
        .unwrap();
        assert_eq!(seen, big + big * 1000 + big - 1 + 3 + big * 3 + 8);
        // Past u128: an error, never a wrapped count.
        let mut t = Table::with_capacity(1);
        t.add(9, u128::MAX).unwrap();
        assert!(matches!(t.add(9, 1), Err(FamilyError::Overflow(_))));
    }

    #[test]
    fn consume_gives_back_memory_shard_by_shard() {
        let p = Packed::from_states(&(0..10_000u64).map(|k| (k, 2)).collect::<Vec<_>>()).unwrap();
        let total = p.bytes();
        let mut helds = Vec::new();
        let mut n = 0;
        p.consume(|shard, _, held| {
            helds.push(held);
            n += shard.len();
            Ok::<(), ()>(())
        })
        .unwrap();
        assert_eq!(n, 10_000);
        assert_eq!(helds[0], total);
        assert!(helds.windows(2).all(|w| w[1] < w[0]));
    }
}
