//! The store (sqlx): an SQLite file by default, PostgreSQL when several nodes share the work.
//!
//! One code path serves both: the pool is sqlx's `Any` driver, every statement is written in
//! the SQL the two share (`$n` placeholders, which SQLite reads too; `BIGINT` columns on
//! PostgreSQL where SQLite has `INTEGER`, so integers decode as `i64` on both; sums cast back to
//! `BIGINT`; flags as 0/1 integers), and the few places where they must differ go through
//! [`Backend`]: how a read-then-write transaction begins (`BEGIN IMMEDIATE` on SQLite, a
//! transaction-scoped advisory lock on PostgreSQL, so both serialise such writers the same
//! way) and how a job is claimed (`FOR UPDATE SKIP LOCKED` on PostgreSQL). Migrations are
//! embedded SQL, one directory per backend (`migrations/sqlite`, `migrations/postgres`),
//! applied at open; a schema change adds a file to both.
//!
//! One file per table group: `jobs` (the queue: claims with a lease and a fencing attempt
//! number, heartbeats, finish with outbox and result rows in one transaction, the rescuer),
//! `outbox` (webhook deliveries and their retry bookkeeping), `results` (interim and final
//! results), `keys` (accounts and hashed API keys), `nodes` (the live nodes of a cluster).

mod claims;
mod export_cache;
mod exports;
mod fairness;
mod jobs;
mod keys;
mod nodes;
mod outbox;
mod plans;
mod results;

pub use export_cache::{CacheQueue, CachedExport};
pub use jobs::{
    Admission, Claimed, Heartbeat, JobState, JobStatus, JobSummary, Lane, Lost, NestSizes, NewJob,
    Outcome, StopRequest,
};
pub use keys::{ApiKey, CreateRefusal, KeyChange, KeyRefusal, KeyType, NewKey};
pub use nodes::{NodeInfo, NodeSeen};
pub use outbox::{Delivery, DeliveryRecord, DueDelivery, FailureRecord, JSON, XML};
pub use plans::{AccountPlan, PeriodUsage, PlanChange, PERIOD_MS};
pub use results::{ResultRecord, StoredResult};

use sqlx::any::AnyPoolOptions;
use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::AnyPool;
use sqlx::{Any, Executor, SqlStr, Transaction};
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
    /// Reads (and, on PostgreSQL, everything).
    pool: AnyPool,
    /// Every write goes through this pool. On SQLite it holds one connection, so writers queue
    /// in the pool's fair wait list instead of sleeping in SQLite's busy handler for the file's
    /// one write lock (its back-off put hundreds of milliseconds on POSTs under load); on
    /// PostgreSQL it is the same pool as `pool`.
    writer: AnyPool,
    backend: Backend,
    /// The PostgreSQL URL (the cluster bus opens its own listening connection with it).
    postgres_url: Option<String>,
}

/// Which database the store runs on: decides the few statements the two cannot share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }
}

/// The advisory lock every read-then-write transaction takes on PostgreSQL (the counterpart of
/// SQLite's one writer): its key is arbitrary, fixed, and used for nothing else.
const WRITE_LOCK: i64 = 0x6b65_7266_0001;

/// One embedded migration.
fn migration(version: i64, name: &'static str, sql: &'static str) -> Migration {
    Migration::new(
        version,
        Cow::Borrowed(name),
        MigrationType::Simple,
        SqlStr::from_static(sql),
        false,
    )
}

fn postgres_migrator() -> Migrator {
    let m = migration;
    Migrator::with_migrations(vec![
        m(
            1,
            "schema",
            include_str!("../../migrations/postgres/0001_schema.sql"),
        ),
        m(
            2,
            "job size, result attempt",
            include_str!("../../migrations/postgres/0002_job_size_result_attempt.sql"),
        ),
    ])
}

fn sqlite_migrator() -> Migrator {
    let m = migration;
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
        m(
            11,
            "nodes",
            include_str!("../../migrations/sqlite/0011_nodes.sql"),
        ),
        m(
            12,
            "job size, result attempt",
            include_str!("../../migrations/sqlite/0012_job_size_result_attempt.sql"),
        ),
    ])
}

impl Store {
    /// Opens (creating if needed) the SQLite file at `path` and applies migrations.
    pub async fn open_sqlite(path: &std::path::Path) -> Result<Store, StoreError> {
        sqlx::any::install_default_drivers();
        // the path travels in a URL: escape what would end or alter it (sqlx decodes it back)
        let escaped = path
            .to_string_lossy()
            .replace('%', "%25")
            .replace('?', "%3F")
            .replace('#', "%23");
        let url = format!("sqlite://{escaped}?mode=rwc");
        let connect = |connections: u32| {
            AnyPoolOptions::new()
                .max_connections(connections)
                // a write waits its turn in the queue; a minute without one means something
                // holds the writer far too long, and the caller's error says so
                .acquire_timeout(Duration::from_secs(60))
                .after_connect(|conn, _| {
                    Box::pin(async move {
                        // WAL lets readers run beside the writer; the busy timeout covers other
                        // processes on the same file (kerf tools, a second server by mistake);
                        // sqlx turns foreign keys on
                        conn.execute("PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 30000;")
                            .await?;
                        Ok(())
                    })
                })
                .connect(&url)
        };
        // the writer first: it creates the file and migrates it before any reader opens it
        let writer = connect(1).await?;
        sqlite_migrator().run(&writer).await?;
        let pool = connect(4).await?;
        Ok(Store {
            pool,
            writer,
            backend: Backend::Sqlite,
            postgres_url: None,
        })
    }

    /// Connects to the PostgreSQL database at `url` and applies migrations (sqlx holds an
    /// advisory lock while it migrates, so nodes starting together do not race).
    pub async fn open_postgres(url: &str) -> Result<Store, StoreError> {
        sqlx::any::install_default_drivers();
        let pool = AnyPoolOptions::new()
            .max_connections(8)
            .acquire_timeout(Duration::from_secs(30))
            .connect(url)
            .await?;
        postgres_migrator().run(&pool).await?;
        Ok(Store {
            writer: pool.clone(),
            pool,
            backend: Backend::Postgres,
            postgres_url: Some(url.to_string()),
        })
    }

    /// Opens the store named on the command line: a `postgres://` (or `postgresql://`) URL, a
    /// path to an SQLite file, or an `sqlite:` URL.
    pub async fn open(spec: &str) -> Result<Store, String> {
        if spec.starts_with("postgres://") || spec.starts_with("postgresql://") {
            return Store::open_postgres(spec)
                .await
                .map_err(|e| format!("opening the PostgreSQL store: {e}"));
        }
        let path = spec
            .strip_prefix("sqlite://")
            .or_else(|| spec.strip_prefix("sqlite:"))
            .unwrap_or(spec);
        Store::open_sqlite(std::path::Path::new(path))
            .await
            .map_err(|e| format!("opening the store at {path}: {e}"))
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The PostgreSQL URL the store was opened with (None on SQLite).
    pub fn postgres_url(&self) -> Option<&str> {
        self.postgres_url.as_deref()
    }

    /// Begins a read-then-write transaction, serialised against every other one: SQLite's
    /// `BEGIN IMMEDIATE` takes the one write lock at once; on PostgreSQL a transaction-scoped
    /// advisory lock does the same, so the checks a transaction makes (a key's running jobs, a
    /// plan's minutes) still hold when it writes.
    async fn begin_write(&self) -> Result<Transaction<'static, Any>, StoreError> {
        match self.backend {
            Backend::Sqlite => Ok(self.writer.begin_with("BEGIN IMMEDIATE").await?),
            Backend::Postgres => {
                let mut tx = self.writer.begin().await?;
                sqlx::query("SELECT pg_advisory_xact_lock($1)")
                    .bind(WRITE_LOCK)
                    .execute(&mut *tx)
                    .await?;
                Ok(tx)
            }
        }
    }
}

/// A flag as the store keeps it: 0 or 1 in an integer column (SQLite has no boolean type, and
/// PostgreSQL will not put a boolean parameter into an integer column).
fn flag(b: bool) -> i64 {
    i64::from(b)
}

/// Unix milliseconds now, the store's time unit.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
