//! The `exec` family: units explored by an external program, in any
//! language, that the worker's operator allows. The program is told which
//! unit to explore and prints what it found in a small line protocol
//! ([`protocol`]); orchard leases, splits, merges, replicates and resumes
//! as for any family. The protocol is documented for program authors in
//! `docs/exec-protocol.md`.
//!
//! **A job** names the program by file name and content hash (SHA-256),
//! the arguments every call gets, and either its root units (a units file)
//! or nothing, when the program makes them itself (`PROGRAM roots ARGS`,
//! run on a worker: the job's one root unit is that call).
//!
//! **Exactness.** A worker runs the program only from its operator's
//! directory and only if the hash matches ([`program`]); a report counts
//! only if the program exited with status 0 after a whole report (`done`
//! last); anything else discards the attempt whole and the unit is tried
//! again, on another worker if there is one, a bounded number of times
//! ([`orchard_core::FamilyError::Attempt`]). A program that splits hands
//! back units covering exactly what it did not explore; one that does not
//! split is never asked to (`split_on_idle` is its job's `--splits`).

pub mod program;
pub mod protocol;
pub mod run;
pub mod summary;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use orchard_core::{
    Exploration, ExploreContext, FamilyError, FamilyReport, Host, ParamError, SearchFamily,
};

pub use summary::{ExecSummary, Extreme};

/// Default wall time of one call, in seconds.
pub const DEFAULT_TIMEOUT_SECS: u64 = 3_600;
/// Default bound on one call's stdout, in MiB.
pub const DEFAULT_MAX_OUTPUT_MIB: u64 = 64;
/// Seconds a program has, after a stop request, to print its rest.
pub const GRACE_SECS: u64 = 10;
/// Most root units a job may list (in its parameters).
pub const MAX_LISTED_UNITS: usize = 1_000_000;

/// Parameters of an `exec` job, as stored: canonical, with the program's
/// hash. The command line fills them from a local copy of the program
/// ([`ExecArgs`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecParams {
    /// The program's file name in each worker's `--programs` directory.
    pub program: String,
    /// SHA-256 of the program's content, lower-case hex.
    pub sha256: String,
    /// Arguments of every call, after `roots` or `explore`.
    #[serde(default)]
    pub args: Vec<String>,
    /// The root units; empty: the program makes them (`roots`).
    #[serde(default)]
    pub units: Vec<String>,
    /// The program can stop early and print its rest, so idle workers may
    /// ask a running unit for work.
    #[serde(default)]
    pub splits: bool,
    #[serde(default = "default_timeout")]
    pub timeout_secs: u64,
    #[serde(default = "default_max_output")]
    pub max_output_mib: u64,
}

fn default_timeout() -> u64 {
    DEFAULT_TIMEOUT_SECS
}

fn default_max_output() -> u64 {
    DEFAULT_MAX_OUTPUT_MIB
}

/// The `exec` subcommand's flags: the program is given as a local file,
/// whose name and hash go into the job.
#[derive(Debug, Clone, clap::Args)]
pub struct ExecArgs {
    /// The program, as a file on this machine: the job records its file
    /// name and SHA-256; every worker runs its own copy of that name from
    /// its --programs directory, and only if the hash matches.
    #[arg(long, value_name = "FILE")]
    pub program: PathBuf,
    /// An argument of every call of the program (repeat for several).
    #[arg(long = "arg", value_name = "ARG", allow_hyphen_values = true)]
    pub args: Vec<String>,
    /// The root units, one a line (default: the program prints them when
    /// called as `PROGRAM roots ARGS...`).
    #[arg(long, value_name = "FILE")]
    pub units_file: Option<PathBuf>,
    /// The program stops early when its stdin closes or its budget
    /// (ORCHARD_BUDGET nodes) is spent, and prints its rest as units.
    #[arg(long)]
    pub splits: bool,
    /// Seconds one call may run before it is killed and the attempt fails.
    #[arg(long, default_value_t = DEFAULT_TIMEOUT_SECS)]
    pub timeout_secs: u64,
    /// MiB one call may print before it is killed and the attempt fails.
    #[arg(long, default_value_t = DEFAULT_MAX_OUTPUT_MIB)]
    pub max_output_mib: u64,
}

impl ExecArgs {
    /// The stored parameters: the program's name and hash read from its
    /// file, the units from theirs.
    pub fn resolve(self) -> Result<ExecParams, String> {
        let name = self
            .program
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| format!("--program {}: not a file name", self.program.display()))?
            .to_string();
        let sha256 = program::sha256_file(&self.program)
            .map_err(|e| format!("--program {}: {e}", self.program.display()))?;
        let units = match &self.units_file {
            None => Vec::new(),
            Some(path) => std::fs::read_to_string(path)
                .map_err(|e| format!("--units-file {}: {e}", path.display()))?
                .lines()
                .map(|l| l.strip_suffix('\r').unwrap_or(l))
                .filter(|l| !l.trim().is_empty())
                .map(str::to_string)
                .collect(),
        };
        if self.units_file.is_some() && units.is_empty() {
            return Err("--units-file: no unit in the file".into());
        }
        Ok(ExecParams {
            program: name,
            sha256,
            args: self.args,
            units,
            splits: self.splits,
            timeout_secs: self.timeout_secs,
            max_output_mib: self.max_output_mib,
        })
    }
}

orchard_core::params_from_flags!(ExecArgs => ExecParams);

/// A unit of an `exec` job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ExecUnit {
    /// The call that makes the root units (`PROGRAM roots ARGS`).
    Roots,
    /// A unit the program defines, as text.
    Text(String),
}

/// One `exec` job.
#[derive(Debug)]
pub struct Exec {
    params: ExecParams,
    /// The program, copied from the worker's allowed directory on the
    /// first unit.
    program: program::JobProgram,
}

impl Exec {
    pub fn params(&self) -> &ExecParams {
        &self.params
    }

    fn program(&self) -> Result<&std::path::Path, FamilyError> {
        self.program.path().map_err(FamilyError::Attempt)
    }

    fn limits(&self) -> run::Limits {
        run::Limits {
            timeout: Duration::from_secs(self.params.timeout_secs),
            max_output: self.params.max_output_mib << 20,
            grace: Duration::from_secs(GRACE_SECS),
        }
    }
}

fn check(p: &ExecParams) -> Result<(), ParamError> {
    program::check_name(&p.program).map_err(|e| ParamError::new("program", e.to_string()))?;
    if !program::is_sha256(&p.sha256) {
        return Err(ParamError::new(
            "program",
            "the job's sha256 must be 64 lower-case hex digits",
        ));
    }
    if p.args.iter().any(|a| a.contains('\0')) {
        return Err(ParamError::new("arg", "an argument holds a NUL byte"));
    }
    if p.units.len() > MAX_LISTED_UNITS {
        return Err(ParamError::new(
            "units-file",
            format!("more than {MAX_LISTED_UNITS} units"),
        ));
    }
    for (i, u) in p.units.iter().enumerate() {
        protocol::text(u)
            .map_err(|e| ParamError::new("units-file", format!("unit {}: {e}", i + 1)))?;
    }
    if !(1..=7 * 86_400).contains(&p.timeout_secs) {
        return Err(ParamError::new(
            "timeout-secs",
            format!("must be between 1 and 604800, got {}", p.timeout_secs),
        ));
    }
    if !(1..=4_096).contains(&p.max_output_mib) {
        return Err(ParamError::new(
            "max-output-mib",
            format!("must be between 1 and 4096, got {}", p.max_output_mib),
        ));
    }
    Ok(())
}

impl SearchFamily for Exec {
    const NAME: &'static str = "exec";
    const ABOUT: &'static str =
        "units explored by an external program the workers allow (any language; see docs/exec-protocol.md)";

    type Params = ExecParams;
    type Unit = ExecUnit;
    type Summary = ExecSummary;

    fn new(params: ExecParams, host: &Host) -> Result<Self, ParamError> {
        check(&params)?;
        Ok(Exec {
            program: program::JobProgram::new(
                host.programs.clone(),
                &params.program,
                &params.sha256,
            ),
            params,
        })
    }

    fn root_units(&self) -> Vec<ExecUnit> {
        if self.params.units.is_empty() {
            vec![ExecUnit::Roots]
        } else {
            self.params
                .units
                .iter()
                .cloned()
                .map(ExecUnit::Text)
                .collect()
        }
    }

    fn explore(
        &self,
        unit: &ExecUnit,
        ctx: &ExploreContext<'_>,
    ) -> Result<Exploration<ExecSummary, ExecUnit>, FamilyError> {
        if let ExecUnit::Text(t) = unit {
            protocol::text(t).map_err(FamilyError::BadUnit)?;
        }
        let program = self.program()?;
        let (call, input) = match unit {
            ExecUnit::Roots => (protocol::Call::Roots, None),
            ExecUnit::Text(t) => (protocol::Call::Explore, Some(t.as_str())),
        };
        let progress = AtomicU64::new(0);
        let ended = run::call(
            program,
            call,
            &self.params.args,
            input,
            ctx.budget,
            self.limits(),
            run::Watch {
                stop: ctx.stop,
                progress: &progress,
            },
        );
        ctx.progress
            .store(progress.load(Ordering::Relaxed), Ordering::Relaxed);
        let what = match unit {
            ExecUnit::Roots => "the roots call".to_string(),
            ExecUnit::Text(t) => format!("unit {:?}", protocol::cut(t, 80)),
        };
        match ended {
            Err(e) => Err(FamilyError::Attempt(format!(
                "program '{}' on {what}: {e}",
                self.params.program
            ))),
            Ok(run::Ended::Stopped) => Ok(Exploration::Split {
                explored: ExecSummary::default(),
                rest: vec![unit.clone()],
            }),
            Ok(run::Ended::Report(report)) => {
                let mut summary = report.summary.clone();
                if !report.nodes_said() {
                    // One node per unit: rates and budgets still move.
                    summary.nodes = 1;
                }
                let rest = report.units.into_iter().map(ExecUnit::Text).collect();
                Ok(Exploration::new(summary, rest))
            }
        }
    }

    fn merge(&self, into: &mut ExecSummary, other: ExecSummary) -> Result<(), FamilyError> {
        into.merge(other)
    }

    fn nodes(s: &ExecSummary) -> u64 {
        s.nodes
    }

    fn report(&self, s: &ExecSummary) -> FamilyReport {
        report(&self.params, s)
    }

    fn split_on_idle(&self, _unit: &ExecUnit) -> bool {
        self.params.splits
    }

    fn unit_label(&self, unit: &ExecUnit) -> String {
        match unit {
            ExecUnit::Roots => "(roots)".to_string(),
            ExecUnit::Text(t) => protocol::cut(t, 60),
        }
    }
}

/// A count as JSON: a number while it fits 64 bits, else a string of
/// digits (JSON readers lose precision past 2^53 or 2^64 anyway).
fn count_json(v: u128) -> serde_json::Value {
    match u64::try_from(v) {
        Ok(small) => small.into(),
        Err(_) => v.to_string().into(),
    }
}

fn value_json(v: i128) -> serde_json::Value {
    match i64::try_from(v) {
        Ok(small) => small.into(),
        Err(_) => v.to_string().into(),
    }
}

fn report(p: &ExecParams, s: &ExecSummary) -> FamilyReport {
    let counters: serde_json::Map<String, serde_json::Value> = s
        .counters
        .iter()
        .map(|(k, v)| (k.clone(), count_json(*v)))
        .collect();
    let extremes = |m: &std::collections::BTreeMap<String, Extreme>| {
        m.iter()
            .map(|(k, e)| {
                (
                    k.clone(),
                    serde_json::json!({ "value": value_json(e.value), "witness": e.witness }),
                )
            })
            .collect::<serde_json::Map<String, serde_json::Value>>()
    };
    let json = serde_json::json!({
        "family": "exec",
        "program": p.program,
        "sha256": p.sha256,
        "args": p.args,
        "counters": counters,
        "maxima": extremes(&s.maxima),
        "minima": extremes(&s.minima),
        "witnesses": s.witnesses,
        "nodes": s.nodes,
    });
    let mut text = vec![format!(
        "{} {} (sha256 {}...)",
        p.program,
        p.args.join(" "),
        &p.sha256[..12]
    )];
    text.extend(s.counters.iter().map(|(k, v)| format!("{k}: {v}")));
    for (word, m) in [("max", &s.maxima), ("min", &s.minima)] {
        text.extend(
            m.iter()
                .map(|(k, e)| format!("{word} {k}: {} by {}", e.value, e.witness)),
        );
    }
    text.push(format!("nodes explored: {}", s.nodes));
    let mut results_lines = Vec::new();
    for (word, m) in [("max", &s.maxima), ("min", &s.minima)] {
        results_lines.extend(
            m.iter()
                .map(|(k, e)| format!("{word} {k} {} {}", e.value, e.witness)),
        );
    }
    for (k, list) in &s.witnesses {
        results_lines.extend(list.iter().map(|w| format!("witness {k} {w}")));
    }
    FamilyReport {
        json,
        text,
        results_lines,
    }
}
