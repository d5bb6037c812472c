//! `orchard-scale WORKERS [OPTIONS]`: the real coordinator (a child
//! `orchard coordinator` process: real gRPC on 127.0.0.1, real SQLite with
//! fsync) against WORKERS simulated workers in this process, exploring a
//! `synthetic` job in virtual time. The last line printed is one JSON object
//! (see `summary`): efficiency (ideal makespan / measured makespan), the
//! peak of durable reports per second, the coordinator's CPU time, peak
//! memory and database size, and whether the merged answer is exactly the
//! tree (`exact`). `bench/scale.sh` builds and runs it.
//!
//! A run has four steps, one module each: `plan` (the arguments checked,
//! the workers' speeds and presence, the job sized, the ideal makespan),
//! `start` (the coordinator, the workers, the job submitted), `watch` (to
//! the job's end, sampling the fan-out) and `summary` (the answer checked,
//! the figures). The simulated worker is `worker`.

#![recursion_limit = "256"]

mod ideal;
mod plan;
mod process;
mod start;
mod summary;
mod watch;
mod worker;

use std::path::PathBuf;

use clap::Parser;

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

/// One run: planned, started, watched to its end, summarised.
async fn run(a: Args) -> Result<serde_json::Value, String> {
    let plan = plan::plan(&a)?;
    let planned = summary::Planned::of(&plan);
    let nodes = plan.nodes;
    let mut started = start::start(&a, plan).await?;
    let watched = watch::watch(&a, &mut started, nodes).await?;
    summary::summarise(&a, planned, started, watched).await
}
