//! Quote nesting on the wire (DESIGN 5.6): the submission (a DxfNestingRequest plus
//! ResponseUnits), the QuoteNestResult of each sub-nest with every length and area again in the
//! caller's units (`...InUnits`), the three webhook payloads (InterimResult, Complete, Error;
//! their Status is a descriptive string, not an integer) and the quote export's body.

use super::convert::{to_submission, FieldError, GeometryKind, Submission};
use super::responses::PlacementBody;
use super::types::{Base64NestingRequest, DxfNestingRequest};
use crate::geometry::Units;
use crate::nest2d::{Placement, Problem};
use crate::quote::{SubNest, DEFAULT_SUB_NEST_S};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// POST /v1/nesting/quotenesting and /geometryquotenesting.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
#[serde(default)]
pub struct QuoteNestingRequest {
    /// Required: the parts (each one a sub-nest), the sheets they may use, the settings
    /// (MaxRunTimeSeconds is each sub-nest's limit; 0 means 5 s).
    #[serde(rename = "Request")]
    #[schema(required = true)]
    pub request: Option<Base64NestingRequest>,
    #[serde(rename = "ResultsWebhookUri")]
    pub results_webhook_uri: Option<String>,
    #[serde(rename = "AutomaticallyStartNesting")]
    pub automatically_start_nesting: Option<bool>,
    /// The units of the `...InUnits` figures: Millimetres (the default), Centimetres, Metres,
    /// Inches, Feet (DESIGN 5.1 names, any case, or their index).
    #[serde(rename = "ResponseUnits")]
    pub response_units: Option<String>,
}

impl QuoteNestingRequest {
    /// The standard submission inside (what is validated exactly as POST /v1/nesting is).
    pub fn nesting(&self) -> DxfNestingRequest {
        DxfNestingRequest {
            request: self.request.clone(),
            results_webhook_uri: self.results_webhook_uri.clone(),
            automatically_start_nesting: self.automatically_start_nesting,
        }
    }
}

/// The units `...InUnits` figures are written in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ResponseUnits {
    units: Units,
}

impl ResponseUnits {
    /// ResponseUnits as given: absent, blank or FromFile mean millimetres (a response has no
    /// file to take its units from).
    pub fn parse(value: Option<&str>) -> Result<ResponseUnits, String> {
        let units = match value.map(str::trim).filter(|v| !v.is_empty()) {
            None => Units::Millimetres,
            Some(v) => match Units::parse(v) {
                Some(Units::FromFile) => Units::Millimetres,
                Some(u) => u,
                None => {
                    let names: Vec<String> =
                        Units::ALL[1..].iter().map(|u| u.to_string()).collect();
                    return Err(format!(
                        "unknown value '{v}'; allowed: {}",
                        names.join(", ")
                    ));
                }
            },
        };
        Ok(ResponseUnits { units })
    }
    fn mm_per_unit(self) -> f64 {
        self.units.to_mm().unwrap_or(1.0)
    }
    pub fn name(self) -> String {
        self.units.to_string()
    }
    fn length(self, mm: f64) -> f64 {
        mm / self.mm_per_unit()
    }
    fn area(self, mm2: f64) -> f64 {
        mm2 / (self.mm_per_unit() * self.mm_per_unit())
    }
}

/// A validated quote submission.
#[derive(Debug)]
pub struct QuoteSubmission {
    pub submission: Submission,
    pub units: ResponseUnits,
}

impl QuoteSubmission {
    /// What the quote may run for in all (each sub-nest's limit times the sub-nests): the
    /// reservation admission weighs.
    pub fn max_run_time_s(&self) -> f64 {
        let p = &self.submission.converted.problem;
        p.settings.max_run_time_s * p.parts.len() as f64
    }
}

/// Validates a quote submission: everything POST /v1/nesting checks, and ResponseUnits; a
/// MaxRunTimeSeconds of 0 becomes the sub-nest default.
pub fn to_quote_submission(
    req: &QuoteNestingRequest,
    default_kind: GeometryKind,
) -> Result<QuoteSubmission, Vec<FieldError>> {
    let mut errors = Vec::new();
    let units = ResponseUnits::parse(req.response_units.as_deref())
        .map_err(|message| {
            errors.push(FieldError {
                field: "ResponseUnits".into(),
                message,
            })
        })
        .ok();
    let submission = to_submission(&req.nesting(), default_kind)
        .map_err(|e| errors.extend(e))
        .ok();
    // a quote's sub-nests go to its webhook (held or not), and it prices real quantities
    if !req.automatically_start_nesting.unwrap_or(true)
        && req
            .results_webhook_uri
            .as_deref()
            .is_none_or(|u| u.trim().is_empty())
    {
        errors.push(FieldError {
            field: "ResultsWebhookUri".into(),
            message: "missing: a quote's sub-nests are delivered to it, held or not".into(),
        });
    }
    for (i, p) in req
        .request
        .iter()
        .flat_map(|r| r.parts.iter().flatten())
        .enumerate()
    {
        // (a quantity of 0 without fillers is refused by the standard validation already)
        if p.quantity == 0 && p.filler_part_quantity > 0 {
            errors.push(FieldError {
                field: format!("Request.Parts[{i}].Quantity"),
                message:
                    "must be at least 1: a quote prices the quantity (filler parts do not apply)"
                        .into(),
            });
        }
    }
    let (Some(mut submission), Some(units), true) = (submission, units, errors.is_empty()) else {
        return Err(errors);
    };
    apply_sub_nest_default(&mut submission.converted.problem, req.request.as_ref());
    Ok(QuoteSubmission { submission, units })
}

/// MaxRunTimeSeconds left at 0 means the sub-nest default, not the standard nest's.
pub fn apply_sub_nest_default(problem: &mut Problem, request: Option<&Base64NestingRequest>) {
    let asked = request
        .and_then(|r| r.nest_settings.as_ref())
        .map(|s| s.max_run_time_seconds)
        .unwrap_or(0.0);
    if asked == 0.0 {
        problem.settings.max_run_time_s = DEFAULT_SUB_NEST_S;
    }
}

/// One sub-nest's figures. Lengths and areas in millimetres, and again in ResponseUnits.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct QuoteNestResult {
    /// The sub-nest: the part's place in the request's Parts (after UseAllPartsInFile).
    #[serde(rename = "NestIndex")]
    pub nest_index: u32,
    #[serde(rename = "PartIdentifier")]
    pub part_identifier: String,
    #[serde(rename = "SheetIdentifier")]
    pub sheet_identifier: String,
    #[serde(rename = "Quantity")]
    pub quantity: u32,
    /// Copies on a full sheet (the fullest sheet of the sub-nest).
    #[serde(rename = "PartsPerSheet")]
    pub parts_per_sheet: u32,
    #[serde(rename = "SheetsRequired")]
    pub sheets_required: u32,
    /// Percent: the quantity's part area over the material it consumes (full sheets whole,
    /// the last one up to its used length).
    #[serde(rename = "Utilisation")]
    pub utilisation: f64,
    /// One copy's area, holes subtracted (mm²).
    #[serde(rename = "PartArea")]
    pub part_area: f64,
    /// The material the quantity consumes over the quantity (mm²).
    #[serde(rename = "MaterialAreaPerPart")]
    pub material_area_per_part: f64,
    /// Outlines and holes as drawn, arcs as arcs (mm).
    #[serde(rename = "CutLength")]
    pub cut_length: f64,
    #[serde(rename = "BoundingBoxX")]
    pub bounding_box_x: f64,
    #[serde(rename = "BoundingBoxY")]
    pub bounding_box_y: f64,
    /// Always "mm": the unit of the figures without `InUnits`.
    #[serde(rename = "Units")]
    pub units: String,
    #[serde(rename = "ResponseUnits")]
    pub response_units: String,
    #[serde(rename = "PartAreaInUnits")]
    pub part_area_in_units: f64,
    #[serde(rename = "MaterialAreaPerPartInUnits")]
    pub material_area_per_part_in_units: f64,
    #[serde(rename = "CutLengthInUnits")]
    pub cut_length_in_units: f64,
    #[serde(rename = "BoundingBoxXInUnits")]
    pub bounding_box_x_in_units: f64,
    #[serde(rename = "BoundingBoxYInUnits")]
    pub bounding_box_y_in_units: f64,
    /// The sheet's size (mm).
    #[serde(rename = "SheetXDimension")]
    pub sheet_x_dimension: f64,
    #[serde(rename = "SheetYDimension")]
    pub sheet_y_dimension: f64,
    /// Copies on the last sheet, and its used length along the nesting direction (mm).
    #[serde(rename = "LastSheetPartCount")]
    pub last_sheet_part_count: u32,
    #[serde(rename = "LastSheetUsedLength")]
    pub last_sheet_used_length: f64,
    #[serde(rename = "ElapsedSeconds")]
    pub elapsed_seconds: f64,
    /// Quote export only: a full sheet's layout, cut SheetsRequired - 1 times (every time
    /// when LastSheetPartCount equals PartsPerSheet).
    #[serde(
        rename = "Placements",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub placements: Option<Vec<PlacementBody>>,
    /// Quote export only: the last sheet's layout.
    #[serde(
        rename = "LastSheetPlacements",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub last_sheet_placements: Option<Vec<PlacementBody>>,
}

/// A sub-nest's QuoteNestResult, with its placements (the export's form; the webhook's drops
/// them with `without_placements`).
pub fn quote_nest_result(problem: &Problem, s: &SubNest, units: ResponseUnits) -> QuoteNestResult {
    let sheet = &problem.sheets[s.sheet];
    let (w, h) = sheet.extent();
    let body = |placements: &[Placement]| {
        placements
            .iter()
            .map(|p| PlacementBody {
                part_identifier: problem.parts[p.part].id.clone(),
                instance_index: p.instance,
                x: p.x,
                y: p.y,
                rotation: p.rotation,
                mirrored: p.mirrored,
                is_filler: p.is_filler,
            })
            .collect()
    };
    QuoteNestResult {
        nest_index: s.part as u32,
        part_identifier: problem.parts[s.part].id.clone(),
        sheet_identifier: sheet.id.clone(),
        quantity: s.quantity,
        parts_per_sheet: s.parts_per_sheet,
        sheets_required: s.sheets_required,
        utilisation: s.utilisation,
        part_area: s.part_area,
        material_area_per_part: s.material_area_per_part,
        cut_length: s.cut_length,
        bounding_box_x: s.bounding_box.0,
        bounding_box_y: s.bounding_box.1,
        units: "mm".into(),
        response_units: units.name(),
        part_area_in_units: units.area(s.part_area),
        material_area_per_part_in_units: units.area(s.material_area_per_part),
        cut_length_in_units: units.length(s.cut_length),
        bounding_box_x_in_units: units.length(s.bounding_box.0),
        bounding_box_y_in_units: units.length(s.bounding_box.1),
        sheet_x_dimension: w,
        sheet_y_dimension: h,
        last_sheet_part_count: s.last_sheet.len() as u32,
        last_sheet_used_length: s.last_used_length,
        elapsed_seconds: s.elapsed_s,
        placements: Some(body(&s.full_sheet)),
        last_sheet_placements: Some(body(&s.last_sheet)),
    }
}

impl QuoteNestResult {
    pub fn without_placements(&self) -> QuoteNestResult {
        QuoteNestResult {
            placements: None,
            last_sheet_placements: None,
            ..self.clone()
        }
    }
}

/// Status strings of the quote payloads (the spec: descriptive strings, not integers).
pub const QUOTE_INTERIM: &str = "InterimResult";
pub const QUOTE_COMPLETE: &str = "Complete";
pub const QUOTE_ERROR: &str = "Error";

/// A quote's webhook payload: InterimResult once per sub-nest (NestIndex, TotalNests,
/// Result), Complete once at the end (TotalNests), Error for a sub-nest that could not be
/// priced (its NestIndex) or for the whole quote (NestIndex absent).
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct QuotePayload {
    #[serde(rename = "Status")]
    pub status: String,
    #[serde(rename = "RequestId")]
    pub request_id: String,
    /// 0-based: the part's place in the request's Parts (after UseAllPartsInFile expands them).
    #[serde(rename = "NestIndex", skip_serializing_if = "Option::is_none", default)]
    pub nest_index: Option<u32>,
    #[serde(
        rename = "TotalNests",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub total_nests: Option<u32>,
    #[serde(rename = "Result", skip_serializing_if = "Option::is_none", default)]
    pub result: Option<QuoteNestResult>,
    #[serde(
        rename = "ErrorReport",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub error_report: Option<String>,
    #[serde(rename = "ErrorCode", skip_serializing_if = "Option::is_none", default)]
    pub error_code: Option<String>,
}

impl QuotePayload {
    pub fn interim(request_id: &str, index: u32, total: u32, result: QuoteNestResult) -> Self {
        QuotePayload {
            status: QUOTE_INTERIM.into(),
            request_id: request_id.into(),
            nest_index: Some(index),
            total_nests: Some(total),
            result: Some(result),
            ..Default::default()
        }
    }
    pub fn complete(request_id: &str, total: u32) -> Self {
        QuotePayload {
            status: QUOTE_COMPLETE.into(),
            request_id: request_id.into(),
            total_nests: Some(total),
            ..Default::default()
        }
    }
    pub fn error(request_id: &str, index: Option<u32>, code: &str, report: &str) -> Self {
        QuotePayload {
            status: QUOTE_ERROR.into(),
            request_id: request_id.into(),
            nest_index: index,
            error_report: Some(report.into()),
            error_code: Some(code.into()),
            ..Default::default()
        }
    }
}

/// The quote export's body (GET /v1/nesting/exportquotenest): every priced sub-nest, in
/// order, with its placements.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct QuoteExport {
    #[serde(rename = "RequestId")]
    pub request_id: String,
    #[serde(rename = "Nests")]
    pub nests: Vec<QuoteNestResult>,
}

/// The name the quote export is recorded under among a result's exports (it has no
/// ResponseType of the spec's list; one quote export per quote, as each ResponseType is once
/// per result).
pub const QUOTE_EXPORT: &str = "QuoteNest";

/// The quote export's body from a quote's stored results (`(status, layout)` of each, as its
/// runner stored them): every priced sub-nest, in NestIndex order, with its placements.
pub fn export_body<'a>(
    request_id: &str,
    stored: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<String, String> {
    let mut nests = Vec::new();
    for (status, layout) in stored {
        let payload: QuotePayload = serde_json::from_str(status)
            .map_err(|e| format!("a stored sub-nest is damaged: {e}"))?;
        if payload.status != QUOTE_INTERIM {
            continue;
        }
        let full: QuoteNestResult = serde_json::from_str(layout)
            .map_err(|e| format!("a stored sub-nest's layout is damaged: {e}"))?;
        nests.push((payload.nest_index.unwrap_or(u32::MAX), full));
    }
    nests.sort_by_key(|(i, _)| *i);
    Ok(super::to_json(&QuoteExport {
        request_id: request_id.into(),
        nests: nests.into_iter().map(|(_, n)| n).collect(),
    }))
}
