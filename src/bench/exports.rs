//! `kerf bench exports`: how long each export type takes for one result, the way the service
//! makes it (the stored request converted again, the stored layout and report read back).
//! The result is a real nest of the DXF parts in a directory, copied up to a part count, on
//! sheets sized so that it takes several.

use crate::jobs::run_export::{generate, Source};
use crate::nest2d::{self, CancelHandle};
use crate::wire::{self, exports::ResponseType, results};
use anyhow::{anyhow, bail, Context, Result};
use base64::Engine;
use std::path::Path;
use std::time::Instant;

/// One row of the table.
pub struct Row {
    pub export: &'static str,
    /// Median of the runs, in seconds.
    pub seconds: f64,
    pub bytes: usize,
}

/// What was nested and how it came out.
pub struct Measured {
    pub parts: u32,
    pub sheets: u32,
    pub layouts: usize,
    /// What could not be placed: (part, quantity, why).
    pub unplaced: Vec<(String, u32, String)>,
    pub rows: Vec<Row>,
}

/// Nests the DXF files of `dir` (copies of each, `parts` in all) on `sheet` (width, height)
/// for `nest_seconds`, then generates each export `runs` times.
pub fn run(
    dir: &Path,
    parts: u32,
    sheet: (f64, f64),
    nest_seconds: f64,
    runs: usize,
    eval: &dyn kerf_kernels::Evaluator,
) -> Result<Measured> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("{}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x.eq_ignore_ascii_case("dxf")))
        .collect();
    paths.sort();
    // only the files that import as parts that fit the sheet (a directory of test files holds
    // broken and oversized ones too); each read once: (identifier, file name, bytes)
    let options = crate::geometry::ImportOptions::default();
    let fits = |bytes: &[u8], name: &str| {
        crate::geometry::import_dxf(name, bytes, &options).is_ok_and(|imported| {
            imported.parts.iter().all(|p| {
                let b = p.geometry.bbox();
                let (w, h) = (b.max.x - b.min.x, b.max.y - b.min.y);
                (w <= sheet.0 && h <= sheet.1) || (h <= sheet.0 && w <= sheet.1)
            })
        })
    };
    let files: Vec<(String, String, Vec<u8>)> = paths
        .iter()
        .filter_map(|f| {
            let name = f.file_name()?.to_string_lossy().to_string();
            let stem = f.file_stem()?.to_string_lossy().to_string();
            let bytes = std::fs::read(f).ok()?;
            fits(&bytes, &name).then_some((stem, name, bytes))
        })
        .collect();
    if files.is_empty() {
        bail!("{}: no DXF files that import as parts", dir.display());
    }
    let n = files.len() as u32;
    let request_parts: Vec<serde_json::Value> = files
        .iter()
        .enumerate()
        .map(|(i, (stem, name, bytes))| {
            serde_json::json!({
                "Identifier": stem,
                "FileNameWithExtension": name,
                "Base64EncodedGeometryDefinition": base64::engine::general_purpose::STANDARD.encode(bytes),
                "Quantity": parts / n + u32::from((i as u32) < parts % n),
            })
        })
        .collect();
    let request = serde_json::json!({
        "Request": {
            "Parts": request_parts,
            "Sheets": [{"Identifier": "S1", "RectangularXDimension": sheet.0, "RectangularYDimension": sheet.1, "Quantity": 0}],
            "NestSettings": {"PartSpacing": 2.0, "MaxRunTimeSeconds": nest_seconds},
            "RenderSettings": {"RenderFormat": "Png", "xDimension": 1600, "yDimension": 1200},
            "ReportSourceSettings": {"RenderPartLabelMode": "ID"},
            "DXFExportSettings": {"DXFVersion": "R2000", "AddPartLabels": true, "ExportSheetBoundaries": true},
            "PartExportSettings": {"AddPartLabel": true},
        },
        "ResultsWebhookUri": "https://example.com/hook",
    });
    let request_text = request.to_string();
    let kind = "nest2d:dxf";
    let (_, converted) =
        crate::jobs::run2d::stored_request(kind, &request_text).map_err(|e| anyhow!(e))?;
    let problem = converted.problem;
    let result = nest2d::nest(&problem, eval, &CancelHandle::default(), &|_| {})
        .map_err(|e| anyhow!("{e}"))?;
    let layout = results::layout(&problem, &result, "bench", "bench-result");
    let report = results::report(&layout, &problem);
    let source = Source {
        nest_kind: kind.into(),
        request: request_text,
        layout: wire::to_json(&layout),
        report: wire::to_json(&report),
    };
    // RemnantExport once per RemnantGenerationType, the others once each
    let remnants = [
        ("RemnantExport CleanCut", "CleanCut"),
        ("RemnantExport Rectangular", "Rectangular"),
        ("RemnantExport TrueShape", "TrueShape"),
    ];
    let mut jobs: Vec<(&'static str, ResponseType, Source)> = ResponseType::ALL
        .into_iter()
        .filter(|(_, t)| *t != ResponseType::RemnantExport)
        .map(|(name, t)| (name, t, source.clone()))
        .collect();
    for (name, kind) in remnants {
        let mut request = request.clone();
        request["Request"]["RemnantGenerationSettings"] = serde_json::json!({
            "RemnantGenerationType": kind, "MinimumDimensionMM": 20.0, "MinimumAreaMM2": 2000.0,
        });
        let source = Source {
            request: request.to_string(),
            ..source.clone()
        };
        jobs.push((name, ResponseType::RemnantExport, source));
    }
    let mut rows = Vec::new();
    for (name, t, source) in jobs {
        let mut times = Vec::new();
        let mut bytes = 0;
        for _ in 0..runs.max(1) {
            let start = Instant::now();
            let body = generate(t, &source, "bench-result", None)
                .map_err(|e| anyhow!("the {name} export failed: {e}"))?;
            times.push(start.elapsed().as_secs_f64());
            bytes = body.len();
        }
        times.sort_by(f64::total_cmp);
        rows.push(Row {
            export: name,
            seconds: times[times.len() / 2],
            bytes,
        });
    }
    Ok(Measured {
        parts: result.stats.parts_placed,
        sheets: result.stats.sheets_used,
        layouts: result.layouts.len(),
        unplaced: result
            .unplaced
            .iter()
            .map(|u| {
                (
                    problem.parts[u.part].id.clone(),
                    u.quantity,
                    u.reason.clone(),
                )
            })
            .collect(),
        rows,
    })
}
