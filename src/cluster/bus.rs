//! The cluster bus: PostgreSQL LISTEN/NOTIFY on one channel. A node sends what others must
//! hear at once (a job queued, a job's events, a stop) and applies what it hears from others
//! to its own wake-ups, hub and running jobs. Only hints travel here: the database row is the
//! truth, so a notification lost while the database restarts costs latency (idle claimers
//! look at the queue now and then anyway, a stop is read at the job's next heartbeat), never a
//! job. On SQLite there is no bus: one process is the whole cluster.

use super::Topic;
use crate::jobs::events::JobEvent;
use crate::jobs::Wakeups;
use crate::store::Store;
use serde::{Deserialize, Serialize};
use std::time::Duration;
use tokio::sync::{mpsc, watch};

/// The one NOTIFY channel kerf nodes share.
pub const CHANNEL: &str = "kerf_cluster";

/// NOTIFY payloads must stay under 8000 bytes; longer texts (an export's error) are cut.
const MAX_TEXT: usize = 2000;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Message {
    Wake(Topic),
    Event(JobEvent),
    /// A stop of mark `mark` for job `job_id`, for whichever node runs it.
    Stop {
        job_id: String,
        mark: i64,
    },
}

/// Where a node's outgoing messages go (the bus's sender task).
#[derive(Clone)]
pub struct Link(mpsc::UnboundedSender<Message>);

impl Link {
    pub fn send(&self, message: Message) {
        // the bus stopped with the node: nobody else needs to hear
        let _ = self.0.send(message);
    }
}

/// A message as it travels, with the node that sent it (a node ignores its own).
#[derive(Serialize, Deserialize)]
struct Envelope {
    from: String,
    message: Message,
}

/// The outgoing half before the node's wake-ups exist: make the link, build `Wakeups` with
/// it, then `run` the bus.
pub fn link() -> (Link, mpsc::UnboundedReceiver<Message>) {
    let (tx, rx) = mpsc::unbounded_channel();
    (Link(tx), rx)
}

/// Runs the bus until `shutdown`: sends this node's messages, applies the others'. Needs a
/// PostgreSQL store.
pub async fn run(
    store: Store,
    node_id: String,
    wake: Wakeups,
    mut outgoing: mpsc::UnboundedReceiver<Message>,
    shutdown: watch::Receiver<bool>,
) {
    let Some(url) = store.postgres_url().map(str::to_string) else {
        return;
    };
    let sender = {
        let (store, from) = (store.clone(), node_id.clone());
        let shutdown = shutdown.clone();
        async move {
            loop {
                let message = tokio::select! {
                    m = outgoing.recv() => match m { Some(m) => m, None => return },
                    _ = crate::jobs::stopped(shutdown.clone()) => return,
                };
                let payload = serde_json::to_string(&Envelope {
                    from: from.clone(),
                    message: shorten(message),
                })
                .expect("messages serialise");
                if let Err(e) = store.notify(CHANNEL, &payload).await {
                    tracing::warn!(error = %e, "the cluster bus could not send a message");
                }
            }
        }
    };
    tokio::join!(sender, listen(url, node_id, wake, shutdown));
}

/// Listens until `shutdown`, reconnecting after the database goes away; after each
/// (re)connection the node looks at its queue and outbox again, for what it may have missed.
async fn listen(url: String, node_id: String, wake: Wakeups, shutdown: watch::Receiver<bool>) {
    loop {
        let mut listener = match sqlx::postgres::PgListener::connect(&url).await {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!(error = %e, "the cluster bus cannot connect; trying again");
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_secs(1)) => continue,
                    _ = crate::jobs::stopped(shutdown.clone()) => return,
                }
            }
        };
        if let Err(e) = listener.listen(CHANNEL).await {
            tracing::warn!(error = %e, "the cluster bus cannot listen; trying again");
            tokio::time::sleep(Duration::from_secs(1)).await;
            continue;
        }
        wake_everything_here(&wake);
        loop {
            let heard = tokio::select! {
                n = listener.try_recv() => n,
                _ = crate::jobs::stopped(shutdown.clone()) => return,
            };
            match heard {
                Ok(Some(n)) => match serde_json::from_str::<Envelope>(n.payload()) {
                    Ok(e) if e.from == node_id => {}
                    Ok(e) => apply(&wake, e.message),
                    Err(e) => {
                        tracing::warn!(error = %e, "the cluster bus heard an unreadable message")
                    }
                },
                Ok(None) => {
                    // the connection was lost; try_recv reconnects at the next call, but
                    // messages sent meanwhile are gone: look at the queue and outbox again
                    tracing::warn!("the cluster bus lost its connection; reconnecting");
                    wake_everything_here(&wake);
                }
                Err(e) => {
                    tracing::warn!(error = %e, "the cluster bus failed; reconnecting");
                    break;
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// After a gap in listening: whatever was announced meanwhile is in the store, so every idle
/// claimer and deliverer here looks again.
fn wake_everything_here(wake: &Wakeups) {
    for topic in [Topic::Jobs, Topic::Exports, Topic::Deliveries] {
        wake_here(wake, topic);
    }
}

fn wake_here(wake: &Wakeups, topic: Topic) {
    match topic {
        Topic::Jobs => wake.jobs.notify_here(),
        Topic::Exports => wake.exports.notify_here(),
        Topic::Deliveries => wake.deliveries.notify_here(),
    }
}

/// What another node's message does here.
fn apply(wake: &Wakeups, message: Message) {
    match message {
        Message::Wake(topic) => wake_here(wake, topic),
        Message::Event(event) => wake.events.publish_here(event),
        Message::Stop { job_id, mark } => {
            wake.events.stop_here(&job_id, mark);
        }
    }
}

/// Keeps a message within NOTIFY's payload limit.
fn shorten(message: Message) -> Message {
    match message {
        Message::Event(JobEvent::ExportFailed {
            job_id,
            result_id,
            response_type,
            error,
        }) if error.len() > MAX_TEXT => {
            let mut cut = MAX_TEXT;
            while !error.is_char_boundary(cut) {
                cut -= 1;
            }
            Message::Event(JobEvent::ExportFailed {
                job_id,
                result_id,
                response_type,
                error: format!("{}...", &error[..cut]),
            })
        }
        m => m,
    }
}
