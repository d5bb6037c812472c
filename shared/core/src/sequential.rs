//! The single-process reference path: a job's units explored one after
//! another in this thread, every split followed. The tests compare the
//! cluster's answers against it.

use std::sync::atomic::{AtomicBool, AtomicU64};

use crate::error::FamilyError;
use crate::family::{Exploration, ExploreContext, SearchFamily};

/// Explores `units` completely in this thread, following every split, and
/// merges the result.
pub fn explore_all<F: SearchFamily>(
    job: &F,
    units: Vec<F::Unit>,
    budget: u64,
) -> Result<F::Summary, FamilyError> {
    let stop = AtomicBool::new(false);
    let bound = AtomicU64::new(0);
    let progress = AtomicU64::new(0);
    let ctx = ExploreContext {
        budget,
        stop: &stop,
        bound: &bound,
        progress: &progress,
    };
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
