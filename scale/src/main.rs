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
//!
//! `orchard-scale replay DB --workers 1,2,4,...` is the other mode: no
//! coordinator, no gRPC; a finished `hip-solve` job's database replayed
//! with N simulated workers in virtual time (see `replay`), to predict its
//! work and wall time on N machines from one machine's run.

#![recursion_limit = "256"]

mod ideal;
mod plan;
mod process;
mod replay;
mod start;
mod summary;
mod watch;
mod worker;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// Simulated workers against the real coordinator, or a job's replay.
#[derive(Debug, Parser)]
#[command(
    name = "orchard-scale",
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
struct Cli {
    #[command(subcommand)]
    mode: Option<Mode>,
    #[command(flatten)]
    run: Args,
}

#[derive(Debug, Subcommand)]
enum Mode {
    /// Replays a finished hip-solve job's scheduling with N simulated
    /// workers in virtual time (one node a time step each); prints one
    /// line a worker count, then one JSON object.
    Replay(ReplayArgs),
}

#[derive(Debug, clap::Args)]
struct ReplayArgs {
    /// The coordinator's database of a finished hip-solve job (one job),
    /// best of a run with one worker: its units' costs are that worker's.
    db: PathBuf,
    /// The worker counts to replay, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1,2,4,8,16,32,64,128,256,512,1024"
    )]
    workers: Vec<usize>,
    /// The table of the census's searches (units the record has no
    /// result for), MiB; default: the family's for the board.
    #[arg(long)]
    cache_mib: Option<u64>,
}

/// Simulated workers against the real coordinator.
#[derive(Debug, clap::Args)]
struct Args {
    /// Simulated workers (10 .. 10,000; the coordinator accepts 10,000).
    workers: Option<usize>,
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
    let cli = Cli::parse();
    let out = match cli.mode {
        Some(Mode::Replay(r)) => replay_table(&r),
        None => run(cli.run).await,
    };
    match out {
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

/// The replay mode: a line a worker count on stderr, the table as JSON.
fn replay_table(r: &ReplayArgs) -> Result<serde_json::Value, String> {
    let context = |e: replay::hip::HipReplayError| format!("replaying {}: {e}", r.db.display());
    let mut oracle = replay::hip::HipOracle::open(&r.db, r.cache_mib).map_err(context)?;
    let rows = replay::table(&mut oracle, &r.workers);
    // What the census searched is kept even if a replay failed after it.
    oracle.save_census().map_err(context)?;
    let rows = rows.map_err(context)?;
    let (units, recorded, searched) = oracle.counts();
    let (census_finished, census_nodes) = oracle.census();
    eprintln!(
        "{units} units in the record, {recorded} with a result ({} nodes, {} discarded); \
         the census searched {searched} ({census_finished} to the end, {census_nodes} nodes)",
        oracle.recorded_work.0, oracle.recorded_work.1,
    );
    eprintln!("N | nodes | discarded | W(N) | makespan (nodes) | efficiency | done | cancelled running / pending | speculative");
    for row in &rows {
        let o = &row.outcome;
        eprintln!(
            "{} | {} | {} | {:.3} | {} | {:.3} | {} | {} / {} | {}",
            o.workers,
            o.nodes,
            o.discarded,
            row.w,
            o.makespan,
            row.efficiency,
            o.units_done,
            o.cancelled_running,
            o.cancelled_pending,
            o.speculative
        );
    }
    Ok(serde_json::json!({
        "db": r.db.display().to_string(),
        "units": units,
        "units_recorded": recorded,
        "units_census": searched,
        "units_census_finished": census_finished,
        "census_nodes": census_nodes,
        "recorded_nodes": oracle.recorded_work.0,
        "recorded_discarded": oracle.recorded_work.1,
        // The last replay's root, as the family reports it: the record's
        // value if the replay settled the job.
        "value": oracle.answer()["value"],
        "winner": oracle.answer()["winner"],
        "rows": rows.iter().map(|row| {
            let o = &row.outcome;
            serde_json::json!({
                "workers": o.workers,
                "nodes": o.nodes,
                "discarded": o.discarded,
                "w": summary::round(row.w, 4),
                "makespan_nodes": o.makespan,
                "efficiency": summary::round(row.efficiency, 4),
                "units_done": o.units_done,
                "cancelled_running": o.cancelled_running,
                "cancelled_pending": o.cancelled_pending,
                "speculative": o.speculative,
            })
        }).collect::<Vec<_>>(),
    }))
}
