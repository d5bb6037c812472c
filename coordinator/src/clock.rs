//! Where the coordinator's time comes from.
//!
//! The scheduler never reads the clock itself: it asks the [`Clock`] it was
//! given. The coordinator runs on [`SystemClock`]; tests hand the scheduler
//! a `ManualClock` (compiled for tests only) and move time by hand, so that
//! lease expiry, liveness and rates can be tested without sleeping. This
//! module is the only place in the coordinator's state machine that reads
//! the system's clocks.

use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// A source of time: a monotone instant (for leases, liveness and rates)
/// and wall-clock milliseconds (for stored timestamps).
pub trait Clock: Send + Sync {
    /// Now, on the monotone clock.
    fn now(&self) -> Instant;
    /// Now, in milliseconds since the Unix epoch.
    fn unix_ms(&self) -> u64;
}

/// The system's clocks.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn unix_ms(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0)
    }
}

#[cfg(test)]
pub use manual::ManualClock;

#[cfg(test)]
mod manual {
    use std::sync::Mutex;
    use std::time::{Duration, Instant};

    use super::{Clock, SystemClock};

    /// A clock that stands still until [`ManualClock::advance`] moves it (both
    /// of its readings move together). For tests.
    #[derive(Debug)]
    pub struct ManualClock {
        /// (the instant, the Unix milliseconds) it reads now.
        now: Mutex<(Instant, u64)>,
    }

    impl ManualClock {
        /// A clock reading the present moment, until advanced.
        pub fn new() -> Self {
            ManualClock {
                now: Mutex::new((Instant::now(), SystemClock.unix_ms())),
            }
        }

        /// Moves the clock forward by `by`.
        pub fn advance(&self, by: Duration) {
            let mut now = self.now.lock().unwrap_or_else(|p| p.into_inner());
            now.0 += by;
            now.1 += by.as_millis() as u64;
        }
    }

    impl Default for ManualClock {
        fn default() -> Self {
            Self::new()
        }
    }

    impl Clock for ManualClock {
        fn now(&self) -> Instant {
            self.now.lock().unwrap_or_else(|p| p.into_inner()).0
        }

        fn unix_ms(&self) -> u64 {
            self.now.lock().unwrap_or_else(|p| p.into_inner()).1
        }
    }
}
