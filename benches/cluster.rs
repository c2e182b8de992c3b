//! Scale-out benchmark (issue 19), in two parts that each print a table.
//!
//! **chaos**: 2 front ends (`kerf serve --no-workers`) and 3 workers (`kerf worker`) on one
//! throwaway PostgreSQL. KERF_CHAOS_NESTS (500) small nests are submitted through both front
//! ends while, every KERF_CHAOS_KILL_EVERY_S (3) seconds, a node picked at random is killed
//! with SIGKILL and started again, and PostgreSQL itself is restarted once, halfway through
//! the submissions; one worker is frozen (SIGSTOP) for longer than a lease, then thawed, to
//! find whether, alive, it writes for jobs it lost. The kills go on until every job has ended. Then it counts, from the
//! database, the webhook receiver and the nodes' logs: jobs per state (a Failed one would need a
//! reason that is the input's), final results per job, final webhooks delivered, deliveries
//! still owed, writes refused because the writer had lost its lease, and results written by
//! an attempt that did not hold the job (must be 0).
//!
//! **throughput**: trivial nests end to end with 1, 2 and 3 workers (each `--workers 2`) on
//! PostgreSQL beside one `kerf serve` (`--workers 2`) on an SQLite file, and the latency of
//! POST /v1/nesting at KERF_RATE (200) requests a second, open loop, for KERF_RATE_SECONDS (5),
//! through the front ends (two on PostgreSQL, the one process on SQLite). One run, one table.
//!
//!     cargo bench --bench cluster                 # both
//!     cargo bench --bench cluster -- chaos        # or: throughput
//!
//! Needs Debian's `postgresql` (the cluster is started in a temporary directory, as with the
//! tests). Times on a shared machine are noisy: compare rows of one run, not runs.

#[path = "../tests/support/mod.rs"]
mod support;

#[path = "../tests/support/postgres.rs"]
mod postgres;

use kerf::bench::quantile;
use postgres::PgCluster;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};
use support::*;

fn main() {
    let which: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wants = |part: &str| which.is_empty() || which.iter().any(|w| w == part);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    if wants("chaos") {
        rt.block_on(chaos());
    }
    if wants("throughput") {
        rt.block_on(throughput());
    }
}

/// A small deterministic generator for the kill schedule (the same run each time).
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// POSTs `body` to `path` of the first front end that answers, trying each in turn until
/// `give_up`: the RequestId, or None when every try failed. A front end that was just killed
/// refuses the connection; PostgreSQL restarting makes a front end answer 500 for a moment.
async fn submit_somewhere(
    http: &reqwest::Client,
    bases: &RwLock<Vec<String>>,
    first: usize,
    key: &str,
    path: &str,
    body: &Value,
    give_up: Instant,
) -> Option<String> {
    let mut turn = first;
    while Instant::now() < give_up {
        let base = {
            let b = bases.read().unwrap();
            b[turn % b.len()].clone()
        };
        turn += 1;
        let sent = http
            .post(format!("{base}{path}"))
            .bearer_auth(key)
            .header("Accept", "application/json")
            .json(body)
            .timeout(Duration::from_secs(30))
            .send()
            .await;
        if let Ok(r) = sent {
            if r.status().is_success() {
                let v: Value = r.json().await.unwrap_or(Value::Null);
                if let Some(id) = v["RequestId"].as_str() {
                    return Some(id.to_string());
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    None
}

/// Submits every body in `bodies` to `path`, `in_flight` at a time, each through the first
/// front end that answers (`submit_somewhere`, for up to `patience`), counting each in `done`
/// as it ends: the RequestIds in order, None for a submission never answered.
async fn submit_all(
    bases: &RwLock<Vec<String>>,
    key: &str,
    path: &str,
    bodies: Vec<Value>,
    in_flight: usize,
    patience: Duration,
    done: &AtomicUsize,
) -> Vec<Option<String>> {
    let http = reqwest::Client::new();
    let gate = tokio::sync::Semaphore::new(in_flight);
    let submissions = bodies.iter().enumerate().map(|(i, body)| {
        let (http, gate) = (&http, &gate);
        async move {
            let _permit = gate.acquire().await.unwrap();
            let id =
                submit_somewhere(http, bases, i, key, path, body, Instant::now() + patience).await;
            done.fetch_add(1, Ordering::SeqCst);
            id
        }
    });
    futures_util::future::join_all(submissions).await
}

/// Rows of `sql` in database `kerf`, each split at `|`.
fn rows(pg: &PgCluster, sql: &str) -> Vec<Vec<String>> {
    pg.psql_in("kerf", sql)
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| l.split('|').map(str::to_string).collect())
        .collect()
}

fn count(pg: &PgCluster, sql: &str) -> i64 {
    pg.psql_in("kerf", sql).trim().parse().unwrap_or(-1)
}

/// Whether `sql` counts 0 now (false while the server restarts).
fn none_left(pg: &PgCluster, sql: &str) -> bool {
    pg.try_psql_in("kerf", sql)
        .is_ok_and(|out| out.trim() == "0")
}

/// Lines of the nodes' logs (every start's) in `dir` that contain `needle`.
fn log_lines(dir: &Path, needle: &str) -> usize {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with("server-"))
                .map(|e| {
                    std::fs::read_to_string(e.path())
                        .unwrap_or_default()
                        .matches(needle)
                        .count()
                })
                .sum()
        })
        .unwrap_or(0)
}

/// Longer than a lease (30 s) and the rescuer's period (5 s) together, so the frozen
/// worker's jobs are taken back and run elsewhere before it wakes.
const FROZEN_FOR: Duration = Duration::from_secs(45);

fn worker_args() -> [&'static str; 4] {
    ["--workers", "2", "--compute", "cpu"]
}

const FRONT_ARGS: [&str; 2] = ["--max-queued-per-key", "100000"];

/// A front end (`kerf serve --no-workers`) on `db`, delivering to `receiver`.
fn front_node(dir: &Path, db: &str, receiver: &Receiver) -> Server {
    Server::start_node(
        dir,
        db,
        &["serve", "--no-workers"],
        Some(receiver),
        &FRONT_ARGS,
    )
}

/// A worker node (`kerf worker`, two CPU job slots) on `db`, delivering to `receiver`.
fn worker_node(dir: &Path, db: &str, receiver: &Receiver) -> Server {
    Server::start_node(dir, db, &["worker"], Some(receiver), &worker_args())
}

async fn chaos() {
    let nests = env_usize("KERF_CHAOS_NESTS", 500);
    let kill_every = Duration::from_secs_f64(env_usize("KERF_CHAOS_KILL_EVERY_S", 3) as f64);
    let dir = temp_dir("chaos");
    let Some(pg) = PgCluster::start(&dir) else {
        eprintln!("chaos: PostgreSQL is not installed (Debian: postgresql)");
        return;
    };
    let pg = Arc::new(pg);
    let db = pg.create_database("kerf");
    let receiver = Receiver::start(&dir).await;
    let front = || front_node(&dir, &db, &receiver);
    let worker = || worker_node(&dir, &db, &receiver);
    let mut nodes: Vec<Server> = vec![front(), front(), worker(), worker(), worker()];
    let bases = Arc::new(RwLock::new(vec![
        nodes[0].base.clone(),
        nodes[1].base.clone(),
    ]));
    let key = create_key(&db, "Usage", 1000, None);

    // the chaos: a thread of its own, since restarting a node waits for it to be ready
    let submitted = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let thawed = Arc::new(AtomicBool::new(false));
    let chaos = {
        let (bases, submitted, stop, pg, thawed) = (
            bases.clone(),
            submitted.clone(),
            stop.clone(),
            pg.clone(),
            thawed.clone(),
        );
        std::thread::spawn(move || {
            let mut rng = SplitMix(19);
            let (mut kills, mut db_restarts) = ([0usize; 2], 0usize);
            // one worker frozen (SIGSTOP) past its leases' expiry, then thawed: alive, it
            // must notice it lost its jobs and write nothing for them
            let mut frozen: Option<(usize, Instant)> = None;
            let mut froze = false;
            let signal = |sig: &str, pid: u32| {
                let _ = std::process::Command::new("kill")
                    .args([sig, &pid.to_string()])
                    .status();
            };
            while !stop.load(Ordering::SeqCst) {
                std::thread::sleep(kill_every);
                if let Some((i, until)) = frozen {
                    if Instant::now() >= until {
                        signal("-CONT", nodes[i].pid().unwrap());
                        frozen = None;
                        thawed.store(true, Ordering::SeqCst);
                    }
                }
                if !froze && submitted.load(Ordering::SeqCst) >= nests / 4 {
                    let i = 2 + (rng.next() % 3) as usize;
                    signal("-STOP", nodes[i].pid().unwrap());
                    frozen = Some((i, Instant::now() + FROZEN_FOR));
                    froze = true;
                    continue;
                }
                if db_restarts == 0 && submitted.load(Ordering::SeqCst) >= nests / 2 {
                    pg.stop();
                    std::thread::sleep(Duration::from_secs(2));
                    pg.restart();
                    db_restarts += 1;
                    continue;
                }
                let i = (rng.next() % nodes.len() as u64) as usize;
                if frozen.is_some_and(|(f, _)| f == i) {
                    continue;
                }
                nodes[i].kill();
                nodes[i].restart();
                if i < 2 {
                    bases.write().unwrap()[i] = nodes[i].base.clone();
                    kills[0] += 1;
                } else {
                    kills[1] += 1;
                }
            }
            if let Some((i, _)) = frozen {
                signal("-CONT", nodes[i].pid().unwrap());
            }
            (nodes, kills, db_restarts, froze)
        })
    };

    // the submissions: 8 at a time, each through a front end that answers
    let started = Instant::now();
    let bodies = (0..nests)
        .map(|i| {
            dxf_request(
                &[("part_3.dxf", 2 + (i % 3) as u32)],
                (600.0, 400.0),
                Some(&format!("{}/chaos/{i}", receiver.url)),
                0.5,
                false,
            )
        })
        .collect();
    let answers = submit_all(
        &bases,
        &key,
        "/v1/nesting",
        bodies,
        8,
        Duration::from_secs(120),
        &submitted,
    )
    .await;
    let unanswered = answers.iter().filter(|a| a.is_none()).count();
    let ids: Vec<String> = answers.into_iter().flatten().collect();
    let submit_s = started.elapsed().as_secs_f64();

    // the kills go on while any job is unfinished and until the frozen worker has woken and
    // had time to find its leases lost (at most 20 minutes)
    let deadline = Instant::now() + Duration::from_secs(1200);
    while Instant::now() < deadline && !thawed.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    tokio::time::sleep(Duration::from_secs(10)).await;
    while Instant::now() < deadline
        && !none_left(
            &pg,
            "SELECT COUNT(*) FROM jobs WHERE state NOT IN ('Completed', 'Failed')",
        )
    {
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    stop.store(true, Ordering::SeqCst);
    let (mut nodes, kills, db_restarts, froze) = chaos.join().unwrap();
    // then the outbox drains, with every node up
    while Instant::now() < deadline
        && !none_left(
            &pg,
            "SELECT COUNT(*) FROM outbox WHERE delivered_at IS NULL AND gave_up = 0",
        )
    {
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let all_s = started.elapsed().as_secs_f64();

    let states: HashMap<String, i64> = rows(&pg, "SELECT state, COUNT(*) FROM jobs GROUP BY state")
        .into_iter()
        .map(|r| (r[0].clone(), r[1].parse().unwrap_or(0)))
        .collect();
    let failed_reasons = rows(
        &pg,
        "SELECT COALESCE(error_code, ''), COUNT(*) FROM jobs WHERE state = 'Failed' GROUP BY error_code",
    );
    let completed: HashSet<String> = rows(&pg, "SELECT id FROM jobs WHERE state = 'Completed'")
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    let not_one_result = count(
        &pg,
        "SELECT COUNT(*) FROM jobs j WHERE j.state = 'Completed' AND \
         (SELECT COUNT(*) FROM results r WHERE r.job_id = j.id) <> 1",
    );
    let result_not_the_jobs = count(
        &pg,
        "SELECT COUNT(*) FROM jobs j WHERE j.state = 'Completed' AND NOT EXISTS \
         (SELECT 1 FROM results r WHERE r.id = j.result_id AND r.job_id = j.id)",
    );
    let stale_writes = count(
        &pg,
        "SELECT COUNT(*) FROM results r JOIN jobs j ON j.id = r.job_id WHERE r.attempt <> j.attempt",
    );
    let reruns = count(&pg, "SELECT COUNT(*) FROM jobs WHERE attempt > 1");
    let owed = count(
        &pg,
        "SELECT COUNT(*) FROM outbox WHERE delivered_at IS NULL",
    );
    let delivered: HashSet<String> = receiver
        .all()
        .into_iter()
        .filter(|d| d.answered == 200 && d.body["Status"]["NestingStatus"] == 1)
        .filter_map(|d| d.body["RequestId"].as_str().map(str::to_string))
        .collect();
    let finals_missing = completed
        .iter()
        .filter(|id| !delivered.contains(*id))
        .count();
    let refused = log_lines(&dir, "lease lost before the job's end was written");
    let cancelled = log_lines(&dir, "lease lost; stopping the work");
    let handed_over = log_lines(&dir, "abandoned jobs taken back");

    let row = |what: &str, v: String| println!("{what:<58} {v:>10}");
    println!(
        "kerf chaos: 2 front ends + 3 workers (--workers 2, cpu) on one PostgreSQL, {nests} nests, a SIGKILL every {:.0} s",
        kill_every.as_secs_f64()
    );
    println!("{:<58} {:>10}", "count", "value");
    row(
        "submissions accepted (RequestId returned)",
        ids.len().to_string(),
    );
    row(
        "submissions never answered (120 s of retries)",
        unanswered.to_string(),
    );
    row(
        "jobs in the database",
        states.values().sum::<i64>().to_string(),
    );
    for s in ["Completed", "Failed", "Queued", "Running", "Held"] {
        row(
            &format!("  {s}"),
            states.get(s).copied().unwrap_or(0).to_string(),
        );
    }
    for r in &failed_reasons {
        row(&format!("  Failed, reason {}", r[0]), r[1].clone());
    }
    row(
        "front ends killed (SIGKILL) and restarted",
        kills[0].to_string(),
    );
    row(
        "workers killed (SIGKILL) and restarted",
        kills[1].to_string(),
    );
    row("PostgreSQL restarts", db_restarts.to_string());
    row(
        &format!(
            "workers frozen (SIGSTOP) for {} s, then thawed",
            FROZEN_FOR.as_secs()
        ),
        usize::from(froze).to_string(),
    );
    row(
        "runs stopped on waking to a lost lease (logs)",
        cancelled.to_string(),
    );
    row("jobs run more than once (attempt > 1)", reruns.to_string());
    row(
        "take-backs of expired leases (log lines)",
        handed_over.to_string(),
    );
    row(
        "Completed jobs without exactly one result",
        not_one_result.to_string(),
    );
    row(
        "Completed jobs whose result is not theirs",
        result_not_the_jobs.to_string(),
    );
    row(
        "results written by an attempt not holding the job",
        stale_writes.to_string(),
    );
    row(
        "writes refused: the writer had lost its lease (logs)",
        refused.to_string(),
    );
    row(
        "Completed jobs without a final webhook answered 200",
        finals_missing.to_string(),
    );
    row(
        "deliveries never delivered (given up or owed)",
        owed.to_string(),
    );
    row(
        "seconds to submit / to the last delivery",
        format!("{submit_s:.0} / {all_s:.0}"),
    );
    let lost = unanswered
        + states.get("Queued").copied().unwrap_or(0) as usize
        + states.get("Running").copied().unwrap_or(0) as usize
        + not_one_result as usize
        + result_not_the_jobs as usize
        + stale_writes as usize
        + finals_missing
        + owed as usize;
    println!(
        "{}",
        if lost == 0 && failed_reasons.is_empty() {
            "verdict: nothing lost, nothing written twice"
        } else {
            "verdict: FAILED (see the counts above)"
        }
    );
    for n in nodes.iter_mut() {
        n.kill();
    }
    drop(nodes);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Nests per second end to end: `n` trivial nests submitted 16 at a time through `bases` in
/// turn, from the first POST to the last of their final webhooks.
async fn nests_per_second(
    receiver: &Receiver,
    bases: &[String],
    key: &str,
    n: usize,
    tag: &str,
) -> f64 {
    let bases = RwLock::new(bases.to_vec());
    let body = trivial_nest(&format!("{}/tp/{tag}", receiver.url));
    let started = Instant::now();
    let ids: HashSet<String> = submit_all(
        &bases,
        key,
        "/v1/nesting/parametric",
        vec![body; n],
        16,
        Duration::from_secs(60),
        &AtomicUsize::new(0),
    )
    .await
    .into_iter()
    .flatten()
    .collect();
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        let finals: HashSet<String> = receiver
            .all()
            .into_iter()
            .filter(|d| d.answered == 200 && d.body["Status"]["NestingStatus"] == 1)
            .filter_map(|d| d.body["RequestId"].as_str().map(str::to_string))
            .filter(|id| ids.contains(id))
            .collect();
        if finals.len() == ids.len() || Instant::now() > deadline {
            return finals.len() as f64 / started.elapsed().as_secs_f64();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// POST /v1/nesting/parametric latency, open loop: `rate` requests a second for `seconds`,
/// through `bases` in turn. (p50 ms, p99 ms, requests not answered 200).
async fn post_latency(
    bases: &[String],
    key: &str,
    rate: usize,
    seconds: usize,
    webhook: &str,
) -> (f64, f64, usize) {
    let http = reqwest::Client::new();
    let body = Arc::new(trivial_nest(webhook));
    let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / rate.max(1) as f64));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let mut tasks = Vec::new();
    for i in 0..rate * seconds {
        tick.tick().await;
        let (http, body, key) = (http.clone(), body.clone(), key.to_string());
        let url = format!("{}/v1/nesting/parametric", bases[i % bases.len()]);
        tasks.push(tokio::spawn(async move {
            let t = Instant::now();
            let ok = http
                .post(url)
                .bearer_auth(key)
                .header("Accept", "application/json")
                .json(&*body)
                .send()
                .await
                .is_ok_and(|r| r.status().is_success());
            (t.elapsed().as_secs_f64() * 1000.0, ok)
        }));
    }
    let mut ms = Vec::new();
    let mut failed = 0;
    for t in tasks {
        let (took, ok) = t.await.unwrap();
        ms.push(took);
        failed += usize::from(!ok);
    }
    ms.sort_by(f64::total_cmp);
    (quantile(&ms, 0.5), quantile(&ms, 0.99), failed)
}

async fn throughput() {
    let n = env_usize("KERF_THROUGHPUT_NESTS", 200);
    let rate = env_usize("KERF_RATE", 200);
    let seconds = env_usize("KERF_RATE_SECONDS", 5);
    let dir = temp_dir("throughput");
    let Some(pg) = PgCluster::start(&dir) else {
        eprintln!("throughput: PostgreSQL is not installed (Debian: postgresql)");
        return;
    };
    let receiver = Receiver::start(&dir).await;
    let mut table = Vec::new();

    // the embedded default: one process on an SQLite file
    {
        let here = temp_dir("throughput-sqlite");
        let mut args = worker_args().to_vec();
        args.extend(FRONT_ARGS);
        let server = Server::start(&here, Some(&receiver), &args);
        let key = server.create_key("Usage", 1000, None);
        let bases = [server.base.clone()];
        let nps = nests_per_second(&receiver, &bases, &key, n, "sqlite").await;
        let hook = format!("{}/rate/sqlite", receiver.url);
        let (p50, p99, failed) = post_latency(&bases, &key, rate, seconds, &hook).await;
        table.push(("SQLite, kerf serve", 1, nps, p50, p99, failed));
        drop(server);
        let _ = std::fs::remove_dir_all(&here);
    }
    // PostgreSQL: two front ends and 1, 2, 3 workers, each on a fresh database
    for workers in 1..=3 {
        let db = pg.create_database(&format!("kerf_w{workers}"));
        let mut nodes: Vec<Server> = (0..2).map(|_| front_node(&dir, &db, &receiver)).collect();
        nodes.extend((0..workers).map(|_| worker_node(&dir, &db, &receiver)));
        let key = create_key(&db, "Usage", 1000, None);
        let bases = [nodes[0].base.clone(), nodes[1].base.clone()];
        let tag = format!("pg{workers}");
        let nps = nests_per_second(&receiver, &bases, &key, n, &tag).await;
        let hook = format!("{}/rate/{tag}", receiver.url);
        let (p50, p99, failed) = post_latency(&bases, &key, rate, seconds, &hook).await;
        table.push(("PostgreSQL, 2 front ends", workers, nps, p50, p99, failed));
    }

    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    println!(
        "kerf throughput: {n} trivial nests end to end (16 in flight), then POST at {rate}/s for {seconds} s; every worker --workers 2, cpu; {cores} cores"
    );
    println!(
        "{:<26} {:>8} {:>10} {:>12} {:>12} {:>8}",
        "store", "workers", "nests/s", "POST p50 ms", "POST p99 ms", "non-200"
    );
    for (store, workers, nps, p50, p99, failed) in table {
        println!("{store:<26} {workers:>8} {nps:>10.1} {p50:>12.1} {p99:>12.1} {failed:>8}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
