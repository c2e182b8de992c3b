//! The fairness book of an account (see `crate::fairness`), loaded from the jobs rows: what
//! each active key's nests consumed in the current period, what its queued and running nests
//! reserve, and which of those minutes are overage. Admission loads it inside the transaction
//! that inserts the job; GET /usage/fairness loads it on its own.

use super::plans::plan_of;
use super::{AccountPlan, Store, StoreError};
use crate::fairness::{Admitted, FairnessBook, KeyShare, Refused};
use sqlx::{AnyConnection, Row};

/// Loads account `plan`'s book at `now_ms`.
pub(super) async fn load_book(
    conn: &mut AnyConnection,
    plan: &AccountPlan,
    now_ms: i64,
) -> Result<FairnessBook, StoreError> {
    let (start, end) = plan.period_at(now_ms);
    let rows = sqlx::query(
        "SELECT k.id, k.weight, \
           CASE WHEN k.cancelled_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > $4) THEN 1 ELSE 0 END AS active, \
           CAST(COALESCE((SELECT SUM(j.completed_at - j.started_at) FROM jobs j WHERE j.api_key_id = k.id \
             AND j.kind <> 'export' AND j.state IN ('Completed', 'Failed') AND j.started_at IS NOT NULL \
             AND j.completed_at >= $1 AND j.completed_at < $2), 0) AS BIGINT) AS consumed, \
           CAST(COALESCE((SELECT SUM(j.completed_at - j.started_at) FROM jobs j WHERE j.api_key_id = k.id \
             AND j.kind <> 'export' AND j.state IN ('Completed', 'Failed') AND j.started_at IS NOT NULL \
             AND j.completed_at >= $1 AND j.completed_at < $2 AND j.overage = 1), 0) AS BIGINT) AS overage, \
           CAST(COALESCE((SELECT SUM(j.reserved_ms) FROM jobs j WHERE j.api_key_id = k.id \
             AND j.kind <> 'export' AND j.state IN ('Queued', 'Running')), 0) AS BIGINT) AS reserved, \
           CAST(COALESCE((SELECT SUM(j.reserved_ms) FROM jobs j WHERE j.api_key_id = k.id \
             AND j.kind <> 'export' AND j.state IN ('Queued', 'Running') AND j.overage = 1), 0) AS BIGINT) AS reserved_overage \
         FROM api_keys k WHERE k.account_id = $3 \
         ORDER BY k.created_at, k.id",
    )
    .bind(start)
    .bind(end)
    .bind(plan.account_id)
    .bind(now_ms)
    .fetch_all(&mut *conn)
    .await?;
    Ok(FairnessBook {
        fairness_enabled: plan.fairness_enabled,
        overage_enabled: plan.overage_enabled,
        included_minutes: plan.included_minutes,
        period: (start, end),
        now_ms,
        // inactive keys that neither used nor reserve anything this period do not matter
        keys: rows
            .iter()
            .map(|r| KeyShare {
                api_key_id: r.get("id"),
                active: r.get::<i64, _>("active") != 0,
                weight: r.get("weight"),
                consumed_ms: r.get("consumed"),
                overage_ms: r.get("overage"),
                reserved_ms: r.get("reserved"),
                reserved_overage_ms: r.get("reserved_overage"),
            })
            .filter(|k| k.active || k.consumed_ms > 0 || k.reserved_ms > 0)
            .collect(),
    })
}

/// The admission gate of a nest of key `api_key_id` that reserves `reserve_ms`, read inside
/// the caller's transaction. A key that is not in the store (store tests' bare ids) or whose
/// plan has fairness off is not gated.
pub(super) async fn gate(
    conn: &mut AnyConnection,
    api_key_id: &str,
    reserve_ms: i64,
    now_ms: i64,
) -> Result<Result<Admitted, Refused>, StoreError> {
    let plan = sqlx::query(
        "SELECT a.* FROM accounts a JOIN api_keys k ON k.account_id = a.id WHERE k.id = $1",
    )
    .bind(api_key_id)
    .fetch_optional(&mut *conn)
    .await?
    .map(|r| plan_of(&r));
    let Some(plan) = plan.filter(|p| p.fairness_enabled) else {
        return Ok(Ok(Admitted::Ungated));
    };
    let book = load_book(conn, &plan, now_ms).await?;
    // the soonest any of the account's reservations can end: a running nest at its start
    // plus its reservation, a queued one (even one started before and put back) when started
    // now and run to its limit
    let soonest: Option<i64> = sqlx::query(
        "SELECT MIN(CASE WHEN j.state = 'Running' THEN j.started_at ELSE $1 END + j.reserved_ms) AS t FROM jobs j \
         JOIN api_keys k ON k.id = j.api_key_id \
         WHERE k.account_id = $2 AND j.kind <> 'export' AND j.state IN ('Queued', 'Running')",
    )
    .bind(now_ms)
    .bind(plan.account_id)
    .fetch_one(&mut *conn)
    .await?
    .get("t");
    Ok(book.admit(api_key_id, reserve_ms, soonest))
}

impl Store {
    /// The fairness book of account `account_id` now; None when there is no such account.
    pub async fn fairness_book(
        &self,
        account_id: i64,
        now_ms: i64,
    ) -> Result<Option<FairnessBook>, StoreError> {
        let Some(plan) = self.plan(account_id).await? else {
            return Ok(None);
        };
        let mut conn = self.pool.acquire().await?;
        Ok(Some(load_book(&mut conn, &plan, now_ms).await?))
    }
}
