//! What a job's table shares outside the job: lemmas with other workers
//! ([`LemmaExchange`], see [`crate::lemmas`]) and snapshots with the
//! worker's later runs ([`CacheSnapshot`], see [`crate::snapshot`]). Both
//! are thin wrappers over the table; they are kept together because they
//! are the table's only way in and out of the process.

use super::HipSolve;
use orchard_core::{CacheSnapshot, FamilyError, LemmaExchange};

/// Values of positions whose search was expensive (see [`crate::lemmas`]).
/// Taking or learning lemmas creates the job's table (only workers do).
impl LemmaExchange for HipSolve {
    fn take(&self, max_bytes: usize) -> Vec<u8> {
        crate::lemmas::take(self.table(), max_bytes)
    }

    fn check(&self, lemmas: &[u8]) -> Result<(), FamilyError> {
        crate::lemmas::decode_all(&self.params.board(), lemmas).map(drop)
    }

    fn learn(&self, lemmas: &[u8]) -> Result<u64, FamilyError> {
        let entries = crate::lemmas::decode_all(&self.params.board(), lemmas)?;
        Ok(crate::lemmas::learn_into(self.table(), &entries))
    }
}

/// The table's expensive entries, kept by the worker across restarts (see
/// [`crate::snapshot`]).
impl CacheSnapshot for HipSolve {
    /// `hip-RxC` or `hip-RxC-double` (rows <= columns): every job of one
    /// game shares its snapshot, whatever its other parameters.
    fn cache_name(&self) -> String {
        let board = self.params.board();
        let suffix = if self.params.double { "-double" } else { "" };
        format!("hip-{}x{}{suffix}", board.rows, board.cols)
    }

    /// Nothing before the job's first search (or restore).
    fn snapshot(&self) -> Option<Vec<u8>> {
        let table = self.table.get()?;
        Some(crate::snapshot::encode_table(
            table,
            crate::snapshot::MAX_ENTRIES,
        ))
    }

    /// Checks the whole snapshot before storing any entry; each entry is
    /// intersected with what the table knows.
    fn restore(&self, snapshot: &[u8]) -> Result<u64, FamilyError> {
        let entries =
            crate::snapshot::decode_snapshot(&self.params.board(), self.params.double, snapshot)?;
        Ok(crate::lemmas::learn_into(self.table(), &entries))
    }
}
