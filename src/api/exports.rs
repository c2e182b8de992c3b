//! Pictures and exports of a finished 2D result. GET /v1/nesting/render/ draws the result
//! synchronously per the request's RenderSettings (and the labels of its
//! ReportSourceSettings).

use super::auth::Caller;
use super::error::ApiError;
use super::nesting::{query_value, required_id};
use super::AppState;
use crate::export::render;
use crate::jobs::{run2d, KIND_1D};
use crate::wire::{self, results};
use axum::extract::{Query, State};
use axum::Json;
use base64::Engine;
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
    let job = state
        .store
        .status_for_account(&id, key.account_id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no job {id} for this account")))?;
    if job.kind == KIND_1D {
        return Err(ApiError::not_found(format!(
            "job {id} is a 1D nest: there is no layout to draw (its plan is at POST /v1/nesting/1D/result)"
        )));
    }
    let wanted = query_value(&q, &["ResultIdentity", "ResultId"]).filter(|r| !r.trim().is_empty());
    let stored = state
        .store
        .result(&id, wanted.as_deref())
        .await?
        .ok_or_else(|| match &wanted {
            Some(r) => ApiError::not_found(format!("job {id} has no result {r}")),
            None => ApiError::not_found(format!(
                "job {id} has no result yet (it is {})",
                job.state.as_str()
            )),
        })?;
    let request = state
        .store
        .request_of(&id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no job {id} for this account")))?;
    let kind = job.kind.clone();
    let layout_json = stored.layout.clone();
    // geometry import and rasterising are blocking work
    let picture = tokio::task::spawn_blocking(move || draw(&kind, &request, &layout_json))
        .await
        .map_err(ApiError::internal)?
        .map_err(ApiError::internal)?;
    Ok(Json(wire::RenderResponse {
        base64_encoded_rendering: base64::engine::general_purpose::STANDARD.encode(&picture.bytes),
        render_format: picture.format.name().into(),
        result_identity: stored.id,
        x_dimension: picture.width.to_string(),
        y_dimension: picture.height.to_string(),
    }))
}

/// The picture of a stored layout, drawn on the geometry of the job's stored request.
fn draw(kind: &str, request: &str, layout_json: &str) -> Result<render::Rendering, String> {
    let (req, converted) = run2d::stored_request(kind, request)?;
    let r = req.request.unwrap_or_default();
    let options = wire::render_options(
        r.render_settings.as_ref(),
        r.report_source_settings.as_ref(),
        "Request",
    )
    .map_err(|e| wire::describe(&e))?;
    let layout: wire::NestingResultResponse =
        serde_json::from_str(layout_json).map_err(|e| format!("the stored layout: {e}"))?;
    let layouts = results::layouts_of(&layout, &converted.problem)?;
    render::render(&converted.problem, &layouts, &options).map_err(|e| e.to_string())
}
