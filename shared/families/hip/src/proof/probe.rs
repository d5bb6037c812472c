//! Spot checks of the extension where the whole of it is too big: random
//! lines of play from leaves of the record down to the plain search
//! ([`probe_line`]). At the opponent's positions the line takes a child at
//! random (the proof needs every child, so any may be asked); at the
//! prover's, the child the oracle proposes (the fast solver proposes only
//! children it finds keep the bound). Every position on the line is one
//! where the summary or the fast solver claims the bound, so the plain
//! search refuting it at the line's end, or the oracle finding no child
//! that keeps it, is a disagreement between the two implementations,
//! reported with the position. A line that agrees proves nothing by
//! itself: it samples the proof.

use std::collections::BTreeMap;

use super::oracle::Oracle;
use super::plain::Plain;
use super::rules::{Cells, Outcome, Rules};
use super::{line, Bound, ProofError};
use orchard_core::estimate::Rng;

/// What the lines found.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct LineStats {
    /// Lines played, and their positions (moves below the leaf).
    pub lines: u64,
    pub positions: u64,
    /// How the lines ended: at the plain search, by its empty cells; by
    /// the rules (a move ending the game in the prover's favour, or the
    /// opponent having no move that does not end it); by the pairing
    /// argument.
    pub plain_ends_by_empty: BTreeMap<usize, u64>,
    pub rules_ends: u64,
    pub pairing_ends: u64,
    /// Plain searches' positions, and the oracle's proposals.
    pub plain_nodes: u64,
    pub proposals: u64,
}

/// Plays one line from `cells` (reached by `moves`), where `bound` is
/// claimed, down to the plain search at `leaf_empty` empty cells.
#[allow(clippy::too_many_arguments)]
pub(super) fn probe_line(
    rules: &Rules,
    plain: &mut Plain<'_>,
    oracle: &mut dyn Oracle,
    rng: &mut Rng,
    leaf_empty: usize,
    cells: &[u8],
    moves: &[u8],
    bound: Bound,
    stats: &mut LineStats,
) -> Result<(), ProofError> {
    let mut cells: Cells = cells.to_vec();
    let mut moves = moves.to_vec();
    stats.lines += 1;
    loop {
        let at = |moves: &[u8]| line(rules.cols, moves);
        let empty = rules.empty_count(&cells);
        if empty <= leaf_empty {
            let before = plain.nodes;
            let holds = plain.holds(&mut cells.clone(), bound);
            stats.plain_nodes += plain.nodes - before;
            if !holds {
                return Err(ProofError::LineRefuted {
                    at: at(&moves),
                    bound,
                    leaf_empty,
                });
            }
            *stats.plain_ends_by_empty.entry(empty).or_default() += 1;
            return Ok(());
        }
        if bound == Bound::AtMost(0) && rules.second_player_pairs(&cells) {
            stats.pairing_ends += 1;
            return Ok(());
        }
        let children = rules.children(&cells);
        let mut open: Vec<(u8, Cells)> = Vec::new();
        let prover = bound.prover() == rules.mover(&cells);
        for (c, outcome) in children {
            match outcome {
                Outcome::Over(v) if bound.holds(v) && prover => {
                    stats.rules_ends += 1;
                    return Ok(());
                }
                Outcome::Over(v) if !bound.holds(v) && !prover => {
                    moves.push(c);
                    return Err(ProofError::GameRefutes {
                        at: at(&moves),
                        value: v,
                        bound,
                    });
                }
                Outcome::Over(_) => {}
                Outcome::Open(next) => open.push((c, next)),
            }
        }
        let pick = if prover {
            let reply = if bound == Bound::AtMost(0) {
                rules.pairing_reply(&cells)
            } else {
                None
            };
            let candidates: Vec<u8> = open.iter().map(|(c, _)| *c).collect();
            let proposed = reply.or_else(|| {
                stats.proposals += 1;
                oracle.propose(&moves, &candidates, bound)
            });
            match proposed.and_then(|p| candidates.iter().position(|&c| c == p)) {
                Some(i) => i,
                None => {
                    return Err(ProofError::NoKeepingMove {
                        at: at(&moves),
                        bound,
                    })
                }
            }
        } else if open.is_empty() {
            stats.rules_ends += 1;
            return Ok(());
        } else {
            (rng.next_u64() % open.len() as u64) as usize
        };
        let (c, next) = open.swap_remove(pick);
        moves.push(c);
        cells = next;
        stats.positions += 1;
    }
}
