//! Whether a set of cubes covers every assignment: the condition under
//! which "every cube is unsatisfiable" means "the formula is".
//!
//! The cubes cover everything iff no assignment escapes them all, i.e. iff
//! the CNF of their negations (one clause `-l1 -l2 ...` per cube) is
//! unsatisfiable. A small set is decided here directly by a bounded
//! search; a larger one by the job's solver, on that CNF with no conflict
//! limit. Either way an uncovered assignment is named when one exists.
//!
//! A lookahead cuber leaves out the branches it refuted itself, so its
//! cubes need not cover every assignment, only every model of the formula.
//! On request ([`Cover::Models`]) that weaker condition is decided instead
//! where the stronger fails: the formula with the cubes' negations added
//! must be unsatisfiable. Still exact: a model of the formula lies in some
//! cube, so if every cube is refuted there is none.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use orchard_exec::run::{call_raw, Limits};

use crate::dimacs::Formula;

/// What the cubes must cover.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cover {
    /// Every assignment.
    Assignments,
    /// Every model of the formula: where the cubes leave a gap, the
    /// formula must be unsatisfiable.
    Models,
}

/// Why the cubes were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CoverError {
    /// Every assignment that extends these literals escapes every cube.
    #[error("the cubes do not cover every assignment: none holds {}", show(.0))]
    Uncovered(Vec<i32>),
    /// A model of the formula that no cube holds, on the cubes' variables.
    #[error("the cubes miss a model of the formula: none holds {}", show(.0))]
    MissedModel(Vec<i32>),
    #[error("deciding whether the cubes cover every assignment: {0}")]
    Solver(String),
}

/// The literals of an uncovered assignment, the first [`SHOWN`] of them.
fn show(lits: &[i32]) -> String {
    let mut s: Vec<String> = lits.iter().take(SHOWN).map(i32::to_string).collect();
    if lits.len() > SHOWN {
        s.push(format!("... ({} literals)", lits.len()));
    }
    if s.is_empty() {
        "any assignment".into()
    } else {
        s.join(" ")
    }
}

/// Literals an error names at most: the message stays one line.
const SHOWN: usize = 24;

/// Work (literals looked at) the direct search may spend before the solver
/// decides instead.
pub const DIRECT_WORK: u64 = 20_000_000;

/// Most distinct variables in the cubes for the direct search (its depth).
const DIRECT_DEPTH: usize = 1024;

/// The direct search: `Some(Ok(()))` covered, `Some(Err(lits))` every
/// assignment extending `lits` escapes every cube, `None` undecided within
/// `work` literals looked at (or too many variables to recurse on).
pub fn direct(cubes: &[Vec<i32>], vars: u32, work: u64) -> Option<Result<(), Vec<i32>>> {
    let mut distinct: Vec<u32> = cubes.iter().flatten().map(|l| l.unsigned_abs()).collect();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() > DIRECT_DEPTH || distinct.last().is_some_and(|&v| v > vars) {
        return None;
    }
    let mut value = vec![0i8; vars as usize + 1];
    let mut fixed = Vec::new();
    let mut left = work;
    search(cubes, &mut value, &mut fixed, &mut left).ok()
}

struct OverBudget;

/// Some cube holds every extension of `fixed` (covered), or none can hold
/// any (uncovered: `fixed` names the escape), or a free literal of the
/// first cube still possible is tried false, then true.
fn search(
    cubes: &[Vec<i32>],
    value: &mut [i8],
    fixed: &mut Vec<i32>,
    left: &mut u64,
) -> Result<Result<(), Vec<i32>>, OverBudget> {
    let mut branch = None;
    for cube in cubes {
        *left = left.checked_sub(cube.len() as u64 + 1).ok_or(OverBudget)?;
        let mut free = None;
        let mut possible = true;
        for &l in cube {
            let v = value[l.unsigned_abs() as usize] * if l > 0 { 1 } else { -1 };
            match v {
                1 => {}
                0 => {
                    free.get_or_insert(l);
                }
                _ => {
                    possible = false;
                    break;
                }
            }
        }
        if possible {
            match free {
                None => return Ok(Ok(())),
                Some(l) => {
                    branch.get_or_insert(l);
                }
            }
        }
    }
    let Some(l) = branch else {
        return Ok(Err(fixed.clone()));
    };
    for lit in [-l, l] {
        value[lit.unsigned_abs() as usize] = if lit > 0 { 1 } else { -1 };
        fixed.push(lit);
        let r = search(cubes, value, fixed, left);
        fixed.pop();
        value[lit.unsigned_abs() as usize] = 0;
        if !matches!(r, Ok(Ok(()))) {
            return r;
        }
    }
    Ok(Ok(()))
}

/// The CNF of the cubes' negations, as DIMACS.
pub fn negations(cubes: &[Vec<i32>], vars: u32) -> Vec<u8> {
    use std::fmt::Write;
    let mut s = format!("p cnf {vars} {}\n", cubes.len());
    for cube in cubes {
        for l in cube {
            let _ = write!(s, "{} ", -l);
        }
        s.push_str("0\n");
    }
    s.into_bytes()
}

/// The formula and the cubes' negations, as DIMACS.
pub fn with_negations(formula: &Formula, cubes: &[Vec<i32>]) -> Vec<u8> {
    use std::fmt::Write;
    let mut s = format!(
        "p cnf {} {}\n",
        formula.vars,
        formula.clauses() + cubes.len()
    );
    let clauses = (0..formula.clauses()).map(|i| formula.clause(i).to_vec());
    let negated = cubes.iter().map(|c| c.iter().map(|l| -l).collect());
    for clause in clauses.chain(negated) {
        for l in clause {
            let _ = write!(s, "{l} ");
        }
        s.push_str("0\n");
    }
    s.into_bytes()
}

/// Whether `cubes` over variables `1..=vars` cover every assignment
/// (`formula`: every model of it), decided by the solver (CaDiCaL's command
/// line) at `solver`, which may run `timeout`.
pub fn by_solver(
    cubes: &[Vec<i32>],
    vars: u32,
    formula: Option<&Formula>,
    solver: &Path,
    timeout: Duration,
) -> Result<(), CoverError> {
    let limits = Limits {
        timeout,
        max_output: 1 << 30,
        grace: Duration::ZERO,
    };
    let never = AtomicBool::new(false);
    let input = match formula {
        Some(f) => with_negations(f, cubes),
        None => negations(cubes, vars),
    };
    let out = call_raw(solver, &[], input, limits, &never)
        .map_err(|e| CoverError::Solver(format!("solver {}: {e}", solver.display())))?
        .ok_or_else(|| CoverError::Solver("the solver was stopped".into()))?;
    let (answer, _) =
        crate::read_answer(vars, out.code, &out.stdout).map_err(CoverError::Solver)?;
    match answer {
        crate::Answer::Unsat => Ok(()),
        crate::Answer::Sat(assignment) => {
            // The escape, checked and named on the cubes' variables only:
            // the others do not matter to any cube.
            let mut vars: Vec<u32> = cubes.iter().flatten().map(|l| l.unsigned_abs()).collect();
            vars.sort_unstable();
            vars.dedup();
            let escape: Vec<i32> = vars
                .iter()
                .map(|&v| {
                    if assignment[v as usize] {
                        v as i32
                    } else {
                        -(v as i32)
                    }
                })
                .collect();
            if cubes.iter().any(|c| c.iter().all(|&l| escape.contains(&l))) {
                return Err(CoverError::Solver(
                    "the solver's model of the cubes' negations lies in a cube".into(),
                ));
            }
            match formula {
                None => Err(CoverError::Uncovered(escape)),
                Some(f) if f.falsified(&assignment).is_none() => {
                    Err(CoverError::MissedModel(escape))
                }
                Some(_) => Err(CoverError::Solver(
                    "the solver's model of the formula leaves a clause false".into(),
                )),
            }
        }
        crate::Answer::Unknown => Err(CoverError::Solver(
            "the solver left the cubes' negations undecided".into(),
        )),
    }
}

/// Whether `cubes` cover what `cover` asks of them: every assignment
/// directly if that is cheap, else by the solver; then, where they do not
/// and only the formula's models must be covered, the formula by the
/// solver.
pub fn check(
    cubes: &[Vec<i32>],
    formula: &Formula,
    cover: Cover,
    solver: &Path,
    timeout: Duration,
) -> Result<(), CoverError> {
    let every = match direct(cubes, formula.vars, DIRECT_WORK) {
        Some(r) => r.map_err(CoverError::Uncovered),
        None => by_solver(cubes, formula.vars, None, solver, timeout),
    };
    match (every, cover) {
        (Err(CoverError::Uncovered(_)), Cover::Models) => {
            by_solver(cubes, formula.vars, Some(formula), solver, timeout)
        }
        (r, _) => r,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn covered(cubes: &[&[i32]], vars: u32) -> Result<(), Vec<i32>> {
        let cubes: Vec<Vec<i32>> = cubes.iter().map(|c| c.to_vec()).collect();
        direct(&cubes, vars, DIRECT_WORK).expect("decided")
    }

    /// Whether some cube holds the assignment `bits` (bit v-1: variable v).
    fn holds(cubes: &[Vec<i32>], bits: u32) -> bool {
        cubes.iter().any(|c| {
            c.iter()
                .all(|&l| (bits >> (l.unsigned_abs() - 1) & 1 == 1) == (l > 0))
        })
    }

    #[test]
    fn covering_overlapping_and_gapped_cube_sets() {
        // Every sign pattern of 1, 2.
        assert_eq!(
            covered(&[&[-1, -2], &[-1, 2], &[1, -2], &[1, 2]], 3),
            Ok(())
        );
        // Overlapping: 1 alone, and -1 split on 2 and again on 3.
        assert_eq!(covered(&[&[1], &[-1, 2], &[-2], &[1, 3]], 3), Ok(()));
        // The empty cube holds everything.
        assert_eq!(covered(&[&[]], 3), Ok(()));
        // A gap: -1 2 -3 is in no cube; whatever is named escapes them all.
        let cubes: &[&[i32]] = &[&[1], &[-1, -2], &[-1, 2, 3]];
        let escape = covered(cubes, 3).unwrap_err();
        let owned: Vec<Vec<i32>> = cubes.iter().map(|c| c.to_vec()).collect();
        for bits in 0..8u32 {
            let extends = escape
                .iter()
                .all(|&l| (bits >> (l.unsigned_abs() - 1) & 1 == 1) == (l > 0));
            assert!(!extends || !holds(&owned, bits), "{escape:?} vs {bits:b}");
        }
        assert_eq!(escape, [-1, 2, -3]);
        // No cube at all covers nothing.
        assert_eq!(covered(&[], 3), Err(vec![]));
        // Over budget: undecided, left to the solver.
        let all: Vec<Vec<i32>> = (0..1u32 << 8)
            .map(|b| {
                (1..=8)
                    .map(|v| if b >> (v - 1) & 1 == 1 { v } else { -v })
                    .collect()
            })
            .collect();
        assert_eq!(direct(&all, 8, 100), None);
        assert_eq!(direct(&all, 8, DIRECT_WORK), Some(Ok(())));
        assert_eq!(
            direct(&all[1..], 8, DIRECT_WORK),
            Some(Err((1..=8).map(|v| -v).collect()))
        );
    }

    #[test]
    fn the_negations_are_one_clause_per_cube() {
        let text = String::from_utf8(negations(&[vec![1, -2], vec![3]], 4)).unwrap();
        assert_eq!(text, "p cnf 4 2\n-1 2 0\n-3 0\n");
    }

    #[test]
    fn errors_are_one_line_and_name_the_escape() {
        let e = CoverError::Uncovered(vec![-1, 2]).to_string();
        assert_eq!(
            e,
            "the cubes do not cover every assignment: none holds -1 2"
        );
        let long = CoverError::Uncovered((1..=100).collect()).to_string();
        assert!(
            !long.contains('\n') && long.ends_with("... (100 literals)"),
            "{long}"
        );
    }
}
