//! A job's figures for the dashboard (see [`orchard_core::figure`]): the
//! family draws them from the job's aggregate and the units being explored;
//! a finished job's were stored with its answer. The coordinator only
//! passes them on: it never looks inside.

use orchard_core::Figure;

use super::Scheduler;
use crate::store::{JobId, UnitId};

/// What a running job's figures were computed from: they are computed
/// again only when one of these changes (the dashboard asks every second).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct FiguresKey {
    units_done: u64,
    units_total: u64,
    running: Vec<UnitId>,
}

impl Scheduler {
    /// The figures of a job: a finished job's as stored with its answer
    /// (none for a job stored before figures existed, or one that failed);
    /// a running job's from what has been merged and the units running now
    /// (leased and started: not those leased ahead).
    /// `None`: no such job.
    pub fn figures(&mut self, job_id: JobId) -> Option<Vec<Figure>> {
        let job = self.jobs.get(&job_id)?;
        if let Some(r) = &job.result {
            let stored: serde_json::Value = serde_json::from_str(&r.json).unwrap_or_default();
            return Some(serde_json::from_value(stored["figures"].clone()).unwrap_or_default());
        }
        let mut running: Vec<(UnitId, &[u8])> = self
            .units
            .iter()
            .filter(|(_, u)| u.job == job_id && u.running())
            .map(|(&id, u)| (id, u.payload.as_slice()))
            .collect();
        running.sort_unstable_by_key(|&(id, _)| id);
        let key = FiguresKey {
            units_done: job.units_done,
            units_total: job.units_total,
            running: running.iter().map(|&(id, _)| id).collect(),
        };
        if let Some((k, f)) = &job.figures {
            if *k == key {
                return Some(f.clone());
            }
        }
        let Some(agg) = job.aggregate.as_ref() else {
            return Some(Vec::new());
        };
        let payloads: Vec<&[u8]> = running.iter().map(|&(_, p)| p).collect();
        let figures = agg.figures(&payloads);
        let job = self.jobs.get_mut(&job_id)?;
        job.figures = Some((key, figures.clone()));
        Some(figures)
    }
}
