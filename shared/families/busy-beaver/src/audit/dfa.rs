//! The check of a finite automata reduction certificate (a DFA), written
//! from the definitions and apart from the search ([`crate::far`], whose
//! bitset closure it does not share).
//!
//! A configuration `u S@r v` (cells `u` behind the head, state `S`, cell
//! `r` under the head, cells `v` ahead) is in the language `L` when, with
//! `q` the state the DFA reaches reading `u` from state 0, the NFA can go
//! from `(q, S)` reading `r v` and then any number of blanks to HALT. The
//! NFA is the least one with these transitions:
//!
//! 1. HALT reads either cell and stays HALT;
//! 2. for an undefined transition `(S, r)`, `(q, S) -r-> HALT` for every
//!    `q` (a halting configuration is in `L`);
//! 3. for `(S, r) -> (w, ahead, T)` (the head moves in the direction the
//!    DFA reads), `(q, S) -r-> (δ(q, w), T)` for every `q`;
//! 4. for `(S, r) -> (w, behind, T)`, for every `q` and cell `b`: every
//!    state the NFA reaches from `(q, T)` reading `b` then `w` is also a
//!    successor of `(δ(q, b), S)` reading `r`.
//!
//! Each rule makes `L` hold a configuration whenever it holds the one a
//! step later (rule 4: `u b S@r v` steps to `u T@b w v`), so every
//! configuration from which the machine halts is in `L`. With `δ(0, 0) =
//! 0` (leading blanks change nothing), the blank tape is in `L` exactly
//! when `(0, A)` reaches HALT reading blanks; if it does not, the machine
//! never halts from the blank tape.

use std::collections::BTreeSet;

use crate::audit::MAX_CERTIFICATE_DFA;
use crate::machine::{Table, Transition, MAX_STATES};

/// Why a DFA is not a certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DfaError {
    /// No state, more than [`MAX_CERTIFICATE_DFA`], an odd table or a transition
    /// leaving the states.
    #[error("malformed DFA")]
    Malformed,
    /// `δ(0, 0) != 0`: leading blanks would change the state.
    #[error("the blank transition of state 0 is not 0")]
    BlankNotNeutral,
    /// The blank tape is in the language: the DFA proves nothing.
    #[error("the blank tape reaches HALT")]
    BlankTapeAccepted,
}

/// Whether `dfa` (`δ(q, b)` at `2 q + b`) proves that the `n`-state
/// `table` never halts from the blank tape, the DFA reading the tape left
/// to right, or right to left when `mirror`.
pub fn verify(table: &Table, n: usize, mirror: bool, dfa: &[u8]) -> Result<(), DfaError> {
    let d = dfa.len() / 2;
    if n == 0
        || n > MAX_STATES
        || d == 0
        || d > MAX_CERTIFICATE_DFA
        || !dfa.len().is_multiple_of(2)
        || dfa.iter().any(|&x| usize::from(x) >= d)
    {
        return Err(DfaError::Malformed);
    }
    if dfa[0] != 0 {
        return Err(DfaError::BlankNotNeutral);
    }
    let delta = |q: usize, b: usize| usize::from(dfa[2 * q + b]);
    let node = |q: usize, s: usize| q * n + s;
    let halt = d * n;
    // succ[b][x]: the NFA's successors of x reading b.
    let mut succ: [Vec<BTreeSet<usize>>; 2] = [
        vec![BTreeSet::new(); halt + 1],
        vec![BTreeSet::new(); halt + 1],
    ];
    for set in &mut succ {
        set[halt].insert(halt);
    }
    let mut behind = Vec::new();
    for s in 0..n {
        for r in 0..2 {
            match Transition::decode(table[2 * s + r]) {
                None => {
                    for q in 0..d {
                        succ[r][node(q, s)].insert(halt);
                    }
                }
                Some(t) if t.right != mirror => {
                    let (w, next) = (usize::from(t.write), usize::from(t.next));
                    for q in 0..d {
                        succ[r][node(q, s)].insert(node(delta(q, w), next));
                    }
                }
                Some(t) => behind.push((s, r, usize::from(t.write), usize::from(t.next))),
            }
        }
    }
    // Rule 4, to a fixed point.
    loop {
        let mut grew = false;
        for &(s, r, w, next) in &behind {
            for q in 0..d {
                for b in 0..2 {
                    let mid = succ[b][node(q, next)].clone();
                    let mut reached = BTreeSet::new();
                    for x in mid {
                        reached.extend(succ[w][x].iter().copied());
                    }
                    let target = &mut succ[r][node(delta(q, b), s)];
                    for y in reached {
                        grew |= target.insert(y);
                    }
                }
            }
        }
        if !grew {
            break;
        }
    }
    // The states that reach HALT reading blanks only.
    let mut accepting = BTreeSet::from([halt]);
    loop {
        let before = accepting.len();
        for (x, next) in succ[0].iter().enumerate() {
            if next.iter().any(|y| accepting.contains(y)) {
                accepting.insert(x);
            }
        }
        if accepting.len() == before {
            break;
        }
    }
    if accepting.contains(&node(0, 0)) {
        Err(DfaError::BlankTapeAccepted)
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::far::Far;
    use crate::machine::from_text;

    #[test]
    fn a_dfa_the_search_finds_verifies_and_fails_on_a_halting_machine() {
        // Runs right forever: one state suffices.
        let (t, n) = from_text("0RA---").unwrap();
        assert_eq!(verify(&t, n, false, &[0, 0]), Ok(()));
        // The 4-state champion halts: no DFA can prove otherwise.
        let (h, hn) = from_text("1RB1LB_1LA0LC_---1LD_1RD0RA").unwrap();
        for dfa in [[0u8, 0].as_slice(), &[0, 1, 1, 0], &[0, 1, 2, 1, 0, 2]] {
            for mirror in [false, true] {
                assert_eq!(
                    verify(&h, hn, mirror, dfa),
                    Err(DfaError::BlankTapeAccepted)
                );
            }
        }
        // What the search finds on machines it settles, this verifies.
        let mut far = Far::default();
        for text in [
            "1RB1LB_1LA1RC_1LA0RD_0LA---",
            "1RB---_0RC1LC_1RD1RC_1LE1LD_0RA0LE",
        ] {
            let (t, n) = from_text(text).unwrap();
            if far.decide(&t, n, 4, 10_000_000) {
                let (mirror, dfa) = far.found();
                assert_eq!(verify(&t, n, mirror, dfa), Ok(()), "{text}");
            }
        }
    }

    /// Coq-BB5's DFAs (`Verifier_FAR_Hardcoded_Certificates.v`) of
    /// machines the earlier stages leave, read left to right; the same
    /// DFA fails on a machine that halts.
    #[test]
    fn coq_bb5_dfas_verify() {
        let certificates: [(&str, &[u8]); 3] = [
            (
                "1RB1RC_1LC1RB_1LD0RA_1LE0LB_1LA---",
                &[0, 1, 2, 1, 3, 4, 5, 6, 7, 2, 5, 5, 5, 5, 3, 8, 7, 2],
            ),
            (
                "1RB1RA_1LC0LD_---1LD_1RE1LE_0RA0LB",
                &[0, 1, 2, 3, 4, 5, 6, 0, 4, 4, 4, 7, 4, 8, 4, 2, 4, 9, 4, 6],
            ),
            (
                "1RB0LE_1RC---_0RD0RC_1LD0LA_0LB0LE",
                &[0, 1, 2, 3, 4, 4, 5, 6, 4, 4, 7, 4, 2, 4, 8, 9, 5, 6, 4, 3],
            ),
        ];
        for (text, d) in certificates {
            let (t, n) = from_text(text).unwrap();
            assert_eq!(verify(&t, n, false, d), Ok(()), "{text}");
        }
        let (h, hn) = from_text("1RB1LC_1RC1RB_1RD0LE_1LA1LD_---0LA").unwrap();
        for (_, d) in certificates {
            assert_eq!(verify(&h, hn, false, d), Err(DfaError::BlankTapeAccepted));
        }
    }

    #[test]
    fn malformed_dfas_are_refused() {
        let (t, n) = from_text("0RA---").unwrap();
        assert_eq!(verify(&t, n, false, &[]), Err(DfaError::Malformed));
        assert_eq!(verify(&t, n, false, &[0, 2]), Err(DfaError::Malformed));
        assert_eq!(
            verify(&t, n, false, &[1, 0, 0, 0]),
            Err(DfaError::BlankNotNeutral)
        );
    }
}
