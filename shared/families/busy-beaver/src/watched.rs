//! The watched run: a machine run from the blank tape for a step limit,
//! halting when it reaches an undefined transition, or proved never to by
//! a cycler (Brent's cycle detection) or a translated cycler (record
//! configurations compared, see [`crate::decide`]).

use crate::decide::{Decider, Outcome, Workspace, RECORDS_KEPT};
use crate::machine::{Table, Transition, MAX_STATES};

/// A record configuration: where and when, in which state, and the 128
/// cells behind the head (bit `i`: `i` cells back).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Record {
    time: u32,
    pos: u32,
    state: u8,
    behind: u128,
}

/// The last [`RECORDS_KEPT`] records of one side.
pub(crate) struct Ring {
    items: [Record; RECORDS_KEPT],
    len: usize,
    next: usize,
}

impl Ring {
    pub(crate) fn new() -> Ring {
        Ring {
            items: [Record::default(); RECORDS_KEPT],
            len: 0,
            next: 0,
        }
    }

    fn clear(&mut self) {
        self.len = 0;
        self.next = 0;
    }

    fn push(&mut self, r: Record) {
        self.items[self.next] = r;
        self.next = (self.next + 1) % RECORDS_KEPT;
        self.len = (self.len + 1).min(RECORDS_KEPT);
    }
}

impl Workspace {
    /// Runs up to `limit` steps (at most the workspace's longest), watching
    /// for cyclers and translated cyclers as it goes; also returns the
    /// steps it ran.
    pub(crate) fn run(&mut self, table: &Table, n: usize, limit: u32) -> (Outcome, u32) {
        debug_assert!(n <= MAX_STATES && limit <= self.steps.max(self.long));
        let (a, b) = self.touched;
        self.tape[a..=b].fill(0);
        let origin = self.origin();
        let mut pos = origin;
        let mut state = 0u8;
        let (mut lo, mut hi) = (origin, origin);
        // Brent: the kept configuration and the steps since it was kept.
        let (mut snap_state, mut snap_pos, mut slo, mut shi) = (0u8, origin, origin, origin);
        self.snap[0] = 0;
        let (mut power, mut lam) = (1u32, 0u32);
        self.min_stack.clear();
        self.max_stack.clear();
        self.min_stack.push((0, origin as u32));
        self.max_stack.push((0, origin as u32));
        self.right.clear();
        self.left.clear();

        let mut outcome = Outcome::Undecided;
        let mut ran = limit;
        for t in 0..limit {
            let read = self.tape[pos];
            let at = 2 * state as usize + read as usize;
            let Some(tr) = Transition::decode(table[at]) else {
                let ones = self.tape[lo..=hi]
                    .iter()
                    .map(|&c| u32::from(c))
                    .sum::<u32>()
                    + u32::from(read == 0);
                outcome = Outcome::Halts {
                    steps: t + 1,
                    ones,
                    at: at as u8,
                };
                ran = t + 1;
                break;
            };
            self.tape[pos] = tr.write;
            if tr.right {
                pos += 1;
            } else {
                pos -= 1;
            }
            state = tr.next;
            let now = t + 1;
            let p = pos as u32;
            while self.min_stack.last().is_some_and(|e| e.1 >= p) {
                self.min_stack.pop();
            }
            self.min_stack.push((now, p));
            while self.max_stack.last().is_some_and(|e| e.1 <= p) {
                self.max_stack.pop();
            }
            self.max_stack.push((now, p));

            if pos > hi {
                hi = pos;
                if self.right_record(now, pos, state, lo) {
                    outcome = Outcome::Never(Decider::TranslatedCycler);
                    ran = now;
                    break;
                }
            } else if pos < lo {
                lo = pos;
                if self.left_record(now, pos, state, hi) {
                    outcome = Outcome::Never(Decider::TranslatedCycler);
                    ran = now;
                    break;
                }
            }

            lam += 1;
            if state == snap_state
                && pos == snap_pos
                && self.tape[lo..slo].iter().all(|&c| c == 0)
                && self.tape[slo..=shi] == self.snap[..=shi - slo]
                && self.tape[shi + 1..=hi].iter().all(|&c| c == 0)
            {
                outcome = Outcome::Never(Decider::Cycler);
                ran = now;
                break;
            }
            if lam == power {
                snap_state = state;
                snap_pos = pos;
                slo = lo;
                shi = hi;
                self.snap[..=hi - lo].copy_from_slice(&self.tape[lo..=hi]);
                power *= 2;
                lam = 0;
            }
        }
        self.touched = (lo, hi);
        (outcome, ran)
    }

    /// The tape cell the head starts on: the head stays within the longest
    /// run's steps of it.
    fn origin(&self) -> usize {
        self.steps.max(self.long) as usize + 1
    }

    /// A record on the right at `pos`: is it a translated repeat of an
    /// earlier one? Then keeps it.
    fn right_record(&mut self, now: u32, pos: usize, state: u8, lo: usize) -> bool {
        let mut behind = 0u128;
        for i in 0..128.min(pos - lo + 1) {
            behind |= u128::from(self.tape[pos - i]) << i;
        }
        let ring = &self.right;
        for r in &ring.items[..ring.len] {
            if r.state != state {
                continue;
            }
            // The leftmost cell visited from r.time to now.
            let k = self.min_stack.partition_point(|e| e.0 < r.time);
            let span = r.pos - self.min_stack[k].1;
            if span < 128 && same_low_bits(behind, r.behind, span) {
                return true;
            }
        }
        self.right.push(Record {
            time: now,
            pos: pos as u32,
            state,
            behind,
        });
        false
    }

    /// The mirror image of [`Workspace::right_record`].
    fn left_record(&mut self, now: u32, pos: usize, state: u8, hi: usize) -> bool {
        let mut behind = 0u128;
        for i in 0..128.min(hi - pos + 1) {
            behind |= u128::from(self.tape[pos + i]) << i;
        }
        let ring = &self.left;
        for r in &ring.items[..ring.len] {
            if r.state != state {
                continue;
            }
            let k = self.max_stack.partition_point(|e| e.0 < r.time);
            let span = self.max_stack[k].1 - r.pos;
            if span < 128 && same_low_bits(behind, r.behind, span) {
                return true;
            }
        }
        self.left.push(Record {
            time: now,
            pos: pos as u32,
            state,
            behind,
        });
        false
    }
}

/// Whether `a` and `b` agree on bits `0..=span`.
#[inline]
fn same_low_bits(a: u128, b: u128, span: u32) -> bool {
    let mask = if span >= 127 {
        u128::MAX
    } else {
        (1u128 << (span + 1)) - 1
    };
    (a ^ b) & mask == 0
}
