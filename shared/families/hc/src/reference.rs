//! A deliberately plain implementation of the `hc` rules, to check the real
//! search against: no bitsets, no pruning, legality recomputed from scratch
//! for every move. Only usable on small cases.

use std::collections::BTreeMap;

use super::Variant;

/// Whether `n` may go into a column holding `members` (all smaller than `n`).
pub fn may_place(variant: Variant, members: &[u32], n: u32) -> bool {
    match variant {
        Variant::Pairs => {
            for (i, &a) in members.iter().enumerate() {
                for &b in &members[i + 1..] {
                    if a + b == n {
                        return false;
                    }
                }
            }
            true
        }
        Variant::Subsets => {
            // Enumerate every subset of two or more members.
            let k = members.len();
            assert!(k < 30, "reference implementation only for small cases");
            for mask in 0u32..(1 << k) {
                if mask.count_ones() >= 2 {
                    let sum: u32 = (0..k)
                        .filter(|i| mask >> i & 1 == 1)
                        .map(|i| members[i])
                        .sum();
                    if sum == n {
                        return false;
                    }
                }
            }
            true
        }
    }
}

/// Every game (as 0-based column strings) that extends `prefix` and cannot
/// be extended further, over `columns` columns, as restricted-growth strings.
/// Returns `None` if `prefix` itself is not a legal RGS game.
pub fn ended_games(columns: usize, variant: Variant, prefix: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut game = Vec::new();
    for &c in prefix {
        let used = game.iter().map(|&x: &u8| x as usize + 1).max().unwrap_or(0);
        if c as usize >= columns || c as usize > used || !legal_next(&game, c, variant) {
            return None;
        }
        game.push(c);
    }
    let mut out = Vec::new();
    walk(columns, variant, &mut game, &mut out);
    Some(out)
}

fn legal_next(game: &[u8], col: u8, variant: Variant) -> bool {
    let n = game.len() as u32 + 1;
    let members: Vec<u32> = (0..game.len())
        .filter(|&i| game[i] == col)
        .map(|i| i as u32 + 1)
        .collect();
    may_place(variant, &members, n)
}

fn walk(columns: usize, variant: Variant, game: &mut Vec<u8>, out: &mut Vec<Vec<u8>>) {
    let used = game.iter().map(|&x| x as usize + 1).max().unwrap_or(0);
    let mut extended = false;
    for col in 0..(used + 1).min(columns) {
        if legal_next(game, col as u8, variant) {
            extended = true;
            game.push(col as u8);
            walk(columns, variant, game, out);
            game.pop();
        }
    }
    if !extended {
        out.push(game.clone());
    }
}

/// Histogram of ended games by length.
pub fn histogram(games: &[Vec<u8>]) -> BTreeMap<u32, u64> {
    let mut h = BTreeMap::new();
    for g in games {
        *h.entry(g.len() as u32).or_insert(0) += 1;
    }
    h
}
