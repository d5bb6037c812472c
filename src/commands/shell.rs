//! `orchard completions` and `orchard man`: the shell's view of the command
//! line, generated from [`crate::cli::command`] — the very definition that
//! parses it, so every flag and every family subcommand is in both.

use std::io::Write;
use std::process::ExitCode;

use super::CliResult;
use crate::cli::{CompletionsArgs, ManArgs};
use crate::families::Families;

/// The completion script for one shell, on stdout.
pub fn completions(args: CompletionsArgs, families: &Families) -> CliResult {
    let mut cmd = crate::cli::command(families);
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "orchard", &mut out);
    write_stdout(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// `orchard.1` on stdout, or every command's page in `--dir`.
pub fn man(args: ManArgs, families: &Families) -> CliResult {
    let cmd = crate::cli::command(families);
    match args.dir {
        Some(dir) => {
            std::fs::create_dir_all(&dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            clap_mangen::generate_to(cmd, &dir)
                .map_err(|e| format!("cannot write man pages to {}: {e}", dir.display()))?;
        }
        None => {
            let mut out = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut out)?;
            write_stdout(&out)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes `bytes` to stdout; a closed pipe (`orchard man | head`) is not an
/// error worth a message.
fn write_stdout(bytes: &[u8]) -> std::io::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}
