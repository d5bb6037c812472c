//! A machine's configuration, stepped one transition at a time: what the
//! audit's certificates are found and re-verified on. Separate from the
//! deciders' runs, so that a certificate is checked by other code than the
//! one that found the verdict.

use crate::machine::{Table, Transition};

/// State, head and the visited cells of a run from the blank tape.
#[derive(Debug, Clone, Default)]
pub(crate) struct Config {
    /// Cells `lo..=hi` (relative to `origin`) have been visited.
    cells: Vec<u8>,
    origin: usize,
    pub pos: usize,
    pub lo: usize,
    pub hi: usize,
    pub state: u8,
    /// Steps run.
    pub time: u64,
}

/// What one step did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// The head moved to a cell visited before.
    Moved,
    /// The head moved right of every cell visited before.
    RightRecord,
    /// The head moved left of every cell visited before.
    LeftRecord,
    /// The transition to take is undefined.
    Halted,
}

impl Config {
    /// The blank tape, room for `steps` steps either way (kept between
    /// runs: allocates only when a run needs more room than any before).
    pub fn reset(&mut self, steps: u64) {
        let need = 2 * steps as usize + 3;
        if self.cells.len() < need {
            self.cells = vec![0; need];
        } else if self.hi >= self.lo && !self.cells.is_empty() {
            self.cells[self.lo..=self.hi].fill(0);
        }
        self.origin = self.cells.len() / 2;
        self.pos = self.origin;
        self.lo = self.origin;
        self.hi = self.origin;
        self.state = 0;
        self.time = 0;
    }

    /// One step of `table` (the room given to `reset` must not be used up).
    #[inline]
    pub fn step(&mut self, table: &Table) -> Step {
        let read = self.cells[self.pos];
        let Some(t) = Transition::decode(table[2 * self.state as usize + read as usize]) else {
            return Step::Halted;
        };
        self.cells[self.pos] = t.write;
        self.state = t.next;
        self.time += 1;
        if t.right {
            self.pos += 1;
            if self.pos > self.hi {
                self.hi = self.pos;
                return Step::RightRecord;
            }
        } else {
            self.pos -= 1;
            if self.pos < self.lo {
                self.lo = self.pos;
                return Step::LeftRecord;
            }
        }
        Step::Moved
    }

    /// The head's position relative to the start.
    pub fn head(&self) -> i64 {
        self.pos as i64 - self.origin as i64
    }

    /// The cell at `p` relative to the start (blank outside the visited
    /// cells).
    pub fn cell(&self, p: i64) -> u8 {
        let i = p + self.origin as i64;
        if i < self.lo as i64 || i > self.hi as i64 {
            0
        } else {
            self.cells[i as usize]
        }
    }

    /// The visited cells' range relative to the start.
    pub fn span(&self) -> (i64, i64) {
        (
            self.lo as i64 - self.origin as i64,
            self.hi as i64 - self.origin as i64,
        )
    }

    /// Whether two configurations are equal: state, head, every cell.
    pub fn same(&self, other: &Config) -> bool {
        if self.state != other.state || self.head() != other.head() {
            return false;
        }
        let (a, b) = self.span();
        let (c, d) = other.span();
        (a.min(c)..=b.max(d)).all(|p| self.cell(p) == other.cell(p))
    }

    /// Copies `other` into this configuration (the cells it visited).
    pub fn copy_from(&mut self, other: &Config) {
        if self.cells.len() != other.cells.len() {
            self.cells = vec![0; other.cells.len()];
        } else if self.hi >= self.lo {
            self.cells[self.lo..=self.hi].fill(0);
        }
        self.cells[other.lo..=other.hi].copy_from_slice(&other.cells[other.lo..=other.hi]);
        self.origin = other.origin;
        self.pos = other.pos;
        self.lo = other.lo;
        self.hi = other.hi;
        self.state = other.state;
        self.time = other.time;
    }
}
