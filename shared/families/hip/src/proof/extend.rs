//! The proof below the recorded tree ([`Extender`]): from a leaf of the
//! record down to positions with at most `leaf_empty` empty cells, which
//! the plain search ([`super::plain`]) decides. At the prover's positions
//! the oracle proposes a child, which is proven like any other (a refuted
//! proposal is dropped and the oracle asked again; with no proposal left,
//! every child is tried in cell order); at the opponent's, every child is
//! proven. So [`Extender::decide`] answers exactly whether the bound
//! holds, whatever the oracle says. Proven and refuted `(position, bound)`
//! pairs are remembered ([`Memo`], bounded): a transposition met while its
//! pair is remembered is proven once, and the proof is a DAG.

use std::collections::BTreeMap;

use super::memo::Memo;
use super::oracle::Oracle;
use super::plain::Plain;
use super::rules::{Canon, Cells, Outcome, Rules};
use super::{Bound, Progress};

/// How many `(position, bound)` pairs are decided between two calls of the
/// progress watcher.
const WATCH_EVERY: u64 = 1 << 12;

/// What the extension did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ExtensionStats {
    /// `(position, bound)` pairs proven: the extension's proof nodes
    /// (with an oracle that never errs, every one of them is in the proof).
    pub proven: u64,
    /// Pairs refuted on the way (wrong proposals and what proving them took).
    pub refuted: u64,
    /// Proven leaves decided by the plain search, by their empty cells.
    pub leaves_by_empty: BTreeMap<usize, u64>,
    /// Positions proven by Gardner's pairing argument.
    pub pairing_leaves: u64,
    /// Plain searches run, and the positions they searched.
    pub plain_solves: u64,
    pub plain_nodes: u64,
    /// Times the oracle was asked, and proposals it made that were refuted.
    pub proposals: u64,
    pub refuted_proposals: u64,
    /// Prover's positions proven by a child the memo already held.
    pub known_children: u64,
    /// Pairs the bounded memo forgot (each is proven again if met again).
    pub forgotten: u64,
}

/// The extension's state: the plain search, the oracle, the memo, and who
/// watches its progress.
pub(super) struct Extender<'r, 'o> {
    rules: &'r Rules,
    plain: Plain<'r>,
    oracle: &'o mut dyn Oracle,
    leaf_empty: usize,
    memo: Memo<(Canon, Bound)>,
    pub(super) stats: ExtensionStats,
    watch: &'o mut dyn FnMut(&Progress),
    /// Pairs decided (memo hits not counted), for the watcher's rhythm.
    decided: u64,
    /// Leaves of the record done and to do, for the watcher.
    pub(super) leaves: (usize, usize),
}

impl<'r, 'o> Extender<'r, 'o> {
    pub(super) fn new(
        rules: &'r Rules,
        oracle: &'o mut dyn Oracle,
        leaf_empty: usize,
        memo_entries: usize,
        watch: &'o mut dyn FnMut(&Progress),
    ) -> Self {
        Extender {
            rules,
            plain: Plain::new(rules),
            oracle,
            leaf_empty,
            memo: Memo::new(memo_entries),
            stats: ExtensionStats::default(),
            watch,
            decided: 0,
            leaves: (0, 0),
        }
    }

    /// Where the extension is, for the watcher and the report.
    pub(super) fn progress(&self) -> Progress {
        let e = &self.stats;
        Progress {
            leaves_done: self.leaves.0,
            leaves: self.leaves.1,
            proven: e.proven,
            refuted: e.refuted,
            memo_entries: self.memo.len(),
            forgotten: self.memo.forgotten,
            plain_nodes: e.plain_nodes,
            oracle: self.oracle.effort(),
        }
    }

    /// The oracle, for the probed lines after the extension.
    pub(super) fn oracle(&mut self) -> &mut dyn Oracle {
        &mut *self.oracle
    }

    /// Whether `bound` holds at `cells` (reached by `moves`), proving it
    /// down to the plain search's leaves.
    pub(super) fn decide(&mut self, cells: &[u8], moves: &mut Vec<u8>, bound: Bound) -> bool {
        if bound.trivial() {
            return true;
        }
        let key = (self.rules.canon(cells), bound);
        if let Some(known) = self.memo.get(&key) {
            return known;
        }
        self.decided += 1;
        if self.decided.is_multiple_of(WATCH_EVERY) {
            let progress = self.progress();
            (self.watch)(&progress);
        }
        let empty = self.rules.empty_count(cells);
        let holds = if empty == 0 {
            bound.holds(0)
        } else if empty <= self.leaf_empty {
            self.stats.plain_solves += 1;
            let before = self.plain.nodes;
            let holds = self.plain.holds(&mut cells.to_vec(), bound);
            self.stats.plain_nodes += self.plain.nodes - before;
            if holds {
                *self.stats.leaves_by_empty.entry(empty).or_default() += 1;
            }
            holds
        } else if bound == Bound::AtMost(0) && self.rules.second_player_pairs(cells) {
            self.stats.pairing_leaves += 1;
            true
        } else {
            self.by_children(cells, moves, bound)
        };
        if holds {
            self.stats.proven += 1;
        } else {
            self.stats.refuted += 1;
        }
        self.memo.insert(key, holds);
        self.stats.forgotten = self.memo.forgotten;
        holds
    }

    fn by_children(&mut self, cells: &[u8], moves: &mut Vec<u8>, bound: Bound) -> bool {
        let children = self.rules.children(cells);
        if bound.prover() != self.rules.mover(cells) {
            return children.into_iter().all(|(c, outcome)| match outcome {
                Outcome::Over(v) => bound.holds(v),
                Outcome::Open(next) => self.decide_child(&next, c, moves, bound),
            });
        }
        let mut open: Vec<(u8, Cells)> = Vec::new();
        for (c, outcome) in children {
            match outcome {
                Outcome::Over(v) if bound.holds(v) => return true,
                Outcome::Over(_) => {}
                Outcome::Open(next) => open.push((c, next)),
            }
        }
        // A child already proven (a transposition of one proven before)
        // keeps the bound without a question to the oracle.
        for (_, next) in &open {
            if self.memo.get(&(self.rules.canon(next), bound)) == Some(true) {
                self.stats.known_children += 1;
                return true;
            }
        }
        // The pairing reply proves a draw cap by the rules alone.
        if bound == Bound::AtMost(0) {
            if let Some(reply) = self.rules.pairing_reply(cells) {
                if let Some(i) = open.iter().position(|(c, _)| *c == reply) {
                    let (c, next) = open.remove(i);
                    if self.decide_child(&next, c, moves, bound) {
                        return true;
                    }
                }
            }
        }
        while !open.is_empty() {
            let candidates: Vec<u8> = open.iter().map(|(c, _)| *c).collect();
            self.stats.proposals += 1;
            let proposed = self
                .oracle
                .propose(moves, &candidates, bound)
                .and_then(|p| candidates.iter().position(|&c| c == p));
            let Some(i) = proposed else {
                break;
            };
            let (c, next) = open.remove(i);
            if self.decide_child(&next, c, moves, bound) {
                return true;
            }
            self.stats.refuted_proposals += 1;
        }
        open.into_iter()
            .any(|(c, next)| self.decide_child(&next, c, moves, bound))
    }

    fn decide_child(&mut self, next: &[u8], c: u8, moves: &mut Vec<u8>, bound: Bound) -> bool {
        moves.push(c);
        let holds = self.decide(next, moves, bound);
        moves.pop();
        holds
    }
}
