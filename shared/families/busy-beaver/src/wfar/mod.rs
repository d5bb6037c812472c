//! Weighted finite automata reduction (WFAR): Coq-BB5's "MITM-WDFA"
//! verifier (The bbchallenge Collaboration 2025, arXiv:2509.12337, section
//! "Weighted Finite Automata Reduction"; github.com/ccz181078/Coq-BB5,
//! `Verifier_WFAR.v`), implemented anew from its definitions, with a
//! search for certificates of its own.
//!
//! **The certificate.** Two weighted DFAs over the cells, `L` and `R`
//! (a transition `δ(q, b) = (q', w)` adds the integer `w`), both with
//! `δ(0, 0) = (0, 0)`, and a bound `max_d`. `L` reads the left half-tape
//! from far away towards the head, `R` the right half-tape the same way
//! (from far away towards the head), both from state 0: leading blanks
//! change nothing, so a half-tape's state and weight are those of its
//! finite non-blank part. A configuration `(u, state, m, v)` is
//! abstracted as `(qL, qR, m, state)` and the sum `dL + dR` of the two
//! weights, kept exactly (`= d`), as a bound (`>= d`, `<= d`) or not at
//! all.
//!
//! **Why it proves non-halting.** Call `γ(a)` the configurations an
//! abstract state `a` stands for. The closure starts from the blank tape's
//! `(0, 0, 0, A, = 0)`. A step right writing `b` takes `L` from `qL` to
//! `δL(qL, b) = (qL', wL)`, and the cell entering the head is the one `R`
//! read last: the right half-tape was `v' h` with `δR(p, h) = (qR, w)`
//! for the state `p` of `v'` (for a blank right side, `p = 0`, `h = 0`,
//! `w = 0` since `δR(0, 0) = (0, 0)`); so every successor is in `γ` of
//! `(qL', p, h, next, d + wL - w)` for some predecessor `(p, h)` of `qR`,
//! all of which are listed (left steps likewise). Abstract states whose
//! `γ` is empty are dropped: a state of `L` that only transitions of
//! weight `>= 0` reach has `dL >= 0` on every half-tape (and likewise for
//! `<= 0`), so `dL + dR = d > 0` is impossible when both sides can only
//! be `<= 0`. Exact sums grown beyond `max_d` become bounds, bounds are
//! weakened or split exactly, which only enlarges or partitions `γ`. If
//! the closure is finite and no abstract state in it reads an undefined
//! transition, every configuration reachable from the blank tape lies in
//! the closure's `γ`, by induction on steps, and none of them halts.
//!
//! **Verifying and searching.** [`verify`] checks a [`Certificate`]
//! directly from these definitions (predecessors by scanning the
//! automaton, ordered sets); the search ([`Wfar::search`]) runs its own
//! faster closure over a family of small automata, and its find counts
//! only after [`verify`] accepts it. The family is the shape of Coq-BB5's
//! small certificates: states `0..k`, state 1 a sink of weight 0,
//! `δ(0, 1) = 2`, a single transition of weight `±1` per automaton (that of
//! `L` positive: negating every weight maps certificates to certificates).
//! Certificates with larger automata (up to [`MAX_CERTIFICATE_WDFA`]
//! states, like Coq-BB5's of 8 to 70 states) come from the
//! meet-in-the-middle search of [`mitm`]: weighted automata built on DFA
//! pairs that the machine's abstract steps close; [`verify`] checks them
//! the same way, with a closure limit that grows with the automata
//! ([`closure_limit`]).

use crate::machine::{Table, Transition, MAX_STATES};
use std::collections::{BTreeSet, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A multiplicative hash of the search's `u64` keys (the standard
/// hasher's collision resistance buys nothing here and costs a third of
/// the search).
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (x ^ (x >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 ^= self.0 >> 32;
    }
}

/// Most states of one weighted DFA of the search's family.
pub const MAX_WDFA: usize = 8;

/// Most states of one weighted DFA of a certificate: Coq-BB5's largest
/// have 70, the MITM search's ([`crate::wfar::mitm`]) fewer.
pub const MAX_CERTIFICATE_WDFA: usize = 128;

/// Largest `|d|` kept before a bound gives up and stands for any sum, as a
/// multiple of `max_d` (plus [`D_SLACK`]): keeps the closure finite.
const D_FACTOR: i32 = 4;
const D_SLACK: i32 = 4;

/// A weighted DFA over the cells `{0, 1}`: `next[q][b]`, `weight[q][b]`,
/// one row per state.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Wdfa {
    pub next: Vec<[u8; 2]>,
    pub weight: Vec<[i8; 2]>,
}

impl Wdfa {
    /// From Coq-BB5's list form: per state `(next on 0, weight, next on 1,
    /// weight)`.
    pub fn from_rows(rows: &[(u8, i8, u8, i8)]) -> Wdfa {
        Wdfa {
            next: rows.iter().map(|&(a, _, b, _)| [a, b]).collect(),
            weight: rows.iter().map(|&(_, x, _, y)| [x, y]).collect(),
        }
    }

    /// Its number of states.
    pub fn states(&self) -> usize {
        self.next.len()
    }
}

/// A WFAR certificate: the two automata and the bound of exact sums.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Certificate {
    pub max_d: i32,
    pub left: Wdfa,
    pub right: Wdfa,
}

/// Why [`verify`] rejected a certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum WfarError {
    /// An automaton has no state or more than [`MAX_CERTIFICATE_WDFA`],
    /// its rows disagree in number, or a transition leaves its states.
    #[error("malformed weighted DFA")]
    Malformed,
    /// `δ(0, 0)` is not `(0, 0)`: leading blanks would change the result.
    #[error("the blank transition of state 0 is not (0, 0)")]
    BlankNotNeutral,
    /// `max_d` is not positive.
    #[error("max_d must be positive")]
    BadBound,
    /// An abstract state reads an undefined transition of the machine.
    #[error("an abstract configuration reads the undefined transition {}{read}", (b'A' + state) as char)]
    ReachesHalt { state: u8, read: u8 },
    /// The closure grew past the given number of abstract states.
    #[error("closure exceeds {0} abstract configurations")]
    TooManyStates(usize),
}

/// How the abstract sum relates to `dL + dR`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Sum {
    Exact(i32),
    AtLeast(i32),
    AtMost(i32),
    Any,
}

/// An abstract configuration (the verifier's form).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Abs {
    l: u8,
    r: u8,
    m: u8,
    s: u8,
    sum: Sum,
}

/// For each state of `w`: (every word reaching it weighs `>= 0`, every
/// word reaching it weighs `<= 0`), from any starting state.
fn signs(w: &Wdfa) -> (Vec<bool>, Vec<bool>) {
    // Tainted: reachable through a transition of the wrong sign.
    let mut neg = vec![false; w.states()];
    let mut pos = vec![false; w.states()];
    loop {
        let mut changed = false;
        for q in 0..w.states() {
            for b in 0..2 {
                let (t, x) = (w.next[q][b] as usize, w.weight[q][b]);
                if (x < 0 || neg[q]) && !neg[t] {
                    neg[t] = true;
                    changed = true;
                }
                if (x > 0 || pos[q]) && !pos[t] {
                    pos[t] = true;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    (
        neg.iter().map(|&x| !x).collect(),
        pos.iter().map(|&x| !x).collect(),
    )
}

fn check_wdfa(w: &Wdfa) -> Result<(), WfarError> {
    let k = w.states();
    if k == 0 || k > MAX_CERTIFICATE_WDFA || w.weight.len() != k {
        return Err(WfarError::Malformed);
    }
    for q in 0..k {
        for b in 0..2 {
            if w.next[q][b] as usize >= k {
                return Err(WfarError::Malformed);
            }
        }
    }
    if w.next[0][0] != 0 || w.weight[0][0] != 0 {
        return Err(WfarError::BlankNotNeutral);
    }
    Ok(())
}

/// Checks that `cert` proves that the `n`-state `table` never halts from
/// the blank tape, building the closure of at most `max_states` abstract
/// configurations; its size if it does.
pub fn verify(
    table: &Table,
    n: usize,
    cert: &Certificate,
    max_states: usize,
) -> Result<usize, WfarError> {
    assert!((1..=MAX_STATES).contains(&n));
    check_wdfa(&cert.left)?;
    check_wdfa(&cert.right)?;
    if cert.max_d <= 0 {
        return Err(WfarError::BadBound);
    }
    let (l_nonneg, l_nonpos) = signs(&cert.left);
    let (r_nonneg, r_nonpos) = signs(&cert.right);
    let max_d = cert.max_d;
    let cap = D_FACTOR * max_d + D_SLACK;
    // Whether γ(a) is empty by the sign argument.
    let empty = |a: &Abs| -> bool {
        let (l, r) = (a.l as usize, a.r as usize);
        let both_nonpos = l_nonpos[l] && r_nonpos[r];
        let both_nonneg = l_nonneg[l] && r_nonneg[r];
        match a.sum {
            Sum::Exact(d) => (d > 0 && both_nonpos) || (d < 0 && both_nonneg),
            Sum::AtLeast(d) => d > 0 && both_nonpos,
            Sum::AtMost(d) => d < 0 && both_nonneg,
            Sum::Any => false,
        }
    };
    // The abstract states standing for γ(a) (their union holds it).
    let simplify = |a: Abs| -> Vec<Abs> {
        let with = |sum| Abs { sum, ..a };
        match a.sum {
            Sum::Exact(d) if d >= max_d => vec![with(Sum::AtLeast(d))],
            Sum::Exact(d) if d <= -max_d => vec![with(Sum::AtMost(d))],
            Sum::Exact(_) | Sum::Any => vec![a],
            Sum::AtLeast(d) if d < -cap => vec![with(Sum::Any)],
            Sum::AtLeast(d) if d.abs() > max_d => vec![with(Sum::AtLeast(d - 1))],
            Sum::AtLeast(d) if d.abs() < max_d => {
                vec![with(Sum::Exact(d)), with(Sum::AtLeast(d + 1))]
            }
            Sum::AtLeast(_) => vec![a],
            Sum::AtMost(d) if d > cap => vec![with(Sum::Any)],
            Sum::AtMost(d) if d.abs() > max_d => vec![with(Sum::AtMost(d + 1))],
            Sum::AtMost(d) if d.abs() < max_d => {
                vec![with(Sum::Exact(d)), with(Sum::AtMost(d - 1))]
            }
            Sum::AtMost(_) => vec![a],
        }
    };
    let shift = |sum: Sum, by: i32| match sum {
        Sum::Exact(d) => Sum::Exact(d + by),
        Sum::AtLeast(d) => Sum::AtLeast(d + by),
        Sum::AtMost(d) => Sum::AtMost(d + by),
        Sum::Any => Sum::Any,
    };
    let start = Abs {
        l: 0,
        r: 0,
        m: 0,
        s: 0,
        sum: Sum::Exact(0),
    };
    let mut seen = BTreeSet::from([start]);
    let mut todo = vec![start];
    while let Some(a) = todo.pop() {
        let Some(t) = Transition::decode(table[2 * a.s as usize + a.m as usize]) else {
            return Err(WfarError::ReachesHalt {
                state: a.s,
                read: a.m,
            });
        };
        // The side the written cell joins, and the side the next cell
        // comes from.
        let (onto, from) = if t.right {
            (&cert.left, &cert.right)
        } else {
            (&cert.right, &cert.left)
        };
        let grown = if t.right { a.l } else { a.r };
        let q2 = onto.next[grown as usize][t.write as usize];
        let w2 = i32::from(onto.weight[grown as usize][t.write as usize]);
        let shrunk = if t.right { a.r } else { a.l };
        for p in 0..from.states() {
            for h in 0..2u8 {
                if from.next[p][h as usize] != shrunk {
                    continue;
                }
                let w = i32::from(from.weight[p][h as usize]);
                let (l, r) = if t.right {
                    (q2, p as u8)
                } else {
                    (p as u8, q2)
                };
                let b = Abs {
                    l,
                    r,
                    m: h,
                    s: t.next,
                    sum: shift(a.sum, w2 - w),
                };
                if empty(&b) {
                    continue;
                }
                for c in simplify(b) {
                    if seen.insert(c) {
                        if seen.len() > max_states {
                            return Err(WfarError::TooManyStates(max_states));
                        }
                        todo.push(c);
                    }
                }
            }
        }
    }
    Ok(seen.len())
}

/// The automata of the search's family with `k` states (see the module
/// documentation), the weight `sign` on one transition; in the order
/// tried.
pub fn family(k: usize, sign: i8) -> Vec<Wdfa> {
    assert!((3..=MAX_WDFA).contains(&k));
    let mut out = Vec::new();
    // The free transitions: those of states 2..k, each to any state.
    let free = 2 * (k - 2);
    let mut targets = vec![0u8; free];
    loop {
        // Canonical: states 3, 4... first appear in order among the
        // targets, after the transitions of the states before them.
        let mut ok = true;
        let mut highest = 2u8;
        for (i, &t) in targets.iter().enumerate() {
            if i / 2 + 2 > highest as usize {
                ok = false; // a state not reached before its transitions
                break;
            }
            if t > highest + 1 {
                ok = false;
                break;
            }
            if t == highest + 1 {
                highest = t;
            }
        }
        if ok && highest as usize == k - 1 {
            let mut w = Wdfa {
                next: vec![[0; 2]; k],
                weight: vec![[0; 2]; k],
            };
            w.next[0] = [0, 2];
            w.next[1] = [1, 1];
            for (i, &t) in targets.iter().enumerate() {
                w.next[2 + i / 2][i % 2] = t;
            }
            // The weighted transition: δ(0, 1) or a free one.
            for at in 0..=free {
                let mut v = w.clone();
                if at == 0 {
                    v.weight[0][1] = sign;
                } else {
                    v.weight[2 + (at - 1) / 2][(at - 1) % 2] = sign;
                }
                out.push(v);
            }
        }
        // Next target vector.
        let mut i = 0;
        loop {
            if i == free {
                return out;
            }
            targets[i] += 1;
            if (targets[i] as usize) < k {
                break;
            }
            targets[i] = 0;
            i += 1;
        }
    }
}

/// The search's automata: (left sizes, right sizes) tried in this order,
/// and the bounds tried for each pair.
pub const SIZES: [(usize, usize); 4] = [(3, 3), (4, 3), (3, 4), (4, 4)];
pub const BOUNDS: [i32; 2] = [2, 3];

/// Most abstract configurations of one closure in the search and in the
/// verification of its find.
pub const CLOSURE_STATES: usize = 4_000;

/// Most abstract configurations of the closure of a certificate with
/// automata of `kl` and `kr` states, per pair of automaton states: the
/// closure holds at most `2 n` heads per pair, each with the few sums
/// between `-max_d` and `max_d` and the bounds.
pub const CLOSURE_PER_PAIR: usize = 64;

/// The closure limit a certificate is verified with: [`CLOSURE_STATES`],
/// or [`CLOSURE_PER_PAIR`] per pair of automaton states when larger.
pub fn closure_limit(cert: &Certificate) -> usize {
    CLOSURE_STATES.max(CLOSURE_PER_PAIR * cert.left.states() * cert.right.states())
}

/// A weighted DFA of the family with its predecessor lists (`preds[q]`
/// holds `(p, h, w)` with `δ(p, h) = (q, w)`), in fixed arrays that the
/// search's closure reads without indirection.
#[derive(Clone)]
struct Prepared {
    w: Wdfa,
    next: [[u8; 2]; MAX_WDFA],
    weight: [[i32; 2]; MAX_WDFA],
    preds: [Vec<(u8, u8, i32)>; MAX_WDFA],
    nonneg: [bool; MAX_WDFA],
    nonpos: [bool; MAX_WDFA],
}

impl Prepared {
    fn new(w: Wdfa) -> Prepared {
        assert!(w.states() <= MAX_WDFA);
        let mut preds: [Vec<(u8, u8, i32)>; MAX_WDFA] = Default::default();
        let mut next = [[0; 2]; MAX_WDFA];
        let mut weight = [[0; 2]; MAX_WDFA];
        for p in 0..w.states() {
            for h in 0..2 {
                next[p][h] = w.next[p][h];
                weight[p][h] = i32::from(w.weight[p][h]);
                preds[w.next[p][h] as usize].push((p as u8, h as u8, weight[p][h]));
            }
        }
        let (nonneg_v, nonpos_v) = signs(&w);
        let mut nonneg = [false; MAX_WDFA];
        let mut nonpos = [false; MAX_WDFA];
        nonneg[..w.states()].copy_from_slice(&nonneg_v);
        nonpos[..w.states()].copy_from_slice(&nonpos_v);
        Prepared {
            w,
            next,
            weight,
            preds,
            nonneg,
            nonpos,
        }
    }
}

// The search's encoded abstract configuration: l (3 bits), r (3), m (1),
// state (3), kind (2: exact, at least, at most, any), d + D_BIAS (rest).
const EXACT: u64 = 0;
const AT_LEAST: u64 = 1;
const AT_MOST: u64 = 2;
const ANY: u64 = 3;
const D_BIAS: i32 = 1 << 12;

/// An abstract sum in the searches' closures: its kind and its value.
type Sums = (u64, i32);

/// The abstract sums a closure's step leads to, in both searches' closures
/// (the verifier keeps its own, from the definitions): from a sum of
/// `kind` (exact, at least, at most, any) whose value becomes `nd`, into
/// side states that are both reached only by weights `<= 0`
/// (`both_nonpos`) or `>= 0` (`both_nonneg`). `None` when the signs make
/// the successor empty; else the one or two `(kind, d)` that cover it: an
/// exact sum reaching `max_d` becomes a bound, a bound past `cap` stands
/// for any sum, a bound within `max_d` is split into its exact value and
/// the rest.
#[inline]
fn step_sums(
    kind: u64,
    nd: i32,
    max_d: i32,
    cap: i32,
    both_nonpos: bool,
    both_nonneg: bool,
) -> Option<(Sums, Option<Sums>)> {
    if kind != ANY {
        let up = kind == EXACT || kind == AT_LEAST;
        let down = kind == EXACT || kind == AT_MOST;
        if (nd > 0 && up && both_nonpos) || (nd < 0 && down && both_nonneg) {
            return None;
        }
    }
    Some(match kind {
        EXACT if nd >= max_d => ((AT_LEAST, nd), None),
        EXACT if nd <= -max_d => ((AT_MOST, nd), None),
        AT_LEAST if nd < -cap => ((ANY, 0), None),
        AT_LEAST if nd.abs() > max_d => ((AT_LEAST, nd - 1), None),
        AT_LEAST if nd.abs() < max_d => ((EXACT, nd), Some((AT_LEAST, nd + 1))),
        AT_MOST if nd > cap => ((ANY, 0), None),
        AT_MOST if nd.abs() > max_d => ((AT_MOST, nd + 1), None),
        AT_MOST if nd.abs() < max_d => ((EXACT, nd), Some((AT_MOST, nd - 1))),
        _ => ((kind, nd), None),
    })
}

#[inline]
fn key(l: u8, r: u8, m: u8, s: u8, kind: u64, d: i32) -> u64 {
    let d = if kind == ANY { 0 } else { d };
    u64::from(l)
        | u64::from(r) << 3
        | u64::from(m) << 6
        | u64::from(s) << 7
        | kind << 10
        | ((d + D_BIAS) as u64) << 12
}

/// The reusable buffers of the search.
#[derive(Default)]
pub struct Wfar {
    seen: HashSet<u64, BuildHasherDefault<KeyHasher>>,
    todo: Vec<u64>,
    families: Vec<(usize, Vec<Prepared>, Vec<Prepared>)>,
    /// Abstract configurations built by the last [`Wfar::search`].
    pub configs: u64,
    /// Certificates tried by the last [`Wfar::search`].
    pub tried: u64,
}

impl Wfar {
    /// Builds the families of `k` states (left and right) if not built yet.
    fn prepare(&mut self, k: usize) {
        if !self.families.iter().any(|f| f.0 == k) {
            let left = family(k, 1).into_iter().map(Prepared::new).collect();
            let mut right: Vec<Prepared> = family(k, -1).into_iter().map(Prepared::new).collect();
            right.extend(family(k, 1).into_iter().map(Prepared::new));
            self.families.push((k, left, right));
        }
    }

    /// A certificate from the family (module documentation) that
    /// [`verify`] accepts for the `n`-state `table`, building at most
    /// `gas` abstract configurations in all.
    pub fn search(&mut self, table: &Table, n: usize, gas: u64) -> Option<Certificate> {
        self.search_sizes(table, n, gas, &SIZES, &BOUNDS)
    }

    /// The same over the automata of the given (left, right) sizes, in
    /// order, each pair with each bound of `bounds`.
    pub fn search_sizes(
        &mut self,
        table: &Table,
        n: usize,
        gas: u64,
        sizes: &[(usize, usize)],
        bounds: &[i32],
    ) -> Option<Certificate> {
        for &(kl, kr) in sizes {
            self.prepare(kl);
            self.prepare(kr);
        }
        self.configs = 0;
        self.tried = 0;
        let families = std::mem::take(&mut self.families);
        let mut found = None;
        'all: for &(kl, kr) in sizes {
            let left = &families.iter().find(|f| f.0 == kl).expect("family").1;
            let right = &families.iter().find(|f| f.0 == kr).expect("family").2;
            for l in left {
                for r in right {
                    for &max_d in bounds {
                        if self.configs >= gas {
                            break 'all;
                        }
                        self.tried += 1;
                        if self.closes(table, l, r, max_d) {
                            let cert = Certificate {
                                max_d,
                                left: l.w.clone(),
                                right: r.w.clone(),
                            };
                            if verify(table, n, &cert, CLOSURE_STATES).is_ok() {
                                found = Some(cert);
                                break 'all;
                            }
                        }
                    }
                }
            }
        }
        self.families = families;
        found
    }

    /// The search's closure: whether it is finite (within
    /// [`CLOSURE_STATES`]) and reads no undefined transition.
    fn closes(&mut self, table: &Table, lp: &Prepared, rp: &Prepared, max_d: i32) -> bool {
        let cap = D_FACTOR * max_d + D_SLACK;
        self.seen.clear();
        self.todo.clear();
        let start = key(0, 0, 0, 0, EXACT, 0);
        self.seen.insert(start);
        self.todo.push(start);
        while let Some(c) = self.todo.pop() {
            self.configs += 1;
            let l = (c & 7) as usize;
            let r = ((c >> 3) & 7) as usize;
            let m = ((c >> 6) & 1) as usize;
            let s = ((c >> 7) & 7) as usize;
            let kind = (c >> 10) & 3;
            let d = (c >> 12) as i32 - D_BIAS;
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
            for &(p, h, w) in &from.preds[shrunk] {
                let (nl, nr) = if t.right { (q2, p) } else { (p, q2) };
                let nd = d + w2 - w;
                let both_nonpos = lp.nonpos[nl as usize] && rp.nonpos[nr as usize];
                let both_nonneg = lp.nonneg[nl as usize] && rp.nonneg[nr as usize];
                let Some((a, b)) = step_sums(kind, nd, max_d, cap, both_nonpos, both_nonneg) else {
                    continue;
                };
                let mk = |(kind, d)| key(nl, nr, h, t.next, kind, d);
                for x in [Some(a), b].into_iter().flatten().map(mk) {
                    if self.seen.insert(x) {
                        if self.seen.len() > CLOSURE_STATES {
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

pub mod mitm;

pub mod supplied;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::from_text;

    /// Coq-BB5's certificates (`Verifier_WFAR_Hardcoded_Certificates.v`)
    /// of the small automata: machine, max_d, left rows, right rows.
    pub(crate) fn coq_certificates() -> Vec<(&'static str, Certificate)> {
        let a = || Wdfa::from_rows(&[(0, 0, 2, 0), (1, 0, 1, 0), (3, 1, 2, 0), (1, 0, 2, 0)]);
        let r1 = || Wdfa::from_rows(&[(0, 0, 2, 0), (1, 0, 1, 0), (0, -1, 2, 0)]);
        let r2 = || Wdfa::from_rows(&[(0, 0, 2, -1), (1, 0, 1, 0), (0, 0, 2, 0)]);
        let c = |max_d, left, right| Certificate { max_d, left, right };
        vec![
            ("1RB---_0RC1LC_1RD1RC_1LE1LD_0RA0LE", c(2, a(), r1())),
            ("1RB---_0RC1LB_1RD1RC_1LE1LD_0RA0LE", c(2, a(), r1())),
            ("1RB---_0RC1RC_1RD1RC_1LE1LD_0RA0LE", c(2, a(), r2())),
            ("1RB---_0RC1RC_1RD1RB_1LE1LD_0RA0LE", c(2, a(), r2())),
            ("1RB1RA_1LC1LB_0RD0LC_1RE---_0RA1RA", c(3, a(), r1())),
            ("1RB1RA_1LC1LB_0RD0LC_1RE---_0RA1LA", c(3, a(), r1())),
            (
                "1RB1RA_1LC1LB_0RD0LC_1RE---_0RA1LE",
                c(
                    3,
                    Wdfa::from_rows(&[(0, 0, 2, 0), (1, 0, 1, 0), (3, 0, 2, 0), (1, 0, 2, 1)]),
                    r1(),
                ),
            ),
            ("1RB1RE_1LC1LB_0RD0LC_1RE---_0RA1RA", c(3, a(), r1())),
            (
                "1RB1RA_1LC1LE_0RD0LC_1RE---_0RA1LB",
                c(
                    3,
                    Wdfa::from_rows(&[
                        (0, 0, 2, 0),
                        (1, 0, 1, 0),
                        (3, 1, 4, 0),
                        (1, 0, 2, 0),
                        (1, 0, 2, 0),
                    ]),
                    r1(),
                ),
            ),
            (
                "1RB---_0RC1LD_1RD1RC_1LE1LB_0RA0LE",
                c(
                    2,
                    Wdfa::from_rows(&[
                        (0, 0, 2, 0),
                        (1, 0, 1, 0),
                        (3, 0, 4, 0),
                        (1, 0, 2, 1),
                        (1, 0, 2, 0),
                    ]),
                    r1(),
                ),
            ),
            (
                "1RB1RE_1LC1LB_0RD0LC_1LE---_0RA1RA",
                c(
                    2,
                    Wdfa::from_rows(&[(0, 0, 2, 0), (1, 0, 1, 0), (3, 1, 3, 0), (1, 0, 2, 0)]),
                    Wdfa::from_rows(&[(0, 0, 2, 0), (1, 0, 1, 0), (3, 0, 2, 0), (2, 0, 2, -1)]),
                ),
            ),
            (
                "1RB---_0LC1LC_1LD1LB_1RE1RD_0LA0RE",
                c(
                    2,
                    Wdfa::from_rows(&[(0, 0, 2, 0), (1, 0, 1, 0), (3, 0, 2, 0), (2, 0, 2, 1)]),
                    Wdfa::from_rows(&[(0, 0, 2, 0), (1, 0, 1, 0), (3, -1, 3, 0), (1, 0, 2, 0)]),
                ),
            ),
            (
                "1RB1LC_1LC1RA_0LE0LD_0RA1RD_---0LC",
                c(
                    2,
                    Wdfa::from_rows(&[
                        (0, 0, 2, 0),
                        (1, 0, 1, 0),
                        (4, 0, 3, 0),
                        (4, 1, 2, 0),
                        (1, 0, 2, 0),
                    ]),
                    Wdfa::from_rows(&[(0, 0, 2, 0), (1, 0, 1, 0), (3, 0, 2, -1), (2, 0, 2, 0)]),
                ),
            ),
        ]
    }

    #[test]
    fn coq_certificates_verify() {
        for (m, cert) in coq_certificates() {
            let (t, n) = from_text(m).unwrap();
            let r = verify(&t, n, &cert, CLOSURE_STATES);
            assert!(r.is_ok(), "{m}: {r:?}");
        }
    }

    #[test]
    fn coq_large_certificates_verify_and_fail_once_damaged() {
        let file = include_str!("../../certificates/coq-bb5-large-wfar.txt");
        let coq = super::supplied::SuppliedCertificates::parse("coq", file).unwrap();
        for e in &coq.entries {
            let m = &e.machine;
            let (t, n) = from_text(m).unwrap();
            let cert = Certificate {
                max_d: e.max_d,
                left: super::supplied::parse_wdfa(&e.left).unwrap(),
                right: super::supplied::parse_wdfa(&e.right).unwrap(),
            };
            let limit = closure_limit(&cert);
            let r = verify(&t, n, &cert, limit);
            assert!(r.is_ok(), "{m}: {r:?}");
            // Every weight dropped: a plain DFA pair, which does not
            // close without reaching the undefined transition.
            let mut flat = cert.clone();
            for w in flat.left.weight.iter_mut().chain(&mut flat.right.weight) {
                *w = [0, 0];
            }
            assert!(verify(&t, n, &flat, limit).is_err(), "{m}: unweighted");
            // One transition redirected.
            let mut bad = cert.clone();
            bad.left.next[2][1] = bad.left.next[2][0];
            assert!(verify(&t, n, &bad, limit).is_err(), "{m}: redirected");
            // Nor does it prove the 5-state champion.
            let (champion, _) = from_text("1RB1LC_1RC1RB_1RD0LE_1LA1LD_---0LA").unwrap();
            assert!(verify(&champion, 5, &cert, limit).is_err(), "{m}: champion");
        }
    }

    #[test]
    fn a_certificate_of_one_machine_fails_on_a_halting_variant() {
        // The first counter with its halting transition reached: replacing
        // the right automaton's weight by 0 leaves an abstraction that
        // reaches the undefined transition.
        let (m, cert) = coq_certificates().swap_remove(0);
        let (t, n) = from_text(m).unwrap();
        let mut weak = cert.clone();
        weak.right.weight[2][0] = 0;
        assert!(matches!(
            verify(&t, n, &weak, CLOSURE_STATES),
            Err(WfarError::ReachesHalt { .. })
        ));
        let mut bad = cert.clone();
        bad.left.next[0][0] = 2;
        assert_eq!(verify(&t, n, &bad, 100), Err(WfarError::BlankNotNeutral));
        bad = cert.clone();
        bad.left.next[3][1] = 7;
        assert_eq!(verify(&t, n, &bad, 100), Err(WfarError::Malformed));
    }

    #[test]
    fn family_sizes() {
        // k = 3: state 2's two targets among 0..3 (9), 3 places for +1.
        assert_eq!(family(3, 1).len(), 9 * 3);
        // k = 4: state 2 reaches 3 (16 - 9 = 7 pairs), state 3 any (16),
        // 5 places.
        assert_eq!(family(4, 1).len(), 7 * 16 * 5);
    }

    /// The counters of a sample of the 5-state tree that the search
    /// settles: Fibonacci counters and counters with growing gaps.
    pub(crate) const COUNTERS: [&str; 8] = [
        "1RB1RA_1LC1LB_0RD0LC_1RE---_0RA1LA",
        "1RB1RA_1LC1LB_0RD0LC_1RE---_0RA1RA",
        "1RB1RA_1LC1LB_0RD0LC_1RE---_0RA1LE",
        "1RB1RE_1LC1LB_0RD0LC_1RE---_0RA1RA",
        "1RB---_0RC1LB_1RD1RC_1LE1LD_0RA0LE",
        "1RB---_0RC1LC_1RD1RC_1LE1LD_0RA0LE",
        "1RB---_0RC1RC_1RD1RC_1LE1LD_0RA0LE",
        "1RB---_0RC1RC_1RD1RB_1LE1LD_0RA0LE",
    ];

    #[test]
    fn search_settles_counters_with_verified_certificates() {
        let mut w = Wfar::default();
        for m in COUNTERS {
            let (t, n) = from_text(m).unwrap();
            let cert = w.search(&t, n, 4_000_000);
            let cert = cert.unwrap_or_else(|| panic!("{m}: no certificate"));
            assert!(verify(&t, n, &cert, CLOSURE_STATES).is_ok(), "{m}");
            // Nor does it prove the 5-state champion, which halts.
            let (champion, _) = from_text("1RB1LC_1RC1RB_1RD0LE_1LA1LD_---0LA").unwrap();
            assert!(verify(&champion, 5, &cert, CLOSURE_STATES).is_err(), "{m}");
        }
    }

    /// Halting machines no certificate may prove: the 5-state champion
    /// and late halters (tests/deep.rs), the 4-state champion.
    pub(crate) const HALTING: [&str; 7] = [
        "1RB1LC_1RC1RB_1RD0LE_1LA1LD_---0LA",
        "1RB1RA_1LC1LB_1RA1LD_1RA1LE_---0LC",
        "1RB1RA_1LC1RD_1LA1LC_---1RE_1RA0RB",
        "1RB1RA_1LC1LB_1RA0LD_0RB1LE_---1LC",
        "1RB---_1LC1RC_0RE0LD_1LC0LB_1RD1RA",
        "1RB1RD_1LC0LE_0RA0LB_1RE---_1LC1RC",
        "1RB1LB_1LA0LC_---1LD_1RD0RA",
    ];

    #[test]
    fn search_proves_no_halting_machine() {
        let mut w = Wfar::default();
        for m in HALTING {
            let (t, n) = from_text(m).unwrap();
            assert_eq!(w.search(&t, n, 1_000_000), None, "{m}");
            assert!(w.configs >= 1_000_000, "{m}: the gas was used");
        }
    }
}
