//! The files of a finished job, written atomically: a temporary file in the
//! same directory, fsync'd, renamed over the target, and the directory
//! fsync'd, so a crash leaves either the old file or the complete new one.
//!
//! Two files per job: the results file (the family's lines, e.g. every
//! maximal game) and the units file (every unit with the nodes it took,
//! which is how a user sees where a search spent its time). Both are built
//! from what the database keeps, so a coordinator writes them again when
//! they are missing (see [`rebuild_report`]).

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::Path;

use orchard_core::{FamilyReport, PreparedJob};

use crate::store::{LedgerRow, RecordedMismatch};

/// The header of a units file.
pub const UNITS_HEADER: &str = "# id\tparent\tstate\tnodes\tdiscarded\tleases\tworker\tunit";

/// The lines of a units file: a header, one tab-separated line per unit in
/// id order (a split unit's nodes are those it searched before splitting;
/// the units it handed back follow with it as their parent; a cancelled
/// unit could no longer change the answer; `discarded` is what a worker had
/// searched in it before it was cancelled), and the totals. Fails only if a
/// total overflows `u64`.
pub fn units_lines(
    rows: &[LedgerRow],
    label: impl Fn(&[u8]) -> String,
) -> Result<Vec<String>, &'static str> {
    let mut lines = Vec::with_capacity(rows.len() + 2);
    lines.push(UNITS_HEADER.to_string());
    let (mut total, mut done) = (0u64, 0u64);
    let (mut discarded, mut cut) = (0u64, 0u64);
    for r in rows {
        let opt = |v: Option<u64>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
        if let Some(n) = r.nodes {
            total = total.checked_add(n).ok_or("node total overflows u64")?;
            done += 1;
        }
        if r.discarded > 0 {
            discarded = discarded
                .checked_add(r.discarded)
                .ok_or("discarded total overflows u64")?;
            cut += 1;
        }
        lines.push(format!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            r.id,
            opt(r.parent),
            r.state,
            opt(r.nodes),
            r.discarded,
            r.leases,
            r.worker.as_deref().unwrap_or("-"),
            label(&r.payload)
        ));
    }
    lines.push(format!(
        "# {total} nodes in {done} done units of {}; {discarded} nodes discarded in {cut} units cancelled while running",
        rows.len()
    ));
    Ok(lines)
}

pub fn write_results_file(path: &Path, lines: &[String]) -> std::io::Result<()> {
    write_with(path, &path.with_extension("txt.tmp"), |w| {
        for line in lines {
            w.write_all(line.as_bytes())?;
            w.write_all(b"\n")?;
        }
        Ok(())
    })
}

/// Writes `bytes` at `path` the same way as a results file: a crash leaves
/// the old file or the new one (the temporary file is `path` + `.tmp`).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_os_string();
    tmp.push(".tmp");
    write_with(path, Path::new(&tmp), |w| w.write_all(bytes))
}

/// Writes a temporary file `tmp` with `fill`, fsyncs it, renames it over
/// `path` and fsyncs the directory.
fn write_with(
    path: &Path,
    tmp: &Path,
    fill: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    // A bare file name's directory is the current one.
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    fs::create_dir_all(dir)?;
    {
        let mut w = BufWriter::new(File::create(tmp)?);
        fill(&mut w)?;
        let file = w.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
    }
    fs::rename(tmp, path)?;
    File::open(dir)?.sync_all()?;
    Ok(())
}

/// The final report of a finished job, built again from its units' stored
/// results (`summaries`, in unit id order) exactly as it was built when the
/// job ended: the same family merge over the same summaries. Merges are
/// order-independent (a count is a sum, a game value a negamax over the
/// same tree, listed boards sorted), so the files it gives are the ones the
/// job wrote. Used when a results file is missing, e.g. after a database is
/// restored from a backup on another machine.
pub fn rebuild_report(
    prepared: &dyn PreparedJob,
    summaries: &[Vec<u8>],
) -> Result<FamilyReport, String> {
    let mut aggregate = prepared.new_aggregate();
    for s in summaries {
        aggregate.absorb(s).map_err(|e| e.to_string())?;
    }
    Ok(aggregate.report())
}

/// The lines a verified job's results file ends with (none for a job of one
/// replica, whose file is the family's lines alone): how many workers
/// explored each unit, how many units were verified, and every mismatch:
/// the unit, then each side's worker, its durable identity (what an
/// exclusion is keyed by) and its summary in the family's words, marked
/// `lost` (outvoted by the majority of the unit's replicas, and excluded
/// from the job) or `majority`, or both `undecided` when the vote was not
/// decided (a job cancelled first).
pub fn verification_lines(
    replicas: u32,
    verified_units: u64,
    mismatches: &[RecordedMismatch],
) -> Vec<String> {
    if replicas <= 1 {
        return Vec::new();
    }
    let mut lines = vec![format!(
        "# verified: each unit explored by {replicas} different workers; {verified_units} units verified, {} mismatches",
        mismatches.len()
    )];
    for m in mismatches {
        let decided = m.loser_a || m.loser_b;
        let side = |lost: bool| match (decided, lost) {
            (false, _) => "undecided",
            (true, true) => "lost",
            (true, false) => "majority",
        };
        let r = &m.row;
        let identity = |key: &str| {
            if key.is_empty() {
                "-".to_string()
            } else {
                key.to_string()
            }
        };
        lines.push(format!(
            "# mismatch: unit {} ({}): {}: {} [{}] reported {} | {}: {} [{}] reported {}",
            r.unit_id,
            r.unit_label,
            side(m.loser_a),
            r.worker_a,
            identity(&r.identity_a),
            r.summary_a,
            side(m.loser_b),
            r.worker_b,
            identity(&r.identity_b),
            r.summary_b
        ));
    }
    lines
}
