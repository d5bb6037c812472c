//! The coordinator's HTTP side: a live dashboard (`/`), its JSON API
//! (`/api/jobs`, and per job its `tree`, `history` and `figures`) and
//! Prometheus metrics (`/metrics`). Read-only: nothing here
//! changes a job. When the coordinator has a token, these endpoints want it
//! too (`Authorization: Bearer <token>`, or `?token=` for a browser).

use std::fmt::Write as _;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::extract::{Path, Query, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};

use crate::service::Shared;
use crate::status::{JobAnswer, JobState};

const DASHBOARD: &str = include_str!("dashboard.html");

/// The router of the HTTP side.
pub fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/", get(dashboard))
        .route("/metrics", get(metrics))
        .route("/api/jobs", get(jobs))
        .route("/api/jobs/{id}/tree", get(tree))
        .route("/api/jobs/{id}/history", get(history))
        .route("/api/jobs/{id}/figures", get(figures))
        .route_layer(middleware::from_fn_with_state(
            shared.clone(),
            require_token,
        ))
        .with_state(shared)
}

/// Serves the HTTP side on `listener` until `shutdown` completes.
pub async fn serve(
    shared: Arc<Shared>,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(shared))
        .with_graceful_shutdown(shutdown)
        .await
}

#[derive(serde::Deserialize, Default)]
struct TokenQuery {
    token: Option<String>,
}

/// Every route: 401 when a token is configured and the request presents
/// neither `Authorization: Bearer <token>` nor `?token=<token>`.
async fn require_token(State(shared): State<Arc<Shared>>, req: Request, next: Next) -> Response {
    if let Some(expected) = &shared.config.token {
        let bearer = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        let query = Query::<TokenQuery>::try_from_uri(req.uri())
            .map(|q| q.0)
            .unwrap_or_default();
        let given = bearer.or(query.token.as_deref());
        if !given
            .is_some_and(|g| orchard_proto::access::same_token(g.as_bytes(), expected.as_bytes()))
        {
            tracing::warn!("refused an HTTP request: no or wrong token");
            return (
                StatusCode::UNAUTHORIZED,
                "this coordinator requires a bearer token\n",
            )
                .into_response();
        }
    }
    next.run(req).await
}

async fn dashboard() -> Response {
    Html(DASHBOARD).into_response()
}

/// A job's status (as `orchard status --json` has it) with its answer:
/// `result` once final, `interim` (the answer so far) while it runs.
fn job_json(a: JobAnswer) -> Value {
    let mut v = a.status.to_json();
    let answer = json!({ "result": a.result, "text": a.text });
    v["result"] = Value::Null;
    if a.is_final {
        v["result"] = json!({ "result": a.result, "text": a.text, "results_file": a.results_file });
    } else if !a.result.is_null() {
        v["interim"] = answer;
    }
    v
}

async fn jobs(State(shared): State<Arc<Shared>>) -> Response {
    let mut s = shared.lock();
    let jobs: Vec<Value> = s
        .job_ids()
        .into_iter()
        .filter_map(|id| s.answer(id))
        .map(job_json)
        .collect();
    let workers: Vec<Value> = s
        .workers_snapshot()
        .into_iter()
        .map(|w| {
            json!({
                "worker_id": w.id,
                "hostname": w.hostname,
                "threads": w.threads,
                "live": w.live,
                "units": w.units,
                "nodes": w.nodes,
                "nodes_per_second": w.nodes_per_second,
                "seconds_since_seen": w.seconds_since_seen,
                "certificate": w.identity.as_ref().map(|i| i.name.as_str()),
                "certificate_sha256": w.identity.as_ref().map(|i| i.sha256.as_str()),
            })
        })
        .collect();
    Json(json!({ "jobs": jobs, "workers": workers })).into_response()
}

async fn tree(State(shared): State<Arc<Shared>>, Path(id): Path<u64>) -> Response {
    let s = shared.lock();
    if s.job(id).is_none() {
        return (StatusCode::NOT_FOUND, format!("unknown job {id}\n")).into_response();
    }
    let cells: Vec<Value> = s
        .tree(id)
        .into_iter()
        .map(|c| json!({ "prefix": c.prefix, "done": c.done, "running": c.running, "pending": c.pending }))
        .collect();
    Json(json!({ "job_id": id, "depth": crate::scheduler::TREE_DEPTH, "cells": cells }))
        .into_response()
}

/// A job's progress over time (see [`crate::history`]), with what the
/// charts draw it against: when the job began and, once over, ended.
/// `closed` says the job's last sample is in (a running sample may carry the
/// finish time too, when the job ended within the sampler's millisecond).
async fn history(State(shared): State<Arc<Shared>>, Path(id): Path<u64>) -> Response {
    let Some(status) = shared.lock().status(id) else {
        return (StatusCode::NOT_FOUND, format!("unknown job {id}\n")).into_response();
    };
    let h = shared.history();
    let series = h.series(id);
    Json(json!({
        "job_id": id,
        "state": status.state,
        "created_unix_ms": status.created_unix_ms,
        "finished_unix_ms": status.finished_unix_ms,
        "every_ms": series.map(|s| s.every_ms),
        "closed": series.is_some_and(|s| s.closed),
        "samples": series.map(|s| s.samples.as_slice()).unwrap_or_default(),
    }))
    .into_response()
}

/// A job's figures, as its family draws them (see
/// [`orchard_core::figure`]).
async fn figures(State(shared): State<Arc<Shared>>, Path(id): Path<u64>) -> Response {
    match shared.lock().figures(id) {
        Some(f) => Json(json!({ "job_id": id, "figures": f })).into_response(),
        None => (StatusCode::NOT_FOUND, format!("unknown job {id}\n")).into_response(),
    }
}

/// Prometheus label values: backslash, quote and newline escaped.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// One metric in the Prometheus text format.
struct Metric {
    name: &'static str,
    kind: &'static str,
    help: &'static str,
    /// (labels without braces, value)
    samples: Vec<(String, f64)>,
}

impl Metric {
    fn new(name: &'static str, kind: &'static str, help: &'static str) -> Self {
        Metric {
            name,
            kind,
            help,
            samples: Vec::new(),
        }
    }

    fn render(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "# HELP {} {}\n# TYPE {} {}",
            self.name, self.help, self.name, self.kind
        );
        for (labels, v) in &self.samples {
            if labels.is_empty() {
                let _ = writeln!(out, "{} {v}", self.name);
            } else {
                let _ = writeln!(out, "{}{{{labels}}} {v}", self.name);
            }
        }
    }
}

async fn metrics(State(shared): State<Arc<Shared>>) -> Response {
    let mut s = shared.lock();
    let snaps = s.statuses();
    let workers = s.workers_snapshot();
    let c = s.counters();
    drop(s);
    let store = shared.store.health();

    let mut units = Metric::new("orchard_units", "gauge", "Units of each job by state.");
    let mut nodes = Metric::new(
        "orchard_job_nodes",
        "counter",
        "Search-tree nodes explored per job (done units plus running progress).",
    );
    let mut discarded = Metric::new(
        "orchard_job_nodes_discarded",
        "counter",
        "Nodes searched in units cancelled as moot while running (speculation lost).",
    );
    let mut rate = Metric::new(
        "orchard_job_nodes_per_second",
        "gauge",
        "Node rate of each job over the last 20 s.",
    );
    let mut ratio = Metric::new(
        "orchard_job_units_done_ratio",
        "gauge",
        "Units resolved over units known, per job.",
    );
    let mut running = Metric::new(
        "orchard_job_running",
        "gauge",
        "1 while the job runs, 0 after.",
    );
    for j in &snaps {
        let l = format!("job=\"{}\",family=\"{}\"", j.job_id, label(&j.family));
        for (state, v) in [
            ("pending", j.units_pending),
            ("running", j.units_running),
            ("done", j.units_done),
        ] {
            units
                .samples
                .push((format!("{l},state=\"{state}\""), v as f64));
        }
        nodes.samples.push((l.clone(), j.nodes as f64));
        discarded
            .samples
            .push((l.clone(), j.nodes_discarded as f64));
        rate.samples.push((l.clone(), j.nodes_per_second));
        let r = if j.units_total == 0 {
            0.0
        } else {
            j.units_done as f64 / j.units_total as f64
        };
        ratio.samples.push((l.clone(), r));
        running
            .samples
            .push((l, f64::from(u8::from(j.state == JobState::Running))));
    }
    let mut live = Metric::new(
        "orchard_workers_live",
        "gauge",
        "Workers heard from within one lease time.",
    );
    live.samples.push((
        String::new(),
        workers.iter().filter(|w| w.live).count() as f64,
    ));
    let mut wrate = Metric::new(
        "orchard_worker_nodes_per_second",
        "gauge",
        "Node rate of each worker over the last 20 s.",
    );
    for w in &workers {
        wrate.samples.push((
            format!("worker=\"{}\",host=\"{}\"", w.id, label(&w.hostname)),
            w.nodes_per_second,
        ));
    }
    let counter = |name, help, v: u64| {
        let mut m = Metric::new(name, "counter", help);
        m.samples.push((String::new(), v as f64));
        m
    };
    let gauge = |name, help, v: u64| {
        let mut m = Metric::new(name, "gauge", help);
        m.samples.push((String::new(), v as f64));
        m
    };
    let all = [
        units,
        nodes,
        discarded,
        rate,
        ratio,
        running,
        live,
        wrate,
        counter(
            "orchard_lease_expiries_total",
            "Leases that expired (their worker went silent).",
            c.lease_expiries,
        ),
        counter(
            "orchard_units_narrowed_total",
            "Units leased asking less than they were made with (a narrower game-search window).",
            c.units_narrowed,
        ),
        counter(
            "orchard_units_reopened_total",
            "Units a family said its answer still needed when a job had no unit left (a safety net: should stay 0).",
            c.units_reopened,
        ),
        counter(
            "orchard_reports_total",
            "Unit reports committed.",
            c.reports,
        ),
        counter(
            "orchard_store_commit_failures_total",
            "Database commits that failed and were rolled back (a full disk, an I/O error).",
            store.commit_failures.load(Ordering::Relaxed),
        ),
        gauge(
            "orchard_store_disk_full",
            "1 while the last database commit failed because the disk is full: reports are refused until space returns.",
            u64::from(store.disk_full.load(Ordering::Relaxed)),
        ),
        counter(
            "orchard_reports_ignored_total",
            "Unit reports acknowledged and ignored: late (done by another worker meanwhile) or duplicate.",
            c.reports_ignored,
        ),
        counter(
            "orchard_units_cancelled_total",
            "Units cancelled because they could no longer change an answer.",
            c.units_cancelled,
        ),
        counter(
            "orchard_speculation_yields_total",
            "Leased units that yielded because the job's judge came to rank them speculative (its guess turned): running ones asked to split, ones leased ahead put back.",
            c.speculation_yields,
        ),
        counter(
            "orchard_worker_registrations_total",
            "Worker registrations.",
            c.registrations,
        ),
        counter(
            "orchard_reports_refused_total",
            "Unit reports refused (PermissionDenied) and not counted: the worker was never leased the unit.",
            c.reports_refused,
        ),
        counter(
            "orchard_progress_refused_total",
            "Heartbeat progress for a unit the worker does not hold: not counted, the unit cancelled on the worker.",
            c.progress_refused,
        ),
        counter(
            "orchard_returns_refused_total",
            "Units given back (ReturnLeases) by a worker that does not hold them: ignored.",
            c.returns_refused,
        ),
    ];
    let mut body = String::new();
    for m in &all {
        m.render(&mut body);
    }
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], body).into_response()
}
