//! The last resort (in [`Stage::Horizon`](super::Stage::Horizon)): what
//! the machines that ran to the halting horizon get after every decider
//! of the pipeline failed on them, each search with its limits, and the
//! certificate it found.

use std::sync::Arc;

use super::Workspace;
use crate::far_sat::Solver;
use crate::machine::Table;

/// The last resort, for the machines that ran to the halting horizon and
/// that every decider before it failed on (a few dozen of the 181 million machines of 5 states): translated
/// cyclers over a run of [`LAST_LOOP`] (steps, records kept per side,
/// cells kept per record) ([`crate::records`]); weighted finite
/// automata reduction over automata of up to 5 states, [`LAST_WFAR_SIZES`]
/// with the bounds [`crate::wfar::BOUNDS`] and at most [`LAST_WFAR_GAS`]
/// abstract configurations in all; then finite automata reduction with
/// larger DFAs, each size of [`LAST_FAR_DFA`] searched with
/// [`LAST_FAR_GAS`] DFA prefixes, guided by [`LAST_FAR_RUN`] (steps,
/// configurations kept) of the machine's run
/// ([`crate::far::Far::decide_guided`]), or instead, when the job names a
/// SAT solver (`--far-solver`), DFAs of [`crate::far_sat::SIZES`] states
/// found by it ([`Workspace::far_by_solver`]). Coq-BB5's certificates of
/// these machines use weighted automata of 5 and 3 or 4 states and DFAs of
/// 9 to 13 states.
pub const LAST_LOOP: (u32, usize, usize) = (1_050_000, 4096, 4096);
pub const LAST_WFAR_SIZES: [(usize, usize); 4] = [(5, 3), (5, 4), (3, 5), (4, 5)];
pub const LAST_WFAR_GAS: u64 = 700_000_000;
pub const LAST_FAR_DFA: (usize, usize) = (8, 10);
pub const LAST_FAR_GAS: u64 = 400_000;
pub const LAST_FAR_RUN: (u32, usize) = (20_000, 64);

/// What the last resort found: the certificate a re-check needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LastResort {
    /// A translated cycle: the records at `t1 < t2`.
    TranslatedCycler { t1: u32, t2: u32 },
    /// A DFA for finite automata reduction: `δ(q, b)` at `2 q + b`, read
    /// over the mirrored machine when `mirror`.
    Far { mirror: bool, dfa: Vec<u8> },
    /// A weighted finite automata reduction certificate.
    Wfar(crate::wfar::Certificate),
}

impl Workspace {
    /// The last resort also asks `solver` for DFAs of the sizes of
    /// [`crate::far_sat::SIZES`] ([`crate::far_sat`]) instead of its
    /// guided DFA search.
    pub fn with_far_solver(mut self, solver: Option<Arc<dyn Solver>>) -> Workspace {
        self.far_solver = solver;
        self
    }

    /// Why the last [`Workspace::decide`] could not decide its machine as
    /// the job asks, once: its verdict (undecided) must not be counted.
    pub fn take_failure(&mut self) -> Option<String> {
        self.failure.take()
    }

    /// The last resort alone: its certificate, if it finds one,
    /// and its work (steps, abstract configurations, DFA prefixes). A
    /// WFAR certificate counts only once [`crate::wfar::verify`] accepted
    /// it.
    pub fn last_resort(&mut self, table: &Table, n: usize) -> (Option<LastResort>, u64) {
        let (steps, kept, cells) = LAST_LOOP;
        if let Some((t1, t2)) = self.records.find(table, steps, kept, cells) {
            return (Some(LastResort::TranslatedCycler { t1, t2 }), u64::from(t2));
        }
        let found = self.wfar.search_sizes(
            table,
            n,
            LAST_WFAR_GAS,
            &LAST_WFAR_SIZES,
            &crate::wfar::BOUNDS,
        );
        let mut effort = u64::from(steps) + self.wfar.configs;
        if let Some(w) = found {
            return (Some(LastResort::Wfar(w)), effort);
        }
        if self.far_solver.is_some() {
            // The solver's sizes hold every smaller DFA (see
            // crate::far_sat), and it reaches them in seconds where the
            // guided search spends minutes: the guided search is skipped.
            let (found, conflicts) = self.far_by_solver(table, n);
            return (found, effort.saturating_add(conflicts));
        }
        for d in LAST_FAR_DFA.0..=LAST_FAR_DFA.1 {
            let ok = self
                .far
                .decide_guided(table, n, (d, d), LAST_FAR_GAS, LAST_FAR_RUN);
            effort += self.far.prefixes;
            if ok {
                let (mirror, dfa) = self.far.found();
                let dfa = dfa.to_vec();
                return (Some(LastResort::Far { mirror, dfa }), effort);
            }
        }
        (None, effort)
    }

    /// Finite automata reduction by the job's SAT solver
    /// ([`Workspace::with_far_solver`]; none: nothing found): a DFA of each
    /// size of [`crate::far_sat::SIZES`], left to right, then right to
    /// left. Returns the certificate, if the solver found one the audit's
    /// check accepts, and the conflicts spent. A failure of the solver, or
    /// a model that is not a certificate, is left for
    /// [`Workspace::take_failure`].
    pub fn far_by_solver(&mut self, table: &Table, n: usize) -> (Option<LastResort>, u64) {
        let Some(solver) = self.far_solver.clone() else {
            return (None, 0);
        };
        let (found, conflicts) = crate::far_sat::search(solver.as_ref(), table, n);
        match found {
            Ok(found) => (
                found.map(|(mirror, dfa)| LastResort::Far { mirror, dfa }),
                conflicts,
            ),
            Err(e) => {
                self.failure = Some(e);
                (None, conflicts)
            }
        }
    }
}
