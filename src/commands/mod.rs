//! One module per group of subcommands.

mod backup;
mod client;
mod estimate;
mod run;
mod serve;
mod shell;

pub use estimate::EstimateArgs;

use std::process::ExitCode;

use crate::cli::{Command, Invocation};

/// Errors at the binary: anything, reported with context as one line.
pub type CliResult = Result<ExitCode, Box<dyn std::error::Error>>;

pub async fn dispatch(inv: Invocation) -> CliResult {
    let families = inv.families;
    match inv.command {
        Command::Run(args) => {
            run::run(
                args,
                inv.family.expect("run has a family"),
                families.registry.clone(),
            )
            .await
        }
        Command::Coordinator(args) => serve::coordinator(args, families.registry.clone()).await,
        Command::Worker(args) => serve::worker(args, families.registry.clone()).await,
        Command::Submit(args) => {
            client::submit(args, inv.family.expect("submit has a family")).await
        }
        Command::Status(args) => client::status(args).await,
        Command::Results(args) => client::results(args).await,
        Command::Cancel(args) => client::cancel(args).await,
        Command::Retry(args) => client::retry(args).await,
        Command::Backup(args) => backup::backup(args),
        Command::Completions(args) => shell::completions(args, &families),
        Command::Man(args) => shell::man(args, &families),
        Command::Estimate(args) => estimate::estimate(
            args,
            inv.family.expect("estimate has a family"),
            &families.registry,
        ),
    }
}

/// Completes on SIGINT or SIGTERM.
pub async fn termination() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
