//! Reading the state at startup: every job, the units of the jobs still
//! running (their payloads and summaries checked against their CRCs, and
//! their rows against each other), and the figures the scheduler rebuilds
//! its counters from. A failed job's units are read the same way for a
//! retry ([`units_where`]).
//!
//! The CRCs cover blobs only. The rows' other columns are checked for what
//! the coordinator itself never writes, each a sign of a damaged or edited
//! database that would otherwise change a running job's count without a
//! word: a unit of no job, a unit in a state orchard has no name for, a
//! pending unit with a result, a unit or a result of a running job whose
//! parent unit or unit belongs to another job. (Found by
//! `tests/e2e/hostile_rows.rs`.)
//!
//! What a row-by-row check cannot see — a unit row deleted, added or moved
//! between jobs, a column no CRC covers, a job's answer edited — the seals
//! of schema version 5 do (see [`super::digest`]): every job's row must
//! match its `row_crc`, its unit rows must be as many as its `unit_count`
//! and sum to its `unit_digest` (the rows of the jobs that are over are
//! read for this alone: a job's figures are read from them), and every
//! result must belong to a unit of its own job. Since version 7 the rows
//! beside the units (replicas, mismatches, exclusions, lemmas) are counted
//! and summed the same way, every one of them, whatever its job's state.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension};

use super::digest::{
    exclusion_hash, job_hash, sums_beside_units, unit_hash, Rows, EXCLUSION_COLUMNS, JOB_COLUMNS,
    UNIT_COLUMNS,
};
use super::{
    crc, to_u64, ExclusionRow, JobRow, Loaded, ReplicaRow, StoreError, UnitRow, UnitState,
    WorkerIdentity,
};

/// Everything the coordinator rebuilds its state from, every row checked
/// first (see the module's doc). A damaged database is refused in one line
/// naming the first fault in this order: a job's row, a unit of no job, a
/// unit row of a running job, the seals, a replica, an exclusion, the rows
/// beside the units.
pub(crate) fn load(conn: &Connection) -> Result<Loaded, StoreError> {
    let jobs = job_rows(conn)?;
    let seals = job_seals(conn)?;
    check_no_orphan_units(conn)?;
    // The units of the running jobs, and the sum of their rows' hashes.
    let (units, mut digests) = units_where(conn, "j.state = 'running'", [])?;
    add_digests_of_jobs_over(conn, &mut digests)?;
    check_seals(conn, &jobs, &seals, &digests)?;
    let cancelled = cancelled_of_running_jobs(conn)?;
    let max_unit_id: Option<i64> = conn
        .query_row("SELECT max(id) FROM units", [], |r| r.get(0))
        .optional()?
        .flatten();
    let lemma_blobs = lemma_blobs_of_running_jobs(conn)?;
    let replicas = replicas_of_running_jobs(conn)?;
    let exclusions = load_exclusions(conn)?;
    check_beside_units(conn)?;
    Ok(Loaded {
        exclusions,
        replicas,
        jobs,
        units,
        cancelled,
        max_unit_id: max_unit_id.map(to_u64).unwrap_or(0),
        lemma_blobs,
    })
}

/// Every job's row with the figures of its units and results, counted by
/// SQL: a job that is over keeps them in its status after a restart
/// without its units being loaded.
fn job_rows(conn: &Connection) -> Result<Vec<JobRow>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT id, family, params_json, state, bound, created_ms, finished_ms, result_json, results_file, error,
                (SELECT coalesce(sum(u.discarded_nodes), 0) FROM units u WHERE u.job_id = jobs.id),
                (SELECT count(*) FROM units u WHERE u.job_id = jobs.id),
                (SELECT count(*) FROM units u WHERE u.job_id = jobs.id AND u.state IN (?1, ?2)),
                (SELECT coalesce(sum(r.nodes), 0) FROM results r WHERE r.job_id = jobs.id),
                replicas,
                (SELECT count(*) FROM units u WHERE u.job_id = jobs.id AND u.state = ?1),
                (SELECT count(*) FROM mismatches m WHERE m.job_id = jobs.id)
         FROM jobs ORDER BY id",
    )?;
    let rows = stmt.query_map([UnitState::Done, UnitState::Cancelled], |r| {
        Ok(JobRow {
            id: to_u64(r.get(0)?),
            family: r.get(1)?,
            params_json: r.get(2)?,
            state: r.get(3)?,
            bound: to_u64(r.get(4)?),
            created_ms: to_u64(r.get(5)?),
            finished_ms: r.get::<_, Option<i64>>(6)?.map(to_u64),
            result_json: r.get(7)?,
            results_file: r.get(8)?,
            error: r.get(9)?,
            discarded_nodes: to_u64(r.get(10)?),
            units_total: to_u64(r.get(11)?),
            units_resolved: to_u64(r.get(12)?),
            nodes: to_u64(r.get(13)?),
            replicas: u32::try_from(r.get::<_, i64>(14)?).unwrap_or(1).max(1),
            units_done: to_u64(r.get(15)?),
            mismatches: to_u64(r.get(16)?),
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Each job's seals of its unit rows, `(unit_count, unit_digest)`, for
/// [`check_seals`]; every job row is checked against its `row_crc` on the
/// way, as an edited state or answer would otherwise be believed.
fn job_seals(conn: &Connection) -> Result<HashMap<u64, (i64, i64)>, StoreError> {
    let mut seals = HashMap::new();
    let mut stmt = conn.prepare(&format!(
        "SELECT row_crc, unit_count, unit_digest, {JOB_COLUMNS} FROM jobs ORDER BY id"
    ))?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let id = to_u64(r.get(3)?);
        if r.get::<_, i64>(0)? != job_hash(r, 3)? {
            return Err(StoreError::Corrupt(format!(
                "job {id}: its row does not match its checksum (its state, answer, results \
                 file, error, bound or parameters were changed)"
            )));
        }
        seals.insert(id, (r.get(1)?, r.get(2)?));
    }
    Ok(seals)
}

/// A unit of a job that does not exist: no job's seals would count it.
fn check_no_orphan_units(conn: &Connection) -> Result<(), StoreError> {
    let orphan: Option<(i64, i64)> = conn
        .query_row(
            "SELECT id, job_id FROM units WHERE job_id NOT IN (SELECT id FROM jobs) LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    match orphan {
        Some((unit, job)) => Err(StoreError::Corrupt(format!(
            "unit {unit} belongs to job {job}, which does not exist"
        ))),
        None => Ok(()),
    }
}

/// Adds to `digests` the hashes of the unit rows of the jobs that are over:
/// their units are not loaded, but their figures (units, nodes) are read
/// from those rows, so the rows are checked against their seals too.
fn add_digests_of_jobs_over(
    conn: &Connection,
    digests: &mut HashMap<u64, u64>,
) -> Result<(), StoreError> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {UNIT_COLUMNS} FROM units u JOIN jobs j ON j.id = u.job_id
         LEFT JOIN results r ON r.unit_id = u.id
         WHERE j.state != 'running'"
    ))?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let digest = digests.entry(to_u64(r.get(1)?)).or_default();
        *digest = digest.wrapping_add(unit_hash(r, 0)?);
    }
    Ok(())
}

/// (job, position) of the running jobs' cancelled units: never searched,
/// but counted among their jobs' units and drawn in their trees.
fn cancelled_of_running_jobs(conn: &Connection) -> Result<Vec<(u64, Vec<u8>)>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT u.job_id, u.position FROM units u JOIN jobs j ON j.id = u.job_id
         WHERE j.state = 'running' AND u.state = ?1",
    )?;
    let cancelled = stmt
        .query_map([UnitState::Cancelled], |r| {
            Ok((to_u64(r.get(0)?), r.get(1)?))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(cancelled)
}

/// The length of each blob of lemmas each running job holds, oldest first,
/// so that a restart goes on evicting them in the order they came.
fn lemma_blobs_of_running_jobs(conn: &Connection) -> Result<Vec<(u64, Vec<u64>)>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT l.job_id, length(l.blob) FROM lemmas l JOIN jobs j ON j.id = l.job_id
         WHERE j.state = 'running' ORDER BY l.job_id, l.seq",
    )?;
    let mut blobs: Vec<(u64, Vec<u64>)> = Vec::new();
    let rows = stmt.query_map([], |r| Ok((to_u64(r.get(0)?), to_u64(r.get(1)?))))?;
    for row in rows {
        let (job_id, len) = row?;
        match blobs.last_mut() {
            Some((id, lens)) if *id == job_id => lens.push(len),
            _ => blobs.push((job_id, vec![len])),
        }
    }
    Ok(blobs)
}

/// The replicas reported for the running jobs' undecided units, oldest
/// first, each summary checked against its CRC, so that a unit's vote
/// carries on across a restart instead of starting again.
fn replicas_of_running_jobs(conn: &Connection) -> Result<Vec<ReplicaRow>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT p.unit_id, p.worker, p.host, p.nodes, p.bound, p.summary, p.summary_crc, p.rest,
                p.identity, p.identity_label
         FROM replicas p JOIN jobs j ON j.id = p.job_id
         WHERE j.state = 'running' ORDER BY p.id",
    )?;
    let mut rows = stmt.query([])?;
    let mut replicas = Vec::new();
    while let Some(r) = rows.next()? {
        let unit_id = to_u64(r.get(0)?);
        let summary: Vec<u8> = r.get(5)?;
        if crc(&summary) != r.get::<_, i64>(6)? {
            return Err(StoreError::Corrupt(format!(
                "unit {unit_id}: replica summary checksum mismatch"
            )));
        }
        let rest: Vec<u8> = r.get(7)?;
        let rest = orchard_core::codec::decode(&rest).map_err(|e| {
            StoreError::Corrupt(format!("unit {unit_id}: replica rest unreadable: {e}"))
        })?;
        replicas.push(ReplicaRow {
            rest,
            unit_id,
            worker: r.get(1)?,
            host: r.get(2)?,
            identity: WorkerIdentity {
                key: r.get(8)?,
                label: r.get(9)?,
            },
            nodes: to_u64(r.get(3)?),
            bound: to_u64(r.get(4)?),
            summary,
        });
    }
    Ok(replicas)
}

/// The pending and done units of the jobs that `condition` (on `u`, the
/// unit, and `j`, its job) selects, each row checked as [`load`] checks
/// those of the running jobs, and the sum of the hashes of every unit row
/// of each job it selects, the cancelled ones included (for the seals).
pub(super) fn units_where(
    conn: &Connection,
    condition: &str,
    params: impl rusqlite::Params,
) -> Result<(Vec<UnitRow>, HashMap<u64, u64>), StoreError> {
    let mut units = Vec::new();
    let mut digests: HashMap<u64, u64> = HashMap::new();
    let mut stmt = conn.prepare(&format!(
        "SELECT u.id, u.job_id, u.state, u.payload, u.payload_crc, r.summary, r.summary_crc, u.position,
                p.job_id, r.job_id, {UNIT_COLUMNS}
         FROM units u JOIN jobs j ON j.id = u.job_id
         LEFT JOIN results r ON r.unit_id = u.id
         LEFT JOIN units p ON p.id = u.parent_id
         WHERE {condition}
         ORDER BY u.id"
    ))?;
    let mut rows = stmt.query(params)?;
    while let Some(r) = rows.next()? {
        let id = to_u64(r.get(0)?);
        let job_id: i64 = r.get(1)?;
        let digest = digests.entry(to_u64(job_id)).or_default();
        *digest = digest.wrapping_add(unit_hash(r, 10)?);
        let corrupt = |what: String| Err(StoreError::Corrupt(format!("unit {id}: {what}")));
        let state = match r.get::<_, String>(2)?.parse() {
            // Counted by the query below.
            Ok(UnitState::Cancelled) => continue,
            Ok(state) => state,
            Err(unknown) => return corrupt(unknown.to_string()),
        };
        let parent_job: Option<i64> = r.get(8)?;
        if let Some(other) = parent_job.filter(|&p| p != job_id) {
            return corrupt(format!(
                "in job {job_id}, but its parent unit is in job {other}"
            ));
        }
        let result_job: Option<i64> = r.get(9)?;
        if let Some(other) = result_job.filter(|&p| p != job_id) {
            return corrupt(format!("in job {job_id}, but its result is of job {other}"));
        }
        if state == UnitState::Pending && result_job.is_some() {
            return corrupt("pending, but it has a result".into());
        }
        let payload: Vec<u8> = r.get(3)?;
        if crc(&payload) != r.get::<_, i64>(4)? {
            return Err(StoreError::Corrupt(format!(
                "unit {id}: payload checksum mismatch"
            )));
        }
        let summary: Option<Vec<u8>> = r.get(5)?;
        if state == UnitState::Done {
            let Some(s) = &summary else {
                return Err(StoreError::Corrupt(format!(
                    "unit {id}: done without a result"
                )));
            };
            if crc(s) != r.get::<_, i64>(6)? {
                return Err(StoreError::Corrupt(format!(
                    "unit {id}: summary checksum mismatch"
                )));
            }
        }
        units.push(UnitRow {
            id,
            job_id: to_u64(job_id),
            position: r.get(7)?,
            state,
            payload,
            summary,
        });
    }
    Ok((units, digests))
}

/// Every job's exclusions (schema version 6), each row checked against its
/// `row_crc`; and every mismatch that says an identity lost must have that
/// identity's exclusion (a deleted exclusion row would otherwise let a
/// liar back in without a word).
fn load_exclusions(conn: &Connection) -> Result<Vec<ExclusionRow>, StoreError> {
    let mut stmt = conn.prepare(&format!(
        "SELECT row_crc, {EXCLUSION_COLUMNS} FROM exclusions ORDER BY id"
    ))?;
    let mut rows = stmt.query([])?;
    let mut exclusions = Vec::new();
    while let Some(r) = rows.next()? {
        let job_id = to_u64(r.get(1)?);
        if r.get::<_, i64>(0)? != exclusion_hash(r, 1)? {
            return Err(StoreError::Corrupt(format!(
                "job {job_id}: an exclusion row does not match its checksum (its job, worker \
                 identity, unit or mismatch was changed)"
            )));
        }
        exclusions.push(ExclusionRow {
            job_id,
            identity: WorkerIdentity {
                key: r.get(2)?,
                label: r.get(3)?,
            },
        });
    }
    let missing: Option<(rusqlite::types::Value, String)> = conn
        .query_row(
            "SELECT m.job_id, CASE WHEN m.loser_a != 0 AND NOT EXISTS
                 (SELECT 1 FROM exclusions e WHERE e.job_id = m.job_id AND e.identity = m.identity_a)
                 THEN m.identity_a ELSE m.identity_b END
             FROM mismatches m
             WHERE (m.loser_a != 0 AND NOT EXISTS
                     (SELECT 1 FROM exclusions e WHERE e.job_id = m.job_id AND e.identity = m.identity_a))
                OR (m.loser_b != 0 AND NOT EXISTS
                     (SELECT 1 FROM exclusions e WHERE e.job_id = m.job_id AND e.identity = m.identity_b))
             LIMIT 1",
            [],
            |r| Ok((r.get(0)?, shown(r.get(1)?))),
        )
        .optional()?;
    if let Some((job, identity)) = missing {
        return Err(StoreError::Corrupt(format!(
            "job {}: a mismatch says {identity} lost the vote, but its exclusion row is missing",
            shown(job)
        )));
    }
    Ok(exclusions)
}

/// Every job's unit rows against its seals (see [`super::digest`]): their
/// number and the sum of their hashes (`digests`), and every result
/// against its unit. One line naming the job
/// and what does not match.
fn check_seals(
    conn: &Connection,
    jobs: &[JobRow],
    seals: &HashMap<u64, (i64, i64)>,
    digests: &HashMap<u64, u64>,
) -> Result<(), StoreError> {
    for job in jobs {
        let Some(&(count, digest)) = seals.get(&job.id) else {
            continue;
        };
        let found = i64::try_from(job.units_total).unwrap_or(i64::MAX);
        if found != count {
            let what = if found < count {
                format!(
                    "{} of its {count} unit rows missing (deleted, or moved to another job)",
                    count - found
                )
            } else {
                format!("{found} unit rows where {count} were written (added, or moved from another job)")
            };
            return Err(StoreError::Corrupt(format!("job {}: {what}", job.id)));
        }
        if digests.get(&job.id).copied().unwrap_or(0) != digest as u64 {
            return Err(StoreError::Corrupt(format!(
                "job {}: its unit rows do not match their digest (a unit row or its result \
                 was changed, replaced or moved)",
                job.id
            )));
        }
    }
    let stray: Option<(i64, i64)> = conn
        .query_row(
            "SELECT r.unit_id, r.job_id FROM results r LEFT JOIN units u ON u.id = r.unit_id
             WHERE u.id IS NULL OR u.job_id IS NOT r.job_id LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    if let Some((unit, job)) = stray {
        return Err(StoreError::Corrupt(format!(
            "the result of unit {unit} in job {job} belongs to no unit of that job"
        )));
    }
    Ok(())
}

/// Every job's rows beside its units (schema version 7: replicas,
/// mismatches, exclusions, lemmas) against its seals: their number and the
/// sum of their hashes, computed here from every row. One line naming the
/// job and the kind of row; a row of a job that does not exist is named
/// too.
fn check_beside_units(conn: &Connection) -> Result<(), StoreError> {
    for rows in Rows::BESIDE_UNITS {
        let mut found = sums_beside_units(conn, rows, None)?;
        let (count_column, digest_column) = rows.seal_columns();
        let mut stmt = conn.prepare(&format!(
            "SELECT id, {count_column}, {digest_column} FROM jobs ORDER BY id"
        ))?;
        let mut jobs = stmt.query([])?;
        let noun = rows.noun();
        while let Some(r) = jobs.next()? {
            let (job, count, digest): (i64, i64, i64) = (r.get(0)?, r.get(1)?, r.get(2)?);
            let (n, sum) = found.remove(&job).unwrap_or_default();
            if n != count {
                let what = if n < count {
                    format!(
                        "{} of its {count} {noun} rows missing (deleted, or moved to another job)",
                        count - n
                    )
                } else {
                    format!(
                        "{n} {noun} rows where {count} were written (added, or moved from another job)"
                    )
                };
                return Err(StoreError::Corrupt(format!("job {job}: {what}")));
            }
            if sum != digest as u64 {
                return Err(StoreError::Corrupt(format!(
                    "job {job}: its {noun} rows do not match their digest (a {noun} row was \
                     changed, replaced or moved)"
                )));
            }
        }
        if let Some(job) = found.keys().min() {
            return Err(StoreError::Corrupt(format!(
                "a {noun} row belongs to job {job}, which does not exist"
            )));
        }
    }
    Ok(())
}

/// A value read from a damaged row, for a one-line error: text with its
/// control characters escaped, anything else (a blob where text belongs)
/// as its type and bytes.
fn shown(v: rusqlite::types::Value) -> String {
    match v {
        rusqlite::types::Value::Text(t) => t.escape_debug().to_string(),
        rusqlite::types::Value::Integer(i) => i.to_string(),
        other => format!("{other:?}"),
    }
}
