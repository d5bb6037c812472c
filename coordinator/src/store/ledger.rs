//! A job's records read back while the coordinator runs: every unit of
//! the job (for its units file), the stored results of its done units
//! (to write its results file again), and its units as a retry rebuilds
//! the job from them. Each read opens a read-only
//! connection of its own and sees only what the writer has committed.

use rusqlite::params;

use super::{
    crc, to_i64, to_u64, JobId, JobUnits, LedgerRow, MismatchRow, RecordedMismatch, Store,
    StoreError, UnitState,
};

impl Store {
    /// Every unit of a job, in id order, with the nodes each reported. Read
    /// on a connection of its own (read-only: the database is in WAL mode,
    /// so this does not block the writer), and only after the writes it must
    /// see have committed.
    pub fn unit_ledger(&self, job_id: JobId) -> Result<Vec<LedgerRow>, StoreError> {
        let conn = self.reader()?;
        let mut stmt = conn.prepare(
            "SELECT u.id, u.parent_id, u.state, u.lease_count, u.payload, r.nodes, r.worker,
                    u.discarded_nodes
             FROM units u LEFT JOIN results r ON r.unit_id = u.id
             WHERE u.job_id = ?1 ORDER BY u.id",
        )?;
        let mut rows = stmt.query(params![to_i64(job_id)])?;
        let mut ledger = Vec::new();
        while let Some(r) = rows.next()? {
            let id = to_u64(r.get(0)?);
            let state = r
                .get::<_, String>(2)?
                .parse()
                .map_err(|e| StoreError::Corrupt(format!("unit {id}: {e}")))?;
            ledger.push(LedgerRow {
                id,
                parent: r.get::<_, Option<i64>>(1)?.map(to_u64),
                state,
                leases: to_u64(r.get(3)?),
                payload: r.get(4)?,
                nodes: r.get::<_, Option<i64>>(5)?.map(to_u64),
                worker: r.get(6)?,
                discarded: to_u64(r.get(7)?),
            });
        }
        Ok(ledger)
    }

    /// The stored results of a job's done units, in id order, each checked
    /// against its CRC: everything its aggregate was built from, so a
    /// finished job's report can be built again (see
    /// [`crate::results::rebuild_report`]). Read like [`Store::unit_ledger`].
    pub fn done_summaries(&self, job_id: JobId) -> Result<Vec<Vec<u8>>, StoreError> {
        let conn = self.reader()?;
        let mut stmt = conn.prepare(
            "SELECT u.id, r.summary, r.summary_crc
             FROM units u JOIN results r ON r.unit_id = u.id
             WHERE u.job_id = ?1 AND u.state = ?2 ORDER BY u.id",
        )?;
        let mut rows = stmt.query(params![to_i64(job_id), UnitState::Done])?;
        let mut summaries = Vec::new();
        while let Some(r) = rows.next()? {
            let summary: Vec<u8> = r.get(1)?;
            if crc(&summary) != r.get::<_, i64>(2)? {
                return Err(StoreError::Corrupt(format!(
                    "unit {}: summary checksum mismatch",
                    to_u64(r.get(0)?)
                )));
            }
            summaries.push(summary);
        }
        Ok(summaries)
    }

    /// The mismatches recorded for a job, oldest first, each with which
    /// side lost the vote (for its results file). Read like
    /// [`Store::unit_ledger`].
    pub fn mismatches(&self, job_id: JobId) -> Result<Vec<RecordedMismatch>, StoreError> {
        let conn = self.reader()?;
        let mut stmt = conn.prepare(
            "SELECT unit_id, unit_label, worker_a, summary_a, worker_b, summary_b, identity_a, identity_b,
                    loser_a, loser_b
             FROM mismatches WHERE job_id = ?1 ORDER BY id",
        )?;
        let rows = stmt.query_map(params![to_i64(job_id)], |r| {
            Ok(RecordedMismatch {
                row: MismatchRow {
                    unit_id: to_u64(r.get(0)?),
                    unit_label: r.get(1)?,
                    worker_a: r.get(2)?,
                    summary_a: r.get(3)?,
                    worker_b: r.get(4)?,
                    summary_b: r.get(5)?,
                    identity_a: r.get(6)?,
                    identity_b: r.get(7)?,
                },
                loser_a: r.get::<_, i64>(8)? != 0,
                loser_b: r.get::<_, i64>(9)? != 0,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

impl Store {
    /// What a retry of failed job `job_id` rebuilds it from (see
    /// `Scheduler::begin_retry`): its pending and done units, checked as a
    /// running job's are when the store opens, and the positions of its
    /// cancelled ones, with its unit rows checked against its seal (a row
    /// changed since the store opened is refused, not searched). Read like
    /// [`Store::unit_ledger`], after the job's end has committed.
    pub fn job_units(&self, job_id: JobId) -> Result<JobUnits, StoreError> {
        let conn = self.reader()?;
        let job = to_i64(job_id);
        let (units, digests) = super::load::units_where(&conn, "u.job_id = ?1", params![job])?;
        let cancelled: Vec<Vec<u8>> = conn
            .prepare("SELECT position FROM units WHERE job_id = ?1 AND state = ?2")?
            .query_map(params![job, UnitState::Cancelled], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        let (count, digest): (i64, i64) = conn.query_row(
            "SELECT unit_count, unit_digest FROM jobs WHERE id = ?1",
            params![job],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        let found = units.len() + cancelled.len();
        if i64::try_from(found).ok() != Some(count)
            || digests.get(&job_id).copied().unwrap_or(0) != digest as u64
        {
            return Err(StoreError::Corrupt(format!(
                "job {job_id}: its unit rows do not match their seal ({found} rows where \
                 {count} were written, or a row was changed)"
            )));
        }
        Ok(JobUnits { units, cancelled })
    }
}
