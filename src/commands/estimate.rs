//! `orchard estimate`: how big is a search, and how long will it take?
//! Knuth's random probes estimate the node count (see
//! `orchard_core::estimate`), and a short real run on one core measures the
//! node rate. Nothing is stored and no coordinator is involved.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use orchard_core::estimate::{calibrate, estimate as knuth, supported};
use orchard_core::{Host, Registry};

use super::CliResult;
use crate::cli::FamilyChoice;

#[derive(Args, Debug)]
pub struct EstimateArgs {
    /// Random root-to-leaf probes to average.
    #[arg(long, global = true, default_value_t = 10_000)]
    pub probes: u64,
    /// Seed of the probes' random choices (default: from the clock; printed,
    /// so that a run can be repeated).
    #[arg(long, global = true)]
    pub seed: Option<u64>,
    /// Seconds of real search, on one core, to measure the node rate.
    #[arg(long, global = true, default_value_t = 1.0)]
    pub measure_seconds: f64,
    /// Project the running time for this many cores too (default: this
    /// machine's).
    #[arg(long, global = true)]
    pub cores: Option<usize>,
    /// Print one JSON object.
    #[arg(long, global = true)]
    pub json: bool,
}

/// Nodes per explore call while measuring: small enough to stop close to
/// the time limit, large enough that the per-call cost does not count.
const MEASURE_CHUNK: u64 = 1 << 16;

pub fn estimate(args: EstimateArgs, family: FamilyChoice, registry: &Registry) -> CliResult {
    if args.probes == 0 {
        return Err("--probes must be at least 1".into());
    }
    if !(args.measure_seconds.is_finite()
        && args.measure_seconds > 0.0
        && args.measure_seconds <= 3600.0)
    {
        return Err(format!(
            "--measure-seconds must be above 0 and at most 3600, got {}",
            args.measure_seconds
        )
        .into());
    }
    let cores = match args.cores {
        Some(0) => return Err("--cores must be at least 1".into()),
        Some(n) => n,
        None => std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
    };
    let seed = args.seed.unwrap_or_else(clock_seed);
    let job = registry
        .by_name(family.family)?
        .prepare(&family.params_json, &Host::default())?;
    if !supported(job.as_ref())? {
        return Err(format!(
            "search family '{}' does not support estimates",
            family.family
        )
        .into());
    }

    let measured = calibrate(
        job.as_ref(),
        Duration::from_secs_f64(args.measure_seconds),
        MEASURE_CHUNK,
    )?;
    let started = Instant::now();
    let e = knuth(job.as_ref(), args.probes, seed, measured.bound)?;
    let probe_seconds = started.elapsed().as_secs_f64();
    let rate = measured.nodes_per_second();
    let projected = (rate > 0.0).then(|| e.nodes / rate);
    let on_cores = projected.map(|s| s / cores as f64);
    let exact = measured.finished.then_some(measured.nodes);

    if args.json {
        let params: serde_json::Value =
            serde_json::from_str(&family.params_json).expect("canonical parameters are JSON");
        let out = serde_json::json!({
            "family": family.family,
            "params": params,
            "estimated_nodes": e.nodes,
            "std_error": e.std_error,
            "interval_95": [e.low95, e.high95],
            "probes": e.probes,
            "seed": e.seed,
            "max_depth": e.max_depth,
            "bound": measured.bound,
            "nodes_per_second": rate,
            "measured_nodes": measured.nodes,
            "measured_seconds": measured.seconds,
            "exact_nodes": exact,
            "projected_seconds": projected,
            "cores": cores,
            "projected_seconds_on_cores": on_cores,
            "probe_seconds": probe_seconds,
        });
        println!("{out}");
        return Ok(ExitCode::SUCCESS);
    }

    println!(
        "estimated nodes: {} ± {} (standard error), 95% interval {} .. {}",
        count(e.nodes),
        count(e.std_error),
        count(e.low95),
        count(e.high95)
    );
    println!(
        "  from {} probes (seed {seed}, deepest {} moves) in {:.2} s",
        e.probes, e.max_depth, probe_seconds
    );
    if measured.bound > 0 {
        println!(
            "  every probe assumes the job-wide bound the measuring run reached: {} \
             (hc: the best game length found; the real search starts lower, so the \
             estimate is of a search that knew it from the start)",
            measured.bound
        );
    }
    println!(
        "node rate: {} nodes/s on one core ({} nodes in {:.2} s of the real search)",
        count(rate),
        count(measured.nodes as f64),
        measured.seconds
    );
    if let Some(n) = exact {
        println!("  the measuring run finished the whole search: exactly {n} nodes");
    }
    match (projected, on_cores) {
        (Some(one), Some(many)) => println!(
            "projected time: {} on 1 core, {} on {cores} cores (if they scale perfectly)",
            duration(one),
            duration(many)
        ),
        _ => println!("projected time: unknown (no node rate measured)"),
    }
    Ok(ExitCode::SUCCESS)
}

fn clock_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    (nanos as u64) ^ (u64::from(std::process::id()) << 32)
}

/// A node count: exact digits below a million, 3 significant digits above.
fn count(x: f64) -> String {
    if x.abs() < 1e6 {
        format!("{}", x.round())
    } else {
        format!("{x:.3e}")
    }
}

/// Seconds as a human duration.
fn duration(s: f64) -> String {
    const MINUTE: f64 = 60.0;
    const HOUR: f64 = 3600.0;
    const DAY: f64 = 86400.0;
    const YEAR: f64 = 365.25 * DAY;
    if s < MINUTE {
        format!("{s:.1} s")
    } else if s < HOUR {
        format!("{:.1} min", s / MINUTE)
    } else if s < DAY {
        format!("{:.1} h", s / HOUR)
    } else if s < YEAR {
        format!("{:.1} days", s / DAY)
    } else {
        format!("{:.3e} years", s / YEAR)
    }
}
