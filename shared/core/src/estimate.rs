//! Estimating a search before running it: Knuth's random probes (D. E. Knuth,
//! "Estimating the efficiency of backtrack programs", Math. Comp. 29, 1975).
//!
//! A *probe* walks from the root of a tree to a leaf, choosing a child
//! uniformly at random at every node; with `d0, d1, ..., d(k-1)` the numbers of
//! children of the nodes on the walk, `1 + d0 + d0 d1 + ... + d0 d1 ... d(k-1)`
//! is an unbiased estimate of the number of nodes of the tree (a node at depth
//! `i` is reached with probability `1 / (d0 ... d(i-1))`). The mean of many
//! probes estimates the tree size, and their spread gives the standard error.
//!
//! A job with several root units is probed by picking a root unit uniformly
//! and multiplying its probe by the number of root units, which keeps the
//! estimate unbiased.
//!
//! The distribution of one probe is heavily skewed (rare deep walks carry
//! huge weights), so the standard error is itself estimated from the sample
//! and tends to be low when too few probes ever reach the heavy part of the
//! tree; use many probes. The families decide what a node is
//! ([`crate::Probing`]); the arithmetic is all here.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::erased::PreparedJob;
use crate::error::FamilyError;
use crate::family::LocalFlags;

/// A small, seedable pseudo-random generator (SplitMix64, Steele, Lea and
/// Flood 2014): 64 bits of state, passes BigCrush, plenty for sampling
/// probes; kept in code rather than adding a dependency.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` without modulo bias (Lemire's multiply-and-reject).
    /// `n` must be positive.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "Rng::below(0)");
        let threshold = n.wrapping_neg() % n;
        loop {
            let m = u128::from(self.next_u64()) * u128::from(n);
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }
}

/// Mean and spread of a sample, accumulated one value at a time (Welford's
/// algorithm, stable for values of very different sizes).
#[derive(Debug, Clone, Default)]
pub struct Accumulator {
    n: u64,
    mean: f64,
    m2: f64,
}

impl Accumulator {
    pub fn push(&mut self, x: f64) {
        self.n += 1;
        let delta = x - self.mean;
        self.mean += delta / self.n as f64;
        self.m2 += delta * (x - self.mean);
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// The standard error of the mean: the sample standard deviation (with
    /// `n - 1`) over `sqrt(n)`; 0 for fewer than two values.
    pub fn std_error(&self) -> f64 {
        if self.n < 2 {
            return 0.0;
        }
        let n = self.n as f64;
        (self.m2 / (n - 1.0)).max(0.0).sqrt() / n.sqrt()
    }
}

/// z for a two-sided 95% normal interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// An estimate of a job's total node count.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    pub probes: u64,
    pub seed: u64,
    /// The mean of the probes: the estimated number of nodes.
    pub nodes: f64,
    /// The standard error of that mean.
    pub std_error: f64,
    /// `nodes ± 1.96 std_error` (a normal approximation), the low end raised
    /// to the number of root units (each is at least one node).
    pub low95: f64,
    pub high95: f64,
    /// The longest probe, in moves below its root unit.
    pub max_depth: usize,
}

/// Why a job could not be estimated.
#[derive(Debug, thiserror::Error)]
pub enum EstimateError {
    #[error("search family '{0}' does not support estimates")]
    Unsupported(&'static str),
    #[error("--probes must be at least 1")]
    NoProbes,
    #[error("the job has no root units")]
    NoUnits,
    #[error("the estimate overflowed (a probe's weight exceeds the range of f64)")]
    NotFinite,
    #[error(transparent)]
    Family(#[from] FamilyError),
}

/// Estimates the total number of nodes of `job` from `probes` random probes
/// drawn with `seed`, every probe assuming the job-wide `bound` (see
/// [`crate::ExploreContext::bound`]). Deterministic for a given job, count,
/// seed and bound.
pub fn estimate(
    job: &dyn PreparedJob,
    probes: u64,
    seed: u64,
    bound: u64,
) -> Result<Estimate, EstimateError> {
    if probes == 0 {
        return Err(EstimateError::NoProbes);
    }
    let roots = job.root_units();
    if roots.is_empty() {
        return Err(EstimateError::NoUnits);
    }
    let weight = roots.len() as f64;
    let mut rng = Rng::new(seed);
    let mut acc = Accumulator::default();
    let mut max_depth = 0;
    for _ in 0..probes {
        let unit = &roots[rng.below(roots.len() as u64) as usize];
        let probe = job
            .probe(unit, bound, &mut |n| rng.below(n))?
            .ok_or(EstimateError::Unsupported(job.family()))?;
        max_depth = max_depth.max(probe.branching.len());
        let x = weight * probe.estimate();
        if !x.is_finite() {
            return Err(EstimateError::NotFinite);
        }
        acc.push(x);
    }
    let (nodes, std_error) = (acc.mean(), acc.std_error());
    if !nodes.is_finite() || !std_error.is_finite() {
        return Err(EstimateError::NotFinite);
    }
    Ok(Estimate {
        probes,
        seed,
        nodes,
        std_error,
        low95: (nodes - Z95 * std_error).max(weight),
        high95: nodes + Z95 * std_error,
        max_depth,
    })
}

/// Whether the job's family can estimate at all (one probe of its first root
/// unit; families that cannot answer at once).
pub fn supported(job: &dyn PreparedJob) -> Result<bool, EstimateError> {
    let roots = job.root_units();
    let unit = roots.first().ok_or(EstimateError::NoUnits)?;
    let mut rng = Rng::new(0);
    Ok(job.probe(unit, 0, &mut |n| rng.below(n))?.is_some())
}

/// What a short real run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    /// Nodes explored.
    pub nodes: u64,
    /// Wall time spent exploring them, in seconds.
    pub seconds: f64,
    /// The whole search finished within the limits: `nodes` is exact.
    pub finished: bool,
    /// The job-wide bound the run reached (for `hc` the best length found).
    pub bound: u64,
}

impl Calibration {
    pub fn nodes_per_second(&self) -> f64 {
        if self.seconds > 0.0 {
            self.nodes as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// Runs the real search on this thread, from the root units in search order,
/// in pieces of `chunk` nodes, until `limit` has passed or the search is
/// finished, following every split exactly as a worker would. Measures the
/// node rate on one core, and the bound reached.
pub fn calibrate(
    job: &dyn PreparedJob,
    limit: Duration,
    chunk: u64,
) -> Result<Calibration, FamilyError> {
    let flags = LocalFlags::default();
    let ctx = flags.context(chunk.max(1));
    // A stack whose top is the next unit in search order.
    let mut pending: Vec<Vec<u8>> = job.root_units();
    pending.reverse();
    let mut nodes = 0u64;
    let started = Instant::now();
    while let Some(unit) = pending.pop() {
        let explored = job.explore(&unit, &ctx)?;
        nodes = nodes.saturating_add(explored.nodes);
        pending.extend(explored.rest.into_iter().rev());
        if started.elapsed() >= limit {
            break;
        }
    }
    Ok(Calibration {
        nodes,
        seconds: started.elapsed().as_secs_f64(),
        finished: pending.is_empty(),
        bound: flags.bound.load(Ordering::Relaxed),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accumulator_mean_and_std_error() {
        let mut a = Accumulator::default();
        for x in [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0] {
            a.push(x);
        }
        assert_eq!(a.count(), 8);
        assert!((a.mean() - 5.0).abs() < 1e-12);
        // Sample variance 32 / 7.
        let se = (32.0f64 / 7.0).sqrt() / 8f64.sqrt();
        assert!((a.std_error() - se).abs() < 1e-12, "{}", a.std_error());
        let mut one = Accumulator::default();
        one.push(3.0);
        assert_eq!(one.std_error(), 0.0);
    }

    #[test]
    fn rng_is_deterministic_and_uniform_below_n() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        let mut c = Rng::new(8);
        let xs: Vec<u64> = (0..10).map(|_| a.next_u64()).collect();
        let ys: Vec<u64> = (0..10).map(|_| b.next_u64()).collect();
        let zs: Vec<u64> = (0..10).map(|_| c.next_u64()).collect();
        assert_eq!(xs, ys);
        assert_ne!(xs, zs);
        let mut counts = [0u32; 3];
        for _ in 0..30_000 {
            let k = a.below(3);
            counts[k as usize] += 1;
        }
        for &n in &counts {
            assert!((9_500..10_500).contains(&n), "{counts:?}");
        }
        assert_eq!(a.below(1), 0);
    }
}
