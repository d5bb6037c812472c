//! The last resort ([`orchard_busy_beaver::Workspace::last_resort`]) alone
//! on given machines: for each, the verdict, the decider, the time and the
//! work, and whether the certificate passes the audit's checks (code apart
//! from the searches: [`orchard_busy_beaver::audit::check::verify_translated`],
//! [`orchard_busy_beaver::audit::dfa::verify`],
//! [`orchard_busy_beaver::wfar::verify`]). Machines are given in
//! bbchallenge's text form on the command line, or read from a results
//! file (its `undecided:` lines) with `--results FILE`. With
//! `--far-solver FILE` (a SAT solver with CaDiCaL's command line, run from
//! its own directory as from a worker's `--programs`) the last resort also
//! asks it for DFAs ([`orchard_busy_beaver::far_sat`]); `--far-only` runs
//! that step alone, `--mitm-only` the meet-in-the-middle WFAR search
//! alone (with [`orchard_busy_beaver::decide::LAST_MITM`]).
//!
//! ```text
//! cargo run -p orchard-busy-beaver --release --example bb_last -- --results results/bb-5/job-1-busy-beaver.txt
//! cargo run -p orchard-busy-beaver --release --example bb_last -- 1RB1LC_1LC1RA_0LE0LD_0RA1RD_---0LC
//! cargo run -p orchard-busy-beaver --release --example bb_last -- --far-solver /usr/bin/cadical --far-only --results FILE
//! cargo run -p orchard-busy-beaver --release --example bb_last -- --mitm-only --results FILE
//! ```

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use orchard_busy_beaver::audit::check::verify_translated;
use orchard_busy_beaver::audit::dfa;
use orchard_busy_beaver::decide::{LastResort, LAST_MITM};
use orchard_busy_beaver::far_sat::{ProgramSolver, Solver, SolverRef};
use orchard_busy_beaver::wfar;
use orchard_busy_beaver::{from_text, Workspace};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut machines = Vec::new();
    let mut solver: Option<Arc<dyn Solver>> = None;
    let mut far_only = false;
    let mut mitm_only = false;
    let mut i = 0;
    while i < args.len() {
        if args[i] == "--far-solver" {
            let path = args.get(i + 1).ok_or("--far-solver needs a file")?;
            let r = SolverRef::from_path(path).map_err(|e| format!("--far-solver {e}"))?;
            let dir = Path::new(path).parent().map(Path::to_path_buf);
            solver = Some(Arc::new(ProgramSolver::new(dir, &r)));
            i += 2;
        } else if args[i] == "--far-only" {
            far_only = true;
            i += 1;
        } else if args[i] == "--mitm-only" {
            mitm_only = true;
            i += 1;
        } else if args[i] == "--results" {
            let path = args.get(i + 1).ok_or("--results needs a file")?;
            let text = std::fs::read_to_string(path)?;
            for line in text.lines().filter(|l| l.contains(" undecided:")) {
                if let Some(m) = line.split_whitespace().next() {
                    machines.push(m.to_string());
                }
            }
            i += 2;
        } else {
            machines.push(args[i].clone());
            i += 1;
        }
    }
    if far_only && solver.is_none() {
        return Err("--far-only needs --far-solver".into());
    }
    let mut ws = Workspace::new(1000, 0, 0).with_far_solver(solver);
    let (mut settled, mut total) = (0, 0.0);
    for text in &machines {
        let (t, n) = from_text(text).map_err(|e| format!("not a machine: {text}: {e}"))?;
        let start = Instant::now();
        let (found, effort) = if far_only {
            ws.far_by_solver(&t, n)
        } else if mitm_only {
            let (found, configs) = ws.try_mitm(&t, n, LAST_MITM);
            (found.map(LastResort::Wfar), configs)
        } else {
            ws.last_resort(&t, n)
        };
        let secs = start.elapsed().as_secs_f64();
        if let Some(e) = ws.take_failure() {
            return Err(format!("{text}: {e}").into());
        }
        total += secs;
        let verdict = match &found {
            None => "undecided".to_string(),
            Some(LastResort::TranslatedCycler { t1, t2 }) => format!(
                "never halts: translated-cycler, records at {t1} and {t2}, certificate {}",
                if verify_translated(&t, *t1, *t2) {
                    "verified"
                } else {
                    "REFUSED"
                }
            ),
            Some(LastResort::Far { mirror, dfa: d }) => {
                let check = dfa::verify(&t, n, *mirror, d);
                format!(
                    "never halts: finite-automata-reduction, {} DFA states{}, certificate {}",
                    d.len() / 2,
                    if *mirror { " (mirrored)" } else { "" },
                    check.map_or_else(|e| format!("REFUSED ({e})"), |()| "verified".into())
                )
            }
            Some(LastResort::Wfar(c)) => {
                let check = wfar::verify(&t, n, c, wfar::closure_limit(c)).map(|_| ());
                format!(
                    "never halts: weighted-finite-automata-reduction, automata of {} and {} states, max_d {}, certificate {}",
                    c.left.states(),
                    c.right.states(),
                    c.max_d,
                    check.map_or_else(|e| format!("REFUSED ({e})"), |()| "verified".into())
                )
            }
        };
        if found.is_some() {
            settled += 1;
        }
        println!("{text} {verdict} ({secs:.1} s, work {effort}: steps, abstract configurations, DFA prefixes, conflicts)");
    }
    println!(
        "{settled} of {} machines settled, {total:.0} s in all",
        machines.len()
    );
    Ok(())
}
