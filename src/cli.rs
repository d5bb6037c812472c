//! Command-line definitions. The family subcommands of `run`, `submit` and
//! `estimate` are built from the program's [`Families`], so a new family
//! needs no change here.

use std::path::PathBuf;
use std::sync::Arc;

use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use orchard_proto::access::{ClientIdentity, ClientTls};

use crate::families::Families;

#[derive(Parser, Debug)]
#[command(
    name = "orchard",
    version,
    about = "A distributed exhaustive-search cluster"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a search on this machine: a local coordinator and workers on every
    /// core. The same command on the same database resumes.
    Run(RunArgs),
    /// Serve a coordinator for workers and clients on other machines.
    Coordinator(CoordinatorArgs),
    /// Explore units for a coordinator, on every core.
    Worker(WorkerArgs),
    /// Submit a job to a coordinator.
    Submit(SubmitArgs),
    /// Show the progress of one job or of all jobs.
    Status(StatusArgs),
    /// Show the result of a finished job, or the answer so far of a
    /// running one (then the exit code is 3: not final).
    Results(ResultsArgs),
    /// Cancel a running job.
    Cancel(CancelArgs),
    /// Run a failed job again from where it stopped: its unsearched units
    /// (the one that failed among them) go back to the queue with their
    /// attempts reset; what it merged is kept, never searched again. The
    /// job keeps its parameters (an exec job its program's SHA-256).
    Retry(RetryArgs),
    /// Estimate a search's size and running time from random probes,
    /// without running it.
    Estimate(crate::commands::EstimateArgs),
    /// Copy a database to another file (another disk, another machine's
    /// mount) while its coordinator runs: a consistent, verified snapshot
    /// that `--db` resumes from.
    Backup(BackupArgs),
    /// Print the shell completion script for SHELL (bash, zsh, fish, ...);
    /// see the README for where each shell reads it from.
    Completions(CompletionsArgs),
    /// Print the man page (roff) to stdout, or write one page per command
    /// to a directory with --dir.
    Man(ManArgs),
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell the script is for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write `orchard.1` and a page for every subcommand (`orchard-run.1`,
    /// `orchard-run-hc.1`, ...) into this directory (created if missing)
    /// instead of printing `orchard.1`.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The database (default: $ORCHARD_HOME/orchard.db, $ORCHARD_HOME
    /// defaulting to ~/.local/share/orchard).
    #[arg(long, global = true, env = "ORCHARD_DB")]
    pub db: Option<PathBuf>,
    /// Local workers, one core each (default: every core).
    #[arg(long, global = true)]
    pub workers: Option<usize>,
    /// Nodes per unit before a worker hands back the rest.
    #[arg(long, global = true)]
    pub unit_budget: Option<u64>,
    /// Print the result as one JSON object.
    #[arg(long, global = true)]
    pub json: bool,
    /// Continue the last failed job of these parameters in the database
    /// from where it stopped (as `orchard retry`), instead of a new job.
    #[arg(long, global = true)]
    pub retry: bool,
    /// Where results files go (default: `results/` beside the database).
    /// Runs whose databases share a directory need one each: every
    /// database's first job is job 1, and its files are named after it.
    #[arg(long, global = true)]
    pub results_dir: Option<PathBuf>,
    /// Serve the web dashboard and /metrics here while the search runs,
    /// e.g. 127.0.0.1:7080.
    #[arg(long, global = true)]
    pub http: Option<String>,
    #[command(flatten)]
    pub backup: BackupFlags,
    #[command(flatten)]
    pub cache: CacheArgs,
    #[command(flatten)]
    pub programs: ProgramsArg,
    #[command(flatten)]
    pub replicas: ReplicasArg,
}

/// The external programs a worker's operator allows jobs to run.
#[derive(Args, Debug)]
pub struct ProgramsArg {
    /// Let `exec` jobs run the programs in this directory, named by file
    /// name (default: none; a job naming a program is then refused). A job
    /// names a program, never a path, and runs it only if its SHA-256
    /// matches the job's; the program gets no token or certificate of the
    /// worker.
    #[arg(long, global = true, env = "ORCHARD_PROGRAMS", value_name = "DIR")]
    pub programs: Option<PathBuf>,
}

/// What a worker lends its jobs' in-process caches (the hip-solve
/// transposition table): memory, and a directory to keep them across
/// restarts.
#[derive(Args, Debug)]
pub struct CacheArgs {
    /// Keep the jobs' caches (hip-solve's table) in this directory across
    /// restarts: written every --cache-save-secs and when the worker stops,
    /// loaded when it next opens the same job. Created if missing; a damaged
    /// file there stops the worker.
    #[arg(long, global = true, env = "ORCHARD_CACHE_DIR", value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Memory for each job's in-process cache, in MiB, rounded down to a
    /// power of two (default: by the job's size; hip-solve at most 1 GiB).
    /// From 1 GiB up, hip-solve's table takes 256 MiB more, for the
    /// positions near the end of the game.
    #[arg(
        long,
        global = true,
        env = "ORCHARD_CACHE_MIB",
        value_name = "MIB",
        value_parser = clap::value_parser!(u64).range(1..=1_048_576)
    )]
    pub cache_mib: Option<u64>,
    /// Seconds between two saves of the caches to --cache-dir.
    #[arg(
        long,
        global = true,
        env = "ORCHARD_CACHE_SAVE_SECS",
        value_name = "SECS",
        default_value_t = 300,
        value_parser = clap::value_parser!(u64).range(1..=86_400)
    )]
    pub cache_save_secs: u64,
}

/// A coordinator's periodic backup (see `orchard backup`).
#[derive(Args, Debug)]
pub struct BackupFlags {
    /// Copy the database to this file (on another disk) at startup and
    /// every --backup-every seconds: a verified snapshot that --db resumes
    /// from if the machine is lost.
    #[arg(long, global = true)]
    pub backup_to: Option<PathBuf>,
    /// Seconds between backups (default: 3600).
    #[arg(long, global = true, allow_negative_numbers = true)]
    pub backup_every: Option<f64>,
}

#[derive(Args, Debug)]
pub struct CoordinatorArgs {
    /// Address to listen on, e.g. 0.0.0.0:7070.
    #[arg(long, default_value = "127.0.0.1:7070")]
    pub listen: String,
    /// The database; created if absent, resumed if present.
    #[arg(long)]
    pub db: PathBuf,
    /// Seconds without a heartbeat before a worker's units are leased again.
    #[arg(long, default_value_t = 30.0)]
    pub lease_ttl: f64,
    /// Seconds between a worker's heartbeats (sent to every worker; at most
    /// a third of --lease-ttl).
    #[arg(long, default_value_t = 0.5)]
    pub heartbeat_interval: f64,
    /// Nodes per unit before a worker hands back the rest.
    #[arg(long)]
    pub unit_budget: Option<u64>,
    /// Where results files go (default: `results/` beside the database).
    #[arg(long)]
    pub results_dir: Option<PathBuf>,
    /// Also serve the web dashboard and Prometheus /metrics over HTTP here,
    /// e.g. 127.0.0.1:7080.
    #[arg(long)]
    pub http: Option<String>,
    /// Seconds between samples of each running job's progress for the
    /// dashboard's charts (kept in `<db>.history`; a long job's samples thin
    /// out to at most 512).
    #[arg(long, default_value_t = 1.0)]
    pub history_every: f64,
    /// MiB of lemmas each job keeps for its workers to share; past it the
    /// oldest make room for the newest.
    #[arg(
        long,
        value_name = "MIB",
        default_value_t = 1024,
        value_parser = clap::value_parser!(u64).range(1..=1 << 20)
    )]
    pub lemma_store_mib: u64,
    /// Require this bearer token (read from the file; or set ORCHARD_TOKEN)
    /// on every request.
    #[arg(long, env = "ORCHARD_TOKEN_FILE")]
    pub token_file: Option<PathBuf>,
    /// Serve TLS with this PEM certificate chain (needs --tls-key).
    #[arg(long, requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Mutual TLS: accept only workers and clients presenting a certificate
    /// signed by this CA (PEM); each worker is known by its certificate.
    #[arg(long, requires = "tls_cert")]
    pub tls_client_ca: Option<PathBuf>,
    #[command(flatten)]
    pub backup: BackupFlags,
}

#[derive(Args, Debug)]
pub struct BackupArgs {
    /// The database to copy (read only; its coordinator may be running).
    #[arg(long, env = "ORCHARD_DB")]
    pub db: PathBuf,
    /// The backup file: created, or replaced if it is an earlier backup.
    pub out: PathBuf,
}

#[derive(Args, Debug)]
pub struct WorkerArgs {
    /// The coordinator, e.g. http://10.0.0.1:7070.
    #[arg(long, env = "ORCHARD_COORDINATOR")]
    pub coordinator: String,
    /// Search threads (default: every core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Give up after failing to reach the coordinator for this many seconds.
    #[arg(long, default_value_t = 300.0)]
    pub give_up_after: f64,
    /// Name shown by the coordinator (default: the host name).
    #[arg(long)]
    pub name: Option<String>,
    /// Serve Prometheus /metrics for this worker here, e.g. 0.0.0.0:9170.
    #[arg(long)]
    pub metrics: Option<String>,
    /// Do not trade lemmas with the coordinator (facts one worker's search
    /// proved that save other workers' searches work, for families that
    /// have them, such as hip-solve). For measuring what they save.
    #[arg(long)]
    pub no_lemmas: bool,
    /// Seconds between trades of lemmas with the coordinator. Longer
    /// lightens the coordinator's load on a large cluster, with lemmas that
    /// arrive later; shorter saved no work beyond the noise where measured
    /// (docs/cluster.md, "Lemmas").
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = orchard_worker::DEFAULT_LEMMA_INTERVAL.as_secs_f64(),
        conflicts_with = "no_lemmas"
    )]
    pub lemma_interval: f64,
    #[command(flatten)]
    pub cache: CacheArgs,
    #[command(flatten)]
    pub programs: ProgramsArg,
    #[command(flatten)]
    pub access: AccessArgs,
}

/// How a worker or client proves itself to a coordinator.
#[derive(Args, Debug)]
pub struct AccessArgs {
    /// File holding the coordinator's bearer token (or set ORCHARD_TOKEN).
    #[arg(long, global = true, env = "ORCHARD_TOKEN_FILE")]
    pub token_file: Option<PathBuf>,
    /// CA certificate (PEM) to verify a TLS coordinator; use an https:// address.
    #[arg(long, global = true)]
    pub tls_ca: Option<PathBuf>,
    /// Certificate (PEM) to present to a coordinator that requires client
    /// certificates (--tls-client-ca there); needs --tls-client-key.
    #[arg(long, global = true, requires_all = ["tls_client_key", "tls_ca"])]
    pub tls_client_cert: Option<PathBuf>,
    /// The PEM private key of --tls-client-cert.
    #[arg(long, global = true, requires = "tls_client_cert")]
    pub tls_client_key: Option<PathBuf>,
}

impl AccessArgs {
    /// The TLS files these flags name.
    pub fn tls(&self) -> ClientTls {
        ClientTls {
            ca: self.tls_ca.clone(),
            identity: self
                .tls_client_cert
                .clone()
                .zip(self.tls_client_key.clone())
                .map(|(cert, key)| ClientIdentity { cert, key }),
        }
    }
}

#[derive(Args, Debug)]
pub struct ClientArgs {
    /// The coordinator.
    #[arg(
        long,
        global = true,
        env = "ORCHARD_COORDINATOR",
        default_value = "http://127.0.0.1:7070"
    )]
    pub coordinator: String,
    /// Print one JSON object.
    #[arg(long, global = true)]
    pub json: bool,
    #[command(flatten)]
    pub access: AccessArgs,
}

#[derive(Args, Debug)]
pub struct SubmitArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    #[command(flatten)]
    pub replicas: ReplicasArg,
}

/// How many workers explore each unit of a job.
#[derive(Args, Debug)]
pub struct ReplicasArg {
    /// Have each unit explored by this many different workers (on
    /// different hosts when there are enough) and merged only when their
    /// results agree; a disagreement takes one more replica, the majority
    /// wins, and the outvoted workers get no more units of the job. Units
    /// are then explored whole (no node budget, no work stealing).
    #[arg(
        long,
        global = true,
        default_value_t = 1,
        value_name = "K",
        value_parser = clap::value_parser!(u32).range(1..=16)
    )]
    pub replicas: u32,
}

#[derive(Args, Debug)]
pub struct StatusArgs {
    /// The job (default: every job).
    pub job: Option<u64>,
    #[command(flatten)]
    pub client: ClientArgs,
}

#[derive(Args, Debug)]
pub struct ResultsArgs {
    /// The job. Exit code 0 when it is done; 3 when it is not (running,
    /// cancelled or failed), after printing what is known so far.
    pub job: u64,
    #[command(flatten)]
    pub client: ClientArgs,
}

#[derive(Args, Debug)]
pub struct CancelArgs {
    pub job: u64,
    #[command(flatten)]
    pub client: ClientArgs,
}

#[derive(Args, Debug)]
pub struct RetryArgs {
    /// The failed job. Refused (exit code 1) for an unknown job and for
    /// one that is not failed: running, done, or cancelled (a cancelled
    /// job dropped its unsearched units).
    pub job: u64,
    #[command(flatten)]
    pub client: ClientArgs,
}

/// A family chosen on the command line, with its canonical parameters.
#[derive(Debug, Clone)]
pub struct FamilyChoice {
    pub family: &'static str,
    pub params_json: String,
}

/// The parsed command line.
pub struct Invocation {
    pub command: Command,
    /// For `run`, `submit` and `estimate`.
    pub family: Option<FamilyChoice>,
    /// The families of this program, for the commands that open jobs.
    pub families: Arc<Families>,
}

impl Invocation {
    /// `run` and the client commands keep their output clean by default.
    pub fn quiet_logs(&self) -> bool {
        !matches!(self.command, Command::Coordinator(_) | Command::Worker(_))
    }
}

fn with_families(cmd: clap::Command, families: &Families) -> clap::Command {
    cmd.subcommand_required(true)
        .subcommand_value_name("FAMILY")
        .subcommands(families.cli.iter().map(|f| (f.command)()))
}

/// The whole command line as clap sees it, the family subcommands of
/// `run`, `submit` and `estimate` included: what parses the arguments, and
/// what the completion scripts and man pages are generated from.
pub fn command(families: &Families) -> clap::Command {
    Cli::command()
        .mut_subcommand("run", |c| with_families(c, families))
        .mut_subcommand("submit", |c| with_families(c, families))
        .mut_subcommand("estimate", |c| with_families(c, families))
}

/// Parses `args` (the program's name first) against the command line of
/// `families`.
pub fn parse<I, T>(families: Arc<Families>, args: I) -> Result<Invocation, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let mut cmd = command(&families);
    let matches = cmd.try_get_matches_from_mut(args)?;
    let cli = Cli::from_arg_matches(&matches)?;
    let family = match matches.subcommand() {
        Some(("run" | "submit" | "estimate", sub)) => {
            Some(family_choice(&mut cmd, sub, &families)?)
        }
        _ => None,
    };
    Ok(Invocation {
        command: cli.command,
        family,
        families,
    })
}

fn family_choice(
    cmd: &mut clap::Command,
    sub: &ArgMatches,
    families: &Families,
) -> Result<FamilyChoice, clap::Error> {
    let (name, fam_matches) = sub.subcommand().expect("a family subcommand is required");
    let family = families
        .registry
        .by_name(name)
        .expect("subcommands come from the registry");
    let params_json = families
        .params_from_matches(name, fam_matches)
        .map_err(|e| cmd.error(clap::error::ErrorKind::ValueValidation, e))?;
    Ok(FamilyChoice {
        family: family.name(),
        params_json,
    })
}

/// A usage error as one line: clap's first line, plus the known families
/// when the family name was wrong. A first line that ends in a colon
/// ("the following required arguments were not provided:") is followed by
/// its list, indented on the next lines, which is joined to it.
pub fn one_line(e: &clap::Error, families: &Families) -> String {
    let rendered = e.render().to_string();
    let mut lines = rendered.lines();
    let mut first = lines
        .next()
        .unwrap_or("error: invalid arguments")
        .to_string();
    if first.ends_with(':') {
        let list: Vec<&str> = lines
            .take_while(|l| l.starts_with(' '))
            .map(str::trim)
            .collect();
        first = format!("{first} {}", list.join(", "));
    }
    if e.kind() == clap::error::ErrorKind::InvalidSubcommand {
        format!("{first} (search families: {})", families.names().join(", "))
    } else {
        first
    }
}
