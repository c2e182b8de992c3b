//! Accounts' plans (DESIGN 5.9): included nesting minutes per 30-day period, the active-key
//! cap, fairness and overage switches, trial flags and a balance; and the nesting time an
//! account's jobs used, which the allowance falls by.

use super::{Store, StoreError};
use sqlx::Row;

/// A plan period: 30 days, counted from the account's period start.
pub const PERIOD_MS: i64 = 30 * 24 * 3600 * 1000;

/// An account and its plan.
#[derive(Clone, Debug, PartialEq)]
pub struct AccountPlan {
    pub account_id: i64,
    pub name: String,
    pub included_minutes: f64,
    pub key_cap: i64,
    /// Unix ms where the first period starts (the account's creation unless set).
    pub period_start: i64,
    pub fairness_enabled: bool,
    pub overage_enabled: bool,
    pub is_on_trial: bool,
    pub has_had_trial: bool,
    pub has_trial_request: bool,
    pub requires_payment: bool,
    /// The account's credit balance (RemainingCredit).
    pub credit: f64,
    pub paid_until: Option<i64>,
}

impl AccountPlan {
    /// The period that holds `now_ms`: [start, end).
    pub fn period_at(&self, now_ms: i64) -> (i64, i64) {
        let n = (now_ms - self.period_start).max(0) / PERIOD_MS;
        let start = self.period_start + n * PERIOD_MS;
        (start, start + PERIOD_MS)
    }
}

/// A change to a plan: each field given is set, the others stay.
#[derive(Clone, Debug, Default)]
pub struct PlanChange {
    pub included_minutes: Option<f64>,
    pub key_cap: Option<i64>,
    pub period_start: Option<i64>,
    pub fairness_enabled: Option<bool>,
    pub overage_enabled: Option<bool>,
    pub is_on_trial: Option<bool>,
    pub has_had_trial: Option<bool>,
    pub has_trial_request: Option<bool>,
    pub requires_payment: Option<bool>,
    pub credit: Option<f64>,
    pub paid_until: Option<i64>,
}

/// What an account's nests used in a period.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PeriodUsage {
    /// Seconds from start to end of each nest (2D and 1D, not exports) that finished in the
    /// period, Completed or Failed.
    pub nesting_seconds: f64,
    pub jobs: i64,
}

pub(super) fn plan_of(r: &sqlx::any::AnyRow) -> AccountPlan {
    let flag = |name: &str| r.get::<i64, _>(name) != 0;
    AccountPlan {
        account_id: r.get("id"),
        name: r.get("name"),
        included_minutes: r.get("included_minutes"),
        key_cap: r.get("key_cap"),
        period_start: r
            .get::<Option<i64>, _>("period_start")
            .unwrap_or_else(|| r.get("created_at")),
        fairness_enabled: flag("fairness_enabled"),
        overage_enabled: flag("overage_enabled"),
        is_on_trial: flag("is_on_trial"),
        has_had_trial: flag("has_had_trial"),
        has_trial_request: flag("has_trial_request"),
        requires_payment: flag("requires_payment"),
        credit: r.get("credit"),
        paid_until: r.get("paid_until"),
    }
}

impl Store {
    /// The account `id` and its plan.
    pub async fn plan(&self, account_id: i64) -> Result<Option<AccountPlan>, StoreError> {
        Ok(sqlx::query("SELECT * FROM accounts WHERE id = $1")
            .bind(account_id)
            .fetch_optional(&self.pool)
            .await?
            .map(|r| plan_of(&r)))
    }

    /// Every account, oldest first.
    pub async fn plans(&self) -> Result<Vec<AccountPlan>, StoreError> {
        Ok(sqlx::query("SELECT * FROM accounts ORDER BY id")
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(plan_of)
            .collect())
    }

    /// Applies `change` to account `id`'s plan; false when there is no such account.
    pub async fn set_plan(&self, account_id: i64, change: &PlanChange) -> Result<bool, StoreError> {
        let r = sqlx::query(
            "UPDATE accounts SET included_minutes = COALESCE($1, included_minutes), \
             key_cap = COALESCE($2, key_cap), period_start = COALESCE($3, period_start), \
             fairness_enabled = COALESCE($4, fairness_enabled), overage_enabled = COALESCE($5, overage_enabled), \
             is_on_trial = COALESCE($6, is_on_trial), has_had_trial = COALESCE($7, has_had_trial), \
             has_trial_request = COALESCE($8, has_trial_request), requires_payment = COALESCE($9, requires_payment), \
             credit = COALESCE($10, credit), paid_until = COALESCE($11, paid_until) WHERE id = $12",
        )
        .bind(change.included_minutes)
        .bind(change.key_cap)
        .bind(change.period_start)
        .bind(change.fairness_enabled.map(super::flag))
        .bind(change.overage_enabled.map(super::flag))
        .bind(change.is_on_trial.map(super::flag))
        .bind(change.has_had_trial.map(super::flag))
        .bind(change.has_trial_request.map(super::flag))
        .bind(change.requires_payment.map(super::flag))
        .bind(change.credit)
        .bind(change.paid_until)
        .bind(account_id)
        .execute(&self.writer)
        .await?;
        Ok(r.rows_affected() == 1)
    }

    /// What account `id`'s nests that finished in [from, to) used.
    pub async fn usage(
        &self,
        account_id: i64,
        from: i64,
        to: i64,
    ) -> Result<PeriodUsage, StoreError> {
        let r = sqlx::query(
            "SELECT CAST(COALESCE(SUM(j.completed_at - j.started_at), 0) AS BIGINT) AS ms, COUNT(*) AS n \
             FROM jobs j JOIN api_keys k ON k.id = j.api_key_id \
             WHERE k.account_id = $1 AND j.kind <> 'export' AND j.state IN ('Completed', 'Failed') \
               AND j.started_at IS NOT NULL AND j.completed_at >= $2 AND j.completed_at < $3",
        )
        .bind(account_id)
        .bind(from)
        .bind(to)
        .fetch_one(&self.pool)
        .await?;
        Ok(PeriodUsage {
            nesting_seconds: r.get::<i64, _>("ms") as f64 / 1000.0,
            jobs: r.get("n"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_period_that_holds_a_time_starts_a_whole_number_of_periods_in() {
        let plan = AccountPlan {
            account_id: 1,
            name: "a".into(),
            included_minutes: 600.0,
            key_cap: 10,
            period_start: 1_000,
            fairness_enabled: false,
            overage_enabled: false,
            is_on_trial: false,
            has_had_trial: false,
            has_trial_request: false,
            requires_payment: false,
            credit: 0.0,
            paid_until: None,
        };
        assert_eq!(plan.period_at(1_000), (1_000, 1_000 + PERIOD_MS));
        assert_eq!(
            plan.period_at(1_000 + PERIOD_MS - 1),
            (1_000, 1_000 + PERIOD_MS)
        );
        assert_eq!(
            plan.period_at(1_000 + 2 * PERIOD_MS + 5),
            (1_000 + 2 * PERIOD_MS, 1_000 + 3 * PERIOD_MS)
        );
        // before the start: the first period
        assert_eq!(plan.period_at(0), (1_000, 1_000 + PERIOD_MS));
    }
}
