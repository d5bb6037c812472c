//! `orchard coordinator` and `orchard worker`: the long-running services.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use orchard_coordinator::{Coordinator, CoordinatorConfig};
use orchard_worker::{run_worker, WorkerConfig};

use super::{termination, CliResult};
use crate::cli::{CoordinatorArgs, WorkerArgs};

fn seconds(flag: &str, v: f64) -> Result<Duration, String> {
    if v.is_finite() && v > 0.0 && v < 1e9 {
        Ok(Duration::from_secs_f64(v))
    } else {
        Err(format!(
            "--{flag} must be a positive number of seconds, got {v}"
        ))
    }
}

/// The coordinator's database directory must exist; the database file is
/// created if absent.
pub fn check_db_parent(db: &Path) -> Result<(), String> {
    match db.parent() {
        Some(dir) if !dir.as_os_str().is_empty() && !dir.is_dir() => {
            Err(format!("{}: directory does not exist", dir.display()))
        }
        _ => Ok(()),
    }
}

pub async fn coordinator(args: CoordinatorArgs) -> CliResult {
    check_db_parent(&args.db)?;
    let mut config = CoordinatorConfig::beside(&args.db);
    config.lease_ttl = seconds("lease-ttl", args.lease_ttl)?;
    if let Some(b) = args.unit_budget {
        if b == 0 {
            return Err("--unit-budget must be at least 1".into());
        }
        config.unit_budget = b;
    }
    if let Some(dir) = args.results_dir {
        config.results_dir = dir;
    }
    let coordinator = Coordinator::open(&args.db, config).await?;
    let listener = Coordinator::bind(&args.listen).await?;
    eprintln!(
        "orchard coordinator listening on {} with database {}",
        listener.local_addr()?,
        args.db.display()
    );
    coordinator.serve(listener, termination()).await?;
    Ok(ExitCode::SUCCESS)
}

pub async fn worker(args: WorkerArgs) -> CliResult {
    let threads = match args.threads {
        Some(0) => return Err("--threads must be at least 1".into()),
        Some(t) => t,
        None => std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
    };
    let config = WorkerConfig {
        coordinator: args.coordinator,
        threads,
        name: args.name.unwrap_or_else(hostname),
        give_up_after: seconds("give-up-after", args.give_up_after)?,
    };
    let stats = run_worker(config, termination()).await?;
    eprintln!(
        "worker stopped: {} units reported ({} split), {} nodes",
        stats.units_reported, stats.units_split, stats.nodes
    );
    Ok(ExitCode::SUCCESS)
}

pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "worker".to_string())
}
