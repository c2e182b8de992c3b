//! Exports asked for: each ResponseType once per result (DESIGN 5.3: a repeat is a 409), the
//! export itself queued as a job of its own in the same transaction.

use super::jobs::{insert_job, NewJob};
use super::{Store, StoreError};
use sqlx::Row;

impl Store {
    /// Queues `job` (the export) unless `response_type` was already asked for on `result_id`
    /// and that export has not failed (a failed one may be asked for again). False: a repeat.
    pub async fn enqueue_export(
        &self,
        job: &NewJob<'_>,
        result_id: &str,
        response_type: &str,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let earlier = sqlx::query(
            "SELECT j.state AS state FROM exports e JOIN jobs j ON j.id = e.job_id \
             WHERE e.result_id = ? AND e.response_type = ?",
        )
        .bind(result_id)
        .bind(response_type)
        .fetch_optional(&mut *tx)
        .await?;
        if let Some(row) = earlier {
            if row.get::<String, _>("state") != "Failed" {
                tx.rollback().await?;
                return Ok(false);
            }
            sqlx::query("DELETE FROM exports WHERE result_id = ? AND response_type = ?")
                .bind(result_id)
                .bind(response_type)
                .execute(&mut *tx)
                .await?;
        }
        insert_job(&mut *tx, job, now_ms).await?;
        sqlx::query(
            "INSERT INTO exports (result_id, response_type, job_id, created_at) VALUES (?, ?, ?, ?)",
        )
        .bind(result_id)
        .bind(response_type)
        .bind(job.id)
        .bind(now_ms)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(true)
    }
}
