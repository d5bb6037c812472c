//! The jobs a worker process has open: each prepared once, from the binary's
//! registry, and shared by every search thread of the process (and by every
//! local worker of `orchard run`, which share one [`OpenJobs`]).
//!
//! Why one place: a job owns its in-process state (for `hip-solve` the
//! transposition table, gigabytes that every thread searching the job must
//! share). Opening the same job twice would split that state and search
//! cold.
//!
//! A job stays open while anyone holds it; opening a new one closes the
//! jobs nobody holds any more (the runner lets go of a job when no unit of
//! it runs here), so a long-lived worker does not keep the state of every
//! job it ever served. A job closed with a cache saves it first, so opening
//! it again starts warm.
//!
//! With a cache directory (see [`crate::cache`]), a job whose family keeps a
//! cache worth saving ([`orchard_core::CacheSnapshot`]) is opened warm from
//! its snapshot, and the snapshots of every open job are written back every
//! few minutes ([`OpenJobs::spawn_saver`]) and when the worker stops
//! gracefully ([`OpenJobs::save_caches`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use orchard_core::{FamilyError, Host, PreparedJob, Registry};

use crate::cache::CacheDir;

/// The families a worker process can search and the jobs it has open.
pub struct OpenJobs {
    families: Registry,
    host: Host,
    /// Where the jobs' cache snapshots live, and how often they are saved.
    cache: Option<(CacheDir, Duration)>,
    /// By (family, canonical parameters): the job's identity.
    open: Mutex<HashMap<(String, String), Arc<dyn PreparedJob>>>,
}

impl OpenJobs {
    /// No job open yet; jobs are hosted with `host`.
    pub fn new(families: Registry, host: Host) -> Self {
        OpenJobs {
            families,
            host,
            cache: None,
            open: Mutex::new(HashMap::new()),
        }
    }

    /// Jobs restore their caches from `dir` when opened, and
    /// [`OpenJobs::spawn_saver`] saves them every `save_every`.
    pub fn with_cache(mut self, dir: CacheDir, save_every: Duration) -> Self {
        self.cache = Some((dir, save_every.max(Duration::from_secs(1))));
        self
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
    /// Blocks while another caller opens a job (its cache may take a minute
    /// to load), off the async runtime's threads when called on one.
    pub fn open(
        &self,
        family: &str,
        params_json: &str,
    ) -> Result<Arc<dyn PreparedJob>, FamilyError> {
        blocking(|| {
            let key = (family.to_string(), params_json.to_string());
            let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(job) = open.get(&key) {
                return Ok(job.clone());
            }
            let job = self
                .families
                .by_name(family)?
                .prepare(params_json, &self.host)?;
            // Under the lock: the job's threads wait for its cache to be warm.
            self.close_idle(&mut open);
            self.restore(job.as_ref());
            open.insert(key, job.clone());
            Ok(job)
        })
    }

    /// The job of `family` with these parameters if it is open here (never
    /// opened by this call, which would load its cache).
    pub fn get(&self, family: &str, params_json: &str) -> Option<Arc<dyn PreparedJob>> {
        let open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        open.get(&(family.to_string(), params_json.to_string()))
            .cloned()
    }

    /// Closes the open jobs nobody else holds, saving their caches first.
    fn close_idle(&self, open: &mut HashMap<(String, String), Arc<dyn PreparedJob>>) {
        let idle: Vec<(String, String)> = open
            .iter()
            .filter(|(_, job)| Arc::strong_count(job) == 1)
            .map(|(key, _)| key.clone())
            .collect();
        for key in idle {
            if let Some(job) = open.remove(&key) {
                self.save(job.as_ref());
                tracing::info!(family = %key.0, params = %key.1, "job closed");
            }
        }
    }

    /// Loads a new job's cache snapshot, if it has a cache and one was saved.
    /// A snapshot that cannot be used costs work, not answers: it is
    /// reported and the job starts cold.
    fn restore(&self, job: &dyn PreparedJob) {
        let (Some((dir, _)), Some(cache)) = (&self.cache, job.cache()) else {
            return;
        };
        let name = cache.cache_name();
        let path = dir.path(&name);
        match dir.load(&name) {
            Ok(None) => {}
            Ok(Some(bytes)) => match cache.restore(&bytes) {
                Ok(entries) => tracing::info!(
                    family = job.family(),
                    entries,
                    path = %path.display(),
                    "cache snapshot restored"
                ),
                Err(e) => tracing::warn!(
                    family = job.family(),
                    path = %path.display(),
                    "cache snapshot not restored, starting cold: {e}"
                ),
            },
            Err(e) => tracing::warn!("{e}; starting cold"),
        }
    }

    /// Saves the cache snapshot of every open job that has one (blocking:
    /// call it off the async runtime). Returns how many were written.
    pub fn save_caches(&self) -> usize {
        let jobs: Vec<Arc<dyn PreparedJob>> = self
            .open
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect();
        jobs.iter().filter(|job| self.save(job.as_ref())).count()
    }

    /// Saves one job's cache snapshot, if it has a cache, a snapshot and a
    /// directory to go to; true when one was written.
    fn save(&self, job: &dyn PreparedJob) -> bool {
        let (Some((dir, _)), Some(cache)) = (&self.cache, job.cache()) else {
            return false;
        };
        let Some(snapshot) = cache.snapshot() else {
            return false;
        };
        let name = cache.cache_name();
        let path = dir.path(&name);
        match dir.save(&name, &snapshot) {
            Ok(()) => {
                tracing::info!(
                    family = job.family(),
                    bytes = snapshot.len(),
                    path = %path.display(),
                    "cache snapshot written"
                );
                true
            }
            Err(e) => {
                tracing::warn!(
                    family = job.family(),
                    path = %path.display(),
                    "cannot write the cache snapshot: {e}"
                );
                false
            }
        }
    }

    /// Starts the task that saves every open job's cache snapshot every few
    /// minutes (the first save one period from now); `None` without a cache
    /// directory. Abort it before the final [`OpenJobs::save_caches`].
    pub fn spawn_saver(self: &Arc<Self>) -> Option<tokio::task::JoinHandle<()>> {
        let (_, every) = self.cache.as_ref()?;
        let every = *every;
        let jobs = self.clone();
        Some(tokio::spawn(async move {
            let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let jobs = jobs.clone();
                let _ = tokio::task::spawn_blocking(move || jobs.save_caches()).await;
            }
        }))
    }
}

/// Runs `f`, which may block for seconds (reading a snapshot of hundreds of
/// MiB), telling a multi-threaded tokio runtime so that it moves its other
/// tasks off this thread meanwhile.
fn blocking<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}

impl std::fmt::Debug for OpenJobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        f.debug_struct("OpenJobs")
            .field("families", &self.families)
            .field("host", &self.host)
            .field("cache", &self.cache)
            .field("open", &open.keys().collect::<Vec<_>>())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use orchard_core::{
        CacheSnapshot, Capabilities, Exploration, ExploreContext, FamilyReport, ParamError,
        SearchFamily,
    };

    /// A family whose job's cache is a byte string: its snapshot is what it
    /// restored (if anything) followed by its own state.
    struct Cached {
        restored: Mutex<Option<Vec<u8>>>,
        state: Vec<u8>,
    }

    impl SearchFamily for Cached {
        const NAME: &'static str = "cached";
        const ABOUT: &'static str = "a job with a cache";
        type Params = u32;
        type Unit = u32;
        type Summary = u64;

        fn new(params: u32, _: &Host) -> Result<Self, ParamError> {
            Ok(Cached {
                restored: Mutex::new(None),
                state: format!("state of job {params}").into_bytes(),
            })
        }
        fn root_units(&self) -> Vec<u32> {
            vec![0]
        }
        fn explore(
            &self,
            _: &u32,
            _: &ExploreContext<'_>,
        ) -> Result<Exploration<u64, u32>, FamilyError> {
            Ok(Exploration::Finished(1))
        }
        fn merge(&self, into: &mut u64, other: u64) -> Result<(), FamilyError> {
            *into += other;
            Ok(())
        }
        fn nodes(s: &u64) -> u64 {
            *s
        }
        fn report(&self, _: &u64) -> FamilyReport {
            FamilyReport {
                json: Default::default(),
                text: Vec::new(),
                results_lines: Vec::new(),
            }
        }
        fn capabilities(&self) -> Capabilities<'_, Self> {
            Capabilities {
                cache: Some(self),
                ..Capabilities::default()
            }
        }
    }

    impl CacheSnapshot for Cached {
        fn cache_name(&self) -> String {
            "cached".into()
        }
        fn snapshot(&self) -> Option<Vec<u8>> {
            let mut s = match self.restored.lock().unwrap().clone() {
                Some(mut r) => {
                    r.extend_from_slice(b" + ");
                    r
                }
                None => Vec::new(),
            };
            s.extend_from_slice(&self.state);
            Some(s)
        }
        fn restore(&self, snapshot: &[u8]) -> Result<u64, FamilyError> {
            *self.restored.lock().unwrap() = Some(snapshot.to_vec());
            Ok(1)
        }
    }

    fn jobs(dir: &std::path::Path, every: Duration) -> Arc<OpenJobs> {
        let registry = Registry::default().with::<Cached>();
        let jobs = OpenJobs::new(registry, Host::default());
        Arc::new(jobs.with_cache(CacheDir::open(dir).unwrap(), every))
    }

    /// A job opens cold the first time, its snapshot is saved (by
    /// `save_caches` and by the saver task), and the next process opens the
    /// job warm from it.
    #[test]
    fn caches_are_saved_and_restored_when_a_job_opens() {
        let dir = std::env::temp_dir().join(format!("orchard-jobs-cache-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let first = jobs(&dir, Duration::from_secs(1));
        let job = first.open("cached", "7").unwrap();
        assert!(job.cache().is_some());
        let path = dir.join("cached.cache");
        assert!(!path.exists());
        assert_eq!(first.save_caches(), 1);
        assert_eq!(
            crate::cache::read_cache_file(&path).unwrap(),
            b"state of job 7"
        );
        std::fs::remove_file(&path).unwrap();
        // The saver: first one period from now, then every period.
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let saver = first.spawn_saver().expect("a cache directory");
            assert!(!path.exists());
            let deadline = std::time::Instant::now() + Duration::from_secs(30);
            while !path.exists() {
                assert!(
                    std::time::Instant::now() < deadline,
                    "the saver never saved"
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            saver.abort();
        });

        // The next process: another job of the same cache name opens warm
        // from the first one's snapshot, once (the same job is not opened
        // twice).
        let second = jobs(&dir, Duration::from_secs(300));
        let warm = second.open("cached", "8").unwrap();
        assert!(Arc::ptr_eq(&warm, &second.open("cached", "8").unwrap()));
        assert_eq!(second.save_caches(), 1);
        assert_eq!(
            crate::cache::read_cache_file(&path).unwrap(),
            b"state of job 7 + state of job 8"
        );
        // A snapshot damaged since startup: the job opens cold.
        std::fs::write(&path, b"damaged").unwrap();
        let cold = second.open("cached", "9").unwrap();
        assert_eq!(cold.cache().unwrap().snapshot().unwrap(), b"state of job 9");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Opening a new job closes the jobs nobody holds, after saving their
    /// caches; a job still held stays open.
    #[test]
    fn a_new_job_closes_the_idle_ones_and_saves_their_caches() {
        let dir = std::env::temp_dir().join(format!("orchard-jobs-close-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let jobs = jobs(&dir, Duration::from_secs(300));
        let held = jobs.open("cached", "1").unwrap();
        let idle = jobs.open("cached", "2").unwrap();
        drop(idle);
        let path = dir.join("cached.cache");
        assert!(!path.exists(), "nothing closed yet");
        let _third = jobs.open("cached", "3").unwrap();
        // Job 2 was closed and saved its cache; job 1 is still the same job.
        assert_eq!(
            crate::cache::read_cache_file(&path).unwrap(),
            b"state of job 2"
        );
        assert!(Arc::ptr_eq(&held, &jobs.open("cached", "1").unwrap()));
        let open = jobs.open.lock().unwrap();
        let mut keys: Vec<&str> = open.keys().map(|k| k.1.as_str()).collect();
        keys.sort();
        assert_eq!(keys, ["1", "3"]);
        drop(open);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
