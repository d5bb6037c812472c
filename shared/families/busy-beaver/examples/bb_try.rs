//! Which decider parameters settle given machines: a grid of repeated word
//! lists and augmented closed position sets, tried one by one on each
//! machine named on the command line (bbchallenge's text form). For finding
//! what the pipeline should try next on its undecided machines.
//!
//! ```text
//! cargo run -p orchard-busy-beaver --release --example bb_try -- 1RB1RA_1LC1LB_0RD0LC_1RE---_0RA1LA
//! ```

use std::time::Instant;

use orchard_busy_beaver::cps::Augment;
use orchard_busy_beaver::{from_text, Workspace};

fn main() {
    let mut ws = Workspace::new(1000, 30, 4);
    for text in std::env::args().skip(1) {
        let (t, n) = from_text(&text).expect("a machine");
        let mut found = Vec::new();
        let max_dfa: usize = std::env::var("BB_TRY_FAR")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        for d in 1..=max_dfa {
            let start = Instant::now();
            let (ok, prefixes) = ws.try_far(&t, n, d, u64::MAX);
            if ok {
                found.push(format!(
                    "far(dfa {d}) {prefixes} prefixes {:?}",
                    start.elapsed()
                ));
                break;
            }
            if d == max_dfa {
                found.push(format!(
                    "far(dfa <= {d}) failed, {prefixes} prefixes {:?}",
                    start.elapsed()
                ));
            }
        }
        for k in [6u32, 8, 10] {
            let start = Instant::now();
            let o = Workspace::new(1000, 30, k).decide(&t, t.len() / 2);
            found.push(format!("ngram<={k}: {o:?} {:?}", start.elapsed()));
        }
        if std::env::var("BB_TRY_DEEP").is_ok() {
            // Each attempt of the deep stage, timed.
            for a in orchard_busy_beaver::decide::DEEP {
                let start = Instant::now();
                let ok = ws.try_attempt(&t, n, a, orchard_busy_beaver::DEFAULT_DEEP_GAS as usize);
                found.push(format!(
                    "{a:?} {ok} {:.1}ms",
                    start.elapsed().as_secs_f64() * 1e3
                ));
            }
        }
        if std::env::var("BB_TRY_GRID").is_err() {
            println!("{text}: {}", found.join(", "));
            continue;
        }
        for l in 1..=64u32 {
            for th in 2..=4u8 {
                let start = Instant::now();
                if ws.try_repwl(&t, l, th, 320, 150_000).0 {
                    found.push(format!("repwl({l},{th}) {:?}", start.elapsed()));
                }
            }
        }
        for k in 2..=12u32 {
            for how in [
                Augment::History(0),
                Augment::Lru,
                Augment::History(1),
                Augment::History(2),
                Augment::History(3),
                Augment::History(4),
                Augment::History(6),
                Augment::History(8),
                Augment::History(10),
            ] {
                let start = Instant::now();
                if ws.try_augmented(&t, k, how, 200_000).0 {
                    found.push(format!("cps({how:?},{k}) {:?}", start.elapsed()));
                }
            }
        }
        println!("{text}: {}", found.join(", "));
    }
}
