//! The search of one unit of the `ring` method: the group units' rings in
//! turn, then below each ring a depth-first walk with an explicit stack
//! that fills the most constrained line at every node, handing back every
//! square not entered when the budget runs out; and the random walk down
//! the same tree that Knuth's estimate takes ([`probe`]).

use std::sync::atomic::Ordering;

use crate::{listing, Prefix, QueensSummary};
use orchard_core::merge::Openings;
use orchard_core::{Exploration, ExploreContext, FamilyError, Probe};

use super::board::{Board, Line};
use super::rings::{rings_of_group, Ring};
use super::symmetry::Images;
use super::{replay, Start, MAX};

/// How many nodes between two looks at the shared atomics.
const POLL_INTERVAL: u64 = 1 << 14;

pub fn explore(
    n: u32,
    unit: &Prefix,
    ctx: &ExploreContext<'_>,
) -> Result<Exploration<QueensSummary, Prefix>, FamilyError> {
    let mut s = Search {
        n: n as usize,
        m: n - 1,
        base: Vec::new(),
        stabiliser: 1,
        weight: 8,
        solution: [0; MAX],
        nodes: 0,
        budget: ctx.budget.max(1),
        next_poll: 0,
        stopping: false,
        ctx,
        summary: QueensSummary::default(),
        listing: listing(n),
        rest: Vec::new(),
    };
    s.poll();
    if unit.0.len() < 4 {
        let by_c = rings_of_group(n, &unit.0)?;
        s.nodes += 1; // the group's own node
        match *unit.0 {
            [a, b] => s.pair(a, b, &by_c),
            _ => s.rings(by_c.first().map_or(&[][..], |r| r), &[]),
        }
    } else {
        let start = replay(n, unit)?;
        s.nodes += 1; // the unit's own node
        s.ring(unit.0.clone(), start);
    }
    s.summary.nodes = s.nodes;
    ctx.progress.store(s.nodes, Ordering::Relaxed);
    Ok(Exploration::new(s.summary, s.rest))
}

struct Search<'c, 'a> {
    n: usize,
    m: u32,
    /// The queens the current ring's search started from (its units'
    /// prefix when handed back): the ring, and a unit's inner queens.
    base: Vec<u8>,
    stabiliser: u8,
    /// Solutions each completion stands for: the size of its ring's orbit.
    weight: u64,
    /// `solution[r]`: the column of row `r`'s queen on the current path.
    solution: [u8; MAX],
    nodes: u64,
    budget: u64,
    next_poll: u64,
    stopping: bool,
    ctx: &'c ExploreContext<'a>,
    summary: QueensSummary,
    listing: Openings,
    rest: Vec<Prefix>,
}

impl Search<'_, '_> {
    fn poll(&mut self) {
        self.next_poll = self.nodes + POLL_INTERVAL;
        self.ctx.progress.store(self.nodes, Ordering::Relaxed);
        if self.ctx.stop_requested() {
            self.stopping = true;
        }
    }

    /// Searches an `[a, b]` group: its children are the `[a, b, c]` groups
    /// (`by_c`), each counted as a node.
    fn pair(&mut self, a: u8, b: u8, by_c: &[Vec<Ring>]) {
        for (i, rings) in by_c.iter().enumerate() {
            if self.stopping || self.nodes >= self.budget {
                self.stopping = true;
                let groups = by_c[i..].iter().map(|r| Prefix(vec![a, b, r[0][2]]));
                self.rest.extend(groups);
                return;
            }
            self.nodes += 1;
            self.rings(rings, &by_c[i + 1..]);
            if self.stopping {
                return;
            }
        }
    }

    /// Searches the rings of an `[a, b, c]` group in turn, each counted as
    /// a node. When the budget runs out it hands back the rest of the ring
    /// it is in, the rings not started one by one, and the `later` groups
    /// of an `[a, b]` unit.
    fn rings(&mut self, rings: &[Ring], later: &[Vec<Ring>]) {
        let n = self.n as u32;
        for (i, &t) in rings.iter().enumerate() {
            if !self.stopping && self.nodes < self.budget {
                self.nodes += 1;
                if self.nodes >= self.next_poll {
                    self.poll();
                }
                let start = replay(n, &Prefix(t.to_vec())).expect("a ring of root_rings");
                self.ring(t.to_vec(), start);
                if !self.stopping {
                    continue;
                }
                // The ring's own rest is handed back already.
                self.hand_back_rings(&rings[i + 1..], later);
            } else {
                self.stopping = true;
                self.hand_back_rings(&rings[i..], later);
            }
            return;
        }
    }

    #[cold]
    fn hand_back_rings(&mut self, rings: &[Ring], later: &[Vec<Ring>]) {
        self.rest.extend(rings.iter().map(|t| Prefix(t.to_vec())));
        let groups = later.iter().map(|r| Prefix(r[0][..3].to_vec()));
        self.rest.extend(groups);
    }

    /// Searches below one ring (and a unit's inner queens), already
    /// counted as a node.
    fn ring(&mut self, base: Vec<u8>, start: Start) {
        self.base = base;
        self.stabiliser = start.stabiliser;
        self.weight = 8 / u64::from(start.stabiliser.count_ones());
        self.solution = start.solution;
        self.run(start.board);
    }

    /// Visits the ring's subtree depth first with an explicit stack: entry
    /// `d` holds the board before the queen of depth `d`, the line being
    /// filled there (its `free` = the squares not yet entered) and the
    /// square entered last.
    fn run(&mut self, root: Board) {
        let m = self.m;
        let m8 = m as u8;
        let Some(first) = root.choose(m) else {
            self.completion();
            return;
        };
        let mut boards = [Board::default(); MAX];
        let mut lines = [Line::default(); MAX];
        let mut placed = [(0u8, 0u8); MAX];
        boards[0] = root;
        lines[0] = first;
        let mut d = 0usize;
        // The node count lives in a register; the budget, a stop request
        // and the next poll are looked at when it reaches `limit`.
        let mut nodes = self.nodes;
        let mut limit = self.budget.min(self.next_poll);
        loop {
            let free = lines[d].free;
            if free == 0 {
                if d == 0 {
                    break;
                }
                d -= 1;
                continue;
            }
            if nodes >= limit || self.stopping {
                self.nodes = nodes;
                if nodes >= self.budget {
                    self.stopping = true;
                } else if nodes >= self.next_poll {
                    self.poll();
                }
                if self.stopping {
                    self.hand_back(&lines[..=d], &placed[..d]);
                    return;
                }
                limit = self.budget.min(self.next_poll);
            }
            let bit = free & free.wrapping_neg();
            lines[d].free = free ^ bit;
            nodes += 1;
            let (r, c) = lines[d].square(bit.trailing_zeros() as u8);
            placed[d] = (r, c);
            self.solution[r as usize] = c;
            let next = boards[d].place(r, c, m8);
            match next.choose(m) {
                None => self.completion(),
                Some(line) if line.free == 0 => {}
                Some(line) => {
                    d += 1;
                    boards[d] = next;
                    lines[d] = line;
                }
            }
        }
        self.nodes = nodes;
    }

    /// Hands back every square not entered, deepest first (the order the
    /// search would have met them): the unit's queens, the queens of the
    /// path above that depth, and the square.
    #[cold]
    fn hand_back(&mut self, lines: &[Line], placed: &[(u8, u8)]) {
        for d in (0..lines.len()).rev() {
            let mut free = lines[d].free;
            while free != 0 {
                let bit = free & free.wrapping_neg();
                free ^= bit;
                let (r, c) = lines[d].square(bit.trailing_zeros() as u8);
                let mut p = self.base.clone();
                for &(pr, pc) in &placed[..d] {
                    p.extend([pr, pc]);
                }
                p.extend([r, c]);
                self.rest.push(Prefix(p));
            }
        }
    }

    /// A completion of the unit's ring: `self.solution` is a solution.
    #[cold]
    fn completion(&mut self) {
        let images = Images::of(&self.solution[..self.n]);
        // Cannot overflow: at most 8 times the node budget, a u64, and
        // checked where summaries are merged.
        self.summary.met += 1;
        self.summary.solutions += self.weight;
        if self.stabiliser != 1 && images.least(self.stabiliser) != 0 {
            return; // a smaller completion stands for this orbit
        }
        self.summary.distinct += 1;
        // The listing names each orbit by its smallest member, as the
        // `mirror` method does.
        let mut least = [0u8; MAX];
        let g = images.least(0xff);
        for (k, entry) in least[..self.n].iter_mut().enumerate() {
            *entry = images.entry(g, k);
        }
        self.listing
            .note(&mut self.summary.listed, &least[..self.n]);
    }
}

/// One random walk from `unit` down to a leaf of the tree [`explore`]
/// visits: at each node the number of free squares of the line the search
/// would fill, and one of them chosen with `pick`.
pub fn probe(
    n: u32,
    unit: &Prefix,
    pick: &mut dyn FnMut(u64) -> u64,
) -> Result<Probe, FamilyError> {
    let mut branching = Vec::new();
    let mut choose = |k: usize| {
        branching.push(k as u32);
        let i = pick(k as u64);
        assert!(i < k as u64, "pick({k}) returned {i}");
        i as usize
    };
    let start = if unit.0.len() < 4 {
        let by_c = rings_of_group(n, &unit.0)?;
        let rings = match (unit.0.len(), by_c.len()) {
            (_, 0) => return Ok(Probe { branching }),
            (2, k) => &by_c[choose(k)],
            _ => &by_c[0],
        };
        replay(n, &Prefix(rings[choose(rings.len())].to_vec()))?
    } else {
        replay(n, unit)?
    };
    let m = n - 1;
    let mut board = start.board;
    while let Some(line) = board.choose(m) {
        let k = line.free.count_ones();
        if k == 0 {
            break;
        }
        branching.push(k);
        let i = pick(u64::from(k));
        assert!(i < u64::from(k), "pick({k}) returned {i}");
        let mut free = line.free;
        for _ in 0..i {
            free &= free - 1;
        }
        let (r, c) = line.square(free.trailing_zeros() as u8);
        board = board.place(r, c, m as u8);
    }
    Ok(Probe { branching })
}
