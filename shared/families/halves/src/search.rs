//! The `halves` search loop: Fowler's walk from the centre to the edge,
//! depth first, without recursion. The points the walk and its half-turn
//! image cover are one `u128`; each step sets two bits (the point and its
//! image) and backing up clears them. A frame of the explicit stack holds
//! the point, the symmetries fixing every point of the walk so far, and the
//! moves still to try. Nothing allocates in the loop except when a walk is
//! listed, or when the budget runs out and the rest is handed back.

use super::board::{Board, BOUNDARY, MAX_N};
use super::{listing, HalfCut, HalvesSummary};
use orchard_core::{Exploration, ExploreContext, FamilyError, NodeMeter, Probe};

/// How many nodes between two looks at the shared atomics.
const POLL_INTERVAL: u64 = 1 << 16;

/// Longest walk: it visits distinct interior points, plus the last step.
const MAX_DEPTH: usize = ((MAX_N - 1) * (MAX_N - 1)) as usize + 1;

/// One node on the path from the unit's root.
#[derive(Clone, Copy, Default)]
struct Frame {
    /// The interior point the walk stands on.
    at: u8,
    /// The symmetries fixing every point of the walk so far.
    fixed: u8,
    /// The moves not tried yet (a bit per direction).
    todo: u8,
}

/// The state below a unit's prefix, checked.
struct Start {
    visited: u128,
    frame: Frame,
    /// The prefix is a complete walk; `frame.fixed` is then its stabilizer.
    complete: bool,
}

/// Replays `moves` from the board's start: each move must be one the
/// search takes (allowed by the orderly rule, to a point not covered),
/// and only the last may reach the boundary.
fn replay(board: &Board, moves: &[u8]) -> Result<Start, FamilyError> {
    if moves.len() > MAX_DEPTH {
        return Err(FamilyError::BadUnit(format!(
            "a walk of {} moves on a board of {}",
            moves.len(),
            board.n
        )));
    }
    let mut visited = board.initial;
    let mut frame = Frame {
        at: board.start,
        fixed: board.start_fix,
        todo: 0,
    };
    for (k, &d) in moves.iter().enumerate() {
        if d >= 4 {
            return Err(FamilyError::BadUnit(format!("move {k} is {d}, not 0..3")));
        }
        if board.allowed[frame.fixed as usize] & (1 << d) == 0 {
            return Err(FamilyError::BadUnit(format!(
                "move {k} is the mirror image of a smaller one"
            )));
        }
        let to = board.next[frame.at as usize][d as usize];
        if to == BOUNDARY {
            if k + 1 != moves.len() {
                return Err(FamilyError::BadUnit(format!(
                    "the walk reaches the edge at move {k} and goes on"
                )));
            }
            let fixed = frame.fixed & board.edge_fix[frame.at as usize][d as usize];
            return Ok(Start {
                visited,
                frame: Frame { fixed, ..frame },
                complete: true,
            });
        }
        if visited & (1u128 << to) != 0 {
            return Err(FamilyError::BadUnit(format!(
                "move {k} meets the cut already drawn"
            )));
        }
        visited |= 1u128 << to | 1u128 << board.turn[to as usize];
        frame = Frame {
            at: to,
            fixed: frame.fixed & board.fix[to as usize],
            todo: 0,
        };
    }
    frame.todo = board.allowed[frame.fixed as usize];
    Ok(Start {
        visited,
        frame,
        complete: false,
    })
}

/// Whether move `d` from `frame` leads to a child: the edge, or a point
/// not covered yet.
#[inline(always)]
fn is_child(board: &Board, visited: u128, at: u8, d: u32) -> bool {
    let to = board.next[at as usize][d as usize];
    to == BOUNDARY || visited & (1u128 << to) == 0
}

pub fn explore(
    board: &Board,
    unit: &HalfCut,
    ctx: &ExploreContext<'_>,
) -> Result<Exploration<HalvesSummary, HalfCut>, FamilyError> {
    let start = replay(board, &unit.0)?;
    let mut summary = HalvesSummary::default();
    let mut rest = Vec::new();
    // The unit's root is a node, entered whatever the budget.
    let mut meter = NodeMeter::new(ctx, POLL_INTERVAL);
    meter.count(1);
    if start.complete {
        leaf(board.n, &mut summary, start.frame.fixed, &unit.0);
        summary.nodes = meter.finish();
        return Ok(Exploration::new(summary, rest));
    }

    let base = unit.0.len();
    let mut moves = [0u8; MAX_DEPTH];
    moves[..base].copy_from_slice(&unit.0);
    let mut stack = [Frame::default(); MAX_DEPTH + 1];
    let mut depth = base;
    stack[depth] = start.frame;
    let mut visited = start.visited;
    let mut count: u64 = 0;
    let mut walks: u64 = 0;
    let mut symmetric: u64 = 0;
    let rule = listing(board.n);

    loop {
        let frame = stack[depth];
        if frame.todo == 0 {
            if depth == base {
                break;
            }
            // Back up one move.
            visited &= !(1u128 << frame.at | 1u128 << board.turn[frame.at as usize]);
            depth -= 1;
            continue;
        }
        let d = frame.todo.trailing_zeros();
        stack[depth].todo &= frame.todo - 1;
        if !is_child(board, visited, frame.at, d) {
            continue;
        }
        if !meter.enter() {
            // Hand back this child, the parent's later children, and the
            // later children of every node above, in search order.
            stack[depth].todo |= 1 << d;
            hand_back(
                board, &mut stack, &mut moves, visited, base, depth, &mut rest,
            );
            break;
        }
        let to = board.next[frame.at as usize][d as usize];
        moves[depth] = d as u8;
        if to == BOUNDARY {
            // A complete half-cut: the orderly rule makes it the one
            // representative of its orbit.
            let fixed = frame.fixed & board.edge_fix[frame.at as usize][d as usize];
            count += 1;
            walks += u64::from(8 / fixed.count_ones());
            if fixed != 1 {
                symmetric += 1;
            }
            rule.note(&mut summary.listed, &moves[..=depth]);
            continue;
        }
        visited |= 1u128 << to | 1u128 << board.turn[to as usize];
        let fixed = frame.fixed & board.fix[to as usize];
        depth += 1;
        stack[depth] = Frame {
            at: to,
            fixed,
            todo: board.allowed[fixed as usize],
        };
    }
    // Counts are bounded by the node budget (a u64): no overflow here.
    summary.nodes = meter.finish();
    summary.count += count;
    summary.walks += walks;
    summary.symmetric += symmetric;
    Ok(Exploration::new(summary, rest))
}

/// Counts a complete walk whose stabilizer is `fixed` (for a unit whose
/// prefix is complete).
fn leaf(n: usize, summary: &mut HalvesSummary, fixed: u8, moves: &[u8]) {
    summary.count += 1;
    summary.walks += u64::from(8 / fixed.count_ones());
    if fixed != 1 {
        summary.symmetric += 1;
    }
    listing(n).note(&mut summary.listed, moves);
}

/// The unvisited children of every frame from `depth` down to `base`, as
/// units in search order: the deepest frame's first (they come before its
/// ancestors' later siblings). Each frame's children are judged with the
/// points covered at that frame, so the frames above are cleared first.
fn hand_back(
    board: &Board,
    stack: &mut [Frame],
    moves: &mut [u8],
    mut visited: u128,
    base: usize,
    depth: usize,
    rest: &mut Vec<HalfCut>,
) {
    let mut k = depth;
    loop {
        let frame = stack[k];
        let mut todo = frame.todo;
        while todo != 0 {
            let d = todo.trailing_zeros();
            todo &= todo - 1;
            if is_child(board, visited, frame.at, d) {
                let mut prefix = moves[..k].to_vec();
                prefix.push(d as u8);
                rest.push(HalfCut(prefix));
            }
        }
        if k == base {
            break;
        }
        visited &= !(1u128 << frame.at | 1u128 << board.turn[frame.at as usize]);
        k -= 1;
    }
}

/// One random walk from `unit` down to a leaf of the tree [`explore`]
/// visits: at each node the number of children (moves allowed by the
/// orderly rule to the edge or to a point not covered), one of them chosen
/// with `pick`. Reaching the edge and having no child are the leaves.
pub fn probe(
    board: &Board,
    unit: &HalfCut,
    pick: &mut dyn FnMut(u64) -> u64,
) -> Result<Probe, FamilyError> {
    let start = replay(board, &unit.0)?;
    let mut branching = Vec::new();
    if start.complete {
        return Ok(Probe { branching });
    }
    let mut visited = start.visited;
    let mut frame = start.frame;
    loop {
        let mut children = [0u32; 4];
        let mut k = 0;
        let mut todo = frame.todo;
        while todo != 0 {
            let d = todo.trailing_zeros();
            todo &= todo - 1;
            if is_child(board, visited, frame.at, d) {
                children[k] = d;
                k += 1;
            }
        }
        if k == 0 {
            break;
        }
        branching.push(k as u32);
        let i = pick(k as u64);
        assert!(i < k as u64, "pick({k}) returned {i}");
        let d = children[i as usize];
        let to = board.next[frame.at as usize][d as usize];
        if to == BOUNDARY {
            break;
        }
        visited |= 1u128 << to | 1u128 << board.turn[to as usize];
        let fixed = frame.fixed & board.fix[to as usize];
        frame = Frame {
            at: to,
            fixed,
            todo: board.allowed[fixed as usize],
        };
    }
    Ok(Probe { branching })
}

/// The nodes `depth` moves below the root, in search order, and the
/// complete walks shorter than that: the root units. Together they cover
/// every walk.
pub fn prefixes(board: &Board, depth: usize) -> Vec<HalfCut> {
    fn go(board: &Board, moves: &mut Vec<u8>, depth: usize, out: &mut Vec<HalfCut>) {
        let start = replay(board, moves).expect("a prefix the search takes");
        if start.complete || moves.len() == depth {
            out.push(HalfCut(moves.clone()));
            return;
        }
        let mut todo = start.frame.todo;
        while todo != 0 {
            let d = todo.trailing_zeros();
            todo &= todo - 1;
            if is_child(board, start.visited, start.frame.at, d) {
                moves.push(d as u8);
                go(board, moves, depth, out);
                moves.pop();
            }
        }
    }
    let mut out = Vec::new();
    go(board, &mut Vec::new(), depth, &mut out);
    out
}
