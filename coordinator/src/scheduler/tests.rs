//! Unit tests of the scheduler's state machine: a manual clock, the store
//! modelled in memory (see `model`), the synthetic family of `test_family`.

use std::time::Duration;

use super::model::{Harness, TTL};
use super::JobState;
use crate::store::Write;

pub(super) const MS: Duration = Duration::from_millis(1);

/// Runs every unit of `job` to the end with fresh workers.
pub(super) fn drain(h: &mut Harness, job: u64) {
    for _ in 0..1000 {
        if h.s.job(job).unwrap().state() != JobState::Running {
            return;
        }
        h.advance(TTL);
        let w = h.worker();
        for (u, p) in h.lease(w, 1000) {
            h.report(u, &p, u64::MAX);
        }
    }
    panic!("job {job} does not finish");
}

/// An idle worker asks running units to split, but not those whose family
/// says stopping them early would lose their work.
#[test]
fn idle_workers_ask_only_splittable_units_to_split() {
    let mut h = Harness::new();
    // Three units of one leaf, then one of eight.
    h.submit("leaves", 3, 3, None);
    let busy = h.worker();
    let leased = h.lease(busy, 10);
    assert_eq!(leased.len(), 3);
    let job2 = h.submit("leaves", 8, 1, None);
    let big = h.lease(busy, 1);
    assert_eq!(h.s.job(job2).unwrap().state(), JobState::Running);
    h.advance(TTL / 2);
    h.s.request_splits(10, MS);
    let running: Vec<(u64, u64)> = leased
        .iter()
        .chain(big.iter())
        .map(|(u, _)| (*u, 0))
        .collect();
    let reply = h.s.heartbeat(busy, &running, &[]).expect("a known worker");
    assert_eq!(reply.split, vec![big[0].0], "only the eight-leaf unit");
}

/// Split requests go to the oldest leases first, each lease asked once,
/// none younger than the minimum age; a unit leased again after its lease
/// expired may be asked again (`split_candidates` keeps up with leases
/// granted, ended and renewed).
#[test]
fn split_requests_take_the_oldest_leases_once_each() {
    let mut h = Harness::new();
    h.submit("leaves", 40, 4, None);
    let (a, b) = (h.worker(), h.worker());
    let first = h.lease(a, 2);
    h.advance(TTL / 4);
    let later = h.lease(b, 1);
    assert_eq!(h.s.request_splits(10, TTL / 2), 0, "all younger than that");
    h.advance(TTL / 4);
    let running = |units: &[(u64, Vec<u8>)]| units.iter().map(|(u, _)| (*u, 0)).collect::<Vec<_>>();
    assert_eq!(h.s.request_splits(1, MS), 1);
    let reply = h.s.heartbeat(a, &running(&first), &[]).unwrap();
    assert_eq!(reply.split.len(), 1);
    assert!(first.iter().any(|(u, _)| *u == reply.split[0]));
    assert_eq!(h.s.request_splits(1, MS), 1);
    let reply = h.s.heartbeat(a, &running(&first), &[]).unwrap();
    assert_eq!(reply.split.len(), 1, "the other one of the first two");
    assert!(first.iter().any(|(u, _)| *u == reply.split[0]));
    assert_eq!(h.s.request_splits(10, MS), 1, "the later lease only");
    let reply = h.s.heartbeat(b, &running(&later), &[]).unwrap();
    assert_eq!(reply.split, vec![later[0].0]);
    assert_eq!(h.s.request_splits(10, MS), 0, "every lease asked already");
    // Every lease runs out; leased again, the units may be asked again.
    assert_eq!(h.advance(2 * TTL), 3);
    let c = h.worker();
    let again = h.lease(c, 10);
    assert_eq!(again.len(), 4);
    h.advance(MS);
    assert_eq!(h.s.request_splits(10, MS), 4);
    let reply = h.s.heartbeat(c, &running(&again), &[]).unwrap();
    assert_eq!(reply.split.len(), 4);
}

/// A split request signals its holder's `AwaitSplits` at once and is
/// delivered once: by `take_split_requests` (the long poll) or by the next
/// heartbeat, whichever asks first; other workers are not signalled.
#[test]
fn split_requests_reach_the_long_poll_once() {
    let mut h = Harness::new();
    h.submit("leaves", 40, 4, None);
    let (a, b) = (h.worker(), h.worker());
    let mine = h.lease(a, 1);
    let signal_a = h.s.split_signal(a).expect("a known worker");
    let signal_b = h.s.split_signal(b).expect("a known worker");
    assert!(h.s.split_signal(9_999).is_none());
    assert_eq!(
        h.s.take_split_requests(a),
        Some(vec![]),
        "nothing asked yet"
    );
    h.advance(TTL / 4);
    assert_eq!(h.s.request_splits(1, MS), 1);
    // The signal is kept for a call that starts waiting later.
    let waited = signal_a.notified();
    tokio::pin!(waited);
    assert!(waited.as_mut().enable(), "a's long poll is woken");
    let not_b = signal_b.notified();
    tokio::pin!(not_b);
    assert!(!not_b.as_mut().enable(), "b holds nothing asked");
    assert_eq!(h.s.take_split_requests(a), Some(vec![mine[0].0]));
    assert_eq!(h.s.take_split_requests(a), Some(vec![]), "delivered once");
    let reply = h.s.heartbeat(a, &[(mine[0].0, 0)], &[]).unwrap();
    assert!(reply.split.is_empty(), "not again by the heartbeat");
    assert_eq!(h.s.take_split_requests(9_999), None);
}

/// The k of a k-way hand-back: the slots waiting in lease calls that the
/// other splits in flight do not cover (the pieces they were asked for), at
/// least 1, at most `MAX_SPLIT_PIECES`; a split whose unit reported no
/// longer covers any.
#[test]
fn split_requests_ask_for_a_piece_for_each_idle_slot() {
    use std::sync::atomic::Ordering;
    let mut h = Harness::new();
    h.submit("leaves", 40, 4, None);
    let (a, b) = (h.worker(), h.worker());
    let first = h.lease(a, 1);
    let second = h.lease(b, 1);
    let idle = h.s.idle_slots();
    h.advance(TTL / 4);
    // Nobody waiting: the usual cut.
    assert_eq!(h.s.request_splits(1, MS), 1);
    let reply = h.s.heartbeat(a, &[(first[0].0, 0)], &[]).unwrap();
    assert_eq!(reply.split, vec![first[0].0]);
    assert_eq!(reply.split_pieces, vec![1]);
    // 12 slots waiting, the first split covers 1 of them: 11 for the second.
    idle.store(12, Ordering::Relaxed);
    assert_eq!(h.s.request_splits(1, MS), 1);
    h.advance(TTL / 100);
    assert_eq!(h.s.take_split_requests(b), Some(vec![second[0].0]));
    assert_eq!(h.s.split_pieces(&[second[0].0]), 11);
    // The first unit reports: its rest came back, the second takes the lot.
    h.report(first[0].0, &first[0].1, 1);
    h.advance(TTL / 100);
    assert_eq!(h.s.split_pieces(&[second[0].0]), 12);
    idle.store(1_000_000, Ordering::Relaxed);
    assert_eq!(
        h.s.split_pieces(&[second[0].0]),
        super::heartbeat::MAX_SPLIT_PIECES
    );
    idle.store(0, Ordering::Relaxed);
    assert_eq!(h.s.split_pieces(&[second[0].0]), 1);
}

/// An idle lease call asks for a new split only when the pieces asked of
/// the splits in flight do not cover the idle slots, each split for the
/// slots still uncovered but at least a sixteenth of the idle ones (at
/// most `MAX_SPLIT_PIECES`); a split whose rest came back
/// (`take_split_in_flight`) or whose lease ended covers none.
#[test]
fn idle_calls_ask_for_splits_only_for_uncovered_slots() {
    use super::heartbeat::MAX_SPLIT_PIECES;
    use std::sync::atomic::Ordering;
    let max = MAX_SPLIT_PIECES as usize;
    let mut h = Harness::new();
    h.submit("leaves", 40, 8, None);
    let w = h.worker();
    let units = h.lease(w, 8);
    assert_eq!(units.len(), 8);
    let idle = h.s.idle_slots();
    h.advance(TTL / 4);
    assert_eq!(h.s.request_splits_for_idle(MS), 0, "nobody idle");
    // 10 idle slots: one split, for 10 pieces; then covered.
    idle.store(10, Ordering::Relaxed);
    assert_eq!(h.s.request_splits_for_idle(MS), 1);
    assert_eq!(h.s.request_splits_for_idle(MS), 0, "covered by the first");
    let asked = h.s.take_split_requests(w).unwrap();
    assert_eq!(asked.len(), 1);
    assert_eq!(h.s.split_pieces(&asked), 10);
    // 10 more idle slots: one more split; 2 * MAX more: two more.
    idle.store(20, Ordering::Relaxed);
    assert_eq!(h.s.request_splits_for_idle(MS), 1);
    idle.store(20 + 2 * max, Ordering::Relaxed);
    assert_eq!(h.s.request_splits_for_idle(MS), 2);
    assert_eq!(h.s.request_splits_for_idle(MS), 0);
    // Delivered together: the slots the first split does not cover shared
    // among them.
    let three = h.s.take_split_requests(w).unwrap();
    assert_eq!(three.len(), 3);
    assert_eq!(
        h.s.split_pieces(&three) as usize,
        (10 + 2 * max).div_ceil(3).min(max)
    );
    // The first split's rest comes back: it covers nothing any more, and
    // while its 10 calls are not served yet, another split is asked for
    // them, for at least a sixteenth of the idle slots (34 of 532); once
    // they are served, the three others cover the rest.
    assert_eq!(h.s.take_split_in_flight(asked[0]), 10);
    assert_eq!(h.s.take_split_in_flight(asked[0]), 0, "taken once");
    assert_eq!(h.s.request_splits_for_idle(MS), 1);
    let fourth = h.s.take_split_requests(w).unwrap();
    assert_eq!(
        h.s.split_pieces(&fourth) as usize,
        (20 + 2 * max).div_ceil(16)
    );
    assert_eq!(h.s.take_split_in_flight(fourth[0]), 34);
    idle.store(10 + 2 * max, Ordering::Relaxed);
    assert_eq!(h.s.request_splits_for_idle(MS), 0);
    idle.store(3 * max + 1, Ordering::Relaxed);
    assert_eq!(h.s.request_splits_for_idle(MS), 1);
    // Every lease runs out: no split in flight covers anything, and no
    // unit runs to be asked.
    h.advance(2 * TTL);
    assert_eq!(h.s.request_splits_for_idle(MS), 0);
    let again = h.lease(w, 8);
    assert!(again.len() >= 4, "{} leased again", again.len());
    h.advance(MS);
    // 3 * MAX + 1 slots uncovered: four splits, the last for one piece.
    assert_eq!(h.s.request_splits_for_idle(MS), 4);
    let asked = h.s.take_split_requests(w).unwrap();
    assert_eq!(asked.len(), 4);
    assert_eq!(h.s.split_pieces(&asked) as usize, (3 * max + 1).div_ceil(4));
}

#[test]
fn lease_order_follows_positions() {
    let mut h = Harness::new();
    let job = h.submit("leaves", 40, 4, None);
    let w = h.worker();
    assert_eq!(h.lease_ranges(w, 1), vec![(0, 10)]);
    let second = h.lease(w, 1);
    assert_eq!(super::test_family::range(&second[0].1).lo, 10);
    // Explores 10..14 and hands back 14..17 and 17..20: they come before
    // the later roots.
    assert!(h.report(second[0].0, &second[0].1, 4));
    h.check(job, 40);
    assert_eq!(
        h.lease_ranges(w, 10),
        vec![(14, 17), (17, 20), (20, 30), (30, 40)]
    );
    h.check(job, 40);
}

#[test]
fn a_report_marks_its_unit_done_and_inserts_its_rest_under_its_position() {
    let mut h = Harness::new();
    let job = h.submit("leaves", 40, 4, None);
    let w = h.worker();
    let leased = h.lease(w, 2);
    let (unit, payload) = &leased[1];
    let p = h.begin(*unit, payload, 4).expect("accepted");
    let parent = h.s.units[unit].position.clone();
    assert_eq!(p.rest.len(), 2);
    for (i, r) in p.rest.iter().enumerate() {
        assert_eq!(r.position[..parent.len()], parent[..]);
        assert_eq!(r.position[parent.len()..], (i as u32).to_be_bytes());
    }
    assert_eq!(super::unit::position_label(&p.rest[1].position), "2.2");
    h.commit(p);
    let j = h.s.job(job).unwrap();
    assert_eq!((j.units_total(), j.units_done(), j.nodes_done()), (6, 1, 4));
    assert_eq!((j.units_leased(), h.s.counters().reports), (1, 1));
    assert!(!h.s.units.contains_key(unit));
    h.check(job, 40);
    let tree = h.s.tree(job);
    let cell = tree.iter().find(|c| c.prefix == "2").unwrap();
    assert_eq!(cell.done, 1);
}

#[test]
fn duplicate_and_late_reports_are_ignored_the_first_committed_wins() {
    let mut h = Harness::new();
    let job = h.submit("leaves", 30, 3, None);
    let (w1, w2) = (h.worker(), h.worker());
    let (u, p) = h.lease(w1, 1).remove(0);
    let first = h.begin(u, &p, 100).expect("accepted");
    // The same report again while the first one commits, then after.
    assert!(h.begin(u, &p, 100).is_none());
    h.commit(first);
    assert!(!h.report(u, &p, 100));
    assert_eq!(h.s.job(job).unwrap().nodes_done(), 10);
    h.check(job, 30);

    // w1 goes silent; its unit is leased again to w2; w1's late report
    // still comes first and wins; w2's is ignored and w2 is told to stop.
    let (u, p) = h.lease(w1, 1).remove(0);
    assert_eq!(h.advance(TTL), 1);
    assert_eq!(h.lease(w2, 1)[0].0, u);
    let late = h
        .begin(u, &p, 100)
        .expect("a late report of a live unit counts");
    assert!(h.begin(u, &p, 100).is_none());
    h.commit(late);
    assert!(!h.report(u, &p, 100));
    let reply = h.s.heartbeat(w2, &[(u, 3)], &[]).unwrap();
    assert_eq!(reply.cancel, vec![u]);
    assert_eq!(h.s.job(job).unwrap().nodes_done(), 20);
    h.check(job, 30);
    // Two duplicates and two reports of a done unit, each counted.
    assert_eq!(h.s.counters().reports_ignored, 4);

    drain(&mut h, job);
    assert_eq!(h.finished[&job]["leaves"], 30);
    assert_eq!(h.finished[&job]["twice"], 0);
}

#[test]
fn a_lease_expires_after_the_ttl_and_not_before() {
    let mut h = Harness::new();
    let job = h.submit("leaves", 20, 2, None);
    let (w, w2) = (h.worker(), h.worker());
    let (u, _) = h.lease(w, 1).remove(0);
    assert_eq!(h.advance(TTL - MS), 0);
    // A heartbeat renews the lease for one TTL from now.
    let reply = h.s.heartbeat(w, &[(u, 5)], &[]).unwrap();
    assert!(reply.cancel.is_empty());
    assert_eq!(h.advance(TTL - MS), 0);
    // w2 has been silent for two lease times: only w is live.
    assert_eq!(h.s.live_workers(), 1);
    h.check(job, 20);
    assert_eq!(h.advance(MS), 1);
    assert_eq!(h.s.counters().lease_expiries, 1);
    assert_eq!(h.s.job(job).unwrap().units_leased(), 0);
    h.check(job, 20);
    // Back at the front of the queue.
    assert_eq!(h.lease(w2, 1)[0].0, u);
    let reply = h.s.heartbeat(w, &[(u, 6)], &[]).unwrap();
    assert_eq!(reply.cancel, vec![u]);
    h.check(job, 20);
}

#[test]
fn returned_leases_go_back_to_pending() {
    let mut h = Harness::new();
    let job = h.submit("leaves", 30, 3, None);
    let (w, w2) = (h.worker(), h.worker());
    let leased = h.lease(w, 2);
    let (u0, u1) = (leased[0].0, leased[1].0);
    // Only the holder can give a unit back.
    h.s.return_leases(w2, &[u0]);
    assert_eq!(h.s.job(job).unwrap().units_leased(), 2);
    h.s.return_leases(w, &[u0]);
    assert_eq!(h.s.job(job).unwrap().units_leased(), 1);
    h.check(job, 30);
    let next = h.lease(w2, 5);
    assert_eq!(next.iter().map(|g| g.0).collect::<Vec<_>>()[0], u0);
    assert!(next.iter().all(|g| g.0 != u1));
    h.check(job, 30);
}

#[test]
fn a_cancelled_job_leases_and_accepts_nothing() {
    let mut h = Harness::new();
    let job = h.submit("leaves", 30, 3, None);
    let w = h.worker();
    let leased = h.lease(w, 2);
    let in_flight = h.begin(leased[0].0, &leased[0].1, 100).unwrap();
    assert!(h.cancel(job));
    assert!(!h.cancel(job));
    assert!(h.s.begin_cancel(999).is_err());
    h.commit(in_flight);
    assert!(h.begin(leased[1].0, &leased[1].1, 100).is_none());
    assert!(h.lease(w, 10).is_empty());
    let reply = h.s.heartbeat(w, &[(leased[1].0, 1)], &[]).unwrap();
    assert_eq!(reply.cancel, vec![leased[1].0]);
    assert_eq!(h.s.job(job).unwrap().state(), JobState::Cancelled);
    assert!(h.s.units.is_empty());
    h.restart();
    assert_eq!(h.s.job(job).unwrap().state(), JobState::Cancelled);
    let w = h.worker();
    assert!(h.lease(w, 10).is_empty());
}

#[test]
fn moot_units_are_swept_leased_or_pending() {
    let mut h = Harness::new();
    let job = h.submit("leaves-moot", 40, 4, Some(15));
    let w = h.worker();
    let leased = h.lease(w, 2);
    h.s.heartbeat(w, &[(leased[0].0, 7)], &[]).unwrap();
    let p = h.begin(leased[1].0, &leased[1].1, 100).unwrap();
    h.store_report(&p, 0);
    let (finishing, writes) = h.s.complete_report(p);
    let [Write::CancelUnits { units }] = &writes[..] else {
        panic!("expected one CancelUnits, got {writes:?}");
    };
    let mut units = units.clone();
    units.sort();
    let ids = |i: usize| leased[0].0 + i as u64;
    assert_eq!(units, vec![(ids(0), 7), (ids(2), 0), (ids(3), 0)]);
    h.store.apply(&writes);
    let j = h.s.job(job).unwrap();
    assert_eq!((j.nodes_done(), j.nodes_discarded()), (10, 7));
    assert_eq!(h.s.counters().units_cancelled, 3);
    let reply = h.s.heartbeat(w, &[(leased[0].0, 8)], &[]).unwrap();
    assert_eq!(reply.cancel, vec![leased[0].0]);
    h.finish(finishing.expect("nothing live is left: the job is over"));
    assert_eq!(h.s.job(job).unwrap().state(), JobState::Done);
    assert_eq!(h.finished[&job]["leaves"], 10);
}

#[test]
fn units_that_must_wait_are_leased_when_nothing_else_is() {
    let mut h = Harness::new();
    // 20..30 and 30..40 wait for leaf 15, which the unit 10..20 holds.
    // (In this family, waiting units come last in position order anyway:
    // this checks they are not starved, not the reordering.)
    let job = h.submit("leaves-moot", 40, 4, Some(15));
    let w = h.worker();
    let first = h.lease(w, 1);
    assert!(h.report(first[0].0, &first[0].1, 3));
    // Pending: 3..6, 6..10 (no wait), 10..20, then the waiting ones.
    assert_eq!(
        h.lease_ranges(w, 10),
        vec![(3, 6), (6, 10), (10, 20), (20, 30), (30, 40)]
    );
    h.check(job, 40);
}

#[test]
fn waiting_units_are_leased_least_speculative_first() {
    let mut h = Harness::new();
    // 20..30 and 30..40 wait for leaf 15; in this family a waiting unit's
    // speculation is its width.
    let job = h.submit("leaves-moot", 40, 4, Some(15));
    let w = h.worker();
    let first = h.lease(w, 2);
    assert!(h.report(first[0].0, &first[0].1, 10));
    // 10..20 stays leased: its siblings wait, and are speculated on.
    let spec = h.lease(w, 2);
    let ranges: Vec<_> = spec
        .iter()
        .map(|(_, p)| super::test_family::range(p))
        .map(|r| (r.lo, r.hi))
        .collect();
    assert_eq!(ranges, [(20, 30), (30, 40)]);
    // Split: 21..25 and 25..30 (widths 4 and 5), 36..38 and 38..40 (2, 2).
    assert!(h.report(spec[0].0, &spec[0].1, 1));
    assert!(h.report(spec[1].0, &spec[1].1, 6));
    // Position order would be 21..25 first; the least speculative go first.
    assert_eq!(
        h.lease_ranges(w, 10),
        vec![(36, 38), (38, 40), (21, 25), (25, 30)]
    );
    h.check(job, 40);
}

/// A guess that turns after the leases: running units that the new judge
/// ranks more speculative than the judge before (one leased as not
/// speculative, one leased as speculative) are asked to split, each
/// against a pending unit ranked below it; one whose rank did not rise is
/// not, and nothing is asked before the lemmas are observed (fails if
/// observing makes no new judge, or if the yield asks the wrong units or
/// none).
#[test]
fn units_the_turned_guess_makes_more_speculative_yield() {
    let mut h = Harness::new();
    // 30..40 waits for leaf 25 (rank 10, its width).
    let job = h.submit("leaves-moot", 40, 4, Some(25));
    let (w1, w2, w3) = (h.worker(), h.worker(), h.worker());
    let first = h.lease(w1, 1);
    let held = h.lease(w2, 2);
    let speculating = h.lease(w3, 1);
    let ranges = |units: &[(crate::store::UnitId, Vec<u8>)]| -> Vec<(u64, u64)> {
        let r = units.iter().map(|(_, p)| super::test_family::range(p));
        r.map(|r| (r.lo, r.hi)).collect()
    };
    assert_eq!(ranges(&held), [(10, 20), (20, 30)]);
    assert_eq!(ranges(&speculating), [(30, 40)]);
    // 0..10 explores two leaves and hands back 2..6 and 6..10, pending and
    // ranked 0.
    assert!(h.report(first[0].0, &first[0].1, 2));
    let beat = |h: &mut Harness, w, units: &[(crate::store::UnitId, Vec<u8>)]| {
        let running: Vec<_> = units.iter().map(|(id, _)| (*id, 1)).collect();
        h.s.heartbeat(w, &running, &[]).unwrap().split
    };
    h.s.sweep_due_moot();
    assert!(beat(&mut h, w2, &held).is_empty(), "nothing turned yet");
    assert!(beat(&mut h, w3, &speculating).is_empty());

    let prepared = h.s.lemma_job(job).expect("leaves-moot shares lemmas");
    let exchange = prepared.lemmas().unwrap();
    assert!(exchange.observe(&15u64.to_le_bytes()));
    h.s.lemmas_observed(job);
    h.s.sweep_due_moot();
    // 20..30 rises from 0 to 10 (above 15), 30..40 from 10 to 20 (above
    // both); 10..20 stays 0.
    assert_eq!(beat(&mut h, w2, &held), [held[1].0]);
    assert_eq!(beat(&mut h, w3, &speculating), [speculating[0].0]);
    assert_eq!(h.s.counters().speculation_yields, 2);
    // Its rest waits; the worker takes the pending work that need not.
    assert!(h.report(held[1].0, &held[1].1, 1));
    assert_eq!(h.lease_ranges(w2, 2), [(2, 6), (6, 10)]);
}

/// A unit leased ahead (queued, not started) that the turned guess ranks
/// more speculative goes back to pending whole, if a pending unit ranks
/// below it: the worker's next heartbeat tells it to drop it, and the unit
/// is leased again after the less speculative work (fails if only running
/// units yield).
#[test]
fn a_queued_unit_the_turned_guess_makes_more_speculative_goes_back() {
    let mut h = Harness::new();
    // 30..40 waits for leaf 25 (rank 10, its width).
    let job = h.submit("leaves-moot", 40, 4, Some(25));
    let (w1, w2) = (h.worker(), h.worker());
    let first = h.lease(w1, 1);
    let running = h.lease(w2, 1);
    let (ahead, writes) = h.s.lease_ahead(w2, 1);
    h.store.apply(&writes);
    let ahead = ahead[0].unit_id;
    assert_eq!(super::test_family::range(&running[0].1).lo, 10);
    // 0..10 explores two leaves and hands back 2..6 and 6..10, ranked 0.
    assert!(h.report(first[0].0, &first[0].1, 2));
    h.s.sweep_due_moot();
    assert!(
        h.s.renew_queued(w2, &[ahead]).is_empty(),
        "nothing turned yet"
    );

    let prepared = h.s.lemma_job(job).unwrap();
    assert!(prepared.lemmas().unwrap().observe(&15u64.to_le_bytes()));
    h.s.lemmas_observed(job);
    h.s.sweep_due_moot();
    // 20..30 rose from 0 to 10; 10..20, running, stays 0.
    assert_eq!(h.s.renew_queued(w2, &[ahead]), [ahead], "to drop");
    assert!(h
        .s
        .heartbeat(w2, &[(running[0].0, 1)], &[])
        .unwrap()
        .split
        .is_empty());
    assert_eq!(h.s.counters().speculation_yields, 1);
    assert_eq!(h.lease_ranges(w1, 3), [(2, 6), (6, 10), (20, 30)]);
}

/// A unit its family keeps whole (here one leaf) is never asked to yield,
/// however its rank rises.
#[test]
fn a_unit_kept_whole_does_not_yield() {
    let mut h = Harness::new();
    // Roots 0..1, 1..3, 3..5, 5..6, 6..8, 8..10, 10..12.
    let job = h.submit("leaves-moot", 12, 7, None);
    let (w1, w2) = (h.worker(), h.worker());
    let first = h.lease(w1, 1);
    let held = h.lease(w2, 3);
    assert_eq!(h.s.job(job).unwrap().units_total(), 7);
    assert!(h.report(first[0].0, &first[0].1, 1));
    // 1..3 explores one leaf and hands back 2..3: pending, ranked 0.
    assert!(h.report(held[0].0, &held[0].1, 1));
    let exchange = h.s.lemma_job(job).unwrap();
    assert!(exchange.lemmas().unwrap().observe(&4u64.to_le_bytes()));
    h.s.lemmas_observed(job);
    h.s.sweep_due_moot();
    // 5..6 rose from 0 to 1 but is one leaf; 3..5 did not rise.
    let running: Vec<_> = held[1..].iter().map(|(id, _)| (*id, 1)).collect();
    assert!(h.s.heartbeat(w2, &running, &[]).unwrap().split.is_empty());
    assert_eq!(h.s.counters().speculation_yields, 0);
}

#[test]
fn a_restart_sweeps_units_made_moot_by_a_committed_report() {
    let mut h = Harness::new();
    let job = h.submit("leaves-moot", 40, 4, Some(15));
    let w = h.worker();
    let leased = h.lease(w, 2);
    // Committed, then the coordinator dies before applying it.
    let p = h.begin(leased[1].0, &leased[1].1, 100).unwrap();
    h.store.apply(&[Write::CompleteUnit {
        unit_id: p.unit_id,
        job_id: p.job_id,
        nodes: p.nodes,
        summary: p.summary,
        worker: "test".into(),
        rest: p.rest,
        done_ms: 0,
    }]);
    h.restart();
    let j = h.s.job(job).unwrap();
    assert_eq!(j.state(), JobState::Done);
    assert_eq!((j.units_total(), j.units_done()), (4, 4));
    assert_eq!(h.finished[&job]["leaves"], 10);
}

#[test]
fn a_restart_resumes_pending_units_and_keeps_done_ones_done() {
    let mut h = Harness::new();
    let job = h.submit("leaves", 40, 4, None);
    let w = h.worker();
    let leased = h.lease(w, 2);
    assert!(h.report(leased[1].0, &leased[1].1, 3));
    // A report in flight when the coordinator dies is lost.
    let lost = h.begin(leased[0].0, &leased[0].1, 100).unwrap();
    let bound_before = h.s.job(job).unwrap().bound();
    h.restart();
    drop(lost);
    let j = h.s.job(job).unwrap();
    assert_eq!((j.units_total(), j.units_done(), j.nodes_done()), (6, 1, 3));
    assert_eq!((j.units_leased(), j.bound()), (0, bound_before));
    h.check(job, 40);
    // The old worker must register again.
    assert!(h.s.heartbeat(w, &[(leased[0].0, 1)], &[]).is_none());
    let w = h.worker();
    // A unit it kept running is adopted back by its heartbeat.
    let reply = h.s.heartbeat(w, &[(leased[0].0, 1)], &[]).unwrap();
    assert!(reply.cancel.is_empty());
    assert_eq!(h.s.job(job).unwrap().units_leased(), 1);
    h.check(job, 40);
    // The done unit stays done: its report is late now.
    assert!(!h.report(leased[1].0, &leased[1].1, 100));
    assert_eq!(
        h.lease_ranges(w, 10),
        vec![(13, 16), (16, 20), (20, 30), (30, 40)]
    );
    h.check(job, 40);
    drain(&mut h, job);
    assert_eq!(h.finished[&job]["leaves"], 40);
    assert_eq!(h.finished[&job]["distinct"], 40);
}

#[test]
fn a_job_whose_family_is_unknown_fails_on_restart() {
    let mut h = Harness::new();
    h.store.apply(&[Write::InsertJob {
        id: 7,
        family: "nope".into(),
        params_json: "{}".into(),
        created_ms: 1,
        replicas: 1,
    }]);
    h.restart();
    let j = h.s.job(7).unwrap();
    assert_eq!(j.state(), JobState::Failed);
    assert!(j
        .error()
        .unwrap()
        .starts_with("cannot resume: unknown search family"));
    let job = h.submit("leaves", 10, 1, None);
    assert_eq!(job, 8);
}

#[test]
fn set_estimate_gives_an_eta() {
    let mut h = Harness::new();
    let job = h.submit("leaves", 40, 4, None);
    let due = h.s.estimates_due();
    assert_eq!(due.len(), 1);
    let est = super::Estimate {
        nodes: 40.0,
        std_error: 1.0,
        assumed_bound: 0,
    };
    assert!(h.s.set_estimate(job, est));
    assert!(h.s.estimates_due().is_empty());
    let w = h.worker();
    let leased = h.lease(w, 1);
    h.s.status(job).unwrap();
    h.clock.advance(Duration::from_secs(1));
    assert!(h.report(leased[0].0, &leased[0].1, 100));
    let snap = h.s.status(job).unwrap();
    // 10 nodes in 1 s, 30 to go.
    assert_eq!(snap.nodes_per_second, 10.0);
    assert_eq!(snap.eta_seconds, 3.0);
    assert_eq!(snap.estimated_nodes, 40.0);
}

/// An estimate that comes back after its job has finished is not recorded:
/// a done job's status keeps the estimate it ended with.
#[test]
fn a_finished_job_keeps_its_estimate() {
    let mut h = Harness::new();
    let job = h.submit("leaves", 40, 4, None);
    let est = |nodes| super::Estimate {
        nodes,
        std_error: 1.0,
        assumed_bound: 0,
    };
    assert!(h.s.set_estimate(job, est(40.0)));
    drain(&mut h, job);
    assert_eq!(h.s.job(job).unwrap().state(), JobState::Done);
    assert!(
        !h.s.set_estimate(job, est(1e6)),
        "a late estimate is refused"
    );
    assert_eq!(h.s.status(job).unwrap().estimated_nodes, 40.0);
    assert!(!h.s.set_estimate(999, est(1.0)), "an unknown job");
}

/// Lease-ahead: a unit leased to be held queued is not asked to split
/// until the worker says it started (in a report's `started_units`, or by
/// listing it as running in a heartbeat); a queued unit's heartbeat renews
/// its lease without starting it; none is leased ahead while a lease call
/// waits for work.
#[test]
fn a_queued_lease_is_no_split_candidate_until_it_starts() {
    let mut h = Harness::new();
    let job = h.submit("leaves", 40, 4, None);
    let w = h.worker();
    let (ahead, _) = h.s.lease_ahead(w, 2);
    assert_eq!(ahead.len(), 2);
    let status = h.s.status(job).unwrap();
    assert_eq!(status.units_running, 0, "queued units are not running");
    let ids: Vec<u64> = ahead.iter().map(|g| g.unit_id).collect();
    h.advance(TTL / 2);
    assert_eq!(
        h.s.request_splits(10, MS),
        0,
        "queued units have no progress"
    );
    // Renewed, still queued: not expired a lease time after it was leased.
    assert!(h.s.renew_queued(w, &ids).is_empty());
    assert_eq!(h.advance(TTL / 2 + MS), 0, "renewed by the heartbeat");
    assert_eq!(h.s.request_splits(10, MS), 0);
    // One starts (a report says so), the other shows up running in a
    // heartbeat: both may be asked to split once they have run a while.
    h.s.start_queued(w, &ids[..1]);
    assert_eq!(h.s.status(job).unwrap().units_running, 1);
    h.advance(TTL / 4);
    assert_eq!(h.s.request_splits(10, MS), 1, "the one that started");
    h.s.heartbeat(w, &[(ids[1], 5)], &[])
        .expect("a known worker");
    h.advance(TTL / 4);
    assert_eq!(h.s.request_splits(10, MS), 1, "started by the heartbeat");
    // Another worker's queued units are not this one's to renew.
    let other = h.worker();
    assert_eq!(h.s.renew_queued(other, &ids), ids);
    // A lease call waiting for work: nothing is leased ahead.
    let idle = h.s.idle_slots();
    idle.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    assert!(h.s.lease_ahead(other, 2).0.is_empty());
    idle.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    assert_eq!(h.s.lease_ahead(other, 2).0.len(), 2);
}

/// A job's lemmas are a window of the store: past its size the oldest blobs
/// make room for the newest, in the order they came; a blob larger than the
/// window, or any blob of a job that ended, is not stored.
#[test]
fn a_jobs_lemmas_keep_the_newest_within_its_window() {
    let mut h = Harness::new();
    let job = h.submit("leaves", 3, 1, None);
    h.s.set_lemma_store_bytes(100);
    assert_eq!(h.s.admit_lemmas(job, 40), Some(0));
    assert_eq!(h.s.admit_lemmas(job, 50), Some(0));
    assert_eq!(h.s.admit_lemmas(job, 30), Some(1), "the 40 make room");
    assert_eq!(h.s.job(job).unwrap().lemma_bytes, 80);
    assert_eq!(h.s.admit_lemmas(job, 101), None, "larger than the window");
    assert_eq!(h.s.admit_lemmas(job, 100), Some(2), "the 50 and the 30");
    assert_eq!(h.s.job(job).unwrap().lemma_bytes, 100);
    assert_eq!(h.s.admit_lemmas(7, 1), None, "no such job");
    drain(&mut h, job);
    assert_eq!(h.s.admit_lemmas(job, 1), None, "the job is over");
}
