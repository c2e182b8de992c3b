//! The transactional outbox: one row per webhook delivery, written in the transaction of the
//! state change it reports, then sent (and retried) by `webhook::deliver`.

use super::{Store, StoreError};
use sqlx::Row;

/// A webhook delivery written with a state change.
pub struct Delivery<'a> {
    pub uri: &'a str,
    pub body: &'a str,
    /// The body's media type (`JSON`, or `XML` for the legacy endpoint's results).
    pub content_type: &'a str,
}

/// The media type of every delivery but the legacy endpoint's.
pub const JSON: &str = "application/json";
/// The legacy XML endpoint's results (DESIGN 5.7).
pub const XML: &str = "application/xml";

#[derive(Clone, Debug, PartialEq)]
pub struct DueDelivery {
    pub id: i64,
    pub job_id: String,
    pub uri: String,
    pub body: String,
    pub content_type: String,
    pub attempts: i64,
}

/// A delivery as /v1/nesting/failures reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct DeliveryRecord {
    pub uri: String,
    pub attempts: i64,
    pub last_attempt_at: Option<i64>,
    pub last_status: Option<i64>,
    pub last_error: Option<String>,
    pub gave_up: bool,
}

/// A failed job or a job with a delivery that gave up.
#[derive(Clone, Debug, PartialEq)]
pub struct FailureRecord {
    pub job_id: String,
    pub state: String,
    pub error: Option<String>,
    pub failed_at: Option<i64>,
    pub deliveries: Vec<DeliveryRecord>,
}

/// Writes deliveries of a job's newest result; undelivered interim deliveries of the job are
/// superseded by it and dropped (a receiver wants the latest layout, not a backlog).
pub(super) async fn insert(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    job_id: &str,
    deliveries: &[Delivery<'_>],
    interim: bool,
    now_ms: i64,
) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM outbox WHERE job_id = $1 AND interim = 1 AND delivered_at IS NULL")
        .bind(job_id)
        .execute(&mut **tx)
        .await?;
    for d in deliveries {
        sqlx::query("INSERT INTO outbox (job_id, uri, body, content_type, next_attempt_at, created_at, interim) VALUES ($1, $2, $3, $4, $5, $6, $7)")
            .bind(job_id)
            .bind(d.uri)
            .bind(d.body)
            .bind(d.content_type)
            .bind(now_ms)
            .bind(now_ms)
            .bind(super::flag(interim))
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

impl Store {
    /// Deliveries due now: of each job, its oldest undelivered one if it is due (a job's
    /// deliveries go out in order, one at a time: a later one waits while an earlier one
    /// waits to be retried, so a quote's Complete never overtakes one of its InterimResults;
    /// a nest's newer result replaces its undelivered interim ones instead), oldest first.
    pub async fn due_deliveries(
        &self,
        now_ms: i64,
        limit: i64,
    ) -> Result<Vec<DueDelivery>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, job_id, uri, body, content_type, attempts FROM outbox o WHERE delivered_at IS NULL AND gave_up = 0 AND next_attempt_at <= $1 \
             AND id = (SELECT MIN(id) FROM outbox p WHERE p.job_id = o.job_id AND p.delivered_at IS NULL AND p.gave_up = 0) \
             ORDER BY next_attempt_at, id LIMIT $2",
        )
        .bind(now_ms)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| DueDelivery {
                id: r.get("id"),
                job_id: r.get("job_id"),
                uri: r.get("uri"),
                body: r.get("body"),
                content_type: r.get("content_type"),
                attempts: r.get("attempts"),
            })
            .collect())
    }

    /// When the next delivery that may go out falls due (the oldest undelivered one of a
    /// job), if any.
    pub async fn next_delivery_at(&self) -> Result<Option<i64>, StoreError> {
        Ok(sqlx::query(
            "SELECT MIN(next_attempt_at) AS t FROM outbox o WHERE delivered_at IS NULL AND gave_up = 0 \
             AND id = (SELECT MIN(id) FROM outbox p WHERE p.job_id = o.job_id AND p.delivered_at IS NULL AND p.gave_up = 0)",
        )
        .fetch_one(&self.pool)
        .await?
        .get("t"))
    }

    pub async fn mark_delivered(
        &self,
        id: i64,
        status: i64,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        sqlx::query("UPDATE outbox SET delivered_at = $1, last_attempt_at = $2, last_status = $3, attempts = attempts + 1 WHERE id = $4")
            .bind(now_ms)
            .bind(now_ms)
            .bind(status)
            .bind(id)
            .execute(&self.writer)
            .await?;
        Ok(())
    }

    /// Records a failed attempt; `next_attempt_at` None means the delivery gave up.
    pub async fn mark_attempt_failed(
        &self,
        id: i64,
        status: Option<i64>,
        error: &str,
        next_attempt_at: Option<i64>,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE outbox SET attempts = attempts + 1, last_status = $1, last_error = $2, last_attempt_at = $3, \
             next_attempt_at = COALESCE($4, next_attempt_at), gave_up = $5 WHERE id = $6",
        )
        .bind(status)
        .bind(error)
        .bind(super::now_ms())
        .bind(next_attempt_at)
        .bind(super::flag(next_attempt_at.is_none()))
        .bind(id)
        .execute(&self.writer)
        .await?;
        Ok(())
    }

    /// Failed jobs and jobs with a delivery that gave up, of `account_id`, newest first;
    /// `job_id` narrows to one job.
    pub async fn failures(
        &self,
        account_id: i64,
        job_id: Option<&str>,
        limit: i64,
    ) -> Result<Vec<FailureRecord>, StoreError> {
        let jobs = sqlx::query(
            "SELECT j.id, j.state, j.error, j.completed_at FROM jobs j JOIN api_keys k ON k.id = j.api_key_id \
             WHERE k.account_id = $1 AND ($2 IS NULL OR j.id = $3) \
             AND (j.state = 'Failed' OR EXISTS (SELECT 1 FROM outbox o WHERE o.job_id = j.id AND o.gave_up = 1)) \
             ORDER BY j.completed_at DESC, j.id LIMIT $4",
        )
        .bind(account_id)
        .bind(job_id)
        .bind(job_id)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        let mut out = Vec::with_capacity(jobs.len());
        for j in jobs {
            let id: String = j.get("id");
            let deliveries = sqlx::query(
                "SELECT uri, attempts, last_attempt_at, last_status, last_error, gave_up FROM outbox \
                 WHERE job_id = $1 AND delivered_at IS NULL ORDER BY id",
            )
            .bind(&id)
            .fetch_all(&self.pool)
            .await?
            .into_iter()
            .map(|d| DeliveryRecord {
                uri: d.get("uri"),
                attempts: d.get("attempts"),
                last_attempt_at: d.get("last_attempt_at"),
                last_status: d.get("last_status"),
                last_error: d.get("last_error"),
                gave_up: d.get::<i64, _>("gave_up") != 0,
            })
            .collect();
            out.push(FailureRecord {
                job_id: id,
                state: j.get("state"),
                error: j.get("error"),
                failed_at: j.get("completed_at"),
                deliveries,
            });
        }
        Ok(out)
    }
}
