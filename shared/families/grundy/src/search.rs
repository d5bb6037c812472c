//! The two searches: nim-values of single heaps under normal play, and the
//! exact misère outcome of positions (multisets of heaps).

use std::collections::HashMap;
use std::sync::Mutex;

use orchard_core::FamilyError;

/// A nim-value. A byte is not enough: the largest nim-value up to heap
/// 100 000 is already 230. Sixteen bits are; a value that did not fit would
/// be reported as a capacity error, never wrapped.
pub type Nim = u16;

/// The width of the mex table for a table whose largest value is `max`:
/// the XOR of two values below a power of two stays below it.
pub fn width(max: Nim) -> usize {
    (usize::from(max) + 1).next_power_of_two()
}

/// The nim-value of a heap of `n`, given `g[k]` for every `k < n`
/// (`g.len() == n`) and the [`width`] of `g`'s largest value; and the number
/// of splits examined.
///
/// `g(n) = mex { g(a) ^ g(n - a) : 1 <= a < n - a }`. This is the hot loop
/// of the whole family (`n / 2` splits per heap, `N^2 / 4` for a table), so
/// it is kept plain: the two halves of the table zipped (no bounds checks,
/// the XORs vectorise), and a table of `width` flags for the mex, written
/// with independent stores (no read-modify-write chain as a packed bitset
/// would have). `width` is small (256 at heap 100 000), so clearing it per
/// heap costs nothing next to the splits.
pub fn nim_value(g: &[Nim], n: usize, width: usize) -> Result<(Nim, u64), FamilyError> {
    debug_assert_eq!(g.len(), n);
    let half = n.saturating_sub(1) / 2; // splits (a, n - a) with a < n - a
    let mut small = [false; 1024];
    let mut large = Vec::new();
    let seen: &mut [bool] = if width <= small.len() {
        &mut small[..width]
    } else {
        large.resize(width, false);
        &mut large
    };
    if half > 0 {
        let lo = &g[1..=half];
        let hi = &g[n - half..n];
        for (&a, &b) in lo.iter().zip(hi.iter().rev()) {
            seen[usize::from(a ^ b)] = true;
        }
    }
    // Every XOR is below `width`, so the mex is at most `width`.
    let v = seen.iter().position(|&s| !s).unwrap_or(width);
    match Nim::try_from(v) {
        Ok(v) => Ok((v, half as u64)),
        Err(_) => Err(FamilyError::Capacity(format!(
            "the nim-value of heap {n} does not fit in 16 bits"
        ))),
    }
}

/// Extends `g` (the nim-values of heaps `0..g.len()`) up to heap `to`
/// included; returns the splits examined.
pub fn extend_table(g: &mut Vec<Nim>, to: usize) -> Result<u64, FamilyError> {
    let mut nodes = 0u64;
    let mut max = g.iter().copied().max().unwrap_or(0);
    while g.len() <= to {
        let (v, pairs) = nim_value(g, g.len(), width(max))?;
        g.push(v);
        max = max.max(v);
        nodes += pairs;
    }
    Ok(nodes)
}

/// A normal-play winning move from a heap of `n`: the split `(a, n - a)`,
/// `a > n - a`, with the largest `a` such that `g(a) = g(n - a)`, i.e. the
/// position left has nim-value 0. `None` when `g(n) = 0` (a loss). `g` must
/// cover heap `n - 1`.
pub fn normal_move(g: &[Nim], n: usize) -> Option<(u32, u32)> {
    (n / 2 + 1..n)
        .rev()
        .find(|&a| a != n - a && g[a] == g[n - a])
        .map(|a| (a as u32, (n - a) as u32))
}

/// Exact misère play by memoised minimax over positions.
///
/// A position is the multiset of its heaps of 3 or more, sorted in
/// decreasing order: heaps of 1 and 2 cannot be divided (2 = 1 + 1 is an
/// equal division), so they never change who can move and are dropped. In
/// misère play the player who cannot move wins, so the empty position is a
/// win for the player to move, and any other position is a loss iff every
/// move leads to a win for the opponent. Misère play does not reduce to
/// nim-values (the misère value of a sum is not a function of its parts'
/// values), hence the search over whole multisets.
///
/// The memo is shared by the threads of one process (one job); values are
/// exact whoever computed them, so sharing only saves work.
#[derive(Debug, Default)]
pub struct Misere {
    memo: Mutex<HashMap<Box<[u8]>, bool>>,
}

impl Misere {
    /// Whether the player to move wins a single heap of `n` under misère
    /// play, and a winning move: the one with the largest first heap (none
    /// for heaps of 1 and 2, won by having no move at all). `nodes` counts
    /// the positions this call solved (memo misses).
    pub fn single_heap(&self, n: u8, nodes: &mut u64) -> (bool, Option<(u32, u32)>) {
        if n < 3 {
            return (true, None);
        }
        for a in (n / 2 + 1..n).rev() {
            let child = position(&[], a, n - a);
            if !self.wins(&child, nodes) {
                return (true, Some((u32::from(a), u32::from(n - a))));
            }
        }
        (false, None)
    }

    /// Whether the player to move wins `pos` (sorted decreasing, heaps >= 3).
    pub fn wins(&self, pos: &[u8], nodes: &mut u64) -> bool {
        if pos.is_empty() {
            return true; // no move: the player to move wins (misère)
        }
        if let Some(&w) = self.memo.lock().expect("memo lock").get(pos) {
            return w;
        }
        *nodes += 1;
        let mut win = false;
        'moves: for i in 0..pos.len() {
            if i > 0 && pos[i] == pos[i - 1] {
                continue; // the same heap again: the same children
            }
            let h = pos[i];
            let mut rest = pos.to_vec();
            rest.remove(i);
            for a in (h / 2 + 1..h).rev() {
                let child = position(&rest, a, h - a);
                if !self.wins(&child, nodes) {
                    win = true;
                    break 'moves;
                }
            }
        }
        self.memo.lock().expect("memo lock").insert(pos.into(), win);
        win
    }

    /// Positions solved so far.
    pub fn memo_len(&self) -> usize {
        self.memo.lock().expect("memo lock").len()
    }
}

/// `rest` plus the heaps `a` and `b` that are 3 or more, sorted decreasing.
fn position(rest: &[u8], a: u8, b: u8) -> Vec<u8> {
    let mut p = Vec::with_capacity(rest.len() + 2);
    p.extend_from_slice(rest);
    p.extend([a, b].into_iter().filter(|&h| h >= 3));
    p.sort_unstable_by(|x, y| y.cmp(x));
    p
}
