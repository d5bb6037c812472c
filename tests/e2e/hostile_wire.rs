//! Hostile input on the wire: mutated encodings of valid orchard gRPC
//! requests, and well-formed requests with hostile fields (huge counts,
//! unknown ids, giant repeated fields, long strings), sent as raw bytes in
//! gRPC frames to a real coordinator process over a real socket. The
//! coordinator must answer each with a value or an error, never panic or
//! die; afterwards a clean job's answer must be the single process's.
//!
//! The test runs a fast subset (`ORCHARD_FUZZ_WIRE_INPUTS`, default 3,000);
//! `bench/hostile.sh` runs a million and records the figures in
//! BENCHMARKS.md. `ORCHARD_FUZZ_SEED` changes the inputs.

use crate::common;
use common::env_u64;

use std::time::{Duration, Instant};

use common::raw_worker::explore;
use common::{free_port, run_json, start_coordinator_with, start_worker, wait_status, TempDir};
use orchard_core::estimate::Rng;
use orchard_core::hostile::mutate;
use orchard_core::DynExploration;
use orchard_proto::v1::job_service_client::JobServiceClient;
use orchard_proto::v1::worker_service_client::WorkerServiceClient;
use orchard_proto::v1::*;
use prost::bytes::{Buf, BufMut};
use prost::Message;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::codegen::http::uri::PathAndQuery;
use tonic::transport::Channel;
use tonic::{Code, Status};

/// The job the hostile requests are about (it has running units), and the
/// clean job afterwards: hc with `--min-length`, whose node count does not
/// depend on how the tree was cut.
const FUZZED_JOB: &str = r#"{"columns":3,"variant":"pairs","min_length":1}"#;
const CLEAN_JOB: &[&str] = &[
    "hc",
    "--columns",
    "3",
    "--variant",
    "subsets",
    "--min-length",
    "1",
];

/// Request bodies go out exactly as given; answers come back as bytes.
#[derive(Clone, Copy, Default)]
struct Raw;

impl Codec for Raw {
    type Encode = Vec<u8>;
    type Decode = Vec<u8>;
    type Encoder = Raw;
    type Decoder = Raw;
    fn encoder(&mut self) -> Raw {
        Raw
    }
    fn decoder(&mut self) -> Raw {
        Raw
    }
}

impl Encoder for Raw {
    type Item = Vec<u8>;
    type Error = Status;
    fn encode(&mut self, item: Vec<u8>, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put_slice(&item);
        Ok(())
    }
}

impl Decoder for Raw {
    type Item = Vec<u8>;
    type Error = Status;
    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Vec<u8>>, Status> {
        let n = src.remaining();
        Ok(Some(src.copy_to_bytes(n).to_vec()))
    }
}

/// Sends `body` to the method at `path`; the gRPC code of the answer.
async fn send(channel: Channel, path: &'static str, body: Vec<u8>) -> Code {
    let mut grpc = tonic::client::Grpc::new(channel).max_decoding_message_size(usize::MAX);
    if let Err(e) = grpc.ready().await {
        panic!("the coordinator stopped answering: {e}");
    }
    match grpc
        .unary::<Vec<u8>, Vec<u8>, Raw>(
            tonic::Request::new(body),
            PathAndQuery::from_static(path),
            Raw,
        )
        .await
    {
        Ok(_) => Code::Ok,
        Err(s) => s.code(),
    }
}

const REGISTER: &str = "/orchard.v1.WorkerService/Register";
const LEASE: &str = "/orchard.v1.WorkerService/Lease";
const HEARTBEAT: &str = "/orchard.v1.WorkerService/Heartbeat";
const REPORT: &str = "/orchard.v1.WorkerService/Report";
const RETURN: &str = "/orchard.v1.WorkerService/ReturnLeases";
const LEMMAS: &str = "/orchard.v1.WorkerService/ShareLemmas";
const AWAIT_SPLITS: &str = "/orchard.v1.WorkerService/AwaitSplits";
const SUBMIT: &str = "/orchard.v1.JobService/Submit";
const STATUS: &str = "/orchard.v1.JobService/Status";
const RESULTS: &str = "/orchard.v1.JobService/Results";
const CANCEL: &str = "/orchard.v1.JobService/Cancel";
const RETRY: &str = "/orchard.v1.JobService/Retry";

/// The real ids the hostile requests start from.
struct Known {
    worker: u64,
    job: u64,
    unit: UnitLease,
    explored: DynExploration,
}

/// One valid request of every method, encoded, about the known ids.
fn valid_requests(k: &Known) -> Vec<(&'static str, Vec<u8>)> {
    vec![
        (
            REGISTER,
            RegisterRequest {
                hostname: "fuzz".into(),
                threads: 1,
                protocol_version: orchard_proto::PROTOCOL_VERSION,
                families: vec!["hc".into(), "queens".into()],
            }
            .encode_to_vec(),
        ),
        (
            LEASE,
            LeaseRequest {
                worker_id: k.worker,
                max_units: 2,
            }
            .encode_to_vec(),
        ),
        (
            HEARTBEAT,
            HeartbeatRequest {
                worker_id: k.worker,
                running: vec![UnitProgress {
                    unit_id: k.unit.unit_id,
                    nodes: 10,
                }],
                bounds: vec![JobBound {
                    job_id: k.job,
                    bound: 3,
                }],
                queued: vec![k.unit.unit_id],
            }
            .encode_to_vec(),
        ),
        (
            REPORT,
            ReportRequest {
                worker_id: k.worker,
                unit_id: k.unit.unit_id,
                summary: k.explored.summary.clone(),
                nodes: k.explored.nodes,
                rest: k.explored.rest.clone(),
                bound: 0,
                error: String::new(),
                ..Default::default()
            }
            .encode_to_vec(),
        ),
        (
            RETURN,
            ReturnLeasesRequest {
                worker_id: k.worker,
                unit_ids: vec![k.unit.unit_id],
            }
            .encode_to_vec(),
        ),
        (
            LEMMAS,
            ShareLemmasRequest {
                worker_id: k.worker,
                job_id: k.job,
                lemmas: vec![1, 2, 3],
                source: 7,
                after: 0,
            }
            .encode_to_vec(),
        ),
        (
            // A long poll: a short wait keeps the fuzz loop moving (the
            // coordinator caps any wait at half the lease time).
            AWAIT_SPLITS,
            AwaitSplitsRequest {
                worker_id: k.worker,
                wait_ms: 20,
            }
            .encode_to_vec(),
        ),
        (
            SUBMIT,
            SubmitRequest {
                family: "hc".into(),
                params_json: FUZZED_JOB.into(),
                ..Default::default()
            }
            .encode_to_vec(),
        ),
        (STATUS, StatusRequest { job_id: k.job }.encode_to_vec()),
        (RESULTS, ResultsRequest { job_id: k.job }.encode_to_vec()),
        (CANCEL, CancelRequest { job_id: 999_999 }.encode_to_vec()),
        // The job runs: refused, as is any other id a mutation makes.
        (RETRY, RetryRequest { job_id: k.job }.encode_to_vec()),
    ]
}

/// A well-formed request with hostile fields: extreme or unknown ids and
/// counts, giant repeated fields, long strings, blobs from the corpus.
fn hostile_request(rng: &mut Rng, k: &Known) -> (&'static str, Vec<u8>) {
    let id = |rng: &mut Rng| match rng.below(6) {
        0 => 0,
        1 => u64::MAX,
        2 => k.worker,
        3 => k.unit.unit_id,
        4 => k.job,
        _ => rng.next_u64(),
    };
    let count = |rng: &mut Rng| [0, 1, 2, 64, 4096, u32::MAX][rng.below(6) as usize];
    // Giant repeated fields: up to 200,000 entries.
    let many = |rng: &mut Rng| [0, 1, 1000, 200_000][rng.below(4) as usize];
    let long = |rng: &mut Rng| "x".repeat([0, 300, 100_000][rng.below(3) as usize]);
    match rng.below(9) {
        0 => (
            REGISTER,
            RegisterRequest {
                hostname: long(rng),
                threads: count(rng),
                protocol_version: [0, orchard_proto::PROTOCOL_VERSION, u32::MAX]
                    [rng.below(3) as usize],
                families: (0..many(rng)).map(|i| format!("f{i}")).collect(),
            }
            .encode_to_vec(),
        ),
        1 => (
            LEASE,
            LeaseRequest {
                worker_id: id(rng),
                max_units: count(rng),
            }
            .encode_to_vec(),
        ),
        2 => (
            HEARTBEAT,
            HeartbeatRequest {
                worker_id: id(rng),
                running: (0..many(rng))
                    .map(|_| UnitProgress {
                        unit_id: id(rng),
                        nodes: id(rng),
                    })
                    .collect(),
                bounds: (0..many(rng) / 10)
                    .map(|_| JobBound {
                        job_id: id(rng),
                        bound: id(rng),
                    })
                    .collect(),
                queued: (0..many(rng) / 10).map(|_| id(rng)).collect(),
            }
            .encode_to_vec(),
        ),
        3 => {
            let n = many(rng) / 10;
            (
                REPORT,
                ReportRequest {
                    worker_id: id(rng),
                    unit_id: id(rng),
                    summary: if rng.below(2) == 0 {
                        k.explored.summary.clone()
                    } else {
                        mutate(rng, &k.explored.summary, &k.unit.unit)
                    },
                    nodes: id(rng),
                    rest: (0..n).map(|_| k.unit.unit.clone()).collect(),
                    bound: id(rng),
                    error: String::new(),
                    want_units: rng.below(3) as u32,
                    queue_units: rng.below(3) as u32,
                    started_units: (0..n).map(|_| id(rng)).collect(),
                    ..Default::default()
                }
                .encode_to_vec(),
            )
        }
        4 => (
            RETURN,
            ReturnLeasesRequest {
                worker_id: id(rng),
                unit_ids: (0..many(rng)).map(|_| id(rng)).collect(),
            }
            .encode_to_vec(),
        ),
        5 => (
            LEMMAS,
            ShareLemmasRequest {
                worker_id: id(rng),
                job_id: id(rng),
                lemmas: vec![0xff; [0, 16, 2 << 20][rng.below(3) as usize]],
                source: id(rng),
                after: id(rng),
            }
            .encode_to_vec(),
        ),
        6 => (
            AWAIT_SPLITS,
            AwaitSplitsRequest {
                worker_id: id(rng),
                // Long waits are capped by the coordinator at half the
                // lease time.
                wait_ms: [0, 1, 20, 1_000, u32::MAX][rng.below(5) as usize],
            }
            .encode_to_vec(),
        ),
        7 => (
            [STATUS, RESULTS][rng.below(2) as usize],
            StatusRequest { job_id: id(rng) }.encode_to_vec(),
        ),
        _ => (
            SUBMIT,
            SubmitRequest {
                family: ["hc", "queens", "", "nosuch"][rng.below(4) as usize].into(),
                params_json: long(rng),
                ..Default::default()
            }
            .encode_to_vec(),
        ),
    }
}

#[test]
fn a_coordinator_survives_hostile_requests_and_still_answers_exactly() {
    let inputs = env_u64("ORCHARD_FUZZ_WIRE_INPUTS", 3_000);
    let seed = env_u64("ORCHARD_FUZZ_SEED", 1);
    let dir = TempDir::new("hostile-wire");
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    // Dead fuzz workers are forgotten after ten lease times (30 s), so
    // that a long run does not stay at the cap of registered workers.
    let mut coord =
        start_coordinator_with(&dir, port, &["--unit-budget", "300", "--lease-ttl", "3"]);
    common::wait_coordinator(&url, Duration::from_secs(20));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let started = Instant::now();
    let (codes, sent) = rt.block_on(async {
        let channel = Channel::from_shared(url.clone())
            .unwrap()
            .connect()
            .await
            .unwrap();
        let mut jobs = JobServiceClient::new(channel.clone());
        let job = jobs
            .submit(SubmitRequest {
                family: "hc".into(),
                params_json: FUZZED_JOB.into(),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner()
            .job_id;
        let mut w = WorkerServiceClient::new(channel.clone());
        let worker = w
            .register(RegisterRequest {
                hostname: "fuzz".into(),
                threads: 1,
                protocol_version: orchard_proto::PROTOCOL_VERSION,
                families: vec!["hc".into()],
            })
            .await
            .unwrap()
            .into_inner()
            .worker_id;
        let unit = w
            .lease(LeaseRequest {
                worker_id: worker,
                max_units: 1,
            })
            .await
            .unwrap()
            .into_inner()
            .leases
            .remove(0);
        let explored = explore(&unit, 50);
        let known = Known {
            worker,
            job,
            unit,
            explored,
        };
        let valid = valid_requests(&known);
        let mut rng = Rng::new(seed);
        let mut codes = std::collections::BTreeMap::<String, u64>::new();
        let mut in_flight = tokio::task::JoinSet::new();
        let mut sent = 0u64;
        while sent < inputs || !in_flight.is_empty() {
            while sent < inputs && in_flight.len() < 32 {
                let (path, body) = if rng.below(4) == 0 {
                    hostile_request(&mut rng, &known)
                } else {
                    let (path, base) = &valid[rng.below(valid.len() as u64) as usize];
                    let other = &valid[rng.below(valid.len() as u64) as usize].1;
                    (*path, mutate(&mut rng, base, other))
                };
                in_flight.spawn(send(channel.clone(), path, body));
                sent += 1;
            }
            let code = in_flight.join_next().await.unwrap().unwrap();
            *codes.entry(format!("{code:?}")).or_default() += 1;
        }
        (codes, sent)
    });
    let wall = started.elapsed();
    assert_eq!(sent, inputs);
    assert!(
        coord.0.try_wait().unwrap().is_none(),
        "the coordinator died"
    );
    let log = std::fs::read_to_string(dir.path("coordinator.log")).unwrap();
    assert!(!log.contains("panicked"), "the coordinator panicked");
    println!(
        "hostile wire: {inputs} requests in {:.1} s, answers by code: {codes:?}, 0 panics",
        wall.as_secs_f64()
    );

    // Afterwards: every job the hostile requests made is cancelled, then a
    // clean job on a real worker ends with the single process's answer.
    let all = run_json(&["status", "--coordinator", &url, "--json"]);
    for j in all["jobs"].as_array().unwrap() {
        if j["state"] == "running" {
            run_json(&[
                "cancel",
                &j["job_id"].to_string(),
                "--coordinator",
                &url,
                "--json",
            ]);
        }
    }
    let mut submit = vec!["submit"];
    submit.extend_from_slice(CLEAN_JOB);
    submit.extend_from_slice(&["--coordinator", &url, "--json"]);
    let clean = run_json(&submit);
    assert_eq!(clean["existing"], false, "{clean}");
    let clean = clean["job_id"].as_u64().unwrap();
    // A long run may still be at the cap of registered workers: the
    // worker retries until the dead fuzz workers are forgotten.
    let _worker = start_worker(&dir, &url, "clean");
    wait_status(&url, clean, Duration::from_secs(120), |s| {
        s["state"] == "done"
    });
    let answer = run_json(&[
        "results",
        &clean.to_string(),
        "--coordinator",
        &url,
        "--json",
    ]);
    let mut single = vec!["run"];
    single.extend_from_slice(CLEAN_JOB);
    let db = dir.path("single.db");
    single.extend_from_slice(&["--db", db.to_str().unwrap(), "--json"]);
    let single = run_json(&single);
    for key in ["max_length", "maximal_count", "nodes", "histogram"] {
        assert_eq!(answer[key], single[key], "{key}");
    }
    assert!(
        coord.0.try_wait().unwrap().is_none(),
        "the coordinator died"
    );
    let log = std::fs::read_to_string(dir.path("coordinator.log")).unwrap();
    assert!(!log.contains("panicked"), "the coordinator panicked");
}
