//! What every job runner shares: the heartbeat that keeps a job's lease, the delivery of a body
//! to the job's webhook, and the end of a job (failed with an Error delivery, or handed back).

use super::{error_delivery_body, JobContext, HEARTBEAT, LEASE_MS};
use crate::nest2d::CancelHandle;
use crate::store::{now_ms, Claimed, Delivery, Outcome};
use std::sync::Arc;

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
            Ok(_) => tracing::info!(job = %job.id, "lease handed back"),
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
        .map(|uri| Delivery { uri, body })
        .collect()
}

/// Ends a job as Failed, with an Error delivery (in the shape of its kind) when it has a
/// webhook.
pub(super) async fn fail(ctx: &JobContext, job: &Claimed, code: &str, error: &str) {
    tracing::warn!(job = %job.id, code, error, "job failed");
    let body = error_delivery_body(&job.kind, &job.id, code, error);
    let deliveries = to_webhook(job, &body);
    match ctx
        .store
        .finish(
            &job.id,
            job.attempt,
            Outcome::Failed { error },
            &deliveries,
            now_ms(),
        )
        .await
    {
        Ok(true) => ctx.wake.deliveries.notify_one(),
        Ok(false) => tracing::warn!(job = %job.id, "lease lost before the failure was written"),
        Err(e) => {
            tracing::error!(job = %job.id, error = %e, "writing the failure failed; the rescuer will retry the job")
        }
    }
}

/// Aborts a task when dropped: on every path out of a runner, a panic included, the heartbeat
/// stops, so that a job whose task died is taken back by the rescuer.
pub(super) struct AbortOnDrop(pub tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Heartbeats until aborted; if the lease is lost, cancels the work (its result could not be
/// written anyway).
pub(super) async fn keep_lease(
    store: crate::store::Store,
    job: Claimed,
    cancel: Arc<CancelHandle>,
) {
    let mut tick = tokio::time::interval(HEARTBEAT);
    tick.tick().await;
    loop {
        tick.tick().await;
        match store
            .heartbeat(&job.id, job.attempt, LEASE_MS, now_ms())
            .await
        {
            Ok(true) => {}
            Ok(false) => {
                tracing::warn!(job = %job.id, "lease lost; stopping the work");
                cancel.cancel();
                return;
            }
            Err(e) => tracing::error!(job = %job.id, error = %e, "heartbeat failed"),
        }
    }
}
