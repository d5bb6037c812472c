//! `hip-nn`: runs of Funabiki & Takefuji's neural network for draw boards of
//! the m-player `n x n` game of Hip (N. Funabiki and Y. Takefuji, "A
//! parallel algorithm for solving the 'Hip' games", Neurocomputing 3 (1991)
//! 97-106), each board it reports checked exactly.
//!
//! A *draw board* gives every cell to one of `m` players, `n^2/m` cells
//! each, so that no player holds the four corners of a square of any size
//! and any tilt. The network has `m x n^2` neurons, `V_ijk = 1` meaning
//! player `k` holds cell `(i, j)`.
//!
//! **The network, as the paper states it** (section 3, steps 0-7): `A = B =
//! C = 1`, `D = 5`, `U_max = 20`, `U_min = -20`; `U_ijk(0)` random in
//! `[U_min, 0]`; then repeatedly `V(t)` by equation (7), `dU` by equation
//! (9), or (8) — the B- and C-terms times 3 — when `t mod 10 < 2`, the Euler
//! step (10), the clipping (11)-(12), the centre symmetry (13) (the lower
//! half of the board copies the upper half turned by 180 degrees), until
//! no conflict is left. Where the paper leaves a choice, this crate makes
//! the one listed here (and nowhere else):
//!
//! 1. *Ties in equation (7).* "1 if `U_ijk > 0` and `U_ijk = max_r U_ijr`":
//!    read literally, every player tying at a positive maximum fires (the
//!    A-term then pushes them down). Ties have probability ~0 with
//!    continuous starts but do occur once inputs are clipped at `U_max`.
//! 2. *"All conflicts resolved" (step 7)* is read as all three penalty
//!    terms zero on `V(t)`: every cell held by exactly one player (A), no
//!    firing neuron with a B-term (no one-player square), every player
//!    holding exactly `n^2/m` cells (C). The paper's goal is a draw board
//!    in which "each player should place `n^2/m` counters", so a board with
//!    other counts is not a solution.
//! 3. *When the test is made, and the iteration count.* The test is made
//!    on `V(t)` before step `t` is taken; a run converges at iteration `t`
//!    if `V(t)` is conflict-free, so its iteration count is the number of
//!    Euler steps taken (0 would mean the random start was a solution; it
//!    never is: all `U(0) <= 0`, so `V(0) = 0`). The board reported is
//!    `V(t)`.
//! 4. *The random start.* `U_ijk(0) = U_min * x` with `x` uniform in
//!    `[0, 1)` (53 random bits), i.e. in `(U_min, 0]`, drawn in the order
//!    `i, j, k`. The symmetry step (13) is not applied to `U(0)` (step 1 is
//!    followed by step 2, not step 6); from `U(1)` on the board is
//!    centre-symmetric.
//! 5. *Equation (13)* copies `U` for `i = 1..n/2`, all `j`, into
//!    `(n+1-i, n+1-j)`: the half turn (the paper's equation (6), not
//!    Templeton's quarter turn). `n` must therefore be even (the paper's
//!    modified games all have even `n`), and `m` must divide `n^2`.
//! 6. *The cutoff.* The paper does not say after how many steps a run was
//!    counted as not converging. `--max-iterations` (default 1000) is it;
//!    the histogram of iterations gives the convergence frequency for every
//!    smaller cutoff too.
//! 7. *Arithmetic.* `f64` throughout, the Euler step with step size 1 as
//!    equation (10) has it. All terms of `dU` are small integers, so the
//!    only roundings are those of `U + dU` and they are the same in any
//!    order of evaluation of `dU`.
//!
//! **What the paper's procedure gives, and the variant tried.** Run as
//! stated, the network reaches the paper's Table 1 for games #3 and #4
//! (3 players on 6x6, 4 on 8x8) but not for #6 (6 players on 12x12): it
//! converges in 32 of 10,000 runs there, not 10% (`bench/hip-nn-table1.sh`;
//! docs/notes/neural-networks.md has every figure). The cause is visible in a trace: with every neuron updated at
//! once from `V(t)`, the C-term moves every cell of a player with too many
//! cells at the same step, and the players' counts settle into a period-2
//! oscillation (e.g. `[18, 14, 34, 12, 36, 30]` and `[32, 28, 18, 32, 16,
//! 18]` in turn) while no square is left. The constants stay the paper's.
//! `--update sequential` is a named variant, *not* the paper's
//! procedure: the same equations applied cell by cell (a Gauss-Seidel
//! sweep), which converges on every game but does not reproduce the
//! paper's falling frequencies either. The other reading of the stop test
//! (counts free, choice 2) makes games #4-#6 converge in 100% of runs
//! within about 25 steps (`examples/readings.rs`), again not the paper's
//! pattern, so the family keeps the strict one.
//!
//! **Runs and units.** Run `k` (0-based) of a job with seed `S` starts from
//! [`run_seed`]`(S, k)`, a pure function of `S` and `k`, so any run can be
//! replayed alone. A unit is a range of runs `[start, end)`; the root units
//! cut `0..runs` into at most 64 ranges (`--unit-runs` sets the length).
//! The node count is the number of network iterations (Euler steps): a
//! converged run counts its iterations, an unconverged one
//! `max_iterations`. When the node budget runs out or a stop is asked for,
//! the exploration hands back the runs not yet started as one unit; a run
//! is never cut (it is at most `max_iterations` steps), and each call runs
//! at least one, so a tiny budget still progresses.
//!
//! **Exactness.** A converged board counts as `verified` only if
//! [`Geometry::check`] passes: every cell held once, `n^2/m` cells per
//! player, and no one-player square among the `hip` crate's list of every
//! square (built from `orchard_hip::board::square_corners`, not from the
//! network's B-term). Verified boards are kept in their canonical form
//! under the board's symmetry group (the smallest image), in a sorted map
//! to the number of runs that found them; merging is a union of maps with
//! counts added, so it is exact and independent of the order. The map
//! keeps the [`MAX_LISTED`] smallest boards: every board it lists has its
//! exact count (a board among the smallest of the union is among the
//! smallest of any part containing it), and `distinct_exact` says whether
//! the distinct count is complete.
//!
//! The runs of a unit are independent samples, so there is no search tree
//! to probe: the family has no `Probing` capability (the cost of a job is
//! at most `runs x max_iterations` network steps).

pub mod geometry;
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

pub use geometry::{render, Geometry, Violation};
pub use network::{Network, Outcome, MAX_PLAYERS};

/// Largest board side: 16 x 16, 256 cells.
pub const MAX_SIZE: u32 = 16;

/// Most distinct boards a summary keeps: the smallest ones (counts of the
/// listed boards stay exact; see the module doc).
pub const MAX_LISTED: usize = 50_000;

/// The constants of the procedure (step 0 of section 3).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Constants {
    pub a: f64,
    pub b: f64,
    pub c: f64,
    pub d: f64,
    pub u_max: f64,
    pub u_min: f64,
}

impl Constants {
    /// The paper's: `A = B = C = 1`, `D = 5`, `U` in `[-20, 20]`.
    pub const PAPER: Constants = Constants {
        a: 1.0,
        b: 1.0,
        c: 1.0,
        d: 5.0,
        u_max: 20.0,
        u_min: -20.0,
    };
}

/// A uniform `f64` in `[0, 1)` from the top 53 bits of the next output.
pub fn uniform(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// How the neurons are updated within one iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Update {
    /// The paper's procedure: every `dU(t)` from `V(t)`, then the Euler
    /// step, the clipping and the symmetry step for all neurons at once.
    Parallel,
    /// Not the paper's: a variant, offered because the parallel
    /// update oscillates with period 2 on the many-player games (see the
    /// module doc). Cells of the upper half in order, each cell's neurons
    /// updated (steps 3-6, the mirror cell too) from the current outputs,
    /// which are then recomputed for the cell and its mirror before the
    /// next cell (a Gauss-Seidel sweep). One sweep is one iteration.
    Sequential,
}

/// Parameters of a `hip-nn` job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, clap::Args)]
pub struct HipNnParams {
    /// Number of players m (2..=16; m must divide size^2).
    #[arg(long)]
    pub players: u32,
    /// Side n of the board (even, 2..=16).
    #[arg(long)]
    pub size: u32,
    /// Number of runs of the network (each from its own random start).
    #[arg(long)]
    pub runs: u64,
    /// Seed of the job; run k starts from a seed derived from (seed, k).
    #[arg(long)]
    pub seed: u64,
    /// Euler steps after which a run counts as not converged.
    #[arg(long, default_value_t = 1000)]
    pub max_iterations: u32,
    /// How the neurons are updated: `parallel` is the paper's procedure,
    /// `sequential` a named variant (not the paper's).
    #[arg(long, value_enum, default_value_t = Update::Parallel)]
    pub update: Update,
    /// Runs per root unit (default: the runs cut into at most 64 units).
    #[arg(long)]
    pub unit_runs: Option<u64>,
}

/// What some runs found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HipNnSummary {
    /// Network iterations (Euler steps) over all runs.
    pub nodes: u64,
    /// Runs made.
    pub runs: u64,
    /// Runs whose network reported no conflict.
    pub converged: u64,
    /// Converged runs whose board passed the exact check.
    pub verified: u64,
    /// Converged runs whose board failed the exact check (a bug if ever
    /// nonzero; such boards are not counted as solutions).
    pub rejected: u64,
    /// Iterations summed over the verified runs.
    pub iterations: u64,
    /// Verified runs by iteration count.
    pub histogram: BTreeMap<u32, u64>,
    /// Canonical boards ([`render`]ed) to the verified runs that found
    /// them: the smallest [`MAX_LISTED`].
    pub boards: BTreeMap<String, u64>,
    /// Whether boards were left out of `boards` (then the distinct count
    /// is a lower bound).
    pub truncated: bool,
}

/// The `hip-nn` family: one job of it.
#[derive(Debug)]
pub struct HipNn {
    p: HipNnParams,
    n: usize,
    m: usize,
    geometry: OnceLock<Geometry>,
}

impl HipNn {
    /// The board geometry, built on first use.
    pub fn geometry(&self) -> &Geometry {
        self.geometry.get_or_init(|| Geometry::new(self.n))
    }

    /// The parameters.
    pub fn params(&self) -> &HipNnParams {
        &self.p
    }

    /// Folds one finished run into `s`.
    fn record(&self, s: &mut HipNnSummary, outcome: Outcome) -> Result<(), FamilyError> {
        s.runs += 1;
        match outcome {
            Outcome::Unconverged => {
                s.nodes = checked_add(s.nodes, u64::from(self.p.max_iterations), "hip-nn nodes")?;
            }
            Outcome::Converged { iterations, board } => {
                s.nodes = checked_add(s.nodes, u64::from(iterations), "hip-nn nodes")?;
                s.converged += 1;
                let geo = self.geometry();
                if geo.check(&board, self.m).is_err() {
                    s.rejected += 1;
                    return Ok(());
                }
                s.verified += 1;
                s.iterations = checked_add(s.iterations, u64::from(iterations), "iterations")?;
                *s.histogram.entry(iterations).or_default() += 1;
                let key = render(&geo.canonical(&board), self.n);
                *s.boards.entry(key).or_default() += 1;
                if s.boards.len() > MAX_LISTED {
                    s.boards.pop_last();
                    s.truncated = true;
                }
            }
        }
        Ok(())
    }
}

impl SearchFamily for HipNn {
    const NAME: &'static str = "hip-nn";
    const ABOUT: &'static str =
        "Funabiki & Takefuji's neural network for Hip draw boards: runs, convergence, boards checked exactly";

    type Params = HipNnParams;
    type Unit = RunRange;
    type Summary = HipNnSummary;

    fn new(p: HipNnParams, _: &Host) -> Result<Self, ParamError> {
        if p.size < 2 || p.size > MAX_SIZE || !p.size.is_multiple_of(2) {
            return Err(ParamError::new(
                "size",
                format!(
                    "must be even and between 2 and {MAX_SIZE} (the symmetry step (13) needs an even side), got {}",
                    p.size
                ),
            ));
        }
        let cells = p.size * p.size;
        if p.players < 2 || p.players as usize > MAX_PLAYERS || !cells.is_multiple_of(p.players) {
            return Err(ParamError::new(
                "players",
                format!(
                    "must be between 2 and {MAX_PLAYERS} and divide size^2 = {cells}, got {}",
                    p.players
                ),
            ));
        }
        if p.runs == 0 {
            return Err(ParamError::new("runs", "must be at least 1"));
        }
        if p.unit_runs == Some(0) {
            return Err(ParamError::new("unit-runs", "must be at least 1"));
        }
        Ok(HipNn {
            n: p.size as usize,
            m: p.players as usize,
            p,
            geometry: OnceLock::new(),
        })
    }

    /// `0..runs` cut into consecutive ranges of `unit_runs` runs.
    fn root_units(&self) -> Vec<RunRange> {
        RunRange::cover(self.p.runs, self.p.unit_runs)
    }

    fn explore(
        &self,
        unit: &RunRange,
        ctx: &ExploreContext<'_>,
    ) -> Result<Exploration<HipNnSummary, RunRange>, FamilyError> {
        let mut net = Network::new(self.geometry(), self.m, Constants::PAPER, self.p.update);
        unit.explore(
            self.p.runs,
            ctx,
            HipNnSummary::default(),
            |s| s.nodes,
            |s, k| {
                let outcome = net.run(self.p.seed, k, self.p.max_iterations);
                self.record(s, outcome)
            },
        )
    }

    fn merge(&self, into: &mut HipNnSummary, other: HipNnSummary) -> Result<(), FamilyError> {
        into.nodes = checked_add(into.nodes, other.nodes, "hip-nn nodes")?;
        into.runs = checked_add(into.runs, other.runs, "hip-nn runs")?;
        into.converged = checked_add(into.converged, other.converged, "converged")?;
        into.verified = checked_add(into.verified, other.verified, "verified")?;
        into.rejected = checked_add(into.rejected, other.rejected, "rejected")?;
        into.iterations = checked_add(into.iterations, other.iterations, "iterations")?;
        add_counts(&mut into.histogram, other.histogram, "histogram")?;
        add_counts(&mut into.boards, other.boards, "board count")?;
        into.truncated |= other.truncated;
        while into.boards.len() > MAX_LISTED {
            into.boards.pop_last();
            into.truncated = true;
        }
        Ok(())
    }

    fn nodes(s: &HipNnSummary) -> u64 {
        s.nodes
    }

    fn report(&self, s: &HipNnSummary) -> FamilyReport {
        let geo = self.geometry();
        let mean = (s.verified > 0).then(|| s.iterations as f64 / s.verified as f64);
        let (lo, hi) = wilson(s.verified, s.runs);
        let patterns: std::collections::BTreeSet<Vec<u8>> = s
            .boards
            .keys()
            .filter_map(|b| geometry::parse(b))
            // A board of another size cannot come from this job's runs
            // (only from a damaged or hostile summary): not a pattern.
            .filter(|b| b.len() == (self.p.size * self.p.size) as usize)
            .map(|b| geo.pattern(&b))
            .collect();
        let histogram: serde_json::Map<String, serde_json::Value> = s
            .histogram
            .iter()
            .map(|(k, v)| (k.to_string(), (*v).into()))
            .collect();
        let json = serde_json::json!({
            "family": "hip-nn",
            "players": self.p.players,
            "size": self.p.size,
            "runs_requested": self.p.runs,
            "seed": self.p.seed,
            "max_iterations": self.p.max_iterations,
            "update": self.p.update,
            "runs": s.runs,
            "converged": s.converged,
            "verified": s.verified,
            "rejected": s.rejected,
            "convergence": if s.runs > 0 { s.verified as f64 / s.runs as f64 } else { 0.0 },
            "convergence_ci95": [lo, hi],
            "mean_iterations": mean,
            "histogram": histogram,
            "distinct_boards": s.boards.len(),
            "distinct_exact": !s.truncated,
            "distinct_patterns": patterns.len(),
            "nodes": s.nodes,
        });
        let mut text = vec![format!(
            "{m} players on {n} x {n}: {} of {} runs converged ({:.1}%, 95% CI {:.1}-{:.1}%), {} boards verified exactly",
            s.converged,
            s.runs,
            100.0 * s.verified as f64 / s.runs.max(1) as f64,
            100.0 * lo,
            100.0 * hi,
            s.verified,
            m = self.p.players,
            n = self.p.size,
        )];
        if let Some(mean) = mean {
            text.push(format!("mean iterations to a solution: {mean:.1}"));
        }
        text.push(format!(
            "distinct boards up to symmetry: {}{} ({} up to symmetry and renaming players)",
            s.boards.len(),
            if s.truncated {
                "+ (list truncated)"
            } else {
                ""
            },
            patterns.len()
        ));
        if s.rejected > 0 {
            text.push(format!(
                "{} converged boards FAILED the exact check",
                s.rejected
            ));
        }
        text.push(format!("network iterations: {}", s.nodes));
        FamilyReport {
            json,
            text,
            results_lines: s
                .boards
                .iter()
                .map(|(b, count)| format!("{b} {count}"))
                .collect(),
        }
    }

    fn unit_label(&self, u: &RunRange) -> String {
        u.label()
    }
}

/// The 95% Wilson score interval of a proportion `k / n`.
pub fn wilson(k: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let z = 1.959_963_984_540_054f64;
    let (k, n) = (k as f64, n as f64);
    let p = k / n;
    let denom = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denom;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}
