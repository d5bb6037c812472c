//! Hostile input: every blob a coordinator or a worker decodes from the
//! other side (units, summaries, lemmas, cache snapshots), mutated from a
//! job's own valid blobs and fed to the decoders that would see it. A
//! decoder must answer a clear error or a value, never panic, and never
//! allocate by what a length field claims (the codec's size limit).
//!
//! Mutation of valid blobs, rather than random bytes, reaches past the
//! format-version byte and the first length field into each family's own
//! checks. The mutations: bit flips, byte overwrites (including the
//! extreme values that make varint lengths huge), truncation, extension,
//! insertion, deletion, and splices of two blobs.
//!
//! A unit that passes `check_unit` after mutation is explored with a small
//! budget too: it is a unit the coordinator would hand to a worker.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::erased::PreparedJob;
use crate::estimate::Rng;
use crate::family::LocalFlags;

/// The valid blobs of one job that mutations start from.
#[derive(Debug, Default, Clone)]
pub struct Corpus {
    pub units: Vec<Vec<u8>>,
    pub summaries: Vec<Vec<u8>>,
    pub lemmas: Vec<Vec<u8>>,
    pub snapshots: Vec<Vec<u8>>,
}

impl Corpus {
    /// The job's root units, and what exploring the first few of them with
    /// `budget` nodes gives: their summaries, the units handed back, the
    /// lemmas and the cache snapshot the job then holds.
    pub fn of(job: &dyn PreparedJob, budget: u64) -> Corpus {
        let mut c = Corpus {
            units: job.root_units(),
            ..Corpus::default()
        };
        let flags = LocalFlags::default();
        for unit in c.units.clone().iter().take(4) {
            if let Ok(e) = job.explore(unit, &flags.context(budget)) {
                c.summaries.push(e.summary);
                c.units.extend(e.rest.into_iter().take(4));
            }
        }
        if let Some(l) = job.lemmas() {
            let taken = l.take(1 << 16);
            if !taken.is_empty() {
                c.lemmas.push(taken);
            }
        }
        if let Some(s) = job.cache().and_then(|c| c.snapshot()) {
            c.snapshots.push(s);
        }
        c
    }
}

/// What a fuzzing run did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    /// Mutated inputs fed to a decoder.
    pub inputs: u64,
    /// Of those, accepted as well formed (and, for units, explored).
    pub accepted: u64,
}

/// A decoder that panicked: the family, what it was decoding, the input.
#[derive(Debug, Clone)]
pub struct Panic {
    pub family: &'static str,
    pub decoder: &'static str,
    pub input: Vec<u8>,
    pub message: String,
}

impl std::fmt::Display for Panic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let hex: String = self.input.iter().map(|b| format!("{b:02x}")).collect();
        write!(
            f,
            "{} {} panicked on {} bytes ({hex}): {}",
            self.family,
            self.decoder,
            self.input.len(),
            self.message
        )
    }
}

/// One mutation of `base` (`other`: a second blob for splices).
pub fn mutate(rng: &mut Rng, base: &[u8], other: &[u8]) -> Vec<u8> {
    let mut b = base.to_vec();
    let pos = |rng: &mut Rng, len: usize| rng.below(len as u64 + 1) as usize;
    let rounds = 1 + rng.below(4);
    for _ in 0..rounds {
        match rng.below(9) {
            0 if !b.is_empty() => {
                let i = pos(rng, b.len() - 1);
                b[i] ^= 1 << rng.below(8);
            }
            1 if !b.is_empty() => {
                let i = pos(rng, b.len() - 1);
                b[i] = [0x00, 0xff, 0xfb, 0xfc, 0xfd, 0x7f, 0x80][rng.below(7) as usize];
            }
            2 if !b.is_empty() => {
                let i = pos(rng, b.len() - 1);
                b[i] = rng.below(256) as u8;
            }
            3 => b.truncate(pos(rng, b.len())),
            4 => {
                let n = rng.below(16);
                b.extend((0..n).map(|_| rng.below(256) as u8));
            }
            5 => {
                let i = pos(rng, b.len());
                b.insert(i, rng.below(256) as u8);
            }
            6 if !b.is_empty() => {
                let i = pos(rng, b.len() - 1);
                let j = (i + 1 + rng.below(8) as usize).min(b.len());
                b.drain(i..j);
            }
            7 => {
                let i = pos(rng, b.len());
                let j = pos(rng, other.len());
                b.truncate(i);
                b.extend_from_slice(&other[j..]);
            }
            _ => {
                // A run of 0xff: the largest varint lengths bincode reads.
                let i = pos(rng, b.len());
                let n = 1 + rng.below(9) as usize;
                b.splice(i..i, std::iter::repeat_n(0xff, n));
            }
        }
    }
    b
}

fn guarded<T>(
    family: &'static str,
    decoder: &'static str,
    input: &[u8],
    f: impl FnOnce() -> T,
) -> Result<T, Panic> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|e| Panic {
        family,
        decoder,
        input: input.to_vec(),
        message: e
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| e.downcast_ref::<String>().cloned())
            .unwrap_or_default(),
    })
}

/// Feeds `inputs` mutations of `corpus` to the decoders of `job`: units to
/// `check_unit`, `unit_label`, the aggregate's moot checks and figures and
/// (when accepted) `explore` with a budget of `explore_budget` nodes;
/// summaries to `check_summary` and the aggregate (its report and
/// figures); lemmas to `check` (and `learn` when accepted); snapshots to
/// `restore`. Stops at the first panic.
pub fn fuzz(
    job: &dyn PreparedJob,
    corpus: &Corpus,
    seed: u64,
    inputs: u64,
    explore_budget: u64,
) -> Result<Tally, Panic> {
    let family = job.family();
    let mut rng = Rng::new(seed);
    let mut tally = Tally::default();
    let kinds: Vec<(usize, &Vec<Vec<u8>>)> = [
        &corpus.units,
        &corpus.summaries,
        &corpus.lemmas,
        &corpus.snapshots,
    ]
    .into_iter()
    .enumerate()
    .filter(|(_, v)| !v.is_empty())
    .collect();
    if kinds.is_empty() {
        return Ok(tally);
    }
    let flags = LocalFlags::default();
    while tally.inputs < inputs {
        let (kind, blobs) = kinds[rng.below(kinds.len() as u64) as usize];
        let base = &blobs[rng.below(blobs.len() as u64) as usize];
        let other = &blobs[rng.below(blobs.len() as u64) as usize];
        let input = mutate(&mut rng, base, other);
        tally.inputs += 1;
        let accepted = match kind {
            0 => {
                let ok = guarded(family, "check_unit", &input, || job.check_unit(&input))?.is_ok();
                // An error is a fine answer here; only a panic is not.
                let _ = guarded(family, "unit_label", &input, || job.unit_label(&input))?;
                guarded(family, "is_moot", &input, || {
                    let agg = job.new_aggregate();
                    agg.moot_judge()
                        .map(|j| (j.is_moot(&input), j.speculation(&input)))
                })?;
                guarded(family, "figures", &input, || {
                    job.new_aggregate().figures(&[&input])
                })?;
                if ok {
                    let _ = guarded(family, "explore", &input, || {
                        job.explore(&input, &flags.context(explore_budget))
                    })?;
                }
                ok
            }
            1 => {
                let ok = guarded(family, "check_summary", &input, || {
                    job.check_summary(&input)
                })?
                .is_ok();
                guarded(family, "absorb", &input, || {
                    let mut agg = job.new_aggregate();
                    if agg.absorb(&input).is_ok() {
                        let _ = agg.report();
                        let _ = agg.figures(&[]);
                    }
                })?;
                ok
            }
            2 => {
                let l = job.lemmas().expect("lemmas in the corpus");
                let ok = guarded(family, "lemmas check", &input, || l.check(&input))?.is_ok();
                if ok {
                    let _ = guarded(family, "lemmas learn", &input, || l.learn(&input))?;
                    let _ = guarded(family, "lemmas observe", &input, || l.observe(&input))?;
                }
                ok
            }
            _ => {
                let c = job.cache().expect("snapshots in the corpus");
                guarded(family, "snapshot restore", &input, || c.restore(&input))?.is_ok()
            }
        };
        tally.accepted += u64::from(accepted);
    }
    Ok(tally)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutations_are_reproducible_and_varied() {
        let base: Vec<u8> = (0..32).collect();
        let run = |seed| {
            let mut rng = Rng::new(seed);
            (0..200)
                .map(|_| mutate(&mut rng, &base, &base[5..]))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(1), run(1));
        let all = run(1);
        let distinct: std::collections::BTreeSet<_> = all.iter().collect();
        assert!(distinct.len() > 150, "{} distinct", distinct.len());
        assert!(all.iter().any(|m| m.len() < base.len()));
        assert!(all.iter().any(|m| m.len() > base.len()));
        assert!(all.iter().any(|m| m.windows(3).any(|w| w == [0xff; 3])));
    }
}
