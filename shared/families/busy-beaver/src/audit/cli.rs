//! The command line of `orchard-bb-audit` (`src/bin/orchard-bb-audit.rs`),
//! here so that the tests can parse the commands the guide quotes.

use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;
use std::time::Instant;

use crate::audit::{self, CheckOptions};
use crate::{BusyBeaverParams, Decider};

/// Writes and re-checks the audit file of a busy-beaver run.
#[derive(clap::Parser, Debug)]
#[command(name = "orchard-bb-audit", version)]
pub struct AuditCli {
    #[command(subcommand)]
    pub command: AuditCommand,
}

#[derive(clap::Subcommand, Debug)]
pub enum AuditCommand {
    /// Enumerates and decides the run's machines again on this machine and
    /// writes the audit file, if the run's results file agrees.
    Write(WriteArgs),
    /// Reads an audit file back and re-checks it.
    Check(CheckArgs),
}

#[derive(clap::Args, Debug)]
pub struct WriteArgs {
    /// The run's parameters, as given to `orchard run busy-beaver`.
    #[command(flatten)]
    pub params: BusyBeaverParams,
    /// The run's results file (`results file:` in its report).
    #[arg(long)]
    pub results: PathBuf,
    /// The directory holding the run's `--far-solver`, as a worker's
    /// `--programs` (the solver is run from it only if its SHA-256 is the
    /// run's).
    #[arg(long, value_name = "DIR")]
    pub programs: Option<PathBuf>,
    /// The audit file to write.
    #[arg(long)]
    pub out: PathBuf,
    /// zstd compression level (1..=22).
    #[arg(long, default_value_t = 9, value_parser = clap::value_parser!(i32).range(1..=22))]
    pub level: i32,
    /// Threads deciding machines (default: every core).
    #[arg(long)]
    pub threads: Option<usize>,
}

#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// The audit file.
    pub file: PathBuf,
    /// Re-check one nonhalting verdict in this many (1: all; 0: none),
    /// and, unless 0, every one whose certificate is automata.
    #[arg(long, default_value_t = CheckOptions::default().one_in)]
    pub one_in: u64,
    /// Seed of the sample.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Steps a re-checked nonhalting machine must run without halting.
    #[arg(long, default_value_t = CheckOptions::default().steps)]
    pub steps: u64,
    /// Threads re-checking verdicts (default: every core).
    #[arg(long)]
    pub threads: Option<usize>,
}

/// Sizes rayon's pool (`--threads`; none: every core).
fn threads(threads: Option<usize>) -> Result<(), String> {
    if let Some(t) = threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build_global()
            .map_err(|e| format!("--threads {t}: {e}"))?;
    }
    Ok(())
}

/// Runs a command, printing what it did; `Ok(false)`: the check found
/// verdicts that do not hold. Errors are one line, with the file named.
pub fn run(cli: AuditCli) -> Result<bool, String> {
    match cli.command {
        AuditCommand::Write(a) => {
            threads(a.threads)?;
            let started = Instant::now();
            let progress = |m: u64| eprint!("\r{m} machines");
            let w = audit::write(a.params, a.programs, &a.results, &a.out, a.level, &progress)
                .map_err(|e| format!("writing {}: {e}", a.out.display()))?;
            eprintln!();
            let t = &w.totals;
            let by: Vec<String> = Decider::ALL
                .iter()
                .map(|&d| format!("{} {}", t.never[d as usize], d.name()))
                .collect();
            println!(
                "wrote {}: {} machines ({} halt, {} never halt: {}; {} undecided), {} bytes \
                 ({} before compression), in {:.1} s",
                a.out.display(),
                t.machines,
                t.halting,
                t.nonhalting(),
                by.join(", "),
                t.undecided,
                w.bytes,
                w.raw_bytes,
                started.elapsed().as_secs_f64()
            );
            println!(
                "results file {} agrees: {} lines compared",
                a.results.display(),
                w.lines_compared
            );
            Ok(true)
        }
        AuditCommand::Check(a) => {
            threads(a.threads)?;
            let started = Instant::now();
            let file =
                File::open(&a.file).map_err(|e| format!("reading {}: {e}", a.file.display()))?;
            let opts = CheckOptions {
                one_in: a.one_in,
                seed: a.seed,
                steps: a.steps,
            };
            let r = audit::check(BufReader::new(file), &opts)
                .map_err(|e| format!("reading {}: {e}", a.file.display()))?;
            println!(
                "{}: {} states, {} machines, each once in the tree's order ({} halt, {} never \
                 halt, {} undecided)",
                a.file.display(),
                r.states,
                r.totals.machines,
                r.totals.halting,
                r.totals.nonhalting(),
                r.totals.undecided
            );
            println!(
                "re-checked: {} halting verdicts by plain simulation to their steps; {} \
                 nonhalting ones (one in {}, seed {}, and every automata certificate) by a \
                 plain run of {} steps and their certificates ({} cycles, translated cycles, \
                 weighted automata or DFAs verified, the rest re-decided with their \
                 parameters); {} wrong; {:.1} s",
                r.halting_checked,
                r.nonhalting_checked,
                a.one_in,
                a.seed,
                a.steps,
                r.certificates_verified,
                r.failure_count,
                started.elapsed().as_secs_f64()
            );
            for f in &r.failures {
                println!("wrong: {f}");
            }
            Ok(r.failure_count == 0)
        }
    }
}
