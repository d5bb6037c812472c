//! Jobs made of independent random runs (the neural-network families): a
//! unit is a range of run numbers, and run `k` of a job seeded `S` starts
//! from [`run_seed`]`(S, k)`, so any run can be repeated alone and the
//! summary of a range does not depend on which worker made it or in what
//! order. There is no search tree here: splitting a unit hands back the
//! runs not started, and a run is never cut.

use std::sync::atomic::Ordering;

use serde::{Deserialize, Serialize};

use crate::error::FamilyError;
use crate::estimate::Rng;
use crate::family::{Exploration, ExploreContext};

/// How many root units a job's runs are cut into when the job does not say.
pub const DEFAULT_ROOT_UNITS: u64 = 64;

/// The seed of run `k` of a job seeded `seed`: two rounds of SplitMix64
/// ([`Rng`]), `mix(mix(seed) ^ k)`, a bijection of `k` for each `seed` (so
/// no two runs of a job share a seed) that spreads the runs' streams across
/// the generator's period. SplitMix64 is integer arithmetic only, so the
/// streams are the same on every platform.
pub fn run_seed(seed: u64, k: u64) -> u64 {
    Rng::new(Rng::new(seed).next_u64() ^ k).next_u64()
}

/// The runs `start..end` of a job: a unit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRange {
    pub start: u64,
    pub end: u64,
}

impl RunRange {
    /// `0..total` cut into consecutive ranges of `per_unit` runs (default:
    /// as many as make at most [`DEFAULT_ROOT_UNITS`] ranges).
    pub fn cover(total: u64, per_unit: Option<u64>) -> Vec<RunRange> {
        let len = per_unit
            .unwrap_or_else(|| total.div_ceil(DEFAULT_ROOT_UNITS))
            .max(1);
        let mut units = Vec::new();
        let mut start = 0;
        while start < total {
            let end = start.saturating_add(len).min(total);
            units.push(RunRange { start, end });
            start = end;
        }
        units
    }

    /// Makes the runs of this range in order, each with `run(summary, k)`,
    /// until the node budget is spent or a stop is asked for: then the runs
    /// not started are handed back as one range. At least one run is made,
    /// so every exploration advances. `nodes` reads the summary's node
    /// count, which progress reports show.
    pub fn explore<S>(
        &self,
        total: u64,
        ctx: &ExploreContext<'_>,
        mut summary: S,
        nodes: impl Fn(&S) -> u64,
        mut run: impl FnMut(&mut S, u64) -> Result<(), FamilyError>,
    ) -> Result<Exploration<S, RunRange>, FamilyError> {
        if self.start >= self.end || self.end > total {
            return Err(FamilyError::BadUnit(format!(
                "runs {}..{} of a job of {total} runs",
                self.start, self.end
            )));
        }
        for k in self.start..self.end {
            if k > self.start && (nodes(&summary) >= ctx.budget || ctx.stop_requested()) {
                let rest = RunRange {
                    start: k,
                    end: self.end,
                };
                return Ok(Exploration::new(summary, vec![rest]));
            }
            run(&mut summary, k)?;
            ctx.progress.store(nodes(&summary), Ordering::Relaxed);
        }
        Ok(Exploration::Finished(summary))
    }

    /// How a unit is named in logs and the units file.
    pub fn label(&self) -> String {
        format!("runs {}..{}", self.start, self.end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::family::LocalFlags;

    #[test]
    fn cover_partitions_the_runs() {
        for total in [1, 7, 64, 65, 1000] {
            for per_unit in [None, Some(1), Some(3), Some(5000)] {
                let units = RunRange::cover(total, per_unit);
                assert_eq!(units[0].start, 0);
                assert_eq!(units.last().unwrap().end, total);
                assert!(units.windows(2).all(|w| w[0].end == w[1].start));
                assert!(units.iter().all(|u| u.start < u.end));
                if per_unit.is_none() {
                    assert!(units.len() as u64 <= DEFAULT_ROOT_UNITS);
                }
            }
        }
        assert!(RunRange::cover(0, None).is_empty());
    }

    #[test]
    fn run_seeds_differ_within_a_job() {
        let seeds: std::collections::BTreeSet<u64> = (0..10_000).map(|k| run_seed(1, k)).collect();
        assert_eq!(seeds.len(), 10_000);
        assert_ne!(run_seed(1, 0), run_seed(2, 0));
    }

    /// Each run adds its number; the budget (one node a run) splits the
    /// range, and the pieces together made every run exactly once.
    #[test]
    fn explore_hands_back_the_runs_not_started() {
        let flags = LocalFlags::default();
        let mut pending = vec![RunRange { start: 3, end: 20 }];
        let (mut made, mut pieces) = (Vec::new(), 0);
        while let Some(unit) = pending.pop() {
            let e = unit
                .explore(
                    20,
                    &flags.context(4),
                    Vec::new(),
                    |s| s.len() as u64,
                    |s, k| {
                        s.push(k);
                        Ok(())
                    },
                )
                .unwrap();
            pieces += 1;
            match e {
                Exploration::Finished(s) => made.extend(s),
                Exploration::Split { explored, rest } => {
                    assert_eq!(explored.len(), 4);
                    made.extend(explored);
                    pending.extend(rest);
                }
            }
        }
        assert_eq!(made, (3..20).collect::<Vec<_>>());
        assert_eq!(pieces, 5);
        let bad = RunRange { start: 5, end: 5 };
        assert!(bad
            .explore(20, &flags.context(4), (), |_| 0, |_, _| Ok(()))
            .is_err());
        let past = RunRange { start: 5, end: 21 };
        assert!(past
            .explore(20, &flags.context(4), (), |_| 0, |_, _| Ok(()))
            .is_err());
    }
}
