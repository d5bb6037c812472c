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
//! **Inner edges** are added by a short sweep of their own over the window's
//! squares in order ([`Meeting::inner_step`]), which merges equal states as
//! the main sweep does: after slot `a` its degree is final, and so is the
//! number of right edges it needs (`2 - degree`), which must not exceed its
//! neighbours past `W`; every later slot must still be able to get what it
//! lacks. The states it ends with (the left and inner edges, *joined*
//! states) are keyed by what they need from the right: the needed degree of
//! every slot (the *class*) and the pairing of their path ends.
//!
//! **The right states** are grouped by class ([`Mirror`]); a joined state
//! is checked against every right state of its class by walking the cycle
//! through the ends ([`one_cycle`]). Counts are exact: products and sums of
//! `u128`, checked.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use orchard_core::FamilyError;

use crate::frontier::{Frontier, Slots, EMPTY, FULL, MAX_W};
use crate::table::{Packed, Table, WIDE};

/// A hasher for the meeting's `u64` class keys: one multiplication by the
/// golden ratio, as the sweep's tables hash their keys (`table::hash`).
/// The standard library's SipHash, safe against keys chosen by an
/// attacker, cost about a tenth of the meeting's time in its two lookups
/// a state; these keys come from the search itself.
#[derive(Default, Clone, Copy)]
struct ClassHasher(u64);

impl Hasher for ClassHasher {
    #[inline(always)]
    fn finish(&self) -> u64 {
        self.0
    }

    #[inline(always)]
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0 ^ x).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
}

type ClassMap<V> = HashMap<u64, V, BuildHasherDefault<ClassHasher>>;
type ClassSet = HashSet<u64, BuildHasherDefault<ClassHasher>>;

/// Where the halves meet on one board, and the window's inner edges.
#[derive(Debug, Clone)]
pub struct Meeting {
    /// `p`: the left states are the sweep's layer before this square.
    pub left: usize,
    /// `q = n - w - p`: the right states are the layer before this square,
    /// turned.
    pub right: usize,
    w: usize,
    /// The window's slots in the order the inner sweep takes them.
    order: Vec<u8>,
    /// Per slot, its place in `order`.
    rank: Vec<u8>,
    /// Per window slot, every slot it has an edge to.
    inner_adj: Vec<Vec<u8>>,
    /// Per window slot, the set (bit per slot) of its inner neighbours.
    inner_bits: Vec<u32>,
    /// Per window slot, its neighbours after the window (right edges it
    /// can get at most).
    right_degree: Vec<u8>,
    /// Per step `k` of the inner sweep, the slots not yet taken after it
    /// (`order[k + 1..]`) and those not taken before it (`order[k..]`).
    later: Vec<u32>,
    from: Vec<u32>,
    /// Per step `k` of the inner sweep, the class bits of the slots taken
    /// by then (`order[..=k]`).
    masks: Vec<u64>,
}

/// A right state, turned: its class, the pairing of its ends, its count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Half {
    class: u64,
    pairing: u64,
    /// The count, or [`WIDE`]: then it is in `Mirror::wide`.
    count: u64,
}

/// The right states, turned and grouped by class.
#[derive(Debug, Clone, Default)]
pub struct Mirror {
    halves: Vec<Half>,
    /// Class to the range of `halves` holding it.
    classes: ClassMap<(u32, u32)>,
    wide: HashMap<(u64, u64), u128>,
    /// Per step `k` of the inner sweep, the classes' bits of the slots
    /// taken by then: a joined state whose taken slots need what no right
    /// state gives is dropped at once instead of at the end.
    prefixes: Vec<ClassSet>,
}

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

#[inline(always)]
fn degree(x: u8) -> u64 {
    match x {
        EMPTY => 0,
        FULL => 2,
        _ => 1,
    }
}

/// The class of `s` seen from the right (`need`: the degrees the right
/// must add, `2 - degree`; otherwise the degrees themselves) and the
/// pairing of its ends: the ends numbered in slot order, entry `k` (4 bits)
/// the number of the end paired with end `k`. Also the number of pairs.
#[inline]
fn interface(s: &Slots, w: usize, need: bool) -> (u64, u64, u32) {
    let mut class = 0u64;
    let mut pairing = 0u64;
    let mut first_end = [u8::MAX; 16];
    let mut ends = 0u64;
    for (i, &x) in s.iter().enumerate().take(w) {
        let d = degree(x);
        let c = if need { 2 - d } else { d };
        class |= c << (2 * i);
        if d == 1 {
            let l = x as usize;
            if first_end[l] == u8::MAX {
                first_end[l] = ends as u8;
            } else {
                let k = u64::from(first_end[l]);
                pairing |= k << (4 * ends) | ends << (4 * k);
            }
            ends += 1;
        }
    }
    (class, pairing, (ends / 2) as u32)
}

/// The class of `s` seen from the right ([`interface`]'s first part
/// alone, without the pairing).
#[inline]
fn need_class(s: &Slots, w: usize) -> u64 {
    let mut class = 0u64;
    for (i, &x) in s.iter().enumerate().take(w) {
        class |= (2 - degree(x)) << (2 * i);
    }
    class
}

/// Whether the paths of two pairings of the same `pairs * 2` ends close
/// into one cycle through all of them.
#[inline(always)]
pub fn one_cycle(a: u64, b: u64, pairs: u32) -> bool {
    let mut x = 0u64;
    let mut steps = 0;
    loop {
        let y = (a >> (4 * x)) & 15;
        x = (b >> (4 * y)) & 15;
        steps += 1;
        if x == 0 {
            return steps == pairs;
        }
    }
}

/// Joins slots `a` and `b` by an edge (neither full); `Err` if it closes a
/// cycle.
#[inline]
fn link(s: &mut Slots, a: usize, b: usize, w: usize) -> Result<(), ()> {
    match (s[a], s[b]) {
        (EMPTY, EMPTY) => {
            // At most 8 paths fit the window, labelled from 1; a step adds
            // at most one new path (see `inner_step`).
            s[a] = 9;
            s[b] = 9;
        }
        (EMPTY, y) => {
            s[a] = y;
            s[b] = FULL;
        }
        (x, EMPTY) => {
            s[b] = x;
            s[a] = FULL;
        }
        (x, y) if x == y => return Err(()),
        (x, y) => {
            s[a] = FULL;
            s[b] = FULL;
            if let Some(other) = s[..w].iter_mut().find(|z| **z == y) {
                *other = x;
            }
        }
    }
    Ok(())
}

impl Meeting {
    /// Where the halves of `f` meet; `None` when the board is too short
    /// for two halves beside the window (fewer than `w + 2` squares).
    pub fn new(f: &Frontier) -> Option<Meeting> {
        if f.n < f.w + 2 || f.w > MAX_W {
            return None;
        }
        let left = (f.n - f.w).div_ceil(2);
        let right = f.n - f.w - left;
        let w = f.w;
        let in_window = |x: usize| x >= left && x < left + w;
        let mut inner_adj = vec![Vec::new(); w];
        let mut right_degree = vec![0u8; w];
        for a in 0..w {
            let u = left + a;
            for &x in &f.adj[u] {
                let x = x as usize;
                if in_window(x) {
                    inner_adj[a].push((x - left) as u8);
                } else if x >= left + w {
                    right_degree[a] += 1;
                }
            }
        }
        // Slot order: the other orders tried (from the far end, backwards)
        // expanded 26-33% more inner states on 6 x 8
        // (docs/notes/knight-tours.md).
        let order: Vec<u8> = (0..w as u8).collect();
        let mut rank = vec![0u8; w];
        for (k, &x) in order.iter().enumerate() {
            rank[x as usize] = k as u8;
        }
        let mut masks = Vec::with_capacity(w);
        let mut mask = 0u64;
        for &x in &order {
            mask |= 3 << (2 * x);
            masks.push(mask);
        }
        let inner_bits = inner_adj
            .iter()
            .map(|adj| adj.iter().fold(0u32, |bits, &c| bits | 1 << c))
            .collect();
        let after = |k: usize| order[k..].iter().fold(0u32, |bits, &x| bits | 1 << x);
        let from = (0..w).map(after).collect();
        let later = (0..w).map(|k| after(k + 1)).collect();
        Some(Meeting {
            left,
            right,
            w,
            order,
            rank,
            inner_adj,
            inner_bits,
            right_degree,
            later,
            from,
            masks,
        })
    }

    /// Whether every slot not taken before step `k` (`order[k..]`) can
    /// still get the edges it lacks in `s` (`2 - degree`): from the right,
    /// and, if it is not taken by step `k` either, from its inner
    /// neighbours not taken by then that are not full. Sets of slots as
    /// bits: this test runs on every state the inner sweep makes.
    #[inline]
    fn all_can_finish(&self, s: &Slots, k: usize) -> bool {
        let mut open = 0u32;
        for (i, &x) in s.iter().enumerate().take(self.w) {
            open |= u32::from(x != FULL) << i;
        }
        let later = self.later[k];
        // A full slot lacks nothing.
        let mut todo = self.from[k] & open;
        while todo != 0 {
            let b = todo.trailing_zeros() as usize;
            todo &= todo - 1;
            let lack = 2 - degree(s[b]) as u32;
            let mut avail = u32::from(self.right_degree[b]);
            if later >> b & 1 == 1 {
                avail += (self.inner_bits[b] & later & open).count_ones();
            }
            if avail < lack {
                return false;
            }
        }
        true
    }

    /// Step `k` of the inner sweep: slot `order[k]` takes its inner edges
    /// to slots not yet taken, every way (none, one, two) that keeps
    /// degrees at most 2, closes no cycle, leaves every slot able to finish
    /// and leaves the taken slots a class some right state has; each result
    /// goes to `emit`.
    pub fn inner_step(&self, k: usize, s: &Slots, mirror: &Mirror, emit: &mut impl FnMut(&Slots)) {
        let w = self.w;
        let a = self.order[k] as usize;
        let fine = |t: &Slots| {
            self.all_can_finish(t, k) && mirror.has_prefix(k, need_class(t, w) & self.masks[k])
        };
        let room = 2 - degree(s[a]);
        if fine(s) {
            emit(s);
        }
        if room == 0 {
            return;
        }
        let targets: Vec<usize> = self.inner_adj[a]
            .iter()
            .map(|&b| b as usize)
            .filter(|&b| self.rank[b] as usize > k)
            .collect();
        for (i, &b1) in targets.iter().enumerate() {
            if s[b1] == FULL {
                continue;
            }
            let mut t1 = *s;
            if link(&mut t1, a, b1, w).is_err() {
                continue;
            }
            if fine(&t1) {
                emit(&t1);
            }
            if room < 2 {
                continue;
            }
            for &b2 in &targets[i + 1..] {
                if t1[b2] == FULL {
                    continue;
                }
                let mut t2 = t1;
                if link(&mut t2, a, b2, w).is_ok() && fine(&t2) {
                    emit(&t2);
                }
            }
        }
    }
}

impl Mirror {
    /// The right states: `layer` is the sweep's layer before
    /// `meeting.right`, all of it (the layer of the whole board's sweep,
    /// not of a part of it).
    pub fn new(f: &Frontier, m: &Meeting, layer: &Packed) -> Result<Mirror, FamilyError> {
        let w = m.w;
        if layer.len() >= u32::MAX as usize {
            return Err(FamilyError::Capacity(format!(
                "{} right states do not fit the meeting's index",
                layer.len()
            )));
        }
        let mut halves = Vec::with_capacity(layer.len());
        let mut wide = HashMap::new();
        for (key, count) in layer.iter() {
            let s = f.decode(key).expect("keys in a layer decode");
            let mut t = [EMPTY; MAX_W + 1];
            for i in 0..w {
                t[i] = s[w - 1 - i];
            }
            let (class, pairing, _) = interface(&t, w, false);
            let c = match u64::try_from(count) {
                Ok(c) if c != WIDE => c,
                _ => {
                    wide.insert((class, pairing), count);
                    WIDE
                }
            };
            halves.push(Half {
                class,
                pairing,
                count: c,
            });
        }
        halves.sort_unstable_by_key(|h| (h.class, h.pairing));
        // A key is its slots' degrees and the pairing of its ends (see
        // `frontier`), so no two states of a layer turn into the same half
        // (which would also make `wide`'s keys ambiguous).
        debug_assert!(halves
            .windows(2)
            .all(|p| (p[0].class, p[0].pairing) != (p[1].class, p[1].pairing)));
        let mut classes = ClassMap::default();
        let mut start = 0;
        for i in 1..=halves.len() {
            if i == halves.len() || halves[i].class != halves[start].class {
                classes.insert(halves[start].class, (start as u32, i as u32));
                start = i;
            }
        }
        let prefixes: Vec<ClassSet> = m
            .masks
            .iter()
            .map(|&mask| classes.keys().map(|c| c & mask).collect())
            .collect();
        Ok(Mirror {
            halves,
            classes,
            wide,
            prefixes,
        })
    }

    /// Whether some right state's class agrees with `prefix` on the slots
    /// taken by step `k` of the inner sweep.
    #[inline]
    fn has_prefix(&self, k: usize, prefix: u64) -> bool {
        self.prefixes[k].contains(&prefix)
    }

    /// Right states held.
    pub fn len(&self) -> usize {
        self.halves.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.halves.is_empty()
    }

    /// Bytes held, about.
    pub fn bytes(&self) -> usize {
        self.halves.capacity() * std::mem::size_of::<Half>()
            + self.classes.capacity() * 24
            + self.wide.capacity() * 48
    }

    /// The sum of the counts of the right states of `class` whose pairing
    /// closes one cycle with `pairing`, and how many were walked.
    #[inline]
    fn matching(&self, class: u64, pairing: u64, pairs: u32) -> Result<(u128, u64), FamilyError> {
        let Some(&(a, b)) = self.classes.get(&class) else {
            return Ok((0, 0));
        };
        let mut sum: u128 = 0;
        for h in &self.halves[a as usize..b as usize] {
            if one_cycle(pairing, h.pairing, pairs) {
                let c = if h.count == WIDE {
                    self.wide[&(h.class, h.pairing)]
                } else {
                    u128::from(h.count)
                };
                sum = sum
                    .checked_add(c)
                    .ok_or(FamilyError::Overflow("knight-tours tours"))?;
            }
        }
        Ok((sum, u64::from(b - a)))
    }
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

    #[test]
    fn one_cycle_walks_the_ends() {
        // Ends 0..4: (0 1)(2 3) against (1 2)(3 0) is one cycle; against
        // (0 1)(2 3) two.
        let a = 1 | 3 << 8 | 2 << 12;
        let b_one = 3 | 2 << 4 | 1 << 8;
        assert!(one_cycle(a, b_one, 2));
        assert!(!one_cycle(a, a, 2));
        // One pair against itself: a cycle of two edges-paths.
        assert!(one_cycle(1, 1, 1));
    }

    /// The layers of the whole board's sweep before `left` and `right`.
    fn halves_of(f: &Frontier, m: &Meeting) -> (Packed, Mirror) {
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

    /// [`Meeting::all_can_finish`] by its definition, slot by slot.
    fn can_finish_plainly(m: &Meeting, s: &Slots, k: usize) -> bool {
        (0..m.w).all(|b| {
            let lack = 2 - degree(s[b]) as usize;
            if (m.rank[b] as usize) < k || lack == 0 {
                return true;
            }
            let mut avail = m.right_degree[b] as usize;
            if m.rank[b] as usize > k {
                avail += m.inner_adj[b]
                    .iter()
                    .filter(|&&c| m.rank[c as usize] as usize > k && s[c as usize] != FULL)
                    .count();
            }
            avail >= lack
        })
    }

    #[test]
    fn the_finish_test_on_bits_is_the_plain_one() {
        for (r, c) in [(6, 6), (5, 8), (4, 9)] {
            let f = Frontier::new(r, c);
            let m = Meeting::new(&f).unwrap();
            let (left, mirror) = halves_of(&f, &m);
            // Every state of every layer of the inner sweep, at every step.
            let mut layer: Vec<Slots> = left.iter().map(|(k, _)| f.decode(k).unwrap()).collect();
            let (mut checked, mut refused) = (0u64, 0u64);
            for a in 0..m.w {
                let mut next = Vec::new();
                for s in &layer {
                    for k in 0..m.w {
                        let want = can_finish_plainly(&m, s, k);
                        assert_eq!(m.all_can_finish(s, k), want, "{r} x {c}: {s:?} at {k}");
                        checked += 1;
                        refused += u64::from(!want);
                    }
                    m.inner_step(a, s, &mirror, &mut |t| next.push(*t));
                }
                next.sort_unstable();
                next.dedup();
                layer = next;
            }
            assert!(
                refused > 0 && refused < checked,
                "{r} x {c}: {refused} of {checked}"
            );
        }
    }

    #[test]
    fn the_cut_is_symmetric() {
        for (r, c) in [(3, 4), (5, 6), (6, 6), (8, 8), (6, 7), (3, 30)] {
            let f = Frontier::new(r, c);
            let m = Meeting::new(&f).unwrap();
            assert_eq!(m.left + m.w + m.right, f.n);
            assert!(m.left - m.right <= 1);
        }
        assert!(Meeting::new(&Frontier::new(3, 2)).is_none());
    }
}
