//! Writing an audit file: the job's units enumerated and decided again on
//! this machine, in parallel, written in the file's order, and kept only
//! if the results file they make is the run's.
//!
//! The work is cut finer than the units: a subtree is cut into its root
//! alone and its children's subtrees, which together are its depth first
//! walk in order, until there are [`PIECES`] pieces. Pieces are decided in
//! parallel a window at a time and written in order, so the memory held is
//! one window's records.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use orchard_core::{Host, SearchFamily};

use crate::audit::evidence::Finder;
use crate::audit::format::{header, put_end, put_record, put_unit};
use crate::audit::{AuditError, Entry, Record, Totals};
use crate::decide::Workspace;
use crate::machine::{to_text, Table, MAX_STATES};
use crate::search::{children, record, MAX_CHILDREN};
use crate::{BbSummary, BbUnit, BusyBeaver, BusyBeaverParams, Outcome};

/// Pieces the units are cut into (at least, where the tree is that big).
pub const PIECES: usize = 1 << 16;

/// Pieces decided in parallel before they are written.
const WINDOW: usize = 1024;

/// The line prefix of the coordinator's own lines in a results file
/// (replicated runs' verification), which are not the family's.
const COORDINATOR_LINE: &str = "# ";

/// What [`write()`] wrote.
#[derive(Debug, Clone)]
pub struct Written {
    pub totals: Totals,
    /// The regenerated run's summary.
    pub summary: BbSummary,
    /// Bytes of the compressed file.
    pub bytes: u64,
    /// Bytes before compression.
    pub raw_bytes: u64,
    /// Lines of the results file compared.
    pub lines_compared: usize,
}

/// A piece of a unit: a node alone, or its subtree.
#[derive(Debug, Clone, Copy)]
struct Piece {
    unit: usize,
    table: Table,
    subtree: bool,
}

/// The units of `job` cut into pieces, in the order of the file.
fn pieces(job: &BusyBeaver, units: &[BbUnit]) -> Vec<Piece> {
    let mut ws = job.workspace();
    let mut kids = [[0u8; 2 * MAX_STATES]; MAX_CHILDREN];
    let mut out: Vec<Piece> = units
        .iter()
        .enumerate()
        .map(|(unit, u)| Piece {
            unit,
            table: u.table,
            subtree: u.subtree,
        })
        .collect();
    while out.len() < PIECES && out.iter().any(|p| p.subtree) {
        let mut next = Vec::with_capacity(out.len() * 8);
        for p in out {
            if !p.subtree {
                next.push(p);
                continue;
            }
            next.push(Piece {
                subtree: false,
                ..p
            });
            if let Outcome::Halts { at, .. } = ws.decide(&p.table, job.n) {
                let k = children(&p.table, job.n, at as usize, &mut kids);
                next.extend(kids[..k].iter().map(|&table| Piece {
                    unit: p.unit,
                    table,
                    subtree: true,
                }));
            }
        }
        out = next;
    }
    out
}

/// The buffers of one thread.
struct Worker {
    ws: Workspace,
    finder: Finder,
    stack: Vec<Table>,
}

/// Decides a piece: its records, its summary, its totals.
fn decide_piece(
    job: &BusyBeaver,
    w: &mut Worker,
    p: &Piece,
) -> Result<(Vec<u8>, BbSummary, Totals), AuditError> {
    let n = job.n;
    let list = job.lists_machines();
    let mut bytes = Vec::new();
    let mut s = BbSummary::default();
    let mut totals = Totals::default();
    let mut kids = [[0u8; 2 * MAX_STATES]; MAX_CHILDREN];
    w.stack.clear();
    w.stack.push(p.table);
    while let Some(table) = w.stack.pop() {
        let outcome = w.ws.decide(&table, n);
        if let Some(e) = w.ws.take_failure() {
            return Err(AuditError::FarSolver(e));
        }
        record(&mut s, &table, outcome, w.ws.last_stage, list);
        let entry = match outcome {
            Outcome::Halts { steps, ones, at } => {
                if p.subtree {
                    let k = children(&table, n, at as usize, &mut kids);
                    w.stack.extend(kids[..k].iter().rev());
                }
                Entry::Halts { steps, ones, at }
            }
            Outcome::Never(d) => Entry::Never(
                w.finder
                    .certificate(job, &mut w.ws, &table, d)
                    .ok_or_else(|| AuditError::NoCertificate {
                        machine: to_text(&table, n, None),
                        decider: d.name(),
                    })?,
            ),
            Outcome::Undecided => Entry::Undecided,
        };
        totals.add(&entry);
        put_record(&mut bytes, &Record { table, entry }, n);
    }
    s.normalise();
    Ok((bytes, s, totals))
}

/// The family's lines of a results file (without the coordinator's).
fn results_lines(path: &Path) -> Result<Vec<String>, AuditError> {
    let file = File::open(path).map_err(|e| AuditError::Disagrees {
        path: path.display().to_string(),
        what: e.to_string(),
    })?;
    let mut lines = Vec::new();
    for line in BufReader::new(file).lines() {
        let line = line?;
        if !line.starts_with(COORDINATOR_LINE) {
            lines.push(line);
        }
    }
    Ok(lines)
}

/// Compares the regenerated results file with the run's: the first line
/// that differs, if one does. A results file written before its totals
/// line existed is compared without it.
fn compare(mut ours: Vec<String>, theirs: &[String]) -> Result<usize, String> {
    if !theirs.iter().any(|l| l.starts_with(crate::TOTALS_LINE)) {
        ours.retain(|l| !l.starts_with(crate::TOTALS_LINE));
    }
    for (i, (a, b)) in ours.iter().zip(theirs).enumerate() {
        if a != b {
            return Err(format!(
                "line {}: the run's is `{b}`, the regenerated run's `{a}`",
                i + 1
            ));
        }
    }
    if ours.len() != theirs.len() {
        return Err(format!(
            "{} lines of the family, the regenerated run has {}",
            theirs.len(),
            ours.len()
        ));
    }
    Ok(ours.len())
}

/// The temporary file a write goes to before it is checked.
fn temporary(out: &Path) -> PathBuf {
    let mut t = out.as_os_str().to_os_string();
    t.push(".tmp");
    PathBuf::from(t)
}

/// Regenerates the audit file of the job with parameters `params` into
/// `out`, compressed at zstd `level`, and keeps it only if the results
/// file it makes equals `results` (the run's, the coordinator's own lines
/// left out); `progress` is told the machines done after each window.
pub fn write(
    params: BusyBeaverParams,
    programs: Option<PathBuf>,
    results: &Path,
    out: &Path,
    level: i32,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Written, AuditError> {
    let host = Host {
        programs,
        ..Host::default()
    };
    let job =
        BusyBeaver::new(params.clone(), &host).map_err(|e| AuditError::Params(e.to_string()))?;
    let theirs = results_lines(results)?;
    let units = job.root_units();
    let pieces = pieces(&job, &units);
    let tmp = temporary(out);
    let file = BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
    let mut z = zstd::stream::write::Encoder::new(file, level)?;
    z.include_checksum(true)?;
    let mut raw = header(&params);
    z.write_all(&raw)?;
    let mut raw_bytes = raw.len() as u64;
    let mut summary = BbSummary::default();
    let mut totals = Totals::default();
    let mut unit = usize::MAX;
    let mut leaves = Vec::new();
    let written = (|| -> Result<(), AuditError> {
        for window in pieces.chunks(WINDOW) {
            let done: Vec<_> = window
                .par_iter()
                .map_init(
                    || Worker {
                        ws: job.workspace(),
                        finder: Finder::default(),
                        stack: Vec::with_capacity(64),
                    },
                    |w, p| decide_piece(&job, w, p),
                )
                .collect::<Result<_, _>>()?;
            for (p, (bytes, s, t)) in window.iter().zip(done) {
                if p.unit != unit {
                    unit = p.unit;
                    raw.clear();
                    put_unit(&mut raw, &units[unit], job.n);
                    z.write_all(&raw)?;
                    raw_bytes += raw.len() as u64;
                }
                z.write_all(&bytes)?;
                raw_bytes += bytes.len() as u64;
                // The listings are sorted once at the end: merging each
                // piece's into the whole would sort the whole every time.
                let mut s = s;
                leaves.append(&mut s.leaves);
                job.merge(&mut summary, s)?;
                for (a, b) in totals.never.iter_mut().zip(t.never) {
                    *a += b;
                }
                totals.machines += t.machines;
                totals.halting += t.halting;
                totals.undecided += t.undecided;
            }
            progress(totals.machines);
        }
        raw.clear();
        put_end(&mut raw, &totals);
        z.write_all(&raw)?;
        raw_bytes += raw.len() as u64;
        z.finish()?
            .into_inner()
            .map_err(|e| e.into_error())?
            .sync_all()?;
        Ok(())
    })();
    leaves.sort();
    summary.leaves = leaves;
    let checked = written.and_then(|()| {
        compare(job.report(&summary).results_lines, &theirs).map_err(|what| AuditError::Disagrees {
            path: results.display().to_string(),
            what: format!("disagrees with the regenerated run: {what}; no audit file written"),
        })
    });
    let lines_compared = match checked {
        Ok(n) => n,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    };
    std::fs::rename(&tmp, out)?;
    Ok(Written {
        totals,
        summary,
        bytes: std::fs::metadata(out)?.len(),
        raw_bytes,
        lines_compared,
    })
}
