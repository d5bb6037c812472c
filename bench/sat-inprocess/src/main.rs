//! The `sat` family's cubes solved by CaDiCaL two ways, to compare them:
//!
//! - `process`: a `cadical` binary, one process per cube, exactly as the
//!   family's `explore` runs it (`orchard_exec::run::call_raw`, the
//!   formula with the cube's literals as unit clauses on stdin, `-c N`).
//! - `spawn`: the same process per cube through plain `std::process`
//!   (wait, no polling): what a process costs without exec's 20 ms tick.
//! - `fresh`: CaDiCaL in this process through `rustsat-cadical`, a new
//!   solver per cube (the clauses, the cube as unit clauses).
//! - `incremental`: one in-process solver for every cube, each cube as
//!   assumptions.
//!
//! Every mode uses the same conflict limit per call and the family's
//! dynamic splitting (an undecided cube is split on the next variable of
//! the formula's split order, false then true). Every model is checked
//! against the formula and the cube; every cube two modes both decide must
//! get the same verdict, and so must every root cube.
//!
//! ```text
//! sat-inprocess --cnf F.cnf|F.icnf [--cubes K] [--conflicts N]
//!               [--modes process,spawn,fresh,incremental] [--solver PATH]...
//!               [--per-cube FILE]
//! ```
//! Root cubes: an iCNF's own, else every sign pattern of the K (default 6)
//! variables first in the split order, as `orchard run sat --cubes K`.
//! `process` and `spawn` run once per `--solver`.

use std::collections::{BTreeMap, VecDeque};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use orchard_exec::run::{call_raw, Limits};
use orchard_sat::dimacs::Formula;
use rustsat::solvers::{LimitConflicts, Solve, SolveIncremental, SolverResult};
use rustsat::types::{Clause, Lit, TernaryVal};
use rustsat_cadical::{CaDiCaL, Statistic};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Verdict {
    Sat,
    Unsat,
    Unknown,
}

impl Verdict {
    fn name(self) -> &'static str {
        match self {
            Verdict::Sat => "sat",
            Verdict::Unsat => "unsat",
            Verdict::Unknown => "unknown",
        }
    }
}

/// One solver call: the verdict, the model when satisfiable, conflicts.
struct Call {
    verdict: Verdict,
    model: Option<Vec<bool>>,
    conflicts: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Process,
    Spawn,
    Fresh,
    Incremental,
}

struct Mode {
    kind: Kind,
    solver: Option<PathBuf>,
}

impl Mode {
    fn label(&self) -> String {
        let name = match self.kind {
            Kind::Process => "process",
            Kind::Spawn => "spawn",
            Kind::Fresh => "fresh",
            Kind::Incremental => "incremental",
        };
        match &self.solver {
            Some(s) => format!("{name}:{}", s.display()),
            None => format!("{name}:rustsat-cadical"),
        }
    }
}

/// Reads CaDiCaL's command-line answer with the family's own reader.
fn read_answer(vars: u32, code: Option<i32>, out: &str) -> Result<Call> {
    let (answer, conflicts) = orchard_sat::read_answer(vars, code, out).map_err(|e| anyhow!(e))?;
    let (verdict, model) = match answer {
        orchard_sat::Answer::Sat(assignment) => (Verdict::Sat, Some(assignment)),
        orchard_sat::Answer::Unsat => (Verdict::Unsat, None),
        orchard_sat::Answer::Unknown => (Verdict::Unknown, None),
    };
    Ok(Call {
        verdict,
        model,
        conflicts,
    })
}

fn clause(lits: &[i32]) -> Clause {
    lits.iter()
        .map(|&l| Lit::from_ipasir(l).expect("a literal"))
        .collect()
}

/// A new in-process solver holding the formula.
fn loaded(f: &Formula) -> Result<CaDiCaL<'static, 'static>> {
    let mut s = CaDiCaL::default();
    for i in 0..f.clauses() {
        s.add_clause(clause(f.clause(i)))?;
    }
    Ok(s)
}

fn limit(s: &mut CaDiCaL<'_, '_>, conflicts: u64) -> Result<()> {
    if conflicts > 0 {
        s.limit_conflicts(Some(u32::try_from(conflicts).context("--conflicts")?))?;
    }
    Ok(())
}

fn in_process_answer(
    s: &mut CaDiCaL<'_, '_>,
    r: SolverResult,
    vars: u32,
    before: u64,
) -> Result<Call> {
    let conflicts = s.get_statistic(Statistic::Conflicts) - before;
    let (verdict, model) = match r {
        SolverResult::Sat => {
            let mut a = vec![false; vars as usize + 1];
            for v in 1..=vars {
                a[v as usize] =
                    s.lit_val(Lit::from_ipasir(v as i32).expect("a variable"))? == TernaryVal::True;
            }
            (Verdict::Sat, Some(a))
        }
        SolverResult::Unsat => (Verdict::Unsat, None),
        SolverResult::Interrupted => (Verdict::Unknown, None),
    };
    Ok(Call {
        verdict,
        model,
        conflicts,
    })
}

fn args_for(conflicts: u64) -> Vec<String> {
    // The family's call: its solver arguments (none by default), then `-c N`.
    if conflicts > 0 {
        vec!["-c".into(), conflicts.to_string()]
    } else {
        Vec::new()
    }
}

/// The family's root cubes: every sign pattern of `vars`, the same order
/// as `Sat::root_units`.
fn sign_patterns(vars: &[u32]) -> Vec<Vec<i32>> {
    (0..1u64 << vars.len())
        .map(|bits| {
            vars.iter()
                .enumerate()
                .map(|(i, &v)| {
                    let v = v as i32;
                    if bits >> (vars.len() - 1 - i) & 1 == 1 {
                        v
                    } else {
                        -v
                    }
                })
                .collect()
        })
        .collect()
}

/// A cube's record in one mode.
struct Record {
    root: usize,
    cube: Vec<i32>,
    verdict: Verdict,
    conflicts: u64,
    secs: f64,
}

struct Run {
    label: String,
    records: Vec<Record>,
    setup_secs: f64,
    wall_secs: f64,
}

fn run_mode(
    mode: &Mode,
    f: &Formula,
    roots: &[Vec<i32>],
    order: &[u32],
    conflicts: u64,
) -> Result<Run> {
    let started = Instant::now();
    let never = AtomicBool::new(false);
    let args = args_for(conflicts);
    let mut incremental = match mode.kind {
        Kind::Incremental => Some(loaded(f)?),
        _ => None,
    };
    let setup_secs = started.elapsed().as_secs_f64();
    let mut queue: VecDeque<(usize, Vec<i32>)> = roots.iter().cloned().enumerate().collect();
    let mut records = Vec::new();
    while let Some((root, cube)) = queue.pop_front() {
        let t = Instant::now();
        let call = match mode.kind {
            Kind::Process => {
                let solver = mode.solver.as_ref().expect("a solver");
                let limits = Limits {
                    timeout: Duration::from_secs(3600),
                    max_output: 1 << 30,
                    grace: Duration::ZERO,
                };
                let out = call_raw(solver, &args, f.with_units(&cube), limits, &never)
                    .map_err(|e| anyhow!("{}: {e}", solver.display()))?
                    .ok_or_else(|| anyhow!("stopped"))?;
                read_answer(f.vars, out.code, &out.stdout)?
            }
            Kind::Spawn => {
                let solver = mode.solver.as_ref().expect("a solver");
                let mut child = Command::new(solver)
                    .args(&args)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::null())
                    .spawn()
                    .with_context(|| format!("{}", solver.display()))?;
                let input = f.with_units(&cube);
                let mut stdin = child.stdin.take().expect("piped");
                let writer = std::thread::spawn(move || stdin.write_all(&input));
                let mut out = String::new();
                child
                    .stdout
                    .take()
                    .expect("piped")
                    .read_to_string(&mut out)?;
                let _ = writer.join();
                let status = child.wait()?;
                read_answer(f.vars, status.code(), &out)?
            }
            Kind::Fresh => {
                let mut s = loaded(f)?;
                for &l in &cube {
                    s.add_clause(clause(&[l]))?;
                }
                limit(&mut s, conflicts)?;
                let r = s.solve()?;
                in_process_answer(&mut s, r, f.vars, 0)?
            }
            Kind::Incremental => {
                let s = incremental.as_mut().expect("a solver");
                let before = s.get_statistic(Statistic::Conflicts);
                limit(s, conflicts)?;
                let assumps: Vec<Lit> = cube
                    .iter()
                    .map(|&l| Lit::from_ipasir(l).expect("a literal"))
                    .collect();
                let r = s.solve_assumps(&assumps)?;
                in_process_answer(s, r, f.vars, before)?
            }
        };
        let secs = t.elapsed().as_secs_f64();
        if let Some(model) = &call.model {
            if let Some(i) = f.falsified(model) {
                bail!(
                    "{}: cube {cube:?}: the model leaves clause {} false",
                    mode.label(),
                    i + 1
                );
            }
            if let Some(l) = cube
                .iter()
                .find(|&&l| model[l.unsigned_abs() as usize] != (l > 0))
            {
                bail!("{}: cube {cube:?}: the model contradicts {l}", mode.label());
            }
        }
        if call.verdict == Verdict::Unknown {
            let v = order
                .iter()
                .find(|v| !cube.iter().any(|l| l.unsigned_abs() == **v))
                .ok_or_else(|| anyhow!("cube {cube:?} undecided with every variable fixed"))?;
            for lit in [-(*v as i32), *v as i32] {
                let mut c = cube.clone();
                c.push(lit);
                queue.push_back((root, c));
            }
        }
        records.push(Record {
            root,
            cube,
            verdict: call.verdict,
            conflicts: call.conflicts,
            secs,
        });
    }
    Ok(Run {
        label: mode.label(),
        records,
        setup_secs,
        wall_secs: started.elapsed().as_secs_f64(),
    })
}

/// A root cube's verdict: satisfiable if a sub-cube is, unsatisfiable if
/// every decided leaf is and none is left.
fn root_verdicts(run: &Run, roots: usize) -> Vec<Verdict> {
    let mut v = vec![Verdict::Unsat; roots];
    for r in &run.records {
        if r.verdict == Verdict::Sat {
            v[r.root] = Verdict::Sat;
        }
    }
    v
}

fn summary(run: &Run, roots: usize) -> String {
    let count = |x: Verdict| run.records.iter().filter(|r| r.verdict == x).count();
    let mut secs: Vec<f64> = run.records.iter().map(|r| r.secs).collect();
    secs.sort_by(f64::total_cmp);
    let median = secs.get(secs.len() / 2).copied().unwrap_or(0.0);
    let max = secs.last().copied().unwrap_or(0.0);
    let conflicts: u64 = run.records.iter().map(|r| r.conflicts).sum();
    let verdict = if count(Verdict::Sat) > 0 {
        "satisfiable"
    } else {
        "unsatisfiable"
    };
    format!(
        "{}: {roots} root cubes, {} calls ({} sat, {} unsat, {} split), {conflicts} conflicts: {verdict}; \
         wall {:.3} s (setup {:.3} s), per call median {:.4} s, max {:.4} s, mean {:.4} s",
        run.label,
        run.records.len(),
        count(Verdict::Sat),
        count(Verdict::Unsat),
        count(Verdict::Unknown),
        run.wall_secs,
        run.setup_secs,
        median,
        max,
        run.wall_secs / run.records.len().max(1) as f64,
    )
}

fn main() -> Result<()> {
    let mut cnf = None;
    let mut cubes: Option<usize> = None;
    let mut conflicts = orchard_sat::DEFAULT_CONFLICTS;
    let mut kinds = vec![Kind::Process, Kind::Fresh, Kind::Incremental];
    let mut solvers: Vec<PathBuf> = Vec::new();
    let mut per_cube = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or_else(|| anyhow!("{a}: a value"));
        match a.as_str() {
            "--cnf" => cnf = Some(PathBuf::from(value()?)),
            "--cubes" => cubes = Some(value()?.parse()?),
            "--conflicts" => conflicts = value()?.parse()?,
            "--solver" => solvers.push(PathBuf::from(value()?)),
            "--per-cube" => per_cube = Some(PathBuf::from(value()?)),
            "--modes" => {
                kinds = value()?
                    .split(',')
                    .map(|m| match m {
                        "process" => Ok(Kind::Process),
                        "spawn" => Ok(Kind::Spawn),
                        "fresh" => Ok(Kind::Fresh),
                        "incremental" => Ok(Kind::Incremental),
                        _ => Err(anyhow!("--modes: unknown mode {m:?}")),
                    })
                    .collect::<Result<_>>()?
            }
            _ => bail!("unknown argument {a:?} (see the header of src/main.rs)"),
        }
    }
    let cnf = cnf.ok_or_else(|| anyhow!("--cnf FILE is required"))?;
    if solvers.is_empty() {
        solvers.push(PathBuf::from("/usr/bin/cadical"));
    }
    let text = std::fs::read_to_string(&cnf).with_context(|| format!("{}", cnf.display()))?;
    let (f, user_cubes) = Formula::parse_input(&text).map_err(|e| anyhow!("{e}"))?;
    let order = f.split_order();
    let roots = match user_cubes {
        Some(c) => {
            if cubes.is_some() {
                bail!("an iCNF brings its own cubes: no --cubes");
            }
            c
        }
        None => {
            let k = cubes
                .unwrap_or(orchard_sat::DEFAULT_CUBES as usize)
                .min(f.vars as usize);
            sign_patterns(&order[..k])
        }
    };
    let mut modes = Vec::new();
    for &kind in &kinds {
        match kind {
            Kind::Process | Kind::Spawn => {
                for s in &solvers {
                    modes.push(Mode {
                        kind,
                        solver: Some(s.clone()),
                    })
                }
            }
            _ => modes.push(Mode { kind, solver: None }),
        }
    }
    println!(
        "{}: {} variables, {} clauses, {} root cubes, --conflicts {conflicts}",
        cnf.display(),
        f.vars,
        f.clauses(),
        roots.len()
    );
    let mut runs = Vec::new();
    for mode in &modes {
        let run = run_mode(mode, &f, &roots, &order, conflicts)?;
        println!("{}", summary(&run, roots.len()));
        runs.push(run);
    }
    // Agreement: a cube two modes both decide, and every root cube.
    let mut disagreements = 0;
    let mut shared = 0;
    if runs.len() > 1 {
        let decided: Vec<BTreeMap<&[i32], Verdict>> = runs
            .iter()
            .map(|r| {
                r.records
                    .iter()
                    .filter(|x| x.verdict != Verdict::Unknown)
                    .map(|x| (x.cube.as_slice(), x.verdict))
                    .collect()
            })
            .collect();
        for (i, a) in decided.iter().enumerate() {
            for b in &decided[i + 1..] {
                for (cube, va) in a {
                    if let Some(vb) = b.get(cube) {
                        shared += 1;
                        if va != vb {
                            disagreements += 1;
                            eprintln!("disagreement on cube {cube:?}: {va:?} vs {vb:?}");
                        }
                    }
                }
            }
        }
        let first = root_verdicts(&runs[0], roots.len());
        for r in &runs[1..] {
            for (i, (a, b)) in first.iter().zip(root_verdicts(r, roots.len())).enumerate() {
                if *a != b {
                    disagreements += 1;
                    eprintln!("disagreement on root cube {:?}: {a:?} vs {b:?}", roots[i]);
                }
            }
        }
        println!(
            "agreement: {} modes, {} root cubes and {shared} cubes decided by two modes compared, \
             {disagreements} disagreements; every model checked against formula and cube",
            runs.len(),
            roots.len()
        );
    } else {
        println!("every model checked against formula and cube");
    }
    if let Some(path) = per_cube {
        let mut out = std::io::BufWriter::new(std::fs::File::create(&path)?);
        writeln!(out, "mode\troot\tcube\tverdict\tconflicts\tseconds")?;
        for run in &runs {
            for r in &run.records {
                let cube: Vec<String> = r.cube.iter().map(i32::to_string).collect();
                writeln!(
                    out,
                    "{}\t{}\t{}\t{}\t{}\t{:.6}",
                    run.label,
                    r.root,
                    cube.join(" "),
                    r.verdict.name(),
                    r.conflicts,
                    r.secs
                )?;
            }
        }
        out.flush()?;
    }
    if disagreements > 0 {
        bail!("{disagreements} disagreements");
    }
    Ok(())
}
