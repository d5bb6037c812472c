//! How results and progress are shown: one JSON object for scripts, short
//! lines for people.

use orchard_coordinator::{JobState, JobStatus};

/// Large counts in engineering notation.
pub fn si(x: f64) -> String {
    const UNITS: [(f64, &str); 4] = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];
    for (scale, suffix) in UNITS {
        if x >= scale {
            return format!("{:.2}{suffix}", x / scale);
        }
    }
    format!("{x:.0}")
}

/// A duration as "2h05m", "3m12s" or "45s".
pub fn duration(secs: f64) -> String {
    let s = secs.round() as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// Fraction of the estimated nodes explored, when there is an estimate.
fn fraction(s: &JobStatus) -> Option<f64> {
    (s.estimated_nodes > 0.0).then(|| (s.nodes as f64 / s.estimated_nodes).clamp(0.0, 1.0))
}

/// A text progress bar of `width` cells.
pub fn bar(fraction: f64, width: usize) -> String {
    let full = ((fraction * width as f64).round() as usize).min(width);
    format!("[{}{}]", "#".repeat(full), "-".repeat(width - full))
}

/// One line of progress.
pub fn progress_line(s: &JobStatus) -> String {
    let estimate = match fraction(s) {
        Some(f) => format!(" of ~{} ({:.1}%)", si(s.estimated_nodes), 100.0 * f),
        None => String::new(),
    };
    let eta = if s.eta_seconds > 0.0 {
        format!(" | ETA {}", duration(s.eta_seconds))
    } else {
        String::new()
    };
    let discarded = if s.nodes_discarded > 0 {
        format!(" (+{} discarded)", si(s.nodes_discarded as f64))
    } else {
        String::new()
    };
    // A verified job: its replicas, verified units and mismatches, the
    // workers it shut out, and why its units wait, when they do.
    let verified = if s.replicas > 1 {
        let waiting = if s.waiting.is_empty() {
            String::new()
        } else {
            format!(" | {}", s.waiting)
        };
        let excluded = if s.excluded.is_empty() {
            String::new()
        } else {
            format!(" | excluded: {}", s.excluded.join(", "))
        };
        format!(
            " | {} replicas: {} verified, {} mismatches{excluded}{waiting}",
            s.replicas, s.verified_units, s.mismatches
        )
    } else {
        String::new()
    };
    format!(
        "units {}/{} ({} running) | {} nodes{discarded}{estimate} | {}/s{eta} | bound {}{verified}",
        s.units_done,
        s.units_total,
        s.units_running,
        si(s.nodes as f64),
        si(s.nodes_per_second),
        s.bound
    )
}

/// Characters of a job's parameters on its status line.
const PARAMS_SHOWN: usize = 120;

/// One line per job for `orchard status`, with a progress bar (nodes
/// against the estimate while running; full when done).
pub fn status_line(s: &JobStatus) -> String {
    let mut params = s
        .params_json
        .trim_start_matches('{')
        .trim_end_matches('}')
        .replace('"', "");
    // A sat job's parameters hold its whole formula: the line shows a start.
    if params.chars().count() > PARAMS_SHOWN {
        params = params.chars().take(PARAMS_SHOWN).collect::<String>() + "...";
    }
    let done = if s.state == JobState::Done {
        Some(1.0)
    } else {
        fraction(s)
    };
    let progress = done
        .map(|f| bar(f, 20))
        .unwrap_or_else(|| format!("[{:^18}]", "?"));
    format!(
        "job {:>4}  {:<9}  {} {}  {progress} {}",
        s.job_id,
        s.state,
        s.family,
        params,
        progress_line(s)
    )
}
