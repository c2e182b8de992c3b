//! What every job runner shares: the heartbeat that keeps a job's lease, the delivery of a body
//! to the job's webhook, and the end of a job (completed with its result, failed with an Error
//! delivery, or handed back), each written in one fenced transaction.

use super::events::{JobEvent, RunningGuard, StopSignal};
use super::{error_delivery_body, JobContext, HEARTBEAT, LEASE_MS};
use crate::cancel::CancelHandle;
use crate::store::{now_ms, Claimed, Delivery, Heartbeat, Outcome, ResultRecord};
use std::sync::Arc;

/// Starts the job's heartbeat. The guard stops it when dropped, on every path out of a
/// runner, a panic included (a job whose task died must stop renewing its lease so that the
/// rescuer takes it back); the handle is cancelled if the lease is lost.
pub(super) fn hold_lease(ctx: &JobContext, job: &Claimed) -> (LeaseGuard, Arc<CancelHandle>) {
    let cancel = Arc::new(CancelHandle::default());
    let stop = Arc::new(StopSignal::tripping(cancel.clone()));
    let guard = hold_lease_apart(ctx, job, cancel.clone(), stop);
    (guard, cancel)
}

/// `hold_lease` with the two reasons to stop apart: `lease` is cancelled when the lease is
/// lost, `stop` hears each stop asked for (continue, StopNesting) with its mark. A nest's
/// signal trips its one handle; a quote's runner reads the marks, so a stop ends the running
/// sub-nest and the quote goes on.
pub(super) fn hold_lease_apart(
    ctx: &JobContext,
    job: &Claimed,
    lease: Arc<CancelHandle>,
    stop: Arc<StopSignal>,
) -> LeaseGuard {
    let heartbeat = tokio::spawn(keep_lease(
        ctx.store.clone(),
        job.clone(),
        lease,
        stop.clone(),
    ));
    let running = ctx.wake.events.running(&job.id, stop);
    LeaseGuard {
        _heartbeat: AbortOnDrop(heartbeat),
        _running: running,
    }
}

/// While held: the job's heartbeat runs and the job is in this process's running registry
/// (a stop reaches it at once).
pub(super) struct LeaseGuard {
    _heartbeat: AbortOnDrop,
    _running: RunningGuard,
}

/// How a job's run ended, short of a written result.
pub(super) enum Ended {
    /// The result is written (or the lease was lost before it could be).
    Finished,
    Failed {
        code: &'static str,
        error: String,
    },
    /// Shutdown: the job goes back to the queue, not counted as an interruption.
    HandBack,
}

/// Ends a job that did not finish by itself.
pub(super) async fn end(ctx: &JobContext, job: &Claimed, outcome: Ended) {
    match outcome {
        Ended::Finished => {}
        Ended::Failed { code, error } => fail(ctx, job, code, &error).await,
        Ended::HandBack => match ctx.store.hand_back(&job.id, job.attempt).await {
            Ok(true) => tracing::info!(job = %job.id, "lease handed back"),
            Ok(false) => tracing::warn!(job = %job.id, "lease already lost; nothing handed back"),
            Err(e) => {
                tracing::error!(job = %job.id, error = %e, "handing back failed; the lease will expire")
            }
        },
    }
}

/// The delivery of `body` to the job's webhook (none for a job without one: a held job whose
/// results stream over the hub).
pub(super) fn to_webhook<'a>(job: &'a Claimed, body: &'a str) -> Vec<Delivery<'a>> {
    job.webhook_uri
        .iter()
        .map(|uri| Delivery {
            uri,
            body,
            content_type: super::delivery_content_type(&job.kind),
        })
        .collect()
}

/// Ends a job as Completed with `record`, and the delivery of `body` when it has a webhook.
/// True when written (false: the lease was lost, or the store failed and the rescuer will run
/// the job again).
pub(super) async fn complete(
    ctx: &JobContext,
    job: &Claimed,
    record: ResultRecord<'_>,
    body: &str,
) -> bool {
    write_end(ctx, job, Outcome::Completed(record), body).await
}

/// Ends a job as Completed with nothing to keep but the delivery of `body` (exports). True when
/// written, as for `complete`.
pub(super) async fn deliver(ctx: &JobContext, job: &Claimed, body: &str) -> bool {
    write_end(ctx, job, Outcome::Delivered, body).await
}

/// Ends an export made for the cache as Completed, its payload kept until `expires_at`. True
/// when written, as for `complete`.
pub(super) async fn cache(ctx: &JobContext, job: &Claimed, payload: &str, expires_at: i64) -> bool {
    write_end(
        ctx,
        job,
        Outcome::Cached {
            payload,
            expires_at,
        },
        "",
    )
    .await
}

/// Ends a job as Failed, with an Error delivery (in the shape of its kind) when it has a
/// webhook.
pub(super) async fn fail(ctx: &JobContext, job: &Claimed, code: &str, error: &str) {
    tracing::warn!(job = %job.id, code, error, "job failed");
    let body = error_delivery_body(&job.kind, &job.id, &job.request, code, error);
    write_end(ctx, job, Outcome::Failed { code, error }, &body).await;
}

async fn write_end(ctx: &JobContext, job: &Claimed, outcome: Outcome<'_>, body: &str) -> bool {
    let deliveries = to_webhook(job, body);
    let event = match &outcome {
        Outcome::Completed(_) => Some(JobEvent::Result {
            job_id: job.id.clone(),
        }),
        Outcome::Failed { .. } => Some(JobEvent::Failed {
            job_id: job.id.clone(),
        }),
        Outcome::Delivered | Outcome::Cached { .. } => None,
    };
    match ctx
        .store
        .finish(&job.id, job.attempt, outcome, &deliveries, now_ms())
        .await
    {
        Ok(true) => {
            ctx.wake.deliveries.notify_one();
            if job.kind != super::KIND_EXPORT {
                // a slot of the key's Parallelism freed: a nest it held back may start now,
                // on any node
                ctx.wake.jobs.notify_one();
            }
            if let Some(event) = event {
                ctx.wake.events.publish(event);
            }
            true
        }
        Ok(false) => {
            tracing::warn!(job = %job.id, "lease lost before the job's end was written");
            false
        }
        Err(e) => {
            tracing::error!(job = %job.id, error = %e, "writing the job's end failed; the rescuer will retry the job");
            false
        }
    }
}

/// Aborts a task when dropped.
pub(super) struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl AbortOnDrop {
    /// Spawns `task`, to be aborted when the guard is dropped.
    pub(super) fn spawn(task: impl std::future::Future<Output = ()> + Send + 'static) -> Self {
        AbortOnDrop(tokio::spawn(task))
    }
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Heartbeats until aborted; if the lease is lost, cancels the work (its result could not be
/// written anyway); if a stop was asked for (continue, StopNesting, on any node), cancels it
/// too, and goes on heartbeating while the engine hands back its best result, which is then
/// written as the final one.
async fn keep_lease(
    store: crate::store::Store,
    job: Claimed,
    lease: Arc<CancelHandle>,
    stop: Arc<StopSignal>,
) {
    let mut tick = tokio::time::interval(HEARTBEAT);
    tick.tick().await;
    loop {
        tick.tick().await;
        match store
            .heartbeat(&job.id, job.attempt, LEASE_MS, now_ms())
            .await
        {
            Ok(Heartbeat::Held) => {}
            Ok(Heartbeat::StopRequested(mark)) => {
                if mark > stop.newest() {
                    tracing::info!(job = %job.id, "stop requested; ending with the best result so far");
                }
                stop.request(mark);
            }
            Ok(Heartbeat::Lost) => {
                tracing::warn!(job = %job.id, "lease lost; stopping the work");
                lease.cancel();
                return;
            }
            Err(e) => tracing::error!(job = %job.id, error = %e, "heartbeat failed"),
        }
    }
}
