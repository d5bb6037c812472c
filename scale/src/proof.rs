//! `orchard-scale proof DB`: the audit of a finished `hip-solve` job. The
//! job's units' summaries, read and merged as the replay reads them
//! ([`crate::replay::hip::MergedJob`]), then the
//! root's value proven by [`orchard_hip::proof`] (the reference rules,
//! the fast solver only as oracle, a plain search at the leaves). It lives
//! here because this crate already reads finished jobs' databases and
//! depends on the family; the family crate stays without storage.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use orchard_hip::proof::{self, Lines, Options, Progress, Sample, SolverOracle, MEMO_ENTRIES};

use crate::replay::hip::MergedJob;

#[derive(Debug, clap::Args)]
pub struct ProofArgs {
    /// The coordinator's database of a finished hip-solve job (one job).
    db: PathBuf,
    /// Positions with at most this many empty cells are decided by the
    /// plain search.
    #[arg(long, default_value_t = 10)]
    leaf_empty: usize,
    /// Extend only this many leaves of the record, drawn at random (the
    /// recorded tree is still checked whole): a sampled proof.
    #[arg(long)]
    sample: Option<usize>,
    /// Probe this many lines of play below leaves drawn at random, down to
    /// the plain search (a spot check where even a sample of whole leaves
    /// is too big).
    #[arg(long)]
    lines: Option<usize>,
    /// The seed of the sample's and the lines' draws.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The oracle's table, MiB (default: the family's for the board).
    #[arg(long)]
    cache_mib: Option<u64>,
    /// The most proven and refuted (position, bound) pairs the extension
    /// remembers, 32 to 64 bytes each (past it the older half is
    /// forgotten: time, not the verdict).
    #[arg(long, default_value_t = MEMO_ENTRIES)]
    memo_entries: usize,
    /// Seconds between two progress lines on stderr.
    #[arg(long, default_value_t = 5)]
    progress_secs: u64,
}

/// How often the progress line is printed, and when it last was.
struct Watch {
    every: Duration,
    start: Instant,
    last: Instant,
}

impl Watch {
    fn see(&mut self, p: &Progress) {
        let now = Instant::now();
        if now.duration_since(self.last) < self.every {
            return;
        }
        self.last = now;
        eprintln!(
            "[{:.0} s, CPU {:.0} s] leaf {}/{}: {} pairs proven, {} refuted; memo {} ({} forgotten); \
             plain {} positions; oracle {} searches, {} nodes",
            now.duration_since(self.start).as_secs_f64(),
            cpu_seconds(),
            p.leaves_done,
            p.leaves,
            p.proven,
            p.refuted,
            p.memo_entries,
            p.forgotten,
            p.plain_nodes,
            p.oracle.searches,
            p.oracle.nodes
        );
    }
}

/// Reads, merges, proves; the report as text on stderr, as JSON returned.
pub fn proof(a: &ProofArgs) -> Result<serde_json::Value, String> {
    let at = |e: String| format!("{}: {e}", a.db.display());
    let MergedJob {
        params,
        job,
        merged,
        units,
        ..
    } = MergedJob::read(&a.db, a.cache_mib).map_err(|e| at(e.to_string()))?;
    let options = Options {
        leaf_empty: a.leaf_empty,
        sample: a.sample.map(|leaves| Sample {
            leaves,
            seed: a.seed,
        }),
        lines: a.lines.map(|count| Lines {
            count,
            seed: a.seed,
        }),
        memo_entries: a.memo_entries,
    };
    let mut oracle = SolverOracle::new(&job);
    let start = Instant::now();
    let mut watch = Watch {
        every: Duration::from_secs(a.progress_secs),
        start,
        last: start,
    };
    let report = proof::prove_watched(&params, &merged, &options, &mut oracle, &mut |p| {
        watch.see(p)
    })
    .map_err(|e| at(format!("proof failed: {e}")))?;
    let effort = orchard_hip::proof::Oracle::effort(&oracle);
    let (questions, principal) = oracle.questions();
    eprintln!("{report}");
    eprintln!(
        "oracle in all: {questions} questions ({principal} answered by the table's principal move), \
         {} searches, {} nodes; CPU {:.1} s",
        effort.searches,
        effort.nodes,
        cpu_seconds()
    );
    Ok(serde_json::json!({
        "db": a.db.display().to_string(),
        "params": params,
        "units_merged": units,
        "records": merged.known.len(),
        "complete": report.complete(),
        "report": report,
        "oracle_questions": questions,
        "oracle_principal_answers": principal,
        "oracle_searches": effort.searches,
        "oracle_nodes": effort.nodes,
        "cpu_seconds": cpu_seconds(),
    }))
}

/// This process's CPU time (user and system), seconds.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes one rusage into the zeroed value we own.
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}
