//! Exploring one unit: the frontier sweep from the unit's square to the end
//! of the board, with the budget, the stop flag and the hand-back.

use std::sync::atomic::Ordering;
use std::sync::OnceLock;

use orchard_core::{Exploration, ExploreContext, FamilyError};

use crate::frontier::Frontier;
use crate::join::{self, Meeting, Mirror};
use crate::parts::{self, LeftLayer};
use crate::table::{Packed, Table};
use crate::{KnightUnit, Layer, TourSummary, MAX_UNIT_STATES, PEAK_BYTES_PER_STATE};

/// States expanded between two publications of the progress.
const POLL_INTERVAL: u64 = 1 << 12;

/// States a unit expands before it answers a stop request (a budget may
/// ask for fewer): an idle worker asks a running unit to split about once a
/// second, and a frontier sweep cut into two units would do its remaining
/// work twice (their states never merge), so instead the whole next layer
/// moves to the other worker, at most once per quantum (a few seconds), so
/// that moving it (sorting, storing, reloading its states) stays a small
/// part of the work.
const MIN_QUANTUM: u64 = 1 << 22;

/// Checks a unit against the board: its square on the board, every key a
/// state the sweep can hold there, no zero count.
pub fn check(f: &Frontier, unit: &Layer) -> Result<(), FamilyError> {
    let p = unit.square as usize;
    if p > f.n {
        return Err(FamilyError::BadUnit(format!(
            "square {p} on a board of {} squares",
            f.n
        )));
    }
    for &(k, c) in &unit.states {
        if !f.valid_at(p, k) {
            return Err(FamilyError::BadUnit(format!(
                "key {k:#x} is no frontier state before square {p}"
            )));
        }
        if c == 0 {
            return Err(FamilyError::BadUnit(format!("state {k:#x} with count 0")));
        }
    }
    Ok(())
}

/// Cuts a set of states into units of at most [`MAX_UNIT_STATES`] states
/// (one unit when it fits), sorted by key. The key has the far squares of
/// the window in its high bits, so a unit holds states that agree on the
/// squares the sweep reaches last, and two units' sweeps stay apart for as
/// long as possible (states of different units never merge: the price of a
/// cut).
pub fn units_of(square: usize, mut states: Vec<(u64, u128)>) -> Vec<Layer> {
    if states.is_empty() {
        return Vec::new();
    }
    states.sort_unstable_by_key(|&(k, _)| k);
    states
        .chunks(MAX_UNIT_STATES)
        .map(|c| Layer {
            square: square as u32,
            states: c.to_vec(),
        })
        .collect()
}

/// The sweep of a set of states from one square on, a layer at a time:
/// the layer before the next square packed (see `table`), expanded into a
/// table that becomes the next layer.
pub struct Sweep<'f> {
    f: &'f Frontier,
    square: usize,
    layer: Packed,
    /// States of each layer so far, from the first square's (for the guess
    /// of the next layer's size).
    sizes: Vec<usize>,
    nodes: u64,
}

/// What expanding one layer did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Advance {
    /// The square whose layer was expanded.
    pub square: usize,
    /// States expanded (the layer's size).
    pub expanded: u64,
    /// Tours closed at the square, weighted by their states' counts.
    pub closed: u128,
    /// The most bytes the layers held while the square was processed (the
    /// packed layer still unexpanded and the table being built).
    pub peak_bytes: u64,
}

impl<'f> Sweep<'f> {
    /// The sweep of `states` (the layer before `square`).
    pub fn new(
        f: &'f Frontier,
        square: usize,
        states: &[(u64, u128)],
    ) -> Result<Self, FamilyError> {
        let layer = Packed::from_states(states)?;
        Ok(Sweep {
            f,
            square,
            sizes: vec![layer.len()],
            layer,
            nodes: 0,
        })
    }

    /// The square whose layer is held (the next to be processed).
    pub fn square(&self) -> usize {
        self.square
    }

    /// The layer before [`Sweep::square`].
    pub fn layer(&self) -> &Packed {
        &self.layer
    }

    /// The layer before [`Sweep::square`], the sweep over.
    pub fn into_layer(self) -> Packed {
        self.layer
    }

    /// States expanded so far.
    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    /// Whether the sweep is over: the last square processed, or no state
    /// left.
    pub fn done(&self) -> bool {
        self.square >= self.f.n || self.layer.is_empty()
    }

    /// A guess of the next layer's size: the current one times the growth
    /// one column back at the same row (layers rise and fall with a period
    /// of a column), or the last growth before a column has been seen.
    fn guess_next(&self) -> usize {
        let n = self.sizes.len();
        let h = self.f.h;
        let ratio = |a: usize, b: usize| self.sizes[b] as f64 / self.sizes[a].max(1) as f64;
        let r = if n > h {
            ratio(n - 1 - h, n - h)
        } else if n > 1 {
            ratio(n - 2, n - 1)
        } else {
            1.0
        };
        (self.layer.len() as f64 * r.clamp(0.1, 8.0)) as usize
    }

    /// Processes the next square: expands every state of the layer into
    /// the next layer. More than `max_states` states in the next layer is
    /// an error (`Capacity`). `poll` is called with the states expanded so
    /// far every [`POLL_INTERVAL`] states.
    pub fn advance(
        &mut self,
        max_states: u64,
        poll: &mut dyn FnMut(u64),
    ) -> Result<Advance, FamilyError> {
        let f = self.f;
        let v = self.square;
        let mut next = Table::with_capacity(self.guess_next());
        let mut out = Advance {
            square: v,
            expanded: 0,
            closed: 0,
            peak_bytes: 0,
        };
        let mut nodes = self.nodes;
        let mut next_poll = nodes - nodes % POLL_INTERVAL + POLL_INTERVAL;
        let layer = std::mem::take(&mut self.layer);
        layer.consume(|shard, wide, held| {
            let mut error = None;
            for slot in shard {
                let count = Packed::count_of(wide, slot);
                nodes += 1;
                out.expanded += 1;
                let r = f.step(v, slot.key, &mut |k| {
                    if let Err(e) = next.add(k, count) {
                        error = Some(e);
                    }
                });
                if let Some(e) = error.take() {
                    return Err(e);
                }
                if r.closed > 0 {
                    let overflow = || FamilyError::Overflow("knight-tours tours");
                    let t = count
                        .checked_mul(u128::from(r.closed))
                        .ok_or_else(overflow)?;
                    out.closed = out.closed.checked_add(t).ok_or_else(overflow)?;
                }
                if next.len() as u64 > max_states {
                    return Err(FamilyError::Capacity(format!(
                        "more than {max_states} frontier states after square {v}, \
                         {} MiB of tables (raise --max-states if the memory allows: \
                         about {} bytes a state at the peak)",
                        (held + next.bytes()) >> 20,
                        PEAK_BYTES_PER_STATE
                    )));
                }
                if nodes >= next_poll {
                    next_poll += POLL_INTERVAL;
                    poll(nodes);
                }
            }
            out.peak_bytes = out.peak_bytes.max((held + next.bytes()) as u64);
            Ok(())
        })?;
        self.nodes = nodes;
        self.layer = next.into_packed();
        self.sizes.push(self.layer.len());
        self.square += 1;
        Ok(out)
    }
}

/// How a unit's sweep ends: at the last square, or by meeting the turned
/// layer in the middle (see `join`).
pub enum Ending<'a> {
    /// Sweep every square.
    Sweep,
    /// Sweep to `meeting.left` and meet the right states there. `mirror`
    /// caches the right states for the job (they are one layer of the
    /// whole board's sweep, whatever the unit). A unit of a whole layer
    /// (the root, or a whole layer handed back in one unit) does not
    /// meet: its layer at `meeting.left` is the whole meeting layer, which
    /// it keeps in `cache` and hands back as units naming its parts of at
    /// most `part_states` states (module `parts`); any other unit meets its
    /// own layer there in parts of that size, one after the other.
    Meet {
        meeting: &'a Meeting,
        mirror: &'a OnceLock<Mirror>,
        cache: &'a parts::Cache,
        part_states: usize,
        /// The board as the job gives it (rows, cols), named by the parts.
        board: (u32, u32),
    },
}

/// The right states of `meeting`: the root sweep to `meeting.right`.
pub(crate) fn mirror_from_root(
    f: &Frontier,
    meeting: &Meeting,
    max_states: u64,
) -> Result<Mirror, FamilyError> {
    let mut sweep = Sweep::new(f, 0, &[(Frontier::START, 1)])?;
    while sweep.square() < meeting.right && !sweep.done() {
        sweep.advance(max_states, &mut |_| {})?;
    }
    Mirror::new(f, meeting, sweep.layer())
}

/// The sweep of `unit` to the end (or to the meeting, then the meeting),
/// or until the budget runs out or a stop is requested; both are honoured
/// between squares only, when the next layer fits one unit (see
/// "Hand-backs" in the crate documentation): then that layer is handed back
/// as one unit and the summary covers the tours closed so far.
pub fn explore(
    f: &Frontier,
    max_states: u64,
    unit: &Layer,
    whole: bool,
    ctx: &ExploreContext<'_>,
    ending: Ending<'_>,
) -> Result<Exploration<TourSummary, KnightUnit>, FamilyError> {
    check(f, unit)?;
    let mut s = TourSummary::empty(f.n);
    // The root's states are the whole layer before square 0, whatever the
    // unit says.
    let whole_layer = whole || (unit.square == 0 && unit.states == [(Frontier::START, 1)]);
    let as_unit = |l: Layer| {
        if whole {
            KnightUnit::Whole(l)
        } else {
            KnightUnit::Layer(l)
        }
    };
    if ctx.stop_requested() {
        return Ok(Exploration::Split {
            explored: s,
            rest: vec![as_unit(unit.clone())],
        });
    }
    let overflow = || FamilyError::Overflow("knight-tours tours");
    let budget = ctx.budget.max(1);
    let quantum = budget.min(MIN_QUANTUM);
    let stop_at = match ending {
        Ending::Meet { meeting, .. } if unit.square as usize <= meeting.left => meeting.left,
        _ => f.n,
    };
    let mut sweep = Sweep::new(f, unit.square as usize, &unit.states)?;
    let mut mirror_bytes = 0;
    loop {
        let v = sweep.square();
        if sweep.done() {
            break;
        }
        if v > unit.square as usize
            && sweep.layer().len() <= MAX_UNIT_STATES
            && (s.nodes >= budget || (s.nodes >= quantum && ctx.stop_requested()))
        {
            ctx.progress.store(s.nodes, Ordering::Relaxed);
            let rest = units_of(v, sweep.layer().iter().collect());
            // A whole layer handed back in one unit is still whole.
            let rest = if whole_layer && rest.len() == 1 {
                rest.into_iter().map(KnightUnit::Whole).collect()
            } else {
                rest.into_iter().map(KnightUnit::Layer).collect()
            };
            return Ok(Exploration::new(s, rest));
        }
        if v == stop_at {
            break;
        }
        if let Ending::Meet {
            meeting, mirror, ..
        } = ending
        {
            // A whole layer's sweep before the right square is the whole
            // layer: the right states, for this unit and the job's others.
            if whole_layer && v == meeting.right && stop_at == meeting.left {
                if mirror.get().is_none() {
                    let _ = mirror.set(Mirror::new(f, meeting, sweep.layer())?);
                }
                mirror_bytes = mirror.get().map_or(0, |m| m.bytes()) as u64;
            }
        }
        s.peak = s.peak.max(sweep.layer().len() as u64);
        let a = sweep.advance(max_states, &mut |n| {
            ctx.progress.store(n, Ordering::Relaxed)
        })?;
        s.nodes = sweep.nodes();
        s.states[v] += a.expanded;
        s.peak_bytes = s.peak_bytes.max(a.peak_bytes + mirror_bytes);
        if a.closed > 0 {
            s.tours = s.tours.checked_add(a.closed).ok_or_else(overflow)?;
            s.closed[v] = s.closed[v].checked_add(a.closed).ok_or_else(overflow)?;
        }
    }
    if let Ending::Meet {
        meeting,
        mirror,
        cache,
        part_states,
        board: (rows, cols),
    } = ending
    {
        if sweep.square() == stop_at && stop_at == meeting.left && !sweep.layer().is_empty() {
            let v = stop_at;
            if whole_layer {
                // The whole meeting layer: kept for this process's part
                // units, and handed back as units naming its parts.
                ctx.progress.store(s.nodes, Ordering::Relaxed);
                let left = std::sync::Arc::new(LeftLayer::new(sweep.into_layer()));
                s.peak_bytes = s.peak_bytes.max(left.bytes() + mirror_bytes);
                let rest = left
                    .units(rows, cols, v, part_states)
                    .into_iter()
                    .map(KnightUnit::Part)
                    .collect();
                cache.keep(left);
                return Ok(Exploration::new(s, rest));
            }
            let right = match mirror.get() {
                Some(m) => m,
                None => {
                    let _ = mirror.set(mirror_from_root(f, meeting, max_states)?);
                    mirror.get().expect("just set")
                }
            };
            s.peak = s.peak.max(sweep.layer().len() as u64);
            s.states[v] += sweep.layer().len() as u64;
            let base = s.nodes;
            let met = join::meet_in_parts(
                f,
                meeting,
                right,
                sweep.into_layer(),
                part_states,
                max_states,
                // Met to the end whatever a stop says, unlike a part unit
                // (handed back whole): this unit swept its layer itself, a
                // piece of the meeting layer (a whole one is handed back as
                // part units above), which a hand-back would lose too.
                &mut |n| {
                    ctx.progress.store(base + n, Ordering::Relaxed);
                    true
                },
            )?
            .expect("a meeting that is never stopped ends");
            s.nodes = s
                .nodes
                .checked_add(met.inner_states + met.joined)
                .ok_or(FamilyError::Overflow("knight-tours nodes"))?;
            s.peak_bytes = s.peak_bytes.max(met.peak_bytes + right.bytes() as u64);
            s.tours = s.tours.checked_add(met.tours).ok_or_else(overflow)?;
            s.closed[v] = s.closed[v].checked_add(met.tours).ok_or_else(overflow)?;
        }
    }
    ctx.progress.store(s.nodes, Ordering::Relaxed);
    Ok(Exploration::Finished(s))
}
