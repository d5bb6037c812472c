//! The coordinator's HTTP side: Prometheus `/metrics`, the JSON API, and the
//! dashboard page rendered by a real headless Chromium, checked against the
//! API, with a screenshot kept as a test artifact.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
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

    screenshot(&browser, &profile, &url, "dashboard.png");
}

/// Where the screenshots go: `target/dashboard-screenshots/`, which CI
/// keeps with the rest of `target/`.
fn screenshots_dir() -> PathBuf {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let dir = tmp.parent().unwrap_or(&tmp).join("dashboard-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A screenshot of `url` in `name` under [`screenshots_dir`], checked to be
/// a real picture.
fn screenshot(browser: &PathBuf, profile: &TempDir, url: &str, name: &str) {
    let shot = screenshots_dir().join(name);
    let _ = std::fs::remove_file(&shot);
    let out = headless(
        browser,
        profile,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1280,1500",
        ],
        url,
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
    // Nothing searched yet: only what the rules say (on 4x4 the second
    // player can pair moves, so the first player gets a draw at most).
    assert_eq!(j["interim"]["result"]["value"], serde_json::json!([-1, 0]));
    let text = j["interim"]["text"].as_array().unwrap();
    let no_win = "the first player does not win (a draw or the second player)";
    assert_eq!(
        text[0],
        format!("Hip 4x4: not solved yet: {no_win} (first player's value in -1..=0)")
    );
    assert_eq!(text[1], format!("opening a1: {no_win}"));
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
        assert!(dom.contains(&format!("opening a1: {no_win}")), "{dom}");
        // No worker: every opening waits.
        let cells = elements(&dom, "rect", "data-cell=");
        assert_eq!(cells.len(), 16);
        assert!(
            cells.iter().all(|c| c["data-state"] == "pending"),
            "{cells:?}"
        );

        // A worker leases a unit of a 5x5 job (seconds of search) and is
        // frozen with it: its opening is drawn as being searched, with
        // every cell symmetric to it, and no other.
        let job = common::submit_job(&grpc, &["hip-solve", "--rows", "5", "--cols", "5"]);
        let mut worker = common::start_worker(&dir, &grpc, "frozen");
        let leased = |s: &serde_json::Value| s["units_running"].as_u64().unwrap() >= 1;
        loop {
            wait_status(&grpc, job, Duration::from_secs(60), leased);
            worker.signal("STOP");
            // Frozen between a report and its next lease: try again.
            if leased(&common::status(&grpc, job).unwrap()) {
                break;
            }
            worker.signal("CONT");
        }
        let dom = page_of(&browser, &profile, &http, job);
        let cells = elements(&dom, "rect", "data-cell=");
        assert_eq!(cells.len(), 25);
        let running: BTreeSet<(usize, usize)> = cells
            .iter()
            .enumerate()
            .filter(|(_, c)| c["data-state"] == "running")
            .map(|(i, _)| (i / 5, i % 5))
            .collect();
        assert!(!running.is_empty(), "{cells:?}");
        for &(r, c) in &running {
            for image in [
                (c, r),
                (4 - r, c),
                (r, 4 - c),
                (4 - r, 4 - c),
                (4 - c, 4 - r),
                (c, 4 - r),
                (4 - c, r),
            ] {
                assert!(running.contains(&image), "{image:?} of {:?}", (r, c));
            }
        }
        assert!(running.len() <= 8, "one opening's cells: {running:?}");
        screenshot(
            &browser,
            &profile,
            &format!("{http}/?job={job}"),
            "hip-solve-running.png",
        );
        worker.signal("CONT");
    }
}

/// The attributes of every `<tag ...>` element of a dumped DOM whose
/// attributes contain `having` (e.g. `data-bar=`), in document order; the
/// page's script (which writes such tags in its templates) left out.
fn elements(dom: &str, tag: &str, having: &str) -> Vec<BTreeMap<String, String>> {
    let open = format!("<{tag} ");
    let mut out = Vec::new();
    let mut rest = &dom[..dom.find("<script").unwrap_or(dom.len())];
    while let Some(i) = rest.find(&open) {
        let after = &rest[i + open.len()..];
        let end = after.find('>').expect("a closed tag");
        let text = &after[..end];
        rest = &after[end..];
        if !text.contains(having) {
            continue;
        }
        let mut attrs = BTreeMap::new();
        let mut t = text;
        while let Some(eq) = t.find("=\"") {
            let name = t[..eq].trim().rsplit(' ').next().unwrap().to_string();
            let value_end = t[eq + 2..].find('"').expect("a closed attribute");
            let value = t[eq + 2..eq + 2 + value_end].replace("&amp;", "&");
            attrs.insert(name, value);
            t = &t[eq + 2 + value_end + 1..];
        }
        out.push(attrs);
    }
    out
}

/// One element's attribute, parsed.
fn attr<T: std::str::FromStr>(e: &BTreeMap<String, String>, name: &str) -> T
where
    T::Err: std::fmt::Debug,
{
    e.get(name)
        .unwrap_or_else(|| panic!("no {name} in {e:?}"))
        .parse()
        .unwrap_or_else(|e| panic!("{name}: {e:?}"))
}

/// The page of job `job`, rendered by Chromium, once it drew that job.
fn page_of(browser: &PathBuf, profile: &TempDir, http: &str, job: u64) -> String {
    let out = headless(
        browser,
        profile,
        &["--dump-dom"],
        &format!("{http}/?job={job}"),
    );
    let dom = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        dom.contains(&format!(r#"data-shown-job="{job}""#)),
        "the page drew job {job}: {dom}"
    );
    dom
}

/// The progress chart's last point is the job's status (for a job that
/// has ended, exactly).
fn assert_progress_ends_at(dom: &str, status: &serde_json::Value) {
    let chart = &elements(dom, "svg", r#"data-chart="progress""#)[0];
    for (a, field) in [
        ("data-last-units-done", "units_done"),
        ("data-last-units-total", "units_total"),
        ("data-last-nodes", "nodes"),
    ] {
        assert_eq!(
            attr::<u64>(chart, a),
            status[field].as_u64().unwrap(),
            "{a} against the status {status}"
        );
    }
    let done = &elements(dom, "polyline", r#"data-series="units_done""#)[0];
    assert!(attr::<u64>(done, "data-points") >= 2, "{done:?}");
    let last: Vec<f64> = done["data-last"]
        .split(',')
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(last[1], status["units_done"].as_f64().unwrap());
}

/// The dashboard's charts and pictures, drawn by a real Chromium from a
/// real coordinator running real jobs of three families: the histogram of
/// `hc` is the reference's count of games by length, the `hip-solve`
/// board has a cell per square in its opening's value, the `hip-draws`
/// boards are the results file's first lines; the progress curve ends at
/// the status, the ETA chart marks the real finish; and a running job's
/// curves follow it. Screenshots go to `target/dashboard-screenshots/`.
#[test]
fn charts_and_pictures_of_real_jobs_in_headless_chromium() {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var_os("ORCHARD_REQUIRE_BROWSER").is_none(),
            "ORCHARD_REQUIRE_BROWSER is set but Chromium is not installed"
        );
        eprintln!("skipped: Chromium not installed (apt-get install chromium)");
        return;
    };
    let dir = TempDir::new("dashcharts");
    let (port, http_port) = (free_port(), free_port());
    let grpc = format!("http://127.0.0.1:{port}");
    let http = format!("http://127.0.0.1:{http_port}");
    let _coord = start_coordinator(
        &dir,
        port,
        http_port,
        &["--unit-budget", "2000000", "--history-every", "0.2"],
    );
    // A job estimated before any worker starts on it (h'(4) without
    // --min-length: 47, a few seconds), so that it ends with an estimate.
    let estimated = common::submit_job(&grpc, &["hc", "--columns", "4", "--variant", "subsets"]);
    wait_status(&grpc, estimated, Duration::from_secs(60), |s| {
        s["estimated_nodes"].as_f64().unwrap() > 0.0
    });
    let _worker = common::start_worker(&dir, &grpc, "charts-worker");
    let profile = TempDir::new("chromium-profile-charts");
    let done = |job| {
        wait_status(&grpc, job, Duration::from_secs(60), |s| {
            s["state"] == "done"
        })
    };

    // A done job's estimate says how far off it was, not a progress
    // percentage below 100.
    let status = done(estimated);
    let dom = page_of(&browser, &profile, &http, estimated);
    let (est, nodes) = (
        status["estimated_nodes"].as_f64().unwrap(),
        status["nodes"].as_f64().unwrap(),
    );
    let off = 100.0 * (est - nodes) / nodes;
    let sign = if off >= 0.0 { "+" } else { "" };
    let shown = format!("({sign}{off:.1}% of the actual)");
    assert!(dom.contains(&shown), "{shown} in:\n{dom}");

    // hc, every game counted by its length.
    let hc = common::submit_job(&grpc, &["hc", "--columns", "3", "--min-length", "1"]);
    let status = done(hc);
    let dom = page_of(&browser, &profile, &http, hc);
    let want = orchard_hc::reference::histogram(
        &orchard_hc::reference::ended_games(3, orchard_hc::Variant::Pairs, &[]).unwrap(),
    );
    let bars: BTreeMap<u32, u64> = elements(&dom, "rect", "data-bar=")
        .iter()
        .map(|b| (attr(b, "data-bar"), attr(b, "data-value")))
        .collect();
    assert!(want.len() > 5, "{want:?}");
    assert_eq!(
        bars, want,
        "one bar per game length, as the reference counts"
    );
    assert_eq!(
        elements(&dom, "svg", r#"data-figure="histogram""#)[0]["data-bars"],
        want.len().to_string()
    );
    assert_progress_ends_at(&dom, &status);
    // The ETA chart marks the real finish, in seconds since the start.
    let finished = (status["finished_unix_ms"].as_u64().unwrap()
        - status["created_unix_ms"].as_u64().unwrap()) as f64
        / 1000.0;
    let line = &elements(&dom, "line", r#"data-line="finish""#)[0];
    assert!(
        (attr::<f64>(line, "data-y") - finished).abs() < 1e-6,
        "{line:?}"
    );
    screenshot(
        &browser,
        &profile,
        &format!("{http}/?job={hc}"),
        "hc-histogram.png",
    );

    // hip-solve: the board, each cell in the state of its opening.
    let hip = common::submit_job(&grpc, &["hip-solve", "--rows", "3", "--cols", "5"]);
    let status = done(hip);
    let dom = page_of(&browser, &profile, &http, hip);
    let board = &elements(&dom, "svg", r#"data-figure="board""#)[0];
    assert_eq!(
        (
            attr::<u32>(board, "data-rows"),
            attr::<u32>(board, "data-cols")
        ),
        (3, 5)
    );
    let cells = elements(&dom, "rect", "data-cell=");
    assert_eq!(cells.len(), 15, "rows x cols cells");
    let answer = common::final_results(&grpc, hip);
    let openings = answer["openings"].as_array().unwrap();
    let mut values = BTreeSet::new();
    for o in openings {
        let want = match o["winner"].as_u64() {
            Some(1) => "win",
            Some(0) => "draw",
            Some(2) => "loss",
            _ => "bounded",
        };
        values.insert(want);
        let cell = cells
            .iter()
            .find(|c| c["data-label"] == o["cell"].as_str().unwrap())
            .unwrap_or_else(|| panic!("no cell for {o}"));
        assert_eq!(cell["data-state"], want, "opening {o}");
    }
    assert!(
        values.len() >= 2,
        "openings of different values: {openings:?}"
    );
    assert_progress_ends_at(&dom, &status);
    screenshot(
        &browser,
        &profile,
        &format!("{http}/?job={hip}"),
        "hip-solve-openings.png",
    );

    // hip-draws: the first draws found, as the results file lists them.
    let draws = common::submit_job(&grpc, &["hip-draws", "--rows", "3", "--cols", "4"]);
    done(draws);
    let dom = page_of(&browser, &profile, &http, draws);
    let file = common::final_results(&grpc, draws)["results_file"]
        .as_str()
        .unwrap()
        .to_string();
    let lines: Vec<String> = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    let boards = elements(&dom, "svg", r#"data-figure="board""#);
    assert_eq!(boards.len(), 6, "the first few draws");
    let cells = elements(&dom, "rect", "data-cell=");
    assert_eq!(cells.len(), 6 * 12);
    for (i, (board, line)) in cells.chunks(12).zip(&lines).enumerate() {
        let drawn: Vec<String> = board
            .chunks(4)
            .map(|row| row.iter().map(|c| c["data-state"].as_str()).collect())
            .collect();
        assert_eq!(&drawn.join("/"), line, "draw {}", i + 1);
    }
    screenshot(
        &browser,
        &profile,
        &format!("{http}/?job={draws}"),
        "hip-draws-boards.png",
    );

    // A job running now (h'(4), every game: longer than this test): its
    // curves follow it, and its ETA is drawn once it has an estimate.
    let long = common::submit_job(&grpc, common::hc::JOB);
    let before = wait_status(&grpc, long, Duration::from_secs(60), |s| {
        s["units_done"].as_u64().unwrap() >= 20 && s["eta_seconds"].as_f64().unwrap() > 0.0
    });
    let dom = page_of(&browser, &profile, &http, long);
    let after = common::status(&grpc, long).unwrap();
    assert_eq!(after["state"], "running", "the job outlasts the test");
    let chart = &elements(&dom, "svg", r#"data-chart="progress""#)[0];
    let (drawn_done, drawn_nodes) = (
        attr::<u64>(chart, "data-last-units-done"),
        attr::<u64>(chart, "data-last-nodes"),
    );
    let range = |f: &str| before[f].as_u64().unwrap()..=after[f].as_u64().unwrap();
    assert!(
        range("units_done").contains(&drawn_done),
        "{drawn_done} in {before} .. {after}"
    );
    assert!(
        range("nodes").contains(&drawn_nodes),
        "{drawn_nodes} in {before} .. {after}"
    );
    let rate = &elements(&dom, "polyline", r#"data-series="nodes_per_second""#)[0];
    assert!(attr::<u64>(rate, "data-points") >= 2, "{rate:?}");
    let eta = &elements(&dom, "polyline", r#"data-series="predicted_finish""#)[0];
    assert!(attr::<u64>(eta, "data-points") >= 1, "{eta:?}");
    assert!(
        elements(&dom, "line", r#"data-line="finish""#).is_empty(),
        "no finish yet"
    );
    assert!(
        !elements(&dom, "rect", "data-bar=").is_empty(),
        "the histogram so far"
    );
    screenshot(
        &browser,
        &profile,
        &format!("{http}/?job={long}"),
        "hc-running.png",
    );
}

/// The jobs' histories survive a restart of the coordinator (they are kept
/// in `<db>.history`), and so do a done job's figures (stored with its
/// answer); a damaged history file costs the charts' past, with a warning,
/// never the coordinator.
#[test]
fn histories_survive_a_restart_and_a_damaged_file_is_set_aside() {
    let dir = TempDir::new("dashhistory");
    let (port, http_port) = (free_port(), free_port());
    let grpc = format!("http://127.0.0.1:{port}");
    let http = format!("http://127.0.0.1:{http_port}");
    let flags = ["--history-every", "0.2"];
    let mut coord = start_coordinator(&dir, port, http_port, &flags);
    let worker = common::start_worker(&dir, &grpc, "history-worker");
    let job = common::submit_job(&grpc, &["hc", "--columns", "3"]);
    wait_status(&grpc, job, Duration::from_secs(60), |s| {
        s["state"] == "done"
    });
    drop(worker);
    let url = format!("{http}/api/jobs/{job}/history");
    // The last sample (taken at the job's end) is in. Not judged by its
    // time alone: a running sample taken in the millisecond the job ended
    // carries the finish time too, and the closing one follows it.
    let wait_closed = || {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            let h = http_get_json(&url);
            if h["closed"] == true {
                let last = &h["samples"].as_array().unwrap().last().unwrap()["t_ms"];
                assert_eq!(*last, h["finished_unix_ms"], "{h}");
                return h;
            }
            assert!(std::time::Instant::now() < deadline, "no last sample: {h}");
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    let before = wait_closed();
    let figures_url = format!("{http}/api/jobs/{job}/figures");
    let figures = http_get_json(&figures_url);
    assert_eq!(figures["figures"][0]["bars"][0]["label"], "23", "{figures}");
    coord.sigterm();
    assert!(coord.wait_for(Duration::from_secs(30)).is_some());
    let history = dir.path("coord.db.history");
    assert!(history.exists());

    let mut coord = start_coordinator(&dir, port, http_port, &flags);
    assert_eq!(http_get_json(&url)["samples"], before["samples"]);
    // A done job's figures were stored with its answer.
    assert_eq!(http_get_json(&figures_url), figures);
    coord.sigterm();
    assert!(coord.wait_for(Duration::from_secs(30)).is_some());

    // One flipped bit: refused whole with a warning, and the coordinator
    // serves on with a fresh history (its one final sample again).
    let mut bytes = std::fs::read(&history).unwrap();
    let last = bytes.len() - 2;
    bytes[last] ^= 0x01;
    std::fs::write(&history, bytes).unwrap();
    let _coord = common::start_coordinator_logging_to(
        &dir,
        port,
        "coordinator-2.log",
        &[
            "--http",
            &format!("127.0.0.1:{http_port}"),
            "--history-every",
            "0.2",
        ],
    );
    wait_coordinator(&grpc, Duration::from_secs(20));
    let log = std::fs::read_to_string(dir.path("coordinator-2.log")).unwrap();
    assert!(
        log.contains("is damaged: checksum mismatch; the jobs' charts start again from now"),
        "{log}"
    );
    let after = wait_closed();
    assert_eq!(after["samples"].as_array().unwrap().len(), 1, "{after}");
    assert_eq!(
        after["samples"][0]["nodes"],
        before["samples"].as_array().unwrap().last().unwrap()["nodes"]
    );
}
