//! The one-board-at-a-time walk behind `hip-draws`' `seeds` method and its
//! Burnside units: colour *groups* of cells step by step, every group one
//! colour, and reject a colour as soon as it completes a monochromatic square.
//!
//! For the seeds method a group is one cell and the cells come in *growth
//! order* (the cells of the seed board first, recursively), so every prefix
//! that covers a smaller board is a draw of that board: the walk visits
//! exactly the partial draws of the growing boards, which is why it is fast
//! where draws are rare (7x7 from the 56 draws of 6x6). For a Burnside unit a
//! group is one cycle of a board symmetry: colourings constant on the cycles
//! are exactly the colourings that symmetry fixes.
//!
//! Plain depth-first recursion over `u64` colour boards; nothing allocates
//! except recording a drawn board or handing back the unexplored rest.

use super::board::Board;
use orchard_core::Probe;
use orchard_core::{ExploreContext, FamilyError, NodeMeter};

/// Most colours any Hip family accepts.
pub const MAX_COLORS: usize = 10;

/// How many draws a job lists in its results file at most.
pub const LIST_CAP: u128 = 100_000;

/// How many nodes between two looks at the shared atomics.
const POLL_INTERVAL: u64 = 1 << 12;

/// What the walk does: the groups, the squares to check after each step, and
/// what to count at the leaves.
pub struct Plan {
    pub k: usize,
    /// Cells coloured at step `t` (one colour for the whole group).
    pub groups: Vec<u64>,
    /// `checks[check_start[t]..check_start[t + 1]]`: the squares (4-cell
    /// masks) all of whose cells are coloured once step `t` is done and were
    /// not before: the only squares step `t` can complete.
    check_start: Vec<usize>,
    checks: Vec<u64>,
    /// Stones per colour in a playable board (see [`playable_target`]).
    pub target: [u32; MAX_COLORS],
    /// Identity walk (seeds method): count canonical boards and list boards.
    pub canonical: bool,
}

/// Stones per colour that play produces on `n` cells with `k` players: with
/// `n = qk + r`, the first `r` players hold `q + 1` stones, the others `q`.
pub fn playable_target(n: usize, k: usize) -> [u32; MAX_COLORS] {
    let mut t = [0u32; MAX_COLORS];
    let (q, r) = (n / k, n % k);
    for (j, slot) in t.iter_mut().enumerate().take(k) {
        *slot = (q + usize::from(j < r)) as u32;
    }
    t
}

impl Plan {
    pub fn new(board: &Board, k: usize, groups: Vec<u64>, canonical: bool) -> Plan {
        let mut step_of = [usize::MAX; 64];
        for (t, &g) in groups.iter().enumerate() {
            let mut m = g;
            while m != 0 {
                step_of[m.trailing_zeros() as usize] = t;
                m &= m - 1;
            }
        }
        let mut by_step: Vec<Vec<u64>> = vec![Vec::new(); groups.len()];
        for &sq in &board.squares {
            let mut last = 0;
            let mut m = sq;
            while m != 0 {
                last = last.max(step_of[m.trailing_zeros() as usize]);
                m &= m - 1;
            }
            by_step[last].push(sq);
        }
        let mut check_start = Vec::with_capacity(groups.len() + 1);
        let mut checks = Vec::new();
        for list in by_step {
            check_start.push(checks.len());
            checks.extend(list);
        }
        check_start.push(checks.len());
        Plan {
            k,
            groups,
            check_start,
            checks,
            target: playable_target(board.n, k),
            canonical,
        }
    }

    /// Whether colouring group `t` with `x` leaves no square of colour `x`.
    #[inline(always)]
    fn fits(&self, t: usize, x_board: u64) -> bool {
        let with = x_board | self.groups[t];
        self.checks[self.check_start[t]..self.check_start[t + 1]]
            .iter()
            .all(|&sq| sq & with != sq)
    }
}

/// What one walk found (one unit's worth).
#[derive(Debug, Default)]
pub struct WalkOut {
    pub nodes: u64,
    pub draws: u64,
    pub playable: u64,
    pub distinct: u64,
    pub distinct_playable: u64,
    /// Drawn boards, while there are at most [`LIST_CAP`].
    pub boards: Vec<String>,
    /// Unexplored prefixes (budget ran out) and seeds reached.
    pub rest: Vec<Vec<u8>>,
}

struct Walk<'a, 'c> {
    plan: &'a Plan,
    board: &'a Board,
    bb: [u64; MAX_COLORS],
    path: Vec<u8>,
    /// Depth at which a prefix is handed back as a seed instead of expanded.
    stop_at: usize,
    meter: NodeMeter<'a, 'c>,
    out: WalkOut,
}

/// Walks below every prefix of `prefixes`. A prefix shorter than
/// `seed_depth` is expanded only down to `seed_depth`, and the prefixes
/// reached there (the seeds: draws of the seed board) go to `rest`.
pub fn walk(
    plan: &Plan,
    board: &Board,
    prefixes: &[Vec<u8>],
    seed_depth: usize,
    ctx: &ExploreContext<'_>,
) -> Result<WalkOut, FamilyError> {
    let mut w = Walk {
        plan,
        board,
        bb: [0; MAX_COLORS],
        path: Vec::with_capacity(plan.groups.len()),
        stop_at: plan.groups.len(),
        meter: NodeMeter::new(ctx, POLL_INTERVAL),
        out: WalkOut::default(),
    };
    for prefix in prefixes {
        w.bb = replay(plan, prefix)?;
        w.path.clear();
        w.path.extend_from_slice(prefix);
        w.stop_at = if prefix.len() < seed_depth {
            seed_depth
        } else {
            plan.groups.len()
        };
        w.visit();
    }
    w.out.nodes = w.meter.finish();
    Ok(w.out)
}

/// One random walk for Knuth's estimate of the tree [`walk`] explores below
/// `prefixes` (down to full boards: the seeds a walk would hand back are part
/// of the tree estimated). A unit of several prefixes is a root with one
/// child per prefix; that root adds one node to the estimate.
pub fn probe(
    plan: &Plan,
    prefixes: &[Vec<u8>],
    pick: &mut dyn FnMut(u64) -> u64,
) -> Result<Probe, FamilyError> {
    let mut branching = Vec::new();
    let Some(prefix) = pick_prefix(prefixes, &mut branching, pick) else {
        return Ok(Probe { branching });
    };
    let mut bb = replay(plan, prefix)?;
    for t in prefix.len()..plan.groups.len() {
        let mut fits = [0usize; MAX_COLORS];
        let mut n = 0;
        for (x, &b) in bb.iter().enumerate().take(plan.k) {
            if plan.fits(t, b) {
                fits[n] = x;
                n += 1;
            }
        }
        if n == 0 {
            break;
        }
        branching.push(n as u32);
        bb[fits[pick(n as u64) as usize]] |= plan.groups[t];
    }
    Ok(Probe { branching })
}

/// The prefix a probe descends from: a unit of several prefixes is a root
/// with one child per prefix (a branching recorded in `branching`); `None`
/// for a unit of none.
pub fn pick_prefix<'a>(
    prefixes: &'a [Vec<u8>],
    branching: &mut Vec<u32>,
    pick: &mut dyn FnMut(u64) -> u64,
) -> Option<&'a Vec<u8>> {
    match prefixes.len() {
        0 => None,
        1 => Some(&prefixes[0]),
        n => {
            branching.push(n as u32);
            Some(&prefixes[pick(n as u64) as usize])
        }
    }
}

/// `k! / (k - m)!`: the colourings a restricted-growth prefix using `m`
/// colours stands for.
pub fn falling(k: usize, m: usize) -> u128 {
    (k - m + 1..=k).map(|v| v as u128).product()
}

/// The colour boards of a prefix, checked: every digit a colour, no
/// monochromatic square.
fn replay(plan: &Plan, prefix: &[u8]) -> Result<[u64; MAX_COLORS], FamilyError> {
    if prefix.len() > plan.groups.len() {
        return Err(FamilyError::BadUnit(format!(
            "prefix of {} steps, the walk has {}",
            prefix.len(),
            plan.groups.len()
        )));
    }
    let mut bb = [0u64; MAX_COLORS];
    for (t, &x) in prefix.iter().enumerate() {
        let x = x as usize;
        if x >= plan.k || !plan.fits(t, bb[x]) {
            return Err(FamilyError::BadUnit(format!(
                "prefix {prefix:?} is not a colouring without monochromatic squares"
            )));
        }
        bb[x] |= plan.groups[t];
    }
    Ok(bb)
}

impl Walk<'_, '_> {
    fn visit(&mut self) {
        let t = self.path.len();
        // A seed (counted by the unit that walks below it, so that a job's
        // nodes are the walk's nodes, each once), or a node past the stop:
        // handed back.
        let seed = t == self.stop_at && t < self.plan.groups.len();
        if seed || !self.meter.enter() {
            self.out.rest.push(self.path.clone());
            return;
        }
        if t == self.plan.groups.len() {
            self.leaf();
            return;
        }
        let g = self.plan.groups[t];
        for x in 0..self.plan.k {
            if !self.plan.fits(t, self.bb[x]) {
                continue;
            }
            self.bb[x] |= g;
            self.path.push(x as u8);
            self.visit();
            self.path.pop();
            self.bb[x] &= !g;
        }
    }

    #[cold]
    fn leaf(&mut self) {
        let k = self.plan.k;
        self.out.draws += 1;
        let playable = (0..k).all(|j| self.bb[j].count_ones() == self.plan.target[j]);
        self.out.playable += u64::from(playable);
        if !self.plan.canonical {
            return;
        }
        // Canonical: no symmetry maps the board to a lexicographically
        // smaller tuple of colour boards (the last colour is implied).
        let canonical = (1..self.board.symmetries()).all(|g| {
            for j in 0..k - 1 {
                let t = self.board.transform(g, self.bb[j]);
                if t != self.bb[j] {
                    return t > self.bb[j];
                }
            }
            true
        });
        if canonical {
            self.out.distinct += 1;
            self.out.distinct_playable += u64::from(playable);
        }
        if u128::from(self.out.draws) <= LIST_CAP {
            let bb = self.bb;
            let s = self.board.render(|cell| {
                let j = (0..k).find(|&j| bb[j] >> cell & 1 == 1).unwrap_or(0);
                char::from(b'0' + j as u8)
            });
            self.out.boards.push(s);
        } else {
            self.out.boards = Vec::new();
        }
    }
}
