//! What the root still needs when a job has no unit left
//! ([`orchard_core::MootUnits::still_needed`]): the check, at the end of
//! every job, that cancelling units (`relevance`) and narrowing their
//! windows kept enough of the tree to settle the root, and the repair if
//! that argument ever fails.
//!
//! By alpha-beta's argument on recorded intervals (ARCHITECTURE.md,
//! "hip-solve"), a root left open has a relevant position that is not
//! expanded and whose interval does not answer the window it is needed in:
//! a unit of that window settles what the root needs of it. Should the
//! relevance itself be wrong (it is what decided which units to cancel),
//! that walk finds nothing; then every open leaf reached through open
//! positions is asked for in the full window, a superset of what is
//! needed, which still settles the root since merged intervals only
//! narrow. Either way the job goes on until the root is exact.

use std::collections::HashSet;

use super::eval::Eval;
use super::game::Child;
use super::summary::{Key, SolveSummary, SolveUnit, Window};
use super::HipSolve;
use crate::search::Pos;

/// The units the root still needs (none once it is settled): the
/// relevant leaves in the windows they are needed in, else every open
/// leaf below open positions in the full window (see the module's doc).
pub(super) fn still_needed(job: &HipSolve, merged: &SolveSummary) -> Vec<SolveUnit> {
    let cache = job.relevance_of(merged);
    let (game, r) = (&cache.game, &cache.relevance);
    let mut e = Eval::new(game, merged, job.params.root_depth());
    let (lo, hi, _) = e.eval(&Pos::EMPTY);
    if lo == hi {
        return Vec::new();
    }
    let needed = leaves(
        &mut e,
        merged,
        |key, _| r.relevant.contains(key),
        |key| r.windows.get(key).and_then(|&(a, b)| Window::new(a, b)),
    );
    if !needed.is_empty() {
        return needed;
    }
    // The relevance missed what the root needs (the coordinator logs every
    // unit it is asked for at a job's end).
    open_leaves(&mut e, merged)
}

/// Every open leaf reached through open positions, in the full window.
fn open_leaves(e: &mut Eval<'_>, merged: &SolveSummary) -> Vec<SolveUnit> {
    leaves(e, merged, |_, (lo, hi)| lo < hi, |_| Some(Window::FULL))
}

/// The leaves (positions not expanded by the recorded tree) reached from
/// the root through children that `through` accepts (by key and P1's
/// interval), each reached by the first line that meets it, as a unit of
/// the window `window_of` gives, unless its interval already answers it.
fn leaves(
    e: &mut Eval<'_>,
    merged: &SolveSummary,
    through: impl Fn(&Key, (i8, i8)) -> bool,
    window_of: impl Fn(&Key) -> Option<Window>,
) -> Vec<SolveUnit> {
    let game = e.game();
    let root = Pos::EMPTY;
    let mut needed = Vec::new();
    let mut seen = HashSet::from([game.key(&root).0]);
    let mut level = vec![(root, Vec::new())];
    while !level.is_empty() {
        let mut next = Vec::new();
        for (pos, moves) in level {
            let key = game.key(&pos).0;
            if !e.expands(&pos, merged.known.get(&key)) {
                let (lo, hi, _) = e.eval(&pos);
                if let Some(window) = window_of(&key).filter(|w| !w.answered_by(lo, hi)) {
                    needed.push(SolveUnit { moves, window });
                }
                continue;
            }
            for (cell, child) in game.children(&pos) {
                let Child::Pos(cp) = child else { continue };
                if game.full(&cp) {
                    continue;
                }
                let ck = game.key(&cp).0;
                let (lo, hi, _) = e.eval(&cp);
                if through(&ck, (lo, hi)) && seen.insert(ck) {
                    let mut line = moves.clone();
                    line.push(cell as u8);
                    next.push((*cp, line));
                }
            }
        }
        level = next;
    }
    needed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solve::SolveParams;
    use orchard_core::{Exploration, Host, LocalFlags, SearchFamily};

    /// The fallback alone (as if the relevance had missed a position):
    /// root units searched in windows that ask less than the root needs
    /// leave it open; the open leaves, searched in the full window, round
    /// after round, settle it to one search's value.
    #[test]
    fn the_open_leaves_settle_a_root_left_open() {
        let mut opened = 0;
        for (r, c, double) in [(3, 3, false), (2, 5, true), (3, 4, true), (2, 6, true)] {
            let p = SolveParams::new(r, c, double);
            let job = HipSolve::new(p.clone(), &Host::default()).unwrap();
            let want = job.solve_position(&[]).unwrap().value;
            let flags = LocalFlags::default();
            let ctx = flags.context(u64::MAX);
            let mut merged = SolveSummary::default();
            let search = |units: Vec<SolveUnit>, merged: &mut SolveSummary| {
                for u in units {
                    let cold = HipSolve::new(p.clone(), &Host::default()).unwrap();
                    let Exploration::Finished(s) = cold.explore(&u, &ctx).unwrap() else {
                        panic!("a unit with no budget limit finishes");
                    };
                    job.merge(merged, s).unwrap();
                }
            };
            let narrow: Vec<SolveUnit> = job
                .root_units()
                .into_iter()
                .enumerate()
                .map(|(i, u)| SolveUnit {
                    window: [Window::new(-1, 0), Window::new(0, 1)][i % 2].unwrap(),
                    ..u
                })
                .collect();
            search(narrow, &mut merged);
            let game = super::super::game::Game::new(&p);
            let mut rounds = 0;
            loop {
                let mut e = Eval::new(&game, &merged, p.root_depth());
                let (lo, hi, _) = e.eval(&Pos::EMPTY);
                if lo == hi {
                    assert_eq!(lo, want, "{r}x{c} double={double}");
                    break;
                }
                let units = open_leaves(&mut e, &merged);
                assert!(!units.is_empty(), "{r}x{c}: an open root has an open leaf");
                rounds += 1;
                assert!(rounds < 50, "{r}x{c}: no end in sight");
                search(units, &mut merged);
            }
            opened += usize::from(rounds > 0);
        }
        assert!(opened >= 2, "only {opened} roots were left open");
    }
}
