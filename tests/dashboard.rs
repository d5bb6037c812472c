//! The coordinator's HTTP side: Prometheus `/metrics`, the JSON API, and the
//! dashboard page rendered by a real headless Chromium, checked against the
//! API, with a screenshot kept as a test artifact.

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use common::{
    free_port, http_get, http_get_json, metric, run_json, wait_coordinator, wait_status, Proc,
    TempDir,
};

/// A coordinator with `--http`, one worker, and a finished h(3) job.
struct Cluster {
    _coord: Proc,
    _worker: Proc,
    grpc: String,
    http: String,
    worker_metrics: String,
    _dir: TempDir,
}

/// A coordinator on `port` with its HTTP side on `http_port`, up.
fn start_coordinator(dir: &TempDir, port: u16, http_port: u16, extra: &[&str]) -> Proc {
    let http = format!("127.0.0.1:{http_port}");
    let mut args = vec!["--http", &http];
    args.extend_from_slice(extra);
    let coord = common::start_coordinator_with(dir, port, &args);
    wait_coordinator(&format!("http://127.0.0.1:{port}"), Duration::from_secs(20));
    coord
}

fn cluster(tag: &str) -> Cluster {
    let dir = TempDir::new(tag);
    let (port, http_port) = (free_port(), free_port());
    let grpc = format!("http://127.0.0.1:{port}");
    let coord = start_coordinator(&dir, port, http_port, &["--unit-budget", "2000000"]);
    let metrics_port = free_port();
    let worker = Proc::spawn(
        &[
            "worker",
            "--coordinator",
            &grpc,
            "--threads",
            "1",
            "--name",
            "dash-worker",
            "--metrics",
            &format!("127.0.0.1:{metrics_port}"),
        ],
        &dir.path("worker.log"),
    );
    let job = run_json(&[
        "submit",
        "hc",
        "--columns",
        "3",
        "--coordinator",
        &grpc,
        "--json",
    ]);
    let job = job["job_id"].as_u64().unwrap();
    wait_status(&grpc, job, Duration::from_secs(60), |s| {
        s["state"] == "done"
    });
    Cluster {
        _coord: coord,
        _worker: worker,
        grpc,
        http: format!("http://127.0.0.1:{http_port}"),
        worker_metrics: format!("http://127.0.0.1:{metrics_port}/metrics"),
        _dir: dir,
    }
}

#[test]
fn metrics_match_the_api() {
    let c = cluster("metrics");
    let api = http_get_json(&format!("{}/api/jobs", c.http));
    let job = &api["jobs"][0];
    assert_eq!(job["state"], "done");
    assert_eq!(job["result"]["result"]["h"], 24);
    let m = http_get(&format!("{}/metrics", c.http));
    assert!(m.contains("# TYPE orchard_units gauge"));
    assert_eq!(
        metric(&m, r#"orchard_units{job="1",family="hc",state="done"}"#),
        job["units_done"].as_f64().unwrap()
    );
    assert_eq!(
        metric(&m, r#"orchard_job_nodes{job="1",family="hc"}"#),
        job["nodes"].as_f64().unwrap()
    );
    assert_eq!(
        metric(&m, r#"orchard_job_running{job="1",family="hc"}"#),
        0.0
    );
    assert_eq!(metric(&m, "orchard_workers_live"), 1.0);
    assert!(metric(&m, "orchard_reports_total") >= 1.0);
    assert_eq!(
        common::units_drawn_in_tree(&c.http, 1),
        job["units_done"].as_u64().unwrap(),
        "every resolved unit is in the tree picture"
    );
    // The worker's own metrics: it explored the whole (single-unit) job.
    let w = http_get(&c.worker_metrics);
    assert_eq!(metric(&w, "orchard_worker_units_reported_total"), 1.0);
    assert_eq!(
        metric(&w, "orchard_worker_nodes_total"),
        job["nodes"].as_f64().unwrap()
    );
    assert_eq!(metric(&w, "orchard_worker_threads"), 1.0);
}

fn chromium() -> Option<PathBuf> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

fn headless(
    browser: &PathBuf,
    profile: &TempDir,
    extra: &[&str],
    url: &str,
) -> std::process::Output {
    Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            &format!("--user-data-dir={}", profile.0.display()),
            "--virtual-time-budget=5000",
        ])
        .args(extra)
        .arg(url)
        .output()
        .expect("run chromium")
}

#[test]
fn dashboard_in_headless_chromium_shows_what_the_api_says() {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var_os("ORCHARD_REQUIRE_BROWSER").is_none(),
            "ORCHARD_REQUIRE_BROWSER is set but Chromium is not installed"
        );
        eprintln!("skipped: Chromium not installed (apt-get install chromium)");
        return;
    };
    let c = cluster("dashboard");
    let profile = TempDir::new("chromium-profile");
    let url = format!("{}/", c.http);
    let out = headless(&browser, &profile, &["--dump-dom"], &url);
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(
        dom.contains(r#"data-loaded="yes""#),
        "the page loaded its data: {dom}"
    );
    let api = http_get_json(&format!("{}/api/jobs", c.http));
    let job = &api["jobs"][0];
    let row = format!(
        r#"data-job="1" data-state="done" data-nodes="{}""#,
        job["nodes"]
    );
    assert!(
        dom.contains(&row),
        "job row as the API has it ({row}) in:\n{dom}"
    );
    assert!(dom.contains("h(3) = 24"), "the result is shown");
    // Worker ids are numbered from the clock at each start (see
    // `Scheduler::from_store`): the API says which.
    let worker = &api["workers"][0]["worker_id"];
    assert!(
        dom.contains(&format!(r#"data-worker="{worker}""#)),
        "the worker is listed"
    );
    let cells = api["jobs"][0]["units_total"].as_u64().unwrap();
    assert!(
        cells > 0 && dom.contains("data-prefix="),
        "the tree picture is drawn"
    );

    // A second, longer job, cut into many small units, for a picture of a
    // search tree being consumed.
    let job = run_json(&[
        "submit",
        "hc",
        "--columns",
        "4",
        "--variant",
        "subsets",
        "--min-length",
        "1",
        "--coordinator",
        &c.grpc,
        "--json",
    ]);
    let job = job["job_id"].as_u64().unwrap();
    wait_status(&c.grpc, job, Duration::from_secs(60), |s| {
        s["units_done"].as_u64().unwrap() >= 40
    });

    let artifacts = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(&artifacts).unwrap();
    let shot = artifacts.join("dashboard.png");
    let _ = std::fs::remove_file(&shot);
    let out = headless(
        &browser,
        &profile,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1280,800",
        ],
        &url,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let png = std::fs::read(&shot).expect("screenshot written");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "a real picture"
    );
    eprintln!("dashboard screenshot: {}", shot.display());
}

/// A job that has not finished (no worker here) shows its answer so far in
/// the API, marked interim, and in the page; its discarded nodes are a metric.
#[test]
fn a_running_job_shows_its_answer_so_far() {
    let dir = TempDir::new("dashinterim");
    let (port, http_port) = (free_port(), free_port());
    let grpc = format!("http://127.0.0.1:{port}");
    let http = format!("http://127.0.0.1:{http_port}");
    let _coord = start_coordinator(&dir, port, http_port, &[]);
    let job = common::submit_job(&grpc, &["hip-solve", "--rows", "4", "--cols", "4"]);
    assert_eq!(job, 1);
    let api = http_get_json(&format!("{http}/api/jobs"));
    let j = &api["jobs"][0];
    assert_eq!(j["state"], "running");
    assert!(j["result"].is_null(), "{j}");
    assert_eq!(j["interim"]["result"]["value"], serde_json::json!([-1, 1]));
    let text = j["interim"]["text"].as_array().unwrap();
    assert_eq!(
        text[0],
        "Hip 4x4: not solved yet: unknown (first player's value in -1..=1)"
    );
    assert_eq!(text[1], "opening a1: unknown");
    assert_eq!(j["nodes_discarded"], 0);
    let m = http_get(&format!("{http}/metrics"));
    assert_eq!(
        metric(
            &m,
            r#"orchard_job_nodes_discarded{job="1",family="hip-solve"}"#
        ),
        0.0
    );
    if let Some(browser) = chromium() {
        let profile = TempDir::new("chromium-profile-interim");
        let out = headless(&browser, &profile, &["--dump-dom"], &format!("{http}/"));
        let dom = String::from_utf8_lossy(&out.stdout);
        assert!(dom.contains("so far (not final):"), "{dom}");
        assert!(dom.contains("opening a1: unknown"), "{dom}");
    }
}
