//! `orchard backup`: a verified copy of a database, taken while it runs.

use std::process::ExitCode;

use orchard_coordinator::backup;

use super::CliResult;
use crate::cli::BackupArgs;

pub fn backup(args: BackupArgs) -> CliResult {
    let s = backup::backup(&args.db, &args.out)
        .map_err(|e| format!("backup of {} failed: {e}", args.db.display()))?;
    println!(
        "{} -> {}: {} jobs ({} running), {} units ({} done), {} bytes, verified",
        args.db.display(),
        args.out.display(),
        s.jobs,
        s.running_jobs,
        s.units,
        s.done_units,
        s.bytes
    );
    Ok(ExitCode::SUCCESS)
}
