//! Measures the coordinator's own cost: how many units per second it can
//! lease, take reports for (each committed to SQLite before the
//! acknowledgement) and merge, with the search itself taking no time.
//!
//! `cargo run --release -p orchard-coordinator --example coordinator_load -- [UNITS] [CLIENTS]`
//!
//! A job is submitted whose every unit "explores" instantly and reports an
//! empty summary plus two new units, until UNITS units exist; CLIENTS
//! concurrent fake workers drive it over real gRPC on 127.0.0.1.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use orchard_coordinator::{Coordinator, CoordinatorConfig, JobState};
use orchard_core::{codec, Registry};
use orchard_hc::{HararyColumns, HcSummary, RgsPrefix};
use orchard_proto::v1::worker_service_client::WorkerServiceClient;
use orchard_proto::v1::*;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let units: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(20_000);
    let clients: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(8);
    let dir = std::env::temp_dir().join(format!("orchard-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let db = dir.join("load.db");
    let families = Registry::default().with::<HararyColumns>();
    let coordinator = Coordinator::open(&db, CoordinatorConfig::beside(&db, families)).await?;
    let listener = Coordinator::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    {
        let c = coordinator.clone();
        tokio::spawn(async move { c.serve(listener, std::future::pending()).await });
    }
    let (job, _) = coordinator
        .submit(
            "hc",
            r#"{"columns":1,"variant":"pairs","min_length":null}"#,
            1,
        )
        .await?;

    let created = Arc::new(AtomicU64::new(1));
    let summary = codec::encode(&HcSummary::default());
    let child = codec::encode(&RgsPrefix(Vec::new()));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for i in 0..clients {
        let url = url.clone();
        let created = created.clone();
        let (summary, child) = (summary.clone(), child.clone());
        tasks.push(tokio::spawn(async move {
            let mut c = WorkerServiceClient::connect(url).await.expect("connect");
            let id = c
                .register(RegisterRequest {
                    hostname: format!("load-{i}"),
                    threads: 16,
                    protocol_version: orchard_proto::PROTOCOL_VERSION,
                    families: vec!["hc".into()],
                })
                .await
                .expect("register")
                .into_inner()
                .worker_id;
            let mut reported = 0u64;
            loop {
                let lease = c
                    .lease(LeaseRequest {
                        worker_id: id,
                        max_units: 16,
                    })
                    .await
                    .expect("lease")
                    .into_inner();
                if lease.leases.is_empty() {
                    if created.load(Ordering::SeqCst) >= units {
                        // Nothing left to lease; the others finish theirs.
                        return reported;
                    }
                    continue;
                }
                let reports = lease.leases.into_iter().map(|l| {
                    let mut c = c.clone();
                    let split = created.fetch_add(2, Ordering::SeqCst) + 2 <= units;
                    if !split {
                        created.fetch_sub(2, Ordering::SeqCst);
                    }
                    let req = ReportRequest {
                        worker_id: id,
                        unit_id: l.unit_id,
                        summary: summary.clone(),
                        nodes: 0,
                        rest: if split {
                            vec![child.clone(), child.clone()]
                        } else {
                            vec![]
                        },
                        bound: 0,
                        error: String::new(),
                        stopped: false,
                        ..Default::default()
                    };
                    async move { c.report(req).await.expect("report") }
                });
                reported += futures_join(reports).await;
            }
        }));
    }
    // Wait for the job to finish.
    loop {
        let done = coordinator
            .status(job)
            .map(|s| s.state != JobState::Running)
            .unwrap_or(true);
        if done {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let secs = started.elapsed().as_secs_f64();
    let total = coordinator.status(job).map(|s| s.units_done).unwrap_or(0);
    for t in tasks {
        t.abort();
    }
    println!(
        "{total} units leased, reported, committed and merged in {secs:.2} s: {:.0} units/s ({clients} clients)",
        total as f64 / secs
    );
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// Runs report futures concurrently; returns how many completed.
async fn futures_join<F>(futs: impl Iterator<Item = F>) -> u64
where
    F: std::future::Future + Send + 'static,
    F::Output: Send,
{
    let handles: Vec<_> = futs.map(tokio::spawn).collect();
    let mut n = 0;
    for h in handles {
        if h.await.is_ok() {
            n += 1;
        }
    }
    n
}
