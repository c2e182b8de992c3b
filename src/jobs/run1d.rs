//! Running one 1D job: the stored request is validated again (it passed the same conversion
//! at submission), solved on a blocking thread with a heartbeat, and ended with one fenced
//! transaction that stores the 1D result and queues its Nesting1DWebhookPayload.

use super::lease::{complete, end, hold_lease, Ended};
use super::JobContext;
use crate::cancel::CancelHandle;
use crate::nest1d;
use crate::store::{Claimed, ResultRecord};
use crate::wire::{self, cut1d, to_json};
use std::sync::Arc;

/// The job kind of POST /v1/nesting/1D.
pub const KIND_1D: &str = "nest1d";

/// The Nesting1DWebhookPayload of a job that failed before it had a plan.
pub fn error_delivery_body(job_id: &str, code: &str, report: &str) -> String {
    to_json(&cut1d::Nesting1DWebhookPayload::of(
        job_id,
        cut1d::Nesting1DResult::failure(code, report, &[]),
    ))
}

pub(super) async fn run(ctx: JobContext, job: Claimed) {
    let (heartbeat, lease) = hold_lease(&ctx, &job);
    let outcome = solve(&ctx, &job, lease).await;
    drop(heartbeat);
    end(&ctx, &job, outcome).await;
}

async fn solve(ctx: &JobContext, job: &Claimed, cancel: Arc<CancelHandle>) -> Ended {
    let problem = match wire::parse_json::<cut1d::Nesting1DRequestBody>(job.request.as_bytes())
        .map_err(|e| e.to_string())
        .and_then(|body| cut1d::to_submission_1d(&body).map_err(|e| wire::describe(&e)))
    {
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
    // the solver keeps to MaxRunTimeSeconds by itself; a lost lease (the heartbeat) or
    // shutdown (here) cancels it, and it returns at once
    let solving = {
        let (problem, cancel) = (problem.clone(), cancel.clone());
        tokio::task::spawn_blocking(move || nest1d::solve_unless_cancelled(&problem, &cancel))
    };
    let shutdown = {
        let (shutdown, cancel) = (ctx.shutdown.clone(), cancel.clone());
        tokio::spawn(async move {
            super::stopped(shutdown).await;
            cancel.cancel();
        })
    };
    let plan = solving.await;
    shutdown.abort();
    if *ctx.shutdown.borrow() {
        return Ended::HandBack;
    }
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
    let body = to_json(&result);
    let delivery = to_json(&cut1d::Nesting1DWebhookPayload::of(&job.id, result));
    // the 1D result is its own status, report and layout: one body serves all three reads
    let record = ResultRecord {
        id: &id,
        status: &body,
        report: &body,
        layout: &body,
    };
    if complete(ctx, job, record, &delivery).await {
        tracing::info!(job = %job.id, bars = plan.bars(), proven = plan.proven_optimal, "completed");
    }
    Ended::Finished
}
