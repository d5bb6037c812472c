//! The parameters of a `hip-solve` job ([`SolveParams`]) and the guessed
//! outcome that steers scheduling ([`Expect`]): what the command line and the
//! job file say, and the root depth they imply. Kept apart so that the rest of
//! the family sees one checked value, not flags.

use serde::{Deserialize, Serialize};

use crate::board::Board;

/// Parameters of a `hip-solve` job. A board with more rows than columns is
/// solved as its transpose.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, clap::Args)]
pub struct SolveParams {
    /// Board rows (at least 2).
    #[arg(long)]
    pub rows: u32,
    /// Board columns (at least 2; rows x cols at most 64).
    #[arg(long)]
    pub cols: u32,
    /// Double Hip: one stone first, then two stones per turn.
    #[arg(long)]
    pub double: bool,
    /// Stones placed in the root units (default: by board size).
    #[arg(long)]
    pub depth: Option<u32>,
    /// A guess of the outcome, used only to schedule units: where the
    /// player to move is expected to lose, sibling units are searched side
    /// by side instead of one after another. The answer does not depend on
    /// it; a wrong guess costs speed. Default: the job guesses from the
    /// units settled so far and from the first positions of its principal
    /// variation that workers have proved (a second player's win until one
    /// is).
    #[arg(long, value_enum)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<Expect>,
    /// Share with other machines the value of every position whose search
    /// took at least this many nodes (default 256). Lower saves more work
    /// across machines and sends more bytes: on 4x7, 64 sends four times
    /// the lemmas of 256 and 32 eight times (docs/cluster.md). The answer
    /// does not depend on it.
    #[arg(long, value_name = "NODES")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lemma_min_nodes: Option<u64>,
    /// When only units that wait for an elder sibling are left, idle
    /// workers speculate on the least speculative first (the fewest elder
    /// siblings still open on their line: the second move of several
    /// positions before the third of one) instead of in search order. Pays
    /// where the guess of the winner is right (4x7, whose second player the
    /// job guesses from the start: W(8) 2.7 to 1.8 times one machine's
    /// work), loses where it is wrong at first (Double 4x8, the first
    /// player's); see docs/families/hip-solve.md. The answer does not
    /// depend on it.
    #[arg(long)]
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub spread_speculation: bool,
}

/// A guessed outcome (see [`SolveParams::expect`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Expect {
    /// The first player wins.
    First,
    /// The second player wins.
    Second,
    /// A draw.
    Draw,
}

impl SolveParams {
    pub fn new(rows: u32, cols: u32, double: bool) -> SolveParams {
        SolveParams {
            rows,
            cols,
            double,
            depth: None,
            expect: None,
            lemma_min_nodes: None,
            spread_speculation: false,
        }
    }

    pub(super) fn board(&self) -> Board {
        Board::new(
            self.rows.min(self.cols) as usize,
            self.rows.max(self.cols) as usize,
        )
    }

    /// The number of stones in the root units.
    pub fn root_depth(&self) -> u32 {
        self.depth.unwrap_or_else(|| {
            let n = self.rows * self.cols;
            // Deeper root units spread the work but are each solved with a
            // full window; with units leased best line first, depth 2 lets
            // `is_moot` cancel most of them (5x5: 79 of 85), depth 3 does not.
            // Larger jobs are spread further by budget splits.
            match n {
                0..=9 => 0,
                10..=16 => 1,
                17..=36 => 2,
                _ => 3,
            }
        })
    }
}
