//! Pictures and exports of a finished 2D result. GET /v1/nesting/render/ draws the result
//! synchronously per the request's RenderSettings (and the labels of its
//! ReportSourceSettings); GET and POST /v1/nesting/export check an export request in full at
//! the call (DESIGN 5.3) and queue it as an export job, whose body the outbox POSTs to the
//! WebHookUri.

use super::auth::Caller;
use super::error::ApiError;
use super::nesting::{body_of, query_value, required_id, stored_result};
use super::AppState;
use crate::jobs::{run_export, KIND_EXPORT};
use crate::store::{now_ms, ApiKey, CacheQueue, JobState, NewJob};
use crate::wire::{self, exports::ExportJob, exports::ResponseType, FieldError};
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::Json;
use std::collections::HashMap;

/// Documents the query of the render call (read as a map: the aliases NestIdentifier and
/// ResultId and any letter case are accepted).
#[derive(Debug, Default, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct RenderQuery {
    /// The job (alias NestIdentifier).
    #[param(rename = "RequestId", min_length = 1)]
    pub request_id: String,
    /// The result (alias ResultId); absent: the job's latest.
    #[param(rename = "ResultIdentity")]
    pub result_identity: Option<String>,
}

/// An export of job `id`'s result `result_id` (None: the latest) of type `response_type`,
/// checked in full: the job and the result are the account's, and the nesting request has the
/// settings block the type needs (a Runtime export: or `settings`, the call's own). The export
/// job's spec (for the webhook: `cache_minutes` None).
pub(super) async fn export_job(
    state: &AppState,
    key: &ApiKey,
    id: &str,
    result_id: Option<&str>,
    response_type: ResponseType,
    settings: Option<serde_json::Value>,
) -> Result<ExportJob, ApiError> {
    let (job, stored, request) = stored_result(state, key, id, result_id).await?;
    let request: serde_json::Value = serde_json::from_str(&request).map_err(ApiError::internal)?;
    if let Some(block) = response_type.settings_block() {
        let present = !request["Request"][block].is_null();
        let supplied = response_type == ResponseType::Runtime && settings.is_some();
        if !present && !supplied {
            let also = if response_type == ResponseType::Runtime {
                " (or send ReportSourceRenderingSettings as this call's body)"
            } else {
                ""
            };
            return Err(ApiError::field(
                format!("Request.{block}"),
                format!(
                    "the nesting request of job {id} has no {block}: a {} export needs it{also}",
                    response_type.name()
                ),
            ));
        }
    }
    Ok(ExportJob {
        request_id: job.id,
        result_id: stored.id,
        response_type: response_type.name().into(),
        settings,
        cache_minutes: None,
    })
}

/// A picture of a result: every distinct sheet layout with its multiplicity, per the
/// request's RenderSettings (PNG unless it says Svg; 1600 pixels wide unless it gives a size)
/// and the part labels of its ReportSourceSettings (part identifiers unless it says None).
#[utoipa::path(get, path = "/v1/nesting/render/", tag = "exports", params(RenderQuery),
    responses(
        (status = 200, description = "the picture", body = wire::RenderResponse),
        (status = 400, description = "RequestId missing", body = wire::ErrorBody),
        (status = 404, description = "no such job or result for this account, no result yet, or a 1D job", body = wire::ErrorBody),
    ),
    security(("bearer" = [])))]
pub async fn render(
    State(state): State<AppState>,
    Caller(key): Caller,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Json<wire::RenderResponse>, ApiError> {
    let id = required_id(
        query_value(&q, &["RequestId", "NestIdentifier"]),
        "RequestId (query)",
    )?;
    let wanted = query_value(&q, &["ResultIdentity", "ResultId"]).filter(|r| !r.trim().is_empty());
    let (job, stored, request) = stored_result(&state, &key, &id, wanted.as_deref()).await?;
    let kind = job.kind.clone();
    let layout_json = stored.layout.clone();
    // geometry import and rasterising are blocking work
    let picture = tokio::task::spawn_blocking(move || {
        run_export::render_stored(&kind, &request, &layout_json)
    })
    .await
    .map_err(ApiError::internal)?
    .map_err(ApiError::internal)?;
    Ok(Json(run_export::render_response(&picture, &stored.id)))
}

/// Documents the query of the export calls (read as a map: aliases and any letter case).
#[derive(Debug, Default, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct ExportQuery {
    /// The job (alias NestIdentifier).
    #[param(rename = "RequestId", min_length = 1)]
    pub request_id: String,
    /// The result to export (alias ResultId): a ResultIdentity the webhook delivered.
    #[param(rename = "ResultIdentity", min_length = 1)]
    pub result_identity: String,
    /// Result, Render, DXF, ReportSource, RemnantExport, Runtime, PartsExport, or 0 to 6.
    #[param(rename = "ResponseType", min_length = 1)]
    pub response_type: String,
    /// Where the export is POSTed: an absolute HTTPS URL.
    #[param(rename = "WebHookUri", min_length = 1)]
    pub web_hook_uri: String,
}

/// Queues an export of a result (GET or POST alike); it is POSTed to WebHookUri when
/// generated (Result: the NestingResultResponse; Render: the RenderResponse; ReportSource and
/// Runtime: the report with its renderings), or the fixed failure body `{id, resultId,
/// responseType, reference}` if it fails. Each ResponseType once per result (409 on a repeat;
/// a failed export may be asked for again). The optional JSON body
/// (ReportSourceRenderingSettings) is read only by Runtime exports.
#[utoipa::path(method(get, post), path = "/v1/nesting/export", tag = "exports", params(ExportQuery),
    responses(
        (status = 200, description = "queued", body = wire::ExportAccepted),
        (status = 400, description = "a query parameter missing or wrong, or the nesting request lacks the settings block the ResponseType needs", body = wire::ErrorBody),
        (status = 404, description = "no such job or result for this account, or a 1D job", body = wire::ErrorBody),
        (status = 409, description = "this ResponseType was already requested for the result", body = wire::ErrorBody),
    ),
    security(("bearer" = [])))]
pub async fn export(
    State(state): State<AppState>,
    Caller(key): Caller,
    Query(q): Query<HashMap<String, String>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<wire::ExportAccepted>, ApiError> {
    queue_export(state, key, q, body_of(body)?).await
}

async fn queue_export(
    state: AppState,
    key: ApiKey,
    q: HashMap<String, String>,
    body: Bytes,
) -> Result<Json<wire::ExportAccepted>, ApiError> {
    // the query, every problem at once
    let mut errors = Vec::new();
    let id = required_query(
        &q,
        &["RequestId", "NestIdentifier"],
        "the RequestId returned at submission",
        &mut errors,
    );
    let result_id = required_query(
        &q,
        &["ResultIdentity", "ResultId"],
        "the ResultIdentity of the result to export (its webhook delivery gives it)",
        &mut errors,
    );
    let response_type = required_query(
        &q,
        &["ResponseType"],
        "one of Result, Render, DXF, ReportSource, RemnantExport, Runtime, PartsExport (or 0 to 6)",
        &mut errors,
    );
    let hook = webhook_query(&state, &q, &mut errors);
    let response_type = response_type.and_then(|t| {
        ResponseType::parse(&t)
            .map_err(|message| {
                errors.push(FieldError {
                    field: "ResponseType (query)".into(),
                    message,
                })
            })
            .ok()
    });
    // the body is read only for Runtime exports (for the others the spec says it is ignored)
    let settings: Option<serde_json::Value> = if body.iter().all(u8::is_ascii_whitespace)
        || response_type != Some(ResponseType::Runtime)
    {
        None
    } else {
        match wire::parse_json::<serde_json::Value>(&body) {
            Ok(v) if v.is_object() => Some(v),
            Ok(_) => {
                errors.push(FieldError {
                    field: "body".into(),
                    message: "must be a JSON object (ReportSourceRenderingSettings)".into(),
                });
                None
            }
            Err(e) => {
                errors.push(e);
                None
            }
        }
    };
    // a Runtime export's own settings are checked like the request's
    if let (Some(ResponseType::Runtime), Some(body)) = (response_type, &settings) {
        if let Err(e) = wire::exports::report_renders(Some(body), "body") {
            errors.extend(e);
        }
    }
    let (Some(id), Some(result_id), Some(response_type), Some(hook)) =
        (id, result_id, response_type, hook)
    else {
        return Err(ApiError::fields(errors));
    };
    if !errors.is_empty() {
        return Err(ApiError::fields(errors));
    }
    let spec = export_job(&state, &key, &id, Some(&result_id), response_type, settings).await?;
    let export_id = uuid::Uuid::new_v4().to_string();
    let (job_id, stored_id) = (spec.request_id.clone(), spec.result_id.clone());
    let spec = wire::to_json(&spec);
    let queued = state
        .store
        .enqueue_export(
            &NewJob {
                id: &export_id,
                api_key_id: &key.id,
                kind: KIND_EXPORT,
                request: &spec,
                webhook_uri: Some(hook.as_str()),
                held: false,
                reserved_ms: 0,
                size: 0,
            },
            &stored_id,
            response_type.name(),
            now_ms(),
        )
        .await?;
    if !queued {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!(
                "a {} export of result {} was already requested (each ResponseType once per result; a failed one may be asked for again)",
                response_type.name(),
                stored_id
            ),
        ));
    }
    state.wake.exports.notify_one();
    tracing::info!(export = %export_id, job = %job_id, result = %stored_id, kind = response_type.name(), "export queued");
    Ok(Json(wire::ExportAccepted {
        success: true,
        error: None,
    }))
}

/// A query value required by any of its names (any letter case); missing or blank, the
/// problem is added to `errors` (`why` says what it should be).
pub(super) fn required_query(
    q: &HashMap<String, String>,
    names: &[&str],
    why: &str,
    errors: &mut Vec<FieldError>,
) -> Option<String> {
    let v = query_value(q, names).filter(|v| !v.trim().is_empty());
    if v.is_none() {
        errors.push(FieldError {
            field: format!("{} (query)", names[0]),
            message: format!("missing: {why}"),
        });
    }
    v
}

/// An export call's WebHookUri (or WebhookUri): an absolute HTTPS URL whose host the webhook
/// guard admits; else the problem is added to `errors`.
pub(super) fn webhook_query(
    state: &AppState,
    q: &HashMap<String, String>,
    errors: &mut Vec<FieldError>,
) -> Option<url::Url> {
    let hook = required_query(
        q,
        &["WebHookUri", "WebhookUri"],
        "an absolute HTTPS URL the export is POSTed to",
        errors,
    )?;
    crate::webhook::parse_target(hook.trim())
        .and_then(|url| state.check_webhook_host(&url).map(|()| url))
        .map_err(|why| {
            errors.push(FieldError {
                field: "WebHookUri (query)".into(),
                message: why,
            })
        })
        .ok()
}

/// What GenerateExport did.
pub(super) enum CacheOutcome {
    /// The export job is queued; ExportReady follows.
    Queued(ExportJob),
    /// The export is in the cache until this time (Unix ms).
    Fresh(ExportJob, i64),
}

/// Queues an export of job `id`'s result `result_id` (None: the latest) for the export cache
/// (the hub's GenerateExport), kept `state.export_cache_minutes`; or says it is there. 409
/// when the same export is being made.
pub(super) async fn queue_cached(
    state: &AppState,
    key: &ApiKey,
    id: &str,
    result_id: Option<&str>,
    response_type: ResponseType,
) -> Result<CacheOutcome, ApiError> {
    let mut spec = export_job(state, key, id, result_id, response_type, None).await?;
    spec.cache_minutes = Some(state.export_cache_minutes);
    let export_id = uuid::Uuid::new_v4().to_string();
    let queued = state
        .store
        .queue_cached_export(
            &NewJob {
                id: &export_id,
                api_key_id: &key.id,
                kind: KIND_EXPORT,
                request: &wire::to_json(&spec),
                webhook_uri: None,
                held: false,
                reserved_ms: 0,
                size: 0,
            },
            &spec.request_id,
            &spec.result_id,
            &spec.response_type,
            now_ms(),
        )
        .await?;
    match queued {
        CacheQueue::Queued => {
            state.wake.exports.notify_one();
            tracing::info!(export = %export_id, job = %spec.request_id, kind = %spec.response_type, "export for the cache queued");
            Ok(CacheOutcome::Queued(spec))
        }
        CacheQueue::Busy => Err(ApiError::new(
            StatusCode::CONFLICT,
            format!(
                "a {} export of result {} is being made already; ExportReady follows",
                spec.response_type, spec.result_id
            ),
        )),
        CacheQueue::Fresh(cached) => {
            let expires = cached.expires_at.unwrap_or_default();
            Ok(CacheOutcome::Fresh(spec, expires))
        }
    }
}

/// An export made through the hub (GenerateExport), from the export cache: Ready with
/// PayloadJson, or Ready false with the reason (absent, expired, still being made, failed, or
/// not made through the hub: webhook exports are not cached).
#[utoipa::path(get, path = "/v1/nesting/export/cached", tag = "exports", params(RenderQuery, CachedQuery),
    responses(
        (status = 200, description = "Ready with PayloadJson, or Ready false with Error", body = wire::exports::CachedNestingExportResponse),
        (status = 400, description = "RequestId or ResponseType missing or wrong", body = wire::ErrorBody),
        (status = 404, description = "no such job or result for this account", body = wire::ErrorBody),
    ),
    security(("bearer" = [])))]
pub async fn cached(
    State(state): State<AppState>,
    Caller(key): Caller,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Json<wire::exports::CachedNestingExportResponse>, ApiError> {
    let id = required_id(
        query_value(&q, &["RequestId", "NestIdentifier"]),
        "RequestId (query)",
    )?;
    let result_id =
        query_value(&q, &["ResultIdentity", "ResultId"]).filter(|v| !v.trim().is_empty());
    let response_type = query_value(&q, &["ResponseType"])
        .filter(|v| !v.trim().is_empty())
        .ok_or_else(|| {
            ApiError::field(
                "ResponseType (query)",
                "missing: the type generated over the hub (Result, Render, DXF, ReportSource, RemnantExport, Runtime, PartsExport)",
            )
        })
        .and_then(|t| ResponseType::parse(&t).map_err(|m| ApiError::field("ResponseType (query)", m)))?;
    let (job, stored, _) = stored_result(&state, &key, &id, result_id.as_deref()).await?;
    let mut answer = wire::exports::CachedNestingExportResponse {
        request_id: job.id.clone(),
        result_id: stored.id.clone(),
        response_type: response_type.name().into(),
        ..Default::default()
    };
    let now = now_ms();
    let cached = state
        .store
        .cached_export(&job.id, &stored.id, response_type.name())
        .await?;
    let why_not = match &cached {
        None => Some(format!(
            "no {} export of result {} was made through the hub (GenerateExport); exports delivered to a webhook are not cached",
            response_type.name(),
            stored.id
        )),
        Some(c) => {
            answer.created_utc = c.created_at.map(wire::utc);
            answer.expires_utc = c.expires_at.map(wire::utc);
            match c.job_state {
                JobState::Queued | JobState::Running | JobState::Held => {
                    Some("the export is still being made; ExportReady follows on the hub".into())
                }
                JobState::Failed => Some(format!(
                    "the export failed: {}",
                    c.job_error.as_deref().unwrap_or("no reason recorded")
                )),
                JobState::Completed => match (&c.payload, c.expires_at) {
                    (Some(payload), Some(expires)) if expires > now => {
                        answer.payload_json = Some(payload.clone());
                        None
                    }
                    _ => Some(format!(
                        "the export expired at {}; generate it again",
                        c.expires_at.map(wire::utc).unwrap_or_default()
                    )),
                },
            }
        }
    };
    answer.ready = why_not.is_none();
    answer.error = why_not;
    Ok(Json(answer))
}

/// Documents the ResponseType of the cached-export call.
#[derive(Debug, Default, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct CachedQuery {
    /// The type generated over the hub: Result, Render, DXF, ReportSource, RemnantExport,
    /// Runtime, PartsExport (or 0 to 6).
    #[param(rename = "ResponseType")]
    pub response_type: String,
}
