//! Reading an audit file back and re-checking it: the tree its records
//! describe, every halting verdict, a seeded sample of the nonhalting ones
//! and every automata certificate among them.
//!
//! A file whose framing, order or totals are wrong is an error
//! ([`AuditError`]); a verdict that a re-check refutes is a failure in the
//! [`CheckReport`], and the rest of the file is still checked.

use std::io::Read;

use rayon::prelude::*;

use orchard_core::{Host, SearchFamily};

use crate::audit::format::Item;
use crate::audit::tape::{Config, Step};
use crate::audit::{AuditError, Certificate, Entry, Reader, Record, Totals};
use crate::cps::MAX_K;
use crate::decide::Workspace;
use crate::far::MAX_DFA;
use crate::machine::{to_text, Table, MAX_STATES};
use crate::repwl::MAX_WORD;
use crate::search::{children, MAX_CHILDREN};
use crate::simulate::{Plain, PlainRun};
use crate::wfar;
use crate::BusyBeaver;

/// Failures listed in a report (all are counted).
pub const MAX_LISTED_FAILURES: usize = 100;

/// Longest visit history of a closed position set a certificate may ask
/// for (the augmented alphabet's key holds 4 bits per visit in a `u64`).
const MAX_HISTORY: u8 = 15;

/// What to re-check beyond every halting verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckOptions {
    /// One nonhalting verdict in this many is re-checked (chosen by a hash
    /// of the machine and the seed; 1: all; 0: none), and every one whose
    /// certificate is automata (WFAR, the last resort's DFAs) unless 0.
    pub one_in: u64,
    pub seed: u64,
    /// Steps of the plain run a re-checked nonhalting machine must not
    /// halt within.
    pub steps: u64,
}

impl Default for CheckOptions {
    fn default() -> CheckOptions {
        CheckOptions {
            one_in: 1024,
            seed: 0,
            steps: 1_000_000,
        }
    }
}

/// What a check found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckReport {
    pub states: usize,
    pub totals: Totals,
    /// Halting verdicts re-run to their step count (all of them).
    pub halting_checked: u64,
    /// Nonhalting verdicts re-checked (the sample and every automata
    /// certificate).
    pub nonhalting_checked: u64,
    /// Of those, the certificates re-verified on the tape, by
    /// [`wfar::verify`] or by [`super::dfa::verify`] (cyclers, translated
    /// cyclers, WFAR, DFAs) rather than by re-running the decider with its
    /// recorded parameters.
    pub certificates_verified: u64,
    /// Verdicts a re-check refuted.
    pub failure_count: u64,
    /// The first [`MAX_LISTED_FAILURES`] of them, one line each.
    pub failures: Vec<String>,
}

/// The buffers of the re-checks.
struct Checker {
    n: usize,
    opts: CheckOptions,
    plain: Plain,
    ws: Workspace,
    depth: u32,
    ngram: u32,
    a: Config,
    b: Config,
}

/// A hash of a table and the seed, to choose the sample.
fn sample_hash(table: &Table, seed: u64) -> u64 {
    let mut h = seed ^ 0x9E37_79B9_7F4A_7C15;
    for &b in table {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        h ^= h >> 29;
    }
    h
}

impl Checker {
    /// Whether `steps` steps from the blank tape run without halting.
    fn runs(&mut self, table: &Table, c: &mut Config, steps: u64) -> bool {
        (0..steps).all(|_| c.step(table) != Step::Halted)
    }

    /// Why the certificate does not prove that `table` never halts, if it
    /// does not.
    fn refutes(&mut self, table: &Table, cert: &Certificate) -> Option<String> {
        let n = self.n;
        let ok = match *cert {
            Certificate::Cycler { preperiod, period } => {
                let (mu, lam) = (u64::from(preperiod), u64::from(period));
                let mut a = std::mem::take(&mut self.a);
                let mut b = std::mem::take(&mut self.b);
                a.reset(mu + lam);
                let ok = lam > 0 && self.runs(table, &mut a, mu) && {
                    b.copy_from(&a);
                    self.runs(table, &mut a, lam) && a.same(&b)
                };
                (self.a, self.b) = (a, b);
                ok
            }
            Certificate::TranslatedCycler { t1, t2 } => {
                translated(&mut self.a, &mut self.b, table, t1, t2)
            }
            Certificate::Backward { depth } => {
                if u32::from(depth) != self.depth {
                    return Some(format!(
                        "backward reasoning to depth {depth}, the job's is {}",
                        self.depth
                    ));
                }
                self.ws.backward(table, n)
            }
            Certificate::NGram { k } => {
                if k == 0 || u32::from(k) > self.ngram {
                    return Some(format!(
                        "n-grams of {k}, the job's are at most {}",
                        self.ngram
                    ));
                }
                self.ws.ngram_cps(table, u32::from(k))
            }
            Certificate::Cps { history, k, gas } => {
                if !(2..=MAX_K).contains(&u32::from(k))
                    || (history != super::format::LRU && history > MAX_HISTORY)
                {
                    return Some(format!(
                        "no closed position set of history {history}, n = {k}"
                    ));
                }
                let how = Certificate::augment(history);
                self.ws
                    .try_augmented(table, u32::from(k), how, gas as usize)
                    .0
            }
            Certificate::RepWl {
                len,
                threshold,
                steps,
                gas,
            } => match self.repwl(table, (len, threshold), steps, gas) {
                Ok(ok) => ok,
                Err(why) => return Some(why),
            },
            Certificate::Far { dfa, gas } => {
                if dfa as usize > MAX_DFA {
                    return Some(format!("DFAs of {dfa} states"));
                }
                self.ws.try_far(table, n, dfa as usize, u64::from(gas)).0
            }
            Certificate::Wfar(ref w) => {
                return wfar::verify(table, n, w, wfar::closure_limit(w))
                    .err()
                    .map(|e| e.to_string())
            }
            Certificate::FarDfa {
                mirror,
                states,
                dfa,
            } => {
                return super::dfa::verify(table, n, mirror, &dfa[..2 * usize::from(states)])
                    .err()
                    .map(|e| e.to_string())
            }
        };
        (!ok).then(|| {
            format!(
                "the {} certificate {cert:?} does not hold",
                cert.decider().name()
            )
        })
    }

    /// Re-runs a repeated word list with words of `len` cells and threshold
    /// `t` ([`crate::repwl`]); an error if no such list exists.
    fn repwl(
        &mut self,
        table: &Table,
        (len, t): (u8, u8),
        steps: u32,
        gas: u32,
    ) -> Result<bool, String> {
        if !(1..=MAX_WORD).contains(&u32::from(len)) || t < 2 {
            return Err(format!("no repeated word list of {len}, {t}"));
        }
        Ok(self
            .ws
            .try_repwl(table, u32::from(len), t, steps, gas as usize)
            .0)
    }

    /// Re-checks one record; a line saying what is wrong, if something is.
    fn record(&mut self, r: &Record) -> (Option<String>, bool) {
        let n = self.n;
        match r.entry {
            Entry::Halts { steps, ones, at } => {
                let got = self.plain.run(&r.table, n, u64::from(steps));
                let want = PlainRun::Halts {
                    steps: u64::from(steps),
                    ones: u64::from(ones),
                    at,
                };
                let wrong = (got != want).then(|| {
                    format!("halts after {steps} steps with {ones} ones; plain simulation: {got:?}")
                });
                (wrong, false)
            }
            Entry::Never(ref cert) => {
                // The automata certificates (weighted automata, the last
                // resort's DFAs) are re-verified whatever the sample: a few
                // dozen in a 5-state run, from the most intricate searches
                // or from outside (`--certificates`).
                let automata = matches!(cert, Certificate::Wfar(_) | Certificate::FarDfa { .. });
                if self.opts.one_in == 0
                    || !(automata
                        || sample_hash(&r.table, self.opts.seed).is_multiple_of(self.opts.one_in))
                {
                    return (None, false);
                }
                let steps = self.opts.steps.max(u64::from(self.depth));
                if let PlainRun::Halts { steps, .. } = self.plain.run(&r.table, n, steps) {
                    let why = format!("{}, but halts after {steps} steps", cert.decider().name());
                    return (Some(why), true);
                }
                (self.refutes(&r.table, cert), true)
            }
            Entry::Undecided => (None, false),
        }
    }
}

/// Whether the configurations at `t1` and `t2` are a translated cycle:
/// records on the same side, in the same state, equal on the cells
/// from the record back to the farthest cell the head went back to
/// between them.
fn translated(a: &mut Config, b: &mut Config, table: &Table, t1: u32, t2: u32) -> bool {
    if t1 == 0 || t1 >= t2 {
        return false;
    }
    a.reset(u64::from(t2));
    let mut side = Step::Moved;
    while a.time < u64::from(t1) {
        side = a.step(table);
        if side == Step::Halted {
            return false;
        }
    }
    if !matches!(side, Step::RightRecord | Step::LeftRecord) {
        return false;
    }
    b.copy_from(a);
    let p1 = a.head();
    let mut back = p1;
    let mut last = Step::Moved;
    while a.time < u64::from(t2) {
        last = a.step(table);
        if last == Step::Halted {
            return false;
        }
        back = if side == Step::RightRecord {
            back.min(a.head())
        } else {
            back.max(a.head())
        };
    }
    if last != side || a.state != b.state {
        return false;
    }
    let p2 = a.head();
    let dir = if side == Step::RightRecord { -1 } else { 1 };
    (0..=(p1 - back).abs()).all(|i| b.cell(p1 + dir * i) == a.cell(p2 + dir * i))
}

/// Whether the configurations of `table` at `t1` and `t2` are a translated
/// cycle (the audit's own check of a `0x11` certificate, for tests).
pub fn verify_translated(table: &Table, t1: u32, t2: u32) -> bool {
    translated(
        &mut Config::default(),
        &mut Config::default(),
        table,
        t1,
        t2,
    )
}

/// Records re-checked in parallel at a time: large enough to keep every
/// thread busy beside the one long halting run a batch may hold (47
/// million steps for BB(5)'s champion), small enough to hold in memory.
const BATCH: usize = 1 << 14;

/// Counts one record's re-check into the report.
fn count(report: &mut CheckReport, r: &Record, wrong: Option<String>, sampled: bool, n: usize) {
    if sampled {
        report.nonhalting_checked += 1;
        if matches!(
            r.entry,
            Entry::Never(
                Certificate::Cycler { .. }
                    | Certificate::TranslatedCycler { .. }
                    | Certificate::Wfar(_)
                    | Certificate::FarDfa { .. }
            )
        ) {
            report.certificates_verified += 1;
        }
    }
    if let Some(why) = wrong {
        report.failure_count += 1;
        if report.failures.len() < MAX_LISTED_FAILURES {
            let at = match r.entry {
                Entry::Halts { at, .. } => Some(at as usize),
                _ => None,
            };
            report
                .failures
                .push(format!("{}: {why}", to_text(&r.table, n, at)));
        }
    }
}

/// Reads the audit file `source` and re-checks it (see the module doc):
/// the walk of the tree in the file's order on this thread, the verdicts'
/// re-checks on rayon's threads.
pub fn check<R: Read>(source: R, opts: &CheckOptions) -> Result<CheckReport, AuditError> {
    let mut reader = Reader::new(source)?;
    let params = reader.params.clone();
    let job = BusyBeaver::new(params.clone(), &Host::default())
        .map_err(|e| AuditError::Params(e.to_string()))?;
    let n = job.n;
    let units = job.root_units();
    let checker = || Checker {
        n,
        opts: *opts,
        plain: Plain::default(),
        ws: job.workspace(),
        depth: params.depth,
        ngram: params.ngram,
        a: Config::default(),
        b: Config::default(),
    };
    // The records of a batch are re-checked in parallel, then counted in
    // the file's order (the failures listed are the file's first).
    let mut batch: Vec<Record> = Vec::with_capacity(BATCH);
    let flush = |batch: &mut Vec<Record>, report: &mut CheckReport| {
        let found: Vec<(Option<String>, bool)> = batch
            .par_iter()
            .map_init(checker, |c, r| c.record(r))
            .collect();
        for (r, (wrong, sampled)) in batch.drain(..).zip(found) {
            count(report, &r, wrong, sampled, n);
        }
    };
    let mut report = CheckReport {
        states: n,
        ..CheckReport::default()
    };
    let mut next_unit = 0usize;
    let mut subtree = false;
    let mut expected: Vec<Table> = Vec::with_capacity(64);
    let mut kids = [[0u8; 2 * MAX_STATES]; MAX_CHILDREN];
    let corrupt = |machines: u64, what: String| AuditError::Corrupt { machines, what };
    loop {
        match reader.next_item()? {
            Item::Unit(u) => {
                if let Some(t) = expected.last() {
                    return Err(corrupt(
                        reader.machines,
                        format!("unit ends before machine {}", to_text(t, n, None)),
                    ));
                }
                if units.get(next_unit) != Some(&u) {
                    return Err(corrupt(
                        reader.machines,
                        format!(
                            "unit {} is {}, the job's is {}",
                            next_unit + 1,
                            job.unit_label(&u),
                            units
                                .get(next_unit)
                                .map_or("none".into(), |w| job.unit_label(w))
                        ),
                    ));
                }
                next_unit += 1;
                subtree = u.subtree;
                expected.push(u.table);
            }
            Item::Record(r) => {
                let Some(want) = expected.pop() else {
                    return Err(corrupt(
                        reader.machines,
                        format!("{} is not in the tree", to_text(&r.table, n, None)),
                    ));
                };
                if r.table != want {
                    return Err(corrupt(
                        reader.machines,
                        format!(
                            "{} where the tree has {}",
                            to_text(&r.table, n, None),
                            to_text(&want, n, None)
                        ),
                    ));
                }
                if let Entry::Halts { at, .. } = r.entry {
                    if at as usize >= 2 * n || r.table[at as usize] != 0 {
                        return Err(corrupt(
                            reader.machines,
                            format!(
                                "{} halts on a defined transition",
                                to_text(&r.table, n, None)
                            ),
                        ));
                    }
                    if subtree {
                        let k = children(&r.table, n, at as usize, &mut kids);
                        expected.extend(kids[..k].iter().rev());
                    }
                    report.halting_checked += 1;
                }
                report.totals.add(&r.entry);
                batch.push(r);
                if batch.len() == BATCH {
                    flush(&mut batch, &mut report);
                }
            }
            Item::End(t) => {
                flush(&mut batch, &mut report);
                if let Some(want) = expected.last() {
                    return Err(corrupt(
                        reader.machines,
                        format!("the file ends before machine {}", to_text(want, n, None)),
                    ));
                }
                if next_unit != units.len() {
                    return Err(corrupt(
                        reader.machines,
                        format!("{} units of the job's {}", next_unit, units.len()),
                    ));
                }
                if t != report.totals {
                    return Err(corrupt(
                        reader.machines,
                        format!(
                            "the end record counts {:?}, the records {:?}",
                            t, report.totals
                        ),
                    ));
                }
                return Ok(report);
            }
        }
    }
}
