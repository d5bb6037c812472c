//! The recorded part of the proof: the tree of a merged `hip-solve`
//! summary walked by the reference rules ([`Recorded`]). A position is
//! looked up by the solver's canonical key, and the key is decoded and
//! checked to be the same position up to the reference symmetries, so a
//! wrong canonical form cannot stand in for another position.
//!
//! What the summary claims of a position ([`Recorded::claim`], its
//! recorded interval narrowed by its children's where it is expanded, as
//! the family's `eval` reads it) only chooses the prover's child; every
//! step is then proven: at the prover's position one child keeps the
//! bound, at the opponent's every child does. Where the record stops (a
//! unit solved whole), its recorded interval must give the bound, and the
//! position becomes a leaf ([`Leaf`]) that the extension proves again.

use std::collections::{HashMap, HashSet};

use super::rules::{bitboards, from_bitboards, Canon, Cells, Outcome, Rules};
use super::{line, Bound, ProofError};
use crate::board::Board;
use crate::solve::{Known, SolveSummary};

/// A position where the recorded tree stops, and the bound it must give.
#[derive(Debug, Clone)]
pub(super) struct Leaf {
    pub(super) cells: Cells,
    pub(super) moves: Vec<u8>,
    pub(super) bound: Bound,
    /// The interval recorded for it.
    pub(super) recorded: (i8, i8),
}

/// The walk over the recorded tree.
pub(super) struct Recorded<'a> {
    rules: &'a Rules,
    /// The solver's board, for its canonical keys only.
    board: Board,
    /// The solver's canonical key of two stone sets (a parameter so that
    /// the tests can hand in a wrong one).
    canonical: KeyOf<'a>,
    summary: &'a SolveSummary,
    /// Positions with fewer stones are expanded whatever the record says
    /// (the job's root units lie at this depth).
    root_depth: usize,
    claims: HashMap<Canon, (i8, i8)>,
    /// Every `(position, bound)` proven (or left to a leaf) so far.
    proven: HashSet<(Canon, Bound)>,
    pub(super) leaves: Vec<Leaf>,
    /// Positions proven from their children.
    pub(super) inner_nodes: u64,
    /// Positions proven by Gardner's pairing argument.
    pub(super) pairing_leaves: u64,
}

/// A canonical key of the stone sets `(p1, p2)` on a board.
pub(super) type KeyOf<'a> = Box<dyn Fn(&Board, u64, u64) -> (u64, u64) + 'a>;

/// The solver's canonical key.
fn solver_key(board: &Board, p1: u64, p2: u64) -> (u64, u64) {
    let (a, b, _) = board.canonical2(p1, p2);
    (a, b)
}

/// How a position's children stand to a bound.
enum ByChildren {
    Proven,
    /// The record does not claim the bound through the children; the
    /// error names the first child that does not.
    NotClaimed(ProofError),
}

impl<'a> Recorded<'a> {
    pub(super) fn new(rules: &'a Rules, summary: &'a SolveSummary, root_depth: usize) -> Self {
        Self::with_key(rules, summary, root_depth, Box::new(solver_key))
    }

    /// As [`Recorded::new`], positions looked up by `canonical`.
    pub(super) fn with_key(
        rules: &'a Rules,
        summary: &'a SolveSummary,
        root_depth: usize,
        canonical: KeyOf<'a>,
    ) -> Self {
        Recorded {
            rules,
            board: Board::new(rules.rows, rules.cols),
            canonical,
            summary,
            root_depth,
            claims: HashMap::new(),
            proven: HashSet::new(),
            leaves: Vec::new(),
            inner_nodes: 0,
            pairing_leaves: 0,
        }
    }

    fn at(&self, moves: &[u8]) -> String {
        line(self.rules.cols, moves)
    }

    /// The record of a position, its key checked against the position.
    fn known(&self, cells: &[u8], moves: &[u8]) -> Result<Option<&'a Known>, ProofError> {
        let (p1, p2) = bitboards(cells);
        let (a, b) = (self.canonical)(&self.board, p1, p2);
        let Some(known) = self.summary.known.get(&(a, b)) else {
            return Ok(None);
        };
        match from_bitboards(self.rules.cells(), a, b) {
            Some(decoded) if self.rules.same_up_to_symmetry(cells, &decoded) => Ok(Some(known)),
            _ => Err(ProofError::KeyMismatch {
                at: self.at(moves),
                key: (a, b),
            }),
        }
    }

    fn stones(&self, cells: &[u8]) -> usize {
        self.rules.cells() - self.rules.empty_count(cells)
    }

    /// Whether the record evaluates `cells` from its children.
    fn expands(&self, cells: &[u8], known: Option<&Known>) -> bool {
        self.stones(cells) < self.root_depth || known.is_some_and(|k| k.expanded)
    }

    /// Whether Gardner's pairing argument caps the first player at a draw
    /// here (he is to move in a paired position, or the second player's
    /// reply makes one).
    fn paired(&self, cells: &[u8]) -> bool {
        self.rules.second_player_pairs(cells) || self.rules.pairing_reply(cells).is_some()
    }

    /// What the summary claims of the first player's value at `cells`: the
    /// recorded interval (none: `-1..=1`), capped by the pairing argument,
    /// and where the record expands the position, narrowed by the minimax
    /// of its children's claims. A hint for choosing children, never a
    /// proof.
    pub(super) fn claim(
        &mut self,
        cells: &[u8],
        moves: &mut Vec<u8>,
    ) -> Result<(i8, i8), ProofError> {
        if cells.iter().all(|&c| c != 0) {
            return Ok((0, 0));
        }
        let canon = self.rules.canon(cells);
        if let Some(&c) = self.claims.get(&canon) {
            return Ok(c);
        }
        let known = self.known(cells, moves)?;
        let (mut lo, mut hi) = known.map_or((-1, 1), |k| (k.lo, k.hi));
        if self.paired(cells) {
            hi = hi.min(0);
            lo = lo.min(hi);
        }
        if self.expands(cells, known) && lo < hi {
            let first = self.rules.mover(cells) == 1;
            let (mut clo, mut chi) = if first { (-1, -1) } else { (1, 1) };
            for (c, outcome) in self.rules.children(cells) {
                let (l, h) = match outcome {
                    Outcome::Over(v) => (v, v),
                    Outcome::Open(next) => {
                        moves.push(c);
                        let kid = self.claim(&next, moves);
                        moves.pop();
                        kid?
                    }
                };
                if first {
                    (clo, chi) = (clo.max(l), chi.max(h));
                } else {
                    (clo, chi) = (clo.min(l), chi.min(h));
                }
            }
            (lo, hi) = (lo.max(clo), hi.min(chi));
            if lo > hi {
                return Err(ProofError::Contradiction { at: self.at(moves) });
            }
        }
        self.claims.insert(canon, (lo, hi));
        Ok((lo, hi))
    }

    /// Proves `bound` at `cells` through the recorded tree, leaving the
    /// positions where it stops as [`Leaf`]s.
    pub(super) fn prove(
        &mut self,
        cells: &[u8],
        moves: &mut Vec<u8>,
        bound: Bound,
    ) -> Result<(), ProofError> {
        if bound.trivial() {
            return Ok(());
        }
        let canon = self.rules.canon(cells);
        if self.proven.contains(&(canon, bound)) {
            return Ok(());
        }
        if bound == Bound::AtMost(0) && self.rules.second_player_pairs(cells) {
            self.pairing_leaves += 1;
            self.proven.insert((canon, bound));
            return Ok(());
        }
        let known = self.known(cells, moves)?;
        let mut not_claimed = None;
        if self.expands(cells, known) {
            match self.by_children(cells, moves, bound)? {
                ByChildren::Proven => {
                    self.inner_nodes += 1;
                    self.proven.insert((canon, bound));
                    return Ok(());
                }
                ByChildren::NotClaimed(e) => not_claimed = Some(e),
            }
        }
        match known {
            Some(k) if bound.given_by(k.lo, k.hi) => {
                self.leaves.push(Leaf {
                    cells: cells.to_vec(),
                    moves: moves.clone(),
                    bound,
                    recorded: (k.lo, k.hi),
                });
                self.proven.insert((canon, bound));
                Ok(())
            }
            _ if not_claimed.is_some() => Err(not_claimed.expect("checked")),
            Some(k) => Err(ProofError::Unsupported {
                at: self.at(moves),
                lo: k.lo,
                hi: k.hi,
                bound,
            }),
            None => Err(ProofError::Missing {
                at: self.at(moves),
                bound,
            }),
        }
    }

    /// Proves `bound` at an expanded position from its children: one that
    /// keeps it at the prover's turn (the first the summary claims does),
    /// all of them at the opponent's.
    fn by_children(
        &mut self,
        cells: &[u8],
        moves: &mut Vec<u8>,
        bound: Bound,
    ) -> Result<ByChildren, ProofError> {
        let children = self.rules.children(cells);
        if bound.prover() == self.rules.mover(cells) {
            if children
                .iter()
                .any(|(_, o)| matches!(o, Outcome::Over(v) if bound.holds(*v)))
            {
                return Ok(ByChildren::Proven);
            }
            for (c, outcome) in &children {
                let Outcome::Open(next) = outcome else {
                    continue;
                };
                moves.push(*c);
                let claim = self.claim(next, moves);
                let proof = match claim {
                    Ok((lo, hi)) if bound.given_by(lo, hi) => Some(self.prove(next, moves, bound)),
                    Ok(_) => None,
                    Err(e) => Some(Err(e)),
                };
                moves.pop();
                if let Some(proof) = proof {
                    proof?;
                    return Ok(ByChildren::Proven);
                }
            }
            return Ok(ByChildren::NotClaimed(ProofError::NoProvingChild {
                at: self.at(moves),
                bound,
            }));
        }
        for (c, outcome) in &children {
            moves.push(*c);
            let verdict = match outcome {
                Outcome::Over(v) if !bound.holds(*v) => Some(Err(ProofError::GameRefutes {
                    at: self.at(moves),
                    value: *v,
                    bound,
                })),
                Outcome::Over(_) => None,
                Outcome::Open(next) => match self.claim(next, moves) {
                    Ok((lo, hi)) if bound.given_by(lo, hi) => None,
                    Ok((lo, hi)) => Some(Ok(self.unclaimed(next, moves, lo, hi, bound))),
                    Err(e) => Some(Err(e)),
                },
            };
            moves.pop();
            match verdict {
                Some(Err(e)) => return Err(e),
                Some(Ok(e)) => return Ok(ByChildren::NotClaimed(e)),
                None => {}
            }
        }
        for (c, outcome) in &children {
            if let Outcome::Open(next) = outcome {
                moves.push(*c);
                let proof = self.prove(next, moves, bound);
                moves.pop();
                proof?;
            }
        }
        Ok(ByChildren::Proven)
    }

    /// The error for a child whose claim does not give `bound`.
    fn unclaimed(&self, cells: &[u8], moves: &[u8], lo: i8, hi: i8, bound: Bound) -> ProofError {
        match self.known(cells, moves) {
            Ok(None) if self.stones(cells) >= self.root_depth => ProofError::Missing {
                at: self.at(moves),
                bound,
            },
            Ok(_) => ProofError::Unsupported {
                at: self.at(moves),
                lo,
                hi,
                bound,
            },
            Err(e) => e,
        }
    }
}
