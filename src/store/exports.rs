//! Exports asked for: each ResponseType once per result (DESIGN 5.3: a repeat is a 409), the
//! export itself queued as a job of its own in the same transaction.

use super::jobs::{insert_job, NewJob};
use super::{Store, StoreError};
use sqlx::Row;

impl Store {
    /// Queues `job` (the export) unless `response_type` was already asked for on `result_id`
    /// and that export has not failed. Failed means: the job failed, or it completed but its
    /// delivery gave up (the receiver never took it; asking again, perhaps with another
    /// WebHookUri, is how a caller retries). False: a repeat.
    pub async fn enqueue_export(
        &self,
        job: &NewJob<'_>,
        result_id: &str,
        response_type: &str,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        let mut tx = self.begin_write().await?;
        let earlier = sqlx::query(
            "SELECT j.state AS state, \
             CASE WHEN EXISTS (SELECT 1 FROM outbox o WHERE o.job_id = j.id AND o.gave_up = 0) THEN 1 ELSE 0 END AS pending_or_delivered \
             FROM exports e JOIN jobs j ON j.id = e.job_id \
             WHERE e.result_id = $1 AND e.response_type = $2",
        )
        .bind(result_id)
        .bind(response_type)
        .fetch_optional(&mut *tx)
        .await?;
        if let Some(row) = earlier {
            let state: String = row.get("state");
            let gave_up = state == "Completed" && row.get::<i64, _>("pending_or_delivered") == 0;
            if state != "Failed" && !gave_up {
                tx.rollback().await?;
                return Ok(false);
            }
            sqlx::query("DELETE FROM exports WHERE result_id = $1 AND response_type = $2")
                .bind(result_id)
                .bind(response_type)
                .execute(&mut *tx)
                .await?;
        }
        insert_job(&mut *tx, job, false, now_ms).await?;
        sqlx::query(
            "INSERT INTO exports (result_id, response_type, job_id, created_at) VALUES ($1, $2, $3, $4)",
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
