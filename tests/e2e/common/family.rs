//! The families the crash-recovery tests run through the cluster, as cases
//! of one set of tests: the job, the coordinator's unit budget, how the
//! cluster's answer is checked, and what differs in how the family splits
//! its work.

use std::time::Duration;

use super::cluster::{start_coordinator_logging_to, submit_job};
use super::process::{Proc, TempDir};
use super::{bb, hc, hip, nn};

/// How the worker-kill test makes sure its victim dies holding a lease.
pub enum Victim {
    /// The victim works beside two others and is frozen (SIGSTOP) while it
    /// holds a unit, then killed once its lease has gone to another worker:
    /// for families whose units are long and never cancelled.
    Frozen,
    /// Victims work alone and are killed until one dies holding a lease; the
    /// others start after: for families whose units are short, and cut (
    /// cancelled) by a sibling's result.
    Alone,
}

/// One family's job through the cluster.
pub struct FamilyCase {
    /// Names the tests' directories.
    pub tag: &'static str,
    /// The family and its flags, as `orchard submit` takes them.
    pub job: &'static [&'static str],
    /// The coordinator's `--unit-budget`.
    pub unit_budget: &'static str,
    /// Asserts that a final `orchard results --json` is the single
    /// process's answer.
    pub assert_same_answer: fn(&serde_json::Value),
    pub victim: Victim,
    /// Units done before the coordinator is killed.
    pub units_before_coordinator_kill: u64,
    /// How long the first units may take, and the whole job.
    pub first_units_within: Duration,
    pub finish_within: Duration,
    /// Whether the family cancels units cut by a sibling's result.
    pub cancels_units: bool,
    /// The job's true node count, where the coordinator's estimate of it
    /// (Knuth's probes) is unbiased: the horizon is fixed.
    pub true_nodes: Option<fn() -> f64>,
    /// Checks `orchard results` of the running job (no worker left): the
    /// answer so far is sound.
    pub check_interim_results: Option<fn(&str, u64)>,
}

/// h'(4), every game of the whole tree (`--min-length 1`): the node count
/// does not depend on how the tree was split.
pub const HC: FamilyCase = FamilyCase {
    tag: "hc",
    job: hc::JOB,
    unit_budget: hc::UNIT_BUDGET,
    assert_same_answer: hc::assert_same_answer,
    victim: Victim::Frozen,
    units_before_coordinator_kill: 30,
    first_units_within: Duration::from_secs(120),
    finish_within: Duration::from_secs(600),
    cancels_units: false,
    true_nodes: Some(hc::true_nodes),
    check_interim_results: None,
};

/// Standard Hip on 4x5, solved: compared with a single process by value.
pub const HIP_SOLVE: FamilyCase = FamilyCase {
    tag: "hipsolve",
    job: hip::JOB,
    unit_budget: hip::UNIT_BUDGET,
    assert_same_answer: hip::assert_same_answer,
    victim: Victim::Alone,
    units_before_coordinator_kill: 60,
    first_units_within: Duration::from_secs(60),
    finish_within: Duration::from_secs(300),
    cancels_units: true,
    true_nodes: None,
    check_interim_results: Some(hip::check_interim_results),
};

/// Runs of the Hip network (`hip-nn`): units are ranges of runs, never
/// cancelled; compared with a single process run for run.
pub const HIP_NN: FamilyCase = FamilyCase {
    tag: "hipnn",
    job: nn::JOB,
    unit_budget: nn::UNIT_BUDGET,
    assert_same_answer: nn::assert_same_answer,
    victim: Victim::Frozen,
    units_before_coordinator_kill: 20,
    first_units_within: Duration::from_secs(120),
    finish_within: Duration::from_secs(300),
    cancels_units: false,
    true_nodes: None,
    check_interim_results: None,
};

/// busy-beaver with 4 cards, the tree's 858,909 machines: units are
/// subtrees of the tree normal form, never cancelled; compared with a
/// single process key for key and its results file byte for byte.
pub const BUSY_BEAVER_4: FamilyCase = FamilyCase {
    tag: "bb4",
    job: bb::JOB,
    unit_budget: bb::UNIT_BUDGET,
    assert_same_answer: bb::assert_same_answer,
    victim: Victim::Frozen,
    units_before_coordinator_kill: 30,
    first_units_within: Duration::from_secs(60),
    finish_within: Duration::from_secs(300),
    cancels_units: false,
    true_nodes: None,
    check_interim_results: None,
};

impl FamilyCase {
    /// A fresh directory for the test `what` of this family.
    pub fn dir(&self, what: &str) -> TempDir {
        TempDir::new(&format!("{}{what}", self.tag))
    }

    /// A coordinator for this family's job on 127.0.0.1:`port`, its database
    /// `coord.db` in `dir`, logging to `log`, with `extra` flags: a
    /// two-second lease, so that a dead or frozen worker's unit expires
    /// quickly. Not waited for.
    pub fn start_coordinator(&self, dir: &TempDir, port: u16, log: &str, extra: &[&str]) -> Proc {
        let mut flags = vec!["--lease-ttl", "2", "--unit-budget", self.unit_budget];
        flags.extend_from_slice(extra);
        start_coordinator_logging_to(dir, port, log, &flags)
    }

    /// Submits the job to the coordinator at `url`; returns its id.
    pub fn submit(&self, url: &str) -> u64 {
        submit_job(url, self.job)
    }
}
