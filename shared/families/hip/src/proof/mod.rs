//! An audit of a solved `hip-solve` job: a proof of the root's value from
//! the job's merged summary, checked by a second implementation of the
//! rules, so that "player X wins board RxC" does not rest on the fast
//! solver being right.
//!
//! To prove the first player's value is at least `v` at a position, one
//! child that keeps it suffices where the first player moves, and every
//! child is needed where the second player moves (symmetrically for "at
//! most `v`"; an exact value is both bounds, and bounds that say nothing,
//! at least -1 or at most 1, need no proof). Children come from the
//! reference rules on plain cell arrays ([`rules`], built on
//! [`crate::reference`]), never from the solver's board or game code; a
//! move that completes the mover's square, a full board, a mover with no
//! move that does not lose are judged by those rules.
//!
//! The proof has two parts:
//!
//! * the recorded tree ([`recorded`]): the positions the summary expands,
//!   looked up by the solver's canonical key (checked to decode to the
//!   same position up to the reference symmetries), down to the positions
//!   the workers solved whole, whose recorded interval must give the bound
//!   asked of them: the leaves of the record;
//! * the extension ([`extend`]): below each leaf, down to positions with
//!   at most `leaf_empty` empty cells, which a plain alpha-beta bound
//!   search decides ([`plain`]). An [`Oracle`] (the fast solver:
//!   [`SolverOracle`]) proposes the prover's child; the proposal is proven
//!   like everything else, so a wrong oracle costs time, never a verdict.
//!
//! One more rule ends a branch without search: Gardner's pairing argument
//! in standard Hip ([`rules::Rules::second_player_pairs`], proven there),
//! which the solver's records also lean on (a unit on a board with an even
//! side only settles whether the first player reaches a draw).
//!
//! Boards whose full extension is too big are checked in [`Sample`] mode:
//! the recorded tree whole, the extension below `leaves` leaves drawn at
//! random; or by [`Lines`] of play probed below random leaves down to the
//! plain search ([`probe`]), where even one leaf's extension is too big.
//! The report says which it was. Any failure is a [`ProofError`] naming
//! the position by its moves.

mod extend;
mod memo;
mod oracle;
mod plain;
mod probe;
mod recorded;
mod rules;
#[cfg(test)]
mod tests;

use crate::board::cell_name;
use crate::solve::{SolveParams, SolveSummary};
use orchard_core::estimate::Rng;

pub use extend::ExtensionStats;
pub use oracle::{NoOracle, Oracle, OracleEffort, SolverOracle};
pub use probe::LineStats;

/// A bound on the first player's value (-1 loss, 0 draw, 1 win).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Bound {
    AtLeast(i8),
    AtMost(i8),
}

impl Bound {
    /// Whether the value `v` satisfies the bound.
    pub fn holds(self, v: i8) -> bool {
        match self {
            Bound::AtLeast(b) => v >= b,
            Bound::AtMost(b) => v <= b,
        }
    }

    /// Whether every value satisfies it (nothing to prove).
    fn trivial(self) -> bool {
        matches!(self, Bound::AtLeast(b) if b <= -1) || matches!(self, Bound::AtMost(b) if b >= 1)
    }

    /// Whether every value of the interval `lo..=hi` satisfies it.
    fn given_by(self, lo: i8, hi: i8) -> bool {
        match self {
            Bound::AtLeast(b) => lo >= b,
            Bound::AtMost(b) => hi <= b,
        }
    }

    /// The player (1 or 2) who chooses one child to keep the bound.
    fn prover(self) -> u8 {
        match self {
            Bound::AtLeast(_) => 1,
            Bound::AtMost(_) => 2,
        }
    }
}

impl std::fmt::Display for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Bound::AtLeast(v) => write!(f, "value >= {v}"),
            Bound::AtMost(v) => write!(f, "value <= {v}"),
        }
    }
}

/// Why a proof failed. `at` is the position, as the moves that reach it
/// (cell names, on the board as solved: rows <= columns).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProofError {
    #[error("the job's parameters: {0}")]
    Params(String),
    #[error("the summary does not decide the root: {lo}..={hi}")]
    RootOpen { lo: i8, hi: i8 },
    #[error("{at}: the summary's key {key:?} is another position")]
    KeyMismatch { at: String, key: (u64, u64) },
    #[error("{at}: the record contradicts itself (its children's values miss its interval)")]
    Contradiction { at: String },
    #[error("{at}: no record of the position, whose {bound} is needed")]
    Missing { at: String, bound: Bound },
    #[error("{at}: the summary's {lo}..={hi} does not give {bound}")]
    Unsupported {
        at: String,
        lo: i8,
        hi: i8,
        bound: Bound,
    },
    #[error("{at}: no child the summary records gives {bound}")]
    NoProvingChild { at: String, bound: Bound },
    #[error("{at}: the game ends here with value {value}, against {bound}")]
    GameRefutes { at: String, value: i8, bound: Bound },
    #[error(
        "{at}: a line of play where {bound} is claimed ends in a position the plain search refutes it in ({leaf_empty} empty cells or fewer)"
    )]
    LineRefuted {
        at: String,
        bound: Bound,
        leaf_empty: usize,
    },
    #[error("{at}: {bound} is claimed here, but the oracle finds no move that keeps it")]
    NoKeepingMove { at: String, bound: Bound },
    #[error(
        "{at}: recorded {lo}..={hi}, but {bound} is refuted (plain search at {leaf_empty} empty cells or fewer)"
    )]
    LeafRefuted {
        at: String,
        lo: i8,
        hi: i8,
        bound: Bound,
        leaf_empty: usize,
    },
}

/// A position's moves as text: cell names (`a1 c2`), or `(empty board)`.
fn line(cols: usize, moves: &[u8]) -> String {
    if moves.is_empty() {
        return "(empty board)".to_string();
    }
    moves
        .iter()
        .map(|&m| cell_name(cols, usize::from(m)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// How much of the proof to build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Positions with at most this many empty cells are decided by the
    /// plain search.
    pub leaf_empty: usize,
    /// Extend only a random sample of the record's leaves (`None`: all).
    pub sample: Option<Sample>,
    /// Lines of play to probe below leaves drawn at random (see [`probe`]).
    pub lines: Option<Lines>,
    /// The most proven and refuted `(position, bound)` pairs the extension
    /// remembers (32 bytes each, up to twice that with the maps' spare
    /// room); past it the oldest half is
    /// forgotten, which costs time, never the verdict.
    pub memo_entries: usize,
}

/// The default of [`Options::memo_entries`]: 2^23 pairs, 256 to 512 MiB.
pub const MEMO_ENTRIES: usize = 1 << 23;

/// Where a long extension is, handed to the watcher of [`prove_watched`]
/// every few thousand `(position, bound)` pairs decided.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Progress {
    /// Leaves of the record extended so far, of how many to extend.
    pub leaves_done: usize,
    pub leaves: usize,
    /// Pairs proven and refuted so far.
    pub proven: u64,
    pub refuted: u64,
    /// Pairs the memo holds (a pair copied from its older generation into
    /// the younger counts twice), and pairs it has forgotten.
    pub memo_entries: usize,
    pub forgotten: u64,
    /// Positions the plain search has searched.
    pub plain_nodes: u64,
    /// What the oracle has spent.
    pub oracle: OracleEffort,
}

/// Which leaves a sampled proof extends: `leaves` of them, drawn with `seed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Sample {
    pub leaves: usize,
    pub seed: u64,
}

/// How many lines of play to probe, drawn with `seed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Lines {
    pub count: usize,
    pub seed: u64,
}

/// What a proof established and what it took.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ProofReport {
    pub rows: usize,
    pub cols: usize,
    pub double: bool,
    /// The first player's value, proven.
    pub value: i8,
    pub leaf_empty: usize,
    /// The recorded part: positions proven from their children, leaves
    /// of the record (a `(position, bound)` pair each), and positions
    /// ended by the pairing argument.
    pub recorded_nodes: u64,
    pub recorded_leaves: usize,
    pub recorded_pairing_leaves: u64,
    /// `None`: every leaf of the record was extended. Otherwise only
    /// `sample.leaves` of them: the proof is a sample.
    pub sample: Option<Sample>,
    /// Leaves of the record extended.
    pub extended_leaves: usize,
    pub extension: ExtensionStats,
    /// Pairs the extension's memo held at its end.
    pub memo_entries: usize,
    /// What the oracle spent on the extension.
    pub oracle: OracleEffort,
    /// The probed lines, if asked for.
    pub lines: Option<LineStats>,
}

impl ProofReport {
    /// Whether every leaf of the record was extended (a whole proof).
    pub fn complete(&self) -> bool {
        self.extended_leaves == self.recorded_leaves
    }
}

impl std::fmt::Display for ProofReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let game = if self.double { "Double Hip" } else { "Hip" };
        let who = match self.value {
            1 => "the first player wins",
            -1 => "the second player wins",
            _ => "a draw",
        };
        let e = &self.extension;
        writeln!(
            f,
            "{game} {}x{}: {who} (value {})",
            self.rows, self.cols, self.value
        )?;
        match (self.complete(), self.sample) {
            (true, _) => writeln!(f, "proof: complete, every leaf of the record extended")?,
            (false, Some(s)) => writeln!(
                f,
                "proof: A SAMPLE: the record whole, {} of its {} leaves extended (seed {})",
                self.extended_leaves, self.recorded_leaves, s.seed
            )?,
            (false, None) => writeln!(f, "proof: incomplete")?,
        }
        writeln!(
            f,
            "recorded part: {} inner nodes, {} leaves, {} pairing leaves",
            self.recorded_nodes, self.recorded_leaves, self.recorded_pairing_leaves
        )?;
        writeln!(
            f,
            "extension: {} nodes proven ({} refuted on the way), {} pairing leaves, \
             {} prover's positions by a child already proven",
            e.proven, e.refuted, e.pairing_leaves, e.known_children
        )?;
        let by_empty = histogram(&e.leaves_by_empty);
        writeln!(
            f,
            "plain leaves by empty cells (at most {}): {by_empty}",
            self.leaf_empty
        )?;
        writeln!(
            f,
            "memo: {} pairs held at the end, {} forgotten",
            self.memo_entries, e.forgotten
        )?;
        write!(
            f,
            "plain searches {} ({} positions), oracle asked {} times ({} proposals refuted; \
             {} searches, {} nodes)",
            e.plain_solves,
            e.plain_nodes,
            e.proposals,
            e.refuted_proposals,
            self.oracle.searches,
            self.oracle.nodes
        )?;
        if let Some(l) = &self.lines {
            let ends = histogram(&l.plain_ends_by_empty);
            write!(
                f,
                "\nlines probed (a sample, not a proof): {} lines, {} positions below their leaves, \
                 ended by the plain search {ends} (empty cells:lines), by the rules {}, by pairing {}; \
                 {} plain positions, oracle asked {} times",
                l.lines, l.positions, l.rules_ends, l.pairing_ends, l.plain_nodes, l.proposals
            )?;
        }
        Ok(())
    }
}

/// Proves the root's value of a job from its merged `summary`, the
/// extension's prover's moves proposed by `oracle` (see the module doc).
pub fn prove(
    params: &SolveParams,
    summary: &SolveSummary,
    options: &Options,
    oracle: &mut dyn Oracle,
) -> Result<ProofReport, ProofError> {
    prove_watched(params, summary, options, oracle, &mut |_| {})
}

/// [`prove`], with `watch` called with the extension's [`Progress`] every
/// few thousand pairs decided (a long proof can show that it moves).
pub fn prove_watched(
    params: &SolveParams,
    summary: &SolveSummary,
    options: &Options,
    oracle: &mut dyn Oracle,
    watch: &mut dyn FnMut(&Progress),
) -> Result<ProofReport, ProofError> {
    let (rows, cols) = crate::board_dims(params.rows, params.cols)
        .map_err(|e| ProofError::Params(e.to_string()))?;
    let rules = rules::Rules::new(rows, cols, params.double);
    let mut record = recorded::Recorded::new(&rules, summary, params.root_depth() as usize);
    let root = vec![0u8; rows * cols];
    let (lo, hi) = record.claim(&root, &mut Vec::new())?;
    if lo != hi {
        return Err(ProofError::RootOpen { lo, hi });
    }
    for bound in [Bound::AtLeast(lo), Bound::AtMost(lo)] {
        record.prove(&root, &mut Vec::new(), bound)?;
    }
    let chosen = match options.sample {
        None => (0..record.leaves.len()).collect(),
        Some(s) => sample_indices(record.leaves.len(), s),
    };
    let mut extender = extend::Extender::new(
        &rules,
        oracle,
        options.leaf_empty,
        options.memo_entries,
        watch,
    );
    for (done, &i) in chosen.iter().enumerate() {
        extender.leaves = (done, chosen.len());
        let leaf = &record.leaves[i];
        let mut moves = leaf.moves.clone();
        if !extender.decide(&leaf.cells, &mut moves, leaf.bound) {
            return Err(ProofError::LeafRefuted {
                at: line(cols, &leaf.moves),
                lo: leaf.recorded.0,
                hi: leaf.recorded.1,
                bound: leaf.bound,
                leaf_empty: options.leaf_empty,
            });
        }
    }
    extender.leaves = (chosen.len(), chosen.len());
    let end = extender.progress();
    let lines = match options.lines {
        None => None,
        Some(_) if record.leaves.is_empty() => Some(LineStats::default()),
        Some(s) => {
            let mut stats = LineStats::default();
            let mut plain = plain::Plain::new(&rules);
            let mut rng = Rng::new(s.seed);
            let oracle = extender.oracle();
            for _ in 0..s.count {
                let leaf = &record.leaves[(rng.next_u64() % record.leaves.len() as u64) as usize];
                probe::probe_line(
                    &rules,
                    &mut plain,
                    &mut *oracle,
                    &mut rng,
                    options.leaf_empty,
                    &leaf.cells,
                    &leaf.moves,
                    leaf.bound,
                    &mut stats,
                )?;
            }
            Some(stats)
        }
    };
    Ok(ProofReport {
        rows,
        cols,
        double: params.double,
        value: lo,
        leaf_empty: options.leaf_empty,
        recorded_nodes: record.inner_nodes,
        recorded_leaves: record.leaves.len(),
        recorded_pairing_leaves: record.pairing_leaves,
        sample: options.sample,
        extended_leaves: chosen.len(),
        extension: extender.stats,
        memo_entries: end.memo_entries,
        oracle: end.oracle,
        lines,
    })
}

/// A count by empty cells as `empty:count` pairs, in order.
fn histogram(by_empty: &std::collections::BTreeMap<usize, u64>) -> String {
    by_empty
        .iter()
        .map(|(k, v)| format!("{k}:{v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `sample.leaves` distinct indices below `n` (all of them if fewer),
/// drawn by a partial Fisher-Yates shuffle with orchard's SplitMix64 from the seed:
/// the same seed draws the same leaves.
fn sample_indices(n: usize, sample: Sample) -> Vec<usize> {
    let mut rng = Rng::new(sample.seed);
    let mut next = || rng.next_u64();
    let mut idx: Vec<usize> = (0..n).collect();
    let k = sample.leaves.min(n);
    for i in 0..k {
        let j = i + (next() % (n - i) as u64) as usize;
        idx.swap(i, j);
    }
    idx.truncate(k);
    idx.sort_unstable();
    idx
}
