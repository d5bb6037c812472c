//! Closed knight's tours: the exact number of undirected Hamiltonian cycles
//! of the knight's graph of an `M x N` board.
//!
//! Published figures: 9,862 on 6 x 6 and 13,267,364,410,532 on 8 x 8 (OEIS
//! A001230; McKay 1997); the series 3 x 2n (A070030), 5 x 2n (A175855) and
//! 6 x n (A175881).
//!
//! **Method.** A depth-first search meets every tour once (and far more
//! dead ends); 8 x 8 would take it about 100 CPU-days. This family counts
//! with a *frontier* sweep instead (module [`frontier`]): the squares are
//! processed column by column along the long side, and the partial tours
//! that agree on what the rest of the board can see of them (the degrees of
//! the next `2h + 1` squares and which of them are ends of one path) are
//! kept as one state with a multiplicity. Its cost is the number of states,
//! which grows with the short side `h` (about 20 times per row: tens on
//! 3 x n, tens of thousands on 5 x n, a million on 6 x n, twelve million on
//! 7 x 7) and only linearly with the long side: so 3 x 100 or 6 x 20 are
//! seconds. A state costs 16 bytes in a layer (module [`table`]).
//!
//! **Halves.** Turned half a turn, the board is the same board and the
//! sweep's order is reversed: so the sweep's own layer before square `q`,
//! read backwards, is every way to cover the squares after `n - q` (module
//! [`join`]). `--method halves` (the default) sweeps to the middle only and
//! meets that turned layer there, which skips the widest layers (6 x 8:
//! 51,025 states at the peak instead of 974,579) at the cost of a join
//! through the window's own edges; `--method sweep` sweeps every square.
//! Both give the same counts (the tests check both against [`mod@reference`]).
//! The plain second implementation for the tests is a depth-first search
//! ([`mod@reference`]).
//!
//! **Units.** A unit ([`Layer`]) is a set of frontier states before one
//! square, each with its multiplicity; its result is the number of ways to
//! complete them, weighted. The root unit is the empty frontier before the
//! first square (one state, multiplicity 1): the whole job. Every tour has
//! exactly one state before each square, so the tours counted by units
//! whose states are disjoint are disjoint, and summaries add up; the count
//! is a sum of products of exact integers, with checked arithmetic.
//!
//! **Why one root unit.** The sweep's whole gain is that partial tours with
//! the same frontier merge into one state. States in different units never
//! merge, so cutting a layer into `k` units makes their sweeps do up to `k`
//! times the remaining work (measured: cutting the 6 x 6 sweep's layer at
//! square 12, 4,759 states, into units of 7 states triples the work after
//! it): a frontier count is a sequential computation, and its units are for
//! resuming (the coordinator stores each hand-back, and a run killed at
//! square 40 goes on from square 40), not for speed. The exception is the
//! meeting of `--method halves`, whose parts never merge anyway: see
//! "Meeting parts".
//!
//! **Meeting parts.** The root unit (or a whole layer it handed back as one
//! unit, [`KnightUnit::Whole`]) does not meet its own layer: it keeps
//! the whole meeting layer (sorted by key) and hands back units that *name*
//! their part ([`MeetPart`]: part `i` of `K`, the board, the meeting
//! square, the layer's size and fingerprint; about 30 bytes, at most
//! [`MAX_MEET_PARTS`] of them) instead of carrying its states, which on
//! 8 x 8 made one report of 460 MB (module [`parts`]). Any worker meets a
//! part: one that did not sweep the root rebuilds the layer (the half sweep
//! again) once per process and checks it against the unit. *Nodes of a part
//! unit are the meeting's work on its part only* (inner states expanded and
//! joined states), so a job's nodes are the half sweep once plus every
//! part's meeting, as in one process; the states swept again to rebuild the
//! layer are reported apart (`rebuilt_states`). A unit handed back before
//! the meeting holds only some of the layer's states: it meets its own
//! layer there, in parts cut the same way, one after the other.
//!
//! **Hand-backs.** So a unit is handed back only *between* squares, whole:
//! when the node budget (states expanded) has run out, or a stop was
//! requested and the unit has expanded at least a quantum of states since
//! it started (see `sweep`), the next layer goes back as one unit, and the
//! tours closed so far go into the summary. A layer of more than
//! [`MAX_UNIT_STATES`] states does not fit one stored blob: the sweep goes
//! on through it (the budget is overshot, and a stop waits) until a layer
//! fits again. A stop thus waits for at most one square's layer (seconds on
//! 6 x n, a minute on 7 x n) or the wide middle of a board whose layers
//! exceed a unit; a worker killed meanwhile loses only the work since the
//! last hand-back. A unit's states can also be cut into several units
//! ([`units_of`], sorted by key, which puts the squares the sweep reaches
//! last in the high bits): correct, and what the tests do, but never done
//! by the sweep itself.
//!
//! **Colours.** A knight always moves to the other colour, so a closed tour
//! has as many squares of each colour: a board with an odd number of
//! squares has none, and the root unit of such a board finishes at once
//! (the sweep itself also finds 0, see the tests, after much longer).

pub mod frontier;
pub mod join;
pub mod parts;
pub mod reference;
mod sweep;
pub mod table;

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use orchard_core::{
    Exploration, ExploreContext, FamilyError, FamilyReport, Host, ParamError, SearchFamily,
};

pub use frontier::{Frontier, MAX_SHORT_SIDE};
pub use parts::{MeetPart, MAX_MEET_PARTS};
pub use sweep::{units_of, Advance, Sweep};

/// Longest side accepted. Beyond a few hundred columns the counts overflow
/// `u128` anyway (6 x 23 already does; the overflow is an error, never a
/// wrong count).
pub const MAX_LONG_SIDE: u32 = 1000;

/// Most states in one unit: a state is at most 26 bytes encoded (a 9-byte
/// key, a 17-byte count), so a unit is a blob of at most 52 MiB, under the
/// codec's 64 MiB.
pub const MAX_UNIT_STATES: usize = 1 << 21;

/// Bytes a state of the widest layer costs at the peak, about: 16 in the
/// packed layer being expanded and 16 / load in the table being built (a
/// shard grows by half when 4/5 full), the packed layer freed shard by shard
/// as the table fills (see `table`). Measured: 36.8 (7 x 8) to 38.9 (6 x 8)
/// bytes per state of the widest layer (`examples/profile.rs`;
/// docs/notes/knight-tours.md).
pub const PEAK_BYTES_PER_STATE: u64 = 40;

/// Default bound on the states of one layer: about 7.5 GiB of layers.
pub const DEFAULT_MAX_STATES: u64 = 200_000_000;

/// How a unit's sweep finishes the count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Sweep to the middle of the board and meet the sweep's own layer
    /// there, turned half a turn (module `join`): half the sweep, and its
    /// narrowest layers.
    #[default]
    Halves,
    /// Sweep every square to the end.
    Sweep,
}

/// Parameters of a `knight-tours` job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, clap::Args)]
pub struct KnightParams {
    /// Rows of the board (the short side at most 8).
    #[arg(long)]
    pub rows: u32,
    /// Columns of the board.
    #[arg(long)]
    pub cols: u32,
    /// Most frontier states one layer of a unit's sweep may hold (each costs
    /// about 40 bytes of memory at the peak); beyond it the unit fails
    /// instead of exhausting the machine.
    #[arg(long, default_value_t = DEFAULT_MAX_STATES)]
    #[serde(default = "default_max_states")]
    pub max_states: u64,
    /// Meet in the middle (`halves`) or sweep the whole board (`sweep`):
    /// the same count; `halves` needs far less memory and time on square
    /// boards (see docs/notes/knight-tours.md).
    #[arg(long, value_enum, default_value_t = Method::Halves)]
    #[serde(default)]
    pub method: Method,
    /// With `halves`: left states of the meeting per part unit. The root
    /// unit hands the meeting layer back as units naming parts of it (at
    /// most 4096 parts, larger when the layer needs it), each met on its
    /// own by any worker; a part's meeting holds about 1 KiB a left state.
    #[arg(long, default_value_t = join::MEET_PART_STATES)]
    #[serde(default = "default_meet_part_states")]
    pub meet_part_states: usize,
}

fn default_max_states() -> u64 {
    DEFAULT_MAX_STATES
}

fn default_meet_part_states() -> usize {
    join::MEET_PART_STATES
}

/// Most left states one meeting part may ask for (`--meet-part-states`).
pub const MAX_MEET_PART_STATES: usize = 1 << 24;

/// A unit of the job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum KnightUnit {
    /// Frontier states to sweep on: some of a layer (a hand-back cut into
    /// several units, or a unit of the tests).
    Layer(Layer),
    /// The whole layer of the board's sweep before its square: the root
    /// unit, and a hand-back of a whole layer as one unit. Reaching the
    /// meeting, it hands back the parts of the meeting layer (module
    /// [`parts`]), where a [`KnightUnit::Layer`] meets its own states.
    Whole(Layer),
    /// A part of the meeting layer, named, not carried (module [`parts`]).
    Part(MeetPart),
}

impl From<Layer> for KnightUnit {
    fn from(l: Layer) -> KnightUnit {
        KnightUnit::Layer(l)
    }
}

/// A unit: frontier states (packed keys, see [`frontier`]) before square
/// `square` of the sweep, each with its multiplicity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layer {
    pub square: u32,
    pub states: Vec<(u64, u128)>,
}

/// What exploring some units found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TourSummary {
    /// States expanded (a state at a square is one node).
    pub nodes: u64,
    /// Closed tours completed.
    pub tours: u128,
    /// Per square of the sweep: states expanded there.
    pub states: Vec<u64>,
    /// Per square: tours closed there (their last edge chosen there).
    pub closed: Vec<u128>,
    /// The most states one unit's sweep held at one square.
    pub peak: u64,
    /// The most bytes one unit's layers held at once (the tables and packed
    /// layers, which are nearly all of the memory of a wide sweep).
    pub peak_bytes: u64,
    /// States the workers swept again to rebuild the meeting layer for
    /// part units (once per process that met a part without having swept
    /// the root): not in `nodes`, which count every state of the job once.
    pub rebuilt: u64,
}

impl TourSummary {
    fn empty(n: usize) -> TourSummary {
        TourSummary {
            states: vec![0; n],
            closed: vec![0; n],
            ..TourSummary::default()
        }
    }
}

/// The `knight-tours` family: one job, a checked board.
#[derive(Debug, Clone)]
pub struct KnightTours {
    rows: u32,
    cols: u32,
    max_states: u64,
    frontier: Frontier,
    /// Where the halves meet, with `--method halves` on a board long
    /// enough.
    meeting: Option<join::Meeting>,
    /// The right states of the meeting, computed once a job (by the root
    /// unit's sweep, or by a sweep of its own for a unit handed back).
    mirror: OnceLock<join::Mirror>,
    /// The meeting layer, kept for the part units met in this process.
    parts: parts::Cache,
    /// Left states per meeting part (see [`KnightParams`]).
    meet_part_states: usize,
}

fn add<T: Copy + Default>(
    into: &mut Vec<T>,
    other: Vec<T>,
    plus: impl Fn(T, T) -> Option<T>,
) -> Result<(), FamilyError> {
    if into.len() < other.len() {
        into.resize(other.len(), T::default());
    }
    for (a, b) in into.iter_mut().zip(other) {
        *a = plus(*a, b).ok_or(FamilyError::Overflow("knight-tours profile"))?;
    }
    Ok(())
}

impl KnightTours {
    /// The sweep's board (short side across).
    pub fn frontier(&self) -> &Frontier {
        &self.frontier
    }

    /// Square `v` of the sweep as (row, column) of the board as given,
    /// 0-based.
    pub fn square(&self, v: usize) -> (usize, usize) {
        let (c, r) = (v / self.frontier.h, v % self.frontier.h);
        if self.rows as usize == self.frontier.h {
            (r, c)
        } else {
            (c, r)
        }
    }
}

impl SearchFamily for KnightTours {
    const NAME: &'static str = "knight-tours";
    const ABOUT: &'static str =
        "closed knight's tours of an M x N board: exact count by a frontier sweep";

    type Params = KnightParams;
    type Unit = KnightUnit;
    type Summary = TourSummary;

    fn new(p: KnightParams, _: &Host) -> Result<Self, ParamError> {
        for (name, x) in [("rows", p.rows), ("cols", p.cols)] {
            if x == 0 || x > MAX_LONG_SIDE {
                return Err(ParamError::new(
                    name,
                    format!("must be between 1 and {MAX_LONG_SIDE}, got {x}"),
                ));
            }
        }
        if p.rows.min(p.cols) as usize > MAX_SHORT_SIDE {
            return Err(ParamError::new(
                if p.rows <= p.cols { "rows" } else { "cols" },
                format!(
                    "the short side must be at most {MAX_SHORT_SIDE} (the frontier of a \
                     {r} x {c} board does not fit the state keys), got {r} x {c}",
                    r = p.rows,
                    c = p.cols
                ),
            ));
        }
        if p.max_states == 0 {
            return Err(ParamError::new("max-states", "must be at least 1"));
        }
        if p.meet_part_states == 0 || p.meet_part_states > MAX_MEET_PART_STATES {
            return Err(ParamError::new(
                "meet-part-states",
                format!(
                    "must be between 1 and {MAX_MEET_PART_STATES}, got {}",
                    p.meet_part_states
                ),
            ));
        }
        let frontier = Frontier::new(p.rows as usize, p.cols as usize);
        let meeting = match p.method {
            Method::Halves => join::Meeting::new(&frontier),
            Method::Sweep => None,
        };
        Ok(KnightTours {
            rows: p.rows,
            cols: p.cols,
            max_states: p.max_states,
            frontier,
            meeting,
            mirror: OnceLock::new(),
            parts: parts::Cache::default(),
            meet_part_states: p.meet_part_states,
        })
    }

    /// The empty frontier before the first square: the whole job (see "Why
    /// one root unit").
    fn root_units(&self) -> Vec<KnightUnit> {
        vec![KnightUnit::Whole(Layer {
            square: 0,
            states: vec![(Frontier::START, 1)],
        })]
    }

    fn explore(
        &self,
        unit: &KnightUnit,
        ctx: &ExploreContext<'_>,
    ) -> Result<Exploration<TourSummary, KnightUnit>, FamilyError> {
        let (unit, whole) = match unit {
            KnightUnit::Layer(l) => (l, false),
            KnightUnit::Whole(l) => (l, true),
            KnightUnit::Part(p) => {
                parts::check(self.rows, self.cols, self.meeting.as_ref(), p)?;
                let meeting = self.meeting.as_ref().expect("checked");
                return parts::explore(
                    &self.frontier,
                    meeting,
                    self.max_states,
                    &self.mirror,
                    &self.parts,
                    p,
                    ctx,
                );
            }
        };
        let (a, b) = self.frontier.colours();
        if a != b && unit.square == 0 {
            sweep::check(&self.frontier, unit)?;
            // No closed tour: see "Colours". One node, the root.
            let mut s = TourSummary::empty(self.frontier.n);
            s.nodes = 1;
            return Ok(Exploration::Finished(s));
        }
        let ending = match &self.meeting {
            Some(meeting) => sweep::Ending::Meet {
                meeting,
                mirror: &self.mirror,
                cache: &self.parts,
                part_states: self.meet_part_states,
                board: (self.rows, self.cols),
            },
            None => sweep::Ending::Sweep,
        };
        sweep::explore(&self.frontier, self.max_states, unit, whole, ctx, ending)
    }

    fn merge(&self, into: &mut TourSummary, other: TourSummary) -> Result<(), FamilyError> {
        into.nodes = into
            .nodes
            .checked_add(other.nodes)
            .ok_or(FamilyError::Overflow("knight-tours nodes"))?;
        into.tours = into
            .tours
            .checked_add(other.tours)
            .ok_or(FamilyError::Overflow("knight-tours tours"))?;
        add(&mut into.states, other.states, u64::checked_add)?;
        add(&mut into.closed, other.closed, u128::checked_add)?;
        into.peak = into.peak.max(other.peak);
        into.peak_bytes = into.peak_bytes.max(other.peak_bytes);
        into.rebuilt = into
            .rebuilt
            .checked_add(other.rebuilt)
            .ok_or(FamilyError::Overflow("knight-tours rebuilt states"))?;
        Ok(())
    }

    fn nodes(s: &TourSummary) -> u64 {
        s.nodes
    }

    fn report(&self, s: &TourSummary) -> FamilyReport {
        let tours_u64 = u64::try_from(s.tours).ok();
        let json = serde_json::json!({
            "family": Self::NAME,
            "rows": self.rows,
            "cols": self.cols,
            "tours": s.tours.to_string(),
            "tours_u64": tours_u64,
            "nodes": s.nodes,
            "peak_states": s.peak,
            "peak_table_bytes": s.peak_bytes,
            "rebuilt_states": s.rebuilt,
        });
        let text = vec![
            format!(
                "{} x {} board: {} closed knight's tours (undirected)",
                self.rows, self.cols, s.tours
            ),
            format!(
                "frontier states expanded: {} (at most {} at one square of one unit)",
                s.nodes, s.peak
            ),
            format!(
                "memory of the layers at their peak: {:.1} MiB",
                s.peak_bytes as f64 / (1u64 << 20) as f64
            ),
        ];
        let mut text = text;
        if s.rebuilt > 0 {
            text.push(format!(
                "states swept again by workers to rebuild the meeting layer \
                 (not in the states expanded): {}",
                s.rebuilt
            ));
        }
        let results_lines = (0..s.states.len())
            .map(|v| {
                let (r, c) = self.square(v);
                format!(
                    "square {v} (row {} col {}): states {} tours_closed {}",
                    r + 1,
                    c + 1,
                    s.states[v],
                    s.closed.get(v).copied().unwrap_or(0)
                )
            })
            .collect();
        FamilyReport {
            json,
            text,
            results_lines,
        }
    }

    /// A part unit runs to its end once started (the meeting has no
    /// hand-back): asking it to stop early would only throw its work away.
    fn split_on_idle(&self, unit: &KnightUnit) -> bool {
        !matches!(unit, KnightUnit::Part(_))
    }

    /// Everything but `rebuilt`, which depends on how many processes met
    /// parts, not on the unit.
    fn verified_part(&self, _: &KnightUnit, summary: &TourSummary, _: u64) -> Vec<u8> {
        orchard_core::codec::encode(&TourSummary {
            rebuilt: 0,
            ..summary.clone()
        })
    }

    fn unit_label(&self, u: &KnightUnit) -> String {
        let u = match u {
            KnightUnit::Layer(l) | KnightUnit::Whole(l) => l,
            KnightUnit::Part(p) => {
                return format!(
                    "meeting part {} of {} at square {} ({} left states in all)",
                    p.part + 1,
                    p.parts,
                    p.square,
                    p.left_states
                )
            }
        };
        let (r, c) = self.square(u.square as usize);
        format!(
            "square {} (row {} col {}), {} states",
            u.square,
            r + 1,
            c + 1,
            u.states.len()
        )
    }
}
