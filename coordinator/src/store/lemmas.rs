//! The lemmas workers shared, read back for other workers a page at a
//! time: after a cursor, without the asking worker's own, skipping a blob
//! whose CRC does not match.

use rusqlite::params;

use super::{crc, to_i64, to_u64, JobId, Store, StoreError};

/// Lemmas read for one worker (see [`Store::lemmas_after`]).
#[derive(Debug, Default)]
pub struct LemmaPage {
    pub blobs: Vec<Vec<u8>>,
    /// The `seq` of the last row read: where the next page starts.
    pub cursor: u64,
    /// Rows were left for the next page.
    pub more: bool,
}

impl Store {
    /// The lemmas of `job_id` stored after `after` by other sources than
    /// `source`, oldest first, up to about `max_bytes` (at least one blob).
    /// A blob whose CRC does not match is skipped with a warning. Read on a
    /// connection of its own, like [`Store::unit_ledger`]: rows the writer
    /// has not committed yet come in a later page (the writer commits them
    /// in `seq` order, so a cursor never passes over one).
    pub fn lemmas_after(
        &self,
        job_id: JobId,
        after: u64,
        source: u64,
        max_bytes: usize,
    ) -> Result<LemmaPage, StoreError> {
        let conn = self.reader()?;
        let mut stmt = conn.prepare(
            "SELECT seq, source, blob, blob_crc FROM lemmas
             WHERE job_id = ?1 AND seq > ?2 ORDER BY seq",
        )?;
        let mut rows = stmt.query(params![to_i64(job_id), to_i64(after)])?;
        let mut page = LemmaPage {
            cursor: after,
            ..LemmaPage::default()
        };
        let mut bytes = 0usize;
        while let Some(r) = rows.next()? {
            let seq = to_u64(r.get(0)?);
            if r.get::<_, i64>(1)? == source as i64 {
                page.cursor = seq;
                continue;
            }
            let blob: Vec<u8> = r.get(2)?;
            if !page.blobs.is_empty() && bytes + blob.len() > max_bytes {
                page.more = true;
                break;
            }
            page.cursor = seq;
            if crc(&blob) != r.get::<_, i64>(3)? {
                tracing::warn!(job = job_id, seq, "lemma blob checksum mismatch; skipped");
                continue;
            }
            bytes += blob.len();
            page.blobs.push(blob);
        }
        Ok(page)
    }
}
