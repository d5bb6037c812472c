//! The last resort (in [`Stage::Horizon`](super::Stage::Horizon)): what
//! the machines that ran to the halting horizon get after every decider
//! of the pipeline failed on them, each search with its limits, and the
//! certificate it found.

use std::sync::Arc;

use super::Workspace;
use crate::far_sat::Solver;
use crate::machine::Table;
use crate::wfar::mitm::MitmLimits;
use crate::wfar::supplied::Checked;

/// The last resort, for the machines that ran to the halting horizon and
/// that every decider before it failed on (a few dozen of the 181 million machines of 5 states): the
/// job's supplied certificate of the machine, if it has one
/// ([`Workspace::with_certificates`]); translated
/// cyclers over a run of [`LAST_LOOP`] (steps, records kept per side,
/// cells kept per record) ([`crate::records`]); weighted finite
/// automata reduction over automata of up to 5 states, [`LAST_WFAR_SIZES`]
/// with the bounds [`crate::wfar::BOUNDS`] and at most [`LAST_WFAR_GAS`]
/// abstract configurations in all; the meet-in-the-middle WFAR search
/// ([`crate::wfar::mitm`]) with the limits [`LAST_MITM`]; then finite
/// automata reduction with
/// larger DFAs, each size of [`LAST_FAR_DFA`] searched with
/// [`LAST_FAR_GAS`] DFA prefixes, guided by [`LAST_FAR_RUN`] (steps,
/// configurations kept) of the machine's run
/// ([`crate::far::Far::decide_guided`]), or instead, when the job names a
/// SAT solver (`--far-solver`), DFAs of [`crate::far_sat::SIZES`] states
/// found by it ([`Workspace::far_by_solver`]). Coq-BB5's certificates of
/// these machines use weighted automata of 5 and 3 or 4 states (and of 8
/// and 7, 58 and 37, 50 and 70, 48 and 65 states) and DFAs of 9 to 13
/// states.
pub const LAST_LOOP: (u32, usize, usize) = (1_050_000, 4096, 4096);
pub const LAST_WFAR_SIZES: [(usize, usize); 4] = [(5, 3), (5, 4), (3, 5), (4, 5)];
pub const LAST_WFAR_GAS: u64 = 700_000_000;
/// The MITM search: base DFA pairs of up to 11 live transitions in all
/// (8 live states a side), each weighted pair given a memory of one
/// transition, `max_d` 3 (Coq-BB5's small certificates verify with 3
/// whenever with 1 or 2), closures of at most 20,000 abstract
/// configurations, 600 million abstract configurations in all. The 8 and
/// 7-state certificate of `1RB1LC_1LB1RA_0LE0LD_0RA1RD_---0LC` is at 11
/// transitions (255 million configurations); a search that fails ends at
/// the transitions' limit or the gas, whichever comes first.
pub const LAST_MITM: MitmLimits = MitmLimits {
    transitions: 11,
    states: 8,
    memories: &[1],
    bounds: &[3],
    closure: 20_000,
    gas: 600_000_000,
};
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

    /// Whether the last resort runs the meet-in-the-middle WFAR search (on
    /// unless a job says otherwise: a job stored before it existed ran
    /// without it, and must decide its machines as it did).
    pub fn with_mitm_wfar(mut self, on: bool) -> Workspace {
        self.mitm_on = on;
        self
    }

    /// The job's supplied certificates, verified
    /// ([`crate::wfar::supplied`]): the last resort settles a machine with
    /// its own before any search.
    pub fn with_certificates(mut self, certificates: Option<Arc<[Checked]>>) -> Workspace {
        self.certificates = certificates;
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
        if let Some(c) = self
            .certificates
            .as_deref()
            .and_then(|all| all.iter().find(|c| c.table[..2 * n] == table[..2 * n]))
        {
            // Verified when the job was checked (BusyBeaver::new).
            return (Some(LastResort::Wfar(c.certificate.clone())), 0);
        }
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
        if self.mitm_on {
            let (found, configs) = self.try_mitm(table, n, LAST_MITM);
            effort += configs;
            if let Some(w) = found {
                return (Some(LastResort::Wfar(w)), effort);
            }
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

    /// The meet-in-the-middle WFAR search alone
    /// ([`crate::wfar::mitm`]) with `limits`: its certificate, which
    /// [`crate::wfar::verify`] accepted, and the abstract configurations
    /// it built.
    pub fn try_mitm(
        &mut self,
        table: &Table,
        n: usize,
        limits: MitmLimits,
    ) -> (Option<crate::wfar::Certificate>, u64) {
        let found = self.mitm.search(table, n, limits);
        (found, self.mitm.configs)
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
