//! `orchard-scale WORKERS [OPTIONS]`: the real coordinator (a child
//! `orchard coordinator` process: real gRPC on 127.0.0.1, real SQLite with
//! fsync) against WORKERS simulated workers in this process, exploring a
//! `synthetic` job in virtual time. The last line printed is one JSON object
//! (built at the end of [`run`]): efficiency (ideal makespan / measured
//! makespan), the peak of durable reports per second, the coordinator's CPU
//! time, peak memory and database size, and whether the merged answer is
//! exactly the tree (`exact`). `bench/scale.sh` builds and runs it.

#![recursion_limit = "256"]

mod ideal;
mod process;
mod worker;

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use orchard_core::{Host, SearchFamily};
use orchard_proto::v1::job_service_client::JobServiceClient;
use orchard_proto::v1::worker_service_client::WorkerServiceClient;
use orchard_proto::v1::{JobState, ResultsRequest, StatusRequest, SubmitRequest};
use orchard_synthetic::tree::mix;
use orchard_synthetic::{Synthetic, SyntheticParams};
use tokio::sync::watch;
use tonic::transport::{Channel, Endpoint};

use process::{CoordinatorFlags, CoordinatorProcess};
use worker::{Leave, Plan, Run, Stats};

/// Simulated workers against the real coordinator.
#[derive(Debug, Parser)]
#[command(name = "orchard-scale")]
struct Args {
    /// Simulated workers (10 .. 10,000; the coordinator accepts 10,000).
    workers: usize,
    /// The `orchard` binary to run as the coordinator.
    #[arg(long, default_value = "target/release/orchard")]
    orchard: PathBuf,
    /// Directory for the database, results and the coordinator's log
    /// (default: a new one under the system's temporary directory).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Network round trip injected around every call, in milliseconds.
    #[arg(long, default_value_t = 0.0)]
    rtt_ms: f64,
    /// Mean virtual speed of a worker, nodes per second.
    #[arg(long, default_value_t = 1e9)]
    speed: f64,
    /// Speeds spread log-uniformly over [speed / S, speed * S] (1: all equal).
    #[arg(long, default_value_t = 1.0)]
    speed_spread: f64,
    /// The job is sized so that it takes this long ideally (all workers at
    /// full speed, no overhead).
    #[arg(long, default_value_t = 60.0)]
    seconds: f64,
    /// The coordinator's unit budget, as seconds of a mean worker's work.
    #[arg(long, default_value_t = 2.0)]
    unit_seconds: f64,
    /// Fraction of the workers that leave mid-run.
    #[arg(long, default_value_t = 0.0)]
    leave: f64,
    /// When they leave, as a fraction of the ideal makespan of all workers.
    #[arg(long, default_value_t = 0.5)]
    leave_at: f64,
    /// Leaving workers are killed (nothing reported, leases expire) or
    /// stopped (units cut and reported, the rest handed back).
    #[arg(long, value_parser = ["kill", "stop"], default_value = "kill")]
    leave_how: String,
    /// Fraction of the workers that join late.
    #[arg(long, default_value_t = 0.0)]
    join: f64,
    /// When they join, as a fraction of the ideal makespan of all workers.
    #[arg(long, default_value_t = 0.25)]
    join_at: f64,
    /// Units a worker runs at once (its threads).
    #[arg(long, default_value_t = 1)]
    slots: u32,
    /// Units a worker keeps leased ahead of its free slots, reporting in
    /// the background (0: as the real worker, which leases one unit a free
    /// slot).
    #[arg(long, default_value_t = 0)]
    prefetch: u32,
    /// Do not long-poll `AwaitSplits` (split requests then travel with
    /// heartbeats only; a coordinator without the call refuses it and the
    /// workers fall back by themselves).
    #[arg(long)]
    no_await_splits: bool,
    /// A slot waits for its report's acknowledgement before it leases again,
    /// in a call of its own (by default the report asks for the slot's next
    /// unit). Ignored with --prefetch.
    #[arg(long)]
    blocking_reports: bool,
    /// A slot whose unit ended asks with `Lease` while the report travels
    /// in the background; by default
    /// the unit's report asks for the next unit (`want_units`,
    /// report-and-lease: one call a unit).
    #[arg(long)]
    no_report_lease: bool,
    /// Report-and-lease without lease-ahead: a report asks only for the
    /// slot's next unit once its unit has ended; by default it also asks
    /// for one to hold queued (`queue_units`), which starts when the
    /// running unit ends, as the real worker does.
    #[arg(long)]
    no_lease_ahead: bool,
    /// HTTP/2 connections the workers share (default: one per worker, as
    /// real machines have).
    #[arg(long)]
    connections: Option<usize>,
    /// The coordinator's heartbeat interval and lease time, seconds.
    #[arg(long, default_value_t = 2.0)]
    heartbeat: f64,
    #[arg(long, default_value_t = 10.0)]
    lease_ttl: f64,
    /// The synthetic tree: seed, tail, branching, root units.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long, default_value_t = 2)]
    tail: u32,
    #[arg(long, default_value_t = 8)]
    branching: u32,
    #[arg(long, default_value_t = 1)]
    root_units: u64,
    /// Give up (and report `exact: false`) after this many seconds.
    #[arg(long, default_value_t = 1800.0)]
    timeout: f64,
}

/// A uniform number in [0, 1) from a seed.
fn uniform(seed: u64) -> f64 {
    (mix(seed) >> 11) as f64 / (1u64 << 53) as f64
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    match run(args).await {
        Ok(json) => println!("{json}"),
        Err(e) => {
            eprintln!("orchard-scale: {e}");
            std::process::exit(1);
        }
    }
}

async fn run(a: Args) -> Result<serde_json::Value, String> {
    if a.workers == 0 || a.workers > 10_000 {
        return Err(format!(
            "WORKERS must be between 1 and 10000, got {}",
            a.workers
        ));
    }
    for (name, f) in [("leave", a.leave), ("join", a.join)] {
        if !(0.0..1.0).contains(&f) {
            return Err(format!("--{name} must be in [0, 1), got {f}"));
        }
    }
    if a.speed_spread < 1.0 || a.speed <= 0.0 || a.seconds <= 0.0 || a.unit_seconds <= 0.0 {
        return Err(
            "--speed, --seconds, --unit-seconds must be positive, --speed-spread >= 1".into(),
        );
    }
    let dir = match &a.dir {
        Some(d) => d.clone(),
        None => std::env::temp_dir().join(format!("orchard-scale-{}", std::process::id())),
    };
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;

    // Who runs at what speed, who joins and leaves.
    let n = a.workers;
    let leavers = (a.leave * n as f64).round() as usize;
    let joiners = (a.join * n as f64).round() as usize;
    let speeds: Vec<f64> = (0..n)
        .map(|i| {
            a.speed
                * a.speed_spread
                    .powf(2.0 * uniform(a.seed ^ (i as u64 + 1)) - 1.0)
        })
        .collect();
    let total_speed: f64 = speeds.iter().sum();
    // Sized on every worker present all along; joiners and leavers make the
    // ideal (computed below) longer.
    let nodes = (a.seconds * total_speed) as u64;
    let budget = (a.unit_seconds * a.speed).max(1.0) as u64;
    let all_along = a.seconds;
    let plans: Vec<Plan> = (0..n)
        .map(|i| Plan {
            speed: speeds[i],
            join_at: (i >= n - leavers - joiners && i < n - leavers)
                .then(|| Duration::from_secs_f64(a.join_at * all_along)),
            leave_at: (i >= n - leavers).then(|| {
                let how = if a.leave_how == "stop" {
                    Leave::Stop
                } else {
                    Leave::Kill
                };
                (Duration::from_secs_f64(a.leave_at * all_along), how)
            }),
        })
        .collect();
    let presences: Vec<ideal::Presence> = plans
        .iter()
        .map(|p| ideal::Presence {
            speed: p.speed,
            from: p.join_at.map_or(0.0, |d| d.as_secs_f64()),
            until: p.leave_at.map_or(f64::INFINITY, |(d, _)| d.as_secs_f64()),
        })
        .collect();
    let ideal = ideal::makespan(nodes as f64, &presences).ok_or("every worker leaves")?;

    let params = SyntheticParams {
        seed: a.seed,
        nodes,
        tail: a.tail,
        branching: a.branching,
        root_units: a.root_units,
        node_cost_ns: 0,
    };
    let job = Synthetic::new(params.clone(), &Host::default()).map_err(|e| e.to_string())?;
    let expected_checksum = job.tree().expected_checksum();

    let coordinator = CoordinatorProcess::start(
        &a.orchard,
        &dir,
        &CoordinatorFlags {
            lease_ttl: a.lease_ttl,
            heartbeat_interval: a.heartbeat,
            unit_budget: budget,
        },
    )
    .await?;
    let pid = coordinator.pid();
    let cpu_at_start = process::cpu_seconds(pid).unwrap_or(0.0);
    let own_cpu_at_start = process::cpu_seconds(process::own_pid()).unwrap_or(0.0);

    let connections = a.connections.unwrap_or(n).clamp(1, n);
    let channels: Vec<Channel> = (0..connections)
        .map(|_| {
            Endpoint::from_shared(coordinator.url.clone())
                .map(|e| e.tcp_nodelay(true).connect_lazy())
                .map_err(|e| e.to_string())
        })
        .collect::<Result<_, _>>()?;

    let (started_tx, started_rx) = watch::channel(None);
    let (done_tx, done_rx) = watch::channel(false);
    let stats_seconds = (a.timeout as usize).max(60) + 60;
    let shared = Arc::new(Run {
        job,
        rtt: Duration::from_secs_f64(a.rtt_ms / 1000.0),
        slots: a.slots.max(1),
        prefetch: a.prefetch,
        blocking_reports: a.blocking_reports,
        report_lease: !a.no_report_lease,
        lease_ahead: !a.no_lease_ahead,
        await_splits: !a.no_await_splits,
        stats: Stats::new(stats_seconds),
        started: started_rx,
        done: done_rx,
        registered: tokio::sync::Notify::new(),
    });
    let mut workers = tokio::task::JoinSet::new();
    for (i, plan) in plans.iter().enumerate() {
        let client = WorkerServiceClient::new(channels[i % connections].clone());
        workers.spawn(worker::simulate(
            shared.clone(),
            client,
            format!("sim-{i}"),
            *plan,
        ));
    }
    // Everyone present at the start registers before the job exists.
    let at_start = (n - joiners) as u64;
    let t_reg = Instant::now();
    while shared.stats.registered.load(Ordering::Relaxed) < at_start {
        if t_reg.elapsed() > Duration::from_secs(300) {
            return Err(format!(
                "only {} of {at_start} workers registered in 300 s",
                shared.stats.registered.load(Ordering::Relaxed)
            ));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let registration_s = t_reg.elapsed().as_secs_f64();
    eprintln!(
        "{at_start} workers registered in {registration_s:.1} s; job of {nodes} nodes, unit budget {budget}, ideal {ideal:.1} s"
    );

    let mut jobs = JobServiceClient::new(channels[0].clone());
    let params_json = serde_json::to_string(&params).expect("parameters serialise");
    let job_id = jobs
        .submit(SubmitRequest {
            family: "synthetic".into(),
            params_json,
            replicas: 1,
        })
        .await
        .map_err(|e| format!("submitting the job: {}", e.message()))?
        .into_inner()
        .job_id;
    let t0 = Instant::now();
    started_tx.send_replace(Some(t0));

    // The fan-out: when half and 90% of the workers present at the start
    // first run a unit at once, and the busy worker-seconds over the run
    // (sampled every 10 ms).
    let fan_out = {
        let shared = shared.clone();
        let mut done = shared.done.clone();
        tokio::spawn(async move {
            let (mut half, mut most) = (None, None);
            let mut busy_seconds = 0.0;
            let mut peak = 0u64;
            let tick = Duration::from_millis(10);
            let mut last = Instant::now();
            loop {
                tokio::select! {
                    _ = done.wait_for(|d| *d) => break,
                    _ = tokio::time::sleep(tick) => {}
                }
                // The time since the last sample, not the tick: on a
                // loaded machine the sleep overshoots.
                let busy = shared.stats.busy_workers.load(Ordering::Relaxed);
                busy_seconds += busy as f64 * last.elapsed().as_secs_f64();
                last = Instant::now();
                peak = peak.max(busy);
                let t = t0.elapsed().as_secs_f64();
                if half.is_none() && busy * 2 >= at_start {
                    half = Some(t);
                }
                if most.is_none() && busy * 10 >= at_start * 9 {
                    most = Some(t);
                }
            }
            (half, most, busy_seconds, peak)
        })
    };

    // Wait for the end, printing progress now and then.
    let deadline = t0 + Duration::from_secs_f64(a.timeout);
    let mut last_print = Instant::now();
    let status = loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let s = jobs
            .status(StatusRequest { job_id })
            .await
            .map_err(|e| format!("status: {}", e.message()))?
            .into_inner()
            .jobs
            .into_iter()
            .next()
            .ok_or("the job vanished")?;
        if s.state != JobState::Running as i32 || Instant::now() > deadline {
            break s;
        }
        if last_print.elapsed() > Duration::from_secs(10) {
            last_print = Instant::now();
            eprintln!(
                "{:.0} s: {} units done, {} running, {} pending, {:.1}% of the nodes",
                t0.elapsed().as_secs_f64(),
                s.units_done,
                s.units_running,
                s.units_pending,
                100.0 * s.nodes as f64 / nodes as f64
            );
        }
    };
    let wall = t0.elapsed().as_secs_f64();
    done_tx.send_replace(true);
    let (fan_out_half, fan_out_90, busy_seconds, peak_busy) =
        fan_out.await.map_err(|e| format!("fan-out sampler: {e}"))?;
    let coordinator_cpu = process::cpu_seconds(pid).unwrap_or(f64::NAN) - cpu_at_start;
    let harness_cpu =
        process::cpu_seconds(process::own_pid()).unwrap_or(f64::NAN) - own_cpu_at_start;
    let rss = process::status_bytes(pid, "VmHWM:").unwrap_or(0);
    let db_bytes = coordinator.db_bytes();

    let finished = status.state == JobState::Done as i32;
    let makespan = if finished && status.finished_unix_ms >= status.created_unix_ms {
        (status.finished_unix_ms - status.created_unix_ms) as f64 / 1000.0
    } else {
        wall
    };
    let results = jobs
        .results(ResultsRequest { job_id })
        .await
        .map_err(|e| format!("results: {}", e.message()))?
        .into_inner();
    let answer: serde_json::Value =
        serde_json::from_str(&results.result_json).unwrap_or(serde_json::Value::Null);
    let merged_nodes = answer["nodes"].as_u64().unwrap_or(0);
    let merged_checksum = answer["checksum"].as_str().unwrap_or("").to_string();
    let exact =
        finished && merged_nodes == nodes && merged_checksum == format!("{expected_checksum:016x}");
    workers.abort_all();
    drop(coordinator);

    let st = &shared.stats;
    let units = status.units_total;
    let per_million = |x: u64| {
        if units == 0 {
            0.0
        } else {
            (x as f64 * 1e6 / units as f64).round()
        }
    };
    let reports = st.reports_accepted.load(Ordering::Relaxed);
    Ok(serde_json::json!({
        "workers": n,
        "rtt_ms": a.rtt_ms,
        "speed_spread": a.speed_spread,
        "leave": a.leave,
        "leave_how": a.leave_how,
        "join": a.join,
        "slots": a.slots,
        "prefetch": a.prefetch,
        "connections": connections,
        "heartbeat_s": a.heartbeat,
        "lease_ttl_s": a.lease_ttl,
        "nodes": nodes,
        "unit_budget": budget,
        "root_units": a.root_units,
        "tail": a.tail,
        "registration_s": round(registration_s, 2),
        "ideal_makespan_s": round(ideal, 2),
        "makespan_s": round(makespan, 2),
        "efficiency": round(ideal / makespan, 4),
        "fan_out_50pct_s": fan_out_half.map(|t| round(t, 2)),
        "fan_out_90pct_s": fan_out_90.map(|t| round(t, 2)),
        "peak_busy_workers": peak_busy,
        "busy_share": round(busy_seconds / (wall * at_start as f64).max(1e-9), 4),
        "prompt_splits": st.prompt_splits.load(Ordering::Relaxed),
        "blocking_reports": a.blocking_reports,
        "report_lease": !a.no_report_lease && a.prefetch == 0 && !a.blocking_reports,
        "lease_ahead": !a.no_lease_ahead
            && !a.no_report_lease
            && a.prefetch == 0
            && !a.blocking_reports,
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
        "coordinator_cpu_us_per_unit": round(coordinator_cpu * 1e6 / units.max(1) as f64, 1),
        "coordinator_cpu_seconds": round(coordinator_cpu, 2),
        "coordinator_cpu_share": round(coordinator_cpu / makespan, 3),
        "coordinator_rss_bytes": rss,
        "db_bytes": db_bytes,
        "rss_bytes_per_million_units": per_million(rss),
        "db_bytes_per_million_units": per_million(db_bytes),
        "harness_cpu_seconds": round(harness_cpu, 2),
        "dir": dir.display().to_string(),
    }))
}

fn round(x: f64, digits: i32) -> f64 {
    let p = 10f64.powi(digits);
    (x * p).round() / p
}
