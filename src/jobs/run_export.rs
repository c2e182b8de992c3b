//! Running one export (GET or POST /v1/nesting/export): the result as delivered is read
//! back (the stored layout on the stored request's geometry), the export generated on a
//! blocking thread, and its body POSTed to the export's WebHookUri through the outbox, in one
//! fenced transaction. A failure delivers the fixed failure body instead (spec: Export
//! deliveries); asking again for a failed export is allowed and safe.

use super::lease::{complete, end, hold_lease, Ended};
use super::{run2d, JobContext};
use crate::export::render;
use crate::store::{Claimed, ResultRecord};
use crate::wire::{self, exports::ExportFailure, exports::ExportJob, exports::ResponseType};
use base64::Engine;

/// The job kind of an export.
pub const KIND_EXPORT: &str = "export";

/// The failure body of an export job (its stored request names the nest, result and type).
pub fn error_delivery_body(job_id: &str, request: &str) -> String {
    let job: Option<ExportJob> = serde_json::from_str(request).ok();
    wire::to_json(&ExportFailure {
        id: job
            .as_ref()
            .map(|j| j.request_id.clone())
            .unwrap_or_default(),
        result_id: job
            .as_ref()
            .map(|j| j.result_id.clone())
            .unwrap_or_default(),
        response_type: job.map(|j| j.response_type).unwrap_or_default(),
        reference: job_id.into(),
    })
}

pub(super) async fn run(ctx: JobContext, job: Claimed) {
    let (heartbeat, _lease) = hold_lease(&ctx, &job);
    let outcome = export(&ctx, &job).await;
    drop(heartbeat);
    end(&ctx, &job, outcome).await;
}

fn failed(error: impl Into<String>) -> Ended {
    Ended::Failed {
        code: "ExportFailed",
        error: error.into(),
    }
}

async fn export(ctx: &JobContext, job: &Claimed) -> Ended {
    let Ok(spec) = serde_json::from_str::<ExportJob>(&job.request) else {
        return failed("the export's stored request is damaged");
    };
    let Ok(kind) = ResponseType::parse(&spec.response_type) else {
        return failed(format!("unknown ResponseType {}", spec.response_type));
    };
    let source = async {
        let nest = ctx.store.status(&spec.request_id).await?;
        let request = ctx.store.request_of(&spec.request_id).await?;
        let result = ctx
            .store
            .result(&spec.request_id, Some(&spec.result_id))
            .await?;
        Ok::<_, crate::store::StoreError>((nest, request, result))
    };
    let (nest_kind, request, layout) = match source.await {
        Ok((Some(nest), Some(request), Some(result))) => (nest.kind, request, result.layout),
        Ok(_) => return failed("the nest or its result is gone"),
        Err(e) => return failed(format!("reading the result: {e}")),
    };
    // one thread: generating is single-threaded blocking work
    let _thread = tokio::select! {
        p = ctx.threads.clone().acquire_owned() => p.expect("threads semaphore is never closed"),
        _ = super::stopped(ctx.shutdown.clone()) => return Ended::HandBack,
    };
    let result_id = spec.result_id.clone();
    let generated = tokio::task::spawn_blocking(move || {
        generate(kind, &nest_kind, &request, &layout, &result_id)
    })
    .await;
    let body = match generated {
        Ok(Ok(body)) => body,
        Ok(Err(e)) => return failed(e),
        Err(e) => return failed(format!("the exporter crashed: {e}")),
    };
    let id = uuid::Uuid::new_v4().to_string();
    // the export's body is its own status, report and layout
    let record = ResultRecord {
        id: &id,
        status: &body,
        report: &body,
        layout: &body,
    };
    if complete(ctx, job, record, &body).await {
        tracing::info!(job = %job.id, export = kind.name(), nest = %spec.request_id, "export delivered to the outbox");
    }
    Ended::Finished
}

/// The body of an export of a stored result (`layout`, the NestingResultResponse as stored)
/// of a nest of job kind `nest_kind` submitted with `request`.
pub fn generate(
    kind: ResponseType,
    nest_kind: &str,
    request: &str,
    layout: &str,
    result_id: &str,
) -> Result<String, String> {
    match kind {
        // the machine-readable layout, as stored when the result was made
        ResponseType::Result => Ok(layout.to_string()),
        ResponseType::Render => {
            let picture = render_stored(nest_kind, request, layout)?;
            Ok(wire::to_json(&render_response(&picture, result_id)))
        }
        other => Err(format!("the {} export is not built yet", other.name())),
    }
}

/// RenderResponse of a picture.
pub fn render_response(picture: &render::Rendering, result_id: &str) -> wire::RenderResponse {
    wire::RenderResponse {
        base64_encoded_rendering: base64::engine::general_purpose::STANDARD.encode(&picture.bytes),
        render_format: picture.format.name().into(),
        result_identity: result_id.into(),
        x_dimension: picture.width.to_string(),
        y_dimension: picture.height.to_string(),
    }
}

/// The picture of a stored layout, drawn on the geometry of the nest's stored request per its
/// RenderSettings and ReportSourceSettings. Blocking work (geometry import, rasterising).
pub fn render_stored(
    nest_kind: &str,
    request: &str,
    layout_json: &str,
) -> Result<render::Rendering, String> {
    let (req, converted) = run2d::stored_request(nest_kind, request)?;
    let r = req.request.unwrap_or_default();
    let options = wire::render_options(
        r.render_settings.as_ref(),
        r.report_source_settings.as_ref(),
        "Request",
    )
    .map_err(|e| wire::describe(&e))?;
    let layout: wire::NestingResultResponse =
        serde_json::from_str(layout_json).map_err(|e| format!("the stored layout: {e}"))?;
    let layouts = wire::results::layouts_of(&layout, &converted.problem)?;
    render::render(&converted.problem, &layouts, &options).map_err(|e| e.to_string())
}
