//! Snapshots of the `hip-solve` transposition table on disk, so that a
//! process restarted after a crash (or the next job on the same game) does
//! not solve again what the last one had settled.
//!
//! Why: the table is where a long search keeps most of its knowledge. A
//! 6x6 position six stones deep needed 1.8 million nodes with the table the
//! run had built from its siblings and more than 300 million with an empty
//! one; every restart of a multi-day run used to start from an empty table.
//!
//! With [`TABLE_DIR_VAR`] set to a directory, the process that holds the
//! table of a game loads `hip-RxC[-double].table` from it when the table is
//! created, and a background thread writes the table's expensive entries
//! (those of positions with many empty cells) back every few minutes. A
//! snapshot is written to a temporary file, fsync'd and renamed over the old
//! one, so a crash leaves the old snapshot or the new one, never half of one;
//! it carries a CRC-32 of its whole content and is checked entry by entry
//! (key on the board, canonical, value interval sound) before any entry is
//! used. Entries are facts about positions of one game (P1's value lies in
//! `lo..=hi`), true whichever job or process found them, which is what makes
//! sharing them sound; the file names its game and format, and a file of
//! another game or format is refused.
//!
//! A corrupt snapshot is an error at startup ([`check_dir`], one line, the
//! worker does not start) and never reaches a search. Processes on one
//! machine may share the directory: each replaces the file atomically with
//! its own snapshot, and every snapshot is sound.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};
use std::time::Duration;

use super::board::Board;
use super::table::{env_number, Table, TableEntry};
use orchard_core::FamilyError;

/// The environment variable naming the directory of table snapshots.
pub const TABLE_DIR_VAR: &str = "ORCHARD_HIP_TABLE_DIR";

/// The environment variable that sets how often the table is written back,
/// in seconds (default 300).
pub const SAVE_SECS_VAR: &str = "ORCHARD_HIP_TABLE_SAVE_SECS";

/// How often the table is written back ([`SAVE_SECS_VAR`], checked at
/// startup by [`check_dir`]).
fn save_interval() -> Result<Duration, FamilyError> {
    let secs = env_number(SAVE_SECS_VAR, "seconds", 1..=86_400)?;
    Ok(Duration::from_secs(secs.unwrap_or(300)))
}

/// File magic and format version (the version changes whenever the key,
/// the symmetry convention or the meaning of an entry does).
const MAGIC: &[u8; 8] = b"ORCHTT\x00\x01";
/// Layout: the header (magic, rows, columns, Double Hip, padding), the
/// entries, the trailer (the entry count, then the CRC-32 of everything
/// before it), little-endian.
const HEADER: usize = 16;
pub(super) const RECORD: usize = 20;
const TRAILER: usize = 12;

/// About this many entries per snapshot (20 bytes each: 320 MiB); when
/// more qualify, the threshold of empty cells is raised until they fit.
/// Searches keep adding entries while the writer walks the table, so a
/// snapshot can hold a few thousand more (16,785,442 in the 6x6 run); the
/// reader sets no limit of its own.
const MAX_ENTRIES: u64 = 1 << 24;

/// The snapshot directory [`TABLE_DIR_VAR`] names, if set.
pub fn table_dir() -> Option<PathBuf> {
    std::env::var_os(TABLE_DIR_VAR)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The snapshot file of a game in `dir`.
pub fn snapshot_path(dir: &Path, rows: usize, cols: usize, double: bool) -> PathBuf {
    let suffix = if double { "-double" } else { "" };
    dir.join(format!("hip-{rows}x{cols}{suffix}.table"))
}

fn env_error(reason: String) -> FamilyError {
    FamilyError::Environment {
        name: TABLE_DIR_VAR,
        reason,
    }
}

/// Startup check of [`TABLE_DIR_VAR`] and [`SAVE_SECS_VAR`]: the directory
/// exists (it is created if missing: node-local scratch on a cluster) and
/// every snapshot in it is whole and sound.
pub fn check_dir() -> Result<(), FamilyError> {
    save_interval()?;
    let Some(dir) = table_dir() else {
        return Ok(());
    };
    std::fs::create_dir_all(&dir)
        .map_err(|e| env_error(format!("cannot create directory {}: {e}", dir.display())))?;
    check_snapshots_in(&dir)
}

/// Every snapshot in `dir` is whole and sound.
fn check_snapshots_in(dir: &Path) -> Result<(), FamilyError> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| env_error(format!("cannot read directory {}: {e}", dir.display())))?;
    for entry in entries {
        let path = entry
            .map_err(|e| env_error(format!("cannot read directory {}: {e}", dir.display())))?
            .path();
        if path.extension().is_some_and(|x| x == "table") {
            read_snapshot(&path).map_err(|reason| env_error(reason.to_string()))?;
        } else if is_stale_temporary(&path) {
            // Left by a process killed while writing; another process may be
            // writing its own right now, hence the age.
            let _ = std::fs::remove_file(&path);
        }
    }
    Ok(())
}

/// A temporary snapshot (see [`write_snapshot`]) untouched for an hour.
fn is_stale_temporary(path: &Path) -> bool {
    let name = path
        .file_name()
        .map_or_else(Default::default, |n| n.to_string_lossy());
    name.starts_with(".hip-")
        && name.ends_with(".tmp")
        && std::fs::metadata(path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > Duration::from_secs(3600))
}

/// Why a snapshot cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("table snapshot {path}: {reason} (delete it to start with an empty table)")]
pub struct SnapshotError {
    path: String,
    reason: String,
}

/// A snapshot read and checked: its game and entries.
pub struct Snapshot {
    pub rows: usize,
    pub cols: usize,
    pub double: bool,
    pub entries: Vec<TableEntry>,
}

/// Reads and checks a snapshot (see the module docs).
pub fn read_snapshot(path: &Path) -> Result<Snapshot, SnapshotError> {
    let bad = |reason: String| SnapshotError {
        path: path.display().to_string(),
        reason,
    };
    let bytes = std::fs::read(path).map_err(|e| bad(format!("cannot read: {e}")))?;
    if bytes.len() < HEADER + TRAILER || &bytes[..8] != MAGIC {
        return Err(bad("not a table snapshot of this version".into()));
    }
    let (body, crc) = bytes.split_at(bytes.len() - 4);
    let crc = u32::from_le_bytes(crc.try_into().expect("four bytes"));
    if crc32fast::hash(body) != crc {
        return Err(bad("checksum mismatch (the file is damaged)".into()));
    }
    let (rows, cols, double) = (body[8] as usize, body[9] as usize, body[10] != 0);
    let (body, count) = body.split_at(body.len() - 8);
    let count = u64::from_le_bytes(count.try_into().expect("eight bytes"));
    if body[10] > 1 || super::board_dims(rows as u32, cols as u32).ok() != Some((rows, cols)) {
        return Err(bad(format!("names no valid game ({rows}x{cols})")));
    }
    if (body.len() - HEADER) as u64 != count.saturating_mul(RECORD as u64) {
        return Err(bad(format!(
            "holds {count} entries but has {} bytes",
            bytes.len()
        )));
    }
    let board = Board::new(rows, cols);
    let mut entries = Vec::with_capacity(count as usize);
    for (i, r) in body[HEADER..].chunks_exact(RECORD).enumerate() {
        let e = decode(r);
        check_entry(&board, &e).map_err(|why| bad(format!("entry {i}: {why}")))?;
        entries.push(e);
    }
    Ok(Snapshot {
        rows,
        cols,
        double,
        entries,
    })
}

/// An entry as a record of the file: the key, then `lo`, `hi`, `mv` and
/// `empty` (see [`RECORD`]).
pub(super) fn encode(e: &TableEntry) -> [u8; RECORD] {
    let mut r = [0u8; RECORD];
    r[0..8].copy_from_slice(&e.k1.to_le_bytes());
    r[8..16].copy_from_slice(&e.k2.to_le_bytes());
    r[16] = e.lo as u8;
    r[17] = e.hi as u8;
    r[18] = e.mv;
    r[19] = e.empty;
    r
}

/// See [`encode`].
pub(super) fn decode(r: &[u8]) -> TableEntry {
    TableEntry {
        k1: u64::from_le_bytes(r[0..8].try_into().expect("eight bytes")),
        k2: u64::from_le_bytes(r[8..16].try_into().expect("eight bytes")),
        lo: r[16] as i8,
        hi: r[17] as i8,
        mv: r[18],
        empty: r[19],
    }
}

/// An entry is a position of the board in canonical form, with an interval
/// inside `-1..=1`, the right count of empty cells and a move (if any) on an
/// empty cell.
pub(super) fn check_entry(board: &Board, e: &TableEntry) -> Result<(), &'static str> {
    if (e.k1 | e.k2) & !board.full != 0 || e.k1 & e.k2 != 0 {
        return Err("stones off the board or on one cell twice");
    }
    if !(-1 <= e.lo && e.lo <= e.hi && e.hi <= 1) {
        return Err("not a value interval");
    }
    if u32::from(e.empty) != board.n as u32 - (e.k1 | e.k2).count_ones() {
        return Err("wrong count of empty cells");
    }
    if e.mv != 255 && (e.mv as usize >= board.n || (e.k1 | e.k2) >> e.mv & 1 == 1) {
        return Err("best move not on an empty cell");
    }
    let (c1, c2, _) = board.canonical2(e.k1, e.k2);
    if (c1, c2) != (e.k1, e.k2) {
        return Err("position not in canonical form");
    }
    Ok(())
}

/// Writes the entries of `table` with many empty cells to `path`
/// atomically (temporary file, fsync, rename, fsync of the directory).
/// Returns how many entries it wrote.
pub fn write_snapshot(table: &Table, path: &Path) -> std::io::Result<u64> {
    write_snapshot_capped(table, path, MAX_ENTRIES)
}

/// Which entries a snapshot of at most `cap` entries holds: every entry
/// with at least `full` empty cells, and `extra` of those with `full - 1`
/// (when the cap leaves room for part of that level only). `floor`: the
/// fewest empty cells worth keeping.
fn snapshot_levels(histogram: &[u64; 65], floor: usize, cap: u64) -> (usize, u64) {
    let above = |level: usize| histogram[level..].iter().sum::<u64>();
    let mut full = floor;
    while above(full) > cap {
        full += 1;
    }
    let extra = if full > floor {
        (cap - above(full)).min(histogram[full - 1])
    } else {
        0
    };
    (full, extra)
}

/// One snapshot write at a time in a process (the saver thread and
/// [`save_now`] use the same temporary file name).
static WRITING: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn write_snapshot_capped(table: &Table, path: &Path, cap: u64) -> std::io::Result<u64> {
    let _writing = WRITING.lock().unwrap_or_else(|e| e.into_inner());
    let (rows, cols, double) = table.tag();
    let cells = rows * cols;
    // Entries with at least half the board empty: the most expensive first
    // if they are too many.
    let (full, extra) = snapshot_levels(&table.count_by_empty(), cells / 2, cap);
    let min_empty = if extra > 0 { full - 1 } else { full };
    let mut extra_left = extra;
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map_or_else(Default::default, |n| n.to_string_lossy());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let file = std::fs::File::create(&tmp)?;
        let mut out = CrcWriter {
            inner: std::io::BufWriter::with_capacity(1 << 20, file),
            crc: crc32fast::Hasher::new(),
        };
        let mut header = [0u8; HEADER];
        header[..8].copy_from_slice(MAGIC);
        header[8] = rows as u8;
        header[9] = cols as u8;
        header[10] = u8::from(double);
        out.write_all(&header)?;
        // Searches keep writing to the table meanwhile: every entry read is
        // still a fact, and the count goes in the trailer.
        let mut count = 0u64;
        let mut err = Ok(());
        table.for_each_entry(min_empty as u8, |e| {
            if usize::from(e.empty) < full {
                if extra_left == 0 {
                    return;
                }
                extra_left -= 1;
            }
            if err.is_ok() && (e.lo, e.hi) != (-1, 1) {
                err = out.write_all(&encode(e));
                count += 1;
            }
        });
        err?;
        out.write_all(&count.to_le_bytes())?;
        let crc = out.crc.clone().finalize();
        out.inner.write_all(&crc.to_le_bytes())?;
        let file = out.inner.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)?;
        std::fs::File::open(dir)?.sync_all()?;
        Ok(count)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// A writer that keeps the CRC-32 of what went through it.
struct CrcWriter<W: Write> {
    inner: W,
    crc: crc32fast::Hasher,
}

impl<W: Write> Write for CrcWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.crc.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Loads the snapshot of `table`'s game from `dir`, if there is one, and
/// starts the thread that writes it back every few minutes (see
/// [`SAVE_SECS_VAR`]) while the table lives. Never fails the caller: a snapshot that cannot be read is
/// reported and ignored (startup has checked it, see [`check_dir`]).
pub fn attach(table: &Arc<Table>, dir: &Path) {
    let (rows, cols, double) = table.tag();
    let path = snapshot_path(dir, rows, cols, double);
    load_into(table, &path);
    let interval = save_interval().unwrap_or(Duration::from_secs(300));
    spawn_saver(Arc::downgrade(table), path, interval);
}

/// Loads the snapshot at `path` into `table`, if there is one, it is sound
/// and of the table's game; returns how many entries it loaded.
fn load_into(table: &Table, path: &Path) -> usize {
    if !path.exists() {
        return 0;
    }
    match read_snapshot(path) {
        Ok(s) if (s.rows, s.cols, s.double) == table.tag() => {
            for e in &s.entries {
                table.store(e.k1, e.k2, e.lo, e.hi, e.mv, e.empty);
            }
            tracing::info!(
                entries = s.entries.len(),
                path = %path.display(),
                "hip-solve: table snapshot loaded"
            );
            s.entries.len()
        }
        Ok(_) => {
            tracing::warn!(
                path = %path.display(),
                "hip-solve: the table snapshot is of another game; not loaded"
            );
            0
        }
        Err(e) => {
            tracing::warn!("hip-solve: {e}; not loaded");
            0
        }
    }
}

/// Writes the snapshot of the process's table now, if snapshots are on
/// ([`TABLE_DIR_VAR`]) and the process has a table: what a process stopping
/// gracefully does last, so that its successor does not lose the minutes
/// since the saver's last tick.
pub fn save_now() {
    let (Some(dir), Some(table)) = (table_dir(), super::table::shared_table()) else {
        return;
    };
    let (rows, cols, double) = table.tag();
    save(&table, &snapshot_path(&dir, rows, cols, double));
}

fn save(table: &Table, path: &Path) {
    match write_snapshot(table, path) {
        Ok(entries) => tracing::info!(
            entries,
            path = %path.display(),
            "hip-solve: table snapshot written"
        ),
        Err(e) => tracing::warn!(
            path = %path.display(),
            "hip-solve: cannot write the table snapshot: {e}"
        ),
    }
}

/// Writes the table to `path` every `interval` until it is dropped; the
/// thread ends at the first tick after that.
pub fn spawn_saver(
    table: Weak<Table>,
    path: PathBuf,
    interval: Duration,
) -> Option<std::thread::JoinHandle<()>> {
    let spawned = std::thread::Builder::new()
        .name("hip-table-saver".into())
        .spawn(move || loop {
            std::thread::sleep(interval);
            let Some(table) = table.upgrade() else {
                return;
            };
            save(&table, &path);
        });
    spawned
        .map_err(|e| tracing::warn!("hip-solve: cannot start the table saver: {e}"))
        .ok()
}

#[cfg(test)]
mod tests {
    use super::super::search::{Pos, Solver};
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("orchard-table-file-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Solves the empty board of a game into `table`: P1's value and nodes.
    fn solve(board: &Board, table: &Table, double: bool) -> (i8, u64) {
        let mut s = Solver::new(board, double, table, None);
        let v = s.search(&Pos::EMPTY, -1, 1).unwrap();
        (v, s.nodes)
    }

    fn entries_of(table: &Table, min_empty: u8) -> Vec<TableEntry> {
        let mut v = Vec::new();
        table.for_each_entry(min_empty, |e| {
            if (e.lo, e.hi) != (-1, 1) {
                v.push(*e)
            }
        });
        v.sort_by_key(|e| (e.k1, e.k2));
        v
    }

    /// A snapshot holds exactly the table's entries with half the board or
    /// more empty, and a table loaded from it solves the game again with the
    /// same value and a fraction of the nodes.
    #[test]
    fn a_snapshot_round_trips_and_saves_the_search() {
        let dir = temp_dir("round-trip");
        let board = Board::new(4, 5);
        let table = Table::new(&board, false).unwrap();
        let (v, nodes) = solve(&board, &table, false);
        let path = snapshot_path(&dir, 4, 5, false);
        let written = write_snapshot(&table, &path).unwrap();
        let snap = read_snapshot(&path).unwrap();
        assert_eq!((snap.rows, snap.cols, snap.double), (4, 5, false));
        let mut read = snap.entries;
        read.sort_by_key(|e| (e.k1, e.k2));
        let expected = entries_of(&table, 10);
        assert!(written > 100, "only {written} entries");
        assert_eq!(read.len() as u64, written);
        assert_eq!(read, expected);

        let fresh = Table::new(&board, false).unwrap();
        assert_eq!(load_into(&fresh, &path), written as usize);
        assert_eq!(entries_of(&fresh, 10), expected);
        let (v2, nodes2) = solve(&board, &fresh, false);
        assert_eq!(v2, v);
        assert!(nodes2 * 10 < nodes, "{nodes2} nodes warm, {nodes} cold");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Past the cap, a snapshot keeps the positions with the most empty
    /// cells: whole levels from the top, then part of the next one.
    #[test]
    fn a_capped_snapshot_keeps_the_most_expensive_entries() {
        let dir = temp_dir("capped");
        let board = Board::new(4, 5);
        let table = Table::new(&board, false).unwrap();
        solve(&board, &table, false);
        let histogram = table.count_by_empty();
        let all: u64 = histogram[10..].iter().sum();
        let cap = all / 3;
        let (full, extra) = snapshot_levels(&histogram, 10, cap);
        assert!(full > 10 && extra > 0, "{full} {extra} of {histogram:?}");
        assert_eq!(histogram[full..].iter().sum::<u64>() + extra, cap);
        assert!(histogram[full - 1..].iter().sum::<u64>() > cap);
        let path = snapshot_path(&dir, 4, 5, false);
        assert_eq!(write_snapshot_capped(&table, &path, cap).unwrap(), cap);
        let snap = read_snapshot(&path).unwrap();
        assert_eq!(snap.entries.len() as u64, cap);
        let mut read = snap.entries;
        read.sort_by_key(|e| (e.k1, e.k2));
        let top: Vec<TableEntry> = read
            .iter()
            .filter(|e| usize::from(e.empty) >= full)
            .copied()
            .collect();
        assert_eq!(top, entries_of(&table, full as u8));
        assert!(read.iter().all(|e| usize::from(e.empty) >= full - 1));
        // Under the cap: everything from the floor.
        assert_eq!(snapshot_levels(&histogram, 10, all), (10, 0));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Damaged, truncated, tampered and foreign snapshots are refused with a
    /// reason, and the startup check names the variable; nothing is loaded.
    #[test]
    fn bad_snapshots_are_refused() {
        let dir = temp_dir("bad");
        let board = Board::new(4, 4);
        let table = Table::new(&board, true).unwrap();
        solve(&board, &table, true);
        let path = snapshot_path(&dir, 4, 4, true);
        write_snapshot(&table, &path).unwrap();
        let good = std::fs::read(&path).unwrap();
        assert!(good.len() > HEADER + TRAILER + RECORD);
        check_snapshots_in(&dir).unwrap();

        let refused = |bytes: &[u8], why: &str| {
            std::fs::write(&path, bytes).unwrap();
            let e = read_snapshot(&path).err().expect("refused").to_string();
            assert!(e.contains(why), "{e}");
            assert!(e.contains("delete it"), "{e}");
            let e = check_snapshots_in(&dir).expect_err("refused").to_string();
            assert!(e.contains(why) && !e.contains('\n'), "{e}");
            let fresh = Table::new(&board, true).unwrap();
            assert_eq!(load_into(&fresh, &path), 0);
            assert_eq!(fresh.count_by_empty().iter().sum::<u64>(), 0);
        };
        let mut flipped = good.clone();
        flipped[HEADER + 3] ^= 0x10;
        refused(&flipped, "checksum");
        refused(&good[..good.len() - 7], "checksum");
        refused(b"not a snapshot", "not a table snapshot");
        // A sound checksum over unsound content: a key not in canonical form
        // (the mirror image of a canonical one), then an impossible value.
        let reseal = |mut bytes: Vec<u8>| {
            let n = bytes.len() - 4;
            let crc = crc32fast::hash(&bytes[..n]);
            bytes[n..].copy_from_slice(&crc.to_le_bytes());
            bytes
        };
        let snap = read_snapshot_bytes(&good);
        let (i, image) = snap
            .iter()
            .enumerate()
            .find_map(|(i, e)| {
                (1..board.symmetries())
                    .map(|g| (board.transform(g, e.k1), board.transform(g, e.k2)))
                    .find(|&t| t != (e.k1, e.k2))
                    .map(|t| (i, t))
            })
            .expect("an asymmetric position");
        let mut tampered = good.clone();
        let at = HEADER + i * RECORD;
        tampered[at..at + 8].copy_from_slice(&image.0.to_le_bytes());
        tampered[at + 8..at + 16].copy_from_slice(&image.1.to_le_bytes());
        refused(&reseal(tampered), "canonical");
        let mut tampered = good.clone();
        tampered[at + 16] = 1;
        tampered[at + 17] = (-1i8) as u8;
        refused(&reseal(tampered), "not a value interval");

        // Another game's snapshot under this game's name: read, not loaded.
        std::fs::remove_file(&path).unwrap();
        let other = Table::new(&Board::new(3, 4), false).unwrap();
        solve(&Board::new(3, 4), &other, false);
        write_snapshot(&other, &path).unwrap();
        let fresh = Table::new(&board, true).unwrap();
        assert_eq!(load_into(&fresh, &path), 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A temporary file left by a killed writer is removed once it is an
    /// hour old; a recent one (maybe being written) and snapshots stay.
    #[test]
    fn stale_temporaries_are_removed() {
        let dir = temp_dir("stale");
        let old = dir.join(".hip-4x4.table.1234.tmp");
        let recent = dir.join(".hip-4x4.table.5678.tmp");
        let other = dir.join("notes.tmp");
        for p in [&old, &recent, &other] {
            std::fs::write(p, b"partial").unwrap();
        }
        let hour_ago = std::time::SystemTime::now() - Duration::from_secs(7200);
        for p in [&old, &other] {
            let f = std::fs::File::options().write(true).open(p).unwrap();
            f.set_modified(hour_ago).unwrap();
        }
        check_snapshots_in(&dir).unwrap();
        assert!(!old.exists());
        assert!(recent.exists() && other.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The entries of a snapshot file, without the checks.
    fn read_snapshot_bytes(bytes: &[u8]) -> Vec<TableEntry> {
        bytes[HEADER..bytes.len() - TRAILER]
            .chunks_exact(RECORD)
            .map(decode)
            .collect()
    }

    /// The saver writes snapshots while the table lives and stops when it
    /// is dropped.
    #[test]
    fn the_saver_writes_while_the_table_lives() {
        let dir = temp_dir("saver");
        let board = Board::new(3, 4);
        let table = Arc::new(Table::new(&board, false).unwrap());
        solve(&board, &table, false);
        let path = snapshot_path(&dir, 3, 4, false);
        let saver = spawn_saver(
            Arc::downgrade(&table),
            path.clone(),
            Duration::from_millis(20),
        )
        .expect("a thread");
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !path.exists() {
            assert!(std::time::Instant::now() < deadline, "no snapshot written");
            std::thread::sleep(Duration::from_millis(10));
        }
        read_snapshot(&path).unwrap();
        drop(table);
        saver.join().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
