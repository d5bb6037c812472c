//! The cluster as it runs across machines, and as it fails: a coordinator
//! and workers as real processes talking gRPC over 127.0.0.1, with a worker
//! and then the coordinator killed with SIGKILL mid-job, a worker asked to
//! leave with SIGTERM, and a backup taken mid-job restored after the disk is
//! lost. Each test is written once and run for each family (`hc`,
//! `hip-solve`, `hip-nn` and `busy-beaver` with 4 cards, see
//! `common::family`): the answer must be the single process's, and nothing
//! done may be searched again. Just before a coordinator dies, with the
//! workers stopped, its answer so far must count the stored results each
//! once: a restart rebuilds the totals from the database, which would hide
//! a result merged twice in memory. The 4-card busy beaver also meets both kills
//! in one job: a worker killed part way through a unit, then the
//! coordinator.

use crate::common;

use std::time::{Duration, Instant};

use common::db::{ids_in_state, job_state, nodes_reported_by, releases, units};
use common::family::{FamilyCase, Victim, BUSY_BEAVER_4, HC, HIP_NN, HIP_SOLVE};
use common::{
    backup, final_results, freeze_and_check_answer_so_far, start_worker, units_held_by,
    wait_coordinator, wait_status, worker_nodes,
};
use common::{Proc, TempDir};

/// The test of each concern, for each family.
macro_rules! crash_tests {
    ($($family:ident: $case:expr;)*) => {$(
        mod $family {
            #[test]
            fn a_worker_killed_mid_job_loses_nothing() {
                super::a_worker_killed_mid_job_loses_nothing(&$case);
            }

            #[test]
            fn a_coordinator_killed_mid_job_resumes_from_its_database() {
                super::a_coordinator_killed_mid_job_resumes_from_its_database(&$case);
            }

            #[test]
            fn sigterm_makes_a_worker_hand_back_its_work_and_exit_cleanly() {
                super::sigterm_makes_a_worker_hand_back_its_work_and_exit_cleanly(&$case);
            }

            #[test]
            fn a_backup_taken_mid_job_resumes_when_the_disk_is_lost() {
                super::a_backup_taken_mid_job_resumes_when_the_disk_is_lost(&$case);
            }
        }
    )*};
}

crash_tests! {
    hc: super::HC;
    hip_solve: super::HIP_SOLVE;
    hip_nn: super::HIP_NN;
    busy_beaver_4: super::BUSY_BEAVER_4;
}

#[test]
fn busy_beaver_4_survives_a_killed_worker_then_a_killed_coordinator() {
    a_worker_then_the_coordinator_killed_mid_job_lose_nothing(&BUSY_BEAVER_4);
}

/// What shows that the victim's work was not lost, once the job is done.
enum Evidence {
    /// Some unit was leased again after the victim's lease expired.
    SomeUnitReleased,
    /// The units the victim held, each leased again after its lease expired
    /// or (a unit that must wait for an elder sibling goes after the others,
    /// see `must_wait`) cancelled as moot when that sibling decided its
    /// parent first.
    Held(Vec<i64>),
}

fn a_worker_killed_mid_job_loses_nothing(case: &FamilyCase) {
    let dir = case.dir("killworker");
    let port = common::free_port();
    let url = format!("http://127.0.0.1:{port}");
    let http = format!("127.0.0.1:{}", common::free_port());
    let _coord = case.start_coordinator(&dir, port, "coordinator.log", &["--http", &http]);
    wait_coordinator(&url, Duration::from_secs(20));
    let job = case.submit(&url);
    let (_others, evidence) = match case.victim {
        Victim::Frozen => kill_a_frozen_victim(case, &dir, &url, &http, job),
        Victim::Alone => kill_a_lone_victim(case, &dir, &url, job),
    };
    let s = wait_status(&url, job, case.finish_within, |s| s["state"] == "done");
    assert_eq!(s["state"], "done");
    assert_eq!(s["units_pending"], 0);
    (case.assert_same_answer)(&final_results(&url, job));
    let after = units(&dir.path("coord.db"));
    match evidence {
        Evidence::SomeUnitReleased => assert!(
            after
                .values()
                .any(|(state, leases, _)| state == "done" && *leases >= 2),
            "some unit was re-leased"
        ),
        Evidence::Held(held) => {
            for id in held {
                let (state, leases, _) = &after[&id];
                assert!(
                    (state == "done" && *leases >= 2) || state == "cancelled",
                    "the victim's unit {id} ended {state} after {leases} leases"
                );
            }
        }
    }
}

/// Kills the victim while it holds a lease, so that its unit must expire
/// and be leased again. A kill between two of its units would leave nothing
/// to re-lease, so the victim is frozen (SIGSTOP) and the coordinator asked
/// (its dashboard's API at `http`), once any report already in flight has
/// landed, whether the frozen victim still holds a unit. If it does not, it
/// is thawed at once and frozen again later (a fast machine finishes the
/// whole job in under ten seconds, so no time is spent waiting on a victim
/// that holds nothing). If it does, it is killed once a lease has expired
/// and its unit has gone to another worker. Returns the other workers.
fn kill_a_frozen_victim(
    case: &FamilyCase,
    dir: &TempDir,
    url: &str,
    http: &str,
    job: u64,
) -> (Vec<Proc>, Evidence) {
    let mut victim = start_worker(dir, url, "victim");
    let others = vec![
        start_worker(dir, url, "survivor"),
        start_worker(dir, url, "third"),
    ];
    let db = dir.path("coord.db");
    wait_status(url, job, case.first_units_within, |s| {
        s["units_done"].as_u64().unwrap() >= 20
    });
    let mut attempts = 0;
    loop {
        let deadline = Instant::now() + Duration::from_secs(30);
        while units_held_by(http, "victim") == 0 {
            assert!(Instant::now() < deadline, "the victim never held a unit");
            std::thread::sleep(Duration::from_millis(20));
        }
        let before = releases(&db);
        victim.signal("STOP");
        std::thread::sleep(Duration::from_millis(300));
        let frozen_with_a_unit = units_held_by(http, "victim") > 0;
        // The lease TTL is 2 s.
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut released = false;
        while frozen_with_a_unit && !released && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(200));
            released = releases(&db) > before;
        }
        if released {
            victim.sigkill();
            return (others, Evidence::SomeUnitReleased);
        }
        victim.signal("CONT");
        let s = common::status(url, job).unwrap();
        assert_eq!(s["state"], "running", "the job ended before the kill: {s}");
        attempts += 1;
        assert!(
            attempts < 50,
            "the victim's lease never went to another worker"
        );
    }
}

/// Nodes the worker named `hostname` has explored in the units it holds, as
/// far as the coordinator knows (its heartbeats carry each running unit's
/// progress), at the least: its nodes on the dashboard (reported units, the
/// coordinator's count once each report is committed, plus the progress of
/// the units it holds) less the nodes of its results in the database `db`
/// (committed before they are counted, so never fewer). Read with the
/// worker frozen, a positive answer means it stopped mid-unit.
fn nodes_in_hand(http: &str, db: &std::path::Path, hostname: &str) -> u64 {
    let shown = worker_nodes(http, hostname);
    shown.saturating_sub(nodes_reported_by(db, hostname))
}

/// Victims work alone until one dies holding a lease
/// ([`kill_lone_victims`]); then, with no worker left, the answer so far is
/// checked, and two workers finish the job.
fn kill_a_lone_victim(
    case: &FamilyCase,
    dir: &TempDir,
    url: &str,
    job: u64,
) -> (Vec<Proc>, Evidence) {
    let held = kill_lone_victims(dir, url, job, case.first_units_within, 10);
    // With no worker left, the job is running: its answer so far is sound.
    if let Some(check) = case.check_interim_results {
        check(url, job);
    }
    let others = vec![
        start_worker(dir, url, "survivor"),
        start_worker(dir, url, "other"),
    ];
    (others, Evidence::Held(held))
}

/// Starts one lone victim at a time and kills it once the job has `units_each`
/// more units done, until one dies holding a lease; returns the units it
/// held (pending, leased at least once), read from the database after the
/// lease has expired. Units are short and a worker holds none between a
/// report and its next lease, so a kill may miss. The victim may hold a
/// second unit leased ahead, and an earlier victim's lease may not have
/// expired yet (leases only end by expiry), so any lease still counted as
/// running will do; the database decides, since a report the victim sent
/// just before it died may still have been on its way when the status was
/// read, and then its unit is done, not held.
fn kill_lone_victims(
    dir: &TempDir,
    url: &str,
    job: u64,
    within: Duration,
    units_each: u64,
) -> Vec<i64> {
    let mut attempts = 0;
    loop {
        attempts += 1;
        assert!(attempts <= 20, "no victim died holding a lease");
        let done = common::status(url, job).unwrap()["units_done"]
            .as_u64()
            .unwrap();
        let mut victim = start_worker(dir, url, &format!("victim-{attempts}"));
        wait_status(url, job, within, |s| {
            s["units_done"].as_u64().unwrap() >= done + units_each || s["state"] == "done"
        });
        victim.sigkill();
        let s = common::status(url, job).unwrap();
        assert_eq!(s["state"], "running", "the kill came mid-job: {s}");
        if s["units_running"] == 0 {
            continue;
        }
        // Nothing is merged until the lease expires (2 s), so the unit is
        // not cancelled as moot in the meantime (a sibling's result could
        // cut it).
        std::thread::sleep(Duration::from_secs(3));
        // The victim's units: leased, never finished. A victim killed while
        // its lease request was on the way may have left one more, unseen.
        let held: Vec<i64> = units(&dir.path("coord.db"))
            .into_iter()
            .filter(|(_, (state, leases, _))| state == "pending" && *leases >= 1)
            .map(|(id, _)| id)
            .collect();
        if !held.is_empty() {
            return held;
        }
    }
}

fn a_coordinator_killed_mid_job_resumes_from_its_database(case: &FamilyCase) {
    let dir = case.dir("killcoord");
    let port = common::free_port();
    let url = format!("http://127.0.0.1:{port}");
    let db = dir.path("coord.db");
    let mut coord = case.start_coordinator(&dir, port, "coordinator-1.log", &[]);
    wait_coordinator(&url, Duration::from_secs(20));
    let job = case.submit(&url);
    let mut workers = vec![
        start_worker(&dir, &url, "w1"),
        start_worker(&dir, &url, "w2"),
    ];
    wait_status(&url, job, case.first_units_within, |s| {
        s["units_done"].as_u64().unwrap() >= case.units_before_coordinator_kill
    });
    // The workers stay frozen while the coordinator dies.
    freeze_and_check_answer_so_far(&mut workers, &url, job, &db);
    coord.sigkill();
    assert_eq!(job_state(&db, job), "running", "the kill came mid-job");
    let before = units(&db);
    let done_before = ids_in_state(&before, "done");
    assert!(!done_before.is_empty());
    let cancelled_before = ids_in_state(&before, "cancelled").len();

    // Same database, same address: the workers reconnect by themselves.
    let http = format!("127.0.0.1:{}", common::free_port());
    let _coord2 = case.start_coordinator(&dir, port, "coordinator-2.log", &["--http", &http]);
    for w in &mut workers {
        w.signal("CONT");
    }
    let s = wait_status(&url, job, case.finish_within, |s| s["state"] == "done");
    assert_eq!(s["state"], "done");
    (case.assert_same_answer)(&final_results(&url, job));
    // The dashboard's picture of the tree counts every unit resolved,
    // before the restart too (cancelled ones are not loaded as units).
    assert_eq!(
        common::units_drawn_in_tree(&format!("http://{http}"), job),
        s["units_done"].as_u64().unwrap(),
        "units drawn in the tree against units resolved"
    );
    if case.cancels_units {
        assert!(
            cancelled_before > 0,
            "units were cancelled before the kill, so the tree check above means something"
        );
    }

    // Nothing completed before the kill was run again.
    let after = units(&db);
    assert_done_units_kept(&before, &after, "before the kill");
    // And the restarted coordinator did run units (the job was not done).
    assert!(ids_in_state(&after, "done").len() > done_before.len());
}

/// Both faults in one job: a worker dies part way through a unit
/// ([`kill_a_lone_victim_mid_unit`]), then, while the others work on, the
/// coordinator dies and comes back on its database. The answer so far
/// just before the coordinator's kill and the final answer must be the
/// merge of the results done, each once, and the final one the single
/// process's; the victim's units are done by others, and nothing done
/// before the coordinator's kill is searched again.
fn a_worker_then_the_coordinator_killed_mid_job_lose_nothing(case: &FamilyCase) {
    let dir = case.dir("killboth");
    let port = common::free_port();
    let url = format!("http://127.0.0.1:{port}");
    let http = format!("127.0.0.1:{}", common::free_port());
    let db = dir.path("coord.db");
    // Heartbeats (each running unit's progress) every 0.05 s: a unit of a
    // fraction of a second is seen part way through.
    let mut coord = case.start_coordinator(
        &dir,
        port,
        "coordinator-1.log",
        &["--http", &http, "--heartbeat-interval", "0.05"],
    );
    wait_coordinator(&url, Duration::from_secs(20));
    let job = case.submit(&url);
    let (mut survivors, held) = kill_a_lone_victim_mid_unit(case, &dir, &url, &http, job);

    // The survivors report a few more units, then stop (SIGSTOP) while
    // the coordinator dies.
    let done = common::units_done(&url, job);
    wait_status(&url, job, case.first_units_within, |s| {
        s["units_done"].as_u64().unwrap() >= done + 5 || s["state"] == "done"
    });
    // The victim's unit, say, merged twice would show here.
    freeze_and_check_answer_so_far(&mut survivors, &url, job, &db);
    coord.sigkill();
    assert_eq!(job_state(&db, job), "running", "the kill came mid-job");
    let before = units(&db);

    // Same database, same address: the survivors reconnect by themselves.
    let _coord2 = case.start_coordinator(&dir, port, "coordinator-2.log", &[]);
    for w in &mut survivors {
        w.signal("CONT");
    }
    let s = wait_status(&url, job, case.finish_within, |s| s["state"] == "done");
    assert_eq!(s["units_pending"], 0);
    (case.assert_same_answer)(&final_results(&url, job));
    let after = units(&db);
    assert_done_units_kept(&before, &after, "before the coordinator's kill");
    assert!(
        ids_in_state(&after, "done").len() > ids_in_state(&before, "done").len(),
        "the restarted coordinator ran units"
    );
    for id in held {
        let (state, leases, _) = &after[&id];
        assert!(
            (state == "done" && *leases >= 2) || (case.cancels_units && state == "cancelled"),
            "the victim's unit {id} ended {state} after {leases} leases"
        );
    }
}

/// Starts the victim alone and freezes it (SIGSTOP) part way through a
/// unit: holding one, with some of its nodes explored ([`nodes_in_hand`]).
/// It is frozen as soon as the coordinator sees it so, and if a report
/// overtook the freeze it is thawed and watched again. Alone, the job moves
/// only while the victim does, so however fast the machine, much of it is
/// left after the kill. Then two survivors start, and once a unit has been
/// leased again (its lease expired; only the victim had leased any), the
/// victim is killed. Returns the survivors and the units leased again.
fn kill_a_lone_victim_mid_unit(
    case: &FamilyCase,
    dir: &TempDir,
    url: &str,
    http: &str,
    job: u64,
) -> (Vec<Proc>, Vec<i64>) {
    let db = dir.path("coord.db");
    let mut victim = start_worker(dir, url, "victim");
    let mut attempts = 0;
    loop {
        let deadline = Instant::now() + case.first_units_within;
        while nodes_in_hand(http, &db, "victim") == 0 {
            assert!(
                Instant::now() < deadline,
                "the victim was never seen part way through a unit: {:?}",
                common::status(url, job)
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        victim.signal("STOP");
        // A report or a heartbeat on its way lands.
        std::thread::sleep(Duration::from_millis(300));
        if units_held_by(http, "victim") > 0 && nodes_in_hand(http, &db, "victim") > 0 {
            break;
        }
        victim.signal("CONT");
        attempts += 1;
        assert!(attempts < 50, "the victim was never frozen mid-unit");
    }
    let s = common::status(url, job).unwrap();
    assert_eq!(s["state"], "running", "the victim froze mid-job: {s}");
    let survivors = vec![
        start_worker(dir, url, "survivor"),
        start_worker(dir, url, "third"),
    ];
    // The lease TTL is 2 s.
    let deadline = Instant::now() + Duration::from_secs(20);
    while releases(&db) == 0 {
        assert!(
            Instant::now() < deadline,
            "the victim's lease never went to another worker"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    victim.sigkill();
    let held: Vec<i64> = units(&db)
        .into_iter()
        .filter(|(_, (_, leases, _))| *leases >= 2)
        .map(|(id, _)| id)
        .collect();
    (survivors, held)
}

/// Every unit done in `before` is done in `after` with the same lease count
/// and result: it was not searched again.
fn assert_done_units_kept(
    before: &std::collections::HashMap<i64, common::db::Unit>,
    after: &std::collections::HashMap<i64, common::db::Unit>,
    when: &str,
) {
    for id in ids_in_state(before, "done") {
        let (state, leases, summary) = &before[&id];
        let (state_after, leases_after, summary_after) = &after[&id];
        assert_eq!(state_after, state);
        assert_eq!(
            leases_after, leases,
            "unit {id} done {when} was leased again"
        );
        assert_eq!(summary_after, summary, "unit {id} result changed");
    }
}

fn sigterm_makes_a_worker_hand_back_its_work_and_exit_cleanly(case: &FamilyCase) {
    let dir = case.dir("sigterm");
    let port = common::free_port();
    let url = format!("http://127.0.0.1:{port}");
    let _coord = case.start_coordinator(&dir, port, "coordinator.log", &[]);
    wait_coordinator(&url, Duration::from_secs(20));
    let job = case.submit(&url);
    let mut w = start_worker(&dir, &url, "leaver");
    wait_status(&url, job, case.first_units_within, |s| {
        s["units_done"].as_u64().unwrap() >= 5
    });
    w.sigterm();
    let status = w
        .wait_for(Duration::from_secs(20))
        .expect("worker exits after SIGTERM");
    assert!(status.success(), "clean exit: {status:?}");
    // Its leases came back at once: nothing is left running.
    let s = wait_status(&url, job, Duration::from_secs(5), |s| {
        s["units_running"] == 0
    });
    assert_eq!(s["state"], "running");
    let _w2 = start_worker(&dir, &url, "finisher");
    wait_status(&url, job, case.finish_within, |s| s["state"] == "done");
    (case.assert_same_answer)(&final_results(&url, job));
    // The coordinator's own estimate of the job's size (Knuth's probes,
    // unbiased where the horizon is fixed) is within its error bar.
    if let Some(true_nodes) = case.true_nodes {
        let s = common::status(&url, job).unwrap();
        let (est, err) = (
            s["estimated_nodes"].as_f64().unwrap(),
            s["estimated_nodes_error"].as_f64().unwrap(),
        );
        let truth = true_nodes();
        assert!(est > 0.0 && err > 0.0, "an estimate was made: {s}");
        assert!(
            (est - truth).abs() <= 5.0 * err,
            "estimate {est} +- {err} vs true {truth}"
        );
    }
}

fn a_backup_taken_mid_job_resumes_when_the_disk_is_lost(case: &FamilyCase) {
    let disk = case.dir("backupdisk");
    let other = case.dir("backupother");
    let port = common::free_port();
    let url = format!("http://127.0.0.1:{port}");
    let db = disk.path("coord.db");
    let copy = other.path("coord.db");
    let mut coord = case.start_coordinator(&disk, port, "coordinator-1.log", &[]);
    wait_coordinator(&url, Duration::from_secs(20));
    let job = case.submit(&url);
    let mut w1 = start_worker(&disk, &url, "w1");
    let mut w2 = start_worker(&disk, &url, "w2");
    wait_status(&url, job, case.first_units_within, |s| {
        s["units_done"].as_u64().unwrap() >= 40
    });
    // Taken while the coordinator writes and the workers report.
    backup(&db, &copy);
    // Work goes on after the backup, then the machine and its disk are lost.
    let done_at_backup = ids_in_state(&units(&copy), "done").len();
    wait_status(&url, job, case.first_units_within, |s| {
        s["units_done"].as_u64().unwrap() as usize >= done_at_backup + 20
    });
    // Before the loss, the answer so far against the database.
    freeze_and_check_answer_so_far([&mut w1, &mut w2], &url, job, &db);
    coord.sigkill();
    w1.sigkill();
    w2.sigkill();
    assert_eq!(job_state(&copy, job), "running", "the backup came mid-job");
    let before = units(&copy);
    assert!(before.values().any(|u| u.0 == "done"));
    assert!(before.values().any(|u| u.0 == "pending"));
    drop(disk);

    // The backup on the other disk resumes the job.
    let port = common::free_port();
    let url = format!("http://127.0.0.1:{port}");
    let _coord = case.start_coordinator(&other, port, "coordinator-2.log", &[]);
    wait_coordinator(&url, Duration::from_secs(20));
    let _w3 = start_worker(&other, &url, "w3");
    let _w4 = start_worker(&other, &url, "w4");
    wait_status(&url, job, case.finish_within, |s| s["state"] == "done");
    (case.assert_same_answer)(&final_results(&url, job));
    // What the backup held as done was not searched again.
    assert_done_units_kept(&before, &units(&copy), "in the backup");
}

/// knight-tours' meeting parts (`--method halves`) through worker
/// processes, one of them killed holding a part: the units name their part
/// instead of carrying states, so every stored unit is a few dozen bytes
/// (the root's report carries one per part); the part whose lease expired
/// is met again by a worker that never swept the root, which rebuilds the
/// meeting layer; the count is the depth-first search's and the nodes are
/// the single process's (nothing counted twice; the rebuilds only in
/// `rebuilt_states`, a whole number of half sweeps).
#[test]
fn knight_tours_meeting_parts_survive_a_killed_worker() {
    use orchard_core::{explore_all, Exploration, Host, LocalFlags, SearchFamily};
    use orchard_knight_tours::{KnightParams, KnightTours, Method};

    let dir = TempDir::new("knightparts");
    let port = common::free_port();
    let url = format!("http://127.0.0.1:{port}");
    let _coord = common::start_coordinator_with(&dir, port, &["--lease-ttl", "2"]);
    wait_coordinator(&url, Duration::from_secs(20));
    let part_states = 50;
    let job = common::submit_job(
        &url,
        &[
            "knight-tours",
            "--rows",
            "6",
            "--cols",
            "6",
            "--meet-part-states",
            &part_states.to_string(),
        ],
    );
    let held = kill_lone_victims(&dir, &url, job, Duration::from_secs(120), 5);
    let _survivor = start_worker(&dir, &url, "survivor");
    let s = wait_status(&url, job, Duration::from_secs(120), |s| {
        s["state"] == "done"
    });
    assert_eq!(s["units_pending"], 0);
    let db = dir.path("coord.db");
    let after = units(&db);
    for id in held {
        let (state, leases, _) = &after[&id];
        assert!(
            state == "done" && *leases >= 2,
            "the victim's unit {id} ended {state} after {leases} leases"
        );
    }
    // The single process: the half sweep, then the parts.
    let j = KnightTours::new(
        KnightParams {
            rows: 6,
            cols: 6,
            max_states: orchard_knight_tours::DEFAULT_MAX_STATES,
            method: Method::Halves,
            meet_part_states: part_states,
        },
        &Host::default(),
    )
    .unwrap();
    let flags = LocalFlags::default();
    let Exploration::Split { explored, rest } = j
        .explore(&j.root_units()[0], &flags.context(u64::MAX))
        .unwrap()
    else {
        panic!("6 x 6: the root met its layer itself");
    };
    let half = explored.nodes;
    let local = explore_all(&j, j.root_units(), u64::MAX).unwrap();
    // Every unit stored is small: the root, then one per part.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let (count, largest): (i64, i64) = conn
        .query_row(
            "SELECT count(*), max(length(payload)) FROM units",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(count as usize, 1 + rest.len());
    assert!(rest.len() > 20, "{} parts", rest.len());
    assert!(largest <= 48, "a unit of {largest} bytes");
    let r = final_results(&url, job);
    assert_eq!(r["tours_u64"], 9862, "{r}");
    assert_eq!(r["nodes"], local.nodes, "{r}");
    let rebuilt = r["rebuilt_states"].as_u64().unwrap();
    assert!(
        rebuilt >= half && rebuilt.is_multiple_of(half),
        "{rebuilt} states rebuilt, the half sweep is {half}"
    );
}
