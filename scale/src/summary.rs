//! The run's summary, the one JSON object printed last: the merged answer
//! fetched and checked against the tree (`exact`), the coordinator and the
//! harness stopped, and every figure of the run (efficiency against the
//! ideal makespan, fan-out, report rates, the coordinator's answer times,
//! CPU, memory and disk per unit). `bench/scale-table.sh` and
//! docs/notes/scale.md read these keys.

use std::sync::atomic::Ordering;

use orchard_proto::v1::{JobState, ResultsRequest};

use crate::plan::RunPlan;
use crate::start::Started;
use crate::watch::Watched;
use crate::Args;

/// What the plan fixed that the summary reports.
pub struct Planned {
    pub workers: usize,
    pub nodes: u64,
    pub budget: u64,
    pub ideal: f64,
    pub expected_checksum: u64,
    pub dir: String,
}

impl Planned {
    pub fn of(plan: &RunPlan) -> Planned {
        Planned {
            workers: plan.workers.len(),
            nodes: plan.nodes,
            budget: plan.budget,
            ideal: plan.ideal,
            expected_checksum: plan.expected_checksum,
            dir: plan.dir.display().to_string(),
        }
    }
}

/// Fetches the answer, stops the run and returns its figures.
pub async fn summarise(
    a: &Args,
    p: Planned,
    mut s: Started,
    w: Watched,
) -> Result<serde_json::Value, String> {
    let status = &w.status;
    let finished = status.state == JobState::Done as i32;
    let makespan = if finished && status.finished_unix_ms >= status.created_unix_ms {
        (status.finished_unix_ms - status.created_unix_ms) as f64 / 1000.0
    } else {
        w.wall
    };
    let results = s
        .jobs
        .results(ResultsRequest { job_id: s.job_id })
        .await
        .map_err(|e| format!("results: {}", e.message()))?
        .into_inner();
    let answer: serde_json::Value =
        serde_json::from_str(&results.result_json).unwrap_or(serde_json::Value::Null);
    let merged_nodes = answer["nodes"].as_u64().unwrap_or(0);
    let merged_checksum = answer["checksum"].as_str().unwrap_or("").to_string();
    let exact = finished
        && merged_nodes == p.nodes
        && merged_checksum == format!("{:016x}", p.expected_checksum);
    s.workers.abort_all();
    drop(s.coordinator);

    let st = &s.shared.stats;
    let units = status.units_total;
    let per_million = |x: u64| {
        if units == 0 {
            0.0
        } else {
            (x as f64 * 1e6 / units as f64).round()
        }
    };
    let reports = st.reports_accepted.load(Ordering::Relaxed);
    let policy = s.shared.policy;
    Ok(serde_json::json!({
        "workers": p.workers,
        "rtt_ms": a.rtt_ms,
        "speed_spread": a.speed_spread,
        "leave": a.leave,
        "leave_how": a.leave_how,
        "join": a.join,
        "slots": a.slots,
        "prefetch": a.prefetch,
        "connections": s.connections,
        "heartbeat_s": a.heartbeat,
        "lease_ttl_s": a.lease_ttl,
        "nodes": p.nodes,
        "unit_budget": p.budget,
        "root_units": a.root_units,
        "tail": a.tail,
        "registration_s": round(s.registration_s, 2),
        "ideal_makespan_s": round(p.ideal, 2),
        "makespan_s": round(makespan, 2),
        "efficiency": round(p.ideal / makespan, 4),
        "fan_out_50pct_s": w.fan_out_half.map(|t| round(t, 2)),
        "fan_out_90pct_s": w.fan_out_90.map(|t| round(t, 2)),
        "peak_busy_workers": w.peak_busy,
        "busy_share": round(w.busy_seconds / (w.wall * s.at_start as f64).max(1e-9), 4),
        "prompt_splits": st.prompt_splits.load(Ordering::Relaxed),
        "blocking_reports": a.blocking_reports,
        "report_lease": policy.report_lease(),
        "lease_ahead": policy.lease_ahead(),
        "split_pieces_mean": round(
            st.split_pieces.load(Ordering::Relaxed) as f64
                / st.split_requests.load(Ordering::Relaxed).max(1) as f64,
            2
        ),
        "finished": finished,
        "exact": exact,
        "merged_nodes": merged_nodes,
        "units": units,
        "reports": reports,
        "reports_per_second": st.peak_per_second(),
        "reports_per_second_mean": round(reports as f64 / makespan, 0),
        "reports_ignored": st.reports_ignored.load(Ordering::Relaxed),
        "units_cut": st.units_cut.load(Ordering::Relaxed),
        "units_cancelled": st.units_cancelled.load(Ordering::Relaxed),
        "split_requests": st.split_requests.load(Ordering::Relaxed),
        "rest_units": st.rest_units.load(Ordering::Relaxed),
        "lease_calls": st.lease_calls.load(Ordering::Relaxed),
        "empty_leases": st.empty_leases.load(Ordering::Relaxed),
        "heartbeats": st.heartbeats.load(Ordering::Relaxed),
        "call_errors": st.call_errors.load(Ordering::Relaxed),
        "report_ms_mean": round(
            st.report_micros.load(Ordering::Relaxed) as f64
                / 1e3
                / (reports + st.reports_ignored.load(Ordering::Relaxed))
                    .saturating_sub(st.report_lease_calls.load(Ordering::Relaxed))
                    .max(1) as f64,
            2
        ),
        "lease_ms_mean": round(
            st.lease_micros.load(Ordering::Relaxed) as f64
                / 1e3
                / (st.lease_calls.load(Ordering::Relaxed) - st.empty_leases.load(Ordering::Relaxed)).max(1) as f64,
            2
        ),
        "report_lease_calls": st.report_lease_calls.load(Ordering::Relaxed),
        "report_leased": st.report_leased.load(Ordering::Relaxed),
        "ahead_leased": st.ahead_leased.load(Ordering::Relaxed),
        "ahead_started": st.ahead_started.load(Ordering::Relaxed),
        "report_lease_ms_mean": round(
            st.report_lease_micros.load(Ordering::Relaxed) as f64
                / 1e3
                / st.report_lease_calls.load(Ordering::Relaxed).max(1) as f64,
            2
        ),
        "coordinator_cpu_us_per_unit": round(w.coordinator_cpu * 1e6 / units.max(1) as f64, 1),
        "coordinator_cpu_seconds": round(w.coordinator_cpu, 2),
        "coordinator_cpu_share": round(w.coordinator_cpu / makespan, 3),
        "coordinator_rss_bytes": w.rss,
        "db_bytes": w.db_bytes,
        "rss_bytes_per_million_units": per_million(w.rss),
        "db_bytes_per_million_units": per_million(w.db_bytes),
        "harness_cpu_seconds": round(w.harness_cpu, 2),
        "dir": p.dir,
    }))
}

/// `x` rounded to `digits` decimals.
pub fn round(x: f64, digits: i32) -> f64 {
    let p = 10f64.powi(digits);
    (x * p).round() / p
}
