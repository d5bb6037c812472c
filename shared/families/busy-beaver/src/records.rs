//! Translated cyclers over a long run with many records kept, for the
//! last resort (in [`crate::decide::Stage::Horizon`]): the watched
//! run ([`crate::watched`]) compares a record with the last
//! [`crate::decide::RECORDS_KEPT`] records of its side on 128 cells, which
//! misses translated cyclers whose period makes hundreds of records, or
//! whose head goes back farther. The test is the same (the paper's Lemma
//! on translated cyclers, [`crate::decide`]): two records on the same
//! side, in the same state, at `t1 < t2`, equal on the cells from the
//! record back to the farthest cell the head went back to between them.
//!
//! The farthest cell comes from a stack of suffix minima (maxima on the
//! left) of the head positions, searched by time; each record keeps up to
//! `cells` cells behind it, and is compared with the last `kept` records
//! of its side.

use crate::machine::{Table, Transition};

/// A kept record: time, position, state, the cells behind it (index `i`:
/// `i` cells back).
type Record = (u32, usize, u8, Vec<u8>);

/// The buffers of [`Records::find`], kept between machines.
#[derive(Debug, Default)]
pub struct Records {
    tape: Vec<u8>,
    /// (time, position) of the head positions no later one went below.
    mins: Vec<(u32, usize)>,
    /// (time, position) of the head positions no later one went above.
    maxs: Vec<(u32, usize)>,
    /// Per side (right, left): the kept records, oldest first.
    kept: [Vec<Record>; 2],
}

impl Records {
    /// Runs `table` from the blank tape for at most `steps` steps; the
    /// times `(t1, t2)` of the first translated cycle found (`t2` the
    /// record that closes it).
    pub fn find(
        &mut self,
        table: &Table,
        steps: u32,
        kept: usize,
        cells: usize,
    ) -> Option<(u32, u32)> {
        let width = 2 * steps as usize + 3;
        self.tape.clear();
        self.tape.resize(width, 0);
        self.mins.clear();
        self.maxs.clear();
        self.kept.iter_mut().for_each(Vec::clear);
        let origin = steps as usize + 1;
        let (mut pos, mut lo, mut hi, mut state) = (origin, origin, origin, 0usize);
        self.mins.push((0, origin));
        self.maxs.push((0, origin));
        for time in 1..=steps {
            let t = Transition::decode(table[2 * state + usize::from(self.tape[pos])])?;
            self.tape[pos] = t.write;
            if t.right {
                pos += 1;
            } else {
                pos -= 1;
            }
            state = usize::from(t.next);
            while self.mins.last().is_some_and(|&(_, h)| h >= pos) {
                self.mins.pop();
            }
            self.mins.push((time, pos));
            while self.maxs.last().is_some_and(|&(_, h)| h <= pos) {
                self.maxs.pop();
            }
            self.maxs.push((time, pos));
            let side = if pos > hi {
                hi = pos;
                0
            } else if pos < lo {
                lo = pos;
                1
            } else {
                continue;
            };
            let tape = &self.tape;
            let behind = |i: usize| {
                if side == 0 {
                    tape[pos - i]
                } else {
                    tape[pos + i]
                }
            };
            for (t1, p1, s1, cells1) in self.kept[side].iter().rev() {
                if usize::from(*s1) != state {
                    continue;
                }
                // The farthest the head went back from p1 since t1.
                let span = if side == 0 {
                    let i = self.mins.partition_point(|&(tt, _)| tt < *t1);
                    p1 - self.mins[i].1
                } else {
                    let i = self.maxs.partition_point(|&(tt, _)| tt < *t1);
                    self.maxs[i].1 - p1
                };
                if span < cells1.len() && (0..=span).all(|i| cells1[i] == behind(i)) {
                    return Some((*t1, time));
                }
            }
            let extent = if side == 0 {
                pos - lo + 1
            } else {
                hi - pos + 1
            };
            let record: Vec<u8> = (0..cells.min(extent)).map(behind).collect();
            let list = &mut self.kept[side];
            if list.len() == kept {
                list.remove(0);
            }
            list.push((time, pos, state as u8, record));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::from_text;

    #[test]
    fn halting_machines_have_no_translated_cycle() {
        for text in ["1RB1LB_1LA0LC_---1LD_1RD0RA", "1RB---_1LB0RC_1LC1LA"] {
            let (t, _) = from_text(text).unwrap();
            assert_eq!(
                Records::default().find(&t, 100_000, 1000, 1000),
                None,
                "{text}"
            );
        }
    }

    #[test]
    fn a_machine_that_runs_right_forever_is_found_at_once() {
        let (t, _) = from_text("1RB1RB_1LA1RA_1LB---").unwrap();
        assert!(Records::default().find(&t, 1000, 64, 64).is_some());
    }
}
