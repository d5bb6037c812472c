//! The coordinator as a child process (`orchard coordinator`), so that its
//! CPU time and memory are its own: read from `/proc/PID/stat` and
//! `/proc/PID/status`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use orchard_proto::v1::job_service_client::JobServiceClient;
use orchard_proto::v1::StatusRequest;

/// A running coordinator, killed when dropped.
pub struct CoordinatorProcess {
    child: Child,
    pub url: String,
    pub db: PathBuf,
}

/// How the coordinator is started.
pub struct CoordinatorFlags {
    pub lease_ttl: f64,
    pub heartbeat_interval: f64,
    pub unit_budget: u64,
}

impl CoordinatorProcess {
    /// Starts `orchard coordinator` on a free port of 127.0.0.1 with its
    /// database and results in `dir`, logging to `dir/coordinator.log`,
    /// and waits until it answers.
    pub async fn start(
        orchard: &Path,
        dir: &Path,
        flags: &CoordinatorFlags,
    ) -> Result<CoordinatorProcess, String> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("finding a free port: {e}"))?
            .port();
        let db = dir.join("scale.db");
        let log = std::fs::File::create(dir.join("coordinator.log"))
            .map_err(|e| format!("creating the coordinator's log in {}: {e}", dir.display()))?;
        let child = Command::new(orchard)
            .args(["coordinator", "--listen", &format!("127.0.0.1:{port}")])
            .arg("--db")
            .arg(&db)
            .arg("--results-dir")
            .arg(dir)
            .args(["--lease-ttl", &flags.lease_ttl.to_string()])
            .args([
                "--heartbeat-interval",
                &flags.heartbeat_interval.to_string(),
            ])
            .args(["--unit-budget", &flags.unit_budget.to_string()])
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log)
            .spawn()
            .map_err(|e| format!("starting {}: {e}", orchard.display()))?;
        let c = CoordinatorProcess {
            child,
            url: format!("http://127.0.0.1:{port}"),
            db,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(mut jobs) = JobServiceClient::connect(c.url.clone()).await {
                if jobs.status(StatusRequest { job_id: 0 }).await.is_ok() {
                    return Ok(c);
                }
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "the coordinator did not answer at {} within 30 s (see {})",
                    c.url,
                    dir.join("coordinator.log").display()
                ));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The database's bytes on disk: the file, its WAL and shared memory.
    pub fn db_bytes(&self) -> u64 {
        ["", "-wal", "-shm"]
            .iter()
            .filter_map(|s| {
                let mut p = self.db.clone().into_os_string();
                p.push(s);
                std::fs::metadata(p).ok().map(|m| m.len())
            })
            .sum()
    }
}

impl Drop for CoordinatorProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// User + system CPU seconds of process `pid` (all its threads).
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may hold spaces), from field 3.
    let after = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // SAFETY: sysconf has no preconditions.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (per_second > 0).then(|| ticks as f64 / per_second as f64)
}

/// A `kB` figure of `/proc/PID/status` (`VmHWM`: peak resident memory), in bytes.
pub fn status_bytes(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// This process's id, for its own figures.
pub fn own_pid() -> u32 {
    std::process::id()
}
