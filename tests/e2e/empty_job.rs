//! A job with nothing to search: a family whose search has no root unit
//! (a board too small to hold a piece, say). No worker will ever report on
//! it, so the coordinator must end it when it is submitted, with the
//! family's report of nothing merged, or the job stays running for ever
//! (a method with no root unit on a small board, as `queens`' ring
//! method on 2 x 2 and 3 x 3, would hang its caller).

use orchard_coordinator::{Coordinator, CoordinatorConfig, JobState};
use orchard_core::{
    Exploration, ExploreContext, FamilyError, FamilyReport, Host, ParamError, Registry,
    SearchFamily,
};

use crate::common;

/// A family with no root unit: its answer is the empty summary's.
struct Nothing;

impl SearchFamily for Nothing {
    const NAME: &'static str = "nothing";
    const ABOUT: &'static str = "a search with no root unit (tests)";
    type Params = ();
    type Unit = ();
    type Summary = u64;

    fn new(_: (), _: &Host) -> Result<Self, ParamError> {
        Ok(Nothing)
    }

    fn root_units(&self) -> Vec<()> {
        Vec::new()
    }

    fn explore(&self, _: &(), _: &ExploreContext<'_>) -> Result<Exploration<u64, ()>, FamilyError> {
        unreachable!("a job without units explores nothing")
    }

    fn merge(&self, into: &mut u64, other: u64) -> Result<(), FamilyError> {
        *into = into
            .checked_add(other)
            .ok_or(FamilyError::Overflow("count"))?;
        Ok(())
    }

    fn nodes(s: &u64) -> u64 {
        *s
    }

    fn report(&self, s: &u64) -> FamilyReport {
        FamilyReport {
            json: serde_json::json!({ "count": s }),
            text: vec![format!("count: {s}")],
            results_lines: Vec::new(),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_without_root_units_is_done_when_submitted() {
    let dir = common::process::TempDir::new("empty-job");
    let db = dir.path("empty.db");
    let config = CoordinatorConfig::beside(&db, Registry::default().with::<Nothing>());
    let c = Coordinator::open(&db, config).await.unwrap();
    let (job, existed) = c.submit("nothing", "null", 1).await.unwrap();
    assert!(!existed);
    let status = c.status(job).expect("the job exists");
    assert_eq!(status.state, JobState::Done, "{status:?}");
    assert_eq!(status.units_total, 0);
    let answer = c.answer(job).expect("the job exists");
    assert!(answer.is_final);
    assert_eq!(answer.result["count"], 0);
    assert!(!answer.results_file.is_empty(), "no results file");
    // Submitted again, it is the same job, done.
    assert_eq!(c.submit("nothing", "null", 1).await.unwrap(), (job, true));
}
