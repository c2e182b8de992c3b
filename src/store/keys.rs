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

fn key_of(r: &sqlx::sqlite::SqliteRow) -> ApiKey {
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
    }
}

impl Store {
    pub async fn create_account(&self, name: &str, now_ms: i64) -> Result<i64, StoreError> {
        Ok(
            sqlx::query("INSERT INTO accounts (name, created_at) VALUES (?, ?) RETURNING id")
                .bind(name)
                .bind(now_ms)
                .fetch_one(&self.pool)
                .await?
                .get("id"),
        )
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
        let id = random_hex(8);
        let secret = random_hex(32);
        sqlx::query(
            "INSERT INTO api_keys (id, account_id, secret_hash, reference, key_type, parallelism, is_trial, expires_at, created_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&id)
        .bind(new.account_id)
        .bind(&hash_secret(&secret)[..])
        .bind(&new.reference)
        .bind(new.key_type.as_str())
        .bind(new.parallelism)
        .bind(new.is_trial)
        .bind(new.expires_at)
        .bind(now_ms)
        .execute(&self.pool)
        .await?;
        let key = ApiKey {
            id: id.clone(),
            account_id: new.account_id,
            key_type: new.key_type,
            reference: new.reference.clone(),
            parallelism: new.parallelism,
            expires_at: new.expires_at,
            cancelled_at: None,
            is_trial: new.is_trial,
        };
        Ok((key, format!("kerf_{id}_{secret}")))
    }

    /// On a store with no account: creates one and an Admin key, and returns the key's token
    /// (to print once). None when an account exists already.
    pub async fn bootstrap(
        &self,
        parallelism: i64,
        now_ms: i64,
    ) -> Result<Option<String>, StoreError> {
        if self.first_account().await?.is_some() {
            return Ok(None);
        }
        let account_id = self.create_account("default", now_ms).await?;
        let (_, token) = self
            .create_key(
                &NewKey {
                    account_id,
                    key_type: KeyType::Admin,
                    reference: "first Admin key".into(),
                    parallelism,
                    expires_at: None,
                    is_trial: false,
                },
                now_ms,
            )
            .await?;
        Ok(Some(token))
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
        let row = sqlx::query(
            "SELECT id, account_id, key_type, reference, parallelism, expires_at, cancelled_at, is_trial, \
             secret_hash FROM api_keys WHERE id = ?",
        )
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
        if key.expires_at.is_some_and(|e| e <= now_ms) {
            return Ok(Err(KeyRefusal::Expired));
        }
        Ok(Ok(key))
    }

    /// A key's record by its id.
    pub async fn key(&self, id: &str) -> Result<Option<ApiKey>, StoreError> {
        Ok(sqlx::query(
            "SELECT id, account_id, key_type, reference, parallelism, expires_at, cancelled_at, is_trial \
             FROM api_keys WHERE id = ?",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await?
        .map(|r| key_of(&r)))
    }

    pub async fn cancel_key(&self, id: &str, now_ms: i64) -> Result<bool, StoreError> {
        let r = sqlx::query(
            "UPDATE api_keys SET cancelled_at = ? WHERE id = ? AND cancelled_at IS NULL",
        )
        .bind(now_ms)
        .bind(id)
        .execute(&self.pool)
        .await?;
        Ok(r.rows_affected() == 1)
    }
}
