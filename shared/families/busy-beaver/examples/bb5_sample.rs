//! Measures the busy-beaver pipeline on a random sample of the N-state tree
//! (5 by default): every node down to depth `D` (defined transitions) is
//! decided, and `K` of the subtrees rooted at depth `D`, drawn uniformly
//! with a seed, are explored whole with every stage timed. The sample's
//! totals times (subtrees at depth D) / K estimate the whole tree's: its
//! machines, what each stage settles and costs, the undecided machines and
//! the CPU time of a full run; each machine is also run plainly for the
//! step limit, the baseline rate of a simulator that decides nothing.
//! Last, the node rate: the halting machines of the sample (those that
//! halt within the step limit) run to their halt, steps counted exactly,
//! in the pipeline's watched run ([`Workspace::decide`], which settles
//! them there), in its plain simulator ([`Plain`], the halting horizon),
//! and in a plain array-tape simulator written here; machine steps per
//! second on one core for each, and the ratios.
//!
//! ```text
//! cargo run -p orchard-busy-beaver --release --example bb5_sample -- \
//!     [--states 5] [--depth 5] [--samples 400] [--seed 1] [--list 20] [--params JSON]
//! ```

use std::time::Instant;

use orchard_busy_beaver::simulate::{Plain, PlainRun};
use orchard_busy_beaver::{
    children, machine::undefined_count, to_text, BbSummary, BbUnit, BusyBeaver, BusyBeaverParams,
    Decider, Outcome, Stage, Table, Timings, Workspace, MAX_CHILDREN, STAGES,
};
use orchard_core::{Host, SearchFamily};

fn arg<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> T {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| v.parse().ok().expect("a number"))
        .unwrap_or(default)
}

/// splitmix64: a seeded stream with no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let states: u32 = arg(&args, "--states", 5);
    let depth: usize = arg(&args, "--depth", 5);
    let samples: usize = arg(&args, "--samples", 400);
    let seed: u64 = arg(&args, "--seed", 1);
    let list: usize = arg(&args, "--list", 20);
    let extra: String = arg(&args, "--params", String::from("{}"));
    let mut p: serde_json::Value = serde_json::from_str(&extra).expect("--params is JSON");
    p["states"] = states.into();
    let params: BusyBeaverParams = serde_json::from_value(p).expect("parameters");
    println!("parameters: {}", serde_json::to_string(&params).unwrap());
    let job = BusyBeaver::new(params, &Host::default()).expect("valid parameters");
    let n = states as usize;

    // Every node above depth `depth`, decided; the nodes at it collected.
    let start = Instant::now();
    let mut ws = job.workspace();
    let mut above = BbSummary::default();
    let mut frontier: Vec<Table> = Vec::new();
    let mut stack: Vec<Table> = vec![[0; 10]];
    let mut kids = [[0u8; 10]; MAX_CHILDREN];
    while let Some(t) = stack.pop() {
        if 2 * n - undefined_count(&t, n) == depth {
            frontier.push(t);
            continue;
        }
        let (s, _) = job
            .measure(&BbUnit {
                table: t,
                subtree: false,
            })
            .unwrap();
        job.merge(&mut above, s).unwrap();
        if let Outcome::Halts { at, .. } = ws.decide(&t, n) {
            let k = children(&t, n, at as usize, &mut kids);
            stack.extend(kids[..k].iter().rev());
        }
    }
    println!(
        "above depth {depth}: {} machines ({} halting, {} undecided); {} subtrees at depth {depth} ({:.1} s)",
        above.machines(),
        above.halting,
        above.undecided,
        frontier.len(),
        start.elapsed().as_secs_f64()
    );

    // K subtrees drawn uniformly (with replacement), each explored whole.
    let mut rng = Rng(seed);
    let mut sample = BbSummary::default();
    let mut timings = Timings::default();
    let mut sizes = Vec::with_capacity(samples);
    let wall = Instant::now();
    let mut drawn = Vec::with_capacity(samples);
    for _ in 0..samples {
        let t = frontier[(rng.next() % frontier.len() as u64) as usize];
        drawn.push(t);
        let (s, tm) = job
            .measure(&BbUnit {
                table: t,
                subtree: true,
            })
            .unwrap();
        sizes.push(s.machines());
        for i in 0..STAGES {
            timings.nanos[i] += tm.nanos[i];
        }
        timings.plain_nanos += tm.plain_nanos;
        job.merge(&mut sample, s).unwrap();
    }
    let secs = wall.elapsed().as_secs_f64();
    let scale = frontier.len() as f64 / samples as f64;
    let m = sample.machines();
    sizes.sort_unstable();
    println!(
        "sample: {samples} subtrees, {m} machines in {secs:.1} s: {:.0} machines/s (a plain run \
         of {} steps each: {:.0} machines/s); subtree sizes: median {}, max {}",
        m as f64 / secs,
        job_step_limit(&job),
        m as f64 / (timings.plain_nanos as f64 * 1e-9),
        sizes[sizes.len() / 2],
        sizes[sizes.len() - 1]
    );
    let staged: u64 = timings.nanos.iter().sum();
    println!("stage                 settled   (halting)   est. whole tree    time share   us/machine settled   effort");
    for st in Stage::ALL {
        let i = st as usize;
        println!(
            "{:<20} {:>9} {:>11} {:>17.0} {:>11.1}% {:>12.2} {:>16} {}",
            st.name(),
            sample.settled_by[i],
            sample.halted_by[i],
            sample.settled_by[i] as f64 * scale,
            100.0 * timings.nanos[i] as f64 / staged.max(1) as f64,
            timings.nanos[i] as f64 * 1e-3 / sample.settled_by[i].max(1) as f64,
            sample.effort[i],
            st.unit()
        );
    }
    for d in Decider::ALL {
        println!(
            "  never halts, {:<20} {:>9}",
            d.name(),
            sample.never[d as usize]
        );
    }
    println!(
        "estimate for the whole tree: {:.0} machines ({:.0} halting, {:.0} undecided), {:.2} CPU hours \
         at this machine's speed",
        above.machines() as f64 + m as f64 * scale,
        above.halting as f64 + sample.halting as f64 * scale,
        above.undecided as f64 + sample.undecided as f64 * scale,
        secs * scale / 3600.0
    );
    println!(
        "sample maxima: {} steps ({}), {} ones",
        sample.max_steps,
        sample
            .steps_champions
            .first()
            .map(|l| l.text(n))
            .unwrap_or_default(),
        sample.max_ones
    );
    for l in sample.undecided_machines.iter().take(list) {
        println!("undecided: {}", to_text(&l.table, n, None));
    }
    node_rates(&job, &drawn, n);
}

/// The halting machines of the drawn subtrees that the watched run
/// settles, with their steps; then the three simulators' rates on them.
fn node_rates(job: &BusyBeaver, drawn: &[Table], n: usize) {
    let mut ws = job.workspace();
    let mut kids = [[0u8; 10]; MAX_CHILDREN];
    let mut halting: Vec<(Table, u64)> = Vec::new();
    for &root in drawn {
        let mut stack = vec![root];
        while let Some(t) = stack.pop() {
            if let Outcome::Halts { steps, at, .. } = ws.decide(&t, n) {
                if ws.last_stage == Stage::Run {
                    halting.push((t, u64::from(steps)));
                }
                let k = children(&t, n, at as usize, &mut kids);
                stack.extend(kids[..k].iter().rev());
            }
        }
    }
    let steps: u64 = halting.iter().map(|&(_, s)| s).sum();
    if steps == 0 {
        return;
    }
    // Enough repetitions for about 10^8 steps per simulator.
    let reps = (100_000_000 / steps).max(1);
    let watched = rate(&halting, reps, |ws: &mut Workspace, _, t, s| {
        assert!(matches!(ws.decide(t, n), Outcome::Halts { steps, .. } if u64::from(steps) == s));
    });
    let plain = rate(&halting, reps, |_, p: &mut Plain, t, s| {
        assert!(matches!(p.run(t, n, s), PlainRun::Halts { steps, .. } if steps == s));
    });
    let mut tape = vec![0u8; 8192];
    let array = rate(&halting, reps, |_, _, t, s| {
        assert_eq!(array_run(t, &mut tape, s), s);
    });
    println!(
        "node rate: {} halting machines, {steps} steps, each run {reps} times to its halt, one core:",
        halting.len()
    );
    println!(
        "  pipeline's watched run (cyclers and translated cyclers watched): {watched:.3e} steps/s"
    );
    println!("  pipeline's plain simulator (the halting horizon): {plain:.3e} steps/s");
    println!("  plain array-tape simulator of this bench: {array:.3e} steps/s");
    println!(
        "  ratios to the plain array-tape simulator: watched run {:.3}, pipeline's plain simulator {:.3}",
        watched / array,
        plain / array
    );

    fn rate(
        machines: &[(Table, u64)],
        reps: u64,
        mut run: impl FnMut(&mut Workspace, &mut Plain, &Table, u64),
    ) -> f64 {
        let mut ws = Workspace::new(1000, 0, 0);
        let mut plain = Plain::default();
        let start = Instant::now();
        let mut steps = 0u64;
        for _ in 0..reps {
            for (t, s) in machines {
                run(&mut ws, &mut plain, t, *s);
                steps += s;
            }
        }
        steps as f64 / start.elapsed().as_secs_f64()
    }
}

/// The simplest simulator: a byte tape, the head in its middle (the runs
/// measured halt within the step limit, far inside it), left blank again
/// afterwards; the steps to the halt (at most `limit`).
fn array_run(table: &Table, tape: &mut [u8], limit: u64) -> u64 {
    let mut pos = tape.len() / 2;
    let (mut lo, mut hi) = (pos, pos);
    let mut state = 0usize;
    let mut steps = limit;
    for t in 1..=limit {
        let cell = table[2 * state + usize::from(tape[pos])];
        if cell == 0 {
            steps = t;
            break;
        }
        let x = cell - 1;
        tape[pos] = x & 1;
        if x & 2 != 0 {
            pos += 1;
            hi = hi.max(pos);
        } else {
            pos -= 1;
            lo = lo.min(pos);
        }
        state = usize::from(x >> 2);
    }
    tape[lo..=hi].fill(0);
    steps
}

fn job_step_limit(job: &BusyBeaver) -> String {
    job.report(&BbSummary::default()).json["step_limit"].to_string()
}
