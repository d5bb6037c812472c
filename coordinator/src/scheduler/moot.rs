//! Moot units: live units that can no longer change a job's answer (in a
//! game search, a sibling already won). For families that have them, the
//! coordinator sweeps the job's live units with the family's judge of the
//! merged summary and cancels the moot ones, pending or leased, so they are
//! never leased and their workers stop at the next heartbeat.
//!
//! Making a judge may cost a pass over the whole merged summary (`hip-solve`
//! walks its recorded tree), which grows with the job. Made after every
//! report, it made the coordinator of a 4 x 5 job of a few thousand units
//! spend over 90% of its time on it, the workers idle. So a job keeps its
//! last judge ([`MootJudgeSlot`]) and a new one is made only when what it
//! is made from has changed (the merged summary, or what the job learnt
//! from its workers' lemmas, [`Scheduler::lemmas_observed`]) and either the
//! last one was cheap or ten times its cost has passed since: the passes take at most about a tenth of the
//! coordinator's time, whatever the job's size. A sweep follows each new
//! judge (after a report, or from the coordinator's tick when reports come
//! faster than that), so a moot unit is cancelled at most a window later.
//! `is_moot` is only ever asked of a judge just made from the current
//! summary, about units that exist then (the answers the family promises);
//! `speculation` may be asked of the last one, a few merges old, which only
//! changes the order in which units are leased.

use std::time::{Duration, Instant};

use orchard_core::EncodedMootJudge;

use super::finish::Finishing;
use super::job::Job;
use super::lease::MAX_WAIT_CHECKS;
use super::unit::Unit;
use super::Scheduler;
use crate::store::{JobId, UnitId, Write};

/// A judge that took less than this to make is made again at every change.
const CHEAP_JUDGE: Duration = Duration::from_millis(1);

/// A costly judge is made again once this many times its cost has passed.
const JUDGE_COST_SHARE: u32 = 10;

/// Which of a job's judges gave an answer: the job's [`Job::judge_inputs`]
/// when it was made (a judge made again at the same count answers the
/// same).
pub(super) type JudgeId = u64;

/// A job's last [`EncodedMootJudge`], with when and from what it was made.
pub(super) struct MootJudgeSlot {
    judge: Box<dyn EncodedMootJudge>,
    /// The job's [`Job::judge_inputs`] when it was made.
    inputs: JudgeId,
    made: Instant,
    cost: Duration,
}

impl Job {
    /// What a judge is made from, counted: every summary merged and every
    /// blob of lemmas that changed what the family schedules by. Both only
    /// grow, so a judge made at the same count answers the same.
    fn judge_inputs(&self) -> JudgeId {
        self.merges.saturating_add(self.observations)
    }

    /// Whether what a judge is made from has changed since the last one and
    /// a new one is due (see the module's doc).
    fn judge_due(&self) -> bool {
        match &self.moot_judge {
            None => true,
            Some(slot) => {
                slot.inputs != self.judge_inputs()
                    && (slot.cost < CHEAP_JUDGE
                        || slot.made.elapsed() >= slot.cost * JUDGE_COST_SHARE)
            }
        }
    }

    /// Makes a new judge of the merged summary; false if the job has no
    /// aggregate or its family no moot units.
    fn make_judge(&mut self) -> bool {
        let started = Instant::now();
        let Some(judge) = self.aggregate.as_ref().and_then(|a| a.moot_judge()) else {
            return false;
        };
        self.moot_judge = Some(MootJudgeSlot {
            judge,
            inputs: self.judge_inputs(),
            made: started,
            cost: started.elapsed(),
        });
        true
    }

    /// How speculative leasing `unit` now would be (see
    /// `orchard_core::MootJudge::speculation`; 0: it need not wait), by the
    /// last judge made (made now if there is none). A unit that waits is
    /// asked again at every lease until something else is leased, so the
    /// answer is kept with the unit until the next judge: asking
    /// `hip-solve` replays the unit's line and orders the moves at each of
    /// its positions.
    pub(super) fn unit_speculation(&mut self, unit: &mut Unit) -> u32 {
        if self.moot_judge.is_none() && !self.make_judge() {
            return 0;
        }
        let slot = self.moot_judge.as_ref().expect("made above");
        match unit.speculation {
            Some((id, rank)) if id == slot.inputs => rank,
            _ => {
                let rank = slot.judge.speculation(&unit.payload);
                unit.speculation = Some((slot.inputs, rank));
                rank
            }
        }
    }
}

impl Job {
    /// The unit as the last judge would have it searched now (see
    /// `orchard_core::MootJudge::narrow`), if it asks less than `payload`:
    /// the payload to lease in its place. Never in a verified job (its
    /// replicas must search the same unit), never without a judge.
    pub(super) fn narrowed(&self, payload: &[u8]) -> Option<Vec<u8>> {
        if self.replicas > 1 {
            return None;
        }
        self.moot_judge.as_ref()?.judge.narrow(payload)
    }
}

impl Scheduler {
    /// A blob of lemmas changed what `job_id` schedules by (see
    /// `orchard_core::LemmaExchange::observe`): a new judge is due, made at
    /// the next sweep (the coordinator's tick at the latest).
    pub fn lemmas_observed(&mut self, job_id: JobId) {
        if let Some(job) = self.jobs.get_mut(&job_id) {
            job.observations = job.observations.saturating_add(1);
        }
    }

    /// Cancels every live unit of `job_id` that can no longer change the
    /// answer (families with `PreparedJob::has_moot_units` only), if a new
    /// judge is due (see the module's doc). Leased ones are dropped too:
    /// their workers learn it at the next heartbeat.
    pub fn sweep_moot(&mut self, job_id: JobId) -> Vec<Write> {
        match self.jobs.get(&job_id) {
            Some(job) if job.has_moot_units && job.live() && job.judge_due() => {}
            _ => return Vec::new(),
        }
        self.sweep_moot_now(job_id)
    }

    /// [`Scheduler::sweep_moot`] with a new judge, due or not.
    fn sweep_moot_now(&mut self, job_id: JobId) -> Vec<Write> {
        let Some(job) = self.jobs.get_mut(&job_id) else {
            return Vec::new();
        };
        if !job.has_moot_units || !job.live() || !job.make_judge() {
            return Vec::new();
        }
        let judge = &job.moot_judge.as_ref().expect("made above").judge;
        let moot: Vec<UnitId> = self
            .units
            .iter()
            .filter(|(_, u)| u.job == job_id && !u.reporting && judge.is_moot(&u.payload))
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
        self.yield_speculation(job_id);
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

    /// After a new judge: leased units that it ranks more speculative than
    /// the judge before did (the family revised what it schedules by:
    /// `hip-solve`'s guess of the winner turned; otherwise a unit's rank
    /// only falls as its elders settle) yield, each if the job has a
    /// pending unit ranked below it (looked for among the first
    /// [`MAX_WAIT_CHECKS`] pending, each counted for one), the most
    /// speculative first. A running unit that may split (see
    /// `Job::may_split`) is asked to: its worker hands back the rest, which
    /// waits, and leases the work that is less speculative. A unit leased
    /// ahead and not started goes back to pending whole. Without it a guess
    /// that turns after the first leases leaves those workers on units
    /// likely to be moot until they end (`hip-solve` on Double 4x7 at
    /// eight workers: `docs/notes/hip-across-machines.md`, "The guess from
    /// lemmas").
    fn yield_speculation(&mut self, job_id: JobId) {
        let Some(job) = self.jobs.get_mut(&job_id) else {
            return;
        };
        let mut turned: Vec<(u32, UnitId)> = Vec::new();
        for (&id, unit) in self.units.iter_mut() {
            let Some(queued) = unit.lease.as_ref().map(|l| l.queued) else {
                continue;
            };
            if unit.job != job_id || unit.reporting || unit.split_requested {
                continue;
            }
            if !queued && !job.may_split(unit) {
                continue; // a verified job's, or one its family keeps whole
            }
            let Some((_, before)) = unit.speculation else {
                continue; // never ranked: leased in plain order
            };
            let rank = job.unit_speculation(unit);
            if rank > before {
                turned.push((rank, id));
            }
        }
        if turned.is_empty() {
            return;
        }
        let first: Vec<UnitId> = (job.pending.iter().take(MAX_WAIT_CHECKS))
            .map(|&(_, uid)| uid)
            .collect();
        let mut below: Vec<u32> = Vec::new();
        for uid in first {
            let Some(unit) = self.units.get_mut(&uid) else {
                continue;
            };
            if unit.lease.is_none() && !unit.reporting {
                below.push(job.unit_speculation(unit));
            }
        }
        below.sort_unstable();
        // The most speculative first, each against the least speculative
        // pending unit not yet counted.
        turned.sort_unstable_by(|a, b| b.cmp(a));
        let mut next = below.into_iter().peekable();
        for (rank, id) in turned {
            if next.next_if(|&r| r < rank).is_none() {
                break;
            }
            let unit = self.units.get_mut(&id).expect("listed above");
            if let Some(lease) = unit.lease.take_if(|l| l.queued) {
                // Leased ahead and not started: back to pending whole; the
                // worker's next heartbeat tells it to drop it
                // (`renew_queued`), and if it started it meanwhile, the
                // heartbeat adopts it back.
                if let Some(w) = self.workers.get_mut(&lease.worker) {
                    w.units.remove(&id);
                }
                if let Some(job) = self.jobs.get_mut(&job_id) {
                    job.units_leased = job.units_leased.saturating_sub(1);
                    job.pending.insert((unit.position.clone(), id));
                }
                self.counters.speculation_yields += 1;
                continue;
            }
            unit.split_requested = true;
            let holder = unit.lease.as_ref().map(|l| l.worker);
            if let Some(w) = holder.and_then(|w| self.workers.get(&w)) {
                w.split_signal.notify_one();
            }
            self.set_split_in_flight(id, 1);
            self.counters.speculation_yields += 1;
        }
    }

    /// A sweep with a new judge of every job (after loading).
    pub fn sweep_all_moot(&mut self) -> Vec<Write> {
        let ids: Vec<JobId> = self.jobs.keys().copied().collect();
        ids.into_iter()
            .flat_map(|id| self.sweep_moot_now(id))
            .collect()
    }

    /// The sweeps due that no report made (reports came faster than the
    /// judges' window, then stopped): for the coordinator's tick. Returns
    /// the writes to queue and the jobs the sweeps finished.
    pub fn sweep_due_moot(&mut self) -> (Vec<Write>, Vec<Finishing>) {
        let ids: Vec<JobId> = self.jobs.keys().copied().collect();
        let mut writes = Vec::new();
        let mut finished = Vec::new();
        for id in ids {
            let cancelled = self.sweep_moot(id);
            if !cancelled.is_empty() {
                writes.extend(cancelled);
                let (finishing, reopened) = self.settle(id);
                writes.extend(reopened);
                finished.extend(finishing);
            }
        }
        (writes, finished)
    }
}
