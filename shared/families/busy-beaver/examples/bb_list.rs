//! Runs the whole pipeline (default parameters, no halting horizon unless
//! `--horizon` is given) on each machine read from standard input, one per
//! line in bbchallenge's text form (anything after the machine is kept),
//! and prints the machine, the stage that settled it, the outcome and the
//! time: for checking the pipeline against lists of machines with known
//! verdicts.
//!
//! ```text
//! cargo run -p orchard-busy-beaver --release --example bb_list -- [--horizon 0] < machines.txt
//! ```

use std::io::BufRead;
use std::time::Instant;

use orchard_busy_beaver::{
    from_text, Workspace, DEFAULT_DEEP_GAS, DEFAULT_DEPTH, DEFAULT_LONG_LIMIT, DEFAULT_NGRAM,
    DEFAULT_STEP_LIMIT,
};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let horizon: u32 = args
        .iter()
        .position(|a| a == "--horizon")
        .and_then(|i| args.get(i + 1))
        .map(|v| v.parse().expect("a number"))
        .unwrap_or(0);
    let mut ws = Workspace::with_limits(
        DEFAULT_STEP_LIMIT,
        DEFAULT_DEPTH,
        DEFAULT_NGRAM,
        DEFAULT_LONG_LIMIT,
        horizon,
    )
    .with_deep_gas(DEFAULT_DEEP_GAS);
    for line in std::io::stdin().lock().lines() {
        let line = line.expect("standard input");
        let Some(text) = line.split_whitespace().next() else {
            continue;
        };
        let rest = line[text.len()..].trim();
        let (t, n) = from_text(text).expect("a machine");
        let start = Instant::now();
        let o = ws.decide(&t, n);
        println!(
            "{text} {} {o:?} {:.1}ms {rest}",
            ws.last_stage.name(),
            start.elapsed().as_secs_f64() * 1e3
        );
    }
}
