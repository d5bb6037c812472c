//! Runs a Hip job on one core, in this process, without the cluster: the
//! single-thread baseline for BENCHMARKS.md.
//!
//! `cargo run --release -p orchard-hip --example hip_one_core -- solve 5 5 [double]`
//! `cargo run --release -p orchard-hip --example hip_one_core -- direct 5 5 [double]` (one search, no units)
//! `cargo run --release -p orchard-hip --example hip_one_core -- draws 7 7 [colours] [seeds|profile|sandwich]`
//! `cargo run --release -p orchard-hip --example hip_one_core -- sandwich 6 6 3 PREFIX` (the draws
//! below one prefix of the inner rows, e.g. `012012012`: a sample of a sandwich run's leaves)
//! `cargo run --release -p orchard-hip --example hip_one_core -- tune 6 6 FILE [double] [W ...]`
//! `cargo run --release -p orchard-hip --example hip_one_core -- eldest 5 6 [double] [NODES]`
//!
//! `eldest` solves the positions of the eldest line (the first move in
//! search order at every position) from the deepest up, on one table,
//! until NODES (default 2e8) are spent: each position's stones, value and
//! nodes, what the job's guess of the winner learns from lemmas, and at
//! what cost.
//!
//! `tune` measures move orders: it solves every position of FILE (one per
//! line, the cells played from the empty board, e.g. `0 5 30 35 1`, or `-`
//! for the empty board itself), each with a fresh table (Double Hip with
//! `double`), once per weight vector `W` (six comma-separated integers, in
//! the order of `WEIGHTS`; when none is given, the solver's own for the
//! rules and the board, `tuned_weights`), and prints the nodes per
//! position and in total, the wall seconds of each, and how many of the
//! nodes were the plain last moves'. Every order must find the same
//! values; it stops if two disagree. Franke tuned on the fewest nodes; the
//! solver's weights are tuned on the CPU time of one `tune` per weight
//! vector, by `bench/hip-order-descent.py`.

use std::time::Instant;

use orchard_core::{explore_all, Host, SearchFamily};
use orchard_hip::solve::{explore_pruned, tuned_weights, MoveOrder};
use orchard_hip::{DrawsParams, DrawsUnit, HipDraws, HipSolve, Method, SolveParams};

/// What this process lends a job: the table size from `ORCHARD_CACHE_MIB`
/// (as `orchard worker --cache-mib`), if set.
fn host() -> Host {
    Host {
        cache_mib: std::env::var("ORCHARD_CACHE_MIB")
            .ok()
            .map(|v| v.trim().parse().expect("ORCHARD_CACHE_MIB: MiB")),
        ..Host::default()
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize, d: u32| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(d);
    let (rows, cols) = (num(1, 4), num(2, 4));
    if args.first().is_some_and(|a| a == "tune") {
        tune(rows, cols, &args[3..]);
        return;
    }
    if args.first().is_some_and(|a| a == "eldest") {
        let double = args.get(3).is_some_and(|a| a == "double");
        let limit = args
            .get(3 + usize::from(double))
            .map(|n| n.parse().expect("NODES: a count"))
            .unwrap_or(200_000_000);
        eldest(rows, cols, double, limit);
        return;
    }
    let start = Instant::now();
    let (text, nodes) = match args.first().map(String::as_str) {
        Some("draws") => {
            let mut p = DrawsParams::new(rows, cols, num(3, 2));
            p.method = match args.get(4).map(String::as_str) {
                Some("seeds") => Method::Seeds,
                Some("profile") => Method::Profile,
                Some("sandwich") => Method::Sandwich,
                _ => Method::Auto,
            };
            let job = HipDraws::new(p, &host()).expect("parameters");
            let s = explore_all(&job, job.root_units(), u64::MAX).expect("search");
            (job.report(&s).text, s.nodes)
        }
        Some("sandwich") => {
            let mut p = DrawsParams::new(rows, cols, num(3, 3));
            p.method = Method::Sandwich;
            let job = HipDraws::new(p, &host()).expect("parameters");
            let prefix: Vec<u8> = args
                .get(4)
                .map(|d| d.bytes().map(|b| b - b'0').collect())
                .unwrap_or_default();
            let unit = DrawsUnit::Sandwich {
                prefixes: vec![prefix],
            };
            let s = explore_all(&job, vec![unit], u64::MAX).expect("search");
            let text = vec![format!(
                "below the prefix: {} draws, {} playable (each prefix standing for its orbit)",
                s.draws, s.playable
            )];
            (text, s.nodes)
        }
        Some("direct") => {
            let p = SolveParams::new(rows, cols, args.get(3).is_some_and(|a| a == "double"));
            let job = HipSolve::new(p, &host()).expect("parameters");
            let s = job.solve_position(&[]).expect("search");
            let text = vec![
                format!("value for the first player: {}", s.value),
                format!("{} of the nodes in the plain last moves", s.plain_nodes),
            ];
            (text, s.nodes)
        }
        _ => {
            let mut p = SolveParams::new(rows, cols, args.get(3).is_some_and(|a| a == "double"));
            p.depth = std::env::var("HIP_DEPTH").ok().and_then(|d| d.parse().ok());
            let job = HipSolve::new(p.clone(), &host()).expect("parameters");
            let units = job.root_units();
            let n = units.len();
            let (s, skipped) = if args.get(4).is_some_and(|a| a == "all") {
                (explore_all(&job, units, u64::MAX).expect("search"), 0)
            } else {
                let run = explore_pruned(&job, units, u64::MAX, false).expect("search");
                (run.summary, run.skipped)
            };
            let mut text = job.report(&s).text;
            text.push(format!("{n} root units, {skipped} units skipped as moot"));
            (text, s.nodes)
        }
    };
    let secs = start.elapsed().as_secs_f64();
    for line in text {
        println!("{line}");
    }
    println!(
        "{nodes} nodes, {secs:.2} s, {:.3e} nodes/s on one core",
        nodes as f64 / secs
    );
}

fn eldest(rows: u32, cols: u32, double: bool, limit: u64) {
    let job = HipSolve::new(SolveParams::new(rows, cols, double), &host()).expect("parameters");
    let mut line = vec![Vec::new()];
    while let Some(eldest) = job
        .tree_node(line.last().expect("the root"))
        .expect("rules")
        .children
        .first()
    {
        line.push(eldest.clone());
    }
    let mut total = 0u64;
    println!("stones value nodes (all so far)");
    for moves in line.iter().rev() {
        let s = job.solve_position(moves).expect("search");
        total += s.nodes;
        println!("{:6} {:5} {} ({total})", moves.len(), s.value, s.nodes);
        if total >= limit {
            break;
        }
    }
}

fn tune(rows: u32, cols: u32, args: &[String]) {
    let file = args.first().expect("tune R C FILE [double] [W ...]");
    let double = args.get(1).is_some_and(|a| a == "double");
    let args = &args[usize::from(double)..];
    let text = std::fs::read_to_string(file).expect("reading the positions");
    // A line `-` is the empty board (the whole game); blank lines are skipped.
    let positions: Vec<Vec<u8>> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| {
            l.split(|c: char| c == ',' || c.is_whitespace())
                .filter(|c| !c.is_empty() && *c != "-")
                .map(|c| c.parse().expect("a cell number"))
                .collect()
        })
        .collect();
    let mut orders: Vec<[i32; 6]> = args[1..]
        .iter()
        .map(|w| {
            let v: Vec<i32> = w.split(',').map(|x| x.parse().expect("a weight")).collect();
            v.try_into().expect("six weights")
        })
        .collect();
    if orders.is_empty() {
        orders.push(tuned_weights(rows as usize, cols as usize, double));
    }
    let job = HipSolve::new(SolveParams::new(rows, cols, double), &host()).expect("parameters");
    let mut values: Vec<Option<i8>> = vec![None; positions.len()];
    for w in orders {
        let start = Instant::now();
        let mut total = 0u64;
        let mut plain = 0u64;
        let mut each = Vec::new();
        let mut seconds = Vec::new();
        for (pos, seen) in positions.iter().zip(values.iter_mut()) {
            let one = Instant::now();
            let s = job
                .solve_position_cold(pos, MoveOrder::new(w))
                .expect("search");
            let (v, nodes) = (s.value, s.nodes);
            plain += s.plain_nodes;
            assert!(
                seen.is_none_or(|s| s == v),
                "two orders disagree on {pos:?}"
            );
            *seen = Some(v);
            total += nodes;
            each.push(nodes.to_string());
            seconds.push(format!("{:.2}", one.elapsed().as_secs_f64()));
            eprint!(" {nodes}");
        }
        eprintln!();
        println!(
            "weights {} total {total} ({:.1} s) per position {}",
            w.map(|x| x.to_string()).join(","),
            start.elapsed().as_secs_f64(),
            each.join(" ")
        );
        // Apart from the nodes' line, which scripts read word by word.
        println!("seconds each {}", seconds.join(" "));
        println!("{plain} of the nodes in the plain last moves");
    }
}
