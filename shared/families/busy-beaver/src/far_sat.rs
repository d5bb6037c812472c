//! Finite automata reduction with the DFA found by a SAT solver: the
//! certificate of [`crate::far`] and [`crate::audit::dfa`], searched as a
//! CNF formula instead of DFA prefix by DFA prefix.
//!
//! The direct search ([`crate::far`]) fixes a DFA's transitions one at a
//! time in breadth-first order and abandons a prefix once its partial
//! closure lets the blank tape reach HALT. On the 5-state machines that
//! only DFAs of 10 to 13 states settle, it meets millions of prefixes per
//! size without reaching one (docs/notes/busy-beaver.md). A SAT solver
//! picks the transitions that the conflicts point at instead, and learns
//! why a choice failed; on those machines it finds a DFA in seconds to
//! minutes (figures in the same note).
//!
//! **The formula**, for a DFA of `d` states and the `n`-state machine
//! (NFA states `(q, S)` numbered `q n + S`, and HALT numbered `d n`; the
//! rules are those of [`crate::audit::dfa`]):
//!
//! * `δ(q, b) = p`: one variable per `q, b, p`, exactly one true per `(q,
//!   b)`, and `δ(0, 0) = 0`;
//! * `x -b-> y`: one variable per `b, x, y`, for *some* relation closed
//!   under the rules, not necessarily the least: HALT reads either cell to
//!   HALT; an undefined `(S, r)` gives `(q, S) -r-> HALT`; a forward move
//!   `(S, r) -> (w, T)` gives `δ(q, w) = p -> ((q, S) -r-> (p, T))`; a
//!   backward move gives, through a variable `reach(q, b, y)` ("from
//!   `(q, T)` reading `b` then `w` the NFA can reach `y`"), `((q, T) -b->
//!   x) and (x -w-> y) -> reach(q, b, y)` and `δ(q, b) = p and reach(q,
//!   b, y) -> ((p, S) -r-> y)`: cubic in the NFA's states, not quartic;
//! * `acc(x)` ("`x` reaches HALT reading blanks", again some closed set):
//!   `acc(HALT)`, `(x -0-> y) and acc(y) -> acc(x)`; and `not acc((0, A))`.
//!
//! Every clause but the DFA's choices is a Horn implication, so any
//! relation and set satisfying them contain the least ones; a model's DFA
//! therefore has a least closure in which the blank tape does not reach
//! HALT: it is a certificate. It is still verified by
//! [`crate::audit::dfa::verify`] before it counts, so a solver's wrong
//! model is caught, not believed.
//!
//! A DFA of `d` states gives one of `d + 1` states that proves the same
//! (a state with two incoming transitions split in two, each copy keeping
//! its transitions: the language is the same), so a formula satisfiable
//! at `d` is satisfiable at every larger size, with every state reached as
//! the breadth-first numbering below requires; the last resort asks the
//! sizes of [`SIZES`].

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use orchard_exec::program::{check_name, is_sha256, sha256_file, JobProgram};
use orchard_exec::run::{call_raw, Limits};
use orchard_sat::{read_answer, Answer};

use crate::machine::{Table, Transition};

/// The DFA sizes the last resort asks the solver for, each reading the
/// tape left to right, then right to left. Coq-BB5's certificates of the
/// machines that need them have 10 to 13 states
/// (`Verifier_FAR_Hardcoded_Certificates.v`).
pub const SIZES: [usize; 1] = [13];

/// Conflicts the solver may spend on one formula (CaDiCaL's `-c`): a
/// limit, not a time, so that the same solver decides the same machines on
/// every worker and in the audit's regeneration. Debian's CaDiCaL finds
/// the DFAs of Coq-BB5's FAR machines within a few hundred thousand; a
/// machine without one costs the limit twice, a few minutes
/// (docs/notes/busy-beaver.md).
pub const CONFLICTS: u64 = 1_000_000;

/// Seconds one solver call may run before the attempt fails: far beyond
/// [`CONFLICTS`] on any machine, a guard against a solver that hangs.
pub const TIMEOUT_SECS: u64 = 4 * 3600;

/// Largest DFA the formula is made for (the certificates' limit,
/// [`crate::audit::dfa`]).
pub const MAX_SAT_DFA: usize = crate::audit::MAX_CERTIFICATE_DFA;

/// The CNF formula whose models are DFAs of `d` states that prove a
/// machine never halts.
#[derive(Debug, Clone)]
pub struct DfaFormula {
    d: usize,
    /// The first variable of `t(i, j)` and of `parent(j, i)` (the
    /// breadth-first numbering), less one.
    t_base: usize,
    parent_base: usize,
    /// Variables `1..=vars`.
    pub vars: u32,
    /// Clauses, each a run of literals closed by a 0 (DIMACS's layout).
    literals: Vec<i32>,
    clauses: usize,
}

impl DfaFormula {
    /// The formula for the `n`-state `table` and DFAs of `d` states
    /// (`1..=`[`MAX_SAT_DFA`]), reading the tape right to left when
    /// `mirror`.
    pub fn new(table: &Table, n: usize, d: usize, mirror: bool) -> DfaFormula {
        assert!((1..=MAX_SAT_DFA).contains(&d), "DFA of {d} states");
        let m = d * n + 1; // NFA states, HALT last
        let halt = d * n;
        let node = |q: usize, s: usize| q * n + s;
        // Variable numbering: δ first (so a model's DFA is read from the
        // first d * 2 * d variables), then the two relations, then acc.
        let delta = |q: usize, b: usize, p: usize| (1 + (q * 2 + b) * d + p) as i32;
        let rel_base = 2 * d * d;
        let rel = |b: usize, x: usize, y: usize| (1 + rel_base + (b * m + x) * m + y) as i32;
        let acc_base = rel_base + 2 * m * m;
        let acc = |x: usize| (1 + acc_base + x) as i32;
        let t_base = acc_base + m;
        let parent_base = t_base + d * d;
        let mut next_var = parent_base + d * d;
        let mut f = DfaFormula {
            d,
            t_base,
            parent_base,
            vars: 0,
            literals: Vec::new(),
            clauses: 0,
        };
        for q in 0..d {
            for b in 0..2 {
                f.clause((0..d).map(|p| delta(q, b, p)));
                for p1 in 0..d {
                    for p2 in p1 + 1..d {
                        f.clause([-delta(q, b, p1), -delta(q, b, p2)]);
                    }
                }
            }
        }
        f.clause([delta(0, 0, 0)]);
        f.breadth_first(delta);
        for b in 0..2 {
            f.clause([rel(b, halt, halt)]);
        }
        for s in 0..n {
            for r in 0..2 {
                match Transition::decode(table[2 * s + r]) {
                    None => {
                        for q in 0..d {
                            f.clause([rel(r, node(q, s), halt)]);
                        }
                    }
                    Some(t) if t.right != mirror => {
                        let (w, to) = (usize::from(t.write), usize::from(t.next));
                        for q in 0..d {
                            for p in 0..d {
                                f.clause([-delta(q, w, p), rel(r, node(q, s), node(p, to))]);
                            }
                        }
                    }
                    Some(t) => {
                        let (w, to) = (usize::from(t.write), usize::from(t.next));
                        let reach_base = next_var;
                        next_var += d * 2 * m;
                        let reach = |q: usize, b: usize, y: usize| {
                            (1 + reach_base + (q * 2 + b) * m + y) as i32
                        };
                        for q in 0..d {
                            for b in 0..2 {
                                for x in 0..m {
                                    for y in 0..m {
                                        f.clause([
                                            -rel(b, node(q, to), x),
                                            -rel(w, x, y),
                                            reach(q, b, y),
                                        ]);
                                    }
                                }
                                for p in 0..d {
                                    for y in 0..m {
                                        f.clause([
                                            -delta(q, b, p),
                                            -reach(q, b, y),
                                            rel(r, node(p, s), y),
                                        ]);
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        f.clause([acc(halt)]);
        for x in 0..m {
            for y in 0..m {
                f.clause([-rel(0, x, y), -acc(y), acc(x)]);
            }
        }
        f.clause([-acc(node(0, 0))]);
        f.vars = next_var as u32;
        f
    }

    /// `t(i, j)`: some transition goes from `i` to `j`.
    fn t(&self, i: usize, j: usize) -> i32 {
        (1 + self.t_base + i * self.d + j) as i32
    }

    /// `parent(j, i)`: state `j` is first reached from `i`.
    fn parent(&self, j: usize, i: usize) -> i32 {
        (1 + self.parent_base + j * self.d + i) as i32
    }

    /// Numbers the DFA's states in breadth-first order from state 0,
    /// cell 0 before cell 1 (the symmetry breaking of Ulyantsev,
    /// Zakirzyanov and Shalyto, "BFS-based symmetry breaking predicates
    /// for DFA identification", 2015): of the `d!` numberings of a DFA only
    /// one satisfies the clauses, so the solver does not search the same
    /// DFA under other names. On the machines of docs/notes/busy-beaver.md
    /// it takes a half to a third of the conflicts without it.
    fn breadth_first(&mut self, delta: impl Fn(usize, usize, usize) -> i32) {
        let d = self.d;
        for i in 0..d {
            for j in 0..d {
                let t = self.t(i, j);
                self.clause([-t, delta(i, 0, j), delta(i, 1, j)]);
                self.clause([t, -delta(i, 0, j)]);
                self.clause([t, -delta(i, 1, j)]);
            }
        }
        for j in 1..d {
            let parents: Vec<i32> = (0..j).map(|i| self.parent(j, i)).collect();
            self.clause(parents);
            for i in 0..j {
                // parent(j, i) <-> t(i, j) and no t(k, j) for k < i.
                let (p, t) = (self.parent(j, i), self.t(i, j));
                self.clause([-p, t]);
                for k in 0..i {
                    let tk = self.t(k, j);
                    self.clause([-p, -tk]);
                }
                let earlier: Vec<i32> = (0..i).map(|k| self.t(k, j)).collect();
                self.clause([p, -t].into_iter().chain(earlier));
            }
        }
        for j in 1..d.saturating_sub(1) {
            for i in 0..j {
                // Parents in order; two children of one parent in the
                // order of their cells.
                let p = self.parent(j, i);
                for k in 0..i {
                    let later = self.parent(j + 1, k);
                    self.clause([-p, -later]);
                }
                let sibling = self.parent(j + 1, i);
                self.clause([-p, -sibling, delta(i, 0, j)]);
                self.clause([-p, -sibling, delta(i, 1, j + 1)]);
            }
        }
    }

    fn clause(&mut self, lits: impl IntoIterator<Item = i32>) {
        self.literals.extend(lits);
        self.literals.push(0);
        self.clauses += 1;
    }

    /// Clauses of the formula.
    pub fn clauses(&self) -> usize {
        self.clauses
    }

    /// The formula in DIMACS CNF.
    pub fn dimacs(&self) -> Vec<u8> {
        use std::fmt::Write as _;
        let mut s = String::with_capacity(self.literals.len() * 7 + 32);
        let _ = writeln!(s, "p cnf {} {}", self.vars, self.clauses);
        for &l in &self.literals {
            if l == 0 {
                s.push_str("0\n");
            } else {
                let _ = write!(s, "{l} ");
            }
        }
        s.into_bytes()
    }

    /// The DFA of a model (`model[v]`: variable `v`, index 0 unused), `δ(q,
    /// b)` at `2 q + b`; `None` unless the model gives each `(q, b)` exactly
    /// one successor.
    pub fn dfa(&self, model: &[bool]) -> Option<Vec<u8>> {
        let d = self.d;
        let mut dfa = Vec::with_capacity(2 * d);
        for qb in 0..2 * d {
            let mut successors =
                (0..d).filter(|&p| model.get(1 + qb * d + p).copied().unwrap_or(false));
            let p = successors.next()?;
            if successors.next().is_some() {
                return None;
            }
            dfa.push(p as u8);
        }
        Some(dfa)
    }

    /// Whether `model` satisfies every clause (for the tests: the solver
    /// stands behind its models, and the certificate check behind those).
    #[cfg(test)]
    fn satisfied_by(&self, model: &[bool]) -> bool {
        self.literals
            .split(|&l| l == 0)
            .filter(|c| !c.is_empty())
            .all(|c| {
                c.iter()
                    .any(|&l| model[l.unsigned_abs() as usize] == (l > 0))
            })
    }
}

/// Finite automata reduction by `solver`: a DFA of each size of
/// [`SIZES`], reading the tape left to right, then right to left. Returns
/// the certificate (`mirror`, the DFA) if the solver found one that
/// [`crate::audit::dfa::verify`] accepts, and the conflicts spent; an
/// error if the solver failed or answered a model that is not a
/// certificate (the attempt fails on it: a wrong answer settles nothing).
#[allow(clippy::type_complexity)]
pub fn search(
    solver: &dyn Solver,
    table: &Table,
    n: usize,
) -> (Result<Option<(bool, Vec<u8>)>, String>, u64) {
    let mut conflicts = 0u64;
    for &d in &SIZES {
        for mirror in [false, true] {
            let formula = DfaFormula::new(table, n, d, mirror);
            let model = match solver.solve(formula.dimacs(), formula.vars) {
                Ok((verdict, spent)) => {
                    conflicts = conflicts.saturating_add(spent);
                    match verdict {
                        Verdict::Model(model) => model,
                        Verdict::NoModel => continue,
                    }
                }
                Err(e) => return (Err(e), conflicts),
            };
            return match formula.dfa(&model) {
                Some(dfa) if crate::audit::dfa::verify(table, n, mirror, &dfa).is_ok() => {
                    (Ok(Some((mirror, dfa))), conflicts)
                }
                _ => (
                    Err(format!(
                        "the far solver's model of {} for DFAs of {d} states is not a \
                         certificate (audit::dfa::verify refuses it)",
                        crate::machine::to_text(table, n, None)
                    )),
                    conflicts,
                ),
            };
        }
    }
    (Ok(None), conflicts)
}

/// The job's SAT solver (`--far-solver`): its file name in each worker's
/// `--programs` directory and its SHA-256, as the `sat` family names its
/// solver; a worker runs only its own allowed copy, and only if the hash
/// matches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SolverRef {
    pub name: String,
    pub sha256: String,
}

impl SolverRef {
    /// The solver at `path` on the submitting machine, hashed (the
    /// command line's parser of `--far-solver`).
    pub fn from_path(path: &str) -> Result<SolverRef, String> {
        let p = Path::new(path);
        let name = p
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| format!("{path}: not a file name"))?
            .to_string();
        let sha256 = sha256_file(p).map_err(|e| format!("{path}: {e}"))?;
        Ok(SolverRef { name, sha256 })
    }

    /// Whether the stored reference is well formed (a plain file name, a
    /// SHA-256 of 64 lower-case hex digits).
    pub fn check(&self) -> Result<(), String> {
        check_name(&self.name).map_err(|e| e.to_string())?;
        if !is_sha256(&self.sha256) {
            return Err("the solver's sha256 must be 64 lower-case hex digits".into());
        }
        Ok(())
    }
}

/// What a solver said about a formula.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// A model, `model[v]` for variable `v` (index 0 unused).
    Model(Vec<bool>),
    /// Unsatisfiable, or undecided within the solver's conflicts.
    NoModel,
}

/// A SAT solver the last resort asks for DFAs. The worker's is
/// [`ProgramSolver`]; tests may bring their own.
pub trait Solver: Send + Sync + std::fmt::Debug {
    /// Solves `dimacs` (over `vars` variables): the verdict and the
    /// conflicts it took, or why the solver could not be run or answered
    /// what does not parse (the attempt fails on it).
    fn solve(&self, dimacs: Vec<u8>, vars: u32) -> Result<(Verdict, u64), String>;
}

/// The job's solver run as the `sat` family runs its own: a private copy
/// of the worker's allowed program, checked against the job's hash, in a
/// process of its own with CaDiCaL's command line (`-c` [`CONFLICTS`],
/// the formula on stdin, `s` and `v` lines back).
#[derive(Debug)]
pub struct ProgramSolver {
    name: String,
    program: JobProgram,
}

impl ProgramSolver {
    /// The solver `r`, looked up in `allowed` (the host's `--programs`
    /// directory) when first needed.
    pub fn new(allowed: Option<PathBuf>, r: &SolverRef) -> ProgramSolver {
        ProgramSolver {
            name: r.name.clone(),
            program: JobProgram::new(allowed, &r.name, &r.sha256),
        }
    }
}

impl Solver for ProgramSolver {
    fn solve(&self, dimacs: Vec<u8>, vars: u32) -> Result<(Verdict, u64), String> {
        let fail = |e: String| format!("far solver '{}': {e}", self.name);
        let path = self.program.path().map_err(fail)?;
        let args = ["-c".to_string(), CONFLICTS.to_string()];
        let limits = Limits {
            timeout: Duration::from_secs(TIMEOUT_SECS),
            max_output: 1 << 26,
            grace: Duration::ZERO,
        };
        // The last resort is not stopped midway (it is one machine's
        // minutes); a stop request is seen at the next machine.
        let never = AtomicBool::new(false);
        let out = call_raw(path, &args, dimacs, limits, &never)
            .map_err(|e| fail(e.to_string()))?
            .ok_or_else(|| fail("stopped".into()))?;
        let (answer, conflicts) = read_answer(vars, out.code, &out.stdout).map_err(fail)?;
        Ok(match answer {
            Answer::Sat(model) => (Verdict::Model(model), conflicts),
            Answer::Unsat | Answer::Unknown => (Verdict::NoModel, conflicts),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::dfa::verify;
    use crate::machine::from_text;

    /// `dfa` with its states renamed in breadth-first order from state 0,
    /// cell 0 first (every state must be reached).
    fn breadth_first(dfa: &[u8]) -> Vec<u8> {
        let d = dfa.len() / 2;
        let mut name = vec![usize::MAX; d];
        let mut order = vec![0usize];
        name[0] = 0;
        let mut k = 0;
        while k < order.len() {
            let q = order[k];
            k += 1;
            for b in 0..2 {
                let p = usize::from(dfa[2 * q + b]);
                if name[p] == usize::MAX {
                    name[p] = order.len();
                    order.push(p);
                }
            }
        }
        assert_eq!(order.len(), d, "every state reached");
        let mut out = vec![0u8; 2 * d];
        for (new, &old) in order.iter().enumerate() {
            for b in 0..2 {
                out[2 * new + b] = name[usize::from(dfa[2 * old + b])] as u8;
            }
        }
        out
    }

    /// The assignment a DFA gives: its variables, the breadth-first
    /// numbering's (`t`, `parent`), and the relations and `acc` as their
    /// least closures (unit propagation of the Horn clauses to a fixed
    /// point, which is the verifier's construction by other means).
    fn model_of(dfa: &[u8], f: &DfaFormula) -> Vec<bool> {
        let d = dfa.len() / 2;
        let mut model = vec![false; f.vars as usize + 1];
        let goes =
            |i: usize, j: usize| usize::from(dfa[2 * i]) == j || usize::from(dfa[2 * i + 1]) == j;
        for qb in 0..2 * d {
            model[1 + qb * d + usize::from(dfa[qb])] = true;
        }
        for i in 0..d {
            for j in 0..d {
                model[f.t(i, j) as usize] = goes(i, j);
            }
        }
        for j in 1..d {
            if let Some(i) = (0..d).find(|&i| goes(i, j)) {
                model[f.parent(j, i) as usize] = true;
            }
        }
        let closure = |v: usize| (2 * d * d < v && v <= f.t_base) || v > f.parent_base + d * d;
        loop {
            let mut grew = false;
            for c in f.literals.split(|&l| l == 0).filter(|c| !c.is_empty()) {
                if c.iter()
                    .any(|&l| model[l.unsigned_abs() as usize] == (l > 0))
                {
                    continue;
                }
                let heads: Vec<usize> = c.iter().filter(|&&l| l > 0).map(|&l| l as usize).collect();
                // A Horn clause whose body holds: its head becomes true.
                if let [head] = heads[..] {
                    if closure(head) {
                        model[head] = true;
                        grew = true;
                    }
                }
            }
            if !grew {
                break;
            }
        }
        model
    }

    #[test]
    fn a_known_certificate_is_a_model_and_a_halting_machine_has_none() {
        // Coq-BB5's 10-state DFA of this machine (test `coq_bb5_dfas_verify`).
        let (t, n) = from_text("1RB1RA_1LC0LD_---1LD_1RE1LE_0RA0LB").unwrap();
        let coq = [0u8, 1, 2, 3, 4, 5, 6, 0, 4, 4, 4, 7, 4, 8, 4, 2, 4, 9, 4, 6];
        let dfa = breadth_first(&coq);
        assert_eq!(verify(&t, n, false, &dfa), Ok(()));
        let f = DfaFormula::new(&t, n, 10, false);
        let model = model_of(&dfa, &f);
        assert!(f.satisfied_by(&model));
        assert_eq!(f.dfa(&model).as_deref(), Some(dfa.as_slice()));
        // The same DFA under another numbering breaks only the
        // breadth-first clauses: swap states 1 and 2.
        let swap = |q: u8| match q {
            1 => 2,
            2 => 1,
            q => q,
        };
        let mut renamed = vec![0u8; coq.len()];
        for q in 0..10 {
            for b in 0..2 {
                renamed[2 * usize::from(swap(q as u8)) + b] = swap(dfa[2 * q + b]);
            }
        }
        assert_eq!(verify(&t, n, false, &renamed), Ok(()));
        assert!(!f.satisfied_by(&model_of(&renamed, &f)));
        // The 4-state champion halts: with any DFA, the least closure lets
        // the blank tape reach HALT, so the same construction violates the
        // clause `not acc((0, A))`.
        let (h, hn) = from_text("1RB1LB_1LA0LC_---1LD_1RD0RA").unwrap();
        for dfa in [[0u8, 0].as_slice(), &[0, 1, 1, 0], &[0, 1, 2, 1, 0, 2]] {
            let f = DfaFormula::new(&h, hn, dfa.len() / 2, false);
            assert!(!f.satisfied_by(&model_of(dfa, &f)));
        }
    }

    #[test]
    fn the_dfa_of_a_model_needs_exactly_one_successor() {
        let (t, n) = from_text("0RA---").unwrap();
        let f = DfaFormula::new(&t, n, 2, false);
        let mut model = vec![false; f.vars as usize + 1];
        assert_eq!(f.dfa(&model), None);
        // δ(0,0)=0, δ(0,1)=1, δ(1,0)=1, δ(1,1)=0.
        for v in [1, 4, 6, 7] {
            model[v] = true;
        }
        assert_eq!(f.dfa(&model), Some(vec![0, 1, 1, 0]));
        model[5] = true;
        assert_eq!(f.dfa(&model), None);
    }

    #[test]
    fn dimacs_counts_its_clauses_and_variables() {
        let (t, n) = from_text("1RB1RA_1LC0LD_---1LD_1RE1LE_0RA0LB").unwrap();
        let f = DfaFormula::new(&t, n, 4, true);
        let text = String::from_utf8(f.dimacs()).unwrap();
        let mut lines = text.lines();
        assert_eq!(
            lines.next(),
            Some(format!("p cnf {} {}", f.vars, f.clauses()).as_str())
        );
        assert_eq!(lines.clone().count(), f.clauses());
        assert!(lines.all(|l| l.ends_with(" 0") || l == "0"));
    }
}
