//! The store (sqlx): an SQLite file by default, WAL, a long busy timeout, `BEGIN IMMEDIATE` for
//! read-then-write transactions. Migrations are embedded SQL, applied at open.
//!
//! One file per table group: `jobs` (the queue: claims with a lease and a fencing attempt
//! number, heartbeats, finish with outbox and result rows in one transaction, the rescuer),
//! `outbox` (webhook deliveries and their retry bookkeeping), `results` (interim and final
//! results), `keys` (accounts and hashed API keys).

mod export_cache;
mod exports;
mod fairness;
mod jobs;
mod keys;
mod outbox;
mod plans;
mod results;

pub use export_cache::{CacheQueue, CachedExport};
pub use jobs::{
    Admission, Claimed, Heartbeat, JobState, JobStatus, JobSummary, Lane, Lost, NewJob, Outcome,
    StopRequest,
};
pub use keys::{ApiKey, CreateRefusal, KeyChange, KeyRefusal, KeyType, NewKey};
pub use outbox::{Delivery, DeliveryRecord, DueDelivery, FailureRecord, JSON, XML};
pub use plans::{AccountPlan, PeriodUsage, PlanChange, PERIOD_MS};
pub use results::{ResultRecord, StoredResult};

use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};
use sqlx::SqlStr;
use std::borrow::Cow;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
    #[error("database migration: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

#[derive(Clone)]
pub struct Store {
    pool: SqlitePool,
}

fn migrator() -> Migrator {
    let m = |version, name, sql| {
        Migration::new(
            version,
            Cow::Borrowed(name),
            MigrationType::Simple,
            SqlStr::from_static(sql),
            false,
        )
    };
    Migrator::with_migrations(vec![
        m(
            1,
            "jobs and outbox",
            include_str!("../../migrations/sqlite/0001_jobs.sql"),
        ),
        m(
            2,
            "accounts, keys and results",
            include_str!("../../migrations/sqlite/0002_accounts_keys_results.sql"),
        ),
        m(
            3,
            "interruptions and interim deliveries",
            include_str!("../../migrations/sqlite/0003_interruptions_interim.sql"),
        ),
        m(
            4,
            "exports",
            include_str!("../../migrations/sqlite/0004_exports.sql"),
        ),
        m(
            5,
            "key management",
            include_str!("../../migrations/sqlite/0005_key_management.sql"),
        ),
        m(
            6,
            "plans",
            include_str!("../../migrations/sqlite/0006_plans.sql"),
        ),
        m(
            7,
            "fairness bookkeeping",
            include_str!("../../migrations/sqlite/0007_fairness.sql"),
        ),
        m(
            8,
            "hub: error codes and stop requests",
            include_str!("../../migrations/sqlite/0008_hub.sql"),
        ),
        m(
            9,
            "export cache",
            include_str!("../../migrations/sqlite/0009_export_cache.sql"),
        ),
        m(
            10,
            "delivery content type",
            include_str!("../../migrations/sqlite/0010_delivery_content_type.sql"),
        ),
    ])
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

    /// Opens the store named on the command line: a path to an SQLite file, or an
    /// `sqlite:` URL. PostgreSQL (`postgres://`) comes with scale-out and is refused clearly.
    pub async fn open(spec: &str) -> Result<Store, String> {
        if spec.starts_with("postgres://") || spec.starts_with("postgresql://") {
            return Err(
                "PostgreSQL is not supported yet (it comes with scale-out); use an SQLite file"
                    .into(),
            );
        }
        let path = spec
            .strip_prefix("sqlite://")
            .or_else(|| spec.strip_prefix("sqlite:"))
            .unwrap_or(spec);
        Store::open_sqlite(std::path::Path::new(path))
            .await
            .map_err(|e| format!("opening the store at {path}: {e}"))
    }

    /// True when the database answers (readiness).
    pub async fn ping(&self) -> bool {
        sqlx::query("SELECT 1").execute(&self.pool).await.is_ok()
    }
}

/// Unix milliseconds now, the store's time unit.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
