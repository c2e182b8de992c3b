//! Running one 1D job: the stored request is validated again (it passed the same conversion
//! at submission), solved on a blocking thread with a heartbeat, and ended with one fenced
//! transaction that stores the 1D result and queues its Nesting1DWebhookPayload.

use super::lease::{end, keep_lease, to_webhook, AbortOnDrop, Ended};
use super::run2d::json;
use super::JobContext;
use crate::nest1d;
use crate::nest2d::CancelHandle;
use crate::store::{now_ms, Claimed, Outcome, ResultRecord};
use crate::wire::cut1d::{self, Nesting1DWebhookPayload};
use std::sync::Arc;

/// The job kind of POST /v1/nesting/1D.
pub const KIND_1D: &str = "nest1d";

/// The Nesting1DWebhookPayload of a job that failed before it had a plan.
pub fn error_delivery_body(job_id: &str, code: &str, report: &str) -> String {
    json(&Nesting1DWebhookPayload::of(
        job_id,
        cut1d::failed_1d(code, report),
    ))
}

pub(super) async fn run(ctx: JobContext, job: Claimed) {
    let lease = Arc::new(CancelHandle::default());
    let heartbeat = AbortOnDrop(tokio::spawn(keep_lease(
        ctx.store.clone(),
        job.clone(),
        lease,
    )));
    let outcome = solve(&ctx, &job).await;
    drop(heartbeat);
    end(&ctx, &job, outcome).await;
}

async fn solve(ctx: &JobContext, job: &Claimed) -> Ended {
    let problem =
        match crate::wire::parse_json::<cut1d::Nesting1DRequestBody>(job.request.as_bytes())
            .map_err(|e| e.to_string())
            .and_then(|body| {
                cut1d::to_submission_1d(&body).map_err(|errors| {
                    errors
                        .iter()
                        .map(|e| e.to_string())
                        .collect::<Vec<_>>()
                        .join("; ")
                })
            }) {
            Ok(s) => s.problem,
            Err(error) => {
                return Ended::Failed {
                    code: "InvalidRequest",
                    error,
                }
            }
        };
    // one thread: the solver is single-threaded
    let _thread = tokio::select! {
        p = ctx.threads.clone().acquire_owned() => p.expect("threads semaphore is never closed"),
        _ = super::stopped(ctx.shutdown.clone()) => return Ended::HandBack,
    };
    let solving = {
        let problem = problem.clone();
        tokio::task::spawn_blocking(move || nest1d::solve(&problem))
    };
    // the solver keeps to MaxRunTimeSeconds by itself; shutdown hands the job back (the
    // blocking thread ends with the process)
    let plan = tokio::select! {
        r = solving => r,
        _ = super::stopped(ctx.shutdown.clone()) => return Ended::HandBack,
    };
    let plan = match plan {
        Ok(plan) => plan,
        Err(e) => {
            return Ended::Failed {
                code: "InternalError",
                error: format!("the 1D solver crashed: {e}"),
            }
        }
    };
    let result = cut1d::result_1d(&problem, &plan);
    let id = uuid::Uuid::new_v4().to_string();
    let body = json(&result);
    let delivery = json(&Nesting1DWebhookPayload::of(&job.id, result));
    let deliveries = to_webhook(job, &delivery);
    // the 1D result is its own status, report and layout: one body serves all three reads
    let record = ResultRecord {
        id: &id,
        status: &body,
        report: &body,
        layout: &body,
    };
    match ctx
        .store
        .finish(
            &job.id,
            job.attempt,
            Outcome::Completed(record),
            &deliveries,
            now_ms(),
        )
        .await
    {
        Ok(true) => {
            tracing::info!(job = %job.id, bars = plan.bars(), proven = plan.proven_optimal, "completed");
            ctx.wake.deliveries.notify_one();
        }
        Ok(false) => tracing::warn!(job = %job.id, "lease lost before the result was written"),
        Err(e) => {
            tracing::error!(job = %job.id, error = %e, "writing the result failed; the rescuer will retry the job")
        }
    }
    Ended::Finished
}
