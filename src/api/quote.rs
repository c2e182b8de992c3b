//! Quote nesting (DESIGN 5.6): POST /v1/nesting/quotenesting (DXF parts) and
//! /geometryquotenesting (JSON contours), validated exactly as POST /v1/nesting is, plus
//! ResponseUnits; and GET /v1/nesting/exportquotenest, the quote export, checked in full at
//! the call and queued as an export job. Continue needs nothing of its own: the quote's runner
//! reads a stop as "end this sub-nest" (`jobs::run_quote`).

use super::auth::{Caller, Submitter};
use super::error::{ApiError, Shape};
use super::exports::{required_query, webhook_query};
use super::nesting::{body_of, queue_job};
use super::AppState;
use crate::jobs::{run_quote, KIND_EXPORT};
use crate::store::{now_ms, JobState, NewJob};
use crate::wire::{self, exports::ExportJob, quote as wq, GeometryKind};
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::Json;
use std::collections::HashMap;

async fn submit(
    state: AppState,
    Submitter(key): Submitter,
    body: Result<Bytes, BytesRejection>,
    geometry: GeometryKind,
) -> Result<Json<wire::ApiNestingResult>, ApiError> {
    let shape = |e: ApiError| e.shaped(Shape::Submission);
    let body = body_of(body).map_err(shape)?;
    let req: wq::QuoteNestingRequest = if body.iter().all(u8::is_ascii_whitespace) {
        Default::default()
    } else {
        wire::parse_json(&body).map_err(|e| shape(ApiError::fields(vec![e])))?
    };
    // conversion imports every part's geometry: blocking work, off the async threads
    let (req, quote) = tokio::task::spawn_blocking(move || {
        let q = wq::to_quote_submission(&req, geometry);
        (req, q)
    })
    .await
    .map_err(|e| shape(ApiError::internal(e)))?;
    let quote = quote.map_err(|errors| shape(ApiError::fields(errors)))?;
    let id = queue_job(
        &state,
        &key,
        &run_quote::kind_for(geometry),
        &req,
        quote.submission.webhook.as_ref(),
        quote.submission.start_now,
        quote.max_run_time_s(),
        quote.submission.converted.problem.copies_asked(),
    )
    .await
    .map_err(shape)?;
    Ok(Json(wire::ApiNestingResult::accepted(
        id,
        quote.submission.converted.warnings,
    )))
}

/// Submit a quote of DXF parts: each part is priced alone on its best sheet, one sub-nest
/// after another; an InterimResult per sub-nest, then Complete, to ResultsWebhookUri.
#[utoipa::path(post, path = "/v1/nesting/quotenesting", tag = "quotes",
    request_body = wq::QuoteNestingRequest,
    responses(
        (status = 200, description = "accepted", body = wire::ApiNestingResult),
        (status = 400, description = "invalid request; Errors name each field by JSON path", body = wire::ApiNestingResult),
        (status = 401, description = "API key missing or invalid", body = wire::ApiNestingResult),
        (status = 406, description = "Accept is not application/json", body = wire::ApiNestingResult),
        (status = 413, description = "body too large", body = wire::ApiNestingResult),
        (status = 429, description = "the key is at its limit (Retry-After)", body = wire::ApiNestingResult),
    ),
    security(("bearer" = [])))]
pub async fn submit_quote(
    State(state): State<AppState>,
    caller: Submitter,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<wire::ApiNestingResult>, ApiError> {
    submit(state, caller, body, GeometryKind::Dxf).await
}

/// Submit a quote whose parts are JSON contours (DESIGN 5.4) unless a part says otherwise.
#[utoipa::path(post, path = "/v1/nesting/geometryquotenesting", tag = "quotes",
    request_body = wq::QuoteNestingRequest,
    responses(
        (status = 200, description = "accepted", body = wire::ApiNestingResult),
        (status = 400, description = "invalid request", body = wire::ApiNestingResult),
        (status = 401, description = "API key missing or invalid", body = wire::ApiNestingResult),
        (status = 406, description = "Accept is not application/json", body = wire::ApiNestingResult),
        (status = 413, description = "body too large", body = wire::ApiNestingResult),
        (status = 429, description = "the key is at its limit (Retry-After)", body = wire::ApiNestingResult),
    ),
    security(("bearer" = [])))]
pub async fn submit_geometry_quote(
    State(state): State<AppState>,
    caller: Submitter,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<wire::ApiNestingResult>, ApiError> {
    submit(state, caller, body, GeometryKind::Json).await
}

/// Documents the quote export's query (read as a map: aliases and any letter case).
#[derive(Debug, Default, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct QuoteExportQuery {
    /// The completed quote (alias NestIdentifier).
    #[param(rename = "RequestId", min_length = 1)]
    pub request_id: String,
    /// Where the export is POSTed: an absolute HTTPS URL.
    #[param(rename = "WebHookUri", min_length = 1)]
    pub web_hook_uri: String,
}

/// Queues the export of a completed quote: `{RequestId, Nests: [QuoteNestResult with
/// Placements]}` is POSTed to WebHookUri (or the fixed failure body if it fails). Once per
/// quote (409 on a repeat; a failed one may be asked for again).
#[utoipa::path(get, path = "/v1/nesting/exportquotenest", tag = "quotes", params(QuoteExportQuery),
    responses(
        (status = 200, description = "queued", body = wire::ExportAccepted),
        (status = 400, description = "a query parameter missing or wrong", body = wire::ErrorBody),
        (status = 404, description = "no such quote for this account, or it has not completed", body = wire::ErrorBody),
        (status = 409, description = "the quote export was already requested", body = wire::ErrorBody),
    ),
    security(("bearer" = [])))]
pub async fn export_quote(
    State(state): State<AppState>,
    Caller(key): Caller,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Json<wire::ExportAccepted>, ApiError> {
    let mut errors = Vec::new();
    let id = required_query(
        &q,
        &["RequestId", "NestIdentifier"],
        "the RequestId of the quote, returned at submission",
        &mut errors,
    );
    let hook = webhook_query(&state, &q, &mut errors);
    let (Some(id), Some(hook)) = (id, hook) else {
        return Err(ApiError::fields(errors));
    };
    let id = id.trim().to_string();
    let job = state
        .store
        .status_for_account(&id, key.account_id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no job {id} for this account")))?;
    if !job.kind.starts_with(run_quote::KIND_PREFIX) {
        return Err(ApiError::not_found(format!(
            "job {id} is not a quote (its exports are at /v1/nesting/export)"
        )));
    }
    let Some(result_id) = job.result_id.filter(|_| job.state == JobState::Completed) else {
        let state_name = match job.state {
            JobState::Held => JobState::Queued,
            s => s,
        };
        return Err(ApiError::not_found(format!(
            "quote {id} has not completed (it is {}): its export can be asked for once it has",
            state_name.as_str()
        )));
    };
    let spec = ExportJob {
        request_id: id.clone(),
        result_id: result_id.clone(),
        response_type: wq::QUOTE_EXPORT.into(),
        settings: None,
        cache_minutes: None,
    };
    let export_id = uuid::Uuid::new_v4().to_string();
    let queued = state
        .store
        .enqueue_export(
            &NewJob {
                id: &export_id,
                api_key_id: &key.id,
                kind: KIND_EXPORT,
                request: &wire::to_json(&spec),
                webhook_uri: Some(hook.as_str()),
                held: false,
                reserved_ms: 0,
                size: 0,
            },
            &result_id,
            wq::QUOTE_EXPORT,
            now_ms(),
        )
        .await?;
    if !queued {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!("the export of quote {id} was already requested (once per quote; a failed one may be asked for again)"),
        ));
    }
    state.wake.exports.notify_one();
    tracing::info!(export = %export_id, job = %id, "quote export queued");
    Ok(Json(wire::ExportAccepted {
        success: true,
        error: None,
    }))
}
