//! Partial Turing machines: `n` states (the chapter's "cards"), two
//! symbols, a transition per (state, symbol read) that is either defined
//! (write, move, next state) or undefined. Reaching an undefined transition
//! is the halting step: the machine halts there, and the step counts.
//!
//! A machine is a [`Table`] of bytes, one per transition, index
//! `2 * state + read`: `0` for undefined, else `1 + write + 2 * right + 4 *
//! next`. The text form is bbchallenge's: one block of two transitions per
//! state, blocks joined by `_`, a transition written `1RB` (write 1, move
//! right, go to B) or `---` (undefined); a halting transition that was
//! reached is written `1RZ` (the halting step writes a 1, see
//! [`crate::search`]).

use std::fmt::Write as _;

/// Most states a job may have: 5, the largest number of states whose
/// busy beaver values are determined (bbchallenge 2024) and whose tree of
/// 181 million machines a cluster run can enumerate.
pub const MAX_STATES: usize = 5;

/// The transitions of a machine with at most [`MAX_STATES`] states; the
/// entries past `2 n` are 0.
pub type Table = [u8; 2 * MAX_STATES];

/// A defined transition, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transition {
    pub write: u8,
    pub right: bool,
    pub next: u8,
}

impl Transition {
    /// The byte of this transition in a [`Table`].
    pub fn encode(self) -> u8 {
        1 + self.write + 2 * u8::from(self.right) + 4 * self.next
    }

    /// The transition a table byte holds (`None`: undefined).
    #[inline(always)]
    pub fn decode(byte: u8) -> Option<Transition> {
        let b = byte.checked_sub(1)?;
        Some(Transition {
            write: b & 1,
            right: b & 2 != 0,
            next: b >> 2,
        })
    }
}

/// Whether `table` is a well-formed table of an `n`-state machine: every
/// defined transition goes to one of the `n` states, nothing past `2 n`.
pub fn is_well_formed(table: &Table, n: usize) -> bool {
    table.iter().enumerate().all(|(i, &b)| {
        if i >= 2 * n {
            b == 0
        } else {
            b == 0 || (b <= 4 * n as u8)
        }
    })
}

/// bbchallenge's text form of an `n`-state table. `halt`: the undefined
/// transition (index) the machine halts on, written `1RZ`.
pub fn to_text(table: &Table, n: usize, halt: Option<usize>) -> String {
    let mut s = String::with_capacity(7 * n);
    for (i, &byte) in table.iter().enumerate().take(2 * n) {
        if i > 0 && i % 2 == 0 {
            s.push('_');
        }
        match Transition::decode(byte) {
            Some(t) => {
                let _ = write!(
                    s,
                    "{}{}{}",
                    t.write,
                    if t.right { 'R' } else { 'L' },
                    (b'A' + t.next) as char
                );
            }
            None if halt == Some(i) => s.push_str("1RZ"),
            None => s.push_str("---"),
        }
    }
    s
}

/// Reads bbchallenge's text form: `1RB1LB_1LA0LC_...`. A transition to `Z`
/// (halt) or `---` is undefined. Returns the table and its number of states.
pub fn from_text(text: &str) -> Result<(Table, usize), String> {
    let blocks: Vec<&str> = text.split('_').collect();
    let n = blocks.len();
    if n == 0 || n > MAX_STATES {
        return Err(format!("{text}: 1 to {MAX_STATES} states expected"));
    }
    let mut table = [0u8; 2 * MAX_STATES];
    for (state, block) in blocks.iter().enumerate() {
        let b = block.as_bytes();
        if b.len() != 6 {
            return Err(format!("{text}: block {block} is not two transitions"));
        }
        for read in 0..2 {
            let t = &b[3 * read..3 * read + 3];
            if t == b"---" || t[2] == b'Z' || t[2] == b'H' {
                continue;
            }
            let write = match t[0] {
                b'0' => 0,
                b'1' => 1,
                _ => return Err(format!("{text}: bad symbol in {block}")),
            };
            let right = match t[1] {
                b'R' => true,
                b'L' => false,
                _ => return Err(format!("{text}: bad move in {block}")),
            };
            let next = t[2].wrapping_sub(b'A');
            if next as usize >= n {
                return Err(format!("{text}: bad state in {block}"));
            }
            table[2 * state + read] = Transition { write, right, next }.encode();
        }
    }
    Ok((table, n))
}

/// Number of undefined transitions among the first `2 n`.
pub fn undefined_count(table: &Table, n: usize) -> usize {
    table[..2 * n].iter().filter(|&&b| b == 0).count()
}

/// The highest state some defined transition goes to (0, A, when none):
/// in tree normal form the states in use are `0..=highest`.
pub fn highest_state(table: &Table) -> u8 {
    table
        .iter()
        .filter_map(|&b| Transition::decode(b))
        .map(|t| t.next)
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_round_trip() {
        for text in [
            "1RB1LB_1LA0LC_---1LD_1RD0RA",
            "0RA---",
            "1RB---_1LB0RC_1LC1LA",
            "------_------",
        ] {
            let (t, n) = from_text(text).unwrap();
            assert!(is_well_formed(&t, n));
            assert_eq!(to_text(&t, n, None), text);
        }
        let (t, n) = from_text("1RB1LC_1RC1RB_1RD0LE_1LA1LD_1RZ0LA").unwrap();
        assert_eq!(n, 5);
        assert_eq!(
            to_text(&t, n, Some(8)),
            "1RB1LC_1RC1RB_1RD0LE_1LA1LD_1RZ0LA"
        );
        assert!(from_text("1RB1LC_1RC1RB_1RD0LE_1LA1LD_1RZ0LA_1RA1RA").is_err());
        let (t, n) = from_text("1RB1LB_1LA0LC_1RZ1LD_1RD0RA").unwrap();
        assert_eq!(to_text(&t, n, Some(4)), "1RB1LB_1LA0LC_1RZ1LD_1RD0RA");
        assert!(from_text("1RB1LB_1LA0LE").is_err());
        assert!(from_text("1RB").is_err());
    }

    #[test]
    fn encoding_is_dense() {
        let mut seen = Vec::new();
        for next in 0..MAX_STATES as u8 {
            for write in 0..2 {
                for right in [false, true] {
                    let t = Transition { write, right, next };
                    let b = t.encode();
                    assert_eq!(Transition::decode(b), Some(t));
                    seen.push(b);
                }
            }
        }
        seen.sort_unstable();
        assert_eq!(seen, (1..=4 * MAX_STATES as u8).collect::<Vec<u8>>());
        assert_eq!(Transition::decode(0), None);
    }
}
