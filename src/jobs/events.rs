//! What happens to jobs as it happens, for the live hub: progress of running nests, a new
//! result (interim or final) stored, a job failed. Workers publish after the store has the
//! row (so a listener that reads the store finds what the event announces); the hub's
//! connections listen. With a cluster link, events also go to the other nodes (whose hubs may
//! hold the subscriber's socket) and theirs come here (`cluster::bus`).
//!
//! Also the registry of jobs running in this process, so that a stop (continue,
//! StopNesting) takes effect at once here; a stop for a job another node runs goes there
//! through the bus, and is read from the store at the job's next heartbeat in any case.

use crate::cancel::CancelHandle;
use crate::cluster::{Link, Message};
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::broadcast;

/// Events a slow listener may fall behind by before it is told it lagged (it then reads the
/// store again, so it loses nothing).
const EVENT_BUFFER: usize = 4096;

/// A running nest's progress.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Progress {
    pub elapsed_s: f64,
    pub utilisation: f64,
    pub parts_placed: u32,
    pub sheets_used: u32,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum JobEvent {
    Progress {
        job_id: String,
        progress: Progress,
    },
    /// A result (interim or final) of the job is stored.
    Result {
        job_id: String,
    },
    /// The job failed (its error is stored).
    Failed {
        job_id: String,
    },
    /// An export of nest `job_id` is in the export cache until `expires_at` (Unix ms).
    ExportReady {
        job_id: String,
        result_id: String,
        response_type: String,
        expires_at: i64,
    },
    /// An export of nest `job_id` made for the cache failed.
    ExportFailed {
        job_id: String,
        result_id: String,
        response_type: String,
        error: String,
    },
}

impl JobEvent {
    pub fn job_id(&self) -> &str {
        match self {
            JobEvent::Progress { job_id, .. }
            | JobEvent::Result { job_id }
            | JobEvent::Failed { job_id }
            | JobEvent::ExportReady { job_id, .. }
            | JobEvent::ExportFailed { job_id, .. } => job_id,
        }
    }
}

/// How a running job hears that a stop was asked for (continue, StopNesting). Every request
/// has a mark that grows (`store::StopRequest::Requested`); the signal keeps the newest mark
/// heard (0: none), and trips its handle, when it has one, at the first. A nest is tripped and
/// ends; a quote's runner compares marks, so it tells the stop a sub-nest honoured from a new
/// one, whichever way (this node's API, a heartbeat) and in whatever order they arrive.
#[derive(Debug, Default)]
pub struct StopSignal {
    newest: AtomicI64,
    trips: Option<Arc<CancelHandle>>,
}

impl StopSignal {
    /// A signal that cancels `cancel` at the first request.
    pub fn tripping(cancel: Arc<CancelHandle>) -> StopSignal {
        StopSignal {
            newest: AtomicI64::new(0),
            trips: Some(cancel),
        }
    }

    /// A stop of mark `mark` was asked for.
    pub fn request(&self, mark: i64) {
        self.newest.fetch_max(mark, Ordering::SeqCst);
        if let Some(cancel) = &self.trips {
            cancel.cancel();
        }
    }

    /// The newest mark heard (0: none).
    pub fn newest(&self) -> i64 {
        self.newest.load(Ordering::SeqCst)
    }
}

/// The event channel and the running-jobs registry, shared by workers and the API.
#[derive(Clone)]
pub struct JobEvents {
    sender: broadcast::Sender<JobEvent>,
    running: Arc<Mutex<HashMap<String, Arc<StopSignal>>>>,
    link: Option<Link>,
}

impl Default for JobEvents {
    fn default() -> Self {
        JobEvents::linked(None)
    }
}

impl JobEvents {
    /// Events and stops that also go to the other nodes through `link`.
    pub fn linked(link: Option<Link>) -> JobEvents {
        JobEvents {
            sender: broadcast::channel(EVENT_BUFFER).0,
            running: Arc::default(),
            link,
        }
    }

    /// Announces `event` here and to the other nodes (nobody listening is fine).
    pub fn publish(&self, event: JobEvent) {
        if let Some(link) = &self.link {
            link.send(Message::Event(event.clone()));
        }
        self.publish_here(event);
    }

    /// Announces `event` to this process's listeners only (another node's event).
    pub fn publish_here(&self, event: JobEvent) {
        let _ = self.sender.send(event);
    }

    /// Passes the stop of mark `mark` to job `job_id`: at once if this process runs it, else
    /// to the other nodes (the store has it too, for the job's next heartbeat).
    pub fn stop(&self, job_id: &str, mark: i64) {
        if !self.stop_here(job_id, mark) {
            if let Some(link) = &self.link {
                link.send(Message::Stop {
                    job_id: job_id.to_string(),
                    mark,
                });
            }
        }
    }

    pub fn subscribe(&self) -> broadcast::Receiver<JobEvent> {
        self.sender.subscribe()
    }

    /// Registers a job this process runs; the guard unregisters it.
    pub fn running(&self, job_id: &str, stop: Arc<StopSignal>) -> RunningGuard {
        self.lock().insert(job_id.to_string(), stop.clone());
        RunningGuard {
            events: self.clone(),
            job_id: job_id.to_string(),
            stop,
        }
    }

    /// Passes the stop of mark `mark` to job `job_id` at once if this process runs it; true
    /// when it did.
    pub fn stop_here(&self, job_id: &str, mark: i64) -> bool {
        match self.lock().get(job_id) {
            Some(stop) => {
                stop.request(mark);
                true
            }
            None => false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<StopSignal>>> {
        // a poisoned lock only means a panic mid-insert: the map is still usable
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Removes a job from the running registry when dropped.
pub struct RunningGuard {
    events: JobEvents,
    job_id: String,
    stop: Arc<StopSignal>,
}

impl Drop for RunningGuard {
    fn drop(&mut self) {
        // only this attempt's own entry: a later attempt of the same job on this node may have
        // registered since
        let mut running = self.events.lock();
        if running
            .get(&self.job_id)
            .is_some_and(|c| Arc::ptr_eq(c, &self.stop))
        {
            running.remove(&self.job_id);
        }
    }
}
