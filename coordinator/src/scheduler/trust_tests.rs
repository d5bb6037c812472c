//! Tests of whom the scheduler believes: a verified job's replicas (two
//! workers on different hosts must agree before a unit is merged; a liar is
//! outvoted, recorded and excluded by identity, across restarts), and the
//! reports of workers that do not hold the unit.

use super::model::{Harness, TTL};
use super::tests::MS;
use super::{JobState, Report};

/// `worker`'s honest report of a leased unit, committed; true if taken.
fn report_as(h: &mut Harness, worker: u64, unit: u64, payload: &[u8]) -> bool {
    match h
        .begin_as(worker, unit, payload, u64::MAX)
        .expect("a held unit")
    {
        Some(p) => {
            h.commit(p);
            true
        }
        None => false,
    }
}

/// `worker`'s report of `unit` with one leaf too many, committed.
fn lie_as(h: &mut Harness, worker: u64, unit: u64, payload: &[u8], job: u64) {
    let prepared = h.s.jobs[&job].prepared.clone().unwrap();
    let e = super::test_family::explore(prepared.as_ref(), payload, u64::MAX);
    let mut v: super::test_family::Visited = orchard_core::codec::decode(&e.summary).unwrap();
    v.leaves += 1;
    let summary = orchard_core::codec::encode(&v);
    let lie = Report {
        summary,
        nodes: e.nodes + 1,
        rest: Vec::new(),
        ..Report::explored(worker, unit, e, false)
    };
    let p = h.s.begin_report(lie).unwrap().expect("a replica");
    h.commit(p);
}

#[test]
fn a_verified_unit_is_merged_once_after_two_workers_agree() {
    let mut h = Harness::new();
    let job = h.submit_verified("leaves", 30, 3, None, 2);
    let (a, b) = (h.worker_on("a"), h.worker_on("b"));
    let first = h.lease(a, 10);
    assert_eq!(first.len(), 3);
    for (u, p) in &first {
        assert!(report_as(&mut h, a, *u, p));
    }
    // Every unit is pending again, and `a` explored them all.
    assert!(h.lease(a, 10).is_empty());
    assert_eq!(h.s.job(job).unwrap().nodes_done(), 0);
    assert_eq!(h.store.replicas.len(), 3);
    let second = h.lease(b, 10);
    assert_eq!(second.len(), 3);
    for (u, p) in &second {
        assert!(report_as(&mut h, b, *u, p));
    }
    assert_eq!(h.finished[&job]["leaves"], 30);
    assert_eq!(h.finished[&job]["twice"], 0);
    assert!(h.store.replicas.is_empty(), "decided replicas are deleted");
    let status = h.s.status(job).unwrap();
    assert_eq!((status.verified_units, status.mismatches), (3, 0));
}

#[test]
fn a_lying_replica_is_outvoted_recorded_and_gets_no_more_units() {
    let mut h = Harness::new();
    let job = h.submit_verified("leaves", 30, 3, None, 2);
    let liar = h.worker_on("liar");
    let (u, p) = h.lease(liar, 1).remove(0);
    lie_as(&mut h, liar, u, &p, job);
    let honest = h.worker_on("honest-1");
    let (u2, p2) = h.lease(honest, 1).remove(0);
    assert_eq!(u2, u, "the first unit in order, for its second replica");
    assert!(report_as(&mut h, honest, u, &p2));
    // A mismatch: recorded with both workers, and the unit needs a third.
    assert_eq!(h.store.mismatches.len(), 1);
    let m = &h.store.mismatches[0].1;
    assert!(m.worker_a.contains("liar") && m.worker_b.contains("honest-1"));
    assert!(m.summary_a.contains("leaves: 11"), "{}", m.summary_a);
    assert!(m.summary_b.contains("leaves: 10"), "{}", m.summary_b);
    assert_eq!(h.s.status(job).unwrap().mismatches, 1);
    assert!(h.s.units.contains_key(&u), "not decided by one against one");
    let third = h.worker_on("honest-2");
    let (u3, p3) = h.lease(third, 1).remove(0);
    assert_eq!(u3, u);
    assert!(report_as(&mut h, third, u, &p3));
    assert!(
        !h.s.units.contains_key(&u),
        "two honest replicas against one"
    );
    // The liar is out of the job: no more of its units.
    assert!(h.lease(liar, 10).is_empty());
    drain_with(&mut h, job, &[honest, third]);
    assert_eq!(h.finished[&job]["leaves"], 30, "the honest answer");
    assert_eq!(h.finished[&job]["twice"], 0);
    let status = h.s.status(job).unwrap();
    assert_eq!((status.verified_units, status.mismatches), (3, 1));
}

/// The exclusion is by identity, and stored: the liar registering again
/// (a new worker id), or after a restart, gets no unit of the job; its
/// mismatch names it the loser; status lists it. Another job still leases
/// to it.
#[test]
fn a_liar_stays_excluded_when_it_registers_again_and_after_a_restart() {
    let mut h = Harness::new();
    let job = h.submit_verified("leaves", 30, 3, None, 2);
    let liar = h.worker_on("liar");
    let (u, p) = h.lease(liar, 1).remove(0);
    lie_as(&mut h, liar, u, &p, job);
    let (h1, h2) = (h.worker_on("honest-1"), h.worker_on("honest-2"));
    for w in [h1, h2] {
        let (u2, p2) = h.lease(w, 1).remove(0);
        assert_eq!(u2, u);
        assert!(report_as(&mut h, w, u, &p2));
    }
    let excluded: Vec<_> = h
        .store
        .exclusions
        .iter()
        .map(|e| (e.job_id, e.identity.key.clone()))
        .collect();
    assert_eq!(excluded, [(job, "name:liar".to_string())]);
    assert_eq!(h.s.status(job).unwrap().excluded, ["name:liar"]);
    // Registered again: a new id, the same identity.
    let again = h.worker_on("liar");
    assert_ne!(again, liar);
    assert!(h.lease(again, 10).is_empty(), "excluded by its name");
    h.restart();
    let other = h.submit("leaves", 10, 2, None);
    let back = h.worker_on("liar");
    let leased = h.lease(back, 10);
    assert!(!leased.is_empty(), "the other job's units are its to take");
    assert!(
        leased.iter().all(|(u, _)| h.s.units[u].job == other),
        "no unit of the job it lied in, after the restart"
    );
    assert_eq!(h.s.status(job).unwrap().excluded, ["name:liar"]);
    let honest = [h.worker_on("honest-1"), h.worker_on("honest-2")];
    drain_with(&mut h, job, &honest);
    assert_eq!(h.finished[&job]["leaves"], 30, "the honest answer");
}

/// A replica stored before a restart and outvoted after it: its worker
/// has no id in this run, but its identity is excluded all the same.
#[test]
fn a_replica_outvoted_after_a_restart_excludes_its_identity() {
    let mut h = Harness::new();
    let job = h.submit_verified("leaves", 30, 3, None, 2);
    let liar = h.worker_on("liar");
    let (u, p) = h.lease(liar, 1).remove(0);
    lie_as(&mut h, liar, u, &p, job);
    let h1 = h.worker_on("honest-1");
    let (_, p1) = h.lease(h1, 1).remove(0);
    assert!(report_as(&mut h, h1, u, &p1));
    assert!(
        h.store.exclusions.is_empty(),
        "one against one decides nothing"
    );
    h.restart();
    let h2 = h.worker_on("honest-2");
    let (u2, p2) = h.lease(h2, 1).remove(0);
    assert_eq!(u2, u);
    assert!(report_as(&mut h, h2, u, &p2));
    assert_eq!(h.s.status(job).unwrap().excluded, ["name:liar"]);
    let back = h.worker_on("liar");
    assert!(h.lease(back, 10).is_empty());
}

/// Leases and reports every unit of `job` with `workers` until it ends.
fn drain_with(h: &mut Harness, job: u64, workers: &[u64]) {
    for _ in 0..100 {
        if h.s.job(job).unwrap().state() != JobState::Running {
            return;
        }
        for &w in workers {
            for (u, p) in h.lease(w, 1000) {
                report_as(h, w, u, &p);
            }
        }
    }
    panic!("job {job} does not finish");
}

#[test]
fn a_verified_job_with_too_few_workers_says_its_units_wait() {
    let mut h = Harness::new();
    let job = h.submit_verified("leaves", 20, 2, None, 2);
    let a = h.worker_on("a");
    for (u, p) in h.lease(a, 10) {
        assert!(report_as(&mut h, a, u, &p));
    }
    let waiting = h.s.status(job).unwrap().waiting;
    assert!(waiting.contains("--replicas 2"), "{waiting}");
    // A worker on the same host as `a` still counts (a distinct worker),
    // when no second host is live.
    let same_host = h.worker_on("a");
    assert_eq!(h.lease(same_host, 10).len(), 2);
    assert_eq!(h.s.status(job).unwrap().waiting, "");
}

#[test]
fn replicas_go_to_another_host_when_one_is_live() {
    let mut h = Harness::new();
    let job = h.submit_verified("leaves", 10, 1, None, 2);
    let (a1, a2, b) = (h.worker_on("a"), h.worker_on("a"), h.worker_on("b"));
    let (u, p) = h.lease(a1, 1).remove(0);
    assert!(report_as(&mut h, a1, u, &p));
    assert!(h.lease(a2, 1).is_empty(), "host a explored it already");
    assert_eq!(h.lease(b, 1).len(), 1);
    assert!(report_as(&mut h, b, u, &p));
    assert_eq!(h.finished[&job]["leaves"], 10);
}

#[test]
fn a_verified_unit_is_leased_whole_and_never_asked_to_split() {
    let mut h = Harness::new();
    h.submit_verified("leaves", 10, 1, None, 2);
    let w = h.worker();
    let (granted, _) = h.s.lease(w, 1);
    assert!(granted[0].whole);
    let u = granted[0].unit_id;
    h.advance(TTL / 2);
    h.s.request_splits(10, MS);
    let reply = h.s.heartbeat(w, &[(u, 3)], &[]).unwrap();
    assert!(reply.split.is_empty());
    // A replica that comes back split anyway (its worker stopping) is not
    // counted, and the unit is leased again.
    let p = h.begin_as(w, u, &granted[0].payload, 4).unwrap();
    assert!(p.is_none());
    assert!(h.store.replicas.is_empty());
    let next = h.worker();
    assert_eq!(h.lease(next, 1).len(), 1);
}

#[test]
fn a_report_of_a_unit_the_worker_never_held_is_refused() {
    let mut h = Harness::new();
    let job = h.submit("leaves", 20, 2, None);
    let (holder, stranger) = (h.worker(), h.worker());
    let (u, p) = h.lease(holder, 1).remove(0);
    let refused = h.begin_as(stranger, u, &p, u64::MAX);
    assert!(matches!(refused, Err(super::SchedulerError::NotHeld(_))));
    assert_eq!(h.s.counters().reports_refused, 1);
    assert_eq!(h.s.job(job).unwrap().nodes_done(), 0, "never counted");
    // Progress of it in a stranger's heartbeat is refused too: cancelled.
    let reply = h.s.heartbeat(stranger, &[(u, 5)], &[]).unwrap();
    assert_eq!(reply.cancel, vec![u]);
    assert_eq!(h.s.counters().progress_refused, 1);
    h.s.return_leases(stranger, &[u]);
    assert_eq!(h.s.counters().returns_refused, 1);
    assert_eq!(h.s.job(job).unwrap().units_leased(), 1);
    // A holder whose lease expired and went to another worker may still
    // deliver (first commit wins).
    h.advance(TTL * 2);
    let other = h.worker();
    assert_eq!(h.lease(other, 1)[0].0, u);
    assert!(report_as(&mut h, holder, u, &p));
    assert_eq!(h.s.job(job).unwrap().nodes_done(), 10);
}

#[test]
fn after_a_restart_a_unit_not_leased_since_takes_any_workers_report() {
    let mut h = Harness::new();
    let job = h.submit("leaves", 20, 2, None);
    let w = h.worker();
    let (u, p) = h.lease(w, 1).remove(0);
    h.restart();
    // The worker registers again under a new id and delivers.
    let again = h.worker();
    assert_ne!(again, w);
    assert!(report_as(&mut h, again, u, &p));
    assert_eq!(h.s.job(job).unwrap().nodes_done(), 10);
    // Once leased since the restart, only its holders may report it.
    let (u2, p2) = h.lease(again, 1).remove(0);
    let stranger = h.worker();
    assert!(h.begin_as(stranger, u2, &p2, u64::MAX).is_err());
}

#[test]
fn undecided_replicas_survive_a_restart() {
    let mut h = Harness::new();
    let job = h.submit_verified("leaves", 10, 1, None, 2);
    let a = h.worker_on("a");
    let (u, p) = h.lease(a, 1).remove(0);
    assert!(report_as(&mut h, a, u, &p));
    h.restart();
    let b = h.worker_on("b");
    let (u2, p2) = h.lease(b, 1).remove(0);
    assert_eq!(u2, u);
    assert!(report_as(&mut h, b, u, &p2));
    assert_eq!(h.finished[&job]["leaves"], 10);
    assert_eq!(h.s.status(job).unwrap().verified_units, 1);
}

#[test]
fn a_split_of_the_familys_own_is_verified_with_the_summary_and_becomes_the_units_children() {
    let mut h = Harness::new();
    let job = h.submit_verified("leaves", 10, 1, None, 2);
    let (a, b) = (h.worker_on("a"), h.worker_on("b"));
    // Both replicas hand back the same rest without having been stopped
    // (as hip-draws hands back its seeds): agreed, the rest are new units.
    let report = |h: &mut Harness, w: u64| {
        let (u, p) = h.lease(w, 1).remove(0);
        let prepared = h.s.jobs[&job].prepared.clone().unwrap();
        let e = super::test_family::explore(prepared.as_ref(), &p, 4);
        assert!(!e.rest.is_empty());
        let p =
            h.s.begin_report(Report::explored(w, u, e, false))
                .unwrap()
                .expect("a replica");
        h.commit(p);
    };
    report(&mut h, a);
    assert_eq!(
        h.s.job(job).unwrap().units_total(),
        1,
        "undecided: no children"
    );
    report(&mut h, b);
    let j = h.s.job(job).unwrap();
    assert_eq!((j.units_done(), j.nodes_done()), (1, 4));
    assert!(j.units_total() > 1, "the agreed rest became units");
    drain_with(&mut h, job, &[a, b]);
    assert_eq!(h.finished[&job]["leaves"], 10);
    assert_eq!(h.finished[&job]["twice"], 0);
}
