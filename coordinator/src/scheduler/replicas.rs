//! Verified jobs (`--replicas K`): every unit is explored by K different
//! workers, and merged once, when their reports agree on the part of the
//! summary the family says must agree ([`orchard_core::SearchFamily::verified_part`]).
//!
//! * **Whole units.** Two replicas do the same work only if neither splits
//!   the unit differently, so a unit of a verified job is leased without a
//!   node budget and never asked to split for idle workers. A family may
//!   still split a unit of its own accord, the same way in every run (as
//!   `hip-draws` hands back its seeds): that rest is part of the replica,
//!   compared with the summary, and once agreed it becomes the unit's
//!   children, verified in their turn. A replica whose search was stopped
//!   early (its worker was stopping: `ReportRequest.stopped`) is not a
//!   replica: it is dropped and the unit leased again.
//! * **One lease at a time.** A unit's replicas run one after another, each
//!   on a worker that has not explored it (and on a host that has not, when
//!   enough live hosts can take the job); different units run in parallel.
//! * **Agreement.** After K reports that agree, the unit is done. A report
//!   that disagrees with an earlier one is a *mismatch*, recorded durably
//!   with both summaries in the family's words; the unit then takes one more
//!   replica at a time until one verified part has a strict majority
//!   (giving up, and failing the job, after [`MAX_EXTRA_REPLICAS`] more).
//!   The workers on the losing side get no more units of the job.
//!
//! Replicas waiting for agreement are stored (`Write::Replica`), so a
//! coordinator restart keeps them; worker ids do not survive a restart, so a
//! restored replica is known by its host and its worker's durable identity
//! ([`crate::identity::WorkerIdentity`]: its certificate's fingerprint under
//! mutual TLS, else its declared name). A worker found lying is excluded by
//! that identity, durably (`Write::Exclude`, in the same transaction as the
//! report that decided the vote): registering again under the same
//! certificate (or name), or a restart of the coordinator, does not lift it.

use std::collections::{HashMap, HashSet};

use super::job::Job;
use super::unit::{Replica, Unit};
use super::{Scheduler, WorkerId};
use crate::identity::WorkerIdentity;
use crate::store::{JobId, MismatchRow};

/// The most replicas a job may ask for.
pub const MAX_REPLICAS: u32 = 16;

/// How many replicas beyond K a unit whose replicas disagree may take
/// before its job fails for want of a majority.
pub const MAX_EXTRA_REPLICAS: usize = 4;

/// What a report of a unit of a verified job decides.
#[derive(Debug)]
pub struct Verification {
    /// The report, as a replica of its unit.
    pub replica: Replica,
    /// The replica whose summary is merged, when the unit is decided.
    pub decided: Option<Replica>,
    /// The report disagrees with an earlier replica.
    pub mismatch: Option<MismatchRow>,
    /// Workers whose replicas lost the vote, by durable identity (a replica
    /// restored after a restart has no worker id, but has its identity).
    pub liars: Vec<WorkerIdentity>,
    /// The unit took every replica it may without a majority.
    pub no_majority: bool,
}

/// The replica (its index) whose verified part wins among `parts`, once
/// decided: K agreeing reports, or, after a disagreement, a strict majority.
pub(super) fn verdict(parts: &[Vec<u8>], k: usize) -> Option<usize> {
    let n = parts.len();
    if n < k {
        return None;
    }
    let mut best: Option<(usize, usize)> = None;
    for (i, p) in parts.iter().enumerate() {
        if parts[..i].contains(p) {
            continue;
        }
        let count = parts.iter().filter(|q| *q == p).count();
        if best.is_none_or(|(c, _)| count > c) {
            best = Some((count, i));
        }
    }
    let (count, first) = best?;
    (count == n || (n > k && 2 * count > n)).then_some(first)
}

/// Whether a worker (`id`, durable identity `key`, `host`) may explore the
/// next replica of `unit`: it has not explored it, neither under this
/// registration nor, under mutual TLS, under its certificate (so a worker
/// cannot vote twice by registering again, or after a restart, when the
/// replica stored before it has no worker id); and, when `live_hosts`
/// (hosts that can take the job) are enough for one more distinct host,
/// neither has its host. A declared name is not held to this (workers may
/// share one; the host rule covers them as far as names can).
pub(super) fn may_take(
    unit: &Unit,
    id: WorkerId,
    key: &str,
    host: &str,
    live_hosts: usize,
) -> bool {
    let certified = WorkerIdentity::is_certificate(key);
    if unit
        .replicas
        .iter()
        .any(|r| r.worker == Some(id) || (certified && r.identity.key == key))
    {
        return false;
    }
    let new_host_needed = live_hosts > unit.replicas.len();
    !(new_host_needed && unit.replicas.iter().any(|r| r.host == host))
}

impl Scheduler {
    /// For each live verified job, how many distinct hosts can take its
    /// units (the `live_hosts` of [`may_take`]); computed before a worker
    /// is borrowed for a lease or a heartbeat.
    pub(super) fn verified_job_hosts(&self) -> HashMap<JobId, usize> {
        self.jobs
            .values()
            .filter(|j| j.replicas > 1 && j.live())
            .map(|j| (j.id, distinct_hosts(&self.job_workers(j))))
            .collect()
    }

    /// Live workers that can take units of `job` (they run its family and
    /// were not found lying in it): their ids and hostnames.
    pub(super) fn job_workers(&self, job: &Job) -> Vec<(WorkerId, String)> {
        let now = self.clock.now();
        self.workers
            .iter()
            .filter(|(_, w)| now.duration_since(w.last_seen) < self.lease_ttl)
            .filter(|(_, w)| {
                w.families.contains(&job.family) && !job.excluded.contains_key(&w.durable.key)
            })
            .map(|(&id, w)| (id, w.hostname.clone()))
            .collect()
    }

    /// Why a verified job's units wait, if they do: too few live workers
    /// can take them, or some unit needs a worker that has not explored it.
    /// Empty when nothing waits (or the job is not verified).
    pub(super) fn waiting_reason(&self, job_id: JobId) -> String {
        let Some(job) = self.jobs.get(&job_id) else {
            return String::new();
        };
        if job.replicas <= 1 || !job.live() {
            return String::new();
        }
        let workers = self.job_workers(job);
        if workers.len() < job.replicas as usize {
            return format!(
                "units wait: {} live worker(s) can take this job, --replicas {} needs that many different workers",
                workers.len(),
                job.replicas
            );
        }
        let hosts = distinct_hosts(&workers);
        // The first thousand pending units in order: enough to say that
        // some wait, bounded work under the lock for a dashboard's poll.
        let stuck = job
            .pending
            .iter()
            .take(1_000)
            .filter_map(|(_, id)| self.units.get(id))
            .filter(|u| {
                !workers.iter().any(|(w, h)| {
                    let key = self.workers.get(w).map_or("", |w| w.durable.key.as_str());
                    may_take(u, *w, key, h, hosts)
                })
            })
            .count();
        if stuck > 0 {
            format!("{stuck} unit(s) wait for a live worker that has not explored them")
        } else {
            String::new()
        }
    }
}

/// How many different hostnames `workers` have.
pub(super) fn distinct_hosts(workers: &[(WorkerId, String)]) -> usize {
    workers.iter().map(|(_, h)| h).collect::<HashSet<_>>().len()
}

#[cfg(test)]
mod tests {
    use super::verdict;

    fn parts(s: &str) -> Vec<Vec<u8>> {
        s.bytes().map(|b| vec![b]).collect()
    }

    #[test]
    fn k_agreeing_replicas_decide_and_a_disagreement_needs_a_majority() {
        assert_eq!(verdict(&parts("a"), 2), None);
        assert_eq!(verdict(&parts("aa"), 2), Some(0));
        assert_eq!(verdict(&parts("ab"), 2), None);
        assert_eq!(verdict(&parts("abb"), 2), Some(1));
        assert_eq!(verdict(&parts("aba"), 2), Some(0));
        assert_eq!(verdict(&parts("abc"), 2), None);
        assert_eq!(verdict(&parts("abcc"), 2), None);
        assert_eq!(verdict(&parts("abccc"), 2), Some(2));
        assert_eq!(verdict(&parts("aab"), 3), None);
        assert_eq!(verdict(&parts("aaba"), 3), Some(0));
        assert_eq!(verdict(&parts("x"), 1), Some(0));
    }
}
