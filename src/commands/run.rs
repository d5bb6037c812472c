//! `orchard run`: the embedded default. One process holds a coordinator on a
//! local database, listening on loopback only, and local workers that reach
//! it over real gRPC, exactly as remote workers would.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use orchard_coordinator::{Coordinator, CoordinatorConfig, JobState};
use orchard_core::Registry;
use orchard_worker::{run_worker, WorkerConfig};
use tokio::sync::watch;

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
    let db = match args.db {
        Some(p) => p,
        None => default_db()?,
    };
    check_db_parent(&db)?;
    let workers = match args.workers {
        Some(0) => return Err("--workers must be at least 1".into()),
        Some(n) => n,
        None => std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
    };
    let mut config = CoordinatorConfig::beside(&db, registry);
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
    let started = Instant::now();
    let coordinator = Coordinator::open(&db, config).await?;
    let replicas = args.replicas.replicas;
    let identical = coordinator.existing_job(family.family, &family.params_json, replicas);
    match (
        identical,
        coordinator.failed_job(family.family, &family.params_json, replicas),
    ) {
        // A running or finished job of these parameters is resumed or
        // answers, whatever failed before it.
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
    let (job_id, existing) = coordinator
        .submit(family.family, &family.params_json, replicas)
        .await?;

    let listener = Coordinator::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    let (stop_server, server_stopped) = watch::channel(false);
    let server = {
        let coordinator = coordinator.clone();
        let mut rx = server_stopped.clone();
        tokio::spawn(async move {
            coordinator
                .serve(listener, async move {
                    let _ = rx.wait_for(|&s| s).await;
                })
                .await
        })
    };

    if let Some(addr) = &args.http {
        let http = Coordinator::bind(addr).await?;
        eprintln!("dashboard and metrics on http://{}/", http.local_addr()?);
        let c = coordinator.clone();
        let mut rx = server_stopped.clone();
        tokio::spawn(async move {
            let stop = async move {
                let _ = rx.wait_for(|&s| s).await;
            };
            if let Err(e) = c.serve_http(http, stop).await {
                tracing::error!("dashboard: {e}");
            }
        });
    }

    let snapshot = || coordinator.status(job_id);
    let initial = snapshot().ok_or("job vanished")?;
    if !args.json && initial.state == JobState::Running {
        if existing {
            eprintln!(
                "resuming job {job_id} from {}: {}",
                db.display(),
                progress_line(&initial)
            );
        } else {
            eprintln!(
                "job {job_id} in {} with {workers} local workers",
                db.display()
            );
        }
    }

    let (stop_workers, workers_stop) = watch::channel(false);
    let mut handles = Vec::new();
    let mut saver = None;
    if initial.state == JobState::Running {
        // One set of open jobs for all local workers: they share each job's
        // in-process state (the hip-solve table).
        let jobs = open_jobs.clone();
        saver = jobs.spawn_saver();
        for i in 0..workers {
            let mut rx = workers_stop.clone();
            let config = WorkerConfig {
                coordinator: url.clone(),
                jobs: jobs.clone(),
                threads: 1,
                name: format!("{}-local-{i}", hostname()),
                give_up_after: Duration::from_secs(30),
                // The embedded coordinator listens on loopback only and
                // needs no token.
                token: None,
                tls: Default::default(),
                metrics: Default::default(),
                // The workers of one process share its memory (the
                // hip-solve table) already.
                share_lemmas: false,
            };
            handles.push(tokio::spawn(async move {
                run_worker(config, async move {
                    let _ = rx.wait_for(|&s| s).await;
                })
                .await
            }));
        }
    }

    let bar = if args.json {
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
        let s = snapshot().ok_or("job vanished")?;
        if s.state != JobState::Running {
            break;
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

    let answer = coordinator.answer(job_id).ok_or("job vanished")?;
    let since_last_report = coordinator.since_last_report(job_id);
    let stop_all = || async {
        // Workers hand back their rest (if interrupted) and stop.
        let _ = stop_workers.send(true);
        for h in handles {
            match h.await {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => tracing::warn!("local worker: {e}"),
                Err(e) => tracing::warn!("local worker task: {e}"),
            }
        }
        let _ = stop_server.send(true);
        let _ = server.await;
    };
    if let Some(saver) = saver {
        saver.abort();
    }
    if interrupted {
        stop_all().await;
        // The workers have handed back their rest: keep what their caches
        // learned since the last periodic save for the resume.
        let _ = tokio::task::spawn_blocking(move || open_jobs.save_caches()).await;
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
        return Ok(ExitCode::from(130));
    }
    let status = &answer.status;
    if !answer.is_final {
        stop_all().await;
        return Err(format!("job {job_id} {}: {}", status.state, status.error).into());
    }
    if args.json {
        let mut obj = answer.to_json();
        obj["elapsed_secs"] = serde_json::json!(started.elapsed().as_secs_f64());
        obj["resumed"] = serde_json::json!(existing);
        println!("{obj}");
    } else {
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
        // A resumed job's time in this process is not its time: say both.
        let since_submitted = duration(
            status
                .finished_unix_ms
                .saturating_sub(status.created_unix_ms) as f64
                / 1000.0,
        );
        if initial.state == JobState::Done {
            println!("job {job_id} was already done: {since_submitted} from submission to answer");
        } else if existing {
            println!(
                "job {job_id} done: {:.1} s in this run, {since_submitted} from submission to answer (stops included){latency}",
                started.elapsed().as_secs_f64()
            );
        } else {
            println!(
                "job {job_id} done in {:.1} s{latency}",
                started.elapsed().as_secs_f64()
            );
        }
    }
    stop_all().await;
    Ok(ExitCode::SUCCESS)
}
