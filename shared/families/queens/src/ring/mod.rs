//! The `ring` method: every symmetry of the square used, and the most
//! constrained line filled first.
//!
//! **The ring.** Every solution has exactly one queen in each of the four
//! border lines (row 0, row `n - 1`, column 0, column `n - 1`); a queen in a
//! corner stands on two of them, and at most one corner holds a queen (any
//! two corners share a line or a diagonal). The ring of a solution is those
//! three or four queens, written [`Ring`] `[a, b, c, d]`: the column of the
//! queen in row 0, the column of the one in the last row, the row of the one
//! in column 0, the row of the one in the last column. The eight symmetries
//! of the square map border to border, so they act on rings; a root unit is
//! a ring that is the smallest of its images (compared as `[a, b, c, d]`),
//! about one ring in eight. This is the pre-placement of the Q27 project
//! (which places two rings; one is enough here).
//!
//! **Counting.** A symmetry `g` maps the solutions with ring `ρ` one to one
//! onto those with ring `g ρ`, so the solutions with a ring in the orbit of
//! `ρ` number `|orbit(ρ)| = 8 / |stab(ρ)|` times the completions of `ρ`.
//! The orbits of solutions (the distinct ones) whose ring lies in that orbit
//! are the orbits of `stab(ρ)` on the completions of `ρ`: with a trivial
//! stabiliser (nearly every ring) each completion is one distinct solution;
//! otherwise a completion counts if it is the smallest of its images under
//! `stab(ρ)` (themselves completions of `ρ`). Each unit's figures are exact
//! on their own; merging is a sum.
//!
//! **Units.** A unit is a set of queens: the ring, then inner queens as
//! `(row, column)` pairs ([`Prefix`] `[a, b, c, d, r1, c1, r2, c2, ...]`).
//! Its subtree is every completion of that set, whatever order the search
//! fills it in. Above the rings, a group `[a, b]` (the root units) has the
//! groups `[a, b, c]` as children, and those have the root rings beginning
//! with `a, b, c`: each a node of the tree, so that splitting a group
//! leaves the node count unchanged. The search fills the line (an inner row or column still
//! empty) with the fewest free squares, row before column and lowest index
//! on ties; the children of a node are that line's free squares, which
//! partition the node's completions (each has exactly one queen on the
//! line). When the budget runs out, the search hands back each child not
//! entered as a unit of its own, so the units handed back cover exactly what
//! was not visited, whatever rule chose the lines: the choice decides only
//! the shape and size of the tree, never what it covers. With the most
//! constrained line first (`Board::choose`) the search visits 0.074 of the
//! `mirror` search's nodes on 17 x 17 and 0.067 on 18 x 18 (`bench/queens.sh
//! 18 2`), and n = 21 took 8.46e11 nodes where `mirror`'s estimate is
//! 1.61e13 (0.053); the runs and their commands are in
//! docs/notes/chapter-6.md.
//!
//! The pieces, one concept a file: the rings and their groups
//! (`rings`); the eight symmetries, on squares and on whole solutions
//! (`symmetry`); the free squares below a set of queens and the line
//! filled next (`board`); the depth-first search of a unit, its hand-back
//! and its probe (`search`). This file holds what a unit is: [`replay`]
//! reads one back onto a board, [`label`] names it.

mod board;
mod rings;
mod search;
mod symmetry;

use super::{Prefix, MAX_N};
use orchard_core::FamilyError;

use board::Board;
use rings::check_ring;

pub use rings::{root_rings, root_units, Ring};
pub use search::{explore, probe};
pub use symmetry::image;

/// Most lines a board has: rows and columns below [`MAX_N`].
const MAX: usize = MAX_N as usize;

/// A unit replayed: its ring checked, its queens placed.
struct Start {
    board: Board,
    /// `solution[r]` = the column of row `r`'s queen, for the unit's queens.
    solution: [u8; MAX],
    /// The symmetries of the ring (bit `g`).
    stabiliser: u8,
}

fn bad(why: String) -> FamilyError {
    FamilyError::BadUnit(why)
}

fn replay(n: u32, unit: &Prefix) -> Result<Start, FamilyError> {
    let p = &unit.0;
    if p.len() < 4 || !p.len().is_multiple_of(2) {
        return Err(bad(format!(
            "a ring unit is a ring of 4 entries and (row, column) pairs, got {} entries",
            p.len()
        )));
    }
    let n8 = n as u8;
    let m = n8 - 1;
    let ring: Ring = [p[0], p[1], p[2], p[3]];
    let checked = check_ring(ring, n8).ok_or_else(|| {
        bad(format!(
            "{ring:?} is not one queen per border line without attacks on a board of {n}"
        ))
    })?;
    if !checked.canonical {
        return Err(bad(format!(
            "ring {ring:?} is not the smallest of its images"
        )));
    }
    // Rows and columns 1 ..= m - 1 (none on boards below 3 x 3).
    let inner = ((1u64 << m) - 1) & !1;
    let mut board = Board {
        rows: inner,
        cols: inner,
        ..Board::default()
    };
    let mut solution = [0u8; MAX];
    for (r, c) in checked.squares {
        // A corner queen twice: placing is idempotent.
        board = board.place(r, c, m);
        solution[r as usize] = c;
    }
    for pair in p[4..].chunks(2) {
        let (r, c) = (pair[0], pair[1]);
        if r > m || c > m {
            return Err(bad(format!("queen ({r}, {c}) off a board of {n}")));
        }
        if board.rows >> r & 1 == 0 || board.cols >> c & 1 == 0 {
            return Err(bad(format!(
                "queen ({r}, {c}): its row or column is a border line or holds a queen"
            )));
        }
        if board.diagonal_taken(r, c, m) {
            return Err(bad(format!("queen ({r}, {c}) is attacked on a diagonal")));
        }
        board = board.place(r, c, m);
        solution[r as usize] = c;
    }
    Ok(Start {
        board,
        solution,
        stabiliser: checked.stabiliser,
    })
}

/// A unit as the dashboard and the results name it, 1-based: the ring as
/// `ring a b c d`, then `r:c` for each inner queen.
pub fn label(p: &[u8]) -> String {
    let mut words: Vec<String> = Vec::with_capacity(1 + p.len() / 2);
    let ring: Vec<String> = p.iter().take(4).map(|x| (x + 1).to_string()).collect();
    words.push(format!("ring {}", ring.join(" ")));
    for pair in p.get(4..).unwrap_or_default().chunks(2) {
        if let [r, c] = pair {
            words.push(format!("{}:{}", r + 1, c + 1));
        }
    }
    words.join(" ")
}
