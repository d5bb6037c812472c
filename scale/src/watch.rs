//! Watching a started run to its end: a sampler of the busy workers every
//! 10 ms (when half and 90% of the workers present at the start first run
//! a unit at once, and the busy worker-seconds), the job's status polled
//! every 100 ms with a progress line every 10 s, and, once the job is over
//! or the timeout passed, what the coordinator spent (CPU, peak memory,
//! database size).

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use orchard_proto::v1::{JobState, JobStatus, StatusRequest};

use crate::process;
use crate::start::Started;
use crate::Args;

/// What watching measured.
pub struct Watched {
    /// The job's last status.
    pub status: JobStatus,
    /// Seconds from submission to the end of the watch.
    pub wall: f64,
    /// When half and 90% of the workers present at the start were busy
    /// at once (seconds after submission), if they ever were.
    pub fan_out_half: Option<f64>,
    pub fan_out_90: Option<f64>,
    pub busy_seconds: f64,
    pub peak_busy: u64,
    pub coordinator_cpu: f64,
    pub harness_cpu: f64,
    pub rss: u64,
    pub db_bytes: u64,
}

/// Waits for the job's end (or the timeout), then stops the sampler.
pub async fn watch(a: &Args, s: &mut Started, nodes: u64) -> Result<Watched, String> {
    let t0 = s.t0;
    let at_start = s.at_start;
    let fan_out = {
        let shared = s.shared.clone();
        let mut done = shared.done.clone();
        tokio::spawn(async move {
            let (mut half, mut most) = (None, None);
            let mut busy_seconds = 0.0;
            let mut peak = 0u64;
            let tick = Duration::from_millis(10);
            let mut last = Instant::now();
            loop {
                tokio::select! {
                    _ = done.wait_for(|d| *d) => break,
                    _ = tokio::time::sleep(tick) => {}
                }
                // The time since the last sample, not the tick: on a
                // loaded machine the sleep overshoots.
                let busy = shared.stats.busy_workers.load(Ordering::Relaxed);
                busy_seconds += busy as f64 * last.elapsed().as_secs_f64();
                last = Instant::now();
                peak = peak.max(busy);
                let t = t0.elapsed().as_secs_f64();
                if half.is_none() && busy * 2 >= at_start {
                    half = Some(t);
                }
                if most.is_none() && busy * 10 >= at_start * 9 {
                    most = Some(t);
                }
            }
            (half, most, busy_seconds, peak)
        })
    };

    // Wait for the end, printing progress now and then.
    let deadline = t0 + Duration::from_secs_f64(a.timeout);
    let mut last_print = Instant::now();
    let status = loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let st = s
            .jobs
            .status(StatusRequest { job_id: s.job_id })
            .await
            .map_err(|e| format!("status: {}", e.message()))?
            .into_inner()
            .jobs
            .into_iter()
            .next()
            .ok_or("the job vanished")?;
        if st.state != JobState::Running as i32 || Instant::now() > deadline {
            break st;
        }
        if last_print.elapsed() > Duration::from_secs(10) {
            last_print = Instant::now();
            eprintln!(
                "{:.0} s: {} units done, {} running, {} pending, {:.1}% of the nodes",
                t0.elapsed().as_secs_f64(),
                st.units_done,
                st.units_running,
                st.units_pending,
                100.0 * st.nodes as f64 / nodes as f64
            );
        }
    };
    let wall = t0.elapsed().as_secs_f64();
    s.done.send_replace(true);
    let (fan_out_half, fan_out_90, busy_seconds, peak_busy) =
        fan_out.await.map_err(|e| format!("fan-out sampler: {e}"))?;
    let pid = s.coordinator.pid();
    let coordinator_cpu = process::cpu_seconds(pid).unwrap_or(f64::NAN) - s.cpu_at_start;
    let harness_cpu =
        process::cpu_seconds(process::own_pid()).unwrap_or(f64::NAN) - s.own_cpu_at_start;
    Ok(Watched {
        status,
        wall,
        fan_out_half,
        fan_out_90,
        busy_seconds,
        peak_busy,
        coordinator_cpu,
        harness_cpu,
        rss: process::status_bytes(pid, "VmHWM:").unwrap_or(0),
        db_bytes: s.coordinator.db_bytes(),
    })
}
