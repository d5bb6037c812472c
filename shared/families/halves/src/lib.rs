//! McCarthy's problem: in how many ways can an `N x N` board be cut along
//! grid lines into two congruent halves, rotations and reflections not
//! counted separately?
//!
//! Source: "Games Playing with Computers", chapter 6, section 6.1. The
//! chapter gives B. Fowler's program ("Start at the centre, move one space,
//! and then turn right. If you bump into a previous path then back up one
//! space, turn left 90 degrees, and continue. A solution is obtained when
//! the edge of the board is reached"), 6 ways for `N = 4`, 92,263 for
//! `N = 8`, and says odd boards, "with the centre square missing, are more
//! difficult to program. At the moment no answer for N > 8 has been found."
//! The figures are OEIS A003155 (both parities) and A113900 (even sides).
//!
//! **The object.** The board is the `N x N` square of cells; for odd `N`
//! the centre cell is removed (an odd number of cells has no halves; this is
//! the chapter's and A003155's reading), so `--n` alone says which board.
//! `N = 1` (nothing left) and `N > 12` are refused. A *division* is a
//! partition of the cells into two edge-connected pieces `A` and `B` with
//! `B = g(A)` for some isometry `g` of the plane (a rotation, a reflection,
//! a translation, or a composition: any of the 8 orientations followed by
//! a translation). `count` is the number of divisions up to the 8
//! symmetries of the square; `cuts` the number of divisions, each
//! orientation counted.
//!
//! **Every division is a half-turn pair.** Fowler's program only finds cuts
//! that the half turn `r` about the centre maps onto themselves. That this
//! misses nothing is a theorem, not an assumption; the proof, for both
//! parities:
//!
//! 1. *Each piece meets the edge.* Congruent pieces have bounding boxes of
//!    the same size. If `A` missed the edge, `B` would hold the whole outer
//!    ring of cells (a box `N x N`) and `A` would fit in `(N-2) x (N-2)`.
//! 2. *Each piece meets the edge along one arc.* Call `alpha` the sides of
//!    the board's perimeter along cells of `A`, `beta` those along `B`. If
//!    they alternated `A, B, A, B` around the perimeter, a path of
//!    `A`-cells joining two arcs of `A` would cross the square from edge to
//!    edge and separate two arcs of `B` (Jordan), yet `B` is connected. So
//!    `alpha` is one arc of the perimeter and `beta` the other; call `p`,
//!    `q` their common ends. Neither is a corner of the board: no grid
//!    segment between two cells ends at a corner.
//! 3. *For odd `N` each piece touches the removed cell.* If `A` met none of
//!    its four sides, `B` would have them all: the removed cell would be a
//!    hole in `B` (a bounded component of the plane minus `B`). `A` has no
//!    hole (a hole of `A` would hold cells of `B` cut off from `B`'s cells
//!    on the edge), and congruent sets have the same topology.
//! 4. *Perimeters.* Counting the unit sides of each piece's boundary:
//!    `|alpha| + c + hA = |beta| + c + hB`, where `c` counts the sides the
//!    pieces share and `hA + hB = 4` the sides of the removed cell along
//!    each (0 for even `N`). With `|alpha| + |beta| = 4N`:
//!    `|alpha| = 2N + d`, `|beta| = 2N - d`, `d = (hB - hA) / 2`, so `d = 0`
//!    for even `N` and `d` is -1, 0 or 1 for odd `N` (by 3, `hA` and `hB`
//!    are 1, 2 or 3).
//! 5. *The congruence is `r`.* Turn the board so that `p` is on the bottom
//!    side, `x` from its left corner (`0 < x < N`). Walking anticlockwise
//!    from `p`, `alpha` is the rest of the bottom side (`N - x`), the whole
//!    right side (`N`) and `x + d` of the top side; `beta` is the rest: the
//!    top's other `N - x - d`, the whole left side, the bottom's first `x`.
//!    So `A` holds the whole right column and none of the left one, `B` the
//!    reverse: both pieces are `N` high and less than `N` wide, so `g` does
//!    not exchange rows and columns. It is a half turn, a translation, or a
//!    mirror in a horizontal or vertical line followed by a translation,
//!    and it maps the bounding box of `A`, `[N-w, N] x [0, N]`, onto that
//!    of `B`, `[0, w] x [0, N]`. In
//!    the bottom row `A` has the `N - x` cells right of `p` and `B` the `x`
//!    left of it; in the top row `A` has the `x + d` on the right.
//!    - A half turn mapping one box onto the other is `r` itself.
//!    - A translation (sideways) or a mirror in a vertical line maps the
//!      bottom row into itself, so `N - x = x`: impossible for odd `N`.
//!    - A mirror in a horizontal line exchanges the bottom and top rows and
//!      keeps the order of the cells along them: `A`'s `N - x` bottom cells
//!      go to `B`'s top cells `0..N-x-d`, so `w = N - x` and `d = 0`, and
//!      `A`'s top cells `N-x..N` go to `B`'s bottom cells `0..x`, so `N = 2x`:
//!      impossible for odd `N`.
//!
//!    For even `N` these three need `x = N / 2`. A translation or the
//!    horizontal mirror then has `w = N / 2` (for a translation, `A`'s
//!    bottom cells `x..N` go to `B`'s `0..x`: `w = N - x`): `A`, half the
//!    cells in the right half of the board, is the right half. The vertical
//!    mirror is then the board's midline mirror; it exchanges `A` and `B`,
//!    so it maps the cut (the sides they share) onto itself, with both ends
//!    `p` and `q` fixed (they lie on the midline): it fixes the cut point by
//!    point, the cut is the midline, and `A` again the right half. In every
//!    case `B = r(A)`.
//! 6. *The cut is Fowler's walk and its image.* At an interior grid point
//!    with four cells around it the cut has 0 or 2 sides: an odd number is
//!    impossible (going round the point, the piece changes an even number
//!    of times) and 4 would be the pattern `A B A B` around the point, whose
//!    two `A` cells and two `B` cells could not both be joined by paths in
//!    the plane. At a point of the edge it has at most 1 side, at a corner
//!    of the removed cell at most 2. So the cut is disjoint simple paths and
//!    loops; a loop would enclose one piece and leave the other the whole
//!    outer ring (impossible, as in 1), and the only ends on the edge are
//!    `p` and `q` (by 2). `r` exchanges `A` and `B`, so it maps the cut onto
//!    itself, and `p` to `q`. For even `N` the cut is one path from `p` to
//!    `q`; `r` reverses it, so it passes through the fixed point of `r`,
//!    the centre, and is a walk `P` from the centre to `q` followed by
//!    `r(P)`. For odd `N` the path from `p` cannot end at `q` (it would
//!    pass through the centre of the removed cell, which is no grid point);
//!    it ends at a corner of the removed cell and `r` maps it onto the path
//!    from `q`. Nothing else is cut: a path between two corners of the
//!    removed cell, or a path touching one before its end, would close with
//!    the removed cell's sides a loop around cells cut off from both pieces.
//!
//! Conversely, a walk `P` from the centre point (even `N`) or from a corner
//! of the removed cell (odd `N`) to the edge, through interior points,
//! meeting neither `r(P)` nor (odd `N`) the other corners, makes with `r(P)`
//! a cut leaving exactly two regions (one cross-cut of a disc, or two
//! disjoint cross-cuts joining the two rims of an annulus), and `r`, which
//! keeps orientation and exchanges the cut's ends, maps the region on one
//! side of it to the region on the other: two connected congruent halves.
//! So the divisions are the pairs `{P, r(P)}`: `cuts = walks / 2`.
//!
//! The plain implementation in [`mod@reference`] relies on none of this: it
//! enumerates every connected half of the board whose complement is
//! connected and tests congruence under all 8 orientations and every
//! translation. The tests check that it finds exactly the family's
//! divisions, every one of them a half-turn pair, for `N = 2..6`.
//!
//! **Counting up to symmetry: orderly walks.** The 8 symmetries fix the
//! centre, so they act on walks, and the divisions up to symmetry are the
//! orbits of walks (`r` is one of the 8 and pairs the two walks of a
//! division). The search walks only one member of each orbit: at every
//! point it tries, of the moves that the symmetries fixing every point of
//! the walk so far map onto each other, only the smallest (`N < E < S < W`);
//! it starts at the centre (all 8 fix it) or at the north-east corner of the
//! removed cell (fixed by the identity and one diagonal mirror; the four
//! corners are one orbit). By induction along the walk each orbit has
//! exactly one such *orderly* walk: of the orbit's walks that start there,
//! the lexicographically smallest. (There is one: turn the walk, move by
//! move, by a symmetry fixing its points so far that makes the next move the
//! smallest. There is only one: if `P` and `g(P)` are orderly, `g` fixes the
//! start, and if `g` fixes the first `k` points, the next moves `d` and
//! `g(d)` are both the smallest of one orbit, so equal, and `g` fixes the
//! next point too: `g(P) = P`.)
//! So `count` is the number of complete orderly walks, each found in exactly
//! one unit: every unit's count is exact on its own and merging is a sum.
//! A complete walk fixed by a symmetry is straight along a midline (a
//! diagonal holds no walk); its orbit has `8 / |stabilizer|` walks, and the
//! sum of those is `walks`, `cuts` its half. This cuts the work by 8
//! against Fowler's program, which walked every orientation.
//!
//! **Units.** A unit is a [`HalfCut`]: the moves of a prefix of an orderly
//! walk, from its start. The root units are the prefixes [`ROOT_DEPTH`]
//! moves deep (and the complete walks shorter than that), in search order.
//! When a budget runs out (or a stop is requested) the search hands back,
//! in search order, the prefix of every child it reached but did not enter:
//! the one it stopped at and the later children of every node on its path;
//! their subtrees are exactly the part it did not visit. A node is a prefix
//! the search enters: a step to a point not covered yet or to the edge
//! (a unit's root included).

pub mod board;
pub mod reference;
mod search;

use serde::{Deserialize, Serialize};

use orchard_core::merge::{checked_add, Openings};
use orchard_core::{Capabilities, Host, Probe, Probing};
use orchard_core::{
    Exploration, ExploreContext, FamilyError, FamilyReport, ParamError, SearchFamily,
};

pub use board::{Board, MAX_N};

/// Boards up to this side list every division (1,897 for n = 7).
pub const LIST_ALL_UP_TO: usize = 7;

/// Larger boards list the smallest orderly walk of each opening of this
/// many moves: one division a unit at most once units are that deep, so a
/// long run's database does not grow with a list per unit (233 openings for
/// n = 7).
pub const OPENING_MOVES: usize = 8;

/// Which orderly walks a summary lists on a side-`n` board: all of them up
/// to [`LIST_ALL_UP_TO`], else the smallest of each opening of
/// [`OPENING_MOVES`] moves. Either way a function of the set of walks, not
/// of the units or the merge order.
pub fn listing(n: usize) -> Openings {
    Openings::all_up_to(n as u64, LIST_ALL_UP_TO as u64, OPENING_MOVES)
}

/// How many moves deep the root units are.
pub const ROOT_DEPTH: usize = 5;

/// Parameters of a `halves` job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, clap::Args)]
pub struct HalvesParams {
    /// Side of the board (2..=12); odd sides have their centre cell removed.
    #[arg(long)]
    pub n: u32,
}

/// The moves (0 = N, 1 = E, 2 = S, 3 = W) of a prefix of an orderly walk
/// from its start: the centre point, or the north-east corner of the
/// removed centre cell.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct HalfCut(pub Vec<u8>);

/// What exploring some units found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HalvesSummary {
    /// Search-tree nodes visited (a unit's root included).
    pub nodes: u64,
    /// Complete orderly walks: divisions up to the 8 symmetries.
    pub count: u64,
    /// Every walk from the start to the edge: the sum of the orbits'
    /// sizes, two per division.
    pub walks: u64,
    /// Orderly walks fixed by a symmetry other than the identity.
    pub symmetric: u64,
    /// Complete orderly walks by the rule of [`listing`], sorted: all of
    /// them on small boards, the smallest of each opening on large ones.
    pub listed: Vec<Vec<u8>>,
}

/// The `halves` family: one job of it, with its board's tables.
#[derive(Debug, Clone)]
pub struct Halves {
    board: Board,
}

/// Moves as letters.
pub fn letters(moves: &[u8]) -> String {
    moves
        .iter()
        .map(|&d| board::LETTERS.get(d as usize).copied().unwrap_or('?'))
        .collect()
}

impl Halves {
    /// The job's board.
    pub fn board(&self) -> &Board {
        &self.board
    }
}

impl SearchFamily for Halves {
    const NAME: &'static str = "halves";
    const ABOUT: &'static str =
        "McCarthy's problem: cut an N x N board (odd N: centre removed) into two congruent halves";

    type Params = HalvesParams;
    type Unit = HalfCut;
    type Summary = HalvesSummary;

    fn new(p: HalvesParams, _: &Host) -> Result<Self, ParamError> {
        if p.n < 2 || p.n > MAX_N {
            return Err(ParamError::new(
                "n",
                format!(
                    "must be between 2 and {MAX_N} (odd sides lose their centre cell, \
                     so 1 leaves nothing to cut), got {}",
                    p.n
                ),
            ));
        }
        Ok(Halves {
            board: Board::new(p.n as usize),
        })
    }

    fn root_units(&self) -> Vec<HalfCut> {
        search::prefixes(&self.board, ROOT_DEPTH)
    }

    fn explore(
        &self,
        unit: &HalfCut,
        ctx: &ExploreContext<'_>,
    ) -> Result<Exploration<HalvesSummary, HalfCut>, FamilyError> {
        search::explore(&self.board, unit, ctx)
    }

    fn merge(&self, into: &mut HalvesSummary, other: HalvesSummary) -> Result<(), FamilyError> {
        into.nodes = checked_add(into.nodes, other.nodes, "halves node count")?;
        into.count = checked_add(into.count, other.count, "halves count")?;
        into.walks = checked_add(into.walks, other.walks, "halves walks")?;
        into.symmetric = checked_add(into.symmetric, other.symmetric, "halves symmetric")?;
        if !other.listed.is_empty() {
            listing(self.board.n).merge(&mut into.listed, other.listed);
        }
        Ok(())
    }

    fn nodes(s: &HalvesSummary) -> u64 {
        s.nodes
    }

    fn report(&self, s: &HalvesSummary) -> FamilyReport {
        let n = self.board.n;
        let holed = self.board.holed;
        let json = serde_json::json!({
            "family": "halves",
            "n": n,
            "centre_removed": holed,
            "count": s.count,
            "cuts": s.walks / 2,
            "walks": s.walks,
            "symmetric": s.symmetric,
            "nodes": s.nodes,
            "listed": s.listed.len(),
            "listed_per_opening_moves": listing(n).depth.min(2 * n * n),
        });
        let board = if holed {
            format!("{n} x {n} board without its centre cell")
        } else {
            format!("{n} x {n} board")
        };
        let mut text = vec![
            format!(
                "{board}: {} ways to cut it into two congruent halves up to rotations and \
                 reflections",
                s.count
            ),
            format!(
                "{} cuts counting every orientation; every one is a half-turn pair, \
                 {} walks from the {} to the edge",
                s.walks / 2,
                s.walks,
                if holed {
                    "removed cell's corners"
                } else {
                    "centre"
                }
            ),
        ];
        if let Some(first) = s.listed.first() {
            text.push(format!("first division: {}", self.board.render(first)));
        }
        if listing(n) != Openings::ALL {
            text.push(format!(
                "listed: the smallest division of each of {} openings (first {} moves)",
                s.listed.len(),
                OPENING_MOVES
            ));
        }
        text.push(format!("nodes explored: {}", s.nodes));
        FamilyReport {
            json,
            text,
            results_lines: s.listed.iter().map(|w| self.board.render(w)).collect(),
        }
    }

    fn capabilities(&self) -> Capabilities<'_, Self> {
        Capabilities {
            probing: Some(self),
            ..Capabilities::default()
        }
    }

    fn unit_label(&self, u: &HalfCut) -> String {
        if u.0.is_empty() {
            "(start)".to_string()
        } else {
            letters(&u.0)
        }
    }
}

impl Probing<Halves> for Halves {
    /// A random walk down the tree the search visits (`halves` has no
    /// bound).
    fn probe(
        &self,
        unit: &HalfCut,
        _bound: u64,
        pick: &mut dyn FnMut(u64) -> u64,
    ) -> Result<Probe, FamilyError> {
        search::probe(&self.board, unit, pick)
    }
}
