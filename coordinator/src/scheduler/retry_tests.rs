//! Tests of retrying a failed job (`Scheduler::begin_retry`,
//! `Retried::build`, `Scheduler::finish_retry`, `Write::RetryJob`): the
//! job goes on from its stored units, each leaf merged once, and every
//! retry that could not be exact is refused, leaving the job as it was.

use super::finish::UNIT_ATTEMPTS;
use super::model::Harness;
use super::tests::drain;
use super::{JobState, SchedulerError};
use crate::store::{JobId, UnitId};

/// A job of 40 leaves in 4 root units of 10 leaves: the first two done,
/// the third failed on [`UNIT_ATTEMPTS`] workers (a program that crashed),
/// the fourth leased when the job failed. Returns the job, the unit that
/// failed and the one leased.
fn failed_job(h: &mut Harness) -> (JobId, UnitId, UnitId) {
    let job = h.submit("leaves", 40, 4, None);
    let w = h.worker();
    let leased = h.lease(w, 4);
    assert_eq!(leased.len(), 4);
    for (u, p) in &leased[..2] {
        assert!(h.report(*u, p, u64::MAX));
    }
    let (bad, held) = (leased[2].0, leased[3].0);
    h.fail(w, bad, true);
    for attempt in 2..=UNIT_ATTEMPTS {
        assert_eq!(h.s.job(job).unwrap().state(), JobState::Running);
        let other = h.worker();
        let again = h.lease(other, 1);
        assert_eq!(again[0].0, bad, "attempt {attempt} at the failing unit");
        h.fail(other, bad, true);
    }
    let j = h.s.job(job).unwrap();
    assert_eq!(j.state(), JobState::Failed);
    assert!(
        j.error().unwrap().contains("failed 3 attempts"),
        "{:?}",
        j.error()
    );
    (job, bad, held)
}

/// Retried, the job runs again with its error cleared: the failed unit and
/// the one leased when it failed are searched, the two done are not, each
/// leaf is merged once, and the failed unit's attempts start again from
/// none (it may fail twice more without failing the job).
#[test]
fn a_retried_job_goes_on_where_it_stopped_and_merges_each_leaf_once() {
    let mut h = Harness::new();
    let (job, bad, held) = failed_job(&mut h);
    // The store kept what the job had not searched.
    assert_eq!(h.store.job_units(job).units.len(), 4);
    assert!(h.store.job_units(job).cancelled.is_empty());
    let nodes_before = h.store.counts(job).2;
    assert_eq!(nodes_before, 20);
    h.retry(job, true).unwrap();
    let j = h.s.job(job).unwrap();
    assert_eq!(j.state(), JobState::Running);
    assert_eq!(j.error(), None);
    assert_eq!((j.units_total(), j.units_done()), (4, 2));
    assert_eq!(j.nodes_done(), 20, "the done units merged once");
    h.check(job, 40);
    for _ in 1..UNIT_ATTEMPTS {
        let w = h.worker();
        let leased: Vec<UnitId> = h.lease(w, 1).into_iter().map(|(u, _)| u).collect();
        assert_eq!(leased, [bad], "the failed unit first, by position");
        h.fail(w, bad, true);
        assert_eq!(h.s.job(job).unwrap().state(), JobState::Running);
    }
    let w = h.worker();
    let mut leased: Vec<UnitId> = h.lease(w, 10).into_iter().map(|(u, _)| u).collect();
    leased.sort();
    assert_eq!(leased, [bad, held], "only the units not searched");
    h.check(job, 40);
    drain(&mut h, job);
    assert_eq!(h.s.job(job).unwrap().state(), JobState::Done);
    let answer = &h.finished[&job];
    assert_eq!(answer["leaves"], 40, "{answer}");
    assert_eq!(answer["distinct"], 40, "{answer}");
    assert_eq!(answer["twice"], 0, "{answer}");
    assert_eq!(h.store.counts(job), (4, 4, 40));
}

/// A coordinator killed right after the retry committed resumes the job
/// as running, from the same units, and ends it exactly; one killed
/// before finds it failed, and retries it then.
#[test]
fn a_retry_is_durable_once_committed() {
    let mut h = Harness::new();
    let (job, _, _) = failed_job(&mut h);
    h.restart();
    assert_eq!(h.s.job(job).unwrap().state(), JobState::Failed);
    h.retry(job, false).unwrap();
    h.restart();
    let j = h.s.job(job).unwrap();
    assert_eq!(j.state(), JobState::Running);
    assert_eq!((j.units_total(), j.units_done()), (4, 2));
    h.check(job, 40);
    drain(&mut h, job);
    assert_eq!(h.s.job(job).unwrap().state(), JobState::Done);
    assert_eq!(h.finished[&job]["distinct"], 40);
    assert_eq!(h.finished[&job]["twice"], 0);
}

/// Only a failed job is retried, once at a time: an unknown job, a running,
/// a done and a cancelled one are refused with one line saying why, and
/// nothing changes.
#[test]
fn a_job_that_is_not_failed_is_not_retried() {
    let mut h = Harness::new();
    let refusal = |r: Result<(), SchedulerError>| r.unwrap_err().to_string();
    assert_eq!(refusal(h.retry(99, true)), "unknown job 99");
    let running = h.submit("leaves", 8, 2, None);
    assert!(refusal(h.retry(running, true)).contains("it is running"));
    drain(&mut h, running);
    assert!(refusal(h.retry(running, true)).contains("it is done"));
    let cancelled = h.submit("leaves", 9, 2, None);
    assert!(h.cancel(cancelled));
    let why = refusal(h.retry(cancelled, true));
    assert!(why.contains("it was cancelled"), "{why}");
    assert!(!why.contains('\n'), "{why}");
    assert_eq!(h.s.job(cancelled).unwrap().state(), JobState::Cancelled);
    // A retry in flight (begun, not finished) refuses a second one.
    let (job, _, _) = failed_job(&mut h);
    h.s.begin_retry(job).unwrap();
    assert!(h.s.begin_retry(job).is_err());
    h.s.abort_retry(job);
    h.retry(job, true).unwrap();
}

/// A failed job whose unsearched units were cancelled when it failed (as
/// an earlier orchard did) cannot be told from one whose units were all
/// searched or pruned: refused, and left failed.
#[test]
fn a_failed_job_without_its_unsearched_units_is_not_retried() {
    let mut h = Harness::new();
    let (job, _, _) = failed_job(&mut h);
    h.store.drop_pending_of_failed(job);
    let why = h.retry(job, true).unwrap_err().to_string();
    assert!(why.contains("kept no unsearched unit"), "{why}");
    let j = h.s.job(job).unwrap();
    assert_eq!(j.state(), JobState::Failed);
    // Refused, it is not left half begun: a refusal says the same again.
    let again = h.retry(job, true).unwrap_err().to_string();
    assert_eq!(again, why);
}
