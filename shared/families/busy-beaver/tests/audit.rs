//! The audit file against the run: its counts are the summary's, it reads
//! back as the whole tree with every machine once, the results file it
//! makes must be the run's, a damaged file is one clear error, and the
//! checker catches verdicts that are wrong.

use std::collections::HashSet;
use std::path::PathBuf;
use std::process::Command;

use clap::Parser;
use orchard_busy_beaver::audit::cli::AuditCli;
use orchard_busy_beaver::audit::{
    self, read_all, write_all, AuditError, Certificate, CheckOptions, Entry, Record,
};
use orchard_busy_beaver::wfar::{self, Wdfa, MAX_CERTIFICATE_WDFA};
use orchard_busy_beaver::{BbSummary, BusyBeaver, BusyBeaverParams, Leaf, Verdict};
use orchard_core::{explore_all, Host, SearchFamily};

/// A job's parameters: the defaults, as `orchard run` takes them (a stored
/// job without `last_resort` or `mitm_wfar` reads as one made without it).
fn params(states: u32) -> BusyBeaverParams {
    serde_json::from_value(serde_json::json!({
        "states": states,
        "last_resort": true,
        "mitm_wfar": true,
    }))
    .unwrap()
}

fn dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("bb-audit-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The run (in this thread), its results file, and its audit file.
fn run_and_audit(states: u32, tag: &str) -> (BbSummary, PathBuf, PathBuf) {
    let job = BusyBeaver::new(params(states), &Host::default()).unwrap();
    let summary = explore_all(&job, job.root_units(), u64::MAX).unwrap();
    let d = dir(tag);
    let results = d.join("job-1-busy-beaver.txt");
    let mut lines = job.report(&summary).results_lines.join("\n");
    lines.push('\n');
    std::fs::write(&results, lines).unwrap();
    let out = d.join("audit.bin.zst");
    let w = audit::write(params(states), None, &results, &out, 3, &|_| {}).unwrap();
    assert_eq!(w.totals.machines, summary.machines());
    assert_eq!(w.totals.halting, summary.halting);
    assert_eq!(w.totals.never, summary.never);
    assert_eq!(w.totals.undecided, summary.undecided);
    assert_eq!(w.summary.leaves, summary.leaves);
    (summary, results, out)
}

fn leaf(r: &Record) -> Leaf {
    Leaf {
        table: r.table,
        verdict: match r.entry {
            Entry::Halts { steps, ones, at } => Verdict::Halts { steps, ones, at },
            Entry::Never(ref c) => Verdict::Never(c.decider()),
            Entry::Undecided => Verdict::Undecided,
        },
    }
}

fn read_back_and_check(states: u32, tag: &str, one_in: u64) {
    let opts = CheckOptions {
        one_in,
        seed: 7,
        steps: 100_000,
    };
    let (summary, _, out) = run_and_audit(states, tag);
    let (p, units, totals) = read_all(std::fs::File::open(&out).unwrap()).unwrap();
    assert_eq!(p, params(states));
    let job = BusyBeaver::new(p, &Host::default()).unwrap();
    let root: Vec<_> = units.iter().map(|(u, _)| u.clone()).collect();
    assert_eq!(root, job.root_units());
    let records: Vec<&Record> = units.iter().flat_map(|(_, r)| r).collect();
    assert_eq!(records.len() as u64, summary.machines());
    assert_eq!(totals.machines, summary.machines());
    let distinct: HashSet<_> = records.iter().map(|r| r.table).collect();
    assert_eq!(distinct.len(), records.len(), "a machine twice");
    let mut leaves: Vec<Leaf> = records.iter().map(|r| leaf(r)).collect();
    leaves.sort();
    assert_eq!(leaves, summary.leaves, "the verdicts are the run's");
    let report = audit::check(std::fs::File::open(&out).unwrap(), &opts).unwrap();
    assert_eq!(report.failures, Vec::<String>::new());
    assert_eq!(report.totals, totals);
    assert_eq!(report.halting_checked, summary.halting);
    if opts.one_in == 1 {
        assert_eq!(report.nonhalting_checked, summary.nonhalting());
    }
    assert!(report.certificates_verified > 0);
}

#[test]
fn three_states_read_back_whole_and_check_clean() {
    read_back_and_check(3, "three", 1);
}

/// Older files read as the runs they were: a version 2 file (the header
/// without the `--mitm-wfar` byte) as a run without the meet-in-the-middle
/// search, a version 1 file (without the `--last-resort` byte too) as a
/// run without the last resort, with the same records, and both check
/// clean; a version byte beyond this code's is refused.
#[test]
fn older_versions_read_and_check() {
    let (_, _, out) = run_and_audit(3, "v1");
    let bytes = zstd::decode_all(std::fs::File::open(&out).unwrap()).unwrap();
    // 16 magic bytes, the version, the states, six u32 parameters.
    let flag = 16 + 1 + 1 + 6 * 4;
    assert_eq!(
        (bytes[16], bytes[flag], bytes[flag + 1]),
        (3, 1, 1),
        "version 3, --last-resort true, --mitm-wfar true"
    );
    let mut v2 = bytes.clone();
    v2.remove(flag + 1);
    v2[16] = 2;
    let mut v1 = v2.clone();
    v1.remove(flag);
    v1[16] = 1;
    let read = |name: &str, bytes: &[u8]| {
        let file = out.with_file_name(name);
        std::fs::write(&file, zstd::encode_all(bytes, 3).unwrap()).unwrap();
        let all = read_all(std::fs::File::open(&file).unwrap()).unwrap();
        (file, all)
    };
    let (_, (p3, units3, totals3)) = read("v3.bin.zst", &bytes);
    let (file2, (p2, units2, totals2)) = read("v2.bin.zst", &v2);
    let (file1, (p1, units1, totals1)) = read("v1.bin.zst", &v1);
    assert!(p3.last_resort && p3.mitm_wfar);
    let without_mitm = BusyBeaverParams {
        mitm_wfar: false,
        ..p3.clone()
    };
    assert_eq!(p2, without_mitm);
    let without_last_resort = BusyBeaverParams {
        last_resort: false,
        ..without_mitm
    };
    assert_eq!(p1, without_last_resort);
    assert_eq!((&units1, &totals1), (&units3, &totals3));
    assert_eq!((&units2, &totals2), (&units3, &totals3));
    let opts = CheckOptions {
        one_in: 1,
        seed: 7,
        steps: 100_000,
    };
    for file in [&file1, &file2] {
        let report = audit::check(std::fs::File::open(file).unwrap(), &opts).unwrap();
        assert_eq!(report.failures, Vec::<String>::new(), "{}", file.display());
    }
    let mut v4 = bytes;
    v4[16] = 4;
    let (file4, _) = (out.with_file_name("v4.bin.zst"), ());
    std::fs::write(&file4, zstd::encode_all(&v4[..], 3).unwrap()).unwrap();
    assert!(matches!(
        read_all(std::fs::File::open(&file4).unwrap()),
        Err(AuditError::Version(4))
    ));
}

/// One nonhalting verdict in 64 re-checked: the 4-state tree has 858,909
/// machines.
#[test]
fn four_states_read_back_whole_and_check_clean() {
    read_back_and_check(4, "four", 64);
}

#[test]
fn a_results_file_that_disagrees_is_refused() {
    let (_, results, out) = run_and_audit(3, "disagrees");
    let text = std::fs::read_to_string(&results).unwrap();
    let line = text
        .lines()
        .find(|l| l.contains("halts after 21 steps"))
        .unwrap();
    std::fs::write(
        &results,
        text.replace(line, &line.replace("21 steps", "22 steps")),
    )
    .unwrap();
    std::fs::remove_file(&out).unwrap();
    let err = audit::write(params(3), None, &results, &out, 3, &|_| {}).unwrap_err();
    assert!(matches!(err, AuditError::Disagrees { .. }), "{err}");
    let msg = err.to_string();
    assert!(!msg.contains('\n') && msg.contains("22 steps"), "{msg}");
    assert!(!out.exists());
    assert!(!PathBuf::from(format!("{}.tmp", out.display())).exists());
}

#[test]
fn damaged_files_are_one_clear_error() {
    let (_, _, out) = run_and_audit(3, "damaged");
    let bytes = std::fs::read(&out).unwrap();
    let opts = CheckOptions::default();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("truncated", bytes[..bytes.len() / 2].to_vec()),
        ("last byte cut", bytes[..bytes.len() - 1].to_vec()),
        ("a byte flipped", {
            let mut b = bytes.clone();
            let i = b.len() / 2;
            b[i] ^= 0x40;
            b
        }),
        ("not zstd", b"1RB1LB_1LA0LC_---1LD_1RD0RA halts".to_vec()),
        ("empty", Vec::new()),
    ];
    for (what, b) in cases {
        let err = audit::check(&b[..], &opts).expect_err(what);
        let msg = err.to_string();
        assert!(!msg.is_empty() && !msg.contains('\n'), "{what}: {msg}");
    }
    let err = audit::check(&bytes[..bytes.len() / 2], &opts).unwrap_err();
    assert!(
        matches!(
            err,
            AuditError::Truncated { .. } | AuditError::Corrupt { .. }
        ),
        "{err:?}"
    );

    // The binary: a non-zero exit and one line on stderr.
    let cut = out.with_extension("cut.zst");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_orchard-bb-audit"))
        .arg("check")
        .arg(&cut)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8(o.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains(cut.to_str().unwrap()), "{stderr}");
}

/// A WFAR record with automata of 100 states reads back as written (the
/// record's layout holds up to 255 states per automaton, files written
/// with at most 8 read the same), and one of 200 states, beyond
/// [`MAX_CERTIFICATE_WDFA`], is refused as corrupt.
#[test]
fn large_weighted_automata_read_back_and_too_large_ones_are_refused() {
    let (_, _, out) = run_and_audit(3, "large-wfar");
    let (p, mut units, _) = read_all(std::fs::File::open(&out).unwrap()).unwrap();
    let automaton = |k: usize| Wdfa {
        next: (0..k)
            .map(|q| [(q / 2) as u8, ((q + 1) % k) as u8])
            .collect(),
        weight: (0..k).map(|q| [0, (q % 3) as i8 - 1]).collect(),
    };
    let set = |units: &mut Vec<(_, Vec<Record>)>, k: usize| {
        let r = units
            .iter_mut()
            .flat_map(|(_, r)| r.iter_mut())
            .find(|r| matches!(r.entry, Entry::Never(_)))
            .expect("a nonhalting record");
        r.entry = Entry::Never(Certificate::Wfar(wfar::Certificate {
            max_d: 2,
            left: automaton(k),
            right: automaton(k / 2),
        }));
    };
    set(&mut units, 100);
    let bytes = write_all(&p, &units, 3).unwrap();
    let (_, back, _) = read_all(&bytes[..]).unwrap();
    assert_eq!(back, units);
    const { assert!(MAX_CERTIFICATE_WDFA < 200) };
    set(&mut units, 200);
    let bytes = write_all(&p, &units, 3).unwrap();
    let err = read_all(&bytes[..]).unwrap_err();
    assert!(matches!(err, AuditError::Corrupt { .. }), "{err:?}");
    assert!(err.to_string().contains("200 states"), "{err}");
}

/// Edits one record of the 3-state file and checks what the checker says.
fn edited(edit: impl Fn(&mut Record) -> bool) -> audit::CheckReport {
    edited_sampled(edit, 1, "edited")
}

/// [`edited`], re-checking one nonhalting verdict in `one_in`, in the
/// test's own directory `tag` (tests run side by side).
fn edited_sampled(
    edit: impl Fn(&mut Record) -> bool,
    one_in: u64,
    tag: &str,
) -> audit::CheckReport {
    let (_, _, out) = run_and_audit(3, tag);
    let (p, mut units, _) = read_all(std::fs::File::open(&out).unwrap()).unwrap();
    let mut found = false;
    for r in units.iter_mut().flat_map(|(_, r)| r.iter_mut()) {
        if edit(r) {
            found = true;
            break;
        }
    }
    assert!(found, "a record to edit");
    let bytes = write_all(&p, &units, 3).unwrap();
    let opts = CheckOptions {
        one_in,
        seed: 0,
        steps: 10_000,
    };
    audit::check(&bytes[..], &opts).unwrap()
}

#[test]
fn every_automata_certificate_is_checked_whatever_the_sample() {
    // A sample that re-checks (next to) none of the nonhalting verdicts.
    let sparse = u64::MAX;
    // A cycler whose period is wrong goes unseen outside the sample...
    let r = edited_sampled(
        |r| match &mut r.entry {
            Entry::Never(Certificate::Cycler { period, .. }) if *period > 1 => {
                *period += 1;
                true
            }
            _ => false,
        },
        sparse,
        "sparse-cycler",
    );
    assert_eq!(r.failure_count, 0, "{:?}", r.failures);
    // ... a weighted-automata certificate that proves nothing does not:
    // one plain pair of automata, which every machine's closure leaves
    // through an undefined transition.
    let r = edited_sampled(
        |r| match r.entry {
            Entry::Never(Certificate::Cycler { .. }) => {
                r.entry = Entry::Never(Certificate::Wfar(wfar::Certificate {
                    max_d: 1,
                    left: Wdfa {
                        next: vec![[0, 0]],
                        weight: vec![[0, 0]],
                    },
                    right: Wdfa {
                        next: vec![[0, 0]],
                        weight: vec![[0, 0]],
                    },
                }));
                true
            }
            _ => false,
        },
        sparse,
        "sparse-wfar",
    );
    assert_eq!(r.failure_count, 1, "{:?}", r.failures);
    assert_eq!(r.nonhalting_checked, 1, "{r:?}");
}

#[test]
fn the_checker_catches_wrong_verdicts() {
    // A halting machine with one step too many.
    let r = edited(|r| match &mut r.entry {
        Entry::Halts { steps, .. } if *steps == 21 => {
            *steps += 1;
            true
        }
        _ => false,
    });
    assert_eq!(r.failure_count, 1, "{:?}", r.failures);
    assert!(
        r.failures[0].contains("halts after 22 steps"),
        "{:?}",
        r.failures
    );

    // A cycler whose period is wrong.
    let r = edited(|r| match &mut r.entry {
        Entry::Never(Certificate::Cycler { period, .. }) if *period > 1 => {
            *period += 1;
            true
        }
        _ => false,
    });
    assert_eq!(r.failure_count, 1, "{:?}", r.failures);
    assert!(r.failures[0].contains("cycler"), "{:?}", r.failures);

    // A translated cycler said to be a cycler: its tape grows, so no
    // configuration comes back.
    let r = edited(|r| match r.entry {
        Entry::Never(Certificate::TranslatedCycler { t1, t2 }) => {
            r.entry = Entry::Never(Certificate::Cycler {
                preperiod: t1,
                period: t2 - t1,
            });
            true
        }
        _ => false,
    });
    assert_eq!(r.failure_count, 1, "{:?}", r.failures);
}

#[test]
fn a_nonhalting_verdict_on_a_halting_machine_breaks_the_tree() {
    let (_, _, out) = run_and_audit(3, "tree");
    let (p, mut units, _) = read_all(std::fs::File::open(&out).unwrap()).unwrap();
    let r = units
        .iter_mut()
        .flat_map(|(_, r)| r.iter_mut())
        .find(|r| matches!(r.entry, Entry::Halts { .. }) && r.table[2] != 0)
        .unwrap();
    r.entry = Entry::Never(Certificate::Backward { depth: 30 });
    let bytes = write_all(&p, &units, 3).unwrap();
    let err = audit::check(&bytes[..], &CheckOptions::default()).unwrap_err();
    assert!(matches!(err, AuditError::Corrupt { .. }), "{err}");
}

/// The `orchard-bb-audit` commands the guide quotes parse.
#[test]
fn quoted_commands_parse() {
    let page = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../docs/families/busy-beaver.md"
    );
    let text = std::fs::read_to_string(page).unwrap();
    let mut parsed = 0;
    for line in text.lines() {
        let Some(rest) = line.trim().strip_prefix("orchard-bb-audit ") else {
            continue;
        };
        let rest = rest.split(" #").next().unwrap();
        let args = std::iter::once("orchard-bb-audit").chain(rest.split_whitespace());
        if let Err(e) = AuditCli::try_parse_from(args) {
            panic!("{line}: {e}");
        }
        parsed += 1;
    }
    assert!(parsed >= 2, "{parsed} commands");
}

/// The run's flags as `orchard run busy-beaver` and `orchard-bb-audit
/// write` parse them: the meet-in-the-middle search is on by default and
/// off with the last resort, so `--last-resort false` still names the
/// stored jobs made before the search existed; a job stored without the
/// field reads as one made without it; asking for it without the last
/// resort is refused.
#[test]
fn the_mitm_search_is_on_by_default_and_off_without_the_last_resort() {
    let parse = |extra: &[&str]| {
        let args = ["orchard-bb-audit", "write", "--states", "5"]
            .iter()
            .chain(["--results", "r.txt", "--out", "a.zst"].iter())
            .chain(extra.iter());
        match AuditCli::try_parse_from(args).unwrap().command {
            audit::cli::AuditCommand::Write(w) => w.params,
            other => panic!("{other:?}"),
        }
    };
    let on = parse(&[]);
    assert!(on.last_resort && on.mitm_wfar);
    let off = parse(&["--last-resort", "false"]);
    assert!(!off.last_resort && !off.mitm_wfar);
    let stored: BusyBeaverParams =
        serde_json::from_value(serde_json::json!({ "states": 5, "last_resort": true })).unwrap();
    assert_eq!(stored, parse(&["--mitm-wfar", "false"]));
    // The command without the field serialises as the stored job did.
    let earlier: BusyBeaverParams =
        serde_json::from_value(serde_json::json!({ "states": 5 })).unwrap();
    assert_eq!(
        serde_json::to_value(&off).unwrap(),
        serde_json::to_value(&earlier).unwrap()
    );
    let contradiction = parse(&["--last-resort", "false", "--mitm-wfar", "true"]);
    let e = BusyBeaver::new(contradiction, &orchard_core::Host::default()).unwrap_err();
    assert!(e.to_string().contains("mitm-wfar"), "{e}");
}
