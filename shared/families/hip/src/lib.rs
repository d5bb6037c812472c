//! The game of Hip (Martin Gardner; Funabiki & Takefuji, Neurocomputing 3,
//! 1991; K. A. Franke's tables of draws and game values).
//!
//! Stones of two colours (or `k` colours) fill a rectangular board; four stones
//! of one colour at the corners of a square, of any size and any tilt, are
//! forbidden. Two families:
//!
//! * [`HipDraws`] (`hip-draws`): how many full colourings have no
//!   monochromatic square (the draws), how many of them play can produce,
//!   and how many up to symmetry.
//! * [`HipSolve`] (`hip-solve`): the exact game value of Hip and Double Hip.
//!
//! Both take `--rows R --cols C`. Boards are normalised so that `R <= C` (a
//! `5 x 4` job is the `4 x 5` job: the games are the same up to a quarter
//! turn), have `2 <= R` and at most 64 cells (one `u64` bitboard, see
//! [`board`]).
//!
//! Beside them, [`proof`] audits a solved `hip-solve` job: its root's value
//! proven from the merged summary by a second implementation of the rules.

mod abstract_endgame;
pub mod board;
mod dfs;
pub mod draws;
mod endgame;
mod last_moves;
mod layer;
mod lemmas;
mod order;
mod profile;
pub mod proof;
pub mod reference;
mod sandwich;
mod search;
mod snapshot;
pub mod solve;
pub mod square_set;
mod table;

pub use draws::{DrawsParams, DrawsSummary, DrawsUnit, HipDraws, Method};
pub use solve::{HipSolve, SolveParams, SolveSummary, SolveUnit};

use orchard_core::ParamError;

/// Checks and normalises board dimensions: returns `(rows, cols)` with
/// `rows <= cols`. The error names the parameter at fault.
pub fn board_dims(rows: u32, cols: u32) -> Result<(usize, usize), ParamError> {
    for (name, v) in [("rows", rows), ("cols", cols)] {
        if v < 2 {
            return Err(ParamError::new(
                name,
                format!("must be at least 2, got {v}"),
            ));
        }
    }
    let cells = u64::from(rows) * u64::from(cols);
    if cells > board::MAX_CELLS as u64 {
        return Err(ParamError::new(
            "cols",
            format!(
                "a {rows}x{cols} board has {cells} cells; at most {} fit one 64-bit bitboard",
                board::MAX_CELLS
            ),
        ));
    }
    let (r, c) = (rows.min(cols) as usize, rows.max(cols) as usize);
    Ok((r, c))
}
