//! `hip-solve`: the exact value of Hip and Double Hip on an `R x C` board.
//!
//! Rules (Franke's, whose table of values this reproduces): two players place
//! stones of their colour on empty cells; a player who completes a square of
//! his own colour (four of his stones at the corners of a square of any size
//! and tilt) loses at once; a full board without such a square is a draw. A
//! player must move, so one whose every empty cell completes a square loses.
//! In Double Hip the first player places one stone, then each turn is two
//! stones: a square completed by the first stone of a pair loses at once, and
//! a board that fills up in the middle of a turn is a draw.
//!
//! # Units and how values are combined
//!
//! The root units are the canonical positions (up to the board's symmetries)
//! after the first `d` stones (`--depth`, by default growing with the board),
//! each with one move sequence that reaches it. A worker solves a unit with
//! alpha-beta ([`super::search`]) and records its exact value. If the budget
//! runs out first, the unit is *expanded*: its children (canonical, not
//! terminal, not already settled) go back as the `rest`, and the summary
//! records that the unit is expanded plus whatever the worker did settle
//! about its children (exact values or bounds from null-window searches).
//! The child whose search was stopped is expanded the same way, and so on
//! down the stopped search's path (see `Harvest`), so that a split keeps what
//! the table settled there instead of handing back the whole child.
//!
//! The summary is a map from canonical position to an interval `lo..=hi`
//! containing the first player's value, and an "expanded" flag. Merging
//! intersects intervals and ORs flags: associative, commutative and
//! idempotent, so units may finish in any order and even be solved twice (a
//! position reached by two expanded parents). [`HipSolve::report`] evaluates
//! the root by minimax over intervals: positions with fewer than `d` stones
//! and expanded positions take the max (first player to move) or min of their
//! children's intervals (terminal children by the rules), intersected with
//! what was recorded about them; any other position is its recorded interval
//! or unknown (`-1..=1`). The root's value is known when its interval is a
//! single value. Since minimax is monotone, intervals computed this way
//! always contain the true value, whatever subset of units has been merged.
//!
//! [`HipSolve`]'s [`MootUnits::is_moot`](orchard_core::MootUnits::is_moot)
//! asks whether the root's value could still depend on a unit: a position
//! stops depending on a child once another child already decides it (for
//! the player to move, a sibling is at least as good as the best this child
//! could be).
//!
//! # Module map
//!
//! * this file: the [`HipSolve`] job (what it keeps in the process: its
//!   table and its cached relevance) and its [`SearchFamily`] glue;
//! * `params`: [`SolveParams`] and [`Expect`];
//! * `summary`: [`SolveUnit`], [`Known`], [`SolveSummary`] and the merge
//!   rule of intervals;
//! * `game`: the rules on top of the board, and the root units;
//! * `eval`: minimax over intervals of the recorded tree, [`value_of`];
//! * `relevance`: which units still matter ([`orchard_core::MootUnits`]);
//! * `unsettled`: what the root still needs when no unit is left (the
//!   end-of-job check, `MootUnits::still_needed`);
//! * `explore`: solving or splitting one unit, and the harvest of an
//!   aborted search;
//! * `keeping`: a move that keeps a bound, found by a solver kept across
//!   questions ([`KeepingMoves`], the proof checker's oracle);
//! * `pv`: principal variations, from the table and from the record;
//! * `report`: the report, as text and JSON;
//! * `figure`: the dashboard's picture of the openings on the board;
//! * `measure`: single-process helpers for tests and measurements;
//! * `exchange`: the table's lemmas and snapshots.

mod eval;
mod exchange;
mod explore;
mod figure;
mod game;
mod keeping;
mod measure;
mod params;
mod pv;
mod relevance;
mod report;
mod summary;
mod unsettled;

use std::sync::{Mutex, OnceLock};

use crate::board::cell_name;
use crate::search::{Pos, LEMMA_MIN_NODES};
use crate::table::Table;
use game::Game;
use orchard_core::{
    Capabilities, Exploration, ExploreContext, FamilyError, FamilyReport, Figure, Host, ParamError,
    SearchFamily,
};
use relevance::{EldestLemmas, RelevanceCache};

pub use crate::search::{tuned_weights, MoveOrder};
pub use crate::table::StampedLemma;
pub use eval::value_of;
pub use game::TreeNode;
pub use keeping::KeepingMoves;
pub use measure::{explore_pruned, PrunedRun, Searched};
pub use params::{Expect, SolveParams};
pub use summary::{Key, Known, SolveSummary, SolveUnit, Window};

/// The `hip-solve` family: one job of it, with its checked parameters and
/// what the job keeps in this process. Nothing of it lives outside the job
/// value: a fresh job searches cold.
pub struct HipSolve {
    params: SolveParams,
    /// What the hosting process lends the job (the table's size).
    host: Host,
    /// The transposition table, shared by every thread searching the job,
    /// with its lemma outbox (see [`crate::lemmas`]). Created on first use:
    /// a job that only merges and checks (the coordinator's) never
    /// allocates one.
    table: OnceLock<Table>,
    /// The rules on the job's board, made on first use by what keeps a
    /// solver across calls ([`KeepingMoves`], which borrows them).
    game: OnceLock<Game>,
    /// The last `relevance::Relevance` computed for
    /// [`orchard_core::MootUnits`] (the coordinator asks about every live
    /// unit after each merge).
    relevance: Mutex<Option<std::sync::Arc<RelevanceCache>>>,
    /// What the workers' lemmas say of the eldest line, for the job's
    /// guess of the winner: made on first use, by the coordinator's job
    /// only ([`orchard_core::LemmaExchange::observe`]).
    eldest_lemmas: OnceLock<EldestLemmas>,
}

impl HipSolve {
    pub fn params(&self) -> &SolveParams {
        &self.params
    }

    /// The job's table, created on first use.
    fn table(&self) -> &Table {
        self.table.get_or_init(|| {
            Table::new(
                &self.params.board(),
                self.params.double,
                self.host.cache_mib,
            )
            .with_lemma_min_nodes(self.params.lemma_min_nodes.unwrap_or(LEMMA_MIN_NODES))
        })
    }

    /// The rules on the job's board, made on first use.
    fn game(&self) -> &Game {
        self.game.get_or_init(|| Game::new(&self.params))
    }

    /// A fresh job of the same parameters and host: an empty table (as when
    /// a unit moves to another machine).
    fn cold(&self) -> HipSolve {
        HipSolve::with(self.params.clone(), self.host.clone())
    }

    fn with(params: SolveParams, host: Host) -> HipSolve {
        HipSolve {
            params,
            host,
            table: OnceLock::new(),
            game: OnceLock::new(),
            relevance: Mutex::new(None),
            eldest_lemmas: OnceLock::new(),
        }
    }
}

impl std::fmt::Debug for HipSolve {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HipSolve")
            .field("params", &self.params)
            .field("host", &self.host)
            .field("table", &self.table.get().map(|_| "allocated"))
            .finish_non_exhaustive()
    }
}

impl SearchFamily for HipSolve {
    const NAME: &'static str = "hip-solve";
    const ABOUT: &'static str = "Hip and Double Hip: the exact game value (win, draw or loss)";

    type Params = SolveParams;
    type Unit = SolveUnit;
    type Summary = SolveSummary;

    fn new(p: SolveParams, host: &Host) -> Result<Self, ParamError> {
        let (r, c) = crate::board_dims(p.rows, p.cols)?;
        if let Some(d) = p.depth {
            if d as usize >= r * c || d > 8 {
                return Err(ParamError::new(
                    "depth",
                    format!("must be below the cell count and at most 8, got {d}"),
                ));
            }
        }
        if p.lemma_min_nodes == Some(0) {
            return Err(ParamError::new("lemma-min-nodes", "must be at least 1"));
        }
        if let Some(mib) = host.cache_mib {
            if !(1..=MAX_CACHE_MIB).contains(&mib) {
                return Err(ParamError::new(
                    "cache-mib",
                    format!("must be from 1 to {MAX_CACHE_MIB} MiB, got {mib}"),
                ));
            }
        }
        Ok(HipSolve::with(p, host.clone()))
    }

    fn root_units(&self) -> Vec<SolveUnit> {
        Game::new(&self.params).frontier(self.params.root_depth())
    }

    fn explore(
        &self,
        unit: &SolveUnit,
        ctx: &ExploreContext<'_>,
    ) -> Result<Exploration<SolveSummary, SolveUnit>, FamilyError> {
        explore::explore_unit(self, unit, ctx)
    }

    fn merge(&self, into: &mut SolveSummary, other: SolveSummary) -> Result<(), FamilyError> {
        into.absorb(other)
    }

    fn nodes(s: &SolveSummary) -> u64 {
        s.nodes
    }

    /// The value of the unit's own position, as far as the root needs it.
    /// Node counts and the bounds recorded for its children depend on the
    /// job's table and lemmas (two correct runs differ there); the value of
    /// a unit explored whole does not, once clamped to its window and to
    /// the root's cap (a search may or may not happen to prove more than
    /// the window asks, as where the second player can pair moves a unit
    /// settles only whether the first player reaches a draw: both are the
    /// same answer). An unreadable unit (never leased: checked on submit)
    /// compares as nothing.
    fn verified_part(&self, unit: &SolveUnit, s: &SolveSummary, _bound: u64) -> Vec<u8> {
        let game = Game::new(&self.params);
        let Ok(pos) = game.replay(&unit.moves) else {
            return Vec::new();
        };
        let (key, _) = game.key(&pos);
        let cap = game.p1_ceiling(&Pos::EMPTY);
        let window = Window {
            lo: unit.window.lo.min(cap),
            hi: unit.window.hi.min(cap),
        };
        let value = s.known.get(&key).map(|k| window.clamp(k.lo, k.hi));
        orchard_core::codec::encode(&value)
    }

    fn report(&self, s: &SolveSummary) -> FamilyReport {
        report::report(self, s)
    }

    /// The board, each cell in the state of its opening (see `figure`).
    fn figures(&self, s: &SolveSummary, running: &[SolveUnit]) -> Vec<Figure> {
        figure::figures(self, s, running)
    }

    /// The moves, by cell name (`a1 e1`), on the board as solved (rows <=
    /// columns).
    fn unit_label(&self, u: &SolveUnit) -> String {
        let p = &self.params;
        if u.moves.is_empty() {
            return "(empty board)".to_string();
        }
        let cols = p.rows.max(p.cols) as usize;
        u.moves
            .iter()
            .map(|&m| cell_name(cols, m as usize))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Moot units and young brothers wait (see `relevance`), lemmas (see
    /// [`crate::lemmas`]) and table snapshots (see [`crate::snapshot`]).
    fn capabilities(&self) -> Capabilities<'_, Self> {
        Capabilities {
            moot_units: Some(self),
            lemmas: Some(self),
            cache: Some(self),
            ..Capabilities::default()
        }
    }
}

/// The most memory a job's table may take (1 TiB is plenty).
pub const MAX_CACHE_MIB: u64 = 1 << 20;
