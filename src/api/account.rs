//! The caller's key and account: GET /v1/auth/validate, GET /v1/apiKey/validUntil,
//! GET /v1/status, GET /usage/fairness, and the account's recent jobs (GET /admin/jobs).

use super::auth::Caller;
use super::error::ApiError;
use super::keys::Admin;
use super::AppState;
use crate::store::{now_ms, JobState};
use crate::wire;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::Json;

/// Confirms the key is active and says whose it is.
#[utoipa::path(get, path = "/v1/auth/validate", tag = "account",
    responses(
        (status = 200, description = "the key is active", body = wire::AuthValidation),
        (status = 401, description = "missing, unknown, expired or cancelled key", body = wire::ErrorBody),
    ),
    security(("bearer" = [])))]
pub async fn validate(Caller(key): Caller) -> Json<wire::AuthValidation> {
    Json(wire::AuthValidation {
        valid: true,
        user_id: key.account_id,
        key_type: key.key_type.as_str().into(),
    })
}

/// When the calling key expires (9999-12-31T23:59:59Z when it never does).
#[utoipa::path(get, path = "/v1/apiKey/validUntil", tag = "account",
    responses((status = 200, description = "the key's expiry", body = wire::KeyExpiry)),
    security(("bearer" = [])))]
pub async fn valid_until(Caller(key): Caller) -> Json<wire::KeyExpiry> {
    Json(wire::KeyExpiry {
        expires: key
            .expires_at
            .map(wire::utc)
            .unwrap_or_else(|| wire::NEVER_EXPIRES.into()),
    })
}

/// The caller's account: trial flags and the current period's allowance, credit and dates.
#[utoipa::path(get, path = "/v1/status", tag = "account",
    responses((status = 200, description = "the account's subscription status", body = wire::SubscriptionStatus)),
    security(("bearer" = [])))]
pub async fn status(
    State(state): State<AppState>,
    Caller(key): Caller,
) -> Result<Json<wire::SubscriptionStatus>, ApiError> {
    let plan = state
        .store
        .plan(key.account_id)
        .await?
        .ok_or_else(|| ApiError::not_found("the key's account no longer exists"))?;
    let now = now_ms();
    let (start, end) = plan.period_at(now);
    let used = state.store.usage(key.account_id, start, end).await?;
    let left = (plan.included_minutes * 60.0 - used.nesting_seconds).max(0.0);
    Ok(Json(wire::SubscriptionStatus {
        has_had_trail: plan.has_had_trial,
        is_on_trial: plan.is_on_trial,
        has_trial_request: plan.has_trial_request,
        requires_payment: plan.requires_payment,
        nesting_account_balance: wire::NestingAccountBalance {
            user_id: plan.account_id,
            start_date: wire::utc(start),
            end_date: wire::utc(end),
            paid_until: plan.paid_until.map(wire::utc),
            remaining_allowance_seconds: left,
            remaining_allowance: left / 60.0,
            remaining_credit: plan.credit,
            has_active_subscription: !plan.requires_payment
                && plan.paid_until.is_none_or(|p| p > now),
        },
    }))
}

/// The account's fairness bookkeeping: plan figures and one row per active key (Admin only).
#[utoipa::path(get, path = "/usage/fairness", tag = "account",
    responses(
        (status = 200, description = "the account's fairness usage", body = wire::FairnessUsageResponse),
        (status = 403, description = "a Usage key", body = wire::ErrorBody),
    ),
    security(("bearer" = [])))]
pub async fn fairness(
    State(state): State<AppState>,
    Admin(key): Admin,
) -> Result<Json<wire::FairnessUsageResponse>, ApiError> {
    let book = state
        .store
        .fairness_book(key.account_id, now_ms())
        .await?
        .ok_or_else(|| ApiError::not_found("the key's account no longer exists"))?;
    let minutes = |ms: i64| ms as f64 / 60_000.0;
    Ok(Json(wire::FairnessUsageResponse {
        fairness_enabled: book.fairness_enabled,
        overage_enabled: book.overage_enabled,
        included_minutes: book.included_minutes,
        shared_burst_minutes: book.shared_burst_minutes(),
        shared_burst_drawn_minutes: book.burst_drawn_minutes(),
        keys: book
            .active_keys()
            .map(|k| wire::FairnessKeyUsage {
                api_key_id: k.api_key_id.clone(),
                weight: k.weight,
                consumed_minutes: minutes(k.consumed_ms),
                reserved_minutes: minutes(k.reserved_ms),
                overage_minutes: minutes(k.overage_ms),
                counted_minutes: k.counted_minutes(),
                effective_floor_minutes: book.floor_minutes(k),
                sizing: book.sizing(k).as_str().into(),
            })
            .collect(),
    }))
}

/// The latest jobs of the account, newest first (kerf's own, for the dashboard; Admin only).
#[utoipa::path(get, path = "/admin/jobs", tag = "account", params(wire::JobListQuery),
    responses(
        (status = 200, description = "the account's latest jobs", body = wire::JobList),
        (status = 400, description = "Limit out of range", body = wire::ErrorBody),
        (status = 403, description = "a Usage key", body = wire::ErrorBody),
    ),
    security(("bearer" = [])))]
pub async fn recent_jobs(
    State(state): State<AppState>,
    Admin(key): Admin,
    query: Result<Query<wire::JobListQuery>, QueryRejection>,
) -> Result<Json<wire::JobList>, ApiError> {
    let Query(query) = query.map_err(|e| ApiError::bad_request(format!("query: {e}")))?;
    let limit = query.limit.unwrap_or(50);
    if !(1..=500).contains(&limit) {
        return Err(ApiError::field(
            "Limit",
            format!("must be from 1 to 500 (got {limit})"),
        ));
    }
    let jobs = state.store.recent_jobs(key.account_id, limit).await?;
    Ok(Json(wire::JobList {
        jobs: jobs
            .into_iter()
            .map(|j| {
                let nest2d = j.kind.starts_with(crate::jobs::run2d::KIND_PREFIX);
                wire::JobListEntry {
                    kind: if nest2d {
                        "2D nest"
                    } else if j.kind == crate::jobs::KIND_1D {
                        "1D cut plan"
                    } else if j.kind.starts_with(crate::jobs::run_quote::KIND_PREFIX) {
                        "Quote"
                    } else {
                        "Export"
                    }
                    .into(),
                    has_render: nest2d && j.state == JobState::Completed && j.has_result,
                    request_id: j.id,
                    api_key_id: j.api_key_id,
                    status: j.state.as_str().into(),
                    created_at: wire::utc(j.created_at),
                    started_at: j.started_at.map(wire::utc),
                    completed_at: j.completed_at.map(wire::utc),
                    error: j.error,
                }
            })
            .collect(),
    }))
}
