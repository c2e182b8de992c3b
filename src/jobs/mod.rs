//! The worker runtime (DESIGN 4): claims queued jobs from the store, runs them with a lease
//! kept alive by heartbeats, and ends each one in Completed or Failed with its webhook rows
//! written in the same transaction. A rescuer returns expired leases to the queue.
//!
//! Capacity: `workers` jobs are held at once; a job runs with MaximumCPUCount threads (0: all
//! cores), drawn from one pool of `cores` thread permits, so jobs never oversubscribe the
//! machine. A held job waiting for threads stays Running (its lease is kept alive).

pub mod events;
mod lease;
mod run1d;
pub mod run2d;
pub mod run_export;
pub mod run_quote;

pub use run1d::KIND_1D;
pub use run2d::kind_for;
pub use run_export::KIND_EXPORT;

use crate::cluster::{Link, Topic, Wake};
use crate::store::{now_ms, Claimed, Lane, Lost, Store};
use crate::wire::GeometryKind;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{watch, Semaphore};
use tokio::task::JoinSet;

/// How long a claim holds a job without a heartbeat.
pub const LEASE_MS: i64 = 30_000;
/// Heartbeat period (a third of the lease, so two can be missed).
pub const HEARTBEAT: Duration = Duration::from_secs(5);
/// A job interrupted this many times (lease expired) is failed instead of retried.
pub const MAX_ATTEMPTS: i64 = 3;
/// How often the rescuer looks for expired leases.
const RESCUE_PERIOD: Duration = Duration::from_secs(5);
/// How often an idle claimer looks at the queue even without a wake-up.
const IDLE_POLL: Duration = Duration::from_secs(1);

/// Exports run at once, in their own lane (each on a thread of its own, beside the nests'
/// permits: an export is seconds of work, and must not wait for a nest's minutes).
const EXPORT_SLOTS: usize = 2;

/// What the runtime shares with the API. With a cluster link, each wake-up and event also
/// reaches the other nodes (`cluster::bus`).
#[derive(Clone)]
pub struct Wakeups {
    /// A nest (2D or 1D) was queued, or a running one ended.
    pub jobs: Wake,
    /// An export was queued.
    pub exports: Wake,
    /// An outbox row was written.
    pub deliveries: Wake,
    /// Jobs' progress, results and failures as they happen (the hub's), and the jobs running
    /// here (for stops).
    pub events: events::JobEvents,
}

impl Default for Wakeups {
    fn default() -> Self {
        Wakeups::linked(None)
    }
}

impl Wakeups {
    /// Wake-ups that also go to the other nodes through `link` (None: this process only).
    pub fn linked(link: Option<Link>) -> Wakeups {
        Wakeups {
            jobs: Wake::new(Topic::Jobs, link.clone()),
            exports: Wake::new(Topic::Exports, link.clone()),
            deliveries: Wake::new(Topic::Deliveries, link.clone()),
            events: events::JobEvents::linked(link),
        }
    }
}

#[derive(Clone)]
pub struct RuntimeConfig {
    /// The evaluation backend every job's search runs on (chosen once, at start).
    pub eval: Arc<dyn kerf_kernels::Evaluator>,
    /// Jobs held at once.
    pub workers: usize,
    /// Thread permits shared by running jobs.
    pub cores: usize,
    /// Names this process's leases.
    pub owner: String,
}

impl RuntimeConfig {
    /// Sized to the machine: one job per core at most, all cores as thread permits.
    pub fn for_this_machine(eval: Arc<dyn kerf_kernels::Evaluator>) -> RuntimeConfig {
        let cores = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        RuntimeConfig {
            eval,
            workers: cores,
            cores,
            owner: format!("kerf-{}-{}", std::process::id(), uuid::Uuid::new_v4()),
        }
    }
}

/// A single-process server at start: every Running row is an orphan of a previous run, taken
/// back (requeued, or failed once interrupted too often). Done before the server answers, so
/// no caller sees a dead process's job as Running, and an interruption is counted before the
/// job can be claimed again.
pub async fn adopt_orphans(store: &Store, wake: &Wakeups) {
    take_back(store, wake, Lost::All).await;
}

/// Runs the claimers (nests, and exports in their own lane) and the rescuer until `shutdown`
/// turns true; then cancels running jobs, hands their leases back and returns once they have.
/// (Orphans of a previous run are `adopt_orphans`' business, before this starts.)
pub async fn run(
    store: Store,
    config: RuntimeConfig,
    wake: Wakeups,
    shutdown: watch::Receiver<bool>,
) {
    let rescuer = tokio::spawn(rescue_loop(store.clone(), wake.clone(), shutdown.clone()));
    let nests = Lanes {
        lane: Lane::Nests,
        slots: config.workers.max(1),
        threads: config.cores.max(1),
        queued: wake.jobs.clone(),
    };
    let exports = Lanes {
        lane: Lane::Exports,
        slots: EXPORT_SLOTS,
        threads: EXPORT_SLOTS,
        queued: wake.exports.clone(),
    };
    tokio::join!(
        claim_loop(nests, &store, &config, &wake, shutdown.clone()),
        claim_loop(exports, &store, &config, &wake, shutdown),
    );
    let _ = rescuer.await;
}

/// One claimer's lane: which jobs, how many at once, the thread permits they share, and the
/// wake-up that says one was queued.
struct Lanes {
    lane: Lane,
    slots: usize,
    threads: usize,
    queued: Wake,
}

/// Claims and runs the jobs of one lane until `shutdown`; then waits for its running jobs to
/// hand their leases back.
async fn claim_loop(
    lanes: Lanes,
    store: &Store,
    config: &RuntimeConfig,
    wake: &Wakeups,
    mut shutdown: watch::Receiver<bool>,
) {
    let slots = Arc::new(Semaphore::new(lanes.slots));
    let threads = Arc::new(Semaphore::new(lanes.threads));
    let mut running = JoinSet::new();
    loop {
        if *shutdown.borrow() {
            break;
        }
        // reap finished job tasks so the set does not grow
        while running.try_join_next().is_some() {}
        let slot = tokio::select! {
            s = slots.clone().acquire_owned() => s.expect("slots semaphore is never closed"),
            _ = shutdown.changed() => continue,
        };
        let claimed = match store
            .claim(lanes.lane, &config.owner, LEASE_MS, now_ms())
            .await
        {
            Ok(c) => c,
            Err(e) => {
                tracing::error!(error = %e, lane = ?lanes.lane, "claiming a job failed");
                None
            }
        };
        match claimed {
            Some(job) => {
                tracing::info!(job = %job.id, attempt = job.attempt, kind = %job.kind, "claimed");
                let ctx = JobContext {
                    eval: config.eval.clone(),
                    store: store.clone(),
                    wake: wake.clone(),
                    threads: threads.clone(),
                    cores: lanes.threads,
                    shutdown: shutdown.clone(),
                };
                running.spawn(async move {
                    run_job(ctx, job).await;
                    drop(slot);
                });
            }
            None => {
                drop(slot);
                tokio::select! {
                    _ = lanes.queued.notified() => {}
                    _ = tokio::time::sleep(IDLE_POLL) => {}
                    _ = shutdown.changed() => {}
                }
            }
        }
    }
    tracing::info!(
        jobs = running.len(),
        lane = ?lanes.lane,
        "stopping: running jobs hand back their leases"
    );
    while running.join_next().await.is_some() {}
}

/// Takes back expired leases, and purges expired exports from the export cache.
async fn rescue_loop(store: Store, wake: Wakeups, shutdown: watch::Receiver<bool>) {
    let mut tick = tokio::time::interval(RESCUE_PERIOD);
    loop {
        tokio::select! {
            _ = tick.tick() => {
                take_back(&store, &wake, Lost::Expired).await;
                match store.purge_export_cache(now_ms()).await {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(exports = n, "expired exports purged from the cache"),
                    Err(e) => tracing::error!(error = %e, "purging the export cache failed"),
                }
            }
            _ = stopped(shutdown.clone()) => return,
        }
    }
}

/// Resolves once `shutdown` turns true.
pub(crate) async fn stopped(mut shutdown: watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|s| *s).await;
}

/// Requeues abandoned running jobs, failing those interrupted MAX_ATTEMPTS times.
async fn take_back(store: &Store, wake: &Wakeups, lost: Lost) {
    let error_body = |job_id: &str, kind: &str, request: &str, error: &str| {
        (
            error_delivery_body(kind, job_id, request, "Interrupted", error),
            delivery_content_type(kind),
        )
    };
    match store
        .take_back(lost, MAX_ATTEMPTS, now_ms(), error_body)
        .await
    {
        Ok((0, 0)) => {}
        Ok((requeued, failed)) => {
            tracing::warn!(requeued, failed, ?lost, "abandoned jobs taken back");
            wake.jobs.notify_one();
            wake.exports.notify_one();
            wake.deliveries.notify_one();
        }
        Err(e) => tracing::error!(error = %e, ?lost, "taking back abandoned jobs failed"),
    }
}

/// What one job task needs.
struct JobContext {
    eval: Arc<dyn kerf_kernels::Evaluator>,
    store: Store,
    wake: Wakeups,
    threads: Arc<Semaphore>,
    cores: usize,
    shutdown: watch::Receiver<bool>,
}

async fn run_job(ctx: JobContext, job: Claimed) {
    match job.kind.as_str() {
        k if k.starts_with(run2d::KIND_PREFIX) => run2d::run(ctx, job).await,
        k if k.starts_with(run_quote::KIND_PREFIX) => run_quote::run(ctx, job).await,
        KIND_1D => run1d::run(ctx, job).await,
        KIND_EXPORT => run_export::run(ctx, job).await,
        other => {
            let error = format!("unknown job kind '{other}'");
            lease::fail(&ctx, &job, "InternalError", &error).await;
        }
    }
}

/// The body of the Error delivery of a failed job, in the shape its kind's webhook has.
/// (`request` is the job's stored request: an export's failure body names what it exported.)
pub fn error_delivery_body(
    kind: &str,
    job_id: &str,
    request: &str,
    code: &str,
    report: &str,
) -> String {
    match kind {
        KIND_1D => run1d::error_delivery_body(job_id, code, report),
        KIND_EXPORT => run_export::error_delivery_body(job_id, request),
        run2d::KIND_LEGACY => run2d::legacy_error_delivery_body(job_id, code, report),
        k if k.starts_with(run_quote::KIND_PREFIX) => {
            run_quote::error_delivery_body(job_id, code, report)
        }
        _ => run2d::error_delivery_body(job_id, code, report),
    }
}

/// The media type of a job's deliveries: XML for the legacy endpoint's nests (DESIGN 5.7),
/// JSON for everything else.
pub fn delivery_content_type(kind: &str) -> &'static str {
    if kind == run2d::KIND_LEGACY {
        crate::store::XML
    } else {
        crate::store::JSON
    }
}

/// The job kind `PREFIX + geometry` of a submission endpoint whose parts are `geometry` unless
/// they say otherwise (`nest2d:json`, `quote:dxf`).
pub fn kind_with(prefix: &str, geometry: GeometryKind) -> String {
    format!("{prefix}{}", geometry.name())
}

/// The default geometry a job kind was submitted with (DXF for kinds that name none).
fn geometry_of(prefix: &str, kind: &str) -> GeometryKind {
    GeometryKind::from_name(kind.strip_prefix(prefix).unwrap_or(""))
}
