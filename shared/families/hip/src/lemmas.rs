//! `hip-solve`'s lemmas (see [`orchard_core::LemmaExchange`]): the table
//! entries of positions whose search took at least
//! [`super::search::LEMMA_MIN_NODES`] nodes, shared between workers through the coordinator.
//!
//! Why: in a placement game the subtrees of sibling moves share most of their
//! positions, so two workers solving siblings solve the same positions twice
//! (two processes on 5x6 searched 65% more nodes than one). The threads of
//! one process share a table; lemmas give a worker on another machine the
//! expensive part of that table, a few seconds late.
//!
//! On the wire: a format byte, then the 20-byte records of a table snapshot
//! (see [`super::snapshot`]), each checked like a snapshot's entries before
//! any is used. A lemma states P1's value interval of a canonical position of
//! the job's game, which holds in every job of that game.

use super::board::Board;
use super::snapshot::{check_entry, decode, encode, RECORD};
use super::table::{Table, TableEntry};
use orchard_core::FamilyError;

/// The format byte of a blob of lemmas.
const FORMAT: u8 = 1;

/// See [`orchard_core::LemmaExchange::take`]: drains the outbox of the
/// job's table (and makes the table fill it from now on).
pub fn take(table: &Table, max_bytes: usize) -> Vec<u8> {
    let entries = table.take_lemmas(max_bytes.saturating_sub(1) / RECORD);
    if entries.is_empty() {
        return Vec::new();
    }
    encode_all(&entries)
}

/// Encodes lemmas for the wire.
pub fn encode_all(entries: &[TableEntry]) -> Vec<u8> {
    let mut out = Vec::with_capacity(1 + entries.len() * RECORD);
    out.push(FORMAT);
    for e in entries {
        out.extend_from_slice(&encode(e));
    }
    out
}

/// Decodes a blob of lemmas and checks every one against `board`.
pub fn decode_all(board: &Board, bytes: &[u8]) -> Result<Vec<TableEntry>, FamilyError> {
    let bad = |why: String| FamilyError::BadLemmas(why);
    let Some((&format, records)) = bytes.split_first() else {
        return Err(bad("empty blob".into()));
    };
    if format != FORMAT {
        return Err(bad(format!("unknown format {format}")));
    }
    if records.is_empty() || records.len() % RECORD != 0 {
        return Err(bad(format!(
            "{} bytes of records, not a positive multiple of {RECORD}",
            records.len()
        )));
    }
    records
        .chunks_exact(RECORD)
        .enumerate()
        .map(|(i, r)| {
            let e = decode(r);
            check_entry(board, &e).map_err(|why| bad(format!("lemma {i}: {why}")))?;
            Ok(e)
        })
        .collect()
}

/// Stores lemmas in `table` (each intersected with what the table knows).
pub fn learn_into(table: &Table, entries: &[TableEntry]) -> u64 {
    for e in entries {
        table.store(e.k1, e.k2, e.lo, e.hi, e.mv, e.empty);
    }
    entries.len() as u64
}

#[cfg(test)]
mod tests {
    use super::super::search::{solve_empty_board as solve, LEMMA_MIN_NODES};
    use super::*;

    /// A table collects lemmas only once asked to; what it collects are
    /// sound entries of expensive positions, which survive the wire and let
    /// a second, empty table solve the game again with the same value in a
    /// fraction of the nodes.
    #[test]
    fn lemmas_carry_expensive_positions_to_another_table() {
        let board = Board::new(4, 5);
        let quiet = Table::new(&board, false, None);
        solve(&board, &quiet, false);
        assert!(
            quiet.take_lemmas(usize::MAX).is_empty(),
            "collected unasked"
        );
        assert!(quiet.take_lemmas(usize::MAX).is_empty());

        let source = Table::new(&board, false, None);
        source.take_lemmas(0);
        let (v, nodes) = solve(&board, &source, false);
        let lemmas = source.take_lemmas(usize::MAX);
        assert!(
            lemmas.len() > 10 && (lemmas.len() as u64) < nodes / LEMMA_MIN_NODES * 64,
            "{} lemmas from {nodes} nodes",
            lemmas.len()
        );
        assert!(source.take_lemmas(usize::MAX).is_empty(), "taken twice");
        // Every lemma is what the table holds (or a wider interval of it),
        // unless the table replaced it since.
        let mut held = 0;
        for e in &lemmas {
            if let Some((lo, hi, _)) = source.probe(e.k1, e.k2) {
                assert!(e.lo <= lo && hi <= e.hi, "{e:?} against [{lo}, {hi}]");
                held += 1;
            }
        }
        assert!(held * 2 > lemmas.len(), "{held} of {} held", lemmas.len());
        let wire = encode_all(&lemmas);
        let back = decode_all(&board, &wire).unwrap();
        assert_eq!(back, lemmas);

        let fresh = Table::new(&board, false, None);
        assert_eq!(learn_into(&fresh, &back), lemmas.len() as u64);
        let (v2, nodes2) = solve(&board, &fresh, false);
        assert_eq!(v2, v);
        assert!(
            nodes2 * 5 < nodes,
            "{nodes2} nodes with lemmas, {nodes} without"
        );
    }

    /// Each lemma carries the node count of the search that stored it: the
    /// stamps of one search ascend and stay below its nodes, and the
    /// lemmas are the ones the wire takes (the same search on a fresh
    /// table gives `take_lemmas` the same entries, in the same order).
    #[test]
    fn lemmas_are_stamped_with_the_searchs_node_count() {
        let board = Board::new(4, 5);
        let stamped = Table::new(&board, false, None);
        stamped.take_stamped_lemmas(0);
        let (_, nodes) = solve(&board, &stamped, false);
        let lemmas = stamped.take_stamped_lemmas(usize::MAX);
        assert!(lemmas.len() > 10);
        assert!(lemmas.windows(2).all(|w| w[0].at_node <= w[1].at_node));
        assert!(lemmas[0].at_node >= LEMMA_MIN_NODES);
        assert!(lemmas.last().unwrap().at_node <= nodes);
        let plain = Table::new(&board, false, None);
        plain.take_lemmas(0);
        solve(&board, &plain, false);
        let entries: Vec<TableEntry> = lemmas.iter().map(|l| l.entry).collect();
        assert_eq!(plain.take_lemmas(usize::MAX), entries);
    }

    /// A table offers as lemmas the positions whose search took at least
    /// its threshold of nodes: the lower the threshold, the more lemmas,
    /// and no lemma comes before its search's node count reached it.
    #[test]
    fn a_lower_threshold_offers_more_lemmas() {
        let board = Board::new(4, 5);
        let offered = |min_nodes: u64| {
            let table = Table::new(&board, false, None).with_lemma_min_nodes(min_nodes);
            assert_eq!(table.lemma_min_nodes(), min_nodes);
            table.take_stamped_lemmas(0);
            solve(&board, &table, false);
            let lemmas = table.take_stamped_lemmas(usize::MAX);
            assert!(lemmas.iter().all(|l| l.at_node >= min_nodes));
            lemmas.len()
        };
        let counts = [32, LEMMA_MIN_NODES, 4096].map(offered);
        assert!(
            counts[0] > counts[1] && counts[1] > counts[2] && counts[2] > 0,
            "{counts:?}"
        );
    }

    /// A blob that is not a set of sound lemmas of this game is refused
    /// whole, with the reason.
    #[test]
    fn malformed_lemmas_are_refused() {
        let board = Board::new(4, 5);
        let good = TableEntry {
            k1: 0b1,
            k2: 0b10,
            lo: -1,
            hi: 0,
            mv: 255,
            empty: 18,
        };
        let (c1, c2, _) = board.canonical2(good.k1, good.k2);
        let good = TableEntry {
            k1: c1,
            k2: c2,
            ..good
        };
        assert_eq!(decode_all(&board, &encode_all(&[good])).unwrap(), [good]);
        let refused = |bytes: &[u8]| decode_all(&board, bytes).unwrap_err().to_string();
        assert!(refused(&[]).contains("empty"));
        assert!(refused(&[FORMAT]).contains("multiple of 20"));
        let mut wrong_format = encode_all(&[good]);
        wrong_format[0] = 9;
        assert!(refused(&wrong_format).contains("format 9"));
        let mut short = encode_all(&[good]);
        short.pop();
        assert!(refused(&short).contains("multiple of 20"));
        let bad_interval = TableEntry {
            lo: 1,
            hi: 0,
            ..good
        };
        assert!(refused(&encode_all(&[good, bad_interval])).contains("lemma 1"));
        let off_board = TableEntry {
            k1: 1 << 40,
            ..good
        };
        assert!(refused(&encode_all(&[off_board])).contains("off the board"));
        // A lemma of another board (6x6 keys on a 4x5 board).
        let other = Board::new(6, 6);
        let (o1, o2, _) = other.canonical2(1 << 35, 1 << 30);
        let foreign = TableEntry {
            k1: o1,
            k2: o2,
            empty: 34,
            ..good
        };
        assert!(decode_all(&board, &encode_all(&[foreign])).is_err());
    }
}
