//! The template's tests: what every family's tests should hold it to.

use std::process::Command;

use langford::{reference, Langford, LangfordParams, Placement};
use orchard::Families;
use orchard_core::sequential::explore_all;
use orchard_core::testing::merged_in_any_order;
use orchard_core::{FamilyError, Host, LocalFlags, SearchFamily};

fn job(n: u32) -> Langford {
    Langford::new(LangfordParams { n }, &Host::default()).expect("a valid n")
}

/// The reference's rows are Langford sequences, each once: the second
/// implementation is itself checked against the definition.
#[test]
fn the_reference_lists_langford_sequences() {
    assert_eq!(
        reference::sequences(3),
        [[2, 3, 1, 2, 1, 3], [3, 1, 2, 1, 3, 2]]
    );
    for n in 1..=8 {
        let all = reference::sequences(n);
        for row in &all {
            for k in 1..=n {
                let at: Vec<usize> = (0..row.len()).filter(|&i| row[i] == k).collect();
                assert_eq!(at.len(), 2, "{row:?}");
                assert_eq!(at[1] - at[0], k as usize + 1, "{row:?}");
            }
        }
        let mut distinct = all.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), all.len(), "n = {n}");
    }
}

/// The family's counts equal the reference's, with units cut into pieces of
/// a few hundred nodes (every split followed) and merged in any order.
#[test]
fn the_search_counts_what_the_reference_lists() {
    for n in 1..=11 {
        let job = job(n);
        let (summary, pieces) = merged_in_any_order(&job, job.root_units(), 300, u64::from(n));
        assert_eq!(
            summary.sequences,
            reference::sequences(n).len() as u64,
            "n = {n} in {pieces} pieces"
        );
        // Unsplit, the same count and the same nodes.
        let whole = explore_all(&job, job.root_units(), u64::MAX).unwrap();
        assert_eq!(whole, summary, "n = {n}");
        if n == 11 {
            // Budgets are read every few thousand nodes: only the larger
            // units split.
            assert!(pieces > job.root_units().len(), "n = {n}: no unit split");
        }
    }
}

/// OEIS A014552 for n = 1..12, by running the search.
#[test]
fn the_pairings_are_oeis_a014552() {
    let published = [0, 0, 1, 1, 0, 0, 26, 150, 0, 0, 17792, 108144];
    for (n, &pairings) in (1..).zip(published.iter()) {
        let job = job(n);
        let s = explore_all(&job, job.root_units(), 1 << 20).unwrap();
        assert_eq!(s.sequences % 2, 0, "n = {n}");
        assert_eq!(job.report(&s).json["pairings"], pairings, "n = {n}");
    }
}

#[test]
fn bad_parameters_and_units_are_refused() {
    for n in [0, 25] {
        let e = Langford::new(LangfordParams { n }, &Host::default()).unwrap_err();
        assert!(e.to_string().contains("--n"), "{e}");
    }
    let job = job(4);
    let flags = LocalFlags::default();
    for (bad, why) in [
        (vec![0, 1], "overlaps"),
        (vec![4], "runs past"),
        (vec![0, 1, 2, 3, 4], "pairs placed"),
    ] {
        match job.explore(&Placement(bad.clone()), &flags.context(1000)) {
            Err(FamilyError::BadUnit(m)) => assert!(m.contains(why), "{bad:?}: {m}"),
            other => panic!("{bad:?}: {other:?}"),
        }
    }
}

/// The same hostile-input check as orchard's built-in families: mutated
/// units and summaries never make a decoder panic.
#[test]
fn no_decoder_panics_on_mutated_input() {
    let families = Families::none().with::<Langford>();
    let (tally, _) = orchard::testing::hostile_input(
        &families,
        &["langford", "--n", "7"],
        &Host::default(),
        5_000,
        1,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(tally.inputs, 5_000);
}

/// The program itself, as a user runs it: a coordinator and two workers in
/// one process over real gRPC, the answer as JSON.
#[test]
fn the_program_counts_through_the_embedded_cluster() {
    let dir = std::env::temp_dir().join(format!("langford-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_langford"))
        .args(["run", "langford", "--n", "8", "--workers", "2", "--json"])
        .args(["--unit-budget", "2000", "--db"])
        .arg(dir.join("langford.db"))
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["pairings"], 150, "{answer}");
    assert_eq!(answer["sequences"], 300, "{answer}");
    // A bad flag: one line, exit code 2.
    let out = Command::new(env!("CARGO_BIN_EXE_langford"))
        .args(["run", "langford", "--n", "99"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--n"), "{err}");
}
