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
/// from the empty board, and what the root needs to know of its value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "StoredUnit", into = "StoredUnit")]
pub struct SolveUnit {
    pub moves: Vec<u8>,
    /// The window the unit's position is searched in (see [`Window`]).
    pub window: Window,
}

impl SolveUnit {
    /// The position reached by `moves`, its value wanted exactly.
    pub fn new(moves: Vec<u8>) -> SolveUnit {
        SolveUnit {
            moves,
            window: Window::FULL,
        }
    }
}

/// What the root needs to know of a position's value, in the first
/// player's view: its exact value if it lies strictly between `lo` and
/// `hi`; otherwise only that it is at most `lo` or at least `hi` (the
/// alpha-beta window, as an open interval).
///
/// A split hands back a position's unsettled children with the window that
/// the recorded facts allow, as a sequential alpha-beta search would search
/// them: at a first player's position, nothing at or below the best that
/// one of its children is known to reach matters (`lo` rises to it); at the
/// second player's, nothing at or above the least a child is known to hold
/// him to (`hi` falls to it). A position whose every unit answers its
/// window is known as far as its parent's window needs, so the root, whose
/// window is the whole range, ends exactly known (the argument of
/// alpha-beta, applied to recorded intervals: ARCHITECTURE.md,
/// "hip-solve"). On a draw board this is most of the work: a window of
/// `(0, 1)` asks only "does the first player win?", a far smaller proof
/// than the exact value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub lo: i8,
    pub hi: i8,
}

impl Window {
    /// Every value matters: the exact value is wanted.
    pub const FULL: Window = Window { lo: -1, hi: 1 };

    /// The window `(lo, hi)` if it asks anything (`-1 <= lo < hi <= 1`).
    pub fn new(lo: i8, hi: i8) -> Option<Window> {
        (-1 <= lo && lo < hi && hi <= 1).then_some(Window { lo, hi })
    }

    /// Whether an interval of the first player's value already answers
    /// this window: exact, or wholly at or below `lo`, or at or above `hi`.
    pub fn answered_by(&self, lo: i8, hi: i8) -> bool {
        lo == hi || hi <= self.lo || lo >= self.hi
    }

    /// The interval as far as this window sees it (each end clamped into
    /// `lo..=hi`): two correct searches of the same unit agree on it.
    pub fn clamp(&self, lo: i8, hi: i8) -> (i8, i8) {
        (lo.clamp(self.lo, self.hi), hi.clamp(self.lo, self.hi))
    }
}

/// How a [`SolveUnit`] is stored and sent: its moves, and for a window other
/// than [`Window::FULL`] one more byte, `WINDOW_MARK` plus the window's
/// code, after them (a cell is below 64, so the byte cannot be a move).
/// A full-window unit is stored as before windows existed, so databases of
/// earlier builds resume unchanged, their units searched in full as then.
#[derive(Serialize, Deserialize)]
struct StoredUnit {
    moves: Vec<u8>,
}

/// The byte that marks a window after a unit's moves.
const WINDOW_MARK: u8 = 0x80;

/// The windows other than [`Window::FULL`], by code.
const WINDOWS: [Window; 2] = [Window { lo: -1, hi: 0 }, Window { lo: 0, hi: 1 }];

impl From<SolveUnit> for StoredUnit {
    fn from(u: SolveUnit) -> StoredUnit {
        let mut moves = u.moves;
        if let Some(code) = WINDOWS.iter().position(|w| *w == u.window) {
            moves.push(WINDOW_MARK | code as u8);
        }
        StoredUnit { moves }
    }
}

impl TryFrom<StoredUnit> for SolveUnit {
    type Error = String;

    fn try_from(s: StoredUnit) -> Result<SolveUnit, String> {
        let mut moves = s.moves;
        let window = match moves.last() {
            Some(&b) if b >= WINDOW_MARK => {
                let w = WINDOWS
                    .get(usize::from(b - WINDOW_MARK))
                    .copied()
                    .ok_or_else(|| format!("unknown window code {b:#x} in a hip-solve unit"))?;
                moves.pop();
                w
            }
            _ => Window::FULL,
        };
        Ok(SolveUnit { moves, window })
    }
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
