//! Backward reasoning: from each undefined transition, walk the machine
//! backwards; if every chain contradicts itself within the depth, no long
//! run reaches an undefined transition (see [`crate::decide`]).

use crate::decide::{Workspace, BACKWARD_CONFIGS};
use crate::machine::{Table, Transition, MAX_STATES};

/// A backward configuration: the cells known around the halting cell (bit
/// `64 + x` for cell `x`), the head, the state, the steps back.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Back {
    known: u128,
    values: u128,
    head: i8,
    state: u8,
    depth: u8,
}

impl Workspace {
    /// Backward reasoning from every undefined transition; true: none can
    /// be reached by a run of `depth` steps or more.
    pub(crate) fn backward(&mut self, table: &Table, n: usize) -> bool {
        // The defined transitions into each state: (from state, read, write, right).
        let mut preds = [[(0u8, 0u8, 0u8, false); 2 * MAX_STATES]; MAX_STATES];
        let mut npreds = [0usize; MAX_STATES];
        self.back.clear();
        for (i, &b) in table[..2 * n].iter().enumerate() {
            let (s, r) = ((i / 2) as u8, (i % 2) as u8);
            match Transition::decode(b) {
                Some(t) => {
                    let k = t.next as usize;
                    preds[k][npreds[k]] = (s, r, t.write, t.right);
                    npreds[k] += 1;
                }
                None => self.back.push(Back {
                    known: 1 << 64,
                    values: u128::from(r) << 64,
                    head: 0,
                    state: s,
                    depth: 0,
                }),
            }
        }
        self.back_seen = 0;
        while let Some(c) = self.back.pop() {
            if u32::from(c.depth) >= self.depth {
                return false;
            }
            self.back_seen += 1;
            if self.back_seen > BACKWARD_CONFIGS {
                return false;
            }
            let s = c.state as usize;
            for &(from, read, write, right) in &preds[s][..npreds[s]] {
                let head = if right { c.head - 1 } else { c.head + 1 };
                let bit = 1u128 << (64 + i32::from(head));
                if c.known & bit != 0 && (c.values & bit != 0) != (write == 1) {
                    continue; // the cell does not hold what the transition wrote
                }
                let values = if read == 1 {
                    c.values | bit
                } else {
                    c.values & !bit
                };
                self.back.push(Back {
                    known: c.known | bit,
                    values,
                    head,
                    state: from,
                    depth: c.depth + 1,
                });
            }
        }
        true
    }
}
