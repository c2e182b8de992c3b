//! One hub connection: the handshake, then the client's invocations (SubscribeToNest,
//! StartNesting, StopNesting, GenerateExport) answered with completions, the subscribed jobs'
//! events sent as NestingProgress, NestingResult, NestingFailed, ExportReady and
//! ExportFailed, a ping every 15 s, and a
//! close when the client has been silent for 30 s. A bad invocation gets a completion with an
//! error; the connection stays.
//!
//! Results are read from the store, never carried in events: a subscription sends the job's
//! latest result when it starts (a late or reconnecting client gets it at once), and again
//! whenever a newer one is stored; so a dispatcher that fell behind loses nothing (it asks
//! for a re-read).

use super::protocol::{self, Incoming};
use super::Signal;
use crate::api::exports::{queue_cached, CacheOutcome};
use crate::api::nesting::{start_held, stop_running};
use crate::api::AppState;
use crate::jobs::events::JobEvent;
use crate::jobs::run2d::KIND_PREFIX;
use crate::store::{ApiKey, JobState};
use crate::wire::exports::ResponseType;
use axum::extract::ws::{Message, WebSocket};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// The largest message a client may send (the hub's calls are a few hundred bytes).
pub(super) const MAX_MESSAGE_BYTES: usize = 64 * 1024;
/// The socket's read buffer (it grows for a bigger frame, up to MAX_MESSAGE_BYTES).
pub(super) const READ_BUFFER_BYTES: usize = 4 * 1024;
/// How often the server pings (SignalR's default KeepAliveInterval).
const PING_EVERY: Duration = Duration::from_secs(15);
/// A client silent this long is gone (SignalR's default ClientTimeoutInterval; its clients
/// ping every 15 s).
const CLIENT_TIMEOUT: Duration = Duration::from_secs(30);
/// The handshake must come this soon.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(15);

/// What a connection has sent of one subscribed job.
#[derive(Default)]
struct Sent {
    last_result: Option<String>,
    failure: bool,
}

struct Connection {
    state: AppState,
    key: ApiKey,
    id: u64,
    tx: mpsc::UnboundedSender<Signal>,
    subscribed: HashMap<String, Sent>,
}

pub(super) async fn run(state: AppState, key: ApiKey, mut socket: WebSocket) {
    let hub = state.hub.clone();
    let mut buffer = String::new();
    match tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake(&mut socket, &mut buffer)).await {
        Ok(Ok(())) => {}
        Ok(Err(error)) => {
            let _ = send(&mut socket, protocol::handshake_response(Some(&error))).await;
            return;
        }
        Err(_) => return,
    }
    if send(&mut socket, protocol::handshake_response(None))
        .await
        .is_err()
    {
        return;
    }
    let (tx, mut signals) = mpsc::unbounded_channel();
    let mut c = Connection {
        id: hub.shared.next_connection.fetch_add(1, Ordering::Relaxed),
        state,
        key,
        tx,
        subscribed: HashMap::new(),
    };
    // records that came with the handshake's frame
    let ended = c.handle_records(&mut socket, &mut buffer).await;
    if !ended {
        c.serve(&mut socket, &mut signals, &mut buffer).await;
    }
    hub.unsubscribe(c.subscribed.keys().cloned(), c.id);
    // end the WebSocket itself too (after a SignalR close message, or the client's own)
    let _ = tokio::time::timeout(SEND_TIMEOUT, socket.send(Message::Close(None))).await;
}

/// A send that does not complete in this time ends the connection: a client that stopped
/// reading must not hold the connection (and the events queued for it) for ever.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);

async fn send(socket: &mut WebSocket, text: String) -> Result<(), axum::Error> {
    match tokio::time::timeout(SEND_TIMEOUT, socket.send(Message::Text(text.into()))).await {
        Ok(sent) => sent,
        Err(_) => Err(axum::Error::new("the client did not read for 10 s")),
    }
}

/// Reads until the handshake record, and checks it.
async fn handshake(socket: &mut WebSocket, buffer: &mut String) -> Result<(), String> {
    loop {
        match socket.recv().await {
            Some(Ok(Message::Text(t))) => {
                buffer.push_str(t.as_str());
                if buffer.len() > MAX_MESSAGE_BYTES {
                    return Err("the handshake is larger than this hub accepts".into());
                }
                if let Some(end) = buffer.find(protocol::RECORD_SEPARATOR) {
                    let record: String = buffer.drain(..end + 1).collect();
                    return protocol::handshake(&record[..end]);
                }
            }
            Some(Ok(Message::Binary(_))) => {
                return Err("this hub speaks the json protocol in text frames".into())
            }
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(format!("reading the handshake: {e}")),
            None => return Err("the connection closed before the handshake".into()),
        }
    }
}

impl Connection {
    async fn serve(
        &mut self,
        socket: &mut WebSocket,
        signals: &mut mpsc::UnboundedReceiver<Signal>,
        buffer: &mut String,
    ) {
        let mut ping = tokio::time::interval_at(Instant::now() + PING_EVERY, PING_EVERY);
        let mut heard = Instant::now();
        loop {
            tokio::select! {
                message = socket.recv() => {
                    heard = Instant::now();
                    match message {
                        Some(Ok(Message::Text(t))) => {
                            buffer.push_str(t.as_str());
                            if self.handle_records(socket, buffer).await {
                                return;
                            }
                        }
                        Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return,
                        Some(Ok(_)) => {}
                    }
                }
                Some(signal) = signals.recv() => {
                    if self.on_signal(socket, signal).await.is_err() {
                        return;
                    }
                }
                _ = ping.tick() => {
                    if send(socket, protocol::ping()).await.is_err() {
                        return;
                    }
                }
                _ = tokio::time::sleep_until(heard + CLIENT_TIMEOUT) => {
                    let why = format!("no message from the client in {} s", CLIENT_TIMEOUT.as_secs());
                    let _ = send(socket, protocol::close(Some(&why), true)).await;
                    return;
                }
            }
        }
    }

    /// Handles the complete records in `buffer`; true when the connection is to end.
    async fn handle_records(&mut self, socket: &mut WebSocket, buffer: &mut String) -> bool {
        if buffer.len() > MAX_MESSAGE_BYTES {
            let _ = send(
                socket,
                protocol::close(Some("a message is larger than this hub accepts"), false),
            )
            .await;
            return true;
        }
        for record in protocol::take_records(buffer) {
            let outcome = match protocol::parse(&record) {
                Ok(Incoming::Invocation {
                    invocation_id,
                    target,
                    arguments,
                }) => {
                    // what a subscription sends at once (its catch-up) is queued as a signal,
                    // so it goes out after this completion
                    let result = self.invoke(&target, &arguments).await;
                    match invocation_id {
                        Some(id) => send(socket, protocol::completion(&id, result)).await,
                        None => Ok(()),
                    }
                }
                Ok(Incoming::Streaming {
                    invocation_id: Some(id),
                }) => {
                    let error = "this hub has no streaming methods".to_string();
                    send(socket, protocol::completion(&id, Err(error))).await
                }
                Ok(Incoming::Streaming {
                    invocation_id: None,
                })
                | Ok(Incoming::Ping)
                | Ok(Incoming::Ignored) => Ok(()),
                Ok(Incoming::Close) => return true,
                Err(error) => {
                    // a message that cannot be read leaves nothing to answer: say why, and end
                    let _ = send(socket, protocol::close(Some(&error), false)).await;
                    return true;
                }
            };
            if outcome.is_err() {
                return true;
            }
        }
        false
    }

    /// Runs hub method `target`; the completion's result or error.
    async fn invoke(&mut self, target: &str, arguments: &[Value]) -> Result<Value, String> {
        match target {
            "SubscribeToNest" => {
                let id = one_request_id(target, arguments)?;
                let status = self.subscribe(&id).await?;
                Ok(json!({"RequestId": id, "Status": status}))
            }
            "StartNesting" => {
                let id = one_request_id(target, arguments)?;
                self.nest_job(&id).await?;
                start_held(&self.state, &self.key, &id)
                    .await
                    .map_err(|e| e.message)?;
                // whoever starts a held job watches it
                self.subscribe(&id).await?;
                Ok(json!({"RequestId": id, "Status": JobState::Queued.as_str()}))
            }
            "StopNesting" => {
                let id = one_request_id(target, arguments)?;
                self.nest_job(&id).await?;
                stop_running(&self.state, &self.key, &id)
                    .await
                    .map_err(|e| e.message)?;
                Ok(json!({"RequestId": id, "Stopping": true}))
            }
            "GenerateExport" => {
                let (id, result_id, response_type) = export_arguments(arguments)?;
                // subscribed first: a fast export's ExportReady cannot slip past
                self.subscribe(&id).await?;
                let outcome = queue_cached(
                    &self.state,
                    &self.key,
                    &id,
                    result_id.as_deref(),
                    response_type,
                )
                .await
                .map_err(|e| e.message)?;
                Ok(match outcome {
                    CacheOutcome::Queued(spec) => json!({
                        "RequestId": spec.request_id, "ResultId": spec.result_id,
                        "ResponseType": spec.response_type, "Status": "Queued",
                    }),
                    CacheOutcome::Fresh(spec, expires_at) => {
                        // in the cache already: announced again, as if just made
                        let _ = self.tx.send(Signal::Event(JobEvent::ExportReady {
                            job_id: spec.request_id.clone(),
                            result_id: spec.result_id.clone(),
                            response_type: spec.response_type.clone(),
                            expires_at,
                        }));
                        json!({
                            "RequestId": spec.request_id, "ResultId": spec.result_id,
                            "ResponseType": spec.response_type, "Status": "Ready",
                            "ExpiresUtc": crate::wire::utc(expires_at),
                        })
                    }
                })
            }
            other => Err(format!(
                "unknown hub method '{other}': this hub has SubscribeToNest, StartNesting, StopNesting and GenerateExport"
            )),
        }
    }

    /// The job, if it is a 2D nest or a quote of the caller's account (the kinds the hub
    /// streams: a quote's payloads come as NestingResult, their Status the quote payload).
    async fn nest_job(&self, id: &str) -> Result<crate::store::JobStatus, String> {
        let job = self
            .state
            .store
            .status_for_account(id, self.key.account_id)
            .await
            .map_err(|e| format!("the store failed: {e}"))?
            .ok_or_else(|| format!("no job {id} for this account"))?;
        if !job.kind.starts_with(KIND_PREFIX)
            && !job.kind.starts_with(crate::jobs::run_quote::KIND_PREFIX)
        {
            return Err(format!(
                "job {id} is not a 2D nest or a quote: only those stream over the hub"
            ));
        }
        Ok(job)
    }

    /// Subscribes this connection to job `id`; its status now (as GET /v1/nesting/status
    /// reports it).
    async fn subscribe(&mut self, id: &str) -> Result<&'static str, String> {
        let job = self.nest_job(id).await?;
        if !self.subscribed.contains_key(id) {
            self.state.hub.subscribe(id, self.id, &self.tx);
            self.subscribed.insert(id.to_string(), Sent::default());
            // the catch-up goes out right after the completion
            let _ = self.tx.send(Signal::Event(JobEvent::Result {
                job_id: id.to_string(),
            }));
        }
        // Held is told apart from Queued here (REST's status says Queued for both): a
        // watcher needs to know whether StartNesting is still to come
        Ok(job.state.as_str())
    }

    async fn on_signal(
        &mut self,
        socket: &mut WebSocket,
        signal: Signal,
    ) -> Result<(), axum::Error> {
        match signal {
            Signal::Event(JobEvent::Result { job_id } | JobEvent::Failed { job_id }) => {
                self.catch_up(socket, &job_id).await
            }
            // the events that carry their whole message: passed on to a subscriber
            Signal::Event(event) => {
                if self.subscribed.contains_key(event.job_id()) {
                    if let Some((target, body)) = forwarded(&event) {
                        send(socket, protocol::event(target, body)).await?;
                    }
                }
                Ok(())
            }
            Signal::Refresh => {
                let ids: Vec<String> = self.subscribed.keys().cloned().collect();
                for id in ids {
                    self.catch_up(socket, &id).await?;
                }
                Ok(())
            }
        }
    }

    /// Sends job `id`'s latest result if this connection has not had it, and its failure if
    /// it failed and that was not sent.
    async fn catch_up(&mut self, socket: &mut WebSocket, id: &str) -> Result<(), axum::Error> {
        let Some(sent) = self.subscribed.get(id) else {
            return Ok(());
        };
        let store = &self.state.store;
        let latest = match store.latest_result_status(id).await {
            Ok(r) => r,
            Err(e) => {
                tracing::error!(job = %id, error = %e, "hub: reading a result failed");
                return Ok(());
            }
        };
        let mut out = Vec::new();
        let mut last_result = sent.last_result.clone();
        if let Some((result_id, status)) = latest {
            if last_result.as_deref() != Some(result_id.as_str()) {
                let status: Value = serde_json::from_str(&status).unwrap_or(Value::Null);
                out.push(protocol::event(
                    "NestingResult",
                    json!({"RequestId": id, "NestIdentifier": id, "Status": status}),
                ));
                last_result = Some(result_id);
            }
        }
        let mut failure = sent.failure;
        if !failure {
            if let Ok(Some(job)) = store.status(id).await {
                if job.state == JobState::Failed {
                    out.push(protocol::event(
                        "NestingFailed",
                        json!({
                            "RequestId": id,
                            "ErrorReport": job.error.unwrap_or_default(),
                            "ErrorCode": job.error_code.unwrap_or_else(|| "NestingFailed".into()),
                        }),
                    ));
                    failure = true;
                }
            }
        }
        if let Some(sent) = self.subscribed.get_mut(id) {
            sent.last_result = last_result;
            sent.failure = failure;
        }
        for text in out {
            send(socket, text).await?;
        }
        Ok(())
    }
}

/// The hub event of a job event that carries its whole message (progress, exports); None for
/// the ones whose message is read from the store (results, failures).
fn forwarded(event: &JobEvent) -> Option<(&'static str, Value)> {
    Some(match event {
        JobEvent::Progress {
            job_id,
            progress: p,
        } => (
            "NestingProgress",
            json!({
                "RequestId": job_id,
                "ElapsedSeconds": p.elapsed_s,
                "Utilisation": p.utilisation,
                "PartsPlaced": p.parts_placed,
                "SheetsUsed": p.sheets_used,
            }),
        ),
        JobEvent::ExportReady {
            job_id,
            result_id,
            response_type,
            expires_at,
        } => (
            "ExportReady",
            json!({
                "RequestId": job_id,
                "ResultId": result_id,
                "ResponseType": response_type,
                "ExpiresUtc": crate::wire::utc(*expires_at),
            }),
        ),
        JobEvent::ExportFailed {
            job_id,
            result_id,
            response_type,
            error,
        } => (
            "ExportFailed",
            json!({
                "RequestId": job_id,
                "ResultId": result_id,
                "ResponseType": response_type,
                "Error": error,
            }),
        ),
        JobEvent::Result { .. } | JobEvent::Failed { .. } => return None,
    })
}

/// GenerateExport's arguments: RequestId, ResultIdentity (empty or null: the latest result)
/// and ResponseType (a name, or 0 to 6).
fn export_arguments(arguments: &[Value]) -> Result<(String, Option<String>, ResponseType), String> {
    let usage = || {
        format!(
            "GenerateExport takes three arguments, RequestId (a string), ResultIdentity (a string; empty for the latest result) and ResponseType (Result, Render, DXF, ReportSource, RemnantExport, Runtime, PartsExport, or 0 to 6); got {}",
            Value::Array(arguments.to_vec())
        )
    };
    let [id, result, kind] = arguments else {
        return Err(usage());
    };
    let id = id
        .as_str()
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(usage)?;
    let result = match result {
        Value::Null => None,
        Value::String(s) if s.trim().is_empty() => None,
        Value::String(s) => Some(s.trim().to_string()),
        _ => return Err(usage()),
    };
    let kind = match kind {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => return Err(usage()),
    };
    let kind = ResponseType::parse(&kind).map_err(|e| format!("ResponseType: {e}"))?;
    Ok((id.trim().to_string(), result, kind))
}

/// The one argument of a method that takes a RequestId.
fn one_request_id(target: &str, arguments: &[Value]) -> Result<String, String> {
    match arguments {
        [Value::String(id)] if !id.trim().is_empty() => Ok(id.trim().to_string()),
        _ => Err(format!(
            "{target} takes one argument, the RequestId (a string); got {}",
            Value::Array(arguments.to_vec())
        )),
    }
}
