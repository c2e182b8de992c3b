//! `kerf accounts create|list|show|set-plan`: accounts and their plans, for operators
//! (DESIGN 5.9). `create` prints the new account's id alone, so scripts can capture it.

use super::{block_on, open_store as open, timestamp};
use crate::store::{now_ms, PlanChange};
use anyhow::{Context, Result};

/// The plan options of `set-plan`; each one given is set, the others stay.
#[derive(clap::Args, Debug, Default)]
pub struct PlanArgs {
    /// Nesting minutes included per 30-day period.
    #[arg(long)]
    pub included_minutes: Option<f64>,
    /// Active keys the account may hold at once.
    #[arg(long)]
    pub key_cap: Option<i64>,
    /// Where the first 30-day period starts, RFC 3339.
    #[arg(long)]
    pub period_start: Option<String>,
    #[arg(long)]
    pub fairness: Option<bool>,
    #[arg(long)]
    pub overage: Option<bool>,
    #[arg(long)]
    pub on_trial: Option<bool>,
    #[arg(long)]
    pub had_trial: Option<bool>,
    #[arg(long)]
    pub trial_request: Option<bool>,
    #[arg(long)]
    pub requires_payment: Option<bool>,
    /// The account's credit balance.
    #[arg(long)]
    pub credit: Option<f64>,
    /// Paid until, RFC 3339.
    #[arg(long)]
    pub paid_until: Option<String>,
}

pub fn create(database: &str, name: &str) -> Result<()> {
    if name.trim().is_empty() {
        anyhow::bail!("--name: must not be empty");
    }
    let id = block_on(async {
        let store = open(database).await?;
        Ok(store.create_account(name.trim(), now_ms()).await?)
    })?;
    println!("{id}");
    Ok(())
}

pub fn list(database: &str) -> Result<()> {
    let plans = block_on(async { Ok(open(database).await?.plans().await?) })?;
    println!(
        "{:>4}  {:<20} {:>9} {:>7} {:>8} {:>7}",
        "id", "name", "minutes", "keycap", "fairness", "overage"
    );
    for p in plans {
        println!(
            "{:>4}  {:<20} {:>9} {:>7} {:>8} {:>7}",
            p.account_id,
            p.name,
            p.included_minutes,
            p.key_cap,
            p.fairness_enabled,
            p.overage_enabled
        );
    }
    Ok(())
}

pub fn show(database: &str, account: i64) -> Result<()> {
    let now = now_ms();
    let (plan, (start, end), usage, keys) = block_on(async {
        let store = open(database).await?;
        let plan = store
            .plan(account)
            .await?
            .with_context(|| format!("--account {account}: no such account"))?;
        let (start, end) = plan.period_at(now);
        let usage = store.usage(account, start, end).await?;
        let keys = store.account_keys(account).await?;
        Ok((plan, (start, end), usage, keys))
    })?;
    let utc = crate::wire::utc;
    println!("account {} ({})", plan.account_id, plan.name);
    println!(
        "  period {} to {}: {:.1} of {} included minutes used by {} nests",
        utc(start),
        utc(end),
        usage.nesting_seconds / 60.0,
        plan.included_minutes,
        usage.jobs
    );
    println!(
        "  key cap {}, fairness {}, overage {}, trial {} (had one: {}, requested: {}), requires payment {}, credit {}, paid until {}",
        plan.key_cap,
        plan.fairness_enabled,
        plan.overage_enabled,
        plan.is_on_trial,
        plan.has_had_trial,
        plan.has_trial_request,
        plan.requires_payment,
        plan.credit,
        plan.paid_until.map(utc).unwrap_or_else(|| "-".into())
    );
    for k in keys {
        let state = if k.cancelled_at.is_some() {
            "revoked"
        } else if k.is_expired(now) {
            "expired"
        } else {
            "active"
        };
        println!(
            "  key {} {:<5} {:<7} parallelism {} weight {} {}",
            k.id,
            k.key_type.as_str(),
            state,
            k.parallelism,
            k.weight,
            k.reference
        );
    }
    Ok(())
}

pub fn set_plan(database: &str, account: i64, a: &PlanArgs) -> Result<()> {
    if a.included_minutes
        .is_some_and(|m| !(m >= 0.0 && m.is_finite()))
    {
        anyhow::bail!("--included-minutes: must be 0 or more");
    }
    if a.key_cap.is_some_and(|c| c < 1) {
        anyhow::bail!("--key-cap: must be at least 1");
    }
    let change = PlanChange {
        included_minutes: a.included_minutes,
        key_cap: a.key_cap,
        period_start: a
            .period_start
            .as_deref()
            .map(|s| timestamp("period-start", s))
            .transpose()?,
        fairness_enabled: a.fairness,
        overage_enabled: a.overage,
        is_on_trial: a.on_trial,
        has_had_trial: a.had_trial,
        has_trial_request: a.trial_request,
        requires_payment: a.requires_payment,
        credit: a.credit,
        paid_until: a
            .paid_until
            .as_deref()
            .map(|s| timestamp("paid-until", s))
            .transpose()?,
    };
    let found = block_on(async { Ok(open(database).await?.set_plan(account, &change).await?) })?;
    if !found {
        anyhow::bail!("--account {account}: no such account");
    }
    show(database, account)
}
