//! The proof checker against the reference minimax, against solved small
//! boards, against damaged summaries and against a lying oracle.

use orchard_core::{Host, SearchFamily};

use super::plain::Plain;
use super::rules::{Cells, Outcome, Rules};
use super::*;
use crate::reference;
use crate::solve::{explore_pruned, value_of, HipSolve, Key};

fn job(rows: u32, cols: u32, double: bool) -> HipSolve {
    HipSolve::new(SolveParams::new(rows, cols, double), &Host::default()).expect("params")
}

/// The merged summary of a job solved in one process, units split at
/// `budget` nodes (so the record has expanded positions and leaves).
fn solved(job: &HipSolve, budget: u64) -> SolveSummary {
    explore_pruned(job, job.root_units(), budget, false)
        .expect("solve")
        .summary
}

/// The position reached by `moves` under the reference rules.
fn replay(rules: &Rules, moves: &[u8]) -> Cells {
    let mut cells = vec![0u8; rules.cells()];
    for &m in moves {
        match rules.play(&cells, usize::from(m)) {
            Outcome::Open(next) => cells = next,
            Outcome::Over(_) => panic!("{moves:?} ends the game"),
        }
    }
    cells
}

const WHOLE: Options = Options {
    leaf_empty: 6,
    sample: None,
    lines: None,
    memo_entries: MEMO_ENTRIES,
};

/// A small deterministic generator for the random positions.
fn lcg(state: &mut u64) -> u64 {
    *state = state
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    *state >> 33
}

#[test]
fn plain_search_agrees_with_reference_minimax() {
    let mut seed = 7;
    for (rows, cols, min_stones) in [(2, 3, 0), (3, 3, 0), (2, 4, 0), (3, 4, 3), (4, 4, 8)] {
        for double in [false, true] {
            let rules = Rules::new(rows, cols, double);
            let mut plain = Plain::new(&rules);
            let mut checked = 0;
            for _ in 0..40 {
                // A random game that has not ended, stopped at a random
                // length of at least `min_stones`.
                let mut cells = vec![0u8; rows * cols];
                let stop = min_stones + (lcg(&mut seed) as usize) % (rows * cols - min_stones);
                for _ in 0..stop {
                    let open: Vec<Cells> = rules
                        .children(&cells)
                        .into_iter()
                        .filter_map(|(_, o)| match o {
                            Outcome::Open(next) => Some(next),
                            Outcome::Over(_) => None,
                        })
                        .collect();
                    if open.is_empty() {
                        break;
                    }
                    cells = open[lcg(&mut seed) as usize % open.len()].clone();
                }
                if rules.empty_count(&cells) + min_stones > rows * cols {
                    continue;
                }
                let expected = reference::minimax(rows, cols, double, &mut cells.clone());
                assert_eq!(
                    plain.value(&mut cells.clone()),
                    expected,
                    "{rows}x{cols} double={double} {cells:?}"
                );
                checked += 1;
            }
            assert!(checked > 10, "{rows}x{cols}: {checked} positions checked");
        }
    }
}

#[test]
fn solved_small_boards_are_proven_whole() {
    for (rows, cols, double, budget) in [
        (3, 3, false, 50),
        (3, 4, false, 200),
        (3, 4, true, 200),
        (4, 4, false, 2000),
        (4, 4, true, 2000),
        (2, 7, true, 300),
    ] {
        let j = job(rows, cols, double);
        let summary = solved(&j, budget);
        let (lo, hi) = value_of(j.params(), &summary, &[]).expect("root");
        assert_eq!(lo, hi, "{rows}x{cols} double={double}: solved");
        let mut oracle = SolverOracle::new(&j);
        let report = prove(j.params(), &summary, &WHOLE, &mut oracle)
            .unwrap_or_else(|e| panic!("{rows}x{cols} double={double}: {e}"));
        assert_eq!(report.value, lo);
        assert!(report.complete());
        assert_eq!(report.extended_leaves, report.recorded_leaves);
        // The root's value by the plain search alone agrees.
        let r = Rules::new(rows as usize, cols as usize, double);
        let mut root = vec![0u8; r.cells()];
        assert_eq!(Plain::new(&r).value(&mut root), lo, "{rows}x{cols}");
    }
}

/// Every record flipped, widened or removed in turn: the proof never
/// certifies a wrong value, whenever the damaged summary's own evaluation
/// claims a wrong root value the proof fails with an error, and some
/// damage is caught on every board.
#[test]
fn damaged_summaries_are_caught() {
    for (rows, cols, double, budget) in [(3, 3, false, 20), (3, 4, true, 100), (2, 7, true, 300)] {
        let j = job(rows, cols, double);
        let summary = solved(&j, budget);
        let (truth, _) = value_of(j.params(), &summary, &[]).expect("root");
        let keys: Vec<Key> = summary.known.keys().copied().collect();
        let (mut wrong_claims, mut errors) = (0, 0);
        for key in keys {
            let k = &summary.known[&key];
            let mut damages = vec![("removed", None)];
            if k.lo == k.hi {
                let flipped = if k.lo == 0 { 1 } else { -k.lo };
                damages.push(("flipped", Some((flipped, flipped))));
            }
            if k.lo > -1 || k.hi < 1 {
                damages.push(("widened", Some((-1, 1))));
            }
            for (what, interval) in damages {
                let mut damaged = summary.clone();
                match interval {
                    None => {
                        damaged.known.remove(&key);
                    }
                    Some((lo, hi)) => {
                        let rec = damaged.known.get_mut(&key).expect("present");
                        (rec.lo, rec.hi) = (lo, hi);
                    }
                }
                let claimed = value_of(j.params(), &damaged, &[]).expect("root");
                let claims_wrong = claimed.0 == claimed.1 && claimed.0 != truth;
                let result = prove(j.params(), &damaged, &WHOLE, &mut SolverOracle::new(&j));
                match &result {
                    Ok(report) => {
                        assert_eq!(report.value, truth, "{what} {key:?}: a wrong value proven");
                        assert!(!claims_wrong, "{what} {key:?}: a wrong claim certified");
                    }
                    Err(_) => errors += 1,
                }
                wrong_claims += usize::from(claims_wrong);
            }
        }
        assert!(errors > 0, "{rows}x{cols}: some damage is caught");
        assert!(errors >= wrong_claims, "{rows}x{cols}");
    }
}

/// Every root unit's record replaced by the same wrong exact value (its
/// subtree cut off): the summary then claims that value for the root, and
/// the proof refutes it at a leaf (or finds the record contradicts the
/// rules' own pairing cap).
#[test]
fn a_wrong_value_of_the_root_units_is_refuted() {
    for (rows, cols, double, budget) in [
        (3, 3, false, u64::MAX),
        (3, 4, true, 100),
        (2, 7, true, 300),
    ] {
        let j = job(rows, cols, double);
        let depth = j.params().root_depth();
        let summary = solved(&j, budget);
        let (truth, _) = value_of(j.params(), &summary, &[]).expect("root");
        for wrong in [-1, 0, 1].into_iter().filter(|&w| w != truth) {
            let mut damaged = summary.clone();
            damaged
                .known
                .retain(|&(a, b), _| (a | b).count_ones() <= depth);
            for (&(a, b), k) in damaged.known.iter_mut() {
                if (a | b).count_ones() == depth {
                    (k.lo, k.hi, k.expanded) = (wrong, wrong, false);
                }
            }
            let claimed = value_of(j.params(), &damaged, &[]).expect("root");
            assert_eq!(claimed, (wrong, wrong), "{rows}x{cols} double={double}");
            let result = prove(j.params(), &damaged, &WHOLE, &mut SolverOracle::new(&j));
            assert!(
                matches!(result, Err(ProofError::LeafRefuted { .. })),
                "{rows}x{cols} double={double}, {wrong} claimed: {result:?}"
            );
            // Probed lines alone, no leaf extended, find the disagreement.
            let lines = Options {
                leaf_empty: 4,
                sample: Some(Sample { leaves: 0, seed: 3 }),
                lines: Some(Lines { count: 64, seed: 3 }),
                memo_entries: MEMO_ENTRIES,
            };
            let probed = prove(j.params(), &damaged, &lines, &mut SolverOracle::new(&j));
            assert!(
                matches!(
                    probed,
                    Err(ProofError::LineRefuted { .. }
                        | ProofError::NoKeepingMove { .. }
                        | ProofError::GameRefutes { .. })
                ),
                "{rows}x{cols} double={double}, {wrong} claimed, lines: {probed:?}"
            );
        }
    }
}

/// A removed child of an expanded position, where the position has no
/// exact record of its own to fall back on, is named in the error.
#[test]
fn a_removed_child_is_named() {
    let j = job(3, 4, false);
    let summary = solved(&j, 100);
    let mut caught = 0;
    for (key, k) in &summary.known {
        if k.expanded {
            continue;
        }
        let mut damaged = summary.clone();
        damaged.known.remove(key);
        match prove(j.params(), &damaged, &WHOLE, &mut NoOracle) {
            Err(ProofError::Missing { at, .. }) => {
                assert!(!at.is_empty());
                caught += 1;
            }
            Err(ProofError::RootOpen { .. }) | Err(ProofError::Unsupported { .. }) => caught += 1,
            Err(e) => panic!("unexpected error {e}"),
            Ok(r) => assert_eq!(r.value, value_of(j.params(), &summary, &[]).unwrap().0),
        }
    }
    assert!(caught > 0);
}

/// Proposes, where it can, a child whose true value breaks the bound.
struct Liar {
    rules: Rules,
    told: u64,
}

impl Oracle for Liar {
    fn propose(&mut self, moves: &[u8], candidates: &[u8], bound: Bound) -> Option<u8> {
        let cells = replay(&self.rules, moves);
        let rules = Rules::new(self.rules.rows, self.rules.cols, self.rules.double);
        let mut plain = Plain::new(&rules);
        let lie = candidates.iter().copied().find(|&c| {
            let mut next = cells.clone();
            next[usize::from(c)] = self.rules.mover(&cells);
            !plain.holds(&mut next, bound)
        });
        self.told += u64::from(lie.is_some());
        lie.or(candidates.first().copied())
    }
}

#[test]
fn a_lying_oracle_costs_time_not_the_verdict() {
    for (rows, cols, double, budget) in [(3, 4, false, 100), (3, 4, true, 100), (2, 7, true, 300)] {
        let j = job(rows, cols, double);
        let summary = solved(&j, budget);
        let options = Options {
            leaf_empty: 4,
            sample: None,
            lines: None,
            memo_entries: MEMO_ENTRIES,
        };
        let honest = prove(j.params(), &summary, &options, &mut SolverOracle::new(&j)).unwrap();
        let mut liar = Liar {
            rules: Rules::new(rows as usize, cols as usize, double),
            told: 0,
        };
        let lied = prove(j.params(), &summary, &options, &mut liar).unwrap();
        assert_eq!(lied.value, honest.value);
        assert!(liar.told > 0, "{rows}x{cols}: the liar had a chance to lie");
        assert!(lied.extension.refuted_proposals > 0);
        assert!(lied.extension.refuted > honest.extension.refuted);
        assert_eq!(honest.extension.refuted_proposals, 0);
    }
}

#[test]
fn a_sample_extends_the_leaves_it_draws_and_says_so() {
    let j = job(4, 4, true);
    let summary = solved(&j, 1000);
    let whole = prove(j.params(), &summary, &WHOLE, &mut SolverOracle::new(&j)).unwrap();
    assert!(whole.recorded_leaves > 3);
    let sample = Sample {
        leaves: 3,
        seed: 11,
    };
    let options = Options {
        leaf_empty: 6,
        sample: Some(sample),
        lines: None,
        memo_entries: MEMO_ENTRIES,
    };
    let sampled = prove(j.params(), &summary, &options, &mut SolverOracle::new(&j)).unwrap();
    assert_eq!(sampled.extended_leaves, 3);
    assert!(!sampled.complete());
    assert!(sampled.to_string().contains("A SAMPLE"));
    assert_eq!(sample_indices(100, sample), sample_indices(100, sample));
    assert_ne!(
        sample_indices(100, sample),
        sample_indices(
            100,
            Sample {
                leaves: 3,
                seed: 12
            }
        )
    );
    let drawn = sample_indices(
        10,
        Sample {
            leaves: 20,
            seed: 1,
        },
    );
    assert_eq!(drawn, (0..10).collect::<Vec<_>>());
}

#[test]
fn pairing_is_gardners_argument() {
    // 4x4 standard Hip: the empty board is paired (both mirrors pair the
    // cells); a first stone leaves a reply that pairs again.
    let rules = Rules::new(4, 4, false);
    let empty = vec![0u8; 16];
    assert!(rules.second_player_pairs(&empty));
    let mut one = empty.clone();
    one[5] = 1;
    assert!(!rules.second_player_pairs(&one));
    let reply = rules.pairing_reply(&one).expect("a pairing reply");
    let mut two = one.clone();
    two[usize::from(reply)] = 2;
    assert!(rules.second_player_pairs(&two));
    // Every paired position reached from the empty 3x4 board in four
    // stones is worth at most a draw by plain minimax.
    let rules = Rules::new(3, 4, false);
    let mut plain = Plain::new(&rules);
    let mut paired = 0;
    for a in 0..12 {
        for b in 0..12 {
            let mut cells = vec![0u8; 12];
            if a == b {
                continue;
            }
            cells[a] = 1;
            cells[b] = 2;
            if rules.second_player_pairs(&cells) {
                paired += 1;
                assert!(plain.value(&mut cells) <= 0);
            }
        }
    }
    assert!(paired > 0);
    // Double Hip has no such argument.
    assert!(!Rules::new(4, 4, true).second_player_pairs(&empty));
}

#[test]
fn probed_lines_of_a_sound_summary_agree() {
    for (rows, cols, double, budget) in [(3, 4, false, 100), (4, 4, true, 1000)] {
        let j = job(rows, cols, double);
        let summary = solved(&j, budget);
        let options = Options {
            leaf_empty: 5,
            sample: Some(Sample { leaves: 0, seed: 5 }),
            lines: Some(Lines { count: 40, seed: 5 }),
            memo_entries: MEMO_ENTRIES,
        };
        let report = prove(j.params(), &summary, &options, &mut SolverOracle::new(&j))
            .unwrap_or_else(|e| panic!("{rows}x{cols}: {e}"));
        let lines = report.lines.as_ref().expect("lines probed");
        assert_eq!(lines.lines, 40);
        let ends: u64 = lines.plain_ends_by_empty.values().sum();
        assert_eq!(ends + lines.rules_ends + lines.pairing_ends, 40);
        assert!(report.to_string().contains("a sample, not a proof"));
    }
}

/// A canonical form that sends every position to the key of one recorded
/// position is caught at once: the key decodes to another position.
#[test]
fn a_wrong_canonical_key_is_caught() {
    let j = job(3, 4, true);
    let summary = solved(&j, 100);
    let rules = Rules::new(3, 4, true);
    let depth = j.params().root_depth() as usize;
    let key = *summary
        .known
        .keys()
        .find(|k| k.0 | k.1 != 0)
        .expect("a recorded position with stones");
    let wrong = Box::new(move |_: &crate::board::Board, _, _| key);
    let mut record = super::recorded::Recorded::with_key(&rules, &summary, depth, wrong);
    let mut moves = Vec::new();
    let found = record.claim(&[0; 12], &mut moves);
    assert!(
        matches!(&found, Err(ProofError::KeyMismatch { key: k, .. }) if *k == key),
        "{found:?}"
    );
    // The solver's own key passes.
    let mut record = super::recorded::Recorded::new(&rules, &summary, depth);
    assert!(record.claim(&[0; 12], &mut moves).is_ok());
}

/// A memo that forgets almost at once (a cap of 2 pairs) proves the same
/// value as one that keeps everything, forgetting on the way.
#[test]
fn a_tiny_memo_gives_the_same_verdict() {
    for (rows, cols, double, budget) in [(3, 4, false, 100), (3, 4, true, 100), (2, 7, true, 300)] {
        let j = job(rows, cols, double);
        let summary = solved(&j, budget);
        let roomy = prove(j.params(), &summary, &WHOLE, &mut SolverOracle::new(&j)).unwrap();
        assert_eq!(roomy.extension.forgotten, 0);
        let tiny = Options {
            memo_entries: 2,
            ..WHOLE
        };
        let forgetful = prove(j.params(), &summary, &tiny, &mut SolverOracle::new(&j))
            .unwrap_or_else(|e| panic!("{rows}x{cols} double={double}: {e}"));
        assert_eq!(forgetful.value, roomy.value);
        assert!(forgetful.complete());
        assert!(forgetful.memo_entries <= 2);
        assert!(
            forgetful.extension.forgotten > 0,
            "{rows}x{cols}: the memo forgot"
        );
    }
    // A wrong root claim is refuted all the same (the boards of
    // `a_wrong_value_of_the_root_units_is_refuted`).
    for (rows, cols, double, budget) in [
        (3, 3, false, u64::MAX),
        (3, 4, true, 100),
        (2, 7, true, 300),
    ] {
        let j = job(rows, cols, double);
        let depth = j.params().root_depth();
        let summary = solved(&j, budget);
        let (truth, _) = value_of(j.params(), &summary, &[]).expect("root");
        let tiny = Options {
            memo_entries: 2,
            ..WHOLE
        };
        for wrong in [-1, 0, 1].into_iter().filter(|&w| w != truth) {
            let mut damaged = summary.clone();
            damaged
                .known
                .retain(|&(a, b), _| (a | b).count_ones() <= depth);
            for (&(a, b), k) in damaged.known.iter_mut() {
                if (a | b).count_ones() == depth {
                    (k.lo, k.hi, k.expanded) = (wrong, wrong, false);
                }
            }
            let result = prove(j.params(), &damaged, &tiny, &mut SolverOracle::new(&j));
            assert!(
                matches!(result, Err(ProofError::LeafRefuted { .. })),
                "{rows}x{cols} double={double}, {wrong} claimed: {result:?}"
            );
        }
    }
}

/// The fast solver's own path (the position's search, the table's
/// principal move, the candidates in order) with a table of the other
/// variant of the game, solved whole: its values and moves are wrong for
/// this game, so its proposals are often wrong, and the verdict is the
/// same as with the job's own table.
#[test]
fn a_solver_oracle_with_a_wrong_table_costs_time_not_the_verdict() {
    let mut lies = 0;
    for (rows, cols, double, budget) in [(3, 4, false, 100), (3, 4, true, 100), (4, 4, true, 1000)]
    {
        let j = job(rows, cols, double);
        let summary = solved(&j, budget);
        let mut oracle = SolverOracle::new(&j);
        let honest = prove(j.params(), &summary, &WHOLE, &mut oracle).unwrap();
        assert_eq!(honest.extension.refuted_proposals, 0);
        assert!(oracle.questions().1 > 0, "the principal move answered");
        let board = crate::board::Board::new(rows as usize, cols as usize);
        let other = crate::table::Table::new(&board, !double, Some(16));
        crate::search::solve_empty_board(&board, &other, !double);
        let mut wrong = SolverOracle::with_table(&j, &other);
        let lied = prove(j.params(), &summary, &WHOLE, &mut wrong)
            .unwrap_or_else(|e| panic!("{rows}x{cols} double={double}: {e}"));
        assert_eq!(lied.value, honest.value);
        assert!(lied.complete());
        lies += lied.extension.refuted_proposals;
    }
    assert!(lies > 0, "the wrong table misled the oracle somewhere");
}

/// The watcher sees the extension move: leaves done never past the
/// leaves, counts that only grow, none past the report's.
#[test]
fn the_watcher_sees_the_extension_move() {
    let j = job(4, 4, true);
    let summary = solved(&j, 1000);
    let options = Options {
        leaf_empty: 4,
        ..WHOLE
    };
    let mut seen: Vec<Progress> = Vec::new();
    let report = prove_watched(
        j.params(),
        &summary,
        &options,
        &mut SolverOracle::new(&j),
        &mut |p| seen.push(*p),
    )
    .unwrap();
    let decided = report.extension.proven + report.extension.refuted;
    assert_eq!(
        seen.len() as u64,
        decided / 4096,
        "one look every 4,096 pairs"
    );
    assert!(!seen.is_empty(), "{decided} pairs decided");
    for w in seen.windows(2) {
        assert!(w[0].proven <= w[1].proven && w[0].plain_nodes <= w[1].plain_nodes);
        assert!(w[0].leaves_done <= w[1].leaves_done);
    }
    for p in &seen {
        assert!(p.leaves_done < p.leaves && p.leaves == report.recorded_leaves);
        assert!(p.proven <= report.extension.proven);
        assert!(p.oracle.searches <= report.oracle.searches);
    }
}
