//! Running one export (GET or POST /v1/nesting/export): the result as delivered is read
//! back (the stored layout on the stored request's geometry), the export generated on a
//! blocking thread, and its body POSTed to the export's WebHookUri through the outbox, in one
//! fenced transaction. A failure delivers the fixed failure body instead (spec: Export
//! deliveries); asking again for a failed export is allowed and safe.

use super::events::JobEvent;
use super::lease::{cache, deliver, end, hold_lease, Ended};
use super::{run2d, JobContext};
use crate::export::{dxf, remnants, render};
use crate::nest2d::SheetLayout;
use crate::store::{now_ms, Claimed};
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
    // an export made for the cache has no webhook to hear of its failure: the nest's hub
    // subscribers do (whoever asked with GenerateExport is one)
    let cache_failure = match (&outcome, serde_json::from_str::<ExportJob>(&job.request)) {
        (Ended::Failed { error, .. }, Ok(spec)) if spec.cache_minutes.is_some() => {
            Some(JobEvent::ExportFailed {
                job_id: spec.request_id,
                result_id: spec.result_id,
                response_type: spec.response_type,
                error: error.clone(),
            })
        }
        _ => None,
    };
    end(&ctx, &job, outcome).await;
    if let Some(event) = cache_failure {
        ctx.wake.events.publish(event);
    }
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
    if spec.response_type == wire::quote::QUOTE_EXPORT {
        return export_quote(ctx, job, &spec).await;
    }
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
    let source = match source.await {
        Ok((Some(nest), Some(request), Some(result))) => Source {
            nest_kind: nest.kind,
            request,
            layout: result.layout,
            report: result.report,
        },
        Ok(_) => return failed("the nest or its result is gone"),
        Err(e) => return failed(format!("reading the result: {e}")),
    };
    // generating is single-threaded blocking work: one thread, which the exports' lane (a few
    // slots, apart from the nests' thread permits) already accounts for
    let (result_id, settings) = (spec.result_id.clone(), spec.settings.clone());
    let generated =
        tokio::task::spawn_blocking(move || generate(kind, &source, &result_id, settings.as_ref()))
            .await;
    let body = match generated {
        Ok(Ok(body)) => body,
        Ok(Err(e)) => return failed(e),
        Err(e) => return failed(format!("the exporter crashed: {e}")),
    };
    if let Some(minutes) = spec.cache_minutes {
        // made for the cache: kept there, and announced to the nest's hub subscribers
        let expires_at = now_ms() + (minutes * 60_000.0) as i64;
        if cache(ctx, job, &body, expires_at).await {
            tracing::info!(job = %job.id, export = kind.name(), nest = %spec.request_id, "export cached");
            ctx.wake.events.publish(JobEvent::ExportReady {
                job_id: spec.request_id.clone(),
                result_id: spec.result_id.clone(),
                response_type: kind.name().into(),
                expires_at,
            });
        }
        return Ended::Finished;
    }
    // the body is the delivery; nothing else is kept
    if deliver(ctx, job, &body).await {
        tracing::info!(job = %job.id, export = kind.name(), nest = %spec.request_id, "export delivered to the outbox");
    }
    Ended::Finished
}

/// The quote export: every priced sub-nest of the quote, with its placements, as stored.
async fn export_quote(ctx: &JobContext, job: &Claimed, spec: &ExportJob) -> Ended {
    let stored = match ctx.store.results_of(&spec.request_id).await {
        Ok(stored) => stored,
        Err(e) => return failed(format!("reading the quote: {e}")),
    };
    let body = match wire::quote::export_body(
        &spec.request_id,
        stored
            .iter()
            .map(|r| (r.status.as_str(), r.layout.as_str())),
    ) {
        Ok(body) => body,
        Err(e) => return failed(e),
    };
    if deliver(ctx, job, &body).await {
        tracing::info!(job = %job.id, quote = %spec.request_id, "quote export delivered to the outbox");
    }
    Ended::Finished
}

/// What an export is made from: the nest's job kind and stored request (its geometry and
/// settings), and the result as stored (layout and report).
#[derive(Clone)]
pub struct Source {
    pub nest_kind: String,
    pub request: String,
    /// NestingResultResponse, as stored.
    pub layout: String,
    /// ReportSourceResponseV1 without Status and renderings, as stored.
    pub report: String,
}

/// The body of an export of type `kind` of a stored result. `settings`: the
/// ReportSourceRenderingSettings sent with the call (Runtime only; else the request's).
pub fn generate(
    kind: ResponseType,
    source: &Source,
    result_id: &str,
    settings: Option<&serde_json::Value>,
) -> Result<String, String> {
    match kind {
        // the machine-readable layout, as stored when the result was made
        ResponseType::Result => Ok(source.layout.clone()),
        ResponseType::Render => {
            let picture = render_stored(&source.nest_kind, &source.request, &source.layout)?;
            Ok(wire::to_json(&render_response(&picture, result_id)))
        }
        ResponseType::ReportSource => Ok(wire::to_json(&report_with_renderings(source, None)?.0)),
        ResponseType::Runtime => {
            let (report, converted) = report_with_renderings(source, settings)?;
            let layout: wire::NestingResultResponse = serde_json::from_str(&source.layout)
                .map_err(|e| format!("the stored layout: {e}"))?;
            Ok(wire::to_json(&wire::RuntimeResultResponse {
                run_time_seconds: report.summary.elapsed_seconds,
                engine: layout.engine,
                seed: converted.problem.settings.seed,
                report,
            }))
        }
        ResponseType::Dxf => dxf_export(source, result_id),
        ResponseType::PartsExport => parts_export(source, result_id),
        ResponseType::RemnantExport => remnant_export(source, result_id),
    }
}

/// The DXF export: one DXF file, or a zip of them (ExportFileType Zip, or several files).
fn dxf_export(source: &Source, result_id: &str) -> Result<String, String> {
    let (r, converted, layouts) = stored_nest(&source.nest_kind, &source.request, &source.layout)?;
    let options =
        wire::exports::dxf_options(r.dxf_export_settings.as_ref(), "Request.DXFExportSettings")
            .map_err(|e| wire::describe(&e))?;
    // IncludeRemnantsInExportedNests: the remnants on their own layer
    let remnant_options = Some(
        wire::exports::remnant_options(
            r.remnant_generation_settings.as_ref(),
            "Request.RemnantGenerationSettings",
        )
        .map_err(|e| wire::describe(&e))?,
    )
    .filter(|o| o.include_in_nests);
    let remnants = remnant_options
        .as_ref()
        .map(|o| remnants::remnants(&converted.problem, &layouts, o))
        .unwrap_or_default();
    let layer = remnant_options.as_ref().map(|o| dxf::RemnantLayer {
        remnants: &remnants,
        layer: &o.layer,
    });
    let files = dxf::export(&converted.problem, &layouts, layer, &options)?;
    let (bytes, zipped) = match files.as_slice() {
        [one] if !options.zip => (one.bytes.clone(), false),
        _ => (zip_of(&files)?, true),
    };
    Ok(wire::to_json(&wire::DxfBase64Response {
        result_identity: result_id.into(),
        base64_encoded_response: base64::engine::general_purpose::STANDARD.encode(bytes),
        dxf_version: dxf::version_index(options.version),
        export_file_type: u32::from(zipped),
        remnants: None,
    }))
}

/// The RemnantExport: a zip of DXF files, one per remnant, in the DXF version of the
/// request's DXFExportSettings (R2000 without them), with what each file holds.
fn remnant_export(source: &Source, result_id: &str) -> Result<String, String> {
    let (r, converted, layouts) = stored_nest(&source.nest_kind, &source.request, &source.layout)?;
    let options = wire::exports::remnant_options(
        r.remnant_generation_settings.as_ref(),
        "Request.RemnantGenerationSettings",
    )
    .map_err(|e| wire::describe(&e))?;
    let dxf_options =
        wire::exports::dxf_options(r.dxf_export_settings.as_ref(), "Request.DXFExportSettings")
            .map_err(|e| wire::describe(&e))?;
    let remnants = remnants::remnants(&converted.problem, &layouts, &options);
    let files = dxf::export_remnants(
        &converted.problem,
        &layouts,
        &remnants,
        &options.layer,
        dxf_options.version,
    )?;
    let infos = remnants
        .iter()
        .zip(&files)
        .map(|(rem, f)| {
            let b = rem.shape.bbox();
            wire::RemnantInfo {
                file_name: f.name.clone(),
                sheet_identifier: converted.problem.sheets[layouts[rem.layout].sheet]
                    .id
                    .clone(),
                layout_index: rem.layout as u32,
                quantity: rem.copies,
                x: b.min.x,
                y: b.min.y,
                width: b.width(),
                height: b.height(),
                area: rem.shape.area(),
            }
        })
        .collect();
    Ok(wire::to_json(&wire::DxfBase64Response {
        result_identity: result_id.into(),
        base64_encoded_response: base64::engine::general_purpose::STANDARD.encode(zip_of(&files)?),
        dxf_version: dxf::version_index(dxf_options.version),
        export_file_type: 1,
        remnants: Some(infos),
    }))
}

/// The PartsExport: each part of the request as a DXF of its own.
fn parts_export(source: &Source, result_id: &str) -> Result<String, String> {
    let (r, converted) = run2d::stored_request(&source.nest_kind, &source.request)?;
    let options = wire::exports::part_export_options(
        r.part_export_settings.as_ref(),
        "Request.PartExportSettings",
    )
    .map_err(|e| wire::describe(&e))?;
    let files = dxf::export_parts(&converted.problem, &options)?;
    Ok(wire::to_json(&wire::ExportPartsResponse {
        result_identity: result_id.into(),
        dxf_version: dxf::version_index(options.version),
        parts: files
            .into_iter()
            .map(|(k, f)| wire::ExportedPart {
                part_identifier: converted.problem.parts[k].id.clone(),
                file_name: f.name,
                base64_encoded_dxf: base64::engine::general_purpose::STANDARD.encode(f.bytes),
            })
            .collect(),
    }))
}

/// A zip (deflate) of the files.
fn zip_of(files: &[dxf::DxfFile]) -> Result<Vec<u8>, String> {
    use std::io::Write;
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for f in files {
        zip.start_file(f.name.as_str(), options)
            .and_then(|()| zip.write_all(&f.bytes).map_err(Into::into))
            .map_err(|e| format!("zipping {}: {e}", f.name))?;
    }
    zip.finish()
        .map(|c| c.into_inner())
        .map_err(|e| format!("zipping: {e}"))
}

/// The stored report with its renderings: each nest drawn per NestingRenderSettings, each
/// part previewed per PartPreviewRenderSettings (from `settings` when given, else the
/// request's ReportSourceSettings). Also the converted request, for callers that need more
/// of it. Blocking work.
pub fn report_with_renderings(
    source: &Source,
    settings: Option<&serde_json::Value>,
) -> Result<(wire::ReportSourceResponseV1, wire::Converted), String> {
    let (r, converted, layouts) = stored_nest(&source.nest_kind, &source.request, &source.layout)?;
    let (block, at) = match settings {
        Some(s) => (Some(s), "body"),
        None => (
            r.report_source_settings.as_ref(),
            "Request.ReportSourceSettings",
        ),
    };
    let renders = wire::exports::report_renders(block, at).map_err(|e| wire::describe(&e))?;
    let mut report: wire::ReportSourceResponseV1 =
        serde_json::from_str(&source.report).map_err(|e| format!("the stored report: {e}"))?;
    let encode = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    for (nest, l) in report.nests.iter_mut().zip(&layouts) {
        let picture = render::render(&converted.problem, std::slice::from_ref(l), &renders.nests)
            .map_err(|e| e.to_string())?;
        nest.base64_encoded_rendering = Some(encode(&picture.bytes));
        nest.render_format = Some(picture.format.name().into());
    }
    for part in report.parts.iter_mut() {
        let Some(k) = converted
            .problem
            .parts
            .iter()
            .position(|p| p.id == part.part_identifier)
        else {
            continue;
        };
        let picture = render::render_part(&converted.problem, k, &renders.previews)
            .map_err(|e| e.to_string())?;
        part.base64_encoded_preview = Some(encode(&picture.bytes));
    }
    Ok((report, converted))
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
    let (r, converted, layouts) = stored_nest(nest_kind, request, layout_json)?;
    let options = wire::render_options(
        r.render_settings.as_ref(),
        r.report_source_settings.as_ref(),
        "Request",
    )
    .map_err(|e| wire::describe(&e))?;
    render::render(&converted.problem, &layouts, &options).map_err(|e| e.to_string())
}

/// A stored result as the exporters take it: the nesting request's settings blocks, the
/// request converted again (its geometry), and the stored layout as engine layouts on it.
fn stored_nest(
    nest_kind: &str,
    request: &str,
    layout_json: &str,
) -> Result<
    (
        wire::Base64NestingRequest,
        wire::Converted,
        Vec<SheetLayout>,
    ),
    String,
> {
    let (r, converted) = run2d::stored_request(nest_kind, request)?;
    let layout: wire::NestingResultResponse =
        serde_json::from_str(layout_json).map_err(|e| format!("the stored layout: {e}"))?;
    let layouts = wire::results::layouts_of(&layout, &converted.problem)?;
    Ok((r, converted, layouts))
}
