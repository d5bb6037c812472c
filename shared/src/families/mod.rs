//! The registry of search families.
//!
//! To add a family: write a module implementing [`SearchFamily`] and add one
//! line to [`REGISTRY`]. The coordinator, the worker and the CLI find it here.

use crate::family::{DynFamily, Erased, FamilyError};

pub mod hc;
pub mod hip;

static HC: Erased<hc::HararyColumns> = Erased::new();
static HIP_DRAWS: Erased<hip::HipDraws> = Erased::new();
static HIP_SOLVE: Erased<hip::HipSolve> = Erased::new();

/// Every family this build knows, by name.
pub static REGISTRY: &[&dyn DynFamily] = &[&HC, &HIP_DRAWS, &HIP_SOLVE];

/// Looks a family up by its command-line name.
pub fn by_name(name: &str) -> Result<&'static dyn DynFamily, FamilyError> {
    REGISTRY
        .iter()
        .copied()
        .find(|f| f.name() == name)
        .ok_or_else(|| FamilyError::UnknownFamily(name.to_string()))
}

/// Checks what every family reads from the environment (see
/// [`crate::family::SearchFamily::check_environment`]).
pub fn check_environment() -> Result<(), FamilyError> {
    REGISTRY.iter().try_for_each(|f| f.check_environment())
}

/// Writes out what every family keeps for a later process (see
/// [`crate::family::SearchFamily::save_caches`]); for a process whose
/// workers have stopped gracefully.
pub fn save_caches() {
    REGISTRY.iter().for_each(|f| f.save_caches());
}

/// The names of all families, for error messages.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|f| f.name()).collect()
}
