//! Grundy's game: a move divides one heap into two unequal heaps. Under
//! normal play the player who makes the last division wins; under misère
//! play the player unable to divide wins. This family solves every single
//! heap `1..=max` under normal play (its nim-value, OEIS A002188) and every
//! single heap `1..=misere_max` under misère play, with a winning move.
//!
//! Source: "Games Playing with Computers", chapter 6, section 6.2, which
//! tabulates W/L and a winning move for heaps up to 30 in both versions.
//!
//! **Normal play.** By Sprague-Grundy, a sum of heaps is a loss for the
//! player to move iff the XOR of the heaps' nim-values is 0, and
//! `g(n) = mex { g(a) ^ g(n - a) : a + n - a = n, a != n - a }`; a single
//! heap is a loss iff `g(n) = 0`. The table is `O(N^2)` splits in all (see
//! `search::nim_value`).
//!
//! **Units, and why they are what they are.** `g(n)` needs every smaller
//! `g`, so ranges of heaps are *not* independent pieces of work. A unit is
//! still a range of heaps (`Normal { from, to }`): it reports the nim-values
//! of exactly that range, and the ranges of a job partition `1..=max`, so
//! summaries merge as a disjoint union keyed by heap (associative and
//! commutative, and exact whatever the order). The values below `from` a
//! unit needs come from the job's in-process table, shared by the worker's
//! threads: the ranges are leased in order, so a thread handed a later range
//! while another thread of the process computes the values below it waits
//! for them (see `Table::busy`), and otherwise computes the missing prefix
//! itself; a worker that never saw the earlier ranges (another machine, a
//! restart) recomputes them. That is the honest price of a sequential
//! recurrence: the split buys resumability, progress and budgets, not
//! parallel speed-up. Root ranges are cut at `max * sqrt(k / K)` so that
//! they cost about the same, and a range split on its budget hands back the
//! heaps it did not reach. The node count is the number of splits examined
//! for the unit's own heaps (the prefix recomputation is a cache miss, not
//! counted), so it does not depend on how the job was cut.
//!
//! **Misère play.** Misère play does not reduce to nim-values, so the
//! outcome of a heap is found by an exact memoised minimax over positions,
//! multisets of heaps of 3 or more (see [`search::Misere`]). The number of
//! positions grows like the partitions of `n`, so misère play has its own,
//! smaller limit ([`MISERE_LIMIT`]). Misère units are ranges of heaps too;
//! their memo is shared by the job's threads in one process, so their node
//! counts (positions solved) depend on what was already in the memo.
//!
//! A plain second implementation for the tests is in [`mod@reference`].

pub mod reference;
pub mod search;

use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex};

use serde::{Deserialize, Serialize};

pub use search::Nim;

use orchard_core::{
    Exploration, ExploreContext, FamilyError, FamilyReport, Host, ParamError, SearchFamily,
};

/// Largest `--max` accepted: the nim-value table is two bytes per heap,
/// kept once in the job and once in the summaries (about 40 MB at this
/// limit).
/// The table costs `max^2 / 4` splits, so this is a memory bound far beyond
/// what a run finishes in reasonable time.
pub const MAX_N: u32 = 10_000_000;

/// Largest `--misere-max` accepted. The exact misère search visits the
/// positions reachable from the heap (multisets of heaps of 3 or more); their
/// number grows like the partitions of `n`, about four times per ten heaps,
/// and the memo with them: all heaps up to 60 take 0.2 s, up to 70 2 s, up
/// to 80 11 s and 3.6 million positions (about 200 MB of memo).
pub const MISERE_LIMIT: u32 = 80;

/// `--misere-max` when not given: the chapter's table, within `max`.
pub const MISERE_DEFAULT: u32 = 30;

/// Up to this `max` the JSON report lists every nim-value (beyond it, only
/// with `--list`).
pub const LIST_LIMIT: u32 = 1000;

/// Heaps in the text table (the chapter's).
pub const TABLE_LIMIT: u32 = 30;

/// Root units of normal play (fewer for small jobs).
const NORMAL_UNITS: u32 = 8;

/// Heaps per root unit of misère play.
const MISERE_CHUNK: u32 = 10;

/// Parameters of a `grundy` job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, clap::Args)]
pub struct GrundyParams {
    /// Largest single heap under normal play (1..=10000000).
    #[arg(long)]
    pub max: u32,
    /// Largest single heap under misère play (0..=80, at most max; default
    /// min(max, 30); 0: none).
    #[arg(long)]
    #[serde(default)]
    pub misere_max: Option<u32>,
    /// List every nim-value in the JSON report even when max > 1000.
    #[arg(long)]
    #[serde(default)]
    pub list: bool,
}

/// A range of single heaps, `from..=to`, in one version of the game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum GrundyUnit {
    /// Nim-values under normal play.
    Normal { from: u32, to: u32 },
    /// Outcomes under misère play.
    Misere { from: u32, to: u32 },
}

/// The misère outcome of one single heap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MisereOutcome {
    /// Whether the player to move wins.
    pub win: bool,
    /// A winning move `(a, b)`, `a > b`: none for a loss, nor for heaps of 1
    /// and 2 (won by having no move).
    pub mv: Option<(u32, u32)>,
}

/// What exploring some units found, keyed by heap so that merging is a
/// disjoint union.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrundySummary {
    /// Splits examined (normal play) plus positions solved (misère play).
    pub nodes: u64,
    /// Nim-values of runs of consecutive heaps, by the run's first heap.
    /// Adjacent runs are joined on merge, so the representation depends
    /// only on the heaps covered, not on how the job was cut.
    pub nim: BTreeMap<u32, Vec<Nim>>,
    /// Misère outcomes by heap.
    pub misere: BTreeMap<u32, MisereOutcome>,
}

impl GrundySummary {
    /// The nim-values of heaps `0..=k` for the longest `k` covered from heap
    /// 1 on (`g[0] = 0`).
    pub fn nim_prefix(&self) -> Vec<Nim> {
        let mut g = vec![0];
        for (&start, run) in &self.nim {
            if start as usize != g.len() {
                break;
            }
            g.extend_from_slice(run);
        }
        g
    }
}

/// The in-process nim-value table of a job.
#[derive(Debug)]
struct Table {
    /// Nim-values of heaps `0..g.len()`.
    g: Vec<Nim>,
    /// Whether a thread is extending the table from its end (holds the
    /// [`Frontier`]). Ranges are leased in order, so while the first worker
    /// thread computes heaps `1..=a`, the second is handed `a+1..=b`: rather
    /// than recompute `1..=a`, it waits for them.
    busy: bool,
}

/// Proof that this thread is extending the table from its end; released
/// (and the waiting threads woken) when dropped, on error too.
struct Frontier<'a>(&'a Grundy);

impl Drop for Frontier<'_> {
    fn drop(&mut self) {
        let mut t = self.0.table.lock().unwrap_or_else(|e| e.into_inner());
        t.busy = false;
        drop(t);
        self.0.ready.notify_all();
    }
}

/// The values below a range, and the frontier if this thread holds it.
struct Claim<'a> {
    g: Vec<Nim>,
    frontier: Option<Frontier<'a>>,
}

/// The `grundy` family: one job, with its checked parameters and the
/// in-process tables its units share.
#[derive(Debug)]
pub struct Grundy {
    max: u32,
    misere_max: u32,
    list: bool,
    /// Nim-values as far as this process has computed them.
    table: Mutex<Table>,
    /// Signalled when the thread extending the table stops doing so.
    ready: Condvar,
    /// The misère memo.
    misere: search::Misere,
}

impl Grundy {
    /// Largest heap under normal play.
    pub fn max(&self) -> u32 {
        self.max
    }

    /// Largest heap under misère play (0: none).
    pub fn misere_max(&self) -> u32 {
        self.misere_max
    }

    /// The nim-values of heaps `0..=k`, and whether this thread now holds
    /// the frontier (see [`Table::busy`]); `None` if a stop was requested
    /// while waiting.
    ///
    /// From the in-process table when it is long enough. When it is not and
    /// another thread of this process is extending it, wait for that thread
    /// rather than compute the same values twice; otherwise extend it here.
    fn claim(&self, k: usize, ctx: &ExploreContext<'_>) -> Result<Option<Claim<'_>>, FamilyError> {
        let mut t = self.table.lock().expect("table lock");
        loop {
            if t.g.len() > k {
                // At the end of the table with nobody extending it: the
                // threads that need what this one computes next wait for it.
                let frontier = t.g.len() == k + 1 && !t.busy;
                t.busy |= frontier;
                let g = t.g[..=k].to_vec();
                return Ok(Some(Claim {
                    g,
                    // `then`, not `then_some`: a `Frontier` made and dropped here
                    // would lock the table this thread holds.
                    frontier: frontier.then(|| Frontier(self)),
                }));
            }
            if !t.busy {
                t.busy = true;
                let mut g = t.g.clone();
                drop(t);
                let frontier = Frontier(self);
                search::extend_table(&mut g, k)?; // `frontier` releases on error
                self.publish(&g);
                return Ok(Some(Claim {
                    g,
                    frontier: Some(frontier),
                }));
            }
            // The holder of the frontier never waits, so this ends; the
            // timeout is only to notice a stop request.
            t = self
                .ready
                .wait_timeout(t, std::time::Duration::from_millis(50))
                .expect("table lock")
                .0;
            if ctx.stop_requested() {
                return Ok(None);
            }
        }
    }

    /// Keeps `g` as the in-process table if it is longer.
    fn publish(&self, g: &[Nim]) {
        let mut t = self.table.lock().expect("table lock");
        if g.len() > t.g.len() {
            t.g = g.to_vec();
        }
    }

    fn explore_normal(
        &self,
        from: u32,
        to: u32,
        ctx: &ExploreContext<'_>,
    ) -> Result<Exploration<GrundySummary, GrundyUnit>, FamilyError> {
        let unit = GrundyUnit::Normal { from, to };
        let Some(Claim { mut g, frontier }) = self.claim(from as usize - 1, ctx)? else {
            // Stopped while waiting for the values below `from`: nothing done.
            return Ok(Exploration::new(GrundySummary::default(), vec![unit]));
        };
        let mut max = g.iter().copied().max().unwrap_or(0);
        let mut nodes = 0u64;
        let mut n = from;
        loop {
            let (v, pairs) = search::nim_value(&g, n as usize, search::width(max))?;
            g.push(v);
            max = max.max(v);
            nodes += pairs;
            ctx.progress
                .store(nodes, std::sync::atomic::Ordering::Relaxed);
            if n == to || nodes >= ctx.budget || ctx.stop_requested() {
                break;
            }
            n += 1;
        }
        self.publish(&g);
        drop(frontier);
        let mut summary = GrundySummary {
            nodes,
            ..GrundySummary::default()
        };
        summary
            .nim
            .insert(from, g[from as usize..=n as usize].to_vec());
        let rest = if n < to {
            vec![GrundyUnit::Normal { from: n + 1, to }]
        } else {
            Vec::new()
        };
        Ok(Exploration::new(summary, rest))
    }

    fn explore_misere(
        &self,
        from: u32,
        to: u32,
        ctx: &ExploreContext<'_>,
    ) -> Result<Exploration<GrundySummary, GrundyUnit>, FamilyError> {
        let mut summary = GrundySummary::default();
        let mut n = from;
        loop {
            let heap = u8::try_from(n).map_err(|_| FamilyError::BadUnit(format!("heap {n}")))?;
            let (win, mv) = self.misere.single_heap(heap, &mut summary.nodes);
            summary.misere.insert(n, MisereOutcome { win, mv });
            ctx.progress
                .store(summary.nodes, std::sync::atomic::Ordering::Relaxed);
            if n == to || summary.nodes >= ctx.budget || ctx.stop_requested() {
                break;
            }
            n += 1;
        }
        let rest = if n < to {
            vec![GrundyUnit::Misere { from: n + 1, to }]
        } else {
            Vec::new()
        };
        Ok(Exploration::new(summary, rest))
    }

    /// The heaps covered so far, for partial reports.
    fn coverage(&self, s: &GrundySummary) -> (u32, u32) {
        let normal = (s.nim_prefix().len() - 1) as u32;
        let misere = (1..=self.misere_max)
            .take_while(|n| s.misere.contains_key(n))
            .count() as u32;
        (normal, misere)
    }
}

/// Inserts the run of nim-values `run` starting at heap `start` into `nim`,
/// joining it with adjacent runs; overlapping runs mean the units did not
/// partition the job.
fn insert_run(
    nim: &mut BTreeMap<u32, Vec<Nim>>,
    start: u32,
    run: Vec<Nim>,
) -> Result<(), FamilyError> {
    if run.is_empty() {
        return Ok(());
    }
    let overlap = || FamilyError::BadUnit(format!("nim-values of heap {start} on reported twice"));
    let end = u64::from(start) + run.len() as u64; // exclusive
    let mut start = start;
    let mut run = run;
    if let Some((&s, prev)) = nim.range(..=start).next_back() {
        let prev_end = u64::from(s) + prev.len() as u64;
        if prev_end > u64::from(start) {
            return Err(overlap());
        }
        if prev_end == u64::from(start) {
            let mut joined = nim.remove(&s).expect("present");
            joined.extend_from_slice(&run);
            start = s;
            run = joined;
        }
    }
    if let Some((&s, _)) = nim.range(start.saturating_add(1)..).next() {
        if u64::from(s) < end {
            return Err(overlap());
        }
        if u64::from(s) == end {
            let next = nim.remove(&s).expect("present");
            run.extend_from_slice(&next);
        }
    }
    nim.insert(start, run);
    Ok(())
}

/// A move as the chapter writes it: `a,b`, or `-` for none.
fn move_text(mv: Option<(u32, u32)>) -> String {
    match mv {
        Some((a, b)) => format!("{a},{b}"),
        None => "-".to_string(),
    }
}

fn wl(win: bool) -> &'static str {
    if win {
        "W"
    } else {
        "L"
    }
}

/// Cuts `1..=m` into at most `k` ranges of about equal `n^2` cost.
fn equal_work_ranges(m: u32, k: u32) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let mut from = 1u32;
    for i in 1..=k {
        let to = if i == k {
            m
        } else {
            ((f64::from(m)) * (f64::from(i) / f64::from(k)).sqrt()).round() as u32
        };
        if to >= from {
            out.push((from, to));
            from = to + 1;
        }
    }
    out
}

impl SearchFamily for Grundy {
    const NAME: &'static str = "grundy";
    const ABOUT: &'static str =
        "Grundy's game: nim-values and normal/misère outcomes of single heaps";

    type Params = GrundyParams;
    type Unit = GrundyUnit;
    type Summary = GrundySummary;

    fn new(p: GrundyParams, _: &Host) -> Result<Self, ParamError> {
        if p.max == 0 || p.max > MAX_N {
            return Err(ParamError::new(
                "max",
                format!("must be between 1 and {MAX_N}, got {}", p.max),
            ));
        }
        let misere_max = p.misere_max.unwrap_or(p.max.min(MISERE_DEFAULT));
        let limit = p.max.min(MISERE_LIMIT);
        if misere_max > limit {
            // Named as on the command line: the error reads `--misere-max`.
            return Err(ParamError::new(
                "misere-max",
                format!(
                    "must be at most {limit} (max = {}, and the misère search stops at {MISERE_LIMIT}), got {misere_max}",
                    p.max
                ),
            ));
        }
        Ok(Grundy {
            max: p.max,
            misere_max,
            list: p.list,
            table: Mutex::new(Table {
                g: vec![0],
                busy: false,
            }),
            ready: Condvar::new(),
            misere: search::Misere::default(),
        })
    }

    fn root_units(&self) -> Vec<GrundyUnit> {
        let k = if self.max < LIST_LIMIT {
            1
        } else {
            NORMAL_UNITS
        };
        let mut units: Vec<GrundyUnit> = equal_work_ranges(self.max, k)
            .into_iter()
            .map(|(from, to)| GrundyUnit::Normal { from, to })
            .collect();
        let mut from = 1;
        while from <= self.misere_max {
            let to = (from + MISERE_CHUNK - 1).min(self.misere_max);
            units.push(GrundyUnit::Misere { from, to });
            from = to + 1;
        }
        units
    }

    fn explore(
        &self,
        unit: &GrundyUnit,
        ctx: &ExploreContext<'_>,
    ) -> Result<Exploration<GrundySummary, GrundyUnit>, FamilyError> {
        match *unit {
            GrundyUnit::Normal { from, to } if 1 <= from && from <= to && to <= self.max => {
                self.explore_normal(from, to, ctx)
            }
            GrundyUnit::Misere { from, to } if 1 <= from && from <= to && to <= self.misere_max => {
                self.explore_misere(from, to, ctx)
            }
            _ => Err(FamilyError::BadUnit(format!(
                "{unit:?} is not a range of heaps of this job (max {}, misere_max {})",
                self.max, self.misere_max
            ))),
        }
    }

    fn merge(&self, into: &mut GrundySummary, other: GrundySummary) -> Result<(), FamilyError> {
        into.nodes = into
            .nodes
            .checked_add(other.nodes)
            .ok_or(FamilyError::Overflow("grundy node count"))?;
        for (start, run) in other.nim {
            insert_run(&mut into.nim, start, run)?;
        }
        for (n, o) in other.misere {
            if into.misere.insert(n, o).is_some() {
                return Err(FamilyError::BadUnit(format!(
                    "misère outcome of heap {n} reported twice"
                )));
            }
        }
        Ok(())
    }

    /// The nim-values and misère outcomes: node counts of misère units
    /// depend on what the process's memo already held.
    fn verified_part(&self, _unit: &Self::Unit, s: &GrundySummary, _bound: u64) -> Vec<u8> {
        orchard_core::codec::encode(&(&s.nim, &s.misere))
    }

    fn nodes(s: &GrundySummary) -> u64 {
        s.nodes
    }

    fn report(&self, s: &GrundySummary) -> FamilyReport {
        let g = s.nim_prefix();
        let (normal_to, misere_to) = self.coverage(s);
        let normal_losses: Vec<u32> = (1..=normal_to).filter(|&n| g[n as usize] == 0).collect();
        let misere_losses: Vec<u32> = (1..=misere_to).filter(|n| !s.misere[n].win).collect();
        let nim_values = if self.list || self.max <= LIST_LIMIT {
            serde_json::json!(&g[1..])
        } else {
            serde_json::Value::Null
        };
        let complete = normal_to == self.max && misere_to == self.misere_max;
        let largest = g[1..].iter().copied().max().unwrap_or(0);
        let json = serde_json::json!({
            "family": "grundy",
            "max": self.max,
            "misere_max": self.misere_max,
            "complete": complete,
            "normal_losses": normal_losses,
            "misere_losses": misere_losses,
            "largest_nim_value": largest,
            "nim_values": nim_values,
            "nodes": s.nodes,
        });

        let mut text = vec![format!(
            "Grundy's game, single heaps 1..={} (misère 1..={}){}",
            self.max,
            self.misere_max,
            if complete { "" } else { ", incomplete" }
        )];
        text.push(format!(
            "{:>4}  {:<16} {:<12}",
            "heap", "normal g W/L move", "misère W/L move"
        ));
        for n in 1..=normal_to.min(TABLE_LIMIT) {
            let normal = format!(
                "{:>2} {} {}",
                g[n as usize],
                wl(g[n as usize] != 0),
                move_text(search::normal_move(&g, n as usize))
            );
            let misere = s
                .misere
                .get(&n)
                .filter(|_| n <= misere_to)
                .map(|o| format!("{} {}", wl(o.win), move_text(o.mv)))
                .unwrap_or_default();
            text.push(format!("{n:>4}  {normal:<16} {misere}"));
        }
        let head = |v: &[u32]| {
            let shown: Vec<String> = v.iter().take(40).map(u32::to_string).collect();
            let more = if v.len() > 40 { ", ..." } else { "" };
            format!("{}{more}", shown.join(", "))
        };
        text.push(format!(
            "normal play: {} losing heaps up to {normal_to}: {}",
            normal_losses.len(),
            head(&normal_losses)
        ));
        text.push(format!(
            "misère play: {} losing heaps up to {misere_to}: {}",
            misere_losses.len(),
            head(&misere_losses)
        ));
        text.push(format!("largest nim-value: {largest}"));
        text.push(format!("nodes explored: {}", s.nodes));

        let results_lines = (1..=normal_to)
            .map(|n| {
                let v = g[n as usize];
                let mut line = format!(
                    "{n} {v} normal:{} {}",
                    wl(v != 0),
                    move_text(search::normal_move(&g, n as usize))
                );
                if n <= misere_to {
                    let o = s.misere[&n];
                    line.push_str(&format!(" misere:{} {}", wl(o.win), move_text(o.mv)));
                }
                line
            })
            .collect();
        FamilyReport {
            json,
            text,
            results_lines,
        }
    }

    fn unit_label(&self, u: &GrundyUnit) -> String {
        match u {
            GrundyUnit::Normal { from, to } => format!("normal {from}..={to}"),
            GrundyUnit::Misere { from, to } => format!("misère {from}..={to}"),
        }
    }
}
