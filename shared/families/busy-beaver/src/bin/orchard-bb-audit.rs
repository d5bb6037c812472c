//! `orchard-bb-audit`: writes the audit file of a busy-beaver run (every
//! machine, its verdict and its certificate) and re-checks one. See
//! `orchard_busy_beaver::audit`.

use std::process::ExitCode;

use clap::Parser;
use orchard_busy_beaver::audit::cli::{run, AuditCli};

fn main() -> ExitCode {
    match run(AuditCli::parse()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("orchard-bb-audit: {e}");
            ExitCode::from(2)
        }
    }
}
