//! Harary's column game h(c) (Reis, Moreira & Pedroso, DCC-04-04).
//!
//! The numbers 1, 2, 3, ... are placed in turn into one of `c` columns; a
//! number may not go into a column where it is the sum of two distinct members
//! (variant `pairs`, the paper's rule) or of two or more distinct members
//! (variant `subsets`, the paper's section 5). A game is the string of column
//! choices; h(c) is one more than the longest game.
//!
//! Games are enumerated as restricted-growth strings (RGS: a column is used
//! for the first time only after all lower columns), which removes the c!
//! column renamings. A unit is an RGS prefix ([`RgsPrefix`]); the search
//! below it lives in [`search`], plain and allocation-free.
//!
//! Two modes:
//! * default: find the maximum length. The *horizon* is the best length found
//!   so far anywhere in the job (shared through [`orchard_core::ExploreContext::bound`]);
//!   only games reaching the horizon are counted.
//! * `--min-length L`: the horizon is fixed at `L`; every game that ends at a
//!   length >= L is counted, per length.

mod bits;
pub mod reference;
mod search;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use orchard_core::figure::{Bar, Figure, Histogram};
use orchard_core::merge::checked_add;
use orchard_core::{Capabilities, Host, Probe, Probing};
use orchard_core::{
    Exploration, ExploreContext, FamilyError, FamilyReport, ParamError, SearchFamily,
};

/// The rule that forbids a number in a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    /// n may not be the sum of two distinct members of its column (h(c)).
    Pairs,
    /// n may not be the sum of two or more distinct members (h'(c)).
    Subsets,
}

/// Parameters of an `hc` job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, clap::Args)]
pub struct HcParams {
    /// Number of columns c (1..=6).
    #[arg(long)]
    pub columns: u32,
    /// Which sums are forbidden in a column.
    #[arg(long, value_enum, default_value_t = Variant::Pairs)]
    pub variant: Variant,
    /// Count exactly every game that reaches this length, instead of searching
    /// for the maximum (1 explores the whole tree).
    #[arg(long)]
    pub min_length: Option<u32>,
}

/// Largest number of columns accepted.
pub const MAX_COLUMNS: u32 = 6;

/// Most games of the best length a summary lists (about 15 MB for c = 4);
/// beyond that only their number is kept. h(4) has 29931.
pub const MAX_LISTED_GAMES: usize = 200_000;

/// A restricted-growth-string prefix: column indices, 0-based
/// (`[0, 0, 1]` is the game prefix "112").
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RgsPrefix(pub Vec<u8>);

impl RgsPrefix {
    /// The prefix as the paper writes games: 1-based column digits.
    pub fn to_digits(&self) -> String {
        digits(&self.0)
    }
}

/// Column string (0-based) as 1-based digits.
pub fn digits(cols: &[u8]) -> String {
    cols.iter().map(|&c| char::from(b'1' + c)).collect()
}

/// What the exploration of some units found. Counts are exact for the
/// lengths the mode makes exact (see the module documentation).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HcSummary {
    /// Search-tree nodes visited.
    pub nodes: u64,
    /// Longest game recorded (0: none reached the horizon).
    pub best: u32,
    /// Number of games of length `best`.
    pub best_count: u64,
    /// Every game of length `best`, 0-based columns, unordered; at most
    /// [`MAX_LISTED_GAMES`] of them (see `best_games_dropped`).
    pub best_games: Vec<Vec<u8>>,
    /// More than [`MAX_LISTED_GAMES`] games of length `best`: `best_games`
    /// is incomplete (the counts stay exact). Early in a search many games
    /// tie at a length that a longer game later supersedes; listing them all
    /// would cost memory and message size for nothing.
    pub best_games_dropped: bool,
    /// `--min-length` mode: games ending at each length >= L.
    pub histogram: BTreeMap<u32, u64>,
}

/// The `hc` family: one job of it, with its checked parameters.
#[derive(Debug, Clone)]
pub struct HararyColumns {
    params: HcParams,
}

impl HararyColumns {
    pub fn params(&self) -> &HcParams {
        &self.params
    }
}

impl SearchFamily for HararyColumns {
    const NAME: &'static str = "hc";
    const ABOUT: &'static str = "Harary's column game h(c): longest games, counted exactly";

    type Params = HcParams;
    type Unit = RgsPrefix;
    type Summary = HcSummary;

    fn new(p: HcParams, _: &Host) -> Result<Self, ParamError> {
        if p.columns == 0 || p.columns > MAX_COLUMNS {
            return Err(ParamError::new(
                "columns",
                format!("must be between 1 and {MAX_COLUMNS}, got {}", p.columns),
            ));
        }
        if let Some(l) = p.min_length {
            let cap = search::capacity(p.columns);
            if l == 0 || l >= cap {
                return Err(ParamError::new(
                    "min-length",
                    format!("must be between 1 and {}, got {l}", cap - 1),
                ));
            }
        }
        Ok(HararyColumns { params: p })
    }

    fn root_units(&self) -> Vec<RgsPrefix> {
        // One root; dynamic splitting cuts the tree as workers ask for work.
        vec![RgsPrefix(Vec::new())]
    }

    fn explore(
        &self,
        unit: &RgsPrefix,
        ctx: &ExploreContext<'_>,
    ) -> Result<Exploration<HcSummary, RgsPrefix>, FamilyError> {
        search::explore(&self.params, unit, ctx)
    }

    fn merge(&self, into: &mut HcSummary, other: HcSummary) -> Result<(), FamilyError> {
        into.nodes = checked_add(into.nodes, other.nodes, "hc node count")?;
        for (len, n) in other.histogram {
            let slot = into.histogram.entry(len).or_insert(0);
            *slot = checked_add(*slot, n, "hc histogram")?;
        }
        if other.best > into.best {
            into.best = other.best;
            into.best_count = other.best_count;
            into.best_games = other.best_games;
            into.best_games_dropped = other.best_games_dropped;
        } else if other.best == into.best && other.best > 0 {
            into.best_count = checked_add(into.best_count, other.best_count, "hc maximal count")?;
            into.best_games_dropped |= other.best_games_dropped;
            let room = MAX_LISTED_GAMES.saturating_sub(into.best_games.len());
            if other.best_games.len() > room {
                into.best_games_dropped = true;
            }
            into.best_games
                .extend(other.best_games.into_iter().take(room));
        }
        Ok(())
    }

    fn nodes(s: &HcSummary) -> u64 {
        s.nodes
    }

    fn bound(s: &HcSummary) -> u64 {
        u64::from(s.best)
    }

    /// The maxima and their counts, not the node count (pruning depends on
    /// the horizon). With `--min-length` the horizon is fixed, so the
    /// counts per length are the same in every run of the unit. In the
    /// default mode the horizon rises while the unit runs, as games are
    /// found anywhere in the job: games shorter than `bound` are counted by
    /// a run that started early and not by a later one, and cannot change
    /// the answer (longer games exist); games of length `bound` or more are
    /// counted whole by every run, since no run's horizon exceeded `bound`.
    fn verified_part(&self, _unit: &RgsPrefix, s: &HcSummary, bound: u64) -> Vec<u8> {
        use orchard_core::codec::encode;
        match self.params.min_length {
            Some(_) => encode(&(s.best, s.best_count, &s.histogram)),
            None if u64::from(s.best) >= bound => encode(&(s.best, s.best_count)),
            None => encode(&(0u32, 0u64)),
        }
    }

    fn report(&self, s: &HcSummary) -> FamilyReport {
        let p = &self.params;
        let mut games: Vec<&Vec<u8>> = s.best_games.iter().collect();
        games.sort();
        let histogram: BTreeMap<u32, u64> = match p.min_length {
            Some(_) => s.histogram.clone(),
            None if s.best > 0 => BTreeMap::from([(s.best, s.best_count)]),
            None => BTreeMap::new(),
        };
        let found = s.best > 0;
        let json = serde_json::json!({
            "family": "hc",
            "columns": p.columns,
            "variant": p.variant,
            "min_length": p.min_length,
            "max_length": found.then_some(s.best),
            "h": (found && p.min_length.is_none()).then_some(s.best + 1),
            "maximal_count": s.best_count,
            "nodes": s.nodes,
            "histogram": histogram.iter().map(|(k, v)| (k.to_string(), serde_json::Value::from(*v))).collect::<serde_json::Map<_, _>>(),
            "first_maximal": games.first().map(|g| digits(g)),
            "maximal_listed": !s.best_games_dropped,
        });
        let mut text = Vec::new();
        let name = match p.variant {
            Variant::Pairs => "h",
            Variant::Subsets => "h'",
        };
        match (found, p.min_length) {
            (true, None) => {
                text.push(format!("{name}({}) = {}", p.columns, s.best + 1));
                text.push(format!(
                    "longest game: {} moves, {} maximal games",
                    s.best, s.best_count
                ));
            }
            (true, Some(l)) => {
                text.push(format!(
                    "games reaching length {l}: longest {} moves, {} of that length",
                    s.best, s.best_count
                ));
                for (len, n) in &histogram {
                    text.push(format!("  length {len}: {n} games end here"));
                }
            }
            (false, Some(l)) => text.push(format!("no game reaches length {l}")),
            (false, None) => text.push("no game found".to_string()),
        }
        if s.best_games_dropped {
            text.push(format!(
                "more than {MAX_LISTED_GAMES} games of the longest length: counted, not listed"
            ));
        } else if let Some(g) = games.first() {
            text.push(format!("first maximal game: {}", digits(g)));
        }
        text.push(format!("nodes explored: {}", s.nodes));
        FamilyReport {
            json,
            text,
            results_lines: if s.best_games_dropped {
                Vec::new()
            } else {
                games.iter().map(|g| digits(g)).collect()
            },
        }
    }

    /// The histogram of game lengths: with `--min-length`, the games that
    /// end at each length (the whole tree's shape); without it, only the
    /// longest games found so far are counted, so one bar.
    fn figures(&self, s: &HcSummary, _running: &[RgsPrefix]) -> Vec<Figure> {
        let (title, counts) = match self.params.min_length {
            Some(l) => (
                format!("games ending at each length (lengths >= {l})"),
                s.histogram.clone(),
            ),
            None if s.best > 0 => (
                "games of the longest length found".to_string(),
                BTreeMap::from([(s.best, s.best_count)]),
            ),
            None => return Vec::new(),
        };
        vec![Figure::Histogram(Histogram {
            title,
            x_label: "game length (moves)".to_string(),
            y_label: "games".to_string(),
            bars: counts
                .iter()
                .map(|(len, &n)| Bar {
                    label: len.to_string(),
                    value: n,
                })
                .collect(),
        })]
    }

    fn capabilities(&self) -> Capabilities<'_, Self> {
        Capabilities {
            probing: Some(self),
            ..Capabilities::default()
        }
    }

    fn unit_label(&self, u: &RgsPrefix) -> String {
        if u.0.is_empty() {
            "(root)".to_string()
        } else {
            u.to_digits()
        }
    }
}

impl Probing<HararyColumns> for HararyColumns {
    /// Walks the real search's tree (see [`search::probe`]). In
    /// `--min-length` mode the tree is fixed and the estimate unbiased; in the
    /// default mode it is the tree of a search whose horizon is `bound` from
    /// the start.
    fn probe(
        &self,
        unit: &RgsPrefix,
        bound: u64,
        pick: &mut dyn FnMut(u64) -> u64,
    ) -> Result<Probe, FamilyError> {
        search::probe(&self.params, unit, bound, pick)
    }
}
