//! Snapshots of the `hip-solve` transposition table (the job's
//! [`orchard_core::CacheSnapshot`]), so that a worker restarted after a crash
//! (or the next job on the same game) does not solve again what the last one
//! had settled.
//!
//! Why: the table is where a long search keeps most of its knowledge. A
//! 6x6 position six stones deep needed 1.8 million nodes with the table the
//! run had built from its siblings and more than 300 million with an empty
//! one; without snapshots every restart of a multi-day run starts from an
//! empty table.
//!
//! This module only encodes and decodes; the worker owns the files (where,
//! when, written atomically and checksummed again in its own frame). A
//! snapshot holds the table's expensive entries (those of positions with
//! many empty cells), carries a CRC-32 of its whole content, and is checked
//! whole, entry by entry (key on the board, canonical, value interval
//! sound), before any entry is used. Entries are facts about positions of
//! one game (P1's value lies in `lo..=hi`), true whichever job or process
//! found them, which is what makes sharing them sound; a snapshot names its
//! game and format, and one of another game or format is refused.

use super::board::Board;
use super::table::{Table, TableEntry};
use orchard_core::FamilyError;

/// Magic and format version (the version changes whenever the key, the
/// symmetry convention or the meaning of an entry does).
const MAGIC: &[u8; 8] = b"ORCHTT\x00\x01";
/// Layout: the header (magic, rows, columns, Double Hip, padding), the
/// entries, the trailer (the entry count, then the CRC-32 of everything
/// before it), little-endian.
const HEADER: usize = 16;
pub(super) const RECORD: usize = 20;
const TRAILER: usize = 12;

/// About this many entries per snapshot (20 bytes each: 320 MiB); when
/// more qualify, the threshold of empty cells is raised until they fit.
/// Searches keep adding entries while the table is walked, so a snapshot
/// can hold a few thousand more (16,785,442 in the 6x6 run); the reader sets
/// no limit of its own.
pub(super) const MAX_ENTRIES: u64 = 1 << 24;

/// Encodes the entries of `table` with many empty cells (at most about
/// `cap` of them, the most expensive first). Searches may go on meanwhile.
pub(super) fn encode_table(table: &Table, cap: u64) -> Vec<u8> {
    let (rows, cols, double) = table.tag();
    let cells = rows * cols;
    // Entries with at least half the board empty: the most expensive first
    // if they are too many.
    let (full, extra) = snapshot_levels(&table.count_by_empty(), cells / 2, cap);
    let min_empty = if extra > 0 { full - 1 } else { full };
    let mut extra_left = extra;
    let mut out = Vec::with_capacity(HEADER + TRAILER + RECORD * 1024);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[rows as u8, cols as u8, u8::from(double), 0, 0, 0, 0, 0]);
    // Searches keep writing to the table meanwhile: every entry read is
    // still a fact, and the count goes in the trailer.
    let mut count = 0u64;
    table.for_each_entry(min_empty as u8, |e| {
        if usize::from(e.empty) < full {
            if extra_left == 0 {
                return;
            }
            extra_left -= 1;
        }
        if (e.lo, e.hi) != (-1, 1) {
            out.extend_from_slice(&encode(e));
            count += 1;
        }
    });
    out.extend_from_slice(&count.to_le_bytes());
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Decodes a snapshot of the game of `board` and `double` and checks all of
/// it (see the module docs); any fault refuses the whole snapshot.
pub(super) fn decode_snapshot(
    board: &Board,
    double: bool,
    bytes: &[u8],
) -> Result<Vec<TableEntry>, FamilyError> {
    let bad = |reason: String| FamilyError::BadCache(format!("hip-solve table: {reason}"));
    if bytes.len() < HEADER + TRAILER || &bytes[..8] != MAGIC {
        return Err(bad("not a table snapshot of this version".into()));
    }
    let (body, crc) = bytes.split_at(bytes.len() - 4);
    let crc = u32::from_le_bytes(crc.try_into().expect("four bytes"));
    if crc32fast::hash(body) != crc {
        return Err(bad("checksum mismatch (damaged)".into()));
    }
    let (rows, cols, is_double) = (body[8] as usize, body[9] as usize, body[10]);
    let (body, count) = body.split_at(body.len() - 8);
    let count = u64::from_le_bytes(count.try_into().expect("eight bytes"));
    if is_double > 1 || super::board_dims(rows as u32, cols as u32).ok() != Some((rows, cols)) {
        return Err(bad(format!("names no valid game ({rows}x{cols})")));
    }
    if (rows, cols, is_double == 1) != (board.rows, board.cols, double) {
        let variant = |d: bool| if d { " Double Hip" } else { "" };
        return Err(bad(format!(
            "of another game ({rows}x{cols}{}, not {}x{}{})",
            variant(is_double == 1),
            board.rows,
            board.cols,
            variant(double)
        )));
    }
    if (body.len() - HEADER) as u64 != count.saturating_mul(RECORD as u64) {
        return Err(bad(format!(
            "holds {count} entries but has {} bytes",
            bytes.len()
        )));
    }
    body[HEADER..]
        .chunks_exact(RECORD)
        .enumerate()
        .map(|(i, r)| {
            let e = decode(r);
            check_entry(board, &e).map_err(|why| bad(format!("entry {i}: {why}")))?;
            Ok(e)
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use super::super::search::solve_empty_board as solve;
    use super::*;

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

    /// Stores decoded entries in a table, as `HipSolve::restore` does.
    fn load_into(table: &Table, entries: &[TableEntry]) -> usize {
        for e in entries {
            table.store(e.k1, e.k2, e.lo, e.hi, e.mv, e.empty);
        }
        entries.len()
    }

    /// A snapshot holds exactly the table's entries with half the board or
    /// more empty, and a table loaded from it solves the game again with the
    /// same value and a fraction of the nodes.
    #[test]
    fn a_snapshot_round_trips_and_saves_the_search() {
        let board = Board::new(4, 5);
        let table = Table::new(&board, false, None);
        let (v, nodes) = solve(&board, &table, false);
        let bytes = encode_table(&table, MAX_ENTRIES);
        let written = ((bytes.len() - HEADER - TRAILER) / RECORD) as u64;
        let mut read = decode_snapshot(&board, false, &bytes).unwrap();
        read.sort_by_key(|e| (e.k1, e.k2));
        let expected = entries_of(&table, 10);
        assert!(written > 100, "only {written} entries");
        assert_eq!(read.len() as u64, written);
        assert_eq!(read, expected);

        let fresh = Table::new(&board, false, None);
        assert_eq!(load_into(&fresh, &read), written as usize);
        assert_eq!(entries_of(&fresh, 10), expected);
        let (v2, nodes2) = solve(&board, &fresh, false);
        assert_eq!(v2, v);
        assert!(nodes2 * 10 < nodes, "{nodes2} nodes warm, {nodes} cold");
    }

    /// Past the cap, a snapshot keeps the positions with the most empty
    /// cells: whole levels from the top, then part of the next one.
    #[test]
    fn a_capped_snapshot_keeps_the_most_expensive_entries() {
        let board = Board::new(4, 5);
        let table = Table::new(&board, false, None);
        solve(&board, &table, false);
        let histogram = table.count_by_empty();
        let all: u64 = histogram[10..].iter().sum();
        let cap = all / 3;
        let (full, extra) = snapshot_levels(&histogram, 10, cap);
        assert!(full > 10 && extra > 0, "{full} {extra} of {histogram:?}");
        assert_eq!(histogram[full..].iter().sum::<u64>() + extra, cap);
        assert!(histogram[full - 1..].iter().sum::<u64>() > cap);
        let bytes = encode_table(&table, cap);
        assert_eq!(((bytes.len() - HEADER - TRAILER) / RECORD) as u64, cap);
        let mut read = decode_snapshot(&board, false, &bytes).unwrap();
        assert_eq!(read.len() as u64, cap);
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
    }

    /// Damaged, truncated, tampered and foreign snapshots are refused whole,
    /// with a reason on one line.
    #[test]
    fn bad_snapshots_are_refused() {
        let board = Board::new(4, 4);
        let table = Table::new(&board, true, None);
        solve(&board, &table, true);
        let good = encode_table(&table, MAX_ENTRIES);
        assert!(good.len() > HEADER + TRAILER + RECORD);
        decode_snapshot(&board, true, &good).unwrap();

        let refused = |bytes: &[u8], why: &str| {
            let e = decode_snapshot(&board, true, bytes)
                .expect_err("refused")
                .to_string();
            assert!(e.contains(why) && !e.contains('\n'), "{e}");
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
        // (Without a move: the entry's move is in the canonical frame.)
        tampered[at + 18] = 255;
        refused(&reseal(tampered), "canonical");
        let mut tampered = good.clone();
        tampered[at + 16] = 1;
        tampered[at + 17] = (-1i8) as u8;
        refused(&reseal(tampered), "not a value interval");

        // Another game's snapshot (or the other variant's) is refused.
        let other = Table::new(&Board::new(3, 4), false, None);
        solve(&Board::new(3, 4), &other, false);
        refused(&encode_table(&other, MAX_ENTRIES), "another game");
        assert!(decode_snapshot(&board, false, &good)
            .unwrap_err()
            .to_string()
            .contains("another game"));
    }

    /// The entries of a snapshot, without the checks.
    fn read_snapshot_bytes(bytes: &[u8]) -> Vec<TableEntry> {
        bytes[HEADER..bytes.len() - TRAILER]
            .chunks_exact(RECORD)
            .map(decode)
            .collect()
    }
}
