//! Which program a job may run, and the copy of it that runs.
//!
//! A job names a program by file name and SHA-256; a worker looks the name
//! up only in the directory its operator gave it (`--programs DIR`), never
//! at a path the job chose, hashes what it finds, and refuses the unit
//! unless the hashes agree. The program then runs from a private copy made
//! once per job and hashed as it was written, so a program changed on disk
//! while the job runs is never run by it: a job never mixes two versions.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Why a worker will not run a job's program.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    #[error("this worker allows no external programs (start it with --programs DIR)")]
    NoneAllowed,
    #[error("program name {0:?} is not a plain file name")]
    BadName(String),
    #[error("program '{name}' is not among the programs this worker allows ({dir})")]
    NotAllowed { name: String, dir: String },
    #[error("program '{name}' in {dir} has sha256 {found}; the job was submitted with {wanted}")]
    HashDiffers {
        name: String,
        dir: String,
        found: String,
        wanted: String,
    },
    #[error("cannot copy program '{name}' to run it: {source}")]
    Copy {
        name: String,
        source: std::io::Error,
    },
}

/// Checks that `name` is a file name and nothing more: no directory part,
/// not `.` or `..`.
pub fn check_name(name: &str) -> Result<(), Refusal> {
    let plain = !name.is_empty()
        && name.len() <= 255
        && name != "."
        && name != ".."
        && !name.contains(['/', '\\', '\0']);
    if plain {
        Ok(())
    } else {
        Err(Refusal::BadName(name.to_string()))
    }
}

/// Whether `s` is a SHA-256 as jobs store it: 64 lower-case hex digits.
pub fn is_sha256(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The SHA-256 of a file's content, as lower-case hex.
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex(&hasher.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A program copied for one job: its private directory is removed when the
/// job is dropped.
#[derive(Debug)]
pub struct Copied {
    dir: PathBuf,
    pub path: PathBuf,
}

impl Drop for Copied {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Copies program `name` from the allowed directory `allowed` into a
/// private directory, hashing the bytes as they are written; the copy is
/// kept only if its hash is `sha256`.
pub fn copy_checked(allowed: Option<&Path>, name: &str, sha256: &str) -> Result<Copied, Refusal> {
    let dir = allowed.ok_or(Refusal::NoneAllowed)?;
    check_name(name)?;
    let source = dir.join(name);
    let not_allowed = || Refusal::NotAllowed {
        name: name.to_string(),
        dir: dir.display().to_string(),
    };
    if !source.is_file() {
        return Err(not_allowed());
    }
    let copy_err = |source: std::io::Error| Refusal::Copy {
        name: name.to_string(),
        source,
    };
    let private = private_dir().map_err(copy_err)?;
    let path = private.join(name);
    let copied = Copied {
        dir: private,
        path: path.clone(),
    };
    let mut input = std::fs::File::open(&source).map_err(|_| not_allowed())?;
    let mut output = std::fs::File::create(&path).map_err(copy_err)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = input.read(&mut buf).map_err(copy_err)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        output.write_all(&buf[..n]).map_err(copy_err)?;
    }
    output.sync_all().map_err(copy_err)?;
    drop(output);
    let found = hex(&hasher.finalize());
    if found != sha256 {
        return Err(Refusal::HashDiffers {
            name: name.to_string(),
            dir: dir.display().to_string(),
            found,
            wanted: sha256.to_string(),
        });
    }
    set_mode(&path, 0o500).map_err(copy_err)?;
    Ok(copied)
}

/// A job's program: copied and checked on its first use by the job, then
/// the same copy for the job's life (see the module's doc).
#[derive(Debug)]
pub struct JobProgram {
    allowed: Option<PathBuf>,
    name: String,
    sha256: String,
    copy: std::sync::OnceLock<Result<Copied, String>>,
    copying: std::sync::Mutex<()>,
}

impl JobProgram {
    /// Program `name` of hash `sha256`, looked up in `allowed` (a host's
    /// `--programs` directory) when first needed.
    pub fn new(allowed: Option<PathBuf>, name: &str, sha256: &str) -> JobProgram {
        JobProgram {
            allowed,
            name: name.to_string(),
            sha256: sha256.to_string(),
            copy: std::sync::OnceLock::new(),
            copying: std::sync::Mutex::new(()),
        }
    }

    /// The private copy to run, or why there is none (the same answer
    /// for the job's life: a refusal is not retried on this worker).
    pub fn path(&self) -> Result<&Path, String> {
        if self.copy.get().is_none() {
            let _one = self.copying.lock().unwrap_or_else(|e| e.into_inner());
            if self.copy.get().is_none() {
                let made = copy_checked(self.allowed.as_deref(), &self.name, &self.sha256)
                    .map_err(|e| e.to_string());
                let _ = self.copy.set(made);
            }
        }
        match self.copy.get().expect("set above") {
            Ok(c) => Ok(&c.path),
            Err(e) => Err(e.clone()),
        }
    }
}

/// The SHA-256 of some bytes, as lower-case hex.
pub fn sha256_bytes(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// A new directory only this user may enter.
fn private_dir() -> std::io::Result<PathBuf> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let base = std::env::temp_dir();
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = base.join(format!("orchard-exec-{}-{n}", std::process::id()));
        match std::fs::create_dir(&dir) {
            Ok(()) => {
                set_mode(&dir, 0o700)?;
                return Ok(dir);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}
