//! Live units (pending or leased) and their positions in the search order.
//!
//! A unit's *position* is the path of child indices from the job's root,
//! each a big-endian `u32`, so comparing positions as bytes compares units
//! in the order a sequential search visits them. The units split off a
//! unit are numbered here: fresh ids, positions under their parent's.

use std::sync::Arc;

use super::lease::Lease;
use super::moot::JudgeId;
use super::{Scheduler, WorkerId};
use crate::identity::WorkerIdentity;
use crate::store::{JobId, NewUnit};

/// How deep the dashboard's picture of the search tree goes.
pub const TREE_DEPTH: usize = 2;

pub(super) struct Unit {
    pub(super) job: JobId,
    pub(super) position: Vec<u8>,
    pub(super) payload: Arc<Vec<u8>>,
    pub(super) lease: Option<Lease>,
    /// A report for this unit is being committed.
    pub(super) reporting: bool,
    pub(super) progress_nodes: u64,
    pub(super) split_requested: bool,
    pub(super) split_sent: bool,
    /// Every worker this unit was leased to, or that adopted it, since the
    /// coordinator started: the only workers whose reports of it count
    /// (empty: not leased since the start, when any worker's report is
    /// taken, as a worker may deliver what it explored before a restart).
    pub(super) holders: Vec<WorkerId>,
    /// For a verified job: the replicas reported so far, oldest first.
    pub(super) replicas: Vec<Replica>,
    /// The last answer of `speculation` for it, with the judge that gave
    /// it (see `Job::unit_speculation`).
    pub(super) speculation: Option<(JudgeId, u32)>,
    /// The workers whose attempts at it failed in a way another attempt
    /// may not (`retryable`), since the coordinator started: it is leased
    /// to others first, and the job fails at [`super::finish::UNIT_ATTEMPTS`].
    pub(super) failed_on: Vec<WorkerId>,
}

/// One replica's report of a unit of a verified job, kept until the unit's
/// replicas agree (stored in the `replicas` table meanwhile).
#[derive(Debug, Clone)]
pub struct Replica {
    /// The worker that explored it; `None` when it reported before the
    /// coordinator restarted (worker ids do not survive a restart).
    pub worker: Option<WorkerId>,
    /// Who it is beyond its registration (stored with the replica): whom
    /// to exclude if this replica loses the vote, also after a restart.
    pub identity: WorkerIdentity,
    /// The worker's description and name, as recorded.
    pub describe: String,
    pub host: String,
    pub nodes: u64,
    /// The job-wide bound the worker knew when it reported.
    pub bound: u64,
    pub summary: Vec<u8>,
    /// The units its family split off (a split of the family's own, as
    /// `hip-draws` hands back its seeds; never a stopped search's rest):
    /// compared with the summary, and the unit's children once agreed.
    pub rest: Vec<Vec<u8>>,
}

impl Unit {
    /// Leased and started: a unit leased ahead (queued on its worker, see
    /// `Scheduler::lease_ahead`) is leased but not running, so views show
    /// it as waiting, not as being searched.
    pub(super) fn running(&self) -> bool {
        self.lease.as_ref().is_some_and(|l| !l.queued)
    }

    /// Records that `worker` holds (or held) the unit.
    pub(super) fn held_by(&mut self, worker: WorkerId) {
        if !self.holders.contains(&worker) {
            self.holders.push(worker);
        }
    }

    /// Whether a report of the unit from `worker` may be taken (see
    /// `holders`).
    pub(super) fn may_report(&self, worker: WorkerId) -> bool {
        self.holders.is_empty() || self.holders.contains(&worker)
    }
}

impl Unit {
    /// A pending unit of `job`.
    pub(super) fn new(job: JobId, u: NewUnit) -> Unit {
        Unit {
            job,
            position: u.position,
            payload: Arc::new(u.payload),
            lease: None,
            reporting: false,
            progress_nodes: 0,
            split_requested: false,
            split_sent: false,
            holders: Vec::new(),
            replicas: Vec::new(),
            speculation: None,
            failed_on: Vec::new(),
        }
    }
}

/// The first [`TREE_DEPTH`] levels of a unit position.
pub(super) fn tree_prefix(position: &[u8]) -> Vec<u8> {
    position[..position.len().min(4 * TREE_DEPTH)].to_vec()
}

/// A position as 1-based child indices joined by dots ("" is the root).
pub fn position_label(position: &[u8]) -> String {
    position
        .chunks(4)
        .map(|c| {
            let mut b = [0u8; 4];
            b[..c.len()].copy_from_slice(c);
            (u32::from_be_bytes(b) as u64 + 1).to_string()
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// The position of the `index`-th child of the unit at `parent`.
pub(super) fn child_position(parent: &[u8], index: usize) -> Vec<u8> {
    let mut p = Vec::with_capacity(parent.len() + 4);
    p.extend_from_slice(parent);
    p.extend_from_slice(&u32::try_from(index).unwrap_or(u32::MAX).to_be_bytes());
    p
}

impl Scheduler {
    /// Gives new units ids and their positions below `parent`, in order.
    pub(super) fn number_children(
        &mut self,
        parent: &[u8],
        payloads: Vec<Vec<u8>>,
    ) -> Vec<NewUnit> {
        payloads
            .into_iter()
            .enumerate()
            .map(|(i, payload)| {
                let id = self.next_unit;
                self.next_unit += 1;
                NewUnit {
                    id,
                    position: child_position(parent, i),
                    payload,
                }
            })
            .collect()
    }
}
