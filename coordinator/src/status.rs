//! A job's status and its answer: the one shape each has from the scheduler
//! to the wire (`orchard.v1.JobStatus`, `ResultsResponse`), to JSON
//! (`orchard status --json`, `orchard results --json`, the dashboard's
//! `/api/jobs`) and to the terminal.
//!
//! API boundary: clients convert the wire form back with `TryFrom`, so a
//! field added here is added everywhere at once; the JSON keys are this
//! module's `Serialize`.

use orchard_proto::v1 as wire;
use serde::{Serialize, Serializer};

use crate::store::JobId;

/// Where a job is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum JobState {
    Running,
    Done,
    Cancelled,
    Failed,
}

impl JobState {
    /// The word stored in the database and shown to people.
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Running => "running",
            JobState::Done => "done",
            JobState::Cancelled => "cancelled",
            JobState::Failed => "failed",
        }
    }

    /// The state a database row names (an unknown word: failed).
    pub(crate) fn parse(s: &str) -> JobState {
        match s {
            "done" => JobState::Done,
            "cancelled" => JobState::Cancelled,
            "running" => JobState::Running,
            _ => JobState::Failed,
        }
    }
}

impl std::fmt::Display for JobState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<JobState> for wire::JobState {
    fn from(s: JobState) -> Self {
        match s {
            JobState::Running => wire::JobState::Running,
            JobState::Done => wire::JobState::Done,
            JobState::Cancelled => wire::JobState::Cancelled,
            JobState::Failed => wire::JobState::Failed,
        }
    }
}

/// A message from the coordinator that this client cannot read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("the coordinator sent a job status this client cannot read: {0}")]
pub struct WireError(String);

impl TryFrom<i32> for JobState {
    type Error = WireError;

    fn try_from(v: i32) -> Result<Self, WireError> {
        match wire::JobState::try_from(v) {
            Ok(wire::JobState::Running) => Ok(JobState::Running),
            Ok(wire::JobState::Done) => Ok(JobState::Done),
            Ok(wire::JobState::Cancelled) => Ok(JobState::Cancelled),
            Ok(wire::JobState::Failed) => Ok(JobState::Failed),
            _ => Err(WireError(format!(
                "job state {v} (a coordinator of another version?)"
            ))),
        }
    }
}

/// A job's progress.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobStatus {
    pub job_id: JobId,
    pub family: String,
    /// The canonical JSON of the parameters; an object in JSON (`params`).
    #[serde(rename = "params", serialize_with = "json_object")]
    pub params_json: String,
    pub state: JobState,
    pub units_total: u64,
    pub units_done: u64,
    pub units_running: u64,
    pub units_pending: u64,
    /// Nodes of the merged results (and of running units, as last reported).
    pub nodes: u64,
    /// Nodes searched in units cancelled as moot while running: speculative
    /// work a sibling's result made useless. Not in `nodes`.
    pub nodes_discarded: u64,
    /// Bytes of lemmas the job holds for its workers to share: its newest,
    /// at most the coordinator's lemma store a job.
    pub lemma_bytes: u64,
    /// Blobs of its workers' lemmas that changed what the job schedules by
    /// (`orchard_core::LemmaExchange::observe`; `hip-solve`: its guess of
    /// the winner), since the coordinator started.
    pub lemmas_observed: u64,
    pub nodes_per_second: f64,
    /// The job-wide bound (for `hc`, the best length found so far).
    pub bound: u64,
    pub live_workers: u32,
    pub created_unix_ms: u64,
    /// 0 while the job runs.
    pub finished_unix_ms: u64,
    /// Empty unless the job failed.
    pub error: String,
    /// Knuth's estimate of the job's total nodes (0: none yet, or the
    /// family cannot estimate), its standard error, and the time left at the
    /// current rate (0: unknown).
    pub estimated_nodes: f64,
    pub estimated_nodes_error: f64,
    pub eta_seconds: f64,
    /// Workers that explore each unit (1: every report trusted), units
    /// whose replicas agreed, and reports that disagreed with another
    /// replica of their unit (see `orchard run --replicas`).
    pub replicas: u32,
    pub verified_units: u64,
    pub mismatches: u64,
    /// Why the job's units wait, when they do (too few distinct live
    /// workers for its replicas); empty otherwise.
    pub waiting: String,
    /// The workers a verified job shut out for losing a vote, by durable
    /// identity (`sha256:` and certificate name under mutual TLS, else
    /// `name:` and the name the worker declared; see
    /// `identity::WorkerIdentity`), kept across restarts.
    pub excluded: Vec<String>,
}

fn json_object<S: Serializer>(params_json: &str, s: S) -> Result<S::Ok, S::Error> {
    serde_json::from_str::<serde_json::Value>(params_json)
        .unwrap_or(serde_json::Value::Null)
        .serialize(s)
}

impl JobStatus {
    /// The status as one JSON object.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("a job status serialises")
    }
}

/// Builds a `$target` from `$s`, whose fields cross the wire unchanged, with
/// the state given apart (it changes type): the field list of both
/// conversions, written once.
macro_rules! job_status_with_state {
    ($($target:ident)::+, $s:ident, $state:expr) => {
        $($target)::+ {
            state: $state,
            job_id: $s.job_id,
            family: $s.family,
            params_json: $s.params_json,
            units_total: $s.units_total,
            units_done: $s.units_done,
            units_running: $s.units_running,
            units_pending: $s.units_pending,
            nodes: $s.nodes,
            nodes_discarded: $s.nodes_discarded,
            lemma_bytes: $s.lemma_bytes,
            lemmas_observed: $s.lemmas_observed,
            bound: $s.bound,
            nodes_per_second: $s.nodes_per_second,
            created_unix_ms: $s.created_unix_ms,
            finished_unix_ms: $s.finished_unix_ms,
            live_workers: $s.live_workers,
            error: $s.error,
            estimated_nodes: $s.estimated_nodes,
            estimated_nodes_error: $s.estimated_nodes_error,
            eta_seconds: $s.eta_seconds,
            replicas: $s.replicas,
            verified_units: $s.verified_units,
            mismatches: $s.mismatches,
            waiting: $s.waiting,
            excluded: $s.excluded,
        }
    };
}

impl From<JobStatus> for wire::JobStatus {
    fn from(s: JobStatus) -> Self {
        let state = wire::JobState::from(s.state).into();
        job_status_with_state!(wire::JobStatus, s, state)
    }
}

impl TryFrom<wire::JobStatus> for JobStatus {
    type Error = WireError;

    fn try_from(s: wire::JobStatus) -> Result<Self, WireError> {
        let state = JobState::try_from(s.state)?;
        Ok(job_status_with_state!(JobStatus, s, state))
    }
}

/// A job's answer: the final one of a done job, or, while it runs, what the
/// units merged until now establish.
#[derive(Debug, Clone, PartialEq)]
pub struct JobAnswer {
    pub status: JobStatus,
    /// The family's figures (`Null`: no answer yet).
    pub result: serde_json::Value,
    /// Human-readable lines of the answer.
    pub text: Vec<String>,
    /// Where the results file was written (empty until the job is done).
    pub results_file: String,
    /// The answer can no longer change (the job is done).
    pub is_final: bool,
}

impl JobAnswer {
    /// The answer as one JSON object: the family's figures, plus the job's
    /// id, state, discarded nodes, lemma bytes, results file, error, and
    /// whether it is final.
    pub fn to_json(&self) -> serde_json::Value {
        let mut obj = match &self.result {
            serde_json::Value::Object(map) => map.clone(),
            _ => serde_json::Map::new(),
        };
        let s = &self.status;
        obj.insert("job_id".into(), s.job_id.into());
        obj.insert("state".into(), s.state.as_str().into());
        obj.insert("nodes_discarded".into(), s.nodes_discarded.into());
        obj.insert("lemma_bytes".into(), s.lemma_bytes.into());
        obj.insert("lemmas_observed".into(), s.lemmas_observed.into());
        obj.insert("replicas".into(), s.replicas.into());
        if s.replicas > 1 {
            obj.insert("verified_units".into(), s.verified_units.into());
            obj.insert("mismatches".into(), s.mismatches.into());
        }
        if !self.results_file.is_empty() {
            obj.insert("results_file".into(), self.results_file.clone().into());
        }
        if !s.error.is_empty() {
            obj.insert("error".into(), s.error.clone().into());
        }
        obj.insert("final".into(), self.is_final.into());
        serde_json::Value::Object(obj)
    }
}

impl From<JobAnswer> for wire::ResultsResponse {
    fn from(a: JobAnswer) -> Self {
        wire::ResultsResponse {
            status: Some(a.status.into()),
            result_json: if a.result.is_null() {
                String::new()
            } else {
                a.result.to_string()
            },
            text: a.text,
            results_file: a.results_file,
            interim: !a.is_final && !a.result.is_null(),
        }
    }
}

impl TryFrom<wire::ResultsResponse> for JobAnswer {
    type Error = WireError;

    fn try_from(r: wire::ResultsResponse) -> Result<Self, WireError> {
        let status = JobStatus::try_from(
            r.status
                .ok_or_else(|| WireError("an answer without a status".into()))?,
        )?;
        let result = if r.result_json.is_empty() {
            serde_json::Value::Null
        } else {
            serde_json::from_str(&r.result_json).map_err(|e| WireError(e.to_string()))?
        };
        Ok(JobAnswer {
            is_final: status.state == JobState::Done,
            status,
            result,
            text: r.text,
            results_file: r.results_file,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(state: JobState) -> JobStatus {
        JobStatus {
            job_id: 7,
            family: "hc".into(),
            params_json: r#"{"columns":3}"#.into(),
            state,
            units_total: 10,
            units_done: 4,
            units_running: 2,
            units_pending: 4,
            nodes: 12345,
            nodes_discarded: 6,
            lemma_bytes: 7,
            lemmas_observed: 3,
            nodes_per_second: 1.5,
            bound: 23,
            live_workers: 2,
            created_unix_ms: 1000,
            finished_unix_ms: 0,
            error: String::new(),
            estimated_nodes: 2e5,
            estimated_nodes_error: 1e3,
            eta_seconds: 9.0,
            replicas: 2,
            verified_units: 3,
            mismatches: 1,
            waiting: String::new(),
            excluded: Vec::new(),
        }
    }

    #[test]
    fn a_status_survives_the_wire_whole() {
        for state in [
            JobState::Running,
            JobState::Done,
            JobState::Cancelled,
            JobState::Failed,
        ] {
            let s = status(state);
            let back = JobStatus::try_from(wire::JobStatus::from(s.clone())).unwrap();
            assert_eq!(back, s);
        }
    }

    #[test]
    fn an_unknown_state_is_an_error_not_a_guess() {
        let mut w = wire::JobStatus::from(status(JobState::Done));
        w.state = 0;
        assert!(JobStatus::try_from(w.clone()).is_err());
        w.state = 99;
        assert!(JobStatus::try_from(w).is_err());
    }

    #[test]
    fn the_json_keys_are_the_documented_ones() {
        let j = status(JobState::Running).to_json();
        assert_eq!(j["state"], "running");
        assert_eq!(j["params"]["columns"], 3);
        assert!(j.get("params_json").is_none());
        for key in [
            "job_id",
            "family",
            "units_total",
            "units_done",
            "units_running",
            "units_pending",
            "nodes",
            "nodes_discarded",
            "lemma_bytes",
            "lemmas_observed",
            "nodes_per_second",
            "bound",
            "live_workers",
            "created_unix_ms",
            "finished_unix_ms",
            "error",
            "estimated_nodes",
            "estimated_nodes_error",
            "eta_seconds",
            "replicas",
            "verified_units",
            "mismatches",
            "excluded",
        ] {
            assert!(j.get(key).is_some(), "{key} missing from {j}");
        }
    }

    #[test]
    fn an_answer_survives_the_wire_and_says_whether_it_is_final() {
        let done = JobAnswer {
            status: status(JobState::Done),
            result: serde_json::json!({"h": 24}),
            text: vec!["h(3) = 24".into()],
            results_file: "/r/job-7-hc.txt".into(),
            is_final: true,
        };
        let back = JobAnswer::try_from(wire::ResultsResponse::from(done.clone())).unwrap();
        assert_eq!(back, done);
        let j = back.to_json();
        assert_eq!(
            (j["h"].clone(), j["final"].clone()),
            (24.into(), true.into())
        );
        let so_far = JobAnswer {
            status: status(JobState::Running),
            results_file: String::new(),
            is_final: false,
            ..done
        };
        let w = wire::ResultsResponse::from(so_far.clone());
        assert!(w.interim);
        assert_eq!(JobAnswer::try_from(w).unwrap(), so_far);
        assert_eq!(so_far.to_json()["final"], false);
    }
}
