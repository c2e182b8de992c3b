//! The 1D interface (DESIGN 5.5): the submission body, its one-time conversion into a
//! `nest1d::Problem` with field-level errors, and the 1D result (the body of
//! POST /v1/nesting/1D/result and the Result of the Nesting1DWebhookPayload).

use super::convert::{Errors, FieldError, MAX_PART_INSTANCES};
use super::results::{STATUS_COMPLETE, STATUS_ERROR};
use crate::nest1d::{Objective, Piece, Plan, Problem, Stock};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// MaxRunTimeSeconds when the request leaves it 0: the solver stops as soon as its plan is
/// proven optimal, which on most real jobs is well under a second.
pub const DEFAULT_RUN_TIME_1D_S: f64 = 10.0;
/// The longest bar or piece accepted (mm): 10 km, far past any real stock, and a bound that
/// keeps the solver's integer lengths exact.
pub const MAX_LENGTH_MM: f64 = 1.0e7;

/// POST /v1/nesting/1D.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
#[serde(default)]
pub struct Nesting1DRequestBody {
    #[serde(rename = "Request")]
    #[schema(required = true)]
    pub request: Option<Nesting1DRequest>,
    /// Absolute HTTPS URL the plan is delivered to (required).
    #[serde(rename = "ResultsWebhookUri")]
    #[schema(required = true)]
    pub results_webhook_uri: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
#[serde(default)]
pub struct Nesting1DRequest {
    #[serde(rename = "Stock")]
    pub stock: Option<Vec<Stock1D>>,
    #[serde(rename = "Parts")]
    pub parts: Option<Vec<Part1D>>,
    /// Material lost at each cut between two pieces (mm).
    #[serde(rename = "Kerf")]
    pub kerf: Option<f64>,
    /// Cut off the start of every bar before the first piece (mm).
    #[serde(rename = "StartTrim")]
    pub start_trim: Option<f64>,
    /// Cut off the end of every bar (mm).
    #[serde(rename = "EndTrim")]
    pub end_trim: Option<f64>,
    /// 0 or absent: 10 s. The solver ends sooner when its plan is proven optimal.
    #[serde(rename = "MaxRunTimeSeconds")]
    pub max_run_time_seconds: Option<f64>,
    /// MinimiseStock (default), MinimiseWaste or MinimiseCost.
    #[serde(rename = "Objective")]
    pub objective: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
#[serde(default)]
pub struct Stock1D {
    /// Default: S1, S2, ... by position.
    #[serde(rename = "Identifier")]
    pub identifier: Option<String>,
    #[serde(rename = "Length")]
    pub length: Option<f64>,
    /// 0 or absent: unlimited.
    #[serde(rename = "Quantity")]
    pub quantity: Option<f64>,
    /// Cost of one bar (MinimiseCost; 0 or absent: its length).
    #[serde(rename = "Cost")]
    pub cost: Option<f64>,
    /// Among equally good stock, the higher is opened first.
    #[serde(rename = "Priority")]
    pub priority: Option<i32>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
#[serde(default)]
pub struct Part1D {
    /// Default: P1, P2, ... by position.
    #[serde(rename = "Identifier")]
    pub identifier: Option<String>,
    #[serde(rename = "Length")]
    pub length: Option<f64>,
    #[serde(rename = "Quantity")]
    pub quantity: Option<f64>,
}

/// The answer to POST /v1/nesting/1D: ApiNestingResult, and on refusal also ResponseStatus
/// (the 1D endpoints' error shape) naming each field.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct ApiNesting1DResult {
    #[serde(flatten)]
    pub base: super::ApiNestingResult,
    #[serde(rename = "ResponseStatus", skip_serializing_if = "Option::is_none")]
    pub response_status: Option<ResponseStatus>,
}

/// A validated 1D submission.
#[derive(Debug)]
pub struct Submission1D {
    pub problem: Problem,
    pub webhook: url::Url,
}

/// The objectives by their wire names (the `~` ones are accepted spellings, DESIGN 5.1).
const OBJECTIVES: &[(&str, Objective)] = &[
    ("MinimiseStock", Objective::MinimiseStock),
    ("MinimiseWaste", Objective::MinimiseWaste),
    ("MinimiseCost", Objective::MinimiseCost),
    ("~MinimizeStock", Objective::MinimiseStock),
    ("~MinimizeWaste", Objective::MinimiseWaste),
    ("~MinimizeCost", Objective::MinimiseCost),
];

/// A length in (0, MAX_LENGTH_MM].
fn length(e: &mut Errors, v: Option<f64>, field: String) -> f64 {
    match v {
        None => {
            e.add(field, "missing: a length in mm above 0");
            0.0
        }
        Some(l) if !(l.is_finite() && l > 0.0 && l <= MAX_LENGTH_MM) => {
            e.add(
                field,
                format!("{l} is not a length in mm above 0 and at most {MAX_LENGTH_MM}"),
            );
            0.0
        }
        Some(l) => l,
    }
}

/// A length in [0, MAX_LENGTH_MM]; absent is 0.
fn allowance(e: &mut Errors, v: Option<f64>, field: &str) -> f64 {
    match v {
        Some(l) if l > MAX_LENGTH_MM => {
            e.add(field, format!("{l} is longer than {MAX_LENGTH_MM} mm"));
            0.0
        }
        v => e.non_negative(field, v.unwrap_or(0.0)),
    }
}

/// A whole number of at least `least`.
fn count(e: &mut Errors, v: f64, least: u32, field: String) -> u32 {
    if !(v.is_finite() && v.fract() == 0.0 && v >= least as f64 && v <= u32::MAX as f64) {
        e.add(
            field,
            format!("{v} is not a whole number of at least {least}"),
        );
        return least;
    }
    v as u32
}

/// Validates a 1D submission: every problem found, each naming its field by JSON path.
pub fn to_submission_1d(body: &Nesting1DRequestBody) -> Result<Submission1D, Vec<FieldError>> {
    let mut e = Errors::default();
    let webhook = e.webhook(body.results_webhook_uri.as_deref(), true);
    let Some(req) = &body.request else {
        e.add("Request", "missing: Stock and Parts are required");
        return Err(e.0);
    };
    let stock: Vec<Stock> = match req.stock.as_deref() {
        None | Some([]) => {
            e.add("Request.Stock", "missing: at least one stock length");
            Vec::new()
        }
        Some(list) => list
            .iter()
            .enumerate()
            .map(|(k, s)| {
                let at = |f: &str| format!("Request.Stock[{k}].{f}");
                Stock {
                    id: identifier(&s.identifier, 'S', k),
                    length: length(&mut e, s.length, at("Length")),
                    quantity: s
                        .quantity
                        .map(|q| count(&mut e, q, 0, at("Quantity")))
                        .filter(|&q| q > 0),
                    cost: e.non_negative(&at("Cost"), s.cost.unwrap_or(0.0)),
                    priority: s.priority.unwrap_or(0),
                }
            })
            .collect(),
    };
    let pieces: Vec<Piece> = match req.parts.as_deref() {
        None | Some([]) => {
            e.add("Request.Parts", "missing: at least one part");
            Vec::new()
        }
        Some(list) => list
            .iter()
            .enumerate()
            .map(|(k, p)| {
                let at = |f: &str| format!("Request.Parts[{k}].{f}");
                let length = length(&mut e, p.length, at("Length"));
                let quantity = match p.quantity {
                    None => {
                        e.add(at("Quantity"), "missing: how many to cut (at least 1)");
                        1
                    }
                    Some(q) => count(&mut e, q, 1, at("Quantity")),
                };
                Piece {
                    id: identifier(&p.identifier, 'P', k),
                    length,
                    quantity,
                }
            })
            .collect(),
    };
    let total: u64 = pieces.iter().map(|p| p.quantity as u64).sum();
    if total > MAX_PART_INSTANCES {
        e.add(
            "Request.Parts",
            format!("{total} pieces in all: at most {MAX_PART_INSTANCES} per nest"),
        );
    }
    let problem = Problem {
        stock,
        pieces,
        kerf: allowance(&mut e, req.kerf, "Request.Kerf"),
        start_trim: allowance(&mut e, req.start_trim, "Request.StartTrim"),
        end_trim: allowance(&mut e, req.end_trim, "Request.EndTrim"),
        max_time_s: e.run_time(
            "Request.MaxRunTimeSeconds",
            req.max_run_time_seconds.unwrap_or(0.0),
            DEFAULT_RUN_TIME_1D_S,
        ),
        objective: e.pick(
            "Request.Objective",
            req.objective.as_deref(),
            Objective::MinimiseStock,
            OBJECTIVES,
        ),
    };
    match webhook {
        Some(webhook) if e.0.is_empty() => Ok(Submission1D { problem, webhook }),
        _ => Err(e.0),
    }
}

fn identifier(given: &Option<String>, prefix: char, k: usize) -> String {
    match given.as_deref().map(str::trim) {
        Some(id) if !id.is_empty() => id.to_string(),
        _ => format!("{prefix}{}", k + 1),
    }
}

/// Whether a 1D nest produced a plan.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
pub enum Status1D {
    /// A plan exists.
    #[default]
    Success,
    /// The nest ran (or the request was refused) and nothing was cut: StatusReport says why.
    Failure,
}

/// The 1D result.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct Nesting1DResult {
    #[serde(rename = "Status")]
    pub status: Status1D,
    /// What the plan is (proven optimal, or the gap to the best bound; pieces left uncut and
    /// why), or why nothing could be cut.
    #[serde(rename = "StatusReport")]
    pub status_report: String,
    #[serde(rename = "Result")]
    pub result: Option<Plan1D>,
    #[serde(rename = "ResponseStatus")]
    pub response_status: Option<ResponseStatus>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct Plan1D {
    #[serde(rename = "NumberOfUniqueNests")]
    pub number_of_unique_nests: usize,
    #[serde(rename = "Nests")]
    pub nests: Vec<Nest1D>,
    /// Bars cut in all (sum of Multiplicity).
    #[serde(rename = "BarsUsed")]
    pub bars_used: u32,
    #[serde(rename = "Objective")]
    pub objective: String,
    /// The plan's objective value: bars, stock length (mm) or stock cost.
    #[serde(rename = "ObjectiveValue")]
    pub objective_value: f64,
    /// The best proven lower bound on ObjectiveValue.
    #[serde(rename = "LowerBound")]
    pub lower_bound: f64,
    /// True when ObjectiveValue meets LowerBound: no plan is better.
    #[serde(rename = "ProvenOptimal")]
    pub proven_optimal: bool,
    #[serde(rename = "UnplacedParts")]
    pub unplaced_parts: Vec<Unplaced1D>,
    #[serde(rename = "ElapsedSeconds")]
    pub elapsed_seconds: f64,
}

/// One cutting pattern, cut Multiplicity times.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct Nest1D {
    #[serde(rename = "Multiplicity")]
    pub multiplicity: u32,
    #[serde(rename = "StockIdentifier")]
    pub stock_identifier: String,
    #[serde(rename = "StockLength")]
    pub stock_length: f64,
    /// The bar's length less its pieces, the kerfs between them and both trims.
    #[serde(rename = "WasteLength")]
    pub waste_length: f64,
    #[serde(rename = "PlacedLengths")]
    pub placed_lengths: Vec<PlacedLength>,
}

/// A run of Quantity pieces of Length, the first starting at PlacedX (mm from the bar's start;
/// each next one Length + Kerf further).
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct PlacedLength {
    #[serde(rename = "PartIdentifier")]
    pub part_identifier: String,
    #[serde(rename = "Quantity")]
    pub quantity: u32,
    #[serde(rename = "Length")]
    pub length: f64,
    #[serde(rename = "PlacedX")]
    pub placed_x: f64,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct Unplaced1D {
    #[serde(rename = "PartIdentifier")]
    pub part_identifier: String,
    #[serde(rename = "UnplacedQuantity")]
    pub unplaced_quantity: u32,
    #[serde(rename = "Reason")]
    pub reason: String,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct ResponseStatus {
    #[serde(rename = "ErrorCode")]
    pub error_code: String,
    #[serde(rename = "Message")]
    pub message: String,
    /// Always empty: kerf does not send its internals to callers.
    #[serde(rename = "StackTrace")]
    pub stack_trace: String,
    #[serde(rename = "Errors")]
    pub errors: Vec<ResponseError>,
    #[serde(rename = "Meta")]
    #[schema(value_type = Object)]
    pub meta: serde_json::Map<String, serde_json::Value>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct ResponseError {
    #[serde(rename = "ErrorCode")]
    pub error_code: String,
    #[serde(rename = "FieldName")]
    pub field_name: String,
    #[serde(rename = "Message")]
    pub message: String,
    #[serde(rename = "Meta")]
    #[schema(value_type = Object)]
    pub meta: serde_json::Map<String, serde_json::Value>,
}

impl ResponseStatus {
    /// `code` with `message`, and one entry per field error.
    pub fn new(code: &str, message: &str, errors: &[FieldError]) -> ResponseStatus {
        ResponseStatus {
            error_code: code.into(),
            message: message.into(),
            stack_trace: String::new(),
            errors: errors
                .iter()
                .map(|e| ResponseError {
                    error_code: code.into(),
                    field_name: e.field.clone(),
                    message: e.message.clone(),
                    meta: Default::default(),
                })
                .collect(),
            meta: Default::default(),
        }
    }
}

/// Nesting1DWebhookPayload: the whole plan inline.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct Nesting1DWebhookPayload {
    #[serde(rename = "RequestId")]
    pub request_id: String,
    /// 1 Complete (a plan), 2 Error (nothing could be cut, or the job failed).
    #[serde(rename = "NestingStatus")]
    pub nesting_status: i32,
    #[serde(rename = "Result")]
    pub result: Nesting1DResult,
}

impl Nesting1DWebhookPayload {
    pub fn of(request_id: &str, result: Nesting1DResult) -> Nesting1DWebhookPayload {
        Nesting1DWebhookPayload {
            request_id: request_id.into(),
            nesting_status: match result.status {
                Status1D::Success => STATUS_COMPLETE,
                Status1D::Failure => STATUS_ERROR,
            },
            result,
        }
    }
}

impl Nesting1DResult {
    /// No plan: `report` says why, ResponseStatus carries `code` and the fields at fault.
    pub fn failure(code: &str, report: &str, errors: &[FieldError]) -> Nesting1DResult {
        Nesting1DResult {
            status: Status1D::Failure,
            status_report: report.into(),
            result: None,
            response_status: Some(ResponseStatus::new(code, report, errors)),
        }
    }
}

/// The plan as the interface gives it.
pub fn result_1d(problem: &Problem, plan: &Plan) -> Nesting1DResult {
    let nests: Vec<Nest1D> = plan
        .patterns
        .iter()
        .map(|pattern| {
            let stock = &problem.stock[pattern.stock];
            let mut x = problem.start_trim;
            let placed_lengths = pattern
                .pieces
                .iter()
                .map(|&(i, quantity)| {
                    let piece = &problem.pieces[i];
                    let run = PlacedLength {
                        part_identifier: piece.id.clone(),
                        quantity,
                        length: piece.length,
                        placed_x: x,
                    };
                    x += (piece.length + problem.kerf) * quantity as f64;
                    run
                })
                .collect();
            Nest1D {
                multiplicity: pattern.multiplicity,
                stock_identifier: stock.id.clone(),
                stock_length: stock.length,
                waste_length: (stock.length - problem.used_length(pattern)).max(0.0),
                placed_lengths,
            }
        })
        .collect();
    let unplaced_parts: Vec<Unplaced1D> = plan
        .unplaced
        .iter()
        .map(|(i, q, why)| Unplaced1D {
            part_identifier: problem.pieces[*i].id.clone(),
            unplaced_quantity: *q,
            reason: why.clone(),
        })
        .collect();
    let objective = OBJECTIVES
        .iter()
        .find(|(_, o)| *o == problem.objective)
        .map_or("", |(name, _)| name);
    let unplaced: u64 = unplaced_parts
        .iter()
        .map(|u| u.unplaced_quantity as u64)
        .sum();
    let left = if unplaced > 0 {
        let what: Vec<String> = unplaced_parts
            .iter()
            .map(|u| {
                format!(
                    "{} x{} ({})",
                    u.part_identifier, u.unplaced_quantity, u.reason
                )
            })
            .collect();
        format!("; {unplaced} pieces not cut: {}", what.join(", "))
    } else {
        String::new()
    };
    if nests.is_empty() {
        return Nesting1DResult::failure("NothingCut", &format!("nothing could be cut{left}"), &[]);
    }
    let quality = if plan.proven_optimal {
        format!("{objective} {} (proven optimal)", plan.value)
    } else {
        format!(
            "{objective} {}, the best lower bound {} (not proven optimal in the time given)",
            plan.value, plan.lower_bound
        )
    };
    Nesting1DResult {
        status: Status1D::Success,
        status_report: match &plan.note {
            Some(note) => format!("{} bars; {quality}{left}; {note}", plan.bars()),
            None => format!("{} bars; {quality}{left}", plan.bars()),
        },
        result: Some(Plan1D {
            number_of_unique_nests: nests.len(),
            bars_used: plan.bars(),
            nests,
            objective: objective.into(),
            objective_value: plan.value,
            lower_bound: plan.lower_bound,
            proven_optimal: plan.proven_optimal,
            unplaced_parts,
            elapsed_seconds: plan.seconds,
        }),
        response_status: None,
    }
}
