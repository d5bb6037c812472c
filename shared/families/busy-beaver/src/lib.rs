//! Rado's busy beaver game: of the Turing machines with `N` states ("cards")
//! and two symbols started on a blank tape, which halting one writes the
//! most ones, and which runs the most steps?
//!
//! Source: "Games Playing with Computers", chapter 6, section 6.5 ("The
//! Busy Beaver logical game"): for 3 cards the answers are 6 ones and 21
//! steps (Lin and Rado 1965). Beyond the chapter: 4 cards, 13 ones and 107
//! steps (Brady 1983), here proved again the way bbchallenge proved
//! 5 cards (The bbchallenge Collaboration, "Determination of the fifth Busy
//! Beaver value", 2025, arXiv:2509.12337): enumerate the machines in tree
//! normal form and decide each one.
//!
//! **What is enumerated.** Brady's *tree normal form* (TNF), exactly as the
//! bbchallenge paper (section "Enumerating Turing machines in Tree Normal
//! Form") counts it: the tree's root is the machine with no transition
//! defined; each node is run from the blank tape; a node that reaches an
//! undefined transition halts there (a *halting machine*: the halting step
//! counts as a step and writes a 1), and its children define that
//! transition in every way, with a new state only the next unused one, and
//! only moves to the right at the root; a node proved never to reach an
//! undefined transition is a leaf (a *nonhalting machine*: its undefined
//! transitions are unreachable, so all its completions run the same); a
//! child with no undefined transition left is not enumerated (it cannot
//! halt). Every node of the tree is one enumerated machine, so `machines`
//! = `nodes` = `halting` + nonhalting + `undecided`. Up to 4 states
//! ([`LISTED_STATES`]) each machine appears once in the results file, with
//! its verdict and the decider that gave it; at 5 states (181 million
//! machines) the summary keeps counts per decider and per stage, the
//! champions, every undecided machine and a histogram of the halting
//! machines' steps, so that its size does not grow with the tree.
//!
//! **Why the reductions keep the maxima.** The run of a machine from the
//! blank tape uses only the transitions it reaches, in the order it reaches
//! them; the TNF node that defines exactly those, in that order, runs the
//! same steps and writes the same ones. Renaming the states other than A
//! (A is the start) and exchanging left and right give the same run up to
//! names and mirror image. Writing a 1 on the halting step never writes
//! fewer ones than writing a 0. So every halting machine of the chapter's
//! syntactic count (`(4(N+1))^(2N)`: 16.7 million for 3 cards) has a TNF
//! halting machine with the same steps and at least as many ones, and the
//! maxima over the tree are the maxima over all machines. The tests check
//! this against plain brute force over every fully defined machine for N
//! = 1, 2, 3 ([`mod@reference`]).
//!
//! **Exactness.** A machine that no decider settles is counted in
//! `undecided` and listed: while `undecided > 0`, `max_ones` and
//! `max_steps` are only lower bounds, and the report says so (`exact:
//! false`). The stages, in the order they are tried, cheap ones first
//! ([`Stage`]; the deciders are bbchallenge's, implemented anew from the
//! paper's definitions): a run of `step_limit` steps watched for cyclers
//! and translated cyclers, backward reasoning, plain n-gram closed position
//! sets, a second watched run of `long_limit` steps (long pre-periods, late
//! halts), closed position sets over augmented alphabets (visit histories,
//! LRU histories), repeated word lists ([`decide`]), a deep stage of
//! long n-grams, long repeated words and finite automata reduction
//! ([`decide::DEEP`], [`far`]; `deep_gas` configurations per attempt),
//! weighted finite automata reduction ([`wfar`]; `deep_gas` times
//! [`decide::WFAR_GAS_FACTOR`] abstract configurations, certificates
//! checked by [`wfar::verify`]), a plain run to the `halt_horizon`
//! ([`simulate`]), and last, for the machines that ran that far, the last
//! resort of long translated cyclers, larger weighted automata and larger
//! DFAs (`--last-resort`, in [`Stage::Horizon`]): a machine is undecided only if it runs to the
//! horizon without halting and no decider proves it never halts, so a
//! long halting run is never mistaken for an undecided machine below the
//! horizon. For 4 states nothing is left undecided.
//!
//! **Units.** A unit is a TNF node and the subtree below it (or, for the
//! few root units above the frontier, the node alone). The root units are
//! the root and the level-1 halting nodes (alone) and the nodes of level 2
//! and the level-1 leaves (with their subtrees). The search walks a unit
//! depth first; when its budget runs out or it is asked to stop, it hands
//! back the unvisited nodes (its stack), each with its subtree, which
//! partition what it did not visit. Merging is a sum of counts (checked),
//! the larger maxima with the union of their champions, and the union of
//! the sorted listings: associative and commutative, ties broken by the
//! tables' order and not by the merge order.

pub mod audit;
mod backward;
pub mod cps;
pub mod decide;
pub mod far;
pub mod far_sat;
pub mod machine;
mod ngram;
mod params;
pub mod records;
pub mod reference;
mod report;
mod repwl;
mod search;
pub mod simulate;
mod watched;
pub mod wfar;

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use orchard_core::merge::checked_add;
use orchard_core::{Capabilities, Host, Probe, Probing};
use orchard_core::{
    Exploration, ExploreContext, FamilyError, FamilyReport, ParamError, SearchFamily,
};

pub use decide::{Attempt, Decider, Outcome, Stage, Workspace, STAGES};
pub use machine::{from_text, to_text, Table, MAX_STATES};
pub use params::BusyBeaverParams;
pub use search::{children, MAX_CHILDREN};
use wfar::supplied::{Checked, SuppliedCertificates};

/// Default step limit of the watched run before the deciders are asked.
pub const DEFAULT_STEP_LIMIT: u32 = 1_000;

/// Default steps of the second watched run, for the machines the cheap
/// deciders left: translated cyclers with long pre-periods and machines
/// that halt after thousands of steps are common at 5 states.
pub const DEFAULT_LONG_LIMIT: u32 = 100_000;

/// Default halting horizon: a machine every decider failed on is run this
/// far before it is called undecided. Set by cost, not by the answer: a
/// plain run of 10^8 steps takes a fraction of a second, and only the few
/// machines left at the end of the pipeline are run that far.
pub const DEFAULT_HALT_HORIZON: u32 = 100_000_000;

/// Largest `--long-limit` (the watched run keeps a tape and two stacks of
/// that many entries per worker thread: about 100 MB at most).
pub const MAX_LONG_LIMIT: u32 = 10_000_000;

/// Default configurations per attempt of the deep stage: enough for nine
/// in ten of the machines Coq-BB5 gives long n-grams or long repeated
/// words (measured with Coq-BB5's own parameters), and a failed attempt
/// costs milliseconds.
pub const DEFAULT_DEEP_GAS: u32 = 20_000;

/// Largest `--deep-gas`.
pub const MAX_DEEP_GAS: u32 = 10_000_000;

/// Largest `--halt-horizon`: step counts are `u32`.
pub const MAX_HALT_HORIZON: u32 = 4_000_000_000;

/// Default depth of backward reasoning.
pub const DEFAULT_DEPTH: u32 = 30;

/// Default longest n-grams of the closed position sets.
pub const DEFAULT_NGRAM: u32 = 4;

/// Most undecided machines the JSON report lists (the results file lists
/// them all).
pub const MAX_LISTED_UNDECIDED: usize = 1_000;

/// Up to this many states a summary lists every machine with its verdict
/// (858,909 at 4 states); beyond it (181 million at 5) only the counts,
/// the champions, the undecided machines and the histogram.
pub const LISTED_STATES: usize = 4;

/// One nonhalting verdict in this many is re-checked by plain simulation
/// (about 130,000 of the 5-state tree's 133 million).
pub const RECHECK_ONE_IN: u64 = 1024;

/// Steps of the plain run that re-checks a nonhalting verdict: 100 times
/// the default watched run, past every step a decider looked at.
pub const RECHECK_STEPS: u64 = 100_000;

/// How the line of a results file that gives the counts begins (at more
/// than [`LISTED_STATES`] states; below, every machine has its line).
pub const TOTALS_LINE: &str = "totals:";

/// Buckets of the halting machines' step histogram: bucket `i` counts the
/// machines halting after `2^i ..= 2^(i+1) - 1` steps (steps are `u32`).
pub const HISTOGRAM_BUCKETS: usize = 32;

/// A TNF node: the machine, and whether the unit is its whole subtree
/// (`true`) or the node alone (`false`, root units above the frontier).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BbUnit {
    pub table: Table,
    pub subtree: bool,
}

/// What a machine of the enumeration turned out to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Verdict {
    /// Halts on undefined transition `at` after `steps` steps (the halting
    /// one included) with `ones` ones (the halting step writes a 1).
    Halts { steps: u32, ones: u32, at: u8 },
    /// Never halts, as the decider proved.
    Never(Decider),
    /// Ran the step limit without halting; no decider settled it.
    Undecided,
}

/// One enumerated machine and its verdict.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Leaf {
    pub table: Table,
    pub verdict: Verdict,
}

impl Leaf {
    /// bbchallenge's text of the machine, the halting transition as `1RZ`.
    pub fn text(&self, n: usize) -> String {
        let at = match self.verdict {
            Verdict::Halts { at, .. } => Some(at as usize),
            _ => None,
        };
        to_text(&self.table, n, at)
    }

    /// The line of the results file: the machine, the verdict, the decider.
    pub fn line(&self, n: usize) -> String {
        let m = self.text(n);
        match self.verdict {
            Verdict::Halts { steps, ones, .. } => {
                format!("{m} halts after {steps} steps with {ones} ones: halt")
            }
            Verdict::Never(d) => format!("{m} never halts: {}", d.name()),
            Verdict::Undecided => format!("{m} undecided: none"),
        }
    }
}

/// What exploring some units found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BbSummary {
    /// Tree nodes visited: machines run and decided.
    pub nodes: u64,
    /// Machines that halt.
    pub halting: u64,
    /// Machines that never halt, by decider (in [`Decider::ALL`]'s order).
    pub never: [u64; Decider::COUNT],
    /// Machines no decider settled.
    pub undecided: u64,
    /// Machines settled per stage of the pipeline (in [`Stage::ALL`]'s
    /// order; the last, [`Stage::Undecided`], counts the undecided ones).
    pub settled_by: [u64; STAGES],
    /// Halting machines per stage that ran them to their halt.
    pub halted_by: [u64; STAGES],
    /// The work of each stage on every machine it was tried on, settled or
    /// not ([`Stage::unit`]): what a decider costs, the same whatever the
    /// machine or the cuts.
    pub effort: [u64; STAGES],
    /// Most ones written by a halting machine (0 when none halts).
    pub max_ones: u32,
    /// Most steps run by a halting machine (0 when none halts).
    pub max_steps: u32,
    /// The halting machines with `max_ones` ones, sorted.
    pub ones_champions: Vec<Leaf>,
    /// The halting machines with `max_steps` steps, sorted.
    pub steps_champions: Vec<Leaf>,
    /// The halting machines by their steps' bit length: bucket `i` counts
    /// those that halt after `2^i ..= 2^(i+1) - 1` steps.
    pub steps_histogram: [u64; HISTOGRAM_BUCKETS],
    /// Every machine no decider settled, sorted.
    pub undecided_machines: Vec<Leaf>,
    /// Halting verdicts of the watched runs re-checked by the plain
    /// simulator (all of them; the horizon's own are the plain
    /// simulator's).
    pub rechecked_halting: u64,
    /// Nonhalting verdicts re-checked by a plain run of
    /// [`RECHECK_STEPS`] steps (one machine in [`RECHECK_ONE_IN`], chosen
    /// by a hash of its table).
    pub rechecked_nonhalting: u64,
    /// Machines whose re-check disagreed with their verdict, sorted, with
    /// the verdict the pipeline gave: each one makes the answer inexact.
    pub recheck_failures: Vec<Leaf>,
    /// Every machine, sorted by table, when the job lists them (at most
    /// [`LISTED_STATES`] states; empty beyond).
    pub leaves: Vec<Leaf>,
}

impl BbSummary {
    /// Machines that never halt.
    pub fn nonhalting(&self) -> u64 {
        self.never.iter().sum()
    }

    /// Machines enumerated.
    pub fn machines(&self) -> u64 {
        self.halting + self.nonhalting() + self.undecided
    }

    /// Sorts the listings (the invariant merging relies on).
    fn normalise(&mut self) {
        self.leaves.sort();
        self.undecided_machines.sort();
        self.recheck_failures.sort();
        self.ones_champions.sort();
        self.steps_champions.sort();
    }
}

/// The `busy-beaver` family: one job of it, with its checked parameters.
#[derive(Debug, Clone)]
pub struct BusyBeaver {
    n: usize,
    step_limit: u32,
    depth: u32,
    ngram: u32,
    long_limit: u32,
    halt_horizon: u32,
    deep_gas: u32,
    last_resort: bool,
    /// The last resort's meet-in-the-middle WFAR search (`--mitm-wfar`).
    mitm_wfar: bool,
    /// The last resort's SAT solver (`--far-solver`), as the job names it
    /// and as this host runs it.
    far_solver: Option<(far_sat::SolverRef, Arc<dyn far_sat::Solver>)>,
    /// The job's supplied certificates (`--certificates`), as submitted
    /// and as verified.
    certificates: Option<(SuppliedCertificates, Arc<[Checked]>)>,
}

/// Where the time of [`BusyBeaver::measure`] went.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timings {
    /// Nanoseconds per stage ([`Stage::ALL`]'s order).
    pub nanos: [u64; STAGES],
    /// Nanoseconds of a plain run of `step_limit` steps of every machine
    /// (the baseline the pipeline's rate is compared with).
    pub plain_nanos: u64,
}

/// Folds the champions of `other` (with maximum `theirs`) into `ours`.
fn merge_champions(max: &mut u32, ours: &mut Vec<Leaf>, theirs: u32, other: Vec<Leaf>) {
    if other.is_empty() {
        return;
    }
    if ours.is_empty() || theirs > *max {
        *max = theirs;
        *ours = other;
    } else if theirs == *max {
        ours.extend(other);
        ours.sort();
        ours.dedup();
    }
}

/// Adds `b` into `a`, entry by entry, checked.
fn add_all(a: &mut [u64], b: &[u64], what: &'static str) -> Result<(), FamilyError> {
    for (x, &y) in a.iter_mut().zip(b) {
        *x = checked_add(*x, y, what)?;
    }
    Ok(())
}

/// Merges two sorted lists into one sorted list.
fn merge_sorted(into: &mut Vec<Leaf>, other: Vec<Leaf>) {
    if other.is_empty() {
        return;
    }
    // Two sorted runs: the stable sort merges them in linear time.
    into.extend(other);
    into.sort();
}

impl BusyBeaver {
    /// Number of states.
    pub fn states(&self) -> usize {
        self.n
    }

    /// A workspace for this job's runs.
    pub fn workspace(&self) -> Workspace {
        Workspace::with_limits(
            self.step_limit,
            self.depth,
            self.ngram,
            self.long_limit,
            self.halt_horizon,
        )
        .with_deep_gas(self.deep_gas)
        .with_last_resort(self.last_resort)
        .with_mitm_wfar(self.mitm_wfar)
        .with_far_solver(self.far_solver.as_ref().map(|(_, s)| Arc::clone(s)))
        .with_certificates(self.certificates.as_ref().map(|(_, c)| Arc::clone(c)))
    }

    /// Explores `unit` whole in this thread with every stage timed, and
    /// each machine also run plainly for `step_limit` steps to compare
    /// with: for measurements (`examples/bb5_sample.rs`); the cluster
    /// never calls it. Returns the summary and the nanoseconds per stage.
    pub fn measure(&self, unit: &BbUnit) -> Result<(BbSummary, Timings), FamilyError> {
        self.check_unit(unit)?;
        let flags = orchard_core::LocalFlags::default();
        let ctx = flags.context(u64::MAX);
        let mut ws = self.workspace();
        ws.timed = true;
        let mut search = search::Search {
            n: self.n,
            list: false,
            ws,
            ctx: &ctx,
        };
        let summary = match search.explore(unit)? {
            Exploration::Finished(s) => s,
            Exploration::Split { .. } => unreachable!("no budget and no stop"),
        };
        Ok((
            summary,
            Timings {
                nanos: search.ws.nanos,
                plain_nanos: search.ws.plain_nanos,
            },
        ))
    }

    /// Whether summaries list every machine ([`LISTED_STATES`]).
    pub fn lists_machines(&self) -> bool {
        self.n <= LISTED_STATES
    }

    fn check_unit(&self, unit: &BbUnit) -> Result<(), FamilyError> {
        if !machine::is_well_formed(&unit.table, self.n) {
            return Err(FamilyError::BadUnit(format!(
                "{:?} is not a table of {} states",
                unit.table, self.n
            )));
        }
        Ok(())
    }
}

impl SearchFamily for BusyBeaver {
    const NAME: &'static str = "busy-beaver";
    const ABOUT: &'static str =
        "busy beaver: every N-card Turing machine in tree normal form, run and decided";

    type Params = BusyBeaverParams;
    type Unit = BbUnit;
    type Summary = BbSummary;

    fn new(p: BusyBeaverParams, host: &Host) -> Result<Self, ParamError> {
        if p.states == 0 || p.states as usize > MAX_STATES {
            return Err(ParamError::new(
                "states",
                format!("must be between 1 and {MAX_STATES}, got {}", p.states),
            ));
        }
        if !(100..=1_000_000).contains(&p.step_limit) {
            return Err(ParamError::new(
                "step-limit",
                format!("must be between 100 and 1000000, got {}", p.step_limit),
            ));
        }
        if p.depth > decide::MAX_DEPTH {
            return Err(ParamError::new(
                "depth",
                format!("must be at most {}, got {}", decide::MAX_DEPTH, p.depth),
            ));
        }
        if p.ngram > decide::MAX_NGRAM {
            return Err(ParamError::new(
                "ngram",
                format!("must be at most {}, got {}", decide::MAX_NGRAM, p.ngram),
            ));
        }
        if p.long_limit != 0 && !(p.step_limit..=MAX_LONG_LIMIT).contains(&p.long_limit) {
            return Err(ParamError::new(
                "long-limit",
                format!(
                    "must be 0 or between the step limit ({}) and {MAX_LONG_LIMIT}, got {}",
                    p.step_limit, p.long_limit
                ),
            ));
        }
        let watched = p.step_limit.max(p.long_limit);
        if p.halt_horizon != 0 && !(watched..=MAX_HALT_HORIZON).contains(&p.halt_horizon) {
            return Err(ParamError::new(
                "halt-horizon",
                format!(
                    "must be 0 or between the longest watched run ({watched}) and \
                     {MAX_HALT_HORIZON}, got {}",
                    p.halt_horizon
                ),
            ));
        }
        if p.deep_gas > MAX_DEEP_GAS {
            return Err(ParamError::new(
                "deep-gas",
                format!("must be at most {MAX_DEEP_GAS}, got {}", p.deep_gas),
            ));
        }
        if let Some(r) = &p.far_solver {
            r.check().map_err(|e| ParamError::new("far-solver", e))?;
            if !p.last_resort || p.halt_horizon <= watched {
                return Err(ParamError::new(
                    "far-solver",
                    "the solver serves the last resort: not with --last-resort false or without \
                     a halting horizon",
                ));
            }
        }
        let certificates = match &p.certificates {
            None => None,
            Some(c) => {
                if !p.last_resort || p.halt_horizon <= watched {
                    return Err(ParamError::new(
                        "certificates",
                        "the certificates serve the last resort: not with --last-resort false or \
                         without a halting horizon",
                    ));
                }
                let checked = c
                    .check(p.states as usize)
                    .map_err(|e| ParamError::new("certificates", format!("{}: {e}", c.name)))?;
                Some((c.clone(), Arc::from(checked)))
            }
        };
        if p.mitm_wfar && !p.last_resort {
            return Err(ParamError::new(
                "mitm-wfar",
                "the search serves the last resort: not with --last-resort false",
            ));
        }
        let far_solver = p.far_solver.clone().map(|r| {
            let solver: Arc<dyn far_sat::Solver> =
                Arc::new(far_sat::ProgramSolver::new(host.programs.clone(), &r));
            (r, solver)
        });
        Ok(BusyBeaver {
            far_solver,
            certificates,
            deep_gas: p.deep_gas,
            last_resort: p.last_resort,
            mitm_wfar: p.mitm_wfar,
            n: p.states as usize,
            step_limit: p.step_limit,
            depth: p.depth,
            ngram: p.ngram,
            long_limit: p.long_limit,
            halt_horizon: p.halt_horizon,
        })
    }

    fn root_units(&self) -> Vec<BbUnit> {
        let mut ws = self.workspace();
        let mut units = Vec::new();
        let mut kids = [[0u8; 2 * MAX_STATES]; MAX_CHILDREN];
        let mut grandkids = [[0u8; 2 * MAX_STATES]; MAX_CHILDREN];
        let root = [0u8; 2 * MAX_STATES];
        units.push(BbUnit {
            table: root,
            subtree: false,
        });
        let Outcome::Halts { at, .. } = ws.decide(&root, self.n) else {
            unreachable!("the root halts on its first step");
        };
        let k = children(&root, self.n, at as usize, &mut kids);
        for kid in &kids[..k] {
            match ws.decide(kid, self.n) {
                Outcome::Halts { at, .. } => {
                    units.push(BbUnit {
                        table: *kid,
                        subtree: false,
                    });
                    let g = children(kid, self.n, at as usize, &mut grandkids);
                    units.extend(grandkids[..g].iter().map(|&table| BbUnit {
                        table,
                        subtree: true,
                    }));
                }
                _ => units.push(BbUnit {
                    table: *kid,
                    subtree: true,
                }),
            }
        }
        units
    }

    fn explore(
        &self,
        unit: &BbUnit,
        ctx: &ExploreContext<'_>,
    ) -> Result<Exploration<BbSummary, BbUnit>, FamilyError> {
        self.check_unit(unit)?;
        search::Search {
            n: self.n,
            list: self.lists_machines(),
            ws: self.workspace(),
            ctx,
        }
        .explore(unit)
    }

    fn merge(&self, into: &mut BbSummary, other: BbSummary) -> Result<(), FamilyError> {
        into.nodes = checked_add(into.nodes, other.nodes, "busy-beaver nodes")?;
        into.halting = checked_add(into.halting, other.halting, "busy-beaver halting")?;
        add_all(&mut into.never, &other.never, "busy-beaver nonhalting")?;
        into.undecided = checked_add(into.undecided, other.undecided, "busy-beaver undecided")?;
        add_all(&mut into.settled_by, &other.settled_by, "busy-beaver stage")?;
        add_all(&mut into.halted_by, &other.halted_by, "busy-beaver stage")?;
        add_all(&mut into.effort, &other.effort, "busy-beaver effort")?;
        add_all(
            &mut into.steps_histogram,
            &other.steps_histogram,
            "busy-beaver histogram",
        )?;
        merge_champions(
            &mut into.max_ones,
            &mut into.ones_champions,
            other.max_ones,
            other.ones_champions,
        );
        merge_champions(
            &mut into.max_steps,
            &mut into.steps_champions,
            other.max_steps,
            other.steps_champions,
        );
        merge_sorted(&mut into.undecided_machines, other.undecided_machines);
        into.rechecked_halting = checked_add(
            into.rechecked_halting,
            other.rechecked_halting,
            "busy-beaver rechecks",
        )?;
        into.rechecked_nonhalting = checked_add(
            into.rechecked_nonhalting,
            other.rechecked_nonhalting,
            "busy-beaver rechecks",
        )?;
        merge_sorted(&mut into.recheck_failures, other.recheck_failures);
        merge_sorted(&mut into.leaves, other.leaves);
        Ok(())
    }

    fn nodes(s: &BbSummary) -> u64 {
        s.nodes
    }

    fn report(&self, s: &BbSummary) -> FamilyReport {
        self.build_report(s)
    }

    fn capabilities(&self) -> Capabilities<'_, Self> {
        Capabilities {
            probing: Some(self),
            ..Capabilities::default()
        }
    }

    fn unit_label(&self, u: &BbUnit) -> String {
        let t = to_text(&u.table, self.n, None);
        if u.subtree {
            t
        } else {
            format!("{t} (alone)")
        }
    }
}

impl Probing<BusyBeaver> for BusyBeaver {
    /// A random walk down the TNF tree below `unit` (no bound).
    fn probe(
        &self,
        unit: &BbUnit,
        _bound: u64,
        pick: &mut dyn FnMut(u64) -> u64,
    ) -> Result<Probe, FamilyError> {
        self.check_unit(unit)?;
        let flags = orchard_core::LocalFlags::default();
        let ctx = flags.context(u64::MAX);
        Ok(search::Search {
            n: self.n,
            list: self.lists_machines(),
            ws: self.workspace(),
            ctx: &ctx,
        }
        .probe(unit, pick))
    }
}
