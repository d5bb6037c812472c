//! Each job's share of the lemma store: which jobs take lemmas, and how
//! many bytes of them one job keeps in the database.
//!
//! The store is a window, not a quota: past its size a job's oldest lemmas
//! go to make room for the newest. A lemma matters while other workers
//! have not yet proved it themselves, seconds after it is found (see the
//! worker's `lemmas.rs`), and a long job fills any fixed quota early: at
//! about 0.1 byte of lemmas a node (`bench/hip-wn.sh` on 4x7), sixteen
//! workers of 3e6 nodes a second fill 1 GiB in minutes, and a quota would
//! end the sharing there for the days the job still runs.

use std::sync::Arc;

use orchard_core::PreparedJob;

use super::Scheduler;
use crate::status::JobState;
use crate::store::JobId;

/// The default of the most lemmas one job keeps in the database
/// ([`crate::CoordinatorConfig::lemma_store_bytes`]; they all go when the
/// job ends).
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

    /// Makes room for a blob of `len` bytes of lemmas in the job's window
    /// of the store ([`Scheduler::set_lemma_store_bytes`]). `None`: not
    /// stored, because the job is not running or is being finished (its
    /// end, which deletes its lemmas, may be on its way to the store: a
    /// blob queued after it would outlive the job) or the blob alone is
    /// larger than the window. `Some(k)`: store it, and delete the job's
    /// `k` oldest blobs after it (see `Write::EvictLemmas`). The caller
    /// queues both writes under the same lock, so the store's oldest `k`
    /// blobs are the ones counted out here.
    pub fn admit_lemmas(&mut self, job_id: JobId, len: u64) -> Option<u64> {
        let window = self.lemma_store_bytes;
        let job = self.jobs.get_mut(&job_id)?;
        if job.state != JobState::Running || job.finishing || len > window {
            return None;
        }
        job.lemma_blobs.push_back(len);
        job.lemma_bytes += len;
        let mut evicted = 0;
        while job.lemma_bytes > window {
            let oldest = job
                .lemma_blobs
                .pop_front()
                .expect("bytes held are blobs held");
            job.lemma_bytes -= oldest;
            evicted += 1;
        }
        Some(evicted)
    }

    /// The most bytes of lemmas one job keeps in the store (default
    /// [`MAX_LEMMA_BYTES_PER_JOB`]).
    pub fn set_lemma_store_bytes(&mut self, bytes: u64) {
        self.lemma_store_bytes = bytes;
    }
}
