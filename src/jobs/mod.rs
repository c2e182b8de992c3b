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
use crate::store::{now_ms, Claimed, Lane, Lost, NestSizes, Store};
use crate::wire::GeometryKind;
use std::sync::atomic::{AtomicUsize, Ordering};
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
    /// A GPU node (`--compute gpu`): it claims nests only while its adapter works. (A node on
    /// `auto` that loses its GPU goes on, on the CPU.)
    pub gpu_required: bool,
    /// This node's share of large nests, if the operator gave it one.
    pub large_nests: Option<LargeNests>,
}

/// An operator's routing of large nests (issue 19: the largest to GPU workers first): a nest
/// of `parts` part copies (or 1D pieces) or more is large, and the node aims to hold `share`
/// of its slots with large ones: while fewer run here it asks for a large nest first, else
/// for a small one first. Either way it takes the other kind when none of the kind it asked
/// for is queued, so no nest waits for a kind of node that is busy or absent. Share 1 on GPU
/// workers and 0 on CPU workers sends large nests to the GPUs while they have room.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LargeNests {
    pub parts: i64,
    /// In [0, 1].
    pub share: f64,
}

impl LargeNests {
    /// The nest sizes to ask for, in order, with `large_running` large nests on this node's
    /// `slots`.
    pub fn preference(self, large_running: usize, slots: usize) -> [NestSizes; 2] {
        let large_slots = (self.share * slots as f64).ceil() as usize;
        if large_running < large_slots {
            [NestSizes::at_least(self.parts), NestSizes::ANY]
        } else {
            [NestSizes::below(self.parts), NestSizes::ANY]
        }
    }

    pub fn is_large(self, size: i64) -> bool {
        size >= self.parts
    }
}

impl RuntimeConfig {
    /// Why this GPU node may not claim nests: its adapter failed. None on any other node.
    pub fn adapter_lost(&self) -> Option<String> {
        if self.gpu_required {
            self.eval.adapter_failure()
        } else {
            None
        }
    }

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
            gpu_required: false,
            large_nests: None,
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
        lane: Lane::Nests(NestSizes::ANY),
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
    // large nests running here (with a LargeNests share)
    let large_running = Arc::new(AtomicUsize::new(0));
    let mut told_adapter_lost = false;
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
        let asks = match lanes.lane {
            Lane::Exports => vec![Lane::Exports],
            Lane::Nests(_) => match (config.adapter_lost(), config.large_nests) {
                (Some(why), _) => {
                    if !told_adapter_lost {
                        tracing::error!(reason = %why, "the GPU adapter failed: this GPU node claims no more nests");
                        told_adapter_lost = true;
                    }
                    Vec::new()
                }
                (None, None) => vec![lanes.lane],
                (None, Some(large)) => large
                    .preference(large_running.load(Ordering::SeqCst), lanes.slots)
                    .map(Lane::Nests)
                    .to_vec(),
            },
        };
        let mut claimed = None;
        for lane in asks {
            match store.claim(lane, &config.owner, LEASE_MS, now_ms()).await {
                Ok(None) => continue,
                Ok(c) => claimed = c,
                Err(e) => tracing::error!(error = %e, ?lane, "claiming a job failed"),
            }
            break;
        }
        match claimed {
            Some(job) => {
                tracing::info!(job = %job.id, attempt = job.attempt, kind = %job.kind, size = job.size, "claimed");
                let large = matches!(lanes.lane, Lane::Nests(_))
                    && config.large_nests.is_some_and(|l| l.is_large(job.size));
                if large {
                    large_running.fetch_add(1, Ordering::SeqCst);
                }
                let large_running = large_running.clone();
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
                    if large {
                        large_running.fetch_sub(1, Ordering::SeqCst);
                    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_asks_for_large_nests_until_its_share_of_slots_holds_them() {
        let large = |share| LargeNests { parts: 200, share };
        let (big, small) = (NestSizes::at_least(200), NestSizes::below(200));
        // a GPU worker (share 1) asks for large nests first whatever it runs
        assert_eq!(large(1.0).preference(3, 4), [big, NestSizes::ANY]);
        // a CPU worker (share 0) asks for small ones first, and takes a large one when no small
        // one is queued
        assert_eq!(large(0.0).preference(0, 4), [small, NestSizes::ANY]);
        // half of 4 slots: large first while fewer than 2 run here
        assert_eq!(large(0.5).preference(1, 4)[0], big);
        assert_eq!(large(0.5).preference(2, 4)[0], small);
        assert!(large(0.5).is_large(200) && !large(0.5).is_large(199));
    }
}
