//! The single-process reference path: a job's units explored one after
//! another in this thread, every split followed. The tests compare the
//! cluster's answers against it.

use crate::error::FamilyError;
use crate::family::{Exploration, LocalFlags, SearchFamily};

/// Explores `units` completely in this thread, following every split, and
/// returns the summary of every exploration apart, in the order they were
/// made (for tests of merging in other orders).
pub fn explore_pieces<F: SearchFamily>(
    job: &F,
    units: Vec<F::Unit>,
    budget: u64,
) -> Result<Vec<F::Summary>, FamilyError> {
    let flags = LocalFlags::default();
    let ctx = flags.context(budget);
    let mut pieces = Vec::new();
    let mut pending = units;
    while let Some(unit) = pending.pop() {
        match job.explore(&unit, &ctx)? {
            Exploration::Finished(s) => pieces.push(s),
            Exploration::Split { explored, rest } => {
                pieces.push(explored);
                pending.extend(rest);
            }
        }
    }
    Ok(pieces)
}

/// Merges `pieces` into one summary, in the order given.
pub fn merge_all<F: SearchFamily>(
    job: &F,
    pieces: impl IntoIterator<Item = F::Summary>,
) -> Result<F::Summary, FamilyError> {
    let mut total = F::Summary::default();
    for s in pieces {
        job.merge(&mut total, s)?;
    }
    Ok(total)
}

/// Explores `units` completely in this thread, following every split, and
/// merges the result.
pub fn explore_all<F: SearchFamily>(
    job: &F,
    units: Vec<F::Unit>,
    budget: u64,
) -> Result<F::Summary, FamilyError> {
    merge_all(job, explore_pieces(job, units, budget)?)
}
