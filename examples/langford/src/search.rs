//! The search loop: pairs placed largest first on a row of `2n` cells held
//! as a bit mask. Nothing allocates while it runs, except the units it
//! hands back when it stops.

use orchard_core::{Exploration, ExploreContext, FamilyError, NodeMeter};

use crate::{LangfordSummary, Placement};

/// Nodes between two looks at the cluster's stop flag and the node budget:
/// often enough to stop within milliseconds, rarely enough to cost nothing.
const POLL_INTERVAL: u64 = 1 << 14;

/// The cells pair `k` takes when its first number is at `p`, on a row of
/// `2n` cells; `None` past the end.
fn cells(n: u32, k: u32, p: u32) -> Option<u64> {
    let second = p + k + 1;
    (second < 2 * n).then(|| (1u64 << p) | (1u64 << second))
}

/// The occupied cells of a unit's row, or why it is no node of the tree
/// (a unit may come from the network: it is checked, never trusted).
fn replay(n: u32, unit: &Placement) -> Result<u64, FamilyError> {
    if unit.0.len() > n as usize {
        return Err(FamilyError::BadUnit(format!(
            "{} pairs placed; n = {n} has only {n}",
            unit.0.len()
        )));
    }
    let mut row = 0u64;
    for (i, &p) in unit.0.iter().enumerate() {
        let k = n - i as u32;
        let taken = cells(n, k, u32::from(p)).ok_or_else(|| {
            FamilyError::BadUnit(format!("pair {k} at {p} runs past the row of {}", 2 * n))
        })?;
        if row & taken != 0 {
            return Err(FamilyError::BadUnit(format!(
                "pair {k} at {p} overlaps the pairs before it"
            )));
        }
        row |= taken;
    }
    Ok(row)
}

/// Every node of depth `depth` (the first `depth` pairs placed), in search
/// order.
pub fn placements(n: u32, depth: usize) -> Vec<Placement> {
    let mut out = Vec::new();
    let mut path = Vec::with_capacity(depth);
    fn walk(n: u32, depth: usize, row: u64, path: &mut Vec<u8>, out: &mut Vec<Placement>) {
        if path.len() == depth {
            out.push(Placement(path.clone()));
            return;
        }
        let k = n - path.len() as u32;
        for p in 0..2 * n {
            let Some(taken) = cells(n, k, p) else { break };
            if row & taken == 0 {
                path.push(p as u8);
                walk(n, depth, row | taken, path, out);
                path.pop();
            }
        }
    }
    walk(n, depth, 0, &mut path, &mut out);
    out
}

/// Explores `unit` within the budget of `ctx`: finished, or split into what
/// it counted and the subtrees it did not enter.
pub fn explore(
    n: u32,
    unit: &Placement,
    ctx: &ExploreContext<'_>,
) -> Result<Exploration<LangfordSummary, Placement>, FamilyError> {
    let row = replay(n, unit)?;
    let mut path = Vec::with_capacity(n as usize);
    path.extend_from_slice(&unit.0);
    let mut s = Search {
        n,
        row,
        path,
        meter: NodeMeter::new(ctx, POLL_INTERVAL),
        sequences: 0,
        rest: Vec::new(),
    };
    s.visit();
    let summary = LangfordSummary {
        nodes: s.meter.finish(),
        sequences: s.sequences,
    };
    Ok(Exploration::new(summary, s.rest))
}

struct Search<'c, 'a> {
    n: u32,
    /// Occupied cells: bit `i` for cell `i`.
    row: u64,
    /// First positions of the pairs placed, largest first.
    path: Vec<u8>,
    meter: NodeMeter<'c, 'a>,
    /// Cannot overflow: at most one per node, and nodes are bounded by the
    /// budget, a `u64`.
    sequences: u64,
    /// Nodes reached but not entered, in search order.
    rest: Vec<Placement>,
}

impl Search<'_, '_> {
    /// Visits the node of `path`. Once stopping, every child not entered
    /// goes to `rest` instead; together they cover what was not visited.
    fn visit(&mut self) {
        if !self.meter.enter() {
            self.rest.push(Placement(self.path.clone()));
            return;
        }
        let placed = self.path.len() as u32;
        if placed == self.n {
            self.sequences += 1;
            return;
        }
        let k = self.n - placed;
        for p in 0..2 * self.n {
            let Some(taken) = cells(self.n, k, p) else {
                break;
            };
            if self.row & taken != 0 {
                continue;
            }
            self.path.push(p as u8);
            if self.meter.stopping() {
                self.rest.push(Placement(self.path.clone()));
            } else {
                self.row |= taken;
                self.visit();
                self.row &= !taken;
            }
            self.path.pop();
        }
    }
}
