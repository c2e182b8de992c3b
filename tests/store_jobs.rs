//! The durable job queue on a real SQLite file: claims, leases, fencing, the rescuer, orphan
//! recovery, the outbox written with completion, and durability across reopening the file.

use kerf::store::*;
use std::path::PathBuf;

fn temp_db(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kerf-store-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("kerf.db")
}

fn job<'a>(id: &'a str, held: bool) -> NewJob<'a> {
    NewJob {
        id,
        api_key_id: "key1",
        kind: "nest2d",
        request: "{}",
        webhook_uri: Some("https://example.test/hook"),
        held,
    }
}

#[tokio::test]
async fn claim_finish_and_outbox_commit_together() {
    let store = Store::open_sqlite(&temp_db("finish")).await.unwrap();
    store.enqueue(&job("j1", false), 1000).await.unwrap();
    assert_eq!(
        store.status("j1").await.unwrap().unwrap().state,
        JobState::Queued
    );
    let c = store
        .claim("worker-a", 10_000, 2000)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((c.id.as_str(), c.attempt), ("j1", 1));
    assert!(
        store
            .claim("worker-b", 10_000, 2000)
            .await
            .unwrap()
            .is_none(),
        "one job, one claim"
    );
    let body = r#"{"RequestId":"j1","Status":{"NestingStatus":1}}"#;
    let ok = store
        .finish(
            "j1",
            1,
            Outcome::Completed {
                result_id: "r1",
                result: "{}",
            },
            &[Delivery {
                uri: "https://example.test/hook",
                body,
            }],
            3000,
        )
        .await
        .unwrap();
    assert!(ok);
    let s = store.status("j1").await.unwrap().unwrap();
    assert_eq!(
        (s.state, s.result_id.as_deref(), s.completed_at),
        (JobState::Completed, Some("r1"), Some(3000))
    );
    let due = store.due_deliveries(3000, 10).await.unwrap();
    assert_eq!(due.len(), 1);
    assert_eq!(due[0].body, body);
    store.mark_delivered(due[0].id, 200, 3100).await.unwrap();
    assert!(store.due_deliveries(4000, 10).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_worker_whose_lease_was_taken_over_cannot_write() {
    let store = Store::open_sqlite(&temp_db("fence")).await.unwrap();
    store.enqueue(&job("j1", false), 0).await.unwrap();
    let first = store.claim("a", 1_000, 0).await.unwrap().unwrap();
    // the lease runs out without heartbeats; the rescuer hands the job back to the queue
    assert_eq!(store.rescue_expired(3, 5_000).await.unwrap(), (1, 0));
    let second = store.claim("b", 1_000, 5_000).await.unwrap().unwrap();
    assert_eq!(second.attempt, first.attempt + 1);
    // the first worker comes back: neither its heartbeat nor its result is accepted
    assert!(!store
        .heartbeat("j1", first.attempt, 1_000, 5_100)
        .await
        .unwrap());
    let stale = store.finish(
        "j1",
        first.attempt,
        Outcome::Completed {
            result_id: "old",
            result: "{}",
        },
        &[Delivery {
            uri: "u",
            body: "stale",
        }],
        5_200,
    );
    assert!(!stale.await.unwrap());
    assert!(
        store.due_deliveries(i64::MAX, 10).await.unwrap().is_empty(),
        "a rejected finish writes no delivery"
    );
    assert!(store
        .heartbeat("j1", second.attempt, 1_000, 5_300)
        .await
        .unwrap());
    assert!(store
        .finish(
            "j1",
            second.attempt,
            Outcome::Completed {
                result_id: "new",
                result: "{}"
            },
            &[],
            5_400
        )
        .await
        .unwrap());
    assert_eq!(
        store
            .status("j1")
            .await
            .unwrap()
            .unwrap()
            .result_id
            .as_deref(),
        Some("new")
    );
}

#[tokio::test]
async fn heartbeats_keep_the_lease_and_repeated_interruptions_fail_the_job() {
    let store = Store::open_sqlite(&temp_db("rescue")).await.unwrap();
    store.enqueue(&job("j1", false), 0).await.unwrap();
    let c = store.claim("a", 1_000, 0).await.unwrap().unwrap();
    assert!(store.heartbeat("j1", c.attempt, 1_000, 900).await.unwrap());
    assert_eq!(
        store.rescue_expired(3, 1_500).await.unwrap(),
        (0, 0),
        "the heartbeat extended the lease to 1900"
    );
    for k in 2..=3 {
        assert_eq!(store.rescue_expired(3, 10_000 * k).await.unwrap(), (1, 0));
        assert_eq!(
            store
                .claim("a", 1_000, 10_000 * k)
                .await
                .unwrap()
                .unwrap()
                .attempt,
            k
        );
    }
    assert_eq!(store.rescue_expired(3, 100_000).await.unwrap(), (0, 1));
    let s = store.status("j1").await.unwrap().unwrap();
    assert_eq!(s.state, JobState::Failed);
    assert!(s.error.unwrap().contains("interrupted 3 times"));
}

#[tokio::test]
async fn concurrent_claims_never_share_a_job() {
    let store = Store::open_sqlite(&temp_db("race")).await.unwrap();
    for i in 0..20 {
        store
            .enqueue(&job(&format!("j{i:02}"), false), i)
            .await
            .unwrap();
    }
    let mut handles = Vec::new();
    for w in 0..8 {
        let s = store.clone();
        handles.push(tokio::spawn(async move {
            let mut got = Vec::new();
            while let Some(c) = s.claim(&format!("w{w}"), 60_000, 100).await.unwrap() {
                got.push(c.id);
            }
            got
        }));
    }
    let mut all: Vec<String> = Vec::new();
    for h in handles {
        all.extend(h.await.unwrap());
    }
    all.sort();
    let before = all.len();
    all.dedup();
    assert_eq!(
        (before, all.len()),
        (20, 20),
        "every job claimed exactly once"
    );
}

#[tokio::test]
async fn held_jobs_wait_and_orphans_survive_a_restart() {
    let path = temp_db("restart");
    {
        let store = Store::open_sqlite(&path).await.unwrap();
        store.enqueue(&job("held", true), 0).await.unwrap();
        store.enqueue(&job("run", false), 1).await.unwrap();
        assert_eq!(
            store.claim("a", 60_000, 10).await.unwrap().unwrap().id,
            "run"
        );
        assert!(
            store.claim("a", 60_000, 10).await.unwrap().is_none(),
            "held jobs are not claimed"
        );
        // the process dies here with "run" Running and "held" Held
    }
    let store = Store::open_sqlite(&path).await.unwrap();
    assert_eq!(
        store.status("run").await.unwrap().unwrap().state,
        JobState::Running,
        "the row survived"
    );
    assert_eq!(store.recover_orphans().await.unwrap(), 1);
    let again = store.claim("b", 60_000, 20).await.unwrap().unwrap();
    assert_eq!((again.id.as_str(), again.attempt), ("run", 2));
    assert!(store.release_held("held").await.unwrap());
    assert!(!store.release_held("held").await.unwrap(), "released once");
    assert_eq!(
        store.claim("b", 60_000, 30).await.unwrap().unwrap().id,
        "held"
    );
}

#[tokio::test]
async fn failed_deliveries_retry_then_give_up() {
    let store = Store::open_sqlite(&temp_db("outbox")).await.unwrap();
    store.enqueue(&job("j1", false), 0).await.unwrap();
    let c = store.claim("a", 60_000, 0).await.unwrap().unwrap();
    store
        .finish(
            "j1",
            c.attempt,
            Outcome::Failed {
                error: "bad geometry",
            },
            &[Delivery {
                uri: "https://x.test/h",
                body: "{}",
            }],
            10,
        )
        .await
        .unwrap();
    let d = &store.due_deliveries(10, 5).await.unwrap()[0];
    store
        .mark_attempt_failed(d.id, Some(500), "HTTP 500", Some(5_010))
        .await
        .unwrap();
    assert!(
        store.due_deliveries(5_000, 5).await.unwrap().is_empty(),
        "not due before its retry time"
    );
    let d = &store.due_deliveries(5_010, 5).await.unwrap()[0];
    assert_eq!(d.attempts, 1);
    store
        .mark_attempt_failed(d.id, None, "connection refused", None)
        .await
        .unwrap();
    assert!(
        store.due_deliveries(i64::MAX, 5).await.unwrap().is_empty(),
        "gave up"
    );
    assert_eq!(
        store.status("j1").await.unwrap().unwrap().error.as_deref(),
        Some("bad geometry")
    );
}
