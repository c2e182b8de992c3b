//! The store (sqlx): an SQLite file by default, WAL, a long busy timeout, `BEGIN IMMEDIATE` for
//! read-then-write transactions. Migrations are embedded SQL, applied at open.
//!
//! The job queue lives here: claims bump a fencing attempt number and take a lease; every later
//! update by a worker is conditioned on the attempt it claimed, so a worker whose lease was taken
//! over cannot write a result. Completion and its webhook outbox rows commit together.

use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};
use sqlx::{Row, SqlStr};
use std::borrow::Cow;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
    #[error("database migration: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

/// A job's lifecycle state (the spec's four, plus Held for delayed start).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobState {
    Held,
    Queued,
    Running,
    Completed,
    Failed,
}

impl JobState {
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Held => "Held",
            JobState::Queued => "Queued",
            JobState::Running => "Running",
            JobState::Completed => "Completed",
            JobState::Failed => "Failed",
        }
    }
    fn parse(s: &str) -> JobState {
        match s {
            "Held" => JobState::Held,
            "Queued" => JobState::Queued,
            "Running" => JobState::Running,
            "Completed" => JobState::Completed,
            _ => JobState::Failed,
        }
    }
}

/// A job to enqueue.
pub struct NewJob<'a> {
    pub id: &'a str,
    pub api_key_id: &'a str,
    pub kind: &'a str,
    pub request: &'a str,
    pub webhook_uri: Option<&'a str>,
    /// Held until a delayed start instead of Queued.
    pub held: bool,
}

/// A job a worker holds: the attempt number is its fencing token.
#[derive(Clone, Debug, PartialEq)]
pub struct Claimed {
    pub id: String,
    pub attempt: i64,
    pub kind: String,
    pub request: String,
    pub webhook_uri: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct JobStatus {
    pub id: String,
    pub state: JobState,
    pub attempt: i64,
    pub result_id: Option<String>,
    pub error: Option<String>,
    pub completed_at: Option<i64>,
}

/// A webhook delivery written with a state change.
pub struct Delivery<'a> {
    pub uri: &'a str,
    pub body: &'a str,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DueDelivery {
    pub id: i64,
    pub job_id: String,
    pub uri: String,
    pub body: String,
    pub attempts: i64,
}

#[derive(Clone)]
pub struct Store {
    pool: SqlitePool,
}

fn migrator() -> Migrator {
    Migrator::with_migrations(vec![Migration::new(
        1,
        Cow::Borrowed("jobs and outbox"),
        MigrationType::Simple,
        SqlStr::from_static(include_str!("../../migrations/sqlite/0001_jobs.sql")),
        false,
    )])
}

impl Store {
    /// Opens (creating if needed) the SQLite file at `path` and applies migrations.
    pub async fn open_sqlite(path: &std::path::Path) -> Result<Store, StoreError> {
        let opts = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .busy_timeout(Duration::from_secs(30))
            .foreign_keys(true);
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(opts)
            .await?;
        migrator().run(&pool).await?;
        Ok(Store { pool })
    }

    pub async fn enqueue(&self, job: &NewJob<'_>, now_ms: i64) -> Result<(), StoreError> {
        sqlx::query("INSERT INTO jobs (id, api_key_id, kind, state, request, webhook_uri, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)")
            .bind(job.id)
            .bind(job.api_key_id)
            .bind(job.kind)
            .bind(if job.held { "Held" } else { "Queued" })
            .bind(job.request)
            .bind(job.webhook_uri)
            .bind(now_ms)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Releases a held job to the queue. False when the job is not held.
    pub async fn release_held(&self, id: &str) -> Result<bool, StoreError> {
        let r = sqlx::query("UPDATE jobs SET state = 'Queued' WHERE id = ? AND state = 'Held'")
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(r.rows_affected() == 1)
    }

    /// Claims the oldest queued job in one statement: Running, attempt + 1, leased to `owner`.
    pub async fn claim(
        &self,
        owner: &str,
        lease_ms: i64,
        now_ms: i64,
    ) -> Result<Option<Claimed>, StoreError> {
        let row = sqlx::query(
            "UPDATE jobs SET state = 'Running', attempt = attempt + 1, lease_owner = ?, lease_expires_at = ?, \
             started_at = COALESCE(started_at, ?) \
             WHERE id = (SELECT id FROM jobs WHERE state = 'Queued' ORDER BY created_at, id LIMIT 1) AND state = 'Queued' \
             RETURNING id, attempt, kind, request, webhook_uri",
        )
        .bind(owner)
        .bind(now_ms + lease_ms)
        .bind(now_ms)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|r| Claimed {
            id: r.get("id"),
            attempt: r.get("attempt"),
            kind: r.get("kind"),
            request: r.get("request"),
            webhook_uri: r.get("webhook_uri"),
        }))
    }

    /// Extends the lease of a running job. False when this attempt no longer holds it.
    pub async fn heartbeat(
        &self,
        id: &str,
        attempt: i64,
        lease_ms: i64,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        let r = sqlx::query("UPDATE jobs SET lease_expires_at = ? WHERE id = ? AND attempt = ? AND state = 'Running'")
            .bind(now_ms + lease_ms)
            .bind(id)
            .bind(attempt)
            .execute(&self.pool)
            .await?;
        Ok(r.rows_affected() == 1)
    }

    /// Ends a job (Completed with a result, or Failed with an error) and writes its deliveries,
    /// in one transaction, only if `attempt` still holds the job. False when it does not.
    pub async fn finish(
        &self,
        id: &str,
        attempt: i64,
        outcome: Outcome<'_>,
        deliveries: &[Delivery<'_>],
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let (state, result_id, result, error) = match outcome {
            Outcome::Completed { result_id, result } => {
                ("Completed", Some(result_id), Some(result), None)
            }
            Outcome::Failed { error } => ("Failed", None, None, Some(error)),
        };
        let r = sqlx::query(
            "UPDATE jobs SET state = ?, result_id = ?, result = ?, error = ?, completed_at = ?, lease_owner = NULL, \
             lease_expires_at = NULL WHERE id = ? AND attempt = ? AND state = 'Running'",
        )
        .bind(state)
        .bind(result_id)
        .bind(result)
        .bind(error)
        .bind(now_ms)
        .bind(id)
        .bind(attempt)
        .execute(&mut *tx)
        .await?;
        if r.rows_affected() != 1 {
            tx.rollback().await?;
            return Ok(false);
        }
        for d in deliveries {
            sqlx::query("INSERT INTO outbox (job_id, uri, body, next_attempt_at, created_at) VALUES (?, ?, ?, ?, ?)")
                .bind(id)
                .bind(d.uri)
                .bind(d.body)
                .bind(now_ms)
                .bind(now_ms)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(true)
    }

    /// Returns jobs whose lease expired to the queue, or fails them after `max_attempts`.
    /// Returns (requeued, failed).
    pub async fn rescue_expired(
        &self,
        max_attempts: i64,
        now_ms: i64,
    ) -> Result<(u64, u64), StoreError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let failed = sqlx::query(
            "UPDATE jobs SET state = 'Failed', error = 'the job was interrupted ' || attempt || ' times and was not retried again', \
             completed_at = ?, lease_owner = NULL, lease_expires_at = NULL \
             WHERE state = 'Running' AND lease_expires_at < ? AND attempt >= ?",
        )
        .bind(now_ms)
        .bind(now_ms)
        .bind(max_attempts)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        let requeued = sqlx::query(
            "UPDATE jobs SET state = 'Queued', lease_owner = NULL, lease_expires_at = NULL WHERE state = 'Running' AND lease_expires_at < ?",
        )
        .bind(now_ms)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        tx.commit().await?;
        Ok((requeued, failed))
    }

    /// At the start of a single-process server every Running job is an orphan: back to the queue.
    pub async fn recover_orphans(&self) -> Result<u64, StoreError> {
        let r = sqlx::query("UPDATE jobs SET state = 'Queued', lease_owner = NULL, lease_expires_at = NULL WHERE state = 'Running'")
            .execute(&self.pool)
            .await?;
        Ok(r.rows_affected())
    }

    pub async fn status(&self, id: &str) -> Result<Option<JobStatus>, StoreError> {
        let row = sqlx::query(
            "SELECT id, state, attempt, result_id, error, completed_at FROM jobs WHERE id = ?",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|r| JobStatus {
            id: r.get("id"),
            state: JobState::parse(r.get::<String, _>("state").as_str()),
            attempt: r.get("attempt"),
            result_id: r.get("result_id"),
            error: r.get("error"),
            completed_at: r.get("completed_at"),
        }))
    }

    /// Deliveries due now, oldest first.
    pub async fn due_deliveries(
        &self,
        now_ms: i64,
        limit: i64,
    ) -> Result<Vec<DueDelivery>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, job_id, uri, body, attempts FROM outbox WHERE delivered_at IS NULL AND gave_up = 0 AND next_attempt_at <= ? \
             ORDER BY next_attempt_at, id LIMIT ?",
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
                attempts: r.get("attempts"),
            })
            .collect())
    }

    pub async fn mark_delivered(
        &self,
        id: i64,
        status: i64,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        sqlx::query("UPDATE outbox SET delivered_at = ?, last_status = ?, attempts = attempts + 1 WHERE id = ?")
            .bind(now_ms)
            .bind(status)
            .bind(id)
            .execute(&self.pool)
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
            "UPDATE outbox SET attempts = attempts + 1, last_status = ?, last_error = ?, \
             next_attempt_at = COALESCE(?, next_attempt_at), gave_up = ? WHERE id = ?",
        )
        .bind(status)
        .bind(error)
        .bind(next_attempt_at)
        .bind(next_attempt_at.is_none())
        .bind(id)
        .execute(&self.pool)
        .await?;
        Ok(())
    }
}

/// How a job ended.
pub enum Outcome<'a> {
    Completed { result_id: &'a str, result: &'a str },
    Failed { error: &'a str },
}
