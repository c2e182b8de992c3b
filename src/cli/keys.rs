//! `kerf keys create`: a new key on one of the store's accounts, printed alone on standard
//! output so scripts can capture it.

use crate::store::{now_ms, KeyType, NewKey};
use anyhow::Result;

pub struct CreateArgs {
    pub database: String,
    pub key_type: String,
    pub reference: String,
    pub parallelism: i64,
    pub expires: Option<String>,
    /// None: the store's first account (made if there is none).
    pub account: Option<i64>,
}

pub fn create(a: CreateArgs) -> Result<()> {
    let key_type = KeyType::parse(&a.key_type).map_err(|e| anyhow::anyhow!("--type: {e}"))?;
    if a.parallelism < 1 {
        anyhow::bail!("--parallelism: must be at least 1 (got {})", a.parallelism);
    }
    let expires_at = a
        .expires
        .as_deref()
        .map(|s| super::timestamp("expires", s))
        .transpose()?;
    let token = super::block_on(async {
        let store = super::open_store(&a.database).await?;
        let account_id = match a.account {
            Some(id) if store.account_exists(id).await? => id,
            Some(id) => anyhow::bail!("--account {id}: no such account"),
            None => match store.first_account().await? {
                Some(id) => id,
                None => store.create_account("default", now_ms()).await?,
            },
        };
        let (_, token) = store
            .create_key(
                &NewKey {
                    account_id,
                    key_type,
                    reference: a.reference.clone(),
                    parallelism: a.parallelism,
                    expires_at,
                    is_trial: false,
                    email: String::new(),
                },
                now_ms(),
            )
            .await?;
        Ok(token)
    })?;
    println!("{token}");
    Ok(())
}
