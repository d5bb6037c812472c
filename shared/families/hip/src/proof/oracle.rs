//! Who proposes the proving move at the prover's nodes of the extension
//! ([`Oracle`]), and the fast solver as one ([`SolverOracle`]). A proposal
//! is only a hint: the extension proves the proposed child itself, and if
//! that fails it asks again without it and at last tries every child, so a
//! wrong oracle costs time, never a wrong verdict.

use super::Bound;
use crate::solve::HipSolve;

/// Proposes, among `candidates` (moves of the position reached by `moves`
/// that do not end the game), the one most likely to keep `bound` for the
/// player to move; `None` when it has nothing to propose.
pub trait Oracle {
    fn propose(&mut self, moves: &[u8], candidates: &[u8], bound: Bound) -> Option<u8>;
}

/// The fast solver as oracle: each candidate's child solved by one search
/// ([`HipSolve::solve_position`], the job's table kept warm across calls)
/// until one keeps the bound.
pub struct SolverOracle<'a> {
    job: &'a HipSolve,
    /// Searches run (one a child asked about).
    pub calls: u64,
    /// Nodes those searches took.
    pub nodes: u64,
}

impl<'a> SolverOracle<'a> {
    pub fn new(job: &'a HipSolve) -> SolverOracle<'a> {
        SolverOracle {
            job,
            calls: 0,
            nodes: 0,
        }
    }
}

impl Oracle for SolverOracle<'_> {
    fn propose(&mut self, moves: &[u8], candidates: &[u8], bound: Bound) -> Option<u8> {
        let mut line = moves.to_vec();
        for &c in candidates {
            line.push(c);
            let searched = self.job.solve_position(&line);
            line.pop();
            self.calls += 1;
            match searched {
                Ok(s) => {
                    self.nodes += s.nodes;
                    if bound.holds(s.value) {
                        return Some(c);
                    }
                }
                // A position the solver cannot replay: no hint from it.
                Err(_) => continue,
            }
        }
        None
    }
}

/// No oracle: the extension tries the children in cell order.
pub struct NoOracle;

impl Oracle for NoOracle {
    fn propose(&mut self, _: &[u8], _: &[u8], _: Bound) -> Option<u8> {
        None
    }
}
