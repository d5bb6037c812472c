//! hip-solve's lemmas, traded between workers through the coordinator: what
//! is stored, what each worker learns, and the wire's refusals; and what a
//! job is shown of them (`LemmaExchange::observe`), again after a restart.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::hip::{check_report, params};
use common::{final_results, metric_at, wait_coordinator, wait_status, Proc, TempDir};
use orchard_core::{Host, LemmaExchange, SearchFamily};
use orchard_hip::HipSolve;

/// Two worker processes (as on two machines) trade lemmas through the
/// coordinator: every byte stored is a byte a worker sent, each worker
/// learns what the other proved and never gets its own back, the answer is
/// table B's, and the job's lemmas are deleted when it ends. Over the wire:
/// a malformed blob is refused and not stored; a stored blob goes to other
/// sources, once; a job without lemmas to trade says so.
#[test]
fn workers_trade_lemmas_through_the_coordinator() {
    use orchard_proto::v1::worker_service_client::WorkerServiceClient;
    use orchard_proto::v1::ShareLemmasRequest;

    let dir = TempDir::new("hiplemmas");
    let port = common::free_port();
    let url = format!("http://127.0.0.1:{port}");
    // Units of 1e6 nodes: lemmas come from subtrees of 4096 nodes or more.
    let _coord = common::start_coordinator_logging_to(
        &dir,
        port,
        "coordinator.log",
        &["--unit-budget", "1000000"],
    );
    wait_coordinator(&url, Duration::from_secs(20));
    let metrics: Vec<String> = (0..2)
        .map(|_| format!("127.0.0.1:{}", common::free_port()))
        .collect();
    let workers: Vec<Proc> = metrics
        .iter()
        .enumerate()
        .map(|(i, m)| common::start_worker_with(&dir, &url, &format!("w{i}"), &["--metrics", m]))
        .collect();
    // Double 5x5: the first player wins (Franke's table B), some 1.9e7
    // nodes through two workers, long enough for several rounds of trading
    // (standard 4x6, a draw, the pairing bound settles in seconds, too
    // fast for a round; Double Hip has no pairing bound).
    let job = common::submit_job(
        &url,
        &["hip-solve", "--rows", "5", "--cols", "5", "--double"],
    );
    wait_status(&url, job, Duration::from_secs(600), |s| {
        s["state"] == "done"
    });
    let r = final_results(&url, job);
    check_report(&r, 5, 5, true);
    assert_eq!(r["winner"], 1, "Double 5x5 is a first player's win: {r}");
    let stored = r["lemma_bytes"].as_u64().unwrap();
    let get = |i: usize, name: &str| metric_at(&metrics[i], name);
    let sent = lemma_bytes_sent(&metrics, stored);
    let received = [0, 1].map(|i| get(i, "orchard_worker_lemma_bytes_received_total"));
    let learned = [0, 1].map(|i| get(i, "orchard_worker_lemmas_learned_total"));
    assert!(stored > 0, "{r}");
    assert_eq!(sent[0] + sent[1], stored, "sent {sent:?}");
    assert!(
        received[0] <= sent[1] && received[1] <= sent[0],
        "{received:?} {sent:?}"
    );
    assert!(learned[0] + learned[1] > 0, "learned {learned:?}");
    drop(workers);
    let db = dir.path("coord.db");
    let lemma_rows = |db: &Path| -> i64 {
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap()
            .query_row("SELECT count(*) FROM lemmas", [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(lemma_rows(&db), 0, "a finished job's lemmas are deleted");

    // The wire, with no workers: a 4x5 job that stays running, and valid
    // lemmas of 4x5 proved in this process.
    let local = HipSolve::new(params(), &Host::default()).unwrap();
    assert!(local.take(1 << 20).is_empty());
    orchard_core::explore_all(&local, local.root_units(), u64::MAX).unwrap();
    let blob = local.take(1 << 20);
    assert!(blob.len() > 100, "{} bytes of lemmas", blob.len());
    let job2 = common::submit_job(&url, common::hip::JOB);
    let hc_job = common::submit_job(&url, &["hc", "--columns", "3"]);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut c = WorkerServiceClient::connect(url.clone()).await.unwrap();
        let req = |job_id: u64, lemmas: Vec<u8>, source: u64, after: u64| ShareLemmasRequest {
            worker_id: 0,
            job_id,
            lemmas,
            source,
            after,
        };
        let err = c
            .share_lemmas(req(job2, vec![1, 0, 0], 7, 0))
            .await
            .unwrap_err();
        assert_eq!(err.code(), tonic::Code::InvalidArgument, "{err:?}");
        assert!(err.message().contains("bad lemmas"), "{err:?}");
        let own = c
            .share_lemmas(req(job2, blob.clone(), 7, 0))
            .await
            .unwrap()
            .into_inner();
        assert!(
            own.stored && own.lemmas.is_empty() && !own.job_over,
            "{own:?}"
        );
        // The writer stores the blob soon after the answer.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let other = loop {
            let r = c
                .share_lemmas(req(job2, Vec::new(), 8, 0))
                .await
                .unwrap()
                .into_inner();
            if !r.lemmas.is_empty() || std::time::Instant::now() > deadline {
                break r;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        assert_eq!(
            other.lemmas,
            vec![blob.clone()],
            "the malformed blob was not stored"
        );
        assert!(!other.more && other.cursor > 0);
        let again = c
            .share_lemmas(req(job2, Vec::new(), 8, other.cursor))
            .await
            .unwrap()
            .into_inner();
        assert!(
            again.lemmas.is_empty() && again.cursor == other.cursor,
            "{again:?}"
        );
        let back = c
            .share_lemmas(req(job2, Vec::new(), 7, 0))
            .await
            .unwrap()
            .into_inner();
        assert!(back.lemmas.is_empty(), "a source's own lemmas came back");
        for over in [job, hc_job, 999] {
            let r = c
                .share_lemmas(req(over, blob.clone(), 9, 0))
                .await
                .unwrap()
                .into_inner();
            assert!(r.job_over && !r.stored, "job {over}: {r:?}");
        }
    });
    let s = common::status(&url, job2).unwrap();
    assert_eq!(s["lemma_bytes"], blob.len() as u64, "{s}");
    assert_eq!(lemma_rows(&db), 1);
}

/// `orchard worker --lemma-interval` sets how often it trades: the same
/// Double 5x5 job (but for the least a lemma's search costs), on one worker
/// that trades every 20 ms and then on one that would trade every hour
/// (its first round, at start, has nothing to send), stores lemmas the
/// first time and none the second. Fails if the flag is ignored (the
/// default trades four times a second).
#[test]
fn a_worker_trades_lemmas_as_often_as_told() {
    let dir = TempDir::new("lemmainterval");
    let port = common::free_port();
    let url = format!("http://127.0.0.1:{port}");
    let _coord = common::start_coordinator_logging_to(&dir, port, "coordinator.log", &[]);
    wait_coordinator(&url, Duration::from_secs(20));
    let mut stored = Vec::new();
    // The two jobs differ in a parameter that both runs meet (the smallest
    // search a lemma comes from), since the same job submitted twice is one.
    for (i, (every, min_nodes)) in [("0.02", "256"), ("3600", "128")].into_iter().enumerate() {
        let job = [
            "hip-solve",
            "--rows",
            "5",
            "--cols",
            "5",
            "--double",
            "--lemma-min-nodes",
            min_nodes,
        ];
        let metrics = format!("127.0.0.1:{}", common::free_port());
        let worker = common::start_worker_with(
            &dir,
            &url,
            &format!("w{i}"),
            &["--metrics", &metrics, "--lemma-interval", every],
        );
        let id = common::submit_job(&url, &job);
        wait_status(&url, id, Duration::from_secs(600), |s| s["state"] == "done");
        let r = final_results(&url, id);
        assert_eq!(r["winner"], 1, "Double 5x5 is a first player's win: {r}");
        let bytes = r["lemma_bytes"].as_u64().unwrap();
        assert_eq!(lemma_bytes_sent(&[metrics], bytes), [bytes]);
        stored.push(bytes);
        drop(worker);
    }
    assert!(stored[0] > 0, "every 20 ms: {stored:?}");
    assert_eq!(stored[1], 0, "every hour: {stored:?}");
}

/// The lemma bytes each worker (by its `/metrics` address) counts as sent,
/// once they add up to `stored`, the bytes its job stored, or after 10 s: a
/// round of trading that began before the job ended may still be on its way
/// back to its worker.
fn lemma_bytes_sent(metrics: &[String], stored: u64) -> Vec<u64> {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let sent: Vec<u64> = metrics
            .iter()
            .map(|m| metric_at(m, "orchard_worker_lemma_bytes_sent_total"))
            .collect();
        if sent.iter().sum::<u64>() == stored || std::time::Instant::now() > deadline {
            return sent;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// What `restarted_coordinator_shows_its_jobs_their_stored_lemmas`'s family
/// was shown (`LemmaExchange::observe`), in this test binary.
static OBSERVED: std::sync::Mutex<Vec<Vec<u8>>> = std::sync::Mutex::new(Vec::new());

/// A family that only observes lemmas (one root unit, never explored here).
struct Watchful;

impl SearchFamily for Watchful {
    const NAME: &'static str = "watchful";
    const ABOUT: &'static str = "a job that observes its lemmas (tests)";
    type Params = ();
    type Unit = u8;
    type Summary = u64;

    fn new(_: (), _: &Host) -> Result<Self, orchard_core::ParamError> {
        Ok(Watchful)
    }

    fn root_units(&self) -> Vec<u8> {
        vec![0]
    }

    fn explore(
        &self,
        _: &u8,
        _: &orchard_core::ExploreContext<'_>,
    ) -> Result<orchard_core::Exploration<u64, u8>, orchard_core::FamilyError> {
        Ok(orchard_core::Exploration::Finished(1))
    }

    fn merge(&self, into: &mut u64, other: u64) -> Result<(), orchard_core::FamilyError> {
        *into += other;
        Ok(())
    }

    fn nodes(s: &u64) -> u64 {
        *s
    }

    fn report(&self, s: &u64) -> orchard_core::FamilyReport {
        orchard_core::FamilyReport {
            json: serde_json::json!({ "units": s }),
            text: Vec::new(),
            results_lines: Vec::new(),
        }
    }

    fn unit_label(&self, u: &u8) -> String {
        u.to_string()
    }

    fn capabilities(&self) -> orchard_core::Capabilities<'_, Self> {
        orchard_core::Capabilities {
            lemmas: Some(self),
            ..Default::default()
        }
    }
}

impl LemmaExchange for Watchful {
    fn take(&self, _: usize) -> Vec<u8> {
        Vec::new()
    }

    fn check(&self, lemmas: &[u8]) -> Result<(), orchard_core::FamilyError> {
        match lemmas.is_empty() {
            true => Err(orchard_core::FamilyError::BadLemmas("empty".into())),
            false => Ok(()),
        }
    }

    fn learn(&self, _: &[u8]) -> Result<u64, orchard_core::FamilyError> {
        Ok(0)
    }

    fn observe(&self, lemmas: &[u8]) -> bool {
        OBSERVED.lock().unwrap().push(lemmas.to_vec());
        true
    }
}

/// A job learns again from its stored lemmas when the coordinator restarts
/// (what `hip-solve` schedules by, its guess of the winner, would otherwise
/// be lost: workers never send a lemma twice). A blob a worker uploads over
/// gRPC is shown to the job once; after a restart on the same database the
/// job (a new value) is shown it again before anything is served. Fails if
/// the startup does not read the stored lemmas.
#[test]
fn restarted_coordinator_shows_its_jobs_their_stored_lemmas() {
    use orchard_coordinator::{Coordinator, CoordinatorConfig};
    use orchard_core::Registry;
    use orchard_proto::v1::worker_service_client::WorkerServiceClient;
    use orchard_proto::v1::{RegisterRequest, ShareLemmasRequest};
    use tokio::sync::watch;

    let dir = TempDir::new("observed-lemmas");
    let db = dir.path("watchful.db");
    let config = || CoordinatorConfig::beside(&db, Registry::default().with::<Watchful>());
    let blob = b"proved by a worker".to_vec();
    // The first coordinator's runtime, dropped whole with its tasks so that
    // its store lets go of the database.
    let first = tokio::runtime::Runtime::new().unwrap();
    let job = first.block_on(async {
        let c = Coordinator::open(&db, config()).await.unwrap();
        let (job, _) = c.submit("watchful", "null", 1).await.unwrap();
        let (stop, mut stopped) = watch::channel(false);
        let grpc = Coordinator::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", grpc.local_addr().unwrap());
        let serving = {
            let c = c.clone();
            tokio::spawn(async move {
                let until = async move {
                    let _ = stopped.wait_for(|&s| s).await;
                };
                c.serve(grpc, until).await.unwrap();
            })
        };
        let mut client = WorkerServiceClient::connect(url).await.unwrap();
        let worker_id = client
            .register(RegisterRequest {
                hostname: "watcher".into(),
                threads: 1,
                protocol_version: orchard_proto::PROTOCOL_VERSION,
                families: vec!["watchful".into()],
            })
            .await
            .unwrap()
            .into_inner()
            .worker_id;
        let shared = client
            .share_lemmas(ShareLemmasRequest {
                worker_id,
                job_id: job,
                lemmas: blob.clone(),
                source: 7,
                after: 0,
            })
            .await
            .unwrap()
            .into_inner();
        assert!(shared.stored);
        assert_eq!(
            *OBSERVED.lock().unwrap(),
            std::slice::from_ref(&blob),
            "shown on upload"
        );
        drop(client);
        stop.send(true).unwrap();
        serving.await.unwrap();
        job
    });
    drop(first);

    OBSERVED.lock().unwrap().clear();
    let second = tokio::runtime::Runtime::new().unwrap();
    second.block_on(async {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        let again = loop {
            match Coordinator::open(&db, config()).await {
                Ok(c) => break c,
                // The first store's writer may still be letting go.
                Err(_) if std::time::Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(e) => panic!("cannot reopen the database: {e}"),
            }
        };
        assert_eq!(
            *OBSERVED.lock().unwrap(),
            std::slice::from_ref(&blob),
            "shown again at startup"
        );
        let observed = |c: &Coordinator| c.status(job).unwrap().lemmas_observed;
        assert_eq!(observed(&again), 1);

        // Lemmas proved in the coordinator's own process (`orchard run`'s
        // local workers): checked, shown, counted, never stored.
        assert!(again.observe_lemmas(job, b"").is_err(), "checked first");
        assert!(again.observe_lemmas(job, b"proved here").unwrap());
        assert!(!again.observe_lemmas(job + 1, b"no such job").unwrap());
        assert_eq!(
            *OBSERVED.lock().unwrap(),
            [blob.clone(), b"proved here".to_vec()]
        );
        assert_eq!(observed(&again), 2);
        assert_eq!(again.status(job).unwrap().lemma_bytes, blob.len() as u64);
    });
}

/// `orchard run`'s local workers share one table and trade no lemmas, yet
/// the run shows its job what they prove, as a cluster's coordinator is
/// shown its workers' uploads: a 5x5 job's guess of the winner learns from
/// its eldest line (`lemmas_observed`), and nothing is stored. Fails if the
/// run does not show the job its local lemmas (no other worker could).
#[test]
fn a_local_run_shows_its_job_the_lemmas_its_workers_prove() {
    let dir = TempDir::new("locallemmas");
    let db = dir.path("run.db");
    let r = common::run_json(&[
        "run",
        "hip-solve",
        "--rows",
        "5",
        "--cols",
        "5",
        "--workers",
        "2",
        "--db",
        db.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(r["winner"], 2, "table B: the second player wins 5x5; {r}");
    assert!(r["lemmas_observed"].as_u64().unwrap() >= 1, "{r}");
    assert_eq!(r["lemma_bytes"], 0, "nothing stored: {r}");
}
