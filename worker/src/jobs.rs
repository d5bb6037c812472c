//! The jobs a worker process has open: each prepared once, from the binary's
//! registry, and shared by every search thread of the process (and by every
//! local worker of `orchard run`, which share one [`OpenJobs`]).
//!
//! Why one place: a job owns its in-process state (for `hip-solve` the
//! transposition table, gigabytes that every thread searching the job must
//! share). Opening the same job twice would split that state and search
//! cold.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use orchard_core::{FamilyError, Host, PreparedJob, Registry};

/// The families a worker process can search and the jobs it has open.
pub struct OpenJobs {
    families: Registry,
    host: Host,
    /// By (family, canonical parameters): the job's identity.
    open: Mutex<HashMap<(String, String), Arc<dyn PreparedJob>>>,
}

impl OpenJobs {
    /// No job open yet; jobs are hosted with `host`.
    pub fn new(families: Registry, host: Host) -> Self {
        OpenJobs {
            families,
            host,
            open: Mutex::new(HashMap::new()),
        }
    }

    /// The names of the families this process can search.
    pub fn family_names(&self) -> Vec<String> {
        self.families
            .names()
            .into_iter()
            .map(String::from)
            .collect()
    }

    /// The job of `family` with these parameters: the open one, or a new one.
    pub fn open(
        &self,
        family: &str,
        params_json: &str,
    ) -> Result<Arc<dyn PreparedJob>, FamilyError> {
        let key = (family.to_string(), params_json.to_string());
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(job) = open.get(&key) {
            return Ok(job.clone());
        }
        let job = self
            .families
            .by_name(family)?
            .prepare(params_json, &self.host)?;
        open.insert(key, job.clone());
        Ok(job)
    }
}

impl std::fmt::Debug for OpenJobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        f.debug_struct("OpenJobs")
            .field("families", &self.families)
            .field("host", &self.host)
            .field("open", &open.keys().collect::<Vec<_>>())
            .finish()
    }
}
