//! Which program a job may run, and the copy of it that runs.
//!
//! A job names a program by file name and SHA-256; a worker looks the name
//! up only in the directory its operator gave it (`--programs DIR`), never
//! at a path the job chose, hashes what it finds, and refuses the unit
//! unless the hashes agree. The program then runs from a private copy made
//! once per job and hashed as it was written, so a program changed on disk
//! while the job runs is never run by it: a job never mixes two versions.
//!
//! Each private directory holds a lock file its process keeps locked, so
//! that the directories of a worker killed with SIGKILL, which never removes
//! them, are found and removed by the next process that makes one (see
//! [`sweep`]).

use std::fs::File;
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
/// job is dropped, while its lock is still held.
#[derive(Debug)]
pub struct Copied {
    dir: PrivateDir,
    pub path: PathBuf,
}

impl Drop for Copied {
    fn drop(&mut self) {
        // The lock is released after this, when the fields are dropped.
        let _ = std::fs::remove_dir_all(&self.dir.path);
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
    let path = private.path.join(name);
    let copied = Copied {
        dir: private,
        path: path.clone(),
    };
    let mut input = File::open(&source).map_err(|_| not_allowed())?;
    // A new file, never one already there: a program named like the lock
    // file is refused rather than written over it.
    let mut output = File::options()
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(copy_err)?;
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

/// What every private directory's name starts with, followed by
/// `<pid>-<n>`; the sweep touches nothing else.
const PREFIX: &str = "orchard-exec-";

/// The lock file in a private directory. A program may bear any file name,
/// this one too, which is why the copy is made with `create_new`: such a
/// program is refused, never written over the lock file.
const LOCK_FILE: &str = ".orchard-exec.lock";

/// A private directory and, open and locked for as long as the directory
/// lives, its lock file (none where the file system cannot lock: such a
/// directory is never swept, as before there were locks).
#[derive(Debug)]
struct PrivateDir {
    path: PathBuf,
    _lock: Option<File>,
}

/// A new directory only this user may enter, in the temporary directory.
/// The first one a process makes also sweeps away those of dead processes.
fn private_dir() -> std::io::Result<PrivateDir> {
    static SWEPT: std::sync::Once = std::sync::Once::new();
    let base = std::env::temp_dir();
    SWEPT.call_once(|| sweep(&base));
    make_private_dir(&base, std::process::id())
}

/// A new directory `base/orchard-exec-<pid>-<n>` of mode 0700 holding a
/// lock file this process keeps locked (`flock`, exclusive) until the
/// directory is removed.
fn make_private_dir(base: &Path, pid: u32) -> std::io::Result<PrivateDir> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = base.join(format!("{PREFIX}{pid}-{n}"));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => {}
            // Ours from an earlier life, or a process of the same pid in
            // another PID namespace sharing this directory.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
        let lock_path = dir.join(LOCK_FILE);
        let made = set_mode(&dir, 0o700).and_then(|()| {
            File::options()
                .read(true)
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&lock_path)
        });
        let lock = match made {
            Ok(lock) => lock,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
        };
        match try_lock(&lock) {
            Ok(true) => {}
            // Another process's sweep saw the unlocked file between its
            // creation and our lock, and is removing the directory.
            Ok(false) => continue,
            Err(_) => {
                // No locks on this file system: a directory without a lock
                // file, which sweeps leave alone.
                let _ = std::fs::remove_file(&lock_path);
                return Ok(PrivateDir {
                    path: dir,
                    _lock: None,
                });
            }
        }
        // A sweep may have locked the file first, removed the directory
        // and let go before our lock: then the file we hold is no longer
        // the one in the directory (if there is still one).
        let held = lock.metadata()?;
        match std::fs::symlink_metadata(&lock_path) {
            Ok(m) if m.dev() == held.dev() && m.ino() == held.ino() => {
                return Ok(PrivateDir {
                    path: dir,
                    _lock: Some(lock),
                })
            }
            _ => continue,
        }
    }
}

/// Removes the private directories in `base` whose owners are gone.
///
/// A worker killed with SIGKILL (the OOM killer, a batch system's
/// preemption) never runs the code that removes its directory, so each such
/// kill would leave a copy of a program behind. The kernel, though, releases
/// a `flock` however its holder dies, so a lock file that can be locked
/// means its owner is dead; unlike asking whether pid `<pid>` is alive, this
/// holds across PID namespaces (containers sharing `/tmp`) and after pids
/// are reused. Only directories named `orchard-exec-<pid>-<n>`, not
/// symlinks, of this user and holding a lock file are candidates: one
/// without a lock file, made before there were locks, is left alone, since
/// nothing tells whether its owner still runs. Errors only leave a
/// directory in place; they never fail the job.
fn sweep(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    // SAFETY: geteuid cannot fail and touches no memory.
    let uid = unsafe { libc::geteuid() };
    for entry in entries.flatten() {
        if is_private_name(&entry.file_name()) {
            sweep_one(&entry.path(), uid);
        }
    }
}

/// Removes `dir` if it is a directory of user `uid` holding a lock file
/// nobody holds.
fn sweep_one(dir: &Path, uid: libc::uid_t) {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    // lstat: a symlink is not a directory here and is never followed.
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.is_dir() && m.uid() == uid => {}
        _ => return,
    }
    // No symlink followed, and no wait on a FIFO put in its place.
    let Ok(lock) = File::options()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(dir.join(LOCK_FILE))
    else {
        return;
    };
    if !lock.metadata().is_ok_and(|m| m.is_file()) {
        return;
    }
    if let Ok(true) = try_lock(&lock) {
        // Held while removing, so that a process making a directory of the
        // same name meanwhile sees it was not its own (`make_private_dir`).
        // remove_dir_all does not follow symlinks inside.
        let _ = std::fs::remove_dir_all(dir);
    }
    drop(lock);
}

/// Whether `name` is `orchard-exec-<digits>-<digits>`.
fn is_private_name(name: &std::ffi::OsStr) -> bool {
    let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)) else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    rest.split_once('-')
        .is_some_and(|(pid, n)| digits(pid) && digits(n))
}

/// Locks `file` exclusively without waiting: true if locked, false if
/// another open file holds a lock on it.
fn try_lock(file: &File) -> std::io::Result<bool> {
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a descriptor `file` owns for the whole call.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    if e.kind() == std::io::ErrorKind::WouldBlock {
        Ok(false)
    } else {
        Err(e)
    }
}

fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory of its own for one test, never the shared temporary
    /// directory's entries; its name is not a private directory's.
    fn base(tag: &str) -> PathBuf {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let dir = std::env::temp_dir().join(format!(
            "orchard-exec-test-{tag}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir(&dir).unwrap();
        dir
    }

    #[test]
    fn the_sweep_removes_only_directories_whose_lock_nobody_holds() {
        let base = base("sweep");
        // A dead owner's: made, a program copied in, then the lock let go
        // without removing anything, as SIGKILL leaves it.
        let dead = make_private_dir(&base, 4_000_001).unwrap();
        std::fs::write(dead.path.join("program"), b"#!/bin/sh\n").unwrap();
        let dead_path = dead.path.clone();
        drop(dead);
        // A live owner's: its lock still held by an open file.
        let live = make_private_dir(&base, 4_000_002).unwrap();
        std::fs::write(live.path.join("program"), b"#!/bin/sh\n").unwrap();
        // Made before there were locks: no lock file.
        let old = base.join("orchard-exec-4000003-0");
        std::fs::create_dir(&old).unwrap();
        // Not a private directory's name, though with a free lock file.
        let other = base.join("orchard-exec-keep");
        std::fs::create_dir(&other).unwrap();
        std::fs::write(other.join(LOCK_FILE), b"").unwrap();
        // A symlink named like a private directory, to a directory with a
        // free lock file: neither is touched.
        let target = base.join("target");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join(LOCK_FILE), b"").unwrap();
        let link = base.join("orchard-exec-4000004-0");
        std::os::unix::fs::symlink(&target, &link).unwrap();

        sweep(&base);

        assert!(!dead_path.exists(), "the dead owner's directory is left");
        assert!(live.path.join("program").is_file());
        assert!(live.path.join(LOCK_FILE).is_file());
        assert!(old.is_dir());
        assert!(other.join(LOCK_FILE).is_file());
        assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
        assert!(target.join(LOCK_FILE).is_file());

        // Once its owner lets go, the live one goes too.
        let live_path = live.path.clone();
        drop(live);
        sweep(&base);
        assert!(!live_path.exists());
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_private_directory_is_private_and_locked() {
        use std::os::unix::fs::PermissionsExt;
        let base = base("private");
        let made = make_private_dir(&base, 4_000_005).unwrap();
        let mode = std::fs::metadata(&made.path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let again = File::open(made.path.join(LOCK_FILE)).unwrap();
        assert!(!try_lock(&again).unwrap(), "the lock is not held");
        drop(made);
        assert!(try_lock(&again).unwrap());
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn private_names() {
        for yes in ["orchard-exec-1-0", "orchard-exec-4242-17"] {
            assert!(is_private_name(yes.as_ref()), "{yes}");
        }
        for no in [
            "orchard-exec-",
            "orchard-exec-1",
            "orchard-exec-1-",
            "orchard-exec--0",
            "orchard-exec-1-0-2",
            "orchard-exec-a-0",
            "orchard-exec-test-1-2",
            "xorchard-exec-1-0",
            "orchard-exec-1-0 ",
        ] {
            assert!(!is_private_name(no.as_ref()), "{no}");
        }
    }
}
