//! The checks every family's tests run, for families in this repository
//! and out of it alike: a family written in another crate calls these from
//! its own tests and is held to the same standard as the built-in ones.
//!
//! The pure checks of a search (pieces that merge in any order, a probe
//! that walks the search, an estimate against a known size) live in
//! [`orchard_core::testing`]; what needs a family's command line lives
//! here.

use orchard_core::hostile::{fuzz, Corpus, Tally};
use orchard_core::Host;

use crate::Families;

/// Mutated input for one job of `families`, given as its command line
/// would give it (`["queens", "--n", "6"]`): `inputs` mutations (from
/// `seed`) of the job's own valid units, summaries, lemmas and cache
/// snapshots are fed to every decoder that sees them from the other side of
/// the wire ([`orchard_core::hostile`]), and a unit that passes its check
/// is explored with a small budget, hosted as `host` says (a worker's
/// settings). Returns what was fed; an error names the job, the decoder
/// and the input that made it panic.
pub fn hostile_input(
    families: &Families,
    sample: &[&str],
    host: &Host,
    inputs: u64,
    seed: u64,
) -> Result<(Tally, Corpus), String> {
    let params = families
        .params_from_args(sample)
        .map_err(|e| format!("{sample:?}: {e}"))?;
    let job = families
        .registry
        .by_name(sample[0])
        .and_then(|f| f.prepare(&params, host))
        .map_err(|e| format!("{sample:?}: {e}"))?;
    let corpus = Corpus::of(job.as_ref(), 20_000);
    if corpus.units.is_empty() || corpus.summaries.is_empty() {
        return Err(format!(
            "{sample:?}: the job has no units or no summaries to mutate"
        ));
    }
    let tally =
        fuzz(job.as_ref(), &corpus, seed, inputs, 2_000).map_err(|p| format!("{sample:?}: {p}"))?;
    Ok((tally, corpus))
}
