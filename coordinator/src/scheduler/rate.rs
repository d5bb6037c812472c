//! Node rates: nodes per second over a sliding window of (instant, total
//! nodes) samples. The instants come from the scheduler's clock; a meter
//! never reads the time itself.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Nodes-per-second over a sliding window of samples.
#[derive(Debug, Default)]
pub(super) struct RateMeter {
    samples: VecDeque<(Instant, u64)>,
}

impl RateMeter {
    const WINDOW: Duration = Duration::from_secs(20);

    pub(super) fn sample(&mut self, now: Instant, nodes: u64) {
        self.samples.push_back((now, nodes));
        while self.samples.len() > 2 && now.duration_since(self.samples[0].0) > Self::WINDOW {
            self.samples.pop_front();
        }
    }

    pub(super) fn rate(&self) -> f64 {
        match (self.samples.front(), self.samples.back()) {
            (Some(a), Some(b)) if b.0 > a.0 => {
                b.1.saturating_sub(a.1) as f64 / (b.0 - a.0).as_secs_f64()
            }
            _ => 0.0,
        }
    }
}
