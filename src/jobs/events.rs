//! What happens to jobs as it happens, for the live hub: progress of running nests, a new
//! result (interim or final) stored, a job failed. Workers publish after the store has the
//! row (so a listener that reads the store finds what the event announces); the hub's
//! connections listen. In-process only: a node's hub hears the jobs its own workers run (the
//! PostgreSQL scale-out carries them between nodes).
//!
//! Also the registry of jobs running in this process, so that a stop (continue,
//! StopNesting) takes effect at once here; other nodes' jobs see the stop at their next
//! heartbeat, through the store.

use crate::cancel::CancelHandle;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::broadcast;

/// Events a slow listener may fall behind by before it is told it lagged (it then reads the
/// store again, so it loses nothing).
const EVENT_BUFFER: usize = 4096;

/// A running nest's progress.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Progress {
    pub elapsed_s: f64,
    pub utilisation: f64,
    pub parts_placed: u32,
    pub sheets_used: u32,
}

#[derive(Clone, Debug, PartialEq)]
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

/// The event channel and the running-jobs registry, shared by workers and the API.
#[derive(Clone)]
pub struct JobEvents {
    sender: broadcast::Sender<JobEvent>,
    running: Arc<Mutex<HashMap<String, Arc<CancelHandle>>>>,
}

impl Default for JobEvents {
    fn default() -> Self {
        JobEvents {
            sender: broadcast::channel(EVENT_BUFFER).0,
            running: Arc::default(),
        }
    }
}

impl JobEvents {
    /// Announces `event` (nobody listening is fine).
    pub fn publish(&self, event: JobEvent) {
        let _ = self.sender.send(event);
    }

    pub fn subscribe(&self) -> broadcast::Receiver<JobEvent> {
        self.sender.subscribe()
    }

    /// Registers a job this process runs; the guard unregisters it.
    pub fn running(&self, job_id: &str, cancel: Arc<CancelHandle>) -> RunningGuard {
        self.lock().insert(job_id.to_string(), cancel.clone());
        RunningGuard {
            events: self.clone(),
            job_id: job_id.to_string(),
            cancel,
        }
    }

    /// Stops job `job_id` at once if this process runs it; true when it did.
    pub fn stop_here(&self, job_id: &str) -> bool {
        match self.lock().get(job_id) {
            Some(cancel) => {
                cancel.cancel();
                true
            }
            None => false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<CancelHandle>>> {
        // a poisoned lock only means a panic mid-insert: the map is still usable
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Removes a job from the running registry when dropped.
pub struct RunningGuard {
    events: JobEvents,
    job_id: String,
    cancel: Arc<CancelHandle>,
}

impl Drop for RunningGuard {
    fn drop(&mut self) {
        // only this attempt's own entry: a later attempt of the same job on this node may have
        // registered since
        let mut running = self.events.lock();
        if running
            .get(&self.job_id)
            .is_some_and(|c| Arc::ptr_eq(c, &self.cancel))
        {
            running.remove(&self.job_id);
        }
    }
}
