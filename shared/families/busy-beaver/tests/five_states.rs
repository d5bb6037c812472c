//! The `busy-beaver` family at 5 states, on samples: the whole tree has 181
//! million machines, so the tests take a few subtrees at depth 5 (chosen
//! by a fixed stride, not by their verdicts), the known champion, and check
//! every verdict of the sample against plain simulation.

use orchard_busy_beaver::simulate::{Plain, PlainRun};
use orchard_busy_beaver::{
    children, from_text, machine::undefined_count, reference, BbSummary, BbUnit, BusyBeaver,
    BusyBeaverParams, Outcome, Stage, Table, Workspace, HISTOGRAM_BUCKETS, MAX_CHILDREN,
};
use orchard_core::{explore_all, Host, SearchFamily};

/// Marxen and Buntrock's 5-state champion (1989), bbchallenge's text; its
/// halting transition is E reading 0.
const CHAMPION: &str = "1RB1LC_1RC1RB_1RD0LE_1LA1LD_1RZ0LA";

fn job(json: &str) -> BusyBeaver {
    let p: BusyBeaverParams = serde_json::from_str(json).unwrap();
    BusyBeaver::new(p, &Host::default()).unwrap()
}

/// The nodes of the 5-state tree at depth `depth` (defined transitions),
/// in search order.
fn frontier(depth: usize) -> Vec<Table> {
    let mut ws = Workspace::new(1000, 30, 4);
    let (mut out, mut stack) = (Vec::new(), vec![[0u8; 10]]);
    let mut kids = [[0u8; 10]; MAX_CHILDREN];
    while let Some(t) = stack.pop() {
        if 10 - undefined_count(&t, 5) == depth {
            out.push(t);
            continue;
        }
        if let Outcome::Halts { at, .. } = ws.decide(&t, 5) {
            let k = children(&t, 5, at as usize, &mut kids);
            stack.extend(kids[..k].iter().rev());
        }
    }
    out
}

/// Every `stride`-th subtree at depth 5, as units.
fn sample_units(stride: usize) -> Vec<BbUnit> {
    frontier(5)
        .into_iter()
        .step_by(stride)
        .map(|table| BbUnit {
            table,
            subtree: true,
        })
        .collect()
}

/// The champion, alone, runs to its halt at the halting horizon: 47,176,870
/// steps and 4098 ones, and is the summary's champion for both.
#[test]
fn the_champion_halts_at_the_horizon() {
    let job = job(r#"{"states":5}"#);
    let (table, n) = from_text(CHAMPION).unwrap();
    assert_eq!(n, 5);
    let s = explore_all(
        &job,
        vec![BbUnit {
            table,
            subtree: false,
        }],
        u64::MAX,
    )
    .unwrap();
    assert_eq!((s.machines(), s.halting, s.undecided), (1, 1, 0));
    assert_eq!((s.max_steps, s.max_ones), (47_176_870, 4098));
    assert_eq!(s.halted_by[Stage::Horizon as usize], 1);
    assert_eq!(s.steps_histogram[25], 1, "2^25 <= 47,176,870 < 2^26");
    let r = job.report(&s);
    assert_eq!(r.json["steps_champions"][0], CHAMPION);
    assert_eq!(r.json["ones_champions"][0], CHAMPION);
    assert_eq!(r.json["exact"], true);
    assert!(r.results_lines.contains(&format!(
        "champion {CHAMPION} halts after 47176870 steps with 4098 ones: halt"
    )));
    // The plain reference agrees, step for step.
    let run = reference::run(&reference::parse(CHAMPION), 47_176_880);
    assert_eq!(run.halted, Some((47_176_870, 4098)));
}

/// Without a horizon long enough, the champion is undecided, and says so:
/// counted, listed, the maxima lower bounds.
#[test]
fn a_short_horizon_leaves_the_champion_undecided() {
    let job = job(r#"{"states":5,"halt_horizon":10000000}"#);
    let (table, _) = from_text(CHAMPION).unwrap();
    let s = explore_all(
        &job,
        vec![BbUnit {
            table,
            subtree: false,
        }],
        u64::MAX,
    )
    .unwrap();
    assert_eq!((s.machines(), s.halting, s.undecided), (1, 0, 1));
    assert_eq!(s.undecided_machines.len(), 1);
    let r = job.report(&s);
    assert_eq!(r.json["exact"], false);
    assert_eq!(
        r.json["undecided_machines"][0],
        "1RB1LC_1RC1RB_1RD0LE_1LA1LD_---0LA"
    );
    assert!(r
        .results_lines
        .iter()
        .any(|l| l.starts_with("1RB1LC_1RC1RB_1RD0LE_1LA1LD_---0LA undecided")));
}

/// Every machine of a sample of subtrees: each halting verdict is what the
/// plain reference finds (steps and ones), no machine called nonhalting
/// halts within 20,000 steps (20 times the watched run), and the tree below
/// each halting machine is its children.
#[test]
fn sampled_verdicts_agree_with_plain_simulation() {
    let mut ws = Workspace::with_limits(1000, 30, 4, 100_000, 100_000_000)
        .with_deep_gas(orchard_busy_beaver::DEFAULT_DEEP_GAS);
    let mut plain = Plain::default();
    let mut kids = [[0u8; 10]; MAX_CHILDREN];
    let (mut halting, mut never) = (0u64, 0u64);
    for unit in sample_units(1999) {
        let mut stack = vec![unit.table];
        while let Some(t) = stack.pop() {
            let text = orchard_busy_beaver::to_text(&t, 5, None);
            match ws.decide(&t, 5) {
                Outcome::Halts { steps, ones, at } => {
                    let run = reference::run(&reference::parse(&text), u64::from(steps) + 10);
                    assert_eq!(
                        run.halted,
                        Some((u64::from(steps), u64::from(ones))),
                        "{text}"
                    );
                    halting += 1;
                    let k = children(&t, 5, at as usize, &mut kids);
                    stack.extend(kids[..k].iter().rev());
                }
                Outcome::Never(d) => {
                    assert_eq!(plain.run(&t, 5, 20_000), PlainRun::Running, "{text}: {d:?}");
                    never += 1;
                }
                Outcome::Undecided => {}
            }
        }
    }
    assert!(halting > 1000 && never > 3000, "{halting} {never}");
}

/// The summary of a sample is internally consistent, the same however its
/// units are cut and merged, and it does not list machines one by one.
#[test]
fn sampled_summaries_are_exact_and_small() {
    let job = job(r#"{"states":5}"#);
    let units = sample_units(4999);
    assert!(units.len() >= 3);
    let whole: BbSummary = explore_all(&job, units.clone(), u64::MAX).unwrap();
    assert!(whole.machines() > 1000);
    assert_eq!(whole.nodes, whole.machines());
    assert!(
        whole.leaves.is_empty(),
        "no per-machine listing at 5 states"
    );
    assert_eq!(whole.settled_by.iter().sum::<u64>(), whole.machines());
    assert_eq!(whole.halted_by.iter().sum::<u64>(), whole.halting);
    assert_eq!(whole.steps_histogram.iter().sum::<u64>(), whole.halting);
    assert_eq!(whole.steps_histogram.len(), HISTOGRAM_BUCKETS);
    assert_eq!(whole.undecided_machines.len() as u64, whole.undecided);
    assert_eq!(whole.settled_by[Stage::Undecided as usize], whole.undecided);
    // Every halting verdict of the watched runs re-checked, the sampled
    // nonhalting ones too, and none disagreed.
    assert_eq!(
        whole.rechecked_halting,
        whole.halting - whole.halted_by[Stage::Horizon as usize]
    );
    assert!(whole.rechecked_nonhalting > 0);
    assert!(whole.rechecked_nonhalting < whole.nonhalting() / 100);
    assert!(whole.recheck_failures.is_empty());
    let (merged, pieces) = orchard_core::testing::merged_in_any_order(&job, units, 500, 7);
    assert!(pieces > 3, "the budget split the units");
    assert_eq!(merged, whole);
    let r = job.report(&whole);
    assert!(r.results_lines.len() < 100, "{}", r.results_lines.len());
    assert_eq!(r.json["machines"], whole.machines());
    let stages = r.json["stages"].as_array().unwrap();
    let settled: u64 = stages.iter().map(|s| s["settled"].as_u64().unwrap()).sum();
    assert_eq!(settled, whole.machines());
}
