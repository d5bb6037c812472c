//! Euler's 36 officers: reduced Latin squares of order `n`, and which of
//! them have an orthogonal mate (make a Graeco-Latin square).
//!
//! Source: "Games Playing with Computers", chapter 6, "Euler's conjecture":
//! arrange the 16 court cards so that no row or column repeats a rank or a
//! suit; for side `N` without the diagonals this is a pair of orthogonal
//! Latin squares, and "it is possible to show that Euler was right for K = 1
//! and N = 6; a computer can enumerate all the possibilities (and find
//! none) within minutes", with the hint to start "the first row and column
//! of A with 00, 01, 02, 03, 04, and 05", a reduced square. Tarry (1900)
//! proved it by hand; Fisher and Yates (1934) listed the 9408 reduced
//! squares of order 6 and found none with a mate. The chapter also says
//! that "if we apply the restriction to the diagonals it is impossible to
//! produce even one of the arrays A, B for the case of N = 6": the
//! `diagonal` figures test that (see below, and README).
//!
//! **Reduced squares.** A Latin square is *reduced* when its first row and
//! first column are `0 1 ... n-1`. Permuting the columns, then the rows
//! `1..n`, makes any square reduced in exactly one way, so every Latin
//! square is one reduced square times `n! (n-1)!` (OEIS A000315: 1, 1, 1,
//! 4, 56, 9408, 16942080 for orders 1..7; A002860 for all squares). Having
//! an orthogonal mate is kept by those permutations (apply the same ones to
//! the mate), so the reduced squares answer Euler's question: order 6 has a
//! Graeco-Latin square iff one of its 9408 reduced squares has a mate.
//!
//! **Mates.** Found through transversals and an exact cover, one square at
//! a time (the `analysis` module says why that is equivalent); the search
//! counts the squares with a mate, and lists the smallest of them with a
//! mate each (the mate is checked orthogonal by the tests with a plain
//! check). The number of transversals is an isotopy invariant, so the
//! histogram of transversals per reduced square also gives the minimum and
//! maximum over all Latin squares (OEIS A090741: 1, 0, 3, 8, 15, 32, 133).
//!
//! **Units.** The search goes row by row (the `search` module); a node is a
//! reduced Latin rectangle, written as its rows after the first
//! ([`Prefix`]). The root units are the possible second rows, in order (53
//! for order 6, 309 for order 7); when a budget runs out the search hands
//! back, in search order, the rectangle of every node it reached but did not
//! enter: the node where it stopped and the later siblings of each node on
//! its path. Each square lies below exactly one unit and everything counted
//! is a property of one square, so a unit's counts are exact on their own
//! and merging is a plain sum.
//!
//! **Diagonal squares.** The `diagonal_squares` figure counts the squares
//! with first row `0 1 ... n-1` whose two diagonals are transversals (every
//! diagonal square is one of these up to relabelling its symbols): for each
//! reduced square, the orders of its rows `1..n` that make it diagonal
//! (OEIS A274806: 1, 0, 0, 2, 8, 128, 171200 for orders 1..7). It cannot be
//! a count of reduced squares: a reduced square of order `n >= 2` is never
//! diagonal, since its anti-diagonal holds `n - 1` at both ends, in cells
//! `(0, n-1)` and `(n-1, 0)`. That is why the chapter's program, started
//! from the hint's reduced array A, finds no array with the diagonal
//! restriction for `N = 6` (nor for any other `N >= 2`), while 128 diagonal
//! squares of order 6 have the first row `0 1 ... 5`; none of them has a
//! mate, as no square of order 6 does.
//!
//! This crate follows `queens`: parameters and glue here, the search loop
//! in `search`, a plain second implementation in [`mod@reference`].

mod analysis;
pub mod reference;
mod search;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use orchard_core::merge::{add_counts, checked_add, keep_smallest};
use orchard_core::{Capabilities, Host, Probe, Probing};
use orchard_core::{
    Exploration, ExploreContext, FamilyError, FamilyReport, ParamError, SearchFamily,
};

pub use analysis::{diagonal_row_orders, Analyser, Cells};

/// Largest order accepted. Symbols are single digits in the results file
/// and a transversal is a mask of the `n^2 <= 100` cells in a `u128`; the
/// search could not finish beyond order 8 anyway (5.4e11 reduced squares).
pub const MAX_ORDER: u32 = 10;

/// Most squares with a mate a summary lists: the smallest ones. Counts stay
/// exact beyond it.
pub const MAX_LISTED: usize = 1000;

fn yes() -> bool {
    true
}

/// Parameters of a `latin` job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, clap::Args)]
pub struct LatinParams {
    /// Order of the squares (1..=10).
    #[arg(long)]
    pub order: u32,
    /// Look for an orthogonal mate of every reduced square (its
    /// transversals and an exact cover by them); `--mates false` only
    /// counts squares.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    #[serde(default = "yes")]
    pub mates: bool,
    /// Count the diagonal squares (both diagonals transversals) with the
    /// first row in natural order; `--diagonal false` skips it.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    #[serde(default = "yes")]
    pub diagonal: bool,
}

impl LatinParams {
    /// Everything on, for order `order`.
    pub fn order(order: u32) -> LatinParams {
        LatinParams {
            order,
            mates: true,
            diagonal: true,
        }
    }
}

/// The rows after the first (`0 1 ... n-1`) of a reduced Latin rectangle,
/// one after another, `n` symbols (0-based) each.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Prefix(pub Vec<u8>);

/// A reduced square with an orthogonal mate: both row after row, `n^2`
/// symbols (0-based) each. Ordered by the square.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Witness {
    pub square: Vec<u8>,
    pub mate: Vec<u8>,
}

/// What exploring some units found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LatinSummary {
    /// Search-tree nodes (reduced Latin rectangles) visited, a unit's root
    /// included.
    pub nodes: u64,
    /// Transversals tried by the exact-cover searches for mates.
    pub cover_steps: u64,
    /// Reduced Latin squares.
    pub reduced: u64,
    /// Of those, the ones with an orthogonal mate (0 unless `mates`).
    pub with_mate: u64,
    /// How many reduced squares have each number of transversals (empty
    /// unless `mates`).
    pub transversals: BTreeMap<u32, u64>,
    /// Diagonal squares with the first row `0 1 ... n-1` (0 unless
    /// `diagonal`).
    pub diagonal: u64,
    /// The smallest squares with a mate, sorted, at most [`MAX_LISTED`]:
    /// all of them when `listed.len() == with_mate`.
    pub listed: Vec<Witness>,
}

/// The `latin` family: one job of it, with its checked parameters.
#[derive(Debug, Clone)]
pub struct Latin {
    params: LatinParams,
}

impl Latin {
    fn config(&self) -> search::Config {
        search::Config {
            n: self.params.order as usize,
            mates: self.params.mates,
            diagonal: self.params.diagonal,
        }
    }
}

/// A square as the results file writes it: rows separated by `/`, symbols
/// 0-based, one digit each (`012/120/201`).
pub fn rows(symbols: &[u8], n: usize) -> String {
    symbols
        .chunks(n)
        .map(|row| row.iter().map(|s| char::from(b'0' + s)).collect::<String>())
        .collect::<Vec<_>>()
        .join("/")
}

/// A count as JSON: a number when it fits in a `u64`, else a string.
fn big(x: u128) -> serde_json::Value {
    match u64::try_from(x) {
        Ok(v) => v.into(),
        Err(_) => x.to_string().into(),
    }
}

impl SearchFamily for Latin {
    const NAME: &'static str = "latin";
    const ABOUT: &'static str =
        "reduced Latin squares of order N and which have an orthogonal mate (Euler's 36 officers)";

    type Params = LatinParams;
    type Unit = Prefix;
    type Summary = LatinSummary;

    fn new(p: LatinParams, _: &Host) -> Result<Self, ParamError> {
        if p.order == 0 || p.order > MAX_ORDER {
            return Err(ParamError::new(
                "order",
                format!("must be between 1 and {MAX_ORDER}, got {}", p.order),
            ));
        }
        Ok(Latin { params: p })
    }

    fn root_units(&self) -> Vec<Prefix> {
        let n = self.params.order as usize;
        if n <= 2 {
            // The root is already a leaf (n = 1) or has one forced row.
            return vec![Prefix(Vec::new())];
        }
        // The second rows: start with 1, no symbol in its own column.
        let mut units = Vec::new();
        let mut row = vec![1u8; n];
        second_rows(n, 1, 1 << 1, &mut row, &mut units);
        units
    }

    fn explore(
        &self,
        unit: &Prefix,
        ctx: &ExploreContext<'_>,
    ) -> Result<Exploration<LatinSummary, Prefix>, FamilyError> {
        search::explore(self.config(), unit, ctx)
    }

    fn merge(&self, into: &mut LatinSummary, other: LatinSummary) -> Result<(), FamilyError> {
        into.nodes = checked_add(into.nodes, other.nodes, "latin node count")?;
        into.cover_steps = checked_add(into.cover_steps, other.cover_steps, "latin cover steps")?;
        into.reduced = checked_add(into.reduced, other.reduced, "latin reduced squares")?;
        into.with_mate = checked_add(into.with_mate, other.with_mate, "latin squares with mate")?;
        add_counts(
            &mut into.transversals,
            other.transversals,
            "latin transversal histogram",
        )?;
        into.diagonal = checked_add(into.diagonal, other.diagonal, "latin diagonal squares")?;
        // Units are disjoint, so the lists are too: the smallest of the union.
        keep_smallest(&mut into.listed, other.listed, MAX_LISTED);
        Ok(())
    }

    fn nodes(s: &LatinSummary) -> u64 {
        s.nodes
    }

    fn report(&self, s: &LatinSummary) -> FamilyReport {
        let n = self.params.order as usize;
        let factorial = |k: usize| (1..=k as u128).product::<u128>();
        let all_squares = u128::from(s.reduced) * factorial(n) * factorial(n - 1);
        let transversals = if self.params.mates {
            let total: u128 = s
                .transversals
                .iter()
                .map(|(&t, &k)| u128::from(t) * u128::from(k))
                .sum();
            let histogram: serde_json::Map<String, serde_json::Value> = s
                .transversals
                .iter()
                .map(|(t, k)| (t.to_string(), (*k).into()))
                .collect();
            serde_json::json!({
                "total": big(total),
                "min": s.transversals.keys().next(),
                "max": s.transversals.keys().next_back(),
                "squares_without": s.transversals.get(&0).copied().unwrap_or(0),
                "histogram": histogram,
            })
        } else {
            serde_json::Value::Null
        };
        let with_mate = self.params.mates.then_some(s.with_mate);
        let diagonal = self.params.diagonal.then_some(s.diagonal);
        let json = serde_json::json!({
            "family": "latin",
            "order": n,
            "mates": self.params.mates,
            "diagonal": self.params.diagonal,
            "reduced": s.reduced,
            "with_orthogonal_mate": with_mate,
            "latin_squares": big(all_squares),
            "transversals": transversals,
            "diagonal_squares": diagonal,
            "nodes": s.nodes,
            "cover_steps": s.cover_steps,
            "listed": s.listed.len(),
            "symbols": "0-based",
        });
        let mut text = vec![format!(
            "order {n}: {} reduced Latin squares ({all_squares} Latin squares)",
            s.reduced
        )];
        if self.params.mates {
            text.push(format!(
                "{} of them with an orthogonal mate{}",
                s.with_mate,
                if s.with_mate == 0 {
                    format!(": no Graeco-Latin square of order {n}")
                } else {
                    String::new()
                }
            ));
            if let (Some(lo), Some(hi)) = (
                s.transversals.keys().next(),
                s.transversals.keys().next_back(),
            ) {
                text.push(format!("transversals per square: {lo} to {hi}"));
            }
            if let Some(w) = s.listed.first() {
                text.push(format!(
                    "first: square {} mate {} (symbols 0-based)",
                    rows(&w.square, n),
                    rows(&w.mate, n)
                ));
            }
            if (s.listed.len() as u64) < s.with_mate {
                text.push(format!(
                    "the smallest {} squares with a mate listed",
                    s.listed.len()
                ));
            }
        } else {
            text.push("mates not searched (--mates false)".to_string());
        }
        if self.params.diagonal {
            text.push(format!(
                "diagonal Latin squares with first row 0..{}: {}",
                n - 1,
                s.diagonal
            ));
        }
        text.push(format!("nodes explored: {}", s.nodes));
        FamilyReport {
            json,
            text,
            results_lines: s
                .listed
                .iter()
                .map(|w| format!("square {} mate {}", rows(&w.square, n), rows(&w.mate, n)))
                .collect(),
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
            "(first row)".to_string()
        } else {
            rows(&u.0, self.params.order as usize)
        }
    }
}

/// Every second row of a reduced square (starts with 1, symbol `c` never
/// in column `c`), in lexicographic order, filled from column `c`.
fn second_rows(n: usize, c: usize, used: u16, row: &mut Vec<u8>, out: &mut Vec<Prefix>) {
    if c == n {
        out.push(Prefix(row.clone()));
        return;
    }
    for s in 0..n {
        if s != c && used & (1 << s) == 0 {
            row[c] = s as u8;
            second_rows(n, c + 1, used | (1 << s), row, out);
        }
    }
}

impl Probing<Latin> for Latin {
    /// A random walk down the tree the search visits (`latin` has no bound).
    fn probe(
        &self,
        unit: &Prefix,
        _bound: u64,
        pick: &mut dyn FnMut(u64) -> u64,
    ) -> Result<Probe, FamilyError> {
        search::probe(self.params.order as usize, unit, pick)
    }
}
