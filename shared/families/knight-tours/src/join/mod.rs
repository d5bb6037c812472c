//! The meeting of the two halves: the sweep run to the middle of the board
//! only, and the second half's tours read off the first half's layers by the
//! board's 180-degree symmetry.
//!
//! **The cut.** Square `v` turned half a turn is square `n - 1 - v` (the
//! order is column-major, so the turn reverses it), and the turned board is
//! the same board: the sweep of the turned board is the sweep of the board
//! itself. With the window `W = [p, p + w)` (`w = 2h + 1`), every edge of a
//! tour is of exactly one of three kinds:
//! - its lower end before `p`: chosen by the sweep up to square `p`, whose
//!   layer before `p` (the *left* states) holds, for every set of such edges
//!   that can still be completed, the degrees in `W` and which ends of `W`
//!   its paths join (no such edge reaches past `W`: an edge spans at most
//!   `w` squares);
//! - its upper end at or after `p + w`: by the symmetry, the edges whose
//!   lower end is before `q = n - w - p` on the turned board, that is the
//!   sweep's own layer before `q` read backwards (the *right* states: slot
//!   `i` of a state before `q` is square `q + i`, turned `p + w - 1 - i`);
//! - both ends in `W`: chosen here, the *inner* edges.
//!
//! So the tours are the triples (left state, inner edges, right state) in
//! which every square of `W` gets two edges in all and the paths close into
//! one cycle, each counted with the product of the two states' counts: the
//! squares before `p` are full in every left state and those after `p + w`
//! in every right state, and neither half holds a cycle (the sweep closes
//! none before the last edge), so the union is one Hamiltonian cycle exactly
//! when following the paths from end to end visits every end of `W`. With
//! `p = ceil((n - w) / 2)`, `q` is `p` or `p - 1`: the sweep stops at the
//! board's narrowest layers instead of going through its widest (8 x 8: 18
//! and 23 million states at squares 24 and 23, against hundreds of millions
//! in the middle columns), and sweeps half the board.
//!
//! The pieces, one concept a file: what a window state offers or needs
//! across the cut, its class and the pairing of its path ends
//! (`interface`); where the halves meet and the sweep over the window's
//! inner edges (`inner`, [`Meeting`]); the right states grouped by class
//! (`mirror`, [`Mirror`]). This file joins them: [`meet`] sweeps the inner
//! edges from the left states and checks each joined state against the
//! right states of its class. Counts are exact: products and sums of
//! `u128`, checked.

mod inner;
mod interface;
mod mirror;

use orchard_core::FamilyError;

use crate::frontier::Frontier;
use crate::table::{Packed, Table};

pub use inner::Meeting;
pub use interface::one_cycle;
pub use mirror::Mirror;

use interface::interface;

/// What the meeting did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Met {
    /// Tours counted, weighted.
    pub tours: u128,
    /// States expanded by the inner edges' sweep.
    pub inner_states: u64,
    /// Joined states checked against the right states.
    pub joined: u64,
    /// Pairs of (joined state, right state) of one class walked.
    pub pairs: u64,
    /// Joined states whose class some right state has.
    pub classes_found: u64,
    /// Joined states that close a tour with at least one right state.
    pub matched: u64,
    /// Most bytes the inner sweep's layers held at once.
    pub peak_bytes: u64,
}

/// Left states met at once, at most, by [`meet_in_parts`]: the inner
/// sweep's layers grow to about 20-30 times the left states it starts from
/// (7 x 8: 847,118 left states, 24 million at the widest;
/// docs/notes/knight-tours.md), so
/// a part of 2^20 left states holds about a GiB; more parts cost more work
/// (states of different parts never merge: 4 parts cost 1.5 times the inner
/// states on 6 x 8, 16 parts 2.4 times).
pub const MEET_PART_STATES: usize = 1 << 20;

impl Met {
    /// Adds the counts of `other` (the peak is the larger one).
    fn add(&mut self, other: &Met) -> Result<(), FamilyError> {
        let overflow = || FamilyError::Overflow("knight-tours meeting");
        self.tours = self.tours.checked_add(other.tours).ok_or_else(overflow)?;
        for (a, b) in [
            (&mut self.inner_states, other.inner_states),
            (&mut self.joined, other.joined),
            (&mut self.pairs, other.pairs),
            (&mut self.classes_found, other.classes_found),
            (&mut self.matched, other.matched),
        ] {
            *a = a.checked_add(b).ok_or_else(overflow)?;
        }
        self.peak_bytes = self.peak_bytes.max(other.peak_bytes);
        Ok(())
    }
}

/// [`meet`] of `left` cut into parts of at most `part_states` states, by
/// key, as [`crate::parts`] cuts them (one part: `meet` itself), one part after the other: the memory of
/// one part's inner sweep at a time, plus the sorted copy of the left
/// states (32 bytes each, counted in the peak).
pub fn meet_in_parts(
    f: &Frontier,
    m: &Meeting,
    mirror: &Mirror,
    left: Packed,
    part_states: usize,
    max_states: u64,
    poll: &mut dyn FnMut(u64) -> bool,
) -> Result<Option<Met>, FamilyError> {
    let part_states = part_states.max(1);
    if left.len() <= part_states {
        return meet(f, m, mirror, left, max_states, poll);
    }
    let mut states: Vec<(u64, u128)> = left.iter().collect();
    drop(left);
    states.sort_unstable();
    let copy_bytes = (states.capacity() * std::mem::size_of::<(u64, u128)>()) as u64;
    let mut met = Met::default();
    // Cut as the part units are (module `parts`), so that meeting in one
    // process and in part units do the same work.
    let parts = crate::parts::parts_of(states.len(), part_states);
    for i in 0..parts {
        let part = &states[crate::parts::part_range(states.len(), i, parts)];
        let base = met.inner_states;
        let Some(x) = meet(
            f,
            m,
            mirror,
            Packed::from_states(part)?,
            max_states,
            &mut |n| poll(base + n),
        )?
        else {
            return Ok(None);
        };
        met.add(&x)?;
    }
    met.peak_bytes += copy_bytes;
    Ok(Some(met))
}

/// The tours whose left states are `left` (states before `m.left`, any
/// part of that layer) and whose right states are `mirror` (all of them).
/// More than `max_states` states in a layer of the inner sweep is an error.
/// `poll` gets the states expanded so far now and then (after each shard of
/// a layer: a few seconds of work at most); when it answers false the
/// meeting is abandoned and `None` returned (the meeting has no hand-back:
/// what it did is lost).
pub fn meet(
    f: &Frontier,
    m: &Meeting,
    mirror: &Mirror,
    left: Packed,
    max_states: u64,
    poll: &mut dyn FnMut(u64) -> bool,
) -> Result<Option<Met>, FamilyError> {
    let mut met = Met::default();
    let mut layer = left;
    for a in 0..m.w {
        let mut next = Table::with_capacity(layer.len());
        let mut error = None;
        let consumed = layer.consume(|shard, wide, held| {
            for slot in shard {
                let count = Packed::count_of(wide, slot);
                let s = f.decode(slot.key).expect("keys in a layer decode");
                met.inner_states += 1;
                m.inner_step(a, &s, mirror, &mut |t| {
                    if let Err(e) = next.add(f.encode(t), count) {
                        error = Some(e);
                    }
                });
                if let Some(e) = error.take() {
                    return Err(Abandoned::Error(e));
                }
                if next.len() as u64 > max_states {
                    return Err(Abandoned::Error(FamilyError::Capacity(format!(
                        "more than {max_states} states of the meeting after slot {a}"
                    ))));
                }
            }
            met.peak_bytes = met.peak_bytes.max((held + next.bytes()) as u64);
            if !poll(met.inner_states) {
                return Err(Abandoned::Stop);
            }
            Ok(())
        });
        match consumed {
            Ok(()) => {}
            Err(Abandoned::Stop) => return Ok(None),
            Err(Abandoned::Error(e)) => return Err(e),
        }
        layer = next.into_packed();
    }
    let overflow = || FamilyError::Overflow("knight-tours tours");
    for (key, count) in layer.iter() {
        let s = f.decode(key).expect("keys in a layer decode");
        let (class, pairing, pairs) = interface(&s, m.w, true);
        met.joined += 1;
        if pairs == 0 {
            // No path crosses into the right part: no right state has no
            // ends (its squares are all full and it holds no cycle).
            continue;
        }
        let (sum, walked) = mirror.matching(class, pairing, pairs)?;
        if walked > 0 {
            met.classes_found += 1;
        }
        met.pairs += walked;
        if sum > 0 {
            met.matched += 1;
            let t = count.checked_mul(sum).ok_or_else(overflow)?;
            met.tours = met.tours.checked_add(t).ok_or_else(overflow)?;
        }
    }
    Ok(Some(met))
}

/// Why the inner sweep's consumption of a layer ended early.
enum Abandoned {
    /// `poll` asked for a stop.
    Stop,
    Error(FamilyError),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layers of the whole board's sweep before `left` and `right`.
    pub(super) fn halves_of(f: &Frontier, m: &Meeting) -> (Packed, Mirror) {
        let mut sweep = crate::Sweep::new(f, 0, &[(Frontier::START, 1)]).unwrap();
        let mut mirror = None;
        while sweep.square() < m.left {
            if sweep.square() == m.right {
                mirror = Some(Mirror::new(f, m, sweep.layer()).unwrap());
            }
            let a = sweep.advance(u64::MAX, &mut |_| {}).unwrap();
            assert_eq!(a.closed, 0, "no tour closes before the last square");
        }
        if m.right == m.left {
            mirror = Some(Mirror::new(f, m, sweep.layer()).unwrap());
        }
        (sweep.into_layer(), mirror.unwrap())
    }

    #[test]
    fn parts_of_the_left_layer_meet_to_the_same_count() {
        for (r, c) in [(6, 6), (5, 8), (3, 12)] {
            let f = Frontier::new(r, c);
            let m = Meeting::new(&f).unwrap();
            let want = u128::from(crate::reference::count(r, c));
            let (left, mirror) = halves_of(&f, &m);
            let n = left.len();
            assert!(n > 20, "{r} x {c}: {n} left states");
            let whole = meet(&f, &m, &mirror, left.clone(), u64::MAX, &mut |_| true)
                .unwrap()
                .unwrap();
            assert_eq!(whole.tours, want, "{r} x {c}");
            for part in [5, n / 3, n - 1, n] {
                let met =
                    meet_in_parts(&f, &m, &mirror, left.clone(), part, u64::MAX, &mut |_| true)
                        .unwrap()
                        .unwrap();
                assert_eq!(met.tours, want, "{r} x {c}, parts of {part}");
                if part < n {
                    // Parts never merge: at least the work of one part.
                    assert!(met.inner_states >= whole.inner_states, "{r} x {c}");
                } else {
                    assert_eq!(met, whole);
                }
            }
            // The inner sweep's cap is honoured.
            let capped = meet(&f, &m, &mirror, left.clone(), 3, &mut |_| true);
            assert!(
                matches!(capped, Err(FamilyError::Capacity(_))),
                "{capped:?}"
            );
            // A stop abandons the meeting, in one part or in several.
            let mut polls = 0;
            let stopped = meet(&f, &m, &mirror, left.clone(), u64::MAX, &mut |_| {
                polls += 1;
                polls < 2
            });
            assert_eq!(stopped.unwrap(), None, "{r} x {c}");
            let stopped = meet_in_parts(&f, &m, &mirror, left, 5, u64::MAX, &mut |_| false);
            assert_eq!(stopped.unwrap(), None, "{r} x {c}");
        }
    }
}
