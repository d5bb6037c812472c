//! The set of families a process knows, looked up by name.
//!
//! The binary builds it (its registry lists one line per family crate) and
//! hands it to the coordinator and the worker, which know no family by name.

use std::sync::Arc;

use crate::erased::{DynFamily, Erased};
use crate::error::FamilyError;
use crate::family::SearchFamily;

/// Families by name, in the order they were added.
#[derive(Clone, Default)]
pub struct Registry {
    families: Vec<Arc<dyn DynFamily>>,
}

impl Registry {
    /// Adds family `F`. Panics on a name given twice (a build error, not
    /// an input error).
    pub fn with<F: SearchFamily>(mut self) -> Self {
        assert!(
            self.families.iter().all(|f| f.name() != F::NAME),
            "family {} registered twice",
            F::NAME
        );
        self.families.push(Arc::new(Erased::<F>::new()));
        self
    }

    /// Looks a family up by its command-line name.
    pub fn by_name(&self, name: &str) -> Result<&dyn DynFamily, FamilyError> {
        self.families
            .iter()
            .map(|f| f.as_ref())
            .find(|f| f.name() == name)
            .ok_or_else(|| FamilyError::UnknownFamily(name.to_string()))
    }

    /// The names of all families, in registration order.
    pub fn names(&self) -> Vec<&'static str> {
        self.families.iter().map(|f| f.name()).collect()
    }

    pub fn iter(&self) -> impl Iterator<Item = &dyn DynFamily> {
        self.families.iter().map(|f| f.as_ref())
    }
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}
