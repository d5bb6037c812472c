//! Checks every family's tests share: a family's probe against its own
//! search, and an estimate against a known size.
//!
//! Not used by the cluster; public so that each family crate's tests call
//! the same code instead of copying it.

use crate::estimate::Estimate;
use crate::probe::Probe;

/// The exact expectation of Knuth's estimator for a probe function, and the
/// number of distinct walks: every walk enumerated by scripting `pick`,
/// weighted by its probability. Equal to the node count of the tree the
/// probe walks (up to rounding); a family's test compares it with the nodes
/// its real search visits, which are equal if and only if the probe walks
/// exactly the searched tree.
pub fn exact_expectation(probe: impl Fn(&mut dyn FnMut(u64) -> u64) -> Probe) -> (f64, u64) {
    let mut total = 0.0;
    let mut walks = 0;
    let mut scripts: Vec<Vec<u64>> = vec![Vec::new()];
    while let Some(script) = scripts.pop() {
        let mut step = 0;
        let probe = probe(&mut |n| {
            let i = script.get(step).copied().unwrap_or(0);
            assert!(i < n);
            step += 1;
            i
        });
        let d = &probe.branching;
        if script.len() < d.len() {
            for j in 0..u64::from(d[script.len()]) {
                let mut s = script.clone();
                s.push(j);
                scripts.push(s);
            }
        } else {
            assert_eq!(script.len(), d.len());
            let prob: f64 = d.iter().map(|&k| 1.0 / f64::from(k)).product();
            total += prob * probe.estimate();
            walks += 1;
        }
    }
    (total, walks)
}

/// Panics unless `expected` (an [`exact_expectation`]) equals `nodes` to
/// within rounding.
pub fn assert_expectation_is(what: &str, expected: f64, nodes: u64) {
    let rel = (expected - nodes as f64).abs() / nodes as f64;
    assert!(
        rel < 1e-9,
        "{what}: expected estimate {expected} but the search visits {nodes} nodes"
    );
}

/// Panics unless `|estimate - truth|` is within 4 standard errors and the
/// error bar is at most `max_rel_se` of the truth (so that the check says
/// something).
pub fn assert_within(what: &str, e: &Estimate, truth: f64, max_rel_se: f64) {
    let err = (e.nodes - truth).abs();
    assert!(
        err <= 4.0 * e.std_error,
        "{what}: estimate {} ± {} vs true {truth}: off by {:.2} standard errors",
        e.nodes,
        e.std_error,
        err / e.std_error
    );
    assert!(
        e.std_error <= max_rel_se * truth,
        "{what}: standard error {} is over {max_rel_se} of {truth}",
        e.std_error
    );
    assert!(e.low95 <= e.nodes && e.nodes <= e.high95);
}
