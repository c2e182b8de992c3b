//! Liveness and readiness for load balancers and orchestrators: no key needed.

use super::AppState;
use crate::wire;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;

/// The process answers.
#[utoipa::path(get, path = "/healthz", tag = "health",
    responses((status = 200, description = "alive", body = String)))]
pub async fn healthz() -> &'static str {
    "ok"
}

/// The store answers; names the compute adapter.
#[utoipa::path(get, path = "/readyz", tag = "health",
    responses(
        (status = 200, description = "ready", body = wire::Readiness),
        (status = 503, description = "the store does not answer", body = wire::Readiness),
    ))]
pub async fn readyz(State(state): State<AppState>) -> (StatusCode, Json<wire::Readiness>) {
    let ok = state.store.ping().await;
    (
        if ok {
            StatusCode::OK
        } else {
            StatusCode::SERVICE_UNAVAILABLE
        },
        Json(wire::Readiness {
            ready: ok,
            store: if ok { "ok" } else { "unreachable" }.into(),
            compute: state.eval.name(),
        }),
    )
}
