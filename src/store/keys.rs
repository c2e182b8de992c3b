//! Accounts and API keys (DESIGN 4). A key is shown once, as `kerf_<id>_<secret>`: the id
//! finds the row, the store keeps only the SHA-256 of the secret and compares it in constant
//! time. The secret is 256 random bits, so a fast hash is enough (nothing to brute-force).

use super::{Store, StoreError};
use sha2::{Digest, Sha256};
use sqlx::Row;
use subtle::ConstantTimeEq;

/// Usage (default) submits nests; Admin also manages the account's keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyType {
    Usage,
    Admin,
}

impl KeyType {
    pub fn as_str(self) -> &'static str {
        match self {
            KeyType::Usage => "Usage",
            KeyType::Admin => "Admin",
        }
    }
    /// Lenient (DESIGN 5.1): any case, or the index 0 (Usage) / 1 (Admin).
    pub fn parse(s: &str) -> Result<KeyType, String> {
        match crate::lenient::enum_key(s).as_str() {
            "usage" | "0" => Ok(KeyType::Usage),
            "admin" | "1" => Ok(KeyType::Admin),
            _ => Err(format!("unknown key type '{s}'; allowed: Usage, Admin")),
        }
    }
}

/// A key to create.
#[derive(Clone, Debug)]
pub struct NewKey {
    pub account_id: i64,
    pub key_type: KeyType,
    pub reference: String,
    pub parallelism: i64,
    /// Unix ms; None: never expires.
    pub expires_at: Option<i64>,
    pub is_trial: bool,
    /// A contact address for the key (may be empty).
    pub email: String,
}

/// A key's record (never its secret).
#[derive(Clone, Debug, PartialEq)]
pub struct ApiKey {
    pub id: String,
    pub account_id: i64,
    pub key_type: KeyType,
    pub reference: String,
    pub parallelism: i64,
    pub expires_at: Option<i64>,
    pub cancelled_at: Option<i64>,
    pub is_trial: bool,
    pub email: String,
    /// The key's share in fair sharing (DESIGN 4), relative to the account's other keys.
    pub weight: f64,
}

impl ApiKey {
    /// Neither cancelled nor expired at `now_ms`.
    pub fn is_active(&self, now_ms: i64) -> bool {
        self.cancelled_at.is_none() && !self.is_expired(now_ms)
    }

    pub fn is_expired(&self, now_ms: i64) -> bool {
        self.expires_at.is_some_and(|e| e <= now_ms)
    }
}

/// The columns `key_of` reads (a macro, so queries can `concat!` it into static SQL).
macro_rules! key_columns {
    () => {
        "id, account_id, key_type, reference, parallelism, expires_at, cancelled_at, is_trial, email, weight"
    };
}

/// The SQL condition, on the row being updated (`api_keys`), that it is not its account's
/// last active Admin key: it is Usage, or not active, or another active Admin key exists.
/// Reads the time now (ms) from parameter `$1`: a statement using it binds the time first.
macro_rules! not_the_last_admin {
    () => {
        "(key_type = 'Usage' OR cancelled_at IS NOT NULL \
          OR (expires_at IS NOT NULL AND expires_at <= $1) \
          OR EXISTS (SELECT 1 FROM api_keys AS o WHERE o.account_id = api_keys.account_id \
                     AND o.id <> api_keys.id AND o.key_type = 'Admin' AND o.cancelled_at IS NULL \
                     AND (o.expires_at IS NULL OR o.expires_at > $1)))"
    };
}

/// What a guarded change to a key did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyChange {
    Done,
    /// Refused: the key is its account's last active Admin key.
    LastAdmin,
    /// Nothing to do: the key is cancelled already.
    Cancelled,
    /// No such key.
    Unknown,
}

/// Why a key could not be created.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CreateRefusal {
    /// The account holds as many active keys as its plan allows.
    CapReached { cap: i64 },
}

/// Why a presented key was refused. The API answers all of them with 401; the reason is
/// for the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyRefusal {
    Malformed,
    Unknown,
    Expired,
    Cancelled,
}

impl KeyRefusal {
    pub fn message(self) -> &'static str {
        match self {
            KeyRefusal::Malformed => "the API key is not a kerf key (kerf_<id>_<secret>)",
            KeyRefusal::Unknown => "the API key is not valid",
            KeyRefusal::Expired => "the API key has expired",
            KeyRefusal::Cancelled => "the API key has been cancelled",
        }
    }
}

fn hash_secret(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).expect("the operating system's random source failed");
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

/// Splits `kerf_<id>_<secret>` (id and secret are lowercase hex, so `_` only separates).
fn split_token(token: &str) -> Option<(&str, &str)> {
    let rest = token.strip_prefix("kerf_")?;
    let (id, secret) = rest.split_once('_')?;
    let hex = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit());
    (hex(id) && hex(secret)).then_some((id, secret))
}

fn key_of(r: &sqlx::any::AnyRow) -> ApiKey {
    ApiKey {
        id: r.get("id"),
        account_id: r.get("account_id"),
        key_type: if r.get::<String, _>("key_type") == "Admin" {
            KeyType::Admin
        } else {
            KeyType::Usage
        },
        reference: r.get("reference"),
        parallelism: r.get("parallelism"),
        expires_at: r.get("expires_at"),
        cancelled_at: r.get("cancelled_at"),
        is_trial: r.get::<i64, _>("is_trial") != 0,
        email: r.get("email"),
        weight: r.get("weight"),
    }
}

impl Store {
    pub async fn create_account(&self, name: &str, now_ms: i64) -> Result<i64, StoreError> {
        Ok(
            sqlx::query("INSERT INTO accounts (name, created_at) VALUES ($1, $2) RETURNING id")
                .bind(name)
                .bind(now_ms)
                .fetch_one(&self.writer)
                .await?
                .get("id"),
        )
    }

    pub async fn account_exists(&self, id: i64) -> Result<bool, StoreError> {
        Ok(sqlx::query("SELECT 1 FROM accounts WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?
            .is_some())
    }

    /// The first account, if any (the single-account default of `kerf serve`).
    pub async fn first_account(&self) -> Result<Option<i64>, StoreError> {
        Ok(sqlx::query("SELECT id FROM accounts ORDER BY id LIMIT 1")
            .fetch_optional(&self.pool)
            .await?
            .map(|r| r.get("id")))
    }

    /// Creates a key; returns its record and the token to show once.
    pub async fn create_key(
        &self,
        new: &NewKey,
        now_ms: i64,
    ) -> Result<(ApiKey, String), StoreError> {
        match self.insert_key(new, false, now_ms).await? {
            Ok(created) => Ok(created),
            Err(CreateRefusal::CapReached { .. }) => unreachable!("no cap was checked"),
        }
    }

    /// Creates a key unless the account already holds as many active keys as its cap allows
    /// (checked and inserted in one write transaction, so two requests cannot both take the
    /// last place).
    pub async fn create_key_within_cap(
        &self,
        new: &NewKey,
        now_ms: i64,
    ) -> Result<Result<(ApiKey, String), CreateRefusal>, StoreError> {
        self.insert_key(new, true, now_ms).await
    }

    async fn insert_key(
        &self,
        new: &NewKey,
        capped: bool,
        now_ms: i64,
    ) -> Result<Result<(ApiKey, String), CreateRefusal>, StoreError> {
        let mut tx = self.begin_write().await?;
        let created = insert_key(&mut tx, new, capped, now_ms).await?;
        tx.commit().await?;
        Ok(created)
    }

    /// On a store with no account: creates one and an Admin key, and returns the key's token
    /// (to print once). None when an account exists already.
    pub async fn bootstrap(
        &self,
        parallelism: i64,
        now_ms: i64,
    ) -> Result<Option<String>, StoreError> {
        // one transaction: of several nodes starting at once on an empty store, one creates
        let mut tx = self.begin_write().await?;
        let any = sqlx::query("SELECT id FROM accounts LIMIT 1")
            .fetch_optional(&mut *tx)
            .await?;
        if any.is_some() {
            tx.rollback().await?;
            return Ok(None);
        }
        let account_id: i64 =
            sqlx::query("INSERT INTO accounts (name, created_at) VALUES ($1, $2) RETURNING id")
                .bind("default")
                .bind(now_ms)
                .fetch_one(&mut *tx)
                .await?
                .get("id");
        let key = NewKey {
            account_id,
            key_type: KeyType::Admin,
            reference: "first Admin key".into(),
            parallelism,
            expires_at: None,
            is_trial: false,
            email: String::new(),
        };
        let created = insert_key(&mut tx, &key, false, now_ms).await?;
        tx.commit().await?;
        match created {
            Ok((_, token)) => Ok(Some(token)),
            Err(CreateRefusal::CapReached { .. }) => unreachable!("no cap was checked"),
        }
    }

    /// Checks a presented token: known id, matching secret, not cancelled, not expired.
    pub async fn authenticate(
        &self,
        token: &str,
        now_ms: i64,
    ) -> Result<Result<ApiKey, KeyRefusal>, StoreError> {
        let Some((id, secret)) = split_token(token.trim()) else {
            return Ok(Err(KeyRefusal::Malformed));
        };
        let row = sqlx::query(concat!(
            "SELECT ",
            key_columns!(),
            ", secret_hash FROM api_keys WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else {
            return Ok(Err(KeyRefusal::Unknown));
        };
        let stored: Vec<u8> = row.get("secret_hash");
        if !bool::from(stored.ct_eq(&hash_secret(secret)[..])) {
            return Ok(Err(KeyRefusal::Unknown));
        }
        let key = key_of(&row);
        if key.cancelled_at.is_some() {
            return Ok(Err(KeyRefusal::Cancelled));
        }
        if key.is_expired(now_ms) {
            return Ok(Err(KeyRefusal::Expired));
        }
        Ok(Ok(key))
    }

    /// A key's record by its id.
    pub async fn key(&self, id: &str) -> Result<Option<ApiKey>, StoreError> {
        Ok(sqlx::query(concat!(
            "SELECT ",
            key_columns!(),
            " FROM api_keys WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?
        .map(|r| key_of(&r)))
    }

    /// Cancels a key unless it is its account's last active Admin key (checked and written in
    /// one statement of a write transaction, so two revocations cannot both take the last two
    /// Admin keys: on PostgreSQL the statement alone would not see the other's write).
    pub async fn cancel_key_unless_last_admin(
        &self,
        id: &str,
        now_ms: i64,
    ) -> Result<KeyChange, StoreError> {
        let mut tx = self.begin_write().await?;
        let r = sqlx::query(concat!(
            "UPDATE api_keys SET cancelled_at = $1 WHERE id = $2 AND cancelled_at IS NULL AND ",
            not_the_last_admin!()
        ))
        .bind(now_ms)
        .bind(id)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        self.change_outcome(id, r.rows_affected()).await
    }

    /// Makes a key Usage or Admin; the account's last active Admin key cannot become Usage
    /// (checked and written in one statement of a write transaction).
    pub async fn set_key_type(
        &self,
        id: &str,
        key_type: KeyType,
        now_ms: i64,
    ) -> Result<KeyChange, StoreError> {
        let r = match key_type {
            KeyType::Admin => {
                sqlx::query("UPDATE api_keys SET key_type = 'Admin' WHERE id = $1")
                    .bind(id)
                    .execute(&self.writer)
                    .await?
            }
            KeyType::Usage => {
                let mut tx = self.begin_write().await?;
                let r = sqlx::query(concat!(
                    "UPDATE api_keys SET key_type = 'Usage' WHERE id = $2 AND ",
                    not_the_last_admin!()
                ))
                .bind(now_ms)
                .bind(id)
                .execute(&mut *tx)
                .await?;
                tx.commit().await?;
                r
            }
        };
        self.change_outcome(id, r.rows_affected()).await
    }

    /// What an UPDATE guarded by `not_the_last_admin!` did to key `id`.
    async fn change_outcome(&self, id: &str, rows: u64) -> Result<KeyChange, StoreError> {
        if rows == 1 {
            return Ok(KeyChange::Done);
        }
        Ok(match self.key(id).await? {
            Some(k) if k.cancelled_at.is_some() => KeyChange::Cancelled,
            Some(_) => KeyChange::LastAdmin,
            None => KeyChange::Unknown,
        })
    }

    /// Every key of an account, cancelled ones included, oldest first.
    pub async fn account_keys(&self, account_id: i64) -> Result<Vec<ApiKey>, StoreError> {
        Ok(sqlx::query(concat!(
            "SELECT ",
            key_columns!(),
            " FROM api_keys WHERE account_id = $1 ORDER BY created_at, id"
        ))
        .bind(account_id)
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(key_of)
        .collect())
    }

    /// A new secret for an active key (neither cancelled nor expired); the old one fails from
    /// now on. Everything else (reference, expiry, type, parallelism, weight, origins) stays
    /// with the key's id. None when the key is not active.
    pub async fn regenerate_key(
        &self,
        id: &str,
        now_ms: i64,
    ) -> Result<Option<String>, StoreError> {
        let secret = random_hex(32);
        let r = sqlx::query(
            "UPDATE api_keys SET secret_hash = $1 WHERE id = $2 AND cancelled_at IS NULL \
             AND (expires_at IS NULL OR expires_at > $3)",
        )
        .bind(&hash_secret(&secret)[..])
        .bind(id)
        .bind(now_ms)
        .execute(&self.writer)
        .await?;
        Ok((r.rows_affected() == 1).then(|| format!("kerf_{id}_{secret}")))
    }

    /// Sets a key's weight in fair sharing (see `claim`).
    pub async fn set_key_weight(&self, id: &str, weight: f64) -> Result<(), StoreError> {
        sqlx::query("UPDATE api_keys SET weight = $1 WHERE id = $2")
            .bind(weight)
            .bind(id)
            .execute(&self.writer)
            .await?;
        Ok(())
    }

    /// The browser origins a key is limited to, in the order they were added (none: the key
    /// is not limited).
    pub async fn key_origins(&self, id: &str) -> Result<Vec<String>, StoreError> {
        Ok(
            sqlx::query("SELECT origin FROM key_origins WHERE key_id = $1 ORDER BY rowid")
                .bind(id)
                .fetch_all(&self.pool)
                .await?
                .iter()
                .map(|r| r.get("origin"))
                .collect(),
        )
    }

    /// Whether some key that is not revoked allows `origin` (the union a CORS preflight is
    /// answered for).
    pub async fn origin_allowed(&self, origin: &str) -> Result<bool, StoreError> {
        Ok(sqlx::query(
            "SELECT 1 FROM key_origins o JOIN api_keys k ON k.id = o.key_id \
             WHERE o.origin = $1 AND k.cancelled_at IS NULL LIMIT 1",
        )
        .bind(origin)
        .fetch_optional(&self.pool)
        .await?
        .is_some())
    }

    /// Adds an origin to a key's list (already there: nothing changes).
    pub async fn add_key_origin(&self, id: &str, origin: &str) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO key_origins (key_id, origin) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        )
        .bind(id)
        .bind(origin)
        .execute(&self.writer)
        .await?;
        Ok(())
    }

    /// Removes an origin from a key's list; false when it was not there.
    pub async fn remove_key_origin(&self, id: &str, origin: &str) -> Result<bool, StoreError> {
        let r = sqlx::query("DELETE FROM key_origins WHERE key_id = $1 AND origin = $2")
            .bind(id)
            .bind(origin)
            .execute(&self.writer)
            .await?;
        Ok(r.rows_affected() == 1)
    }
}

/// Inserts a key (within the account's cap when `capped`) on `conn`, inside the caller's write
/// transaction.
async fn insert_key(
    conn: &mut sqlx::AnyConnection,
    new: &NewKey,
    capped: bool,
    now_ms: i64,
) -> Result<Result<(ApiKey, String), CreateRefusal>, StoreError> {
    let id = random_hex(8);
    let secret = random_hex(32);
    let inserted = sqlx::query(
        "INSERT INTO api_keys (id, account_id, secret_hash, reference, key_type, parallelism, is_trial, expires_at, created_at, email) \
         SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 \
         WHERE $11 = 0 OR (SELECT COUNT(*) FROM api_keys WHERE account_id = $12 AND cancelled_at IS NULL \
               AND (expires_at IS NULL OR expires_at > $13)) < (SELECT key_cap FROM accounts WHERE id = $14)",
    )
    .bind(&id)
    .bind(new.account_id)
    .bind(&hash_secret(&secret)[..])
    .bind(&new.reference)
    .bind(new.key_type.as_str())
    .bind(new.parallelism)
    .bind(super::flag(new.is_trial))
    .bind(new.expires_at)
    .bind(now_ms)
    .bind(&new.email)
    .bind(super::flag(capped))
    .bind(new.account_id)
    .bind(now_ms)
    .bind(new.account_id)
    .execute(&mut *conn)
    .await?;
    if inserted.rows_affected() == 0 {
        let cap: i64 = sqlx::query("SELECT key_cap FROM accounts WHERE id = $1")
            .bind(new.account_id)
            .fetch_one(&mut *conn)
            .await?
            .get("key_cap");
        return Ok(Err(CreateRefusal::CapReached { cap }));
    }
    let key = ApiKey {
        id: id.clone(),
        account_id: new.account_id,
        key_type: new.key_type,
        reference: new.reference.clone(),
        parallelism: new.parallelism,
        expires_at: new.expires_at,
        cancelled_at: None,
        is_trial: new.is_trial,
        email: new.email.clone(),
        weight: 1.0,
    };
    Ok(Ok((key, format!("kerf_{id}_{secret}"))))
}
