//! `knight-nn`: runs of Takefuji & Lee's hysteresis McCulloch-Pitts network
//! for closed knight's tours (Y. Takefuji and K. C. Lee, "Neural network
//! computing for knight's tour problems", Neurocomputing 4 (1992) 249-254),
//! each run classified as one closed tour, several closed loops, or no
//! convergence, every tour checked exactly.
//!
//! **The network, as the paper states it.** One neuron per knight move of
//! the `m x n` board (the paper's upper triangular array `V_ij`, `i < j`,
//! of which only the `d_ij = 1` entries, the legal moves, ever move), and
//! equation (1): `dU_ij/dt = -(sum_k V_ik d_ik - 2) - (sum_k V_kj d_kj - 2)`,
//! i.e. `4 - deg(i) - deg(j)` where `deg(s)` counts the firing moves at
//! square `s` (the neuron's own move counted in both sums, as written);
//! `V_ij = 1` if `U_ij > 3`, `0` if `U_ij < 0`, unchanged otherwise. Where
//! the paper leaves a choice, this crate makes the one listed here:
//!
//! 1. *Discrete time.* The paper gives a differential equation and a
//!    simulator; as in the Hip paper of the same group, one iteration is
//!    one first-order Euler step of size 1 (`U(t+1) = U(t) + dU(t)`, in
//!    `f64`; all `dU` are integers), then `V(t+1) = f(U(t+1))` with the
//!    hysteresis of `V(t)`.
//! 2. *Synchronous update.* Every neuron's `dU(t)` is computed from `V(t)`
//!    (the paper's algorithm is "parallel"); no neuron sees another's new
//!    output within a step. Run this way the network converges on 6 x 6
//!    but almost never from 8 x 8 on (it oscillates; `bench/knight-nn.sh`,
//!    docs/notes/neural-networks.md), far
//!    from the paper's "less than 100 steps". `--update sequential` is a
//!    named variant, not the paper's: one neuron at a time, in an order
//!    shuffled per run, each seeing the outputs changed before it — the
//!    way Parberry simulated the network. It converges in most runs, and
//!    shows the paper's trend: the larger the board, the more often
//!    several loops instead of one tour.
//! 3. *The start.* The paper does not say. The default
//!    (`--init random-output`) is the start used by Parberry's study of this
//!    network ("Scalability of a neural network for the knight's tour
//!    problem", Neurocomputing 12 (1996)) and the usual description of it:
//!    `U(0) = 0` and each `V(0)` 1 or 0 with probability 1/2 (one random
//!    bit per neuron, in the order of the neurons).
//! 4. *Convergence.* A run has converged at iteration `t` when every square
//!    has exactly two firing moves in `V(t)`. That state is a fixed point
//!    (every `dU` is 0, so nothing ever changes again), and it is the only
//!    kind of state in which all inputs stand still: `deg(i) + deg(j) = 4`
//!    on every move of a connected bipartite graph with colour classes of
//!    equal size (or sizes differing by one) forces every degree to be 2.
//!    So "the state of the system converged" means exactly this. The
//!    converged state is a 2-factor: one cycle (a closed tour) or several
//!    (the paper's "unsatisfactory solution with several closed loops").
//! 5. *The cutoff.* Not given; `--max-iterations` (default 1000, ten times
//!    the paper's "less than 100 steps" on average) counts a run as
//!    unconverged. The histograms give the figures for every smaller
//!    cutoff. The paper's "average number of iteration steps" is read as
//!    the mean over converged runs (`mean_iterations`); the means over
//!    tours and over several-loop runs are reported apart too.
//!
//! **Runs and units** are those of `hip-nn`: run `k` starts from
//! [`run_seed`]`(S, k)`, a unit is a range of runs, the nodes are network
//! iterations, a split hands back the runs not started.
//!
//! **Exactness.** A run counts as a tour only if [`check_tour`] passes on
//! the cycle it reports: `m n` squares, each exactly once, every step and
//! the step back to the start a knight's move. Counts merge by checked
//! sums; the example tours kept are those of the smallest run numbers, so
//! the listing does not depend on the merge order either.

pub mod network;
// A literal transcription: it indexes arrays as the paper does.
#[allow(clippy::needless_range_loop)]
pub mod reference;

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use orchard_core::estimate::Rng;
use orchard_core::merge::{add_counts, checked_add};
pub use orchard_core::runs::run_seed;
use orchard_core::runs::RunRange;
use orchard_core::{
    Exploration, ExploreContext, FamilyError, FamilyReport, Host, ParamError, SearchFamily,
};

pub use network::{Graph, Network, Outcome};

/// Largest board side.
pub const MAX_SIDE: u32 = 64;

/// Tours kept for the results file: those of the smallest run numbers.
pub const EXAMPLES: usize = 20;

/// How the network starts (the paper does not say).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Init {
    /// `U(0) = 0`, each `V(0)` 0 or 1 with probability 1/2 (Parberry's).
    RandomOutput,
}

impl Init {
    /// The start of one neuron: `(U(0), V(0))`.
    #[inline]
    pub fn draw(self, rng: &mut Rng) -> (f64, u8) {
        match self {
            Init::RandomOutput => (0.0, (rng.next_u64() >> 63) as u8),
        }
    }
}

/// How the neurons are updated within one iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Update {
    /// Every neuron's `dU(t)` from `V(t)` (the paper's "parallel" network).
    Parallel,
    /// Not the paper's: one neuron at a time in an order shuffled per run,
    /// each seeing the outputs changed before it (Parberry's simulation);
    /// one sweep over all neurons is one iteration.
    Sequential,
}

/// Parameters of a `knight-nn` job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, clap::Args)]
pub struct KnightNnParams {
    /// Rows of the board (1..=64).
    #[arg(long)]
    pub rows: u32,
    /// Columns of the board (1..=64).
    #[arg(long)]
    pub cols: u32,
    /// Number of runs of the network (each from its own random start).
    #[arg(long)]
    pub runs: u64,
    /// Seed of the job; run k starts from a seed derived from (seed, k).
    #[arg(long)]
    pub seed: u64,
    /// Iterations after which a run counts as not converged.
    #[arg(long, default_value_t = 1000)]
    pub max_iterations: u32,
    /// The start of a run (the paper does not give one).
    #[arg(long, value_enum, default_value_t = Init::RandomOutput)]
    pub init: Init,
    /// How the neurons are updated: `parallel` (the paper's) or the
    /// `sequential` variant.
    #[arg(long, value_enum, default_value_t = Update::Parallel)]
    pub update: Update,
    /// Runs per root unit (default: the runs cut into at most 64 units).
    #[arg(long)]
    pub unit_runs: Option<u64>,
}

/// What some runs found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KnightNnSummary {
    /// Network iterations over all runs.
    pub nodes: u64,
    pub runs: u64,
    /// Runs ending in one closed tour that passed [`check_tour`].
    pub tours: u64,
    /// Runs ending in two or more closed loops.
    pub multi_loop: u64,
    /// Runs not converged within the cutoff.
    pub unconverged: u64,
    /// Runs whose single cycle failed [`check_tour`] (a bug if nonzero).
    pub rejected: u64,
    /// Iterations summed over the tours and over the several-loop runs.
    pub tour_iterations: u64,
    pub loop_iterations: u64,
    /// Tours by iteration count.
    pub tour_histogram: BTreeMap<u32, u64>,
    /// Several-loop runs by iteration count.
    pub loop_histogram: BTreeMap<u32, u64>,
    /// Converged runs by their number of loops (1 = a tour).
    pub loops: BTreeMap<u32, u64>,
    /// The tours of the smallest run numbers, at most [`EXAMPLES`].
    pub examples: BTreeMap<u64, Vec<u16>>,
}

/// The `knight-nn` family: one job of it.
#[derive(Debug)]
pub struct KnightNn {
    p: KnightNnParams,
    graph: OnceLock<Graph>,
}

/// The exact check of a closed knight's tour of a `rows x cols` board:
/// every square exactly once, each step and the step from the last square
/// back to the first a knight's move. Independent of the network's graph.
pub fn check_tour(rows: usize, cols: usize, tour: &[u16]) -> bool {
    let squares = rows * cols;
    if tour.len() != squares || squares < 2 {
        return false;
    }
    let mut seen = vec![false; squares];
    for &s in tour {
        let s = s as usize;
        if s >= squares || seen[s] {
            return false;
        }
        seen[s] = true;
    }
    (0..squares).all(|i| {
        let (a, b) = (tour[i] as usize, tour[(i + 1) % squares] as usize);
        let dr = (a / cols).abs_diff(b / cols);
        let dc = (a % cols).abs_diff(b % cols);
        (dr, dc) == (1, 2) || (dr, dc) == (2, 1)
    })
}

impl KnightNn {
    /// The knight's graph, built on first use.
    pub fn graph(&self) -> &Graph {
        self.graph
            .get_or_init(|| Graph::new(self.p.rows as usize, self.p.cols as usize))
    }

    pub fn params(&self) -> &KnightNnParams {
        &self.p
    }

    fn record(
        &self,
        s: &mut KnightNnSummary,
        run: u64,
        outcome: Outcome,
    ) -> Result<(), FamilyError> {
        s.runs += 1;
        let it = match &outcome {
            Outcome::Tour { iterations, .. } | Outcome::Loops { iterations, .. } => *iterations,
            Outcome::Unconverged => self.p.max_iterations,
        };
        s.nodes = checked_add(s.nodes, u64::from(it), "knight-nn nodes")?;
        match outcome {
            Outcome::Unconverged => s.unconverged += 1,
            Outcome::Loops { iterations, loops } => {
                s.multi_loop += 1;
                s.loop_iterations =
                    checked_add(s.loop_iterations, u64::from(iterations), "iterations")?;
                *s.loop_histogram.entry(iterations).or_default() += 1;
                *s.loops.entry(loops).or_default() += 1;
            }
            Outcome::Tour { iterations, tour } => {
                if !check_tour(self.p.rows as usize, self.p.cols as usize, &tour) {
                    s.rejected += 1;
                    return Ok(());
                }
                s.tours += 1;
                s.tour_iterations =
                    checked_add(s.tour_iterations, u64::from(iterations), "iterations")?;
                *s.tour_histogram.entry(iterations).or_default() += 1;
                *s.loops.entry(1).or_default() += 1;
                if s.examples.len() < EXAMPLES {
                    s.examples.insert(run, tour);
                }
            }
        }
        Ok(())
    }
}

impl SearchFamily for KnightNn {
    const NAME: &'static str = "knight-nn";
    const ABOUT: &'static str =
        "Takefuji & Lee's neural network for closed knight's tours: runs ending in a tour, several loops, or none";

    type Params = KnightNnParams;
    type Unit = RunRange;
    type Summary = KnightNnSummary;

    fn new(p: KnightNnParams, _: &Host) -> Result<Self, ParamError> {
        for (name, v) in [("rows", p.rows), ("cols", p.cols)] {
            if v == 0 || v > MAX_SIDE {
                return Err(ParamError::new(
                    name,
                    format!("must be between 1 and {MAX_SIDE}, got {v}"),
                ));
            }
        }
        if p.runs == 0 {
            return Err(ParamError::new("runs", "must be at least 1"));
        }
        if p.unit_runs == Some(0) {
            return Err(ParamError::new("unit-runs", "must be at least 1"));
        }
        Ok(KnightNn {
            p,
            graph: OnceLock::new(),
        })
    }

    fn root_units(&self) -> Vec<RunRange> {
        RunRange::cover(self.p.runs, self.p.unit_runs)
    }

    fn explore(
        &self,
        unit: &RunRange,
        ctx: &ExploreContext<'_>,
    ) -> Result<Exploration<KnightNnSummary, RunRange>, FamilyError> {
        let mut net = Network::new(self.graph(), self.p.init, self.p.update);
        unit.explore(
            self.p.runs,
            ctx,
            KnightNnSummary::default(),
            |s| s.nodes,
            |s, k| {
                let outcome = net.run(self.p.seed, k, self.p.max_iterations);
                self.record(s, k, outcome)
            },
        )
    }

    fn merge(&self, into: &mut KnightNnSummary, other: KnightNnSummary) -> Result<(), FamilyError> {
        into.nodes = checked_add(into.nodes, other.nodes, "knight-nn nodes")?;
        into.runs = checked_add(into.runs, other.runs, "knight-nn runs")?;
        into.tours = checked_add(into.tours, other.tours, "tours")?;
        into.multi_loop = checked_add(into.multi_loop, other.multi_loop, "multi-loop runs")?;
        into.unconverged = checked_add(into.unconverged, other.unconverged, "unconverged")?;
        into.rejected = checked_add(into.rejected, other.rejected, "rejected")?;
        into.tour_iterations =
            checked_add(into.tour_iterations, other.tour_iterations, "iterations")?;
        into.loop_iterations =
            checked_add(into.loop_iterations, other.loop_iterations, "iterations")?;
        add_counts(&mut into.tour_histogram, other.tour_histogram, "histogram")?;
        add_counts(&mut into.loop_histogram, other.loop_histogram, "histogram")?;
        add_counts(&mut into.loops, other.loops, "loop counts")?;
        into.examples.extend(other.examples);
        while into.examples.len() > EXAMPLES {
            into.examples.pop_last();
        }
        Ok(())
    }

    fn nodes(s: &KnightNnSummary) -> u64 {
        s.nodes
    }

    fn report(&self, s: &KnightNnSummary) -> FamilyReport {
        let converged = s.tours + s.multi_loop;
        let mean = |sum: u64, n: u64| (n > 0).then(|| sum as f64 / n as f64);
        let hist = |h: &BTreeMap<u32, u64>| -> serde_json::Value {
            h.iter()
                .map(|(k, v)| (k.to_string(), serde_json::Value::from(*v)))
                .collect::<serde_json::Map<_, _>>()
                .into()
        };
        let json = serde_json::json!({
            "family": "knight-nn",
            "rows": self.p.rows,
            "cols": self.p.cols,
            "runs_requested": self.p.runs,
            "seed": self.p.seed,
            "max_iterations": self.p.max_iterations,
            "init": self.p.init,
            "update": self.p.update,
            "runs": s.runs,
            "tours": s.tours,
            "multi_loop": s.multi_loop,
            "unconverged": s.unconverged,
            "rejected": s.rejected,
            "mean_iterations": mean(s.tour_iterations + s.loop_iterations, converged),
            "mean_iterations_tours": mean(s.tour_iterations, s.tours),
            "mean_iterations_multi_loop": mean(s.loop_iterations, s.multi_loop),
            "tour_histogram": hist(&s.tour_histogram),
            "multi_loop_histogram": hist(&s.loop_histogram),
            "loops": hist(&s.loops),
            "nodes": s.nodes,
        });
        let pct = |k: u64| 100.0 * k as f64 / s.runs.max(1) as f64;
        let mut text = vec![format!(
            "{} x {}: {} runs: {} closed tours ({:.1}%), {} several loops ({:.1}%), {} unconverged ({:.1}%)",
            self.p.rows,
            self.p.cols,
            s.runs,
            s.tours,
            pct(s.tours),
            s.multi_loop,
            pct(s.multi_loop),
            s.unconverged,
            pct(s.unconverged),
        )];
        if let Some(m) = mean(s.tour_iterations + s.loop_iterations, converged) {
            text.push(format!("mean iterations of the converged runs: {m:.1}"));
        }
        if s.rejected > 0 {
            text.push(format!("{} cycles FAILED the exact tour check", s.rejected));
        }
        text.push(format!("network iterations: {}", s.nodes));
        let results_lines = s
            .examples
            .iter()
            .map(|(run, tour)| {
                let squares: Vec<String> = tour.iter().map(|&q| (q + 1).to_string()).collect();
                format!("run {run}: {}", squares.join(" "))
            })
            .collect();
        FamilyReport {
            json,
            text,
            results_lines,
        }
    }

    fn unit_label(&self, u: &RunRange) -> String {
        u.label()
    }
}
