//! Load benchmark of the service (not a test): N concurrent small submissions against the real
//! `kerf serve` (SQLite file, loopback HTTPS webhook receiver). Prints submissions per second,
//! p50 and p99 latency of POST /v1/nesting, and the time from submission to the final webhook
//! for a trivial nest.
//!
//!     cargo bench --bench service_load                 # 200 submissions, 16 at a time
//!
//! then KERF_LOAD_IDLE_N (10) nests one at a time, each waited for: the round trip on an idle
//! server.
//!     KERF_LOAD_N=1000 KERF_LOAD_CONCURRENCY=64 cargo bench --bench service_load

#[path = "../tests/support/mod.rs"]
mod support;

use kerf::bench::quantile;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::*;

fn main() {
    let n = env_usize("KERF_LOAD_N", 200);
    let concurrency = env_usize("KERF_LOAD_CONCURRENCY", 16);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(run(n, concurrency));
}

async fn run(n: usize, concurrency: usize) {
    let dir = temp_dir("load");
    let receiver = Receiver::start(&dir).await;
    let server = Server::start(&dir, Some(&receiver), &[]);
    let key = server.create_key("Usage", n as u32 + 1, None);
    let api = Arc::new(server.client(&key));
    let body = Arc::new(trivial_nest(&format!("{}/load", receiver.url)));

    let gate = Arc::new(tokio::sync::Semaphore::new(concurrency.max(1)));
    let start = Instant::now();
    let mut tasks = Vec::with_capacity(n);
    for _ in 0..n {
        let (api, body, gate) = (api.clone(), body.clone(), gate.clone());
        tasks.push(tokio::spawn(async move {
            let _permit = gate.acquire_owned().await.unwrap();
            let t = Instant::now();
            let a = api.post_json("/v1/nesting/parametric", &body).await;
            let took = t.elapsed();
            assert_eq!(a.status, 200, "{}", a.text);
            (a.body["RequestId"].as_str().unwrap().to_string(), t, took)
        }));
    }
    let mut submitted = HashMap::new();
    let mut post_ms = Vec::with_capacity(n);
    for t in tasks {
        let (id, at, took) = t.await.unwrap();
        post_ms.push(took.as_secs_f64() * 1000.0);
        submitted.insert(id, at);
    }
    let submit_s = start.elapsed().as_secs_f64();

    // wait for every final delivery
    let deadline = Instant::now() + Duration::from_secs(600);
    let finals = loop {
        let finals: HashMap<String, Instant> = receiver
            .all()
            .into_iter()
            .filter(|d| d.answered == 200 && d.body["Status"]["NestingStatus"] == 1)
            .map(|d| (d.body["RequestId"].as_str().unwrap_or("").to_string(), d.at))
            .collect();
        if submitted.keys().all(|id| finals.contains_key(id)) || Instant::now() > deadline {
            break finals;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let all_s = start.elapsed().as_secs_f64();
    let mut to_webhook_ms: Vec<f64> = submitted
        .iter()
        .filter_map(|(id, at)| finals.get(id).map(|f| (*f - *at).as_secs_f64() * 1000.0))
        .collect();
    post_ms.sort_by(f64::total_cmp);
    to_webhook_ms.sort_by(f64::total_cmp);

    // one nest at a time on an idle server: the round trip without queueing
    let mut idle_ms = Vec::new();
    for _ in 0..env_usize("KERF_LOAD_IDLE_N", 10) {
        let t = Instant::now();
        let a = api.post_json("/v1/nesting/parametric", &body).await;
        let id = a.body["RequestId"].as_str().unwrap().to_string();
        receiver.wait_final(&id, Duration::from_secs(60)).await;
        let arrived = receiver
            .for_job(&id)
            .iter()
            .find(|d| d.body["Status"]["NestingStatus"] == 1)
            .unwrap()
            .at;
        idle_ms.push((arrived - t).as_secs_f64() * 1000.0);
    }
    idle_ms.sort_by(f64::total_cmp);

    println!("kerf service load: {n} trivial nests, {concurrency} concurrent clients, SQLite, HTTPS webhooks on loopback");
    println!("{:<40} {:>12}", "metric", "value");
    println!(
        "{:<40} {:>12.1}",
        "submissions per second (POST)",
        n as f64 / submit_s
    );
    println!(
        "{:<40} {:>12.1}",
        "POST /v1/nesting p50 ms",
        quantile(&post_ms, 0.5)
    );
    println!(
        "{:<40} {:>12.1}",
        "POST /v1/nesting p99 ms",
        quantile(&post_ms, 0.99)
    );
    println!(
        "{:<40} {:>12}",
        "final webhooks received",
        format!("{}/{n}", to_webhook_ms.len())
    );
    println!(
        "{:<40} {:>12.1}",
        "submission -> final webhook p50 ms",
        quantile(&to_webhook_ms, 0.5)
    );
    println!(
        "{:<40} {:>12.1}",
        "submission -> final webhook p99 ms",
        quantile(&to_webhook_ms, 0.99)
    );
    println!(
        "{:<40} {:>12.1}",
        "nests completed per second (end to end)",
        to_webhook_ms.len() as f64 / all_s
    );
    println!(
        "{:<40} {:>12.1}",
        "idle server: submission -> webhook p50 ms",
        quantile(&idle_ms, 0.5)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
