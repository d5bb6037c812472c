//! What happens to one machine of the enumeration: it is run from the blank
//! tape, and either reaches an undefined transition (it halts there: a
//! halting machine, whose children define that transition) or is proved
//! never to reach one by a decider, or stays undecided.
//!
//! The deciders are bbchallenge's (The bbchallenge Collaboration,
//! "Determination of the fifth Busy Beaver value", 2025, arXiv:2509.12337,
//! section "Loops" and the translated-cycler and backward-reasoning
//! deciders of github.com/bbchallenge/bbchallenge-deciders); this is an
//! independent implementation of their definitions:
//!
//! * **Cycler**: the machine comes back to a configuration (state, head
//!   position, whole tape) it was in before, so it repeats forever. Found
//!   with Brent's cycle detection: the configuration at times 1, 2, 4, 8...
//!   is kept, and every later one compared with it (state and position
//!   first, the tape only when both agree).
//! * **Translated cycler**: two *record* configurations on the same side
//!   (the head on a cell never visited before, beyond every visited one),
//!   in the same state, at times `t1 < t2` and positions `p1`, `p2`; let
//!   `L` be the farthest the head went back from `p1` between `t1` and `t2`.
//!   If the `L + 1` cells ending at `p1` at `t1` equal the `L + 1` cells
//!   ending at `p2` at `t2` (and beyond each record the tape is blank),
//!   what happened from `t1` to `t2` depended only on those cells and
//!   happens again, shifted by `p2 - p1`, forever (the paper's Lemma on
//!   translated cyclers). The farthest excursion comes from a stack of
//!   suffix minima (maxima on the left side) of the head positions; each
//!   record keeps the 128 cells behind it, so `L < 128`, and is compared
//!   with the last [`RECORDS_KEPT`] records of its side.
//! * **Backward reasoning**: from each undefined transition `(s, r)`, walk
//!   backwards: a configuration known on a few cells has as predecessors the
//!   defined transitions into its state whose write agrees with the cell
//!   the head came from. If every backward chain contradicts itself within
//!   `depth` steps, no run of `depth` steps or more ends on an undefined
//!   transition; the machine ran `steps >= depth` steps without halting,
//!   so it never halts.
//! * **n-gram closed position sets** (NGramCPS): the local configurations
//!   (`k` cells left of the head, state, cell read, `k` cells right) closed
//!   under the machine's steps, the far cells taken from the n-grams seen
//!   so far (`Workspace::ngram_cps`); if the closed set holds no
//!   undefined transition, no run reaches one. Tried for `k = 1..=ngram`,
//!   then over augmented alphabets ([`crate::cps`]).
//! * **Repeated word lists** (RepWL) ([`crate::repwl`]).
//! * **Finite automata reduction** (FAR) ([`crate::far`]), with the long
//!   n-grams and long repeated words of the deep stage ([`DEEP`]).
//! * **Weighted finite automata reduction** (WFAR) ([`crate::wfar`]):
//!   counters whose invariant is a weighted count of tape patterns; its
//!   search costs seconds on a failure, so it comes after the deep stage,
//!   and a certificate it finds counts only once [`crate::wfar::verify`]
//!   accepted it.
//!
//! The order ([`Stage`]) is by cost per machine settled, measured on
//! samples of the 5-state tree (`examples/bb5_sample.rs`): the watched run
//! settles about 97% of the machines at about a microsecond each,
//! backward reasoning and the plain closed position sets most of the rest
//! at 1-10 us, the augmented sets tens of microseconds; the second,
//! longer watched run (milliseconds) and RepWL (tenths of a second) see
//! only the few machines every cheaper stage failed on, the deep stage
//! (up to a second on a machine it fails on) fewer still, and the plain run
//! to the halting horizon ([`crate::simulate`]) only those every decider
//! failed on. A stage that cannot settle a machine is sound to skip, so
//! the order changes costs, never verdicts.
//!
//! A decided machine never reaches an undefined transition, so every way of
//! defining its undefined transitions gives the same run: it is a leaf of
//! the tree. Nothing here allocates: the buffers live in a [`Workspace`]
//! made once per exploration.

use crate::backward::Back;
use crate::cps::{Augment, Cps};
use crate::far::Far;
use crate::far_sat::Solver;
use crate::machine::{Table, MAX_STATES};
use crate::records::Records;
use crate::repwl::RepWl;
use crate::simulate::{Plain, PlainRun};
use crate::watched::Ring;
use crate::wfar::mitm::Mitm;
use crate::wfar::Wfar;
use std::sync::Arc;
use std::time::Instant;

mod last_resort;

pub use last_resort::{
    LastResort, LAST_FAR_DFA, LAST_FAR_GAS, LAST_FAR_RUN, LAST_LOOP, LAST_MITM, LAST_WFAR_GAS,
    LAST_WFAR_SIZES,
};

/// The augmented closed position sets tried, in order, after the plain
/// ones: (augmentation, n-gram length), after Coq-BB5's 4-state pipeline.
pub const AUGMENTED: [(Augment, u32); 10] = [
    (Augment::History(2), 2),
    (Augment::History(2), 3),
    (Augment::History(4), 2),
    (Augment::History(4), 3),
    (Augment::History(6), 2),
    (Augment::History(6), 3),
    (Augment::History(8), 2),
    (Augment::History(8), 3),
    (Augment::Lru, 2),
    (Augment::History(10), 4),
];

/// The repeated-word-list parameters tried, in order: (word length,
/// repeat threshold); Coq-BB5 settles the two 4-state machines that need it
/// with (4, 3). The longer words come from the 5-state machines that a
/// sample of the tree leaves to this stage (bouncers whose repeated blocks
/// are 5 to 8 cells long); only the few machines every cheaper decider
/// failed on get this far, so the list can be long.
pub const REPWL: [(u32, u8); 11] = [
    (2, 3),
    (3, 3),
    (4, 3),
    (4, 4),
    (5, 3),
    (6, 3),
    (6, 4),
    (1, 3),
    (5, 4),
    (8, 3),
    (8, 4),
];

/// One attempt of the deep stage ([`DEEP`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attempt {
    /// Finite automata reduction with DFAs of at most this many states.
    Far(usize),
    /// A closed position set: augmentation (history 0: plain), n-gram
    /// length.
    Cps(Augment, u32),
    /// Repeated word lists: word length, threshold.
    RepWl(u32, u8),
}

/// The deep stage's attempts, in order, for the few machines every
/// cheaper stage failed on (about one in 150,000 at 5 states): the
/// parameters that Coq-BB5's per-machine lists give its hardest
/// machines (long n-grams, plain or with visit histories, and long
/// repeated words), ordered by how many of them each settles and what a
/// failure costs, each bounded by the workspace's deep gas
/// ([`Workspace::with_deep_gas`]).
pub const DEEP: [Attempt; 66] = {
    use Attempt::{Cps, Far, RepWl};
    use Augment::{History, Lru};
    [
        RepWl(2, 2),
        RepWl(3, 2),
        RepWl(2, 4),
        RepWl(1, 4),
        RepWl(3, 4),
        RepWl(4, 2),
        RepWl(5, 2),
        RepWl(6, 2),
        RepWl(8, 2),
        Far(4),
        Cps(History(0), 5),
        Cps(History(0), 6),
        Cps(History(0), 7),
        Cps(History(0), 8),
        Cps(History(0), 9),
        Cps(History(0), 10),
        Cps(History(0), 11),
        Cps(History(0), 12),
        Cps(Lru, 3),
        Cps(Lru, 4),
        Cps(Lru, 5),
        Cps(Lru, 6),
        RepWl(7, 2),
        RepWl(9, 2),
        RepWl(10, 2),
        RepWl(11, 2),
        RepWl(12, 2),
        RepWl(13, 2),
        RepWl(14, 2),
        RepWl(15, 2),
        RepWl(16, 2),
        RepWl(17, 2),
        RepWl(9, 3),
        RepWl(10, 3),
        RepWl(11, 3),
        RepWl(12, 3),
        RepWl(18, 2),
        RepWl(20, 2),
        RepWl(24, 2),
        RepWl(28, 2),
        RepWl(35, 2),
        Cps(History(2), 8),
        Cps(History(2), 10),
        Cps(History(2), 11),
        Cps(History(2), 12),
        Cps(History(3), 12),
        Cps(History(4), 12),
        Cps(History(5), 5),
        Cps(History(5), 10),
        Cps(History(5), 11),
        Cps(History(6), 11),
        Cps(History(6), 12),
        Cps(History(7), 10),
        Cps(History(7), 11),
        Cps(History(10), 9),
        Cps(History(0), 13),
        Cps(History(0), 14),
        Cps(History(0), 15),
        Cps(History(0), 16),
        Cps(History(0), 17),
        Cps(History(0), 18),
        Cps(History(0), 19),
        Cps(History(0), 20),
        Cps(History(0), 21),
        Cps(History(0), 22),
        Far(5),
    ]
};

/// Attempts retried with [`DEEPER_GAS_FACTOR`] times the deep gas, last:
/// a few of Coq-BB5's hardest machines need n-grams of 20 or 21 cells, or
/// words of 20, with 40,000 to 150,000 configurations.
pub const DEEPER: [Attempt; 3] = [
    Attempt::Cps(Augment::History(0), 20),
    Attempt::Cps(Augment::History(0), 21),
    Attempt::RepWl(20, 2),
];

/// How much more gas [`DEEPER`]'s attempts get than [`DEEP`]'s.
pub const DEEPER_GAS_FACTOR: usize = 8;

/// Abstract configurations the WFAR stage may build per machine, per
/// configuration of the deep gas: with the default deep gas, 40 million
/// (about two seconds), enough for the automata of 4 and 3 states
/// (Coq-BB5's counters need 1.3 to 1.7 million) and most pairs of 4.
pub const WFAR_GAS_FACTOR: u64 = 2_000;

/// Steps of one RepWL macro step, and configurations of one RepWL graph.
pub const REPWL_STEPS: u32 = 320;
pub const REPWL_NODES: usize = 10_000;

/// Most local configurations an augmented closed position set may hold.
pub const CPS_GAS: usize = 10_000;

/// Records of each side a new record is compared with.
pub const RECORDS_KEPT: usize = 64;

/// Most configurations one backward-reasoning attempt looks at.
pub const BACKWARD_CONFIGS: usize = 100_000;

/// Longest n-grams of the closed position sets.
pub const MAX_NGRAM: u32 = 10;

/// Largest backward-reasoning depth (the known cells of a backward
/// configuration are a 128-bit window around the halting cell).
pub const MAX_DEPTH: u32 = 60;

/// What settled a machine that never halts.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Decider {
    Cycler,
    TranslatedCycler,
    BackwardReasoning,
    NGramCps,
    NGramCpsHistory,
    NGramCpsLru,
    RepWl,
    FiniteAutomataReduction,
    WeightedFiniteAutomataReduction,
}

impl Decider {
    /// Number of deciders.
    pub const COUNT: usize = 9;

    pub const ALL: [Decider; 9] = [
        Decider::Cycler,
        Decider::TranslatedCycler,
        Decider::BackwardReasoning,
        Decider::NGramCps,
        Decider::NGramCpsHistory,
        Decider::NGramCpsLru,
        Decider::RepWl,
        Decider::FiniteAutomataReduction,
        Decider::WeightedFiniteAutomataReduction,
    ];

    /// The name in reports and the results file.
    pub fn name(self) -> &'static str {
        match self {
            Decider::Cycler => "cycler",
            Decider::TranslatedCycler => "translated-cycler",
            Decider::BackwardReasoning => "backward-reasoning",
            Decider::NGramCps => "ngram-cps",
            Decider::NGramCpsHistory => "ngram-cps-history",
            Decider::NGramCpsLru => "ngram-cps-lru",
            Decider::RepWl => "repwl",
            Decider::FiniteAutomataReduction => "finite-automata-reduction",
            Decider::WeightedFiniteAutomataReduction => "weighted-finite-automata-reduction",
        }
    }
}

/// What running (and deciding) one machine found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Reached undefined transition `at` (`2 * state + read`): halts after
    /// `steps` steps (the halting one included) with `ones` ones (the
    /// halting step writing a 1).
    Halts { steps: u32, ones: u32, at: u8 },
    /// Never reaches an undefined transition.
    Never(Decider),
    /// Ran its step limit without halting, and no decider settled it.
    Undecided,
}

/// The buffers of [`Workspace::decide`], made once per exploration.
pub struct Workspace {
    pub(crate) steps: u32,
    pub(crate) depth: u32,
    /// Steps of the second, longer watched run (not above `steps`: none).
    pub(crate) long: u32,
    /// Steps of the plain run to the halting horizon (not above the
    /// watched runs: none).
    horizon: u32,
    /// The tape of the watched runs, origin at [`Workspace::origin`].
    pub(crate) tape: Vec<u8>,
    /// Brent's kept configuration's tape (its visited cells).
    pub(crate) snap: Vec<u8>,
    /// (time, position) of the head positions no later visit went below.
    pub(crate) min_stack: Vec<(u32, u32)>,
    /// (time, position) of the head positions no later visit went above.
    pub(crate) max_stack: Vec<(u32, u32)>,
    pub(crate) right: Box<Ring>,
    pub(crate) left: Box<Ring>,
    pub(crate) back: Vec<Back>,
    /// Backward configurations the last attempt looked at.
    pub(crate) back_seen: usize,
    /// Longest n-grams of the closed position sets (0: none).
    ngram: u32,
    /// The local configurations met (bit per configuration) and their list.
    pub(crate) cps_seen: Vec<u64>,
    pub(crate) cps_list: Vec<u32>,
    /// The left and right n-grams met, a bit each.
    pub(crate) cps_left: Vec<u64>,
    pub(crate) cps_right: Vec<u64>,
    /// The augmented sets' containers.
    cps: Cps,
    /// The repeated word lists' containers.
    repwl: RepWl,
    /// The finite automata reduction's buffers.
    far: Far,
    /// The weighted finite automata reduction's buffers.
    wfar: Wfar,
    /// The meet-in-the-middle WFAR search's buffers.
    mitm: Mitm,
    /// Whether the last resort runs the meet-in-the-middle WFAR search
    /// ([`Workspace::with_mitm_wfar`]).
    mitm_on: bool,
    /// The long translated-cycler run's buffers.
    records: Records,
    /// The plain simulator of the halting horizon.
    plain: Plain,
    /// Most configurations (local configurations, word-list
    /// configurations, DFA prefixes) one attempt of the deep stage may
    /// meet (0: no deep stage).
    deep_gas: usize,
    /// Whether machines that ran to the halting horizon go on to the last
    /// resort ([`Workspace::with_last_resort`]).
    last_resort_on: bool,
    /// The certificate of the last machine the last resort settled.
    pub last_resort: Option<LastResort>,
    /// The SAT solver the last resort asks for DFAs last
    /// ([`Workspace::with_far_solver`]).
    far_solver: Option<Arc<dyn Solver>>,
    /// The job's supplied certificates, verified
    /// ([`Workspace::with_certificates`]).
    certificates: Option<Arc<[crate::wfar::supplied::Checked]>>,
    /// Why the last machine could not be decided as the job asks (its
    /// SAT solver failed or answered a model that is not a certificate):
    /// the caller fails the attempt ([`Workspace::take_failure`]).
    failure: Option<String>,
    /// The cells the last run visited (to clear them).
    pub(crate) touched: (usize, usize),
    /// The stage that settled the last machine (or gave up on it).
    pub last_stage: Stage,
    /// Work done per stage since the workspace was made, in the stage's
    /// own unit ([`Stage::unit`]): what each decider cost, deterministically.
    pub effort: [u64; STAGES],
    /// Whether [`Workspace::decide`] times its stages (into `nanos`).
    pub timed: bool,
    /// Nanoseconds spent per stage (when `timed`), for measurements: the
    /// settling stage gets the time of its own work, the failed stages
    /// before it theirs.
    pub nanos: [u64; STAGES],
    /// Nanoseconds of a plain run of `steps` steps of each machine (when
    /// `timed`): the baseline of a simulator that decides nothing.
    pub plain_nanos: u64,
}

/// The stages of [`Workspace::decide`], in the order they are tried (a
/// machine goes on to the next only if the stage did not settle it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    /// The watched run: halting, cyclers and translated cyclers.
    Run,
    /// Backward reasoning.
    Backward,
    /// The plain n-gram closed position sets.
    NGramCps,
    /// The closed position sets over augmented alphabets.
    Augmented,
    /// The watched run again, longer: long pre-periods and late halts.
    LongRun,
    /// Repeated word lists.
    RepWl,
    /// Long n-grams, long repeated words, finite automata reduction
    /// ([`DEEP`]).
    Deep,
    /// Weighted finite automata reduction ([`crate::wfar`]).
    Wfar,
    /// The plain run to the halting horizon; then, for the machines that
    /// ran that far, when the job asks for it, the last resort: long
    /// translated cyclers, larger weighted automata, weighted automata on
    /// DFA pairs and larger DFAs ([`LAST_LOOP`], [`LAST_WFAR_SIZES`],
    /// [`LAST_MITM`], [`LAST_FAR_DFA`];
    /// [`Workspace::last_resort`] keeps its certificate). One stage, so
    /// that a summary's per-stage counts keep their layout.
    Horizon,
    /// Nothing settled the machine.
    Undecided,
}

/// Number of [`Stage`]s.
pub const STAGES: usize = 10;

impl Stage {
    pub const ALL: [Stage; STAGES] = [
        Stage::Run,
        Stage::Backward,
        Stage::NGramCps,
        Stage::Augmented,
        Stage::LongRun,
        Stage::RepWl,
        Stage::Deep,
        Stage::Wfar,
        Stage::Horizon,
        Stage::Undecided,
    ];

    /// The name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Run => "run",
            Stage::Backward => "backward-reasoning",
            Stage::NGramCps => "ngram-cps",
            Stage::LongRun => "long-run",
            Stage::Augmented => "ngram-cps-augmented",
            Stage::RepWl => "repwl",
            Stage::Deep => "deep",
            Stage::Wfar => "wfar",
            Stage::Horizon => "halting-horizon",
            Stage::Undecided => "undecided",
        }
    }

    /// What [`Workspace::effort`] counts for this stage.
    pub fn unit(self) -> &'static str {
        match self {
            Stage::Run | Stage::LongRun => "steps",
            Stage::Horizon => {
                "steps (and the last resort's abstract configurations and DFA prefixes)"
            }
            Stage::Backward => "backward configurations",
            Stage::NGramCps | Stage::Augmented => "local configurations",
            Stage::RepWl => "word-list configurations",
            Stage::Deep => "configurations and DFA prefixes",
            Stage::Wfar => "abstract configurations",
            Stage::Undecided => "-",
        }
    }
}

impl Workspace {
    /// Buffers for runs of at most `steps` steps and backward reasoning to
    /// `depth` (at most `steps` and [`MAX_DEPTH`]), with no longer run and
    /// no halting horizon.
    pub fn new(steps: u32, depth: u32, ngram: u32) -> Workspace {
        Workspace::with_limits(steps, depth, ngram, 0, 0)
    }

    /// Buffers for the whole pipeline: besides [`Workspace::new`]'s, a
    /// second watched run of `long` steps and a plain run to `horizon`
    /// steps (each skipped when not longer than the runs before it).
    pub fn with_limits(steps: u32, depth: u32, ngram: u32, long: u32, horizon: u32) -> Workspace {
        assert!(depth <= steps && depth <= MAX_DEPTH && ngram <= MAX_NGRAM);
        let longest = steps.max(long) as usize;
        let cells = 2 * longest + 3;
        let configs = 1usize << (2 * ngram + 4);
        Workspace {
            steps,
            depth,
            long,
            horizon,
            tape: vec![0; cells],
            snap: vec![0; cells],
            min_stack: Vec::with_capacity(longest + 1),
            max_stack: Vec::with_capacity(longest + 1),
            right: Box::new(Ring::new()),
            left: Box::new(Ring::new()),
            back: Vec::with_capacity(BACKWARD_CONFIGS + 8 * MAX_STATES),
            back_seen: 0,
            ngram,
            cps_seen: vec![0; configs.div_ceil(64)],
            cps_list: Vec::with_capacity(configs.min(1 << 16)),
            cps_left: vec![0; (1usize << ngram).div_ceil(64)],
            cps_right: vec![0; (1usize << ngram).div_ceil(64)],
            cps: Cps::default(),
            repwl: RepWl::default(),
            far: Far::default(),
            wfar: Wfar::default(),
            mitm: Mitm::default(),
            mitm_on: true,
            records: Records::default(),
            plain: Plain::default(),
            deep_gas: 0,
            last_resort_on: false,
            last_resort: None,
            far_solver: None,
            certificates: None,
            failure: None,
            touched: (0, 0),
            last_stage: Stage::Run,
            effort: [0; STAGES],
            timed: false,
            nanos: [0; STAGES],
            plain_nanos: 0,
        }
    }

    /// Machines that run to the halting horizon go on to the last resort
    /// (see [`Stage::Horizon`]).
    pub fn with_last_resort(mut self, on: bool) -> Workspace {
        self.last_resort_on = on;
        self
    }

    /// The same with a deep stage of `gas` configurations per attempt
    /// (0: none).
    pub fn with_deep_gas(mut self, gas: u32) -> Workspace {
        self.deep_gas = gas as usize;
        self
    }

    /// Runs the `n`-state machine `table` from the blank tape and decides it,
    /// stage by stage, cheap ones first (see [`Stage`]); the stage that
    /// settled it is left in [`Workspace::last_stage`].
    pub fn decide(&mut self, table: &Table, n: usize) -> Outcome {
        self.failure = None;
        let mut clock = self.timed.then(Instant::now);
        let outcome = self.stages(table, n, &mut clock);
        if let Some(start) = clock {
            let now = Instant::now();
            self.nanos[self.last_stage as usize] += (now - start).as_nanos() as u64;
            std::hint::black_box(self.plain.run(table, n, u64::from(self.steps)));
            self.plain_nanos += now.elapsed().as_nanos() as u64;
        }
        outcome
    }

    /// Closes the timing of `stage` and opens the next one's.
    fn lap(&mut self, stage: Stage, clock: &mut Option<Instant>) {
        if let Some(start) = clock {
            let now = Instant::now();
            self.nanos[stage as usize] += (now - *start).as_nanos() as u64;
            *start = now;
        }
    }

    fn stages(&mut self, table: &Table, n: usize, clock: &mut Option<Instant>) -> Outcome {
        self.last_stage = Stage::Run;
        let (outcome, steps) = self.run(table, n, self.steps);
        self.effort[Stage::Run as usize] += u64::from(steps);
        if outcome != Outcome::Undecided {
            return outcome;
        }
        self.lap(Stage::Run, clock);
        self.last_stage = Stage::Backward;
        if self.depth > 0 {
            let settled = self.backward(table, n);
            self.effort[Stage::Backward as usize] += self.back_seen as u64;
            if settled {
                return Outcome::Never(Decider::BackwardReasoning);
            }
        }
        self.lap(Stage::Backward, clock);
        self.last_stage = Stage::NGramCps;
        for k in 1..=self.ngram {
            let settled = self.ngram_cps(table, k);
            self.effort[Stage::NGramCps as usize] += self.cps_list.len() as u64;
            if settled {
                return Outcome::Never(Decider::NGramCps);
            }
        }
        self.lap(Stage::NGramCps, clock);
        self.last_stage = Stage::Augmented;
        for &(how, k) in &AUGMENTED {
            if k <= self.ngram {
                let settled = self.cps.decide(table, k, how, CPS_GAS);
                self.effort[Stage::Augmented as usize] += self.cps.configs() as u64;
                if settled {
                    return Outcome::Never(match how {
                        Augment::History(_) => Decider::NGramCpsHistory,
                        Augment::Lru => Decider::NGramCpsLru,
                    });
                }
            }
        }
        self.lap(Stage::Augmented, clock);
        if self.long > self.steps {
            self.last_stage = Stage::LongRun;
            let (outcome, steps) = self.run(table, n, self.long);
            self.effort[Stage::LongRun as usize] += u64::from(steps);
            if outcome != Outcome::Undecided {
                return outcome;
            }
            self.lap(Stage::LongRun, clock);
        }
        self.last_stage = Stage::RepWl;
        for &(l, t) in &REPWL {
            let settled = self.repwl.decide(table, l, t, REPWL_STEPS, REPWL_NODES);
            self.effort[Stage::RepWl as usize] += self.repwl.configs() as u64;
            if settled {
                return Outcome::Never(Decider::RepWl);
            }
        }
        self.lap(Stage::RepWl, clock);
        if self.deep_gas > 0 {
            self.last_stage = Stage::Deep;
            for &attempt in &DEEP {
                if let Some(d) = self.attempt(table, n, attempt, self.deep_gas) {
                    return Outcome::Never(d);
                }
            }
            let gas = self.deep_gas.saturating_mul(DEEPER_GAS_FACTOR);
            for &attempt in &DEEPER {
                if let Some(d) = self.attempt(table, n, attempt, gas) {
                    return Outcome::Never(d);
                }
            }
            self.lap(Stage::Deep, clock);
            self.last_stage = Stage::Wfar;
            let gas = (self.deep_gas as u64).saturating_mul(WFAR_GAS_FACTOR);
            let found = self.wfar.search(table, n, gas);
            self.effort[Stage::Wfar as usize] += self.wfar.configs;
            if found.is_some() {
                return Outcome::Never(Decider::WeightedFiniteAutomataReduction);
            }
            self.lap(Stage::Wfar, clock);
        }
        self.last_stage = Stage::Horizon;
        self.last_resort = None;
        if self.horizon > self.steps.max(self.long) {
            match self.plain.run(table, n, u64::from(self.horizon)) {
                PlainRun::Halts { steps, ones, at } => {
                    self.effort[Stage::Horizon as usize] += steps;
                    // Both fit: at most the horizon, a u32.
                    return Outcome::Halts {
                        steps: steps as u32,
                        ones: ones as u32,
                        at,
                    };
                }
                PlainRun::Running => {
                    self.effort[Stage::Horizon as usize] += u64::from(self.horizon);
                }
            }
            if self.last_resort_on {
                let (found, effort) = self.last_resort(table, n);
                self.effort[Stage::Horizon as usize] += effort;
                if let Some(found) = found {
                    let decider = match found {
                        LastResort::TranslatedCycler { .. } => Decider::TranslatedCycler,
                        LastResort::Far { .. } => Decider::FiniteAutomataReduction,
                        LastResort::Wfar(_) => Decider::WeightedFiniteAutomataReduction,
                    };
                    self.last_resort = Some(found);
                    return Outcome::Never(decider);
                }
            }
        }
        self.lap(Stage::Horizon, clock);
        self.last_stage = Stage::Undecided;
        Outcome::Undecided
    }

    /// One attempt of the deep stage with `gas` configurations: the
    /// decider that settled the machine, if it did; its work goes to the
    /// deep stage's effort.
    fn attempt(&mut self, table: &Table, n: usize, a: Attempt, gas: usize) -> Option<Decider> {
        let (settled, used, decider) = match a {
            Attempt::Far(d) => {
                let ok = self.far.decide(table, n, d, gas as u64);
                (ok, self.far.prefixes, Decider::FiniteAutomataReduction)
            }
            Attempt::Cps(how, k) => {
                let ok = self.cps.decide(table, k, how, gas);
                let d = match how {
                    Augment::History(0) => Decider::NGramCps,
                    Augment::History(_) => Decider::NGramCpsHistory,
                    Augment::Lru => Decider::NGramCpsLru,
                };
                (ok, self.cps.configs() as u64, d)
            }
            Attempt::RepWl(l, t) => {
                let ok = self.repwl.decide(table, l, t, REPWL_STEPS, gas);
                (ok, self.repwl.configs() as u64, Decider::RepWl)
            }
        };
        self.effort[Stage::Deep as usize] += used;
        settled.then_some(decider)
    }

    /// Searches a WFAR certificate alone with `gas` abstract
    /// configurations (for measurements); the certificate has passed
    /// [`crate::wfar::verify`].
    pub fn try_wfar(
        &mut self,
        table: &Table,
        n: usize,
        gas: u64,
    ) -> Option<crate::wfar::Certificate> {
        self.wfar.search(table, n, gas)
    }

    /// Tries one attempt of the deep stage alone with `gas`
    /// configurations (for measurements and parameter searches).
    pub fn try_attempt(&mut self, table: &Table, n: usize, a: Attempt, gas: usize) -> bool {
        self.attempt(table, n, a, gas).is_some()
    }
}

impl Workspace {
    /// The plain simulator's run of `table` for at most `limit` steps: the
    /// second method that re-checks the pipeline's verdicts.
    pub fn plain_run(&mut self, table: &Table, n: usize, limit: u64) -> PlainRun {
        self.plain.run(table, n, limit)
    }

    /// Tries the augmented closed position set `(how, k)` with `gas` local
    /// configurations alone (for measurements and parameter searches);
    /// also returns the local configurations met.
    pub fn try_augmented(
        &mut self,
        table: &Table,
        k: u32,
        how: Augment,
        gas: usize,
    ) -> (bool, usize) {
        let ok = self.cps.decide(table, k, how, gas);
        (ok, self.cps.configs())
    }

    /// Tries repeated word lists with words of `l` cells, threshold `t`,
    /// macro steps of `steps` steps and `nodes` configurations alone; also
    /// returns the configurations met.
    pub fn try_repwl(
        &mut self,
        table: &Table,
        l: u32,
        t: u8,
        steps: u32,
        nodes: usize,
    ) -> (bool, usize) {
        let ok = self.repwl.decide(table, l, t, steps, nodes);
        (ok, self.repwl.configs())
    }

    /// Tries finite automata reduction with DFAs of at most `dfa` states
    /// and `gas` DFA prefixes alone; also returns the prefixes looked at.
    pub fn try_far(&mut self, table: &Table, n: usize, dfa: usize, gas: u64) -> (bool, u64) {
        let ok = self.far.decide(table, n, dfa, gas);
        (ok, self.far.prefixes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::from_text;

    fn decide(text: &str, steps: u32, depth: u32) -> Outcome {
        let (t, n) = from_text(text).unwrap();
        Workspace::new(steps, depth, 0).decide(&t, n)
    }

    #[test]
    fn champions_halt() {
        assert_eq!(
            decide("1RB1LB_1LA0LC_---1LD_1RD0RA", 1000, 30),
            Outcome::Halts {
                steps: 107,
                ones: 13,
                at: 4
            }
        );
        assert_eq!(
            decide("1RB---_1LB0RC_1LC1LA", 1000, 30),
            Outcome::Halts {
                steps: 21,
                ones: 5,
                at: 1
            }
        );
    }

    #[test]
    fn loops_are_recognised() {
        // Runs right forever on the blank tape.
        assert_eq!(
            decide("0RA---_------", 100, 0),
            Outcome::Never(Decider::TranslatedCycler)
        );
        // Bounces between two cells.
        assert_eq!(
            decide("0RB---_0LA---", 100, 0),
            Outcome::Never(Decider::Cycler)
        );
        // The chapter's machine that never stops and writes 1s forever.
        assert_eq!(
            decide("1RB1RB_1LA1RA_1LB---", 1000, 0),
            Outcome::Never(Decider::TranslatedCycler)
        );
    }

    #[test]
    fn step_limit_leaves_undecided() {
        assert_eq!(
            decide("1RB1LB_1LA0LC_---1LD_1RD0RA", 100, 0),
            Outcome::Undecided
        );
    }

    #[test]
    fn a_workspace_is_reusable() {
        let mut ws = Workspace::new(1000, 30, 0);
        let machines = [
            "1RB1LB_1LA0LC_---1LD_1RD0RA",
            "0RA---_------",
            "1RB---_1LB0RC_1LC1LA",
            "0RB---_0LA---",
        ];
        let first: Vec<Outcome> = machines
            .iter()
            .map(|m| {
                let (t, n) = from_text(m).unwrap();
                ws.decide(&t, n)
            })
            .collect();
        for (m, want) in machines.iter().zip(first) {
            assert_eq!(decide(m, 1000, 30), want, "{m}");
        }
    }
}
