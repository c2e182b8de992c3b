//! Sends the outbox (DESIGN 4): POST with `Content-Type: application/json` (the legacy
//! endpoint's results: `application/xml`), a 2xx within 15 s
//! is success, redirects are not followed (a 3xx is a failed attempt), every attempt sends the
//! same body, retries follow `schedule`, and after the last one the delivery gives up (listed
//! by /v1/nesting/failures). Every address a target resolves to passes the `AddressGuard`
//! before a connection is made: the client's DNS resolver is ours and drops refused addresses.

use super::{schedule, AddressGuard};
use crate::store::{now_ms, DueDelivery, Store};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// A receiver must answer within this.
pub const ACK_TIMEOUT: Duration = Duration::from_secs(15);
/// Deliveries in flight at once.
const MAX_IN_FLIGHT: usize = 64;
/// How often to look at the outbox while deliveries are in flight and nothing wakes us.
const POLL_WHILE_BUSY: Duration = Duration::from_millis(200);
/// The longest sleep between looks at the outbox when nothing wakes the deliverer.
const MAX_IDLE: Duration = Duration::from_secs(5);

/// Resolves names with the system resolver and keeps only the addresses the guard admits.
struct GuardedResolver {
    guard: Arc<AddressGuard>,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let guard = self.guard.clone();
        let host = name.as_str().to_string();
        Box::pin(async move {
            let all: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let mut refused = None;
            let allowed: Vec<SocketAddr> = all
                .into_iter()
                .filter(|a| match guard.check(a.ip()) {
                    Ok(()) => true,
                    Err(why) => {
                        refused = Some(why);
                        false
                    }
                })
                .collect();
            if allowed.is_empty() {
                let why = refused.unwrap_or_else(|| format!("{host} did not resolve"));
                return Err(why.into());
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}

/// The delivery worker.
pub struct Deliverer {
    store: Store,
    client: reqwest::Client,
    guard: Arc<AddressGuard>,
    retries: schedule::RetrySchedule,
}

impl Deliverer {
    /// `extra_roots_pem`: trusted root certificates besides the system's (`--webhook-ca-file`).
    pub fn new(
        store: Store,
        guard: AddressGuard,
        extra_roots_pem: Option<&[u8]>,
        retries: schedule::RetrySchedule,
    ) -> Result<Deliverer, String> {
        let guard = Arc::new(guard);
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            // a proxy would resolve the target itself, past the address guard
            .no_proxy()
            .timeout(ACK_TIMEOUT)
            .connect_timeout(ACK_TIMEOUT)
            .user_agent(concat!("kerf/", env!("CARGO_PKG_VERSION")))
            .dns_resolver(Arc::new(GuardedResolver {
                guard: guard.clone(),
            }));
        if let Some(pem) = extra_roots_pem {
            let certs = reqwest::Certificate::from_pem_bundle(pem)
                .map_err(|e| format!("--webhook-ca-file: not a PEM certificate bundle: {e}"))?;
            if certs.is_empty() {
                return Err("--webhook-ca-file: no certificate in the file".into());
            }
            builder = builder.tls_certs_merge(certs);
        }
        let client = builder
            .build()
            .map_err(|e| format!("building the webhook client: {e}"))?;
        Ok(Deliverer {
            store,
            client,
            guard,
            retries,
        })
    }

    /// Sends due deliveries until `shutdown`; sends in flight finish first. Each delivery is
    /// its own task (a slow receiver holds up nobody else), but one job has one delivery in
    /// flight at a time, oldest first, so a receiver sees a job's interim results before its
    /// final one (unless an attempt fails: then the next goes ahead while it waits to retry;
    /// a newer result drops the job's undelivered interim deliveries anyway).
    pub async fn run(self, wake: crate::cluster::Wake, mut shutdown: watch::Receiver<bool>) {
        let this = Arc::new(self);
        // jobs with a delivery in flight, by the task sending it; only this loop changes it,
        // after the task has ended (and recorded its attempt), so a fetch never sees a row
        // whose send is over but whose record is not
        let mut in_flight: HashMap<tokio::task::Id, String> = HashMap::new();
        let mut tasks = tokio::task::JoinSet::new();
        loop {
            if *shutdown.borrow() {
                break;
            }
            while let Some(done) = tasks.try_join_next_with_id() {
                in_flight.remove(&finished_id(done));
            }
            let room = MAX_IN_FLIGHT.saturating_sub(tasks.len());
            let mut started = 0;
            if room > 0 {
                // one due row per job: enough to see past the busy ones
                let limit = (room + in_flight.len()) as i64;
                match this.store.due_deliveries(now_ms(), limit).await {
                    Ok(due) => {
                        for d in due {
                            if started == room || in_flight.values().any(|j| *j == d.job_id) {
                                continue;
                            }
                            started += 1;
                            let job = d.job_id.clone();
                            let this = this.clone();
                            let handle = tasks.spawn(async move { this.deliver(d).await });
                            in_flight.insert(handle.id(), job);
                        }
                    }
                    Err(e) => tracing::error!(error = %e, "reading the outbox failed"),
                }
            }
            if started > 0 && tasks.len() < MAX_IN_FLIGHT {
                continue;
            }
            let idle = match this.store.next_delivery_at().await {
                Ok(Some(t)) => Duration::from_millis(
                    (t - now_ms()).clamp(0, MAX_IDLE.as_millis() as i64) as u64,
                ),
                _ => MAX_IDLE,
            };
            // rows of busy jobs are still due: do not spin on them; wait for a wake-up, a send
            // to end or the idle time
            let idle = if idle.is_zero() {
                POLL_WHILE_BUSY
            } else {
                idle
            };
            tokio::select! {
                _ = wake.notified() => {}
                _ = tokio::time::sleep(idle) => {}
                Some(done) = tasks.join_next_with_id(), if !tasks.is_empty() => {
                    in_flight.remove(&finished_id(done));
                }
                _ = shutdown.changed() => {}
            }
        }
        while tasks.join_next().await.is_some() {}
    }

    async fn deliver(&self, d: DueDelivery) {
        let outcome = self.send(&d).await;
        let result = match outcome {
            Ok(status) => {
                tracing::info!(job = %d.job_id, delivery = d.id, status, "webhook delivered");
                self.store
                    .mark_delivered(d.id, status as i64, now_ms())
                    .await
            }
            Err((status, why)) => {
                let failed = (d.attempts + 1) as u32;
                let next = self
                    .retries
                    .next_delay_ms(failed, jitter())
                    .map(|ms| now_ms() + ms as i64);
                tracing::warn!(job = %d.job_id, delivery = d.id, attempt = failed, error = %why, gave_up = next.is_none(), "webhook attempt failed");
                self.store
                    .mark_attempt_failed(d.id, status.map(i64::from), &why, next)
                    .await
            }
        };
        if let Err(e) = result {
            tracing::error!(delivery = d.id, error = %e, "recording a delivery attempt failed");
        }
    }

    /// One attempt: Ok(status) on a 2xx, else the status (if any) and why.
    async fn send(&self, d: &DueDelivery) -> Result<u16, (Option<u16>, String)> {
        let url = super::parse_target(&d.uri).map_err(|e| (None, e))?;
        // IP literals never reach the resolver: check them here
        if let Some(host) = url.host_str() {
            if let Ok(ip) = host.trim_matches(['[', ']']).parse::<IpAddr>() {
                self.guard.check(ip).map_err(|e| (None, e))?;
            }
        }
        let response = self
            .client
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, d.content_type.as_str())
            .body(d.body.clone())
            .send()
            .await
            .map_err(|e| (None, describe(&e)))?;
        let status = response.status();
        if status.is_success() {
            Ok(status.as_u16())
        } else if status.is_redirection() {
            Err((
                Some(status.as_u16()),
                format!("the receiver answered {status}; redirects are not followed"),
            ))
        } else {
            Err((
                Some(status.as_u16()),
                format!("the receiver answered {status}"),
            ))
        }
    }
}

/// The error and its causes in one line (reqwest's top-level message alone says little).
fn describe(e: &reqwest::Error) -> String {
    let mut s = if e.is_timeout() {
        format!("no answer within {} s", ACK_TIMEOUT.as_secs())
    } else {
        e.to_string()
    };
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cause = c.source();
    }
    s
}

/// The id of a finished send task, whether it returned or panicked.
fn finished_id(done: Result<(tokio::task::Id, ()), tokio::task::JoinError>) -> tokio::task::Id {
    match done {
        Ok((id, ())) => id,
        Err(e) => {
            tracing::error!(error = %e, "a webhook send task failed");
            e.id()
        }
    }
}

fn jitter() -> f64 {
    let mut b = [0u8; 4];
    let _ = getrandom::fill(&mut b);
    u32::from_le_bytes(b) as f64 / (u32::MAX as f64 + 1.0)
}
