//! Where the halves meet and the window's inner edges: [`Meeting`] holds
//! the cut of one board (the window `W`, which of its squares are
//! neighbours, how many neighbours each has past `W`) and adds the inner
//! edges to the left states.
//!
//! They are added by a short sweep of their own over the window's squares
//! in order ([`Meeting::inner_step`]), which merges equal states as the
//! main sweep does: after slot `a` its degree is final, and so is the
//! number of right edges it needs (`2 - degree`), which must not exceed its
//! neighbours past `W`; every later slot must still be able to get what it
//! lacks. The states it ends with (the left and inner edges, *joined*
//! states) are keyed by what they need from the right: the needed degree of
//! every slot (the *class*) and the pairing of their path ends.

use crate::frontier::{Frontier, Slots, EMPTY, FULL, MAX_W};

use super::interface::{degree, need_class};
use super::Mirror;

/// Where the halves meet on one board, and the window's inner edges.
#[derive(Debug, Clone)]
pub struct Meeting {
    /// `p`: the left states are the sweep's layer before this square.
    pub left: usize,
    /// `q = n - w - p`: the right states are the layer before this square,
    /// turned.
    pub right: usize,
    pub(super) w: usize,
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
    pub(super) masks: Vec<u64>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::join::tests::halves_of;

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
