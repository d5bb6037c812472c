//! Starting a planned run: the coordinator as a child process, the
//! workers' HTTP/2 connections, every simulated worker as a task, the wait
//! until those present at the start have registered (so that the fan-out is
//! measured from a full house), and the job's submission, which is the
//! run's time zero.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use orchard_proto::v1::job_service_client::JobServiceClient;
use orchard_proto::v1::worker_service_client::WorkerServiceClient;
use orchard_proto::v1::SubmitRequest;
use tokio::sync::watch;
use tokio::task::JoinSet;
use tonic::transport::{Channel, Endpoint};

use crate::plan::RunPlan;
use crate::process::{self, CoordinatorFlags, CoordinatorProcess};
use crate::worker::{self, Run, SlotPolicy, Stats};
use crate::Args;

/// A run whose job has been submitted.
pub struct Started {
    pub coordinator: CoordinatorProcess,
    /// The coordinator's and this process's CPU seconds before the run.
    pub cpu_at_start: f64,
    pub own_cpu_at_start: f64,
    /// The HTTP/2 connections the workers share.
    pub connections: usize,
    /// What every worker shares (its counters among it).
    pub shared: Arc<Run>,
    /// The workers' tasks, aborted at the end.
    pub workers: JoinSet<()>,
    /// Workers present at the start, and how long they took to register.
    pub at_start: u64,
    pub registration_s: f64,
    /// A client of the job service, and the job.
    pub jobs: JobServiceClient<Channel>,
    pub job_id: u64,
    /// When the job was submitted.
    pub t0: Instant,
    /// Set when the run is over: the workers and the sampler stop.
    pub done: watch::Sender<bool>,
    /// Holds the job's start time for workers that join late.
    pub _started: watch::Sender<Option<Instant>>,
}

/// Starts the coordinator and the workers, and submits the job.
pub async fn start(a: &Args, plan: RunPlan) -> Result<Started, String> {
    let coordinator = CoordinatorProcess::start(
        &a.orchard,
        &plan.dir,
        &CoordinatorFlags {
            lease_ttl: a.lease_ttl,
            heartbeat_interval: a.heartbeat,
            unit_budget: plan.budget,
        },
    )
    .await?;
    let cpu_at_start = process::cpu_seconds(coordinator.pid()).unwrap_or(0.0);
    let own_cpu_at_start = process::cpu_seconds(process::own_pid()).unwrap_or(0.0);

    let n = plan.workers.len();
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
        job: plan.job,
        rtt: Duration::from_secs_f64(a.rtt_ms / 1000.0),
        slots: a.slots.max(1),
        policy: SlotPolicy::from_switches(
            a.prefetch,
            a.blocking_reports,
            !a.no_report_lease,
            !a.no_lease_ahead,
        ),
        heartbeat_lists_queued: !a.no_lease_ahead,
        await_splits: !a.no_await_splits,
        stats: Stats::new(stats_seconds),
        started: started_rx,
        done: done_rx,
        registered: tokio::sync::Notify::new(),
    });
    let mut workers = JoinSet::new();
    for (i, p) in plan.workers.iter().enumerate() {
        let client = WorkerServiceClient::new(channels[i % connections].clone());
        workers.spawn(worker::simulate(
            shared.clone(),
            client,
            format!("sim-{i}"),
            *p,
        ));
    }
    // Everyone present at the start registers before the job exists.
    let at_start = (n - plan.joiners) as u64;
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
        "{at_start} workers registered in {registration_s:.1} s; job of {} nodes, unit budget {}, ideal {:.1} s",
        plan.nodes, plan.budget, plan.ideal
    );

    let mut jobs = JobServiceClient::new(channels[0].clone());
    let params_json = serde_json::to_string(&plan.params).expect("parameters serialise");
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
    Ok(Started {
        coordinator,
        cpu_at_start,
        own_cpu_at_start,
        connections,
        shared,
        workers,
        at_start,
        registration_s,
        jobs,
        job_id,
        t0,
        done: done_tx,
        _started: started_tx,
    })
}
