//! `kerf serve` (the API, the workers and the webhook deliverer in one process), `kerf serve
//! --no-workers` (the API only) and `kerf worker` (workers and deliverer, no HTTP): the
//! roles of a node (`cluster::Role`). Any number of each share one PostgreSQL database; an
//! SQLite file has one process, `kerf serve`. SIGTERM (or Ctrl-C) stops taking requests and
//! jobs; running jobs hand their leases back so the next start (or another node) runs them
//! again.

use crate::api::{self, AppState};
use crate::cluster::{self, Role};
use crate::jobs::{self, LargeNests, RuntimeConfig, Wakeups};
use crate::store::{now_ms, Backend, NodeInfo, Store};
use crate::webhook::schedule::RetrySchedule;
use crate::webhook::{AddressGuard, Deliverer};
use anyhow::{Context, Result};
use std::future::IntoFuture;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::watch;

pub struct ServeArgs {
    pub role: Role,
    pub listen: String,
    pub database: String,
    /// What every node that accepts or runs jobs shares.
    pub node: NodeArgs,
    pub body_limit_mib: usize,
    /// Jobs a key may have waiting beyond its Parallelism.
    pub max_queued_per_key: i64,
    /// Requests per minute per key (0: unlimited).
    pub key_requests_per_minute: u32,
    /// The origins this server's own pages are reached at (its dashboard).
    pub public_origin: Vec<String>,
    /// How long an export made through the hub stays in the export cache.
    pub export_cache_minutes: f64,
}

/// The options of `kerf serve` and `kerf worker` alike: webhooks, and how this node runs jobs.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct NodeArgs {
    /// Let webhooks reach this non-public range (repeatable; for tests: 127.0.0.0/8).
    #[arg(long = "webhook-allow-cidr")]
    pub webhook_allow_cidr: Vec<String>,
    /// Trust this PEM root certificate for webhook receivers, besides the system's.
    #[arg(long = "webhook-ca-file")]
    pub webhook_ca_file: Option<PathBuf>,
    /// Webhook retry delays in seconds, comma-separated (default 5,30,120,600,1800,3600,10800,21600,43200).
    #[arg(long)]
    pub webhook_retry_delays: Option<String>,
    /// Jobs run at once (0: one per core); threads per job follow MaximumCPUCount.
    #[arg(long, default_value_t = 0)]
    pub workers: usize,
    /// Evaluation backend: auto, gpu or cpu. Default: KERF_COMPUTE, else auto. With gpu the
    /// node needs a GPU adapter to start and claims nests only while it works.
    #[arg(long)]
    pub compute: Option<String>,
    /// The share of this node's job slots to fill with large nests first, 0 to 1 (GPU
    /// workers: 1; CPU workers beside them: 0). Unset: nests are taken by fair share alone.
    #[arg(long)]
    pub large_nest_share: Option<f64>,
    /// Part copies (or 1D pieces) from which a nest counts as large, for --large-nest-share.
    #[arg(long, default_value_t = 200)]
    pub large_nest_parts: i64,
}

impl NodeArgs {
    /// The operator's routing of large nests, checked.
    fn large_nests(&self) -> Result<Option<LargeNests>> {
        let Some(share) = self.large_nest_share else {
            return Ok(None);
        };
        if !(0.0..=1.0).contains(&share) {
            anyhow::bail!("--large-nest-share {share}: must be between 0 and 1");
        }
        if self.large_nest_parts < 1 {
            anyhow::bail!(
                "--large-nest-parts {}: must be 1 or more",
                self.large_nest_parts
            );
        }
        Ok(Some(LargeNests {
            parts: self.large_nest_parts,
            share,
        }))
    }
}

impl ServeArgs {
    /// A node that answers no HTTP (`kerf worker`): the HTTP settings at their defaults.
    pub fn worker(database: String, node: NodeArgs) -> ServeArgs {
        ServeArgs {
            role: Role::Worker,
            listen: String::new(),
            database,
            node,
            body_limit_mib: 64,
            max_queued_per_key: 100,
            key_requests_per_minute: 3000,
            public_origin: Vec::new(),
            export_cache_minutes: 60.0,
        }
    }
}

/// Parallelism of the first Admin key.
pub const FIRST_KEY_PARALLELISM: i64 = 4;

pub fn run(a: ServeArgs) -> Result<()> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(serve(a))
}

async fn serve(a: ServeArgs) -> Result<()> {
    let public_origins = a
        .public_origin
        .iter()
        .map(|o| api::canonical_origin(o).map_err(|e| anyhow::anyhow!("--public-origin {o}: {e}")))
        .collect::<Result<Vec<_>>>()?;
    if !(a.export_cache_minutes.is_finite() && a.export_cache_minutes > 0.0) {
        anyhow::bail!("--export-cache-minutes: must be a number above 0");
    }
    let store = Store::open(&a.database).await.map_err(anyhow::Error::msg)?;
    if a.role != Role::Serve && store.backend() == Backend::Sqlite {
        anyhow::bail!(
            "--database: {} needs a database nodes can share (postgres://...); on an SQLite \
             file one process, `kerf serve`, does everything",
            match a.role {
                Role::Worker => "kerf worker",
                _ => "kerf serve --no-workers",
            }
        );
    }
    if a.role.answers_http() {
        if let Some(token) = store.bootstrap(FIRST_KEY_PARALLELISM, now_ms()).await? {
            // shown once: the store keeps only its hash
            println!(
                "Created an account and its first Admin key. It is shown only this once; store it now:"
            );
            println!("{token}");
        }
    }
    let allow: Vec<&str> = a
        .node
        .webhook_allow_cidr
        .iter()
        .map(String::as_str)
        .collect();
    let guard =
        AddressGuard::new(&allow).map_err(|e| anyhow::anyhow!("--webhook-allow-cidr: {e}"))?;
    let (stop_tx, stop_rx) = watch::channel(false);
    let node_id = format!("kerf-{}-{}", std::process::id(), uuid::Uuid::new_v4());
    // on PostgreSQL, wake-ups, events and stops also reach the other nodes
    let (link, outgoing) = match store.backend() {
        Backend::Postgres => {
            let (link, outgoing) = cluster::bus::link();
            (Some(link), Some(outgoing))
        }
        Backend::Sqlite => (None, None),
    };
    let wake = Wakeups::linked(link);
    let bus = outgoing.map(|outgoing| {
        tokio::spawn(cluster::bus::run(
            store.clone(),
            node_id.clone(),
            wake.clone(),
            outgoing,
            stop_rx.clone(),
        ))
    });

    let mut node = NodeInfo {
        id: node_id.clone(),
        role: a.role.name().into(),
        // a node that runs no jobs evaluates nothing; a worker's backend is filled in below
        compute: "none".into(),
        slots: 0,
        host: cluster::node::host_name(),
        pid: i64::from(std::process::id()),
        started_at: now_ms(),
    };
    let mut background = Vec::new();
    // the backend a node that runs jobs evaluates on: its heartbeat tells of a failed GPU
    let mut evaluator = None;
    if a.role.runs_jobs() {
        let ca = match &a.node.webhook_ca_file {
            Some(p) => Some(
                std::fs::read(p).with_context(|| format!("--webhook-ca-file {}", p.display()))?,
            ),
            None => None,
        };
        let retries = match &a.node.webhook_retry_delays {
            Some(s) => RetrySchedule::parse(s)
                .map_err(|e| anyhow::anyhow!("--webhook-retry-delays: {e}"))?,
            None => RetrySchedule::default(),
        };
        let deliverer = Deliverer::new(store.clone(), guard.clone(), ca.as_deref(), retries)
            .map_err(anyhow::Error::msg)?;
        let choice = crate::cli::compute_choice(a.node.compute.as_deref())?;
        let eval = kerf_kernels::choose(choice).map_err(anyhow::Error::msg)?;
        tracing::info!(compute = %eval.name(), "evaluation backend");
        println!("compute: {}", eval.name());
        let mut config = RuntimeConfig::for_this_machine(eval.clone());
        config.owner = node_id.clone();
        config.gpu_required = choice == kerf_kernels::Compute::Gpu;
        config.large_nests = a.node.large_nests()?;
        if a.node.workers > 0 {
            config.workers = a.node.workers;
        }
        evaluator = Some(eval.clone());
        node.compute = eval.name();
        node.slots = config.workers as i64;
        if a.role == Role::Serve && store.backend() == Backend::Sqlite {
            // the one process on this file: whatever was Running belonged to a dead one
            jobs::adopt_orphans(&store, &wake).await;
        }
        background.push(tokio::spawn(jobs::run(
            store.clone(),
            config,
            wake.clone(),
            stop_rx.clone(),
        )));
        background.push(tokio::spawn(
            deliverer.run(wake.deliveries.clone(), stop_rx.clone()),
        ));
    }
    store
        .announce_node(&node, now_ms())
        .await
        .context("announcing the node")?;
    background.push(tokio::spawn(cluster::node::heartbeat(
        store.clone(),
        node.clone(),
        evaluator,
        stop_rx.clone(),
    )));
    background.extend(bus);

    let signals = tokio::spawn(async move {
        wait_for_signal().await;
        tracing::info!("stopping: no new requests or jobs; running jobs are handed back");
        let _ = stop_tx.send(true);
        // a second signal means now
        wait_for_signal().await;
        tracing::warn!("second signal: exiting at once");
        std::process::exit(130);
    });

    if a.role.answers_http() {
        let hub = api::Hub::start(&wake.events);
        let state = AppState {
            store,
            wake,
            node: Arc::new(node),
            guard: Arc::new(guard),
            max_queued_per_key: a.max_queued_per_key,
            rate_limit: Arc::new(api::KeyRateLimit::new(a.key_requests_per_minute)),
            public_origins: Arc::new(public_origins),
            hub,
            export_cache_minutes: a.export_cache_minutes,
        };
        let app = api::router(state, a.body_limit_mib * 1024 * 1024);
        let listener = tokio::net::TcpListener::bind(&a.listen)
            .await
            .with_context(|| format!("--listen {}: cannot bind", a.listen))?;
        println!("listening on http://{}", listener.local_addr()?);
        std::io::stdout().flush()?;

        let server = axum::serve(listener, app)
            .with_graceful_shutdown(crate::jobs::stopped(stop_rx.clone()))
            .into_future();
        // open connections get a while to finish after the signal, not for ever
        let stopped_then_grace = async {
            crate::jobs::stopped(stop_rx.clone()).await;
            tokio::time::sleep(SHUTDOWN_GRACE).await;
        };
        tokio::select! {
            r = server => r.context("the HTTP server failed")?,
            _ = stopped_then_grace => tracing::warn!("connections still open after {} s; closing them", SHUTDOWN_GRACE.as_secs()),
        }
    } else {
        println!("worker {node_id} ready");
        std::io::stdout().flush()?;
        crate::jobs::stopped(stop_rx.clone()).await;
    }
    for task in background {
        let _ = task.await;
    }
    signals.abort();
    Ok(())
}

/// How long open HTTP connections may go on after SIGTERM.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(20);

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate()).expect("installing the SIGTERM handler");
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
