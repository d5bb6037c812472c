//! Plain simulation of one machine from the blank tape, as fast as a loop
//! over a byte tape goes and with nothing watched: the *halting horizon*
//! of the pipeline. A machine that every nonhalting decider failed on may
//! simply halt late (5-state machines halt after tens of millions of
//! steps), so it is run here up to the horizon before it is called
//! undecided: a halting machine is then never left undecided because its
//! run is long, only because it is longer than the horizon (which the
//! report states).
//!
//! The tape grows on demand (doubling, the visited part copied to the
//! middle), so a run of 10^8 steps does not reserve 10^8 cells up front;
//! the tape is kept between machines, so the loop allocates only when a
//! run goes farther than every run before it. The same loop re-checks the
//! halting verdicts of the watched run ([`crate::decide`]), which is a
//! separate implementation.

use crate::machine::{Table, Transition, MAX_STATES};

/// Cells of a fresh tape.
const INITIAL_CELLS: usize = 1 << 12;

/// What a plain run found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlainRun {
    /// Reached undefined transition `at` on step `steps` (counted), with
    /// `ones` ones once the halting step has written its 1.
    Halts { steps: u64, ones: u64, at: u8 },
    /// Ran `limit` steps without halting.
    Running,
}

/// A reusable tape for plain runs.
#[derive(Debug, Default)]
pub struct Plain {
    tape: Vec<u8>,
    /// The cells the last run may have written (to clear them).
    dirty: (usize, usize),
}

/// One decoded transition: (write, +1 or -1 as a wrapping `usize`, next
/// state, defined).
#[derive(Clone, Copy, Default)]
struct Step {
    write: u8,
    delta: usize,
    next: u8,
    defined: bool,
}

impl Plain {
    /// Runs the `n`-state `table` from the blank tape for at most `limit`
    /// steps.
    pub fn run(&mut self, table: &Table, n: usize, limit: u64) -> PlainRun {
        let mut steps = [Step::default(); 2 * MAX_STATES];
        for (i, s) in steps.iter_mut().enumerate().take(2 * n) {
            if let Some(t) = Transition::decode(table[i]) {
                *s = Step {
                    write: t.write,
                    delta: if t.right { 1 } else { usize::MAX },
                    next: t.next,
                    defined: true,
                };
            }
        }
        if self.tape.is_empty() {
            self.tape = vec![0; INITIAL_CELLS];
        } else {
            let (a, b) = self.dirty;
            self.tape[a..=b].fill(0);
        }
        let mut pos = self.tape.len() / 2;
        let (mut lo, mut hi) = (pos, pos);
        let mut state = 0usize;
        let mut t = 0u64;
        let outcome = loop {
            if t == limit {
                break PlainRun::Running;
            }
            let read = self.tape[pos];
            let s = steps[2 * state + read as usize];
            if !s.defined {
                let ones = self.tape[lo..=hi]
                    .iter()
                    .map(|&c| u64::from(c))
                    .sum::<u64>()
                    + u64::from(read == 0);
                break PlainRun::Halts {
                    steps: t + 1,
                    ones,
                    at: (2 * state + read as usize) as u8,
                };
            }
            self.tape[pos] = s.write;
            pos = pos.wrapping_add(s.delta);
            state = s.next as usize;
            t += 1;
            if pos < lo {
                lo = pos;
                if pos == 0 {
                    let shift = self.grow();
                    pos += shift;
                    lo += shift;
                    hi += shift;
                }
            } else if pos > hi {
                hi = pos;
                if pos == self.tape.len() - 1 {
                    let shift = self.grow();
                    pos += shift;
                    lo += shift;
                    hi += shift;
                }
            }
        };
        self.dirty = (lo, hi);
        outcome
    }

    /// Doubles the tape, its old cells in the middle of the new one;
    /// returns how far they moved.
    #[cold]
    fn grow(&mut self) -> usize {
        let old = self.tape.len();
        let shift = old / 2;
        let mut bigger = vec![0u8; 2 * old];
        bigger[shift..shift + old].copy_from_slice(&self.tape);
        self.tape = bigger;
        shift
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::from_text;
    use crate::reference;

    fn plain(text: &str, limit: u64) -> PlainRun {
        let (t, n) = from_text(text).unwrap();
        Plain::default().run(&t, n, limit)
    }

    /// The same runs as the plain reference simulator, machine by machine,
    /// including runs that go far enough to grow the tape both ways.
    #[test]
    fn agrees_with_the_reference() {
        let mut p = Plain::default();
        for text in [
            "1RB1LB_1LA0LC_1RZ1LD_1RD0RA",
            "1RB1RZ_1LB0RC_1LC1LA",
            "1RB1LC_1RC1RZ_1LA0LB",
            "0RA---_------",
            "0LA---_------",
            "1RB1RB_1LA1RA_1LB---",
        ] {
            let (t, n) = from_text(text).unwrap();
            let want = reference::run(&reference::parse(text), 20_000).halted;
            let got = match p.run(&t, n, 20_000) {
                PlainRun::Halts { steps, ones, .. } => Some((steps, ones)),
                PlainRun::Running => None,
            };
            assert_eq!(got, want, "{text}");
        }
    }

    /// The 5-state champion (Marxen and Buntrock, 1989): 47,176,870 steps
    /// and 4098 ones, halting on E reading 0. Run to completion, and not
    /// one step less.
    #[test]
    fn the_five_state_champion_halts() {
        let text = "1RB1LC_1RC1RB_1RD0LE_1LA1LD_1RZ0LA";
        assert_eq!(
            plain(text, 100_000_000),
            PlainRun::Halts {
                steps: 47_176_870,
                ones: 4098,
                at: 8
            }
        );
        assert_eq!(plain(text, 47_176_869), PlainRun::Running);
    }
}
