//! The `hip-draws` probe (the walk behind the seeds method) against the
//! nodes its search counts, and its estimates against known sizes.

use orchard_core::estimate::estimate;
use orchard_core::testing::{assert_expectation_is, assert_within, exact_expectation};
use orchard_core::{explore_all, DynFamily, Erased, Host, Probing, SearchFamily};
use orchard_hip::{DrawsParams, HipDraws};

fn job(p: &DrawsParams) -> HipDraws {
    HipDraws::new(p.clone(), &Host::default()).unwrap()
}

/// The nodes a `hip-draws` job counts over all its units (each node of the
/// walk once: a seed handed back is counted by its own unit).
fn draws_tree_nodes(p: &DrawsParams) -> u64 {
    let job = job(p);
    explore_all(&job, job.root_units(), u64::MAX).unwrap().nodes
}

#[test]
fn hip_draws_probe_expectation_is_the_walk_node_count() {
    for (r, c) in [(2, 3), (3, 3), (3, 4), (4, 4)] {
        let p = DrawsParams::new(r, c, 2);
        let job = job(&p);
        let units = job.root_units();
        assert_eq!(units.len(), 1, "{r}x{c}: one root unit");
        let (expected, _) = exact_expectation(|pick| job.probe(&units[0], 0, pick).unwrap());
        assert_expectation_is(
            &format!("hip-draws {r}x{c}"),
            expected,
            draws_tree_nodes(&p),
        );
    }
}

/// Hip 4x4 (issue 4's check): the estimate of the whole job against the
/// nodes its units count, within the error bar. A profile job (k > 2) has
/// no tree to probe and is refused.
#[test]
fn hip_draws_estimates_are_within_their_error_bar() {
    for (r, c) in [(4, 4), (4, 5)] {
        let p = DrawsParams::new(r, c, 2);
        let truth = draws_tree_nodes(&p) as f64;
        let job = Erased::<HipDraws>::new()
            .prepare(&serde_json::to_string(&p).unwrap(), &Host::default())
            .unwrap();
        let e = estimate(job.as_ref(), 20_000, 2026, 0).unwrap();
        assert_within(&format!("hip-draws {r}x{c}"), &e, truth, 0.1);
    }
    let job = Erased::<HipDraws>::new()
        .prepare(
            &serde_json::to_string(&DrawsParams::new(4, 4, 3)).unwrap(),
            &Host::default(),
        )
        .unwrap();
    assert!(estimate(job.as_ref(), 100, 1, 0).is_err());
}
