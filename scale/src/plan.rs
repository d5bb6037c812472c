//! The run's plan, made from the command line before anything starts: the
//! arguments checked, every worker's speed and presence (who joins late,
//! who leaves and how), the job sized so that it takes `--seconds` ideally,
//! the unit budget, and the ideal makespan the measured one is compared
//! with. Nothing here talks to the coordinator, so a bad argument fails
//! before a process is started.

use std::path::PathBuf;
use std::time::Duration;

use orchard_core::{Host, SearchFamily};
use orchard_synthetic::tree::mix;
use orchard_synthetic::{Synthetic, SyntheticParams};

use crate::worker::{Leave, Plan};
use crate::{ideal, Args};

/// What a run will do.
pub struct RunPlan {
    /// Where the database, results and the coordinator's log go.
    pub dir: PathBuf,
    /// Each worker's part (speed, joining, leaving).
    pub workers: Vec<Plan>,
    /// Workers that join late (registered after the job starts).
    pub joiners: usize,
    /// The job's nodes and its parameters.
    pub nodes: u64,
    pub params: SyntheticParams,
    /// The job, as the workers explore it.
    pub job: Synthetic,
    /// The checksum the merged answer must have to be exact.
    pub expected_checksum: u64,
    /// The coordinator's unit budget, nodes.
    pub budget: u64,
    /// The ideal makespan, seconds (see `ideal`).
    pub ideal: f64,
}

/// A uniform number in [0, 1) from a seed.
fn uniform(seed: u64) -> f64 {
    (mix(seed) >> 11) as f64 / (1u64 << 53) as f64
}

/// Checks the arguments and plans the run.
pub fn plan(a: &Args) -> Result<RunPlan, String> {
    let n = a
        .workers
        .ok_or("WORKERS is required (or a mode, such as replay)")?;
    if n == 0 || n > 10_000 {
        return Err(format!("WORKERS must be between 1 and 10000, got {n}"));
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
    let workers: Vec<Plan> = (0..n)
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
    let presences: Vec<ideal::Presence> = workers
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
    Ok(RunPlan {
        dir,
        workers,
        joiners,
        nodes,
        params,
        job,
        expected_checksum,
        budget,
        ideal,
    })
}
