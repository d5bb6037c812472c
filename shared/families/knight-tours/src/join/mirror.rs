//! The right states ([`Mirror`]): the sweep's layer before the meeting's
//! right square, turned half a turn and grouped by class. A joined state is
//! checked against every right state of its class by walking the cycle
//! through the ends ([`one_cycle`]), so they are sorted and indexed by
//! class; a set of class prefixes per step of the inner sweep lets it drop
//! at once a state whose taken slots no right state completes.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use orchard_core::FamilyError;

use crate::frontier::{Frontier, EMPTY, MAX_W};
use crate::table::{Packed, WIDE};

use super::interface::{interface, one_cycle};
use super::Meeting;

/// A hasher for the meeting's `u64` class keys: one multiplication by the
/// golden ratio, as the sweep's tables hash their keys (`table::hash`).
/// The standard library's SipHash, safe against keys chosen by an
/// attacker, cost about a tenth of the meeting's time in its two lookups
/// a state; these keys come from the search itself.
#[derive(Default, Clone, Copy)]
struct ClassHasher(u64);

impl Hasher for ClassHasher {
    #[inline(always)]
    fn finish(&self) -> u64 {
        self.0
    }

    #[inline(always)]
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0 ^ x).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
}

type ClassMap<V> = HashMap<u64, V, BuildHasherDefault<ClassHasher>>;
type ClassSet = HashSet<u64, BuildHasherDefault<ClassHasher>>;

/// A right state, turned: its class, the pairing of its ends, its count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Half {
    class: u64,
    pairing: u64,
    /// The count, or [`WIDE`]: then it is in `Mirror::wide`.
    count: u64,
}

/// The right states, turned and grouped by class.
#[derive(Debug, Clone, Default)]
pub struct Mirror {
    halves: Vec<Half>,
    /// Class to the range of `halves` holding it.
    classes: ClassMap<(u32, u32)>,
    wide: HashMap<(u64, u64), u128>,
    /// Per step `k` of the inner sweep, the classes' bits of the slots
    /// taken by then: a joined state whose taken slots need what no right
    /// state gives is dropped at once instead of at the end.
    prefixes: Vec<ClassSet>,
}

impl Mirror {
    /// The right states: `layer` is the sweep's layer before
    /// `meeting.right`, all of it (the layer of the whole board's sweep,
    /// not of a part of it).
    pub fn new(f: &Frontier, m: &Meeting, layer: &Packed) -> Result<Mirror, FamilyError> {
        let w = m.w;
        if layer.len() >= u32::MAX as usize {
            return Err(FamilyError::Capacity(format!(
                "{} right states do not fit the meeting's index",
                layer.len()
            )));
        }
        let mut halves = Vec::with_capacity(layer.len());
        let mut wide = HashMap::new();
        for (key, count) in layer.iter() {
            let s = f.decode(key).expect("keys in a layer decode");
            let mut t = [EMPTY; MAX_W + 1];
            for i in 0..w {
                t[i] = s[w - 1 - i];
            }
            let (class, pairing, _) = interface(&t, w, false);
            let c = match u64::try_from(count) {
                Ok(c) if c != WIDE => c,
                _ => {
                    wide.insert((class, pairing), count);
                    WIDE
                }
            };
            halves.push(Half {
                class,
                pairing,
                count: c,
            });
        }
        halves.sort_unstable_by_key(|h| (h.class, h.pairing));
        // A key is its slots' degrees and the pairing of its ends (see
        // `frontier`), so no two states of a layer turn into the same half
        // (which would also make `wide`'s keys ambiguous).
        debug_assert!(halves
            .windows(2)
            .all(|p| (p[0].class, p[0].pairing) != (p[1].class, p[1].pairing)));
        let mut classes = ClassMap::default();
        let mut start = 0;
        for i in 1..=halves.len() {
            if i == halves.len() || halves[i].class != halves[start].class {
                classes.insert(halves[start].class, (start as u32, i as u32));
                start = i;
            }
        }
        let prefixes: Vec<ClassSet> = m
            .masks
            .iter()
            .map(|&mask| classes.keys().map(|c| c & mask).collect())
            .collect();
        Ok(Mirror {
            halves,
            classes,
            wide,
            prefixes,
        })
    }

    /// Whether some right state's class agrees with `prefix` on the slots
    /// taken by step `k` of the inner sweep.
    #[inline]
    pub(super) fn has_prefix(&self, k: usize, prefix: u64) -> bool {
        self.prefixes[k].contains(&prefix)
    }

    /// Right states held.
    pub fn len(&self) -> usize {
        self.halves.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.halves.is_empty()
    }

    /// Bytes held, about.
    pub fn bytes(&self) -> usize {
        self.halves.capacity() * std::mem::size_of::<Half>()
            + self.classes.capacity() * 24
            + self.wide.capacity() * 48
    }

    /// The sum of the counts of the right states of `class` whose pairing
    /// closes one cycle with `pairing`, and how many were walked.
    #[inline]
    pub(super) fn matching(
        &self,
        class: u64,
        pairing: u64,
        pairs: u32,
    ) -> Result<(u128, u64), FamilyError> {
        let Some(&(a, b)) = self.classes.get(&class) else {
            return Ok((0, 0));
        };
        let mut sum: u128 = 0;
        for h in &self.halves[a as usize..b as usize] {
            if one_cycle(pairing, h.pairing, pairs) {
                let c = if h.count == WIDE {
                    self.wide[&(h.class, h.pairing)]
                } else {
                    u128::from(h.count)
                };
                sum = sum
                    .checked_add(c)
                    .ok_or(FamilyError::Overflow("knight-tours tours"))?;
            }
        }
        Ok((sum, u64::from(b - a)))
    }
}
