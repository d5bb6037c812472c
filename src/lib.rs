//! orchard as a library: the whole command line (`run`, `coordinator`,
//! `worker`, `submit`, `status`, `results`, `cancel`, `estimate`, `backup`,
//! completions and man pages) over any set of search families.
//!
//! The `orchard` binary is [`main_with`] over [`Families::builtin`]. A
//! program with a family of its own is the same one call with its family
//! added, and gets every subcommand, the coordinator, the worker, the
//! dashboard and the progress output for it:
//!
//! ```no_run
//! use orchard::Families;
//! # use orchard_core::*;
//! # struct MyFamily;
//! fn main() -> std::process::ExitCode {
//!     orchard::main_with(Families::builtin() /* .with::<MyFamily>() */)
//! }
//! ```
//!
//! A family is a type implementing [`orchard_core::SearchFamily`] whose
//! parameters also derive `clap::Args`; [`testing`] holds the checks every
//! family's tests run, in-tree or not.

mod cli;
mod commands;
pub mod families;
mod output;
pub mod testing;

pub use families::Families;

use std::process::ExitCode;
use std::sync::Arc;

/// Runs the command line of this process (`std::env::args_os`) over
/// `families` and returns its exit code. Every failure ends in one line on
/// stderr (`error: ...`) and a non-zero exit code: 2 for a usage error.
pub fn main_with(families: Families) -> ExitCode {
    main_with_args(families, std::env::args_os())
}

/// [`main_with`] over the given arguments (the program's name first).
pub fn main_with_args<I, T>(families: Families, args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let families = Arc::new(families);
    let invocation = match cli::parse(families.clone(), args) {
        Ok(i) => i,
        Err(e) if !e.use_stderr() => {
            // --help and --version.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("{}", cli::one_line(&e, &families));
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

#[cfg(test)]
mod architecture_map;
#[cfg(test)]
mod docs_check;
