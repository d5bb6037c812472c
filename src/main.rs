//! `orchard`: the one user-facing binary, a thin layer over the
//! `orchard-coordinator` and `orchard-worker` crates, with the families of
//! `shared/` listed in `orchard::families` (the package's library half).
//!
//! Every failure ends in one line on stderr (`error: ...`) and a non-zero
//! exit code.

mod cli;
mod commands;
mod output;

use std::process::ExitCode;

fn main() -> ExitCode {
    let invocation = match cli::parse() {
        Ok(i) => i,
        Err(e) if !e.use_stderr() => {
            // --help and --version.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("{}", cli::one_line(&e));
            return ExitCode::from(2);
        }
    };
    init_tracing(invocation.quiet_logs());
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(commands::dispatch(invocation)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Logs go to stderr, filtered by `RUST_LOG` (default: warnings for the
/// interactive `run`, info for the long-running services).
fn init_tracing(quiet: bool) {
    let default = if quiet { "warn" } else { "info" };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // Colour only for a terminal: logs redirected to files (Slurm, systemd)
    // stay plain text.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi)
        .try_init();
}
