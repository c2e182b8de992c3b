//! A wake-up that reaches every node: local waiters at once, other nodes through the bus.

use super::bus::{Link, Message};
use std::sync::Arc;
use tokio::sync::Notify;

/// What was queued or written, so that idle claimers or deliverers look again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Topic {
    /// A nest (2D or 1D, or a quote) was queued or a key's running nest ended (a Parallelism
    /// slot freed).
    Jobs,
    /// An export was queued.
    Exports,
    /// An outbox row was written.
    Deliveries,
}

#[derive(Clone)]
pub struct Wake {
    topic: Topic,
    local: Arc<Notify>,
    link: Option<Link>,
}

impl Wake {
    pub fn new(topic: Topic, link: Option<Link>) -> Wake {
        Wake {
            topic,
            local: Arc::new(Notify::new()),
            link,
        }
    }

    /// Wakes one waiter here and, through the bus, the nodes that listen.
    pub fn notify_one(&self) {
        self.local.notify_one();
        if let Some(link) = &self.link {
            link.send(Message::Wake(self.topic));
        }
    }

    /// Wakes one waiter here only (what the bus does with another node's wake-up).
    pub fn notify_here(&self) {
        self.local.notify_one();
    }

    /// Resolves at the next wake-up (or at once if one is pending).
    pub async fn notified(&self) {
        self.local.notified().await
    }
}
