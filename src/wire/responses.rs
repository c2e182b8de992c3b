//! Response and webhook bodies (spec "Resources" and "Events", DESIGN 5.3), PascalCase exactly
//! as named there.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Submission acknowledgement; 400 and 401 answers of the submission endpoints use this shape
/// too, with `Errors` saying what was wrong.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct ApiNestingResult {
    #[serde(rename = "RequestId")]
    pub request_id: String,
    /// Why the request was refused (absent on success).
    #[serde(rename = "Error", skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Every problem found, each naming its field by JSON path.
    #[serde(rename = "Errors", skip_serializing_if = "Vec::is_empty", default)]
    pub errors: Vec<FieldErrorBody>,
    /// What was accepted but ignored or adjusted (skipped DXF entities, unused settings).
    #[serde(rename = "Warnings", skip_serializing_if = "Vec::is_empty", default)]
    pub warnings: Vec<String>,
}

impl ApiNestingResult {
    /// The answer to an accepted submission: its RequestId and any warnings.
    pub fn accepted(request_id: String, warnings: Vec<String>) -> ApiNestingResult {
        ApiNestingResult {
            request_id,
            error: None,
            errors: Vec::new(),
            warnings,
        }
    }
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct FieldErrorBody {
    #[serde(rename = "FieldName")]
    pub field_name: String,
    #[serde(rename = "Message")]
    pub message: String,
}

/// Errors of endpoints that have no shape of their own: `{Success: false, Error}`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct ErrorBody {
    #[serde(rename = "Success")]
    pub success: bool,
    #[serde(rename = "Error")]
    pub error: String,
}

/// GET /v1/nesting/status.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct NestingStatusResponse {
    #[serde(rename = "RequestId")]
    pub request_id: String,
    /// Queued, Running, Completed or Failed (a held job reports Queued).
    #[serde(rename = "Status")]
    pub status: String,
    #[serde(rename = "ResultIdentity")]
    pub result_identity: Option<String>,
    #[serde(rename = "Error")]
    pub error: Option<String>,
    #[serde(rename = "CompletedAt")]
    pub completed_at: Option<String>,
}

/// Body of POST /v1/nesting/delayedstart and /v1/nesting/continue.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
#[serde(default)]
pub struct RequestIdBody {
    #[serde(rename = "RequestId")]
    #[schema(value_type = String, required = true, min_length = 1)]
    pub request_id: Option<String>,
}

/// Body of POST /v1/nesting/result/.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
#[serde(default)]
pub struct ResultQuery {
    #[serde(rename = "RequestId")]
    #[schema(value_type = String, required = true, min_length = 1)]
    pub request_id: Option<String>,
    /// None or empty: the job's latest result.
    #[serde(rename = "ResultIdentity")]
    pub result_identity: Option<String>,
}

/// Continue acknowledgement (delayed start, continue).
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct ContinueAck {
    #[serde(rename = "Success")]
    pub success: bool,
    #[serde(rename = "ErrorReason")]
    pub error_reason: Option<String>,
}

/// GET /v1/apiKey/validUntil.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct KeyExpiry {
    /// A key that never expires reports 9999-12-31T23:59:59Z.
    #[serde(rename = "Expires")]
    pub expires: String,
}

/// GET /v1/auth/validate.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct AuthValidation {
    #[serde(rename = "Valid")]
    pub valid: bool,
    #[serde(rename = "UserId")]
    pub user_id: i64,
    #[serde(rename = "KeyType")]
    pub key_type: String,
}

/// The webhook body of standard 2D nests.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct NestingResultData {
    #[serde(rename = "RequestId")]
    pub request_id: String,
    /// The same value under the name the spec gives it in webhook payloads.
    #[serde(rename = "NestIdentifier")]
    pub nest_identifier: String,
    #[serde(rename = "Status")]
    pub status: NestingStatusMessage,
}

/// NestingStatus: 0 interim result, 1 complete, 2 error (DESIGN 5.3).
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct NestingStatusMessage {
    #[serde(rename = "NestingStatus")]
    pub nesting_status: i32,
    #[serde(rename = "ResultIdentity")]
    pub result_identity: Option<String>,
    #[serde(rename = "ErrorReport")]
    pub error_report: Option<String>,
    #[serde(rename = "ErrorCode")]
    pub error_code: Option<String>,
    #[serde(rename = "Utilisation", skip_serializing_if = "Option::is_none")]
    pub utilisation: Option<f64>,
    #[serde(rename = "SheetsUsed", skip_serializing_if = "Option::is_none")]
    pub sheets_used: Option<u32>,
    #[serde(rename = "PartsRequested", skip_serializing_if = "Option::is_none")]
    pub parts_requested: Option<u32>,
    #[serde(rename = "PartsPlaced", skip_serializing_if = "Option::is_none")]
    pub parts_placed: Option<u32>,
    #[serde(rename = "PartsUnplaced", skip_serializing_if = "Option::is_none")]
    pub parts_unplaced: Option<u32>,
    #[serde(rename = "ElapsedSeconds", skip_serializing_if = "Option::is_none")]
    pub elapsed_seconds: Option<f64>,
    #[serde(rename = "Units", skip_serializing_if = "Option::is_none")]
    pub units: Option<String>,
    #[serde(rename = "NestedSheetsInfo")]
    pub nested_sheets_info: Vec<NestedSheetInfo>,
    #[serde(rename = "UnplacedParts")]
    pub unplaced_parts: Vec<UnplacedPart>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct NestedSheetInfo {
    #[serde(rename = "SheetIdentifier")]
    pub sheet_identifier: String,
    #[serde(rename = "Multiplicity")]
    pub multiplicity: u32,
    #[serde(rename = "XDimension")]
    pub x_dimension: f64,
    #[serde(rename = "YDimension")]
    pub y_dimension: f64,
    #[serde(rename = "Utilisation")]
    pub utilisation: f64,
    #[serde(rename = "UsedLength")]
    pub used_length: f64,
    #[serde(rename = "PartCount")]
    pub part_count: u32,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct UnplacedPart {
    #[serde(rename = "PartIdentifier")]
    pub part_identifier: String,
    #[serde(rename = "UnplacedQuantity")]
    pub unplaced_quantity: u32,
    #[serde(rename = "Reason")]
    pub reason: String,
}

/// Summary figures of a result (the statistics of DESIGN 5.3).
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct NestStatistics {
    #[serde(rename = "Utilisation")]
    pub utilisation: f64,
    #[serde(rename = "SheetsUsed")]
    pub sheets_used: u32,
    #[serde(rename = "PartsRequested")]
    pub parts_requested: u32,
    #[serde(rename = "PartsPlaced")]
    pub parts_placed: u32,
    #[serde(rename = "PartsUnplaced")]
    pub parts_unplaced: u32,
    #[serde(rename = "UsedLength")]
    pub used_length: f64,
    #[serde(rename = "ElapsedSeconds")]
    pub elapsed_seconds: f64,
}

/// One placed part (DESIGN 5.2): mirror about the part's local Y axis when Mirrored, rotate
/// Rotation degrees counter-clockwise about its local origin, translate by (X, Y) from the
/// sheet's bottom-left corner.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct PlacementBody {
    #[serde(rename = "PartIdentifier")]
    pub part_identifier: String,
    #[serde(rename = "InstanceIndex")]
    pub instance_index: u32,
    #[serde(rename = "X")]
    pub x: f64,
    #[serde(rename = "Y")]
    pub y: f64,
    #[serde(rename = "Rotation")]
    pub rotation: f64,
    #[serde(rename = "Mirrored")]
    pub mirrored: bool,
    #[serde(rename = "IsFiller")]
    pub is_filler: bool,
}

/// One distinct sheet layout of NestingResultResponse.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct SheetLayoutBody {
    #[serde(rename = "SheetIdentifier")]
    pub sheet_identifier: String,
    #[serde(rename = "LayoutIndex")]
    pub layout_index: u32,
    #[serde(rename = "Multiplicity")]
    pub multiplicity: u32,
    #[serde(rename = "XDimension")]
    pub x_dimension: f64,
    #[serde(rename = "YDimension")]
    pub y_dimension: f64,
    #[serde(rename = "Utilisation")]
    pub utilisation: f64,
    #[serde(rename = "UsedLength")]
    pub used_length: f64,
    #[serde(rename = "Placements")]
    pub placements: Vec<PlacementBody>,
    /// The straight cuts that separate several parts at once (common-line cutting).
    #[serde(rename = "CommonCuts")]
    pub common_cuts: Vec<CommonCutBody>,
}

/// One common cut: the segment from (X1, Y1) to (X2, Y2), sheet coordinates, and the parts on
/// either side of it. `InstanceIndices` (kerf's addition) pairs with `PartIdentifiers` item by
/// item, so a reader knows which copy of a part each one is.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct CommonCutBody {
    #[serde(rename = "X1")]
    pub x1: f64,
    #[serde(rename = "Y1")]
    pub y1: f64,
    #[serde(rename = "X2")]
    pub x2: f64,
    #[serde(rename = "Y2")]
    pub y2: f64,
    #[serde(rename = "PartIdentifiers")]
    pub part_identifiers: Vec<String>,
    #[serde(rename = "InstanceIndices", default)]
    pub instance_indices: Vec<u32>,
}

/// The machine-readable layout (the Result export, and `kerf nest --out`).
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct NestingResultResponse {
    #[serde(rename = "ResultIdentity")]
    pub result_identity: String,
    #[serde(rename = "RequestId")]
    pub request_id: String,
    #[serde(rename = "Units")]
    pub units: String,
    /// The evaluation backend that ran the search ("cpu" or "gpu: NAME").
    #[serde(rename = "Engine")]
    pub engine: String,
    #[serde(rename = "Sheets")]
    pub sheets: Vec<SheetLayoutBody>,
    #[serde(rename = "UnplacedParts")]
    pub unplaced_parts: Vec<UnplacedPart>,
    #[serde(rename = "Statistics")]
    pub statistics: NestStatistics,
}

/// One nest (distinct layout) of a report; renderings come with the exports.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct ReportNest {
    #[serde(rename = "LayoutIndex")]
    pub layout_index: u32,
    #[serde(rename = "SheetIdentifier")]
    pub sheet_identifier: String,
    #[serde(rename = "Multiplicity")]
    pub multiplicity: u32,
    #[serde(rename = "XDimension")]
    pub x_dimension: f64,
    #[serde(rename = "YDimension")]
    pub y_dimension: f64,
    #[serde(rename = "Utilisation")]
    pub utilisation: f64,
    #[serde(rename = "UsedLength")]
    pub used_length: f64,
    #[serde(rename = "PartCount")]
    pub part_count: u32,
    #[serde(rename = "Placements")]
    pub placements: Vec<PlacementBody>,
    #[serde(rename = "Base64EncodedRendering")]
    pub base64_encoded_rendering: Option<String>,
    #[serde(rename = "RenderFormat")]
    pub render_format: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct ReportPart {
    #[serde(rename = "PartIdentifier")]
    pub part_identifier: String,
    #[serde(rename = "PartName")]
    pub part_name: String,
    #[serde(rename = "Requested")]
    pub requested: u32,
    #[serde(rename = "Placed")]
    pub placed: u32,
    /// True-shape area in square millimetres, holes subtracted.
    #[serde(rename = "Area")]
    pub area: f64,
    #[serde(rename = "Base64EncodedPreview")]
    pub base64_encoded_preview: Option<String>,
}

/// POST /v1/nesting/result/: the report source plus the status message last delivered.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct ReportSourceResponseV1 {
    #[serde(rename = "ResultIdentity")]
    pub result_identity: String,
    #[serde(rename = "RequestId")]
    pub request_id: String,
    #[serde(rename = "Units")]
    pub units: String,
    #[serde(rename = "Summary")]
    pub summary: NestStatistics,
    #[serde(rename = "Nests")]
    pub nests: Vec<ReportNest>,
    #[serde(rename = "Parts")]
    pub parts: Vec<ReportPart>,
    #[serde(rename = "UnplacedParts")]
    pub unplaced_parts: Vec<UnplacedPart>,
    /// The status message last delivered (POST /v1/nesting/result/ only; the ReportSource
    /// export has none).
    #[serde(rename = "Status", skip_serializing_if = "Option::is_none")]
    pub status: Option<NestingStatusMessage>,
}

/// The Runtime export: the report with its renderings, and how the result was made.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct RuntimeResultResponse {
    #[serde(flatten)]
    pub report: ReportSourceResponseV1,
    /// The nest's running time, in seconds.
    #[serde(rename = "RunTimeSeconds")]
    pub run_time_seconds: f64,
    /// "gpu: NAME" or "cpu".
    #[serde(rename = "Engine")]
    pub engine: String,
    #[serde(rename = "Seed")]
    pub seed: u64,
}

/// GET /v1/nesting/failures: one failed job, or a job whose delivery gave up.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct FailureBody {
    #[serde(rename = "RequestId")]
    pub request_id: String,
    #[serde(rename = "Status")]
    pub status: String,
    #[serde(rename = "Error")]
    pub error: Option<String>,
    #[serde(rename = "FailedAt")]
    pub failed_at: Option<String>,
    #[serde(rename = "Deliveries")]
    pub deliveries: Vec<DeliveryBody>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct DeliveryBody {
    #[serde(rename = "Uri")]
    pub uri: String,
    #[serde(rename = "Attempts")]
    pub attempts: i64,
    #[serde(rename = "LastAttemptUtc")]
    pub last_attempt_utc: Option<String>,
    #[serde(rename = "LastStatusCode")]
    pub last_status_code: Option<i64>,
    #[serde(rename = "LastError")]
    pub last_error: Option<String>,
    #[serde(rename = "GaveUp")]
    pub gave_up: bool,
}

/// GET /readyz.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct Readiness {
    #[serde(rename = "Ready")]
    pub ready: bool,
    #[serde(rename = "Store")]
    pub store: String,
    /// This node's compute adapter: the GPU's name, "cpu", or "none" (a front end).
    #[serde(rename = "Compute")]
    pub compute: String,
    /// This node's id.
    #[serde(rename = "Node")]
    pub node: String,
    /// This node's role: serve, front or worker.
    #[serde(rename = "Role")]
    pub role: String,
    /// The nodes heard from lately, this one included.
    #[serde(rename = "Nodes")]
    pub nodes: Vec<LiveNode>,
}

/// A node of the cluster as /readyz lists it.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct LiveNode {
    #[serde(rename = "Id")]
    pub id: String,
    #[serde(rename = "Role")]
    pub role: String,
    #[serde(rename = "Compute")]
    pub compute: String,
    #[serde(rename = "Slots")]
    pub slots: i64,
    #[serde(rename = "Host")]
    pub host: String,
    #[serde(rename = "StartedUtc")]
    pub started_utc: String,
    #[serde(rename = "SeenUtc")]
    pub seen_utc: String,
}

impl From<&crate::store::NodeSeen> for LiveNode {
    fn from(n: &crate::store::NodeSeen) -> LiveNode {
        LiveNode {
            id: n.node.id.clone(),
            role: n.node.role.clone(),
            compute: n.node.compute.clone(),
            slots: n.node.slots,
            host: n.node.host.clone(),
            started_utc: utc(n.node.started_at),
            seen_utc: utc(n.seen_at),
        }
    }
}

/// A UTC timestamp on the wire (RFC 3339, milliseconds, `Z`).
pub fn utc(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// What a key that never expires reports as its expiry (the spec's 31/12/9999).
pub const NEVER_EXPIRES: &str = "9999-12-31T23:59:59Z";

/// RenderResponse: GET /v1/nesting/render/ and the Render export's delivery (DESIGN 5.3).
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct RenderResponse {
    /// The image (PNG or SVG), base64-encoded.
    #[serde(rename = "Base64EncodedRendering")]
    pub base64_encoded_rendering: String,
    /// "png" or "svg".
    #[serde(rename = "RenderFormat")]
    pub render_format: String,
    #[serde(rename = "ResultIdentity")]
    pub result_identity: String,
    /// Width in pixels (a string, as the spec declares it).
    #[serde(rename = "xDimension")]
    pub x_dimension: String,
    /// Height in pixels (a string, as the spec declares it).
    #[serde(rename = "yDimension")]
    pub y_dimension: String,
}

/// The answer to an export call: `{Success: true}` once queued (Error only on refusals).
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct ExportAccepted {
    #[serde(rename = "Success")]
    pub success: bool,
    #[serde(rename = "Error", skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// DxfBase64Response: the DXF and RemnantExport deliveries.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct DxfBase64Response {
    #[serde(rename = "ResultIdentity")]
    pub result_identity: String,
    /// The DXF file, or a zip of DXF files (ExportFileType 1), base64-encoded.
    #[serde(rename = "Base64EncodedResponse")]
    pub base64_encoded_response: String,
    /// The version written, as the DESIGN 5.1 index: R12 0, R2000 1, R2004 2, R2007 3,
    /// R2010 4, R2013 5, R2018 6.
    #[serde(rename = "DXFVersion")]
    pub dxf_version: u32,
    /// 0 a DXF file, 1 a zip of DXF files.
    #[serde(rename = "ExportFileType")]
    pub export_file_type: u32,
    /// RemnantExport only: what each file of the zip holds, in the zip's order.
    #[serde(rename = "Remnants", default, skip_serializing_if = "Option::is_none")]
    pub remnants: Option<Vec<RemnantInfo>>,
}

/// One remnant of a RemnantExport: its file in the zip, where it is and how big.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct RemnantInfo {
    #[serde(rename = "FileName")]
    pub file_name: String,
    #[serde(rename = "SheetIdentifier")]
    pub sheet_identifier: String,
    /// The layout's index in the result's Sheets (from 0).
    #[serde(rename = "LayoutIndex")]
    pub layout_index: u32,
    /// Physical sheets that have this remnant: the layout's multiplicity, or 1 with
    /// GenerateRemnantsOnFinalNestedSheetOnly.
    #[serde(rename = "Quantity")]
    pub quantity: u32,
    /// Its bounding box in sheet coordinates (mm).
    #[serde(rename = "X")]
    pub x: f64,
    #[serde(rename = "Y")]
    pub y: f64,
    #[serde(rename = "Width")]
    pub width: f64,
    #[serde(rename = "Height")]
    pub height: f64,
    /// Square millimetres (holes subtracted).
    #[serde(rename = "Area")]
    pub area: f64,
}

/// ExportPartsResponse (PartsExport): each part's geometry as a DXF file of its own.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct ExportPartsResponse {
    #[serde(rename = "ResultIdentity")]
    pub result_identity: String,
    /// As in DxfBase64Response: R2000 1 ... R2018 6.
    #[serde(rename = "DXFVersion")]
    pub dxf_version: u32,
    #[serde(rename = "Parts")]
    pub parts: Vec<ExportedPart>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct ExportedPart {
    #[serde(rename = "PartIdentifier")]
    pub part_identifier: String,
    #[serde(rename = "FileName")]
    pub file_name: String,
    /// The part's DXF: its outline and holes in its own frame (as nested, unrotated), mm.
    #[serde(rename = "Base64EncodedDxf")]
    pub base64_encoded_dxf: String,
}
