//! The two searches: nim-values of single heaps under normal play, and the
//! exact misère outcome of positions (multisets of heaps).

use std::collections::HashMap;
use std::sync::Mutex;

use orchard_core::FamilyError;

/// Largest nim-value a `u8` table holds. Nim-values of Grundy's game grow
/// very slowly (they stay far below this for every heap this family
/// accepts); one that reached it would be reported as a capacity error, never
/// wrapped.
pub const NIM_LIMIT: usize = 256;

/// The nim-value of a heap of `n`, given `g[k]` for every `k < n`
/// (`g.len() == n`), and the number of splits examined.
///
/// `g(n) = mex { g(a) ^ g(n - a) : 1 <= a < n - a }`. This is the hot loop
/// of the whole family (`n / 2` splits per heap, `N^2 / 4` for a table), so
/// it is kept plain: the two halves of the table zipped (no bounds checks),
/// and a table of 256 flags for the mex, written with independent stores
/// (no read-modify-write chain as a packed bitset would have).
pub fn nim_value(g: &[u8], n: usize) -> Result<(u8, u64), FamilyError> {
    debug_assert_eq!(g.len(), n);
    let half = n.saturating_sub(1) / 2; // splits (a, n - a) with a < n - a
    let mut seen = [false; NIM_LIMIT];
    if half > 0 {
        let lo = &g[1..=half];
        let hi = &g[n - half..n];
        for (&a, &b) in lo.iter().zip(hi.iter().rev()) {
            seen[usize::from(a ^ b)] = true;
        }
    }
    match seen.iter().position(|&s| !s) {
        Some(v) => Ok((v as u8, half as u64)),
        None => Err(FamilyError::Capacity(format!(
            "the nim-value of heap {n} does not fit in a byte"
        ))),
    }
}

/// Extends `g` (the nim-values of heaps `0..g.len()`) up to heap `to`
/// included; returns the splits examined.
pub fn extend_table(g: &mut Vec<u8>, to: usize) -> Result<u64, FamilyError> {
    let mut nodes = 0u64;
    while g.len() <= to {
        let (v, pairs) = nim_value(g, g.len())?;
        g.push(v);
        nodes += pairs;
    }
    Ok(nodes)
}

/// A normal-play winning move from a heap of `n`: the split `(a, n - a)`,
/// `a > n - a`, with the largest `a` such that `g(a) = g(n - a)`, i.e. the
/// position left has nim-value 0. `None` when `g(n) = 0` (a loss). `g` must
/// cover heap `n - 1`.
pub fn normal_move(g: &[u8], n: usize) -> Option<(u32, u32)> {
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
