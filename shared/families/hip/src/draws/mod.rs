//! `hip-draws`: the full colourings of an `R x C` board with `k` colours
//! (default 2) that have no monochromatic square — the draws of Hip — counted
//! exactly, with how many of them play can produce and how many are distinct
//! up to the board's symmetries.
//!
//! * `draws`: every colouring without a monochromatic square.
//! * `playable`: those whose stone counts play produces. With `N = qk + r`
//!   cells, the first `r` players hold `q + 1` stones and the others `q`
//!   (two colours: the first player holds `ceil(N / 2)`). Colour `j` is
//!   player `j + 1`'s, so colours are not interchangeable here.
//! * `distinct`, `distinct_playable`: the same up to rotations and
//!   reflections of the board (8 on square boards, 4 on rectangles).
//!
//! Three methods:
//!
//! * `seeds` (default for two colours), Franke's: a draw of `R x C` contains
//!   a draw of every smaller board inside it, so the draws of a *seed board*
//!   — `(R-1) x (C-1)` for a square board, `R x (C-1)` otherwise; the 6x6
//!   draws seed 7x7 and 6x7 — are extended by the missing cells. More
//!   generally any `R x C` board can be seeded by an `(R-1) x C` or
//!   `R x (C-1)` board, recursively: the cells are walked in *growth order*
//!   (the seed board's own growth order, then the new cells), so the walk only
//!   ever holds partial draws of the growing boards. The seeds are computed,
//!   not given: the first unit walks the seed board and hands every seed back
//!   as new units (in batches), which workers extend. Every draw is visited,
//!   so the boards can be listed; this is the method where draws are rare.
//! * `profile` (default for three or more colours below five rows; counts
//!   explode: 5x5 with 3 colours has over 10^11 draws): the dynamic programme of
//!   `profile.rs`, which counts without visiting boards. Units are the
//!   restricted-growth colourings of the first cells (column-major), each
//!   standing for its orbit under colour permutations; `distinct` comes from
//!   Burnside's lemma, with one unit per non-identity symmetry counting the
//!   colourings that symmetry fixes (a walk over its cycles). Boards are not
//!   listed.
//! * `sandwich` (default for three or more colours from five rows, where it
//!   fits: 3 to 10 columns, outer rows weakly coupled, 6x6 included): the walk of
//!   `sandwich/` over the colourings of the inner rows, each leaf counting
//!   its outer rows' completions in closed form. Units are restricted-growth
//!   prefixes of the inner rows, split by the budget like the seeds walk;
//!   `distinct` comes from the same Burnside units as `profile`'s.
//!
//! When there are at most 100,000 draws (and the method lists them), every
//! draw is a line of the results file: rows separated by `/`, colours as
//! digits `0..k-1` (`0` is the first player's).

use serde::{Deserialize, Serialize};

mod report;
mod walk;

pub use walk::seed_dims;
use walk::walk_plan;

use super::board::Board;
use super::dfs::{self, falling, LIST_CAP, MAX_COLORS};
use super::profile::{Outcome, Profile, Stop};
use super::sandwich::{self, Sandwich};
use orchard_core::figure::Figure;
use orchard_core::{
    Capabilities, Exploration, ExploreContext, FamilyError, FamilyReport, Host, ParamError, Probe,
    Probing, SearchFamily,
};

/// How the draws are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// `seeds` for two colours; for more, `sandwich` on boards of five or
    /// more rows it fits, else `profile`.
    Auto,
    /// Extend the draws of a smaller board, one board at a time (lists boards).
    Seeds,
    /// Count by dynamic programming over a frontier of cells.
    Profile,
    /// Walk the inner rows' colourings; count the outer rows per leaf.
    Sandwich,
}

/// Parameters of a `hip-draws` job. A board with more rows than columns is
/// counted as its transpose (`rows` and `cols` are swapped).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, clap::Args)]
pub struct DrawsParams {
    /// Board rows (at least 2).
    #[arg(long)]
    pub rows: u32,
    /// Board columns (at least 2; rows x cols at most 64).
    #[arg(long)]
    pub cols: u32,
    /// Number of colours (players), 2 to 10.
    #[arg(long, default_value_t = 2)]
    pub colors: u32,
    /// Counting method.
    #[arg(long, value_enum, default_value_t = Method::Auto)]
    pub method: Method,
    /// Profile method: the most memory, in MiB, one unit's DP may hold (its
    /// two live layers). A unit that would need more stops and is split into
    /// the units of its one-cell-longer prefixes, which partition it and
    /// each hold fewer states, until every unit fits. The report gives the
    /// most any unit held.
    #[arg(long, value_name = "MIB")]
    #[serde(default)]
    pub memory_limit: Option<u64>,
}

impl DrawsParams {
    pub fn new(rows: u32, cols: u32, colors: u32) -> DrawsParams {
        DrawsParams {
            rows,
            cols,
            colors,
            method: Method::Auto,
            memory_limit: None,
        }
    }

    /// The method `auto` stands for. With three or more colours the
    /// sandwich count is the faster from five rows (5x5 with three colours:
    /// 2.6 s against the profile DP's 20 s, BENCHMARKS.md) and the only one
    /// that reaches 6x6; on narrower boards the DP's frontier is small.
    pub fn resolved_method(&self) -> Method {
        match self.method {
            Method::Auto if self.colors == 2 => Method::Seeds,
            Method::Auto => {
                let (r, _) = self.dims();
                if r >= 5
                    && self.colors as usize <= MAX_COLORS
                    && sandwich::unsupported(&self.board(), self.colors as usize).is_none()
                {
                    Method::Sandwich
                } else {
                    Method::Profile
                }
            }
            m => m,
        }
    }

    fn dims(&self) -> (usize, usize) {
        (
            self.rows.min(self.cols) as usize,
            self.rows.max(self.cols) as usize,
        )
    }

    fn board(&self) -> Board {
        let (r, c) = self.dims();
        Board::new(r, c)
    }
}

/// A subtree of the count.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum DrawsUnit {
    /// `seeds` method: colourings of the first cells in growth order (one
    /// digit per cell). A prefix shorter than the seed board is walked only
    /// down to the seed board and its seeds are handed back.
    Seeds { prefixes: Vec<Vec<u8>> },
    /// `profile` method: a restricted-growth colouring of the first cells in
    /// column-major order, counting all draws below it or (`playable`) the
    /// playable ones.
    Profile { prefix: Vec<u8>, playable: bool },
    /// Burnside: colourings fixed by symmetry `sym`, below colourings of its
    /// first cycles.
    Fixed { sym: u8, prefixes: Vec<Vec<u8>> },
    /// `sandwich` method: restricted-growth colourings of the first inner
    /// cells (row-major from row 1), counting the draws and the playable
    /// draws below each.
    Sandwich { prefixes: Vec<Vec<u8>> },
}

/// Counts over the explored units. Counts are exact and merged with checked
/// arithmetic.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DrawsSummary {
    pub nodes: u64,
    pub draws: u128,
    pub playable: u128,
    /// `seeds` method: draws that are the canonical member of their orbit.
    pub distinct: u128,
    pub distinct_playable: u128,
    /// `profile` method (Burnside): per symmetry index, the draws and the
    /// playable draws that symmetry fixes (index 0, the identity, unused).
    pub fixed_draws: Vec<u128>,
    pub fixed_playable: Vec<u128>,
    /// Every draw found, while there are at most 100,000 in all.
    pub boards: Vec<String>,
    /// Profile method: the most bytes one unit's DP held (its two live
    /// layers), and the widest layer (states) of any unit. Sandwich method:
    /// the bytes of a unit's scratch tables (no layers).
    pub peak_dp_bytes: u64,
    pub widest_layer: u64,
    /// Profile units stopped because they would exceed `--memory-limit`
    /// (and split into smaller ones).
    pub memory_splits: u64,
    /// The boards are not (all) listed: too many, or the method does not list.
    pub unlisted: bool,
}

/// The `hip-draws` family: one job of it, with its checked parameters.
#[derive(Debug, Clone)]
pub struct HipDraws {
    params: DrawsParams,
}

impl HipDraws {
    pub fn params(&self) -> &DrawsParams {
        &self.params
    }
}

/// Prefixes per unit when a walk hands back seeds or an unexplored rest.
const BATCH: usize = 64;

/// A sandwich unit's rest: at least this many of its shortest prefixes go
/// back as units of their own.
const SANDWICH_ALONE: usize = 4;

fn factorial(n: usize) -> u128 {
    (1..=n).map(|v| v as u128).product()
}

fn add(a: u128, b: u128, what: &'static str) -> Result<u128, FamilyError> {
    a.checked_add(b).ok_or(FamilyError::Overflow(what))
}

fn mul(a: u128, b: u128, what: &'static str) -> Result<u128, FamilyError> {
    a.checked_mul(b).ok_or(FamilyError::Overflow(what))
}

/// Packs prefixes into units of at most [`BATCH`].
fn batches(prefixes: Vec<Vec<u8>>, make: impl Fn(Vec<Vec<u8>>) -> DrawsUnit) -> Vec<DrawsUnit> {
    let mut out = Vec::new();
    let mut it = prefixes.into_iter().peekable();
    while it.peek().is_some() {
        out.push(make(it.by_ref().take(BATCH).collect()));
    }
    out
}

impl SearchFamily for HipDraws {
    const NAME: &'static str = "hip-draws";
    const ABOUT: &'static str =
        "Hip: count the full boards without a one-colour square (draws), k colours";

    type Params = DrawsParams;
    type Unit = DrawsUnit;
    type Summary = DrawsSummary;

    fn new(p: DrawsParams, _: &Host) -> Result<Self, ParamError> {
        let (r, c) = super::board_dims(p.rows, p.cols)?;
        if p.colors < 2 || p.colors as usize > MAX_COLORS {
            return Err(ParamError::new(
                "colors",
                format!("must be between 2 and {MAX_COLORS}, got {}", p.colors),
            ));
        }
        if p.memory_limit == Some(0) {
            return Err(ParamError::new("memory-limit", "must be at least 1 MiB"));
        }
        if p.resolved_method() == Method::Sandwich {
            let board = Board::new(r, c);
            let k = p.colors as usize;
            if let Some(why) = sandwich::unsupported(&board, k) {
                return Err(ParamError::new(
                    "method",
                    format!("the sandwich count does not fit a {r}x{c} board with {k} colours: {why}; use --method profile"),
                ));
            }
            if let (Some(mut sw), Some(mib)) = (Sandwich::new(&board, k), p.memory_limit) {
                if !sw.fit_memory(mib.saturating_mul(1 << 20)) {
                    return Err(ParamError::new(
                        "memory-limit",
                        format!(
                            "the sandwich count needs at least {:.1} MiB per unit, more than the {mib} MiB allowed",
                            sw.scratch_bytes() as f64 / f64::from(1 << 20)
                        ),
                    ));
                }
            }
        }
        if p.resolved_method() == Method::Profile {
            for playable in [false, true] {
                if Profile::new(&Board::new(r, c), p.colors as usize, playable).is_none() {
                    return Err(ParamError::new(
                        "method",
                        format!(
                            "the profile state of a {r}x{c} board with {} colours exceeds {} bits; use --method seeds",
                            p.colors,
                            64 * super::profile::MAX_WORDS
                        ),
                    ));
                }
            }
        }
        Ok(HipDraws { params: p })
    }

    fn root_units(&self) -> Vec<DrawsUnit> {
        let p = &self.params;
        let board = p.board();
        match p.resolved_method() {
            Method::Profile => {
                // One DP per count over the whole board, the larger
                // (playable) first: splitting a DP by prefixes repeats its
                // later layers, where the states of different prefixes meet,
                // in every unit (122 prefixes made the draws of 5x5 with
                // three colours cost 9x the nodes of one DP).
                let mut units: Vec<DrawsUnit> = [true, false]
                    .into_iter()
                    .map(|playable| DrawsUnit::Profile {
                        prefix: Vec::new(),
                        playable,
                    })
                    .collect();
                for sym in 1..board.symmetries() {
                    units.push(DrawsUnit::Fixed {
                        sym: sym as u8,
                        prefixes: vec![Vec::new()],
                    });
                }
                units
            }
            Method::Sandwich => {
                let mut units = vec![DrawsUnit::Sandwich {
                    prefixes: vec![Vec::new()],
                }];
                units.extend((1..board.symmetries()).map(|sym| DrawsUnit::Fixed {
                    sym: sym as u8,
                    prefixes: vec![Vec::new()],
                }));
                units
            }
            _ => vec![DrawsUnit::Seeds {
                prefixes: vec![Vec::new()],
            }],
        }
    }

    fn explore(
        &self,
        unit: &DrawsUnit,
        ctx: &ExploreContext<'_>,
    ) -> Result<Exploration<DrawsSummary, DrawsUnit>, FamilyError> {
        let p = &self.params;
        let board = p.board();
        let k = p.colors as usize;
        let mut s = DrawsSummary::default();
        match unit {
            DrawsUnit::Seeds { prefixes } => {
                let plan = walk_plan(&board, k, unit)?.expect("a walk unit");
                let (sr, sc) = seed_dims(board.rows, board.cols);
                let out = dfs::walk(&plan, &board, prefixes, sr * sc, ctx)?;
                s.nodes = out.nodes.max(1);
                s.draws = out.draws.into();
                s.playable = out.playable.into();
                s.distinct = out.distinct.into();
                s.distinct_playable = out.distinct_playable.into();
                s.unlisted = s.draws > LIST_CAP;
                if !s.unlisted {
                    s.boards = out.boards;
                }
                let rest = batches(out.rest, |prefixes| DrawsUnit::Seeds { prefixes });
                Ok(Exploration::new(s, rest))
            }
            DrawsUnit::Fixed { sym, prefixes } => {
                let g = *sym as usize;
                let plan = walk_plan(&board, k, unit)?.expect("a walk unit");
                let out = dfs::walk(&plan, &board, prefixes, 0, ctx)?;
                s.nodes = out.nodes.max(1);
                s.unlisted = true;
                s.fixed_draws = vec![0; board.symmetries()];
                s.fixed_playable = vec![0; board.symmetries()];
                s.fixed_draws[g] = out.draws.into();
                s.fixed_playable[g] = out.playable.into();
                let rest = batches(out.rest, |prefixes| DrawsUnit::Fixed {
                    sym: *sym,
                    prefixes,
                });
                Ok(Exploration::new(s, rest))
            }
            DrawsUnit::Sandwich { prefixes } => {
                let mut sw = Sandwich::new(&board, k).ok_or_else(|| {
                    FamilyError::BadUnit("a sandwich unit on a board it does not fit".into())
                })?;
                if let Some(mib) = p.memory_limit {
                    // Checked when the job was made: it fits.
                    sw.fit_memory(mib.saturating_mul(1 << 20));
                }
                let out = sw.count(prefixes, ctx)?;
                s.nodes = out.nodes.max(1);
                s.draws = out.draws;
                s.playable = out.playable;
                s.unlisted = true;
                s.peak_dp_bytes = out.scratch_bytes;
                // The rest is the untried siblings along the path where the
                // walk stopped, whose subtrees shrink with depth: the
                // shortest prefixes (most of the rest's work) each become a
                // unit of their own, so that idle workers can share them,
                // and the long tail goes in batches.
                let mut rest = out.rest;
                rest.sort_by_key(Vec::len);
                let alone = (ctx.pieces_wanted() as usize).max(SANDWICH_ALONE);
                let tail = rest.split_off(alone.min(rest.len()));
                let mut units: Vec<DrawsUnit> = rest
                    .into_iter()
                    .map(|p| DrawsUnit::Sandwich { prefixes: vec![p] })
                    .collect();
                units.extend(batches(tail, |prefixes| DrawsUnit::Sandwich { prefixes }));
                Ok(Exploration::new(s, units))
            }
            DrawsUnit::Profile { prefix, playable } => {
                let mut used = 0;
                for &x in prefix {
                    if x as usize > used || x as usize >= k {
                        return Err(FamilyError::BadUnit(format!(
                            "prefix {prefix:?} is not a restricted-growth colouring with {k} colours"
                        )));
                    }
                    used = used.max(x as usize + 1);
                }
                let profile = Profile::new(&board, k, *playable)
                    .ok_or_else(|| FamilyError::Capacity("profile state too wide".into()))?;
                s.unlisted = true;
                let limit = p
                    .memory_limit
                    .map(|mib| (mib as usize).saturating_mul(1 << 20));
                let outcome = profile.count(prefix, ctx, limit)?;
                let (Outcome::Done(_, m) | Outcome::Stopped(_, m)) = outcome;
                s.peak_dp_bytes = m.peak_bytes as u64;
                s.widest_layer = m.widest as u64;
                match outcome {
                    Outcome::Done(count, m) => {
                        s.nodes = m.nodes.max(1);
                        let orbit = falling(k, used);
                        if *playable {
                            // Sum over colour permutations of the prefix of the
                            // completions with exactly the playable counts:
                            // r!(k-r)!/(k-m)! times the completions whose
                            // counts are any permutation of them.
                            let n = board.n;
                            let r = n % k;
                            let num = mul(
                                mul(count, factorial(r), "hip-draws playable")?,
                                factorial(k - r),
                                "hip-draws playable",
                            )?;
                            let den = factorial(k - used);
                            if num % den != 0 {
                                return Err(FamilyError::BadUnit(format!(
                                    "playable count of prefix {prefix:?} is not symmetric"
                                )));
                            }
                            s.playable = num / den;
                        } else {
                            s.draws = mul(count, orbit, "hip-draws count")?;
                        }
                        Ok(Exploration::Finished(s))
                    }
                    Outcome::Stopped(why, m) => {
                        // The budget or the memory ran out: the work is lost;
                        // hand back the one-cell-longer prefixes, which
                        // partition this one.
                        s.nodes = m.nodes.max(1);
                        s.memory_splits = u64::from(why == Stop::Memory);
                        if prefix.len() >= board.n {
                            return Err(FamilyError::BadUnit("cannot split a full board".into()));
                        }
                        let rest = (0..(used + 1).min(k))
                            .map(|x| {
                                let mut q = prefix.clone();
                                q.push(x as u8);
                                q
                            })
                            .filter(|q| profile.valid_prefix(q))
                            .map(|q| DrawsUnit::Profile {
                                prefix: q,
                                playable: *playable,
                            })
                            .collect();
                        Ok(Exploration::Split { explored: s, rest })
                    }
                }
            }
        }
    }

    fn merge(&self, into: &mut DrawsSummary, other: DrawsSummary) -> Result<(), FamilyError> {
        into.nodes = into
            .nodes
            .checked_add(other.nodes)
            .ok_or(FamilyError::Overflow("hip-draws nodes"))?;
        into.draws = add(into.draws, other.draws, "hip-draws draws")?;
        into.playable = add(into.playable, other.playable, "hip-draws playable")?;
        into.distinct = add(into.distinct, other.distinct, "hip-draws distinct")?;
        into.distinct_playable = add(
            into.distinct_playable,
            other.distinct_playable,
            "hip-draws distinct",
        )?;
        for (mine, theirs) in [
            (&mut into.fixed_draws, other.fixed_draws),
            (&mut into.fixed_playable, other.fixed_playable),
        ] {
            if mine.len() < theirs.len() {
                mine.resize(theirs.len(), 0);
            }
            for (i, v) in theirs.into_iter().enumerate() {
                mine[i] = add(mine[i], v, "hip-draws fixed")?;
            }
        }
        into.peak_dp_bytes = into.peak_dp_bytes.max(other.peak_dp_bytes);
        into.widest_layer = into.widest_layer.max(other.widest_layer);
        into.memory_splits = into
            .memory_splits
            .checked_add(other.memory_splits)
            .ok_or(FamilyError::Overflow("hip-draws memory splits"))?;
        // The list survives only while the total stays within the cap; every
        // partial sum of a total within the cap is within it, so whether the
        // final list exists does not depend on the merge order.
        into.unlisted = into.unlisted || other.unlisted || into.draws > LIST_CAP;
        if into.unlisted {
            into.boards = Vec::new();
        } else {
            into.boards.extend(other.boards);
        }
        Ok(())
    }

    fn nodes(s: &DrawsSummary) -> u64 {
        s.nodes
    }

    fn report(&self, s: &DrawsSummary) -> FamilyReport {
        self.report_of(s)
    }

    fn figures(&self, s: &DrawsSummary, _running: &[DrawsUnit]) -> Vec<Figure> {
        self.figures_of(s)
    }

    /// Probes walk units (seeds, Burnside) only: with the profile method
    /// the count is a dynamic programme, whose work is not a tree.
    fn capabilities(&self) -> Capabilities<'_, Self> {
        Capabilities {
            probing: (self.params.resolved_method() != Method::Profile).then_some(self),
            ..Capabilities::default()
        }
    }

    /// A profile unit's DP keeps nothing when stopped early: an idle worker
    /// would only make it start over as smaller units, which together cost
    /// more than it (their later layers repeat one another's states).
    fn split_on_idle(&self, u: &DrawsUnit) -> bool {
        !matches!(u, DrawsUnit::Profile { .. })
    }

    fn unit_label(&self, u: &DrawsUnit) -> String {
        // A label never fails, whatever the unit (a hostile one included).
        let digits = |p: &[u8]| -> String {
            p.iter()
                .map(|&x| char::from_digit(u32::from(x), 36).unwrap_or('?'))
                .collect()
        };
        match u {
            DrawsUnit::Seeds { prefixes } => match prefixes.as_slice() {
                [] => "seeds (none)".to_string(),
                [one] if one.is_empty() => "seeds (root)".to_string(),
                [one] => format!("seeds {}", digits(one)),
                many => format!("{} seeds from {}", many.len(), digits(&many[0])),
            },
            DrawsUnit::Profile { prefix, playable } => {
                format!(
                    "profile {}{}",
                    digits(prefix),
                    if *playable { " playable" } else { "" }
                )
            }
            DrawsUnit::Fixed { sym, prefixes } => {
                format!("fixed by symmetry {sym} ({} prefixes)", prefixes.len())
            }
            DrawsUnit::Sandwich { prefixes } => match prefixes.as_slice() {
                [] => "sandwich (none)".to_string(),
                [one] if one.is_empty() => "sandwich (root)".to_string(),
                [one] => format!("sandwich {}", digits(one)),
                many => format!("{} sandwich prefixes from {}", many.len(), digits(&many[0])),
            },
        }
    }
}

impl Probing<HipDraws> for HipDraws {
    fn probe(
        &self,
        unit: &DrawsUnit,
        _bound: u64,
        pick: &mut dyn FnMut(u64) -> u64,
    ) -> Result<Probe, FamilyError> {
        let p = &self.params;
        let board = p.board();
        if let DrawsUnit::Sandwich { prefixes } = unit {
            let sw = Sandwich::new(&board, p.colors as usize).ok_or_else(|| {
                FamilyError::BadUnit("a sandwich unit on a board it does not fit".into())
            })?;
            return sw.probe(prefixes, pick);
        }
        let walk = walk_plan(&board, p.colors as usize, unit)?;
        let (Some(plan), DrawsUnit::Seeds { prefixes } | DrawsUnit::Fixed { prefixes, .. }) =
            (walk, unit)
        else {
            return Err(FamilyError::BadUnit(
                "a profile unit is counted by dynamic programming and cannot be probed".into(),
            ));
        };
        dfs::probe(&plan, prefixes, pick)
    }
}
