//! The cell orders of the walks that visit draws: Franke's growth order
//! (each board grown from its seed board, so a walk only ever holds partial
//! draws of the growing boards) for `Seeds` units, and a symmetry's cycles
//! in that order for the Burnside units (`Fixed`), which colour a cycle at a
//! time.

use super::DrawsUnit;
use crate::board::Board;
use crate::dfs::Plan;
use orchard_core::FamilyError;

/// The growth order of an `r x c` board (`r <= c`) laid out in a board with
/// `stride` columns: the seed board's growth order, then the new cells.
fn growth_order(r: usize, c: usize, stride: usize, out: &mut Vec<usize>) {
    if r * c == 0 {
        return;
    }
    let (sr, sc) = seed_dims(r, c);
    growth_order(sr, sc, stride, out);
    for i in 0..r {
        for j in 0..c {
            if i >= sr || j >= sc {
                out.push(i * stride + j);
            }
        }
    }
}

/// The seed board of `r x c` (`r <= c`): `(r-1) x (c-1)` if square, else
/// `r x (c-1)`; it sits in the top-left corner.
pub fn seed_dims(r: usize, c: usize) -> (usize, usize) {
    if r == c {
        (r - 1, c - 1)
    } else {
        (r, c - 1)
    }
}

/// The cycles of symmetry `g`, ordered by their first cell in growth order.
fn cycles(board: &Board, g: usize, order: &[usize]) -> Vec<u64> {
    let mut seen = 0u64;
    let mut out = Vec::new();
    for &cell in order {
        if seen >> cell & 1 == 1 {
            continue;
        }
        let mut cyc = 0u64;
        let mut x = cell;
        while cyc >> x & 1 == 0 {
            cyc |= 1 << x;
            x = board.perms[g][x] as usize;
        }
        seen |= cyc;
        out.push(cyc);
    }
    out
}

fn growth(board: &Board) -> Vec<usize> {
    let mut order = Vec::with_capacity(board.n);
    growth_order(board.rows, board.cols, board.cols, &mut order);
    order
}

/// The walk a `Seeds` or `Fixed` unit is explored by (`None` for `Profile`
/// units, which are counted by dynamic programming, not walked).
pub(super) fn walk_plan(
    board: &Board,
    k: usize,
    unit: &DrawsUnit,
) -> Result<Option<Plan>, FamilyError> {
    Ok(match unit {
        DrawsUnit::Seeds { .. } => {
            let groups = growth(board).iter().map(|&c| 1u64 << c).collect();
            Some(Plan::new(board, k, groups, true))
        }
        DrawsUnit::Fixed { sym, .. } => {
            let g = *sym as usize;
            if g == 0 || g >= board.symmetries() {
                return Err(FamilyError::BadUnit(format!(
                    "no symmetry {g} on this board"
                )));
            }
            Some(Plan::new(board, k, cycles(board, g, &growth(board)), false))
        }
        DrawsUnit::Profile { .. } | DrawsUnit::Sandwich { .. } => None,
    })
}
