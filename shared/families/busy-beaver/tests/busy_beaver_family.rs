//! The `busy-beaver` family against plain brute force over every fully
//! defined machine, every verdict against plain simulation, the published
//! figures; splitting and merging must not change an answer.

use std::collections::BTreeSet;

use orchard_busy_beaver::{
    reference, BbSummary, BbUnit, BusyBeaver, BusyBeaverParams, Decider, Leaf, Verdict,
    DEFAULT_DEEP_GAS, DEFAULT_DEPTH, DEFAULT_HALT_HORIZON, DEFAULT_LONG_LIMIT, DEFAULT_NGRAM,
    DEFAULT_STEP_LIMIT,
};
use orchard_core::{explore_all, FamilyError, Host, SearchFamily};
use proptest::prelude::*;

fn params(states: u32) -> BusyBeaverParams {
    BusyBeaverParams {
        states,
        step_limit: DEFAULT_STEP_LIMIT,
        depth: DEFAULT_DEPTH,
        ngram: DEFAULT_NGRAM,
        long_limit: DEFAULT_LONG_LIMIT,
        halt_horizon: DEFAULT_HALT_HORIZON,
        deep_gas: DEFAULT_DEEP_GAS,
        far_solver: None,
        certificates: None,
        last_resort: true,
        mitm_wfar: true,
    }
}

fn job(states: u32) -> BusyBeaver {
    BusyBeaver::new(params(states), &Host::default()).unwrap()
}

/// The whole job, explored in this thread with `budget` nodes per call.
fn search(states: u32, budget: u64) -> BbSummary {
    let job = job(states);
    explore_all(&job, job.root_units(), budget).unwrap()
}

fn pieces(states: u32, budget: u64) -> Vec<BbSummary> {
    let job = job(states);
    orchard_core::explore_pieces(&job, job.root_units(), budget).unwrap()
}

fn texts(n: u32, leaves: &[Leaf]) -> BTreeSet<String> {
    leaves.iter().map(|l| l.text(n as usize)).collect()
}

/// Brute force over all `(4N + 1)^(2N)` machines, simulated for a step
/// limit far past the family's maximum, finds the same maxima and, once put
/// in tree normal form, exactly the same champions.
#[test]
fn agrees_with_brute_force() {
    for (n, limit, machines) in [(1u32, 1000u64, 25u64), (2, 1000, 6561), (3, 300, 4_826_809)] {
        let s = search(n, u64::MAX);
        let b = reference::brute_force(n as usize, limit);
        assert_eq!(b.machines, machines);
        assert_eq!(s.undecided, 0, "n = {n}");
        assert_eq!(u64::from(s.max_ones), b.max_ones, "ones, n = {n}");
        assert_eq!(u64::from(s.max_steps), b.max_steps, "steps, n = {n}");
        assert_eq!(texts(n, &s.ones_champions), b.ones_champions, "n = {n}");
        assert_eq!(texts(n, &s.steps_champions), b.steps_champions, "n = {n}");
        assert!(limit > u64::from(s.max_steps) * 10);
    }
}

/// Every halting verdict is what plain simulation finds (steps and ones);
/// no machine proved nonhalting halts within 100000 steps. All of them for
/// 1 to 3 states, a sample and the champions for 4.
#[test]
fn every_verdict_is_reproduced_by_simulation() {
    for n in 1..=4u32 {
        let s = search(n, u64::MAX);
        let sample = if n == 4 { 101 } else { 1 };
        let chosen = s
            .leaves
            .iter()
            .enumerate()
            .filter(|(i, _)| i % sample == 0)
            .map(|(_, l)| l)
            .chain(&s.ones_champions)
            .chain(&s.steps_champions);
        let mut checked = 0;
        for leaf in chosen {
            let text = leaf.text(n as usize);
            let machine = reference::parse(&text);
            match leaf.verdict {
                Verdict::Halts { steps, ones, .. } => {
                    let run = reference::run(&machine, u64::from(steps) + 10);
                    assert_eq!(
                        run.halted,
                        Some((u64::from(steps), u64::from(ones))),
                        "{text}"
                    );
                }
                Verdict::Never(_) => {
                    assert_eq!(reference::run(&machine, 100_000).halted, None, "{text}");
                }
                Verdict::Undecided => panic!("{text} undecided"),
            }
            checked += 1;
        }
        assert!(checked as u64 >= s.machines() / sample as u64, "n = {n}");
    }
}

/// The counts of bbchallenge's tree-normal-form table (the paper's
/// "TNF metrics": 61 / 5417 / 858909 machines), Rado's and Brady's
/// maxima, and the chapter's 3-card 6 ones and 21 steps.
#[test]
fn published_figures() {
    let cases: [(u32, u64, u64, u32, u32); 4] = [
        (1, 3, 1, 1, 1),
        (2, 61, 19, 4, 6),
        (3, 5417, 1772, 6, 21),
        (4, 858_909, 249_693, 13, 107),
    ];
    for (n, machines, halting, ones, steps) in cases {
        let s = search(n, u64::MAX);
        assert_eq!(s.machines(), machines, "n = {n}");
        assert_eq!(s.nodes, machines, "every node is a machine");
        assert_eq!(s.halting, halting, "n = {n}");
        assert_eq!(s.undecided, 0, "n = {n}");
        assert_eq!((s.max_ones, s.max_steps), (ones, steps), "n = {n}");
        assert_eq!(s.leaves.len() as u64, machines);
    }
    let s = search(4, u64::MAX);
    assert_eq!(
        texts(4, &s.steps_champions),
        BTreeSet::from(["1RB1LB_1LA0LC_1RZ1LD_1RD0RA".to_string()])
    );
    // Lin and Rado's six ones (the chapter's example) is one of the 3-card
    // champions.
    let s = search(3, u64::MAX);
    assert!(texts(3, &s.ones_champions).contains("1RB1LC_1RC1RZ_1LA0LB"));
    assert!(texts(3, &s.steps_champions).contains("1RB1RZ_1LB0RC_1LC1LA"));
}

/// Without the stronger deciders, machines are left undecided: counted,
/// listed, and the maxima reported as lower bounds, never dropped.
#[test]
fn undecided_machines_are_counted_and_listed() {
    let job = BusyBeaver::new(
        BusyBeaverParams {
            states: 3,
            step_limit: 100,
            depth: 0,
            ngram: 0,
            long_limit: 0,
            halt_horizon: 0,
            deep_gas: 0,
            far_solver: None,
            certificates: None,
            last_resort: false,
            mitm_wfar: false,
        },
        &Host::default(),
    )
    .unwrap();
    let s = explore_all(&job, job.root_units(), u64::MAX).unwrap();
    assert!(s.undecided > 0);
    assert_eq!(
        s.machines(),
        5417,
        "the tree does not depend on the deciders"
    );
    let r = job.report(&s);
    assert_eq!(r.json["exact"], false);
    assert_eq!(r.json["undecided"], s.undecided);
    assert_eq!(
        r.json["undecided_machines"].as_array().unwrap().len() as u64,
        s.undecided
    );
    let listed = r
        .results_lines
        .iter()
        .filter(|l| l.ends_with("undecided: none"))
        .count();
    assert_eq!(listed as u64, s.undecided);
}

#[test]
fn splitting_does_not_change_the_summary() {
    for n in 1..=3 {
        let whole = search(n, u64::MAX);
        for budget in [1, 7, 100] {
            assert_eq!(search(n, budget), whole, "n = {n}, budget {budget}");
        }
    }
    assert_eq!(search(4, 20_000), search(4, u64::MAX));
}

/// The root units partition the tree: each machine is met exactly once.
#[test]
fn root_units_partition_the_tree() {
    for n in 1..=3 {
        let units = job(n).root_units();
        assert!(units.len() > 2, "several root units");
        let p = pieces(n, u64::MAX);
        let mut all: Vec<&Leaf> = p.iter().flat_map(|s| &s.leaves).collect();
        let count = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), count, "a machine met twice, n = {n}");
        assert_eq!(count as u64, search(n, u64::MAX).machines());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(30))]

    /// Any order of merging the pieces of a split job gives the same summary.
    #[test]
    fn merge_order_does_not_matter(
        n in 2u32..=3,
        budget in 1u64..40,
        seed in any::<u64>(),
    ) {
        let j = job(n);
        let (merged, _) = orchard_core::testing::merged_in_any_order(&j, j.root_units(), budget, seed);
        prop_assert_eq!(merged, search(n, u64::MAX));
    }
}

#[test]
fn bad_units_are_rejected() {
    let mut bad = [0u8; 10];
    bad[0] = 13; // goes to state D in a 3-state job
    let mut past = [0u8; 10];
    past[6] = 1; // a transition of a fourth state
    for table in [bad, past] {
        let err = explore_all(
            &job(3),
            vec![BbUnit {
                table,
                subtree: true,
            }],
            10,
        )
        .unwrap_err();
        assert!(matches!(err, FamilyError::BadUnit(_)), "{table:?}: {err}");
    }
}

#[test]
fn parameters_are_validated() {
    for (p, name) in [
        (params(0), "states"),
        (params(6), "states"),
        (
            BusyBeaverParams {
                step_limit: 10,
                ..params(3)
            },
            "step-limit",
        ),
        (
            BusyBeaverParams {
                depth: 61,
                ..params(3)
            },
            "depth",
        ),
        (
            BusyBeaverParams {
                ngram: 11,
                ..params(3)
            },
            "ngram",
        ),
        (
            BusyBeaverParams {
                long_limit: 500,
                ..params(3)
            },
            "long-limit",
        ),
        (
            BusyBeaverParams {
                long_limit: 20_000_000,
                ..params(3)
            },
            "long-limit",
        ),
        (
            BusyBeaverParams {
                halt_horizon: 50_000,
                ..params(3)
            },
            "halt-horizon",
        ),
        (
            BusyBeaverParams {
                deep_gas: 10_000_001,
                last_resort: false,
                mitm_wfar: false,
                ..params(3)
            },
            "deep-gas",
        ),
    ] {
        let e = BusyBeaver::new(p, &Host::default()).unwrap_err();
        assert_eq!(e.name, name);
    }
    assert!(BusyBeaver::new(params(4), &Host::default()).is_ok());
    assert!(BusyBeaver::new(params(5), &Host::default()).is_ok());
    // The later runs may be switched off.
    assert!(BusyBeaver::new(
        BusyBeaverParams {
            long_limit: 0,
            halt_horizon: 0,
            deep_gas: 0,
            last_resort: false,
            mitm_wfar: false,
            ..params(5)
        },
        &Host::default()
    )
    .is_ok());
}

#[test]
fn report_has_the_figures() {
    let job = job(3);
    let s = search(3, u64::MAX);
    let r = job.report(&s);
    for key in [
        "family",
        "states",
        "machines",
        "halting",
        "nonhalting",
        "undecided",
        "max_ones",
        "max_steps",
        "ones_champions",
        "steps_champions",
        "deciders",
        "enumerated",
        "exact",
        "nodes",
    ] {
        assert!(r.json.get(key).is_some(), "missing {key}");
    }
    assert_eq!(r.json["machines"], 5417);
    assert_eq!(r.json["max_steps"], 21);
    assert_eq!(r.json["exact"], true);
    assert_eq!(r.json["steps_champions"][0], "1RB1RZ_1LB0RC_1LC1LA");
    let deciders = r.json["deciders"].as_object().unwrap();
    let total: u64 = deciders.values().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(total, 5417);
    assert_eq!(deciders.len(), Decider::ALL.len() + 1);
    // One line per machine: the machine, the verdict, the decider.
    assert_eq!(r.results_lines.len(), 5417);
    let names: BTreeSet<&str> = Decider::ALL.iter().map(|d| d.name()).collect();
    for line in &r.results_lines {
        let (machine, rest) = line.split_once(' ').unwrap();
        assert_eq!(machine.len(), 20, "{line}");
        let decider = rest.rsplit(": ").next().unwrap();
        if rest.starts_with("halts after") {
            assert_eq!(decider, "halt");
            assert!(machine.contains("1RZ"), "{line}");
        } else {
            assert!(rest.starts_with("never halts"), "{line}");
            assert!(names.contains(decider), "{line}");
        }
    }
    assert!(r
        .results_lines
        .contains(&"1RB1RZ_1LB0RC_1LC1LA halts after 21 steps with 5 ones: halt".to_string()));
}

/// Coq-BB5's certificates with the largest automata, as a job carries them.
fn coq_certificates() -> orchard_busy_beaver::wfar::supplied::SuppliedCertificates {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/certificates/coq-bb5-large-wfar.txt"
    );
    orchard_busy_beaver::wfar::supplied::SuppliedCertificates::from_path(path).unwrap()
}

#[test]
fn supplied_certificates_are_verified_with_the_job_and_settle_their_machines() {
    use orchard_busy_beaver::decide::LastResort;
    use orchard_busy_beaver::{from_text, Outcome};
    let supplied = coq_certificates();
    let with = |c, p: BusyBeaverParams| BusyBeaverParams {
        certificates: Some(c),
        ..p
    };
    let job = BusyBeaver::new(with(supplied.clone(), params(5)), &Host::default()).unwrap();
    // A helix machine that every search of the pipeline leaves (the
    // results of the 5-state run): decided, by its certificate, only
    // once the whole pipeline failed on it.
    let helix = "1RB0RC_1LC0LE_0LD0LB_1RA---_1LB0RD";
    let (table, n) = from_text(helix).unwrap();
    let mut ws = job.workspace();
    assert_eq!(
        ws.decide(&table, n),
        Outcome::Never(Decider::WeightedFiniteAutomataReduction)
    );
    let Some(LastResort::Wfar(c)) = ws.last_resort.clone() else {
        panic!("{:?}", ws.last_resort)
    };
    assert_eq!((c.left.states(), c.right.states(), c.max_d), (58, 37, 1));
    // The champion, listed nowhere, still halts.
    let (champion, _) = from_text("1RB1LC_1RC1RB_1RD0LE_1LA1LD_---0LA").unwrap();
    assert!(matches!(ws.decide(&champion, 5), Outcome::Halts { .. }));
    // Named in the report, the JSON and the results file.
    let s = BbSummary::default();
    let r = job.report(&s);
    assert_eq!(r.json["certificates"]["machines"][1], helix);
    assert!(r.results_lines.iter().any(|l| l.contains(helix)));
    assert!(r
        .text
        .iter()
        .any(|l| l.starts_with("supplied certificates: 4")));

    // A damaged certificate refuses the job, naming its machine.
    let mut bad = supplied.clone();
    bad.entries[1].left = bad.entries[1].left.replacen(",-1;", ",0;", 1);
    let e = BusyBeaver::new(with(bad, params(5)), &Host::default()).unwrap_err();
    assert_eq!(e.name, "certificates");
    assert!(e.to_string().contains(helix), "{e}");
    // So does a job of another size, and one without the last resort.
    let e = BusyBeaver::new(with(supplied.clone(), params(4)), &Host::default()).unwrap_err();
    assert_eq!(e.name, "certificates");
    let off = BusyBeaverParams {
        last_resort: false,
        mitm_wfar: false,
        ..with(supplied, params(5))
    };
    let e = BusyBeaver::new(off, &Host::default()).unwrap_err();
    assert_eq!(e.name, "certificates");
}
