//! The hip-solve replay on real boards: the proof-number replay settles
//! every question to the solver's value, warm tables and affinity included.

use super::super::pns::{replay_pn, PnOutcome, PnPolicy, Tables};
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
                for tables in [Tables::Cold, Tables::Worker, Tables::Job, Tables::Lemmas] {
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
    for tables in [Tables::Worker, Tables::Job, Tables::Lemmas] {
        let a = replay(&params, 0, 256, tables, 3);
        let b = replay(&params, 0, 256, tables, 3);
        assert_eq!(a, b, "{tables:?}");
        assert!(a.outcome.units_done > 3, "{tables:?}: {a:?}");
    }
}
