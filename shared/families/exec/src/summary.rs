//! What an external program's explorations add up to, in a form orchard
//! merges without knowing the program: named counters summed exactly,
//! named maxima and minima with the witness that reached them, and capped
//! lists of the smallest witnesses.
//!
//! Every merge is associative and commutative, so the answer does not
//! depend on which worker finished first: sums are sums; of two equal
//! extremes the smaller witness (by bytes) wins; a witness list keeps the
//! smallest [`WITNESSES_KEPT`] distinct witnesses of the union.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use orchard_core::FamilyError;

/// Witnesses kept per list: the smallest, by bytes.
pub const WITNESSES_KEPT: usize = 100;

/// Named figures per summary, counters, extremes and lists together: a
/// bound on what a misbehaving program can make the coordinator hold.
pub const MAX_NAMES: usize = 1_000;

/// A maximum or minimum, and the witness that reached it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Extreme {
    pub value: i128,
    pub witness: String,
}

/// The merged figures of some explorations.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecSummary {
    /// Nodes the program says it explored (one per unit if it says none).
    pub nodes: u64,
    pub counters: BTreeMap<String, u128>,
    pub maxima: BTreeMap<String, Extreme>,
    pub minima: BTreeMap<String, Extreme>,
    /// Each list sorted, distinct, at most [`WITNESSES_KEPT`] long.
    pub witnesses: BTreeMap<String, Vec<String>>,
}

/// Which way an extreme goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Max,
    Min,
}

impl ExecSummary {
    /// Named figures held.
    pub fn names(&self) -> usize {
        self.counters.len() + self.maxima.len() + self.minima.len() + self.witnesses.len()
    }

    /// Adds `value` to counter `name`.
    pub fn count(&mut self, name: &str, value: u128) -> Result<(), FamilyError> {
        let c = self.counters.entry(name.to_string()).or_insert(0);
        *c = c
            .checked_add(value)
            .ok_or(FamilyError::Overflow("an exec counter"))?;
        Ok(())
    }

    /// Offers `value` reached by `witness` to the extreme `name`.
    pub fn extreme(&mut self, dir: Direction, name: &str, value: i128, witness: &str) {
        let map = match dir {
            Direction::Max => &mut self.maxima,
            Direction::Min => &mut self.minima,
        };
        let offered = Extreme {
            value,
            witness: witness.to_string(),
        };
        match map.get_mut(name) {
            None => {
                map.insert(name.to_string(), offered);
            }
            Some(held) => {
                if better(dir, &offered, held) {
                    *held = offered;
                }
            }
        }
    }

    /// Adds `witness` to the list `name`.
    pub fn witness(&mut self, name: &str, witness: &str) {
        let list = self.witnesses.entry(name.to_string()).or_default();
        if let Err(at) = list.binary_search_by(|w| w.as_str().cmp(witness)) {
            if at < WITNESSES_KEPT {
                list.insert(at, witness.to_string());
                list.truncate(WITNESSES_KEPT);
            }
        }
    }

    /// Folds `other` into `self` (see the module's doc for why the order
    /// does not matter).
    pub fn merge(&mut self, other: ExecSummary) -> Result<(), FamilyError> {
        self.nodes = orchard_core::merge::checked_add(self.nodes, other.nodes, "exec nodes")?;
        for (name, v) in other.counters {
            self.count(&name, v)?;
        }
        for (dir, map) in [
            (Direction::Max, other.maxima),
            (Direction::Min, other.minima),
        ] {
            for (name, e) in map {
                self.extreme(dir, &name, e.value, &e.witness);
            }
        }
        for (name, list) in other.witnesses {
            for w in list.iter().take(WITNESSES_KEPT) {
                self.witness(&name, w);
            }
        }
        if self.names() > MAX_NAMES {
            return Err(FamilyError::Capacity(format!(
                "the program's figures have more than {MAX_NAMES} names"
            )));
        }
        Ok(())
    }
}

/// Whether `a` replaces `b` as the extreme: a better value, or an equal
/// value with a smaller witness.
fn better(dir: Direction, a: &Extreme, b: &Extreme) -> bool {
    let by_value = match dir {
        Direction::Max => a.value.cmp(&b.value),
        Direction::Min => b.value.cmp(&a.value),
    };
    by_value.then_with(|| b.witness.cmp(&a.witness)) == std::cmp::Ordering::Greater
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn piece(ops: &[(u8, u8, i8)]) -> ExecSummary {
        let mut s = ExecSummary::default();
        for &(kind, name, v) in ops {
            let name = format!("n{}", name % 3);
            let w = format!("w{}", v.unsigned_abs() % 7);
            match kind % 4 {
                0 => s.count(&name, v.unsigned_abs() as u128).unwrap(),
                1 => s.extreme(Direction::Max, &name, i128::from(v % 5), &w),
                2 => s.extreme(Direction::Min, &name, i128::from(v % 5), &w),
                _ => s.witness(&name, &format!("{v:04}")),
            }
            s.nodes += 1;
        }
        s
    }

    proptest! {
        /// Pieces merged in any order and grouping give the same summary.
        #[test]
        fn merges_do_not_depend_on_order(
            pieces in proptest::collection::vec(
                proptest::collection::vec((0u8..4, 0u8..3, -120i8..120), 0..12), 1..6),
            seed in 0u64..1000,
        ) {
            let pieces: Vec<ExecSummary> = pieces.iter().map(|p| piece(p)).collect();
            let mut forward = ExecSummary::default();
            for p in pieces.clone() {
                forward.merge(p).unwrap();
            }
            let mut shuffled = orchard_core::testing::shuffled(pieces.clone(), seed);
            let right = shuffled.split_off(shuffled.len() / 2);
            let mut left_half = ExecSummary::default();
            for p in shuffled {
                left_half.merge(p).unwrap();
            }
            let mut right_half = ExecSummary::default();
            for p in right {
                right_half.merge(p).unwrap();
            }
            left_half.merge(right_half).unwrap();
            prop_assert_eq!(left_half, forward);
        }
    }

    #[test]
    fn ties_go_to_the_smaller_witness_and_lists_keep_the_smallest() {
        let mut s = ExecSummary::default();
        s.extreme(Direction::Max, "m", 5, "b");
        s.extreme(Direction::Max, "m", 5, "a");
        s.extreme(Direction::Max, "m", 4, "0");
        assert_eq!(s.maxima["m"].witness, "a");
        s.extreme(Direction::Min, "m", -3, "z");
        s.extreme(Direction::Min, "m", -2, "a");
        assert_eq!(s.minima["m"].value, -3);
        for i in (0..250).rev() {
            s.witness("w", &format!("{i:03}"));
        }
        s.witness("w", "000");
        let list = &s.witnesses["w"];
        assert_eq!(list.len(), WITNESSES_KEPT);
        assert_eq!(list[0], "000");
        assert_eq!(
            list[WITNESSES_KEPT - 1],
            format!("{:03}", WITNESSES_KEPT - 1)
        );
    }

    #[test]
    fn counters_overflow_is_an_error() {
        let mut s = ExecSummary::default();
        s.count("c", u128::MAX).unwrap();
        assert!(matches!(s.count("c", 1), Err(FamilyError::Overflow(_))));
    }
}
