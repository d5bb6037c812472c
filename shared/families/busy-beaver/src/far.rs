//! Finite automata reduction (FAR), the direct DFA search: bbchallenge's
//! decider by Justin Blanchard (The bbchallenge Collaboration 2025,
//! section "Finite Automata Reduction"; Coq-BB5 checks such certificates),
//! implemented anew from its definitions.
//!
//! **The proof.** A regular language `L` of configurations that holds
//! every halting configuration, holds a configuration whenever it holds
//! the one a step later (closed *backwards*), and does not hold the
//! initial configuration, proves that the machine never halts: every
//! configuration from which a halt can be reached is in `L`, and the
//! blank tape is not. `L` is recognised by a two-part automaton reading a
//! configuration `u S@r v` from left to right:
//!
//! * a DFA with states `0..d` reads the cells `u` left of the head, and
//!   ignores leading blanks (`δ(0, 0) = 0`), ending in `q = δ*(u)`;
//! * an NFA then starts in state `(q, S)` and reads the cell under the
//!   head and the cells right of it, followed by any number of blanks; the
//!   configuration is in `L` if it can reach the absorbing state HALT.
//!
//! **The closure.** The NFA's transitions are the least relation with:
//! for an undefined `(S, r)`, `(q, S) -r-> HALT` for every `q`; for a
//! right move `(S, r) -> (w, R, T)`, `(q, S) -r-> (δ(q, w), T)`; for a left
//! move `(S, r) -> (w, L, T)`, for every `q` and cell `b`: everything
//! reachable from `(q, T)` reading `b` then `w` is reachable from
//! `(δ(q, b), S)` reading `r`. Each rule says that if the configuration
//! after the step can reach HALT, so can the one before it, so the
//! language is closed backwards for *any* DFA; the DFA is good when the
//! start `(0, A)` cannot reach HALT reading blanks.
//!
//! **The search.** DFAs are enumerated with their states numbered in
//! breadth-first order (each isomorphism class once), transition by
//! transition; the relation only grows as transitions are fixed, so a
//! prefix of a DFA whose partial relation already lets the start reach
//! HALT is abandoned with everything below it. Sizes `1..=max` are tried,
//! each reading the tape left to right and then right to left (the
//! mirrored machine). The search is bounded by a number of DFA prefixes
//! (`gas`).

use crate::machine::{Table, Transition, MAX_STATES};

/// Largest DFA: its NFA's `d * 5` states and HALT fit a `u64` bitset.
pub const MAX_DFA: usize = 12;

/// The NFA state HALT (bit 63; the others are `q * n + state`).
const HALT: usize = 63;

/// A transition of the machine as the closure rules see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    Halt,
    /// Moves in the direction the DFA reads (right when it reads left to
    /// right).
    Forward {
        write: u8,
        next: u8,
    },
    /// Moves against it.
    Backward {
        write: u8,
        next: u8,
    },
}

/// The NFA's transitions (successors of each state per cell read, a bit
/// per state) and the states that reach HALT reading blanks.
#[derive(Clone, Copy)]
struct Nfa {
    t: [[u64; 64]; 2],
    accepted: u64,
}

impl Nfa {
    const EMPTY: Nfa = Nfa {
        t: [[0; 64]; 2],
        accepted: 0,
    };
}

/// The reusable buffers of the search.
pub struct Far {
    /// The NFA after each DFA prefix (index: transitions fixed).
    plies: Vec<Nfa>,
    /// The DFA being built: entry `2 q + b` is `δ(q, b)`.
    dfa: [u8; 2 * MAX_DFA],
    rules: [Rule; 2 * MAX_STATES],
    n: usize,
    d: usize,
    /// DFA prefixes left to look at.
    gas: u64,
    /// DFA prefixes looked at by the last [`Far::decide`].
    pub prefixes: u64,
    /// Whether the DFA reads the mirrored machine.
    mirror: bool,
    /// Configurations of the machine's run, read left to right (index 0)
    /// and mirrored (index 1), that a good DFA must reject
    /// ([`Far::decide_guided`]); empty: an unguided search.
    samples: [Vec<Sample>; 2],
}

/// A configuration reached from the blank tape, as the automaton reads it:
/// the cells behind the head (from the far end towards the head), the
/// state, and the cell under the head followed by the cells ahead.
#[derive(Debug, Clone, Default)]
struct Sample {
    behind: Vec<u8>,
    state: u8,
    ahead: Vec<u8>,
}

impl Default for Far {
    fn default() -> Far {
        Far {
            plies: vec![Nfa::EMPTY; 2 * MAX_DFA + 1],
            dfa: [0; 2 * MAX_DFA],
            rules: [Rule::Halt; 2 * MAX_STATES],
            n: 0,
            d: 0,
            gas: 0,
            prefixes: 0,
            mirror: false,
            samples: [Vec::new(), Vec::new()],
        }
    }
}

#[inline]
fn bit(i: usize) -> u64 {
    1u64 << i
}

impl Far {
    /// Whether some DFA of at most `max_dfa` states (read either way)
    /// proves that the `n`-state `table` never halts from the blank tape,
    /// looking at most at `gas` DFA prefixes in all.
    pub fn decide(&mut self, table: &Table, n: usize, max_dfa: usize, gas: u64) -> bool {
        self.samples.iter_mut().for_each(Vec::clear);
        self.sizes(table, n, 1, max_dfa, gas)
    }

    /// The same search over the DFAs of `min_dfa..=max_dfa` states, guided
    /// by the run: configurations the machine reaches from the blank tape
    /// (`samples` of them, taken evenly over its first `steps` steps) must
    /// be rejected by every good DFA, since the language of a good DFA is
    /// closed backwards and does not hold the blank tape, so a DFA prefix
    /// whose partial automaton already accepts one of them is abandoned
    /// with everything below it. The prefixes this prunes lead to no
    /// certificate, so the answer is the unguided search's with more gas.
    pub fn decide_guided(
        &mut self,
        table: &Table,
        n: usize,
        dfa: (usize, usize),
        gas: u64,
        run: (u32, usize),
    ) -> bool {
        self.sample(table, n, run.0, run.1);
        self.sizes(table, n, dfa.0, dfa.1, gas)
    }

    fn sizes(&mut self, table: &Table, n: usize, min_dfa: usize, max_dfa: usize, gas: u64) -> bool {
        assert!((1..=MAX_STATES).contains(&n) && max_dfa <= MAX_DFA && min_dfa >= 1);
        self.n = n;
        self.gas = gas;
        self.prefixes = 0;
        for d in min_dfa..=max_dfa {
            for mirror in [false, true] {
                self.mirror = mirror;
                self.set_rules(table, mirror);
                if self.search(d) {
                    return true;
                }
                if self.gas == 0 {
                    return false;
                }
            }
        }
        false
    }

    /// The DFA of the last successful [`Far::decide`] (`δ(q, b)` at
    /// `2 q + b`).
    pub fn dfa(&self) -> &[u8] {
        &self.dfa[..2 * self.d]
    }

    /// The last successful search's reading direction (mirrored or not)
    /// and DFA.
    pub fn found(&self) -> (bool, &[u8]) {
        (self.mirror, self.dfa())
    }

    fn set_rules(&mut self, table: &Table, mirror: bool) {
        for (i, rule) in self.rules.iter_mut().enumerate().take(2 * self.n) {
            *rule = match Transition::decode(table[i]) {
                None => Rule::Halt,
                Some(t) if t.right != mirror => Rule::Forward {
                    write: t.write,
                    next: t.next,
                },
                Some(t) => Rule::Backward {
                    write: t.write,
                    next: t.next,
                },
            };
        }
    }

    /// Runs `table` from the blank tape for up to `steps` steps and keeps
    /// `count` of its configurations, evenly spaced in time, in both
    /// reading directions (fewer if it halts first).
    fn sample(&mut self, table: &Table, n: usize, steps: u32, count: usize) {
        self.samples.iter_mut().for_each(Vec::clear);
        let width = 2 * steps as usize + 3;
        let mut tape = vec![0u8; width];
        let (mut pos, mut lo, mut hi) =
            (steps as usize + 1, steps as usize + 1, steps as usize + 1);
        let mut state = 0usize;
        let every = (steps as usize / count.max(1)).max(1);
        for t in 1..=steps as usize {
            let read = usize::from(tape[pos]);
            let Some(tr) = Transition::decode(table[2 * state + read]) else {
                return;
            };
            debug_assert!(usize::from(tr.next) < n);
            tape[pos] = tr.write;
            if tr.right {
                pos += 1;
            } else {
                pos -= 1;
            }
            lo = lo.min(pos);
            hi = hi.max(pos);
            state = usize::from(tr.next);
            if t % every == 0 && self.samples[0].len() < count {
                self.samples[0].push(Sample {
                    behind: tape[lo..pos].to_vec(),
                    state: state as u8,
                    ahead: tape[pos..=hi].to_vec(),
                });
                self.samples[1].push(Sample {
                    behind: tape[pos + 1..=hi].iter().rev().copied().collect(),
                    state: state as u8,
                    ahead: tape[lo..=pos].iter().rev().copied().collect(),
                });
            }
        }
    }

    /// Whether the automaton of DFA prefix `0..filled` (`nfa`) accepts a
    /// sample whose cells behind the head the prefix reads to the end.
    fn accepts_a_sample(&self, nfa: &Nfa, filled: usize) -> bool {
        'samples: for s in &self.samples[usize::from(self.mirror)] {
            let mut q = 0usize;
            for &c in &s.behind {
                let e = 2 * q + usize::from(c);
                if e >= filled {
                    continue 'samples;
                }
                q = usize::from(self.dfa[e]);
            }
            let mut set = bit(self.at(q, usize::from(s.state)));
            for &c in &s.ahead {
                let mut next = 0u64;
                let mut m = set;
                while m != 0 {
                    let i = m.trailing_zeros() as usize;
                    m &= m - 1;
                    next |= nfa.t[usize::from(c)][i];
                }
                set = next;
                if set == 0 {
                    continue 'samples;
                }
            }
            if set & nfa.accepted != 0 {
                return true;
            }
        }
        false
    }

    /// The NFA state `(q, state)`.
    #[inline]
    fn at(&self, q: usize, state: usize) -> usize {
        q * self.n + state
    }

    /// Searches the DFAs of exactly `d` states.
    fn search(&mut self, d: usize) -> bool {
        self.d = d;
        let mut nfa = Nfa::EMPTY;
        nfa.t[0][HALT] = bit(HALT);
        nfa.t[1][HALT] = bit(HALT);
        nfa.accepted = bit(HALT);
        for f in 0..self.n {
            for r in 0..2 {
                if self.rules[2 * f + r] == Rule::Halt {
                    for q in 0..d {
                        nfa.t[r][self.at(q, f)] |= bit(HALT);
                    }
                }
            }
        }
        close_accepted(&mut nfa);
        if nfa.accepted & bit(0) != 0 {
            return false;
        }
        self.plies[0] = nfa;
        self.extend(0, 0)
    }

    /// Tries every value of DFA entry `p` (entries `< p` fixed, states
    /// `0..=top` reached so far) and everything below it.
    fn extend(&mut self, p: usize, top: usize) -> bool {
        let (lo, hi) = entry_range(p, top, self.d);
        for v in lo..=hi {
            if self.gas == 0 {
                return false;
            }
            self.gas -= 1;
            self.prefixes += 1;
            self.dfa[p] = v as u8;
            self.plies[p + 1] = self.plies[p];
            if !self.saturate(p) {
                continue;
            }
            if p + 1 == 2 * self.d || self.extend(p + 1, top.max(v)) {
                return true;
            }
        }
        false
    }

    /// Adds to the NFA of ply `p + 1` what DFA entry `p` implies; false if
    /// the start then reaches HALT (no DFA with this prefix works).
    fn saturate(&mut self, p: usize) -> bool {
        let (q_new, b_new) = (p / 2, p % 2);
        let n = self.n;
        let mut nfa = self.plies[p + 1];
        for f in 0..n {
            for r in 0..2 {
                if let Rule::Forward { write, next } = self.rules[2 * f + r] {
                    if usize::from(write) == b_new {
                        let q2 = usize::from(self.dfa[2 * q_new + b_new]);
                        nfa.t[r][self.at(q_new, f)] |= bit(self.at(q2, usize::from(next)));
                    }
                }
            }
        }
        loop {
            let mut grew = false;
            for f in 0..n {
                for r in 0..2 {
                    let Rule::Backward { write, next } = self.rules[2 * f + r] else {
                        continue;
                    };
                    for pp in 0..=p {
                        let (q, b) = (pp / 2, pp % 2);
                        let from = self.at(usize::from(self.dfa[pp]), f);
                        let mut mid = nfa.t[b][self.at(q, usize::from(next))];
                        let mut new = 0u64;
                        while mid != 0 {
                            let s = mid.trailing_zeros() as usize;
                            mid &= mid - 1;
                            new |= nfa.t[usize::from(write)][s];
                        }
                        if new & !nfa.t[r][from] != 0 {
                            nfa.t[r][from] |= new;
                            grew = true;
                        }
                    }
                }
            }
            if !grew {
                break;
            }
        }
        close_accepted(&mut nfa);
        self.plies[p + 1] = nfa;
        nfa.accepted & bit(0) == 0 && !self.accepts_a_sample(&nfa, p + 1)
    }
}

/// The values DFA entry `p` may take when states `0..=top` are reached by
/// the entries before it, in a `d`-state DFA numbered breadth first: any
/// state reached or the next new one, except that `δ(0, 0) = 0` (leading
/// blanks are ignored) and that the last entry of state `top`'s row must
/// reach `top + 1` if the DFA has more states (else they are unreachable).
fn entry_range(p: usize, top: usize, d: usize) -> (usize, usize) {
    if p == 0 {
        (0, 0)
    } else if top + 1 < d && p == 2 * top + 1 {
        (top + 1, top + 1)
    } else {
        (0, (top + 1).min(d - 1))
    }
}

/// Adds to `accepted` every state with a blank-reading transition into it.
fn close_accepted(nfa: &mut Nfa) {
    loop {
        let mut grown = nfa.accepted;
        for (s, &succ) in nfa.t[0].iter().enumerate() {
            if succ & nfa.accepted != 0 {
                grown |= bit(s);
            }
        }
        if grown == nfa.accepted {
            return;
        }
        nfa.accepted = grown;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::from_text;

    fn far(text: &str, d: usize) -> bool {
        let (t, n) = from_text(text).unwrap();
        Far::default().decide(&t, n, d, u64::MAX)
    }

    /// The search's numbering rules give every connected binary DFA that
    /// ignores leading blanks once up to isomorphism: OEIS A107668 counts
    /// them (1, 4, 45, 816).
    #[test]
    fn every_dfa_once() {
        fn complete(p: usize, top: usize, d: usize) -> u64 {
            if p == 2 * d {
                return 1;
            }
            let (lo, hi) = entry_range(p, top, d);
            (lo..=hi).map(|v| complete(p + 1, top.max(v), d)).sum()
        }
        for (d, want) in [(1, 1u64), (2, 4), (3, 45), (4, 816)] {
            assert_eq!(complete(0, 0, d), want, "{d} states");
        }
    }

    #[test]
    fn halting_machines_are_never_proved() {
        for text in [
            "1RB1LB_1LA0LC_---1LD_1RD0RA",
            "1RB---_1LB0RC_1LC1LA",
            "1RB1LC_1RC1RB_1RD0LE_1LA1LD_---0LA",
        ] {
            assert!(!far(text, 5), "{text}");
        }
    }

    #[test]
    fn simple_nonhalters_are_proved() {
        // Runs right forever: one DFA state suffices.
        assert!(far("0RA---", 1));
        // Halting transition unreachable: B is never entered.
        assert!(far("1RA---_1LB---", 1));
    }
}
