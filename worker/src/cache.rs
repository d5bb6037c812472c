//! The worker's cache files: the snapshots of its jobs' in-process caches
//! (see [`orchard_core::CacheSnapshot`]; for `hip-solve` the transposition
//! table), kept across restarts in one directory (`orchard worker
//! --cache-dir`).
//!
//! Why: a long search keeps most of its knowledge in such a cache; a worker
//! restarted after a crash (or the next job on the same game) loads it
//! instead of searching again what the last process had settled.
//!
//! A job's snapshot is `DIR/<cache_name>.cache`. The family encodes and
//! decodes it (and checks every entry before using any); this module owns
//! the file: the family's bytes in a small frame (magic, length, CRC-32 of
//! everything before it), so that every family's snapshot is checksummed,
//! written to a temporary file, fsync'd and renamed over the old one, the
//! directory fsync'd: a crash leaves the old snapshot or the new one, never
//! half of one. At startup every snapshot in the directory is checked
//! ([`CacheDir::open`]): a damaged one stops the worker with one line, and is
//! left as it is for the operator. Processes on one machine may share the
//! directory: each replaces a file atomically with a whole snapshot of its
//! own.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// The frame's magic and version.
const MAGIC: &[u8; 8] = b"ORCHCF\x00\x01";
/// Magic, then the payload's length (u64, little-endian).
const HEADER: usize = 16;
/// The CRC-32 of the header and the payload (u32, little-endian).
const TRAILER: usize = 4;
/// The extension of a cache file.
const EXTENSION: &str = "cache";
/// A temporary file untouched this long was left by a killed writer.
const STALE: Duration = Duration::from_secs(3600);

/// Why a cache file cannot be used, or the directory not opened: one line.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("cache directory {path}: {reason}")]
    Dir { path: String, reason: String },
    #[error("cache file {path}: {reason}; delete it to start cold")]
    Damaged { path: String, reason: String },
}

/// A directory of cache files.
#[derive(Debug)]
pub struct CacheDir {
    dir: PathBuf,
    /// One write at a time in this process (two jobs may share a name, and
    /// a temporary file's name is the process's).
    writing: Mutex<()>,
}

impl CacheDir {
    /// Opens the directory, creating it if missing (node-local scratch on a
    /// cluster); checks every cache file in it (a damaged one is an error
    /// that names it) and removes temporary files a killed writer left an
    /// hour or more ago.
    pub fn open(dir: &Path) -> Result<CacheDir, CacheError> {
        let dir_error = |reason: String| CacheError::Dir {
            path: dir.display().to_string(),
            reason,
        };
        std::fs::create_dir_all(dir).map_err(|e| dir_error(format!("cannot create: {e}")))?;
        let entries = std::fs::read_dir(dir).map_err(|e| dir_error(format!("cannot read: {e}")))?;
        for entry in entries {
            let path = entry
                .map_err(|e| dir_error(format!("cannot read: {e}")))?
                .path();
            if path.extension().is_some_and(|x| x == EXTENSION) {
                read_cache_file(&path)?;
            } else if is_stale_temporary(&path) {
                // Another process may be writing its own right now, hence
                // the age.
                let _ = std::fs::remove_file(&path);
            }
        }
        Ok(CacheDir {
            dir: dir.to_path_buf(),
            writing: Mutex::new(()),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of the cache `name`.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.{EXTENSION}"))
    }

    /// The snapshot saved under `name`, if there is one.
    pub fn load(&self, name: &str) -> Result<Option<Vec<u8>>, CacheError> {
        let path = self.path(name);
        if !path.exists() {
            return Ok(None);
        }
        read_cache_file(&path).map(Some)
    }

    /// Saves a snapshot under `name`, atomically.
    pub fn save(&self, name: &str, snapshot: &[u8]) -> std::io::Result<()> {
        let _writing = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        write_cache_file(&self.path(name), snapshot)
    }
}

/// A temporary cache file (see [`write_cache_file`]) untouched for an hour.
fn is_stale_temporary(path: &Path) -> bool {
    let name = path
        .file_name()
        .map_or_else(Default::default, |n| n.to_string_lossy());
    name.starts_with('.')
        && name.contains(&format!(".{EXTENSION}."))
        && name.ends_with(".tmp")
        && std::fs::metadata(path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > STALE)
}

/// Reads a cache file and checks its frame: the family's snapshot, whole.
pub fn read_cache_file(path: &Path) -> Result<Vec<u8>, CacheError> {
    let bad = |reason: String| CacheError::Damaged {
        path: path.display().to_string(),
        reason,
    };
    let bytes = std::fs::read(path).map_err(|e| bad(format!("cannot read: {e}")))?;
    unframe(&bytes).map_err(bad)
}

/// The payload of a framed snapshot, checked.
fn unframe(bytes: &[u8]) -> Result<Vec<u8>, String> {
    if bytes.len() < HEADER + TRAILER || &bytes[..8] != MAGIC {
        return Err("not an orchard cache file of this version".into());
    }
    let (body, crc) = bytes.split_at(bytes.len() - TRAILER);
    let crc = u32::from_le_bytes(crc.try_into().expect("four bytes"));
    if crc32fast::hash(body) != crc {
        return Err("checksum mismatch (the file is damaged)".into());
    }
    let len = u64::from_le_bytes(body[8..16].try_into().expect("eight bytes"));
    if len != (body.len() - HEADER) as u64 {
        return Err(format!(
            "says {len} bytes of snapshot but holds {}",
            body.len() - HEADER
        ));
    }
    Ok(body[HEADER..].to_vec())
}

/// Writes `payload` framed to `path` atomically: a temporary file in the
/// same directory, fsync'd, renamed over `path`, the directory fsync'd.
pub fn write_cache_file(path: &Path, payload: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map_or_else(Default::default, |n| n.to_string_lossy());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut header = [0u8; HEADER];
        header[..8].copy_from_slice(MAGIC);
        header[8..].copy_from_slice(&(payload.len() as u64).to_le_bytes());
        let mut crc = crc32fast::Hasher::new();
        crc.update(&header);
        crc.update(payload);
        let mut out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&tmp)?);
        out.write_all(&header)?;
        out.write_all(payload)?;
        out.write_all(&crc.finalize().to_le_bytes())?;
        let file = out.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)?;
        std::fs::File::open(dir)?.sync_all()
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "orchard-worker-cache-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    /// A snapshot comes back as it was saved; replacing it leaves the new
    /// one and no temporary file; a missing one is no error.
    #[test]
    fn a_saved_snapshot_loads_back() {
        let dir = temp_dir("round-trip");
        let cache = CacheDir::open(&dir).unwrap();
        assert!(dir.is_dir(), "created");
        assert_eq!(cache.load("hip-4x5").unwrap(), None);
        cache.save("hip-4x5", b"first").unwrap();
        cache.save("hip-4x5", b"second snapshot").unwrap();
        cache.save("empty", b"").unwrap();
        assert_eq!(
            cache.load("hip-4x5").unwrap().as_deref(),
            Some(&b"second snapshot"[..])
        );
        assert_eq!(cache.load("empty").unwrap().as_deref(), Some(&b""[..]));
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["empty.cache", "hip-4x5.cache"]);
        CacheDir::open(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Damaged, truncated and foreign files are refused at startup with one
    /// line naming the file and the way out, and are left as they are.
    #[test]
    fn damaged_files_stop_the_worker() {
        let dir = temp_dir("damaged");
        let cache = CacheDir::open(&dir).unwrap();
        cache.save("hip-4x4", &[7u8; 1000]).unwrap();
        let path = cache.path("hip-4x4");
        let good = std::fs::read(&path).unwrap();
        let refused = |bytes: &[u8], why: &str| {
            std::fs::write(&path, bytes).unwrap();
            let e = CacheDir::open(&dir).expect_err("refused").to_string();
            assert!(e.contains(why), "{e}");
            assert!(e.contains("delete it to start cold"), "{e}");
            assert!(e.contains("hip-4x4.cache") && !e.contains('\n'), "{e}");
            assert!(cache.load("hip-4x4").is_err());
            assert_eq!(std::fs::read(&path).unwrap(), bytes, "left as it was");
        };
        let mut flipped = good.clone();
        flipped[HEADER + 500] ^= 0x10;
        refused(&flipped, "checksum");
        refused(&good[..good.len() - 7], "checksum");
        refused(b"not a cache", "not an orchard cache file");
        // A sound checksum over a wrong length.
        let mut lying = good.clone();
        lying[8] ^= 1;
        let n = lying.len() - TRAILER;
        let crc = crc32fast::hash(&lying[..n]);
        lying[n..].copy_from_slice(&crc.to_le_bytes());
        refused(&lying, "bytes of snapshot");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A temporary file left by a killed writer is removed once it is an
    /// hour old; a recent one (maybe being written) and others stay.
    #[test]
    fn stale_temporaries_are_removed() {
        let dir = temp_dir("stale");
        std::fs::create_dir_all(&dir).unwrap();
        let old = dir.join(".hip-4x4.cache.1234.tmp");
        let recent = dir.join(".hip-4x4.cache.5678.tmp");
        let other = dir.join("notes.tmp");
        for p in [&old, &recent, &other] {
            std::fs::write(p, b"partial").unwrap();
        }
        let hour_ago = std::time::SystemTime::now() - Duration::from_secs(7200);
        for p in [&old, &other] {
            let f = std::fs::File::options().write(true).open(p).unwrap();
            f.set_modified(hour_ago).unwrap();
        }
        CacheDir::open(&dir).unwrap();
        assert!(!old.exists());
        assert!(recent.exists() && other.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
