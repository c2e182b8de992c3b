//! Running one quote (DESIGN 5.6): one job whose runner prices its parts one after another,
//! each a sub-nest (`crate::quote::sub_nest`). Each finished sub-nest is a result of its own,
//! stored with its InterimResult delivery in one fenced transaction (a sub-nest that cannot be
//! priced stores its Error payload instead, and the quote goes on); the Complete delivery ends
//! the job. A quote taken back after an interruption resumes after the sub-nests it stored.
//!
//! A stop (continue, StopNesting) ends the running sub-nest with its best layout and is then
//! cleared, so the next sub-nest runs in full; a lost lease or shutdown ends the quote. Stops
//! are told apart by their marks (`StopSignal`): the runner remembers the newest mark a
//! sub-nest honoured, and only a newer one ends the next; so a stop asked for while a sub-nest
//! is being stored is not lost, and an old one a heartbeat hears late ends nothing.

use super::events::{JobEvent, StopSignal};
use super::lease::{complete, end, hold_lease_apart, to_webhook, AbortOnDrop, Ended};
use super::JobContext;
use crate::cancel::CancelHandle;
use crate::quote;
use crate::store::{now_ms, Claimed, ResultRecord};
use crate::wire::{self, quote as wq, GeometryKind};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

/// Job kinds of quotes: `quote:dxf` (/quotenesting), `quote:json` (/geometryquotenesting).
pub const KIND_PREFIX: &str = "quote:";

/// The job kind for a submission endpoint's default geometry.
pub fn kind_for(geometry: GeometryKind) -> String {
    super::kind_with(KIND_PREFIX, geometry)
}

fn geometry_of(kind: &str) -> GeometryKind {
    super::geometry_of(KIND_PREFIX, kind)
}

/// How often a running sub-nest looks for a stop, a lost lease or shutdown.
const STOP_POLL: Duration = Duration::from_millis(50);
/// After its time limit (and this grace) a sub-nest that has not ended is cancelled.
const WATCHDOG_GRACE: Duration = Duration::from_secs(10);

/// The Error payload of a quote that failed as a whole (no sub-nest of its own).
pub fn error_delivery_body(job_id: &str, code: &str, report: &str) -> String {
    wire::to_json(&wq::QuotePayload::error(job_id, None, code, report))
}

/// A quote's stored request, its problem (every part, every sheet) and its ResponseUnits.
/// Blocking work (geometry import).
pub fn stored_quote(
    kind: &str,
    request: &str,
) -> Result<(crate::nest2d::Problem, wq::ResponseUnits), String> {
    let req: wq::QuoteNestingRequest =
        wire::parse_json(request.as_bytes()).map_err(|e| e.to_string())?;
    let r = req
        .request
        .as_ref()
        .ok_or_else(|| "the stored request has no Request".to_string())?;
    let mut converted = wire::to_problem(r, geometry_of(kind), "Request")
        .map_err(|errors| wire::describe(&errors))?;
    wq::apply_sub_nest_default(&mut converted.problem, Some(r));
    let units = wq::ResponseUnits::parse(req.response_units.as_deref())?;
    Ok((converted.problem, units))
}

pub(super) async fn run(ctx: JobContext, job: Claimed) {
    let lease = Arc::new(CancelHandle::default());
    let stop = Arc::new(StopSignal::default());
    let heartbeat = hold_lease_apart(&ctx, &job, lease.clone(), stop.clone());
    let outcome = run_held(&ctx, &job, &lease, &stop).await;
    drop(heartbeat);
    end(&ctx, &job, outcome).await;
}

/// The NestIndex of every sub-nest a stored result reports (an earlier attempt's).
fn priced(stored: &[crate::store::StoredResult]) -> HashSet<u32> {
    stored
        .iter()
        .filter_map(|r| serde_json::from_str::<wq::QuotePayload>(&r.status).ok())
        .filter(|p| p.status != wq::QUOTE_COMPLETE)
        .filter_map(|p| p.nest_index)
        .collect()
}

async fn run_held(
    ctx: &JobContext,
    job: &Claimed,
    lease: &Arc<CancelHandle>,
    stop: &Arc<StopSignal>,
) -> Ended {
    let converted = {
        let job = job.clone();
        tokio::task::spawn_blocking(move || stored_quote(&job.kind, &job.request)).await
    };
    let (mut problem, units) = match converted {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => {
            return Ended::Failed {
                code: "InvalidRequest",
                error: e,
            }
        }
        Err(e) => {
            return Ended::Failed {
                code: "InternalError",
                error: format!("reading the request crashed: {e}"),
            }
        }
    };
    let wanted = match problem.settings.max_cpu {
        0 => ctx.cores,
        n => (n as usize).min(ctx.cores),
    };
    let _threads = tokio::select! {
        p = ctx.threads.clone().acquire_many_owned(wanted as u32) => p.expect("threads semaphore is never closed"),
        _ = super::stopped(ctx.shutdown.clone()) => return Ended::HandBack,
    };
    problem.settings.max_cpu = wanted as u32;
    let problem = Arc::new(problem);
    let total = problem.parts.len() as u32;
    let done = match ctx.store.results_of(&job.id).await {
        Ok(stored) => priced(&stored),
        Err(e) => {
            tracing::error!(job = %job.id, error = %e, "reading the quote's earlier sub-nests failed");
            return Ended::HandBack;
        }
    };
    let budget = Duration::from_secs_f64(problem.settings.max_run_time_s.max(0.0)) + WATCHDOG_GRACE;
    // the newest stop a sub-nest has honoured: only a newer one ends the next
    let mut honoured = 0;
    for index in 0..total {
        if done.contains(&index) {
            continue;
        }
        if *ctx.shutdown.borrow() {
            return Ended::HandBack;
        }
        if lease.is_cancelled() {
            return Ended::Finished;
        }
        // this sub-nest ends at a stop, a lost lease, shutdown or its watchdog
        let sub = Arc::new(CancelHandle::default());
        let ender = {
            let (sub, lease, stop, shutdown) = (
                sub.clone(),
                lease.clone(),
                stop.clone(),
                ctx.shutdown.clone(),
            );
            AbortOnDrop::spawn(async move {
                let watchdog = tokio::time::sleep(budget);
                tokio::pin!(watchdog);
                loop {
                    if lease.is_cancelled() || stop.newest() > honoured || *shutdown.borrow() {
                        break;
                    }
                    tokio::select! {
                        _ = tokio::time::sleep(STOP_POLL) => {}
                        _ = &mut watchdog => break,
                    }
                }
                sub.cancel();
            })
        };
        let priced = {
            let (problem, eval, sub) = (problem.clone(), ctx.eval.clone(), sub.clone());
            tokio::task::spawn_blocking(move || {
                quote::sub_nest(&problem, index as usize, eval.as_ref(), &sub)
            })
            .await
        };
        drop(ender);
        // a stop asked for until now was this sub-nest's; one asked for later is the next's
        let stopped_by = stop.newest();
        if *ctx.shutdown.borrow() {
            // this sub-nest is priced again by the next attempt
            return Ended::HandBack;
        }
        if lease.is_cancelled() {
            return Ended::Finished;
        }
        let (payload, layout) = match priced {
            Ok(Ok(s)) => {
                let result = wq::quote_nest_result(&problem, &s, units);
                tracing::info!(job = %job.id, index, total, parts_per_sheet = s.parts_per_sheet, "sub-nest priced");
                (
                    wq::QuotePayload::interim(&job.id, index, total, result.without_placements()),
                    wire::to_json(&result),
                )
            }
            Ok(Err(e)) => (
                wq::QuotePayload::error(&job.id, Some(index), e.code(), &e.to_string()),
                "null".to_string(),
            ),
            Err(e) => (
                wq::QuotePayload::error(
                    &job.id,
                    Some(index),
                    "InternalError",
                    &format!("the sub-nest crashed: {e}"),
                ),
                "null".to_string(),
            ),
        };
        let body = wire::to_json(&payload);
        let id = uuid::Uuid::new_v4().to_string();
        let record = ResultRecord {
            id: &id,
            status: &body,
            report: "null",
            layout: &layout,
        };
        match ctx
            .store
            .add_sub_nest(
                &job.id,
                job.attempt,
                &record,
                &to_webhook(job, &body),
                now_ms(),
            )
            .await
        {
            Ok(true) => {
                ctx.wake.deliveries.notify_one();
                ctx.wake.events.publish(JobEvent::Result {
                    job_id: job.id.clone(),
                });
            }
            Ok(false) => return Ended::Finished,
            Err(e) => {
                // the next attempt prices it again
                tracing::error!(job = %job.id, error = %e, "storing a sub-nest failed");
                return Ended::HandBack;
            }
        }
        if stopped_by > honoured {
            // the stop ended this sub-nest; the next one runs in full (a newer request, which
            // has a greater mark, stays in the store, and ends the next one)
            honoured = stopped_by;
            if let Err(e) = ctx.store.clear_stop(&job.id, job.attempt, honoured).await {
                tracing::error!(job = %job.id, error = %e, "clearing a quote's stop failed");
            }
        }
    }
    let body = wire::to_json(&wq::QuotePayload::complete(&job.id, total));
    let id = uuid::Uuid::new_v4().to_string();
    let record = ResultRecord {
        id: &id,
        status: &body,
        report: "null",
        layout: "null",
    };
    if complete(ctx, job, record, &body).await {
        tracing::info!(job = %job.id, sub_nests = total, "quote completed");
    }
    Ended::Finished
}
