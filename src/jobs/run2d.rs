//! Running one standard 2D job: the stored request is converted again (deterministically, it
//! passed the same conversion at submission), nested on blocking threads with a heartbeat, a
//! watchdog for MaxRunTimeSeconds and interim results, and ended with one fenced transaction.

use super::events::{JobEvent, Progress};
use super::lease::{complete, end, hold_lease, to_webhook, AbortOnDrop, Ended};
use super::JobContext;
use crate::nest2d::{self, CancelHandle, NestResult, Problem};
use crate::store::{now_ms, Claimed, ResultRecord};
use crate::wire::{self, results, GeometryKind};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Job kinds of standard 2D nests: `nest2d:dxf`, `nest2d:json`, `nest2d:parametric` (the
/// geometry a part has when it does not say).
pub const KIND_PREFIX: &str = "nest2d:";

/// The job kind of the legacy XML endpoint's nests: a standard nest of DXF parts (its request
/// stored as the DxfNestingRequest the XML stands for) whose deliveries are XML documents.
pub const KIND_LEGACY: &str = "nest2d:legacy";

/// The job kind for a submission endpoint's default geometry.
pub fn kind_for(geometry: GeometryKind) -> String {
    super::kind_with(KIND_PREFIX, geometry)
}

fn geometry_of(kind: &str) -> GeometryKind {
    super::geometry_of(KIND_PREFIX, kind)
}

/// Interim results are reported at most this often (each one is a stored result and a
/// webhook delivery; an engine improving every few milliseconds must not flood the receiver).
const INTERIM_MIN_INTERVAL: Duration = Duration::from_secs(2);
/// A running nest's progress (the hub's NestingProgress) goes out this often.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);
/// After MaxRunTimeSeconds (and this grace) the watchdog cancels a nest that has not ended;
/// the engine then returns its best layout at once.
const WATCHDOG_GRACE: Duration = Duration::from_secs(10);

/// The NestingResultData body of an Error delivery.
pub fn error_delivery_body(job_id: &str, code: &str, report: &str) -> String {
    wire::to_json(&error_data(job_id, code, report))
}

/// The same, as the legacy endpoint's XML document.
pub fn legacy_error_delivery_body(job_id: &str, code: &str, report: &str) -> String {
    wire::legacy::result_xml(&error_data(job_id, code, report))
}

fn error_data(job_id: &str, code: &str, report: &str) -> wire::NestingResultData {
    wire::NestingResultData {
        request_id: job_id.into(),
        nest_identifier: job_id.into(),
        status: results::error_message(code, report),
    }
}

/// The three stored bodies of one result.
struct ResultBodies {
    id: String,
    status: String,
    report: String,
    layout: String,
    /// The NestingResultData webhook body.
    delivery: String,
}

fn bodies(problem: &Problem, r: &NestResult, job: &Claimed, nesting_status: i32) -> ResultBodies {
    let id = uuid::Uuid::new_v4().to_string();
    let layout = results::layout(problem, r, &job.id, &id);
    let report = results::report(&layout, problem);
    let status = results::status_message(problem, r, &id, nesting_status);
    let data = wire::NestingResultData {
        request_id: job.id.clone(),
        nest_identifier: job.id.clone(),
        status: status.clone(),
    };
    ResultBodies {
        delivery: if job.kind == KIND_LEGACY {
            wire::legacy::result_xml(&data)
        } else {
            wire::to_json(&data)
        },
        status: wire::to_json(&status),
        report: wire::to_json(&report),
        layout: wire::to_json(&layout),
        id,
    }
}

impl ResultBodies {
    fn record(&self) -> ResultRecord<'_> {
        ResultRecord {
            id: &self.id,
            status: &self.status,
            report: &self.report,
            layout: &self.layout,
        }
    }
}

/// Parses and converts the stored request (blocking work: geometry import).
fn convert(job: &Claimed) -> Result<wire::Converted, String> {
    stored_request(&job.kind, &job.request).map(|(_, converted)| converted)
}

/// A 2D job's stored request (JSON text): its Request block, and that block converted again
/// into the engine's problem. The whole submission (webhook, export settings) was checked when
/// it was accepted and is not checked again here: an operator's later change (to the webhook
/// allow-list, say) must not fail a job already accepted; an error here means the stored text
/// was damaged. Blocking work (geometry import). The exports use it to draw and write a
/// result on the request's geometry.
pub fn stored_request(
    kind: &str,
    request: &str,
) -> Result<(wire::Base64NestingRequest, wire::Converted), String> {
    let req: wire::DxfNestingRequest =
        wire::parse_json(request.as_bytes()).map_err(|e| e.to_string())?;
    let r = req
        .request
        .ok_or_else(|| "the stored request has no Request".to_string())?;
    let converted = wire::to_problem(&r, geometry_of(kind), "Request")
        .map_err(|errors| wire::describe(&errors))?;
    Ok((r, converted))
}

pub(super) async fn run(ctx: JobContext, job: Claimed) {
    let (heartbeat, lease) = hold_lease(&ctx, &job);
    let outcome = run_held(&ctx, &job, &lease).await;
    drop(heartbeat);
    end(&ctx, &job, outcome).await;
}

async fn run_held(ctx: &JobContext, job: &Claimed, lease: &Arc<CancelHandle>) -> Ended {
    let converted = {
        let job = job.clone();
        match tokio::task::spawn_blocking(move || convert(&job)).await {
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
        }
    };
    let mut problem = converted.problem;
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

    // interim results go through a channel to an async writer (the engine calls back on its
    // own threads); the writer is drained before the final result is written, so interim
    // deliveries are always older than the final one.
    let (interim_tx, mut interim_rx) = tokio::sync::mpsc::unbounded_channel::<NestResult>();
    let interim_writer = {
        let (store, wake, job, problem) = (
            ctx.store.clone(),
            ctx.wake.clone(),
            job.clone(),
            problem.clone(),
        );
        tokio::spawn(async move {
            while let Some(mut r) = interim_rx.recv().await {
                // interim layouts leave the engine too: the exact verifier passes on them first
                let p = problem.clone();
                r = match tokio::task::spawn_blocking(move || {
                    nest2d::enforce_verified(&p, &mut r);
                    r
                })
                .await
                {
                    Ok(r) => r,
                    Err(_) => continue,
                };
                let b = bodies(&problem, &r, &job, results::STATUS_INTERIM);
                let deliveries = to_webhook(&job, &b.delivery);
                match store
                    .add_interim(&job.id, job.attempt, &b.record(), &deliveries, now_ms())
                    .await
                {
                    Ok(true) => {
                        wake.deliveries.notify_one();
                        wake.events.publish(JobEvent::Result {
                            job_id: job.id.clone(),
                        });
                    }
                    Ok(false) => return,
                    Err(e) => {
                        tracing::error!(job = %job.id, error = %e, "storing an interim result failed")
                    }
                }
            }
        })
    };
    // interim results are stored and delivered when the request asks for them, or when the
    // job streams over the hub (a held job without a webhook: its watchers want them)
    let report_interim = converted.report_intermediate_results || job.webhook_uri.is_none();
    let last_interim: Mutex<Option<Instant>> = Mutex::new(None);
    // progress: the latest result's figures, published every PROGRESS_EVERY by a ticker
    // (so a watcher sees the nest alive between improvements, and at its start)
    let progress = Arc::new(Mutex::new(Progress::default()));
    let latest = progress.clone();
    let on_interim = move |r: &NestResult| {
        *latest.lock().unwrap_or_else(|p| p.into_inner()) = Progress {
            elapsed_s: r.stats.elapsed_s,
            utilisation: r.stats.utilisation,
            parts_placed: r.stats.parts_placed,
            sheets_used: r.stats.sheets_used,
        };
        if !report_interim {
            return;
        }
        let mut last = last_interim.lock().unwrap_or_else(|p| p.into_inner());
        if last.is_none_or(|t| t.elapsed() >= INTERIM_MIN_INTERVAL) {
            *last = Some(Instant::now());
            let _ = interim_tx.send(r.clone());
        }
    };

    // watchdog: MaxRunTimeSeconds plus grace, or shutdown, cancels the nest
    let budget = Duration::from_secs_f64(problem.settings.max_run_time_s.max(0.0)) + WATCHDOG_GRACE;
    // both stop when the engine ends, or whenever this runner is dropped
    let watchdog = {
        let (lease, shutdown) = (lease.clone(), ctx.shutdown.clone());
        AbortOnDrop::spawn(async move {
            tokio::select! {
                _ = tokio::time::sleep(budget) => {}
                _ = super::stopped(shutdown) => {}
            }
            lease.cancel();
        })
    };
    let ticker = {
        let (events, job_id, started) = (ctx.wake.events.clone(), job.id.clone(), Instant::now());
        AbortOnDrop::spawn(async move {
            let mut tick = tokio::time::interval(PROGRESS_EVERY);
            loop {
                tick.tick().await;
                let now = Progress {
                    elapsed_s: started.elapsed().as_secs_f64(),
                    ..progress.lock().unwrap_or_else(|p| p.into_inner()).clone()
                };
                events.publish(JobEvent::Progress {
                    job_id: job_id.clone(),
                    progress: now,
                });
            }
        })
    };
    let engine = {
        let (problem, cancel, eval) = (problem.clone(), lease.clone(), ctx.eval.clone());
        tokio::task::spawn_blocking(move || {
            nest2d::nest(&problem, eval.as_ref(), &cancel, &on_interim)
        })
    };
    let result = engine.await;
    drop((watchdog, ticker));
    let _ = interim_writer.await;
    if *ctx.shutdown.borrow() {
        return Ended::HandBack;
    }
    let result = match result {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => {
            return Ended::Failed {
                code: "NestingFailed",
                error: e.to_string(),
            }
        }
        Err(e) => {
            return Ended::Failed {
                code: "InternalError",
                error: format!("the nest crashed: {e}"),
            }
        }
    };
    let b = bodies(&problem, &result, job, results::STATUS_COMPLETE);
    if complete(ctx, job, b.record(), &b.delivery).await {
        tracing::info!(job = %job.id, utilisation = result.stats.utilisation, "completed");
    }
    Ended::Finished
}
