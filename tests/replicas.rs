//! Verified jobs (`--replicas K`) against a worker that lies, and reports
//! of units a worker never held. A real coordinator process on 127.0.0.1;
//! the lying worker is a test client speaking the real gRPC protocol that
//! explores its units honestly with the family and corrupts one count.

mod common;

use std::time::Duration;

use common::http::{http_get, metric};
use common::{
    final_results, free_port, run_json, start_coordinator_with, start_worker, submit_job,
    wait_coordinator, wait_status, TempDir,
};
use orchard_core::{ExploreContext, Host};
use orchard_proto::v1::worker_service_client::WorkerServiceClient;
use orchard_proto::v1::*;
use tonic::transport::Channel;
use tonic::Code;

/// A worker speaking the protocol by hand: register, lease, explore with the
/// family in this process, report (honestly or not).
struct RawWorker {
    client: WorkerServiceClient<Channel>,
    id: u64,
}

impl RawWorker {
    async fn register(url: &str, name: &str) -> RawWorker {
        let mut client = WorkerServiceClient::connect(url.to_string()).await.unwrap();
        let id = client
            .register(RegisterRequest {
                hostname: name.into(),
                threads: 1,
                protocol_version: orchard_proto::PROTOCOL_VERSION,
                families: vec!["queens".into()],
            })
            .await
            .unwrap()
            .into_inner()
            .worker_id;
        RawWorker { client, id }
    }

    async fn lease(&mut self, max: u32) -> Vec<UnitLease> {
        self.client
            .lease(LeaseRequest {
                worker_id: self.id,
                max_units: max,
            })
            .await
            .unwrap()
            .into_inner()
            .leases
    }

    /// Explores `unit` whole with the family; `lie` adds one solution.
    async fn report(&mut self, unit: &UnitLease, lie: bool) -> Result<bool, tonic::Status> {
        let (mut summary, nodes) = explore_whole(unit);
        if lie {
            let mut s: orchard_queens::QueensSummary =
                orchard_core::codec::decode(&summary).unwrap();
            s.solutions += 1;
            summary = orchard_core::codec::encode(&s);
        }
        self.report_raw(unit.unit_id, summary, nodes).await
    }

    async fn report_raw(
        &mut self,
        unit_id: u64,
        summary: Vec<u8>,
        nodes: u64,
    ) -> Result<bool, tonic::Status> {
        self.client
            .report(ReportRequest {
                worker_id: self.id,
                unit_id,
                summary,
                nodes,
                ..Default::default()
            })
            .await
            .map(|r| r.into_inner().accepted)
    }
}

/// Explores a leased unit to its end (a verified job's leases have no
/// budget): its summary and nodes.
fn explore_whole(unit: &UnitLease) -> (Vec<u8>, u64) {
    assert_eq!(
        unit.node_budget,
        u64::MAX,
        "a verified unit is explored whole"
    );
    let prepared = orchard::families::registry()
        .by_name(&unit.family)
        .unwrap()
        .prepare(&unit.params_json, &Host::default())
        .unwrap();
    let (stop, bound, progress) = Default::default();
    let ctx = ExploreContext {
        budget: unit.node_budget,
        stop: &stop,
        bound: &bound,
        progress: &progress,
    };
    let x = prepared.explore(&unit.unit, &ctx).unwrap();
    assert!(x.rest.is_empty());
    (x.summary, x.nodes)
}

/// The lines of a results file that are not about verification.
fn answer_lines(path: &str) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("# verified:") && !l.starts_with("# mismatch:"))
        .map(String::from)
        .collect()
}

/// The liar's corrupted replica is outvoted by two honest ones, recorded
/// with both summaries, and the liar gets no more units of the job; a
/// stranger's report of a unit it never leased is refused and counted in
/// /metrics; honest workers finish the job with the exact answer.
#[test]
fn a_lying_worker_is_outvoted_recorded_and_shut_out() {
    let dir = TempDir::new("replicas-liar");
    let (port, http) = (free_port(), free_port());
    let http_addr = format!("127.0.0.1:{http}");
    let _coordinator = start_coordinator_with(&dir, port, &["--http", &http_addr]);
    let url = format!("http://127.0.0.1:{port}");
    wait_coordinator(&url, Duration::from_secs(30));
    let job = submit_job(&url, &["queens", "--n", "10", "--replicas", "2"]);

    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut liar = RawWorker::register(&url, "liar").await;
        let mut h1 = RawWorker::register(&url, "honest-1").await;
        let mut h2 = RawWorker::register(&url, "honest-2").await;
        let mut stranger = RawWorker::register(&url, "stranger").await;

        let unit = liar.lease(1).await.remove(0);
        assert!(liar.report(&unit, true).await.unwrap(), "a replica, taken");
        // The first unit in order again, for its second replica.
        let second = h1.lease(1).await.remove(0);
        assert_eq!(second.unit_id, unit.unit_id);

        // While honest-1 holds it, a worker that never did may not report it.
        let (summary, nodes) = explore_whole(&second);
        let refused = stranger
            .report_raw(unit.unit_id, summary, nodes)
            .await
            .unwrap_err();
        assert_eq!(refused.code(), Code::PermissionDenied, "{refused:?}");
        assert!(refused.message().contains("not leased"), "{refused:?}");

        assert!(h1.report(&second, false).await.unwrap());
        let s = wait_status(&url, job, Duration::from_secs(10), |s| s["mismatches"] == 1);
        assert_eq!(s["verified_units"], 0, "one against one decides nothing");

        let third = h2.lease(1).await.remove(0);
        assert_eq!(third.unit_id, unit.unit_id);
        assert!(h2.report(&third, false).await.unwrap());
        let s = wait_status(&url, job, Duration::from_secs(10), |s| {
            s["verified_units"] == 1
        });
        // Units remain, but none for the liar.
        assert_eq!(s["state"], "running");
        assert!(s["units_pending"].as_u64().unwrap() > 0, "{s}");
        assert!(liar.lease(10).await.is_empty(), "the liar is shut out");
    });
    let metrics = http_get(&format!("http://{http_addr}/metrics"));
    assert_eq!(metric(&metrics, "orchard_reports_refused_total"), 1.0);

    // Honest worker processes finish the job.
    let _w1 = start_worker(&dir, &url, "worker-a");
    let _w2 = start_worker(&dir, &url, "worker-b");
    let done = wait_status(&url, job, Duration::from_secs(120), |s| {
        s["state"] == "done"
    });
    assert_eq!(done["replicas"], 2);
    assert_eq!(done["mismatches"], 1);
    assert_eq!(done["verified_units"], done["units_done"], "{done}");
    let verified = final_results(&url, job);

    // The answer is exactly that of an unverified run.
    let db = dir.path("plain.db");
    let plain = run_json(&[
        "run",
        "queens",
        "--n",
        "10",
        "--db",
        db.to_str().unwrap(),
        "--results-dir",
        dir.path("plain-results").to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(verified["solutions"], plain["solutions"]);
    assert_eq!(verified["distinct"], plain["distinct"]);
    assert_eq!(plain["solutions"], 724, "queens 10 has 724 solutions");

    // The results file says the job was verified and names the liar.
    let file = verified["results_file"].as_str().unwrap();
    let text = std::fs::read_to_string(file).unwrap();
    assert!(
        text.contains("# verified: each unit explored by 2 different workers"),
        "{text}"
    );
    let mismatch = text
        .lines()
        .find(|l| l.starts_with("# mismatch:"))
        .unwrap_or_else(|| panic!("no mismatch line in {text}"));
    assert!(
        mismatch.contains("liar") && mismatch.contains("honest-1"),
        "{mismatch}"
    );
    assert_eq!(
        answer_lines(file),
        answer_lines(plain["results_file"].as_str().unwrap())
    );
}

/// An honest verified run on one machine (`orchard run --replicas 2
/// --workers 2`) finishes, and its results file is the unverified run's
/// plus the verification lines.
#[test]
fn an_honest_verified_run_gives_the_unverified_answer() {
    let dir = TempDir::new("replicas-honest");
    for (family, args) in [
        ("queens", vec!["queens", "--n", "8"]),
        ("hc", vec!["hc", "--columns", "3"]),
    ] {
        let run = |replicas: &str| {
            let db = dir.path(&format!("{family}-{replicas}.db"));
            let results = dir.path(&format!("{family}-{replicas}-results"));
            let mut a = vec!["run"];
            a.extend_from_slice(&args);
            a.extend_from_slice(&[
                "--replicas",
                replicas,
                "--workers",
                "2",
                "--db",
                db.to_str().unwrap(),
                "--results-dir",
                results.to_str().unwrap(),
                "--json",
            ]);
            run_json(&a)
        };
        let (one, two) = (run("1"), run("2"));
        assert_eq!(two["replicas"], 2, "{two}");
        assert_eq!(two["mismatches"], 0, "{two}");
        assert!(two["verified_units"].as_u64().unwrap() > 0, "{two}");
        let (f1, f2) = (
            one["results_file"].as_str().unwrap(),
            two["results_file"].as_str().unwrap(),
        );
        assert_eq!(answer_lines(f1), answer_lines(f2), "{family}");
        assert_eq!(
            std::fs::read_to_string(f1).unwrap(),
            answer_lines(f1).join("\n") + "\n",
            "an unverified job's file has no verification lines"
        );
        assert!(std::fs::read_to_string(f2)
            .unwrap()
            .contains("# verified: each unit explored by 2 different workers"));
    }
}

/// `--replicas 0` and absurd values are refused with one line.
#[test]
fn bad_replica_counts_are_refused() {
    for bad in ["0", "17", "many"] {
        let out = common::run(&["run", "queens", "--n", "6", "--replicas", bad]);
        common::assert_one_line_error(&out, "--replicas");
    }
}
