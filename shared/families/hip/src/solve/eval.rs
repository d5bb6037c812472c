//! Minimax over intervals of the recorded tree ([`Eval`]): the value the
//! merged summaries prove for a position, whatever subset of units has been
//! merged (see the module docs of [`super`]). The report, the relevance of
//! units and [`value_of`] all read the tree through it.

use std::collections::HashMap;

use super::game::{Child, Game};
use super::summary::{Key, Known, SolveSummary};
use super::SolveParams;
use crate::search::Pos;
use orchard_core::FamilyError;

/// Minimax over intervals of the recorded tree (see the module docs), with
/// optional sensitivity to one unit for [`HipSolve`](super::HipSolve)'s
/// [`MootUnits::is_moot`](orchard_core::MootUnits::is_moot).
pub(super) struct Eval<'a> {
    game: &'a Game,
    summary: &'a SolveSummary,
    root_depth: u32,
    /// The unit whose influence is traced, and whether it was reached.
    target: Option<Key>,
    reached: bool,
    /// Every position evaluated so far: P1's interval and sensitivity.
    pub(super) memo: HashMap<Key, (i8, i8, bool)>,
}

impl<'a> Eval<'a> {
    /// An evaluation of `summary`'s recorded tree, whose positions with
    /// fewer than `root_depth` stones are expanded, tracing no unit.
    pub(super) fn new(game: &'a Game, summary: &'a SolveSummary, root_depth: u32) -> Eval<'a> {
        Eval {
            game,
            summary,
            root_depth,
            target: None,
            reached: false,
            memo: HashMap::new(),
        }
    }

    /// The game whose tree this evaluates.
    pub(super) fn game(&self) -> &'a Game {
        self.game
    }
}

impl Eval<'_> {
    /// Whether `pos` (recorded as `known`) is evaluated from its children.
    pub(super) fn expands(&self, pos: &Pos, known: Option<&Known>) -> bool {
        pos.stones() < self.root_depth || known.is_some_and(|k| k.expanded)
    }

    /// P1's interval for `pos`, and whether it may depend on the target.
    pub(super) fn eval(&mut self, pos: &Pos) -> (i8, i8, bool) {
        if self.game.full(pos) {
            return (0, 0, false);
        }
        let (key, _) = self.game.key(pos);
        if let Some(&v) = self.memo.get(&key) {
            return v;
        }
        let known = self.summary.known.get(&key);
        let (mut lo, mut hi) = known.map_or((-1, 1), |k| (k.lo, k.hi));
        hi = hi.min(self.game.p1_ceiling(pos));
        lo = lo.min(hi);
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

/// The first player's value interval of the position reached by `moves`,
/// given a summary (the position must be one the job's tree reaches).
pub fn value_of(
    p: &SolveParams,
    summary: &SolveSummary,
    moves: &[u8],
) -> Result<(i8, i8), FamilyError> {
    let game = Game::new(p);
    let pos = game.replay(moves)?;
    let mut e = Eval::new(&game, summary, p.root_depth());
    let (lo, hi, _) = e.eval(&pos);
    Ok((lo, hi))
}
