//! Single-process helpers for tests and measurements: [`explore_pruned`]
//! (units in lease order, with moot ones skipped, as the coordinator would)
//! and one-search solves of a position ([`HipSolve::solve_position`],
//! [`HipSolve::solve_position_cold`]). The cluster never calls them; they
//! are what the tests compare against plain minimax and what the
//! `hip_one_core` example times.

use super::game::Game;
use super::summary::{SolveSummary, SolveUnit};
use super::{HipSolve, MoveOrder, SolveParams};
use crate::search::Solver;
use crate::table::Table;
use orchard_core::{Exploration, FamilyError, LocalFlags, MootUnits, SearchFamily};

/// What [`explore_pruned`] did.
#[derive(Debug, Default)]
pub struct PrunedRun {
    pub summary: SolveSummary,
    /// Units skipped as moot.
    pub skipped: usize,
    /// Units that split.
    pub splits: usize,
    /// Units searched in a narrower window than they were made with.
    pub narrowed: usize,
}

/// Explores units of `job` in order the way the coordinator leases them,
/// skipping the ones [`HipSolve::is_moot`] cancels given what was merged so
/// far, narrowing the others' windows as the lease does
/// ([`orchard_core::MootJudge::narrow`]), and putting the rest of a split
/// unit first. Warm, every unit is
/// searched with the job's table; with `cold`, each unit on a fresh job
/// (an empty table of its own), as when units move between machines.
/// (Single-process; for tests and measurements.)
pub fn explore_pruned(
    job: &HipSolve,
    units: Vec<SolveUnit>,
    budget: u64,
    cold: bool,
) -> Result<PrunedRun, FamilyError> {
    let flags = LocalFlags::default();
    let ctx = flags.context(budget);
    let mut run = PrunedRun::default();
    let mut pending: std::collections::VecDeque<SolveUnit> = units.into();
    while let Some(unit) = pending.pop_front() {
        let judge = job.judge(&run.summary);
        if judge.is_moot(&unit) {
            run.skipped += 1;
            continue;
        }
        let unit = match judge.narrow(&unit) {
            Some(narrowed) => {
                run.narrowed += 1;
                narrowed
            }
            None => unit,
        };
        let explored = if cold {
            job.cold().explore(&unit, &ctx)?
        } else {
            job.explore(&unit, &ctx)?
        };
        match explored {
            Exploration::Finished(s) => job.merge(&mut run.summary, s)?,
            Exploration::Split { explored, rest } => {
                run.splits += 1;
                job.merge(&mut run.summary, explored)?;
                for u in rest.into_iter().rev() {
                    pending.push_front(u);
                }
            }
        }
    }
    Ok(run)
}

/// What one search of a position found ([`HipSolve::solve_position`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Searched {
    /// P1's value.
    pub value: i8,
    /// The nodes searched, the plain last moves' among them.
    pub nodes: u64,
    /// The nodes of the plain last moves (positions with little game left,
    /// [`crate::last_moves::PLAIN_MAX_WEIGHT`]): cheap ones, without a table
    /// probe. The solver of the time (8690597) had none, so its nodes
    /// compare with `nodes - plain_nodes` too.
    pub plain_nodes: u64,
}

impl HipSolve {
    /// Game value of a position by one search in this thread, without
    /// units, with the job's table (a cold search: a fresh job), for tests
    /// and measurements.
    pub fn solve_position(&self, moves: &[u8]) -> Result<Searched, FamilyError> {
        let p = &self.params;
        let game = Game::new(p);
        let order = MoveOrder::tuned(&game.board, p.double);
        solve_with(&game, p, moves, self.table(), order)
    }

    /// Game value of a position by one search with a table of its own (so
    /// that the node count depends on nothing else) and a given move order.
    /// For measuring move orders against each other (the `hip_one_core`
    /// example's `tune` mode).
    pub fn solve_position_cold(
        &self,
        moves: &[u8],
        order: MoveOrder,
    ) -> Result<Searched, FamilyError> {
        let p = &self.params;
        let game = Game::new(p);
        let table = Table::new(&game.board, p.double, self.host.cache_mib);
        solve_with(&game, p, moves, &table, order)
    }
}

fn solve_with(
    game: &Game,
    p: &SolveParams,
    moves: &[u8],
    table: &Table,
    order: MoveOrder,
) -> Result<Searched, FamilyError> {
    let pos = game.replay(moves)?;
    let p1 = game.p1_to_move(&pos);
    let mut s = Solver::new(&game.board, p.double, table, None);
    s.order = order;
    let v = s
        .search(&pos, -1, 1)
        .expect("an unbounded search does not abort");
    Ok(Searched {
        value: if p1 { v } else { -v },
        nodes: s.nodes,
        plain_nodes: s.plain_nodes,
    })
}
