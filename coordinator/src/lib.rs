//! The orchard coordinator.
//!
//! It owns the job state: it splits each job into units through the job's
//! search family, leases units to workers over gRPC, takes their reports,
//! merges summaries into each job's aggregate, and keeps all of it durable in
//! SQLite so that a restart on the same database resumes every job.
//!
//! * [`store`] — the SQLite store and its grouped-commit writer thread.
//! * [`clock`] — where time comes from (the system's, or a test's).
//! * [`backup`] — verified copies of the store, taken while it runs.
//! * [`scheduler`] — the in-memory state machine (jobs, units, leases).
//! * [`service`] — the gRPC handlers gluing the two.
//! * [`results`] — the atomically written results files.
//! * [`http`] — the dashboard, its JSON API and Prometheus `/metrics`.
//! * [`history`] — each job's progress over time, for the dashboard's
//!   charts, kept in a side file beside the database.
//! * [`health`] — readiness for the standard gRPC health service.
//! * [`identity`] — who a client is, by its TLS certificate (mutual TLS).

pub mod backup;
mod clock;
mod health;
mod history;
mod http;
mod identity;
mod results;
mod scheduler;
mod service;
mod status;
mod store;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use orchard_core::{FamilyError, Host, PreparedJob, Registry};
use orchard_proto::access::TokenCheck;
use orchard_proto::v1::job_service_server::JobServiceServer;
use orchard_proto::v1::worker_service_server::WorkerServiceServer;
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tonic::service::interceptor::InterceptedService;

use service::{Jobs, Shared, Workers};
pub use status::{JobAnswer, JobState, JobStatus};
pub use store::{reseal_job, reseal_job_row, StoreError};

/// Probes per estimate of a job's size (Knuth's estimator; a few
/// hundredths of a second for `hc`), redone whenever the job's bound rises.
const ESTIMATE_PROBES: u64 = 20_000;

/// Tunables of a coordinator.
#[derive(Debug, Clone)]
pub struct CoordinatorConfig {
    /// The search families this coordinator accepts jobs of (the binary's
    /// registry; the coordinator knows none by name).
    pub families: Registry,
    /// A unit whose worker is silent this long is leased again.
    pub lease_ttl: Duration,
    /// How often workers should heartbeat.
    pub heartbeat_interval: Duration,
    /// Nodes a worker explores in one unit before handing back the rest.
    pub unit_budget: u64,
    /// Most units in one lease.
    pub max_units_per_lease: u32,
    /// A running unit is asked to split for idle workers only after this long.
    pub min_split_age: Duration,
    /// Where results files are written.
    pub results_dir: PathBuf,
    /// When set, every request must carry `authorization: Bearer <token>`.
    pub token: Option<String>,
    /// PEM certificate chain and private key: serve TLS instead of plain TCP.
    pub tls: Option<TlsIdentity>,
    /// Most workers registered at once (a sanity cap against runaway clients).
    pub max_workers: usize,
    /// Largest request accepted, in bytes.
    pub max_message_bytes: usize,
    /// Copy the database here every so often (see [`backup`]).
    pub backup: Option<BackupSchedule>,
    /// How often the gRPC health service checks that the database can be
    /// written (see [`health`]).
    pub health_probe_every: Duration,
    /// A check of the database still unfinished after this long counts as
    /// a fault (a hung disk).
    pub health_probe_timeout: Duration,
    /// How often each running job's progress is sampled for the
    /// dashboard's charts (see [`history`]); a long job's samples thin out
    /// as it grows, whatever this is.
    pub history_every: Duration,
    /// The most bytes of lemmas one job keeps in the database; its oldest
    /// go first (see `scheduler::lemmas`).
    pub lemma_store_bytes: u64,
}

/// Where and how often a coordinator backs its database up.
#[derive(Debug, Clone)]
pub struct BackupSchedule {
    pub path: PathBuf,
    pub every: Duration,
}

/// The coordinator's TLS certificate chain and key, PEM-encoded, and for
/// mutual TLS the CA that must have signed every client's certificate.
#[derive(Debug, Clone)]
pub struct TlsIdentity {
    pub cert_pem: Vec<u8>,
    pub key_pem: Vec<u8>,
    /// When set, a client without a certificate signed by this CA cannot
    /// connect, and each worker is known by its certificate (see
    /// [`identity`]).
    pub client_ca_pem: Option<Vec<u8>>,
}

impl CoordinatorConfig {
    /// A job of `family` with these parameters, as the coordinator holds it
    /// (it never explores, so it lends the job nothing: [`Host::default`]).
    /// Every lookup of a family in the coordinator goes through here
    /// (submitting, resuming, rewriting missing files); the error is the
    /// message to show, and an unknown family's lists the known ones.
    pub fn prepare(&self, family: &str, params_json: &str) -> Result<Arc<dyn PreparedJob>, String> {
        self.families
            .by_name(family)
            .map_err(|e| format!("{e} (known: {})", self.families.names().join(", ")))?
            .prepare(params_json, &Host::default())
            .map_err(|e| e.to_string())
    }

    /// The canonical form of a job's parameters (see
    /// [`orchard_core::DynFamily::canonical_params`]); `None` if the family
    /// is unknown or cannot read them.
    pub fn canonical_params(&self, family: &str, params_json: &str) -> Option<String> {
        let family = self.families.by_name(family).ok()?;
        family.canonical_params(params_json).ok()
    }

    /// Defaults, with results files beside the database.
    pub fn beside(db: &Path, families: Registry) -> Self {
        let dir = db
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        CoordinatorConfig {
            families,
            lease_ttl: Duration::from_secs(30),
            heartbeat_interval: Duration::from_millis(500),
            unit_budget: 2_000_000_000,
            max_units_per_lease: 64,
            min_split_age: Duration::from_millis(500),
            results_dir: dir.join("results"),
            token: None,
            tls: None,
            max_workers: 10_000,
            max_message_bytes: 64 << 20,
            backup: None,
            health_probe_every: Duration::from_secs(2),
            health_probe_timeout: Duration::from_secs(10),
            history_every: Duration::from_secs(1),
            lemma_store_bytes: scheduler::MAX_LEMMA_BYTES_PER_JOB,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CoordinatorError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot resume from {path}: {reason}")]
    Resume { path: PathBuf, reason: String },
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        addr: String,
        source: std::io::Error,
    },
    #[error("gRPC server failed: {0}")]
    Serve(#[from] tonic::transport::Error),
    #[error("TLS certificate or key unusable: {0}")]
    Tls(String),
    #[error("backup: {0}")]
    Backup(StoreError),
    #[error("server reflection: {0}")]
    Reflection(String),
}

/// One [`backup::backup`] of `db` to `to`, off the async threads.
async fn take_backup(db: &Path, to: &Path) -> Result<(), StoreError> {
    let (db, to) = (db.to_path_buf(), to.to_path_buf());
    let summary = tokio::task::spawn_blocking(move || backup::backup(&db, &to))
        .await
        .map_err(|e| StoreError::Corrupt(format!("backup task: {e}")))??;
    tracing::info!(
        units = summary.units,
        done = summary.done_units,
        bytes = summary.bytes,
        "database backed up"
    );
    Ok(())
}

/// A running coordinator: state loaded, background tasks started. Serve it
/// with [`Coordinator::serve`].
///
/// API boundary: this is the coordinator as the binary sees it (open,
/// serve, submit, ask); the scheduler, the store and the gRPC handlers stay
/// inside the crate.
#[derive(Clone)]
pub struct Coordinator {
    shared: Arc<Shared>,
    /// Where the jobs' histories are kept (see [`history::file`]).
    history_path: PathBuf,
}

impl Coordinator {
    /// Submits a job of `family` with canonical JSON parameters, each unit
    /// explored by `replicas` different workers, or finds the identical job
    /// that exists: its id, and whether it existed.
    pub async fn submit(
        &self,
        family: &str,
        params_json: &str,
        replicas: u32,
    ) -> Result<(u64, bool), String> {
        Jobs(self.shared.clone())
            .submit_job(family, params_json, replicas)
            .await
            .map_err(|s| s.message().to_string())
    }

    /// The running or finished job of `family` with these canonical
    /// parameters and replicas, which `submit` would return.
    pub fn existing_job(&self, family: &str, params_json: &str, replicas: u32) -> Option<u64> {
        self.shared
            .lock()
            .find_job(family, params_json, replicas.max(1))
    }

    /// The last failed job of `family` with these canonical parameters and
    /// replicas, with its error; `None`: none failed.
    pub fn failed_job(
        &self,
        family: &str,
        params_json: &str,
        replicas: u32,
    ) -> Option<(u64, String)> {
        self.shared
            .lock()
            .find_failed_job(family, params_json, replicas.max(1))
    }

    /// Puts failed job `job_id` back to running from where it stopped (see
    /// `orchard retry`): (units pending, units done).
    pub async fn retry(&self, job_id: u64) -> Result<(u64, u64), String> {
        Jobs(self.shared.clone())
            .retry_job(job_id)
            .await
            .map_err(|s| s.message().to_string())
    }

    /// A job's progress; `None`: no such job.
    pub fn status(&self, job_id: u64) -> Option<JobStatus> {
        self.shared.lock().status(job_id)
    }

    /// A job's answer, final or so far; `None`: no such job.
    pub fn answer(&self, job_id: u64) -> Option<JobAnswer> {
        self.shared.lock().answer(job_id)
    }

    /// Shows a running job lemmas proved in this process, neither stored
    /// nor sent to any worker (see [`Shared::observe_lemmas`]): for an
    /// embedding whose workers share one in-process table. Blocking.
    pub fn observe_lemmas(&self, job_id: u64, lemmas: &[u8]) -> Result<bool, FamilyError> {
        self.shared.observe_lemmas(job_id, lemmas)
    }

    /// How long ago the last unit report of a job was applied.
    pub fn since_last_report(&self, job_id: u64) -> Option<Duration> {
        self.shared.lock().since_last_report(job_id)
    }

    /// Completes when some job finishes (register before checking states).
    pub fn job_finished(&self) -> tokio::sync::futures::Notified<'_> {
        self.shared.job_finished.notified()
    }

    /// Opens the database at `db` (created if absent) and resumes every
    /// unfinished job in it, with the built-in families and the system's
    /// clock. Must be called inside a tokio runtime.
    pub async fn open(
        db: &Path,
        config: CoordinatorConfig,
    ) -> Result<Coordinator, CoordinatorError> {
        let clock: Arc<dyn clock::Clock> = Arc::new(clock::SystemClock);
        if let Some(schedule) = &config.backup {
            backup::check_target(db, &schedule.path).map_err(CoordinatorError::Backup)?;
        }
        let (store, loaded) = store::Store::open(db)?;
        let mut scheduler = scheduler::Scheduler::from_store(
            loaded,
            config.lease_ttl,
            clock.clone(),
            &|family, params_json| config.prepare(family, params_json),
        )
        .map_err(|reason| CoordinatorError::Resume {
            path: db.to_path_buf(),
            reason,
        })?;
        scheduler.set_lemma_store_bytes(config.lemma_store_bytes);
        scheduler.canonicalize_params(&|family, params| config.canonical_params(family, params));
        let history_path = history::file::beside(db);
        let mut histories = history::Histories::new(config.history_every);
        match history::file::load(&history_path) {
            Ok(Some(kept)) => histories.resume(kept, |id| scheduler.job(id).is_some()),
            Ok(None) => {}
            // Decorative data: a damaged file costs the charts' past, never
            // the coordinator (it is replaced at the next save).
            Err(e) => tracing::warn!("{e}; the jobs' charts start again from now"),
        }
        let shared = Arc::new(Shared {
            scheduler: Mutex::new(scheduler),
            store,
            config,
            clock,
            work_available: Notify::new(),
            job_finished: Notify::new(),
            history: Mutex::new(histories),
            stopped_serving: std::sync::atomic::AtomicBool::new(false),
        });
        let cancelled = shared.lock().sweep_all_moot();
        if !cancelled.is_empty() {
            shared.store.commit(cancelled).await?;
        }
        // A job whose last unit was done before a crash, with its answer
        // still unsettled, gets the units it needs now.
        let reopened = shared.lock().reopen_all_unsettled();
        if !reopened.is_empty() {
            shared.store.commit(reopened).await?;
        }
        shared.observe_stored_lemmas().await;
        let finished = shared.lock().finished_on_load();
        for f in finished {
            shared.finish(f).await;
        }
        shared.restore_missing_files().await;
        let estimator = Arc::downgrade(&shared);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(2));
            loop {
                tick.tick().await;
                let Some(shared) = estimator.upgrade() else {
                    break;
                };
                let due = shared.lock().estimates_due();
                drop(shared);
                for (job, prepared, bound) in due {
                    let est = tokio::task::spawn_blocking(move || {
                        orchard_core::estimate::estimate(
                            prepared.as_ref(),
                            ESTIMATE_PROBES,
                            job,
                            bound,
                        )
                    })
                    .await;
                    let Some(shared) = estimator.upgrade() else {
                        break;
                    };
                    let unknown = |assumed_bound| scheduler::Estimate {
                        nodes: 0.0,
                        std_error: 0.0,
                        assumed_bound,
                    };
                    let estimate = match est {
                        Ok(Ok(e)) => scheduler::Estimate {
                            nodes: e.nodes,
                            std_error: e.std_error,
                            assumed_bound: bound,
                        },
                        // The family cannot estimate: never ask again.
                        Ok(Err(orchard_core::estimate::EstimateError::Unsupported(_))) => {
                            unknown(u64::MAX)
                        }
                        // E.g. a tree too large for f64 before any bound
                        // prunes it: try again when the bound rises.
                        _ => unknown(bound),
                    };
                    shared.lock().set_estimate(job, estimate);
                }
            }
        });
        if let Some(schedule) = shared.config.backup.clone() {
            // The first backup now: a target that cannot take one is a bad
            // flag, refused at startup rather than found out an hour later.
            take_backup(db, &schedule.path)
                .await
                .map_err(CoordinatorError::Backup)?;
            let db = db.to_path_buf();
            let alive = Arc::downgrade(&shared);
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(schedule.every);
                tick.tick().await;
                loop {
                    tick.tick().await;
                    if alive.strong_count() == 0 {
                        break;
                    }
                    // A failure here (the backup disk full or gone) must not
                    // stop the search: say so, and try again next time.
                    if let Err(e) = take_backup(&db, &schedule.path).await {
                        tracing::warn!("backup to {} failed: {e}", schedule.path.display());
                    }
                }
            });
        }
        spawn_history_sampler(&shared, history_path.clone());
        let ticker = Arc::downgrade(&shared);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(250));
            loop {
                tick.tick().await;
                let Some(shared) = ticker.upgrade() else {
                    break;
                };
                let (expired, finished) = {
                    let mut s = shared.lock();
                    if shared
                        .stopped_serving
                        .load(std::sync::atomic::Ordering::SeqCst)
                    {
                        break;
                    }
                    let (expired, (cancelled, finished)) = (s.expire_leases(), s.sweep_due_moot());
                    if !cancelled.is_empty() {
                        // Units reopened by a sweep that left a job none (see
                        // `Scheduler::reopen_unsettled`) are work for everyone.
                        if store::Write::any_inserts_units(&cancelled) {
                            shared.work_available.notify_waiters();
                        }
                        // Sent under the lock: before the fold's, or never.
                        shared.store.enqueue(cancelled);
                    }
                    (expired, finished)
                };
                shared.wake_idle(expired);
                for f in finished {
                    shared.finish(f).await;
                }
            }
        });
        Ok(Coordinator {
            shared,
            history_path,
        })
    }

    /// Binds `addr` (e.g. `0.0.0.0:7070`, or port 0 for any free port).
    pub async fn bind(addr: &str) -> Result<TcpListener, CoordinatorError> {
        TcpListener::bind(addr)
            .await
            .map_err(|source| CoordinatorError::Listen {
                addr: addr.to_string(),
                source,
            })
    }

    /// Serves the dashboard, `/api` and `/metrics` over HTTP on `listener`
    /// until `shutdown` completes.
    pub async fn serve_http(
        &self,
        listener: TcpListener,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<(), CoordinatorError> {
        let addr = listener.local_addr().ok();
        tracing::info!(?addr, "dashboard and metrics listening");
        http::serve(self.shared.clone(), listener, shutdown)
            .await
            .map_err(|source| CoordinatorError::Listen {
                addr: addr.map(|a| a.to_string()).unwrap_or_default(),
                source,
            })
    }

    /// Serves both gRPC services on `listener` until `shutdown` completes,
    /// with the standard health service (`grpc.health.v1.Health`, following
    /// whether the database can be written: see [`health`]) and server
    /// reflection (v1 and v1alpha) beside them.
    ///
    /// Health and reflection need no token: Kubernetes' `grpc:` probes send
    /// no metadata, and reflection tells only what `proto/` publishes. They
    /// are served over TLS when the rest is.
    pub async fn serve(
        &self,
        listener: TcpListener,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<(), CoordinatorError> {
        let addr: Option<SocketAddr> = listener.local_addr().ok();
        tracing::info!(?addr, "coordinator listening");
        // Small request/response messages: without TCP_NODELAY on accepted
        // sockets, Nagle's algorithm adds tens of milliseconds per call.
        let incoming =
            tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
        let config = &self.shared.config;
        let check = TokenCheck::new(config.token.as_deref());
        let limit = config.max_message_bytes;
        let mut builder = tonic::transport::Server::builder();
        if let Some(tls) = &config.tls {
            let identity = tonic::transport::Identity::from_pem(&tls.cert_pem, &tls.key_pem);
            let mut tls_config = tonic::transport::ServerTlsConfig::new().identity(identity);
            if let Some(ca) = &tls.client_ca_pem {
                tls_config = tls_config.client_ca_root(tonic::transport::Certificate::from_pem(ca));
            }
            builder = builder
                .tls_config(tls_config)
                .map_err(|e| CoordinatorError::Tls(e.to_string()))?;
        }
        let workers = WorkerServiceServer::new(Workers(self.shared.clone()))
            .max_decoding_message_size(limit)
            .max_encoding_message_size(limit);
        let jobs = JobServiceServer::new(Jobs(self.shared.clone()))
            .max_decoding_message_size(limit)
            .max_encoding_message_size(limit);

        let (reporter, health_service) = tonic_health::server::health_reporter();
        // NOT_SERVING from the start until the first probe has written.
        health::set_all(&reporter, tonic_health::ServingStatus::NotServing).await;
        let follower = tokio::spawn(health::follow_store(
            self.shared.store.clone(),
            reporter.clone(),
            config.health_probe_every,
            config.health_probe_timeout,
        ));
        // Stop the probes once the server is done, however it ends.
        let stop_follower = AbortOnDrop(follower);
        // Shutting down: say so at once, so that probes and load balancers
        // stop sending work while the calls under way finish.
        let shutdown = async move {
            shutdown.await;
            drop(stop_follower);
            health::set_all(&reporter, tonic_health::ServingStatus::NotServing).await;
        };

        let reflection = |b: tonic_reflection::server::Builder<'static>| {
            b.register_encoded_file_descriptor_set(orchard_proto::v1::FILE_DESCRIPTOR_SET)
                .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        };
        let reflection_v1 = reflection(tonic_reflection::server::Builder::configure())
            .build_v1()
            .map_err(|e| CoordinatorError::Reflection(e.to_string()))?;
        let reflection_v1alpha = reflection(tonic_reflection::server::Builder::configure())
            .build_v1alpha()
            .map_err(|e| CoordinatorError::Reflection(e.to_string()))?;

        builder
            .add_service(InterceptedService::new(workers, check.clone()))
            .add_service(InterceptedService::new(jobs, check))
            .add_service(health_service)
            .add_service(reflection_v1)
            .add_service(reflection_v1alpha)
            .serve_with_incoming_shutdown(incoming, shutdown)
            .await?;
        // The samples since the last periodic save.
        sample_history(&self.shared);
        if let Err(e) = save_history(&self.shared, &self.history_path).await {
            warn_unsaved(&self.history_path, &e);
        }
        // Stopped serving: leave the database file whole on its own, the
        // write-ahead log folded in, so that a copy of the file alone (made
        // by hand after a stop) holds every job as the stop left it. The
        // tick's sweeps stop first (a unit cancelled after the fold would
        // live only in the log).
        {
            let _scheduler = self.shared.lock();
            (self.shared.stopped_serving).store(true, std::sync::atomic::Ordering::SeqCst);
        }
        if let Err(e) = self.shared.store.fold_wal().await {
            tracing::warn!("cannot fold the write-ahead log into the database file: {e}");
        }
        Ok(())
    }
}

/// How often the sampler saves the histories when they changed (and
/// whenever a job ends): a crash loses at most this much of the charts.
const HISTORY_SAVE_EVERY: Duration = Duration::from_secs(10);

/// One sample of every job whose history is still open (see
/// [`history::Histories::record`]): (whether anything was added, whether
/// some job's history closed). The two locks are taken one after the other.
fn sample_history(shared: &Shared) -> (bool, bool) {
    let ids = shared.lock().job_ids();
    let open: Vec<u64> = {
        let h = shared.history();
        ids.into_iter().filter(|&id| !h.is_closed(id)).collect()
    };
    let (statuses, now_ms) = {
        let mut s = shared.lock();
        let statuses: Vec<JobStatus> = open.into_iter().filter_map(|id| s.status(id)).collect();
        (statuses, shared.clock.unix_ms())
    };
    shared.history().record(now_ms, &statuses)
}

/// Writes the histories to their side file, off the async threads. A
/// failure only costs the charts' past, never the search: the caller logs.
async fn save_history(shared: &Shared, path: &Path) -> std::io::Result<()> {
    let bytes = history::file::encode(&shared.history());
    let target = path.to_path_buf();
    tokio::task::spawn_blocking(move || history::file::save(&target, &bytes))
        .await
        .map_err(|e| std::io::Error::other(e.to_string()))
        .and_then(|r| r)
}

fn warn_unsaved(path: &Path, e: &std::io::Error) {
    tracing::warn!(
        "could not save the jobs' history to {}: {e}",
        path.display()
    );
}

/// Samples the jobs' progress every `history_every` and saves the
/// histories every [`HISTORY_SAVE_EVERY`] when they changed, and at once
/// when a job ended (its last sample is the one the ETA chart is judged
/// against).
fn spawn_history_sampler(shared: &Arc<Shared>, path: PathBuf) {
    let sampler = Arc::downgrade(shared);
    let every = shared.config.history_every;
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut last_save = tokio::time::Instant::now();
        let mut unsaved = false;
        // Said once per run of failures, not every ten seconds.
        let mut failing = false;
        loop {
            tick.tick().await;
            let Some(shared) = sampler.upgrade() else {
                break;
            };
            let (added, closed) = sample_history(&shared);
            unsaved |= added;
            if unsaved && (closed || last_save.elapsed() >= HISTORY_SAVE_EVERY) {
                // Tried again at the next save time if it failed.
                match save_history(&shared, &path).await {
                    Ok(()) => (unsaved, failing) = (false, false),
                    Err(e) if !failing => {
                        warn_unsaved(&path, &e);
                        failing = true;
                    }
                    Err(_) => {}
                }
                last_save = tokio::time::Instant::now();
            }
        }
    });
}

/// Aborts a background task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
