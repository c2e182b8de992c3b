//! Key management on the wire (spec "Account and keys", DESIGN 5.9): the ClientKey record, the
//! request bodies, and the origin list. Where the spec says "not shown" these shapes are kerf's
//! choice, written down in README ("Key management").

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// ClientKey: a key's record. The secret (`ApiKey`) only in the answers to creation and
/// regeneration. Beside the spec's fields: `ApiKeyId` (the id the admin paths take; also the
/// part of the secret between `kerf_` and the second `_`), `Weight` (fair sharing) and `Email`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct ClientKey {
    #[serde(rename = "ApiKeyId")]
    pub api_key_id: String,
    #[serde(rename = "ApiKey", skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    #[serde(rename = "ClientRef")]
    pub client_ref: String,
    #[serde(rename = "Expired")]
    pub expired: bool,
    #[serde(rename = "IsActive")]
    pub is_active: bool,
    /// Absent when the key never expires.
    #[serde(rename = "Expires", skip_serializing_if = "Option::is_none")]
    pub expires: Option<String>,
    #[serde(rename = "CancelledDate", skip_serializing_if = "Option::is_none")]
    pub cancelled_date: Option<String>,
    #[serde(rename = "Parallelism")]
    pub parallelism: i64,
    #[serde(rename = "IsTrial")]
    pub is_trial: bool,
    #[serde(rename = "KeyType")]
    pub key_type: String,
    #[serde(rename = "Weight")]
    pub weight: f64,
    #[serde(rename = "Email")]
    pub email: String,
}

/// Body of POST /admin/keys (every field optional; see README for the defaults).
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
#[serde(default, deny_unknown_fields)]
pub struct CreateKeyRequest {
    #[serde(rename = "Reference")]
    pub reference: Option<String>,
    /// RFC 3339; absent or null: never expires.
    #[serde(rename = "Expires")]
    pub expires: Option<String>,
    #[serde(rename = "Email")]
    pub email: Option<String>,
    #[serde(rename = "Parallelism")]
    pub parallelism: Option<i64>,
    /// Usage (default) or Admin.
    #[serde(rename = "KeyType")]
    pub key_type: Option<String>,
    #[serde(rename = "Trial")]
    pub trial: Option<bool>,
}

/// Body of PATCH /admin/keys/{ApiKeyId}/type.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
#[serde(default, deny_unknown_fields)]
pub struct KeyTypeBody {
    #[serde(rename = "KeyType")]
    #[schema(value_type = String, required = true)]
    pub key_type: Option<String>,
}

/// Body of PATCH /admin/keys/{ApiKeyId}/weight.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
#[serde(default, deny_unknown_fields)]
pub struct KeyWeightBody {
    #[serde(rename = "Weight")]
    #[schema(value_type = f64, required = true)]
    pub weight: Option<f64>,
}

/// Body of POST and DELETE /apikeys/{KeyId}/origins (DELETE also takes it as a query).
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
#[serde(default, deny_unknown_fields)]
pub struct OriginBody {
    #[serde(rename = "Origin")]
    #[schema(value_type = String, required = true)]
    pub origin: Option<String>,
}

/// Answer of the origin calls: the key's allowed browser origins after the call (empty: the
/// key is not limited to any).
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct OriginList {
    #[serde(rename = "ApiKeyId")]
    pub api_key_id: String,
    #[serde(rename = "Origins")]
    pub origins: Vec<String>,
}

/// GET /v1/status: the caller's account (the misspelt `HasHadTrail` is the spec's).
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct SubscriptionStatus {
    #[serde(rename = "HasHadTrail")]
    pub has_had_trail: bool,
    #[serde(rename = "IsOnTrial")]
    pub is_on_trial: bool,
    #[serde(rename = "HasTrialRequest")]
    pub has_trial_request: bool,
    #[serde(rename = "RequiresPayment")]
    pub requires_payment: bool,
    #[serde(rename = "NestingAccountBalance")]
    pub nesting_account_balance: NestingAccountBalance,
}

/// The current plan period's figures.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct NestingAccountBalance {
    /// The account's id.
    #[serde(rename = "UserId")]
    pub user_id: i64,
    /// Start of the current 30-day period.
    #[serde(rename = "StartDate")]
    pub start_date: String,
    /// End of the current period (the next one starts there).
    #[serde(rename = "EndDate")]
    pub end_date: String,
    /// Null when no payment date is recorded.
    #[serde(rename = "PaidUntil")]
    pub paid_until: Option<String>,
    /// Included nesting time left in the period: included minutes less the nesting time of
    /// the jobs that finished in it (never below 0).
    #[serde(rename = "RemainingAllowanceSeconds")]
    pub remaining_allowance_seconds: f64,
    /// The same in minutes.
    #[serde(rename = "RemainingAllowance")]
    pub remaining_allowance: f64,
    #[serde(rename = "RemainingCredit")]
    pub remaining_credit: f64,
    /// False when the plan requires payment or was paid until a date now past.
    #[serde(rename = "HasActiveSubscription")]
    pub has_active_subscription: bool,
}

/// GET /usage/fairness: the account's plan figures and one row per active key, from the same
/// bookkeeping admission decides by.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct FairnessUsageResponse {
    /// Whether the admission gate is active (when false the rows are informational only).
    #[serde(rename = "FairnessEnabled")]
    pub fairness_enabled: bool,
    /// Whether nests past a key's floor and the burst pool run as overage instead of 429.
    #[serde(rename = "OverageEnabled")]
    pub overage_enabled: bool,
    #[serde(rename = "IncludedMinutes")]
    pub included_minutes: f64,
    /// The shared burst pool: 20 % of IncludedMinutes.
    #[serde(rename = "SharedBurstMinutes")]
    pub shared_burst_minutes: f64,
    /// kerf's addition: the part of the pool drawn now (every key's minutes over its floor;
    /// a revoked or expired key's minutes this period all count, it has no floor).
    #[serde(rename = "SharedBurstDrawnMinutes")]
    pub shared_burst_drawn_minutes: f64,
    #[serde(rename = "Keys")]
    pub keys: Vec<FairnessKeyUsage>,
}

/// One active key's row of /usage/fairness (minutes of the current period).
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct FairnessKeyUsage {
    #[serde(rename = "ApiKeyId")]
    pub api_key_id: String,
    #[serde(rename = "Weight")]
    pub weight: f64,
    /// Nesting time of the key's finished nests this period (overage included).
    #[serde(rename = "ConsumedMinutes")]
    pub consumed_minutes: f64,
    /// MaxRunTimeSeconds of its queued and running nests.
    #[serde(rename = "ReservedMinutes")]
    pub reserved_minutes: f64,
    /// The part of ConsumedMinutes used by nests admitted as overage.
    #[serde(rename = "OverageMinutes")]
    pub overage_minutes: f64,
    /// kerf's addition: what admission holds against the floor and the pool, consumed and
    /// reserved minutes less overage.
    #[serde(rename = "CountedMinutes")]
    pub counted_minutes: f64,
    /// Its weight's share of IncludedMinutes less SharedBurstMinutes.
    #[serde(rename = "EffectiveFloorMinutes")]
    pub effective_floor_minutes: f64,
    /// `Under`, `Right` or `Over`: its pace against its floor.
    #[serde(rename = "Sizing")]
    pub sizing: String,
}

/// GET /admin/jobs (kerf's own, for the dashboard): the account's latest jobs, newest first.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct JobList {
    #[serde(rename = "Jobs")]
    pub jobs: Vec<JobListEntry>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
pub struct JobListEntry {
    #[serde(rename = "RequestId")]
    pub request_id: String,
    /// The key that submitted it.
    #[serde(rename = "ApiKeyId")]
    pub api_key_id: String,
    /// `2D nest`, `1D cut plan` or `Export`.
    #[serde(rename = "Kind")]
    pub kind: String,
    /// Held, Queued, Running, Completed or Failed.
    #[serde(rename = "Status")]
    pub status: String,
    #[serde(rename = "CreatedAt")]
    pub created_at: String,
    #[serde(rename = "StartedAt")]
    pub started_at: Option<String>,
    #[serde(rename = "CompletedAt")]
    pub completed_at: Option<String>,
    #[serde(rename = "Error")]
    pub error: Option<String>,
    /// Whether GET /v1/nesting/render has a picture of it (a Completed 2D nest).
    #[serde(rename = "HasRender")]
    pub has_render: bool,
}

/// Query of GET /admin/jobs.
#[derive(Clone, Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(default)]
pub struct JobListQuery {
    /// How many (1 to 500; 50 unless given).
    #[serde(rename = "Limit")]
    #[param(rename = "Limit")]
    pub limit: Option<i64>,
}
