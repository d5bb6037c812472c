//! The walk of the tree-normal-form tree below a unit: depth first, an
//! explicit stack of tables (no recursion, nothing allocated per node but
//! the listing of each machine), polling the stop flag every few nodes and
//! handing back the unvisited rest when the budget runs out.
//!
//! A node is a partial machine. It is run and decided
//! ([`Workspace::decide`]); if it halts on its undefined transition `(s,
//! r)`, its children are the machines that define `(s, r)` in every way:
//! write 0 or 1, move left or right (right only at the root: the mirror
//! image of a machine runs the same, so the first move is taken to the
//! right), go to a state already in use or to the *next* unused one only
//! (states are numbered in order of first use, so machines that differ by
//! renaming states are enumerated once). A child that would have no
//! undefined transition left is not enumerated (it can never halt), as in
//! bbchallenge's counts.

use std::sync::atomic::Ordering;

use orchard_core::{Exploration, ExploreContext, FamilyError, Probe};

use crate::decide::{Outcome, Stage, Workspace};
use crate::machine::{highest_state, undefined_count, Table, Transition, MAX_STATES};
use crate::simulate::PlainRun;
use crate::{BbSummary, BbUnit, Leaf, Verdict, RECHECK_ONE_IN, RECHECK_STEPS};

/// Nodes between two looks at the shared atomics (a node is a whole run of
/// a machine, so this is often).
const POLL_INTERVAL: u64 = 16;

/// Most children of a node: 2 symbols x 2 moves x the states.
pub const MAX_CHILDREN: usize = 4 * MAX_STATES;

/// The children of a node that halted on transition `at`, in search order,
/// into `out`; returns how many.
pub fn children(table: &Table, n: usize, at: usize, out: &mut [Table; MAX_CHILDREN]) -> usize {
    if undefined_count(table, n) <= 1 {
        return 0; // the children could never halt
    }
    let root = undefined_count(table, n) == 2 * n;
    let next_max = (highest_state(table) + 1).min(n as u8 - 1);
    let mut k = 0;
    for next in 0..=next_max {
        for write in 0..2 {
            for right in [true, false] {
                if root && !right {
                    continue;
                }
                let mut child = *table;
                child[at] = Transition { write, right, next }.encode();
                out[k] = child;
                k += 1;
            }
        }
    }
    k
}

/// A hash of a table (FNV-1a), to pick the re-checked sample by the
/// machine itself, the same whatever the cuts.
fn table_hash(table: &Table) -> u64 {
    table.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Counts a machine decided by `stage` into a summary; `list`: keep its
/// line in the summary's listing.
pub fn record(s: &mut BbSummary, table: &Table, outcome: Outcome, stage: Stage, list: bool) {
    // None of these can overflow: each is bounded by the node budget, a u64.
    s.nodes += 1;
    s.settled_by[stage as usize] += 1;
    let verdict = match outcome {
        Outcome::Halts { steps, ones, at } => {
            s.halting += 1;
            s.halted_by[stage as usize] += 1;
            s.steps_histogram[steps.ilog2() as usize] += 1;
            let verdict = Verdict::Halts { steps, ones, at };
            if ones > s.max_ones || s.ones_champions.is_empty() {
                s.max_ones = ones;
                s.ones_champions.clear();
            }
            if ones == s.max_ones {
                s.ones_champions.push(Leaf {
                    table: *table,
                    verdict,
                });
            }
            if steps > s.max_steps || s.steps_champions.is_empty() {
                s.max_steps = steps;
                s.steps_champions.clear();
            }
            if steps == s.max_steps {
                s.steps_champions.push(Leaf {
                    table: *table,
                    verdict,
                });
            }
            verdict
        }
        Outcome::Never(d) => {
            s.never[d as usize] += 1;
            Verdict::Never(d)
        }
        Outcome::Undecided => {
            s.undecided += 1;
            s.undecided_machines.push(Leaf {
                table: *table,
                verdict: Verdict::Undecided,
            });
            Verdict::Undecided
        }
    };
    if list {
        s.leaves.push(Leaf {
            table: *table,
            verdict,
        });
    }
}

pub struct Search<'c, 'a> {
    pub n: usize,
    /// Whether the summary lists every machine.
    pub list: bool,
    pub ws: Workspace,
    pub ctx: &'c ExploreContext<'a>,
}

impl Search<'_, '_> {
    /// The independent check of a verdict by the plain simulator: every
    /// halting verdict of the watched runs (same steps, ones and halting
    /// transition), and one nonhalting verdict in [`RECHECK_ONE_IN`] (no
    /// halt within [`RECHECK_STEPS`] steps). A disagreement is recorded,
    /// never dropped.
    fn recheck(&mut self, s: &mut BbSummary, table: &Table, outcome: Outcome) {
        let agrees = match outcome {
            Outcome::Halts { steps, ones, at } if self.ws.last_stage != Stage::Horizon => {
                s.rechecked_halting += 1;
                self.ws.plain_run(table, self.n, u64::from(steps))
                    == PlainRun::Halts {
                        steps: u64::from(steps),
                        ones: u64::from(ones),
                        at,
                    }
            }
            Outcome::Never(_) if table_hash(table).is_multiple_of(RECHECK_ONE_IN) => {
                s.rechecked_nonhalting += 1;
                self.ws.plain_run(table, self.n, RECHECK_STEPS) == PlainRun::Running
            }
            _ => true,
        };
        if !agrees {
            s.recheck_failures.push(Leaf {
                table: *table,
                verdict: match outcome {
                    Outcome::Halts { steps, ones, at } => Verdict::Halts { steps, ones, at },
                    Outcome::Never(d) => Verdict::Never(d),
                    Outcome::Undecided => Verdict::Undecided,
                },
            });
        }
    }

    /// Decides one machine; a failure of the job's far solver fails the
    /// attempt (nothing of the unit is merged; it is tried again).
    fn decide(&mut self, table: &Table) -> Result<Outcome, FamilyError> {
        let outcome = self.ws.decide(table, self.n);
        match self.ws.take_failure() {
            Some(e) => Err(FamilyError::Attempt(e)),
            None => Ok(outcome),
        }
    }

    pub fn explore(
        &mut self,
        unit: &BbUnit,
    ) -> Result<Exploration<BbSummary, BbUnit>, FamilyError> {
        let mut s = BbSummary::default();
        let budget = self.ctx.budget.max(1);
        let mut stack: Vec<Table> = Vec::with_capacity(64);
        let mut kids = [[0u8; 2 * MAX_STATES]; MAX_CHILDREN];
        let mut rest = Vec::new();
        if !unit.subtree {
            let outcome = self.decide(&unit.table)?;
            self.recheck(&mut s, &unit.table, outcome);
            record(&mut s, &unit.table, outcome, self.ws.last_stage, self.list);
        } else {
            stack.push(unit.table);
        }
        let mut stopping = false;
        while let Some(table) = stack.pop() {
            if s.nodes % POLL_INTERVAL == 0 {
                self.ctx.progress.store(s.nodes, Ordering::Relaxed);
                stopping |= self.ctx.stop_requested();
            }
            if stopping || s.nodes >= budget {
                // In search order: this node, then the stack from its top.
                rest.push(BbUnit {
                    table,
                    subtree: true,
                });
                rest.extend(stack.drain(..).rev().map(|table| BbUnit {
                    table,
                    subtree: true,
                }));
                break;
            }
            let outcome = self.decide(&table)?;
            self.recheck(&mut s, &table, outcome);
            record(&mut s, &table, outcome, self.ws.last_stage, self.list);
            if let Outcome::Halts { at, .. } = outcome {
                let k = children(&table, self.n, at as usize, &mut kids);
                // Pushed last first, so that the first child is visited first.
                stack.extend(kids[..k].iter().rev());
            }
        }
        self.ctx.progress.store(s.nodes, Ordering::Relaxed);
        s.effort = self.ws.effort;
        s.normalise();
        Ok(Exploration::new(s, rest))
    }

    /// One random walk down the tree below `unit`: at each halting node,
    /// its number of children, and one chosen with `pick`.
    pub fn probe(&mut self, unit: &BbUnit, pick: &mut dyn FnMut(u64) -> u64) -> Probe {
        let mut branching = Vec::new();
        if !unit.subtree {
            return Probe { branching };
        }
        let mut kids = [[0u8; 2 * MAX_STATES]; MAX_CHILDREN];
        let mut table = unit.table;
        while let Outcome::Halts { at, .. } = self.ws.decide(&table, self.n) {
            let k = children(&table, self.n, at as usize, &mut kids);
            if k == 0 {
                break;
            }
            branching.push(k as u32);
            let i = pick(k as u64);
            assert!(i < k as u64, "pick({k}) returned {i}");
            table = kids[i as usize];
        }
        Probe { branching }
    }
}
