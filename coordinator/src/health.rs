//! The coordinator's readiness, as the standard gRPC health service
//! (`grpc.health.v1.Health`) reports it to `grpc_health_probe`, `grpcurl`
//! and Kubernetes' `grpc:` probes.
//!
//! "Serving" means the coordinator can do its one job that matters: make
//! results durable. A coordinator whose database cannot be written still
//! answers RPCs, but every report it takes is refused, so it is reported
//! `NOT_SERVING` (Kubernetes then stops routing to it and, after a while,
//! restarts it). Two things decide it:
//!
//! * a probe every [`CoordinatorConfig::health_probe_every`]: a real write
//!   through the store's writer, down to the disk ([`Store::probe`]); one
//!   that fails, or has not finished after
//!   [`CoordinatorConfig::health_probe_timeout`] (a hung disk), is a fault;
//! * every commit of real work: a failed one turns health `NOT_SERVING` at
//!   once, without waiting for the next probe; the next commit that
//!   succeeds (a probe or real work) turns it `SERVING` again.
//!
//! The status is the same for the whole server (`""`) and for each orchard
//! service, since both services stand or fall with the database.

use std::time::Duration;

use tonic_health::server::HealthReporter;
use tonic_health::ServingStatus;

use crate::store::Store;
#[cfg(doc)]
use crate::CoordinatorConfig;

/// The names the status is set for: the whole server, then each service.
pub(crate) const SERVICE_NAMES: [&str; 3] = [
    "",
    <orchard_proto::v1::worker_service_server::WorkerServiceServer<crate::service::Workers> as tonic::server::NamedService>::NAME,
    <orchard_proto::v1::job_service_server::JobServiceServer<crate::service::Jobs> as tonic::server::NamedService>::NAME,
];

/// Sets every name of [`SERVICE_NAMES`] to `status`.
pub(crate) async fn set_all(reporter: &HealthReporter, status: ServingStatus) {
    for name in SERVICE_NAMES {
        reporter.set_service_status(name, status).await;
    }
}

/// Keeps `reporter` in step with whether `store` can be written, until the
/// task is aborted. The caller sets `NOT_SERVING` before it starts: the
/// first probe, at once, decides.
pub(crate) async fn follow_store(
    store: Store,
    reporter: HealthReporter,
    every: Duration,
    timeout: Duration,
) {
    let mut serving = false;
    let mut outcomes = store.commit_outcomes();
    // Once the writer thread is gone its outcomes never change again (and
    // every probe fails with `WriterGone`).
    let mut writer_alive = true;
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let fault: Option<String> = tokio::select! {
            _ = tick.tick() => match tokio::time::timeout(timeout, store.probe()).await {
                Ok(Ok(())) => None,
                Ok(Err(e)) => Some(e.to_string()),
                Err(_) => Some(format!("a write to the database has not finished after {timeout:?}")),
            },
            changed = outcomes.changed(), if writer_alive => match changed {
                Ok(()) => outcomes.borrow_and_update().clone(),
                Err(_) => {
                    writer_alive = false;
                    Some("the store's writer thread has stopped".to_string())
                }
            },
        };
        let now_serving = fault.is_none();
        if now_serving != serving {
            match &fault {
                Some(reason) => tracing::error!("health: NOT_SERVING: {reason}"),
                None => tracing::info!("health: SERVING (the database can be written)"),
            }
            let status = if now_serving {
                ServingStatus::Serving
            } else {
                ServingStatus::NotServing
            };
            set_all(&reporter, status).await;
            serving = now_serving;
        }
    }
}
