//! POST /v1/nesting/legacy (DESIGN 5.7): `{LegacyNestingXML, ResultsWebhookUri}`, the XML read
//! into the standard DxfNestingRequest (`wire::legacy`) and validated exactly as POST
//! /v1/nesting is, every error naming its element path; the nest runs as a standard one whose
//! deliveries are XML documents (`jobs::run2d::KIND_LEGACY`).

use super::auth::Submitter;
use super::error::{ApiError, Shape};
use super::nesting::{body_of, queue_job};
use super::AppState;
use crate::jobs::run2d::KIND_LEGACY;
use crate::wire::{self, legacy, FieldError, GeometryKind};
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::Json;

/// Submit a nest as a legacy XML document; its result is delivered as an XML document.
#[utoipa::path(post, path = "/v1/nesting/legacy", tag = "nesting",
    request_body = legacy::LegacyNestingRequest,
    responses(
        (status = 200, description = "accepted", body = wire::ApiNestingResult),
        (status = 400, description = "malformed XML, a wrong element or an invalid request; Errors name each element by its path (Base64NestingRequest/Parts/Base64Part[2]/Quantity)", body = wire::ApiNestingResult),
        (status = 401, description = "API key missing or invalid", body = wire::ApiNestingResult),
        (status = 406, description = "Accept is not application/json", body = wire::ApiNestingResult),
        (status = 413, description = "body too large", body = wire::ApiNestingResult),
        (status = 429, description = "the key is at its limit (Retry-After)", body = wire::ApiNestingResult),
    ),
    security(("bearer" = [])))]
pub async fn submit_legacy(
    State(state): State<AppState>,
    Submitter(key): Submitter,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<wire::ApiNestingResult>, ApiError> {
    let shape = |e: ApiError| e.shaped(Shape::Submission);
    let body = body_of(body).map_err(shape)?;
    let req: legacy::LegacyNestingRequest =
        wire::parse_json(&body).map_err(|e| shape(ApiError::fields(vec![e])))?;
    // reading the XML and importing every part's geometry: blocking work
    let converted = tokio::task::spawn_blocking(move || {
        let nesting = legacy::to_nesting_request(&req).map_err(|e| vec![e])?;
        let submission = wire::to_submission(&nesting, GeometryKind::Dxf).map_err(|errors| {
            errors
                .into_iter()
                .map(|e| FieldError {
                    field: legacy::element_path_of(&e.field),
                    message: e.message,
                })
                .collect::<Vec<_>>()
        })?;
        Ok::<_, Vec<FieldError>>((nesting, submission))
    })
    .await
    .map_err(|e| shape(ApiError::internal(e)))?;
    let (nesting, submission) = converted.map_err(|errors| shape(ApiError::fields(errors)))?;
    let id = queue_job(
        &state,
        &key,
        KIND_LEGACY,
        &nesting,
        submission.webhook.as_ref(),
        submission.start_now,
        submission.converted.problem.settings.max_run_time_s,
        submission.converted.problem.copies_asked(),
    )
    .await
    .map_err(shape)?;
    Ok(Json(wire::ApiNestingResult::accepted(
        id,
        submission.converted.warnings,
    )))
}
