//! The last resort (in [`Stage::Horizon`]): the guided DFA search
//! against the plain one and plain simulation on the 3-state tree, and
//! machines of the 5-state tree that every earlier stage leaves undecided
//! (Coq-BB5 settles them with the same kinds of certificates: loops,
//! weighted automata, DFAs), each
//! settled with a certificate the audit's code accepts; a machine that
//! halts is never called nonhalting.

use orchard_busy_beaver::audit::check::verify_translated;
use orchard_busy_beaver::audit::dfa;
use orchard_busy_beaver::decide::{LastResort, LAST_FAR_RUN, LAST_MITM};
use orchard_busy_beaver::far::Far;
use orchard_busy_beaver::simulate::{Plain, PlainRun};
use orchard_busy_beaver::wfar;
use orchard_busy_beaver::{
    children, from_text, Decider, Outcome, Stage, Table, Workspace, DEFAULT_DEEP_GAS, MAX_CHILDREN,
};

/// The pipeline with a halting horizon of a million steps (the stage runs
/// only on machines that ran to the horizon).
fn workspace() -> Workspace {
    Workspace::with_limits(1000, 30, 4, 100_000, 1_000_000)
        .with_deep_gas(DEFAULT_DEEP_GAS)
        .with_last_resort(true)
}

/// Asserts that `text` is settled by the last-resort stage of the whole
/// pipeline with `decider`, that its certificate passes the audit's
/// check, and that it runs a million steps without halting.
fn settled_last(text: &str, decider: Decider) {
    let (t, n) = from_text(text).unwrap();
    let mut ws = workspace();
    assert_eq!(ws.decide(&t, n), Outcome::Never(decider), "{text}");
    assert_eq!(ws.last_stage, Stage::Horizon, "{text}");
    assert!(ws.last_resort.is_some(), "{text}");
    match ws.last_resort.clone().expect("a certificate") {
        LastResort::TranslatedCycler { t1, t2 } => {
            assert_eq!(decider, Decider::TranslatedCycler);
            assert!(verify_translated(&t, t1, t2), "{text}");
        }
        LastResort::Far { mirror, dfa } => {
            assert_eq!(decider, Decider::FiniteAutomataReduction);
            assert_eq!(dfa::verify(&t, n, mirror, &dfa), Ok(()), "{text}");
        }
        LastResort::Wfar(c) => {
            assert_eq!(decider, Decider::WeightedFiniteAutomataReduction);
            assert!(
                wfar::verify(&t, n, &c, wfar::closure_limit(&c)).is_ok(),
                "{text}"
            );
        }
    }
    assert_eq!(
        Plain::default().run(&t, n, 1_000_000),
        PlainRun::Running,
        "{text}"
    );
}

/// Translated cyclers whose period makes about 600 records: Coq-BB5
/// settles them with its loop decider run for 1,050,000 steps.
#[test]
fn long_translated_cyclers_settle_the_two_loops() {
    for text in [
        "1RB---_1LC0LE_1RD0LB_0RD1RA_0LC0RA",
        "1RB0RE_1LC0RA_0LC1LD_1LA---_0RB0LD",
    ] {
        settled_last(text, Decider::TranslatedCycler);
    }
}

/// A counter Coq-BB5 settles with weighted automata of 5 and 3 states.
#[test]
fn wfar_of_five_and_three_states_settles_1rb_0rc1ld() {
    settled_last(
        "1RB---_0RC1LD_1RD1RC_1LE1LB_0RA0LE",
        Decider::WeightedFiniteAutomataReduction,
    );
}

/// The same machine reached through a first transition that writes 0:
/// another machine of the tree, settled the same way.
#[test]
fn wfar_settles_0rb0la() {
    settled_last(
        "0RB0LA_1RC---_0RD1LE_1RE1RD_1LA1LC",
        Decider::WeightedFiniteAutomataReduction,
    );
}

/// Coq-BB5 settles it with weighted automata of 5 and 4 states.
#[test]
fn wfar_of_five_and_four_states_settles_1rb1lc_1lc1ra() {
    settled_last(
        "1RB1LC_1LC1RA_0LE0LD_0RA1RD_---0LC",
        Decider::WeightedFiniteAutomataReduction,
    );
}

/// Coq-BB5 settles it with weighted automata of 8 and 7 states: beyond
/// the small WFAR search, found by the meet-in-the-middle search, and its
/// certificate passes the audit's check ([`wfar::verify`] with
/// [`wfar::closure_limit`]).
#[test]
fn mitm_wfar_settles_1rb1lc_1lb1ra() {
    let text = "1RB1LC_1LB1RA_0LE0LD_0RA1RD_---0LC";
    settled_last(text, Decider::WeightedFiniteAutomataReduction);
    let (t, n) = from_text(text).unwrap();
    let mut ws = Workspace::new(1000, 0, 0);
    let (found, configs) = ws.try_mitm(&t, n, LAST_MITM);
    let cert = found.expect("a certificate");
    assert!(configs <= LAST_MITM.gas, "{configs}");
    assert!(cert.left.states() > 5 && cert.right.states() > 5);
    assert!(wfar::verify(&t, n, &cert, wfar::closure_limit(&cert)).is_ok());
}

/// Coq-BB5 settles it with a DFA of 9 states.
#[test]
fn far_with_a_larger_dfa_settles_1rb1rc_1lc1rb() {
    settled_last(
        "1RB1RC_1LC1RB_1LD0RA_1LE0LB_1LA---",
        Decider::FiniteAutomataReduction,
    );
}

/// A machine that halts after 47 million steps: the whole pipeline with a
/// horizon short of its halt leaves it undecided, the last resort
/// included.
#[test]
fn the_last_resort_proves_no_late_halter() {
    let text = "1RB1LC_1RC1RB_1RD0LE_1LA1LD_---0LA";
    let (t, n) = from_text(text).unwrap();
    assert!(matches!(
        Plain::default().run(&t, n, 100_000_000),
        PlainRun::Halts {
            steps: 47_176_870,
            ..
        }
    ));
    let mut ws = workspace();
    assert_eq!(ws.decide(&t, n), Outcome::Undecided);
    assert_eq!(ws.last_stage, Stage::Undecided);
    assert_eq!(ws.last_resort, None);
}

/// On every machine of the 3-state tree, the guided DFA search answers as
/// the plain one (the run's configurations prune only prefixes that lead
/// to no certificate), proves no halting machine, and every DFA it finds
/// passes the audit's check.
#[test]
fn guided_far_agrees_with_plain_far_and_simulation_on_three_states() {
    let mut ws = Workspace::new(1000, 30, 4);
    let (mut plain_far, mut guided_far) = (Far::default(), Far::default());
    let mut plain = Plain::default();
    let mut kids = [[0u8; 10]; MAX_CHILDREN];
    let mut stack: Vec<Table> = vec![[0; 10]];
    let (mut halting, mut proved) = (0, 0);
    while let Some(t) = stack.pop() {
        let text = orchard_busy_beaver::to_text(&t, 3, None);
        let unguided = plain_far.decide(&t, 3, 4, u64::MAX);
        let guided = guided_far.decide_guided(&t, 3, (1, 4), u64::MAX, LAST_FAR_RUN);
        assert_eq!(guided, unguided, "{text}");
        if guided {
            proved += 1;
            assert_eq!(guided_far.found(), plain_far.found(), "{text}");
            let (mirror, d) = guided_far.found();
            assert_eq!(dfa::verify(&t, 3, mirror, d), Ok(()), "{text}");
            assert_eq!(plain.run(&t, 3, 100_000), PlainRun::Running, "{text}");
        }
        if let Outcome::Halts { at, .. } = ws.decide(&t, 3) {
            assert!(!guided, "{text}");
            halting += 1;
            let k = children(&t, 3, at as usize, &mut kids);
            stack.extend(kids[..k].iter().rev());
        }
    }
    assert!(halting > 1000 && proved > 3000, "{halting} {proved}");
}
