//! The type-erased boundary between the families and the cluster.
//!
//! The coordinator, the worker and the CLI hold families as [`DynFamily`],
//! jobs as [`PreparedJob`] and running answers as [`Aggregate`]; units,
//! summaries and lemmas cross it as blobs of [`crate::codec`]. [`Erased`]
//! turns any [`SearchFamily`] into a [`DynFamily`]; it is the only code that
//! knows both sides.
//!
//! **API boundary**: nothing outside `shared/` names a family type; a family
//! reaches the cluster only through these three traits.

use std::marker::PhantomData;
use std::sync::Arc;

use crate::capability::{CacheSnapshot, LemmaExchange};
use crate::codec;
use crate::error::FamilyError;
use crate::family::{Exploration, ExploreContext, FamilyReport, Host, SearchFamily};
use crate::figure::Figure;
use crate::probe::Probe;

/// A family, without its types.
pub trait DynFamily: Send + Sync {
    fn name(&self) -> &'static str;
    fn about(&self) -> &'static str;
    /// Parses and checks canonical JSON parameters into a job hosted by
    /// `host` (see [`SearchFamily::new`]).
    fn prepare(&self, params_json: &str, host: &Host) -> Result<Arc<dyn PreparedJob>, FamilyError>;
    /// The canonical form of JSON parameters: what [`PreparedJob::params_json`]
    /// of a job prepared from them would be, without preparing it. Parameters
    /// stored by an older build leave out what the family has gained since
    /// with a default (queens' `method`); their canonical form names it, so
    /// that the same command finds the same stored job.
    fn canonical_params(&self, params_json: &str) -> Result<String, FamilyError>;
}

/// A job of some family: its parameters, checked, and its state.
pub trait PreparedJob: Send + Sync {
    fn family(&self) -> &'static str;
    /// Canonical JSON of the parameters (identifies the job for resume).
    fn params_json(&self) -> String;
    fn root_units(&self) -> Vec<Vec<u8>>;
    fn explore(&self, unit: &[u8], ctx: &ExploreContext<'_>)
        -> Result<DynExploration, FamilyError>;
    /// A fresh, empty job-level aggregate.
    fn new_aggregate(&self) -> Box<dyn Aggregate>;
    fn unit_label(&self, unit: &[u8]) -> Result<String, FamilyError>;
    /// Checks that a blob is a well-formed unit of this family.
    fn check_unit(&self, unit: &[u8]) -> Result<(), FamilyError>;
    /// Checks that a blob is a well-formed summary of this family.
    fn check_summary(&self, summary: &[u8]) -> Result<(), FamilyError>;
    /// See [`SearchFamily::verified_part`]: what replicas of `unit` must
    /// agree on in `summary`, given the job-wide `bound`.
    fn verified_part(
        &self,
        unit: &[u8],
        summary: &[u8],
        bound: u64,
    ) -> Result<Vec<u8>, FamilyError>;
    /// A summary in the family's words (its `Debug` form, cut at
    /// [`DESCRIBE_LIMIT`] characters), for the record of a mismatch.
    fn describe_summary(&self, summary: &[u8]) -> Result<String, FamilyError>;
    /// Whether units can become moot (see [`crate::MootUnits`]).
    fn has_moot_units(&self) -> bool;
    /// One probe (see [`crate::Probing`]); `Ok(None)`: the family cannot
    /// estimate.
    fn probe(
        &self,
        unit: &[u8],
        bound: u64,
        pick: &mut dyn FnMut(u64) -> u64,
    ) -> Result<Option<Probe>, FamilyError>;
    /// The job's lemma exchange, if its family shares lemmas.
    fn lemmas(&self) -> Option<&dyn LemmaExchange>;
    /// The job's cache snapshots, if its family keeps a cache worth saving.
    fn cache(&self) -> Option<&dyn CacheSnapshot>;
}

/// Longest description of a summary [`PreparedJob::describe_summary`]
/// gives (a summary can list thousands of witnesses).
pub const DESCRIBE_LIMIT: usize = 2000;

/// The encoded result of exploring one unit.
#[derive(Debug, Clone)]
pub struct DynExploration {
    pub summary: Vec<u8>,
    pub nodes: u64,
    /// Empty when the unit finished.
    pub rest: Vec<Vec<u8>>,
}

/// The running, merged result of a job.
pub trait Aggregate: Send {
    fn absorb(&mut self, summary: &[u8]) -> Result<(), FamilyError>;
    fn nodes(&self) -> u64;
    fn bound(&self) -> u64;
    fn report(&self) -> FamilyReport;
    /// See [`SearchFamily::figures`]; `running` are encoded units (a
    /// malformed one is left out).
    fn figures(&self, running: &[&[u8]]) -> Vec<Figure>;
    /// The [`crate::MootJudge`] of the merged summary as it is now, for
    /// encoded units; `None` when the family has no moot units. Making one
    /// may cost a pass over the summary: make one for many questions.
    fn moot_judge(&self) -> Option<Box<dyn EncodedMootJudge>>;
    /// See [`crate::MootUnits::still_needed`], encoded; empty when the
    /// family has no moot units.
    fn still_needed(&self) -> Vec<Vec<u8>>;
    /// See [`SearchFamily::split_on_idle`]. A malformed unit may be split.
    fn split_on_idle(&self, unit: &[u8]) -> bool;
}

/// Erases a [`SearchFamily`] into a [`DynFamily`].
pub struct Erased<F>(PhantomData<fn() -> F>);

impl<F> Erased<F> {
    pub const fn new() -> Self {
        Erased(PhantomData)
    }
}

impl<F> Default for Erased<F> {
    fn default() -> Self {
        Self::new()
    }
}

/// A job of `F` with its canonical parameters.
struct Job<F: SearchFamily> {
    family: Arc<F>,
    params_json: String,
}

/// A job of `F` with what was merged so far.
struct Merged<F: SearchFamily> {
    family: Arc<F>,
    summary: F::Summary,
}

impl<F: SearchFamily> DynFamily for Erased<F> {
    fn name(&self) -> &'static str {
        F::NAME
    }

    fn about(&self) -> &'static str {
        F::ABOUT
    }

    fn prepare(&self, params_json: &str, host: &Host) -> Result<Arc<dyn PreparedJob>, FamilyError> {
        let params = parse_params::<F>(params_json)?;
        let params_json = serde_json::to_string(&params).expect("parameters serialise to JSON");
        Ok(Arc::new(Job::<F> {
            family: Arc::new(F::new(params, host)?),
            params_json,
        }))
    }

    fn canonical_params(&self, params_json: &str) -> Result<String, FamilyError> {
        let params = parse_params::<F>(params_json)?;
        Ok(serde_json::to_string(&params).expect("parameters serialise to JSON"))
    }
}

fn parse_params<F: SearchFamily>(params_json: &str) -> Result<F::Params, FamilyError> {
    serde_json::from_str(params_json).map_err(|e| FamilyError::ParamsJson(e.to_string()))
}

fn encode_exploration<F: SearchFamily>(e: Exploration<F::Summary, F::Unit>) -> DynExploration {
    match e {
        Exploration::Finished(summary) => DynExploration {
            nodes: F::nodes(&summary),
            summary: codec::encode(&summary),
            rest: Vec::new(),
        },
        Exploration::Split { explored, rest } => DynExploration {
            nodes: F::nodes(&explored),
            summary: codec::encode(&explored),
            rest: rest.iter().map(codec::encode).collect(),
        },
    }
}

impl<F: SearchFamily> PreparedJob for Job<F> {
    fn family(&self) -> &'static str {
        F::NAME
    }

    fn params_json(&self) -> String {
        self.params_json.clone()
    }

    fn root_units(&self) -> Vec<Vec<u8>> {
        self.family.root_units().iter().map(codec::encode).collect()
    }

    fn explore(
        &self,
        unit: &[u8],
        ctx: &ExploreContext<'_>,
    ) -> Result<DynExploration, FamilyError> {
        let unit: F::Unit = codec::decode(unit)?;
        Ok(encode_exploration::<F>(self.family.explore(&unit, ctx)?))
    }

    fn new_aggregate(&self) -> Box<dyn Aggregate> {
        Box::new(Merged::<F> {
            family: self.family.clone(),
            summary: F::Summary::default(),
        })
    }

    fn unit_label(&self, unit: &[u8]) -> Result<String, FamilyError> {
        Ok(self.family.unit_label(&codec::decode::<F::Unit>(unit)?))
    }

    fn check_unit(&self, unit: &[u8]) -> Result<(), FamilyError> {
        codec::decode::<F::Unit>(unit)?;
        Ok(())
    }

    fn check_summary(&self, summary: &[u8]) -> Result<(), FamilyError> {
        codec::decode::<F::Summary>(summary)?;
        Ok(())
    }

    fn verified_part(
        &self,
        unit: &[u8],
        summary: &[u8],
        bound: u64,
    ) -> Result<Vec<u8>, FamilyError> {
        let unit: F::Unit = codec::decode(unit)?;
        let summary: F::Summary = codec::decode(summary)?;
        Ok(self.family.verified_part(&unit, &summary, bound))
    }

    fn describe_summary(&self, summary: &[u8]) -> Result<String, FamilyError> {
        let summary: F::Summary = codec::decode(summary)?;
        let mut text = format!("{summary:?}");
        if text.len() > DESCRIBE_LIMIT {
            let mut cut = DESCRIBE_LIMIT;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
            text.push_str("...");
        }
        Ok(text)
    }

    fn has_moot_units(&self) -> bool {
        self.family.capabilities().moot_units.is_some()
    }

    fn probe(
        &self,
        unit: &[u8],
        bound: u64,
        pick: &mut dyn FnMut(u64) -> u64,
    ) -> Result<Option<Probe>, FamilyError> {
        let Some(probing) = self.family.capabilities().probing else {
            return Ok(None);
        };
        probing
            .probe(&codec::decode::<F::Unit>(unit)?, bound, pick)
            .map(Some)
    }

    fn lemmas(&self) -> Option<&dyn LemmaExchange> {
        self.family.capabilities().lemmas
    }

    fn cache(&self) -> Option<&dyn CacheSnapshot> {
        self.family.capabilities().cache
    }
}

impl<F: SearchFamily> Aggregate for Merged<F> {
    fn absorb(&mut self, summary: &[u8]) -> Result<(), FamilyError> {
        let other: F::Summary = codec::decode(summary)?;
        self.family.merge(&mut self.summary, other)
    }

    fn nodes(&self) -> u64 {
        F::nodes(&self.summary)
    }

    fn bound(&self) -> u64 {
        F::bound(&self.summary)
    }

    fn report(&self) -> FamilyReport {
        self.family.report(&self.summary)
    }

    fn figures(&self, running: &[&[u8]]) -> Vec<Figure> {
        let running: Vec<F::Unit> = running
            .iter()
            .filter_map(|u| codec::decode::<F::Unit>(u).ok())
            .collect();
        self.family.figures(&self.summary, &running)
    }

    fn moot_judge(&self) -> Option<Box<dyn EncodedMootJudge>> {
        let moot = self.family.capabilities().moot_units?;
        Some(Box::new(DecodingJudge::<F> {
            judge: moot.judge(&self.summary),
        }))
    }

    fn still_needed(&self) -> Vec<Vec<u8>> {
        self.family
            .capabilities()
            .moot_units
            .map(|moot| moot.still_needed(&self.summary))
            .unwrap_or_default()
            .iter()
            .map(codec::encode)
            .collect()
    }

    fn split_on_idle(&self, unit: &[u8]) -> bool {
        codec::decode::<F::Unit>(unit).map_or(true, |u| self.family.split_on_idle(&u))
    }
}

/// A [`crate::MootJudge`] for encoded units (see [`Aggregate::moot_judge`]).
pub trait EncodedMootJudge: Send + Sync {
    /// See [`crate::MootJudge::is_moot`]. A malformed unit is never moot.
    fn is_moot(&self, unit: &[u8]) -> bool;
    /// See [`crate::MootJudge::speculation`]. A malformed unit is never
    /// speculative (it never waits).
    fn speculation(&self, unit: &[u8]) -> u32;
    /// See [`crate::MootJudge::narrow`], encoded. A malformed unit is
    /// leased as it is.
    fn narrow(&self, unit: &[u8]) -> Option<Vec<u8>>;
}

/// The family's judge behind [`EncodedMootJudge`]: decodes, then asks.
struct DecodingJudge<F: SearchFamily> {
    judge: Box<dyn crate::MootJudge<F::Unit>>,
}

impl<F: SearchFamily> EncodedMootJudge for DecodingJudge<F> {
    fn is_moot(&self, unit: &[u8]) -> bool {
        codec::decode::<F::Unit>(unit).is_ok_and(|u| self.judge.is_moot(&u))
    }

    fn speculation(&self, unit: &[u8]) -> u32 {
        codec::decode::<F::Unit>(unit).map_or(0, |u| self.judge.speculation(&u))
    }

    fn narrow(&self, unit: &[u8]) -> Option<Vec<u8>> {
        let u = codec::decode::<F::Unit>(unit).ok()?;
        self.judge.narrow(&u).map(|n| codec::encode(&n))
    }
}
