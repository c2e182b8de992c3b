//! The live hub (DESIGN 5.8) at /hubs/nesting: SignalR's JSON hub protocol version 1 over
//! WebSockets, so the official SignalR clients connect unchanged. `protocol` parses and
//! writes the records; `connection` runs one client; this module holds what connections
//! share: the connection tokens negotiate hands out, and the subscriptions, fed by one
//! dispatcher task that reads the workers' job events and passes each to the connections
//! subscribed to its job (an idle connection costs no work per event).

mod connection;
mod protocol;

use super::auth::HubCaller;
use super::error::ApiError;
use super::AppState;
use crate::jobs::events::{JobEvent, JobEvents};
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::Json;
use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;

/// How long a connection token from negotiate waits for its WebSocket.
const TOKEN_LIFETIME: Duration = Duration::from_secs(60);

/// What the dispatcher hands a connection.
#[derive(Clone, Debug)]
enum Signal {
    Event(JobEvent),
    /// The dispatcher fell behind the events: read the store again for every subscription.
    Refresh,
}

type Subscribers = HashMap<u64, mpsc::UnboundedSender<Signal>>;

struct Shared {
    /// Connection token -> (the key it was issued to, when).
    tokens: Mutex<HashMap<String, (String, Instant)>>,
    /// Job id -> the connections subscribed to it.
    subscriptions: Mutex<HashMap<String, Subscribers>>,
    next_connection: AtomicU64,
}

/// The hub's shared state (cheap to clone).
#[derive(Clone)]
pub struct Hub {
    shared: Arc<Shared>,
}

impl Hub {
    /// The hub, with its dispatcher listening to `events` (needs a tokio runtime).
    pub fn start(events: &JobEvents) -> Hub {
        let hub = Hub {
            shared: Arc::new(Shared {
                tokens: Mutex::default(),
                subscriptions: Mutex::default(),
                next_connection: AtomicU64::new(1),
            }),
        };
        let mut receiver = events.subscribe();
        let dispatcher = hub.clone();
        tokio::spawn(async move {
            loop {
                match receiver.recv().await {
                    Ok(event) => dispatcher.dispatch(event),
                    Err(RecvError::Lagged(missed)) => {
                        tracing::warn!(
                            missed,
                            "hub dispatcher fell behind; subscribers re-read the store"
                        );
                        dispatcher.refresh_all();
                    }
                    Err(RecvError::Closed) => return,
                }
            }
        });
        hub
    }

    fn subscriptions(&self) -> std::sync::MutexGuard<'_, HashMap<String, Subscribers>> {
        // a poisoned lock only means a panic mid-update: the map is still usable
        self.shared
            .subscriptions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    fn dispatch(&self, event: JobEvent) {
        if let Some(subscribers) = self.subscriptions().get(event.job_id()) {
            for tx in subscribers.values() {
                let _ = tx.send(Signal::Event(event.clone()));
            }
        }
    }

    fn refresh_all(&self) {
        for subscribers in self.subscriptions().values() {
            for tx in subscribers.values() {
                let _ = tx.send(Signal::Refresh);
            }
        }
    }

    fn subscribe(&self, job_id: &str, connection: u64, tx: &mpsc::UnboundedSender<Signal>) {
        self.subscriptions()
            .entry(job_id.to_string())
            .or_default()
            .insert(connection, tx.clone());
    }

    fn unsubscribe(&self, job_ids: impl Iterator<Item = String>, connection: u64) {
        let mut subscriptions = self.subscriptions();
        for job_id in job_ids {
            if let Some(subscribers) = subscriptions.get_mut(&job_id) {
                subscribers.remove(&connection);
                if subscribers.is_empty() {
                    subscriptions.remove(&job_id);
                }
            }
        }
    }

    fn issue_token(&self, key_id: &str) -> String {
        let token = uuid::Uuid::new_v4().simple().to_string();
        let mut tokens = self.shared.tokens.lock().unwrap_or_else(|p| p.into_inner());
        tokens.retain(|_, (_, at)| at.elapsed() < TOKEN_LIFETIME);
        tokens.insert(token.clone(), (key_id.to_string(), Instant::now()));
        token
    }

    /// Takes token `id` if it was issued to `key_id` and is fresh (a token serves one
    /// connection).
    fn take_token(&self, id: &str, key_id: &str) -> bool {
        let mut tokens = self.shared.tokens.lock().unwrap_or_else(|p| p.into_inner());
        match tokens.get(id) {
            Some((owner, at)) if owner == key_id && at.elapsed() < TOKEN_LIFETIME => {
                tokens.remove(id);
                true
            }
            _ => false,
        }
    }
}

#[derive(serde::Deserialize, Default)]
#[serde(default)]
pub struct NegotiateQuery {
    #[serde(rename = "negotiateVersion")]
    negotiate_version: Option<u32>,
}

/// POST /hubs/nesting/negotiate: a connection token and the one transport, WebSockets.
pub async fn negotiate(
    State(state): State<AppState>,
    HubCaller(key): HubCaller,
    Query(q): Query<NegotiateQuery>,
) -> Json<serde_json::Value> {
    let token = state.hub.issue_token(&key.id);
    let transports = serde_json::json!([{"transport": "WebSockets", "transferFormats": ["Text"]}]);
    // version 0 clients connect with connectionId; version 1 with connectionToken
    Json(match q.negotiate_version.unwrap_or(0) {
        0 => serde_json::json!({"connectionId": token, "availableTransports": transports}),
        _ => serde_json::json!({
            "negotiateVersion": 1,
            "connectionId": uuid::Uuid::new_v4().simple().to_string(),
            "connectionToken": token,
            "availableTransports": transports,
        }),
    })
}

#[derive(serde::Deserialize, Default)]
#[serde(default)]
pub struct ConnectQuery {
    id: Option<String>,
}

/// GET /hubs/nesting: the WebSocket. With `id` (after negotiate) the token must be one issued
/// to this key; without it (clients that skip negotiation) the key alone admits it.
pub async fn connect(
    State(state): State<AppState>,
    HubCaller(key): HubCaller,
    Query(q): Query<ConnectQuery>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response, ApiError> {
    let upgrade = upgrade.map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("this hub speaks WebSockets only (SignalR's WebSockets transport): {e}"),
        )
    })?;
    if let Some(id) = q.id.as_deref() {
        if !state.hub.take_token(id, &key.id) {
            return Err(ApiError::not_found(format!(
                "no connection {id}: negotiate again (a token serves one connection, for {} s)",
                TOKEN_LIFETIME.as_secs()
            )));
        }
    }
    // small buffers: the hub's messages are a few hundred bytes to a few KiB, and thousands
    // of mostly idle connections must not each hold the default 128 KiB
    Ok(upgrade
        .read_buffer_size(connection::READ_BUFFER_BYTES)
        .write_buffer_size(0)
        .max_message_size(connection::MAX_MESSAGE_BYTES)
        .on_upgrade(move |socket| connection::run(state, key, socket)))
}
