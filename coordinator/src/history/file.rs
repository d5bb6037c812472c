//! The side file that keeps the jobs' histories across restarts:
//! `<database>.history`, beside the database and never inside it (the
//! history is the dashboard's, not the search's: no schema change, no
//! write in the store's transactions).
//!
//! The file is one header line, `orchard-history 1 crc32=XXXXXXXX
//! bytes=N`, then N bytes of JSON whose CRC-32 the header gives. It is
//! written like a results file: a temporary file, fsync'd, renamed over the
//! old one, the directory fsync'd ([`crate::results::write_atomically`]),
//! so a crash leaves the previous history or the new one. A file that is
//! damaged anyway (a flipped bit, a foreign file) is refused whole with the
//! reason, and the caller starts a fresh history rather than draw a wrong
//! one.

use std::path::{Path, PathBuf};

use super::Histories;

const MAGIC: &str = "orchard-history 1";

/// Why a history file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum HistoryFileError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is damaged: {reason}")]
    Damaged { path: PathBuf, reason: String },
}

/// Where the history of the database at `db` is kept.
pub fn beside(db: &Path) -> PathBuf {
    let mut name = db.file_name().unwrap_or_default().to_os_string();
    name.push(".history");
    db.with_file_name(name)
}

/// The file's bytes for `h`.
pub fn encode(h: &Histories) -> Vec<u8> {
    let body = serde_json::to_vec(h).expect("histories serialise to JSON");
    let mut out = format!(
        "{MAGIC} crc32={:08x} bytes={}\n",
        crc32fast::hash(&body),
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(&body);
    out
}

/// The histories in a file's bytes; the error says what is wrong.
pub fn decode(bytes: &[u8]) -> Result<Histories, String> {
    let newline = bytes
        .iter()
        .position(|&b| b == b'\n')
        .ok_or("no header line")?;
    let header = std::str::from_utf8(&bytes[..newline]).map_err(|_| "header is not text")?;
    let body = &bytes[newline + 1..];
    let rest = header
        .strip_prefix(MAGIC)
        .ok_or_else(|| format!("not an orchard history file (header {header:?})"))?;
    let mut crc = None;
    let mut len = None;
    for field in rest.split_whitespace() {
        match field.split_once('=') {
            Some(("crc32", v)) => crc = u32::from_str_radix(v, 16).ok(),
            Some(("bytes", v)) => len = v.parse::<usize>().ok(),
            _ => return Err(format!("unknown header field {field:?}")),
        }
    }
    let (crc, len) = crc.zip(len).ok_or("header lacks crc32 or bytes")?;
    if body.len() != len {
        return Err(format!(
            "{} bytes of history, header says {len}",
            body.len()
        ));
    }
    if crc32fast::hash(body) != crc {
        return Err("checksum mismatch".to_string());
    }
    serde_json::from_slice(body).map_err(|e| format!("unreadable history: {e}"))
}

/// The histories kept at `path`; `Ok(None)` when there is no file yet.
pub fn load(path: &Path) -> Result<Option<Histories>, HistoryFileError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(HistoryFileError::Io {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    decode(&bytes)
        .map(Some)
        .map_err(|reason| HistoryFileError::Damaged {
            path: path.to_path_buf(),
            reason,
        })
}

/// Writes `bytes` (see [`encode`]) at `path`, atomically.
pub fn save(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    crate::results::write_atomically(path, bytes)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::status::{JobState, JobStatus};

    fn histories() -> Histories {
        let mut h = Histories::new(Duration::from_secs(1));
        let s = JobStatus {
            job_id: 3,
            family: "hc".into(),
            params_json: "{}".into(),
            state: JobState::Running,
            units_total: 4,
            units_done: 2,
            units_running: 1,
            units_pending: 1,
            nodes: 12345,
            nodes_discarded: 0,
            lemma_bytes: 0,
            lemmas_observed: 0,
            nodes_per_second: 2.5,
            bound: 0,
            live_workers: 1,
            created_unix_ms: 0,
            finished_unix_ms: 0,
            error: String::new(),
            estimated_nodes: 0.0,
            estimated_nodes_error: 0.0,
            replicas: 1,
            verified_units: 0,
            mismatches: 0,
            waiting: String::new(),
            excluded: Vec::new(),
            eta_seconds: 0.0,
        };
        h.record(1_700_000_000_000, &[s]);
        h
    }

    #[test]
    fn round_trips_and_refuses_any_damage() {
        let h = histories();
        let bytes = encode(&h);
        assert_eq!(decode(&bytes).unwrap(), h);
        // Any flipped bit of the body, any cut, a foreign file: refused.
        let header = bytes.iter().position(|&b| b == b'\n').unwrap() + 1;
        for i in header..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 0x04;
            assert!(decode(&bad).is_err(), "flipped byte {i} accepted");
        }
        assert!(decode(&bytes[..bytes.len() - 1]).is_err());
        assert!(decode(b"SQLite format 3\0").is_err());
        let e = decode(b"hello\n{}").unwrap_err();
        assert!(e.starts_with("not an orchard history file"), "{e}");
    }

    #[test]
    fn saved_atomically_and_loaded_back() {
        let dir = std::env::temp_dir().join(format!("orchard-history-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = beside(&dir.join("orchard.db"));
        assert_eq!(path, dir.join("orchard.db.history"));
        assert!(load(&path).unwrap().is_none(), "no file yet");
        let h = histories();
        save(&path, &encode(&h)).unwrap();
        assert_eq!(load(&path).unwrap().unwrap(), h);
        std::fs::write(&path, b"orchard-history 1 crc32=00000000 bytes=2\n{}").unwrap();
        let e = load(&path).unwrap_err().to_string();
        assert!(e.contains("is damaged: checksum mismatch"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
