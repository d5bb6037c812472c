//! Who proposes the proving move at the prover's nodes of the extension
//! ([`Oracle`]), and the fast solver as one ([`SolverOracle`]). A proposal
//! is only a hint: the extension proves the proposed child itself, and if
//! that fails it asks again without it and at last tries every child, so a
//! wrong oracle costs time, never a wrong verdict.

use super::Bound;
use crate::solve::{HipSolve, KeepingMoves};

/// Proposes, among `candidates` (moves of the position reached by `moves`
/// that do not end the game), the one most likely to keep `bound` for the
/// player to move; `None` when it has nothing to propose.
pub trait Oracle {
    fn propose(&mut self, moves: &[u8], candidates: &[u8], bound: Bound) -> Option<u8>;

    /// Searches and nodes the oracle has spent so far (for the progress
    /// lines; an oracle that does not search spends none).
    fn effort(&self) -> OracleEffort {
        OracleEffort::default()
    }
}

/// What an oracle has spent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct OracleEffort {
    pub searches: u64,
    pub nodes: u64,
}

/// The fast solver as oracle: one solver and the job's table kept across
/// calls ([`KeepingMoves`]): the position's own null-window search for the
/// bound, its principal move from the table, checked by one more search,
/// and only when that fails the candidates one by one in the solver's
/// order.
pub struct SolverOracle<'a> {
    finder: KeepingMoves<'a>,
}

impl<'a> SolverOracle<'a> {
    pub fn new(job: &'a HipSolve) -> SolverOracle<'a> {
        SolverOracle {
            finder: KeepingMoves::new(job),
        }
    }

    /// With a table other than the job's (the tests give it another
    /// game's, whose answers are wrong).
    #[cfg(test)]
    pub(super) fn with_table(
        job: &'a HipSolve,
        table: &'a crate::table::Table,
    ) -> SolverOracle<'a> {
        SolverOracle {
            finder: KeepingMoves::with_table(job, table),
        }
    }

    /// Questions asked, and those answered by the table's principal move.
    pub fn questions(&self) -> (u64, u64) {
        (self.finder.questions, self.finder.principal)
    }
}

impl Oracle for SolverOracle<'_> {
    fn propose(&mut self, moves: &[u8], candidates: &[u8], bound: Bound) -> Option<u8> {
        // The prover is the player to move: his own value's threshold.
        let at_least = match bound {
            Bound::AtLeast(v) => v,
            Bound::AtMost(v) => -v,
        };
        // A position the solver cannot replay: no hint from it.
        self.finder.find(moves, candidates, at_least).ok().flatten()
    }

    fn effort(&self) -> OracleEffort {
        OracleEffort {
            searches: self.finder.searches,
            nodes: self.finder.nodes(),
        }
    }
}

/// No oracle: the extension tries the children in cell order.
pub struct NoOracle;

impl Oracle for NoOracle {
    fn propose(&mut self, _: &[u8], _: &[u8], _: Bound) -> Option<u8> {
        None
    }
}
