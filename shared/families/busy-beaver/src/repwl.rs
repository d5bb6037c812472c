//! Repeated word lists (RepWL), bbchallenge's decider for the last two
//! 4-state machines (The bbchallenge Collaboration 2025, section "Repeated
//! Word List"): the tape either side of the head is cut into words of `l`
//! cells from the head outwards, and a word repeated `T` times or more in a
//! row is taken to repeat any number `>= T` of times. Configurations of
//! such regular expressions are explored: facing a word repeated a fixed
//! number of times, the machine is run on one copy until it leaves it (a
//! macro step, at most `B` steps); facing `w^(T+)`, the configuration
//! splits into `w w^(T-1)` and `w w^(T+)`. A word pushed onto `w^(T-1)`
//! makes `w^(T+)`, a superset: each configuration stands for a set of real
//! ones that contains what the machine does. If the graph closes with no
//! undefined transition met (and no macro step running out), the machine
//! never halts.
//!
//! The head sits between cells facing one way (bbchallenge's directional
//! notation); words are stored from the head outwards, bit `i` the `i`-th
//! cell; blank words at the far ends are dropped (they are the blank tape).

use std::collections::HashSet;

use crate::machine::{Table, Transition};

/// Most blocks (words with their counts) a configuration may hold: a
/// graph whose configurations keep growing is not closing, and the cost
/// of each node grows with its tape.
pub const MAX_BLOCKS: usize = 64;

/// Longest words (a word is a `u64`, bit `i` its `i`-th cell).
pub const MAX_WORD: u32 = 64;

/// One side of the tape: (word, count) from the head outwards; a count of
/// `T` means `T` or more.
type Side = Vec<(u64, u8)>;

/// A configuration: state, facing right, left side, right side.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Config {
    state: u8,
    right_facing: bool,
    left: Side,
    right: Side,
}

/// The reusable containers of the decider.
#[derive(Default)]
pub struct RepWl {
    seen: HashSet<Config>,
    todo: Vec<Config>,
}

/// Pushes `word` onto the near end of `side`, merging with an equal word.
fn push(side: &mut Side, word: u64, t: u8) {
    match side.first_mut() {
        Some((w, c)) if *w == word => *c = (*c + 1).min(t),
        _ => side.insert(0, (word, 1)),
    }
}

/// Drops blank words at the far end (the blank tape goes on beyond).
fn trim(side: &mut Side) {
    while side.last().is_some_and(|&(w, _)| w == 0) {
        side.pop();
    }
}

/// Reverses the `l` low bits of `w` (`1 <= l <= 64`).
fn reverse(w: u64, l: u32) -> u64 {
    w.reverse_bits() >> (64 - l)
}

impl RepWl {
    /// Configurations the last [`RepWl::decide`] met.
    pub fn configs(&self) -> usize {
        self.seen.len()
    }

    /// Whether the graph of `l`-cell words with threshold `t` closes within
    /// `nodes` configurations, macro steps of at most `steps` steps.
    pub fn decide(&mut self, table: &Table, l: u32, t: u8, steps: u32, nodes: usize) -> bool {
        assert!((1..=MAX_WORD).contains(&l) && t >= 2);
        self.seen.clear();
        self.todo.clear();
        self.todo.push(Config {
            state: 0,
            right_facing: true,
            left: Vec::new(),
            right: Vec::new(),
        });
        while let Some(mut c) = self.todo.pop() {
            if self.seen.contains(&c) {
                continue;
            }
            if self.seen.len() >= nodes {
                return false;
            }
            self.seen.insert(c.clone());
            let facing = if c.right_facing {
                &mut c.right
            } else {
                &mut c.left
            };
            let (word, count) = facing.first().copied().unwrap_or((0, 1));
            if facing.is_empty() {
                facing.push((0, 1));
            }
            if count == t {
                // w^(T+) -> w w^(T-1) | w w^(T+)
                let mut exact = c.clone();
                let f = if exact.right_facing {
                    &mut exact.right
                } else {
                    &mut exact.left
                };
                f[0] = (word, t - 1);
                f.insert(0, (word, 1));
                let mut more = c;
                let f = if more.right_facing {
                    &mut more.right
                } else {
                    &mut more.left
                };
                f.insert(0, (word, 1));
                self.todo.push(exact);
                self.todo.push(more);
                continue;
            }
            // One copy of the word, left to right.
            if count == 1 {
                facing.remove(0);
            } else {
                facing[0].1 -= 1;
            }
            let mut cells = if c.right_facing {
                word
            } else {
                reverse(word, l)
            };
            let mut pos: i32 = if c.right_facing { 0 } else { l as i32 - 1 };
            let mut state = c.state;
            let mut n = 0;
            while (0..l as i32).contains(&pos) {
                n += 1;
                if n > steps {
                    return false;
                }
                let read = (cells >> pos) & 1;
                let Some(tr) = Transition::decode(table[2 * state as usize + read as usize]) else {
                    return false;
                };
                cells = (cells & !(1 << pos)) | (u64::from(tr.write) << pos);
                pos += if tr.right { 1 } else { -1 };
                state = tr.next;
            }
            c.state = state;
            if pos >= l as i32 {
                // Left the word on its right: it is now behind, on the left.
                c.right_facing = true;
                push(&mut c.left, reverse(cells, l), t);
            } else {
                c.right_facing = false;
                push(&mut c.right, cells, t);
            }
            trim(&mut c.left);
            trim(&mut c.right);
            if c.left.len() + c.right.len() > MAX_BLOCKS {
                return false;
            }
            self.todo.push(c);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_reverse() {
        assert_eq!(reverse(0b0001, 4), 0b1000);
        assert_eq!(reverse(0b0110, 4), 0b0110);
        assert_eq!(reverse(0b1, 1), 0b1);
        assert_eq!(reverse(0b011, 3), 0b110);
        assert_eq!(reverse(1, 64), 1 << 63);
        assert_eq!(reverse(0b1011, 35), 0b1101 << 31);
    }
}
