//! The n-queens problem: place `n` queens on an `n x n` board so that no two
//! attack each other, and count the ways, all of them and up to the eight
//! symmetries of the square.
//!
//! Source: "Games Playing with Computers", chapter 6 (Practical problems),
//! section 6.1, which gives the distinct patterns for n = 4..16 (1, 2, 1, 6,
//! 12, 46, 92, 341, 1787, 9233, 45752, 285053, 1846955); the totals are
//! OEIS A000170 (92 for n = 8, 365596 for n = 14).
//!
//! This crate is also the smallest complete example of a search family: the
//! parameters and the [`SearchFamily`] glue here, the search loops in
//! `search` and [`ring`], a plain second implementation for the tests in
//! [`mod@reference`].
//!
//! **Two methods** ([`Method`]), which must agree on every figure but the
//! node count: `ring` (the default; [`mod@ring`] explains it) fixes the queens
//! of the four border lines first, one ring in each orbit of the eight
//! symmetries, and then fills the most constrained line; `mirror` (below,
//! and the method of a job whose parameters name none) goes row by row over
//! half the first row. On 17 x 17 `ring` visits 0.074 of `mirror`'s nodes;
//! on 18 x 18 it takes about a third of the CPU time of a plain
//! mirror-halving C counter (`bench/queens.sh 18 2`; BENCHMARKS.md,
//! "Queens").
//!
//! **Units of `mirror`.** Every solution has exactly one queen per row, so
//! a solution is a column per row and the search tree is that of the row-by-row
//! placements: a node is a [`Prefix`] (the columns of the queens of the
//! first rows, none attacking another). A unit is the subtree below a
//! prefix. The root units are the `n` placements of the first row, in
//! order. When a budget runs out (or a stop is requested) the search hands
//! back, in search order, the prefix of every node it reached but did not
//! enter: the node where it stopped and the later siblings of each node on
//! its path. Their subtrees are exactly the part it did not visit.
//!
//! **Half the tree.** A solution's mirror image (left-right) is a solution
//! whose first queen stands in the mirrored column. So the root units are
//! the first-row placements in the left half only, and every solution met
//! there counts twice: once for itself, once for its mirror image, which is
//! never searched. On an odd board the first queen may stand in the middle
//! column, where the mirror keeps it; there the same argument is made on the
//! second row (never in the middle too: the two would attack each other),
//! so those root units are the middle column with a second queen in the left
//! half. The weight of a solution follows from its own first two rows
//! ([`mirror_weight`]: 2, or 0 for a solution in the half no root unit
//! reaches, 1 on the 1 x 1 board), so the total is exact over any set of
//! units that covers either the whole tree or the searched half.
//!
//! **Distinct solutions (`mirror`).** A solution is counted as distinct if and only if
//! it is the lexicographically smallest of its eight images (rotations and
//! reflections, all solutions too). Every orbit has exactly one smallest
//! member and the search meets every solution exactly once, in exactly one
//! unit, so each unit's count is exact on its own and merging is a plain
//! sum: no unit needs to know what another found.

pub mod reference;
pub mod ring;
mod search;

use serde::{Deserialize, Serialize};

use orchard_core::merge::{checked_add, Openings};
use orchard_core::{Capabilities, Host, Probe, Probing};
use orchard_core::{
    Exploration, ExploreContext, FamilyError, FamilyReport, ParamError, SearchFamily,
};

pub use search::{is_canonical, mirror_weight};

/// Largest board accepted. The masks are `u64`, so this is not a limit of
/// the search; it is far beyond any board a search can finish (n = 27 is
/// the largest ever counted).
pub const MAX_N: u32 = 32;

/// Boards up to this side list every distinct solution (1,787 for n = 12).
pub const LIST_ALL_UP_TO: u32 = 12;

/// Larger boards list the smallest distinct solution of each opening of
/// this many rows: one witness a unit at most, whatever the unit count
/// (a list of the smallest 10,000, kept by every unit, made the 19-queens
/// database 388 MB).
pub const OPENING_ROWS: usize = 2;

/// Which distinct solutions a summary lists on an `n x n` board: all of
/// them up to [`LIST_ALL_UP_TO`], else the smallest of each opening of
/// [`OPENING_ROWS`] rows. Either way a function of the set of solutions,
/// not of the units or the merge order.
pub fn listing(n: u32) -> Openings {
    Openings::all_up_to(n.into(), LIST_ALL_UP_TO.into(), OPENING_ROWS)
}

/// How a `queens` job searches: the figures are the same, the nodes and
/// the units are not, so a job keeps its method for life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Row by row over half the first row (the left-right mirror).
    Mirror,
    /// The border queens first, up to all eight symmetries, then the most
    /// constrained line ([`mod@ring`]).
    #[default]
    Ring,
}

impl Method {
    /// The method of a job stored without one: parameters that name no
    /// method were written when `mirror` was the only one.
    fn stored_before_ring() -> Method {
        Method::Mirror
    }
}

/// Parameters of a `queens` job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, clap::Args)]
pub struct QueensParams {
    /// Side of the board and number of queens (1..=32).
    #[arg(long)]
    pub n: u32,
    /// Search method: `ring` (all eight symmetries, most constrained line
    /// first) or `mirror` (row by row, half the first row; the method of
    /// databases written before `ring`, which need `--method mirror`).
    #[arg(long, value_enum, default_value_t = Method::Ring)]
    #[serde(default = "Method::stored_before_ring")]
    pub method: Method,
}

/// The queens a unit starts from, in its method's layout: for `mirror`, the
/// columns (0-based) of the queens of the first rows, one per row; for
/// `ring`, the [`ring::Ring`] then `(row, column)` pairs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Prefix(pub Vec<u8>);

/// What exploring some units found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueensSummary {
    /// Search-tree nodes visited (a unit's root included).
    pub nodes: u64,
    /// Every solution: those met, each with its weight (`mirror`: its
    /// [`mirror_weight`]; `ring`: the size of its ring's orbit), so the
    /// images never searched are counted.
    pub solutions: u64,
    /// Solutions that are the smallest of their eight images.
    pub distinct: u64,
    /// Distinct solutions by the rule of [`listing`], sorted: all of them
    /// on small boards, the smallest of each opening on large ones.
    pub listed: Vec<Vec<u8>>,
    /// Solutions the search actually met (about half of `solutions` with
    /// `mirror`, an eighth with `ring`). Last in the layout, so that a
    /// summary without it (whose `solutions` counts only the solutions met)
    /// fails to decode instead of being misread.
    pub met: u64,
}

/// The `queens` family: one job of it, with its checked parameters.
#[derive(Debug, Clone)]
pub struct Queens {
    n: u32,
    method: Method,
}

/// A solution or prefix as the results file writes it: 1-based columns.
pub fn columns(cols: &[u8]) -> String {
    let cols: Vec<String> = cols.iter().map(|c| (c + 1).to_string()).collect();
    cols.join(" ")
}

impl SearchFamily for Queens {
    const NAME: &'static str = "queens";
    const ABOUT: &'static str = "n-queens: all solutions, and distinct ones up to symmetry";

    type Params = QueensParams;
    type Unit = Prefix;
    type Summary = QueensSummary;

    fn new(p: QueensParams, _: &Host) -> Result<Self, ParamError> {
        if p.n == 0 || p.n > MAX_N {
            return Err(ParamError::new(
                "n",
                format!("must be between 1 and {MAX_N}, got {}", p.n),
            ));
        }
        Ok(Queens {
            n: p.n,
            method: p.method,
        })
    }

    /// `ring`: the pairs of border queens that begin a ring (groups of the
    /// rings that are the smallest of their images). `mirror`: the
    /// first-row placements of the left half, and on odd boards the middle
    /// column with each second-row placement of the left half that it does
    /// not attack (see "Half the tree" above).
    fn root_units(&self) -> Vec<Prefix> {
        if self.method == Method::Ring {
            return ring::root_units(self.n).into_iter().map(Prefix).collect();
        }
        let n = self.n as u8;
        if n == 1 {
            return vec![Prefix(vec![0])];
        }
        let m = n - 1;
        let mut units = Vec::new();
        for c in 0..n {
            if 2 * c < m {
                units.push(Prefix(vec![c]));
            } else if 2 * c == m {
                for c2 in (0..c).filter(|&c2| 2 * c2 < m && c - c2 > 1) {
                    units.push(Prefix(vec![c, c2]));
                }
            }
        }
        units
    }

    fn explore(
        &self,
        unit: &Prefix,
        ctx: &ExploreContext<'_>,
    ) -> Result<Exploration<QueensSummary, Prefix>, FamilyError> {
        match self.method {
            Method::Mirror => search::explore(self.n, unit, ctx),
            Method::Ring => ring::explore(self.n, unit, ctx),
        }
    }

    fn merge(&self, into: &mut QueensSummary, other: QueensSummary) -> Result<(), FamilyError> {
        into.nodes = checked_add(into.nodes, other.nodes, "queens node count")?;
        into.solutions = checked_add(into.solutions, other.solutions, "queens solutions")?;
        into.distinct = checked_add(into.distinct, other.distinct, "queens distinct")?;
        into.met = checked_add(into.met, other.met, "queens solutions met")?;
        listing(self.n).merge(&mut into.listed, other.listed);
        Ok(())
    }

    fn nodes(s: &QueensSummary) -> u64 {
        s.nodes
    }

    fn report(&self, s: &QueensSummary) -> FamilyReport {
        let json = serde_json::json!({
            "family": "queens",
            "n": self.n,
            "method": self.method,
            "solutions": s.solutions,
            "distinct": s.distinct,
            "nodes": s.nodes,
            "listed": s.listed.len(),
            "listed_per_opening_rows": listing(self.n).depth.min(self.n as usize),
            "met": s.met,
        });
        let mut text = vec![format!(
            "{n} queens on {n} x {n}: {} solutions, {} distinct up to symmetry",
            s.solutions,
            s.distinct,
            n = self.n
        )];
        if let Some(first) = s.listed.first() {
            text.push(format!("first distinct solution: {}", columns(first)));
        }
        let rule = listing(self.n);
        if !rule.keeps_all(self.n as usize) {
            text.push(format!(
                "listed: the smallest distinct solution of each of {} openings (first {} rows)",
                s.listed.len(),
                rule.depth
            ));
        }
        text.push(format!("nodes explored: {}", s.nodes));
        FamilyReport {
            json,
            text,
            results_lines: s.listed.iter().map(|p| columns(p)).collect(),
        }
    }

    fn capabilities(&self) -> Capabilities<'_, Self> {
        Capabilities {
            probing: Some(self),
            ..Capabilities::default()
        }
    }

    fn unit_label(&self, u: &Prefix) -> String {
        match self.method {
            Method::Mirror if u.0.is_empty() => "(root)".to_string(),
            Method::Mirror => columns(&u.0),
            Method::Ring => ring::label(&u.0),
        }
    }
}

impl Probing<Queens> for Queens {
    /// A random walk down the tree the search visits (`queens` has no bound).
    fn probe(
        &self,
        unit: &Prefix,
        _bound: u64,
        pick: &mut dyn FnMut(u64) -> u64,
    ) -> Result<Probe, FamilyError> {
        match self.method {
            Method::Mirror => search::probe(self.n, unit, pick),
            Method::Ring => ring::probe(self.n, unit, pick),
        }
    }
}
