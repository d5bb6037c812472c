//! Tests of a job's end when its family says the answer still needs
//! units (`Scheduler::reopen_unsettled`): the `leaves-moot` family's
//! uncovered leaves stand for the positions a wrong pruning would miss.

use super::model::Harness;
use super::tests::drain;
use super::JobState;

/// Parameters of a `leaves-moot` job of 40 leaves in 4 root units whose
/// last 8 leaves are in none (the family asks for them at the end).
fn uncovered(target: Option<u64>, stuck: bool) -> String {
    serde_json::json!({
        "leaves": 40, "roots": 4, "target": target, "uncovered": 8, "stuck": stuck
    })
    .to_string()
}

/// A job whose units are all done while its family says the answer still
/// needs more goes on with those units, stored like any other, and ends
/// only once they are merged: every leaf counted, once.
#[test]
fn a_job_whose_answer_still_needs_units_goes_on_with_them() {
    let mut h = Harness::new();
    let job = h.submit_json("leaves-moot", &uncovered(None, false), 1);
    let w = h.worker();
    for (u, p) in h.lease(w, 100) {
        assert!(h.report(u, &p, u64::MAX));
    }
    let j = h.s.job(job).unwrap();
    assert_eq!(j.state(), JobState::Running, "ended with 8 leaves missing");
    assert_eq!((j.units_total(), j.units_done()), (5, 4));
    assert_eq!(h.s.counters().units_reopened, 1);
    h.check(job, 40);
    assert_eq!(h.lease_ranges(w, 100), vec![(32, 40)]);
    drain(&mut h, job);
    assert_eq!(h.s.job(job).unwrap().state(), JobState::Done);
    assert_eq!(h.finished[&job]["leaves"], 40);
    assert_eq!(h.finished[&job]["distinct"], 40);
    assert_eq!(h.s.counters().units_reopened, 1);
}

/// The same when the coordinator dies between committing the last report
/// and applying it: the restart finds a job with nothing live and its
/// answer unsettled, and stores the units it needs.
#[test]
fn a_restart_reopens_a_job_left_with_no_unit_and_its_answer_unsettled() {
    let mut h = Harness::new();
    let job = h.submit_json("leaves-moot", &uncovered(None, false), 1);
    let w = h.worker();
    let mut leased = h.lease(w, 100);
    let (last, payload) = leased.pop().unwrap();
    for (u, p) in leased {
        assert!(h.report(u, &p, u64::MAX));
    }
    let p = h.begin(last, &payload, u64::MAX).unwrap();
    h.store_report(&p, 0);
    h.restart();
    let j = h.s.job(job).unwrap();
    assert_eq!(j.state(), JobState::Running);
    assert_eq!((j.units_total(), j.units_done()), (5, 4));
    h.check(job, 40);
    drain(&mut h, job);
    assert_eq!(h.finished[&job]["distinct"], 40);
    assert_eq!(h.finished[&job]["twice"], 0);
}

/// A family that asks again for the units it was just given cannot settle
/// the job with them: the job fails and says why, instead of looping.
#[test]
fn a_family_that_asks_twice_for_the_same_units_fails_its_job() {
    let mut h = Harness::new();
    let job = h.submit_json("leaves-moot", &uncovered(None, true), 1);
    drain(&mut h, job);
    let j = h.s.job(job).unwrap();
    assert_eq!(j.state(), JobState::Failed);
    assert!(
        j.error().unwrap().contains("asks for the same units again"),
        "{:?}",
        j.error()
    );
    assert_eq!(h.s.counters().units_reopened, 1);
}

/// An answer that is settled ends the job, whatever the family would still
/// have asked for before: here the target's leaf decides, nothing reopens.
#[test]
fn a_settled_answer_reopens_nothing() {
    let mut h = Harness::new();
    let job = h.submit_json("leaves-moot", &uncovered(Some(3), false), 1);
    drain(&mut h, job);
    assert_eq!(h.s.job(job).unwrap().state(), JobState::Done);
    assert_eq!(h.s.counters().units_reopened, 0);
}
