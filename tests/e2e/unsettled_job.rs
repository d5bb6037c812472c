//! The check at a job's end (`MootUnits::still_needed`), through a real
//! coordinator and a real worker over gRPC on loopback, on a real SQLite
//! database: a family whose root units leave part of its search out (as a
//! wrong pruning would) says so once they are all done, and the job goes on
//! with the units it asks for instead of ending with a wrong count. The
//! scheduler's own tests cover a restart in between and a family that asks
//! twice; `hip-solve`'s cover the real family's answer.

use std::sync::Arc;
use std::time::Duration;

use orchard_coordinator::{Coordinator, CoordinatorConfig, JobState};
use orchard_core::{
    Capabilities, Exploration, ExploreContext, FamilyError, FamilyReport, Host, MootJudge,
    MootUnits, ParamError, Registry, SearchFamily,
};
use orchard_worker::{run_worker, OpenJobs, WorkerConfig};
use tokio::sync::watch;

use crate::common;

/// Leaves `0..LEAVES`, one bit each.
const LEAVES: u64 = 64;
/// The leaves no root unit covers.
const UNCOVERED: (u64, u64) = (48, 64);

/// A row of 64 leaves whose three root units cover only `0..48`. A unit is
/// a range of leaves; a summary is (leaves counted, their bits, leaves
/// counted twice).
struct Gappy;

type Range = (u64, u64);
type Counted = (u64, u64, u64);

fn bits(r: Range) -> u64 {
    (r.0..r.1).fold(0, |b, leaf| b | 1 << leaf)
}

impl SearchFamily for Gappy {
    const NAME: &'static str = "gappy";
    const ABOUT: &'static str = "leaves that the root units do not all cover (tests)";
    type Params = ();
    type Unit = Range;
    type Summary = Counted;

    fn new(_: (), _: &Host) -> Result<Self, ParamError> {
        Ok(Gappy)
    }

    fn root_units(&self) -> Vec<Range> {
        vec![(0, 16), (16, 32), (32, 48)]
    }

    fn explore(
        &self,
        r: &Range,
        _: &ExploreContext<'_>,
    ) -> Result<Exploration<Counted, Range>, FamilyError> {
        Ok(Exploration::Finished((r.1 - r.0, bits(*r), 0)))
    }

    fn merge(&self, into: &mut Counted, other: Counted) -> Result<(), FamilyError> {
        into.0 = into
            .0
            .checked_add(other.0)
            .ok_or(FamilyError::Overflow("leaves"))?;
        into.2 += u64::from((into.1 & other.1).count_ones()) + other.2;
        into.1 |= other.1;
        Ok(())
    }

    fn nodes(s: &Counted) -> u64 {
        s.0
    }

    fn report(&self, s: &Counted) -> FamilyReport {
        FamilyReport {
            json: serde_json::json!({
                "leaves": s.0, "distinct": s.1.count_ones(), "twice": s.2
            }),
            text: vec![format!("leaves: {}", s.0)],
            results_lines: Vec::new(),
        }
    }

    fn capabilities(&self) -> Capabilities<'_, Self> {
        Capabilities {
            moot_units: Some(self),
            ..Capabilities::default()
        }
    }
}

/// Nothing is ever moot; the uncovered leaves are needed until merged.
impl MootUnits<Gappy> for Gappy {
    fn judge(&self, _: &Counted) -> Box<dyn MootJudge<Range>> {
        Box::new(NeverMoot)
    }

    fn still_needed(&self, merged: &Counted) -> Vec<Range> {
        if merged.1 & bits(UNCOVERED) == 0 {
            vec![UNCOVERED]
        } else {
            Vec::new()
        }
    }
}

struct NeverMoot;

impl MootJudge<Range> for NeverMoot {
    fn is_moot(&self, _: &Range) -> bool {
        false
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_whose_answer_still_needs_units_gets_them_through_the_cluster() {
    let dir = common::process::TempDir::new("unsettled-job");
    let db = dir.path("gappy.db");
    let families = || Registry::default().with::<Gappy>();
    let c = Coordinator::open(&db, CoordinatorConfig::beside(&db, families()))
        .await
        .unwrap();
    let (job, _) = c.submit("gappy", "null", 1).await.unwrap();
    let (stop, stopped) = watch::channel(false);
    let grpc = Coordinator::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", grpc.local_addr().unwrap());
    let http = Coordinator::bind("127.0.0.1:0").await.unwrap();
    let http_addr = http.local_addr().unwrap().to_string();
    for (server, is_grpc) in [(grpc, true), (http, false)] {
        let (c, mut rx) = (c.clone(), stopped.clone());
        tokio::spawn(async move {
            let until = async move {
                let _ = rx.wait_for(|&s| s).await;
            };
            if is_grpc {
                c.serve(server, until).await.unwrap();
            } else {
                c.serve_http(server, until).await.unwrap();
            }
        });
    }
    let config = WorkerConfig {
        coordinator: url,
        jobs: Arc::new(OpenJobs::new(families(), Host::default())),
        threads: 2,
        name: "gappy-worker".into(),
        give_up_after: Duration::from_secs(30),
        token: None,
        tls: Default::default(),
        metrics: Default::default(),
        lemma_interval: None,
    };
    let mut rx = stopped.clone();
    let worker = tokio::spawn(run_worker(config, async move {
        let _ = rx.wait_for(|&s| s).await;
    }));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while c.status(job).unwrap().state == JobState::Running {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the job does not end"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let status = c.status(job).unwrap();
    assert_eq!(status.state, JobState::Done, "{status:?}");
    assert_eq!((status.units_total, status.units_done), (4, 4));
    let answer = c.answer(job).unwrap();
    assert!(answer.is_final);
    assert_eq!(answer.result["leaves"], LEAVES, "{:?}", answer.result);
    assert_eq!(answer.result["distinct"], LEAVES);
    assert_eq!(answer.result["twice"], 0);
    let reopened = tokio::task::spawn_blocking(move || {
        common::metric_at(&http_addr, "orchard_units_reopened_total")
    })
    .await
    .unwrap();
    assert_eq!(reopened, 1);
    stop.send(true).unwrap();
    worker.await.unwrap().unwrap();
}
