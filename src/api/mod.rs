//! The HTTP API (axum): one module per group of endpoints, the auth extractor, and the mapping
//! of errors to the spec's status codes and bodies. Handlers validate, write to the store and
//! wake the workers; they never run a nest themselves.

mod account;
mod auth;
mod cors;
mod dashboard;
mod error;
mod exports;
mod health;
mod hub;
mod keys;
mod legacy;
mod nesting;
mod nesting1d;
pub mod openapi;
mod quote;
mod rate;

pub use rate::KeyRateLimit;

pub use error::{ApiError, Shape};
pub use hub::Hub;
pub use keys::canonical_origin;

use crate::jobs::Wakeups;
use crate::store::Store;
use crate::webhook::AddressGuard;
use axum::extract::{DefaultBodyLimit, Request};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, patch, post};
use axum::Router;
use std::net::IpAddr;
use std::sync::Arc;

/// The default limit on request bodies (DESIGN 4).
pub const DEFAULT_BODY_LIMIT: usize = 64 * 1024 * 1024;

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    pub store: Store,
    pub wake: Wakeups,
    /// This node as it announces itself (its compute adapter goes to /readyz).
    pub node: Arc<crate::store::NodeInfo>,
    pub guard: Arc<AddressGuard>,
    /// Jobs a key may have waiting beyond its Parallelism (which caps those running).
    pub max_queued_per_key: i64,
    /// Requests per minute each key may make.
    pub rate_limit: Arc<KeyRateLimit>,
    /// The origins of this server's own pages (canonical): requests from them are not held
    /// to their key's origin list.
    pub public_origins: Arc<Vec<String>>,
    /// The live hub's connections and subscriptions.
    pub hub: Hub,
    /// How long an export made through the hub stays in the export cache.
    pub export_cache_minutes: f64,
}

impl AppState {
    /// A key's limit of jobs queued or running.
    fn admission_limit(&self, key: &crate::store::ApiKey) -> i64 {
        key.parallelism.saturating_add(self.max_queued_per_key)
    }

    /// Refuses, at submission, a webhook whose host is an IP literal the guard refuses (names
    /// are checked when they are resolved, at each delivery).
    pub(super) fn check_webhook_host(&self, url: &url::Url) -> Result<(), String> {
        match url
            .host_str()
            .map(|h| h.trim_matches(['[', ']']).parse::<IpAddr>())
        {
            Some(Ok(ip)) => self.guard.check(ip),
            _ => Ok(()),
        }
    }
}

pub fn router(state: AppState, body_limit: usize) -> Router {
    let limits = Arc::new(tokio::sync::Semaphore::new(MAX_CONCURRENT_REQUESTS));
    let r = Router::new()
        .route("/v1/nesting", post(nesting::submit_dxf))
        .route("/v1/nesting/geometry", post(nesting::submit_geometry))
        .route("/v1/nesting/parametric", post(nesting::submit_parametric))
        .route("/v1/nesting/status", get(nesting::status))
        .route("/v1/nesting/result/", post(nesting::result))
        .route("/v1/nesting/result", post(nesting::result))
        .route("/v1/nesting/delayedstart", post(nesting::delayed_start))
        .route("/v1/nesting/continue", post(nesting::continue_nest))
        .route("/v1/nesting/failures", get(nesting::failures))
        .route("/v1/nesting/legacy", post(legacy::submit_legacy))
        .route("/v1/nesting/quotenesting", post(quote::submit_quote))
        .route(
            "/v1/nesting/geometryquotenesting",
            post(quote::submit_geometry_quote),
        )
        .route("/v1/nesting/exportquotenest", get(quote::export_quote))
        .route("/v1/nesting/1D", post(nesting1d::submit_1d))
        .route("/v1/nesting/1D/result", post(nesting1d::result_1d))
        .route("/v1/nesting/render/", get(exports::render))
        .route(
            "/v1/nesting/export",
            get(exports::export).post(exports::export),
        )
        .route("/v1/nesting/render", get(exports::render))
        .route("/v1/nesting/export/cached", get(exports::cached))
        .route("/v1/auth/validate", get(account::validate))
        .route("/v1/apiKey/validUntil", get(account::valid_until))
        .route("/v1/status", get(account::status))
        .route("/usage/fairness", get(account::fairness))
        .route("/admin/keys", post(keys::create).get(keys::list))
        .route("/admin/keys/{id}", delete(keys::revoke))
        .route("/admin/keys/{id}/regenerate", post(keys::regenerate))
        .route("/admin/keys/{id}/type", patch(keys::set_type))
        .route("/admin/keys/{id}/weight", patch(keys::set_weight))
        .route(
            "/apikeys/{id}/origins",
            get(keys::origins)
                .post(keys::add_origin)
                .delete(keys::remove_origin),
        )
        .route("/admin/jobs", get(account::recent_jobs))
        .route("/dashboard", get(dashboard::index))
        .route("/dashboard/", get(dashboard::index))
        .route("/dashboard/dashboard.css", get(dashboard::style))
        .route("/dashboard/dashboard.js", get(dashboard::script))
        .route("/dashboard/nest.js", get(dashboard::nest_script))
        .route(
            "/dashboard/vendor/signalr.min.js",
            get(dashboard::signalr_client),
        )
        .route("/dashboard/nests/{id}", get(dashboard::nest_page))
        .route("/hubs/nesting/negotiate", post(hub::negotiate))
        .route("/hubs/nesting", get(hub::connect))
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .route("/openapi.json", get(openapi::openapi_json));
    r.fallback(|method: Method, uri: axum::http::Uri| async move {
        ApiError::not_found(format!("no endpoint {method} {}", uri.path()))
    })
    .method_not_allowed_fallback(|method: Method, uri: axum::http::Uri| async move {
        ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            format!("{} does not take {method}", uri.path()),
        )
    })
    .layer(DefaultBodyLimit::max(body_limit))
    .layer(axum::middleware::from_fn(
        move |req: Request, next: Next| refuse_declared_oversize(body_limit, req, next),
    ))
    .layer(axum::middleware::from_fn(
        move |req: Request, next: Next| bounded(limits.clone(), req, next),
    ))
    .layer(axum::middleware::from_fn_with_state(
        state.clone(),
        cors::cors,
    ))
    .layer(axum::middleware::from_fn(trace_request))
    .with_state(state)
}

/// Requests handled at once (more wait for a turn), and how long one may take in all,
/// body upload included: a slow or stalled client cannot hold resources for ever.
pub const MAX_CONCURRENT_REQUESTS: usize = 256;
pub const REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

async fn bounded(limits: Arc<tokio::sync::Semaphore>, req: Request, next: Next) -> Response {
    let submission = is_submission(req.uri().path());
    let Ok(_permit) = limits.acquire_owned().await else {
        return ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "shutting down").into_response();
    };
    match tokio::time::timeout(REQUEST_TIMEOUT, next.run(req)).await {
        Ok(response) => response,
        Err(_) => ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "the request took longer than {} s (body upload included)",
                REQUEST_TIMEOUT.as_secs()
            ),
        )
        .shaped(if submission {
            Shape::Submission
        } else {
            Shape::Generic
        })
        .into_response(),
    }
}

/// The submission endpoints, whose errors use the ApiNestingResult shape.
pub(crate) fn is_submission(path: &str) -> bool {
    matches!(
        path.trim_end_matches('/'),
        "/v1/nesting"
            | "/v1/nesting/geometry"
            | "/v1/nesting/parametric"
            | "/v1/nesting/legacy"
            | "/v1/nesting/quotenesting"
            | "/v1/nesting/geometryquotenesting"
    )
}

/// A body whose Content-Length is over the limit is refused (413) before any of it is read;
/// bodies without a length are cut off at the limit while they are read.
async fn refuse_declared_oversize(limit: usize, req: Request, next: Next) -> Response {
    let declared = req
        .headers()
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        let shape = if is_submission(req.uri().path()) {
            Shape::Submission
        } else {
            Shape::Generic
        };
        return ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the request body is larger than this server accepts ({} MiB)",
                limit / (1024 * 1024)
            ),
        )
        .shaped(shape)
        .into_response();
    }
    next.run(req).await
}

/// One log line per request: method, path, status, milliseconds.
async fn trace_request(req: Request, next: Next) -> Response {
    let (method, path) = (req.method().clone(), req.uri().path().to_string());
    let start = std::time::Instant::now();
    let response = next.run(req).await.into_response();
    tracing::debug!(%method, %path, status = response.status().as_u16(), ms = start.elapsed().as_millis() as u64, "request");
    response
}
