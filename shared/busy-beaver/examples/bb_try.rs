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
        let (t, _) = from_text(&text).expect("a machine");
        let mut found = Vec::new();
        for k in [6u32, 8, 10] {
            let start = Instant::now();
            let o = Workspace::new(1000, 30, k).decide(&t, t.len() / 2);
            found.push(format!("ngram<={k}: {o:?} {:?}", start.elapsed()));
        }
        if std::env::var("BB_TRY_GRID").is_err() {
            println!("{text}: {}", found.join(", "));
            continue;
        }
        for l in 1..=8u32 {
            for th in 2..=5u8 {
                let start = Instant::now();
                if ws.try_repwl(&t, l, th, 10_000, 100_000) {
                    found.push(format!("repwl({l},{th}) {:?}", start.elapsed()));
                }
            }
        }
        for k in 2..=4u32 {
            for how in [
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
                if ws.try_augmented(&t, k, how, 200_000) {
                    found.push(format!("cps({how:?},{k}) {:?}", start.elapsed()));
                }
            }
        }
        println!("{text}: {}", found.join(", "));
    }
}
