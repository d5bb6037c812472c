//! Magic hexagons: place `1..=H` in the `H = 3K(K-1) + 1` cells of the
//! hexagon of order `K` (`K` cells a side) so that every straight row of
//! each of the three directions has the same sum; count the arrangements,
//! all of them and up to the twelve symmetries of the hexagon. And the
//! chapter's exercise: the twelve lines of three cells of the order-3
//! hexagon (six sides, six spokes) all summing to 23.
//!
//! Source: "Games Playing with Computers", chapter 6, section 6.4, "The
//! Magic Hexagon" (Gardner, Scientific American, August 1963): Adams's
//! hexagon of order 3 (19 cells, 15 rows summing to 38) is unique, and
//! Trigg showed that no other order `K >= 2` has one.
//!
//! **Orders without a search.** The `2K - 1` parallel rows of one
//! direction hold every cell exactly once, so in a magic hexagon each sums
//! to `M = (1 + ... + H) / (2K - 1) = H(H+1) / (2(2K-1))`, which must be an
//! integer. The job checks that first (in [`MagicHexagon::new`], with exact
//! integers): when `M` is not an integer (or a `--sum` other than `M` is
//! asked for) the answer is "none" by that argument, the report gives it as
//! `reason`, and no search runs (one empty unit, zero nodes). Modulo
//! `2K - 1`, `H = 3K(K-1) + 1` is `1/4` (as `K = 1/2`), so `H(H+1)` is
//! `5/16` and `2K - 1` must divide 5: `K = 1` and `K = 3` are the only
//! orders that pass, Trigg's Diophantine condition. Orders 2, 4, 5, ...
//! (up to [`MAX_ORDER`]) are answered by the argument; order 1 (the single
//! cell holding 1) and order 3 are searched for real, and so would any
//! other order that passed (up to 127 cells: order 7).
//!
//! **The lines.** `--lines rows` (the default): every straight row of the
//! three directions, `3(2K - 1)` lines. `--lines sides-and-spokes --sum S`:
//! the exercise, "There are twelve lines of three cells in Adams's hexagon
//! (the six sides and the six lines radiating from the centre G). Write a
//! program to find the two arrangements of the numbers 1 to 19 for which
//! all twelve lines sum to 23." In the chapter's figure 6.11 the hexagon
//! stands on a corner and its cells are lettered row by row
//! `A / B C / H D I / E F / J G K / N O / L R M / P Q / S`; its vertical
//! columns `H J L`, `B E N P`, `A D G R S`, `C F O Q`, `I K M` are this
//! crate's horizontal rows (reading order, see [`geometry`]), turned a
//! quarter. The chapter's own lines confirm the reading: its program tests
//! `A + B + H` and `A + D + G + R + S`, and its statement 5 (`(P) = (G) +
//! (D) + (F)`, ...) holds in every arrangement found (a test checks it).
//! The six sides are the outer ring from corner to corner: `A B H`, `H J
//! L`, `L P S`, `S Q M`, `M K I`, `I C A`. The only straight lines of three
//! cells from the centre run through an inner-ring cell to a corner: `G D
//! A`, `G E H`, `G N L`, `G R S`, `G O M`, `G F I` (an edge-middle cell
//! like `B` is not in line with `G`). So the twelve lines are six
//! corner-middle-corner and six centre-inner-corner triples, and every cell
//! is on at least one of them. The family takes order 2 as well (sides and
//! spokes of two cells); from order 4 on cells of the inner rings lie on
//! no such line, so it refuses those.
//!
//! **Symmetry.** The twelve rotations and reflections of the hexagon map
//! rows to rows, sides to sides and spokes to spokes, so they map
//! arrangements to arrangements. `solutions` counts every arrangement (an
//! arrangement and its images separately); an arrangement counts as
//! `distinct` iff it is the lexicographically smallest of its twelve images
//! (values in reading order). Every orbit has exactly one smallest member
//! and the search meets each arrangement exactly once, in exactly one unit,
//! so each unit's counts are exact on their own and merging is a plain sum.
//! From order 2 on the values are distinct and every symmetry but the
//! identity moves some cell, so no arrangement is its own image and
//! `solutions = 12 x distinct`; the single cell of order 1 is its own image
//! under all twelve (1 solution, 1 distinct).
//!
//! **Search and units.** See `search`: the cells in a fixed order chosen
//! so that lines complete early, the candidates of each cell the unused
//! values every line through it still admits (a completed line forces its
//! last cell). The root units are the valid prefixes of the first
//! [`ROOT_DEPTH`] cell in search order (19 for order 3 and for the
//! exercise; a real run would take more for a larger puzzle); a unit
//! hands back its unvisited rest when its budget runs out, as `queens`
//! does. A plain second implementation with a different algorithm is in
//! [`mod@reference`].

pub mod geometry;
pub mod reference;
mod search;

use serde::{Deserialize, Serialize};

use orchard_core::merge::{checked_add, keep_smallest};
use orchard_core::{Capabilities, Host, Probe, Probing};
use orchard_core::{
    Exploration, ExploreContext, FamilyError, FamilyReport, ParamError, SearchFamily,
};

pub use geometry::Hexagon;
pub use search::{Puzzle, MAX_CELLS};

/// Largest order accepted. Orders the integrality argument settles cost
/// nothing whatever their size; this keeps `H(H+1)` and every figure of the
/// report comfortably inside `u64`.
pub const MAX_ORDER: u32 = 1000;

/// Largest `--sum` accepted (far above any sum a line of 127 cells holding
/// values up to 127 can reach).
pub const MAX_SUM: u64 = 1_000_000;

/// Most distinct arrangements a summary lists: the smallest ones. Counts
/// stay exact beyond it.
pub const MAX_LISTED: usize = 10_000;

/// Cells fixed by a root unit. Each of the 19 units of order 3 takes a
/// few milliseconds; heavier units split by the node budget.
pub const ROOT_DEPTH: usize = 1;

/// Which lines must have the same sum.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Lines {
    /// Every straight row of the three directions: a magic hexagon.
    #[default]
    Rows,
    /// The six sides and the six spokes from the centre to the corners
    /// (the chapter's exercise; orders 2 and 3).
    SidesAndSpokes,
}

impl Lines {
    fn name(self) -> &'static str {
        match self {
            Lines::Rows => "rows",
            Lines::SidesAndSpokes => "sides-and-spokes",
        }
    }
}

/// Parameters of a `magic-hexagon` job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, clap::Args)]
pub struct MagicHexagonParams {
    /// Cells on a side of the hexagon, K (1..=1000).
    #[arg(long)]
    pub order: u32,
    /// The lines that must all have the same sum: every row (a magic
    /// hexagon) or the six sides and six spokes (the chapter's exercise,
    /// order 2 or 3).
    #[arg(long, value_enum, default_value_t = Lines::Rows)]
    #[serde(default)]
    pub lines: Lines,
    /// The sum of every line. With rows, optional (the only possible one is
    /// (1 + ... + H) / (2K - 1)); with sides-and-spokes, required (the
    /// exercise: 23).
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sum: Option<u64>,
}

/// The values of the first cells in the search's order.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Prefix(pub Vec<u8>);

/// What exploring some units found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MagicHexagonSummary {
    /// Search-tree nodes visited (a unit's root included).
    pub nodes: u64,
    /// Every arrangement.
    pub solutions: u64,
    /// Arrangements that are the smallest of their twelve images.
    pub distinct: u64,
    /// The smallest of those distinct arrangements (values in reading
    /// order), sorted, at most [`MAX_LISTED`]: all of them when
    /// `listed.len() == distinct`.
    pub listed: Vec<Vec<u8>>,
}

/// How a job gets its answer.
#[derive(Debug, Clone)]
enum Plan {
    /// No arrangement, by the integrality argument: no search.
    Argument { reason: String },
    /// A real search.
    Search(Box<Puzzle>),
}

/// The `magic-hexagon` family: one job of it, with its checked parameters.
#[derive(Debug, Clone)]
pub struct MagicHexagon {
    params: MagicHexagonParams,
    /// `H`.
    cells: u64,
    /// The line sum searched for, if any.
    sum: Option<u64>,
    plan: Plan,
    /// The hexagon, for writing arrangements (searched jobs only).
    hexagon: Option<Hexagon>,
}

impl MagicHexagon {
    /// The reason no arrangement exists, when the integrality argument
    /// settles the job; `None` when it must be searched.
    pub fn reason(&self) -> Option<&str> {
        match &self.plan {
            Plan::Argument { reason } => Some(reason),
            Plan::Search(_) => None,
        }
    }

    /// The puzzle the job searches, when it searches.
    pub fn puzzle(&self) -> Option<&Puzzle> {
        match &self.plan {
            Plan::Argument { .. } => None,
            Plan::Search(p) => Some(p),
        }
    }

    /// An arrangement (reading order) written row by row.
    pub fn format(&self, values: &[u8]) -> String {
        match &self.hexagon {
            Some(h) => h.format(values),
            None => String::new(),
        }
    }

    fn check_unit_of_argument(unit: &Prefix) -> Result<(), FamilyError> {
        if unit.0.is_empty() {
            Ok(())
        } else {
            Err(FamilyError::BadUnit(
                "this job is settled without a search: its only unit is empty".to_string(),
            ))
        }
    }
}

/// The puzzle of `lines` on the hexagon `h`, every line summing to `sum`.
fn puzzle(h: &Hexagon, lines: Lines, sum: u64) -> Result<Puzzle, String> {
    let rings: Vec<Vec<usize>> = (0..h.order()).map(|r| h.ring(r)).collect();
    let (line_set, preference): (Vec<Vec<usize>>, Vec<usize>) = match lines {
        // Outer ring first: its sides complete every other cell.
        Lines::Rows => (h.rows(), rings.iter().rev().flatten().copied().collect()),
        // Centre first: then a corner completes its spoke.
        Lines::SidesAndSpokes => (
            h.sides_and_spokes(),
            rings[..1]
                .iter()
                .chain(rings[1..].iter().rev())
                .flatten()
                .copied()
                .collect(),
        ),
    };
    Puzzle::new(h.cells(), line_set, sum as i64, &preference, h.symmetries())
}

impl SearchFamily for MagicHexagon {
    const NAME: &'static str = "magic-hexagon";
    const ABOUT: &'static str =
        "magic hexagons of order K (and the chapter's sides-and-spokes exercise): all arrangements, and distinct ones up to the 12 symmetries";

    type Params = MagicHexagonParams;
    type Unit = Prefix;
    type Summary = MagicHexagonSummary;

    fn new(p: MagicHexagonParams, _: &Host) -> Result<Self, ParamError> {
        if p.order == 0 || p.order > MAX_ORDER {
            return Err(ParamError::new(
                "order",
                format!("must be between 1 and {MAX_ORDER}, got {}", p.order),
            ));
        }
        if let Some(s) = p.sum {
            if s == 0 || s > MAX_SUM {
                return Err(ParamError::new(
                    "sum",
                    format!("must be between 1 and {MAX_SUM}, got {s}"),
                ));
            }
        }
        let k = u64::from(p.order);
        let cells = 3 * k * (k - 1) + 1;
        let (sum, plan) = match p.lines {
            Lines::Rows => {
                let rows = 2 * k - 1;
                let total = cells * (cells + 1) / 2;
                let forced = (total % rows == 0).then_some(total / rows);
                let partition = format!(
                    "the {rows} parallel rows of one direction hold each of the {cells} cells once, so each sums to (1 + ... + {cells}) / {rows} = {total}/{rows}"
                );
                match (forced, p.sum) {
                    (None, None) => (None, Some(format!("{partition}, not an integer"))),
                    (None, Some(s)) => (
                        Some(s),
                        Some(format!("{partition}, not an integer, let alone {s}")),
                    ),
                    (Some(m), Some(s)) if s != m => {
                        (Some(s), Some(format!("{partition} = {m}, not {s}")))
                    }
                    (Some(m), _) => (Some(m), None),
                }
            }
            Lines::SidesAndSpokes => {
                if !(2..=3).contains(&p.order) {
                    return Err(ParamError::new(
                        "order",
                        format!(
                            "sides-and-spokes takes order 2 or 3 (got {}): from order 4 on, cells of the inner rings lie on no side or spoke",
                            p.order
                        ),
                    ));
                }
                let Some(s) = p.sum else {
                    return Err(ParamError::new(
                        "sum",
                        "is required with --lines sides-and-spokes (the chapter's exercise asks for 23)",
                    ));
                };
                (Some(s), None)
            }
        };
        let (plan, hexagon) = match plan {
            Some(reason) => (Plan::Argument { reason }, None),
            None => {
                if cells > MAX_CELLS as u64 {
                    return Err(ParamError::new(
                        "order",
                        format!(
                            "order {} passes the integrality test and must be searched, but the search takes at most {MAX_CELLS} cells (order 7), not {cells}",
                            p.order
                        ),
                    ));
                }
                let h = Hexagon::new(p.order);
                let puzzle = puzzle(&h, p.lines, sum.expect("a sum to search for"))
                    .map_err(|e| ParamError::new("order", e))?;
                (Plan::Search(Box::new(puzzle)), Some(h))
            }
        };
        Ok(MagicHexagon {
            params: p,
            cells,
            sum,
            plan,
            hexagon,
        })
    }

    fn root_units(&self) -> Vec<Prefix> {
        match &self.plan {
            Plan::Argument { .. } => vec![Prefix(Vec::new())],
            Plan::Search(p) => {
                let units = p.prefixes(ROOT_DEPTH);
                // A job always has a unit, even when no prefix is valid.
                if units.is_empty() {
                    vec![Prefix(Vec::new())]
                } else {
                    units
                }
            }
        }
    }

    fn explore(
        &self,
        unit: &Prefix,
        ctx: &ExploreContext<'_>,
    ) -> Result<Exploration<MagicHexagonSummary, Prefix>, FamilyError> {
        match &self.plan {
            Plan::Argument { .. } => {
                Self::check_unit_of_argument(unit)?;
                Ok(Exploration::Finished(MagicHexagonSummary::default()))
            }
            Plan::Search(p) => p.explore(unit, ctx),
        }
    }

    fn merge(
        &self,
        into: &mut MagicHexagonSummary,
        other: MagicHexagonSummary,
    ) -> Result<(), FamilyError> {
        into.nodes = checked_add(into.nodes, other.nodes, "magic-hexagon node count")?;
        into.solutions = checked_add(into.solutions, other.solutions, "magic-hexagon solutions")?;
        into.distinct = checked_add(into.distinct, other.distinct, "magic-hexagon distinct")?;
        // Units are disjoint, so the lists are too: the smallest of the union.
        keep_smallest(&mut into.listed, other.listed, MAX_LISTED);
        Ok(())
    }

    fn nodes(s: &MagicHexagonSummary) -> u64 {
        s.nodes
    }

    fn report(&self, s: &MagicHexagonSummary) -> FamilyReport {
        let p = &self.params;
        let line_count = match p.lines {
            Lines::Rows => 3 * (2 * u64::from(p.order) - 1),
            Lines::SidesAndSpokes => 12,
        };
        let reason = self.reason();
        let json = serde_json::json!({
            "family": Self::NAME,
            "order": p.order,
            "lines": p.lines.name(),
            "sum": self.sum,
            "cells": self.cells,
            "line_count": line_count,
            "method": if reason.is_some() { "argument" } else { "search" },
            "reason": reason,
            "solutions": s.solutions,
            "distinct": s.distinct,
            "nodes": s.nodes,
            "listed": s.listed.len(),
            "first": s.listed.first().map(|v| self.format(v)),
        });
        let what = match p.lines {
            Lines::Rows => format!("{line_count} rows"),
            Lines::SidesAndSpokes => "6 sides and 6 spokes".to_string(),
        };
        let mut text = Vec::new();
        match reason {
            Some(reason) => text.push(format!(
                "order {} ({} cells, {what}): no arrangement, without a search: {reason}",
                p.order, self.cells
            )),
            None => {
                text.push(format!(
                    "order {} ({} cells, {what} summing to {}): {} arrangements, {} distinct up to the 12 symmetries",
                    p.order,
                    self.cells,
                    self.sum.unwrap_or_default(),
                    s.solutions,
                    s.distinct
                ));
                for v in s.listed.iter().take(4) {
                    text.push(format!("distinct: {}", self.format(v)));
                }
                if s.listed.len() > 4 {
                    text.push(format!("... {} listed in the results file", s.listed.len()));
                }
                if (s.listed.len() as u64) < s.distinct {
                    text.push(format!(
                        "the smallest {} distinct arrangements listed",
                        s.listed.len()
                    ));
                }
            }
        }
        text.push(format!("nodes explored: {}", s.nodes));
        FamilyReport {
            json,
            text,
            results_lines: s.listed.iter().map(|v| self.format(v)).collect(),
        }
    }

    fn capabilities(&self) -> Capabilities<'_, Self> {
        Capabilities {
            probing: Some(self),
            ..Capabilities::default()
        }
    }

    fn unit_label(&self, u: &Prefix) -> String {
        if u.0.is_empty() {
            "(root)".to_string()
        } else {
            let v: Vec<String> = u.0.iter().map(u8::to_string).collect();
            v.join(" ")
        }
    }
}

impl Probing<MagicHexagon> for MagicHexagon {
    /// A random walk down the tree the search visits (no bound). A job
    /// settled by the argument has no tree: its walk is the empty unit.
    fn probe(
        &self,
        unit: &Prefix,
        _bound: u64,
        pick: &mut dyn FnMut(u64) -> u64,
    ) -> Result<Probe, FamilyError> {
        match &self.plan {
            Plan::Argument { .. } => {
                Self::check_unit_of_argument(unit)?;
                Ok(Probe::default())
            }
            Plan::Search(p) => p.probe(unit, pick),
        }
    }
}
