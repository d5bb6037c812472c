//! The errors a family reports, typed so that the binaries can say which
//! parameter, unit or summary was at fault.

use crate::codec::CodecError;

/// A parameter the user gave is invalid. The message names the parameter.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[error("invalid parameter --{name}: {reason}")]
pub struct ParamError {
    pub name: &'static str,
    pub reason: String,
}

impl ParamError {
    pub fn new(name: &'static str, reason: impl Into<String>) -> Self {
        ParamError {
            name,
            reason: reason.into(),
        }
    }
}

/// Why a unit could not be explored or a summary could not be merged.
#[derive(Debug, thiserror::Error)]
pub enum FamilyError {
    #[error("unknown search family '{0}'")]
    UnknownFamily(String),
    #[error(transparent)]
    Param(#[from] ParamError),
    #[error("malformed parameters: {0}")]
    ParamsJson(String),
    /// A family's flags refused by the family's own reading of them (a file
    /// a flag names that does not parse, flags that exclude each other); the
    /// message names the flag.
    #[error("{0}")]
    Flags(String),
    #[error("bad unit: {0}")]
    BadUnit(String),
    #[error(transparent)]
    Codec(#[from] CodecError),
    #[error("count overflow while merging {0}")]
    Overflow(&'static str),
    #[error("search exceeded its capacity: {0}")]
    Capacity(String),
    #[error("bad lemmas: {0}")]
    BadLemmas(String),
    #[error("bad cache snapshot: {0}")]
    BadCache(String),
    /// This attempt at a unit failed for a reason another attempt, on
    /// another worker, may not meet: an external program crashed, hung or
    /// printed garbage, or this worker's copy of it differs from the job's.
    /// Nothing of the attempt counts; the coordinator tries the unit again
    /// a bounded number of times before the job fails.
    #[error("{0}")]
    Attempt(String),
}

impl FamilyError {
    /// Whether another attempt at the unit may succeed (see
    /// [`FamilyError::Attempt`]); every other error is the unit's or the
    /// search's own and would recur.
    pub fn is_retryable(&self) -> bool {
        matches!(self, FamilyError::Attempt(_))
    }
}
