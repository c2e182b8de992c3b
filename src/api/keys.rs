//! Key management over HTTP (spec "Account and keys", DESIGN 4 and 5.9): create, list, revoke
//! and regenerate keys, change a key's type and fair-sharing weight, and keep the browser
//! origins a key is limited to. Admin keys only (403 for a Usage key); a key of another account is
//! answered as unknown (404), so one account never learns another's key ids.

use super::auth::Caller;
use super::error::ApiError;
use super::nesting::body_of;
use super::AppState;
use crate::store::{now_ms, ApiKey, CreateRefusal, KeyChange, KeyType, NewKey};
use crate::wire;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequestParts, Path, Query, State};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::Json;

/// An Admin caller (a Usage key is refused with 403).
pub struct Admin(pub ApiKey);

impl FromRequestParts<AppState> for Admin {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let Caller(key) = Caller::from_request_parts(parts, state).await?;
        match key.key_type {
            KeyType::Admin => Ok(Admin(key)),
            KeyType::Usage => Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "this call needs an Admin key; the key presented is a Usage key",
            )),
        }
    }
}

/// The record of a key, with its secret when one was just made.
fn client_key(key: &ApiKey, secret: Option<String>) -> wire::ClientKey {
    let now = now_ms();
    wire::ClientKey {
        api_key_id: key.id.clone(),
        api_key: secret,
        client_ref: key.reference.clone(),
        expired: key.is_expired(now),
        is_active: key.is_active(now),
        expires: key.expires_at.map(wire::utc),
        cancelled_date: key.cancelled_at.map(wire::utc),
        parallelism: key.parallelism,
        is_trial: key.is_trial,
        key_type: key.key_type.as_str().into(),
        weight: key.weight,
        email: key.email.clone(),
    }
}

/// The key `id` of the caller's account (404 otherwise).
async fn own_key(state: &AppState, admin: &ApiKey, id: &str) -> Result<ApiKey, ApiError> {
    match state.store.key(id).await? {
        Some(k) if k.account_id == admin.account_id => Ok(k),
        _ => Err(ApiError::not_found(format!("no key {id} in this account"))),
    }
}

fn parse_body<T: serde::de::DeserializeOwned>(
    body: Result<Bytes, BytesRejection>,
) -> Result<T, ApiError> {
    let body = body_of(body)?;
    let body: &[u8] = if body.iter().all(u8::is_ascii_whitespace) {
        b"{}"
    } else {
        &body
    };
    wire::parse_json(body).map_err(|e| ApiError::fields(vec![e]))
}

/// POST /admin/keys: a new key on the caller's account; its secret is in this answer only.
#[utoipa::path(post, path = "/admin/keys", tag = "account",
    request_body = wire::CreateKeyRequest,
    responses(
        (status = 200, description = "the new key, with its secret", body = wire::ClientKey),
        (status = 400, description = "a field is wrong", body = wire::ErrorBody),
        (status = 403, description = "not an Admin key", body = wire::ErrorBody),
        (status = 409, description = "the plan's active-key cap is reached", body = wire::ErrorBody),
    ),
    security(("bearer" = [])))]
pub async fn create(
    State(state): State<AppState>,
    Admin(admin): Admin,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<wire::ClientKey>, ApiError> {
    let req: wire::CreateKeyRequest = parse_body(body)?;
    let key_type = match &req.key_type {
        Some(t) => KeyType::parse(t).map_err(|e| ApiError::field("KeyType", e))?,
        None => KeyType::Usage,
    };
    let parallelism = req.parallelism.unwrap_or(admin.parallelism);
    if parallelism < 1 {
        return Err(ApiError::field(
            "Parallelism",
            format!("must be at least 1 (got {parallelism})"),
        ));
    }
    let now = now_ms();
    let expires_at = match req.expires.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(s) => {
            let at = chrono::DateTime::parse_from_rfc3339(s)
                .map_err(|_| {
                    ApiError::field(
                        "Expires",
                        format!(
                            "'{s}' is not an RFC 3339 timestamp (for example 2027-01-31T00:00:00Z)"
                        ),
                    )
                })?
                .timestamp_millis();
            if at <= now {
                return Err(ApiError::field("Expires", format!("'{s}' is in the past")));
            }
            Some(at)
        }
    };
    let new = NewKey {
        account_id: admin.account_id,
        key_type,
        reference: req.reference.unwrap_or_default(),
        parallelism,
        expires_at,
        is_trial: req.trial.unwrap_or(false),
        email: req.email.unwrap_or_default(),
    };
    match state.store.create_key_within_cap(&new, now).await? {
        Ok((key, token)) => Ok(Json(client_key(&key, Some(token)))),
        Err(CreateRefusal::CapReached { cap }) => Err(ApiError::new(
            StatusCode::CONFLICT,
            format!("the account already has {cap} active keys, as many as its plan allows; revoke one first"),
        )),
    }
}

/// GET /admin/keys: every key of the caller's account (cancelled ones too), oldest first.
#[utoipa::path(get, path = "/admin/keys", tag = "account",
    responses(
        (status = 200, description = "the account's keys, without secrets", body = [wire::ClientKey]),
        (status = 403, description = "not an Admin key", body = wire::ErrorBody),
    ),
    security(("bearer" = [])))]
pub async fn list(
    State(state): State<AppState>,
    Admin(admin): Admin,
) -> Result<Json<Vec<wire::ClientKey>>, ApiError> {
    let keys = state.store.account_keys(admin.account_id).await?;
    Ok(Json(keys.iter().map(|k| client_key(k, None)).collect()))
}

/// DELETE /admin/keys/{ApiKeyId}: revokes the key at once; answers its record (revoking a
/// revoked key answers the same record again). The account's last active Admin key cannot be
/// revoked (409): nobody could manage the keys after it.
#[utoipa::path(delete, path = "/admin/keys/{ApiKeyId}", tag = "account",
    params(("ApiKeyId" = String, Path, description = "the key's id")),
    responses(
        (status = 200, description = "the cancelled key", body = wire::ClientKey),
        (status = 403, description = "not an Admin key", body = wire::ErrorBody),
        (status = 404, description = "no such key in this account", body = wire::ErrorBody),
        (status = 409, description = "the account's last active Admin key", body = wire::ErrorBody),
    ),
    security(("bearer" = [])))]
pub async fn revoke(
    State(state): State<AppState>,
    Admin(admin): Admin,
    Path(id): Path<String>,
) -> Result<Json<wire::ClientKey>, ApiError> {
    own_key(&state, &admin, &id).await?;
    changed(
        state
            .store
            .cancel_key_unless_last_admin(&id, now_ms())
            .await?,
        &id,
    )?;
    let key = own_key(&state, &admin, &id).await?;
    Ok(Json(client_key(&key, None)))
}

/// A guarded key change as an answer: done, or nothing to do (a cancelled key stays as it is),
/// or 409 for the account's last active Admin key.
fn changed(change: KeyChange, id: &str) -> Result<(), ApiError> {
    match change {
        KeyChange::Done | KeyChange::Cancelled => Ok(()),
        KeyChange::LastAdmin => Err(ApiError::new(
            StatusCode::CONFLICT,
            format!(
                "key {id} is the account's last active Admin key; make another key Admin first"
            ),
        )),
        KeyChange::Unknown => Err(ApiError::not_found(format!("no key {id} in this account"))),
    }
}

/// POST /admin/keys/{ApiKeyId}/regenerate: a new secret; the old one fails from now on.
#[utoipa::path(post, path = "/admin/keys/{ApiKeyId}/regenerate", tag = "account",
    params(("ApiKeyId" = String, Path, description = "the key's id")),
    responses(
        (status = 200, description = "the key, with its new secret", body = wire::ClientKey),
        (status = 403, description = "not an Admin key", body = wire::ErrorBody),
        (status = 404, description = "no such key in this account", body = wire::ErrorBody),
        (status = 409, description = "the key is cancelled or expired", body = wire::ErrorBody),
    ),
    security(("bearer" = [])))]
pub async fn regenerate(
    State(state): State<AppState>,
    Admin(admin): Admin,
    Path(id): Path<String>,
) -> Result<Json<wire::ClientKey>, ApiError> {
    own_key(&state, &admin, &id).await?;
    match state.store.regenerate_key(&id, now_ms()).await? {
        // the record read again: what the answer shows is what the store kept
        Some(token) => Ok(Json(client_key(
            &own_key(&state, &admin, &id).await?,
            Some(token),
        ))),
        None => Err(ApiError::new(
            StatusCode::CONFLICT,
            format!("key {id} is cancelled or expired; only an active key can be regenerated"),
        )),
    }
}

/// PATCH /admin/keys/{ApiKeyId}/type: body {KeyType}; answers the key's record. The account's
/// last active Admin key cannot become a Usage key (nobody could manage the keys after it).
#[utoipa::path(patch, path = "/admin/keys/{ApiKeyId}/type", tag = "account",
    params(("ApiKeyId" = String, Path, description = "the key's id")),
    request_body = wire::KeyTypeBody,
    responses(
        (status = 200, description = "the key", body = wire::ClientKey),
        (status = 400, description = "KeyType missing or unknown", body = wire::ErrorBody),
        (status = 403, description = "not an Admin key", body = wire::ErrorBody),
        (status = 404, description = "no such key in this account", body = wire::ErrorBody),
        (status = 409, description = "the account's last active Admin key", body = wire::ErrorBody),
    ),
    security(("bearer" = [])))]
pub async fn set_type(
    State(state): State<AppState>,
    Admin(admin): Admin,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<wire::ClientKey>, ApiError> {
    let req: wire::KeyTypeBody = parse_body(body)?;
    let key_type = match &req.key_type {
        Some(t) => KeyType::parse(t).map_err(|e| ApiError::field("KeyType", e))?,
        None => return Err(ApiError::field("KeyType", "required: Usage or Admin")),
    };
    own_key(&state, &admin, &id).await?;
    changed(
        state.store.set_key_type(&id, key_type, now_ms()).await?,
        &id,
    )?;
    let key = own_key(&state, &admin, &id).await?;
    Ok(Json(client_key(&key, None)))
}

/// PATCH /admin/keys/{ApiKeyId}/weight: body {Weight} (above 0, at most `MAX_WEIGHT`), the
/// key's share in fair sharing relative to the account's other keys; answers the key's record.
#[utoipa::path(patch, path = "/admin/keys/{ApiKeyId}/weight", tag = "account",
    params(("ApiKeyId" = String, Path, description = "the key's id")),
    request_body = wire::KeyWeightBody,
    responses(
        (status = 200, description = "the key", body = wire::ClientKey),
        (status = 400, description = "Weight missing, not above 0 or too large", body = wire::ErrorBody),
        (status = 403, description = "not an Admin key", body = wire::ErrorBody),
        (status = 404, description = "no such key in this account", body = wire::ErrorBody),
    ),
    security(("bearer" = [])))]
pub async fn set_weight(
    State(state): State<AppState>,
    Admin(admin): Admin,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<wire::ClientKey>, ApiError> {
    let req: wire::KeyWeightBody = parse_body(body)?;
    let weight = req
        .weight
        .ok_or_else(|| ApiError::field("Weight", "required: a number above 0"))?;
    if !(weight > 0.0 && weight <= MAX_WEIGHT) {
        return Err(ApiError::field(
            "Weight",
            format!("must be above 0 and at most {MAX_WEIGHT} (got {weight})"),
        ));
    }
    own_key(&state, &admin, &id).await?;
    state.store.set_key_weight(&id, weight).await?;
    Ok(Json(client_key(&own_key(&state, &admin, &id).await?, None)))
}

/// The largest weight: weights are relative, and a bound keeps the shares meaningful.
const MAX_WEIGHT: f64 = 1000.0;

/// GET /apikeys/{KeyId}/origins: the browser origins the key is limited to.
#[utoipa::path(get, path = "/apikeys/{KeyId}/origins", tag = "account",
    params(("KeyId" = String, Path, description = "the key's id")),
    responses(
        (status = 200, description = "the key's origins (empty: not limited)", body = wire::OriginList),
        (status = 403, description = "not an Admin key", body = wire::ErrorBody),
        (status = 404, description = "no such key in this account", body = wire::ErrorBody),
    ),
    security(("bearer" = [])))]
pub async fn origins(
    State(state): State<AppState>,
    Admin(admin): Admin,
    Path(id): Path<String>,
) -> Result<Json<wire::OriginList>, ApiError> {
    own_key(&state, &admin, &id).await?;
    origin_list(&state, id).await
}

async fn origin_list(state: &AppState, id: String) -> Result<Json<wire::OriginList>, ApiError> {
    let origins = state.store.key_origins(&id).await?;
    Ok(Json(wire::OriginList {
        api_key_id: id,
        origins,
    }))
}

/// POST /apikeys/{KeyId}/origins: body {Origin}; adds it (in its canonical form, see
/// `canonical_origin`) and answers the list.
#[utoipa::path(post, path = "/apikeys/{KeyId}/origins", tag = "account",
    params(("KeyId" = String, Path, description = "the key's id")),
    request_body = wire::OriginBody,
    responses(
        (status = 200, description = "the key's origins after the call", body = wire::OriginList),
        (status = 400, description = "Origin missing or not an origin", body = wire::ErrorBody),
        (status = 403, description = "not an Admin key", body = wire::ErrorBody),
        (status = 404, description = "no such key in this account", body = wire::ErrorBody),
    ),
    security(("bearer" = [])))]
pub async fn add_origin(
    State(state): State<AppState>,
    Admin(admin): Admin,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<wire::OriginList>, ApiError> {
    let req: wire::OriginBody = parse_body(body)?;
    let origin = required_origin(req.origin)?;
    own_key(&state, &admin, &id).await?;
    state.store.add_key_origin(&id, &origin).await?;
    origin_list(&state, id).await
}

/// DELETE /apikeys/{KeyId}/origins: {Origin} in the body or the query; removes it and answers
/// the list (404 when the key's list does not hold it).
#[utoipa::path(delete, path = "/apikeys/{KeyId}/origins", tag = "account",
    params(
        ("KeyId" = String, Path, description = "the key's id"),
        ("Origin" = Option<String>, Query, description = "the origin (or in the body)"),
    ),
    responses(
        (status = 200, description = "the key's origins after the call", body = wire::OriginList),
        (status = 400, description = "Origin missing or not an origin", body = wire::ErrorBody),
        (status = 403, description = "not an Admin key", body = wire::ErrorBody),
        (status = 404, description = "no such key in this account, or the origin is not on its list", body = wire::ErrorBody),
    ),
    security(("bearer" = [])))]
pub async fn remove_origin(
    State(state): State<AppState>,
    Admin(admin): Admin,
    Path(id): Path<String>,
    Query(query): Query<wire::OriginBody>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<wire::OriginList>, ApiError> {
    let from_body: wire::OriginBody = parse_body(body)?;
    let origin = required_origin(from_body.origin.or(query.origin))?;
    own_key(&state, &admin, &id).await?;
    if !state.store.remove_key_origin(&id, &origin).await? {
        return Err(ApiError::not_found(format!(
            "{origin} is not on key {id}'s list of origins"
        )));
    }
    origin_list(&state, id).await
}

fn required_origin(origin: Option<String>) -> Result<String, ApiError> {
    let origin =
        origin.ok_or_else(|| ApiError::field("Origin", "required, e.g. https://shop.example"))?;
    canonical_origin(&origin).map_err(|e| ApiError::field("Origin", e))
}

/// An origin as browsers send it: `scheme://host[:port]`, scheme and host in lower case, the
/// scheme's default port left out (so `https://a.example:443` is `https://a.example`), no
/// path, query or credentials. Only http and https.
pub fn canonical_origin(text: &str) -> Result<String, String> {
    let text = text.trim();
    let url = url::Url::parse(text).map_err(|e| format!("'{text}' is not an origin: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "'{text}': the scheme must be http or https (got {})",
            url.scheme()
        ));
    }
    let host = url
        .host_str()
        .filter(|h| !h.is_empty())
        .ok_or_else(|| format!("'{text}' has no host"))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!("'{text}': an origin has no credentials"));
    }
    if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
        return Err(format!(
            "'{text}': an origin is scheme, host and port only (no path, query or fragment)"
        ));
    }
    // `Url` already leaves a scheme's default port out and lower-cases scheme and host
    Ok(match url.port() {
        Some(port) => format!("{}://{host}:{port}", url.scheme()),
        None => format!("{}://{host}", url.scheme()),
    })
}

#[cfg(test)]
mod tests {
    use super::canonical_origin;

    #[test]
    fn origins_are_scheme_host_and_non_default_port() {
        let ok = |t: &str| canonical_origin(t).unwrap();
        assert_eq!(ok("https://a.example"), "https://a.example");
        assert_eq!(ok("https://a.example:443"), "https://a.example");
        assert_eq!(ok("HTTPS://A.Example/"), "https://a.example");
        assert_eq!(ok("http://a.example:80"), "http://a.example");
        assert_eq!(ok("http://a.example:8080"), "http://a.example:8080");
        assert_eq!(ok("https://a.example:80"), "https://a.example:80");
        assert_ne!(ok("http://a.example"), ok("https://a.example"));
        for bad in [
            "a.example",
            "ftp://a.example",
            "https://a.example/path",
            "https://a.example/?q=1",
            "https://user@a.example",
            "",
        ] {
            assert!(canonical_origin(bad).is_err(), "{bad}");
        }
    }
}
