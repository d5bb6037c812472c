//! Langford pairings: the numbers `1, 1, 2, 2, ..., n, n` in a row so that
//! the two `k`s have exactly `k` numbers between them. For `n = 3` there is
//! one, `2 3 1 2 1 3` (and its reverse, which counts as the same pairing);
//! OEIS A014552 lists the counts, nonzero only when `n` is 0 or 3 modulo 4:
//! 1, 1, 26, 150, 17792, 108144, ... for `n = 3, 4, 7, 8, 11, 12, ...`.
//! Counting them was a classic target of distributed computing (`n = 24`
//! took a grid of machines for years).
//!
//! This crate is the template for a family of one's own on orchard: a
//! [`SearchFamily`] (this file), the search loop ([`mod@search`]), a plain
//! second implementation the tests compare it with ([`mod@reference`]), and
//! a `main` that is one call ([`orchard::main_with`]). Copy it, rename it,
//! and replace the three parts.
//!
//! **The search.** The pairs are placed from the largest number down (the
//! largest has the fewest places, so the tree stays narrow near the root):
//! a node is a row with the pairs `n, n-1, ..., n-d+1` placed, written as
//! their first positions; its children place pair `n-d` at every position
//! `p` where both `p` and `p + n-d + 1` are free. Every leaf at depth `n`
//! is a sequence; a sequence and its reverse are different leaves, so the
//! pairings are half the sequences (no sequence is its own reverse: the
//! pair of 1s would have to straddle the middle, with its cells at equal
//! distance from it, which takes an even gap).
//!
//! **The units.** A unit is a node and its subtree, given by its row
//! ([`Placement`]). The root units are the placements of the two largest
//! pairs. When its node budget runs out, or the cluster asks it to stop,
//! the search hands back every node it reached but did not enter: those
//! subtrees are exactly the rest, so the units always partition the tree
//! (the invariant that makes a cluster's counts exact).

pub mod reference;
pub mod search;

use serde::{Deserialize, Serialize};

use orchard_core::merge::checked_add;
use orchard_core::{
    Exploration, ExploreContext, FamilyError, FamilyReport, Host, ParamError, SearchFamily,
};

/// Largest `n` accepted: the row of `2n` cells fits a `u64`, and the
/// sequences of `n = 24` (twice A014552's 46,845,158,056,515,936) a `u64`
/// too; `n = 24` is already years of one core.
pub const MAX_N: u32 = 24;

/// Parameters of a `langford` job; the fields are the subcommand's flags.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, clap::Args)]
pub struct LangfordParams {
    /// Pairs `1, 1, ..., n, n` to place (1..=24).
    #[arg(long)]
    pub n: u32,
}

/// A node of the search: the first positions (0-based) of the pairs
/// `n, n-1, ...` placed so far, largest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placement(pub Vec<u8>);

/// What exploring some units found. Merged by adding, so the order in which
/// units finish does not matter.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LangfordSummary {
    /// Search-tree nodes entered (each unit's root included).
    pub nodes: u64,
    /// Langford sequences: each pairing twice, once per direction.
    pub sequences: u64,
}

/// One `langford` job: its checked parameters.
#[derive(Debug, Clone)]
pub struct Langford {
    n: u32,
}

impl Langford {
    /// Pairs in the row.
    pub fn n(&self) -> u32 {
        self.n
    }
}

impl SearchFamily for Langford {
    const NAME: &'static str = "langford";
    const ABOUT: &'static str =
        "Langford pairings of 1,1,...,n,n (two k's have k numbers between them), OEIS A014552";

    type Params = LangfordParams;
    type Unit = Placement;
    type Summary = LangfordSummary;

    fn new(p: LangfordParams, _: &Host) -> Result<Self, ParamError> {
        if !(1..=MAX_N).contains(&p.n) {
            return Err(ParamError::new(
                "n",
                format!("must be between 1 and {MAX_N}, got {}", p.n),
            ));
        }
        Ok(Langford { n: p.n })
    }

    fn root_units(&self) -> Vec<Placement> {
        search::placements(self.n, 2.min(self.n) as usize)
    }

    fn explore(
        &self,
        unit: &Placement,
        ctx: &ExploreContext<'_>,
    ) -> Result<Exploration<LangfordSummary, Placement>, FamilyError> {
        search::explore(self.n, unit, ctx)
    }

    fn merge(&self, into: &mut LangfordSummary, other: LangfordSummary) -> Result<(), FamilyError> {
        into.nodes = checked_add(into.nodes, other.nodes, "langford nodes")?;
        into.sequences = checked_add(into.sequences, other.sequences, "langford sequences")?;
        Ok(())
    }

    fn nodes(s: &LangfordSummary) -> u64 {
        s.nodes
    }

    fn report(&self, s: &LangfordSummary) -> FamilyReport {
        let pairings = s.sequences / 2;
        FamilyReport {
            json: serde_json::json!({
                "family": Self::NAME,
                "n": self.n,
                "pairings": pairings,
                "sequences": s.sequences,
                "nodes": s.nodes,
            }),
            text: vec![
                format!(
                    "Langford pairings of n = {}: {pairings} ({} sequences, each read both ways)",
                    self.n, s.sequences
                ),
                format!("nodes explored: {}", s.nodes),
            ],
            results_lines: Vec::new(),
        }
    }

    fn unit_label(&self, u: &Placement) -> String {
        let n = self.n as usize;
        let placed: Vec<String> =
            u.0.iter()
                .enumerate()
                .map(|(i, p)| format!("{}@{p}", n - i))
                .collect();
        if placed.is_empty() {
            "(root)".to_string()
        } else {
            placed.join(" ")
        }
    }
}
