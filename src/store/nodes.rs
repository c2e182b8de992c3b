//! The nodes of a cluster: each process announces itself (id, role, compute adapter, slots)
//! and heartbeats; `kerf nodes` and /readyz list those seen lately. A node that stops cleanly
//! removes its row; one that dies stops being seen, and its jobs come back by lease expiry
//! (never by another node's start-up).

use super::{Store, StoreError};
use sqlx::any::AnyRow;
use sqlx::Row;

/// A node as it announces itself.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeInfo {
    pub id: String,
    /// `serve` (front end and worker), `front` (`serve --no-workers`) or `worker`.
    pub role: String,
    /// The compute adapter its jobs run on ("cpu", "gpu: NAME"; "" for a front end).
    pub compute: String,
    /// Nests it runs at once (0 for a front end).
    pub slots: i64,
    pub host: String,
    pub pid: i64,
    pub started_at: i64,
}

/// A node and when it was last heard from.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeSeen {
    pub node: NodeInfo,
    pub seen_at: i64,
}

fn node_of(r: &AnyRow) -> NodeSeen {
    NodeSeen {
        node: NodeInfo {
            id: r.get("id"),
            role: r.get("role"),
            compute: r.get("compute"),
            slots: r.get("slots"),
            host: r.get("host"),
            pid: r.get("pid"),
            started_at: r.get("started_at"),
        },
        seen_at: r.get("seen_at"),
    }
}

impl Store {
    /// Announces (or announces again, after a lost row) node `node`, seen at `now_ms`.
    pub async fn announce_node(&self, node: &NodeInfo, now_ms: i64) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO nodes (id, role, compute, slots, host, pid, started_at, seen_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
             ON CONFLICT (id) DO UPDATE SET compute = $3, slots = $4, seen_at = $8",
        )
        .bind(&node.id)
        .bind(&node.role)
        .bind(&node.compute)
        .bind(node.slots)
        .bind(&node.host)
        .bind(node.pid)
        .bind(node.started_at)
        .bind(now_ms)
        .execute(&self.writer)
        .await?;
        Ok(())
    }

    /// Removes node `id` (it stopped cleanly), and the rows of nodes not seen since `stale_ms`.
    pub async fn forget_nodes(&self, id: &str, stale_ms: i64) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM nodes WHERE id = $1 OR seen_at < $2")
            .bind(id)
            .bind(stale_ms)
            .execute(&self.writer)
            .await?;
        Ok(())
    }

    /// The nodes seen at or after `since_ms`, by role, then oldest first.
    pub async fn live_nodes(&self, since_ms: i64) -> Result<Vec<NodeSeen>, StoreError> {
        Ok(
            sqlx::query("SELECT * FROM nodes WHERE seen_at >= $1 ORDER BY role, started_at, id")
                .bind(since_ms)
                .fetch_all(&self.pool)
                .await?
                .iter()
                .map(node_of)
                .collect(),
        )
    }

    /// Sends `payload` to every node listening on `channel` (PostgreSQL's NOTIFY, delivered
    /// when the statement commits); nothing on SQLite, where one process is the whole cluster.
    pub async fn notify(&self, channel: &str, payload: &str) -> Result<(), StoreError> {
        if self.backend != super::Backend::Postgres {
            return Ok(());
        }
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(channel)
            .bind(payload)
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}
