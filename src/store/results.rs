//! Results of jobs: every interim result (NestingStatus 0) and the final one (1), each with its
//! own ResultIdentity. They are written by `jobs` inside the transaction that reports them.

use super::{Store, StoreError};
use sqlx::Row;

/// One result as stored: the status message its webhook carried, the report body of
/// POST /v1/nesting/result/ (without Status) and the machine-readable layout.
#[derive(Clone, Copy, Debug)]
pub struct ResultRecord<'a> {
    pub id: &'a str,
    pub status: &'a str,
    pub report: &'a str,
    pub layout: &'a str,
}

/// A stored result, read back.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredResult {
    pub id: String,
    pub job_id: String,
    pub status: String,
    pub report: String,
    pub layout: String,
}

/// Stores result `r` of `job_id`, written by `attempt` (which the caller's transaction has
/// just checked still holds the job).
pub(super) async fn insert(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    job_id: &str,
    attempt: i64,
    r: &ResultRecord<'_>,
    now_ms: i64,
) -> Result<(), StoreError> {
    sqlx::query("INSERT INTO results (id, job_id, status, report, layout, created_at, attempt) VALUES ($1, $2, $3, $4, $5, $6, $7)")
        .bind(r.id)
        .bind(job_id)
        .bind(r.status)
        .bind(r.report)
        .bind(r.layout)
        .bind(now_ms)
        .bind(attempt)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

impl Store {
    /// A result of `job_id`; `result_id` None means the job's latest.
    pub async fn result(
        &self,
        job_id: &str,
        result_id: Option<&str>,
    ) -> Result<Option<StoredResult>, StoreError> {
        let row = match result_id {
            Some(rid) => {
                sqlx::query("SELECT id, job_id, status, report, layout FROM results WHERE job_id = $1 AND id = $2")
                    .bind(job_id)
                    .bind(rid)
                    .fetch_optional(&self.pool)
                    .await?
            }
            None => {
                sqlx::query(
                    "SELECT id, job_id, status, report, layout FROM results WHERE job_id = $1 \
                     ORDER BY created_at DESC, rowid DESC LIMIT 1",
                )
                .bind(job_id)
                .fetch_optional(&self.pool)
                .await?
            }
        };
        Ok(row.map(|r| StoredResult {
            id: r.get("id"),
            job_id: r.get("job_id"),
            status: r.get("status"),
            report: r.get("report"),
            layout: r.get("layout"),
        }))
    }

    /// Every result of job `job_id`, oldest first (a quote's sub-nests, in the order they
    /// were priced).
    pub async fn results_of(&self, job_id: &str) -> Result<Vec<StoredResult>, StoreError> {
        Ok(sqlx::query(
            "SELECT id, job_id, status, report, layout FROM results WHERE job_id = $1 ORDER BY created_at, rowid",
        )
        .bind(job_id)
        .fetch_all(&self.pool)
        .await?
        .into_iter()
        .map(|r| StoredResult {
            id: r.get("id"),
            job_id: r.get("job_id"),
            status: r.get("status"),
            report: r.get("report"),
            layout: r.get("layout"),
        })
        .collect())
    }

    /// The id and status message (NestingStatusMessage JSON) of job `job_id`'s latest
    /// result: what the hub sends, without the layout and report a whole result carries.
    pub async fn latest_result_status(
        &self,
        job_id: &str,
    ) -> Result<Option<(String, String)>, StoreError> {
        Ok(sqlx::query(
            "SELECT id, status FROM results WHERE job_id = $1 ORDER BY created_at DESC, rowid DESC LIMIT 1",
        )
        .bind(job_id)
        .fetch_optional(&self.pool)
        .await?
        .map(|r| (r.get("id"), r.get("status"))))
    }
}
