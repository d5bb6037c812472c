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
//! [`HipSolve::is_moot`] asks whether the root's value could still depend on
//! a unit: a position stops depending on a child once another child already
//! decides it (for the player to move, a sibling is at least as good as the
//! best this child could be).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Mutex, OnceLock};

use serde::{Deserialize, Serialize};

use super::board::{cell_name, Board};
use super::search::{ordered_moves, p1_moves, Pos, Solver};
pub use super::search::{MoveOrder, WEIGHTS};
use super::table::Table;
use orchard_core::{
    CacheSnapshot, Capabilities, Exploration, ExploreContext, FamilyError, FamilyReport, Host,
    LemmaExchange, MootUnits, ParamError, SearchFamily,
};

/// Parameters of a `hip-solve` job. A board with more rows than columns is
/// solved as its transpose.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, clap::Args)]
pub struct SolveParams {
    /// Board rows (at least 2).
    #[arg(long)]
    pub rows: u32,
    /// Board columns (at least 2; rows x cols at most 64).
    #[arg(long)]
    pub cols: u32,
    /// Double Hip: one stone first, then two stones per turn.
    #[arg(long)]
    pub double: bool,
    /// Stones placed in the root units (default: by board size).
    #[arg(long)]
    pub depth: Option<u32>,
    /// A guess of the outcome, used only to schedule units: where the
    /// player to move is expected to lose, sibling units are searched side
    /// by side instead of one after another. The answer does not depend on
    /// it; a wrong guess costs speed. Default: no guess.
    #[arg(long, value_enum)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<Expect>,
}

/// A guessed outcome (see [`SolveParams::expect`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Expect {
    /// The first player wins.
    First,
    /// The second player wins.
    Second,
    /// A draw.
    Draw,
}

impl SolveParams {
    pub fn new(rows: u32, cols: u32, double: bool) -> SolveParams {
        SolveParams {
            rows,
            cols,
            double,
            depth: None,
            expect: None,
        }
    }

    pub(super) fn board(&self) -> Board {
        Board::new(
            self.rows.min(self.cols) as usize,
            self.rows.max(self.cols) as usize,
        )
    }

    /// The number of stones in the root units.
    pub fn root_depth(&self) -> u32 {
        self.depth.unwrap_or_else(|| {
            let n = self.rows * self.cols;
            // Deeper root units spread the work but are each solved with a
            // full window; with units leased best line first, depth 2 lets
            // `is_moot` cancel most of them (5x5: 79 of 85), depth 3 does not.
            // Larger jobs are spread further by budget splits.
            match n {
                0..=9 => 0,
                10..=16 => 1,
                17..=36 => 2,
                _ => 3,
            }
        })
    }
}

/// A position to solve, as the moves (cells, in play order) that reach it
/// from the empty board.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SolveUnit {
    pub moves: Vec<u8>,
}

/// What is known about one canonical position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Known {
    /// The first player's value lies in `lo..=hi` (-1: second player wins,
    /// 0: draw, 1: first player wins).
    pub lo: i8,
    pub hi: i8,
    /// The position was split: its value is the minimax of its children.
    pub expanded: bool,
    /// For a solved unit: a principal variation from it, in the canonical
    /// frame (empty when unknown).
    pub pv: Vec<u8>,
}

impl Default for Known {
    fn default() -> Self {
        Known {
            lo: -1,
            hi: 1,
            expanded: false,
            pv: Vec::new(),
        }
    }
}

/// Canonical position key: the two stone sets after the canonical symmetry.
pub type Key = (u64, u64);

/// What the explored units established.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SolveSummary {
    pub nodes: u64,
    pub known: BTreeMap<Key, Known>,
}

impl SolveSummary {
    fn record(
        &mut self,
        key: Key,
        lo: i8,
        hi: i8,
        expanded: bool,
        pv: Vec<u8>,
    ) -> Result<(), FamilyError> {
        let k = Known {
            lo,
            hi,
            expanded,
            pv,
        };
        match self.known.get_mut(&key) {
            Some(old) => combine(old, k, key),
            None => {
                self.known.insert(key, k);
                Ok(())
            }
        }
    }
}

fn combine(old: &mut Known, new: Known, key: Key) -> Result<(), FamilyError> {
    let (lo, hi) = (old.lo.max(new.lo), old.hi.min(new.hi));
    if lo > hi {
        return Err(FamilyError::BadUnit(format!(
            "contradictory values {}..={} and {}..={} for position {key:?}",
            old.lo, old.hi, new.lo, new.hi
        )));
    }
    old.lo = lo;
    old.hi = hi;
    old.expanded |= new.expanded;
    // Keep one principal variation, chosen by an order-independent rule.
    if old.pv.is_empty() || (!new.pv.is_empty() && new.pv < old.pv) {
        old.pv = new.pv;
    }
    Ok(())
}

/// The `hip-solve` family: one job of it, with its checked parameters and
/// what the job keeps in this process. Nothing of it lives outside the job
/// value: a fresh job searches cold.
pub struct HipSolve {
    params: SolveParams,
    /// What the hosting process lends the job (the table's size).
    host: Host,
    /// The transposition table, shared by every thread searching the job,
    /// with its lemma outbox (see [`super::lemmas`]). Created on first use:
    /// a job that only merges and checks (the coordinator's) never
    /// allocates one.
    table: OnceLock<Table>,
    /// The last [`Relevance`] computed for [`MootUnits`] (the coordinator
    /// asks about every live unit after each merge).
    relevance: Mutex<Option<RelevanceCache>>,
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
        })
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
            relevance: Mutex::new(None),
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

/// The game rules on top of the board, shared by unit generation, explore
/// and report.
struct Game {
    board: Board,
    double: bool,
}

/// A child of a position.
enum Child {
    /// The move completes a square of the mover: he loses.
    Loses,
    Pos(Pos),
}

impl Game {
    fn new(p: &SolveParams) -> Game {
        Game {
            board: p.board(),
            double: p.double,
        }
    }

    fn p1_to_move(&self, pos: &Pos) -> bool {
        p1_moves(pos.stones(), self.double)
    }

    fn key(&self, pos: &Pos) -> (Key, usize) {
        let (a, b, g) = self.board.canonical2(pos.p1, pos.p2);
        ((a, b), g)
    }

    fn full(&self, pos: &Pos) -> bool {
        (pos.p1 | pos.p2) == self.board.full
    }

    /// Every move of a non-full position, in cell order.
    fn children(&self, pos: &Pos) -> Vec<(usize, Child)> {
        let p1 = self.p1_to_move(pos);
        let empty = self.board.full & !(pos.p1 | pos.p2);
        (0..self.board.n)
            .filter(|&c| empty >> c & 1 == 1)
            .map(|c| {
                let child = if pos.loses(c, p1) {
                    Child::Loses
                } else {
                    Child::Pos(pos.play(&self.board, c, p1))
                };
                (c, child)
            })
            .collect()
    }

    /// Replays a move list; errors if a move is off the board, on a stone, or
    /// ends the game (a unit is a position still being played).
    fn replay(&self, moves: &[u8]) -> Result<Pos, FamilyError> {
        let mut pos = Pos::EMPTY;
        for (i, &m) in moves.iter().enumerate() {
            let c = m as usize;
            let p1 = self.p1_to_move(&pos);
            if c >= self.board.n || (pos.p1 | pos.p2) >> c & 1 == 1 || pos.loses(c, p1) {
                return Err(FamilyError::BadUnit(format!(
                    "move {} ({m}) of {moves:?} is not a playable move",
                    i + 1
                )));
            }
            pos = pos.play(&self.board, c, p1);
        }
        if self.full(&pos) && !moves.is_empty() {
            return Err(FamilyError::BadUnit(format!("{moves:?} fills the board")));
        }
        Ok(pos)
    }

    /// The canonical positions after `depth` stones, with a move list each,
    /// in the order a depth-first search with the solver's move ordering
    /// meets them (so the likely principal lines come first and, when units
    /// are leased in order, [`HipSolve::is_moot`] can cancel their siblings).
    fn frontier(&self, depth: u32) -> Vec<SolveUnit> {
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        let mut moves = Vec::new();
        self.frontier_walk(Pos::EMPTY, depth, &mut moves, &mut seen, &mut out);
        out
    }

    fn frontier_walk(
        &self,
        pos: Pos,
        depth: u32,
        moves: &mut Vec<u8>,
        seen: &mut std::collections::HashSet<Key>,
        out: &mut Vec<SolveUnit>,
    ) {
        if !seen.insert(self.key(&pos).0) {
            return;
        }
        if depth == 0 {
            out.push(SolveUnit {
                moves: moves.clone(),
            });
            return;
        }
        let p1 = self.p1_to_move(&pos);
        let list = ordered_moves(&self.board, &pos, p1, 0);
        for &c in &list.cells[..list.len] {
            let child = pos.play(&self.board, c as usize, p1);
            if self.full(&child) {
                continue;
            }
            moves.push(c);
            self.frontier_walk(child, depth - 1, moves, seen, out);
            moves.pop();
        }
    }
}

/// P1's interval for a mover's-view value interval.
fn absolute(lo: i8, hi: i8, p1: bool) -> (i8, i8) {
    if p1 {
        (lo, hi)
    } else {
        (-hi, -lo)
    }
}

/// Minimax over intervals of the recorded tree (see the module docs), with
/// optional sensitivity to one unit for [`HipSolve::is_moot`].
struct Eval<'a> {
    game: &'a Game,
    summary: &'a SolveSummary,
    root_depth: u32,
    /// The unit whose influence is traced, and whether it was reached.
    target: Option<Key>,
    reached: bool,
    memo: HashMap<Key, (i8, i8, bool)>,
}

impl Eval<'_> {
    fn expands(&self, pos: &Pos, known: Option<&Known>) -> bool {
        pos.stones() < self.root_depth || known.is_some_and(|k| k.expanded)
    }

    /// P1's interval for `pos`, and whether it may depend on the target.
    fn eval(&mut self, pos: &Pos) -> (i8, i8, bool) {
        if self.game.full(pos) {
            return (0, 0, false);
        }
        let (key, _) = self.game.key(pos);
        if let Some(&v) = self.memo.get(&key) {
            return v;
        }
        let known = self.summary.known.get(&key);
        let (mut lo, mut hi) = known.map_or((-1, 1), |k| (k.lo, k.hi));
        let is_target = self.target == Some(key);
        self.reached |= is_target;
        let mut sensitive = is_target;
        if self.expands(pos, known) && (lo < hi || self.target.is_some()) {
            let p1 = self.game.p1_to_move(pos);
            let mut kids = Vec::new();
            for (_, child) in self.game.children(pos) {
                kids.push(match child {
                    Child::Loses => {
                        let v = if p1 { -1 } else { 1 };
                        (v, v, false)
                    }
                    Child::Pos(cp) => self.eval(&cp),
                });
            }
            // First player maximises, second minimises (P1's values).
            let pick = |a: i8, b: i8| if p1 { a.max(b) } else { a.min(b) };
            let init = if p1 { -1 } else { 1 };
            let clo = kids
                .iter()
                .fold(if kids.is_empty() { 0 } else { init }, |m, k| pick(m, k.0));
            let chi = kids
                .iter()
                .fold(if kids.is_empty() { 0 } else { init }, |m, k| pick(m, k.1));
            lo = lo.max(clo);
            hi = hi.min(chi);
            if !is_target && lo < hi {
                // The children that do not depend on the target bound this
                // position; a dependent child matters only if it could beat
                // that bound.
                if p1 {
                    let floor = kids
                        .iter()
                        .filter(|k| !k.2)
                        .map(|k| k.0)
                        .max()
                        .unwrap_or(-2);
                    sensitive = kids.iter().any(|k| k.2 && k.1 > floor);
                } else {
                    let ceil = kids.iter().filter(|k| !k.2).map(|k| k.1).min().unwrap_or(2);
                    sensitive = kids.iter().any(|k| k.2 && k.0 < ceil);
                }
            }
        }
        if lo == hi && !is_target {
            sensitive = false;
        }
        let v = (lo, hi, sensitive);
        self.memo.insert(key, v);
        v
    }
}

/// A child as [`Relevance`] sees it: P1's interval, and the position (none
/// when the move ends the game).
type Kid = (i8, i8, Option<(Key, Pos)>);

/// Which positions the root's value may still depend on, for
/// [`HipSolve::is_moot`]; computed once per merged summary (the coordinator
/// asks about every live unit after each merge) by one pass down the
/// recorded tree, level by level (a child has one stone more, so every
/// parent of a level is done before it).
///
/// The root is relevant. A child of a relevant position whose interval is
/// still open is relevant unless its siblings already bound the position at
/// least as well as the child ever could: for the first player to move,
/// `hi(child) <= max lo(sibling)`; for the second, `lo(child) >= min
/// hi(sibling)`. Intervals only narrow as units merge, so such a child can
/// never again change its parent's interval; a position every path to which
/// passes through such an edge, or through a settled position, can never
/// change the root's interval, whatever its unit finds.
struct Relevance {
    /// Every position of the recorded tree (expanding settled ones too).
    reached: HashSet<Key>,
    relevant: HashSet<Key>,
    /// The reached positions whose value is known exactly.
    settled: HashSet<Key>,
}

impl Relevance {
    /// A unit is moot if the recorded tree reaches it and the root no longer
    /// depends on it (a unit the tree does not reach is never moot).
    fn moot(&self, key: &Key) -> bool {
        self.reached.contains(key) && !self.relevant.contains(key)
    }

    fn compute(game: &Game, summary: &SolveSummary, root_depth: u32) -> Relevance {
        let mut e = Eval {
            game,
            summary,
            root_depth,
            target: None,
            reached: false,
            memo: HashMap::new(),
        };
        let root = Pos::EMPTY;
        let root_key = game.key(&root).0;
        let mut reached = HashSet::from([root_key]);
        let mut relevant = HashSet::from([root_key]);
        let mut level = vec![root];
        let mut kids: Vec<Kid> = Vec::new();
        while !level.is_empty() {
            let mut next = Vec::new();
            for pos in level {
                if game.full(&pos) {
                    continue;
                }
                let key = game.key(&pos).0;
                if !e.expands(&pos, summary.known.get(&key)) {
                    continue;
                }
                let (lo, hi, _) = e.eval(&pos);
                let open = lo < hi && relevant.contains(&key);
                let p1 = game.p1_to_move(&pos);
                kids.clear();
                for (_, child) in game.children(&pos) {
                    kids.push(match child {
                        Child::Loses => {
                            let v = if p1 { -1 } else { 1 };
                            (v, v, None)
                        }
                        Child::Pos(cp) => {
                            let (a, b, _) = e.eval(&cp);
                            let ck = (!game.full(&cp)).then(|| (game.key(&cp).0, cp));
                            (a, b, ck)
                        }
                    });
                }
                // The best two bounds the children guarantee to the mover
                // (P1's lo for a maximiser, P1's hi for a minimiser), so that
                // each child can be compared with the best of the others.
                let guarantee = |k: &Kid| if p1 { k.0 } else { -k.1 };
                let (mut best, mut best_at, mut second) = (-2i8, usize::MAX, -2i8);
                for (i, k) in kids.iter().enumerate() {
                    let g = guarantee(k);
                    if g > best {
                        second = best;
                        best = g;
                        best_at = i;
                    } else if g > second {
                        second = g;
                    }
                }
                for (i, k) in kids.iter().enumerate() {
                    let Some((ck, cp)) = k.2 else { continue };
                    if reached.insert(ck) {
                        next.push(cp);
                    }
                    let others = if i == best_at { second } else { best };
                    let could = if p1 { k.1 } else { -k.0 };
                    if open && could > others {
                        relevant.insert(ck);
                    }
                }
            }
            level = next;
        }
        let settled = e
            .memo
            .iter()
            .filter(|(_, v)| v.0 == v.1)
            .map(|(k, _)| *k)
            .collect();
        Relevance {
            reached,
            relevant,
            settled,
        }
    }
}

/// The last [`Relevance`] computed for a job, with what it was computed
/// from (compared in full, so a changed summary is never served stale data).
struct RelevanceCache {
    nodes: u64,
    snapshot: Vec<(Key, i8, i8, bool)>,
    game: Game,
    relevance: Relevance,
}

impl HipSolve {
    /// Runs `f` on the [`Relevance`] of `s`, computed or cached. One
    /// computation at a time per job: the callers (the coordinator's
    /// scheduler) ask about one merged summary many times in a row.
    fn with_relevance<T>(&self, s: &SolveSummary, f: impl FnOnce(&Game, &Relevance) -> T) -> T {
        let p = &self.params;
        let mut slot = self.relevance.lock().unwrap_or_else(|e| e.into_inner());
        let hit = slot.as_ref().is_some_and(|c| {
            c.nodes == s.nodes
                && c.snapshot.len() == s.known.len()
                && c.snapshot
                    .iter()
                    .zip(&s.known)
                    .all(|(a, (k, v))| a.0 == *k && a.1 == v.lo && a.2 == v.hi && a.3 == v.expanded)
        });
        if !hit {
            let game = Game::new(p);
            let relevance = Relevance::compute(&game, s, p.root_depth());
            *slot = Some(RelevanceCache {
                nodes: s.nodes,
                snapshot: s
                    .known
                    .iter()
                    .map(|(k, v)| (*k, v.lo, v.hi, v.expanded))
                    .collect(),
                game,
                relevance,
            });
        }
        let c = slot.as_ref().expect("filled above");
        f(&c.game, &c.relevance)
    }
}

/// The first player's value interval of the position reached by `moves`,
/// given a summary (the position must be one the job's tree reaches).
pub fn value_of(
    p: &SolveParams,
    summary: &SolveSummary,
    moves: &[u8],
) -> Result<(i8, i8), FamilyError> {
    let game = Game::new(p);
    let pos = game.replay(moves)?;
    let mut e = Eval {
        game: &game,
        summary,
        root_depth: p.root_depth(),
        target: None,
        reached: false,
        memo: HashMap::new(),
    };
    let (lo, hi, _) = e.eval(&pos);
    Ok((lo, hi))
}

/// What [`explore_pruned`] did.
#[derive(Debug, Default)]
pub struct PrunedRun {
    pub summary: SolveSummary,
    /// Units skipped as moot.
    pub skipped: usize,
    /// Units that split.
    pub splits: usize,
}

/// Explores units of `job` in order the way the coordinator leases them,
/// skipping the ones [`HipSolve::is_moot`] cancels given what was merged so
/// far, and putting the rest of a split unit first. Warm, every unit is
/// searched with the job's table; with `cold`, each unit on a fresh job
/// (an empty table of its own), as when units move between machines.
/// (Single-process; for tests and measurements.)
pub fn explore_pruned(
    job: &HipSolve,
    units: Vec<SolveUnit>,
    budget: u64,
    cold: bool,
) -> Result<PrunedRun, FamilyError> {
    use std::sync::atomic::{AtomicBool, AtomicU64};
    let (stop, bound, progress) = (AtomicBool::new(false), AtomicU64::new(0), AtomicU64::new(0));
    let ctx = ExploreContext {
        budget,
        stop: &stop,
        bound: &bound,
        progress: &progress,
    };
    let mut run = PrunedRun::default();
    let mut pending: std::collections::VecDeque<SolveUnit> = units.into();
    while let Some(unit) = pending.pop_front() {
        if job.is_moot(&run.summary, &unit) {
            run.skipped += 1;
            continue;
        }
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

impl HipSolve {
    /// Game value of a position by one search in this thread, without
    /// units, with the job's table (a cold search: a fresh job), for tests
    /// and measurements: P1's value and the nodes searched.
    pub fn solve_position(&self, moves: &[u8]) -> Result<(i8, u64), FamilyError> {
        let p = &self.params;
        solve_with(&Game::new(p), p, moves, self.table(), MoveOrder::TUNED)
    }

    /// Game value of a position by one search with a table of its own (so
    /// that the node count depends on nothing else) and a given move order:
    /// P1's value and the nodes searched. For measuring move orders against
    /// each other (the `hip_one_core` example's `tune` mode).
    pub fn solve_position_cold(
        &self,
        moves: &[u8],
        order: MoveOrder,
    ) -> Result<(i8, u64), FamilyError> {
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
) -> Result<(i8, u64), FamilyError> {
    let pos = game.replay(moves)?;
    let p1 = game.p1_to_move(&pos);
    let mut s = Solver::new(&game.board, p.double, table, None);
    s.order = order;
    let v = s
        .search(&pos, -1, 1)
        .expect("an unbounded search does not abort");
    Ok((if p1 { v } else { -v }, s.nodes))
}

fn winner_code(v: i8) -> u8 {
    match v {
        1 => 1,
        -1 => 2,
        _ => 0,
    }
}

fn describe(lo: i8, hi: i8) -> serde_json::Value {
    if lo == hi {
        serde_json::Value::from(winner_code(lo))
    } else {
        serde_json::Value::Null
    }
}

/// A value interval (the first player's) in words.
fn value_words(lo: i8, hi: i8) -> &'static str {
    match (lo, hi) {
        (1, 1) => "first player wins",
        (0, 0) => "draw",
        (-1, -1) => "second player wins",
        (-1, 0) => "the first player does not win (a draw or the second player)",
        (0, 1) => "the second player does not win (a draw or the first player)",
        _ => "unknown",
    }
}

impl HipSolve {
    /// A principal variation after solving `pos` (whose value for the mover
    /// is `v`): at each step the first move, in search order, that keeps the
    /// value, proven by a null-window search (nearly free: the table has just
    /// seen these positions). The budget does not apply to these searches.
    fn table_pv(solver: &mut Solver<'_, '_>, game: &Game, mut pos: Pos, mut v: i8) -> Vec<u8> {
        let (budget, aborted) = (solver.budget, solver.aborted);
        solver.budget = u64::MAX;
        solver.aborted = false;
        let mut pv = Vec::new();
        while !game.full(&pos) {
            let p1 = game.p1_to_move(&pos);
            let empty = game.board.full & !(pos.p1 | pos.p2);
            let moves = solver.moves(&pos, p1, 0);
            if moves.len == 0 {
                // Forced to complete a square: any move loses.
                pv.push(empty.trailing_zeros() as u8);
                break;
            }
            let mut next = None;
            for &c in &moves.cells[..moves.len] {
                let child = pos.play(&game.board, c as usize, p1);
                let same = game.p1_to_move(&child) == p1;
                // Whether the child is worth at least `v` to the mover.
                let keeps = v == -1
                    || match (same, game.full(&child)) {
                        (_, true) => v <= 0,
                        (true, false) => solver.search(&child, v - 1, v).is_some_and(|x| x >= v),
                        (false, false) => solver.search(&child, -v, 1 - v).is_some_and(|x| x <= -v),
                    };
                if keeps {
                    next = Some((c, child, if same { v } else { -v }));
                    break;
                }
            }
            match next {
                Some((c, child, cv)) => {
                    pv.push(c);
                    pos = child;
                    v = cv;
                }
                None => break,
            }
        }
        solver.budget = budget;
        solver.aborted = aborted;
        pv
    }
}

/// How many partly searched positions below a unit an aborted search
/// expands (see [`Harvest`]); deeper ones are handed back whole.
const HARVEST_LEVELS: usize = 12;

/// What an aborted search leaves behind. The search stopped somewhere on a
/// path of partly searched positions; everything it finished off that path
/// is in the table. Each position on the path (up to a depth) is recorded as
/// expanded, its children's table intervals are recorded, and the children
/// the table does not settle become units, in search order. So a split loses
/// only the work below the last expanded position, instead of the whole
/// partly searched child of the unit.
///
/// The record stays sound: an expanded position's value is the minimax of
/// its children (`Eval`), and each child is then covered by the rules (a
/// losing or filling move), by an exact interval from the table, or by a
/// unit, or is the next position on the path.
struct Harvest<'s, 'a, 'b, 'c> {
    solver: &'s Solver<'a, 'c>,
    game: &'s Game,
    summary: &'b mut SolveSummary,
    units: &'b mut Vec<SolveUnit>,
}

impl Harvest<'_, '_, '_, '_> {
    /// `pos`, reached by `moves`, partly searched along `path` (its moves,
    /// first move first; empty where the search stopped).
    fn node(
        &mut self,
        pos: Pos,
        moves: &mut Vec<u8>,
        path: &[u8],
        levels: usize,
    ) -> Result<(), FamilyError> {
        let game = self.game;
        if path.is_empty() || levels == 0 {
            self.units.push(SolveUnit {
                moves: moves.clone(),
            });
            return Ok(());
        }
        let p1 = game.p1_to_move(&pos);
        let (key, _) = game.key(&pos);
        self.summary.record(key, -1, 1, true, Vec::new())?;
        let next = path[0] as usize;
        let next_key = game.key(&pos.play(&game.board, next, p1)).0;
        let list = self.solver.moves(&pos, p1, 0);
        let mut seen: Vec<Key> = Vec::new();
        for &c in &list.cells[..list.len] {
            let child = pos.play(&game.board, c as usize, p1);
            if game.full(&child) {
                continue; // a draw, by the rules
            }
            let ck = game.key(&child).0;
            if seen.contains(&ck) {
                continue;
            }
            seen.push(ck);
            if ck == next_key {
                // Follow the path in the frame the search used.
                let on_path = pos.play(&game.board, next, p1);
                moves.push(next as u8);
                self.node(on_path, moves, &path[1..], levels - 1)?;
                moves.pop();
                continue;
            }
            let (lo, hi) = table_interval(self.solver, &child);
            if (lo, hi) != (-1, 1) {
                self.summary.record(ck, lo, hi, false, Vec::new())?;
            }
            if lo < hi {
                moves.push(c);
                self.units.push(SolveUnit {
                    moves: moves.clone(),
                });
                moves.pop();
            }
        }
        Ok(())
    }
}

/// P1's interval for a (not full) position from the table.
fn table_interval(solver: &Solver<'_, '_>, pos: &Pos) -> (i8, i8) {
    let (k1, k2, _) = solver.key(pos);
    solver
        .table
        .probe(k1, k2)
        .map_or((-1, 1), |(lo, hi, _)| (lo, hi))
}

/// The mover-of-the-parent's interval for `child` from the table.
fn child_bounds(solver: &Solver<'_, '_>, game: &Game, child: &Pos, parent_p1: bool) -> (i8, i8) {
    if game.full(child) {
        return (0, 0);
    }
    let (lo, hi) = table_interval(solver, child);
    // P1's interval to the parent mover's view.
    if parent_p1 {
        (lo, hi)
    } else {
        (-hi, -lo)
    }
}

impl SearchFamily for HipSolve {
    const NAME: &'static str = "hip-solve";
    const ABOUT: &'static str = "Hip and Double Hip: the exact game value (win, draw or loss)";

    type Params = SolveParams;
    type Unit = SolveUnit;
    type Summary = SolveSummary;

    fn new(p: SolveParams, host: &Host) -> Result<Self, ParamError> {
        let (r, c) = super::board_dims(p.rows, p.cols)?;
        if let Some(d) = p.depth {
            if d as usize >= r * c || d > 8 {
                return Err(ParamError::new(
                    "depth",
                    format!("must be below the cell count and at most 8, got {d}"),
                ));
            }
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
        let p = &self.params;
        let game = Game::new(p);
        let pos = game.replay(&unit.moves)?;
        let mut summary = SolveSummary {
            nodes: 1,
            known: BTreeMap::new(),
        };
        let (key, sym) = game.key(&pos);
        let p1 = game.p1_to_move(&pos);
        let mut solver = Solver::new(&game.board, p.double, self.table(), Some(ctx));
        // A unit is solved like a search node, except that the children
        // it did not settle are handed back instead of abandoned.
        let moves = solver.moves(&pos, p1, 0);
        let mut alpha = -1i8;
        let mut best = -1i8;
        let mut rest = Vec::new();
        let mut seen: Vec<Key> = Vec::new();
        let mut pending: Vec<SolveUnit> = Vec::new();
        for &c in &moves.cells[..moves.len] {
            let child = pos.play(&game.board, c as usize, p1);
            let v = if game.full(&child) {
                0
            } else {
                let (ck, _) = game.key(&child);
                if seen.contains(&ck) {
                    continue; // a symmetric move
                }
                seen.push(ck);
                let same = game.p1_to_move(&child) == p1;
                let searching = !solver.aborted;
                let r = if solver.aborted {
                    // Only the table may still settle it, for free: it is
                    // known, a win, or cannot beat what we have.
                    let (lo, hi) = child_bounds(&solver, &game, &child, p1);
                    if lo >= 1 || lo == hi {
                        Some(lo)
                    } else if hi <= alpha {
                        Some(hi)
                    } else {
                        None
                    }
                } else if same {
                    solver.search(&child, alpha, 1)
                } else {
                    solver.search(&child, -1, -alpha).map(|v| -v)
                };
                match r {
                    Some(v) => {
                        // Fail-soft: v <= alpha is an upper bound.
                        let (lo, hi) = if v <= alpha { (-1, v) } else { (v, v) };
                        let (lo_c, hi_c) = if same { (lo, hi) } else { (-hi, -lo) };
                        let child_p1 = game.p1_to_move(&child);
                        let (alo, ahi) = absolute(lo_c, hi_c, child_p1);
                        if (alo, ahi) != (-1, 1) {
                            summary.record(ck, alo, ahi, false, Vec::new())?;
                        }
                        v
                    }
                    None => {
                        let mut moves = unit.moves.clone();
                        moves.push(c);
                        if searching {
                            // This child's search ran out: keep what it
                            // settled, hand back only what it did not.
                            let path: Vec<u8> = solver.abort_path.iter().rev().copied().collect();
                            let mut h = Harvest {
                                solver: &solver,
                                game: &game,
                                summary: &mut summary,
                                units: &mut pending,
                            };
                            h.node(child, &mut moves, &path, HARVEST_LEVELS)?;
                        } else {
                            pending.push(SolveUnit { moves });
                        }
                        continue;
                    }
                }
            };
            if v > best {
                best = v;
                alpha = alpha.max(v);
                if alpha >= 1 {
                    break;
                }
            }
        }
        summary.nodes += solver.nodes;
        if best >= 1 || pending.is_empty() {
            // Settled: a win was found, or every child is known.
            let (lo, hi) = absolute(best, best, p1);
            let empties = (game.board.full & !(pos.p1 | pos.p2)).count_ones() as u8;
            solver.table.store(key.0, key.1, lo, hi, 255, empties);
            let pv = Self::table_pv(&mut solver, &game, pos, best);
            let pv = pv
                .iter()
                .map(|&c| game.board.perms[sym][c as usize])
                .collect();
            summary.record(key, lo, hi, false, pv)?;
            return Ok(Exploration::Finished(summary));
        }
        summary.record(key, -1, 1, true, Vec::new())?;
        rest.extend(pending);
        Ok(Exploration::Split {
            explored: summary,
            rest,
        })
    }

    fn merge(&self, into: &mut SolveSummary, other: SolveSummary) -> Result<(), FamilyError> {
        into.nodes = into
            .nodes
            .checked_add(other.nodes)
            .ok_or(FamilyError::Overflow("hip-solve nodes"))?;
        for (key, k) in other.known {
            match into.known.get_mut(&key) {
                Some(old) => combine(old, k, key)?,
                None => {
                    into.known.insert(key, k);
                }
            }
        }
        Ok(())
    }

    fn nodes(s: &SolveSummary) -> u64 {
        s.nodes
    }

    fn report(&self, s: &SolveSummary) -> FamilyReport {
        let p = &self.params;
        let game = Game::new(p);
        let board = &game.board;
        let mut e = Eval {
            game: &game,
            summary: s,
            root_depth: p.root_depth(),
            target: None,
            reached: false,
            memo: HashMap::new(),
        };
        let (lo, hi, _) = e.eval(&Pos::EMPTY);
        // Openings: the first stone, one per symmetry class.
        let mut openings = Vec::new();
        let mut opening_lines = Vec::new();
        let mut seen = Vec::new();
        for (c, child) in game.children(&Pos::EMPTY) {
            if let Child::Pos(cp) = child {
                let (k, _) = game.key(&cp);
                if seen.contains(&k) {
                    continue;
                }
                seen.push(k);
                let (clo, chi, _) = e.eval(&cp);
                let mut line = format!("opening {}: {}", board.cell_name(c), value_words(clo, chi));
                if clo < chi {
                    // Progress of a long search: the replies settled so far.
                    let mut settled = Vec::new();
                    let mut seen_replies = Vec::new();
                    for (rc, reply) in game.children(&cp) {
                        let Child::Pos(rp) = reply else { continue };
                        let rk = game.key(&rp).0;
                        if game.full(&rp) || seen_replies.contains(&rk) {
                            continue;
                        }
                        seen_replies.push(rk);
                        let (rlo, rhi, _) = e.eval(&rp);
                        if (rlo, rhi) != (-1, 1) {
                            settled.push(format!(
                                "{} {}",
                                board.cell_name(rc),
                                value_words(rlo, rhi)
                            ));
                        }
                    }
                    if !settled.is_empty() {
                        line.push_str(&format!("; replies settled: {}", settled.join(", ")));
                    }
                }
                opening_lines.push(line);
                openings.push(serde_json::json!({
                    "cell": board.cell_name(c),
                    "winner": describe(clo, chi),
                    "value": [clo, chi],
                }));
            }
        }
        // Principal variation: through the recorded tree, then the solved
        // unit's own line.
        let mut pv: Vec<u8> = Vec::new();
        if lo == hi {
            // In the first player's terms every position on the line has the
            // root's value.
            let v = lo;
            let mut pos = Pos::EMPTY;
            loop {
                if game.full(&pos) {
                    break;
                }
                let (key, g) = game.key(&pos);
                let known = s.known.get(&key);
                if let Some(k) = known.filter(|k| !k.pv.is_empty() && !e.expands(&pos, Some(k))) {
                    let inv = board.inverse[g];
                    pv.extend(k.pv.iter().map(|&c| board.perms[inv][c as usize]));
                    break;
                }
                if !e.expands(&pos, known) {
                    break;
                }
                let p1 = game.p1_to_move(&pos);
                let mut next = None;
                for (c, child) in game.children(&pos) {
                    let (clo, chi, cpos) = match child {
                        Child::Loses => {
                            let w = if p1 { -1 } else { 1 };
                            (w, w, None)
                        }
                        Child::Pos(cp) => {
                            let (a, b, _) = e.eval(&cp);
                            (a, b, Some(cp))
                        }
                    };
                    if clo == v && chi == v {
                        let safe = cpos.is_some();
                        // Prefer a move that does not end the game at once.
                        if next.is_none() || (safe && matches!(next, Some((_, None)))) {
                            next = Some((c, cpos));
                        }
                    }
                }
                match next {
                    Some((c, Some(cp))) => {
                        pv.push(c as u8);
                        pos = cp;
                    }
                    Some((c, None)) => {
                        pv.push(c as u8);
                        break;
                    }
                    None => break,
                }
            }
        }
        let pv_names: Vec<String> = pv.iter().map(|&c| board.cell_name(c as usize)).collect();
        let solved = lo == hi;
        let json = serde_json::json!({
            "family": Self::NAME,
            "rows": board.rows,
            "cols": board.cols,
            "double": p.double,
            "winner": describe(lo, hi),
            "value": [lo, hi],
            "nodes": s.nodes,
            "openings": openings,
            "pv": pv_names,
            "positions_recorded": s.known.len(),
        });
        let variant = if p.double { "Double Hip" } else { "Hip" };
        let mut text = vec![if solved {
            format!(
                "{variant} {}x{}: {}",
                board.rows,
                board.cols,
                value_words(lo, hi)
            )
        } else {
            format!(
                "{variant} {}x{}: not solved yet: {} (first player's value in {lo}..={hi})",
                board.rows,
                board.cols,
                value_words(lo, hi)
            )
        }];
        text.extend(opening_lines);
        if !pv_names.is_empty() {
            text.push(format!("principal variation: {}", pv_names.join(" ")));
        }
        text.push(format!("nodes explored: {}", s.nodes));
        // The results file holds the answer itself (the value, each
        // opening's, the principal variation and the nodes): a game value
        // has no list to write, and the file is what outlives the terminal.
        FamilyReport {
            json,
            results_lines: text.clone(),
            text,
        }
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

    /// Moot units and young brothers wait (see [`MootUnits`] below),
    /// lemmas (see [`super::lemmas`]) and table snapshots (see
    /// [`super::snapshot`]).
    fn capabilities(&self) -> Capabilities<'_, Self> {
        Capabilities {
            moot_units: Some(self),
            lemmas: Some(self),
            cache: Some(self),
            ..Capabilities::default()
        }
    }
}

impl MootUnits<HipSolve> for HipSolve {
    /// Young brothers wait: a unit waits while, at some position on its
    /// line, the first move in search order leads elsewhere, to a position
    /// not yet settled and still relevant. Searched first, that position
    /// may decide its parent and make the unit moot; once it is settled
    /// without doing so, all its younger siblings may run in parallel.
    /// With a guess of the outcome (`--expect`), only positions whose mover
    /// is the guessed winner make units wait: where the mover is expected to
    /// lose (or, for a draw, nobody is expected to win), every child has to
    /// be searched anyway, so siblings are searched side by side.
    fn must_wait(&self, merged: &SolveSummary, unit: &SolveUnit) -> bool {
        let p = &self.params;
        self.with_relevance(merged, |game, r| {
            if game.replay(&unit.moves).is_err() {
                return false; // a malformed unit never waits
            }
            let board = &game.board;
            let mut pos = Pos::EMPTY;
            for &m in &unit.moves {
                let p1 = game.p1_to_move(&pos);
                let mover_expected_to_win = match p.expect {
                    None => true,
                    Some(Expect::First) => p1,
                    Some(Expect::Second) => !p1,
                    Some(Expect::Draw) => false,
                };
                if !mover_expected_to_win {
                    pos = pos.play(board, m as usize, p1);
                    continue;
                }
                let list = ordered_moves(board, &pos, p1, 0);
                let child = pos.play(board, m as usize, p1);
                if list.len > 0 {
                    let eldest = pos.play(board, list.cells[0] as usize, p1);
                    let ek = game.key(&eldest).0;
                    if ek != game.key(&child).0
                        && !game.full(&eldest)
                        && !r.settled.contains(&ek)
                        && !r.moot(&ek)
                    {
                        return true;
                    }
                }
                pos = child;
            }
            false
        })
    }

    fn is_moot(&self, merged: &SolveSummary, unit: &SolveUnit) -> bool {
        self.with_relevance(merged, |game, r| {
            let Ok(pos) = game.replay(&unit.moves) else {
                return false;
            };
            r.moot(&game.key(&pos).0)
        })
    }
}

/// Values of positions whose search was expensive (see [`super::lemmas`]).
/// Taking or learning lemmas creates the job's table (only workers do).
impl LemmaExchange for HipSolve {
    fn take(&self, max_bytes: usize) -> Vec<u8> {
        super::lemmas::take(self.table(), max_bytes)
    }

    fn check(&self, lemmas: &[u8]) -> Result<(), FamilyError> {
        super::lemmas::decode_all(&self.params.board(), lemmas).map(drop)
    }

    fn learn(&self, lemmas: &[u8]) -> Result<u64, FamilyError> {
        let entries = super::lemmas::decode_all(&self.params.board(), lemmas)?;
        Ok(super::lemmas::learn_into(self.table(), &entries))
    }
}

/// The table's expensive entries, kept by the worker across restarts (see
/// [`super::snapshot`]).
impl CacheSnapshot for HipSolve {
    /// `hip-RxC` or `hip-RxC-double` (rows <= columns): every job of one
    /// game shares its snapshot, whatever its other parameters.
    fn cache_name(&self) -> String {
        let board = self.params.board();
        let suffix = if self.params.double { "-double" } else { "" };
        format!("hip-{}x{}{suffix}", board.rows, board.cols)
    }

    /// Nothing before the job's first search (or restore).
    fn snapshot(&self) -> Option<Vec<u8>> {
        let table = self.table.get()?;
        Some(super::snapshot::encode_table(
            table,
            super::snapshot::MAX_ENTRIES,
        ))
    }

    /// Checks the whole snapshot before storing any entry; each entry is
    /// intersected with what the table knows.
    fn restore(&self, snapshot: &[u8]) -> Result<u64, FamilyError> {
        let entries =
            super::snapshot::decode_snapshot(&self.params.board(), self.params.double, snapshot)?;
        Ok(super::lemmas::learn_into(self.table(), &entries))
    }
}

/// The most memory a job's table may take (1 TiB is plenty).
pub const MAX_CACHE_MIB: u64 = 1 << 20;
