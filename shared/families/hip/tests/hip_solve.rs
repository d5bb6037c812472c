//! A `hip-solve` job: across budgets (splits, cold and narrowed), with moot
//! units and young brothers waiting, merged in any order, through the
//! registry, with its table and snapshot, replicas and a damaged principal
//! variation. The values themselves are checked in `hip_solve_values.rs`.

mod common;

use clap::{Args, FromArgMatches};
use common::*;
use orchard_core::{
    explore_all, Exploration, Host, LemmaExchange, LocalFlags, MootUnits, SearchFamily,
};
use orchard_hip::solve::{explore_pruned, value_of};
use orchard_hip::{reference, HipDraws, HipSolve, SolveParams, SolveSummary, SolveUnit};

#[test]
fn splitting_does_not_change_the_answer() {
    for (r, c, budgets) in [
        (2, 3, &[1u64, 7, 1000][..]),
        (3, 3, &[1, 7, 1000]),
        (2, 4, &[1, 7, 1000]),
        (3, 4, &[7, 1000]),
        (4, 4, &[1000]),
    ] {
        for double in [false, true] {
            let p = params(r, c, double);
            let j = job(&p);
            let whole = explore_all(&j, j.root_units(), u64::MAX).unwrap();
            for &budget in budgets {
                let split = explore_all(&j, j.root_units(), budget).unwrap();
                assert_eq!(
                    winner(&p, &split),
                    winner(&p, &whole),
                    "{r}x{c} double={double} budget {budget}"
                );
                let pruned = explore_pruned(&j, j.root_units(), budget, false)
                    .unwrap()
                    .summary;
                assert_eq!(
                    winner(&p, &pruned),
                    winner(&p, &whole),
                    "{r}x{c} double={double} budget {budget}, pruned"
                );
                // Same opening values too.
                assert_eq!(
                    j.report(&split).json["openings"],
                    j.report(&whole).json["openings"]
                );
            }
        }
    }
}

/// Each opening's interval in a report holds the opening's value by one
/// search (a split run may know more or less about openings that do not
/// matter).
fn openings_hold_their_values(j: &HipSolve, cols: u32, report: &serde_json::Value, what: &str) {
    for o in report["openings"].as_array().unwrap() {
        let name = o["cell"].as_str().unwrap().as_bytes();
        let cell = (name[1] - b'1') as usize * cols as usize + (name[0] - b'a') as usize;
        let v = j.solve_position(&[cell as u8]).unwrap().value;
        let (lo, hi) = (
            o["value"][0].as_i64().unwrap(),
            o["value"][1].as_i64().unwrap(),
        );
        assert!(
            lo <= v as i64 && v as i64 <= hi,
            "{what}: opening {o}, value {v}"
        );
    }
}

/// Splits with a cold table for every unit, as when units move between
/// threads and machines: an aborted search hands back the positions it did
/// not settle below the partly searched path (and records what it did), and
/// the answer and the principal variation's validity do not change, and
/// every opening's interval holds its true value. Also counts the splits, so that the test cannot pass by never
/// splitting.
#[test]
fn cold_splits_do_not_change_the_answer() {
    let mut splits = 0;
    for (r, c) in [(3, 3), (3, 4), (4, 4), (3, 5), (4, 5)] {
        for double in [false, true] {
            let p = params(r, c, double);
            // A fresh job: its table starts empty.
            let j = job(&p);
            let whole = explore_all(&j, j.root_units(), u64::MAX).unwrap();
            // Budgets relative to the whole search: with a cold table per
            // unit, tiny units lose the transpositions and the work explodes.
            // (Only the table's part of a search can stop, so on these small
            // boards, most of whose nodes are the last moves' plain search,
            // the smallest budget is what makes the splits.)
            let budgets = [whole.nodes / 3, whole.nodes / 30, whole.nodes / 100];
            for budget in budgets {
                // In order, skipping moot units, the rest of a split first
                // (as the coordinator leases them), each unit cold.
                let run = explore_pruned(&j, j.root_units(), budget, true).unwrap();
                splits += run.splits;
                let total = run.summary;
                let (got, want) = (j.report(&total), j.report(&whole));
                let what = format!("{r}x{c} double={double} budget {budget}");
                assert_eq!(got.json["winner"], want.json["winner"], "{what}");
                openings_hold_their_values(&j, c, &got.json, &what);
                check_report(&p, &got.json);
            }
        }
    }
    assert!(splits > 100, "only {splits} splits");
}

/// Units leased in any order, each narrowed to the window the root still
/// needs by a judge of what was merged a few reports before (the
/// coordinator's judge may be that stale), each searched cold with a small
/// budget so that units split and their rests are narrowed in turn: the
/// root ends settled at its true value (one search of the empty board, and
/// plain minimax where it can), no unit is left, and every opening's
/// interval holds the opening's value. Counts the narrowed units, so that
/// the test cannot pass by never narrowing. The three-row boards are draws,
/// where windows matter most.
#[test]
fn narrowed_units_in_any_order_give_the_exact_value() {
    let mut narrowed = 0;
    let mut rng = Lcg(2026);
    // Larger boards (4x4, 3x5) pass too but take minutes: a judge a unit
    // is a pass over the whole record.
    let boards: Vec<(u32, u32)> = match std::env::var("HIP_NARROW_BOARDS") {
        Ok(v) => v
            .split(',')
            .map(|b| {
                let (r, c) = b.split_once('x').expect("RxC");
                (r.parse().unwrap(), c.parse().unwrap())
            })
            .collect(),
        Err(_) => vec![(2, 5), (3, 3), (3, 4), (2, 6)],
    };
    for (r, c) in boards {
        for double in [false, true] {
            let p = params(r, c, double);
            let j = job(&p);
            let want = value_checked(&j, r, c, double);
            let whole = j.solve_position(&[]).unwrap().nodes;
            for split in [3, 20] {
                let budget = (whole / split).max(100);
                let what = format!("{r}x{c} double={double} budget {budget}");
                let mut pending = j.root_units();
                let mut merged = SolveSummary::default();
                let mut stale = merged.clone();
                let flags = LocalFlags::default();
                let ctx = flags.context(budget);
                let mut units = 0;
                while !pending.is_empty() {
                    let unit = pending.swap_remove(rng.next(pending.len()));
                    if j.is_moot(&merged, &unit) {
                        continue;
                    }
                    if rng.next(3) == 0 {
                        stale = merged.clone();
                    }
                    let unit = match j.judge(&stale).narrow(&unit) {
                        Some(n) => {
                            assert_eq!(n.moves, unit.moves, "{what}");
                            narrowed += 1;
                            n
                        }
                        None => unit,
                    };
                    units += 1;
                    assert!(units < 100_000, "{what}: no end in sight");
                    // A fresh job: a cold table, as on another machine.
                    let cold = job(&p);
                    match cold.explore(&unit, &ctx).unwrap() {
                        Exploration::Finished(s) => j.merge(&mut merged, s).unwrap(),
                        Exploration::Split { explored, rest } => {
                            j.merge(&mut merged, explored).unwrap();
                            pending.extend(rest);
                        }
                    }
                }
                let got = j.report(&merged);
                assert_eq!(got.json["winner"], code(want), "{what}");
                openings_hold_their_values(&j, c, &got.json, &what);
                // The check at a job's end finds nothing missing.
                assert!(j.still_needed(&merged).is_empty(), "{what}");
            }
        }
    }
    assert!(narrowed > 100, "only {narrowed} units narrowed");
}

/// The root's value by one search, checked against plain minimax on the
/// boards small enough for it.
fn value_checked(j: &HipSolve, r: u32, c: u32, double: bool) -> i8 {
    let want = j.solve_position(&[]).unwrap().value;
    if r * c <= 10 {
        let mut cells = vec![0u8; (r * c) as usize];
        let plain = reference::minimax(r as usize, c as usize, double, &mut cells);
        assert_eq!(want, plain, "{r}x{c} double={double}: one search");
    }
    want
}

/// Searches `units` and every unit split off them that is not moot by then
/// (cold, as on other machines, within `budget` nodes each), merging what
/// they settle, as a job's workers and coordinator would.
fn search_all(
    j: &HipSolve,
    p: &SolveParams,
    mut units: Vec<SolveUnit>,
    budget: u64,
    into: &mut SolveSummary,
) {
    let flags = LocalFlags::default();
    let ctx = flags.context(budget);
    let mut searched = 0;
    while let Some(unit) = units.pop() {
        if j.is_moot(into, &unit) {
            continue;
        }
        searched += 1;
        assert!(searched < 100_000, "no end in sight");
        match job(p).explore(&unit, &ctx).unwrap() {
            Exploration::Finished(s) => j.merge(into, s).unwrap(),
            Exploration::Split { explored, rest } => {
                j.merge(into, explored).unwrap();
                units.extend(rest);
            }
        }
    }
}

/// The safety net at the end of a job (`MootUnits::still_needed`): root
/// units searched in windows that ask less than the root needs (as a wrong
/// narrowing would leave them) leave the root open with no unit left; the
/// units the family then asks for, searched in turn, settle it to the
/// value of one search (plain minimax's on the smallest boards), and a
/// settled record asks for nothing more.
#[test]
fn the_units_still_needed_settle_a_root_left_open() {
    use orchard_hip::solve::Window;
    let mut rng = Lcg(7);
    let mut reopened = 0;
    for (r, c) in [(2, 5), (3, 3), (3, 4), (2, 6)] {
        for double in [false, true] {
            let p = params(r, c, double);
            let j = job(&p);
            let want = value_checked(&j, r, c, double);
            // Small enough that the larger boards' units split.
            let budget = 2_000;
            let what = format!("{r}x{c} double={double}");
            let roots = j
                .root_units()
                .into_iter()
                .map(|u| SolveUnit {
                    window: [Window::new(-1, 0), Window::new(0, 1)][rng.next(2)].unwrap(),
                    ..u
                })
                .collect();
            let mut merged = SolveSummary::default();
            search_all(&j, &p, roots, budget, &mut merged);
            let mut rounds = 0;
            loop {
                let needed = j.still_needed(&merged);
                if needed.is_empty() {
                    break;
                }
                assert!(
                    j.report(&merged).json["winner"].is_null(),
                    "{what}: units asked for a settled root"
                );
                rounds += 1;
                assert!(rounds < 20, "{what}: no end in sight");
                search_all(&j, &p, needed, budget, &mut merged);
            }
            reopened += usize::from(rounds > 0);
            let got = j.report(&merged);
            assert_eq!(
                got.json["winner"],
                code(want),
                "{what} after {rounds} rounds"
            );
            openings_hold_their_values(&j, c, &got.json, &what);
        }
    }
    // Four of the eight with this seed (the searches' threads may vary it).
    assert!(reopened >= 2, "only {reopened} boards were left open");
}

/// A unit's window travels as one byte after its moves, and a unit that
/// wants its exact value is stored as units were before windows: a
/// database of an earlier build reads the same. An unknown window byte is
/// an error, not a move.
#[test]
fn unit_windows_are_stored_compatibly() {
    use orchard_core::codec::{decode, encode};
    use orchard_hip::solve::Window;
    #[derive(serde::Serialize)]
    struct Before {
        moves: Vec<u8>,
    }
    let old = encode(&Before {
        moves: vec![0, 5, 7],
    });
    let unit: SolveUnit = decode(&old).unwrap();
    assert_eq!(unit, SolveUnit::new(vec![0, 5, 7]));
    assert_eq!(encode(&unit), old);
    for (lo, hi) in [(-1, 0), (0, 1)] {
        let u = SolveUnit {
            moves: vec![3, 1],
            window: Window::new(lo, hi).unwrap(),
        };
        let blob = encode(&u);
        assert_eq!(blob.len(), old.len(), "one byte more than two moves");
        assert_eq!(decode::<SolveUnit>(&blob).unwrap(), u);
    }
    assert!(Window::new(0, 0).is_none() && Window::new(1, -1).is_none());
    let bad = encode(&Before {
        moves: vec![3, 0x85],
    });
    assert!(decode::<SolveUnit>(&bad).is_err());
    // An empty window asks nothing: such a unit settles by the rules alone
    // (standard 2x4: the second player pairs moves, the first gets at most
    // a draw, so "does he win?" is answered before any search).
    let j = job(&params(2, 4, false));
    let u = SolveUnit {
        moves: vec![0],
        window: Window::new(0, 1).unwrap(),
    };
    let flags = LocalFlags::default();
    match j.explore(&u, &flags.context(1)).unwrap() {
        Exploration::Finished(s) => assert_eq!(s.nodes, 1),
        Exploration::Split { .. } => panic!("a unit that asks nothing split"),
    }
}

/// Young brothers wait: only positions whose mover is expected to win make
/// their younger children wait (the guess is `--expect`, else the job's
/// own: a second player's win while nothing is settled); a unit that waits
/// becomes leasable once the elder sibling it waits for is settled; leasing
/// only units that need not wait (and skipping moot ones) never starves and
/// reaches the right answer.
#[test]
fn young_brothers_wait_for_their_elder_sibling() {
    use orchard_hip::solve::Expect;
    // Boards with their winner, without a guess and with one (3x5 double
    // with a wrong one: it must cost speed only). 4x5 can pair moves (a draw
    // there is the first player's to prove), 3x5 cannot.
    let cases = [
        (4, 5, false, 0, None),
        (4, 5, false, 0, Some(Expect::Draw)),
        (4, 5, true, 1, None),
        (4, 5, true, 1, Some(Expect::First)),
        (3, 5, false, 0, None),
        (3, 5, false, 0, Some(Expect::Draw)),
        (3, 5, true, 1, Some(Expect::Second)),
    ];
    for (r, c, double, want, expect) in cases {
        let mut p = params(r, c, double);
        p.expect = expect;
        let j = job(&p);
        let units = j.root_units();
        let empty = SolveSummary::default();
        let free: Vec<&SolveUnit> = units.iter().filter(|u| !j.must_wait(&empty, u)).collect();
        // With nothing settled the job guesses a second player's win.
        let pattern = match expect {
            None => Expect::Second,
            Some(Expect::Draw) if !double && (r % 2 == 0 || c % 2 == 0) => Expect::First,
            Some(g) => g,
        };
        match pattern {
            // Nobody is expected to win: no unit waits.
            Expect::Draw => assert_eq!(free.len(), units.len(), "{r}x{c}"),
            // The first player to move at the root is expected to win (or
            // lose): the root's children wait for the eldest (or do not).
            g => {
                assert!(free.contains(&&units[0]));
                let first_level_free = units
                    .iter()
                    .filter(|u| u.moves[0] != units[0].moves[0])
                    .any(|u| free.contains(&u));
                assert_eq!(first_level_free, g == Expect::Second, "{r}x{c} {g:?}");
                if units[0].moves.len() > 1 {
                    assert!(free.len() < units.len(), "{r}x{c} {g:?}: nothing waits");
                }
            }
        }
        let flags = LocalFlags::default();
        let ctx = flags.context(u64::MAX);
        let mut total = SolveSummary::default();
        let mut pending = units.clone();
        let mut most_free = 1;
        let mut skipped = 0;
        loop {
            let before = pending.len();
            pending.retain(|u| !j.is_moot(&total, u));
            skipped += before - pending.len();
            if pending.is_empty() {
                break;
            }
            let free: Vec<usize> = (0..pending.len())
                .filter(|&i| !j.must_wait(&total, &pending[i]))
                .collect();
            assert!(
                !free.is_empty(),
                "{r}x{c} double={double}: every unit waits"
            );
            most_free = most_free.max(free.len());
            let unit = pending.remove(free[0]);
            match j.explore(&unit, &ctx).unwrap() {
                Exploration::Finished(s) => j.merge(&mut total, s).unwrap(),
                Exploration::Split { .. } => unreachable!("no budget"),
            }
        }
        let what = format!("{r}x{c} double={double} expect={expect:?}");
        assert_eq!(winner(&p, &total), code(want), "{what}");
        assert!(
            most_free > 1,
            "{what}: never more than one unit to run at once"
        );
        if r * c > 16 {
            assert!(skipped > 0, "{what}: no unit became moot");
        }
    }
}

/// With `--spread-speculation` and nothing settled, a waiting unit counts its
/// elders still open: at the one level where the mover is expected to win
/// (the first move for a first player's win, the reply for a second
/// player's), a unit under the k-th distinct move in search order has
/// speculation k, and the eldest's units none. A rank that ignored the elders (every waiting unit 1), or
/// counted a symmetric duplicate twice, would fail.
#[test]
fn waiting_units_count_their_open_elders() {
    use orchard_hip::solve::Expect;
    for (r, c, double, expect, level) in [
        (4, 5, false, Expect::First, 0),
        (4, 5, false, Expect::Second, 1),
        (5, 5, false, Expect::Second, 1),
        (4, 6, false, Expect::First, 0),
    ] {
        let mut p = params(r, c, double);
        p.expect = Some(expect);
        let in_order = job(&p);
        p.spread_speculation = true;
        let j = job(&p);
        let units = j.root_units();
        assert!(units.iter().all(|u| u.moves.len() == 2), "{r}x{c}");
        let empty = SolveSummary::default();
        let mut most = 0;
        // The distinct moves at `level`, per line above it, in unit order.
        let mut seen: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        for u in &units {
            let above = u.moves[..level].to_vec();
            let mv = u.moves[level];
            let at = match seen.iter_mut().find(|(a, _)| *a == above) {
                Some(entry) => entry,
                None => {
                    seen.push((above, Vec::new()));
                    seen.last_mut().expect("pushed")
                }
            };
            if !at.1.contains(&mv) {
                at.1.push(mv);
            }
            let k = at.1.iter().position(|&m| m == mv).expect("pushed") as u32;
            assert_eq!(
                j.speculation(&empty, u),
                k,
                "{r}x{c} double={double} {expect:?}: {u:?}"
            );
            assert_eq!(j.must_wait(&empty, u), k > 0);
            // Without the flag, waiting units are all alike.
            assert_eq!(in_order.speculation(&empty, u), u32::from(k > 0));
            most = most.max(k);
        }
        assert!(most > 1, "{r}x{c} {expect:?}: no unit has two elders");
    }
}

/// Without `--expect` the job makes its own guess from what is settled: once
/// the first unit in search order (the eldest line's) is settled, its value
/// is the guess, and every unit waits exactly as it would with that guess
/// given as `--expect`. The boards include guesses other than the second
/// player's win that the job starts from, so a judge that ignored what is
/// settled would fail.
#[test]
fn without_expect_the_job_guesses_from_the_eldest_settled_unit() {
    use orchard_hip::solve::Expect;
    let flags = LocalFlags::default();
    let ctx = flags.context(u64::MAX);
    let mut guesses = Vec::new();
    let mut differ = 0;
    for (r, c, double) in [
        (4, 5, false),
        (4, 5, true),
        (3, 5, false),
        (3, 5, true),
        (4, 4, true),
    ] {
        let p = params(r, c, double);
        let j = job(&p);
        let units = j.root_units();
        let mut total = SolveSummary::default();
        match j.explore(&units[0], &ctx).unwrap() {
            Exploration::Finished(s) => j.merge(&mut total, s).unwrap(),
            Exploration::Split { .. } => unreachable!("no budget"),
        }
        let (lo, hi) = value_of(&p, &total, &units[0].moves).unwrap();
        // Where the second player can pair moves (standard Hip, an even
        // side), a unit settles only whether the first player reaches a draw.
        let paired = !double && (r % 2 == 0 || c % 2 == 0);
        assert!(
            lo == hi || (paired && lo == 0),
            "{r}x{c} double={double}: the eldest unit is settled"
        );
        let g = match lo {
            1 => Expect::First,
            0 => Expect::Draw,
            _ => Expect::Second,
        };
        let guessed = job(&SolveParams {
            expect: Some(g),
            ..p.clone()
        });
        let second = job(&SolveParams {
            expect: Some(Expect::Second),
            ..p.clone()
        });
        for u in &units {
            assert_eq!(
                j.must_wait(&total, u),
                guessed.must_wait(&total, u),
                "{r}x{c} double={double}, guess {g:?}: {u:?}"
            );
            differ += usize::from(j.must_wait(&total, u) != second.must_wait(&total, u));
        }
        guesses.push(g);
    }
    assert!(
        guesses.iter().any(|&g| g != Expect::Second) && differ > 0,
        "{guesses:?}: no board tells the guess from the second player's win"
    );
}

/// The coordinator's job learns the winner from the lemmas of the eldest
/// unit's search, before any unit is merged: on Double 4x5 (the first
/// player wins; with nothing settled the job guesses the second) the lemmas
/// of the eldest root unit's search turn every root unit's waiting into
/// `--expect first`'s. Lemmas that decide no position of the eldest line,
/// the same lemmas again, or a job given `--expect` change nothing. Fails
/// if `observe` ignores the lemmas, reads the wrong positions, or the judge
/// ignores what was observed.
#[test]
fn lemmas_of_the_eldest_line_turn_the_guess() {
    use orchard_hip::solve::Expect;
    let p = params(4, 5, true);
    let with = |e: Expect| {
        job(&SolveParams {
            expect: Some(e),
            ..p.clone()
        })
    };
    let (first, second) = (with(Expect::First), with(Expect::Second));
    let coordinator = job(&p);
    let units = coordinator.root_units();
    let empty = SolveSummary::default();
    let waits =
        |j: &HipSolve| -> Vec<bool> { units.iter().map(|u| j.must_wait(&empty, u)).collect() };
    assert_ne!(
        waits(&first),
        waits(&second),
        "the board tells the guesses apart"
    );
    assert_eq!(waits(&coordinator), waits(&second), "nothing observed yet");

    // Lemmas of a unit off the eldest line's first move decide nothing on it.
    let searched = |unit: &SolveUnit| {
        let w = job(&p);
        assert!(w.take(1 << 30).is_empty(), "nothing before the first take");
        explore_all(&w, vec![unit.clone()], u64::MAX).unwrap();
        w.take(1 << 30)
    };
    let eldest_line =
        |u: &SolveUnit| coordinator.tree_node(&[]).unwrap().children[0] == u.moves[..1];
    let off_line = units
        .iter()
        .find(|u| !eldest_line(u))
        .expect("another opening");
    let off = searched(off_line);
    assert!(!off.is_empty(), "the other opening's search offers lemmas");
    assert!(!coordinator.observe(&off), "no position of the eldest line");
    assert_eq!(waits(&coordinator), waits(&second));

    let eldest = searched(&units[0]);
    assert!(
        coordinator.observe(&eldest),
        "the eldest unit's lemmas decide the line"
    );
    assert_eq!(
        waits(&coordinator),
        waits(&first),
        "the guess turned to the first player"
    );
    assert!(!coordinator.observe(&eldest), "nothing new the second time");
    assert!(!second.observe(&eldest), "a job given --expect keeps it");
    assert_eq!(waits(&second), waits(&with(Expect::Second)));
}

/// Summaries merge in any order to the same result.
#[test]
fn merge_is_order_independent() {
    let p = params(3, 4, false);
    let flags = LocalFlags::default();
    let ctx = flags.context(40);
    let mut parts = Vec::new();
    let j = job(&p);
    let mut pending = j.root_units();
    while let Some(u) = pending.pop() {
        match j.explore(&u, &ctx).unwrap() {
            Exploration::Finished(s) => parts.push(s),
            Exploration::Split { explored, rest } => {
                parts.push(explored);
                pending.extend(rest);
            }
        }
    }
    assert!(parts.len() > 5);
    let fold = |it: &mut dyn Iterator<Item = &SolveSummary>| {
        let mut t = SolveSummary::default();
        for s in it {
            j.merge(&mut t, s.clone()).unwrap();
        }
        t
    };
    let a = fold(&mut parts.iter());
    let b = fold(&mut parts.iter().rev());
    let mut halves = fold(&mut parts[..parts.len() / 2].iter());
    j.merge(&mut halves, fold(&mut parts[parts.len() / 2..].iter()))
        .unwrap();
    assert_eq!(a.known, b.known);
    assert_eq!(a.known, halves.known);
    assert_eq!(a.nodes, b.nodes);
    assert_eq!(winner(&p, &a), serde_json::json!(0));
    // Idempotent: merging a summary again changes no value.
    let mut twice = a.clone();
    j.merge(&mut twice, a.clone()).unwrap();
    assert_eq!(twice.known, a.known);
}

#[test]
fn moot_units_are_those_a_sibling_decided() {
    // Double Hip 4x5 is a first-player win; with one stone per root unit,
    // the first unit found winning decides the root and moots the others.
    let p = SolveParams {
        depth: Some(1),
        expect: None,
        ..params(4, 5, true)
    };
    let j = job(&p);
    let units = j.root_units();
    assert_eq!(units.len(), 6, "six first moves up to symmetry");
    let mut merged = SolveSummary::default();
    assert!(units.iter().all(|u| !j.is_moot(&merged, u)));
    let mut decided = false;
    for u in &units {
        if decided {
            assert!(j.is_moot(&merged, u));
            continue;
        }
        assert!(!j.is_moot(&merged, u));
        let s = explore_all(&j, vec![u.clone()], u64::MAX).unwrap();
        j.merge(&mut merged, s).unwrap();
        decided = winner(&p, &merged) == serde_json::json!(1);
    }
    assert!(decided);
    // Standard 3x5 is a draw: a drawn first move does not moot the others
    // (they might win).
    let p = SolveParams {
        depth: Some(1),
        expect: None,
        ..params(3, 5, false)
    };
    let j = job(&p);
    let units = j.root_units();
    let s = explore_all(&j, vec![units[0].clone()], u64::MAX).unwrap();
    assert_eq!(value_of(&p, &s, &units[0].moves).unwrap(), (0, 0));
    assert!(units[1..].iter().all(|u| !j.is_moot(&s, u)));
    // Standard 4x5 is a draw too, but there the second player can pair
    // moves (the mirror across the even side): no opening wins, so the
    // first drawn one decides the root and moots the others.
    let p = SolveParams {
        depth: Some(1),
        expect: None,
        ..params(4, 5, false)
    };
    let j = job(&p);
    let units = j.root_units();
    assert!(units
        .iter()
        .all(|u| !j.is_moot(&SolveSummary::default(), u)));
    let s = explore_all(&j, vec![units[0].clone()], u64::MAX).unwrap();
    assert_eq!(value_of(&p, &s, &units[0].moves).unwrap(), (0, 0));
    assert_eq!(value_of(&p, &s, &[]).unwrap(), (0, 0));
    assert!(units[1..].iter().all(|u| j.is_moot(&s, u)));
    // A unit the merged tree does not reach is never moot.
    assert!(!j.is_moot(&SolveSummary::default(), &SolveUnit::new(vec![0, 1, 2, 3])));
}

/// A position whose interval already answers the window its parent needs
/// it in is moot, and every unit below it, even where no sibling decides
/// the parent. Standard 3x5 is a draw: with the first opening settled as
/// one, another opening is needed only in the window (0, 1) (does it
/// win?), and so are the positions two stones below it; one of those that
/// is known not to win for the first player answers its window, whatever
/// its siblings turn out to be.
#[test]
fn a_position_that_answers_its_window_is_moot() {
    let p = SolveParams {
        depth: Some(3),
        expect: None,
        ..params(3, 5, false)
    };
    let j = job(&p);
    let units = j.root_units();
    let o1 = units[0].moves[0];
    let mut merged = explore_all(&job(&p), vec![SolveUnit::new(vec![o1])], u64::MAX).unwrap();
    assert_eq!(value_of(&p, &merged, &[o1]).unwrap(), (0, 0));
    // A drawn root unit under another opening, with a search big enough to
    // split: once a reply shows it is not a first player's win, it is known
    // to be -1 or 0, not settled.
    let (u, nodes) = units
        .iter()
        .filter(|u| u.moves[0] != o1)
        .find_map(|u| {
            let s = job(&p).solve_position(&u.moves).unwrap();
            (s.value == 0 && s.nodes > 2_000).then_some((u.clone(), s.nodes))
        })
        .expect("such a unit");
    let flags = LocalFlags::default();
    let ctx = flags.context(nodes / 50);
    let Exploration::Split { explored, rest } = job(&p).explore(&u, &ctx).unwrap() else {
        panic!("the unit did not split");
    };
    j.merge(&mut merged, explored).unwrap();
    let mut rest = std::collections::VecDeque::from(rest);
    while value_of(&p, &merged, &u.moves).unwrap().1 > 0 {
        let next = rest.pop_front().expect("the unit's rest settles it");
        if j.is_moot(&merged, &next) {
            continue; // decided below the unit, as a scheduler would skip it
        }
        let s = explore_all(&job(&p), vec![next], u64::MAX).unwrap();
        j.merge(&mut merged, s).unwrap();
    }
    // The unit's position is not settled by a sibling: its parent's other
    // children are unknown, and one of them is still needed.
    let sibling = units
        .iter()
        .find(|s| s.moves[..2] == u.moves[..2] && s.moves != u.moves)
        .expect("a sibling");
    assert_eq!(value_of(&p, &merged, &sibling.moves).unwrap(), (-1, 1));
    assert!(!j.is_moot(&merged, sibling));
    assert!(!rest.is_empty(), "nothing left to be moot");
    assert!(rest.iter().all(|r| j.is_moot(&merged, r)));
    assert!(j.is_moot(&merged, &u));
}

#[test]
fn bad_parameters_and_units_are_rejected() {
    assert_eq!(validate(&params(9, 9, false)).unwrap_err().name, "cols");
    assert_eq!(validate(&params(1, 5, false)).unwrap_err().name, "rows");
    assert_eq!(
        validate(&SolveParams {
            depth: Some(12),
            expect: None,
            ..params(3, 4, false)
        })
        .unwrap_err()
        .name,
        "depth"
    );
    let lemmas = |n| SolveParams {
        lemma_min_nodes: Some(n),
        ..params(3, 4, false)
    };
    assert_eq!(validate(&lemmas(0)).unwrap_err().name, "lemma-min-nodes");
    assert!(validate(&lemmas(1)).is_ok());
    assert!(validate(&params(5, 4, true)).is_ok());
    let p = params(3, 3, false);
    for moves in [vec![9], vec![0, 0], vec![0, 1, 3, 2, 4]] {
        // Off the board, on a stone, and a legal line: the family rejects
        // exactly the move lists the reference finds illegal.
        let bad = explore_all(&job(&p), vec![SolveUnit::new(moves.clone())], 10);
        let mut cells = [0u8; 9];
        let legal = moves.iter().enumerate().all(|(s, &m)| {
            let m = m as usize;
            if m >= 9 || cells[m] != 0 {
                return false;
            }
            let who = reference::mover(s, false);
            cells[m] = who;
            !reference::squares_by_subsets(3, 3)
                .iter()
                .any(|q| q.iter().all(|&c| cells[c] == who))
        });
        assert_eq!(bad.is_err(), !legal, "{moves:?}");
    }
    // A unit whose last move completed a square is not a position in play.
    let p = params(2, 3, false);
    assert!(explore_all(&job(&p), vec![SolveUnit::new(vec![0, 2, 1, 5, 3, 4])], 10).is_err());
}

/// Through the registry and the encoded path, with small budgets so units
/// split, and the aggregate's moot test.
#[test]
fn runs_through_the_registry() {
    let registry = orchard_core::Registry::default()
        .with::<HipDraws>()
        .with::<HipSolve>();
    let fam = registry.by_name("hip-solve").unwrap();
    // The parameters as the binary reads them (the family's `clap::Args`).
    let params_json = |args: &[&str]| {
        let m = SolveParams::augment_args(clap::Command::new("hip-solve"))
            .try_get_matches_from(args)
            .unwrap();
        serde_json::to_string(&SolveParams::from_arg_matches(&m).unwrap()).unwrap()
    };
    let job = fam
        .prepare(
            &params_json(&["hip-solve", "--rows", "4", "--cols", "3", "--double"]),
            &Host::default(),
        )
        .unwrap();
    let flags = LocalFlags::default();
    let ctx = flags.context(50);
    let mut agg = job.new_aggregate();
    let mut pending: std::collections::VecDeque<Vec<u8>> = job.root_units().into();
    let mut splits = 0;
    while let Some(u) = pending.pop_front() {
        if agg.moot_judge().is_some_and(|j| j.is_moot(&u)) {
            continue;
        }
        let e = job.explore(&u, &ctx).unwrap();
        agg.absorb(&e.summary).unwrap();
        splits += usize::from(!e.rest.is_empty());
        for r in e.rest.into_iter().rev() {
            pending.push_front(r);
        }
    }
    assert!(splits > 0);
    let rep = agg.report();
    assert_eq!(
        rep.json["winner"],
        serde_json::json!(0),
        "Double Hip 3x4 is a draw"
    );
    assert_eq!(rep.json["rows"], serde_json::json!(3));
    let e = params_json(&["hip-solve", "--rows", "1", "--cols", "9"]);
    assert!(fam
        .prepare(&e, &Host::default())
        .err()
        .expect("refused")
        .to_string()
        .contains("--rows"));
}

/// The answer so far names the replies settled under an opening that is not
/// decided yet (the progress of a long search), and nothing when none is.
#[test]
fn the_answer_so_far_lists_settled_replies() {
    let p = params(4, 5, false);
    let units = job(&p).root_units();
    assert_eq!(
        units[0].moves.len(),
        2,
        "root units are an opening and a reply"
    );
    let none = job(&p).report(&SolveSummary::default()).text;
    assert!(
        none.iter().all(|l| !l.contains("replies settled")),
        "{none:?}"
    );
    let first = explore_all(&job(&p), vec![units[0].clone()], u64::MAX).unwrap();
    let text = job(&p).report(&first).text;
    let with_replies: Vec<&String> = text
        .iter()
        .filter(|l| l.contains("; replies settled: "))
        .collect();
    assert_eq!(with_replies.len(), 1, "{text:?}");
    // 4x5 is a draw: the first reply searched does not refute its opening,
    // which is left open ("first does not win": the second player can pair
    // moves on a board with an even side) with that reply settled as far as
    // the root needs: the first player reaches at least a draw.
    assert!(
        with_replies[0].contains("first player does not win")
            && with_replies[0]
                .ends_with("the second player does not win (a draw or the first player)"),
        "{text:?}"
    );
}

/// A job owns its table: merging, reporting and moot tests (what the
/// coordinator does) never create one, so there is no snapshot; after a
/// search, the job's snapshot carries what it settled to a fresh job of the
/// same game, which then solves the game again with the same value in a
/// fraction of the nodes. Snapshots of another game, or damaged ones, are
/// refused whole and store nothing.
#[test]
fn a_job_owns_its_table_and_its_snapshot_warms_a_fresh_job() {
    use orchard_core::CacheSnapshot;
    let p = params(4, 5, false);
    let j = job(&p);
    assert_eq!(j.cache_name(), "hip-4x5");
    assert_eq!(job(&params(5, 4, true)).cache_name(), "hip-4x5-double");
    let units = j.root_units();
    let mut merged = SolveSummary::default();
    j.merge(&mut merged, SolveSummary::default()).unwrap();
    assert!(units.iter().all(|u| !j.is_moot(&merged, u)));
    assert!(!j.must_wait(&merged, &units[0]));
    j.report(&merged);
    assert!(j.snapshot().is_none(), "a table without a search");

    let cold = j.solve_position(&[]).unwrap();
    let (v, cold_nodes) = (cold.value, cold.nodes);
    // Both kinds of node: the plain last moves' and the table's.
    assert!(
        0 < cold.plain_nodes && cold.plain_nodes < cold_nodes,
        "{cold:?}"
    );
    let snapshot = j.snapshot().expect("a snapshot after a search");
    let warm = job(&p);
    let restored = warm.restore(&snapshot).unwrap();
    assert!(restored > 100, "{restored} entries");
    let warm_search = warm.solve_position(&[]).unwrap();
    let (v2, warm_nodes) = (warm_search.value, warm_search.nodes);
    assert_eq!(v2, v);
    assert!(
        warm_nodes * 10 < cold_nodes,
        "{warm_nodes} nodes warm, {cold_nodes} cold"
    );
    // A fresh job is cold again: the same search, the same nodes.
    assert_eq!(job(&p).solve_position(&[]).unwrap(), cold);

    let other = job(&params(4, 5, true));
    let e = other.restore(&snapshot).unwrap_err().to_string();
    assert!(e.contains("another game"), "{e}");
    let mut damaged = snapshot.clone();
    damaged[snapshot.len() / 2] ^= 1;
    let damaged_job = job(&p);
    let e = damaged_job.restore(&damaged).unwrap_err().to_string();
    assert!(e.contains("checksum"), "{e}");
    // Refused before anything was stored (not even a table was made).
    assert!(other.snapshot().is_none() && damaged_job.snapshot().is_none());

    // The memory a host lends a job is checked.
    for bad in [0, (1 << 20) + 1] {
        let host = Host {
            cache_mib: Some(bad),
            ..Host::default()
        };
        assert_eq!(
            HipSolve::new(p.clone(), &host).unwrap_err().name,
            "cache-mib"
        );
    }
    let small = HipSolve::new(
        p.clone(),
        &Host {
            cache_mib: Some(1),
            ..Host::default()
        },
    )
    .unwrap();
    assert_eq!(small.solve_position(&[]).unwrap().value, v);
}

/// Replicas of a unit compare its value as far as the root needs it: where
/// the second player can pair moves, "the first player reaches at least a
/// draw" and "the first player wins" are the same answer (a search may or
/// may not happen to prove the win above the cap), while a draw against a
/// loss is a real disagreement. Where he cannot pair, every value counts.
#[test]
fn replicas_compare_a_units_value_up_to_the_roots_cap() {
    for (r, c, cap) in [(4u32, 5u32, 0i8), (3, 5, 1)] {
        let p = params(r, c, false);
        let j = job(&p);
        let unit = j.root_units()[0].clone();
        let board = orchard_hip::board::Board::new(r.min(c) as usize, r.max(c) as usize);
        let (mut p1, mut p2) = (0u64, 0u64);
        for (i, &m) in unit.moves.iter().enumerate() {
            if i % 2 == 0 {
                p1 |= 1 << m;
            } else {
                p2 |= 1 << m;
            }
        }
        let (k1, k2, _) = board.canonical2(p1, p2);
        let with = |lo: i8, hi: i8| {
            let mut s = SolveSummary::default();
            let k = s.known.entry((k1, k2)).or_default();
            (k.lo, k.hi) = (lo, hi);
            j.verified_part(&unit, &s, 0)
        };
        assert_eq!(with(0, 1) == with(1, 1), cap == 0, "{r}x{c}");
        assert_ne!(with(0, 0), with(-1, -1), "{r}x{c}");
        assert_ne!(with(-1, 0), with(0, 0), "{r}x{c}");
    }
}

/// A solved unit's principal variation comes from a worker: a damaged one
/// (a cell off the board, as the hostile-input fuzz found) ends the root's
/// line there instead of bringing the report down.
#[test]
fn a_damaged_principal_variation_does_not_bring_the_report_down() {
    let p = params(3, 4, false);
    let j = job(&p);
    let mut s = explore_all(&j, j.root_units(), u64::MAX).unwrap();
    let before = j.report(&s).json;
    assert!(s.known.values().any(|k| !k.pv.is_empty()));
    for k in s.known.values_mut().filter(|k| !k.pv.is_empty()) {
        k.pv.push(252);
        k.pv.insert(0, 251);
    }
    let after = j.report(&s).json;
    assert_eq!(after["winner"], before["winner"]);
}

/// Minimax over `tree_node`'s children and its ends of the game by the
/// rules gives plain minimax's value (so the tree a scheduler holds plays
/// by the same rules as the solver), and the rules' ceiling is never
/// below a position's value.
#[test]
fn the_tree_nodes_minimax_is_the_games_value() {
    fn tree_value(
        j: &HipSolve,
        moves: &[u8],
        memo: &mut std::collections::HashMap<orchard_hip::solve::Key, i8>,
    ) -> i8 {
        let node = j.tree_node(moves).unwrap();
        if let Some(&v) = memo.get(&node.key) {
            return v;
        }
        let v = node.over.unwrap_or_else(|| {
            let kids = node.children.iter().map(|m| tree_value(j, m, memo));
            if node.p1_to_move {
                kids.max().unwrap()
            } else {
                kids.min().unwrap()
            }
        });
        assert!(v <= node.p1_ceiling, "{moves:?}: {v} above the ceiling");
        memo.insert(node.key, v);
        v
    }
    for (r, c) in [(2, 3), (3, 3), (2, 4), (2, 5)] {
        for double in [false, true] {
            let j = job(&params(r, c, double));
            let mut memo = std::collections::HashMap::new();
            let got = tree_value(&j, &[], &mut memo);
            let mut cells = vec![0u8; (r * c) as usize];
            let want = reference::minimax(r as usize, c as usize, double, &mut cells);
            assert_eq!(got, want, "{r}x{c} double={double}");
            assert!(memo.len() > 3, "{r}x{c}: the tree was walked");
        }
    }
    // A full board is over (a draw), with no children.
    let j = job(&params(2, 2, false));
    let node = j.tree_node(&[0, 1, 3, 2]).unwrap();
    assert_eq!((node.over, node.children.len()), (Some(0), 0));
}

/// The job's `--lemma-min-nodes` reaches its table: the same search offers
/// more bytes of lemmas at a lower threshold.
#[test]
fn the_jobs_lemma_threshold_sets_what_its_searches_offer() {
    let bytes = |min_nodes: Option<u64>| {
        let j = job(&SolveParams {
            lemma_min_nodes: min_nodes,
            ..params(4, 5, false)
        });
        assert!(j.take(1 << 30).is_empty(), "nothing before the first take");
        explore_all(&j, j.root_units(), u64::MAX).unwrap();
        j.take(1 << 30).len()
    };
    let (low, default, high) = (bytes(Some(32)), bytes(None), bytes(Some(4096)));
    assert!(
        low > default && default > high && high > 0,
        "{low}, {default}, {high}"
    );
}
