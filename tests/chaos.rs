//! Chaos as a test: a real job (h'(4) with `--min-length`, whose node count
//! does not depend on how the tree was cut, so a unit lost or counted twice
//! shows) runs on a real coordinator and three real workers while a seeded
//! schedule SIGKILLs them at random, at least 30 times, and restarts each
//! victim at once (the coordinator on the same address and database, a
//! worker under the same name). The answer must be byte for byte the one a
//! clean run gives: the results file, the node count, the histogram.
//!
//! The schedule comes from `ORCHARD_CHAOS_SEED` (default fixed, printed on
//! failure) and the number of rounds from `ORCHARD_CHAOS_ROUNDS` (default
//! 1; `bench/chaos.sh` runs many, each round a fresh job with the next
//! seed, and records the table in BENCHMARKS.md).

mod common;

use std::time::{Duration, Instant};

use common::hc::{assert_same_answer, JOB, UNIT_BUDGET};
use common::{
    final_results, free_port, run_json, start_coordinator_logging_to, start_worker_logging_to,
    status, submit_job, wait_coordinator, Proc, TempDir,
};

/// Kills per round, at the least.
const MIN_KILLS: u32 = 30;
const WORKERS: usize = 3;

/// SplitMix64: the schedule's random numbers, reproducible from the seed.
struct Schedule(u64);

impl Schedule {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?}: not a number")),
        Err(_) => default,
    }
}

/// What one round did.
#[derive(Default)]
struct Round {
    coordinator_kills: u32,
    worker_kills: u32,
    /// From a coordinator's restart to its first answer, each time.
    recoveries: Vec<Duration>,
    wall: Duration,
}

/// The clean run's results file and JSON, computed once.
fn clean_run() -> &'static (serde_json::Value, Vec<u8>) {
    static CLEAN: std::sync::OnceLock<(serde_json::Value, Vec<u8>)> = std::sync::OnceLock::new();
    CLEAN.get_or_init(|| {
        let dir = TempDir::new("chaos-clean");
        let db = dir.path("clean.db");
        let mut args = vec!["run"];
        args.extend_from_slice(JOB);
        args.extend_from_slice(&[
            "--db",
            db.to_str().unwrap(),
            "--workers",
            "2",
            "--unit-budget",
            UNIT_BUDGET,
            "--json",
        ]);
        let json = run_json(&args);
        let file = std::fs::read(json["results_file"].as_str().unwrap()).unwrap();
        (json, file)
    })
}

fn chaos_round(seed: u64) -> Round {
    // First, before the chaos cluster starts its job.
    let (clean, clean_file) = clean_run();
    let mut rng = Schedule(seed);
    let dir = TempDir::new("chaos");
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let budget = ["--unit-budget", UNIT_BUDGET];
    let mut lives = 1;
    let mut coordinator = start_coordinator_logging_to(&dir, port, "coordinator-1.log", &budget);
    wait_coordinator(&url, Duration::from_secs(20));
    let job = submit_job(&url, JOB);
    let worker = |name: &str, life: u32| {
        start_worker_logging_to(&dir, &url, name, &format!("{name}-{life}"), &[])
    };
    let names: Vec<String> = (1..=WORKERS).map(|i| format!("w{i}")).collect();
    let mut worker_lives = [1u32; WORKERS];
    let mut workers: Vec<Proc> = names.iter().map(|n| worker(n, 1)).collect();

    // The kills fall at random points of the job's progress, between 2%
    // and 60% of its nodes (known from the clean run): so all of them hit
    // a running job however fast the machine, and the job has the rest to
    // finish under the restarted processes.
    let total = clean["nodes"].as_f64().unwrap();
    let mut points: Vec<f64> = (0..MIN_KILLS)
        .map(|_| total * (0.02 + 0.58 * rng.below(1 << 20) as f64 / f64::from(1 << 20)))
        .collect();
    points.sort_by(f64::total_cmp);
    let mut points = points.into_iter().peekable();

    let started = Instant::now();
    let mut round = Round::default();
    let deadline = started + Duration::from_secs(600);
    loop {
        assert!(
            Instant::now() < deadline,
            "seed {seed}: the job did not finish within 10 minutes of chaos"
        );
        let Some(s) = status(&url, job) else {
            std::thread::sleep(Duration::from_millis(20));
            continue;
        };
        assert_ne!(s["state"], "failed", "seed {seed}: {s}");
        if s["state"] == "done" {
            break;
        }
        let nodes = s["nodes"].as_f64().unwrap_or(0.0);
        if points.next_if(|&p| p <= nodes).is_none() {
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        // A little jitter, then a victim: the coordinator one time in four.
        std::thread::sleep(Duration::from_millis(rng.below(50)));
        if rng.below(4) == 0 {
            coordinator.sigkill();
            round.coordinator_kills += 1;
            lives += 1;
            let restarted = Instant::now();
            coordinator = start_coordinator_logging_to(
                &dir,
                port,
                &format!("coordinator-{lives}.log"),
                &budget,
            );
            wait_coordinator(&url, Duration::from_secs(30));
            round.recoveries.push(restarted.elapsed());
        } else {
            let k = rng.below(WORKERS as u64) as usize;
            workers[k].sigkill();
            round.worker_kills += 1;
            worker_lives[k] += 1;
            workers[k] = worker(&names[k], worker_lives[k]);
        }
    }
    round.wall = started.elapsed();

    let result = final_results(&url, job);
    assert_eq!(
        result["state"], "done",
        "seed {seed}: the job finished ({result})"
    );
    // Every kill came while the job was running (the loop stops killing
    // once it is done), so fewer than planned means the job finished first.
    assert!(
        round.coordinator_kills + round.worker_kills >= MIN_KILLS,
        "seed {seed}: the job finished after only {} kills",
        round.coordinator_kills + round.worker_kills
    );
    for key in ["nodes", "histogram", "maximal_count", "max_length"] {
        assert_eq!(result[key], clean[key], "seed {seed}: {key}");
    }
    assert_same_answer(&result);
    let file = std::fs::read(result["results_file"].as_str().unwrap()).unwrap();
    assert!(
        file == *clean_file,
        "seed {seed}: the results file differs from the clean run's"
    );
    drop(workers);
    drop(coordinator);
    round
}

#[test]
fn a_job_under_random_kills_answers_byte_for_byte_as_a_clean_run() {
    let seed = env_u64("ORCHARD_CHAOS_SEED", 20261124);
    let rounds = env_u64("ORCHARD_CHAOS_ROUNDS", 1);
    let mut all = Round::default();
    for r in 0..rounds {
        let round = chaos_round(seed.wrapping_add(r));
        assert!(round.coordinator_kills + round.worker_kills >= MIN_KILLS);
        assert!(
            round.coordinator_kills > 0 && round.worker_kills > 0,
            "seed {}: both kinds killed",
            seed.wrapping_add(r)
        );
        all.coordinator_kills += round.coordinator_kills;
        all.worker_kills += round.worker_kills;
        all.recoveries.extend(round.recoveries);
        all.wall += round.wall;
    }
    let max = all.recoveries.iter().max().copied().unwrap_or_default();
    let mean = all.recoveries.iter().sum::<Duration>() / all.recoveries.len().max(1) as u32;
    // One line for bench/chaos.sh to record.
    println!(
        "chaos: seed {seed}, {rounds} rounds, {} coordinator kills, {} worker kills, \
         results lost 0, results wrong 0, coordinator back in {:.0} ms mean / {:.0} ms max, \
         {:.1} s of chaos",
        all.coordinator_kills,
        all.worker_kills,
        mean.as_secs_f64() * 1e3,
        max.as_secs_f64() * 1e3,
        all.wall.as_secs_f64()
    );
}
