//! `kerf bench fairness`: how long a light key's nests wait behind a flooding key's, through
//! a real `kerf serve` (this binary) on a fresh SQLite store with a fixed number of job slots.
//! Key A queues a flood of short nests; then key B submits a few, all at once (`Burst`) or one
//! per nest's run time (`Trickle`, a second team at work). The table gives each key's waits
//! from submission to Running, read from the store's job rows, and the nests' run times.

use super::quantile;
use super::served::Served;
use crate::store::{JobState, JobSummary, Store};
use anyhow::{anyhow, bail, Result};
use base64::Engine;
use std::time::{Duration, Instant};

/// How key B's nests arrive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// All at once, right after A's flood.
    Burst,
    /// One per nest run time, starting right after A's flood.
    Trickle,
}

impl Arrival {
    pub fn name(self) -> &'static str {
        match self {
            Arrival::Burst => "burst",
            Arrival::Trickle => "trickle",
        }
    }
}

pub struct Options {
    pub a_nests: usize,
    pub b_nests: usize,
    /// Job slots of the server (`--workers`); each key's Parallelism is this too.
    pub slots: usize,
    /// MaxRunTimeSeconds of every nest.
    pub nest_seconds: f64,
    pub arrival: Arrival,
}

/// One key's figures, in seconds.
pub struct Row {
    pub key: &'static str,
    pub nests: usize,
    /// The wait of the key's first nest.
    pub first_wait: f64,
    pub median_wait: f64,
    pub p90_wait: f64,
    pub max_wait: f64,
    pub median_run: f64,
}

fn serve(slots: usize) -> Result<Served> {
    // the flood is the point: no per-key queue cap or request rate in the way; webhooks go to
    // a closed loopback port (deliveries fail and retry in the background)
    Served::start(
        "fairness",
        &[
            "--workers",
            &slots.to_string(),
            "--max-queued-per-key",
            "100000",
            "--key-requests-per-minute",
            "0",
            "--webhook-allow-cidr",
            "127.0.0.0/8",
            "--compute",
            "cpu",
        ],
    )
}

/// A short parametric nest: a few plates and rings on one sheet.
fn nest_request(seconds: f64) -> serde_json::Value {
    let part = |v: serde_json::Value| {
        base64::engine::general_purpose::STANDARD.encode(serde_json::to_vec(&v).unwrap_or_default())
    };
    serde_json::json!({
        "ResultsWebhookUri": "https://127.0.0.1:9/kerf-bench",
        "Request": {
            "Parts": [
                {"Identifier": "plate", "EncodedPartJson": part(serde_json::json!({"Shape": "Rectangle", "Width": 120, "Height": 60})), "Quantity": 4},
                {"Identifier": "ring", "EncodedPartJson": part(serde_json::json!({"Shape": "Ring", "OuterDiameter": 80, "InnerDiameter": 50})), "Quantity": 4},
            ],
            "Sheets": [{"Identifier": "S", "RectangularXDimension": 500, "RectangularYDimension": 300}],
            "NestSettings": {"MaxRunTimeSeconds": seconds, "PartSpacing": 3, "MaximumCPUCount": 1},
        }
    })
}

/// Runs the scenario and gives A's row and B's.
pub fn run(o: &Options) -> Result<Vec<Row>> {
    if o.slots == 0 || o.a_nests == 0 || o.b_nests == 0 {
        bail!("--slots, --a-nests and --b-nests must be at least 1");
    }
    let served = serve(o.slots)?;
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(scenario(o, &served))
}

async fn scenario(o: &Options, served: &Served) -> Result<Vec<Row>> {
    let http = reqwest::Client::new();
    let call = |key: &str, path: &str| {
        http.post(format!("{}{path}", served.base))
            .bearer_auth(key)
            .header("Accept", "application/json")
    };
    let mut keys = Vec::new();
    for name in ["A", "B"] {
        let r: serde_json::Value = call(&served.admin, "/admin/keys")
            .json(
                &serde_json::json!({"Reference": format!("bench {name}"), "Parallelism": o.slots}),
            )
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        let secret = r["ApiKey"].as_str().ok_or_else(|| anyhow!("no key: {r}"))?;
        let id = r["ApiKeyId"]
            .as_str()
            .ok_or_else(|| anyhow!("no id: {r}"))?;
        keys.push((secret.to_string(), id.to_string()));
    }
    let nest = nest_request(o.nest_seconds);
    let submit = |key: String| {
        let req = call(&key, "/v1/nesting/parametric").json(&nest);
        async move {
            let r = req.send().await?;
            if !r.status().is_success() {
                bail!("submission refused: {} {}", r.status(), r.text().await?);
            }
            Ok(())
        }
    };
    for _ in 0..o.a_nests {
        submit(keys[0].0.clone()).await?;
    }
    for i in 0..o.b_nests {
        if o.arrival == Arrival::Trickle && i > 0 {
            tokio::time::sleep(Duration::from_secs_f64(o.nest_seconds)).await;
        }
        submit(keys[1].0.clone()).await?;
    }
    // every nest ends within its run time plus the watchdog's grace; give the whole queue
    // twice that before calling it stuck
    let store = Store::open_sqlite(&served.dir.join("kerf.db")).await?;
    let total = (o.a_nests + o.b_nests) as f64;
    let limit =
        Duration::from_secs_f64(60.0 + 2.0 * total * (o.nest_seconds + 5.0) / o.slots as f64);
    let start = Instant::now();
    let finished = |jobs: &[JobSummary]| {
        jobs.iter()
            .all(|j| matches!(j.state, JobState::Completed | JobState::Failed))
    };
    let (a, b) = loop {
        let a = store.key_jobs(&keys[0].1).await?;
        let b = store.key_jobs(&keys[1].1).await?;
        if finished(&a) && finished(&b) {
            break (a, b);
        }
        if start.elapsed() > limit {
            bail!("the nests did not all end within {} s", limit.as_secs());
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    Ok(vec![row("A", &a), row("B", &b)])
}

fn row(key: &'static str, jobs: &[JobSummary]) -> Row {
    let seconds = |from: i64, to: Option<i64>| to.map_or(f64::NAN, |t| (t - from) as f64 / 1000.0);
    let mut waits: Vec<f64> = jobs
        .iter()
        .map(|j| seconds(j.created_at, j.started_at))
        .collect();
    let first_wait = waits.first().copied().unwrap_or(f64::NAN);
    let mut runs: Vec<f64> = jobs
        .iter()
        .filter_map(|j| Some(seconds(j.started_at?, j.completed_at)))
        .collect();
    waits.sort_by(f64::total_cmp);
    runs.sort_by(f64::total_cmp);
    Row {
        key,
        nests: jobs.len(),
        first_wait,
        median_wait: quantile(&waits, 0.5),
        p90_wait: quantile(&waits, 0.9),
        max_wait: waits.last().copied().unwrap_or(f64::NAN),
        median_run: quantile(&runs, 0.5),
    }
}
