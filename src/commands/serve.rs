//! `orchard coordinator` and `orchard worker`: the long-running services.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use orchard_coordinator::{BackupSchedule, Coordinator, CoordinatorConfig, TlsIdentity};
use orchard_core::{Host, Registry};
use orchard_proto::access::read_token;
use orchard_worker::{run_worker, CacheDir, OpenJobs, WorkerConfig, WorkerMetrics};

use super::{termination, CliResult};
use crate::cli::{BackupFlags, CacheArgs, CoordinatorArgs, ProgramsArg, WorkerArgs};

/// The jobs a worker process will open, hosted as its cache flags say: the
/// memory each job's cache may take, and the directory of their snapshots
/// (opened and checked here: a damaged snapshot stops the worker before it
/// starts).
pub fn open_jobs(
    cache: &CacheArgs,
    programs: &ProgramsArg,
    registry: Registry,
) -> Result<Arc<OpenJobs>, String> {
    // Variables of earlier versions, now flags: say so rather than run
    // without the snapshots someone set up.
    for (old, new) in [
        ("ORCHARD_HIP_TABLE_DIR", "--cache-dir (ORCHARD_CACHE_DIR)"),
        ("ORCHARD_HIP_TABLE_MIB", "--cache-mib (ORCHARD_CACHE_MIB)"),
        (
            "ORCHARD_HIP_TABLE_SAVE_SECS",
            "--cache-save-secs (ORCHARD_CACHE_SAVE_SECS)",
        ),
    ] {
        if std::env::var_os(old).is_some() {
            eprintln!("warning: {old} is no longer read; use {new}");
        }
    }
    let programs = match &programs.programs {
        Some(dir) if !dir.is_dir() => {
            return Err(format!("--programs {}: not a directory", dir.display()))
        }
        Some(dir) => Some(
            dir.canonicalize()
                .map_err(|e| format!("--programs {}: {e}", dir.display()))?,
        ),
        None => None,
    };
    let host = Host {
        cache_mib: cache.cache_mib,
        programs,
    };
    let mut jobs = OpenJobs::new(registry, host);
    if let Some(dir) = &cache.cache_dir {
        let dir = CacheDir::open(dir).map_err(|e| e.to_string())?;
        jobs = jobs.with_cache(dir, Duration::from_secs(cache.cache_save_secs));
    }
    Ok(Arc::new(jobs))
}

/// The coordinator's backup schedule from its flags.
pub fn backup_schedule(flags: &BackupFlags) -> Result<Option<BackupSchedule>, String> {
    let Some(path) = &flags.backup_to else {
        return match flags.backup_every {
            Some(_) => Err("--backup-every needs --backup-to".into()),
            None => Ok(None),
        };
    };
    Ok(Some(BackupSchedule {
        path: path.clone(),
        every: seconds("backup-every", flags.backup_every.unwrap_or(3600.0))?,
    }))
}

pub fn seconds(flag: &str, v: f64) -> Result<Duration, String> {
    if v.is_finite() && v > 0.0 && v < 1e9 {
        Ok(Duration::from_secs_f64(v))
    } else {
        Err(format!(
            "--{flag} must be a positive number of seconds, got {v}"
        ))
    }
}

/// How often a worker trades lemmas: none with `--no-lemmas`; else
/// `--lemma-interval`, at least [`MIN_LEMMA_INTERVAL`].
fn lemma_interval(no_lemmas: bool, every: f64) -> Result<Option<Duration>, String> {
    if no_lemmas {
        return Ok(None);
    }
    let every = seconds("lemma-interval", every)?;
    if every < MIN_LEMMA_INTERVAL {
        return Err(format!(
            "--lemma-interval must be at least {} s, got {} s",
            MIN_LEMMA_INTERVAL.as_secs_f64(),
            every.as_secs_f64()
        ));
    }
    Ok(Some(every))
}

/// The shortest `--lemma-interval`: below it a round's own call and the
/// coordinator's relay would be most of what the worker does.
const MIN_LEMMA_INTERVAL: Duration = Duration::from_millis(5);

/// The coordinator's database directory must exist; the database file is
/// created if absent.
pub fn check_db_parent(db: &Path) -> Result<(), String> {
    match db.parent() {
        Some(dir) if !dir.as_os_str().is_empty() && !dir.is_dir() => {
            Err(format!("{}: directory does not exist", dir.display()))
        }
        _ => Ok(()),
    }
}

pub async fn coordinator(args: CoordinatorArgs, registry: Registry) -> CliResult {
    check_db_parent(&args.db)?;
    let mut config = CoordinatorConfig::beside(&args.db, registry);
    config.lease_ttl = seconds("lease-ttl", args.lease_ttl)?;
    config.heartbeat_interval = seconds("heartbeat-interval", args.heartbeat_interval)?;
    if config.heartbeat_interval * 3 > config.lease_ttl {
        return Err(format!(
            "--heartbeat-interval {} is over a third of --lease-ttl {}: leases would expire between heartbeats",
            args.heartbeat_interval, args.lease_ttl
        )
        .into());
    }
    if let Some(b) = args.unit_budget {
        if b == 0 {
            return Err("--unit-budget must be at least 1".into());
        }
        config.unit_budget = b;
    }
    if let Some(dir) = args.results_dir {
        config.results_dir = dir;
    }
    config.history_every = seconds("history-every", args.history_every)?;
    config.lemma_store_bytes = args.lemma_store_mib << 20;
    config.token = read_token(args.token_file.as_deref())?;
    config.backup = backup_schedule(&args.backup)?;
    if let (Some(cert), Some(key)) = (&args.tls_cert, &args.tls_key) {
        let read =
            |p: &Path| std::fs::read(p).map_err(|e| format!("cannot read {}: {e}", p.display()));
        config.tls = Some(TlsIdentity {
            cert_pem: read(cert)?,
            key_pem: read(key)?,
            client_ca_pem: args.tls_client_ca.as_deref().map(read).transpose()?,
        });
    }
    let mutual = config
        .tls
        .as_ref()
        .is_some_and(|t| t.client_ca_pem.is_some());
    let secured = match (&config.token, &config.tls) {
        (Some(_), Some(_)) if mutual => "token and mutual TLS",
        (None, Some(_)) if mutual => "mutual TLS, no token",
        (Some(_), Some(_)) => "token and TLS",
        (Some(_), None) => "token, no TLS",
        (None, Some(_)) => "TLS, no token: anyone who reaches the port may submit and work",
        (None, None) => "no token, no TLS: anyone who reaches the port may submit and work",
    };
    let coordinator = Coordinator::open(&args.db, config).await?;
    let listener = Coordinator::bind(&args.listen).await?;
    eprintln!(
        "orchard coordinator listening on {} with database {} ({secured})",
        listener.local_addr()?,
        args.db.display()
    );
    if let Some(addr) = &args.http {
        let http = Coordinator::bind(addr).await?;
        eprintln!("dashboard and metrics on http://{}/", http.local_addr()?);
        let c = coordinator.clone();
        tokio::spawn(async move {
            if let Err(e) = c.serve_http(http, std::future::pending()).await {
                tracing::error!("dashboard: {e}");
            }
        });
    }
    coordinator.serve(listener, termination()).await?;
    Ok(ExitCode::SUCCESS)
}

pub async fn worker(args: WorkerArgs, registry: Registry) -> CliResult {
    let threads = match args.threads {
        Some(0) => return Err("--threads must be at least 1".into()),
        Some(t) => t,
        None => std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
    };
    let jobs = open_jobs(&args.cache, &args.programs, registry)?;
    let config = WorkerConfig {
        coordinator: args.coordinator,
        jobs: jobs.clone(),
        threads,
        name: args.name.unwrap_or_else(hostname),
        give_up_after: seconds("give-up-after", args.give_up_after)?,
        token: read_token(args.access.token_file.as_deref())?,
        tls: args.access.tls(),
        metrics: Arc::new(WorkerMetrics::default()),
        lemma_interval: lemma_interval(args.no_lemmas, args.lemma_interval)?,
    };
    if let Some(addr) = &args.metrics {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        eprintln!(
            "worker metrics on http://{}/metrics",
            listener.local_addr()?
        );
        let metrics = config.metrics.clone();
        let app = axum::Router::new().route(
            "/metrics",
            axum::routing::get(move || {
                let body = metrics.render();
                async move {
                    (
                        [(
                            axum::http::header::CONTENT_TYPE,
                            "text/plain; version=0.0.4",
                        )],
                        body,
                    )
                }
            }),
        );
        tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::error!("worker metrics: {e}");
            }
        });
    }
    let saver = jobs.spawn_saver();
    // A coordinator that requires client certificates closes the connection
    // of a worker without one before it can say why: say what may be missing.
    let no_identity = args.access.tls_ca.is_some() && args.access.tls_client_cert.is_none();
    let stats = run_worker(config, termination())
        .await
        .map_err(|e| match e {
            orchard_worker::WorkerError::Unreachable { .. } if no_identity => format!(
                "{e} (a coordinator started with --tls-client-ca accepts only workers that give \
                 --tls-client-cert and --tls-client-key)"
            )
            .into(),
            e => Box::<dyn std::error::Error>::from(e),
        })?;
    // Stopped gracefully, the units' rest handed back: keep what the jobs'
    // caches learned since the last save for the next worker process here.
    if let Some(saver) = saver {
        saver.abort();
    }
    let _ = tokio::task::spawn_blocking(move || jobs.save_caches()).await;
    eprintln!(
        "worker stopped: {} units reported ({} split), {} nodes",
        stats.units_reported, stats.units_split, stats.nodes
    );
    Ok(ExitCode::SUCCESS)
}

pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "worker".to_string())
}
