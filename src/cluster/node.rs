//! A node's announcement and heartbeat in the store's `nodes` table.

use crate::store::{now_ms, NodeInfo, Store};
use kerf_kernels::Evaluator;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// How often a node says it is alive.
const HEARTBEAT: Duration = Duration::from_secs(5);
/// A node not heard from for this long is not listed as live (three heartbeats missed, and
/// then some: its jobs come back when their leases expire, whatever this says).
pub const NODE_SEEN_WITHIN_MS: i64 = 20_000;
/// Rows of nodes not heard from for a day are removed.
const FORGET_AFTER_MS: i64 = 24 * 3600 * 1000;

/// What a process does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// `kerf serve`: the HTTP API, workers and the webhook deliverer.
    Serve,
    /// `kerf serve --no-workers`: the HTTP API only.
    Front,
    /// `kerf worker`: workers and the webhook deliverer, no HTTP.
    Worker,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::Serve => "serve",
            Role::Front => "front",
            Role::Worker => "worker",
        }
    }

    pub fn answers_http(self) -> bool {
        self != Role::Worker
    }

    pub fn runs_jobs(self) -> bool {
        self != Role::Front
    }
}

/// This machine's name, for `kerf nodes` (the kernel's, else "unknown").
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

/// Announces `node` and heartbeats until `shutdown`; then removes its row (a node that dies
/// instead simply stops being seen).
///
/// A node that runs jobs passes its evaluation backend: each heartbeat advertises the
/// backend's name as it is then, so a GPU that failed shows in `kerf nodes` and /readyz
/// ("cpu (gpu: NAME failed: ...)").
pub async fn heartbeat(
    store: Store,
    mut node: NodeInfo,
    eval: Option<Arc<dyn Evaluator>>,
    shutdown: watch::Receiver<bool>,
) {
    let mut tick = tokio::time::interval(HEARTBEAT);
    loop {
        tokio::select! {
            _ = tick.tick() => {
                if let Some(eval) = &eval {
                    node.compute = eval.name();
                }
                if let Err(e) = store.announce_node(&node, now_ms()).await {
                    tracing::warn!(error = %e, "the node heartbeat failed");
                }
            }
            _ = crate::jobs::stopped(shutdown.clone()) => break,
        }
    }
    if let Err(e) = store
        .forget_nodes(&node.id, now_ms() - FORGET_AFTER_MS)
        .await
    {
        tracing::warn!(error = %e, "removing the node's row failed");
    }
}
