//! Measures the sweep of one board in this process: per square the states
//! expanded, the peak, memory and time. `measure ROWS COLS [--reference]`.
use std::time::Instant;

use orchard_core::{explore_all, Host, SearchFamily};
use orchard_knight_tours::{reference, KnightParams, KnightTours, Method};

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let (rows, cols): (u32, u32) = (a[0].parse().unwrap(), a[1].parse().unwrap());
    if a.iter().any(|x| x == "--reference") {
        let t = Instant::now();
        let c = reference::count(rows as usize, cols as usize);
        println!("{rows}x{cols}: reference {c} in {:.2?}", t.elapsed());
        return;
    }
    let job = KnightTours::new(
        KnightParams {
            rows,
            cols,
            max_states: u64::MAX,
            method: if a.iter().any(|x| x == "--sweep") {
                Method::Sweep
            } else {
                Method::Halves
            },
            meet_part_states: orchard_knight_tours::join::MEET_PART_STATES,
        },
        &Host::default(),
    )
    .unwrap();
    let t = Instant::now();
    let s = explore_all(&job, job.root_units(), u64::MAX).unwrap();
    if a.iter().any(|x| x == "--profile") {
        for (v, n) in s.states.iter().enumerate() {
            eprintln!("square {v} states {n}");
        }
    }
    println!(
        "{rows}x{cols}: tours {} nodes {} peak {} peak_bytes {} time {:.2?}",
        s.tours,
        s.nodes,
        s.peak,
        s.peak_bytes,
        t.elapsed()
    );
}
