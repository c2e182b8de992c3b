//! 1D nesting (DESIGN 5.5): POST /v1/nesting/1D (validated in full before anything is queued)
//! and POST /v1/nesting/1D/result. Both answer errors with ResponseStatus naming each field.

use super::auth::{Caller, Submitter};
use super::error::{ApiError, Shape};
use super::nesting::{body_of, queue_job, required_id};
use super::AppState;
use crate::jobs::KIND_1D;
use crate::store::JobState;
use crate::wire::{self, cut1d};
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::Json;

/// Submit a 1D cutting plan: pieces of given lengths and quantities on stock lengths.
#[utoipa::path(post, path = "/v1/nesting/1D", tag = "nesting",
    request_body = cut1d::Nesting1DRequestBody,
    responses(
        (status = 200, description = "accepted", body = cut1d::ApiNesting1DResult),
        (status = 400, description = "invalid request; Errors and ResponseStatus.Errors name each field by JSON path", body = cut1d::ApiNesting1DResult),
        (status = 401, description = "API key missing or invalid", body = wire::ApiNestingResult),
        (status = 406, description = "Accept is not application/json", body = wire::ApiNestingResult),
        (status = 413, description = "body too large", body = cut1d::ApiNesting1DResult),
        (status = 429, description = "the key is at its limit of queued and running nests (Retry-After)", body = cut1d::ApiNesting1DResult),
    ),
    security(("bearer" = [])))]
pub async fn submit_1d(
    State(state): State<AppState>,
    Submitter(key): Submitter,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<cut1d::ApiNesting1DResult>, ApiError> {
    let shape = |e: ApiError| e.shaped(Shape::Submission1D);
    let body = body_of(body).map_err(shape)?;
    let req: cut1d::Nesting1DRequestBody =
        wire::parse_json(&body).map_err(|e| shape(ApiError::fields(vec![e])))?;
    let submission =
        cut1d::to_submission_1d(&req).map_err(|errors| shape(ApiError::fields(errors)))?;
    let id = queue_job(
        &state,
        &key,
        KIND_1D,
        &req,
        Some(&submission.webhook),
        true,
        submission.problem.max_time_s,
        submission.problem.pieces_asked(),
    )
    .await
    .map_err(shape)?;
    Ok(Json(cut1d::ApiNesting1DResult {
        base: wire::ApiNestingResult {
            request_id: id,
            error: None,
            errors: Vec::new(),
            warnings: Vec::new(),
        },
        response_status: None,
    }))
}

/// The plan of a Completed 1D job (the same body its webhook carried as Result).
#[utoipa::path(post, path = "/v1/nesting/1D/result", tag = "nesting",
    request_body = wire::RequestIdBody,
    responses(
        (status = 200, description = "the plan (Status Success), or Status Failure with StatusReport when nothing could be cut", body = cut1d::Nesting1DResult),
        (status = 400, description = "RequestId missing", body = cut1d::Nesting1DResult),
        (status = 404, description = "no such 1D job for this account, or not Completed yet", body = cut1d::Nesting1DResult),
    ),
    security(("bearer" = [])))]
pub async fn result_1d(
    State(state): State<AppState>,
    Caller(key): Caller,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<cut1d::Nesting1DResult>, ApiError> {
    let shape = |e: ApiError| e.shaped(Shape::Result1D);
    let body = body_of(body).map_err(shape)?;
    let q: wire::RequestIdBody =
        wire::parse_json(&body).map_err(|e| shape(ApiError::fields(vec![e])))?;
    let id = required_id(q.request_id, "RequestId").map_err(shape)?;
    let job = state
        .store
        .status_for_account(&id, key.account_id)
        .await
        .map_err(|e| shape(e.into()))?
        .filter(|j| j.kind == KIND_1D)
        .ok_or_else(|| {
            shape(ApiError::not_found(format!(
                "no 1D job {id} for this account"
            )))
        })?;
    if job.state != JobState::Completed {
        let why = match &job.error {
            Some(e) => format!("job {id} is {}: {e}", job.state.as_str()),
            None => format!(
                "job {id} is {}; its plan is here once it is Completed",
                job.state.as_str()
            ),
        };
        return Err(shape(ApiError::not_found(why)));
    }
    let stored = state
        .store
        .result(&id, None)
        .await
        .map_err(|e| shape(e.into()))?
        .ok_or_else(|| {
            shape(ApiError::internal(format!(
                "completed job {id} has no result"
            )))
        })?;
    let result: cut1d::Nesting1DResult =
        serde_json::from_str(&stored.layout).map_err(|e| shape(ApiError::internal(e)))?;
    Ok(Json(result))
}
