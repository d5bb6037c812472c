//! A deliberately plain second implementation, to check the family against.
//!
//! Everything is minimax over whole positions: a position is the sorted
//! multiset of *all* its heaps (heaps of 1 and 2 kept, nothing simplified),
//! its moves every division of every heap into two unequal heaps, and a
//! `HashMap` memo per question. Nim-values are the mex over the children's
//! nim-values of the whole position, so the XOR rule of Sprague-Grundy that
//! the family relies on is not assumed here. Only usable for small heaps (the
//! positions are the partitions of `n`).

use std::collections::HashMap;

/// A position: every heap, sorted increasing.
pub type Position = Vec<u32>;

/// Every position one move away from `pos`.
pub fn children(pos: &[u32]) -> Vec<Position> {
    let mut out = Vec::new();
    for i in 0..pos.len() {
        let h = pos[i];
        for a in 1..h {
            let b = h - a;
            if a >= b {
                continue; // unequal, and each division once
            }
            let mut c: Position = pos.to_vec();
            c.remove(i);
            c.push(a);
            c.push(b);
            c.sort_unstable();
            out.push(c);
        }
    }
    out
}

/// The nim-value of a whole position: the mex of its children's.
pub fn nim_value_of(pos: &[u32], memo: &mut HashMap<Position, u32>) -> u32 {
    if let Some(&v) = memo.get(pos) {
        return v;
    }
    let vals: Vec<u32> = children(pos)
        .iter()
        .map(|c| nim_value_of(c, memo))
        .collect();
    let v = (0..).find(|v| !vals.contains(v)).expect("a mex exists");
    memo.insert(pos.to_vec(), v);
    v
}

/// The nim-values of single heaps `0..=n` (heap 0: 0).
pub fn nim_values(n: u32) -> Vec<u32> {
    let mut memo = HashMap::new();
    (0..=n)
        .map(|h| {
            if h == 0 {
                0
            } else {
                nim_value_of(&[h], &mut memo)
            }
        })
        .collect()
}

/// Whether the player to move wins `pos`: `misere` false, the player who
/// cannot move loses; true, the player who cannot move wins.
pub fn wins(pos: &[u32], misere: bool, memo: &mut HashMap<Position, bool>) -> bool {
    if let Some(&w) = memo.get(pos) {
        return w;
    }
    let kids = children(pos);
    let w = if kids.is_empty() {
        misere
    } else {
        kids.iter().any(|c| !wins(c, misere, memo))
    };
    memo.insert(pos.to_vec(), w);
    w
}

/// The single heaps `1..=n` that are a loss for the player to move.
pub fn losses(n: u32, misere: bool) -> Vec<u32> {
    let mut memo = HashMap::new();
    (1..=n)
        .filter(|&h| !wins(&[h], misere, &mut memo))
        .collect()
}

/// Whether the division `(a, b)` of a single heap is a winning move (leaves
/// a loss for the opponent).
pub fn is_winning_move(a: u32, b: u32, misere: bool) -> bool {
    let mut pos = vec![a, b];
    pos.sort_unstable();
    a != b && a > 0 && b > 0 && !wins(&pos, misere, &mut HashMap::new())
}
