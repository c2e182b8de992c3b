//! `kerf bench hub`: the live hub under load, through a real `kerf serve`. It opens many idle
//! hub connections (negotiate, WebSocket, handshake, pings every 10 s like a client), then
//! subscribers that each start a held nest and wait for its final result, while probe
//! connections time invocation round trips (a call and its completion: the hub's ping-pong,
//! as SignalR's own pings have no answer). It reports the server's resident memory per idle
//! connection, the round trip's p50 and p99, and whether every subscriber got its final
//! result.
//!
//! The client is a minimal SignalR JSON-protocol client (the official one is JavaScript; the
//! conformance test runs that one): enough for negotiate, handshake, invocations and reading
//! events.

use super::served::Served;
use anyhow::{anyhow, bail, Context, Result};
use base64::Engine;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

const RS: char = '\u{1e}';
/// Idle clients ping this often (the server closes a connection silent for 30 s).
const CLIENT_PING: Duration = Duration::from_secs(10);

pub struct Options {
    pub idle: usize,
    pub subscribers: usize,
    pub probes: usize,
    /// MaxRunTimeSeconds of the subscribers' nests.
    pub nest_seconds: f64,
    /// Job slots of the server.
    pub slots: usize,
}

pub struct Measured {
    pub idle: usize,
    pub rss_before: u64,
    pub rss_after: u64,
    pub probes: usize,
    pub round_trips_ms: Vec<f64>,
    pub nests: usize,
    pub finals: usize,
    pub seconds: f64,
}

/// One client connection.
struct Client {
    ws: WebSocketStream<TcpStream>,
    buffer: String,
    next_id: u64,
}

impl Client {
    async fn connect(http: &reqwest::Client, base: &str, key: &str) -> Result<Client> {
        let n: Value = http
            .post(format!("{base}/hubs/nesting/negotiate?negotiateVersion=1"))
            .bearer_auth(key)
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        let token = n["connectionToken"]
            .as_str()
            .ok_or_else(|| anyhow!("negotiate gave no connectionToken: {n}"))?;
        let host = base.trim_start_matches("http://");
        let stream = TcpStream::connect(host).await?;
        let url = format!("ws://{host}/hubs/nesting?id={token}&access_token={key}");
        let (ws, _) = tokio_tungstenite::client_async(url, stream).await?;
        let mut c = Client {
            ws,
            buffer: String::new(),
            next_id: 0,
        };
        c.send(&format!("{{\"protocol\":\"json\",\"version\":1}}{RS}"))
            .await?;
        let hello = c.record().await?;
        if hello != json!({}) {
            bail!("handshake refused: {hello}");
        }
        Ok(c)
    }

    async fn send(&mut self, text: &str) -> Result<()> {
        self.ws.send(Message::Text(text.to_string().into())).await?;
        Ok(())
    }

    /// Sends an invocation; its id.
    async fn invoke(&mut self, target: &str, arguments: Value) -> Result<String> {
        self.next_id += 1;
        let id = self.next_id.to_string();
        let m = json!({"type": 1, "invocationId": id, "target": target, "arguments": arguments});
        self.send(&format!("{m}{RS}")).await?;
        Ok(id)
    }

    async fn ping(&mut self) -> Result<()> {
        self.send(&format!("{{\"type\":6}}{RS}")).await
    }

    /// The next record from the server.
    async fn record(&mut self) -> Result<Value> {
        loop {
            if let Some(end) = self.buffer.find(RS) {
                let record: String = self.buffer.drain(..end + RS.len_utf8()).collect();
                return Ok(serde_json::from_str(&record[..end])?);
            }
            match self.ws.next().await {
                Some(Ok(Message::Text(t))) => self.buffer.push_str(t.as_str()),
                Some(Ok(Message::Close(_))) | None => bail!("the server closed the connection"),
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e.into()),
            }
        }
    }

    /// Waits for the completion of invocation `id`, skipping other records.
    async fn completion(&mut self, id: &str) -> Result<Value> {
        loop {
            let r = self.record().await?;
            if r["type"] == 3 && r["invocationId"] == id {
                return Ok(r);
            }
        }
    }
}

/// An idle client: answers nothing, reads what comes, pings every CLIENT_PING, until `stop`.
async fn idle(mut c: Client, mut stop: tokio::sync::watch::Receiver<bool>) -> Result<()> {
    let mut tick = tokio::time::interval(CLIENT_PING);
    loop {
        tokio::select! {
            _ = tick.tick() => c.ping().await?,
            r = c.record() => { r?; }
            _ = stop.changed() => return Ok(()),
        }
    }
}

fn held_nest(seconds: f64) -> Value {
    let part = |v: Value| {
        base64::engine::general_purpose::STANDARD.encode(serde_json::to_vec(&v).unwrap_or_default())
    };
    json!({
        "AutomaticallyStartNesting": false,
        "Request": {
            "Parts": [
                {"Identifier": "plate", "EncodedPartJson": part(json!({"Shape": "Rectangle", "Width": 120, "Height": 60})), "Quantity": 4},
                {"Identifier": "ring", "EncodedPartJson": part(json!({"Shape": "Ring", "OuterDiameter": 80, "InnerDiameter": 50})), "Quantity": 4},
            ],
            "Sheets": [{"Identifier": "S", "RectangularXDimension": 500, "RectangularYDimension": 300}],
            "NestSettings": {"MaxRunTimeSeconds": seconds, "PartSpacing": 3, "MaximumCPUCount": 1},
        }
    })
}

pub fn run(o: &Options) -> Result<Measured> {
    let slots = o.slots.to_string();
    let served = Served::start(
        "hub",
        &[
            "--workers",
            &slots,
            "--compute",
            "cpu",
            "--key-requests-per-minute",
            "0",
            "--max-queued-per-key",
            "100000",
        ],
    )?;
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(measure(o, &served))
}

async fn measure(o: &Options, served: &Served) -> Result<Measured> {
    let http = reqwest::Client::new();
    let (base, key) = (served.base.as_str(), served.admin.as_str());
    // the nests, held until their subscribers start them
    let mut nests = Vec::new();
    for _ in 0..o.subscribers {
        let r: Value = http
            .post(format!("{base}/v1/nesting/parametric"))
            .bearer_auth(key)
            .header("Accept", "application/json")
            .json(&held_nest(o.nest_seconds))
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        nests.push(
            r["RequestId"]
                .as_str()
                .ok_or_else(|| anyhow!("no RequestId: {r}"))?
                .to_string(),
        );
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss_before = served.resident_bytes().unwrap_or(0);
    // the idle connections, opened 100 at a time
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut idlers = tokio::task::JoinSet::new();
    let mut opened = 0;
    while opened < o.idle {
        let batch = (o.idle - opened).min(100);
        let mut connecting = tokio::task::JoinSet::new();
        for _ in 0..batch {
            let (http, base, key) = (http.clone(), base.to_string(), key.to_string());
            connecting.spawn(async move { Client::connect(&http, &base, &key).await });
        }
        while let Some(c) = connecting.join_next().await {
            let c = c?.with_context(|| format!("opening idle connection {}", opened + 1))?;
            idlers.spawn(idle(c, stop_rx.clone()));
            opened += 1;
        }
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let rss_after = served.resident_bytes().unwrap_or(0);

    // probes: invocation round trips, every 200 ms each, while the subscribers run
    let (probe_stop_tx, probe_stop_rx) = tokio::sync::watch::channel(false);
    let mut probes = tokio::task::JoinSet::new();
    for _ in 0..o.probes {
        let mut c = Client::connect(&http, base, key).await?;
        let mut stop = probe_stop_rx.clone();
        probes.spawn(async move {
            let mut samples = Vec::new();
            loop {
                let t = Instant::now();
                let id = c.invoke("SubscribeToNest", json!(["no-such-job"])).await?;
                let done = c.completion(&id).await?;
                if done.get("error").is_none() {
                    bail!("a probe's call was answered without the expected error: {done}");
                }
                samples.push(t.elapsed().as_secs_f64() * 1000.0);
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(200)) => {}
                    _ = stop.changed() => return Ok::<_, anyhow::Error>(samples),
                }
            }
        });
    }

    // subscribers: each starts its nest and waits for the final result
    let started = Instant::now();
    let limit = Duration::from_secs_f64(
        120.0 + 3.0 * o.subscribers as f64 * (o.nest_seconds + 1.0) / o.slots as f64,
    );
    let mut subscribers = tokio::task::JoinSet::new();
    for id in nests.iter().cloned() {
        let mut c = Client::connect(&http, base, key).await?;
        subscribers.spawn(async move {
            let call = c.invoke("StartNesting", json!([id])).await?;
            let mut answered = false;
            let mut tick = tokio::time::interval(CLIENT_PING);
            loop {
                let r = tokio::select! {
                    r = c.record() => r?,
                    _ = tick.tick() => { c.ping().await?; continue; }
                };
                if r["type"] == 3 && r["invocationId"] == call.as_str() {
                    if let Some(e) = r.get("error") {
                        bail!("StartNesting {id}: {e}");
                    }
                    answered = true;
                }
                if r["type"] == 1
                    && r["target"] == "NestingResult"
                    && r["arguments"][0]["RequestId"] == id.as_str()
                    && r["arguments"][0]["Status"]["NestingStatus"] == 1
                {
                    return Ok::<_, anyhow::Error>(answered);
                }
            }
        });
    }
    let mut finals = 0;
    let waited = tokio::time::timeout(limit, async {
        while let Some(r) = subscribers.join_next().await {
            match r {
                Ok(Ok(true)) => finals += 1,
                Ok(Ok(false)) => {}
                Ok(Err(e)) => eprintln!("a subscriber failed: {e}"),
                Err(e) => eprintln!("a subscriber crashed: {e}"),
            }
        }
    })
    .await;
    if waited.is_err() {
        eprintln!("gave up waiting after {} s", limit.as_secs());
    }
    let seconds = started.elapsed().as_secs_f64();
    let _ = probe_stop_tx.send(true);
    let mut round_trips_ms = Vec::new();
    while let Some(r) = probes.join_next().await {
        round_trips_ms.extend(r??);
    }
    // the idle connections must all still be there
    let _ = stop_tx.send(true);
    let mut idle_ok = 0;
    while let Some(r) = idlers.join_next().await {
        match r {
            Ok(Ok(())) => idle_ok += 1,
            Ok(Err(e)) => eprintln!("an idle connection ended early: {e}"),
            Err(e) => eprintln!("an idle connection crashed: {e}"),
        }
    }
    round_trips_ms.sort_by(f64::total_cmp);
    Ok(Measured {
        idle: idle_ok,
        rss_before,
        rss_after,
        probes: round_trips_ms.len(),
        round_trips_ms,
        nests: nests.len(),
        finals,
        seconds,
    })
}
