//! What units are and what they report: [`SolveUnit`] (a position as the
//! moves that reach it), [`Known`] (an interval of the first player's value,
//! per canonical position), and [`SolveSummary`] with its merge rule
//! (intersect intervals, OR the expanded flags). The rule is the whole
//! contract between workers and the coordinator, so it lives in one place:
//! associative, commutative and idempotent, it lets units finish in any
//! order and even be solved twice.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use orchard_core::FamilyError;

/// A position to solve, as the moves (cells, in play order) that reach it
/// from the empty board.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SolveUnit {
    pub moves: Vec<u8>,
}

/// What is known about one canonical position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Known {
    /// The first player's value lies in `lo..=hi` (-1: second player wins,
    /// 0: draw, 1: first player wins).
    pub lo: i8,
    pub hi: i8,
    /// The position was split: its value is the minimax of its children.
    pub expanded: bool,
    /// For a solved unit: a principal variation from it, in the canonical
    /// frame (empty when unknown).
    pub pv: Vec<u8>,
}

impl Default for Known {
    fn default() -> Self {
        Known {
            lo: -1,
            hi: 1,
            expanded: false,
            pv: Vec::new(),
        }
    }
}

/// Canonical position key: the two stone sets after the canonical symmetry.
pub type Key = (u64, u64);

/// What the explored units established.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SolveSummary {
    pub nodes: u64,
    pub known: BTreeMap<Key, Known>,
}

impl SolveSummary {
    /// Records what a unit established about `key` (merged with what is
    /// already recorded there).
    pub(super) fn record(
        &mut self,
        key: Key,
        lo: i8,
        hi: i8,
        expanded: bool,
        pv: Vec<u8>,
    ) -> Result<(), FamilyError> {
        let k = Known {
            lo,
            hi,
            expanded,
            pv,
        };
        match self.known.get_mut(&key) {
            Some(old) => combine(old, k, key),
            None => {
                self.known.insert(key, k);
                Ok(())
            }
        }
    }

    /// Merges another summary into this one (the family's merge): adds the
    /// node counts and combines the records of every position.
    pub(super) fn absorb(&mut self, other: SolveSummary) -> Result<(), FamilyError> {
        self.nodes = self
            .nodes
            .checked_add(other.nodes)
            .ok_or(FamilyError::Overflow("hip-solve nodes"))?;
        for (key, k) in other.known {
            match self.known.get_mut(&key) {
                Some(old) => combine(old, k, key)?,
                None => {
                    self.known.insert(key, k);
                }
            }
        }
        Ok(())
    }
}

/// Intersects `new` into `old`, the record of `key`: errors when the
/// intervals are disjoint (a bug or a corrupt summary).
fn combine(old: &mut Known, new: Known, key: Key) -> Result<(), FamilyError> {
    let (lo, hi) = (old.lo.max(new.lo), old.hi.min(new.hi));
    if lo > hi {
        return Err(FamilyError::BadUnit(format!(
            "contradictory values {}..={} and {}..={} for position {key:?}",
            old.lo, old.hi, new.lo, new.hi
        )));
    }
    old.lo = lo;
    old.hi = hi;
    old.expanded |= new.expanded;
    // Keep one principal variation, chosen by an order-independent rule.
    if old.pv.is_empty() || (!new.pv.is_empty() && new.pv < old.pv) {
        old.pv = new.pv;
    }
    Ok(())
}
