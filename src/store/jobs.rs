//! The job queue. The row is the truth about a job. Claims bump a fencing attempt number and
//! take a lease; every later update by a worker names the attempt it claimed, so a worker whose
//! lease was taken over cannot write a result. Completion, its result row and its webhook
//! outbox rows commit together.

use super::fairness::gate;
use super::{Delivery, ResultRecord, Store, StoreError};
use crate::fairness::Refused;
use sqlx::Row;

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
    pub(super) fn parse(s: &str) -> JobState {
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
    /// The nesting time it may use (its MaxRunTimeSeconds, in ms; 0 for exports): what it
    /// holds of its account's plan while queued or running (DESIGN 4, ReservedMinutes).
    pub reserved_ms: i64,
    /// How large a nest it is: the part copies asked for (a 1D plan's pieces; 0 for exports).
    /// Nodes may prefer large or small nests by it (`NestSizes`).
    pub size: i64,
}

/// Whether a key may start another nest.
#[derive(Clone, Debug, PartialEq)]
pub enum Admission {
    Accepted,
    /// The key already has `active` jobs queued or running, its Parallelism.
    AtLimit {
        active: i64,
    },
    /// The account's plan refuses it (fairness: floor, burst pool, no overage).
    OverPlan(Refused),
}

/// A job a worker holds: the attempt number is its fencing token.
#[derive(Clone, Debug, PartialEq)]
pub struct Claimed {
    pub id: String,
    pub attempt: i64,
    pub kind: String,
    pub request: String,
    pub webhook_uri: Option<String>,
    /// Its `NewJob::size`.
    pub size: i64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct JobStatus {
    pub id: String,
    /// What runs it (`nest2d:...`, `nest1d`).
    pub kind: String,
    pub state: JobState,
    pub attempt: i64,
    pub result_id: Option<String>,
    /// A failed job's code (`NestingFailed`, `InvalidRequest`, `Interrupted`, ...).
    pub error_code: Option<String>,
    pub error: Option<String>,
    pub completed_at: Option<i64>,
    pub webhook_uri: Option<String>,
    pub api_key_id: String,
}

/// What a new result of a running job does to its earlier ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Earlier {
    /// A nest's interim result: it replaces the earlier one and its undelivered deliveries.
    Replaced,
    /// A quote's sub-nest: every one is kept and delivered.
    Kept,
}

/// What a heartbeat found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Heartbeat {
    /// The lease is renewed.
    Held,
    /// The lease is renewed, and someone asked the job to stop early (continue, StopNesting);
    /// the request's mark (see `StopRequest::Requested`).
    StopRequested(i64),
    /// This attempt no longer holds the job.
    Lost,
}

/// What a request to stop a job early found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StopRequest {
    /// Recorded: the worker running it stops at its next heartbeat (or at once on this node).
    /// The mark (the job's `stop_requested_at`) grows with every request, so a quote, whose
    /// runner clears the stop each sub-nest honoured, tells a new request from an old one.
    Requested(i64),
    /// The job is not running (its state).
    NotRunning(JobState),
    /// No such job for the account.
    Unknown,
}

/// A job's summary: whose, what, where it is, and when it was queued, started and ended
/// (Unix ms). For listings (the dashboard's recent jobs) and for measuring waits.
#[derive(Clone, Debug, PartialEq)]
pub struct JobSummary {
    pub id: String,
    pub api_key_id: String,
    /// What runs it (`nest2d:...`, `nest1d`, `export`).
    pub kind: String,
    pub state: JobState,
    pub created_at: i64,
    pub started_at: Option<i64>,
    pub completed_at: Option<i64>,
    pub error: Option<String>,
    /// Whether a result is stored (a Completed nest's).
    pub has_result: bool,
}

/// The columns `job_summary` reads.
macro_rules! summary_columns {
    () => {
        "j.id, j.api_key_id, j.kind, j.state, j.created_at, j.started_at, j.completed_at, j.error, j.result_id"
    };
}

fn job_summary(r: &sqlx::any::AnyRow) -> JobSummary {
    JobSummary {
        id: r.get("id"),
        api_key_id: r.get("api_key_id"),
        kind: r.get("kind"),
        state: JobState::parse(r.get("state")),
        created_at: r.get("created_at"),
        started_at: r.get("started_at"),
        completed_at: r.get("completed_at"),
        error: r.get("error"),
        has_result: r.get::<Option<String>, _>("result_id").is_some(),
    }
}

/// Which jobs a claimer takes: nests (2D and 1D, under each key's Parallelism) of the sizes
/// given, or exports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    Nests(NestSizes),
    Exports,
}

/// The nests a claim may take by size (`NewJob::size`): `min <= size < max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NestSizes {
    min: i64,
    max: i64,
}

impl NestSizes {
    /// Every nest.
    pub const ANY: NestSizes = NestSizes {
        min: 0,
        max: i64::MAX,
    };

    /// Nests of `copies` part copies (or pieces) or more.
    pub fn at_least(copies: i64) -> NestSizes {
        NestSizes {
            min: copies,
            max: i64::MAX,
        }
    }

    /// Nests of fewer than `copies`.
    pub fn below(copies: i64) -> NestSizes {
        NestSizes {
            min: 0,
            max: copies,
        }
    }

    pub(super) fn min(self) -> i64 {
        self.min
    }

    pub(super) fn max(self) -> i64 {
        self.max
    }

    /// Whether a nest of `size` is among these.
    pub fn holds(self, size: i64) -> bool {
        (self.min..self.max).contains(&size)
    }
}

/// Which running jobs `take_back` considers abandoned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lost {
    /// Those whose lease expired.
    Expired,
    /// All of them (start of a single-process server).
    All,
}

/// How a job ended.
pub enum Outcome<'a> {
    /// Completed with its final result.
    Completed(ResultRecord<'a>),
    /// Completed with nothing to keep but its deliveries (an export: its body is what it
    /// delivers).
    Delivered,
    /// Completed: an export made for the cache, its payload kept until `expires_at`.
    Cached { payload: &'a str, expires_at: i64 },
    Failed {
        /// NestingFailed's ErrorCode (`NestingFailed`, `InvalidRequest`, ...).
        code: &'a str,
        error: &'a str,
    },
}

/// How far back the nesting time a key used counts in the fair pick of `Store::claim`.
pub const FAIR_SHARE_WINDOW_MS: i64 = 3600 * 1000;

impl Store {
    /// Enqueues a job without admission (exports: they do not draw on the plan).
    pub async fn enqueue(&self, job: &NewJob<'_>, now_ms: i64) -> Result<(), StoreError> {
        insert_job(&self.writer, job, false, now_ms).await
    }

    /// Enqueues a job if its key has fewer than `limit` jobs queued or running (its
    /// Parallelism runs at once, `claim` sees to that; the rest of the limit may wait). The
    /// count and the insert are one transaction, so parallel submissions cannot both pass.
    /// Held jobs do not count until they are started.
    pub async fn enqueue_admitted(
        &self,
        job: &NewJob<'_>,
        limit: i64,
        now_ms: i64,
    ) -> Result<Admission, StoreError> {
        let mut tx = self.begin_write().await?;
        let mut overage = false;
        if !job.held {
            let active = active_jobs(&mut tx, job.api_key_id).await?;
            if active >= limit {
                tx.rollback().await?;
                return Ok(Admission::AtLimit { active });
            }
            match gate(&mut tx, job.api_key_id, job.reserved_ms, now_ms).await? {
                Ok(admitted) => overage = admitted.is_overage(),
                Err(refused) => {
                    tx.rollback().await?;
                    return Ok(Admission::OverPlan(refused));
                }
            }
        }
        insert_job(&mut *tx, job, overage, now_ms).await?;
        tx.commit().await?;
        Ok(Admission::Accepted)
    }

    /// Releases a held job of `api_key_id` to the queue, subject to the key's `limit` of jobs
    /// queued or running and to its plan (a held job reserves nothing until it is released).
    /// None when the key has no such held job.
    pub async fn release_held(
        &self,
        id: &str,
        api_key_id: &str,
        limit: i64,
        now_ms: i64,
    ) -> Result<Option<Admission>, StoreError> {
        let mut tx = self.begin_write().await?;
        let reserved_ms: Option<i64> = sqlx::query(
            "SELECT reserved_ms FROM jobs WHERE id = $1 AND api_key_id = $2 AND state = 'Held'",
        )
        .bind(id)
        .bind(api_key_id)
        .fetch_optional(&mut *tx)
        .await?
        .map(|r| r.get("reserved_ms"));
        let Some(reserved_ms) = reserved_ms else {
            tx.rollback().await?;
            return Ok(None);
        };
        let active = active_jobs(&mut tx, api_key_id).await?;
        if active >= limit {
            tx.rollback().await?;
            return Ok(Some(Admission::AtLimit { active }));
        }
        let overage = match gate(&mut tx, api_key_id, reserved_ms, now_ms).await? {
            Ok(admitted) => admitted.is_overage(),
            Err(refused) => {
                tx.rollback().await?;
                return Ok(Some(Admission::OverPlan(refused)));
            }
        };
        sqlx::query(
            "UPDATE jobs SET state = 'Queued', overage = $1 WHERE id = $2 AND state = 'Held'",
        )
        .bind(super::flag(overage))
        .bind(id)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(Some(Admission::Accepted))
    }

    /// Every job of key `api_key_id`, oldest first.
    pub async fn key_jobs(&self, api_key_id: &str) -> Result<Vec<JobSummary>, StoreError> {
        Ok(sqlx::query(concat!(
            "SELECT ",
            summary_columns!(),
            " FROM jobs j WHERE j.api_key_id = $1 ORDER BY j.created_at, j.id"
        ))
        .bind(api_key_id)
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(job_summary)
        .collect())
    }

    /// The latest `limit` jobs of account `account_id`'s keys, newest first.
    pub async fn recent_jobs(
        &self,
        account_id: i64,
        limit: i64,
    ) -> Result<Vec<JobSummary>, StoreError> {
        Ok(sqlx::query(concat!(
            "SELECT ",
            summary_columns!(),
            " FROM jobs j JOIN api_keys k ON k.id = j.api_key_id WHERE k.account_id = $1 \
              ORDER BY j.created_at DESC, j.id DESC LIMIT $2"
        ))
        .bind(account_id)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(job_summary)
        .collect())
    }

    /// Extends the lease of a running job, and says whether a stop was asked for.
    pub async fn heartbeat(
        &self,
        id: &str,
        attempt: i64,
        lease_ms: i64,
        now_ms: i64,
    ) -> Result<Heartbeat, StoreError> {
        let row = sqlx::query(
            "UPDATE jobs SET lease_expires_at = $1 WHERE id = $2 AND attempt = $3 AND state = 'Running' \
             RETURNING stop_requested_at",
        )
        .bind(now_ms + lease_ms)
        .bind(id)
        .bind(attempt)
        .fetch_optional(&self.writer)
        .await?;
        Ok(match row {
            None => Heartbeat::Lost,
            Some(r) => match r.get::<Option<i64>, _>("stop_requested_at") {
                Some(mark) => Heartbeat::StopRequested(mark),
                None => Heartbeat::Held,
            },
        })
    }

    /// Asks running job `id` of account `account_id` to stop early (it ends with its best
    /// result so far, as its final one). The stop is the running attempt's: a job put back in
    /// the queue (shutdown, a lost lease) has it cleared and runs again in full.
    pub async fn request_stop(
        &self,
        id: &str,
        account_id: i64,
        now_ms: i64,
    ) -> Result<StopRequest, StoreError> {
        // the mark: now, or one past the last request's if that is not earlier (each request
        // has a mark of its own)
        let done = sqlx::query(
            "UPDATE jobs SET stop_requested_at = CASE WHEN stop_requested_at IS NULL OR stop_requested_at < $1 \
             THEN $1 ELSE stop_requested_at + 1 END WHERE id = $2 AND state = 'Running' \
             AND api_key_id IN (SELECT id FROM api_keys WHERE account_id = $3) RETURNING stop_requested_at",
        )
        .bind(now_ms)
        .bind(id)
        .bind(account_id)
        .fetch_optional(&self.writer)
        .await?;
        if let Some(row) = done {
            return Ok(StopRequest::Requested(row.get("stop_requested_at")));
        }
        Ok(match self.status_for_account(id, account_id).await? {
            Some(job) => StopRequest::NotRunning(job.state),
            None => StopRequest::Unknown,
        })
    }

    /// Gives a running job back to the queue (graceful shutdown). False when this attempt no
    /// longer holds it.
    pub async fn hand_back(&self, id: &str, attempt: i64) -> Result<bool, StoreError> {
        let r = sqlx::query(
            "UPDATE jobs SET state = 'Queued', lease_owner = NULL, lease_expires_at = NULL, stop_requested_at = NULL \
             WHERE id = $1 AND attempt = $2 AND state = 'Running'",
        )
        .bind(id)
        .bind(attempt)
        .execute(&self.writer)
        .await?;
        Ok(r.rows_affected() == 1)
    }

    /// Ends a job (Completed with its final result, or Failed with an error) and writes its
    /// deliveries, in one transaction, only if `attempt` still holds the job. False when it
    /// does not.
    pub async fn finish(
        &self,
        id: &str,
        attempt: i64,
        outcome: Outcome<'_>,
        deliveries: &[Delivery<'_>],
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        let mut tx = self.begin_write().await?;
        let (state, result, code, error) = match &outcome {
            Outcome::Completed(r) => ("Completed", Some(r), None, None),
            Outcome::Delivered | Outcome::Cached { .. } => ("Completed", None, None, None),
            Outcome::Failed { code, error } => ("Failed", None, Some(*code), Some(*error)),
        };
        let r = sqlx::query(
            "UPDATE jobs SET state = $1, result_id = $2, error_code = $3, error = $4, completed_at = $5, lease_owner = NULL, \
             lease_expires_at = NULL WHERE id = $6 AND attempt = $7 AND state = 'Running'",
        )
        .bind(state)
        .bind(result.map(|r| r.id))
        .bind(code)
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
        if let Some(result) = result {
            super::results::insert(&mut tx, id, attempt, result, now_ms).await?;
        }
        if let Outcome::Cached {
            payload,
            expires_at,
        } = outcome
        {
            super::export_cache::fill(&mut tx, id, payload, now_ms, expires_at).await?;
        }
        super::outbox::insert(&mut tx, id, deliveries, false, now_ms).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Stores an interim result and its deliveries, only while `attempt` holds the job. It
    /// replaces the job's previous interim result and its undelivered deliveries.
    pub async fn add_interim(
        &self,
        id: &str,
        attempt: i64,
        result: &ResultRecord<'_>,
        deliveries: &[Delivery<'_>],
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        self.add_result(id, attempt, result, deliveries, Earlier::Replaced, now_ms)
            .await
    }

    /// Stores one finished sub-nest of a quote and its delivery, only while `attempt` holds
    /// the job. Unlike `add_interim` it keeps every earlier result and delivery: each sub-nest
    /// is a result of its own, and each of its InterimResult deliveries must arrive.
    pub async fn add_sub_nest(
        &self,
        id: &str,
        attempt: i64,
        result: &ResultRecord<'_>,
        deliveries: &[Delivery<'_>],
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        self.add_result(id, attempt, result, deliveries, Earlier::Kept, now_ms)
            .await
    }

    /// A result of a running job and its deliveries, in one transaction, only while `attempt`
    /// holds the job. False when it does not.
    async fn add_result(
        &self,
        id: &str,
        attempt: i64,
        result: &ResultRecord<'_>,
        deliveries: &[Delivery<'_>],
        earlier: Earlier,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        let mut tx = self.begin_write().await?;
        let holds =
            sqlx::query("SELECT 1 FROM jobs WHERE id = $1 AND attempt = $2 AND state = 'Running'")
                .bind(id)
                .bind(attempt)
                .fetch_optional(&mut *tx)
                .await?
                .is_some();
        if !holds {
            tx.rollback().await?;
            return Ok(false);
        }
        let interim = earlier == Earlier::Replaced;
        if interim {
            // only the newest interim result is kept (a long run would otherwise store one
            // layout every few seconds for hours)
            sqlx::query("DELETE FROM results WHERE job_id = $1")
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        super::results::insert(&mut tx, id, attempt, result, now_ms).await?;
        super::outbox::insert(&mut tx, id, deliveries, interim, now_ms).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Clears the stop of mark `mark` that running attempt `attempt` has honoured (a quote's
    /// stop ends one sub-nest, not the quote). A newer request (a greater mark) stays. False
    /// when nothing was cleared.
    pub async fn clear_stop(&self, id: &str, attempt: i64, mark: i64) -> Result<bool, StoreError> {
        let r = sqlx::query(
            "UPDATE jobs SET stop_requested_at = NULL WHERE id = $1 AND attempt = $2 AND state = 'Running' \
             AND stop_requested_at = $3",
        )
        .bind(id)
        .bind(attempt)
        .bind(mark)
        .execute(&self.writer)
        .await?;
        Ok(r.rows_affected() == 1)
    }

    /// Takes back running jobs whose worker is gone (`Lost::Expired`: the lease ran out;
    /// `Lost::All`: at the start of a single-process server every Running row is an orphan).
    /// A job interrupted `max_attempts` times is failed instead of queued again (a job that
    /// kills its worker must not do so forever); when it has a webhook, `error_body(job_id,
    /// kind, request, error)` is the body of its Error delivery and its media type, written in
    /// the same transaction.
    /// Returns (requeued, failed).
    pub async fn take_back(
        &self,
        lost: Lost,
        max_attempts: i64,
        now_ms: i64,
        error_body: impl Fn(&str, &str, &str, &str) -> (String, &'static str),
    ) -> Result<(u64, u64), StoreError> {
        // Lost::All uses a cut-off no lease can be beyond
        let cutoff = match lost {
            Lost::Expired => now_ms,
            Lost::All => i64::MAX,
        };
        let mut tx = self.begin_write().await?;
        let failed = sqlx::query(
            "UPDATE jobs SET state = 'Failed', interruptions = interruptions + 1, error_code = 'Interrupted', \
             error = 'the job was interrupted ' || (interruptions + 1) || ' times (its worker stopped or lost its lease) and was not retried again', \
             completed_at = $1, lease_owner = NULL, lease_expires_at = NULL \
             WHERE state = 'Running' AND lease_expires_at < $2 AND interruptions + 1 >= $3 \
             RETURNING id, kind, request, error, webhook_uri",
        )
        .bind(now_ms)
        .bind(cutoff)
        .bind(max_attempts)
        .fetch_all(&mut *tx)
        .await?;
        for row in &failed {
            let (id, kind, request, error, uri): (String, String, String, String, Option<String>) = (
                row.get("id"),
                row.get("kind"),
                row.get("request"),
                row.get("error"),
                row.get("webhook_uri"),
            );
            if let Some(uri) = uri {
                let (body, content_type) = error_body(&id, &kind, &request, &error);
                super::outbox::insert(
                    &mut tx,
                    &id,
                    &[Delivery {
                        uri: &uri,
                        body: &body,
                        content_type,
                    }],
                    false,
                    now_ms,
                )
                .await?;
            }
        }
        let requeued = sqlx::query(
            "UPDATE jobs SET state = 'Queued', interruptions = interruptions + 1, lease_owner = NULL, lease_expires_at = NULL, stop_requested_at = NULL \
             WHERE state = 'Running' AND lease_expires_at < $1",
        )
        .bind(cutoff)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        tx.commit().await?;
        Ok((requeued, failed.len() as u64))
    }

    pub async fn status(&self, id: &str) -> Result<Option<JobStatus>, StoreError> {
        let row = sqlx::query(
            "SELECT id, kind, state, attempt, result_id, error_code, error, completed_at, webhook_uri, api_key_id FROM jobs WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|r| job_status(&r)))
    }

    /// The job, if it belongs to `account_id` (any key of the account may look at it).
    pub async fn status_for_account(
        &self,
        id: &str,
        account_id: i64,
    ) -> Result<Option<JobStatus>, StoreError> {
        let row = sqlx::query(
            "SELECT j.id, j.kind, j.state, j.attempt, j.result_id, j.error_code, j.error, j.completed_at, j.webhook_uri, j.api_key_id \
             FROM jobs j JOIN api_keys k ON k.id = j.api_key_id WHERE j.id = $1 AND k.account_id = $2",
        )
        .bind(id)
        .bind(account_id)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|r| job_status(&r)))
    }
}

impl Store {
    /// The request a job was submitted with (as stored: JSON text), for the exports, which
    /// convert it again to draw and write its result.
    pub async fn request_of(&self, id: &str) -> Result<Option<String>, StoreError> {
        let row = sqlx::query("SELECT request FROM jobs WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.map(|r| r.get("request")))
    }
}

fn job_status(r: &sqlx::any::AnyRow) -> JobStatus {
    JobStatus {
        id: r.get("id"),
        kind: r.get("kind"),
        state: JobState::parse(r.get::<String, _>("state").as_str()),
        attempt: r.get("attempt"),
        result_id: r.get("result_id"),
        error_code: r.get("error_code"),
        error: r.get("error"),
        completed_at: r.get("completed_at"),
        webhook_uri: r.get("webhook_uri"),
        api_key_id: r.get("api_key_id"),
    }
}

pub(super) async fn insert_job<'e, E: sqlx::Executor<'e, Database = sqlx::Any>>(
    ex: E,
    job: &NewJob<'_>,
    overage: bool,
    now_ms: i64,
) -> Result<(), StoreError> {
    sqlx::query("INSERT INTO jobs (id, api_key_id, kind, state, request, webhook_uri, created_at, reserved_ms, overage, size) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)")
        .bind(job.id)
        .bind(job.api_key_id)
        .bind(job.kind)
        .bind(if job.held { "Held" } else { "Queued" })
        .bind(job.request)
        .bind(job.webhook_uri)
        .bind(now_ms)
        .bind(job.reserved_ms.max(0))
        .bind(super::flag(overage))
        .bind(job.size.max(0))
        .execute(ex)
        .await?;
    Ok(())
}

async fn active_jobs(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    api_key_id: &str,
) -> Result<i64, StoreError> {
    Ok(sqlx::query(
        "SELECT COUNT(*) AS n FROM jobs WHERE api_key_id = $1 AND state IN ('Queued', 'Running') AND kind <> 'export'",
    )
    .bind(api_key_id)
    .fetch_one(&mut **tx)
    .await?
    .get("n"))
}
