//! The second implementation that decides the proof's leaves: a plain
//! alpha-beta over the reference rules ([`super::rules`]), as a bound
//! search ("is the first player's value at least `v`?"), with a memo keyed
//! by the position's canonical number under the reference symmetries.
//! No move order, no endgame knowledge, no table of the solver's: only
//! the rules, so it is slow and only asked about positions with few empty
//! cells (`--leaf-empty`).

use super::memo::Memo;
use super::rules::{Canon, Rules};
use super::Bound;

/// How many positions the memo holds (about 40 bytes an entry, in two
/// generations: [`Memo`]).
const MEMO_LIMIT: usize = 1 << 22;

/// Positions with at most this many empty cells are not remembered: their
/// whole subtree (at most 4 + 12 + 24 + 24 positions) is searched faster
/// than their canonical number under the symmetries is computed.
const UNREMEMBERED_EMPTY: usize = 4;

/// The plain bound search and its memo.
pub(super) struct Plain<'r> {
    rules: &'r Rules,
    /// `(position, v)` -> whether the first player's value is at least `v`.
    memo: Memo<(Canon, i8)>,
    /// Positions searched (memo hits not counted).
    pub(super) nodes: u64,
    /// By empty cells, the move that last cut off (see [`Plain::at_least`]).
    killers: [u8; 65],
}

impl<'r> Plain<'r> {
    pub(super) fn new(rules: &'r Rules) -> Plain<'r> {
        Plain {
            rules,
            memo: Memo::new(MEMO_LIMIT),
            nodes: 0,
            killers: [0; 65],
        }
    }

    /// Whether `bound` holds for the first player's value at `cells`.
    pub(super) fn holds(&mut self, cells: &mut [u8], bound: Bound) -> bool {
        match bound {
            Bound::AtLeast(v) => v <= -1 || self.at_least(cells, v),
            Bound::AtMost(v) => v >= 1 || !self.at_least(cells, v + 1),
        }
    }

    /// The first player's value at `cells`.
    #[cfg(test)]
    pub(super) fn value(&mut self, cells: &mut [u8]) -> i8 {
        if self.at_least(cells, 1) {
            1
        } else if self.at_least(cells, 0) {
            0
        } else {
            -1
        }
    }

    /// Whether the first player's value at `cells` is at least `v` (0 or
    /// 1): the first player needs one move that keeps it, the second
    /// player none that breaks it. Positions with at most
    /// [`UNREMEMBERED_EMPTY`] empty cells are searched without the memo
    /// (their canonical number costs more than their subtree).
    fn at_least(&mut self, cells: &mut [u8], v: i8) -> bool {
        let empty = self.rules.empty_count(cells);
        if empty == 0 {
            return 0 >= v;
        }
        let remember = empty > UNREMEMBERED_EMPTY;
        let key = (if remember { self.rules.canon(cells) } else { 0 }, v);
        if remember {
            if let Some(known) = self.memo.get(&key) {
                return known;
            }
        }
        self.nodes += 1;
        let who = self.rules.mover(cells);
        let first = who == 1;
        let mut result = !first;
        // The move that last cut off at this many empty cells first (the
        // killer heuristic: an order only, every move is still tried).
        let killer = usize::from(self.killers[empty]);
        let order = std::iter::once(killer).chain((0..cells.len()).filter(|&c| c != killer));
        for c in order {
            if c >= cells.len() || cells[c] != 0 {
                continue;
            }
            // The rules of `Rules::ends`, with the mover and the empty
            // cells counted once for every move.
            let keeps = if self.rules.completes(cells, c, who) {
                (if first { -1 } else { 1 }) >= v
            } else if empty == 1 {
                0 >= v
            } else {
                cells[c] = who;
                let keeps = self.at_least(cells, v);
                cells[c] = 0;
                keeps
            };
            if keeps == first {
                result = first;
                self.killers[empty] = c as u8;
                break;
            }
        }
        if remember {
            self.memo.insert(key, result);
        }
        result
    }
}
