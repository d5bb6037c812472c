//! Report-and-lease (`ReportRequest::want_units`): a unit's report also
//! leases the next unit, once the report is durable. Against a real
//! coordinator process over real gRPC, with a worker speaking the protocol
//! by hand: an answer lost on the way (dropped by the client, or the call
//! cut while in flight) neither loses nor doubles a result, and the unit it
//! carried comes back when its lease expires; a refused report leases
//! nothing; a worker that does not ask (an older one) works as before.

mod common;

use std::collections::{HashSet, VecDeque};
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
