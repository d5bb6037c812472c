//! The ideal makespan: how long the job would take if every worker present
//! explored at its full speed all the time, with no coordinator, no round
//! trip and no idle worker. Workers join and leave, so the capacity is a
//! step function of time; the ideal is where its integral reaches the
//! job's nodes.

/// One worker's presence: its speed (nodes per second) from `from` to
/// `until` seconds after the job starts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Presence {
    pub speed: f64,
    pub from: f64,
    pub until: f64,
}

/// The first time at which the workers' capacity has covered `nodes`, or
/// `None` if it never does (every worker left first).
pub fn makespan(nodes: f64, workers: &[Presence]) -> Option<f64> {
    let mut events: Vec<(f64, f64)> = Vec::new();
    for w in workers {
        events.push((w.from, w.speed));
        if w.until.is_finite() {
            events.push((w.until, -w.speed));
        }
    }
    events.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut t, mut speed, mut done) = (0.0f64, 0.0f64, 0.0f64);
    for (at, delta) in events {
        if speed > 0.0 && done + speed * (at - t) >= nodes {
            return Some(t + (nodes - done) / speed);
        }
        done += speed * (at - t).max(0.0);
        t = t.max(at);
        speed += delta;
    }
    (speed > 0.0).then(|| t + (nodes - done) / speed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn always(speed: f64) -> Presence {
        Presence {
            speed,
            from: 0.0,
            until: f64::INFINITY,
        }
    }

    #[test]
    fn constant_workers_take_nodes_over_speed() {
        assert_eq!(makespan(100.0, &[always(10.0), always(40.0)]), Some(2.0));
    }

    #[test]
    fn leaving_and_joining_change_the_capacity_where_they_happen() {
        // 10/s for 5 s (50), then one of two leaves: 5/s for the 50 left.
        let leaver = Presence {
            speed: 5.0,
            from: 0.0,
            until: 5.0,
        };
        assert_eq!(makespan(100.0, &[always(5.0), leaver]), Some(15.0));
        // A joiner at 2 s: 10 by then, then 20/s for the 90 left.
        let joiner = Presence {
            speed: 15.0,
            from: 2.0,
            until: f64::INFINITY,
        };
        assert_eq!(makespan(100.0, &[always(5.0), joiner]), Some(6.5));
        assert_eq!(makespan(100.0, &[leaver]), None);
    }
}
