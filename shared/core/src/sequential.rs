//! The single-process reference path: a job's units explored one after
//! another in this thread, every split followed. The tests compare the
//! cluster's answers against it.

use crate::error::FamilyError;
use crate::family::{Exploration, LocalFlags, SearchFamily};

/// Explores `units` completely in this thread, following every split, and
/// merges the result.
pub fn explore_all<F: SearchFamily>(
    job: &F,
    units: Vec<F::Unit>,
    budget: u64,
) -> Result<F::Summary, FamilyError> {
    let flags = LocalFlags::default();
    let ctx = flags.context(budget);
    let mut total = F::Summary::default();
    let mut pending = units;
    while let Some(unit) = pending.pop() {
        match job.explore(&unit, &ctx)? {
            Exploration::Finished(s) => job.merge(&mut total, s)?,
            Exploration::Split { explored, rest } => {
                job.merge(&mut total, explored)?;
                pending.extend(rest);
            }
        }
    }
    Ok(total)
}
