//! The coordinator's and workers' HTTP side: `/metrics` and the JSON API.

/// The value of the first line of a Prometheus text `body` that starts with
/// `line_prefix` (a metric's name and labels).
pub fn metric(body: &str, line_prefix: &str) -> f64 {
    body.lines()
        .find(|l| l.starts_with(line_prefix))
        .unwrap_or_else(|| panic!("no '{line_prefix}' in:\n{body}"))
        .rsplit(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// GET over plain HTTP/1.1 with std only (no client dependency needed);
/// panics unless the answer is 200. Returns the body.
pub fn http_get(url: &str) -> String {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest
        .split_once('/')
        .map(|(h, p)| (h, format!("/{p}")))
        .unwrap_or((rest, "/".into()));
    let mut s = std::net::TcpStream::connect(host).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let (head, body) = out.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{url}: {head}");
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        // De-chunk.
        let mut body = body;
        let mut plain = String::new();
        loop {
            let (size, rest) = body.split_once("\r\n").unwrap();
            let n = usize::from_str_radix(size.trim(), 16).unwrap();
            if n == 0 {
                break;
            }
            plain.push_str(&rest[..n]);
            body = &rest[n + 2..];
        }
        plain
    } else {
        body.to_string()
    }
}

/// [`http_get`], the body parsed as JSON.
pub fn http_get_json(url: &str) -> serde_json::Value {
    serde_json::from_str(&http_get(url)).unwrap_or_else(|e| panic!("{url}: {e}"))
}

/// How many resolved (done or cancelled) units the dashboard's picture of
/// job `job`'s tree draws, from the coordinator's HTTP address `http`
/// (`http://host:port`).
pub fn units_drawn_in_tree(http: &str, job: u64) -> u64 {
    http_get_json(&format!("{http}/api/jobs/{job}/tree"))["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["done"].as_u64().unwrap())
        .sum()
}

/// A counter or gauge of the `/metrics` at `addr` (`host:port`): a
/// worker's, or a coordinator's HTTP side.
pub fn metric_at(addr: &str, name: &str) -> u64 {
    let text = http_get(&format!("http://{addr}/metrics"));
    metric(&text, &format!("{name} ")) as u64
}

/// How many units the coordinator whose HTTP side is at `addr` (`host:port`)
/// says the worker named `hostname` holds, from the dashboard's API.
pub fn units_held_by(addr: &str, hostname: &str) -> u64 {
    worker_figure(addr, hostname, "units")
}

/// The nodes the coordinator whose HTTP side is at `addr` (`host:port`)
/// counts for the worker named `hostname` on the dashboard's API: those of
/// its reported units and the progress of those it holds.
pub fn worker_nodes(addr: &str, hostname: &str) -> u64 {
    worker_figure(addr, hostname, "nodes")
}

/// One figure of the worker named `hostname` on the dashboard's API (0 if
/// the coordinator does not list it).
fn worker_figure(addr: &str, hostname: &str, figure: &str) -> u64 {
    let api = http_get_json(&format!("http://{addr}/api/jobs"));
    api["workers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["hostname"] == hostname)
        .map_or(0, |w| w[figure].as_u64().unwrap())
}
