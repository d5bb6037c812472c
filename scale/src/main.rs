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
//! work and wall time on N machines from one machine's run; with
//! `--policy pn`, under a proof-number tree held at the coordinator instead
//! of the coordinator's own policy (see `replay::pns`).
//!
//! `orchard-scale proof DB` audits a finished `hip-solve` job: its root's
//! value proven from the merged summaries by a second implementation of
//! the rules (see `proof`).

#![recursion_limit = "256"]

mod ideal;
mod plan;
mod process;
mod proof;
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
    /// Proves a finished hip-solve job's root value from its database:
    /// the recorded tree checked by the reference rules, its leaves
    /// extended and decided by a plain search (all, or a sample); prints
    /// the report, then one JSON object.
    Proof(proof::ProofArgs),
}

#[derive(Debug, clap::Args)]
struct ReplayArgs {
    /// The coordinator's database of a finished hip-solve job (one job),
    /// best of a run with one worker: its units' costs are that worker's.
    db: PathBuf,
    /// The worker counts to replay, comma-separated. Under `--policy pn`
    /// the figures against the policy's own one worker need 1 among them
    /// ("-" without it); those against the recorded run do not.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1,2,4,8,16,32,64,128,256,512,1024"
    )]
    workers: Vec<usize>,
    /// The table of the census's searches (units the record has no
    /// result for), MiB; default: the family's for the board. Under
    /// `--policy pn`: the largest table of a cold leaf's search (default
    /// 256), and each warm table's size (default: the family's for the
    /// board, a worker's).
    #[arg(long)]
    cache_mib: Option<u64>,
    /// The scheduling replayed: `order`, the coordinator's (units in
    /// position order, young brothers wait), or `pn`, a proof-number tree
    /// over the top of the game tree held at the coordinator
    /// (`replay::pns`).
    #[arg(long, value_enum, default_value_t = Policy::Order)]
    policy: Policy,
    /// `--policy pn`: nodes a worker searches a leaf for before the
    /// coordinator expands it.
    #[arg(long, default_value_t = 1 << 20)]
    pn_budget: u64,
    /// `--policy pn`: what a leaf a worker holds adds to its proof and
    /// disproof numbers (virtual proof numbers).
    #[arg(long, default_value_t = 1)]
    pn_virtual: u64,
    /// `--policy pn`: plies of the tree expanded before any worker starts
    /// (default: the job's root units' depth).
    #[arg(long)]
    pn_depth: Option<u32>,
    /// `--policy pn`: the question, does the first player reach at least a
    /// draw or a win (default: a win if the job expects the first player to
    /// win, else a draw).
    #[arg(long, value_enum)]
    pn_target: Option<PnTarget>,
    /// `--policy pn`: every open leaf starts at proof and disproof numbers
    /// 1 and 1, instead of by its mobility.
    #[arg(long)]
    pn_uniform: bool,
    /// `--policy pn`: what a leaf's search finds in its table: `cold`, an
    /// empty one each leaf; `worker`, each worker's own, kept across the
    /// leaves it searches; `job`, one table all the workers share;
    /// `lemmas`, each worker's own and the lemmas of the others' searches
    /// ended by the time it starts a leaf; `stream`, each worker's own and
    /// the lemmas of the others' searches, each published
    /// `--pn-lemma-delay` nodes after its search stored it (as a real
    /// worker sends them while it searches).
    #[arg(long, value_enum, default_value_t = PnTables::Cold)]
    pn_tables: PnTables,
    /// `--pn-tables stream`: nodes of virtual time from a lemma's store to
    /// its publication (0: the most any exchange could do). A worker trades
    /// lemmas every 250 ms, so a lemma waits 0-250 ms to be sent and as
    /// long to be taken in: about 250 ms, 1e6 nodes at 4e6 nodes a second
    /// (one core on 5x5), the default.
    #[arg(long, default_value_t = 1_000_000)]
    pn_lemma_delay: u64,
    /// `--policy pn`: affinity, in per cent (0: none): an idle worker
    /// walks toward the leaf it searched last wherever that way's proof
    /// or disproof number is at most this per cent of the best child's
    /// (e.g. 200: within twice), so that its own table covers its next
    /// leaf.
    #[arg(long, default_value_t = 0)]
    pn_affinity: u64,
    /// `--policy pn`: seconds between two progress lines on stderr while a
    /// replay runs (0: none).
    #[arg(long, default_value_t = 60)]
    progress_secs: u64,
}

/// The proof-number policy's table model (`replay::pns::Tables`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum PnTables {
    Cold,
    Worker,
    Job,
    Lemmas,
    Stream,
}

/// A replay's scheduling policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Policy {
    Order,
    Pn,
}

/// The proof-number policy's question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum PnTarget {
    Draw,
    Win,
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
        Some(Mode::Proof(p)) => proof::proof(&p),
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
    if r.policy == Policy::Pn {
        return replay_pn_table(r);
    }
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

/// The replay mode under `--policy pn`: as [`replay_table`], with the
/// figures also against the recorded one-worker run.
fn replay_pn_table(r: &ReplayArgs) -> Result<serde_json::Value, String> {
    let context = |e: replay::hip::HipReplayError| format!("replaying {}: {e}", r.db.display());
    let target = r.pn_target.map(|t| match t {
        PnTarget::Draw => 0,
        PnTarget::Win => 1,
    });
    let mut game =
        replay::hip::HipPnGame::open(&r.db, target, r.pn_budget, r.cache_mib).map_err(context)?;
    let policy = replay::pns::PnPolicy {
        budget: r.pn_budget,
        virtual_pn: r.pn_virtual,
        depth: r.pn_depth.unwrap_or(game.root_depth()),
        mobility: !r.pn_uniform,
        tables: match r.pn_tables {
            PnTables::Cold => replay::pns::Tables::Cold,
            PnTables::Worker => replay::pns::Tables::Worker,
            PnTables::Job => replay::pns::Tables::Job,
            PnTables::Lemmas => replay::pns::Tables::Lemmas,
            PnTables::Stream => replay::pns::Tables::Stream {
                delay: r.pn_lemma_delay,
            },
        },
        affinity: r.pn_affinity,
    };
    // The warm models' name; the cold one's output is as without them.
    let tables_name = match policy.tables {
        replay::pns::Tables::Cold => None,
        replay::pns::Tables::Worker => Some("worker"),
        replay::pns::Tables::Job => Some("job"),
        replay::pns::Tables::Lemmas => Some("lemmas"),
        replay::pns::Tables::Stream { .. } => Some("stream"),
    };
    let delay = match policy.tables {
        replay::pns::Tables::Stream { delay } => Some(delay),
        _ => None,
    };
    let recorded = game.recorded_work.0 + game.recorded_work.1;
    eprintln!(
        "proof-number policy: P1 reaches at least {} ?, budget {} nodes, virtual {}, depth {}, \
         mobility {}{}{}{}; the recorded run: {} nodes, {} discarded, value {:?}",
        game.target(),
        policy.budget,
        policy.virtual_pn,
        policy.depth,
        policy.mobility,
        tables_name.map_or(String::new(), |t| format!(", tables {t}")),
        delay.map_or(String::new(), |d| format!(", lemma delay {d} nodes")),
        match policy.affinity {
            0 => String::new(),
            a => format!(", affinity {a}%"),
        },
        game.recorded_work.0,
        game.recorded_work.1,
        game.recorded_value,
    );
    eprintln!(
        "N | nodes | discarded | W(N) | makespan (nodes) | efficiency | W vs recorded | \
         efficiency vs recorded | leaf searches | settled / expanded | cancelled | tree | value"
    );
    // Against the policy's own one worker: "-" where it was not replayed.
    let own = |row: &replay::pns::PnRow| {
        row.own.map_or(("-".to_string(), "-".to_string()), |f| {
            (format!("{:.3}", f.w), format!("{:.3}", f.efficiency))
        })
    };
    let mut line = |game: &mut replay::hip::HipPnGame, row: &replay::pns::PnRow| {
        let o = &row.pn.outcome;
        let (w, efficiency) = own(row);
        eprintln!(
            "{} | {} | {} | {} | {} | {} | {:.3} | {:.3} | {} | {} / {} | {} | {} | {:?}",
            o.workers,
            o.nodes,
            o.discarded,
            w,
            o.makespan,
            efficiency,
            row.w_yardstick,
            row.efficiency_yardstick,
            o.units_done,
            row.pn.leaves_solved,
            row.pn.expansions,
            o.cancelled_running,
            row.pn.tree_nodes,
            row.pn.root.map(|a| game.value_of_answer(a)),
        );
        // What the searches learnt is kept as each row is made.
        game.save_census()
    };
    // A replay of a large record runs for hours before its row: where it is.
    let start = std::time::Instant::now();
    let mut last = start;
    let every = std::time::Duration::from_secs(r.progress_secs);
    let mut watch = |o: &replay::pns::PnOutcome| {
        let now = std::time::Instant::now();
        if r.progress_secs == 0 || now.duration_since(last) < every {
            return;
        }
        last = now;
        let work = o.outcome.work();
        eprintln!(
            "[{:.0} s] N = {}: virtual time {} nodes, work {} nodes ({:.3} of the recorded \
             run), {} leaf searches ({} settled, {} expanded), {} cancelled, tree {}",
            now.duration_since(start).as_secs_f64(),
            o.outcome.workers,
            o.outcome.makespan,
            work,
            work as f64 / recorded.max(1) as f64,
            o.outcome.units_done,
            o.leaves_solved,
            o.expansions,
            o.outcome.cancelled_running,
            o.tree_nodes,
        );
    };
    let rows = replay::pns::pn_table(
        &mut game, policy, &r.workers, recorded, &mut watch, &mut line,
    );
    game.save_census().map_err(context)?;
    let rows = rows.map_err(context)?;
    let (searched, finished, census_nodes) = game.census_counts();
    eprintln!(
        "the census: {searched} positions ({finished} to the end, {census_nodes} nodes; {} \
         searches, {} nodes in this process)",
        game.searches.0, game.searches.1,
    );
    let value = |p: &replay::pns::PnOutcome| p.root.map(|a| game.value_of_answer(a));
    let mut out = serde_json::json!({
        "db": r.db.display().to_string(),
        "policy": "pn",
        "pn_target": game.target(),
        "pn_budget": policy.budget,
        "pn_virtual": policy.virtual_pn,
        "pn_depth": policy.depth,
        "pn_mobility": policy.mobility,
        "census_positions": searched,
        "census_finished": finished,
        "census_nodes": census_nodes,
        "recorded_nodes": game.recorded_work.0,
        "recorded_discarded": game.recorded_work.1,
        "recorded_value": [game.recorded_value.0, game.recorded_value.1],
        // Whether every replay settled the root to the record's value.
        "values_match_record": rows
            .iter()
            .all(|row| value(&row.pn) == Some(game.recorded_value)),
        "rows": rows.iter().map(|row| {
            let o = &row.pn.outcome;
            serde_json::json!({
                "workers": o.workers,
                "nodes": o.nodes,
                "discarded": o.discarded,
                "w": row.own.map(|f| summary::round(f.w, 4)),
                "makespan_nodes": o.makespan,
                "efficiency": row.own.map(|f| summary::round(f.efficiency, 4)),
                "w_recorded": summary::round(row.w_yardstick, 4),
                "efficiency_recorded": summary::round(row.efficiency_yardstick, 4),
                "leaf_searches": o.units_done,
                "leaves_settled": row.pn.leaves_solved,
                "expansions": row.pn.expansions,
                "budget_nodes": row.pn.budget_nodes,
                "cancelled_running": o.cancelled_running,
                "tree_nodes": row.pn.tree_nodes,
                "value": value(&row.pn).map(|(lo, hi)| [lo, hi]),
            })
        }).collect::<Vec<_>>(),
    });
    if let Some(t) = tables_name {
        out["pn_tables"] = t.into();
    }
    if policy.affinity > 0 {
        out["pn_affinity"] = policy.affinity.into();
    }
    if let Some(d) = delay {
        out["pn_lemma_delay"] = d.into();
    }
    Ok(out)
}
