//! Checks every family's tests share: pieces that merge in any order, a
//! family's probe against its own search, and an estimate against a known
//! size.
//!
//! Not used by the cluster; public so that each family crate's tests call
//! the same code instead of copying it.

use crate::capability::Probing;
use crate::codec;
use crate::erased::{DynFamily, Erased};
use crate::error::FamilyError;
use crate::estimate::{estimate, Estimate, Rng};
use crate::family::{Host, SearchFamily};
use crate::probe::Probe;
use crate::sequential::{explore_all, explore_pieces, merge_all};

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

/// Panics unless the probe of `job` below `unit` walks exactly the tree
/// the search of `unit` visits: the exact expectation of Knuth's estimator
/// over every walk equals the search's node count.
pub fn assert_probe_walks_the_search<F>(job: &F, unit: &F::Unit, what: &str)
where
    F: SearchFamily + Probing<F>,
{
    let summary = explore_all(job, vec![unit.clone()], u64::MAX).expect("the search");
    let (expected, _walks) = exact_expectation(|pick| job.probe(unit, 0, pick).expect("the probe"));
    assert_expectation_is(what, expected, F::nodes(&summary));
}

/// Panics unless `orchard estimate`'s estimate for the job of
/// `params_json` (20,000 probes, a fixed seed, through the erased boundary
/// as the command runs it) is within its error bar of the nodes the job's
/// search visits, with a standard error at most `max_rel_se` of them.
pub fn assert_estimate_finds_the_search<F: SearchFamily>(params_json: &str, max_rel_se: f64) {
    let params: F::Params = serde_json::from_str(params_json).expect("the parameters");
    let job = F::new(params, &Host::default()).expect("the job");
    let truth = F::nodes(&explore_all(&job, job.root_units(), u64::MAX).expect("the search"));
    let erased = Erased::<F>::new()
        .prepare(params_json, &Host::default())
        .expect("the prepared job");
    let e = estimate(erased.as_ref(), 20_000, 2026, 0).expect("the estimate");
    assert_within(params_json, &e, truth as f64, max_rel_se);
}

/// Panics unless the probe of the job of `params_json`, through the erased
/// boundary, refuses `bad` as a bad unit.
pub fn assert_probe_rejects<F: SearchFamily>(params_json: &str, bad: &F::Unit) {
    let erased = Erased::<F>::new()
        .prepare(params_json, &Host::default())
        .expect("the prepared job");
    let mut rng = Rng::new(1);
    let err = erased
        .probe(&codec::encode(bad), 0, &mut |n| rng.below(n))
        .expect_err("a bad unit");
    assert!(matches!(err, FamilyError::BadUnit(_)), "{err}");
}

/// `items` in an order drawn from `seed` (a Fisher-Yates shuffle driven by
/// a linear congruential generator): for tests that merge the pieces of a
/// job in an arbitrary order and expect the same summary.
pub fn shuffled<T>(mut items: Vec<T>, seed: u64) -> Vec<T> {
    let mut x = seed;
    for i in (1..items.len()).rev() {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        items.swap(i, (x >> 33) as usize % (i + 1));
    }
    items
}

/// The summary of `units` of `job` explored in pieces of at most `budget`
/// nodes each, and how many pieces there were; panics unless the pieces
/// merge to one summary in search order, in an order drawn from `seed`, and
/// as a tree (each half of the shuffled pieces merged on its own, then the
/// two halves). The coordinator merges reports in the order workers send
/// them, and replicas or a restored database merge partial summaries, so a
/// family's merge must not depend on either.
pub fn merged_in_any_order<F>(
    job: &F,
    units: Vec<F::Unit>,
    budget: u64,
    seed: u64,
) -> (F::Summary, usize)
where
    F: SearchFamily,
    F::Summary: PartialEq,
{
    let pieces = explore_pieces(job, units, budget).expect("the search");
    let count = pieces.len();
    let in_order = merge_all(job, pieces.clone()).expect("the merge in search order");
    let mut shuffled = shuffled(pieces, seed);
    let in_any_order = merge_all(job, shuffled.clone()).expect("the merge in any order");
    assert_eq!(
        in_any_order, in_order,
        "{count} pieces merged in the order of seed {seed} differ from search order"
    );
    let right = shuffled.split_off(count / 2);
    let mut as_tree = merge_all(job, shuffled).expect("the merge of the left half");
    job.merge(
        &mut as_tree,
        merge_all(job, right).expect("the merge of the right half"),
    )
    .expect("the merge of the halves");
    assert_eq!(
        as_tree, in_order,
        "{count} pieces merged as two halves differ from search order"
    );
    (in_order, count)
}

/// Debian's CaDiCaL (`/usr/bin/cadical`), the SAT solver the tests of the
/// families that run one use; `None` (the test skips, saying so) when it is
/// missing, unless `ORCHARD_REQUIRE_SAT` is set, as in CI, where a missing
/// solver fails the test instead.
pub fn cadical() -> Option<std::path::PathBuf> {
    let p = std::path::PathBuf::from("/usr/bin/cadical");
    if p.is_file() {
        return Some(p);
    }
    assert!(
        std::env::var_os("ORCHARD_REQUIRE_SAT").is_none(),
        "ORCHARD_REQUIRE_SAT is set but CaDiCaL is not installed (apt-get install cadical)"
    );
    eprintln!("skipped: CaDiCaL not installed (apt-get install cadical)");
    None
}
