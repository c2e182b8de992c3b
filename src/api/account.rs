//! The caller's key: GET /v1/auth/validate and GET /v1/apiKey/validUntil.

use super::auth::Caller;
use crate::wire;
use axum::Json;

/// Confirms the key is active and says whose it is.
#[utoipa::path(get, path = "/v1/auth/validate", tag = "account",
    responses(
        (status = 200, description = "the key is active", body = wire::AuthValidation),
        (status = 401, description = "missing, unknown, expired or cancelled key", body = wire::ErrorBody),
    ),
    security(("bearer" = [])))]
pub async fn validate(Caller(key): Caller) -> Json<wire::AuthValidation> {
    Json(wire::AuthValidation {
        valid: true,
        user_id: key.account_id,
        key_type: key.key_type.as_str().into(),
    })
}

/// When the calling key expires (9999-12-31T23:59:59Z when it never does).
#[utoipa::path(get, path = "/v1/apiKey/validUntil", tag = "account",
    responses((status = 200, description = "the key's expiry", body = wire::KeyExpiry)),
    security(("bearer" = [])))]
pub async fn valid_until(Caller(key): Caller) -> Json<wire::KeyExpiry> {
    Json(wire::KeyExpiry {
        expires: key
            .expires_at
            .map(wire::utc)
            .unwrap_or_else(|| wire::NEVER_EXPIRES.into()),
    })
}
