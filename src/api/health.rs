//! Liveness and readiness for load balancers and orchestrators: no key needed.

use super::AppState;
use crate::cluster::NODE_SEEN_WITHIN_MS;
use crate::store::now_ms;
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

/// The store answers; names this node, its role and compute adapter, and the live nodes of
/// the cluster (on SQLite, this one).
#[utoipa::path(get, path = "/readyz", tag = "health",
    responses(
        (status = 200, description = "ready", body = wire::Readiness),
        (status = 503, description = "the store does not answer", body = wire::Readiness),
    ))]
pub async fn readyz(State(state): State<AppState>) -> (StatusCode, Json<wire::Readiness>) {
    let nodes = state.store.live_nodes(now_ms() - NODE_SEEN_WITHIN_MS).await;
    let ok = nodes.is_ok();
    let nodes = nodes.unwrap_or_default();
    (
        if ok {
            StatusCode::OK
        } else {
            StatusCode::SERVICE_UNAVAILABLE
        },
        Json(wire::Readiness {
            ready: ok,
            store: if ok { "ok" } else { "unreachable" }.into(),
            // as this node last advertised it (a GPU that failed since start shows), else as
            // it started
            compute: nodes
                .iter()
                .find(|n| n.node.id == state.node.id)
                .map_or_else(|| state.node.compute.clone(), |n| n.node.compute.clone()),
            node: state.node.id.clone(),
            role: state.node.role.clone(),
            nodes: nodes.iter().map(wire::LiveNode::from).collect(),
        }),
    )
}
