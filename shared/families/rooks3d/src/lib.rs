//! Rooks on the 3 x 3 x 3 board, `R` to a line: count the placements, all
//! of them and up to the symmetries of the cube.
//!
//! Source: "Games Playing with Computers", chapter 6, section 6.1 (issue
//! 17): "Given 3 x R rooks, how many ways can they be placed on a 3 x 3 x 3
//! board such that there are only R rooks on each row, column, and (looking
//! down through the board) tube? More than one rook may occupy a cell.
//! Including reflections and rotations the answers were 12, 132, 847, 3921,
//! 14506, 45402" (R = 1..6), "and the general formula is
//! {R(R+1)[R(R+1)[R(R+1)[31R(R+1)+1004]+6820]+4272]+1}/4032".
//!
//! **The object.** A placement is a 3 x 3 x 3 array `x[i][j][k]` of
//! non-negative rook counts (several rooks may share a cell) in which every
//! line of three cells (a row, a column or a tube: 9 lines along each of the
//! three axes, 27 in all) holds exactly `R` rooks; so there are `9R` rooks
//! (the "3 x R" of the text is R per line of each 3-line layer). For `R = 1`
//! these are the 3 x 3 Latin squares (the symbol in cell `(i, j)` is the
//! `k` of its rook): 12 of them. "Including reflections and rotations"
//! means the figures count symmetric placements separately: the 12 Latin
//! squares fall into fewer than 12 classes under any symmetry.
//!
//! Evidence for this reading: it reproduces the published 12, 132, 847 and
//! 3921 exactly, and its count is a degree-8 function of `R`, as the
//! formula is (a polynomial in `R(R+1)` of degree 4): the arrays with all
//! line sums zero form a space of dimension `(3 - 1)^3 = 8`. The reading
//! "R rooks on each of the 9 *planes*" is wrong from the start (36
//! placements for `R = 1`, and a count of degree 20).
//!
//! **The published R = 5, 6 are not counts.** This search (and the plain
//! [`mod@reference`] implementation, a different algorithm) finds 14286 and
//! 43687, not 14506 and 45402. The formula as printed is not even an
//! integer (`44353 / 4032` at `R = 1`); read as
//! `R(R+1)[...] / 4032 + 1` it is an integer (for every `R` tried, up to
//! 2000) and gives exactly the whole published table, 1, 12, 132, 847,
//! 3921, 14506, 45402 for `R = 0..6`. A polynomial in `R(R+1)` of degree 4
//! has five coefficients, and the `R(R+1)` values of `R = 0..4` differ, so
//! the formula is *the* one through the five true counts for `R = 0..4`;
//! the table's last two rows agree with it and not with the counts, so
//! they were evidently extrapolated from it, not counted. The true count is
//! not a polynomial of degree 8 at all: the one through the counts for
//! `R = 0..8` predicts 619867 for `R = 9`, where the search finds 619219.
//! It is a quasi-polynomial of period 2 (so the polytope of arrays with
//! line sums 1 has vertices that are not integral; an integral polytope
//! would give a polynomial, as the formula assumes): the degree-8 polynomial
//! through the even `R = 0..16` gives the searched count for `R = 18`, the
//! one through the odd `R = 1..17` the count for `R = 19`, and the two
//! differ only in their last two terms:
//!
//! ```text
//!   count(R) = 9R^8/2240 + 27R^7/560 + 87R^6/320 + 297R^5/320 + 1341R^4/640
//!            + 513R^3/160 + 3653R^2/1120 + 627R/280 + 1
//!            - [R odd] 27(2R + 3)/128
//! ```
//!
//! (found with this family; its leading coefficient 9/2240 is not the
//! book's 31/4032). The
//! report gives the formula's value under `formula`, and the tests pin
//! both: the counts R = 1..4 against the book, R = 5, 6 against the
//! reference, and the formula against the book's table.
//!
//! **Symmetry.** "Reflections and rotations" of the cube: the 48 maps that
//! permute the three axes and reverse any of them (`x[i][j][k]` to e.g.
//! `x[2-k][i][j]`), the hyperoctahedral group. Each maps lines to lines, so
//! placements to placements. (Any permutation of the three values of one
//! coordinate would too, a group of 1296, but it is not a motion of the
//! board: `distinct` follows the text.) A placement counts as distinct iff
//! its 27 cells, read in the order `x[0][0][0], x[0][0][1], ...,
//! x[2][2][2]`, are the lexicographically smallest of its 48 images. Every
//! orbit has exactly one smallest member and the search meets each
//! placement exactly once, so a unit's count is exact on its own and
//! merging is a sum.
//!
//! **Search and units.** Eight cells decide a placement: the 2 x 2 corner
//! of layer `i = 0` decides layer 0 (its third row and column are what the
//! row and column sums leave), likewise layer 1, and layer 2 is what the
//! tubes leave, `R - x[0][j][k] - x[1][j][k]`. The search assigns those
//! eight cells in turn, each from 0 upwards, checking every cell the
//! assignment decides, so a node is a valid [`Prefix`] and every leaf at
//! depth 8 is a placement. The root units are the valid two-cell prefixes,
//! in order. When a budget runs out the search hands back, in search
//! order, the prefix of every node it reached but did not enter, as
//! `queens` does.

pub mod reference;
mod search;

use serde::{Deserialize, Serialize};

use orchard_core::merge::checked_add;
use orchard_core::{
    Exploration, ExploreContext, FamilyError, FamilyReport, Host, ParamError, SearchFamily,
};

pub use search::{complete, is_canonical, FREE_CELLS, SYMMETRIES};

/// Largest `R` accepted. Cells hold a `u8`, but the search grows like
/// `R^8` (4.5 million placements and 6.1 million nodes at `R = 12`), so
/// 100 is far beyond any job that can finish, while the formula (below
/// `2^64` at 100) and every counter stay well inside their integers.
pub const MAX_PER_LINE: u32 = 100;

/// Parameters of a `rooks3d` job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, clap::Args)]
pub struct Rooks3dParams {
    /// Rooks on each line of three cells (1..=100).
    #[arg(long)]
    pub per_line: u32,
}

/// The values of the first of the eight free cells, in search order:
/// `x[0][0][0], x[0][0][1], x[0][1][0], x[0][1][1]`, then the same four of
/// layer 1.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Prefix(pub Vec<u8>);

/// What exploring some units found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rooks3dSummary {
    /// Search-tree nodes visited (a unit's root included).
    pub nodes: u64,
    /// Every placement.
    pub count: u64,
    /// Placements that are the smallest of their 48 images.
    pub distinct: u64,
}

/// The `rooks3d` family: one job of it, with its checked parameters.
#[derive(Debug, Clone)]
pub struct Rooks3d {
    per_line: u32,
}

impl Rooks3d {
    /// Rooks on each line.
    pub fn per_line(&self) -> u32 {
        self.per_line
    }
}

/// The book's closed formula, read so that it is an integer:
/// `R(R+1)[R(R+1)[R(R+1)[31R(R+1) + 1004] + 6820] + 4272] / 4032 + 1`.
/// As printed, with the `+ 1` inside the division, it is not (44353/4032 at
/// `R = 1`). It matches the true count for `R <= 4` only; see the crate
/// documentation.
pub fn formula(r: u32) -> u128 {
    let t = u128::from(r) * u128::from(r + 1);
    let n = t * (t * (t * (31 * t + 1004) + 6820) + 4272);
    debug_assert_eq!(n % 4032, 0, "the formula is integral");
    n / 4032 + 1
}

impl SearchFamily for Rooks3d {
    const NAME: &'static str = "rooks3d";
    const ABOUT: &'static str =
        "rooks on a 3x3x3 board, R to every line: all placements, and distinct ones up to symmetry";

    type Params = Rooks3dParams;
    type Unit = Prefix;
    type Summary = Rooks3dSummary;

    fn new(p: Rooks3dParams, _: &Host) -> Result<Self, ParamError> {
        if p.per_line == 0 || p.per_line > MAX_PER_LINE {
            return Err(ParamError::new(
                "per-line",
                format!("must be between 1 and {MAX_PER_LINE}, got {}", p.per_line),
            ));
        }
        Ok(Rooks3d {
            per_line: p.per_line,
        })
    }

    fn root_units(&self) -> Vec<Prefix> {
        // The valid two-cell prefixes: x[0][0][0] + x[0][0][1] <= R.
        let r = self.per_line as u8;
        (0..=r)
            .flat_map(|a| (0..=r - a).map(move |b| Prefix(vec![a, b])))
            .collect()
    }

    fn explore(
        &self,
        unit: &Prefix,
        ctx: &ExploreContext<'_>,
    ) -> Result<Exploration<Rooks3dSummary, Prefix>, FamilyError> {
        search::explore(self.per_line, unit, ctx)
    }

    fn merge(&self, into: &mut Rooks3dSummary, other: Rooks3dSummary) -> Result<(), FamilyError> {
        into.nodes = checked_add(into.nodes, other.nodes, "rooks3d node count")?;
        into.count = checked_add(into.count, other.count, "rooks3d count")?;
        into.distinct = checked_add(into.distinct, other.distinct, "rooks3d distinct")?;
        Ok(())
    }

    fn nodes(s: &Rooks3dSummary) -> u64 {
        s.nodes
    }

    fn report(&self, s: &Rooks3dSummary) -> FamilyReport {
        let r = self.per_line;
        let f = formula(r);
        let json = serde_json::json!({
            "family": "rooks3d",
            "per_line": r,
            "count": s.count,
            "distinct": s.distinct,
            "nodes": s.nodes,
            // A u128 as a string would be safer in general, but for R <= 100
            // it stays below 2^64.
            "formula": u64::try_from(f).ok(),
            "formula_matches": f == u128::from(s.count),
        });
        let text = vec![
            format!(
                "{r} rooks to a line on 3 x 3 x 3: {} placements, {} distinct up to the 48 symmetries of the cube",
                s.count, s.distinct
            ),
            format!(
                "the book's formula gives {f}{}",
                if f == u128::from(s.count) {
                    " (agrees)"
                } else {
                    " (disagrees: it is exact only for R <= 4)"
                }
            ),
            format!("nodes explored: {}", s.nodes),
        ];
        FamilyReport {
            json,
            text,
            results_lines: Vec::new(),
        }
    }

    fn unit_label(&self, u: &Prefix) -> String {
        if u.0.is_empty() {
            "(root)".to_string()
        } else {
            let cells: Vec<String> = u.0.iter().map(u8::to_string).collect();
            cells.join(" ")
        }
    }
}
