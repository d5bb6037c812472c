//! `orchard run`: the embedded default. One process holds a coordinator on a
//! local database, listening on loopback only, and local workers that reach
//! it over real gRPC, exactly as remote workers would.

use std::error::Error;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use orchard_coordinator::{
    Coordinator, CoordinatorConfig, CoordinatorError, JobAnswer, JobState, JobStatus,
};
use orchard_core::{FamilyError, Registry};
use orchard_proto::MAX_LEMMA_UPLOAD_BYTES;
use orchard_worker::{run_worker, OpenJobs, WorkerConfig, WorkerError, WorkerStats};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::serve::{backup_schedule, check_db_parent, hostname, open_jobs};
use super::{termination, CliResult};
use crate::cli::{FamilyChoice, RunArgs};
use crate::output::{duration, progress_line};

/// `$ORCHARD_HOME/orchard.db`, `$ORCHARD_HOME` defaulting to
/// `$XDG_DATA_HOME/orchard` or `~/.local/share/orchard`.
fn default_db() -> Result<PathBuf, String> {
    let home = if let Some(h) = std::env::var_os("ORCHARD_HOME") {
        PathBuf::from(h)
    } else if let Some(x) = std::env::var_os("XDG_DATA_HOME") {
        PathBuf::from(x).join("orchard")
    } else if let Some(h) = std::env::var_os("HOME") {
        PathBuf::from(h).join(".local/share/orchard")
    } else {
        return Err(
            "no database given and neither ORCHARD_HOME nor HOME is set; use --db PATH".into(),
        );
    };
    std::fs::create_dir_all(&home).map_err(|e| format!("cannot create {}: {e}", home.display()))?;
    Ok(home.join("orchard.db"))
}

pub async fn run(args: RunArgs, family: FamilyChoice, registry: Registry) -> CliResult {
    // The local workers' jobs, and their cache directory checked: a damaged
    // snapshot stops the run before it touches the database.
    let open_jobs = open_jobs(&args.cache, &args.programs, registry.clone())?;
    let db = match &args.db {
        Some(p) => p.clone(),
        None => default_db()?,
    };
    check_db_parent(&db)?;
    let workers = local_workers(args.workers)?;
    let config = coordinator_config(&args, &db, registry)?;
    let started = Instant::now();
    let coordinator = Coordinator::open(&db, config).await?;
    let replicas = args.replicas.replicas;
    take_up_failed_job(&coordinator, &family, replicas, &args, &db).await?;
    let (job_id, existing) = coordinator
        .submit(family.family, &family.params_json, replicas)
        .await?;
    let mut cluster = Embedded::serve(&coordinator, args.http.as_deref()).await?;

    let initial = coordinator.status(job_id).ok_or("job vanished")?;
    let run = ThisRun {
        job_id,
        existing,
        initial: initial.state,
        started,
    };
    if !args.json && initial.state == JobState::Running {
        announce(&run, &initial, &db, workers);
    }
    let (mut saver, mut observer) = (None, None);
    if initial.state == JobState::Running {
        // One set of open jobs for all local workers: they share each job's
        // in-process state (the hip-solve table).
        saver = open_jobs.spawn_saver();
        cluster.start_workers(workers, &open_jobs);
        observer = Some(spawn_lemma_observer(&coordinator, &open_jobs, &initial));
    }

    let interrupted = match follow_progress(&coordinator, job_id, args.json, &cluster).await {
        Ok(interrupted) => interrupted,
        Err(e) => {
            cluster.stop().await;
            return Err(e);
        }
    };
    let answer = coordinator.answer(job_id).ok_or("job vanished")?;
    let since_last_report = coordinator.since_last_report(job_id);
    for task in saver.into_iter().chain(observer) {
        task.abort();
    }
    if interrupted {
        cluster.stop().await;
        // The workers have handed back their rest: keep what their caches
        // learned since the last periodic save for the resume.
        let _ = tokio::task::spawn_blocking(move || open_jobs.save_caches()).await;
        return say_interrupted(&coordinator, job_id, &db);
    }
    let status = &answer.status;
    if !answer.is_final {
        cluster.stop().await;
        return Err(format!("job {job_id} {}: {}", status.state, status.error).into());
    }
    if args.json {
        let mut obj = answer.to_json();
        obj["elapsed_secs"] = serde_json::json!(started.elapsed().as_secs_f64());
        obj["resumed"] = serde_json::json!(existing);
        println!("{obj}");
    } else {
        print_answer(&answer, &run, since_last_report);
    }
    cluster.stop().await;
    Ok(ExitCode::SUCCESS)
}

/// How often the run shows its job the lemmas its local workers proved: as
/// often as a remote worker trades its own (`orchard_worker`'s lemma loop).
const LEMMA_OBSERVE_INTERVAL: Duration = Duration::from_millis(250);

/// Shows the job the lemmas its local workers prove, four times a second,
/// until aborted. They share one table and so trade none (nothing is
/// stored), yet the job schedules by them as by a remote worker's:
/// `hip-solve` guesses the winner from its eldest line's values long
/// before a unit reports (docs/notes/hip-across-machines.md, "The guess
/// from lemmas"). Best effort: lemmas only order the search, so a blob
/// the job refuses is logged and the next round goes on.
fn spawn_lemma_observer(
    coordinator: &Coordinator,
    jobs: &Arc<OpenJobs>,
    job: &JobStatus,
) -> JoinHandle<()> {
    let (coordinator, jobs) = (coordinator.clone(), jobs.clone());
    let (job_id, family, params) = (job.job_id, job.family.clone(), job.params_json.clone());
    tokio::spawn(async move {
        let mut interval = tokio::time::interval(LEMMA_OBSERVE_INTERVAL);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            interval.tick().await;
            // Open once a local worker has leased a unit of the job.
            let Some(prepared) = jobs.get(&family, &params) else {
                continue;
            };
            if prepared.lemmas().is_none() {
                return;
            }
            let coordinator = coordinator.clone();
            let shown = tokio::task::spawn_blocking(move || -> Result<(), FamilyError> {
                let Some(exchange) = prepared.lemmas() else {
                    return Ok(());
                };
                loop {
                    let blob = exchange.take(MAX_LEMMA_UPLOAD_BYTES);
                    if blob.is_empty() {
                        return Ok(());
                    }
                    coordinator.observe_lemmas(job_id, &blob)?;
                    if blob.len() < MAX_LEMMA_UPLOAD_BYTES / 2 {
                        return Ok(());
                    }
                }
            })
            .await;
            match shown {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    tracing::warn!(job = job_id, "local lemmas not shown to the job: {e}")
                }
                Err(e) => {
                    tracing::warn!(job = job_id, "showing local lemmas to the job failed: {e}")
                }
            }
        }
    })
}

/// How many local workers: `--workers`, else one per core.
fn local_workers(asked: Option<usize>) -> Result<usize, Box<dyn Error>> {
    match asked {
        Some(0) => Err("--workers must be at least 1".into()),
        Some(n) => Ok(n),
        None => Ok(std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)),
    }
}

/// The embedded coordinator's settings: its files beside the database,
/// with what the command line changes.
fn coordinator_config(
    args: &RunArgs,
    db: &Path,
    registry: Registry,
) -> Result<CoordinatorConfig, Box<dyn Error>> {
    let mut config = CoordinatorConfig::beside(db, registry);
    if let Some(b) = args.unit_budget {
        if b == 0 {
            return Err("--unit-budget must be at least 1".into());
        }
        config.unit_budget = b;
    }
    config.backup = backup_schedule(&args.backup)?;
    if let Some(dir) = &args.results_dir {
        config.results_dir = dir.clone();
    }
    Ok(config)
}

/// A failed job of these parameters before the run submits its own:
/// taken up again with `--retry`, else named, so that the new job the run
/// starts is not mistaken for the old one continuing. A running or
/// finished job of these parameters is resumed or answers, whatever
/// failed before it.
async fn take_up_failed_job(
    coordinator: &Coordinator,
    family: &FamilyChoice,
    replicas: u32,
    args: &RunArgs,
    db: &Path,
) -> Result<(), Box<dyn Error>> {
    let identical = coordinator.existing_job(family.family, &family.params_json, replicas);
    match (
        identical,
        coordinator.failed_job(family.family, &family.params_json, replicas),
    ) {
        (Some(_), _) => {}
        (None, Some((failed, _))) if args.retry => {
            let (pending, done) = coordinator.retry(failed).await?;
            if !args.json {
                eprintln!("retrying job {failed}: {pending} units to search, {done} done");
            }
        }
        (None, Some((failed, error))) => eprintln!(
            "note: job {failed} of these parameters failed ({error}); this run is a new job \
             (--retry continues job {failed} from where it stopped)"
        ),
        (None, None) if args.retry => {
            return Err(format!(
                "--retry: no failed job of these parameters in {}",
                db.display()
            )
            .into())
        }
        (None, None) => {}
    }
    Ok(())
}

/// This run of its job, for what the run says about it.
struct ThisRun {
    job_id: u64,
    /// The job was in the database already: resumed, or answered from it.
    existing: bool,
    /// Its state when the run began.
    initial: JobState,
    /// When the run began.
    started: Instant,
}

/// The first line of a run whose job is running: whether it resumes a
/// stored job (and how far it was) or starts one.
fn announce(run: &ThisRun, initial: &JobStatus, db: &Path, workers: usize) {
    let job_id = run.job_id;
    if run.existing {
        eprintln!(
            "resuming job {job_id} from {}: {}",
            db.display(),
            progress_line(initial)
        );
    } else {
        eprintln!(
            "job {job_id} in {} with {workers} local workers",
            db.display()
        );
    }
}

/// The coordinator's loopback server (and dashboard, when asked for) and
/// the local workers, run in this process. They reach it over real gRPC,
/// as remote workers would, and stop together: the workers first, so that
/// they hand their rest back to a server still listening.
struct Embedded {
    /// Where the local workers reach the coordinator.
    url: String,
    stop_server: watch::Sender<bool>,
    server: JoinHandle<Result<(), CoordinatorError>>,
    stop_workers: watch::Sender<bool>,
    workers: Vec<JoinHandle<Result<WorkerStats, WorkerError>>>,
}

impl Embedded {
    /// Serves `coordinator` on loopback only (it needs no token there), and
    /// its dashboard on `http` if given; no worker yet.
    async fn serve(
        coordinator: &Coordinator,
        http: Option<&str>,
    ) -> Result<Embedded, Box<dyn Error>> {
        let listener = Coordinator::bind("127.0.0.1:0").await?;
        let url = format!("http://{}", listener.local_addr()?);
        let (stop_server, server_stopped) = watch::channel(false);
        let server = {
            let coordinator = coordinator.clone();
            let stop = when_stopped(&server_stopped);
            tokio::spawn(async move { coordinator.serve(listener, stop).await })
        };
        if let Some(addr) = http {
            let http = Coordinator::bind(addr).await?;
            eprintln!("dashboard and metrics on http://{}/", http.local_addr()?);
            let c = coordinator.clone();
            let stop = when_stopped(&server_stopped);
            tokio::spawn(async move {
                if let Err(e) = c.serve_http(http, stop).await {
                    tracing::error!("dashboard: {e}");
                }
            });
        }
        Ok(Embedded {
            url,
            stop_server,
            server,
            stop_workers: watch::channel(false).0,
            workers: Vec::new(),
        })
    }

    /// Starts `count` local workers of one thread each, sharing `jobs`.
    fn start_workers(&mut self, count: usize, jobs: &Arc<OpenJobs>) {
        let workers_stop = self.stop_workers.subscribe();
        for i in 0..count {
            let config = WorkerConfig {
                coordinator: self.url.clone(),
                jobs: jobs.clone(),
                threads: 1,
                name: format!("{}-local-{i}", hostname()),
                // Never: the coordinator lives in this process, so a call
                // that times out means it is starved (a long run at nice 19
                // under other work), not gone; a worker that gave up would
                // leave the run alive, idle and unfinished.
                give_up_after: Duration::MAX,
                // The embedded coordinator listens on loopback only and
                // needs no token.
                token: None,
                tls: Default::default(),
                metrics: Default::default(),
                // The workers of one process share its memory (the
                // hip-solve table) already.
                lemma_interval: None,
            };
            let stop = when_stopped(&workers_stop);
            self.workers
                .push(tokio::spawn(async move { run_worker(config, stop).await }));
        }
    }

    /// Whether local workers were started and every one has ended (a
    /// worker ends on its own only on an error, logged when it is joined).
    fn workers_ended(&self) -> bool {
        !self.workers.is_empty() && self.workers.iter().all(|h| h.is_finished())
    }

    /// Stops the workers (they hand back their rest, if interrupted), then
    /// the server and the dashboard.
    async fn stop(self) {
        let _ = self.stop_workers.send(true);
        for h in self.workers {
            match h.await {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => tracing::warn!("local worker: {e}"),
                Err(e) => tracing::warn!("local worker task: {e}"),
            }
        }
        let _ = self.stop_server.send(true);
        let _ = self.server.await;
    }
}

/// Completes once `stop` turns true: the shutdown each embedded task
/// waits on.
fn when_stopped(stop: &watch::Receiver<bool>) -> impl Future<Output = ()> + Send + 'static {
    let mut rx = stop.clone();
    async move {
        let _ = rx.wait_for(|&s| s).await;
    }
}

/// Shows the job's progress on a spinner (none with `--json`) until it is
/// over or the run is interrupted (SIGINT, SIGTERM): `true` when
/// interrupted. Woken by a job's end, else every 200 ms. An error if every
/// local worker has ended while the job still runs: the run would otherwise
/// wait, alive and idle, for ever.
async fn follow_progress(
    coordinator: &Coordinator,
    job_id: u64,
    json: bool,
    cluster: &Embedded,
) -> Result<bool, Box<dyn Error>> {
    let bar = if json {
        ProgressBar::hidden()
    } else {
        ProgressBar::new_spinner()
    };
    bar.set_style(
        ProgressStyle::with_template("{spinner} {elapsed_precise} {msg}").expect("valid template"),
    );
    let mut interrupted = false;
    let interrupt = termination();
    tokio::pin!(interrupt);
    loop {
        let s = coordinator.status(job_id).ok_or("job vanished")?;
        if s.state != JobState::Running {
            break;
        }
        // Workers may end once the job has (they find nothing running):
        // the job's state is read again after theirs.
        let running = || coordinator.status(job_id).map(|s| s.state) == Some(JobState::Running);
        if cluster.workers_ended() && running() {
            bar.finish_and_clear();
            return Err(format!(
                "every local worker stopped while job {job_id} runs (see the log); \
                 it is saved, run the same command to resume"
            )
            .into());
        }
        bar.set_message(progress_line(&s));
        bar.tick();
        let finished = coordinator.job_finished();
        tokio::select! {
            _ = &mut interrupt => { interrupted = true; break; }
            _ = finished => {}
            _ = tokio::time::sleep(Duration::from_millis(200)) => {}
        }
    }
    bar.finish_and_clear();
    Ok(interrupted)
}

/// An interrupted run, its workers stopped: the job is saved, the same
/// command resumes it, and the answer so far is shown (not final). Exit
/// code 130, a shell's for SIGINT.
fn say_interrupted(coordinator: &Coordinator, job_id: u64, db: &Path) -> CliResult {
    let so_far = coordinator.answer(job_id).ok_or("job vanished")?;
    eprintln!(
        "interrupted: job {job_id} saved in {} ({}); run the same command to resume",
        db.display(),
        progress_line(&so_far.status)
    );
    if !so_far.result.is_null() {
        eprintln!("the answer so far (not final):");
        for line in so_far.text {
            eprintln!("  {line}");
        }
    }
    Ok(ExitCode::from(130))
}

/// The final answer for people: its lines, its results file, and how long
/// the job took. A resumed job's time in this process is not its time, so
/// both are said; `since_last_report` is how long the answer took after the
/// last unit's report.
fn print_answer(answer: &JobAnswer, run: &ThisRun, since_last_report: Option<Duration>) {
    let (job_id, status) = (run.job_id, &answer.status);
    for line in &answer.text {
        println!("{line}");
    }
    println!("results file: {}", answer.results_file);
    let latency = since_last_report
        .map(|d| {
            format!(
                ", answer {:.1} ms after the last unit's report",
                d.as_secs_f64() * 1000.0
            )
        })
        .unwrap_or_default();
    let since_submitted = duration(
        status
            .finished_unix_ms
            .saturating_sub(status.created_unix_ms) as f64
            / 1000.0,
    );
    if run.initial == JobState::Done {
        println!("job {job_id} was already done: {since_submitted} from submission to answer");
    } else if run.existing {
        println!(
            "job {job_id} done: {:.1} s in this run, {since_submitted} from submission to answer (stops included){latency}",
            run.started.elapsed().as_secs_f64()
        );
    } else {
        println!(
            "job {job_id} done in {:.1} s{latency}",
            run.started.elapsed().as_secs_f64()
        );
    }
}
