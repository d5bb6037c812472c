//! Mutual TLS: a coordinator started with `--tls-client-ca` accepts only
//! clients presenting a certificate that CA signed, knows each worker by
//! its certificate (`status --json`, the dashboard), and refuses a request
//! for a worker that arrives under another worker's certificate. Real
//! processes, real sockets, a test CA (rcgen).

use crate::common;

use std::process::Output;
use std::time::{Duration, Instant};

use common::pki::{CertFiles, TestCa};
use common::raw_worker::RawWorker;
use common::{free_port, orchard, run_json, Proc, TempDir};
use orchard_proto::access::{endpoint, ClientIdentity, ClientTls};
use orchard_proto::v1::worker_service_client::WorkerServiceClient;
use orchard_proto::v1::{LeaseRequest, RegisterRequest};
use tonic::Code;

/// The job: hc with `--min-length`, whose node count does not depend on
/// how the tree was cut, on units of at most `UNIT_BUDGET` nodes so that
/// both workers get some.
const JOB: &[&str] = &["hc", "--columns", "3", "--min-length", "1"];
const UNIT_BUDGET: &str = "300";

fn run_with(args: &[String]) -> Output {
    orchard()
        .args(args)
        .env_remove("ORCHARD_TOKEN")
        .output()
        .unwrap()
}

fn one_line_error(out: &Output) -> String {
    assert!(
        !out.status.success(),
        "expected failure: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let err = String::from_utf8_lossy(&out.stderr).trim_end().to_string();
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("error:"), "{err}");
    err
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// `--coordinator URL --tls-ca CA` and, if given, a client certificate.
fn access(url: &str, ca: &TestCa, client: Option<&CertFiles>) -> Vec<String> {
    let mut v = strings(&["--coordinator", url, "--tls-ca", ca.pem.to_str().unwrap()]);
    if let Some(c) = client {
        v.extend(c.client_flags());
    }
    v
}

fn client_tls(ca: &TestCa, client: &CertFiles) -> ClientTls {
    ClientTls {
        ca: Some(ca.pem.clone()),
        identity: Some(ClientIdentity {
            cert: client.cert.clone(),
            key: client.key.clone(),
        }),
    }
}

#[test]
fn a_coordinator_with_a_client_ca_knows_its_workers_by_certificate() {
    let dir = TempDir::new("mtls");
    let ca = TestCa::new(&dir, "cluster");
    let server = ca.server(&dir);
    let (alice, bob, admin) = (
        ca.client(&dir, "worker-alice"),
        ca.client(&dir, "worker-bob"),
        ca.client(&dir, "admin"),
    );
    let stranger_ca = TestCa::new(&dir, "stranger");
    let stranger = stranger_ca.client(&dir, "worker-alice");

    let port = free_port();
    let url = format!("https://localhost:{port}");
    let _coord = common::start_coordinator_with(
        &dir,
        port,
        &[
            "--tls-cert",
            server.cert.to_str().unwrap(),
            "--tls-key",
            server.key.to_str().unwrap(),
            "--tls-client-ca",
            ca.pem.to_str().unwrap(),
            "--unit-budget",
            UNIT_BUDGET,
        ],
    );
    let status_args = |client: Option<&CertFiles>| {
        let mut a = strings(&["status", "--json"]);
        a.extend(access(&url, &ca, client));
        a
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while !run_with(&status_args(Some(&admin))).status.success() {
        assert!(Instant::now() < deadline, "coordinator did not come up");
        std::thread::sleep(Duration::from_millis(100));
    }

    // No client certificate, or one another CA signed (with the very name
    // of a real worker): refused, one line each.
    // The coordinator closes the connection of a client without a
    // certificate before it can say why: the client says what is missing.
    let err = one_line_error(&run_with(&status_args(None)));
    assert!(err.contains("--tls-client-cert"), "{err}");
    let mut args = strings(&["status"]);
    args.extend(access(&url, &ca, Some(&stranger)));
    let err = one_line_error(&run_with(&args));
    assert!(err.contains("status: transport error"), "{err}");
    // A worker without a certificate gets nowhere either.
    let mut args = strings(&["worker", "--threads", "1", "--give-up-after", "2"]);
    args.extend(access(&url, &ca, None));
    let out = run_with(&args);
    assert!(!out.status.success(), "a worker without a certificate ran");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let last = stderr.trim_end().lines().last().unwrap_or_default();
    assert!(
        last.starts_with("error:") && last.contains("--tls-client-cert"),
        "{stderr}"
    );

    // Two workers, two certificates: the job finishes with the single
    // process's answer, and status shows who they are.
    let mut submit = strings(&["submit"]);
    submit.extend(strings(JOB));
    submit.extend(access(&url, &ca, Some(&admin)));
    submit.push("--json".into());
    let out = run_with(&submit);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let job = serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()["job_id"]
        .as_u64()
        .unwrap();
    let worker = |name: &str, cert: &CertFiles| {
        let mut args = strings(&["worker", "--threads", "1", "--name", name]);
        args.extend(access(&url, &ca, Some(cert)));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        Proc::spawn(&args, &dir.path(&format!("{name}.log")))
    };
    let _a = worker("host-a", &alice);
    let _b = worker("host-b", &bob);
    let mut results = strings(&["results", &job.to_string(), "--json"]);
    results.extend(access(&url, &ca, Some(&admin)));
    let deadline = Instant::now() + Duration::from_secs(60);
    let answer = loop {
        let out = run_with(&results);
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        if r["state"] == "done" {
            break r;
        }
        assert!(Instant::now() < deadline, "job did not finish: {r}");
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut single = strings(&["run"]);
    single.extend(strings(JOB));
    single.extend(strings(&[
        "--db",
        dir.path("single.db").to_str().unwrap(),
        "--json",
    ]));
    let single = run_json(&single.iter().map(String::as_str).collect::<Vec<_>>());
    for key in ["max_length", "maximal_count", "nodes", "histogram"] {
        assert_eq!(answer[key], single[key], "{key}");
    }

    let status = run_json(
        &status_args(Some(&admin))
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    let workers = status["workers"].as_array().unwrap();
    assert_eq!(workers.len(), 2, "{status}");
    let by_host = |h: &str| workers.iter().find(|w| w["hostname"] == h).unwrap();
    let (wa, wb) = (by_host("host-a"), by_host("host-b"));
    assert_eq!(wa["certificate"], "worker-alice");
    assert_eq!(wb["certificate"], "worker-bob");
    assert_ne!(wa["certificate_sha256"], wb["certificate_sha256"]);
    assert_eq!(wa["certificate_sha256"].as_str().unwrap().len(), 64);
    // Every node of the answer was reported by one of the two.
    assert_eq!(
        wa["nodes"].as_u64().unwrap() + wb["nodes"].as_u64().unwrap(),
        single["nodes"].as_u64().unwrap(),
        "{status}"
    );

    // Bob's certificate cannot speak for Alice's worker: a lease asked
    // under her worker id is refused, and she is not disturbed.
    let alice_id = wa["worker_id"].as_u64().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let channel = endpoint(&url, &client_tls(&ca, &bob))
            .unwrap()
            .connect()
            .await
            .unwrap();
        let mut w = WorkerServiceClient::new(channel);
        let err = w
            .lease(LeaseRequest {
                worker_id: alice_id,
                max_units: 1,
            })
            .await
            .unwrap_err();
        assert_eq!(err.code(), Code::PermissionDenied, "{err:?}");
        assert!(err.message().contains("worker-alice"), "{err:?}");
        // Registering under its own certificate is fine: a third worker.
        let id = w
            .register(RegisterRequest {
                hostname: "bob-again".into(),
                threads: 1,
                protocol_version: orchard_proto::PROTOCOL_VERSION,
                families: vec!["hc".into()],
            })
            .await
            .unwrap()
            .into_inner()
            .worker_id;
        assert_ne!(id, alice_id);
    });
    let log = std::fs::read_to_string(dir.path("coordinator.log")).unwrap();
    assert!(
        log.contains("registered under another certificate"),
        "the refusal is logged"
    );
}

/// A client certificate needs TLS: over plain http:// it is refused
/// before any connection, in one line; so is a certificate without a key.
#[test]
fn a_client_certificate_without_tls_is_a_usage_error() {
    let dir = TempDir::new("mtls-usage");
    let ca = TestCa::new(&dir, "usage");
    let me = ca.client(&dir, "me");
    let mut args = strings(&["status", "--coordinator", "http://127.0.0.1:1"]);
    args.extend(me.client_flags());
    let err = one_line_error(&run_with(&args));
    assert!(err.contains("--tls-ca"), "{err}");
    let err = one_line_error(&run_with(&strings(&[
        "status",
        "--coordinator",
        "https://127.0.0.1:1",
        "--tls-ca",
        ca.pem.to_str().unwrap(),
        "--tls-client-cert",
        me.cert.to_str().unwrap(),
    ])));
    assert!(err.contains("--tls-client-key"), "{err}");
}

/// Under mutual TLS a worker is known by its certificate, not by the name
/// it declares: of two workers that declare the same name under different
/// certificates, the one outvoted is excluded and the other still gets the
/// job's units; the liar's certificate stays excluded under any name it
/// registers with, also after the coordinator is SIGKILLed and restarted,
/// and status names it by certificate.
#[test]
fn under_mutual_tls_the_certificate_not_the_name_is_excluded() {
    let dir = TempDir::new("mtls-exclusion");
    let ca = TestCa::new(&dir, "cluster");
    let server = ca.server(&dir);
    let (liar_cert, honest_cert, other_cert, admin) = (
        ca.client(&dir, "liar-cert"),
        ca.client(&dir, "honest-cert"),
        ca.client(&dir, "other-cert"),
        ca.client(&dir, "admin"),
    );
    let port = free_port();
    let url = format!("https://localhost:{port}");
    let coordinator_args = [
        "--tls-cert",
        server.cert.to_str().unwrap(),
        "--tls-key",
        server.key.to_str().unwrap(),
        "--tls-client-ca",
        ca.pem.to_str().unwrap(),
    ];
    let mut coordinator = common::start_coordinator_with(&dir, port, &coordinator_args);
    let admin_run = |args: &[&str]| {
        let mut a = strings(args);
        a.extend(access(&url, &ca, Some(&admin)));
        a.push("--json".into());
        run_with(&a)
    };
    let wait_up = || {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !admin_run(&["status"]).status.success() {
            assert!(Instant::now() < deadline, "coordinator did not come up");
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    let job_status = |job: u64| -> serde_json::Value {
        let out = admin_run(&["status", &job.to_string()]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    wait_up();
    let out = admin_run(&["submit", "queens", "--n", "8", "--replicas", "2"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let job = serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()["job_id"]
        .as_u64()
        .unwrap();

    let rt = tokio::runtime::Runtime::new().unwrap();
    let connect = |cert: &CertFiles| {
        let tls = client_tls(&ca, cert);
        let url = url.clone();
        async move {
            let channel = endpoint(&url, &tls).unwrap().connect().await.unwrap();
            WorkerServiceClient::new(channel)
        }
    };
    let replicated = rt.block_on(async {
        // The liar and an honest worker declare the same name; a third
        // worker on another host takes the second replica (replicas go to
        // another host while one is live), the honest namesake the third.
        let mut liar = RawWorker::register_on(connect(&liar_cert).await, "shared", "queens").await;
        let mut honest =
            RawWorker::register_on(connect(&honest_cert).await, "shared", "queens").await;
        let mut other =
            RawWorker::register_on(connect(&other_cert).await, "elsewhere", "queens").await;
        let unit = liar.lease(1).await.remove(0);
        assert!(liar.report(&unit, true).await.unwrap());
        for w in [&mut other, &mut honest] {
            let again = w.lease(1).await.remove(0);
            assert_eq!(again.unit_id, unit.unit_id);
            assert!(w.report(&again, false).await.unwrap());
        }
        assert!(liar.lease(10).await.is_empty(), "the liar is shut out");
        // Its namesake under another certificate is not.
        let next = honest.lease(1).await;
        assert_eq!(next.len(), 1, "the honest namesake still gets units");
        assert!(honest.report(&next[0], false).await.unwrap());
        // The liar's certificate under a new name: still excluded.
        let mut renamed =
            RawWorker::register_on(connect(&liar_cert).await, "fresh-name", "queens").await;
        assert!(
            renamed.lease(10).await.is_empty(),
            "excluded by certificate"
        );
        next[0].unit_id
    });
    let s = job_status(job);
    let excluded = s["excluded"].as_array().unwrap();
    assert_eq!(excluded.len(), 1, "{s}");
    let label = excluded[0].as_str().unwrap();
    assert!(label.starts_with("cert:liar-cert sha256:"), "{label}");
    assert_eq!(label.len(), "cert:liar-cert sha256:".len() + 64, "{label}");

    coordinator.sigkill();
    let _coordinator = common::start_coordinator_with(&dir, port, &coordinator_args);
    wait_up();
    assert_eq!(
        job_status(job)["excluded"],
        s["excluded"],
        "kept across the crash"
    );
    rt.block_on(async {
        let mut liar = RawWorker::register_on(connect(&liar_cert).await, "shared", "queens").await;
        assert!(
            liar.lease(10).await.is_empty(),
            "still excluded after the restart"
        );
        let mut honest =
            RawWorker::register_on(connect(&honest_cert).await, "shared", "queens").await;
        let more = honest.lease(1).await;
        assert_eq!(more.len(), 1, "its namesake still gets units");
        // Not the unit it explored before the crash (the first pending one):
        // one certificate is one vote, whatever its registrations.
        assert_ne!(
            more[0].unit_id, replicated,
            "a second vote of one certificate"
        );
        assert!(honest.report(&more[0], false).await.unwrap());
    });
}
