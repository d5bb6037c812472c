//! Hostile input for every family of this build: mutations of each job's
//! own valid units, summaries, lemmas and cache snapshots fed to every
//! decoder that sees them from the other side of the wire
//! (`orchard::testing::hostile_input`). None may panic. The test runs a fast subset
//! (2,000 inputs a family); `bench/hostile.sh` runs a million or more and
//! records the figures in BENCHMARKS.md.
//!
//! `ORCHARD_FUZZ_INPUTS` (per family) and `ORCHARD_FUZZ_SEED` change the
//! run; a failure prints the family, the decoder and the input in hex.

use crate::common::{env_u64, TempDir};
use orchard::testing::hostile_input;
use orchard::Families;
use orchard_core::hostile::Tally;
use orchard_core::Host;
use std::path::Path;

/// A small job of each family, as its command line would give it.
const SAMPLES: &[&[&str]] = &[
    &["busy-beaver", "--states", "2"],
    &[
        "exec",
        "--program",
        concat!(env!("CARGO_MANIFEST_DIR"), "/examples/exec/queens.py"),
        "--arg",
        "4",
    ],
    &["grundy", "--max", "40"],
    &["halves", "--n", "4"],
    &["hc", "--columns", "2"],
    &["hip-draws", "--rows", "3", "--cols", "4"],
    &["hip-draws", "--rows", "3", "--cols", "3", "--colors", "3"],
    &["hip-solve", "--rows", "4", "--cols", "4"],
    &[
        "hip-nn",
        "--players",
        "2",
        "--size",
        "4",
        "--runs",
        "4",
        "--seed",
        "1",
    ],
    &[
        "knight-nn",
        "--rows",
        "6",
        "--cols",
        "6",
        "--runs",
        "2",
        "--seed",
        "1",
    ],
    &["knight-tours", "--rows", "3", "--cols", "4"],
    &["latin", "--order", "4"],
    &["magic-hexagon", "--order", "2"],
    &["queens", "--n", "6"],
    &["rooks3d", "--per-line", "2"],
    &["synthetic", "--nodes", "100000"],
];

#[test]
fn no_decoder_of_any_family_panics_on_mutated_input() {
    let inputs = env_u64("ORCHARD_FUZZ_INPUTS", 2_000);
    let seed = env_u64("ORCHARD_FUZZ_SEED", 1);
    let families = Families::builtin();
    // The sat sample's formula and solver: files the command line reads.
    let dir = TempDir::new("hostile-sat");
    let cnf = dir.path("f.cnf");
    std::fs::write(&cnf, "p cnf 4 4\n1 2 0\n-1 3 0\n-2 -3 4 0\n-4 1 0\n").unwrap();
    // Without CaDiCaL (and not required) the sat sample is left out.
    let cadical = orchard_core::testing::cadical();
    let solver = cadical
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let sat_sample: Vec<&str> = vec![
        "sat",
        "--cnf",
        cnf.to_str().unwrap(),
        "--solver",
        &solver,
        "--cubes",
        "2",
    ];
    let mut samples: Vec<&[&str]> = SAMPLES.to_vec();
    if cadical.is_some() {
        samples.push(&sat_sample);
    }
    // Every family of the build has a sample: a new family is fuzzed too.
    for name in families.names() {
        assert!(
            samples.iter().any(|s| s[0] == name) || (name == "sat" && cadical.is_none()),
            "family {name} has no sample job here"
        );
    }
    let mut total = Tally::default();
    // The programs the exec and sat samples run.
    let programs = dir.path("programs");
    std::fs::create_dir_all(&programs).unwrap();
    std::os::unix::fs::symlink(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/exec/queens.py"),
        programs.join("queens.py"),
    )
    .unwrap();
    if let Some(cadical) = &cadical {
        std::os::unix::fs::symlink(cadical, programs.join("cadical")).unwrap();
    }
    let host = Host {
        programs: Some(programs),
        ..Host::default()
    };
    for (k, sample) in samples.iter().enumerate() {
        let (tally, corpus) = hostile_input(
            &families,
            sample,
            &host,
            inputs,
            seed.wrapping_add(k as u64),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(tally.inputs, inputs);
        total.inputs += tally.inputs;
        total.accepted += tally.accepted;
        println!(
            "hostile: {:?}: {} inputs from {} units, {} summaries, {} lemma sets, {} snapshots; \
             {} accepted as well formed",
            sample,
            tally.inputs,
            corpus.units.len(),
            corpus.summaries.len(),
            corpus.lemmas.len(),
            corpus.snapshots.len(),
            tally.accepted
        );
    }
    println!(
        "hostile: {} families, {} inputs, {} accepted, 0 panics",
        samples.len(),
        total.inputs,
        total.accepted
    );
}
