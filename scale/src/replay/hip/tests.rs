//! The hip-solve replay on real boards: the proof-number replay settles
//! every question to the solver's value, warm tables and affinity included.

use super::super::pns::{replay_pn, PnOutcome, PnPolicy, Sharing, Tables};
use super::*;

/// The first player's value of the empty board, by the family's solver
/// on one job, whole.
fn value(params: &SolveParams) -> (i8, i8) {
    let job = HipSolve::new(params.clone(), &Host::default()).unwrap();
    let root = SolveUnit {
        moves: Vec::new(),
        window: Window::FULL,
    };
    let Exploration::Finished(s) = job
        .explore(&root, &LocalFlags::default().context(u64::MAX))
        .unwrap()
    else {
        panic!("a search without a budget finishes");
    };
    let key = job.tree_node(&[]).unwrap().key;
    let k = s.known.get(&key).unwrap();
    (k.lo, k.hi)
}

fn replay(params: &SolveParams, target: i8, budget: u64, tables: Tables, n: usize) -> PnOutcome {
    replay_with_affinity(params, target, budget, tables, n, 0)
}

fn replay_with_affinity(
    params: &SolveParams,
    target: i8,
    budget: u64,
    tables: Tables,
    n: usize,
    affinity: u64,
) -> PnOutcome {
    let mut game = HipPnGame::from_params(params.clone(), Some(target), budget, None).unwrap();
    let policy = PnPolicy {
        budget,
        virtual_pn: 1,
        depth: params.root_depth(),
        mobility: true,
        tables,
        affinity,
    };
    replay_pn(&mut game, policy, n).unwrap()
}

fn boards() -> Vec<SolveParams> {
    vec![
        SolveParams::new(3, 4, false),
        SolveParams::new(3, 3, true),
        SolveParams::new(2, 5, false),
    ]
}

/// Whatever the tables keep and wherever the affinity steers the
/// workers, every replay settles the question to the game's value:
/// both questions, fine and coarse budgets, one and several workers.
#[test]
fn a_warm_table_never_changes_a_settled_value() {
    for params in boards() {
        let (lo, hi) = value(&params);
        assert_eq!(lo, hi, "{params:?} is solved exactly");
        for target in [0, 1] {
            for budget in [256, 4096] {
                for tables in [
                    Tables::Cold,
                    Tables::Worker,
                    Tables::Job,
                    Tables::Lemmas,
                    Tables::Stream { delay: 0 },
                    Tables::Stream { delay: 1000 },
                ] {
                    for n in [1, 2, 5] {
                        for affinity in [0, 300] {
                            let out =
                                replay_with_affinity(&params, target, budget, tables, n, affinity);
                            assert_eq!(
                                out.root,
                                Some(lo >= target),
                                "{params:?} target {target} budget {budget} {tables:?} \
                                 N {n} affinity {affinity}"
                            );
                        }
                    }
                }
            }
        }
    }
}

/// With one worker its table is the job's: the three warm models are
/// the same run; and a table kept across leaves saves nodes against cold
/// leaves.
#[test]
fn one_worker_is_the_same_run_with_its_own_table_or_the_jobs() {
    let mut expanded = 0;
    for params in boards() {
        for budget in [32, 256] {
            let worker = replay(&params, 0, budget, Tables::Worker, 1);
            let job = replay(&params, 0, budget, Tables::Job, 1);
            assert_eq!(worker, job, "{params:?} budget {budget}");
            // Alone, a worker learns no lemmas but its own.
            let lemmas = replay(&params, 0, budget, Tables::Lemmas, 1);
            assert_eq!(worker, lemmas, "{params:?} budget {budget}");
            let stream = replay(&params, 0, budget, Tables::Stream { delay: 0 }, 1);
            assert_eq!(worker, stream, "{params:?} budget {budget}");
            let cold = replay(&params, 0, budget, Tables::Cold, 1);
            // Where leaves are expanded, their children find what the
            // expanded search stored.
            let (w, c) = (worker.outcome.nodes, cold.outcome.nodes);
            assert!(w <= c, "{params:?} budget {budget}: warm {w} cold {c}");
            if cold.expansions > 0 {
                assert!(w < c, "{params:?} budget {budget}: warm {w} cold {c}");
                expanded += 1;
            }
        }
    }
    assert!(expanded > 0, "no replay expanded a leaf");
}

/// The warm models are deterministic: the same replay twice is the same.
#[test]
fn a_warm_replay_is_deterministic() {
    let params = SolveParams::new(3, 4, false);
    for tables in [
        Tables::Worker,
        Tables::Job,
        Tables::Lemmas,
        Tables::Stream { delay: 300 },
    ] {
        let a = replay(&params, 0, 256, tables, 3);
        let b = replay(&params, 0, 256, tables, 3);
        assert_eq!(a, b, "{tables:?}");
        assert!(a.outcome.units_done > 3, "{tables:?}: {a:?}");
    }
}

/// Lemmas streamed with a delay longer than the whole replay arrive too
/// late for any search: the run is the worker tables' to the node, at
/// every worker count (not `lemmas`', which publishes at a search's end,
/// whatever the search's length).
#[test]
fn lemmas_that_never_arrive_leave_the_worker_tables_run() {
    for params in boards() {
        for n in [1, 2, 5] {
            let worker = replay(&params, 0, 256, Tables::Worker, n);
            let never = replay(&params, 0, 256, Tables::Stream { delay: u64::MAX }, n);
            assert_eq!(worker, never, "{params:?} N {n}");
        }
    }
}

/// On a real board: table 0 searches a position (the root's first child
/// on 3x4) to its end; table 1 searches it again at time `t`, with lemmas
/// streamed at a delay of 1,000 nodes. It learns exactly the lemmas
/// stored by `t - 1000` (none before the first one's stamp plus the
/// delay: the cold cost), all of them once the whole search plus the
/// delay is past (fewer nodes); and a search cancelled at `c`
/// publishes what a search cut there would have, nothing stored later.
#[test]
fn a_streamed_lemma_is_learnt_only_after_its_delay() {
    let params = SolveParams::new(3, 4, false);
    let delay = 1000;
    let first_search = |cancel: Option<u64>| {
        let mut g = HipPnGame::from_params(params.clone(), Some(0), u64::MAX, None).unwrap();
        g.reset_tables(2, Sharing::Streamed { delay }).unwrap();
        let p = g.position(0).unwrap().children[0];
        let (cold, _) = g.search_on(0, p, u64::MAX, 0).unwrap().unwrap();
        if let Some(c) = cancel {
            g.cancelled(0, 0, c).unwrap();
        }
        (g, p, cold)
    };
    // The second search's nodes and how many lemmas it learnt.
    let again = |t: u64, cancel: Option<u64>| {
        let (mut g, p, _) = first_search(cancel);
        let (nodes, _) = g.search_on(1, p, u64::MAX, t).unwrap().unwrap();
        (nodes, g.stream.as_ref().unwrap().1[0].learnt[1])
    };
    let (g, _, cold) = first_search(None);
    let stamps: Vec<u64> = g.stream.as_ref().unwrap().1[0]
        .lemmas
        .iter()
        .map(|l| l.at_node)
        .collect();
    assert!(stamps.len() >= 4, "{stamps:?}");
    assert!(stamps.windows(2).all(|w| w[0] <= w[1]), "{stamps:?}");
    assert!(
        stamps[0] > 0 && *stamps.last().unwrap() < cold,
        "{stamps:?} of {cold}"
    );
    // The same position on an empty table: the same search.
    assert_eq!(again(0, None), (cold, 0));
    assert_eq!(again(stamps[0] + delay - 1, None), (cold, 0));
    let at_first = stamps.iter().filter(|&&s| s == stamps[0]).count();
    assert_eq!(again(stamps[0] + delay, None).1, at_first);
    let (warm, all) = again(cold + delay, None);
    assert_eq!(all, stamps.len());
    assert!(warm < cold, "{warm} nodes warm, {cold} cold");
    let mid = stamps[stamps.len() / 2];
    let upto = stamps.iter().filter(|&&s| s <= mid).count();
    assert!(upto < stamps.len());
    let cut = again(u64::MAX / 2, Some(mid));
    assert_eq!(cut, again(mid + delay, None));
    assert_eq!(cut.1, upto);
}
