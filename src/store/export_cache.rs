//! The export cache (DESIGN 5.8): exports made through the hub's GenerateExport, one row per
//! result and type, holding the export job that makes it and then its payload until it
//! expires.

use super::jobs::{insert_job, JobState, NewJob};
use super::{Store, StoreError};
use sqlx::Row;

/// How long an expired row is kept (without its payload), so that asking for it says
/// "expired" rather than "absent".
const EXPIRED_ROWS_KEPT_MS: i64 = 7 * 24 * 3600 * 1000;

/// A cached export as the store has it.
#[derive(Clone, Debug, PartialEq)]
pub struct CachedExport {
    pub request_id: String,
    pub result_id: String,
    pub response_type: String,
    /// The export job's state and error.
    pub job_state: JobState,
    pub job_error: Option<String>,
    /// Present once made, until the purge after it expired.
    pub payload: Option<String>,
    pub created_at: Option<i64>,
    pub expires_at: Option<i64>,
}

/// What asking to fill the cache did.
#[derive(Clone, Debug, PartialEq)]
pub enum CacheQueue {
    /// The export job is queued.
    Queued,
    /// The same export is being made.
    Busy,
    /// The same export is in the cache and not expired.
    Fresh(CachedExport),
}

pub(super) async fn fill(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    job_id: &str,
    payload: &str,
    now_ms: i64,
    expires_at: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE export_cache SET payload = $1, created_at = $2, expires_at = $3 WHERE job_id = $4",
    )
    .bind(payload)
    .bind(now_ms)
    .bind(expires_at)
    .bind(job_id)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

fn cached_of(r: &sqlx::any::AnyRow) -> CachedExport {
    CachedExport {
        request_id: r.get("request_id"),
        result_id: r.get("result_id"),
        response_type: r.get("response_type"),
        job_state: JobState::parse(r.get("state")),
        job_error: r.get("error"),
        payload: r.get("payload"),
        created_at: r.get("created_at"),
        expires_at: r.get("expires_at"),
    }
}

/// The columns `cached_of` reads (a macro, so queries can `concat!` it into static SQL).
macro_rules! cached_columns {
    () => {
        "c.request_id, c.result_id, c.response_type, c.payload, c.created_at, c.expires_at, j.state, j.error"
    };
}

impl Store {
    /// Queues export `job` to fill the cache with `response_type` of result `result_id` (of
    /// nest `request_id`), unless that export is being made or is fresh in the cache.
    pub async fn queue_cached_export(
        &self,
        job: &NewJob<'_>,
        request_id: &str,
        result_id: &str,
        response_type: &str,
        now_ms: i64,
    ) -> Result<CacheQueue, StoreError> {
        let mut tx = self.begin_write().await?;
        let earlier = sqlx::query(concat!(
            "SELECT ",
            cached_columns!(),
            " FROM export_cache c JOIN jobs j ON j.id = c.job_id WHERE c.result_id = $1 AND c.response_type = $2"
        ))
        .bind(result_id)
        .bind(response_type)
        .fetch_optional(&mut *tx)
        .await?
        .map(|r| cached_of(&r));
        if let Some(e) = earlier {
            let answer = match e.job_state {
                JobState::Queued | JobState::Running | JobState::Held => Some(CacheQueue::Busy),
                JobState::Completed if e.payload.is_some() && e.expires_at > Some(now_ms) => {
                    Some(CacheQueue::Fresh(e))
                }
                _ => None,
            };
            if let Some(answer) = answer {
                tx.rollback().await?;
                return Ok(answer);
            }
            sqlx::query("DELETE FROM export_cache WHERE result_id = $1 AND response_type = $2")
                .bind(result_id)
                .bind(response_type)
                .execute(&mut *tx)
                .await?;
        }
        insert_job(&mut *tx, job, false, now_ms).await?;
        sqlx::query(
            "INSERT INTO export_cache (result_id, response_type, request_id, job_id) VALUES ($1, $2, $3, $4)",
        )
        .bind(result_id)
        .bind(response_type)
        .bind(request_id)
        .bind(job.id)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(CacheQueue::Queued)
    }

    /// The cache's `response_type` export of result `result_id` of nest `request_id`.
    pub async fn cached_export(
        &self,
        request_id: &str,
        result_id: &str,
        response_type: &str,
    ) -> Result<Option<CachedExport>, StoreError> {
        Ok(sqlx::query(concat!(
            "SELECT ",
            cached_columns!(),
            " FROM export_cache c JOIN jobs j ON j.id = c.job_id \
              WHERE c.request_id = $1 AND c.result_id = $2 AND c.response_type = $3"
        ))
        .bind(request_id)
        .bind(result_id)
        .bind(response_type)
        .fetch_optional(&self.pool)
        .await?
        .map(|r| cached_of(&r)))
    }

    /// Drops expired payloads, and rows expired a week ago; the number of payloads dropped.
    pub async fn purge_export_cache(&self, now_ms: i64) -> Result<u64, StoreError> {
        let dropped = sqlx::query(
            "UPDATE export_cache SET payload = NULL WHERE expires_at <= $1 AND payload IS NOT NULL",
        )
        .bind(now_ms)
        .execute(&self.writer)
        .await?
        .rows_affected();
        sqlx::query("DELETE FROM export_cache WHERE expires_at <= $1")
            .bind(now_ms - EXPIRED_ROWS_KEPT_MS)
            .execute(&self.writer)
            .await?;
        Ok(dropped)
    }
}
