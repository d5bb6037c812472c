//! Report-and-lease (`ReportRequest::want_units`): a unit's report also
//! leases the next unit, once the report is durable. Against a real
//! coordinator process over real gRPC, with a worker speaking the protocol
//! by hand: an answer lost on the way (dropped by the client, or the call
//! cut while in flight) neither loses nor doubles a result, and the unit it
//! carried comes back when its lease expires; a refused report leases
//! nothing; a worker that does not ask (an older one) works as before.
//! Lease-ahead (`queue_units`, `started_units`): a worker that holds one
//! unit queued beside its running one counts the tree exactly, with a
//! queued unit handed back and another dropped (back by expiry); a queued
//! unit is not asked to split until it starts.

use crate::common;

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::Duration;

use common::raw_worker::{explore, RawWorker};
use common::{final_results, free_port, start_coordinator_with, status, submit_job};
use common::{wait_coordinator, wait_status, TempDir};
use orchard_proto::v1::*;

/// A coordinator whose leases expire after `ttl` seconds (the raw worker
/// sends no heartbeats: a short one brings a lease whose answer was lost
/// back quickly) and whose units are small (a job of many units).
fn coordinator(dir: &TempDir, ttl: &str) -> (common::Proc, String) {
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let coord = start_coordinator_with(dir, port, &["--lease-ttl", ttl, "--unit-budget", "20000"]);
    wait_coordinator(&url, Duration::from_secs(30));
    (coord, url)
}

const NODES: u64 = 200_000;

fn job(url: &str) -> u64 {
    submit_job(
        url,
        &["synthetic", "--nodes", &NODES.to_string(), "--seed", "5"],
    )
}

/// The report of `unit` explored within its budget, asking for `want`.
fn report_of(w: &RawWorker, unit: &UnitLease, want: u32) -> ReportRequest {
    let x = explore(unit, unit.node_budget);
    ReportRequest {
        worker_id: w.id,
        unit_id: unit.unit_id,
        summary: x.summary,
        nodes: x.nodes,
        rest: x.rest,
        want_units: want,
        ..Default::default()
    }
}

fn assert_exact(url: &str, job: u64) {
    let r = final_results(url, job);
    assert_eq!(r["exact"], true, "{r}");
    assert_eq!(r["nodes"], NODES, "{r}");
}

/// One worker runs the whole job on report-and-lease calls. The answer of
/// one combined call is thrown away as if lost (its retry is a duplicate:
/// acknowledged, not merged again, nothing leased), and another call is cut
/// off while in flight and sent again; the job still counts the tree
/// exactly, and the unit the lost answer carried is leased again after its
/// lease expired.
#[test]
fn a_lost_answer_neither_loses_nor_doubles_and_its_unit_comes_back() {
    let dir = TempDir::new("report-lease-lost");
    let (_coord, url) = coordinator(&dir, "2");
    let job = job(&url);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (lost, served_again) = rt.block_on(async {
        let mut w = RawWorker::register_for(&url, "w", "synthetic").await;
        let mut held: VecDeque<UnitLease> = VecDeque::new();
        let mut seen: HashSet<u64> = HashSet::new();
        let mut lost: Vec<u64> = Vec::new();
        let mut served_again = Vec::new();
        let mut reports = 0;
        let mut via_report = 0;
        loop {
            if held.is_empty() {
                let leases = w.lease(1).await;
                if leases.is_empty() {
                    let s = status(&url, job).unwrap();
                    if s["state"] == "done" {
                        break;
                    }
                    continue;
                }
                held.extend(leases);
            }
            let unit = held.pop_front().unwrap();
            if !seen.insert(unit.unit_id) {
                served_again.push(unit.unit_id);
            }
            let req = report_of(&w, &unit, 1);
            reports += 1;
            if lost.is_empty() && reports >= 3 {
                // The answer is lost: whatever it leased is never run here.
                let first = w.client.report(req.clone()).await.unwrap().into_inner();
                assert!(first.accepted);
                if first.leases.is_empty() {
                    // Nothing pending right then: try the loss again later.
                    continue;
                }
                lost.extend(first.leases.iter().map(|l| l.unit_id));
                seen.extend(first.leases.iter().map(|l| l.unit_id));
                let again = w.client.report(req).await.unwrap().into_inner();
                assert!(!again.accepted, "a retried report is a duplicate");
                assert!(again.leases.is_empty(), "a duplicate leases nothing");
                continue;
            }
            if reports == 6 {
                // Cut off in flight (the client hangs up): sent again, it is
                // merged once whether or not the first attempt landed.
                let mut c = w.client.clone();
                let cut = req.clone();
                let _ = tokio::time::timeout(Duration::from_micros(50), c.report(cut)).await;
            }
            let answer = w.client.report(req).await.unwrap().into_inner();
            if !answer.accepted {
                assert!(answer.leases.is_empty(), "a duplicate leases nothing");
            }
            assert!(answer.leases.len() <= 1, "asked for one unit");
            via_report += answer.leases.len();
            held.extend(answer.leases);
        }
        assert!(via_report > 0, "no unit came with a report");
        (lost, served_again)
    });
    assert_eq!(lost.len(), 1);
    assert!(
        served_again.contains(&lost[0]),
        "the lost answer's unit {} was never leased again ({served_again:?})",
        lost[0]
    );
    assert_exact(&url, job);
}

/// A report the coordinator refuses (the unit is another worker's, or its
/// summary is malformed) leases nothing, though it asked: the job's running
/// units stay the one the other worker holds.
#[test]
fn a_refused_report_leases_nothing() {
    let dir = TempDir::new("report-lease-refused");
    // Long leases: the holder's unit must not expire while the test looks.
    let (_coord, url) = coordinator(&dir, "600");
    let job = job(&url);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut holder = RawWorker::register_for(&url, "holder", "synthetic").await;
        let other = RawWorker::register_for(&url, "other", "synthetic").await;
        let unit = holder.lease(1).await.pop().expect("a unit");
        let running = |url: &str| status(url, job).unwrap()["units_running"].as_u64();
        assert_eq!(running(&url), Some(1));

        // Not its unit: refused, nothing leased.
        let mut stolen = report_of(&holder, &unit, 4);
        stolen.worker_id = other.id;
        let e = other.client.clone().report(stolen).await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::PermissionDenied, "{e}");
        assert_eq!(running(&url), Some(1));

        // Malformed: refused, nothing leased.
        let mut bad = report_of(&holder, &unit, 4);
        bad.summary = b"not a summary".to_vec();
        let e = holder.client.report(bad).await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e}");
        assert_eq!(running(&url), Some(1));

        // The real report is accepted and leases the next unit.
        let ok = holder
            .client
            .report(report_of(&holder, &unit, 1))
            .await
            .unwrap()
            .into_inner();
        assert!(ok.accepted);
        assert_eq!(ok.leases.len(), 1, "{ok:?}");
        assert_eq!(running(&url), Some(1));
        // The unit is the holder's now: another worker may not report it.
        let mut theirs = report_of(&holder, &ok.leases[0], 1);
        theirs.worker_id = other.id;
        let e = other.client.clone().report(theirs).await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::PermissionDenied, "{e}");
        assert_eq!(running(&url), Some(1));
    });
}

/// The report that ends the last running job does not wait for work: its
/// lease half answers at once, empty, with no delay asked (`retry_after_ms`
/// 0; after a wait for work it is 200). A worker drains its slots before it
/// stops, so a report that waited held `orchard run` a second past its job.
#[test]
fn the_report_that_ends_the_last_job_does_not_wait_for_work() {
    let dir = TempDir::new("report-lease-last");
    let (_coord, url) = coordinator(&dir, "30");
    let job = job(&url);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut w = RawWorker::register_for(&url, "w", "synthetic").await;
        // One unit at a time: a report answered with no lease held none
        // but the one it reported, so no unit was left anywhere.
        let mut unit = w.lease(1).await.pop().expect("a unit");
        let mut reports = 0;
        loop {
            let answer = w
                .client
                .report(report_of(&w, &unit, 1))
                .await
                .unwrap()
                .into_inner();
            assert!(answer.accepted);
            reports += 1;
            match answer.leases.len() {
                0 => {
                    assert_eq!(answer.retry_after_ms, 0, "{answer:?}");
                    break;
                }
                1 => unit = answer.leases.into_iter().next().unwrap(),
                n => panic!("{n} units leased for one asked"),
            }
        }
        assert!(reports > 1, "the job had {reports} unit");
    });
    assert_eq!(status(&url, job).unwrap()["state"], "done");
    assert_exact(&url, job);
}

/// A worker that never sets `want_units` (an older one) gets plain
/// answers, leases with `Lease`, and the job is counted exactly.
#[test]
fn an_old_style_worker_still_works() {
    let dir = TempDir::new("report-lease-old");
    let (_coord, url) = coordinator(&dir, "30");
    let job = job(&url);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut w = RawWorker::register_for(&url, "old", "synthetic").await;
        loop {
            let leases = w.lease(2).await;
            if leases.is_empty() {
                if status(&url, job).unwrap()["state"] == "done" {
                    break;
                }
                continue;
            }
            for unit in leases {
                let answer = w
                    .client
                    .report(report_of(&w, &unit, 0))
                    .await
                    .unwrap()
                    .into_inner();
                assert!(answer.accepted);
                assert!(answer.leases.is_empty(), "leased without asking");
            }
        }
    });
    wait_status(&url, job, Duration::from_secs(10), |s| s["state"] == "done");
    assert_exact(&url, job);
}

/// The report of `unit` asking for `want` units to run and `queue` to hold
/// queued, saying which queued units `started`.
fn report_ahead(
    w: &RawWorker,
    unit: &UnitLease,
    want: u32,
    queue: u32,
    started: Vec<u64>,
) -> ReportRequest {
    ReportRequest {
        queue_units: queue,
        started_units: started,
        ..report_of(w, unit, want)
    }
}

/// One worker runs the whole job with lease-ahead, as the real worker
/// does: each report asks for a unit to hold queued, the queued unit starts
/// when the running one ends and the next report says so. One queued unit
/// is handed back (as on SIGTERM), another is dropped silently (as by a
/// killed worker) and comes back when its lease expires; the tree is still
/// counted exactly.
#[test]
fn lease_ahead_counts_exactly_and_queued_units_come_back() {
    let dir = TempDir::new("lease-ahead-exact");
    let (_coord, url) = coordinator(&dir, "2");
    let job = job(&url);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut w = RawWorker::register_for(&url, "ahead", "synthetic").await;
        let mut running: Option<UnitLease> = None;
        let mut queued: Option<UnitLease> = None;
        // How many times each unit was leased here.
        let mut leased: HashMap<u64, usize> = HashMap::new();
        let mut count = |leases: &[UnitLease]| {
            for l in leases {
                *leased.entry(l.unit_id).or_default() += 1;
            }
        };
        let (mut handed_back, mut dropped) = (None, None);
        let (mut reports, mut came_queued) = (0, 0);
        loop {
            let unit = match running.take() {
                Some(u) => u,
                None => {
                    let leases = w.lease(1).await;
                    count(&leases);
                    if leases.is_empty() {
                        if status(&url, job).unwrap()["state"] == "done" {
                            break;
                        }
                        continue;
                    }
                    leases.into_iter().next().unwrap()
                }
            };
            reports += 1;
            let next = queued.take();
            if let Some(q) = &next {
                if handed_back.is_none() && reports >= 3 {
                    // Handed back unstarted (a worker stopping).
                    handed_back = Some(q.unit_id);
                    w.client
                        .return_leases(ReturnLeasesRequest {
                            worker_id: w.id,
                            unit_ids: vec![q.unit_id],
                        })
                        .await
                        .unwrap();
                    let answer = w.client.report(report_ahead(&w, &unit, 1, 0, vec![])).await;
                    let leases = answer.unwrap().into_inner().leases;
                    count(&leases);
                    running = leases.into_iter().next();
                    continue;
                }
                if dropped.is_none() && handed_back.is_some() && reports >= 6 {
                    // Dropped silently (a killed worker): back by expiry.
                    dropped = Some(q.unit_id);
                    let answer = w.client.report(report_ahead(&w, &unit, 1, 0, vec![])).await;
                    let leases = answer.unwrap().into_inner().leases;
                    count(&leases);
                    running = leases.into_iter().next();
                    continue;
                }
            }
            let want = u32::from(next.is_none());
            let started: Vec<u64> = next.iter().map(|q| q.unit_id).collect();
            let answer = w
                .client
                .report(report_ahead(&w, &unit, want, 1, started))
                .await
                .unwrap()
                .into_inner();
            assert!(answer.accepted);
            assert!(
                answer.leases.len() as u32 <= want + 1,
                "asked for {}",
                want + 1
            );
            count(&answer.leases);
            let mut leases = answer.leases.into_iter();
            running = match next {
                Some(q) => Some(q),
                None => leases.next(),
            };
            queued = leases.next();
            came_queued += usize::from(queued.is_some());
        }
        assert!(came_queued > 2, "only {came_queued} units came queued");
        for (what, id) in [("handed back", handed_back), ("dropped", dropped)] {
            let id = id.unwrap_or_else(|| panic!("no queued unit {what}"));
            assert!(
                leased.get(&id).copied().unwrap_or(0) >= 2,
                "the queued unit {id} {what} was never leased again"
            );
        }
    });
    assert_exact(&url, job);
}

/// A unit leased ahead (queued) is not asked to split while it waits,
/// though it is the oldest lease: an idle worker's call asks a running
/// unit of another worker instead; the queued unit's heartbeat renews it
/// (no cancel); once a heartbeat lists it running it has started.
#[test]
fn a_queued_unit_is_not_asked_to_split_until_it_starts() {
    let dir = TempDir::new("lease-ahead-split");
    let (_coord, url) = coordinator(&dir, "600");
    let _job = job(&url);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut a = RawWorker::register_for(&url, "a", "synthetic").await;
        let mut b = RawWorker::register_for(&url, "b", "synthetic").await;
        let mut c = RawWorker::register_for(&url, "c", "synthetic").await;
        // A reports its first unit and holds one queued, nothing running.
        let first = a.lease(1).await.pop().expect("a unit");
        let answer = a
            .client
            .report(report_ahead(&a, &first, 0, 1, vec![]))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(answer.leases.len(), 1, "{answer:?}");
        let queued = answer.leases[0].unit_id;
        // B takes every pending unit: all its leases are younger.
        let mut theirs = Vec::new();
        loop {
            let got = b.lease(64).await;
            if got.is_empty() {
                break;
            }
            theirs.extend(got.into_iter().map(|l| l.unit_id));
        }
        assert!(!theirs.is_empty());
        tokio::time::sleep(Duration::from_millis(700)).await;
        // C is idle: a running unit is asked to split, not the queued one.
        assert!(c.lease(1).await.is_empty());
        let heartbeat = |w: &RawWorker, running: Vec<u64>, queued: Vec<u64>| {
            let mut client = w.client.clone();
            let req = HeartbeatRequest {
                worker_id: w.id,
                running: running
                    .into_iter()
                    .map(|unit_id| UnitProgress { unit_id, nodes: 1 })
                    .collect(),
                bounds: Vec::new(),
                queued,
            };
            async move { client.heartbeat(req).await.unwrap().into_inner() }
        };
        let mine = heartbeat(&a, vec![], vec![queued]).await;
        assert!(mine.split_units.is_empty(), "{mine:?}");
        assert!(
            mine.cancel_units.is_empty(),
            "renewed, not cancelled: {mine:?}"
        );
        let other = heartbeat(&b, theirs.clone(), vec![]).await;
        assert_eq!(other.split_units.len(), 1, "{other:?}");
        assert!(theirs.contains(&other.split_units[0]));
        // Listed running, it has started: renewed as running, not cancelled.
        let started = heartbeat(&a, vec![queued], vec![]).await;
        assert!(started.cancel_units.is_empty(), "{started:?}");
    });
}
