//! The slot loop driven by a fake coordinator ([`Fake`]: scripted answers,
//! every call recorded) on units of a family of the tests' own ([`Gate`]:
//! a unit runs until its test lets it finish or it is asked to stop), so
//! that each test decides when each unit ends and what each answer brings.
//!
//! Unit ids are unique across the tests: the gate's state is shared by the
//! tests of the process, which run in parallel.

use std::collections::{BTreeSet, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use orchard_core::{
    codec, Exploration, ExploreContext, FamilyError, FamilyReport, Host, ParamError, Registry,
    SearchFamily,
};
use orchard_proto::v1::*;
use tokio::sync::Semaphore;
use tonic::Status;

use super::*;
use crate::heartbeat::cancel_units;
use crate::runner::{State, WorkerConfig};
use crate::{OpenJobs, WorkerMetrics};

/// Units allowed to finish.
static FINISH: Mutex<BTreeSet<u64>> = Mutex::new(BTreeSet::new());
/// Units whose exploration started.
static STARTED: Mutex<BTreeSet<u64>> = Mutex::new(BTreeSet::new());

/// A unit is its id; exploring it waits until the test lets it finish
/// (one node) or its stop flag is set (one node, and itself as the rest).
struct Gate;

impl SearchFamily for Gate {
    const NAME: &'static str = "gate";
    const ABOUT: &'static str = "units that end when their test says";
    type Params = ();
    type Unit = u64;
    type Summary = u64;

    fn new(_: (), _: &Host) -> Result<Self, ParamError> {
        Ok(Gate)
    }

    fn root_units(&self) -> Vec<u64> {
        Vec::new()
    }

    fn explore(
        &self,
        unit: &u64,
        ctx: &ExploreContext<'_>,
    ) -> Result<Exploration<u64, u64>, FamilyError> {
        STARTED.lock().unwrap().insert(*unit);
        loop {
            if FINISH.lock().unwrap().contains(unit) {
                return Ok(Exploration::Finished(1));
            }
            if ctx.stop.load(Ordering::Relaxed) {
                return Ok(Exploration::Split {
                    explored: 1,
                    rest: vec![*unit],
                });
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    fn merge(&self, into: &mut u64, other: u64) -> Result<(), FamilyError> {
        *into += other;
        Ok(())
    }

    fn nodes(summary: &u64) -> u64 {
        *summary
    }

    fn report(&self, _: &u64) -> FamilyReport {
        FamilyReport {
            json: serde_json::Value::Null,
            text: Vec::new(),
            results_lines: Vec::new(),
        }
    }
}

/// Whether a [`SlowOpen`] job is being opened, and whether it may finish.
static OPENING: AtomicBool = AtomicBool::new(false);
static OPENED: AtomicBool = AtomicBool::new(false);

/// [`Gate`]'s units, in a job that takes until its test says to open (as a
/// job whose large cache loads for longer than a lease lasts).
struct SlowOpen;

impl SearchFamily for SlowOpen {
    const NAME: &'static str = "slow-open";
    const ABOUT: &'static str = "a job that opens when its test says";
    type Params = ();
    type Unit = u64;
    type Summary = u64;

    fn new(_: (), _: &Host) -> Result<Self, ParamError> {
        OPENING.store(true, Ordering::SeqCst);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !OPENED.load(Ordering::SeqCst) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        Ok(SlowOpen)
    }

    fn root_units(&self) -> Vec<u64> {
        Vec::new()
    }

    fn explore(
        &self,
        unit: &u64,
        ctx: &ExploreContext<'_>,
    ) -> Result<Exploration<u64, u64>, FamilyError> {
        Gate.explore(unit, ctx)
    }

    fn merge(&self, into: &mut u64, other: u64) -> Result<(), FamilyError> {
        Gate.merge(into, other)
    }

    fn nodes(summary: &u64) -> u64 {
        *summary
    }

    fn report(&self, summary: &u64) -> FamilyReport {
        Gate.report(summary)
    }
}

/// A coordinator that answers each report with the next scripted leases
/// (none once the script is out) and records every call.
#[derive(Default)]
struct Fake {
    answers: Mutex<VecDeque<Vec<UnitLease>>>,
    /// Units whose report's answer waits until the test releases it.
    held: Mutex<HashSet<u64>>,
    /// Report attempts failing with UNAVAILABLE, the first ones first.
    unavailable: Mutex<u32>,
    /// Every report attempt, in order, when it arrived.
    reports: Mutex<Vec<ReportRequest>>,
    /// Every unit handed back, in order.
    returned: Mutex<Vec<u64>>,
}

impl Coordinator for Arc<Fake> {
    fn report(&self, req: ReportRequest) -> Call<ReportResponse> {
        let fake = self.clone();
        Box::pin(async move {
            fake.reports.lock().unwrap().push(req.clone());
            while fake.held.lock().unwrap().contains(&req.unit_id) {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            {
                let mut unavailable = fake.unavailable.lock().unwrap();
                if *unavailable > 0 {
                    *unavailable -= 1;
                    return Err(Status::unavailable("scripted"));
                }
            }
            let leases = fake.answers.lock().unwrap().pop_front().unwrap_or_default();
            Ok(ReportResponse {
                accepted: true,
                leases,
                ..Default::default()
            })
        })
    }

    fn return_leases(&self, req: ReturnLeasesRequest) -> Call<()> {
        self.returned.lock().unwrap().extend(req.unit_ids);
        Box::pin(async { Ok(()) })
    }
}

impl Fake {
    /// The next report is answered with leases of `units` (run-now first).
    fn answer(&self, units: &[u64]) {
        let leases = units.iter().map(|&u| lease(u)).collect();
        self.answers.lock().unwrap().push_back(leases);
    }

    fn hold(&self, unit: u64) {
        self.held.lock().unwrap().insert(unit);
    }

    fn release(&self, unit: u64) {
        self.held.lock().unwrap().remove(&unit);
    }

    /// The units reported, in order.
    fn reported(&self) -> Vec<u64> {
        self.reports
            .lock()
            .unwrap()
            .iter()
            .map(|r| r.unit_id)
            .collect()
    }

    /// The (last) report of `unit`.
    fn report_of(&self, unit: u64) -> ReportRequest {
        let reports = self.reports.lock().unwrap();
        let r = reports.iter().rev().find(|r| r.unit_id == unit);
        r.unwrap_or_else(|| panic!("unit {unit} not reported"))
            .clone()
    }

    fn returned(&self) -> Vec<u64> {
        self.returned.lock().unwrap().clone()
    }
}

fn lease(unit: u64) -> UnitLease {
    UnitLease {
        unit_id: unit,
        job_id: 1,
        family: Gate::NAME.to_string(),
        params_json: "null".to_string(),
        unit: codec::encode(&unit),
        node_budget: 1_000_000,
        ..Default::default()
    }
}

/// A worker of one slot, registered as worker 7, whose slots call `Fake`.
/// Its gRPC client is never used: it connects on its first call.
fn worker() -> (Arc<State>, Arc<Fake>, Arc<Semaphore>) {
    let config = WorkerConfig {
        coordinator: "http://127.0.0.1:9".to_string(),
        jobs: Arc::new(OpenJobs::new(
            Registry::default().with::<Gate>().with::<SlowOpen>(),
            Host::default(),
        )),
        threads: 1,
        name: "test".to_string(),
        give_up_after: Duration::from_secs(10),
        token: None,
        tls: Default::default(),
        metrics: Arc::new(WorkerMetrics::default()),
        lemma_interval: None,
    };
    let fake = Arc::new(Fake::default());
    let mut state = State::new(config).unwrap();
    state.coordinator = Box::new(fake.clone());
    state.worker_id.store(7, Ordering::SeqCst);
    (Arc::new(state), fake, Arc::new(Semaphore::new(1)))
}

/// Starts the slot on `unit`, as the lease loop does on a `Lease` answer.
fn start(state: &Arc<State>, slots: &Arc<Semaphore>, unit: u64) {
    let permit = slots.clone().try_acquire_owned().expect("a free slot");
    start_unit(state, lease(unit), permit);
}

fn finish(unit: u64) {
    FINISH.lock().unwrap().insert(unit);
}

fn started(unit: u64) -> bool {
    STARTED.lock().unwrap().contains(&unit)
}

fn running(state: &State, unit: u64) -> bool {
    state.running.lock().unwrap().contains_key(&unit)
}

/// Whether `unit` is held queued, not cancelled.
fn queued(state: &State, unit: u64) -> bool {
    state.queued.lock().unwrap().get(&unit) == Some(&false)
}

/// As a heartbeat's answer cancelling `units` does.
fn cancel(state: &State, units: &[u64]) {
    let running = state.running.lock().unwrap();
    cancel_units(&running, &mut state.queued.lock().unwrap(), units);
}

/// Waits until `cond` holds (panics after 10 s, naming `what`).
async fn until(what: &str, cond: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting: {what}");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// Waits until the slot has let its permit go.
async fn slot_freed(slots: &Semaphore) {
    until("the slot is freed", || slots.available_permits() == 1).await;
}

/// Starts the slot on `first`, which ends at once and whose report is
/// answered with `answer`; returns once the slot runs `answer[0]` and
/// holds `answer[1]` queued.
async fn first_answered(
    state: &Arc<State>,
    fake: &Fake,
    slots: &Arc<Semaphore>,
    first: u64,
    answer: &[u64],
) {
    fake.answer(answer);
    start(state, slots, first);
    finish(first);
    until("the answer's units run and wait queued", || {
        running(state, answer[0]) && queued(state, answer[1])
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_unit_starts_when_the_running_one_ends_and_is_reported_started() {
    let (state, fake, slots) = worker();
    first_answered(&state, &fake, &slots, 11, &[12, 13]).await;
    // The first report frees the slot: it asks for a unit to run now and
    // one to hold queued.
    let r = fake.report_of(11);
    assert_eq!((r.want_units, r.queue_units), (1, 1));
    assert!(r.started_units.is_empty());
    assert!(!started(13), "a queued unit waits for the running one");

    // 12's report is not answered until released: 13 must start anyway.
    fake.hold(12);
    finish(12);
    until("13 runs before 12's report is answered", || {
        running(&state, 13)
    })
    .await;
    let r = fake.report_of(12);
    assert_eq!(r.worker_id, 7);
    assert_eq!(r.started_units, [13]);
    // 13 runs on the slot: only a unit to queue is asked for.
    assert_eq!((r.want_units, r.queue_units), (0, 1));
    assert!(state.queued.lock().unwrap().is_empty());
    assert_eq!(slots.available_permits(), 0);
    fake.release(12);

    // The script is out: 13's report brings nothing, so the slot ends.
    finish(13);
    slot_freed(&slots).await;
    let r = fake.report_of(13);
    assert_eq!((r.want_units, r.queue_units), (1, 1));
    assert!(r.started_units.is_empty());
    assert_eq!(fake.reported(), [11, 12, 13]);
    assert!(fake.returned().is_empty());
    assert_eq!(state.stats.lock().unwrap().units_reported, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_hands_the_queued_unit_back_and_reports_the_rest() {
    let (state, fake, slots) = worker();
    first_answered(&state, &fake, &slots, 21, &[22, 23]).await;

    state.stop_all();
    slot_freed(&slots).await;
    assert_eq!(fake.returned(), [23]);
    assert!(!started(23), "a queued unit is not started once stopping");
    assert!(state.queued.lock().unwrap().is_empty());
    // 22 stopped early and hands back its rest, asking for nothing.
    let r = fake.report_of(22);
    assert!(r.stopped);
    assert_eq!(r.rest, [codec::encode(&22u64)]);
    assert_eq!((r.want_units, r.queue_units), (0, 0));
    assert!(r.started_units.is_empty());
    assert_eq!(fake.reported(), [21, 22]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_unit_is_not_reported_and_its_queued_successor_runs() {
    let (state, fake, slots) = worker();
    first_answered(&state, &fake, &slots, 31, &[32, 33]).await;

    cancel(&state, &[32]);
    until("33 runs", || running(&state, 33)).await;
    assert_eq!(fake.reported(), [31], "a cancelled unit is not reported");
    finish(33);
    slot_freed(&slots).await;
    assert_eq!(fake.reported(), [31, 33]);
    // No report carried 33's start: the next heartbeat lists it running.
    let r = fake.report_of(33);
    assert!(r.started_units.is_empty());
    assert_eq!((r.want_units, r.queue_units), (1, 1));
    let m = &state.config.metrics;
    assert_eq!(m.units_cancelled.load(Ordering::Relaxed), 1);
    assert_eq!(m.units_running.load(Ordering::Relaxed), 0);
    assert!(fake.returned().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_queued_unit_is_dropped_not_started() {
    let (state, fake, slots) = worker();
    first_answered(&state, &fake, &slots, 41, &[42, 43]).await;

    cancel(&state, &[43]);
    finish(42);
    slot_freed(&slots).await;
    assert!(!started(43));
    assert!(state.queued.lock().unwrap().is_empty());
    // With nothing to start, 42's report asks for a unit to run now.
    let r = fake.report_of(42);
    assert!(r.started_units.is_empty());
    assert_eq!((r.want_units, r.queue_units), (1, 1));
    // The coordinator cancelled it: nothing to hand back.
    assert!(fake.returned().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extra_leases_in_a_report_answer_are_handed_back_not_run() {
    let (state, fake, slots) = worker();
    // Asked for one to run and one to queue; given four.
    first_answered(&state, &fake, &slots, 51, &[52, 53, 54, 55]).await;
    until("54 and 55 handed back", || fake.returned() == [54, 55]).await;

    state.stop_all();
    slot_freed(&slots).await;
    assert_eq!(fake.returned(), [54, 55, 53]);
    for unit in [53, 54, 55] {
        assert!(!started(unit), "unit {unit} ran");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_is_retried_under_the_workers_current_id() {
    let (state, fake, slots) = worker();
    *fake.unavailable.lock().unwrap() = 1;
    fake.hold(61);
    start(&state, &slots, 61);
    finish(61);
    until("the first attempt", || {
        fake.reports.lock().unwrap().len() == 1
    })
    .await;
    // As if the worker registered again while the attempt failed.
    state.worker_id.store(8, Ordering::SeqCst);
    fake.release(61);
    slot_freed(&slots).await;
    let ids: Vec<(u64, u64)> = fake
        .reports
        .lock()
        .unwrap()
        .iter()
        .map(|r| (r.unit_id, r.worker_id))
        .collect();
    assert_eq!(ids, [(61, 7), (61, 8)]);
    // Counted once, however many attempts.
    assert_eq!(state.stats.lock().unwrap().units_reported, 1);
    assert!(state.fatal.lock().unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_unit_whose_job_cannot_open_is_reported_failed_asking_for_nothing() {
    let (state, fake, slots) = worker();
    let permit = slots.clone().try_acquire_owned().unwrap();
    let bad = UnitLease {
        family: "no-such-family".to_string(),
        ..lease(71)
    };
    start_unit(&state, bad, permit);
    slot_freed(&slots).await;
    let r = fake.report_of(71);
    assert!(r.error.contains("cannot load job 1"), "{}", r.error);
    assert!(!r.retryable);
    assert_eq!((r.want_units, r.queue_units), (0, 0));
    assert!(!started(71));
}

fn leases(ids: &[u64]) -> Vec<UnitLease> {
    ids.iter()
        .map(|&unit_id| UnitLease {
            unit_id,
            ..Default::default()
        })
        .collect()
}

fn ids(kept: &VecDeque<UnitLease>) -> Vec<u64> {
    kept.iter().map(|l| l.unit_id).collect()
}

#[test]
fn beyond_keeps_the_count_asked_and_hands_back_the_rest() {
    // A `Lease` answer with more units than free slots, and a report's
    // answer with more than it asked for: the same rule for both.
    let (kept, extra) = beyond(leases(&[7, 8, 9]), 1, "lease");
    assert_eq!(ids(&kept), [7]);
    assert_eq!(extra, [8, 9]);
    let (kept, extra) = beyond(leases(&[4, 5]), 0, "report");
    assert!(kept.is_empty());
    assert_eq!(extra, [4, 5]);
}

#[test]
fn beyond_keeps_every_lease_within_the_count() {
    let (kept, extra) = beyond(leases(&[1, 2]), 3, "lease");
    assert_eq!(ids(&kept), [1, 2]);
    assert!(extra.is_empty());
    let (kept, extra) = beyond(Vec::new(), 2, "report");
    assert!(kept.is_empty() && extra.is_empty());
}

/// Opening a job may take longer than a lease lasts (a large cache
/// loading). Meanwhile its unit is listed as running, which the heartbeat
/// renews, and the worker's jobs are not locked, which the heartbeat reads;
/// once open, the unit runs and is reported. Fails if the unit is listed
/// only once its job is open, or the job is opened under the lock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_unit_whose_job_is_opening_is_running_and_its_worker_heartbeats() {
    let (state, fake, slots) = worker();
    let permit = slots.clone().try_acquire_owned().expect("a free slot");
    let mut slow = lease(91);
    slow.family = SlowOpen::NAME.to_string();
    slow.job_id = 2;
    let starter = state.clone();
    tokio::spawn(async move { start_unit(&starter, slow, permit) });
    until("the job is opening", || OPENING.load(Ordering::SeqCst)).await;
    assert!(
        running(&state, 91),
        "listed for the heartbeat while its job opens"
    );
    assert!(
        state.jobs.try_lock().is_ok(),
        "the worker's jobs are not locked while one opens"
    );
    OPENED.store(true, Ordering::SeqCst);
    finish(91);
    slot_freed(&slots).await;
    assert_eq!(fake.reported(), [91]);
}
