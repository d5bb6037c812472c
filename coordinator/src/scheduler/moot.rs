//! Moot units: live units that can no longer change a job's answer (in a
//! game search, a sibling already won). For families that have them, every
//! merge is followed by a sweep that cancels them, pending or leased, so
//! they are never leased and their workers stop at the next heartbeat.

use super::Scheduler;
use crate::store::{JobId, UnitId, Write};

impl Scheduler {
    /// Cancels every live unit of `job_id` that can no longer change the
    /// answer (families with `PreparedJob::has_moot_units` only). Leased
    /// ones are dropped too: their workers learn it at the next heartbeat.
    pub fn sweep_moot(&mut self, job_id: JobId) -> Vec<Write> {
        let Some(job) = self.jobs.get_mut(&job_id) else {
            return Vec::new();
        };
        if !job.has_moot_units || !job.live() {
            return Vec::new();
        }
        let Some(agg) = job.aggregate.as_ref() else {
            return Vec::new();
        };
        let moot: Vec<UnitId> = self
            .units
            .iter()
            .filter(|(_, u)| u.job == job_id && !u.reporting && agg.is_moot(&u.payload))
            .map(|(&id, _)| id)
            .collect();
        let mut cancelled = Vec::with_capacity(moot.len());
        for id in &moot {
            let unit = self.units.remove(id).expect("listed above");
            let discarded = if unit.lease.is_some() {
                unit.progress_nodes
            } else {
                0
            };
            cancelled.push((*id, discarded));
            job.nodes_discarded = job.nodes_discarded.saturating_add(discarded);
            match &unit.lease {
                Some(lease) => {
                    job.units_leased = job.units_leased.saturating_sub(1);
                    if let Some(w) = self.workers.get_mut(&lease.worker) {
                        w.units.remove(id);
                    }
                }
                None => {
                    job.pending.remove(&(unit.position.clone(), *id));
                }
            }
            job.resolved(&unit.position);
            self.counters.units_cancelled += 1;
        }
        if moot.is_empty() {
            Vec::new()
        } else {
            tracing::debug!(
                job = job_id,
                units = moot.len(),
                "units cancelled: they cannot change the answer"
            );
            vec![Write::CancelUnits { units: cancelled }]
        }
    }

    /// [`Scheduler::sweep_moot`] for every job (after loading).
    pub fn sweep_all_moot(&mut self) -> Vec<Write> {
        let ids: Vec<JobId> = self.jobs.keys().copied().collect();
        ids.into_iter().flat_map(|id| self.sweep_moot(id)).collect()
    }
}
