//! `kerf bench quote`: a quote as the service runs it. Real parts (every part of every DXF
//! file in a directory, UseAllPartsInFile, read as millimetres), each in the same quantity,
//! go through the quote submission's validation and then `quote::sub_nest` one after another,
//! exactly as `jobs::run_quote` prices them. Per part: seconds, parts per sheet against the
//! area bound (the quantity, or the sheet's usable area over the part's, whichever is less),
//! and against a grid of bounding boxes (what the shape alone would give without interlocking).

use crate::cancel::CancelHandle;
use crate::nest2d::SheetShape;
use crate::quote::{sub_nest, SubNest};
use crate::wire::{quote as wq, GeometryKind};
use anyhow::{anyhow, bail, Context, Result};
use base64::Engine;
use std::path::Path;
use std::time::Instant;

/// What to quote.
pub struct Options<'a> {
    pub dir: &'a Path,
    /// At most this many distinct parts (in file order).
    pub parts: usize,
    pub quantity: u32,
    pub sheet: (f64, f64),
    /// Seconds per sub-nest.
    pub seconds: f64,
    pub spacing: f64,
    /// ESICUP instances (jagua-rs JSON) whose pieces make up the parts when the DXF files hold
    /// fewer than `parts`: taken one from each instance in turn, scaled so that the instance's
    /// strip height is the sheet's shorter side (its pieces keep their size against the
    /// material they were cut from).
    pub esicup: &'a [std::path::PathBuf],
}

/// One sub-nest.
pub struct Row {
    pub part: String,
    pub bounding_box: (f64, f64),
    pub part_area: f64,
    /// min(quantity, floor(sheet area / part area)).
    pub area_bound: u32,
    /// The most copies a grid of bounding boxes (with the spacing) puts on a sheet, either way
    /// round, at most the quantity.
    pub grid: u32,
    /// None: the part fits on no sheet.
    pub priced: Option<SubNest>,
    pub seconds: f64,
}

/// The DXF files' parts, as one quote request; then each part priced.
pub fn run(o: &Options, eval: &dyn kerf_kernels::Evaluator) -> Result<(Vec<Row>, f64)> {
    let mut paths: Vec<_> = std::fs::read_dir(o.dir)
        .with_context(|| format!("{}", o.dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x.eq_ignore_ascii_case("dxf")))
        .collect();
    paths.sort();
    let mut request_parts = Vec::new();
    for p in &paths {
        let name = p
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let stem = p
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let bytes = std::fs::read(p).with_context(|| format!("{}", p.display()))?;
        request_parts.push(serde_json::json!({
            "Identifier": stem,
            "FileNameWithExtension": name,
            "Base64EncodedGeometryDefinition": base64::engine::general_purpose::STANDARD.encode(&bytes),
            "Quantity": o.quantity,
            "AllowableRotation": "Rotate90",
        }));
    }
    if request_parts.is_empty() {
        bail!("{}: no DXF files", o.dir.display());
    }
    let request = |parts: Vec<serde_json::Value>| {
        serde_json::json!({
            "Request": {
                "GeometryDefinitionImportSettings": {"MeasurementUnitsOfImportGeometry": "Millimetres", "UseAllPartsInFile": true},
                "Parts": parts,
                "Sheets": [{"Identifier": "S1", "RectangularXDimension": o.sheet.0, "RectangularYDimension": o.sheet.1}],
                "NestSettings": {"PartSpacing": o.spacing, "MaxRunTimeSeconds": o.seconds},
            },
            "ResultsWebhookUri": "https://example.com/quote",
            "ResponseUnits": "mm",
        })
    };
    // a file that does not import (the test data holds broken drawings on purpose) is left out
    let importable: Vec<serde_json::Value> = request_parts
        .into_iter()
        .filter(|p| {
            let one: wq::QuoteNestingRequest =
                serde_json::from_value(request(vec![p.clone()])).expect("a quote request");
            wq::to_quote_submission(&one, GeometryKind::Dxf).is_ok()
        })
        .collect();
    let req: wq::QuoteNestingRequest =
        serde_json::from_value(request(importable)).map_err(|e| anyhow!("{e}"))?;
    let quote = wq::to_quote_submission(&req, GeometryKind::Dxf)
        .map_err(|e| anyhow!(crate::wire::describe(&e)))?;
    let mut problem = quote.submission.converted.problem;
    problem.parts.truncate(o.parts);
    top_up(&mut problem.parts, o)?;
    let sheet = &problem.sheets[0];
    let usable = match &sheet.shape {
        SheetShape::Rectangle { width, height } => width * height,
        SheetShape::Outline(s) => s.area(),
    };
    let start = Instant::now();
    let mut rows = Vec::new();
    for i in 0..problem.parts.len() {
        let spec = &problem.parts[i];
        let b = spec.geometry.bbox();
        let (bw, bh) = (b.width(), b.height());
        let area = spec.geometry.area();
        let area_bound = ((usable / area).floor() as u64).min(o.quantity as u64) as u32;
        let fit = |w: f64, h: f64| {
            let across = |sheet: f64, part: f64| ((sheet + o.spacing) / (part + o.spacing)).floor();
            across(o.sheet.0, w) * across(o.sheet.1, h)
        };
        let grid = (fit(bw, bh).max(fit(bh, bw)) as u64).min(o.quantity as u64) as u32;
        let t = Instant::now();
        let priced = sub_nest(&problem, i, eval, &CancelHandle::default()).ok();
        rows.push(Row {
            part: spec.id.clone(),
            bounding_box: (bw, bh),
            part_area: area,
            area_bound,
            grid,
            priced,
            seconds: t.elapsed().as_secs_f64(),
        });
    }
    Ok((rows, start.elapsed().as_secs_f64()))
}

/// Adds ESICUP pieces (one from each instance in turn) until there are `o.parts` parts.
fn top_up(parts: &mut Vec<crate::nest2d::PartSpec>, o: &Options) -> Result<()> {
    let mut pools = Vec::new();
    for path in o.esicup {
        let inst = crate::bench::esicup::load(path)?;
        let k = o.sheet.0.min(o.sheet.1) / inst.strip_height;
        let scale = crate::geometry::Affine::scale(k, k);
        let pieces: Vec<_> = inst
            .items
            .iter()
            .map(|it| {
                let mut p = crate::nest2d::PartSpec::new(
                    &format!("{}:{}", inst.name, it.id),
                    crate::bench::esicup::item_geometry(it).transformed(&scale),
                    o.quantity,
                );
                p.rotations = vec![0.0, 90.0, 180.0, 270.0];
                p
            })
            .collect();
        pools.push(pieces.into_iter());
    }
    while parts.len() < o.parts {
        let before = parts.len();
        for pool in pools.iter_mut() {
            if parts.len() < o.parts {
                parts.extend(pool.next());
            }
        }
        if parts.len() == before {
            break;
        }
    }
    Ok(())
}
