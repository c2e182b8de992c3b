//! The caller: `Accept: application/json` (else 406) and `Authorization: Bearer <key>` (else
//! 401), checked against the store's hashed keys on every request.

use super::error::ApiError;
use super::AppState;
use crate::store::{now_ms, ApiKey};
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{header, StatusCode};

/// An authenticated caller.
#[derive(Clone, Debug)]
pub struct Caller(pub ApiKey);

/// True when the Accept header names application/json (parameters such as `charset` and
/// several comma-separated types are allowed; wildcards are not: the spec allows only
/// application/json).
fn accepts_json(parts: &Parts) -> bool {
    parts
        .headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| {
            t.split(';')
                .next()
                .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
        })
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        if !accepts_json(parts) {
            return Err(ApiError::new(
                StatusCode::NOT_ACCEPTABLE,
                "the Accept header must be application/json",
            ));
        }
        let unauthorized = |m: &str| ApiError::new(StatusCode::UNAUTHORIZED, m);
        let value = parts
            .headers
            .get(header::AUTHORIZATION)
            .ok_or_else(|| unauthorized("missing Authorization header (Bearer <API key>)"))?;
        let token = value
            .to_str()
            .ok()
            .and_then(|v| {
                let (scheme, token) = v.trim().split_once(' ')?;
                scheme
                    .eq_ignore_ascii_case("bearer")
                    .then_some(token.trim())
            })
            .ok_or_else(|| unauthorized("the Authorization header must be 'Bearer <API key>'"))?;
        match state.store.authenticate(token, now_ms()).await? {
            Ok(key) => Ok(Caller(key)),
            Err(refusal) => Err(unauthorized(refusal.message())),
        }
    }
}
