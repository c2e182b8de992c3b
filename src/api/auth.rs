//! The caller: `Accept: application/json` (else 406) and `Authorization: Bearer <key>` (else
//! 401), checked against the store's hashed keys on every request, the key's request rate
//! (else 429), and a browser's `Origin` against the key's allowed origins when it has any
//! (else 403).

use super::error::{ApiError, Shape};
use super::AppState;
use crate::store::{now_ms, ApiKey};
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{header, StatusCode};

/// An authenticated caller.
#[derive(Clone, Debug)]
pub struct Caller(pub ApiKey);

/// An authenticated caller of a submission endpoint: the same checks, refusals in the
/// ApiNestingResult shape. As an extractor it runs before the body is read, so an
/// unauthenticated request is refused without reading its body.
#[derive(Clone, Debug)]
pub struct Submitter(pub ApiKey);

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
        // the key first: a caller without a valid key learns nothing else (401 before 406)
        let key = authenticate(parts, state).await?;
        within_rate(state, &key)?;
        allowed_origin(parts, state, &key).await?;
        if !accepts_json(parts) {
            return Err(ApiError::new(
                StatusCode::NOT_ACCEPTABLE,
                "the Accept header must be application/json",
            ));
        }
        Ok(Caller(key))
    }
}

impl FromRequestParts<AppState> for Submitter {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        Caller::from_request_parts(parts, state)
            .await
            .map(|Caller(key)| Submitter(key))
            .map_err(|e| e.shaped(Shape::Submission))
    }
}

/// The key of `Authorization: Bearer <key>`, checked against the store (401 otherwise).
async fn authenticate(parts: &Parts, state: &AppState) -> Result<ApiKey, ApiError> {
    let token = bearer(parts)?.ok_or_else(|| {
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            "missing Authorization header (Bearer <API key>)",
        )
    })?;
    check_key(token, state).await
}

/// The token of an `Authorization: Bearer <key>` header, if there is the header.
fn bearer(parts: &Parts) -> Result<Option<&str>, ApiError> {
    let Some(value) = parts.headers.get(header::AUTHORIZATION) else {
        return Ok(None);
    };
    value
        .to_str()
        .ok()
        .and_then(|v| {
            let (scheme, token) = v.trim().split_once(' ')?;
            scheme
                .eq_ignore_ascii_case("bearer")
                .then_some(token.trim())
        })
        .map(Some)
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::UNAUTHORIZED,
                "the Authorization header must be 'Bearer <API key>'",
            )
        })
}

/// `token` checked against the store's keys (401 otherwise).
async fn check_key(token: &str, state: &AppState) -> Result<ApiKey, ApiError> {
    match state.store.authenticate(token, now_ms()).await? {
        Ok(key) => Ok(key),
        Err(refusal) => Err(ApiError::new(StatusCode::UNAUTHORIZED, refusal.message())),
    }
}

/// A caller of the hub (negotiate and the WebSocket): the key as a Bearer header or, as
/// browsers' WebSockets cannot send headers, the `access_token` query parameter; the same rate
/// and origin checks as every call; no Accept header asked for (the SignalR clients send
/// none).
#[derive(Clone, Debug)]
pub struct HubCaller(pub ApiKey);

impl FromRequestParts<AppState> for HubCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let from_query = parts.uri.query().and_then(|q| {
            url::form_urlencoded::parse(q.as_bytes())
                .find(|(k, _)| k == "access_token")
                .map(|(_, v)| v.into_owned())
        });
        let token = match bearer(parts)? {
            Some(t) => t.to_string(),
            None => from_query.ok_or_else(|| {
                ApiError::new(
                    StatusCode::UNAUTHORIZED,
                    "missing API key: send 'Authorization: Bearer <API key>' or ?access_token=<API key>",
                )
            })?,
        };
        let key = check_key(&token, state).await?;
        within_rate(state, &key)?;
        allowed_origin(parts, state, &key).await?;
        Ok(HubCaller(key))
    }
}

/// The key's request rate limit: 429 with Retry-After past it.
fn within_rate(state: &AppState, key: &ApiKey) -> Result<(), ApiError> {
    state
        .rate_limit
        .take(&key.id, std::time::Instant::now())
        .map_err(|wait_s| ApiError {
            retry_after_s: Some(wait_s),
            ..ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "this key made more than {} requests in a minute (the server's per-key rate limit); try again in {wait_s} s",
                    state.rate_limit.per_minute()
                ),
            )
        })
}

/// A request that carries an Origin header (a browser's) must come from one of its key's
/// origins, when the key has any (403 otherwise); a key with no list is not limited, a
/// request without the header (a server's) is not a browser's, and one from an origin the
/// operator named as this server's own (`--public-origin`, where its dashboard is) is
/// allowed. The Host header is not trusted for that: DNS rebinding makes it match any origin.
async fn allowed_origin(parts: &Parts, state: &AppState, key: &ApiKey) -> Result<(), ApiError> {
    let Some(origin) = parts.headers.get(header::ORIGIN) else {
        return Ok(());
    };
    let allowed = state.store.key_origins(&key.id).await?;
    if allowed.is_empty() {
        return Ok(());
    }
    let text = origin.to_str().unwrap_or("");
    match super::keys::canonical_origin(text) {
        Ok(o) if allowed.contains(&o) => Ok(()),
        // the server's own pages (the dashboard), as the operator named them
        Ok(o) if state.public_origins.contains(&o) => Ok(()),
        _ => Err(ApiError::new(
            StatusCode::FORBIDDEN,
            format!("origin '{text}' is not among the origins this key may be used from"),
        )),
    }
}
