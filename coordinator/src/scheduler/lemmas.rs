//! Each job's share of the lemma store: which jobs take lemmas, and how
//! many bytes of them one job may keep in the database.

use std::sync::Arc;

use orchard_core::PreparedJob;

use super::Scheduler;
use crate::status::JobState;
use crate::store::JobId;

/// The most lemmas one job keeps in the database (they go when it ends).
/// Past this, workers keep their lemmas to themselves.
pub const MAX_LEMMA_BYTES_PER_JOB: u64 = 1 << 30;

impl Scheduler {
    /// The family of `job_id` if the job is running and its family shares
    /// lemmas (see `orchard_core::LemmaExchange`); `None`: the job is over,
    /// unknown, or has no lemmas.
    pub fn lemma_job(&self, job_id: JobId) -> Option<Arc<dyn PreparedJob>> {
        let job = self.jobs.get(&job_id)?;
        let prepared = job.prepared.as_ref()?;
        (job.state == JobState::Running && prepared.lemmas().is_some()).then(|| prepared.clone())
    }

    /// Counts `len` more bytes of lemmas against the job's share of the
    /// database ([`MAX_LEMMA_BYTES_PER_JOB`]); false: they do not fit, or
    /// the job is not running or is being finished (its end, which deletes
    /// its lemmas, may be on its way to the store: a blob queued after it
    /// would outlive the job).
    pub fn admit_lemmas(&mut self, job_id: JobId, len: u64) -> bool {
        let Some(job) = self.jobs.get_mut(&job_id) else {
            return false;
        };
        if job.state != JobState::Running
            || job.finishing
            || job.lemma_bytes.saturating_add(len) > MAX_LEMMA_BYTES_PER_JOB
        {
            return false;
        }
        job.lemma_bytes += len;
        true
    }
}
