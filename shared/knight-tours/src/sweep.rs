//! Exploring one unit: the frontier sweep from the unit's square to the end
//! of the board, with the budget, the stop flag and the hand-back.

use std::sync::atomic::Ordering;

use orchard_core::{Exploration, ExploreContext, FamilyError};

use crate::frontier::Frontier;
use crate::table::Table;
use crate::{Layer, TourSummary, MAX_UNIT_STATES};

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

/// The sweep of `unit` to the end, or until the budget runs out or a stop
/// is requested; both are honoured between squares only, when the next
/// layer fits one unit (see "Hand-backs" in the crate documentation): then
/// that layer is handed back as one unit and the summary covers the tours
/// closed so far.
pub fn explore(
    f: &Frontier,
    max_states: u64,
    unit: &Layer,
    ctx: &ExploreContext<'_>,
) -> Result<Exploration<TourSummary, Layer>, FamilyError> {
    check(f, unit)?;
    let mut s = TourSummary::empty(f.n);
    if ctx.stop_requested() {
        return Ok(Exploration::Split {
            explored: s,
            rest: vec![unit.clone()],
        });
    }
    let budget = ctx.budget.max(1);
    let quantum = budget.min(MIN_QUANTUM);
    let mut cur = Table::with_capacity(unit.states.len());
    for &(k, c) in &unit.states {
        cur.add(k, c)?;
    }
    let mut next_poll = POLL_INTERVAL;
    for v in unit.square as usize..f.n {
        if cur.is_empty() {
            break;
        }
        if v > unit.square as usize
            && cur.len() <= MAX_UNIT_STATES
            && (s.nodes >= budget || (s.nodes >= quantum && ctx.stop_requested()))
        {
            ctx.progress.store(s.nodes, Ordering::Relaxed);
            return Ok(Exploration::new(s, units_of(v, cur.iter().collect())));
        }
        let width = cur.len() as u64;
        s.peak = s.peak.max(width);
        let mut next = Table::with_capacity(cur.len());
        let mut error = None;
        for i in 0..cur.slots() {
            let Some((key, count)) = cur.slot(i) else {
                continue;
            };
            s.nodes += 1;
            s.states[v] += 1;
            let r = f.step(v, key, &mut |k| {
                if let Err(e) = next.add(k, count) {
                    error = Some(e);
                }
            });
            if let Some(e) = error.take() {
                return Err(e);
            }
            if r.closed > 0 {
                let t = count
                    .checked_mul(u128::from(r.closed))
                    .ok_or(FamilyError::Overflow("knight-tours tours"))?;
                s.tours = s
                    .tours
                    .checked_add(t)
                    .ok_or(FamilyError::Overflow("knight-tours tours"))?;
                s.closed[v] = s.closed[v]
                    .checked_add(t)
                    .ok_or(FamilyError::Overflow("knight-tours tours"))?;
            }
            if next.len() as u64 > max_states {
                return Err(FamilyError::Capacity(format!(
                    "more than {max_states} frontier states after square {v} \
                     (raise --max-states if the memory allows: about 64 bytes a state)"
                )));
            }
            if s.nodes >= next_poll {
                next_poll = s.nodes + POLL_INTERVAL;
                ctx.progress.store(s.nodes, Ordering::Relaxed);
            }
        }
        cur = next;
    }
    ctx.progress.store(s.nodes, Ordering::Relaxed);
    Ok(Exploration::Finished(s))
}
