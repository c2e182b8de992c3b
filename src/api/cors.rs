//! CORS for browser callers (spec "Authentication" 7, DESIGN 5.9). A preflight (OPTIONS with
//! Access-Control-Request-Method) is answered for the union of the origins that the store's
//! active keys allow, with the methods and headers the API uses; any other preflight is 403.
//! Answers to requests from such an origin carry Access-Control-Allow-Origin, so the browser
//! lets the page read them. Which key a request may use from which origin is `auth`'s check
//! (403 for an origin its key's list does not hold); this layer only speaks to the browser.

use super::error::ApiError;
use super::keys::canonical_origin;
use super::AppState;
use axum::extract::{Request, State};
use axum::http::header::{
    ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_METHODS, ACCESS_CONTROL_ALLOW_ORIGIN,
    ACCESS_CONTROL_EXPOSE_HEADERS, ACCESS_CONTROL_MAX_AGE, ACCESS_CONTROL_REQUEST_METHOD, ORIGIN,
    VARY,
};
use axum::http::{HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The methods the API answers to.
const METHODS: &str = "GET, POST, PATCH, DELETE";
/// The request headers a browser page may send.
const HEADERS: &str = "Authorization, Content-Type, Accept";
/// How long a browser may keep a preflight's answer, in seconds.
const MAX_AGE_S: &str = "600";

pub async fn cors(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let Some(origin) = req.headers().get(ORIGIN).cloned() else {
        return next.run(req).await;
    };
    let allowed = match origin.to_str().map(canonical_origin) {
        Ok(Ok(o)) => state.store.origin_allowed(&o).await.unwrap_or(false),
        _ => false,
    };
    let preflight = req.method() == Method::OPTIONS
        && req.headers().contains_key(ACCESS_CONTROL_REQUEST_METHOD);
    if preflight {
        if !allowed {
            return ApiError::new(
                StatusCode::FORBIDDEN,
                format!(
                    "origin '{}' is not among the origins any key of this service may be used from",
                    origin.to_str().unwrap_or("")
                ),
            )
            .into_response();
        }
        let mut r = StatusCode::NO_CONTENT.into_response();
        let h = r.headers_mut();
        h.insert(ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        h.insert(
            ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static(METHODS),
        );
        h.insert(
            ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static(HEADERS),
        );
        h.insert(ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static(MAX_AGE_S));
        h.append(VARY, HeaderValue::from_static("Origin"));
        return r;
    }
    let mut r = next.run(req).await;
    if allowed {
        let h = r.headers_mut();
        h.insert(ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        h.insert(
            ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static("Retry-After"),
        );
        h.append(VARY, HeaderValue::from_static("Origin"));
    }
    r
}
