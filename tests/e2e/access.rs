//! Who may connect: bearer tokens, TLS, and requests that are too large or
//! malformed. Real coordinator processes on 127.0.0.1.

use crate::common;

use std::process::Output;
use std::time::Duration;

use common::raw_worker::explore;
use common::{free_port, orchard, wait_status, Proc, TempDir};
use orchard_proto::v1::job_service_client::JobServiceClient;
use orchard_proto::v1::worker_service_client::WorkerServiceClient;
use orchard_proto::v1::*;
use tonic::transport::Channel;
use tonic::Code;

fn run_with(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut c = orchard();
    c.args(args).env_remove("ORCHARD_TOKEN");
    for (k, v) in envs {
        c.env(k, v);
    }
    c.output().unwrap()
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

fn start_coordinator(dir: &TempDir, port: u16, extra: &[&str]) -> Proc {
    common::start_coordinator_with(dir, port, extra)
}

/// A coordinator without access control, answering on `url`, and a runtime
/// to talk to it through the generated clients. Keep the directory and the
/// process alive for the test's duration.
fn plain_coordinator(name: &str) -> (TempDir, Proc, String, tokio::runtime::Runtime) {
    let dir = TempDir::new(name);
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let coord = start_coordinator(&dir, port, &[]);
    common::wait_coordinator(&url, Duration::from_secs(20));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    (dir, coord, url, rt)
}

fn wait_up(url: &str, extra: &[&str], envs: &[(&str, &str)]) {
    let mut args = vec!["status", "--coordinator", url];
    args.extend_from_slice(extra);
    for _ in 0..200 {
        if run_with(&args, envs).status.success() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("coordinator at {url} did not come up");
}

#[test]
fn a_coordinator_with_a_token_refuses_everyone_else() {
    let dir = TempDir::new("token");
    let token_file = dir.path("token");
    std::fs::write(&token_file, "s3cret-token\n").unwrap();
    let wrong_file = dir.path("wrong");
    std::fs::write(&wrong_file, "not-the-token").unwrap();
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let http_port = free_port();
    let _coord = start_coordinator(
        &dir,
        port,
        &[
            "--token-file",
            token_file.to_str().unwrap(),
            "--http",
            &format!("127.0.0.1:{http_port}"),
        ],
    );
    wait_up(&url, &[], &[("ORCHARD_TOKEN", "s3cret-token")]);

    // No token, a wrong token: refused with Unauthenticated, one line each.
    let err = one_line_error(&run_with(&["status", "--coordinator", &url], &[]));
    assert!(err.contains("no token"), "{err}");
    let err = one_line_error(&run_with(
        &[
            "submit",
            "hc",
            "--columns",
            "3",
            "--coordinator",
            &url,
            "--token-file",
            wrong_file.to_str().unwrap(),
        ],
        &[],
    ));
    assert!(err.contains("wrong token"), "{err}");
    let err = one_line_error(&run_with(
        &["status", "--coordinator", &url],
        &[("ORCHARD_TOKEN", "nope")],
    ));
    assert!(err.contains("wrong token"), "{err}");
    // Changing a job wants the token as reading one does: cancelling and
    // retrying are refused before the job is looked at.
    for command in ["cancel", "retry"] {
        let err = one_line_error(&run_with(&[command, "1", "--coordinator", &url], &[]));
        assert!(err.contains("no token"), "{command}: {err}");
    }
    // A worker without the token is refused too, and says so.
    let out = run_with(
        &["worker", "--coordinator", &url, "--give-up-after", "5"],
        &[],
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr
            .trim_end()
            .lines()
            .last()
            .unwrap()
            .contains("refused"),
        "{stderr}"
    );

    // The right token, from a file or the environment: a job runs to the end.
    let out = run_with(
        &[
            "submit",
            "hc",
            "--columns",
            "3",
            "--coordinator",
            &url,
            "--json",
            "--token-file",
            token_file.to_str().unwrap(),
        ],
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let job: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let job = job["job_id"].as_u64().unwrap();
    let mut worker = {
        let mut c = orchard();
        c.args(["worker", "--coordinator", &url, "--threads", "1"])
            .env("ORCHARD_TOKEN", "s3cret-token")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        Proc(c.spawn().unwrap())
    };
    let mut done = false;
    for _ in 0..300 {
        let out = run_with(
            &["results", &job.to_string(), "--coordinator", &url, "--json"],
            &[("ORCHARD_TOKEN", "s3cret-token")],
        );
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        if r["state"] == "done" {
            assert_eq!(r["h"], 24);
            assert_eq!(r["maximal_count"], 3);
            done = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(done, "job finished with an authenticated worker");
    worker.sigterm();
    assert!(worker.wait_for(Duration::from_secs(10)).unwrap().success());
    // The dashboard, its API and /metrics want the token too.
    for path in ["/", "/metrics", "/api/jobs", "/metrics?token=nope"] {
        assert_eq!(http_status(http_port, path, None), 401, "{path}");
    }
    assert_eq!(
        http_status(http_port, "/metrics", Some("s3cret-token")),
        200
    );
    assert_eq!(
        http_status(http_port, "/api/jobs?token=s3cret-token", None),
        200
    );
    let log = std::fs::read_to_string(dir.path("coordinator.log")).unwrap();
    assert!(log.contains("refused a request"), "refusals are logged");
}

/// A CA, and a certificate for localhost / 127.0.0.1 signed by it: the
/// CA's PEM file, the certificate's, the key's.
fn test_pki(dir: &TempDir) -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    let ca = common::pki::TestCa::new(dir, "test");
    let server = ca.server(dir);
    (ca.pem, server.cert, server.key)
}

#[test]
fn tls_round_trip_with_a_test_ca() {
    let dir = TempDir::new("tls");
    let (ca, cert, key) = test_pki(&dir);
    let other = TempDir::new("tls-other");
    let (other_ca, _, _) = test_pki(&other);
    let port = free_port();
    let _coord = start_coordinator(
        &dir,
        port,
        &[
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
        ],
    );
    let url = format!("https://localhost:{port}");
    let ca_arg = ["--tls-ca", ca.to_str().unwrap()];
    wait_up(&url, &ca_arg, &[]);

    let out = run_with(
        &[
            "submit",
            "hc",
            "--columns",
            "2",
            "--coordinator",
            &url,
            "--json",
            "--tls-ca",
            ca.to_str().unwrap(),
        ],
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _worker = Proc::spawn(
        &[
            "worker",
            "--coordinator",
            &url,
            "--threads",
            "1",
            "--tls-ca",
            ca.to_str().unwrap(),
        ],
        &dir.path("worker.log"),
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let out = run_with(
            &[
                "results",
                "1",
                "--coordinator",
                &url,
                "--json",
                "--tls-ca",
                ca.to_str().unwrap(),
            ],
            &[],
        );
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        if r["state"] == "done" {
            assert_eq!(r["h"], 9);
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "job over TLS did not finish"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // Plain TCP to a TLS coordinator, https without a CA, a CA that did not sign it: all refused.
    one_line_error(&run_with(
        &[
            "status",
            "--coordinator",
            &format!("http://127.0.0.1:{port}"),
        ],
        &[],
    ));
    let err = one_line_error(&run_with(&["status", "--coordinator", &url], &[]));
    assert!(err.contains("--tls-ca"), "{err}");
    let err = one_line_error(&run_with(
        &[
            "status",
            "--coordinator",
            &url,
            "--tls-ca",
            other_ca.to_str().unwrap(),
        ],
        &[],
    ));
    assert!(err.contains("cannot reach"), "{err}");
}

/// Registers a one-thread `hc` worker over a raw gRPC client.
async fn register_hc_worker(w: &mut WorkerServiceClient<Channel>, hostname: &str) -> u64 {
    w.register(RegisterRequest {
        hostname: hostname.into(),
        threads: 1,
        protocol_version: orchard_proto::PROTOCOL_VERSION,
        families: vec!["hc".into()],
    })
    .await
    .unwrap()
    .into_inner()
    .worker_id
}

#[test]
fn oversized_and_malformed_requests_are_refused_without_harm() {
    let (_dir, _coord, url, rt) = plain_coordinator("malformed");
    rt.block_on(async {
        let mut jobs = JobServiceClient::connect(url.clone()).await.unwrap();
        // Unknown family, malformed parameters, invalid parameters.
        for (family, params) in [
            ("nosuch", "{}"),
            ("hc", "{not json"),
            ("hc", r#"{"columns":0,"variant":"pairs","min_length":null}"#),
        ] {
            let err = jobs
                .submit(SubmitRequest {
                    family: family.into(),
                    params_json: params.into(),
                    replicas: 1,
                })
                .await
                .unwrap_err();
            assert_eq!(
                err.code(),
                Code::InvalidArgument,
                "{family} {params}: {err:?}"
            );
        }
        let params = r#"{"columns":2,"variant":"pairs","min_length":null}"#;
        let job = jobs
            .submit(SubmitRequest {
                family: "hc".into(),
                params_json: params.into(),
                replicas: 1,
            })
            .await
            .unwrap()
            .into_inner()
            .job_id;

        let mut w = WorkerServiceClient::connect(url.clone())
            .await
            .unwrap()
            .max_encoding_message_size(256 << 20);
        let bad = w
            .register(RegisterRequest {
                hostname: "x".into(),
                threads: 0,
                protocol_version: orchard_proto::PROTOCOL_VERSION,
                families: vec!["hc".into()],
            })
            .await
            .unwrap_err();
        assert_eq!(bad.code(), Code::InvalidArgument);
        let id = register_hc_worker(&mut w, "tester").await;
        let lease = w
            .lease(LeaseRequest {
                worker_id: id,
                max_units: 1,
            })
            .await
            .unwrap()
            .into_inner();
        let unit = lease.leases.into_iter().next().expect("a unit");

        // A summary that is not one: InvalidArgument, and the unit is not poisoned.
        let garbage = ReportRequest {
            worker_id: id,
            unit_id: unit.unit_id,
            summary: vec![1, 0xff, 0xff, 0xff],
            ..Default::default()
        };
        assert_eq!(
            w.report(garbage).await.unwrap_err().code(),
            Code::InvalidArgument
        );
        let bad_rest = ReportRequest {
            worker_id: id,
            unit_id: unit.unit_id,
            summary: orchard_core::codec::encode(&orchard_hc::HcSummary::default()),
            rest: vec![vec![9, 9, 9]],
            ..Default::default()
        };
        assert_eq!(
            w.report(bad_rest).await.unwrap_err().code(),
            Code::InvalidArgument
        );
        // An oversized message (past the 64 MiB limit) is refused.
        let huge = ReportRequest {
            worker_id: id,
            unit_id: unit.unit_id,
            summary: vec![0; 70 << 20],
            ..Default::default()
        };
        let err = w.report(huge).await.unwrap_err();
        assert!(
            matches!(
                err.code(),
                Code::ResourceExhausted | Code::OutOfRange | Code::Internal | Code::Unknown
            ),
            "{err:?}"
        );

        // The real result of the unit is still accepted and finishes the job.
        let x = explore(&unit, u64::MAX);
        let x_nodes = x.nodes;
        let ok = ReportRequest {
            worker_id: id,
            unit_id: unit.unit_id,
            summary: x.summary,
            nodes: x.nodes,
            rest: x.rest,
            ..Default::default()
        };
        assert!(w.report(ok.clone()).await.unwrap().into_inner().accepted);
        // The same report again (a retry after a lost acknowledgement) is
        // acknowledged and ignored: nothing is counted twice.
        assert!(!w.report(ok).await.unwrap().into_inner().accepted);
        let s = jobs
            .results(ResultsRequest { job_id: job })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(s.status.unwrap().state(), JobState::Done);
        let r: serde_json::Value = serde_json::from_str(&s.result_json).unwrap();
        assert_eq!(r["h"], 9);
        assert_eq!(r["nodes"], x_nodes, "counted once");
    });
    // The coordinator is still serving.
    let s = wait_status(&url, 1, Duration::from_secs(5), |s| s["state"] == "done");
    assert_eq!(s["state"], "done");
}

/// A worker that hangs up in the middle of its report (killed while the
/// coordinator commits it) must not leave the unit half reported: the
/// coordinator finishes what it started, so the job still ends. Reports are
/// abandoned after a short, growing delay until one reaches the coordinator
/// and is dropped there; a unit left half reported would refuse the retry as
/// a duplicate and its job would never finish.
#[test]
fn a_report_abandoned_mid_commit_still_counts() {
    let (_dir, _coord, url, rt) = plain_coordinator("abandoned");
    rt.block_on(async {
        let mut jobs = JobServiceClient::connect(url.clone()).await.unwrap();
        let mut w = WorkerServiceClient::connect(url.clone()).await.unwrap();
        let id = register_hc_worker(&mut w, "quitter").await;
        let mut dropped_mid_report = 0;
        for (attempt, micros) in (0..40u64).map(|i| (i, 20 + 60 * i)) {
            // A fresh one-unit job each time (parameters differ, so the
            // coordinator does not hand back the previous job).
            let (columns, min_length) = if attempt < 3 {
                (1, attempt + 1)
            } else {
                (2, attempt - 2)
            };
            let params =
                format!(r#"{{"columns":{columns},"variant":"pairs","min_length":{min_length}}}"#);
            let job = jobs
                .submit(SubmitRequest {
                    family: "hc".into(),
                    params_json: params,
                    replicas: 1,
                })
                .await
                .unwrap()
                .into_inner()
                .job_id;
            let unit = w
                .lease(LeaseRequest {
                    worker_id: id,
                    max_units: 1,
                })
                .await
                .unwrap()
                .into_inner()
                .leases
                .into_iter()
                .next()
                .expect("a unit");
            assert_eq!(unit.job_id, job);
            let x = explore(&unit, u64::MAX);
            assert!(x.rest.is_empty());
            let report = ReportRequest {
                worker_id: id,
                unit_id: unit.unit_id,
                summary: x.summary,
                nodes: x.nodes,
                rest: x.rest,
                ..Default::default()
            };
            // Hang up after `micros`: on a channel of its own, so that
            // dropping the call resets only this stream.
            let mut quitter = WorkerServiceClient::connect(url.clone()).await.unwrap();
            let abandoned = tokio::time::timeout(
                Duration::from_micros(micros),
                quitter.report(report.clone()),
            )
            .await
            .is_err();
            drop(quitter);
            if !abandoned {
                continue; // the report went through before the hang-up
            }
            // Either the coordinator never saw it (the retry is accepted)
            // or it must finish the job by itself.
            let retry = w.report(report).await.unwrap().into_inner();
            if !retry.accepted {
                dropped_mid_report += 1;
            }
            let done = wait_status(&url, job, Duration::from_secs(10), |s| s["state"] == "done");
            assert_eq!(done["nodes"], x.nodes, "attempt {attempt}: counted once");
        }
        assert!(
            dropped_mid_report > 0,
            "no report was abandoned after reaching the coordinator"
        );
    });
}

/// The HTTP status of `GET path` on 127.0.0.1:`port`, with a bearer token if given.
fn http_status(port: u16, path: &str, token: Option<&str>) -> u16 {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\n{auth}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out.split_whitespace().nth(1).unwrap().parse().unwrap()
}
