//! The other reading of the paper's stop test, measured: "all conflicts
//! resolved" as only the A- and B-terms (every cell held once, no
//! one-player square), the players' counts left free. The family never
//! uses this reading (see the crate doc, choice 2); this example shows why:
//! `cargo run --release -p orchard-hip-nn --example readings -- PLAYERS SIZE RUNS MAX_ITERATIONS`.

use orchard_hip_nn::geometry::Geometry;
use orchard_hip_nn::{Constants, Network, Outcome, Update};

fn main() {
    let a: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a number"))
        .collect();
    let (m, n, runs, t) = (a[0] as usize, a[1] as usize, a[2], a[3] as u32);
    let geo = Geometry::new(n);
    let mut net = Network::new(&geo, m, Constants::PAPER, Update::Parallel);
    net.stop_counts = false;
    let (mut conv, mut its, mut balanced) = (0u64, 0u64, 0u64);
    for k in 0..runs {
        if let Outcome::Converged { iterations, board } = net.run(1, k, t) {
            conv += 1;
            its += u64::from(iterations);
            balanced += u64::from(geo.check(&board, m).is_ok());
        }
    }
    println!(
        "{m} players {n}x{n}, counts free: {conv}/{runs} converged, mean iterations {:.1}, {balanced} with n^2/m cells each",
        its as f64 / conv.max(1) as f64
    );
}
