//! Nesting submission and control: POST /v1/nesting (body or query form), /geometry,
//! /parametric, GET /v1/nesting/status, POST /v1/nesting/result/, /delayedstart, GET
//! /v1/nesting/failures. Everything is validated before anything is queued.

use super::auth::{Caller, Submitter};
use super::error::{ApiError, Shape};
use super::AppState;
use crate::jobs::kind_for;
use crate::store::{
    now_ms, Admission, ApiKey, JobState, JobStatus, NewJob, StopRequest, StoredResult,
};
use crate::wire::{self, GeometryKind};
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::Json;
use std::collections::HashMap;

/// The query-parameter form of a submission (the spec declares the three names as query
/// parameters too). Values here fill in what the body does not give.
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SubmissionQuery {
    /// A Base64NestingRequest as a JSON string.
    #[serde(rename = "Request")]
    #[param(rename = "Request")]
    pub request: Option<String>,
    #[serde(rename = "ResultsWebhookUri")]
    #[param(rename = "ResultsWebhookUri")]
    pub results_webhook_uri: Option<String>,
    /// true or false (read as text so that a wrong value gets a clear message).
    #[serde(rename = "AutomaticallyStartNesting")]
    #[param(rename = "AutomaticallyStartNesting", value_type = Option<bool>)]
    pub automatically_start_nesting: Option<String>,
}

/// How long a caller at its limit is asked to wait.
const PARALLELISM_RETRY_AFTER_S: u64 = 5;

/// The 429 of a key whose queued and running nests reached its limit.
fn at_limit(state: &AppState, key: &crate::store::ApiKey, active: i64) -> ApiError {
    ApiError {
        retry_after_s: Some(PARALLELISM_RETRY_AFTER_S),
        ..ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            format!(
                "this key already has {active} nests queued or running: its Parallelism of {} running plus {} waiting; submit again when one has finished",
                key.parallelism, state.max_queued_per_key
            ),
        )
    }
}

/// The 429 of a nest the account's plan does not admit (DESIGN 4): the reason names the rule.
fn over_plan(refused: crate::fairness::Refused) -> ApiError {
    ApiError {
        retry_after_s: Some(refused.retry_after_s),
        ..ApiError::new(StatusCode::TOO_MANY_REQUESTS, refused.reason)
    }
}

/// The 429 of a refused admission, whichever limit refused it.
fn refusal(state: &AppState, key: &crate::store::ApiKey, admission: Admission) -> Option<ApiError> {
    match admission {
        Admission::Accepted => None,
        Admission::AtLimit { active } => Some(at_limit(state, key, active)),
        Admission::OverPlan(refused) => Some(over_plan(refused)),
    }
}

/// Queues a validated submission of `kind` (the stored request is `request` as JSON) if its
/// key is under its limit of queued and running nests and its plan admits a nest that may run
/// `max_run_time_s` (one transaction), else the 429 that says which limit; a webhook whose
/// host is an address the guard refuses is a 400. Returns the RequestId. `start_now` false
/// holds the job for a delayed start; `size` (part copies or pieces asked for) lets nodes
/// prefer large or small nests.
#[allow(clippy::too_many_arguments)]
pub(super) async fn queue_job(
    state: &AppState,
    key: &crate::store::ApiKey,
    kind: &str,
    request: &impl serde::Serialize,
    webhook: Option<&url::Url>,
    start_now: bool,
    max_run_time_s: f64,
    size: u64,
) -> Result<String, ApiError> {
    if let Some(url) = webhook {
        state
            .check_webhook_host(url)
            .map_err(|why| ApiError::field("ResultsWebhookUri", why))?;
    }
    let id = uuid::Uuid::new_v4().to_string();
    let request = serde_json::to_string(request).map_err(ApiError::internal)?;
    let webhook = webhook.map(|u| u.to_string());
    let job = NewJob {
        id: &id,
        api_key_id: &key.id,
        kind,
        request: &request,
        webhook_uri: webhook.as_deref(),
        held: !start_now,
        reserved_ms: (max_run_time_s * 1000.0).ceil() as i64,
        size: i64::try_from(size).unwrap_or(i64::MAX),
    };
    let admission = state
        .store
        .enqueue_admitted(&job, state.admission_limit(key), now_ms())
        .await?;
    if let Some(refused) = refusal(state, key, admission) {
        return Err(refused);
    }
    if start_now {
        state.wake.jobs.notify_one();
    }
    tracing::info!(job = %id, key = %key.id, kind, held = !start_now, "accepted");
    Ok(id)
}

/// Reads a request body, mapping a body over the limit to 413.
pub fn body_of(body: Result<Bytes, BytesRejection>) -> Result<Bytes, ApiError> {
    body.map_err(|e| {
        let status = e.status();
        let message = if status == StatusCode::PAYLOAD_TOO_LARGE {
            "the request body is larger than this server accepts (while reading it)".to_string()
        } else {
            format!("the request body could not be read: {e}")
        };
        ApiError::new(status, message)
    })
}

/// Merges the body and the query form into one DxfNestingRequest.
fn submission_request(
    body: &[u8],
    query: SubmissionQuery,
) -> Result<wire::DxfNestingRequest, ApiError> {
    let blank = body.iter().all(u8::is_ascii_whitespace);
    let mut req: wire::DxfNestingRequest = if blank {
        Default::default()
    } else {
        wire::parse_json(body).map_err(|e| ApiError::fields(vec![e]))?
    };
    if req.request.is_none() {
        if let Some(r) = query.request.filter(|r| !r.trim().is_empty()) {
            let parsed =
                wire::parse_json::<wire::Base64NestingRequest>(r.as_bytes()).map_err(|e| {
                    let field = if e.field == "(body)" {
                        "Request".into()
                    } else {
                        format!("Request.{}", e.field)
                    };
                    ApiError::field(field, e.message)
                })?;
            req.request = Some(parsed);
        }
    }
    if req.results_webhook_uri.is_none() {
        req.results_webhook_uri = query.results_webhook_uri;
    }
    if req.automatically_start_nesting.is_none() {
        if let Some(v) = query
            .automatically_start_nesting
            .filter(|v| !v.trim().is_empty())
        {
            req.automatically_start_nesting = Some(match v.trim().to_ascii_lowercase().as_str() {
                "true" | "1" => true,
                "false" | "0" => false,
                _ => {
                    return Err(ApiError::field(
                        "AutomaticallyStartNesting (query)",
                        format!("'{v}' is not a boolean (true or false)"),
                    ))
                }
            });
        }
    }
    Ok(req)
}

async fn submit(
    state: AppState,
    Submitter(key): Submitter,
    query: Result<Query<SubmissionQuery>, axum::extract::rejection::QueryRejection>,
    body: Result<Bytes, BytesRejection>,
    geometry: GeometryKind,
) -> Result<Json<wire::ApiNestingResult>, ApiError> {
    let shape = |e: ApiError| e.shaped(Shape::Submission);
    let Query(query) = query.map_err(|e| shape(ApiError::bad_request(format!("query: {e}"))))?;
    let body = body_of(body).map_err(shape)?;
    let req = submission_request(&body, query).map_err(shape)?;
    // conversion imports every part's geometry: blocking work, off the async threads
    let (req, submission) = tokio::task::spawn_blocking(move || {
        let s = wire::to_submission(&req, geometry);
        (req, s)
    })
    .await
    .map_err(|e| shape(ApiError::internal(e)))?;
    let submission = submission.map_err(|errors| shape(ApiError::fields(errors)))?;
    let id = queue_job(
        &state,
        &key,
        &kind_for(geometry),
        &req,
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

/// Submit a 2D nest of DXF parts (DxfNestingRequest), in the body or as query parameters.
#[utoipa::path(post, path = "/v1/nesting", tag = "nesting",
    params(SubmissionQuery),
    request_body(content = wire::DxfNestingRequest, description = "the nest; or give Request, ResultsWebhookUri and AutomaticallyStartNesting as query parameters"),
    responses(
        (status = 200, description = "accepted", body = wire::ApiNestingResult),
        (status = 400, description = "invalid request; Errors name each field by JSON path", body = wire::ApiNestingResult),
        (status = 401, description = "API key missing or invalid", body = wire::ApiNestingResult),
        (status = 406, description = "Accept is not application/json", body = wire::ApiNestingResult),
        (status = 413, description = "body too large", body = wire::ApiNestingResult),
        (status = 429, description = "the key is at its limit of queued and running nests (Retry-After)", body = wire::ApiNestingResult),
    ),
    security(("bearer" = [])))]
pub async fn submit_dxf(
    State(state): State<AppState>,
    caller: Submitter,
    query: Result<Query<SubmissionQuery>, axum::extract::rejection::QueryRejection>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<wire::ApiNestingResult>, ApiError> {
    submit(state, caller, query, body, GeometryKind::Dxf).await
}

/// Submit a 2D nest whose parts are JSON contours (DESIGN 5.4) unless a part says otherwise.
#[utoipa::path(post, path = "/v1/nesting/geometry", tag = "nesting",
    params(SubmissionQuery),
    request_body = wire::DxfNestingRequest,
    responses(
        (status = 200, description = "accepted", body = wire::ApiNestingResult),
        (status = 400, description = "invalid request", body = wire::ApiNestingResult),
        (status = 401, description = "API key missing or invalid", body = wire::ApiNestingResult),
        (status = 406, description = "Accept is not application/json", body = wire::ApiNestingResult),
        (status = 413, description = "body too large", body = wire::ApiNestingResult),
        (status = 429, description = "the key is at its limit (Retry-After)", body = wire::ApiNestingResult),
    ),
    security(("bearer" = [])))]
pub async fn submit_geometry(
    State(state): State<AppState>,
    caller: Submitter,
    query: Result<Query<SubmissionQuery>, axum::extract::rejection::QueryRejection>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<wire::ApiNestingResult>, ApiError> {
    submit(state, caller, query, body, GeometryKind::Json).await
}

/// Submit a 2D nest of parametric parts (Rectangle, Circle, Ring, RoundedRectangle, Polygon;
/// DESIGN 5.4) unless a part says otherwise.
#[utoipa::path(post, path = "/v1/nesting/parametric", tag = "nesting",
    params(SubmissionQuery),
    request_body = wire::DxfNestingRequest,
    responses(
        (status = 200, description = "accepted", body = wire::ApiNestingResult),
        (status = 400, description = "invalid request", body = wire::ApiNestingResult),
        (status = 401, description = "API key missing or invalid", body = wire::ApiNestingResult),
        (status = 406, description = "Accept is not application/json", body = wire::ApiNestingResult),
        (status = 413, description = "body too large", body = wire::ApiNestingResult),
        (status = 429, description = "the key is at its limit (Retry-After)", body = wire::ApiNestingResult),
    ),
    security(("bearer" = [])))]
pub async fn submit_parametric(
    State(state): State<AppState>,
    caller: Submitter,
    query: Result<Query<SubmissionQuery>, axum::extract::rejection::QueryRejection>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<wire::ApiNestingResult>, ApiError> {
    submit(state, caller, query, body, GeometryKind::Parametric).await
}

pub(super) fn required_id(value: Option<String>, field: &str) -> Result<String, ApiError> {
    value
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .ok_or_else(|| ApiError::field(field, "missing: the RequestId returned at submission"))
}

/// Documents the RequestId query parameter (handlers read the query as a map so that the
/// alias NestIdentifier and any letter case are accepted).
#[derive(Debug, Default, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct StatusQuery {
    #[param(rename = "RequestId", min_length = 1)]
    pub request_id: String,
}

/// Documents the optional RequestId filter of the failures listing.
#[derive(Debug, Default, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct FailuresQuery {
    /// Only this job.
    #[param(rename = "RequestId")]
    pub request_id: Option<String>,
}

/// A job's state.
#[utoipa::path(get, path = "/v1/nesting/status", tag = "nesting", params(StatusQuery),
    responses(
        (status = 200, description = "the job", body = wire::NestingStatusResponse),
        (status = 400, description = "RequestId missing", body = wire::ErrorBody),
        (status = 404, description = "no such job for this account", body = wire::ErrorBody),
    ),
    security(("bearer" = [])))]
pub async fn status(
    State(state): State<AppState>,
    Caller(key): Caller,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Json<wire::NestingStatusResponse>, ApiError> {
    let id = required_id(
        query_value(&q, &["RequestId", "NestIdentifier"]),
        "RequestId (query)",
    )?;
    let job = state
        .store
        .status_for_account(&id, key.account_id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no job {id} for this account")))?;
    Ok(Json(wire::NestingStatusResponse {
        request_id: job.id,
        status: match job.state {
            JobState::Held => JobState::Queued,
            s => s,
        }
        .as_str()
        .into(),
        result_identity: job.result_id,
        error: job.error,
        completed_at: job.completed_at.map(wire::utc),
    }))
}

/// A query value by any of its accepted names (case-insensitive).
pub(super) fn query_value(q: &HashMap<String, String>, names: &[&str]) -> Option<String> {
    q.iter()
        .find(|(k, _)| names.iter().any(|n| k.eq_ignore_ascii_case(n)))
        .map(|(_, v)| v.clone())
}

/// The report of a result: statistics, per-sheet placements, parts, and the status message
/// its webhook carried. ResultIdentity omitted: the job's latest result.
#[utoipa::path(post, path = "/v1/nesting/result/", tag = "nesting",
    request_body = wire::ResultQuery,
    responses(
        (status = 200, description = "the result", body = wire::ReportSourceResponseV1),
        (status = 400, description = "RequestId missing", body = wire::ErrorBody),
        (status = 404, description = "no such job or result for this account, or no result yet", body = wire::ErrorBody),
    ),
    security(("bearer" = [])))]
pub async fn result(
    State(state): State<AppState>,
    Caller(key): Caller,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<wire::ReportSourceResponseV1>, ApiError> {
    let body = body_of(body)?;
    let q: wire::ResultQuery = wire::parse_json(&body).map_err(|e| ApiError::fields(vec![e]))?;
    let id = required_id(q.request_id, "RequestId")?;
    let wanted = q.result_identity.filter(|r| !r.trim().is_empty());
    let (job, stored, request) = stored_result(&state, &key, &id, wanted.as_deref()).await?;
    // the report with its renderings, drawn on the stored request's geometry (blocking work)
    let source = crate::jobs::run_export::Source {
        nest_kind: job.kind.clone(),
        request,
        layout: stored.layout.clone(),
        report: stored.report.clone(),
    };
    let drawn = tokio::task::spawn_blocking(move || {
        crate::jobs::run_export::report_with_renderings(&source, None)
    })
    .await
    .map_err(ApiError::internal)?;
    // the result itself matters more than its pictures: if they cannot be drawn, the report
    // comes without them (renderings null) and the reason is logged
    let mut report = match drawn {
        Ok((report, _)) => report,
        Err(why) => {
            tracing::warn!(job = %id, error = %why, "the report's renderings could not be drawn");
            serde_json::from_str(&stored.report).map_err(ApiError::internal)?
        }
    };
    report.status = Some(serde_json::from_str(&stored.status).map_err(ApiError::internal)?);
    Ok(Json(report))
}

/// A 2D job of the caller's account, one of its stored results (`result_id` None: the
/// latest) and the job's stored request; 404 for anything else (an unknown job, a 1D job, an
/// export, no such result). Shared by POST /v1/nesting/result/, the render and the exports.
pub(super) async fn stored_result(
    state: &AppState,
    key: &ApiKey,
    id: &str,
    result_id: Option<&str>,
) -> Result<(JobStatus, StoredResult, String), ApiError> {
    let no_job = || ApiError::not_found(format!("no job {id} for this account"));
    let job = state
        .store
        .status_for_account(id, key.account_id)
        .await?
        .ok_or_else(no_job)?;
    if job.kind == crate::jobs::KIND_1D {
        return Err(ApiError::not_found(format!(
            "job {id} is a 1D nest: it has no layout (its plan is at POST /v1/nesting/1D/result)"
        )));
    }
    if job.kind.starts_with(crate::jobs::run_quote::KIND_PREFIX) {
        return Err(ApiError::not_found(format!(
            "job {id} is a quote: its sub-nests come with GET /v1/nesting/exportquotenest"
        )));
    }
    if job.kind == crate::jobs::KIND_EXPORT {
        return Err(ApiError::not_found(format!(
            "{id} is an export, not a nest: it has no result of its own"
        )));
    }
    let stored = state
        .store
        .result(id, result_id)
        .await?
        .ok_or_else(|| match result_id {
            Some(r) => ApiError::not_found(format!("job {id} has no result {r}")),
            None => ApiError::not_found(format!(
                "job {id} has no result yet (it is {})",
                job.state.as_str()
            )),
        })?;
    let request = state.store.request_of(id).await?.ok_or_else(no_job)?;
    Ok((job, stored, request))
}

/// Starts a job submitted with AutomaticallyStartNesting = false.
#[utoipa::path(post, path = "/v1/nesting/delayedstart", tag = "nesting",
    request_body = wire::RequestIdBody,
    responses(
        (status = 200, description = "started", body = wire::ContinueAck),
        (status = 400, description = "RequestId missing", body = wire::ContinueAck),
        (status = 404, description = "no such job for this account", body = wire::ContinueAck),
        (status = 409, description = "the job is not held", body = wire::ContinueAck),
        (status = 429, description = "the key is at its Parallelism", body = wire::ContinueAck),
    ),
    security(("bearer" = [])))]
pub async fn delayed_start(
    State(state): State<AppState>,
    Caller(key): Caller,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<wire::ContinueAck>, ApiError> {
    let shape = |e: ApiError| e.shaped(Shape::Ack);
    let id = request_id_of(body).map_err(shape)?;
    start_held(&state, &key, &id).await.map_err(shape)?;
    Ok(Json(wire::ContinueAck {
        success: true,
        error_reason: None,
    }))
}

/// The RequestId of a `{RequestId}` body.
fn request_id_of(body: Result<Bytes, BytesRejection>) -> Result<String, ApiError> {
    let body = body_of(body)?;
    wire::parse_json::<wire::RequestIdBody>(&body)
        .map_err(|e| ApiError::fields(vec![e]))
        .and_then(|b| required_id(b.request_id, "RequestId"))
}

/// Starts held job `id` of `key`'s account, subject to its submitting key's limits and plan
/// (the delayed start; the hub's StartNesting too): 404 for no such job of the account, 409
/// when it is not held, 429 when a limit refuses it.
pub(super) async fn start_held(
    state: &AppState,
    key: &crate::store::ApiKey,
    id: &str,
) -> Result<(), ApiError> {
    let owned = state
        .store
        .status_for_account(id, key.account_id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no job {id} for this account")))?;
    // the limit is the submitting key's (the job counts against it), whoever starts it
    let owner = state
        .store
        .key(&owned.api_key_id)
        .await?
        .unwrap_or_else(|| key.clone());
    match state
        .store
        .release_held(id, &owner.id, state.admission_limit(&owner), now_ms())
        .await?
    {
        Some(admission) => match refusal(state, &owner, admission) {
            Some(refused) => Err(refused),
            None => {
                state.wake.jobs.notify_one();
                Ok(())
            }
        },
        None => Err(ApiError::new(
            StatusCode::CONFLICT,
            format!(
                "job {id} is not waiting for a delayed start (it is {})",
                owned.state.as_str()
            ),
        )),
    }
}

/// Stops running job `id` of `key`'s account early: it ends with its best verified result so
/// far, delivered as its final one (continue; the hub's StopNesting too). At once when this
/// process runs it, else at its worker's next heartbeat. 404 for no such job of the account,
/// 409 when it is not running.
pub(super) async fn stop_running(
    state: &AppState,
    key: &crate::store::ApiKey,
    id: &str,
) -> Result<(), ApiError> {
    match state
        .store
        .request_stop(id, key.account_id, now_ms())
        .await?
    {
        StopRequest::Requested(mark) => {
            state.wake.events.stop(id, mark);
            Ok(())
        }
        StopRequest::NotRunning(job_state) => Err(ApiError::new(
            StatusCode::CONFLICT,
            format!(
                "job {id} is not running (it is {}): only a running nest can be stopped",
                job_state.as_str()
            ),
        )),
        StopRequest::Unknown => Err(ApiError::not_found(format!("no job {id} for this account"))),
    }
}

/// Stops a running nest early: it ends with its best result so far, as its final result.
#[utoipa::path(post, path = "/v1/nesting/continue", tag = "nesting",
    request_body = wire::RequestIdBody,
    responses(
        (status = 200, description = "the nest is stopping; its best result comes as the final one", body = wire::ContinueAck),
        (status = 400, description = "RequestId missing", body = wire::ContinueAck),
        (status = 404, description = "no such job for this account", body = wire::ContinueAck),
        (status = 409, description = "the job is not running", body = wire::ContinueAck),
    ),
    security(("bearer" = [])))]
pub async fn continue_nest(
    State(state): State<AppState>,
    Caller(key): Caller,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<wire::ContinueAck>, ApiError> {
    let shape = |e: ApiError| e.shaped(Shape::Ack);
    let id = request_id_of(body).map_err(shape)?;
    stop_running(&state, &key, &id).await.map_err(shape)?;
    Ok(Json(wire::ContinueAck {
        success: true,
        error_reason: None,
    }))
}

/// Failed jobs, and jobs whose webhook delivery gave up, of the caller's account.
#[utoipa::path(get, path = "/v1/nesting/failures", tag = "nesting", params(FailuresQuery),
    responses((status = 200, description = "newest first, at most 500", body = [wire::FailureBody])),
    security(("bearer" = [])))]
pub async fn failures(
    State(state): State<AppState>,
    Caller(key): Caller,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Json<Vec<wire::FailureBody>>, ApiError> {
    let only = query_value(&q, &["RequestId", "NestIdentifier"]).filter(|v| !v.trim().is_empty());
    let records = state
        .store
        .failures(key.account_id, only.as_deref(), 500)
        .await?;
    Ok(Json(
        records
            .into_iter()
            .map(|r| wire::FailureBody {
                request_id: r.job_id,
                status: r.state,
                error: r.error,
                failed_at: r.failed_at.map(wire::utc),
                deliveries: r
                    .deliveries
                    .into_iter()
                    .map(|d| wire::DeliveryBody {
                        uri: d.uri,
                        attempts: d.attempts,
                        last_attempt_utc: d.last_attempt_at.map(wire::utc),
                        last_status_code: d.last_status,
                        last_error: d.last_error,
                        gave_up: d.gave_up,
                    })
                    .collect(),
            })
            .collect(),
    ))
}
