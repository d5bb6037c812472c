//! The deep stage (long n-grams, long repeated words, finite automata
//! reduction): it settles machines that Coq-BB5 could only settle with
//! per-machine parameters, and none of its attempts ever proves a machine
//! that halts, even after millions of steps.

use orchard_busy_beaver::decide::{DEEP, DEEPER, DEEPER_GAS_FACTOR};
use orchard_busy_beaver::simulate::{Plain, PlainRun};
use orchard_busy_beaver::{
    children, from_text, Decider, Outcome, Stage, Table, Workspace, DEFAULT_DEEP_GAS, MAX_CHILDREN,
};

/// The pipeline of a job with the default parameters, without the halting
/// horizon (the machines here are settled before it, or halt late).
fn workspace() -> Workspace {
    Workspace::with_limits(1000, 30, 4, 100_000, 0).with_deep_gas(DEFAULT_DEEP_GAS)
}

/// 5-state machines of the tree that every stage before the deep one
/// leaves, each in Coq-BB5's per-machine lists (with the parameters it
/// needed there), and the decider of the deep stage that settles it.
const SETTLED: [(&str, Decider, &str); 9] = [
    (
        "1RB0LD_1RC0LB_0RD---_1RE0RE_1LA0RA",
        Decider::NGramCps,
        "n-grams of 20, more gas",
    ),
    (
        "1RB1LD_1LC---_0LD0LC_0RE1RA_1RE0RA",
        Decider::FiniteAutomataReduction,
        "FAR, 2-state DFA",
    ),
    (
        "1RB1LA_1LA1RC_---0RD_0LA0RE_0LD1RE",
        Decider::FiniteAutomataReduction,
        "FAR, 3-state DFA",
    ),
    (
        "1RB1LD_1RC0RA_1LA---_0RE0LD_0LB1LA",
        Decider::NGramCps,
        "n-grams of 11",
    ),
    (
        "0RB---_1RC0LD_1RD0RA_1LB0LE_0LD0RA",
        Decider::NGramCps,
        "n-grams of 7",
    ),
    (
        "1RB0LB_1LC0RE_1LD0RC_0LE---_1LA0RC",
        Decider::NGramCpsHistory,
        "history 10, n-grams of 9",
    ),
    (
        "1RB1RA_1LC1RD_0RB0LC_1LA1LE_---0LD",
        Decider::NGramCpsLru,
        "history 2, n-grams of 8",
    ),
    (
        "1RB1RD_1LC---_1LE1LD_1RE0LC_1RA0RD",
        Decider::RepWl,
        "words of 10, threshold 3",
    ),
    (
        "0RB---_1RC0RD_1LD0RA_0LE1LD_1LB0LD",
        Decider::RepWl,
        "words of 17, threshold 2",
    ),
];

/// Machines that halt after more than the longer watched run (100,000
/// steps): the deep stage sees exactly such machines, and must fail on
/// them. The champion is among them (47,176,870 steps).
const LATE_HALTERS: [&str; 6] = [
    "1RB1LC_1RC1RB_1RD0LE_1LA1LD_---0LA",
    "1RB1RA_1LC1LB_1RA1LD_1RA1LE_---0LC",
    "1RB1RA_1LC1RD_1LA1LC_---1RE_1RA0RB",
    "1RB1RA_1LC1LB_1RA0LD_0RB1LE_---1LC",
    "1RB---_1LC1RC_0RE0LD_1LC0LB_1RD1RA",
    "1RB1RD_1LC0LE_0RA0LB_1RE---_1LC1RC",
];

#[test]
fn the_deep_stage_settles_what_coq_bb5_tuned_by_hand() {
    let mut ws = workspace();
    let mut plain = Plain::default();
    for (text, decider, what) in SETTLED {
        let (t, n) = from_text(text).unwrap();
        assert_eq!(ws.decide(&t, n), Outcome::Never(decider), "{text} ({what})");
        assert_eq!(ws.last_stage, Stage::Deep, "{text}");
        assert_eq!(plain.run(&t, n, 1_000_000), PlainRun::Running, "{text}");
    }
}

#[test]
fn no_attempt_proves_a_late_halter() {
    let mut ws = workspace();
    let mut plain = Plain::default();
    for text in LATE_HALTERS {
        let (t, n) = from_text(text).unwrap();
        assert!(
            matches!(plain.run(&t, n, 100_000_000), PlainRun::Halts { steps, .. } if steps > 100_000),
            "{text} halts late"
        );
        for a in DEEP {
            assert!(
                !ws.try_attempt(&t, n, a, DEFAULT_DEEP_GAS as usize),
                "{text}: {a:?}"
            );
        }
        for a in DEEPER {
            let gas = DEFAULT_DEEP_GAS as usize * DEEPER_GAS_FACTOR;
            assert!(!ws.try_attempt(&t, n, a, gas), "{text}: {a:?}");
        }
        assert_eq!(ws.decide(&t, n), Outcome::Undecided, "{text}");
    }
}

/// Finite automata reduction with DFAs of up to 4 states on every machine
/// of the 3-state tree: it proves no halting machine, and proves most of
/// the nonhalting ones (the watched run's verdicts are exact at 3 states).
#[test]
fn automata_prove_no_halting_machine_of_the_three_state_tree() {
    let mut ws = Workspace::new(1000, 30, 4);
    let mut kids = [[0u8; 10]; MAX_CHILDREN];
    let mut stack: Vec<Table> = vec![[0; 10]];
    let (mut halting, mut never, mut proved) = (0, 0, 0);
    while let Some(t) = stack.pop() {
        let far = ws.try_attempt(&t, 3, orchard_busy_beaver::Attempt::Far(4), 1_000_000);
        match ws.decide(&t, 3) {
            Outcome::Halts { at, .. } => {
                assert!(!far, "{}", orchard_busy_beaver::to_text(&t, 3, None));
                halting += 1;
                let k = children(&t, 3, at as usize, &mut kids);
                stack.extend(kids[..k].iter().rev());
            }
            Outcome::Never(_) => {
                never += 1;
                proved += u32::from(far);
            }
            Outcome::Undecided => panic!("3 states are all decided"),
        }
    }
    assert_eq!(halting + never, 5417);
    assert!(proved * 10 > never * 9, "{proved} of {never}");
}

/// Counters of the 5-state tree that every stage before weighted finite
/// automata reduction leaves (Coq-BB5 settles them with WFAR
/// certificates): a Fibonacci counter and a counter with growing gaps.
const COUNTERS: [&str; 2] = [
    "1RB1RA_1LC1LB_0RD0LC_1RE---_0RA1LA",
    "1RB---_0RC1LB_1RD1RC_1LE1LD_0RA0LE",
];

#[test]
fn wfar_settles_counters_after_the_deep_stage() {
    let mut ws = workspace();
    let mut plain = Plain::default();
    for text in COUNTERS {
        let (t, n) = from_text(text).unwrap();
        assert_eq!(
            ws.decide(&t, n),
            Outcome::Never(Decider::WeightedFiniteAutomataReduction),
            "{text}"
        );
        assert_eq!(ws.last_stage, Stage::Wfar, "{text}");
        assert_eq!(plain.run(&t, n, 1_000_000), PlainRun::Running, "{text}");
    }
}

#[test]
fn wfar_proves_no_late_halter() {
    let mut ws = workspace();
    for text in LATE_HALTERS {
        let (t, n) = from_text(text).unwrap();
        assert_eq!(ws.try_wfar(&t, n, 2_000_000), None, "{text}");
    }
}

#[test]
fn wfar_proves_no_halting_machine_of_the_three_state_tree() {
    let mut ws = Workspace::new(1000, 30, 4);
    let mut kids = [[0u8; 10]; MAX_CHILDREN];
    let mut stack: Vec<Table> = vec![[0; 10]];
    let mut halting = 0;
    while let Some(t) = stack.pop() {
        if let Outcome::Halts { at, .. } = ws.decide(&t, 3) {
            let found = ws.try_wfar(&t, 3, 20_000);
            assert_eq!(found, None, "{}", orchard_busy_beaver::to_text(&t, 3, None));
            halting += 1;
            let k = children(&t, 3, at as usize, &mut kids);
            stack.extend(kids[..k].iter().rev());
        }
    }
    assert!(halting > 1000, "{halting}");
}
