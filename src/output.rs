//! How results and progress are shown: one JSON object for scripts, short
//! lines for people.

use orchard_proto::v1::JobStatus;
use serde_json::{json, Value};

/// The JSON object of a job's result: the family's figures, plus the job's
/// id, state and results file.
pub fn result_object(status: &JobStatus, result_json: &str, results_file: &str) -> Value {
    let mut obj = match serde_json::from_str::<Value>(result_json) {
        Ok(Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    obj.insert("job_id".into(), json!(status.job_id));
    obj.insert("state".into(), json!(status.state));
    if !results_file.is_empty() {
        obj.insert("results_file".into(), json!(results_file));
    }
    if !status.error.is_empty() {
        obj.insert("error".into(), json!(status.error));
    }
    Value::Object(obj)
}

/// The JSON object of a job's status.
pub fn status_object(s: &JobStatus) -> Value {
    orchard_coordinator::service::status_json(s)
}

/// Large counts in engineering notation.
pub fn si(x: f64) -> String {
    const UNITS: [(f64, &str); 4] = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];
    for (scale, suffix) in UNITS {
        if x >= scale {
            return format!("{:.2}{suffix}", x / scale);
        }
    }
    format!("{x:.0}")
}

/// One line of progress.
pub fn progress_line(s: &JobStatus) -> String {
    format!(
        "units {}/{} ({} running) | {} nodes | {}/s | bound {}",
        s.units_done,
        s.units_total,
        s.units_running,
        si(s.nodes as f64),
        si(s.nodes_per_second),
        s.bound
    )
}

/// One line per job for `orchard status`.
pub fn status_line(s: &JobStatus) -> String {
    let params = s
        .params_json
        .trim_start_matches('{')
        .trim_end_matches('}')
        .replace('"', "");
    format!(
        "job {:>4}  {:<9}  {} {}  | {}",
        s.job_id,
        s.state,
        s.family,
        params,
        progress_line(s)
    )
}
