//! Export settings of a nesting request (RenderSettings, ReportSourceSettings), parsed into
//! what the exporters take. Parsed at submission (so a bad value is a 400 naming its field)
//! and again, identically, when an export runs from the stored request.

use super::convert::{Errors, FieldError};
use crate::export::render::{Argb, LabelMode, RenderFormat, RenderOptions, MAX_PIXELS};
use serde::Deserialize;

/// RenderSettings as sent. `xDimension`/`yDimension` are spelt so by the spec; the
/// PascalCase forms are accepted too.
#[derive(Debug, Default, Deserialize, serde::Serialize)]
#[serde(default)]
pub(super) struct RenderSettingsBody {
    #[serde(rename = "RenderFormat")]
    render_format: Option<String>,
    #[serde(rename = "xDimension", alias = "XDimension")]
    x_dimension: Option<i64>,
    #[serde(rename = "yDimension", alias = "YDimension")]
    y_dimension: Option<i64>,
    #[serde(rename = "BackColorARGB")]
    back_color_argb: Option<String>,
    #[serde(rename = "OutlineLineColorARGB")]
    outline_line_color_argb: Option<String>,
    #[serde(rename = "PartFillColorARGB")]
    part_fill_color_argb: Option<String>,
    #[serde(rename = "AutomaticallyChoosePartFillColor")]
    automatically_choose_part_fill_color: Option<bool>,
}

/// ReportSourceSettings (ReportSourceRenderingSettings) as sent.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ReportSourceBody {
    #[serde(rename = "NestingRenderSettings")]
    nesting_render_settings: Option<serde_json::Value>,
    #[serde(rename = "RenderPartLabelMode")]
    render_part_label_mode: Option<String>,
    #[serde(rename = "PartLabelHeight")]
    part_label_height: Option<f64>,
    #[serde(rename = "PartPreviewRenderSettings")]
    part_preview_render_settings: Option<serde_json::Value>,
}

/// How the layouts of a result are drawn: from `render` (RenderSettings; absent: the
/// defaults) with the labels of `report` (ReportSourceSettings; absent: part identifiers,
/// sized to each part). `at` is the JSON path of the request holding them.
pub fn render_options(
    render: Option<&serde_json::Value>,
    report: Option<&serde_json::Value>,
    at: &str,
) -> Result<RenderOptions, Vec<FieldError>> {
    let mut e = Errors::default();
    let mut options = e.render_settings(render, &format!("{at}.RenderSettings"));
    let report = e.report_settings(report, &format!("{at}.ReportSourceSettings"));
    (options.labels, options.label_height_mm) = (report.nests.labels, report.nests.label_height_mm);
    e.into_result(options)
}

/// The renders of a report (ReportSource and Runtime exports, POST /v1/nesting/result/):
/// each nest's, and each part's preview.
#[derive(Clone, Debug, PartialEq)]
pub struct ReportRenders {
    pub nests: RenderOptions,
    pub previews: RenderOptions,
}

/// The preview width when PartPreviewRenderSettings gives no size.
const PREVIEW_WIDTH: u32 = 240;

/// ReportSourceSettings (ReportSourceRenderingSettings) at `at` as the report's renders:
/// NestingRenderSettings for the nests, PartPreviewRenderSettings for the previews (240
/// pixels wide unless sized), both with its labels.
pub fn report_renders(
    report: Option<&serde_json::Value>,
    at: &str,
) -> Result<ReportRenders, Vec<FieldError>> {
    let mut e = Errors::default();
    let renders = e.report_settings(report, at);
    e.into_result(renders)
}

impl Errors {
    /// ReportSourceSettings at `at` (absent: the defaults).
    fn report_settings(&mut self, value: Option<&serde_json::Value>, at: &str) -> ReportRenders {
        let mut renders = ReportRenders {
            nests: RenderOptions::default(),
            previews: RenderOptions {
                width: Some(PREVIEW_WIDTH),
                ..RenderOptions::default()
            },
        };
        let Some(body) = self.block::<ReportSourceBody>(value, at) else {
            return renders;
        };
        let labels = self.pick(
            &format!("{at}.RenderPartLabelMode"),
            body.render_part_label_mode.as_deref(),
            LabelMode::Id,
            &[
                ("None", LabelMode::None),
                ("ID", LabelMode::Id),
                ("PartName", LabelMode::PartName),
            ],
        );
        let height = self.label_height(body.part_label_height, &format!("{at}.PartLabelHeight"));
        renders.nests = self.render_settings(
            body.nesting_render_settings.as_ref(),
            &format!("{at}.NestingRenderSettings"),
        );
        let previews = self.render_settings(
            body.part_preview_render_settings.as_ref(),
            &format!("{at}.PartPreviewRenderSettings"),
        );
        renders.previews = RenderOptions {
            width: previews
                .width
                .or((previews.height.is_none()).then_some(PREVIEW_WIDTH)),
            ..previews
        };
        for o in [&mut renders.nests, &mut renders.previews] {
            o.labels = labels;
            o.label_height_mm = height;
        }
        renders
    }

    /// PartLabelHeight: millimetres above 0; null, absent or 0: automatic (None).
    fn label_height(&mut self, value: Option<f64>, field: &str) -> Option<f64> {
        match value {
            Some(h) if h.is_finite() && h > 0.0 => Some(h),
            None | Some(0.0) => None,
            Some(h) => {
                self.add(
                    field,
                    format!(
                        "must be a height in millimetres above 0, or null for automatic (got {h})"
                    ),
                );
                None
            }
        }
    }

    /// A settings block as its type, or None (with the error) when it is not one.
    fn block<T: serde::de::DeserializeOwned + Default>(
        &mut self,
        value: Option<&serde_json::Value>,
        at: &str,
    ) -> Option<T> {
        match value {
            None | Some(serde_json::Value::Null) => None,
            Some(v) => match serde_path_to_error::deserialize::<_, T>(v) {
                Ok(t) => Some(t),
                Err(err) => {
                    let path = err.path().to_string();
                    let field = if path == "." {
                        at.to_string()
                    } else {
                        format!("{at}.{path}")
                    };
                    self.add(field, err.into_inner().to_string());
                    None
                }
            },
        }
    }

    /// RenderSettings at `at` (absent: the defaults).
    fn render_settings(&mut self, value: Option<&serde_json::Value>, at: &str) -> RenderOptions {
        let mut options = RenderOptions::default();
        let Some(body) = self.block::<RenderSettingsBody>(value, at) else {
            return options;
        };
        options.format = self.pick(
            &format!("{at}.RenderFormat"),
            body.render_format.as_deref(),
            RenderFormat::Png,
            &[("Png", RenderFormat::Png), ("Svg", RenderFormat::Svg)],
        );
        let mut pixels = |name: &str, v: Option<i64>| match v {
            None | Some(0) => None,
            Some(n) if (1..=MAX_PIXELS as i64).contains(&n) => Some(n as u32),
            Some(n) => {
                self.add(
                    format!("{at}.{name}"),
                    format!("must be a size in pixels from 1 to {MAX_PIXELS}, or 0 to follow the picture (got {n})"),
                );
                None
            }
        };
        options.width = pixels("xDimension", body.x_dimension);
        options.height = pixels("yDimension", body.y_dimension);
        let mut colour = |name: &str, v: Option<&str>| -> Option<Argb> {
            let v = v.filter(|s| !s.trim().is_empty())?;
            let parsed = Argb::parse(v);
            if parsed.is_none() {
                self.add(
                    format!("{at}.{name}"),
                    format!(
                        "'{v}' is not a colour: give #AARRGGBB, #RRGGBB or a 32-bit ARGB integer"
                    ),
                );
            }
            parsed
        };
        if let Some(c) = colour("BackColorARGB", body.back_color_argb.as_deref()) {
            options.background = c;
        }
        if let Some(c) = colour(
            "OutlineLineColorARGB",
            body.outline_line_color_argb.as_deref(),
        ) {
            options.outline = c;
        }
        let fill = colour("PartFillColorARGB", body.part_fill_color_argb.as_deref());
        // one colour for every part only when one is given and automatic colours are not asked
        options.fill = fill.filter(|_| body.automatically_choose_part_fill_color != Some(true));
        options
    }

    fn into_result<T>(self, value: T) -> Result<T, Vec<FieldError>> {
        if self.0.is_empty() {
            Ok(value)
        } else {
            Err(self.0)
        }
    }
}

/// The ResponseType of an export (name = integer, as the spec numbers them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResponseType {
    Result,
    Render,
    Dxf,
    ReportSource,
    RemnantExport,
    Runtime,
    PartsExport,
}

impl ResponseType {
    pub const ALL: [(&'static str, ResponseType); 7] = [
        ("Result", ResponseType::Result),
        ("Render", ResponseType::Render),
        ("DXF", ResponseType::Dxf),
        ("ReportSource", ResponseType::ReportSource),
        ("RemnantExport", ResponseType::RemnantExport),
        ("Runtime", ResponseType::Runtime),
        ("PartsExport", ResponseType::PartsExport),
    ];

    /// The type's name (the failure body's responseType).
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, t)| *t == self)
            .map(|(n, _)| *n)
            .expect("every type is listed")
    }

    /// A name (any letter case, `_`/`-`/spaces ignored) or the integer.
    pub fn parse(value: &str) -> Result<ResponseType, String> {
        let mut e = Errors::default();
        let t = e.pick(
            "ResponseType",
            Some(value),
            ResponseType::Result,
            &Self::ALL,
        );
        match e.0.pop() {
            None => Ok(t),
            Some(err) => Err(err.message),
        }
    }

    /// The settings block of the nesting request the export needs (spec: Exports), if any.
    pub fn settings_block(self) -> Option<&'static str> {
        match self {
            ResponseType::Result => None,
            ResponseType::Render => Some("RenderSettings"),
            ResponseType::Dxf => Some("DXFExportSettings"),
            ResponseType::ReportSource | ResponseType::Runtime => Some("ReportSourceSettings"),
            ResponseType::RemnantExport => Some("RemnantGenerationSettings"),
            ResponseType::PartsExport => Some("PartExportSettings"),
        }
    }
}

/// What an export job runs (its stored request): the nest, the result, the type, and the
/// ReportSourceRenderingSettings sent with the call (Runtime only).
#[derive(Clone, Debug, serde::Serialize, Deserialize)]
pub struct ExportJob {
    #[serde(rename = "RequestId")]
    pub request_id: String,
    #[serde(rename = "ResultIdentity")]
    pub result_id: String,
    #[serde(rename = "ResponseType")]
    pub response_type: String,
    #[serde(rename = "Settings", default)]
    pub settings: Option<serde_json::Value>,
    /// Made for the export cache (the hub's GenerateExport), kept this many minutes; None: a
    /// webhook export.
    #[serde(
        rename = "CacheMinutes",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub cache_minutes: Option<f64>,
}

/// The fixed body of a failed export (spec: Export deliveries): no internal detail; the
/// reference is the export's own id, which support can look up.
#[derive(Clone, Debug, serde::Serialize, Deserialize, utoipa::ToSchema)]
pub struct ExportFailure {
    pub id: String,
    #[serde(rename = "resultId")]
    pub result_id: String,
    #[serde(rename = "responseType")]
    pub response_type: String,
    pub reference: String,
}

/// DXFExportSettings as sent.
#[derive(Debug, Default, Deserialize, serde::Serialize)]
#[serde(default)]
pub(super) struct DxfSettingsBody {
    #[serde(rename = "DXFVersion")]
    dxf_version: Option<String>,
    #[serde(rename = "ExportFileType")]
    export_file_type: Option<String>,
    #[serde(rename = "FilePathWithoutExtension")]
    file_path_without_extension: Option<String>,
    #[serde(rename = "PreferredFileNameInFolderWithoutExtension")]
    preferred_file_name: Option<String>,
    #[serde(rename = "SheetExportSettings")]
    sheet_export_settings: Option<String>,
    #[serde(rename = "OuterLoopDirection")]
    outer_loop_direction: Option<String>,
    #[serde(rename = "InnerLoopDirection")]
    inner_loop_direction: Option<String>,
    #[serde(rename = "ExportedGeometryStructure")]
    exported_geometry_structure: Option<String>,
    #[serde(rename = "AllPartsSingleLayerName")]
    all_parts_single_layer_name: Option<String>,
    #[serde(rename = "SheetsLayerName")]
    sheets_layer_name: Option<String>,
    #[serde(rename = "NestOrientationAngleCCW")]
    nest_orientation_angle_ccw: Option<f64>,
    #[serde(rename = "PartLabelHeight")]
    part_label_height: Option<f64>,
    #[serde(rename = "AddPartLabels")]
    add_part_labels: Option<bool>,
    #[serde(rename = "AddNestStatistics")]
    add_nest_statistics: Option<bool>,
    #[serde(rename = "ExportSheetBoundaries")]
    export_sheet_boundaries: Option<bool>,
    #[serde(rename = "RemoveCommonEdges")]
    remove_common_edges: Option<bool>,
    #[serde(rename = "ExportPartsAsBlocks")]
    export_parts_as_blocks: Option<bool>,
    #[serde(rename = "ExportAllPartsOnSingleLayer")]
    export_all_parts_on_single_layer: Option<bool>,
    #[serde(rename = "AppendSheetDimensionsToFileName")]
    append_sheet_dimensions: Option<bool>,
    #[serde(rename = "AppendQuantityToFileName")]
    append_quantity: Option<bool>,
    #[serde(rename = "AppendSheetIdentifierToFileName")]
    append_sheet_identifier: Option<bool>,
}

/// DXFExportSettings at `at`.
pub fn dxf_options(
    value: Option<&serde_json::Value>,
    at: &str,
) -> Result<crate::export::dxf::DxfOptions, Vec<FieldError>> {
    use crate::export::dxf::{DxfOptions, LoopDirection, SheetFiles, Structure};
    use dxf::enums::AcadVersion;
    let mut e = Errors::default();
    let mut o = DxfOptions::default();
    if let Some(b) = e.block::<DxfSettingsBody>(value, at) {
        // in the order of their DESIGN 5.1 index (`export::dxf::version_index`)
        let versions = [
            ("R12", AcadVersion::R12),
            ("R2000", AcadVersion::R2000),
            ("R2004", AcadVersion::R2004),
            ("R2007", AcadVersion::R2007),
            ("R2010", AcadVersion::R2010),
            ("R2013", AcadVersion::R2013),
            ("R2018", AcadVersion::R2018),
            ("~AC1009", AcadVersion::R12),
            ("~AC1015", AcadVersion::R2000),
            ("~AC1018", AcadVersion::R2004),
            ("~AC1021", AcadVersion::R2007),
            ("~AC1024", AcadVersion::R2010),
            ("~AC1027", AcadVersion::R2013),
            ("~AC1032", AcadVersion::R2018),
        ];
        o.version = e.pick(
            &format!("{at}.DXFVersion"),
            b.dxf_version.as_deref(),
            AcadVersion::R2000,
            &versions,
        );
        o.zip = e.pick(
            &format!("{at}.ExportFileType"),
            b.export_file_type.as_deref(),
            false,
            &[("Dxf", false), ("Zip", true)],
        );
        o.sheet_files = e.pick(
            &format!("{at}.SheetExportSettings"),
            b.sheet_export_settings.as_deref(),
            SheetFiles::AllInOne,
            &[
                ("AllSheetsInOneFile", SheetFiles::AllInOne),
                ("OneFilePerSheet", SheetFiles::PerSheet),
                ("OneFilePerUniqueSheet", SheetFiles::PerUniqueSheet),
            ],
        );
        let directions = [
            ("Unchanged", LoopDirection::Unchanged),
            ("Clockwise", LoopDirection::Clockwise),
            ("CounterClockwise", LoopDirection::CounterClockwise),
            ("~AntiClockwise", LoopDirection::CounterClockwise),
        ];
        o.outer = e.pick(
            &format!("{at}.OuterLoopDirection"),
            b.outer_loop_direction.as_deref(),
            LoopDirection::Unchanged,
            &directions,
        );
        o.inner = e.pick(
            &format!("{at}.InnerLoopDirection"),
            b.inner_loop_direction.as_deref(),
            LoopDirection::Unchanged,
            &directions,
        );
        o.structure = e.pick(
            &format!("{at}.ExportedGeometryStructure"),
            b.exported_geometry_structure.as_deref(),
            Structure::Polylines,
            &[
                ("Polylines", Structure::Polylines),
                ("Exploded", Structure::Exploded),
                ("Blocks", Structure::Blocks),
            ],
        );
        if b.export_parts_as_blocks == Some(true) {
            o.structure = Structure::Blocks;
        }
        o.part_labels = b.add_part_labels == Some(true);
        o.label_height = e.label_height(b.part_label_height, &format!("{at}.PartLabelHeight"));
        o.statistics = b.add_nest_statistics == Some(true);
        o.sheet_boundaries = b.export_sheet_boundaries == Some(true);
        if b.export_all_parts_on_single_layer == Some(true) {
            o.parts_layer =
                Some(layer_name(b.all_parts_single_layer_name).unwrap_or_else(|| "PARTS".into()));
        }
        if let Some(n) = layer_name(b.sheets_layer_name) {
            o.sheets_layer = n;
        }
        match b.nest_orientation_angle_ccw {
            Some(a) if !a.is_finite() => e.add(
                format!("{at}.NestOrientationAngleCCW"),
                format!("must be an angle in degrees (got {a})"),
            ),
            Some(a) => o.angle_ccw = a,
            None => {}
        }
        // the file name: the preferred one, else the last part of the path given
        let stem = b
            .preferred_file_name
            .filter(|n| !n.trim().is_empty())
            .or_else(|| {
                b.file_path_without_extension.and_then(|p| {
                    p.rsplit(['/', '\\'])
                        .next()
                        .map(str::to_string)
                        .filter(|n| !n.trim().is_empty())
                })
            });
        if let Some(stem) = stem {
            o.file_stem = stem
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
        }
        o.append_dimensions = b.append_sheet_dimensions == Some(true);
        o.append_quantity = b.append_quantity == Some(true);
        o.append_sheet_id = b.append_sheet_identifier == Some(true);
        o.remove_common_edges = b.remove_common_edges == Some(true);
        if o.remove_common_edges && o.structure == Structure::Blocks {
            e.add(
                format!("{at}.RemoveCommonEdges"),
                "common edges cannot be removed from parts written as blocks (each block is a \
                 whole part): use ExportedGeometryStructure Polylines or Exploded",
            );
        }
    }
    e.into_result(o)
}

/// PartExportSettings at `at` as DXF options for one part per file (AddPartLabel,
/// PartLabelHeight, the loop directions, DXFVersion, ExportedGeometryStructure: the names
/// DXFExportSettings uses, but for AddPartLabel).
pub fn part_export_options(
    value: Option<&serde_json::Value>,
    at: &str,
) -> Result<crate::export::dxf::DxfOptions, Vec<FieldError>> {
    let Some(serde_json::Value::Object(fields)) = value else {
        return match value {
            None | Some(serde_json::Value::Null) => dxf_options(None, at),
            Some(_) => Err(vec![FieldError {
                field: at.into(),
                message: "must be an object (PartExportSettings)".into(),
            }]),
        };
    };
    let mut fields = fields.clone();
    match fields.remove("AddPartLabel") {
        None | Some(serde_json::Value::Null) => {}
        Some(serde_json::Value::Bool(b)) => {
            fields.insert("AddPartLabels".into(), b.into());
        }
        Some(other) => {
            return Err(vec![FieldError {
                field: format!("{at}.AddPartLabel"),
                message: format!("must be true or false (got {other})"),
            }])
        }
    }
    // only the settings PartExportSettings has
    fields.retain(|k, _| {
        matches!(
            k.as_str(),
            "AddPartLabels"
                | "PartLabelHeight"
                | "InnerLoopDirection"
                | "OuterLoopDirection"
                | "DXFVersion"
                | "ExportedGeometryStructure"
        )
    });
    dxf_options(Some(&serde_json::Value::Object(fields)), at)
}

/// RemnantGenerationSettings as sent. ExportFolderPath is read and not used: the service never
/// writes into its own file system on a caller's say-so; the remnants come back in the export.
#[derive(Debug, Default, Deserialize, serde::Serialize)]
#[serde(default)]
pub(super) struct RemnantSettingsBody {
    #[serde(rename = "MinimumDimensionMM")]
    minimum_dimension_mm: Option<f64>,
    #[serde(rename = "MinimumAreaMM2")]
    minimum_area_mm2: Option<f64>,
    #[serde(rename = "GenerateRemnantsOnFinalNestedSheetOnly")]
    final_sheet_only: Option<bool>,
    #[serde(rename = "IncludeRemnantsInExportedNests")]
    include_in_nests: Option<bool>,
    #[serde(rename = "AllowRemnantGenerationInsidePartHoles")]
    inside_holes: Option<bool>,
    #[serde(rename = "ExportFolderPath")]
    #[allow(dead_code)]
    export_folder_path: Option<String>,
    #[serde(rename = "RemnantsLayerName")]
    remnants_layer_name: Option<String>,
    #[serde(rename = "RemnantGenerationType")]
    remnant_generation_type: Option<String>,
}

/// RemnantGenerationSettings at `at` (absent: the defaults: CleanCut, no minimums, every
/// layout, layer REMNANTS).
pub fn remnant_options(
    value: Option<&serde_json::Value>,
    at: &str,
) -> Result<crate::export::remnants::RemnantOptions, Vec<FieldError>> {
    use crate::export::remnants::{RemnantKind, RemnantOptions};
    let mut e = Errors::default();
    let mut o = RemnantOptions::default();
    if let Some(b) = e.block::<RemnantSettingsBody>(value, at) {
        o.kind = e.pick(
            &format!("{at}.RemnantGenerationType"),
            b.remnant_generation_type.as_deref(),
            RemnantKind::CleanCut,
            &[
                ("CleanCut", RemnantKind::CleanCut),
                ("Rectangular", RemnantKind::Rectangular),
                ("TrueShape", RemnantKind::TrueShape),
            ],
        );
        o.min_dimension = b.minimum_dimension_mm.map_or(0.0, |v| {
            e.non_negative(&format!("{at}.MinimumDimensionMM"), v)
        });
        o.min_area = b
            .minimum_area_mm2
            .map_or(0.0, |v| e.non_negative(&format!("{at}.MinimumAreaMM2"), v));

        o.final_sheet_only = b.final_sheet_only == Some(true);
        o.include_in_nests = b.include_in_nests == Some(true);
        o.inside_holes = b.inside_holes == Some(true);
        if let Some(n) = layer_name(b.remnants_layer_name) {
            o.layer = n;
        }
    }
    e.into_result(o)
}

/// A layer name as given, made one a DXF can hold: trimmed, and the characters layer names may
/// not contain (control characters, `<>/\":;?*|=` and the backquote) each made `_`. None
/// when nothing is left.
fn layer_name(given: Option<String>) -> Option<String> {
    let name: String = given?
        .trim()
        .chars()
        .map(|c| {
            if c.is_control() || "<>/\\\":;?*|=`".contains(c) {
                '_'
            } else {
                c
            }
        })
        .collect();
    (!name.is_empty()).then_some(name)
}

/// GET /v1/nesting/export/cached: an export made through the hub's GenerateExport.
#[derive(Clone, Debug, Default, serde::Serialize, Deserialize, utoipa::ToSchema)]
pub struct CachedNestingExportResponse {
    /// True when PayloadJson holds the export.
    #[serde(rename = "Ready")]
    pub ready: bool,
    /// Why not, when Ready is false: absent, expired, still being made, failed, or not made
    /// through the hub.
    #[serde(rename = "Error")]
    pub error: Option<String>,
    #[serde(rename = "RequestId")]
    pub request_id: String,
    #[serde(rename = "ResultId")]
    pub result_id: String,
    #[serde(rename = "ResponseType")]
    pub response_type: String,
    /// The export (the body a webhook export would carry), as JSON text.
    #[serde(rename = "PayloadJson")]
    pub payload_json: Option<String>,
    #[serde(rename = "CreatedUtc")]
    pub created_utc: Option<String>,
    #[serde(rename = "ExpiresUtc")]
    pub expires_utc: Option<String>,
}
