//! What every family's [`merge`](crate::SearchFamily::merge) does: add
//! counts without overflowing, and keep a list of witnesses that is the
//! same whatever the units and the merge order.
//!
//! Why a rule for witness lists at all: the coordinator stores every unit's
//! summary (the units file is made of them), so a list each unit fills up
//! to a fixed cap costs `cap x units` in the database. A long run has
//! hundreds of thousands of units; a cap of 10,000 made the 19-queens
//! database 388 MB. The two rules here keep exactness (the merged list is
//! a function of the set of witnesses, not of how it was cut) at different
//! prices:
//!
//! * [`keep_smallest`] — the smallest `cap` witnesses of the union. Exact
//!   only if every unit keeps its own smallest `cap`: for families whose
//!   witnesses are few (magic hexagons, Latin squares with a mate).
//! * [`Openings`] — the smallest witness of each *opening* (its first
//!   `depth` entries). A unit below depth `depth` keeps at most one, so the
//!   cost is one witness a unit; a depth as long as the witnesses keeps them
//!   all.

use std::collections::BTreeMap;

use crate::error::FamilyError;

/// `a + b`, or [`FamilyError::Overflow`] naming `what` overflowed.
pub fn checked_add(a: u64, b: u64, what: &'static str) -> Result<u64, FamilyError> {
    a.checked_add(b).ok_or(FamilyError::Overflow(what))
}

/// Adds the counts of `other` into `into`, key by key, checked.
pub fn add_counts<K: Ord>(
    into: &mut BTreeMap<K, u64>,
    other: BTreeMap<K, u64>,
    what: &'static str,
) -> Result<(), FamilyError> {
    for (k, v) in other {
        let e = into.entry(k).or_default();
        *e = checked_add(*e, v, what)?;
    }
    Ok(())
}

/// Keeps in `into` the smallest `cap` of `into` and `other`, sorted. Units
/// are disjoint, so the lists are too; sorting first makes the result
/// independent of the order the lists come in.
pub fn keep_smallest<T: Ord>(into: &mut Vec<T>, other: Vec<T>, cap: usize) {
    into.extend(other);
    into.sort_unstable();
    into.truncate(cap);
}

/// The list rule "the smallest witness of each opening": an opening is the
/// first `depth` entries of a witness (a witness shorter than that is its
/// own opening). The list is kept sorted, one witness an opening, so the
/// openings are sorted too and a new witness finds its place by binary
/// search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Openings {
    /// How many leading entries make an opening; `usize::MAX` keeps every
    /// witness.
    pub depth: usize,
}

impl Openings {
    /// Every witness is its own opening: the list keeps them all.
    pub const ALL: Openings = Openings { depth: usize::MAX };

    /// The usual rule of a family: every witness on instances up to
    /// `all_up_to` (few enough to list), openings of `depth` beyond it.
    pub fn all_up_to(size: u64, all_up_to: u64, depth: usize) -> Openings {
        if size <= all_up_to {
            Openings::ALL
        } else {
            Openings { depth }
        }
    }

    fn opening<'a, T>(&self, w: &'a [T]) -> &'a [T] {
        &w[..w.len().min(self.depth)]
    }

    /// Adds witness `w` to a list this rule keeps: it replaces the witness
    /// of its opening if it is smaller, takes a place of its own if its
    /// opening had none. Witnesses found in increasing order (a
    /// depth-first search in lexicographic order) land at the end.
    pub fn note<T: Ord + Clone>(&self, list: &mut Vec<Vec<T>>, w: &[T]) {
        let key = self.opening(w);
        if list.last().is_some_and(|last| self.opening(last) < key) {
            list.push(w.to_vec());
            return;
        }
        match list.binary_search_by(|x| self.opening(x).cmp(key)) {
            Ok(i) => {
                if w < list[i].as_slice() {
                    list[i] = w.to_vec();
                }
            }
            Err(i) => list.insert(i, w.to_vec()),
        }
    }

    /// Merges `other` into `into`, both lists this rule keeps (or any
    /// lists: they are sorted and reduced here).
    pub fn merge<T: Ord>(&self, into: &mut Vec<Vec<T>>, other: Vec<Vec<T>>) {
        into.extend(other);
        into.sort_unstable();
        // Sorted, the witnesses of one opening are next to each other, the
        // smallest first.
        into.dedup_by(|later, first| self.opening(later) == self.opening(first));
    }

    /// Whether the rule keeps every witness of length `len`.
    pub fn keeps_all(&self, len: usize) -> bool {
        self.depth >= len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule applied to a whole set at once, from its definition.
    fn by_definition(depth: usize, all: &[Vec<u8>]) -> Vec<Vec<u8>> {
        let mut best: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
        for w in all {
            let key = w[..w.len().min(depth)].to_vec();
            let e = best.entry(key).or_insert_with(|| w.clone());
            if w < e {
                *e = w.clone();
            }
        }
        best.into_values().collect()
    }

    fn witnesses() -> Vec<Vec<u8>> {
        // Every word of length 4 over {0, 1, 2} with an even digit sum, in
        // a scrambled order.
        let mut all: Vec<Vec<u8>> = (0..81u32)
            .map(|k| {
                (0..4)
                    .map(|i| (k / 3u32.pow(i) % 3) as u8)
                    .collect::<Vec<u8>>()
            })
            .filter(|w: &Vec<u8>| w.iter().map(|&d| u32::from(d)).sum::<u32>() % 2 == 0)
            .collect();
        all.sort_by_key(|w| (w[3], w[1], w[0], w[2]));
        all
    }

    #[test]
    fn openings_note_and_merge_agree_with_the_definition() {
        let all = witnesses();
        for depth in [0, 1, 2, 3, 4, usize::MAX] {
            let rule = Openings { depth };
            let want = by_definition(depth, &all);
            // One at a time, in a scrambled order.
            let mut noted = Vec::new();
            for w in &all {
                rule.note(&mut noted, w);
            }
            assert_eq!(noted, want, "depth {depth}: note");
            // Cut in pieces, each noted alone, merged in two orders.
            for pieces in [2, 5, 17] {
                let lists: Vec<Vec<Vec<u8>>> = all
                    .chunks(all.len().div_ceil(pieces))
                    .map(|c| {
                        let mut l = Vec::new();
                        for w in c {
                            rule.note(&mut l, w);
                        }
                        l
                    })
                    .collect();
                let mut forward = Vec::new();
                for l in lists.iter().cloned() {
                    rule.merge(&mut forward, l);
                }
                let mut backward = Vec::new();
                for l in lists.into_iter().rev() {
                    rule.merge(&mut backward, l);
                }
                assert_eq!(forward, want, "depth {depth}, {pieces} pieces");
                assert_eq!(backward, want, "depth {depth}, {pieces} pieces");
            }
        }
        assert_eq!(by_definition(usize::MAX, &all).len(), all.len());
        assert_eq!(by_definition(0, &all).len(), 1);
    }

    #[test]
    fn keep_smallest_is_order_free() {
        let all = witnesses();
        let mut sorted = all.clone();
        sorted.sort();
        let (a, b) = all.split_at(10);
        let mut x = a.to_vec();
        keep_smallest(&mut x, b.to_vec(), 7);
        let mut y = b.to_vec();
        keep_smallest(&mut y, a.to_vec(), 7);
        assert_eq!(x, sorted[..7]);
        assert_eq!(y, x);
    }

    #[test]
    fn counts_add_checked() {
        assert!(matches!(checked_add(2, 3, "x"), Ok(5)));
        assert!(matches!(
            checked_add(u64::MAX, 1, "x"),
            Err(FamilyError::Overflow("x"))
        ));
        let mut a = BTreeMap::from([(1, 2u64), (3, 4)]);
        add_counts(&mut a, BTreeMap::from([(3, 1u64), (5, 6)]), "h").unwrap();
        assert_eq!(a, BTreeMap::from([(1, 2), (3, 5), (5, 6)]));
        let mut full = BTreeMap::from([(1, u64::MAX)]);
        assert!(add_counts(&mut full, BTreeMap::from([(1, 1u64)]), "h").is_err());
    }
}
