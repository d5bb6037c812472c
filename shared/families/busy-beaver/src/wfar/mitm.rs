//! Meet-in-the-middle WFAR search: weighted automata built on a pair of
//! DFAs that the machine's abstract steps close, the method of the
//! bbchallenge community's MITM-WFAR decider
//! (github.com/UncombedCoconut/MITMWFAR), implemented anew.
//!
//! **Base DFAs.** Each side starts as state 0 with `δ(0, 0) = 0` and a dead
//! state 1 (every unset transition leads to it, it to itself). The
//! unweighted closure of `(qL, qR, m, state)` from the blank tape (the
//! steps of [`super::verify`] without sums) either never needs a dead
//! transition, or meets a first configuration whose written cell would
//! take its side's DFA through an unset transition. Every pair that closes
//! and extends this one sets that transition (more transitions only add
//! configurations), so the search branches on its target, an existing
//! live state or a new one, like the enumeration of machines in tree
//! normal form, up to a number of live transitions (those besides
//! `δ(0, 0)`) over both sides, and of live states per side. Configurations
//! that read an undefined transition of the machine are kept (not
//! expanded): the weights are what must exclude them.
//!
//! **Weights.** On each pair that closes, with exactly the number of
//! live transitions of the round (smaller pairs were tried in earlier
//! rounds), one live transition of `L` is weighted `+1` and one of `R`
//! `-1` or `+1` (negating every weight maps certificates to
//! certificates, so `L`'s sign is fixed), optionally after giving both
//! automata a memory of their last `m` transitions: the states of the
//! transformed automaton are the live transitions of the previous one
//! (the start is `δ(0, 0)`'s), and a transition weighs what the original
//! one it copies weighs. The memory changes no half-tape's weight but
//! splits states, so the abstraction of the sums is finer; it is how the
//! certificates of 37 to 70 states arise. Each weighted pair goes through
//! the search's own closure (the same abstraction as [`super::verify`],
//! on packed keys), and a pair that closes counts only once
//! [`super::verify`] accepts it.

use super::{
    closure_limit, step_sums, verify, Certificate, Wdfa, ANY, D_FACTOR, D_SLACK, EXACT,
    MAX_CERTIFICATE_WDFA,
};
use crate::machine::{Table, Transition};

/// The dead state of a base DFA.
const DEAD: u8 = 1;

/// Most states of one base DFA, the dead state included.
pub const MAX_BASE: usize = 16;

/// What one search may try: the most live transitions of the two base
/// DFAs together, the most live states of one base DFA (the dead state
/// not counted), the memories tried on each pair (in order), the bounds
/// `max_d`, the most abstract configurations of one weighted closure, and
/// the most abstract configurations built in all (base and weighted
/// closures).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MitmLimits {
    pub transitions: usize,
    pub states: usize,
    pub memories: &'static [usize],
    pub bounds: &'static [i32],
    pub closure: usize,
    pub gas: u64,
}

/// A base DFA: states `0..k`, state 1 dead.
#[derive(Debug, Clone, Copy)]
struct Base {
    k: usize,
    next: [[u8; 2]; MAX_BASE],
}

impl Base {
    fn start() -> Base {
        let mut next = [[DEAD; 2]; MAX_BASE];
        next[0][0] = 0;
        Base { k: 2, next }
    }
}

/// Where the unweighted closure stopped.
enum BaseClosure {
    Closed,
    /// The transition `(q, b)` of the left (`true`) or right DFA is unset
    /// and needed.
    Needs(bool, u8, u8),
    /// The gas ran out.
    OutOfGas,
}

/// One side of a weighted pair: an automaton after the memory transform,
/// the base transition (`2 q + b`) each transition copies, its weights,
/// predecessor lists and sign sets, in reusable buffers.
#[derive(Default)]
struct Side {
    next: Vec<[u8; 2]>,
    origin: Vec<[u8; 2]>,
    weight: Vec<[i32; 2]>,
    pred_start: Vec<u32>,
    preds: Vec<(u8, u8)>,
    nonneg: Vec<bool>,
    nonpos: Vec<bool>,
    // Scratch of the memory transform.
    index: Vec<[u8; 2]>,
    cursor: Vec<u32>,
    tmp_next: Vec<[u8; 2]>,
    tmp_origin: Vec<[u8; 2]>,
}

/// No state: a transition the memory transform drops.
const NONE: u8 = u8::MAX;

impl Side {
    fn states(&self) -> usize {
        self.next.len()
    }

    /// Builds the automaton of `base` with a memory of `memory`
    /// transitions; false if it has more than [`MAX_CERTIFICATE_WDFA`]
    /// states.
    fn build(&mut self, base: &Base, memory: usize) -> bool {
        self.next.clear();
        self.origin.clear();
        for q in 0..base.k {
            self.next.push(base.next[q]);
            self.origin.push([2 * q as u8, 2 * q as u8 + 1]);
        }
        for _ in 0..memory {
            // New states: the live transitions (e, c); (0, 0) first as 0,
            // the dead state as 1.
            let k = self.states();
            self.index.clear();
            self.index.resize(k, [NONE; 2]);
            let mut count = 2usize;
            self.index[0][0] = 0;
            for e in 0..k {
                for c in 0..2 {
                    if (e, c) == (0, 0) || e == DEAD as usize || self.next[e][c] == DEAD {
                        continue;
                    }
                    if count >= MAX_CERTIFICATE_WDFA {
                        return false;
                    }
                    self.index[e][c] = count as u8;
                    count += 1;
                }
            }
            self.tmp_next.clear();
            self.tmp_next.resize(count, [DEAD; 2]);
            self.tmp_origin.clear();
            self.tmp_origin.resize(count, [NONE; 2]);
            for e in 0..k {
                for c in 0..2 {
                    let s = self.index[e][c];
                    if s == NONE {
                        continue;
                    }
                    let q = self.next[e][c] as usize;
                    for c2 in 0..2 {
                        self.tmp_origin[s as usize][c2] = self.origin[q][c2];
                        if self.next[q][c2] != DEAD {
                            self.tmp_next[s as usize][c2] = self.index[q][c2];
                        }
                    }
                }
            }
            self.tmp_origin[DEAD as usize] = self.origin[DEAD as usize];
            std::mem::swap(&mut self.next, &mut self.tmp_next);
            std::mem::swap(&mut self.origin, &mut self.tmp_origin);
        }
        let k = self.states();
        self.pred_start.clear();
        self.pred_start.resize(k + 1, 0);
        for p in 0..k {
            for h in 0..2 {
                self.pred_start[self.next[p][h] as usize + 1] += 1;
            }
        }
        for q in 0..k {
            self.pred_start[q + 1] += self.pred_start[q];
        }
        self.preds.clear();
        self.preds.resize(2 * k, (0, 0));
        self.cursor.clear();
        self.cursor.extend_from_slice(&self.pred_start[..k]);
        for p in 0..k {
            for h in 0..2 {
                let q = self.next[p][h] as usize;
                self.preds[self.cursor[q] as usize] = (p as u8, h as u8);
                self.cursor[q] += 1;
            }
        }
        self.weight.clear();
        self.weight.resize(k, [0; 2]);
        true
    }

    /// Weighs every copy of the base transition `at` (`2 q + b`) with
    /// `w`, the others 0, and derives the sign sets.
    fn weigh(&mut self, at: u8, w: i32) {
        let k = self.states();
        for q in 0..k {
            for b in 0..2 {
                self.weight[q][b] = if self.origin[q][b] == at { w } else { 0 };
            }
        }
        // Tainted states: reachable through a transition of that sign.
        self.nonneg.clear();
        self.nonneg.resize(k, true);
        self.nonpos.clear();
        self.nonpos.resize(k, true);
        loop {
            let mut changed = false;
            for q in 0..k {
                for b in 0..2 {
                    let (t, x) = (self.next[q][b] as usize, self.weight[q][b]);
                    if (x < 0 || !self.nonneg[q]) && self.nonneg[t] {
                        self.nonneg[t] = false;
                        changed = true;
                    }
                    if (x > 0 || !self.nonpos[q]) && self.nonpos[t] {
                        self.nonpos[t] = false;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
    }

    fn wdfa(&self) -> Wdfa {
        Wdfa {
            next: self.next.clone(),
            weight: self
                .weight
                .iter()
                .map(|w| [w[0] as i8, w[1] as i8])
                .collect(),
        }
    }
}

// The weighted closure's packed configuration: l (8 bits), r (8), m (1),
// state (3), kind (2: the parent module's EXACT, AT_LEAST, AT_MOST, ANY),
// d + D_BIAS (rest).
const D_BIAS: i32 = 1 << 12;

#[inline]
fn key(l: u8, r: u8, m: u8, s: u8, kind: u64, d: i32) -> u64 {
    let d = if kind == ANY { 0 } else { d };
    u64::from(l)
        | u64::from(r) << 8
        | u64::from(m) << 16
        | u64::from(s) << 17
        | kind << 20
        | ((d + D_BIAS) as u64) << 22
}

/// The sums the weighted closure's table holds: `d` in `-D_RANGE..=D_RANGE`
/// for each kind (a closure whose bounds drift beyond gives up, which
/// only loses a certificate: the verifier has no such limit).
const D_RANGE: i32 = 24;
const SUMS: usize = 3 * (2 * D_RANGE as usize + 1) + 1;

/// Most entries of the weighted closure's table (4 bytes each): pairs of
/// automata with more states are skipped.
pub const MAX_TABLE: usize = 1 << 22;

/// The slot of a packed configuration in the table of automata of `kr`
/// right states, if its sum is in range.
#[inline]
fn slot(c: u64, kr: usize) -> Option<usize> {
    let l = (c & 0xFF) as usize;
    let r = ((c >> 8) & 0xFF) as usize;
    let head = ((c >> 16) & 0xF) as usize;
    let kind = (c >> 20) & 3;
    let d = (c >> 22) as i32 - D_BIAS;
    let sum = if kind == ANY {
        SUMS - 1
    } else {
        if d.abs() > D_RANGE {
            return None;
        }
        kind as usize * (2 * D_RANGE as usize + 1) + (d + D_RANGE) as usize
    };
    Some(((l * kr + r) * 16 + head) * SUMS + sum)
}

/// The reusable buffers of the MITM search.
#[derive(Default)]
pub struct Mitm {
    bits: Vec<u64>,
    stack: Vec<u32>,
    /// The weighted closure's visited set: `stamp[slot] == generation`.
    stamp: Vec<u32>,
    generation: u32,
    todo: Vec<u64>,
    left: Side,
    right: Side,
    limits: Option<MitmLimits>,
    out_of_gas: bool,
    /// Abstract configurations built by the last [`Mitm::search`].
    pub configs: u64,
    /// Base DFA pairs that closed, in the last [`Mitm::search`].
    pub bases: u64,
    /// Weighted pairs tried by the last [`Mitm::search`].
    pub tried: u64,
}

impl Mitm {
    /// A certificate for the `n`-state `table` that [`verify`] accepts,
    /// from base DFA pairs of 2, 3... live transitions in all, up to the
    /// limits.
    pub fn search(&mut self, table: &Table, n: usize, limits: MitmLimits) -> Option<Certificate> {
        assert!(limits.states < MAX_BASE);
        self.limits = Some(limits);
        self.configs = 0;
        self.bases = 0;
        self.tried = 0;
        self.out_of_gas = false;
        for target in 1..=limits.transitions {
            let found = self.extend(table, n, Base::start(), Base::start(), 0, target);
            if found.is_some() {
                return found;
            }
            if self.out_of_gas {
                break;
            }
        }
        None
    }

    fn limits(&self) -> MitmLimits {
        self.limits.expect("limits set by search")
    }

    /// The pairs extending `(l, r)` (with `used` live transitions) to
    /// exactly `target`, weighted.
    fn extend(
        &mut self,
        table: &Table,
        n: usize,
        l: Base,
        r: Base,
        used: usize,
        target: usize,
    ) -> Option<Certificate> {
        match self.base_closure(table, &l, &r) {
            BaseClosure::OutOfGas => None,
            BaseClosure::Closed => {
                if used == target {
                    self.bases += 1;
                    self.weigh(table, n, &l, &r)
                } else {
                    None
                }
            }
            BaseClosure::Needs(left, q, b) => {
                if used >= target {
                    return None;
                }
                let side = if left { l } else { r };
                let grow = side.k <= self.limits().states;
                for to in (0..side.k + usize::from(grow)).filter(|&t| t != DEAD as usize) {
                    let mut s = side;
                    if to == side.k {
                        s.k += 1;
                    }
                    s.next[q as usize][b as usize] = to as u8;
                    let (nl, nr) = if left { (s, r) } else { (l, s) };
                    if let Some(c) = self.extend(table, n, nl, nr, used + 1, target) {
                        return Some(c);
                    }
                    if self.out_of_gas {
                        return None;
                    }
                }
                None
            }
        }
    }

    /// The unweighted closure of the pair from the blank tape.
    fn base_closure(&mut self, table: &Table, l: &Base, r: &Base) -> BaseClosure {
        const WORDS: usize = MAX_BASE * MAX_BASE * 16 / 64;
        self.bits.clear();
        self.bits.resize(WORDS, 0);
        self.stack.clear();
        let idx = |l: u8, r: u8, m: u8, s: u8| -> u32 {
            ((u32::from(l) * MAX_BASE as u32 + u32::from(r)) * 2 + u32::from(m)) * 8 + u32::from(s)
        };
        self.bits[0] |= 1;
        self.stack.push(0);
        let gas = self.limits().gas;
        while let Some(c) = self.stack.pop() {
            self.configs += 1;
            if self.configs >= gas {
                self.out_of_gas = true;
                return BaseClosure::OutOfGas;
            }
            let s = (c % 8) as usize;
            let m = ((c / 8) % 2) as usize;
            let rq = ((c / 16) % MAX_BASE as u32) as usize;
            let lq = (c / 16 / MAX_BASE as u32) as usize;
            let Some(t) = Transition::decode(table[2 * s + m]) else {
                continue;
            };
            let (onto, from, grown, shrunk) = if t.right {
                (l, r, lq, rq)
            } else {
                (r, l, rq, lq)
            };
            let q2 = onto.next[grown][t.write as usize];
            if q2 == DEAD {
                return BaseClosure::Needs(t.right, grown as u8, t.write);
            }
            for p in 0..from.k {
                if p == DEAD as usize {
                    continue;
                }
                for h in 0..2u8 {
                    if from.next[p][h as usize] as usize != shrunk {
                        continue;
                    }
                    let (nl, nr) = if t.right {
                        (q2, p as u8)
                    } else {
                        (p as u8, q2)
                    };
                    let i = idx(nl, nr, h, t.next);
                    let (w, bit) = ((i / 64) as usize, 1u64 << (i % 64));
                    if self.bits[w] & bit == 0 {
                        self.bits[w] |= bit;
                        self.stack.push(i);
                    }
                }
            }
        }
        BaseClosure::Closed
    }

    /// Every weighting of a closed pair, with each memory and bound.
    fn weigh(&mut self, table: &Table, n: usize, l: &Base, r: &Base) -> Option<Certificate> {
        let limits = self.limits();
        let live = |b: &Base| -> Vec<u8> {
            (0..b.k)
                .filter(|&q| q != DEAD as usize)
                .flat_map(|q| (0..2).map(move |c| (q, c)))
                .filter(|&(q, c)| (q, c) != (0, 0) && b.next[q][c] != DEAD)
                .map(|(q, c)| (2 * q + c) as u8)
                .collect()
        };
        let (lt, rt) = (live(l), live(r));
        for &memory in limits.memories {
            if !self.left.build(l, memory) || !self.right.build(r, memory) {
                continue;
            }
            for &a in &lt {
                self.left.weigh(a, 1);
                for &b in &rt {
                    for sign in [-1, 1] {
                        self.right.weigh(b, sign);
                        for &max_d in limits.bounds {
                            self.tried += 1;
                            if self.closes(table, max_d) {
                                let cert = Certificate {
                                    max_d,
                                    left: self.left.wdfa(),
                                    right: self.right.wdfa(),
                                };
                                if verify(table, n, &cert, closure_limit(&cert)).is_ok() {
                                    return Some(cert);
                                }
                            }
                            if self.out_of_gas {
                                return None;
                            }
                        }
                    }
                }
            }
        }
        None
    }

    /// The weighted closure of the current sides: whether it is finite
    /// (within the limits) and reads no undefined transition.
    fn closes(&mut self, table: &Table, max_d: i32) -> bool {
        let limits = self.limits();
        let cap = D_FACTOR * max_d + D_SLACK;
        let most = limits.closure.min(
            super::CLOSURE_PER_PAIR
                .saturating_mul(self.left.states() * self.right.states())
                .max(super::CLOSURE_STATES),
        );
        let kr = self.right.states();
        let size = self.left.states() * kr * 16 * SUMS;
        if size > MAX_TABLE {
            return false;
        }
        if self.stamp.len() < size {
            self.stamp.resize(size, 0);
        }
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.stamp.fill(0);
            self.generation = 1;
        }
        let generation = self.generation;
        let mut count = 1usize;
        self.todo.clear();
        let start = key(0, 0, 0, 0, EXACT, 0);
        self.stamp[slot(start, kr).expect("in range")] = generation;
        self.todo.push(start);
        let (lp, rp) = (&self.left, &self.right);
        while let Some(c) = self.todo.pop() {
            self.configs += 1;
            if self.configs >= limits.gas {
                self.out_of_gas = true;
                return false;
            }
            let l = (c & 0xFF) as usize;
            let r = ((c >> 8) & 0xFF) as usize;
            let m = ((c >> 16) & 1) as usize;
            let s = ((c >> 17) & 7) as usize;
            let kind = (c >> 20) & 3;
            let d = (c >> 22) as i32 - D_BIAS;
            let Some(t) = Transition::decode(table[2 * s + m]) else {
                return false;
            };
            let (onto, from, grown, shrunk) = if t.right {
                (lp, rp, l, r)
            } else {
                (rp, lp, r, l)
            };
            let q2 = onto.next[grown][t.write as usize];
            let w2 = onto.weight[grown][t.write as usize];
            let range = from.pred_start[shrunk] as usize..from.pred_start[shrunk + 1] as usize;
            for &(p, h) in &from.preds[range] {
                let w = from.weight[p as usize][h as usize];
                let (nl, nr) = if t.right { (q2, p) } else { (p, q2) };
                let nd = d + w2 - w;
                let both_nonpos = lp.nonpos[nl as usize] && rp.nonpos[nr as usize];
                let both_nonneg = lp.nonneg[nl as usize] && rp.nonneg[nr as usize];
                let Some((a, b)) = step_sums(kind, nd, max_d, cap, both_nonpos, both_nonneg) else {
                    continue;
                };
                let mk = |(kind, d)| key(nl, nr, h, t.next, kind, d);
                for x in [Some(a), b].into_iter().flatten().map(mk) {
                    let Some(i) = slot(x, kr) else {
                        return false;
                    };
                    if self.stamp[i] != generation {
                        self.stamp[i] = generation;
                        count += 1;
                        if count > most {
                            return false;
                        }
                        self.todo.push(x);
                    }
                }
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::from_text;
    use crate::simulate::{Plain, PlainRun};

    /// The limits of the last resort ([`crate::decide::LAST_MITM`]).
    const LIMITS: MitmLimits = crate::decide::LAST_MITM;

    /// Coq-BB5 settles it with weighted automata of 8 and 7 states; the
    /// search finds a certificate of the same sizes, which verifies, and
    /// which every halting variant of the machine refuses (each defined
    /// transition made undefined in turn, kept when the variant halts
    /// within a million steps).
    #[test]
    fn finds_the_eight_and_seven_state_certificate() {
        let text = "1RB1LC_1LB1RA_0LE0LD_0RA1RD_---0LC";
        let (t, n) = from_text(text).unwrap();
        let mut m = Mitm::default();
        let cert = m.search(&t, n, LIMITS).expect("a certificate");
        assert_eq!((cert.left.states(), cert.right.states()), (8, 7));
        assert!(verify(&t, n, &cert, closure_limit(&cert)).is_ok());
        let mut halting = 0;
        for i in 0..2 * n {
            if t[i] == 0 {
                continue;
            }
            let mut v = t;
            v[i] = 0;
            if let PlainRun::Halts { .. } = Plain::default().run(&v, n, 1_000_000) {
                halting += 1;
                let r = verify(&v, n, &cert, closure_limit(&cert));
                assert!(r.is_err(), "variant {i}: {r:?}");
            }
        }
        assert!(halting >= 3, "{halting} halting variants");
        // Its twin through a first transition that writes 0.
        let (twin, _) = from_text("0RB1RA_1RC1LD_1LC1RB_0LE0LA_---0LD").unwrap();
        let cert = m.search(&twin, n, LIMITS).expect("a certificate");
        assert!(verify(&twin, n, &cert, closure_limit(&cert)).is_ok());
    }

    /// The halting machines of [`super::super`]'s test of the small
    /// search: the search, with every memory and bound and base pairs of
    /// up to 10 transitions, proves none of them, and spends its whole
    /// enumeration or gas doing so.
    #[test]
    fn proves_no_halting_machine() {
        let limits = MitmLimits {
            transitions: 10,
            memories: &[0, 1, 2],
            bounds: &[1, 2, 3],
            gas: 50_000_000,
            ..LIMITS
        };
        let mut m = Mitm::default();
        for text in super::super::tests::HALTING {
            let (t, n) = from_text(text).unwrap();
            assert_eq!(m.search(&t, n, limits), None, "{text}");
            assert!(m.tried > 1000, "{text}: {} weighted pairs", m.tried);
        }
    }

    /// The memory transform: a state per live transition, weights copied,
    /// and every half-tape's weight unchanged.
    #[test]
    fn memory_keeps_every_weight() {
        // 0 -1-> 2, 2 -0-> 3, 2 -1-> 2, 3 -0-> 0, 3 -1-> 2.
        let mut base = Base::start();
        base.k = 4;
        base.next[0][1] = 2;
        base.next[2] = [3, 2];
        base.next[3] = [0, 2];
        let (mut plain, mut memory) = (Side::default(), Side::default());
        assert!(plain.build(&base, 0) && memory.build(&base, 1));
        assert_eq!(plain.states(), 4);
        assert_eq!(memory.states(), 2 + 5);
        plain.weigh(5, 1); // δ(2, 1)
        memory.weigh(5, 1);
        // Every word of up to 10 cells: the same weight, and the same
        // deadness.
        for len in 0..=10 {
            for word in 0..1u32 << len {
                let read = |s: &Side| {
                    let (mut q, mut w) = (0usize, 0);
                    for i in 0..len {
                        let b = (word >> i & 1) as usize;
                        w += s.weight[q][b];
                        q = s.next[q][b] as usize;
                    }
                    (q == DEAD as usize, w)
                };
                assert_eq!(read(&plain), read(&memory), "{word:b}");
            }
        }
    }
}
