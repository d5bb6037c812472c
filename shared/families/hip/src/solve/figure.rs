//! The dashboard's picture of a `hip-solve` job: the board, each cell
//! coloured by what is known of the opening that puts the first stone
//! there (see [`orchard_core::figure`]). Symmetric cells are one opening,
//! so they share a colour; a cell is *running* while a unit under its
//! opening is being explored. The values come from [`Eval`], as in the
//! report.

use orchard_core::figure::{Boards, Cell, Figure, Grid, Swatch, Tone};

use super::eval::Eval;
use super::game::{Child, Game};
use super::summary::{Key, SolveSummary, SolveUnit};
use super::HipSolve;
use crate::search::Pos;

/// The states a cell may have, in the legend's order.
const LEGEND: [(&str, &str, Tone); 7] = [
    ("win", "first player wins", Tone::Green),
    ("draw", "draw", Tone::Blue),
    ("loss", "second player wins", Tone::Red),
    ("bounded", "partly known", Tone::Purple),
    ("running", "being searched", Tone::Amber),
    ("pending", "waiting", Tone::Grey),
    ("moot", "not needed for the answer", Tone::Light),
];

/// The state of an opening whose first player's value is in `lo..=hi`.
/// `unknown`: the interval the rules alone give the opening (a draw at
/// most for the first player where the second can pair moves): a search
/// has told nothing more.
fn state(lo: i8, hi: i8, unknown: (i8, i8), running: bool, root_solved: bool) -> &'static str {
    match (lo, hi) {
        (1, 1) => "win",
        (0, 0) => "draw",
        (-1, -1) => "loss",
        _ if running => "running",
        v if v == unknown && root_solved => "moot",
        v if v == unknown => "pending",
        _ => "bounded",
    }
}

/// One board: every cell in the state of its opening.
pub(super) fn figures(job: &HipSolve, s: &SolveSummary, running: &[SolveUnit]) -> Vec<Figure> {
    let p = &job.params;
    let game = Game::new(p);
    let board = &game.board;
    let mut e = Eval::new(&game, s, p.root_depth());
    let (lo, hi, _) = e.eval(&Pos::EMPTY);
    // The opening (its canonical key) of each cell; `None`: the first stone
    // there loses at once (no such cell on a board where Hip is played).
    let opening: Vec<Option<Key>> = game
        .children(&Pos::EMPTY)
        .into_iter()
        .map(|(_, child)| match child {
            Child::Pos(cp) => Some(game.key(&cp).0),
            Child::Loses => None,
        })
        .collect();
    // A unit of the empty board runs every opening at once.
    let every_opening_runs = running.iter().any(|u| u.moves.is_empty());
    let running: Vec<Key> = running
        .iter()
        .filter_map(|u| {
            opening
                .get(usize::from(*u.moves.first()?))
                .copied()
                .flatten()
        })
        .collect();
    let mut values: Vec<(Key, (i8, i8))> = Vec::new();
    let cells = game
        .children(&Pos::EMPTY)
        .into_iter()
        .zip(&opening)
        .map(|((c, child), key)| {
            let st = match (child, key) {
                (Child::Pos(cp), Some(k)) => {
                    let (clo, chi) = match values.iter().find(|(vk, _)| vk == k) {
                        Some(&(_, v)) => v,
                        None => {
                            let (clo, chi, _) = e.eval(&cp);
                            values.push((*k, (clo, chi)));
                            (clo, chi)
                        }
                    };
                    let runs = every_opening_runs || running.contains(k);
                    let unknown = (-1, game.p1_ceiling(&cp));
                    state(clo, chi, unknown, runs, lo == hi)
                }
                _ => "loss",
            };
            Cell {
                state: st.to_string(),
                label: board.cell_name(c),
            }
        })
        .collect();
    let variant = if p.double { "Double Hip" } else { "Hip" };
    let grid = Grid::new(
        format!("{variant} {}x{}", board.rows, board.cols),
        board.rows as u32,
        board.cols as u32,
        cells,
    )
    .expect("one cell per square of the board");
    vec![Figure::Boards(Boards {
        title: "openings: the game's value after the first stone on each cell".to_string(),
        note: "symmetric cells are one opening and share its colour".to_string(),
        legend: LEGEND
            .iter()
            .map(|&(state, text, tone)| Swatch {
                state: state.to_string(),
                text: text.to_string(),
                tone,
            })
            .collect(),
        grids: vec![grid],
    })]
}

#[cfg(test)]
mod tests {
    use orchard_core::{explore_all, Host, SearchFamily};

    use super::*;
    use crate::solve::SolveParams;

    fn job(rows: u32, cols: u32) -> HipSolve {
        HipSolve::new(SolveParams::new(rows, cols, false), &Host::default()).unwrap()
    }

    fn states(f: &[Figure]) -> Vec<(String, String)> {
        let [Figure::Boards(b)] = f else {
            panic!("one board figure: {f:?}")
        };
        let [g] = b.grids.as_slice() else {
            panic!("one grid")
        };
        assert_eq!(g.cells.len() as u32, g.rows * g.cols);
        for c in &g.cells {
            assert!(b.legend.iter().any(|s| s.state == c.state), "{c:?}");
        }
        g.cells
            .iter()
            .map(|c| (c.label.clone(), c.state.clone()))
            .collect()
    }

    #[test]
    fn before_any_result_openings_wait_or_run() {
        let j = job(4, 4);
        let empty = SolveSummary::default();
        let s = states(&j.figures(&empty, &[]));
        assert_eq!(s.len(), 16);
        assert!(s.iter().all(|(_, st)| st == "pending"), "{s:?}");
        // A unit under the opening a1 runs: a1 and its symmetric corners.
        let a1 = SolveUnit::new(vec![0]);
        let s = states(&j.figures(&empty, &[a1]));
        let running: Vec<&str> = s
            .iter()
            .filter(|(_, st)| st == "running")
            .map(|(l, _)| l.as_str())
            .collect();
        assert_eq!(running, ["a1", "d1", "a4", "d4"]);
        // The empty board's unit runs them all.
        let root = SolveUnit::new(vec![]);
        let s = states(&j.figures(&empty, &[root]));
        assert!(s.iter().all(|(_, st)| st == "running"), "{s:?}");
    }

    #[test]
    fn a_solved_job_shows_the_reports_opening_values() {
        let j = job(3, 4);
        let units = j.root_units();
        let s = explore_all(&j, units, u64::MAX).unwrap();
        let report = j.report(&s).json;
        let cells = states(&j.figures(&s, &[]));
        assert_eq!(cells.len(), 12);
        let openings = report["openings"].as_array().unwrap();
        assert!(
            openings.iter().any(|o| o["winner"].is_u64()),
            "some opening has a value: {report}"
        );
        for o in openings {
            let name = o["cell"].as_str().unwrap();
            let want = match o["winner"].as_u64() {
                Some(1) => "win",
                Some(2) => "loss",
                Some(0) => "draw",
                _ => "moot",
            };
            let (_, st) = cells.iter().find(|(l, _)| l == name).unwrap();
            assert_eq!(st, want, "opening {name}: {o}");
        }
    }
}
