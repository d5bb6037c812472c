//! The long runs' checkpoints in `runs/` against what the documents say of
//! them.
//!
//! A long run's answer is published twice: as a row of the table B ledger
//! (`docs/hip-table-b.md`) or a figure of `docs/figures.md`, and as the compressed
//! database in `runs/`, which `orchard run ... --db <copy>` answers from
//! without searching and resumes if unfinished. These tests decompress every
//! checkpoint, ask the real binary for its answer (or, for a run still
//! going, check that the command that resumes it finds its job), and hold the
//! ledger to it, so that a checkpoint replaced without its row (or a row
//! edited by hand) fails here instead of misleading a reader. They also
//! recompute every ledger row's ratio of orchard's nodes to Franke's calls.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{free_port, run_json, start_coordinator_with, wait_coordinator, TempDir};
use rusqlite::{Connection, OpenFlags};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `runs/NAME.db.xz` decompressed into `dir` as `coord.db` (with the `xz`
/// tool, as `bench/long-run.sh` writes them).
fn decompress(name: &str, dir: &TempDir) -> PathBuf {
    let source = repo().join("runs").join(format!("{name}.db.xz"));
    assert!(source.exists(), "{} is missing", source.display());
    let out = Command::new("xz")
        .arg("-dc")
        .arg(&source)
        .output()
        .unwrap_or_else(|e| panic!("xz (package xz-utils) is needed to read runs/: {e}"));
    assert!(
        out.status.success(),
        "xz -dc {}: {}",
        source.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let db = dir.path("coord.db");
    std::fs::write(&db, out.stdout).unwrap();
    db
}

/// The id and state of the newest job in a database, read without a
/// coordinator.
fn stored_job(db: &Path) -> (u64, String) {
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    conn.query_row(
        "SELECT id, state FROM jobs ORDER BY id DESC LIMIT 1",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .unwrap()
}

/// What `orchard run ARGS --db <copy of runs/NAME.db.xz> --json` answers: the
/// stored answer of a finished job, which must be the checkpoint's own job
/// (a new job beside it would search).
fn stored_answer(name: &str, args: &[&str]) -> serde_json::Value {
    let dir = TempDir::new(&format!("checkpoint-{name}"));
    let db = decompress(name, &dir);
    let (job, state) = stored_job(&db);
    assert_eq!(state, "done", "runs/{name}.db.xz: the job is not done");
    let (db, results) = (db.to_str().unwrap().to_owned(), dir.path("results"));
    let results = results.to_str().unwrap().to_owned();
    let mut all: Vec<&str> = args.to_vec();
    all.extend([
        "--db",
        &db,
        "--results-dir",
        &results,
        "--workers",
        "1",
        "--json",
    ]);
    let answer = run_json(&all);
    // A checkpoint may hold several finished jobs (runs/bb-5: with and
    // without the last resort); the answer must be one of them, not a new
    // job beside them.
    let conn = Connection::open_with_flags(&db, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let done: Vec<u64> = conn
        .prepare("SELECT id FROM jobs WHERE state = 'done' AND id <= ?1")
        .unwrap()
        .query_map([job], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let answered = answer["job_id"].as_u64().unwrap_or(0);
    assert!(
        done.contains(&answered),
        "{name}: not a stored job ({done:?}): {answer}"
    );
    answer
}

/// The report a finished job of `runs/NAME.db.xz` stored (its `result`), read
/// without a coordinator: for a job whose command needs what a test machine
/// may not have (a program of the same SHA-256).
fn stored_result(name: &str, job: u64) -> serde_json::Value {
    let dir = TempDir::new(&format!("checkpoint-{name}-{job}"));
    let db = decompress(name, &dir);
    let conn = Connection::open_with_flags(&db, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let (state, json): (String, String) = conn
        .query_row(
            "SELECT state, result_json FROM jobs WHERE id = ?1",
            [job],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(state, "done", "runs/{name}.db.xz: job {job} is not done");
    let stored: serde_json::Value = serde_json::from_str(&json).unwrap();
    stored["result"].clone()
}

/// Submits `family_args` to a coordinator (no workers) on a copy of the
/// unfinished `runs/NAME.db.xz`: the command that resumes the run must find
/// its job, not start another beside it.
fn resumes_its_job(name: &str, family_args: &[&str]) {
    let dir = TempDir::new(&format!("checkpoint-{name}"));
    let db = decompress(name, &dir);
    let (job, state) = stored_job(&db);
    assert_ne!(
        state, "done",
        "runs/{name}.db.xz is done: fill in its answer"
    );
    let port = free_port();
    let _coordinator = start_coordinator_with(&dir, port, &[]);
    let url = format!("http://127.0.0.1:{port}");
    wait_coordinator(&url, Duration::from_secs(60));
    let mut args = vec!["submit"];
    args.extend_from_slice(family_args);
    args.extend(["--coordinator", &url, "--json"]);
    let answer = run_json(&args);
    assert_eq!(
        answer["existing"], true,
        "{name}: a new job beside the stored one: {answer}"
    );
    assert_eq!(answer["job_id"].as_u64(), Some(job), "{name}: {answer}");
}

/// A number as the ledger writes it: digits with thousands commas.
fn number(cell: &str) -> u64 {
    cell.replace(',', "")
        .parse()
        .unwrap_or_else(|e| panic!("{cell:?} is not a count: {e}"))
}

/// One board of the table B ledger (`docs/hip-table-b.md`).
#[derive(Debug)]
struct LedgerRow {
    rows: u32,
    cols: u32,
    double: bool,
    franke_winner: u64,
    franke_calls: u64,
    /// Orchard's winner and nodes, if the board is done.
    orchard: Option<(u64, u64)>,
    ratio: String,
    how: String,
}

impl LedgerRow {
    /// The checkpoint the row names, if any (`hip-RxC` or `hip-RxC-double`).
    fn checkpoint(&self) -> Option<String> {
        let name = format!(
            "hip-{}x{}{}",
            self.rows,
            self.cols,
            if self.double { "-double" } else { "" }
        );
        self.how
            .contains(&format!("`runs/{name}.db.xz`"))
            .then_some(name)
    }
}

fn ledger() -> Vec<LedgerRow> {
    let ledger = std::fs::read_to_string(repo().join("docs/hip-table-b.md")).unwrap();
    let mut rows = Vec::new();
    for line in ledger.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // "| board | winner | calls | winner | nodes | ratio | how |"
        if cells.len() != 9 {
            continue;
        }
        let (board, double) = match cells[1].strip_suffix(" Double") {
            Some(b) => (b, true),
            None => (cells[1], false),
        };
        let Some((r, c)) = board.split_once('x') else {
            continue;
        };
        let (Ok(rows_n), Ok(cols_n)) = (r.parse::<u32>(), c.parse::<u32>()) else {
            continue;
        };
        let orchard = match cells[4] {
            "?" => None,
            w => Some((number(w), number(cells[5]))),
        };
        rows.push(LedgerRow {
            rows: rows_n,
            cols: cols_n,
            double,
            franke_winner: number(cells[2]),
            franke_calls: number(cells[3]),
            orchard,
            ratio: cells[6].to_owned(),
            how: cells[7].to_owned(),
        });
    }
    rows
}

#[test]
fn the_ledger_has_every_board_of_table_b_once() {
    let rows = ledger();
    // Table B: 64 boards, standard and Double.
    assert_eq!(rows.len(), 64, "the ledger: {} rows", rows.len());
    let mut seen = std::collections::HashSet::new();
    for r in &rows {
        assert!(seen.insert((r.rows, r.cols, r.double)), "{r:?} twice");
    }
}

/// Every row carries orchard's own winner, and it is table B's; a row that disagreed would
/// be a finding to check by a second method, not a row to leave open.
#[test]
fn every_row_of_the_ledger_has_orchards_winner_and_it_is_table_bs() {
    for r in ledger() {
        let Some((winner, _)) = r.orchard else {
            panic!("{r:?}: no figure of orchard's");
        };
        assert_eq!(
            winner, r.franke_winner,
            "{r:?}: orchard's winner is not table B's"
        );
    }
}

#[test]
fn every_ratio_in_the_ledger_is_nodes_over_calls() {
    for r in ledger() {
        let Some((_, nodes)) = r.orchard else {
            assert!(r.ratio.is_empty(), "{r:?}: a ratio without orchard's nodes");
            continue;
        };
        let ratio: f64 = r
            .ratio
            .parse()
            .unwrap_or_else(|e| panic!("{r:?}: ratio {e}"));
        let exact = nodes as f64 / r.franke_calls as f64;
        assert!(
            (ratio - exact).abs() <= 0.005 + 1e-9,
            "{}x{}{}: ratio {ratio}, but {nodes} / {} = {exact:.4}",
            r.rows,
            r.cols,
            if r.double { " Double" } else { "" },
            r.franke_calls
        );
    }
}

#[test]
fn every_long_run_in_the_ledger_answers_or_resumes_from_its_checkpoint() {
    let mut finished = 0;
    let mut named = Vec::new();
    for r in ledger() {
        let Some(name) = r.checkpoint() else { continue };
        named.push(format!("{name}.db.xz"));
        let (rows, cols) = (r.rows.to_string(), r.cols.to_string());
        let mut args = vec!["hip-solve", "--rows", &rows, "--cols", &cols];
        if r.double {
            args.push("--double");
        }
        let Some((winner, nodes)) = r.orchard else {
            resumes_its_job(&name, &args);
            continue;
        };
        let answer = stored_answer(&name, &[&["run"], &args[..]].concat());
        assert_eq!(answer["final"], true, "{name}: {answer}");
        assert_eq!(
            answer["winner"].as_u64(),
            Some(winner),
            "{name}: the winner"
        );
        assert_eq!(answer["nodes"].as_u64(), Some(nodes), "{name}: the nodes");
        finished += 1;
    }
    assert!(
        finished >= 15,
        "only {finished} finished long runs in the ledger"
    );
    // Every Hip checkpoint in runs/ is some row's, or a board past table B
    // that runs/README.md lists; such a run, while unfinished, resumes its
    // job (once done, its answer belongs in the documents and here).
    let readme = std::fs::read_to_string(repo().join("runs/README.md")).unwrap();
    for entry in std::fs::read_dir(repo().join("runs")).unwrap() {
        let file = entry.unwrap().file_name().into_string().unwrap();
        if !file.starts_with("hip-") || named.contains(&file) {
            continue;
        }
        assert!(
            readme.contains(&format!("`{file}`")),
            "runs/{file} is no ledger row's, and runs/README.md does not list it"
        );
        let name = file.trim_end_matches(".db.xz");
        let (board, double) = match name.strip_suffix("-double") {
            Some(b) => (b, true),
            None => (name, false),
        };
        let (rows, cols) = board
            .trim_start_matches("hip-")
            .split_once('x')
            .unwrap_or_else(|| panic!("runs/{file}: not hip-RxC[-double]"));
        let mut args = vec!["hip-solve", "--rows", rows, "--cols", cols];
        if double {
            args.push("--double");
        }
        resumes_its_job(name, &args);
    }
}

/// The finished long runs of the other families against the published
/// figures: n-queens for n = 20 and 21 (OEIS A000170 for all solutions,
/// A002562 for the distinct ones; the n = 20 run was stored before queens had a `method`
/// parameter, so its command finds it only by its canonical form), and
/// McKay's count of closed knight's tours on 8 x 8.
#[test]
fn the_other_finished_long_runs_answer_the_published_figures() {
    let queens = stored_answer(
        "queens-20-mirror",
        &["run", "queens", "--n", "20", "--method", "mirror"],
    );
    assert_eq!(
        queens["solutions"].as_u64(),
        Some(39_029_188_884),
        "{queens}"
    );
    assert_eq!(queens["distinct"].as_u64(), Some(4_878_666_808), "{queens}");
    let queens = stored_answer("queens-21", &["run", "queens", "--n", "21"]);
    assert_eq!(
        queens["solutions"].as_u64(),
        Some(314_666_222_712),
        "{queens}"
    );
    assert_eq!(
        queens["distinct"].as_u64(),
        Some(39_333_324_973),
        "{queens}"
    );
    let tours = stored_answer(
        "knights-8x8",
        &["run", "knight-tours", "--rows", "8", "--cols", "8"],
    );
    assert_eq!(tours["tours"], "13267364410532", "{tours}");
}

/// The 5-card busy beaver run through the cluster: the bbchallenge paper's
/// tree normal form (181,385,789 machines, 48,379,894 of them halting, and
/// so exactly its nonhalting ones among the rest), the published BB(5) and
/// Sigma(5) among the champions, and at most 100 machines left undecided,
/// each listed.
#[test]
fn the_five_card_busy_beaver_run_answers_from_its_checkpoint() {
    // The run was made without the last resort: that job is the one with
    // `--last-resort false`.
    let bb = stored_answer(
        "bb-5",
        &[
            "run",
            "busy-beaver",
            "--states",
            "5",
            "--last-resort",
            "false",
        ],
    );
    let n = |key: &str| bb[key].as_u64().unwrap_or_else(|| panic!("{key}: {bb}"));
    assert_eq!(n("machines"), 181_385_789, "{bb}");
    assert_eq!(n("halting"), 48_379_894, "{bb}");
    assert_eq!(
        n("halting") + n("nonhalting") + n("undecided"),
        n("machines"),
        "{bb}"
    );
    assert!(n("undecided") <= 100, "{bb}");
    assert_eq!(n("max_steps"), 47_176_870, "{bb}");
    assert_eq!(n("max_ones"), 4098, "{bb}");
    assert!(
        bb["steps_champions"]
            .as_array()
            .unwrap()
            .contains(&"1RB1LC_1RC1RB_1RD0LE_1LA1LD_1RZ0LA".into()),
        "the champion: {bb}"
    );
    assert_eq!(
        bb["undecided_machines"].as_array().unwrap().len() as u64,
        n("undecided"),
        "every undecided machine listed: {bb}"
    );
    // The independent re-check found nothing to contradict.
    assert_eq!(bb["recheck"]["failures"], serde_json::json!([]), "{bb}");
}

/// Job `job` of `runs/bb-5.db.xz`, read from the store (jobs 2 to 4 ran
/// with Debian's CaDiCaL as --far-solver, whose command needs a file of
/// that SHA-256): the paper's machines and halting ones, BB(5) and
/// Sigma(5), `nonhalting` machines settled and `undecided` left, every one
/// listed, no re-check failed. Returns the report and its listing.
fn five_card_job(job: u64, nonhalting: u64, undecided: u64) -> (serde_json::Value, Vec<String>) {
    let bb = stored_result("bb-5", job);
    let n = |key: &str| bb[key].as_u64().unwrap_or_else(|| panic!("{key}: {bb}"));
    assert_eq!(bb["last_resort"], true, "{bb}");
    assert_eq!(bb["far_solver"]["name"], "cadical", "{bb}");
    assert_eq!(n("machines"), 181_385_789, "{bb}");
    assert_eq!(n("halting"), 48_379_894, "{bb}");
    assert_eq!(n("nonhalting"), nonhalting, "{bb}");
    assert_eq!(n("undecided"), undecided, "{bb}");
    assert_eq!(n("max_steps"), 47_176_870, "{bb}");
    assert_eq!(n("max_ones"), 4098, "{bb}");
    assert_eq!(bb["recheck"]["failures"], serde_json::json!([]), "{bb}");
    let listed: Vec<String> = bb["undecided_machines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect();
    assert_eq!(listed.len() as u64, undecided, "{bb}");
    (bb, listed)
}

/// Skelet #1, proved by hand in Coq-BB5: undecided in every job.
const SKELET_1: &str = "1RB1RD_1LC0RC_1RA1LD_0RE0LB_---1RC";

#[test]
fn the_five_card_run_with_the_last_resort_leaves_nineteen_machines() {
    // Job 2: the last resort before its meet-in-the-middle search. The
    // paper's 133,005,895 nonhalting machines, less the 19 undecided.
    let (bb, listed) = five_card_job(2, 133_005_876, 19);
    // A machine Coq-BB5 settles with a DFA of 13 states is settled.
    assert!(listed.contains(&SKELET_1.to_string()));
    assert!(!listed.contains(&"1RB1LC_1LA1RB_1LD0LA_1RE0RD_---0RB".to_string()));
    assert_eq!(bb["deciders"]["finite-automata-reduction"], 32, "{bb}");
}

#[test]
fn the_five_card_run_with_the_mitm_search_leaves_seventeen_machines() {
    // Job 3: the meet-in-the-middle WFAR search on; job 2's and the two
    // machines the search settles.
    let (bb, listed) = five_card_job(3, 133_005_878, 17);
    assert_eq!(bb["mitm_wfar"], true, "{bb}");
    // The 8 and 7-state certificate's machine is settled; Skelet #1 is not.
    assert!(!listed.contains(&"1RB1LC_1LB1RA_0LE0LD_0RA1RD_---0LC".to_string()));
    assert!(listed.contains(&SKELET_1.to_string()));
    assert_eq!(
        bb["deciders"]["weighted-finite-automata-reduction"], 28,
        "{bb}"
    );
}

#[test]
fn the_five_card_run_with_coq_bb5s_certificates_leaves_the_hand_proofs() {
    // Job 4: job 3's pipeline with Coq-BB5's four largest weighted-automata
    // certificates supplied (`--certificates`, verified when the job was
    // checked); job 3's and the three helix machines.
    let (bb, listed) = five_card_job(4, 133_005_881, 14);
    assert_eq!(bb["certificates"]["file"], "coq-bb5-large-wfar.txt", "{bb}");
    for helix in [
        "1RB0RC_1LC0LE_0LD0LB_1RA---_1LB0RD",
        "1RB0LD_1RC0RA_0RD0RB_1LE---_1LB0LC",
        "1RB0RE_0RC0RA_1LD---_1LA0LB_1RA0LC",
    ] {
        assert!(!listed.contains(&helix.to_string()), "{helix}: {bb}");
    }
    assert!(listed.contains(&SKELET_1.to_string()));
    assert_eq!(
        bb["deciders"]["weighted-finite-automata-reduction"], 31,
        "{bb}"
    );
}

/// The four figures of a finished three-colour draws run: the colourings
/// without a one-colour square, all and the equal split of stones, and both
/// up to the board's symmetries.
fn assert_draws(name: &str, args: &[&str], figures: [u64; 4]) {
    let draws = stored_answer(name, args);
    for (field, figure) in ["draws", "playable", "distinct", "distinct_playable"]
        .into_iter()
        .zip(figures)
    {
        assert_eq!(
            draws[field].as_u64(),
            Some(figure),
            "{name} {field}: {draws}"
        );
    }
}

/// The three-colour draws of 6x6 (orchard's own figures, not published
/// before: `docs/figures.md`, "Hip draws").
#[test]
fn the_three_colour_draws_of_6x6_answer_from_their_checkpoint() {
    assert_draws(
        "draws-6x6-k3-sandwich",
        &[
            "run",
            "hip-draws",
            "--rows",
            "6",
            "--cols",
            "6",
            "--colors",
            "3",
            "--method",
            "sandwich",
        ],
        [
            3_115_476_174_069_300,
            176_129_986_557_036,
            389_434_531_000_566,
            22_016_248_753_383,
        ],
    );
}

/// The three-colour draws of 5x6 by the profile DP (6.5 hours under a 3 GiB
/// limit per unit): the second method's four figures, which are the sandwich
/// count's (`orchard run hip-draws --rows 5 --cols 6 --colors 3`, three
/// minutes; `docs/figures.md`, "Hip draws").
#[test]
fn the_three_colour_draws_of_5x6_by_the_profile_dp_answer_from_their_checkpoint() {
    assert_draws(
        "draws-5x6-k3",
        &[
            "run",
            "hip-draws",
            "--rows",
            "5",
            "--cols",
            "6",
            "--colors",
            "3",
            "--method",
            "profile",
            "--memory-limit",
            "3072",
        ],
        [
            16_177_948_052_298,
            944_321_362_842,
            4_044_489_559_467,
            236_080_521_108,
        ],
    );
}

/// The weak Schur runs by cube-and-conquer, the second method for h(4) =
/// 67 = WS(4) + 1: [1..66] has a checked model and [1..67] has every cube
/// refuted, each for the formula `examples/sat/schur.py 4 N --weak` writes
/// today (its SHA-256 is the one the job stored).
#[test]
fn the_weak_schur_runs_answer_ws4_from_their_checkpoints() {
    for (n, verdict) in [(66, "satisfiable"), (67, "unsatisfiable")] {
        let name = format!("weak-schur-4-{n}");
        let result = stored_result(&name, 1);
        let cnf = Command::new("python3")
            .arg(repo().join("examples/sat/schur.py"))
            .args(["4", &n.to_string(), "--weak"])
            .output()
            .expect("python3");
        assert!(cnf.status.success());
        assert_eq!(
            result["cnf_sha256"].as_str(),
            Some(orchard_exec::program::sha256_bytes(&cnf.stdout).as_str()),
            "{name}: {result}"
        );
        assert_eq!(result["verdict"], verdict, "{name}: {result}");
        let sat_cubes = result["sat_cubes"].as_u64().unwrap();
        assert_eq!(sat_cubes, u64::from(n == 66), "{name}: {result}");
        if n == 67 {
            assert_eq!(result["covered"].as_f64(), Some(1.0), "{name}: {result}");
        }
    }
}

/// The unfinished runs of the other families resume their own jobs.
#[test]
fn the_other_unfinished_long_runs_resume_their_jobs() {
    resumes_its_job(
        "queens-21-mirror",
        &["queens", "--n", "21", "--method", "mirror"],
    );
    resumes_its_job("queens-22", &["queens", "--n", "22"]);
}
