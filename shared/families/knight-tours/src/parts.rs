//! Meeting units that name their part: the meeting of `--method halves`
//! shared between workers without carrying its states.
//!
//! **Why.** On 8 x 8 the layer where the halves meet holds 17.8 million
//! states; the meeting (nearly all the work, hours) goes in parts that never
//! merge, so each part can be a unit of its own at no extra work. Handed
//! back *with their states*, the parts would make the root unit's report
//! about 460 MB, one gRPC message the coordinator refuses
//! (docs/notes/knight-tours.md). So a part unit ([`MeetPart`]) carries no
//! state: it says "part `i` of `K` of the board's layer before square `p`,
//! sorted by key", plus the layer's size and a fingerprint of it, some 30
//! bytes encoded.
//!
//! **Determinism.** That layer is the whole board's sweep from the empty
//! frontier to the meeting square: a function of the board alone. Its keys
//! are distinct, so sorted by key it has one order, and part `i` of `K` is
//! the slice `[i n / K, (i + 1) n / K)` of it on every worker. A worker that
//! did not sweep it rebuilds it ([`rebuild`]: the half sweep again, about
//! 90 s on 8 x 8) once per process and job, with the turned right states on
//! the way, and checks its size and fingerprint against the unit's before
//! meeting anything: a different build of the family refuses the unit
//! instead of counting other states.
//!
//! **Accounting.** A part unit's `nodes` are the meeting's work on its part
//! only (inner states expanded and joined states, as the meeting in one
//! process counts them), so that the job's nodes are the root's half sweep
//! once plus every part's meeting, the same total as meeting the parts in
//! one process. The states a worker swept again to rebuild the layer go to
//! `TourSummary::rebuilt`, not to `nodes` (they depend on how many processes
//! met parts, so they are also left out of the replicas' comparison).

use std::sync::{Arc, Mutex, OnceLock};

use std::sync::atomic::Ordering;

use orchard_core::{Exploration, ExploreContext, FamilyError};
use serde::{Deserialize, Serialize};

use crate::frontier::Frontier;
use crate::join::{self, Meeting, Mirror};
use crate::sweep::Sweep;
use crate::table::Packed;
use crate::{KnightUnit, TourSummary};

/// Most part units the meeting layer is cut into: the root unit's report
/// carries them all, at most about 40 bytes each encoded, so it stays under
/// 160 KiB whatever `--meet-part-states` asks (parts then grow instead).
pub const MAX_MEET_PARTS: u32 = 4096;

/// A meeting unit: part `part` of `parts` of the whole board's layer before
/// square `square` (the meeting's left square), sorted by key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeetPart {
    /// The board as the job gives it.
    pub rows: u32,
    pub cols: u32,
    /// The meeting's left square.
    pub square: u32,
    /// States of the whole layer (every part's together).
    pub left_states: u64,
    /// [`fingerprint`] of the whole layer, sorted by key.
    pub fingerprint: u64,
    /// Which part, from 0.
    pub part: u32,
    /// How many parts the layer is cut into.
    pub parts: u32,
}

/// How many parts a layer of `len` states is cut into for parts of at most
/// `part_states` states: at least one, at most [`MAX_MEET_PARTS`].
pub fn parts_of(len: usize, part_states: usize) -> u32 {
    let k = len.div_ceil(part_states.max(1)).max(1);
    k.min(MAX_MEET_PARTS as usize) as u32
}

/// The range of part `part` of `parts` in a layer of `len` states: near
/// equal slices, in key order, covering the layer once.
pub fn part_range(len: usize, part: u32, parts: u32) -> std::ops::Range<usize> {
    let at = |i: u32| (len as u128 * u128::from(i) / u128::from(parts.max(1))) as usize;
    at(part)..at(part + 1)
}

/// A 64-bit fingerprint of states sorted by key: a multiply-xorshift mix
/// of every key and count in order (not cryptographic: it catches a worker
/// whose layer differs, not an adversary).
pub fn fingerprint(states: &[(u64, u128)]) -> u64 {
    fn mix(mut h: u64, x: u64) -> u64 {
        h ^= x;
        h = h.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        h ^ (h >> 29)
    }
    let mut h = mix(0x243f_6a88_85a3_08d3, states.len() as u64);
    for &(k, c) in states {
        h = mix(h, k);
        h = mix(h, c as u64);
        h = mix(h, (c >> 64) as u64);
    }
    h
}

/// The whole meeting layer, sorted by key, with its fingerprint.
#[derive(Debug)]
pub struct LeftLayer {
    pub states: Vec<(u64, u128)>,
    pub fingerprint: u64,
}

impl LeftLayer {
    /// `layer` sorted by key.
    pub fn new(layer: Packed) -> LeftLayer {
        let mut states: Vec<(u64, u128)> = layer.iter().collect();
        drop(layer);
        states.sort_unstable_by_key(|&(k, _)| k);
        let fingerprint = fingerprint(&states);
        LeftLayer {
            states,
            fingerprint,
        }
    }

    /// Bytes held, about.
    pub fn bytes(&self) -> u64 {
        (self.states.capacity() * std::mem::size_of::<(u64, u128)>()) as u64
    }

    /// The units naming every part of this layer, for parts of at most
    /// `part_states` states.
    pub fn units(&self, rows: u32, cols: u32, square: usize, part_states: usize) -> Vec<MeetPart> {
        let parts = parts_of(self.states.len(), part_states);
        (0..parts)
            .map(|part| MeetPart {
                rows,
                cols,
                square: square as u32,
                left_states: self.states.len() as u64,
                fingerprint: self.fingerprint,
                part,
                parts,
            })
            .collect()
    }

    /// The states of part `unit`, checked to be of this layer.
    pub fn part(&self, unit: &MeetPart) -> Result<&[(u64, u128)], FamilyError> {
        if unit.left_states != self.states.len() as u64 || unit.fingerprint != self.fingerprint {
            return Err(FamilyError::BadUnit(format!(
                "meeting part {} of {}: the layer before square {} swept here has {} states \
                 (fingerprint {:#018x}), the part was cut from one of {} (fingerprint {:#018x})",
                unit.part,
                unit.parts,
                unit.square,
                self.states.len(),
                self.fingerprint,
                unit.left_states,
                unit.fingerprint
            )));
        }
        Ok(&self.states[part_range(self.states.len(), unit.part, unit.parts)])
    }
}

/// Checks a part unit against the job (board `rows x cols`, meeting `m`, if
/// any) before anything is swept for it: a hostile or stale unit gets a
/// one-line error, never a panic or a count of other states.
pub fn check(rows: u32, cols: u32, m: Option<&Meeting>, u: &MeetPart) -> Result<(), FamilyError> {
    let bad = |why: String| Err(FamilyError::BadUnit(format!("meeting part: {why}")));
    if (u.rows, u.cols) != (rows, cols) {
        return bad(format!(
            "of a {} x {} board, this job is {rows} x {cols}",
            u.rows, u.cols
        ));
    }
    let Some(m) = m else {
        return bad("this job does not meet halves (--method sweep, or a short board)".into());
    };
    if u.square as usize != m.left {
        return bad(format!(
            "at square {}, the halves meet at square {}",
            u.square, m.left
        ));
    }
    if u.parts == 0 || u.parts > MAX_MEET_PARTS {
        return bad(format!("{} parts, expected 1 to {MAX_MEET_PARTS}", u.parts));
    }
    if u.part >= u.parts {
        return bad(format!(
            "part {} of {} (parts count from 0)",
            u.part, u.parts
        ));
    }
    if u.left_states < u64::from(u.parts) {
        return bad(format!(
            "{} parts of a layer of {} states",
            u.parts, u.left_states
        ));
    }
    Ok(())
}

/// The meeting layer and the right states kept for a job in one process:
/// swept once, by the root unit or by [`rebuild`].
#[derive(Debug, Default)]
pub struct Cache {
    /// Held while it is built, so that two units of one process wait for
    /// one rebuild instead of sweeping twice at once.
    left: Mutex<Option<Arc<LeftLayer>>>,
}

/// A clone shares the kept layer (it is never changed once kept).
impl Clone for Cache {
    fn clone(&self) -> Cache {
        let held = self.left.lock().unwrap_or_else(|e| e.into_inner());
        Cache {
            left: Mutex::new(held.clone()),
        }
    }
}

impl Cache {
    /// Keeps `layer` (the root unit's, or a rebuild's) unless one is kept.
    pub fn keep(&self, layer: Arc<LeftLayer>) {
        let mut held = self.left.lock().unwrap_or_else(|e| e.into_inner());
        if held.is_none() {
            *held = Some(layer);
        }
    }

    /// The kept layer, or `build`'s (kept), and the states `build` swept
    /// (0 when the layer was kept already).
    pub fn get_or_build(
        &self,
        build: impl FnOnce() -> Result<(LeftLayer, u64), FamilyError>,
    ) -> Result<(Arc<LeftLayer>, u64), FamilyError> {
        let mut held = self.left.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(l) = held.as_ref() {
            return Ok((l.clone(), 0));
        }
        let (layer, swept) = build()?;
        let layer = Arc::new(layer);
        *held = Some(layer.clone());
        Ok((layer, swept))
    }
}

/// The whole board's sweep from the empty frontier to `m.left`: the
/// meeting layer, sorted, and the states expanded. The right states are
/// kept in `mirror` on the way if none are.
pub fn rebuild(
    f: &Frontier,
    m: &Meeting,
    max_states: u64,
    mirror: &OnceLock<Mirror>,
    poll: &mut dyn FnMut(u64),
) -> Result<(LeftLayer, u64), FamilyError> {
    let mut sweep = Sweep::new(f, 0, &[(Frontier::START, 1)])?;
    loop {
        if sweep.square() == m.right && mirror.get().is_none() {
            let _ = mirror.set(Mirror::new(f, m, sweep.layer())?);
        }
        if sweep.square() >= m.left || sweep.done() {
            break;
        }
        sweep.advance(max_states, poll)?;
    }
    let nodes = sweep.nodes();
    Ok((LeftLayer::new(sweep.into_layer()), nodes))
}

/// Meets part `unit` (checked with [`check`] first): the layer and the
/// right states from `cache` and `mirror`, rebuilt here if this process has
/// none. Not split: a stop request hands it back whole, its meeting so far
/// lost (the meeting has no hand-back).
#[allow(clippy::too_many_arguments)]
pub fn explore(
    f: &Frontier,
    m: &Meeting,
    max_states: u64,
    mirror: &OnceLock<Mirror>,
    cache: &Cache,
    unit: &MeetPart,
    ctx: &ExploreContext<'_>,
) -> Result<Exploration<TourSummary, KnightUnit>, FamilyError> {
    let mut s = TourSummary::empty(f.n);
    if ctx.stop_requested() {
        return Ok(Exploration::Split {
            explored: s,
            rest: vec![KnightUnit::Part(unit.clone())],
        });
    }
    let (left, rebuilt) = cache.get_or_build(|| rebuild(f, m, max_states, mirror, &mut |_| {}))?;
    let part = left.part(unit)?;
    let right = match mirror.get() {
        Some(r) => r,
        None => {
            // A whole layer's sweep keeps the right states on its way when
            // it passes `m.right`; a whole layer handed back after that
            // square did not, nor does it when they are the meeting layer
            // itself (left == right): then they are turned from the kept
            // layer, or swept for.
            let r = if m.right == m.left {
                Mirror::new(f, m, &Packed::from_states(&left.states)?)?
            } else {
                crate::sweep::mirror_from_root(f, m, max_states)?
            };
            let _ = mirror.set(r);
            mirror.get().expect("just set")
        }
    };
    s.rebuilt = rebuilt;
    let met = join::meet(
        f,
        m,
        right,
        Packed::from_states(part)?,
        max_states,
        &mut |n| {
            ctx.progress.store(n, Ordering::Relaxed);
            !ctx.stop_requested()
        },
    )?;
    let Some(met) = met else {
        // Stopped (a shutdown, or the job cancelled; idle workers' split
        // requests never reach a part, see `split_on_idle`): the part is
        // handed back whole and met again from its start, as if its worker
        // had died, instead of holding the shutdown until it ends.
        return Ok(Exploration::Split {
            explored: s,
            rest: vec![KnightUnit::Part(unit.clone())],
        });
    };
    let v = m.left;
    s.nodes = met
        .inner_states
        .checked_add(met.joined)
        .ok_or(FamilyError::Overflow("knight-tours nodes"))?;
    s.states[v] = part.len() as u64;
    s.peak = part.len() as u64;
    s.peak_bytes = met.peak_bytes + right.bytes() as u64 + left.bytes();
    s.tours = met.tours;
    s.closed[v] = met.tours;
    ctx.progress.store(s.nodes, Ordering::Relaxed);
    Ok(Exploration::Finished(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_cover_the_layer_once_in_near_equal_slices() {
        for len in [1usize, 2, 7, 100, 4097, 10_000] {
            for size in [1usize, 3, 50, 1 << 20] {
                let k = parts_of(len, size);
                assert!((1..=MAX_MEET_PARTS).contains(&k));
                let mut next = 0;
                for i in 0..k {
                    let r = part_range(len, i, k);
                    assert_eq!(r.start, next, "{len} {size} {i}");
                    assert!(!r.is_empty());
                    if k < MAX_MEET_PARTS {
                        assert!(r.len() <= size, "{len} {size} {i}: {r:?}");
                    }
                    next = r.end;
                }
                assert_eq!(next, len);
            }
        }
    }

    #[test]
    fn the_fingerprint_sees_keys_counts_and_order() {
        let a = [(1u64, 5u128), (2, 7)];
        let f = fingerprint(&a);
        assert_ne!(f, fingerprint(&[(1, 5), (2, 8)]));
        assert_ne!(f, fingerprint(&[(1, 5), (3, 7)]));
        assert_ne!(f, fingerprint(&[(2, 7), (1, 5)]));
        assert_ne!(f, fingerprint(&[(1, 5)]));
        assert_ne!(
            fingerprint(&[(1, 1u128 << 64)]),
            fingerprint(&[(1, 1u128 << 65)])
        );
        assert_eq!(f, fingerprint(&a));
    }
}
