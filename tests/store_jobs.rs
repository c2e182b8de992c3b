//! The durable job queue: claims, leases, fencing, the rescuer, orphan recovery, the outbox
//! written with completion, and durability across reopening the store. Every case runs on
//! both stores (`sqlite::` on a real SQLite file, `postgres::` on a throwaway PostgreSQL
//! cluster): one body, two databases, so the two cannot drift.

use kerf::store::*;

mod support;

#[path = "support/postgres.rs"]
mod postgres;

#[path = "support/stores.rs"]
mod stores;

/// The Error delivery body `take_back` writes for a job it fails.
fn error_body(id: &str, _kind: &str, _request: &str, error: &str) -> (String, &'static str) {
    (
        format!("{{\"RequestId\":\"{id}\",\"Error\":\"{error}\"}}"),
        JSON,
    )
}

/// A Usage key that never expires, of `account`.
fn usage_key(account: i64, reference: &str, parallelism: i64) -> NewKey {
    NewKey {
        account_id: account,
        key_type: KeyType::Usage,
        reference: reference.into(),
        parallelism,
        expires_at: None,
        is_trial: false,
        email: String::new(),
    }
}

fn result(id: &str) -> ResultRecord<'_> {
    ResultRecord {
        id,
        status: "{}",
        report: "{}",
        layout: "{}",
    }
}

fn job<'a>(id: &'a str, held: bool) -> NewJob<'a> {
    NewJob {
        id,
        api_key_id: "key1",
        kind: "nest2d",
        request: "{}",
        webhook_uri: Some("https://example.test/hook"),
        held,
        reserved_ms: 0,
        size: 0,
    }
}

async fn claim_finish_and_outbox_commit_together(db: String) {
    let store = Store::open(&db).await.unwrap();
    store.enqueue(&job("j1", false), 1000).await.unwrap();
    assert_eq!(
        store.status("j1").await.unwrap().unwrap().state,
        JobState::Queued
    );
    let c = store
        .claim(Lane::Nests(NestSizes::ANY), "worker-a", 10_000, 2000)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((c.id.as_str(), c.attempt), ("j1", 1));
    assert!(
        store
            .claim(Lane::Nests(NestSizes::ANY), "worker-b", 10_000, 2000)
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
            Outcome::Completed(result("r1")),
            &[Delivery {
                uri: "https://example.test/hook",
                body,
                content_type: JSON,
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

async fn a_worker_whose_lease_was_taken_over_cannot_write(db: String) {
    let store = Store::open(&db).await.unwrap();
    store.enqueue(&job("j1", false), 0).await.unwrap();
    let first = store
        .claim(Lane::Nests(NestSizes::ANY), "a", 1_000, 0)
        .await
        .unwrap()
        .unwrap();
    // the lease runs out without heartbeats; the rescuer hands the job back to the queue
    assert_eq!(
        store
            .take_back(Lost::Expired, 3, 5_000, error_body)
            .await
            .unwrap(),
        (1, 0)
    );
    let second = store
        .claim(Lane::Nests(NestSizes::ANY), "b", 1_000, 5_000)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(second.attempt, first.attempt + 1);
    // the first worker comes back: neither its heartbeat nor its result is accepted
    assert_eq!(
        store
            .heartbeat("j1", first.attempt, 1_000, 5_100)
            .await
            .unwrap(),
        Heartbeat::Lost
    );
    let stale = store.finish(
        "j1",
        first.attempt,
        Outcome::Completed(result("old")),
        &[Delivery {
            uri: "u",
            body: "stale",
            content_type: JSON,
        }],
        5_200,
    );
    assert!(!stale.await.unwrap());
    assert!(
        store.due_deliveries(i64::MAX, 10).await.unwrap().is_empty(),
        "a rejected finish writes no delivery"
    );
    assert_eq!(
        store
            .heartbeat("j1", second.attempt, 1_000, 5_300)
            .await
            .unwrap(),
        Heartbeat::Held
    );
    assert!(store
        .finish(
            "j1",
            second.attempt,
            Outcome::Completed(result("new")),
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

async fn heartbeats_keep_the_lease_and_repeated_interruptions_fail_the_job(db: String) {
    let store = Store::open(&db).await.unwrap();
    store.enqueue(&job("j1", false), 0).await.unwrap();
    let c = store
        .claim(Lane::Nests(NestSizes::ANY), "a", 1_000, 0)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        store.heartbeat("j1", c.attempt, 1_000, 900).await.unwrap(),
        Heartbeat::Held
    );
    assert_eq!(
        store
            .take_back(Lost::Expired, 3, 1_500, error_body)
            .await
            .unwrap(),
        (0, 0),
        "the heartbeat extended the lease to 1900"
    );
    for k in 2..=3 {
        assert_eq!(
            store
                .take_back(Lost::Expired, 3, 10_000 * k, error_body)
                .await
                .unwrap(),
            (1, 0)
        );
        assert_eq!(
            store
                .claim(Lane::Nests(NestSizes::ANY), "a", 1_000, 10_000 * k)
                .await
                .unwrap()
                .unwrap()
                .attempt,
            k
        );
    }
    assert_eq!(
        store
            .take_back(Lost::Expired, 3, 100_000, error_body)
            .await
            .unwrap(),
        (0, 1)
    );
    let s = store.status("j1").await.unwrap().unwrap();
    assert_eq!(s.state, JobState::Failed);
    assert!(s.error.unwrap().contains("interrupted 3 times"));
}

async fn concurrent_claims_never_share_a_job(db: String) {
    let store = Store::open(&db).await.unwrap();
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
            while let Some(c) = s
                .claim(Lane::Nests(NestSizes::ANY), &format!("w{w}"), 60_000, 100)
                .await
                .unwrap()
            {
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

async fn held_jobs_wait_and_orphans_survive_a_restart(db: String) {
    {
        let store = Store::open(&db).await.unwrap();
        store.enqueue(&job("held", true), 0).await.unwrap();
        store.enqueue(&job("run", false), 1).await.unwrap();
        assert_eq!(
            store
                .claim(Lane::Nests(NestSizes::ANY), "a", 60_000, 10)
                .await
                .unwrap()
                .unwrap()
                .id,
            "run"
        );
        assert!(
            store
                .claim(Lane::Nests(NestSizes::ANY), "a", 60_000, 10)
                .await
                .unwrap()
                .is_none(),
            "held jobs are not claimed"
        );
        // the process dies here with "run" Running and "held" Held
    }
    let store = Store::open(&db).await.unwrap();
    assert_eq!(
        store.status("run").await.unwrap().unwrap().state,
        JobState::Running,
        "the row survived"
    );
    assert_eq!(
        store
            .take_back(Lost::All, i64::MAX, 0, error_body)
            .await
            .unwrap()
            .0,
        1
    );
    let again = store
        .claim(Lane::Nests(NestSizes::ANY), "b", 60_000, 20)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((again.id.as_str(), again.attempt), ("run", 2));
    assert_eq!(
        store
            .release_held("held", "other-key", 10, 0)
            .await
            .unwrap(),
        None,
        "only the submitting key releases its job"
    );
    assert_eq!(
        store.release_held("held", "key1", 10, 0).await.unwrap(),
        Some(Admission::Accepted)
    );
    assert_eq!(
        store.release_held("held", "key1", 10, 0).await.unwrap(),
        None,
        "released once"
    );
    assert_eq!(
        store
            .claim(Lane::Nests(NestSizes::ANY), "b", 60_000, 30)
            .await
            .unwrap()
            .unwrap()
            .id,
        "held"
    );
}

async fn failed_deliveries_retry_then_give_up(db: String) {
    let store = Store::open(&db).await.unwrap();
    store.enqueue(&job("j1", false), 0).await.unwrap();
    let c = store
        .claim(Lane::Nests(NestSizes::ANY), "a", 60_000, 0)
        .await
        .unwrap()
        .unwrap();
    store
        .finish(
            "j1",
            c.attempt,
            Outcome::Failed {
                code: "InvalidRequest",
                error: "bad geometry",
            },
            &[Delivery {
                uri: "https://x.test/h",
                body: "{}",
                content_type: JSON,
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

async fn admission_caps_queued_plus_running_per_key(db: String) {
    let store = Store::open(&db).await.unwrap();
    let with_key = |id: &'static str, key: &'static str, held: bool| NewJob {
        api_key_id: key,
        ..job(id, held)
    };
    assert_eq!(
        store
            .enqueue_admitted(&with_key("a1", "a", false), 2, 0)
            .await
            .unwrap(),
        Admission::Accepted
    );
    assert_eq!(
        store
            .enqueue_admitted(&with_key("a2", "a", false), 2, 1)
            .await
            .unwrap(),
        Admission::Accepted
    );
    assert_eq!(
        store
            .enqueue_admitted(&with_key("a3", "a", false), 2, 2)
            .await
            .unwrap(),
        Admission::AtLimit { active: 2 }
    );
    assert!(
        store.status("a3").await.unwrap().is_none(),
        "a refused job is not stored"
    );
    // held jobs do not count until started, and another key has its own allowance
    assert_eq!(
        store
            .enqueue_admitted(&with_key("a4", "a", true), 2, 3)
            .await
            .unwrap(),
        Admission::Accepted
    );
    assert_eq!(
        store
            .enqueue_admitted(&with_key("b1", "b", false), 1, 4)
            .await
            .unwrap(),
        Admission::Accepted
    );
    assert_eq!(
        store.release_held("a4", "a", 2, 0).await.unwrap(),
        Some(Admission::AtLimit { active: 2 })
    );
    let c = store
        .claim(Lane::Nests(NestSizes::ANY), "w", 60_000, 10)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(c.id, "a1");
    store
        .finish(
            "a1",
            c.attempt,
            Outcome::Failed {
                code: "NestingFailed",
                error: "x",
            },
            &[],
            20,
        )
        .await
        .unwrap();
    assert_eq!(
        store.release_held("a4", "a", 2, 0).await.unwrap(),
        Some(Admission::Accepted),
        "a finished job frees its place"
    );
}

async fn orphans_tried_too_often_fail_with_an_error_delivery(db: String) {
    let store = Store::open(&db).await.unwrap();
    store.enqueue(&job("p", false), 0).await.unwrap();
    for round in 1..=3 {
        let c = store
            .claim(Lane::Nests(NestSizes::ANY), "w", 60_000, round)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(c.attempt, round);
        let (requeued, failed) = store
            .take_back(Lost::All, 3, 100 + round, |id, _kind, _request, e| {
                (format!("{id}: {e}"), JSON)
            })
            .await
            .unwrap();
        assert_eq!((requeued, failed), if round < 3 { (1, 0) } else { (0, 1) });
    }
    let s = store.status("p").await.unwrap().unwrap();
    assert_eq!(s.state, JobState::Failed);
    assert!(s.error.unwrap().contains("interrupted 3 times"));
    let d = store.due_deliveries(i64::MAX, 5).await.unwrap();
    assert_eq!(d.len(), 1);
    assert!(d[0].body.starts_with("p: the job was interrupted"));
}

async fn keys_are_hashed_and_refused_when_wrong_expired_or_cancelled(db: String) {
    let store = Store::open(&db).await.unwrap();
    let first = store
        .bootstrap(4, 0)
        .await
        .unwrap()
        .expect("an empty store gets a key");
    assert!(store.bootstrap(4, 0).await.unwrap().is_none(), "only once");
    let admin = store.authenticate(&first, 1).await.unwrap().unwrap();
    assert_eq!(admin.key_type, KeyType::Admin);
    let account = store.first_account().await.unwrap().unwrap();
    let new = |expires_at| NewKey {
        account_id: account,
        key_type: KeyType::Usage,
        reference: "r".into(),
        parallelism: 1,
        expires_at,
        is_trial: false,
        email: String::new(),
    };
    let (k, token) = store.create_key(&new(Some(1_000)), 0).await.unwrap();
    assert!(token.starts_with(&format!("kerf_{}_", k.id)));
    assert_eq!(
        store.authenticate(&token, 999).await.unwrap().unwrap().id,
        k.id
    );
    assert_eq!(
        store.authenticate(&token, 1_000).await.unwrap(),
        Err(KeyRefusal::Expired)
    );
    let mut wrong = token.clone();
    let last = wrong.pop().unwrap();
    wrong.push(if last == '0' { '1' } else { '0' });
    assert_eq!(
        store.authenticate(&wrong, 0).await.unwrap(),
        Err(KeyRefusal::Unknown)
    );
    assert_eq!(
        store.authenticate("Bearer nonsense", 0).await.unwrap(),
        Err(KeyRefusal::Malformed)
    );
    let (k2, token2) = store.create_key(&new(None), 0).await.unwrap();
    assert_eq!(
        store.cancel_key_unless_last_admin(&k2.id, 5).await.unwrap(),
        KeyChange::Done
    );
    assert_eq!(
        store.authenticate(&token2, 6).await.unwrap(),
        Err(KeyRefusal::Cancelled)
    );
    // the secret itself is nowhere in the database (the hash is): on SQLite, in the files
    // themselves; on PostgreSQL, in a dump of the database
    drop(store);
    let text = stores::database_text(&db);
    assert!(text.contains(&admin.id), "the key's id is stored");
    let secret = first.rsplit('_').next().unwrap();
    assert!(!text.contains(secret));
}

async fn a_newer_result_supersedes_undelivered_interim_ones_and_a_job_sends_one_at_a_time(
    db: String,
) {
    let store = Store::open(&db).await.unwrap();
    store.enqueue(&job("j", false), 0).await.unwrap();
    store.enqueue(&job("k", false), 0).await.unwrap();
    let c = store
        .claim(Lane::Nests(NestSizes::ANY), "w", 60_000, 1)
        .await
        .unwrap()
        .unwrap();
    let d = |body| Delivery {
        uri: "https://x.test/h",
        body,
        content_type: JSON,
    };
    assert!(store
        .add_interim("j", c.attempt, &result("i1"), &[d("interim 1")], 2)
        .await
        .unwrap());
    assert!(store
        .add_interim("j", c.attempt, &result("i2"), &[d("interim 2")], 3)
        .await
        .unwrap());
    let due = store.due_deliveries(10, 10).await.unwrap();
    assert_eq!(
        due.iter().map(|d| d.body.as_str()).collect::<Vec<_>>(),
        ["interim 2"]
    );
    assert!(
        store.result("j", Some("i1")).await.unwrap().is_none(),
        "only the newest interim result is kept"
    );
    assert!(store.result("j", Some("i2")).await.unwrap().is_some());
    // a stale attempt cannot add an interim result
    assert!(!store
        .add_interim("j", c.attempt + 1, &result("i3"), &[d("stale")], 4)
        .await
        .unwrap());
    // the final result drops the undelivered interim delivery; two deliveries of one job go
    // out one at a time, oldest first, while another job's go beside them
    store
        .finish(
            "j",
            c.attempt,
            Outcome::Completed(result("f")),
            &[d("final a"), d("final b")],
            5,
        )
        .await
        .unwrap();
    let c2 = store
        .claim(Lane::Nests(NestSizes::ANY), "w", 60_000, 6)
        .await
        .unwrap()
        .unwrap();
    store
        .finish(
            "k",
            c2.attempt,
            Outcome::Failed {
                code: "NestingFailed",
                error: "e",
            },
            &[d("k error")],
            7,
        )
        .await
        .unwrap();
    let due = store.due_deliveries(10, 10).await.unwrap();
    assert_eq!(
        due.iter().map(|d| d.body.as_str()).collect::<Vec<_>>(),
        ["final a", "k error"]
    );
    store.mark_delivered(due[0].id, 200, 11).await.unwrap();
    let due = store.due_deliveries(12, 10).await.unwrap();
    assert_eq!(
        due.iter().map(|d| d.body.as_str()).collect::<Vec<_>>(),
        ["final b", "k error"]
    );
    assert_eq!(store.result("j", None).await.unwrap().unwrap().id, "f");
}

async fn handing_a_job_back_at_shutdown_is_not_an_interruption(db: String) {
    let store = Store::open(&db).await.unwrap();
    store.enqueue(&job("j", false), 0).await.unwrap();
    for t in 1..=5 {
        let c = store
            .claim(Lane::Nests(NestSizes::ANY), "w", 1_000, t)
            .await
            .unwrap()
            .unwrap();
        assert!(store.hand_back("j", c.attempt).await.unwrap());
        assert!(!store.hand_back("j", c.attempt).await.unwrap(), "once");
    }
    store
        .claim(Lane::Nests(NestSizes::ANY), "w", 1_000, 10)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        store
            .take_back(Lost::Expired, 3, 5_000, error_body)
            .await
            .unwrap(),
        (1, 0),
        "five hand-backs and one expiry: requeued, not failed"
    );
}

async fn an_export_type_is_queued_once_per_result_unless_it_failed(db: String) {
    let store = Store::open(&db).await.unwrap();
    let export = |id| NewJob {
        kind: "export",
        ..job(id, false)
    };
    assert!(store
        .enqueue_export(&export("e1"), "r1", "Render", 1000)
        .await
        .unwrap());
    // the same type on the same result: refused while the first is queued, running or done
    assert!(!store
        .enqueue_export(&export("e2"), "r1", "Render", 1001)
        .await
        .unwrap());
    // another type, or the same type on another result: queued
    assert!(store
        .enqueue_export(&export("e3"), "r1", "Result", 1002)
        .await
        .unwrap());
    assert!(store
        .enqueue_export(&export("e4"), "r2", "Render", 1003)
        .await
        .unwrap());
    assert!(
        store.status("e2").await.unwrap().is_none(),
        "a refused export is not queued"
    );
    // once the first has failed, it may be asked for again
    let c = store
        .claim(Lane::Exports, "w", 10_000, 2000)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(c.id, "e1");
    assert!(store
        .finish(
            "e1",
            c.attempt,
            Outcome::Failed {
                code: "NestingFailed",
                error: "boom"
            },
            &[],
            2100
        )
        .await
        .unwrap());
    assert!(store
        .enqueue_export(&export("e5"), "r1", "Render", 2200)
        .await
        .unwrap());
    assert!(!store
        .enqueue_export(&export("e6"), "r1", "Render", 2300)
        .await
        .unwrap());
    // a completed export whose delivery is pending blocks a repeat; once its delivery has
    // given up (the receiver never took it), it may be asked for again
    let c = store
        .claim(Lane::Exports, "w", 10_000, 2400)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(c.id, "e3");
    let delivery = Delivery {
        uri: "https://example.test/hook",
        body: "{}",
        content_type: JSON,
    };
    assert!(store
        .finish(
            "e3",
            c.attempt,
            Outcome::Completed(result("x3")),
            &[delivery],
            2500
        )
        .await
        .unwrap());
    assert!(!store
        .enqueue_export(&export("e7"), "r1", "Result", 2600)
        .await
        .unwrap());
    let due = store.due_deliveries(i64::MAX, 10).await.unwrap();
    let d = due
        .iter()
        .find(|d| d.job_id == "e3")
        .expect("e3's delivery is due");
    store
        .mark_attempt_failed(d.id, Some(500), "down", None)
        .await
        .unwrap();
    assert!(store
        .enqueue_export(&export("e8"), "r1", "Result", 2700)
        .await
        .unwrap());
}

async fn exports_run_in_their_own_lane_outside_the_keys_parallelism(db: String) {
    let store = Store::open(&db).await.unwrap();
    store.bootstrap(4, 0).await.unwrap();
    let account = store.first_account().await.unwrap().unwrap();
    let (key, _) = store
        .create_key(&usage_key(account, "one at a time", 1), 0)
        .await
        .unwrap();
    let new = |id, kind| NewJob {
        id,
        api_key_id: &key.id,
        kind,
        request: "{}",
        webhook_uri: Some("https://example.test/hook"),
        held: false,
        reserved_ms: 0,
        size: 0,
    };
    store.enqueue(&new("n1", "nest2d"), 1).await.unwrap();
    store.enqueue(&new("n2", "nest2d"), 2).await.unwrap();
    assert!(store
        .enqueue_export(&new("e1", "export"), "r0", "DXF", 3)
        .await
        .unwrap());
    // the nests' lane runs the key's Parallelism (1) and never an export
    assert_eq!(
        store
            .claim(Lane::Nests(NestSizes::ANY), "w", 60_000, 10)
            .await
            .unwrap()
            .unwrap()
            .id,
        "n1"
    );
    assert!(store
        .claim(Lane::Nests(NestSizes::ANY), "w", 60_000, 10)
        .await
        .unwrap()
        .is_none());
    // the export runs beside it, whatever the key's Parallelism
    assert_eq!(
        store
            .claim(Lane::Exports, "w", 60_000, 10)
            .await
            .unwrap()
            .unwrap()
            .id,
        "e1"
    );
    assert!(store
        .claim(Lane::Exports, "w", 60_000, 10)
        .await
        .unwrap()
        .is_none());
    // and does not count against the key's admission: n1 running and n2 queued make 2
    assert!(matches!(
        store
            .enqueue_admitted(&new("n3", "nest2d"), 3, 20)
            .await
            .unwrap(),
        Admission::Accepted
    ));
    assert!(matches!(
        store
            .enqueue_admitted(&new("n4", "nest2d"), 3, 21)
            .await
            .unwrap(),
        Admission::AtLimit { active: 3 }
    ));
}

async fn a_key_with_a_long_queue_does_not_hold_back_another_keys_nest(db: String) {
    let store = Store::open(&db).await.unwrap();
    store.bootstrap(4, 0).await.unwrap();
    let account = store.first_account().await.unwrap().unwrap();
    let key = |reference: &str| usage_key(account, reference, 10);
    let (a, _) = store.create_key(&key("a"), 0).await.unwrap();
    let (b, _) = store.create_key(&key("b"), 0).await.unwrap();
    let nest = |id: &'static str, key: &str, at: i64| {
        let store = &store;
        let key = key.to_string();
        async move {
            let job = NewJob {
                id,
                api_key_id: &key,
                kind: "nest2d",
                request: "{}",
                webhook_uri: Some("https://example.test/hook"),
                held: false,
                reserved_ms: 0,
                size: 0,
            };
            store.enqueue(&job, at).await.unwrap();
        }
    };
    let claim = |now: i64| {
        let store = &store;
        async move {
            store
                .claim(Lane::Nests(NestSizes::ANY), "w", 60_000, now)
                .await
                .unwrap()
                .unwrap()
                .id
        }
    };
    let finish = |id: &'static str, at: i64| {
        let store = &store;
        async move {
            let done = store
                .finish(id, 1, Outcome::Delivered, &[], at)
                .await
                .unwrap();
            assert!(done);
        }
    };
    // A queues five nests and runs two
    for (i, id) in ["a1", "a2", "a3", "a4", "a5"].into_iter().enumerate() {
        nest(id, &a.id, 10 + i as i64).await;
    }
    assert_eq!(claim(30).await, "a1");
    assert_eq!(claim(31).await, "a2");
    finish("a1", 1030).await;
    // then B queues two: B has used no time, A 1000 ms plus a2's so far: B's go first,
    // though A's are older
    nest("b1", &b.id, 1040).await;
    nest("b2", &b.id, 1041).await;
    assert_eq!(claim(1050).await, "b1");
    assert_eq!(claim(1051).await, "b2");
    assert_eq!(claim(1052).await, "a3", "then A's, oldest first");
    finish("b1", 1500).await;
    finish("b2", 1500).await;
    nest("b3", &b.id, 1510).await;
    // by time: A has used 1000 + 1569 + 548 = 3117 ms, B 450 + 449 = 899 ms
    store.set_key_weight(&a.id, 4.0).await.unwrap();
    // weighted: A's 3117 / 4 = 779 against B's 899 / 1: A's next, though it used more
    assert_eq!(claim(1600).await, "a4");
    // A 1000 + 1570 + 549 + 1 = 3120 / 4 = 780, still under B's 899
    assert_eq!(claim(1601).await, "a5");
    assert_eq!(claim(1602).await, "b3");
}

async fn a_stop_is_recorded_for_a_running_job_of_the_account_and_read_by_its_heartbeat(db: String) {
    let store = Store::open(&db).await.unwrap();
    store.bootstrap(4, 0).await.unwrap();
    let account = store.first_account().await.unwrap().unwrap();
    let (key, _) = store
        .create_key(&usage_key(account, "k", 2), 0)
        .await
        .unwrap();
    let job = NewJob {
        id: "s1",
        api_key_id: &key.id,
        kind: "nest2d:dxf",
        request: "{}",
        webhook_uri: None,
        held: false,
        reserved_ms: 0,
        size: 0,
    };
    store.enqueue(&job, 0).await.unwrap();
    assert_eq!(
        store.request_stop("s1", account, 1).await.unwrap(),
        StopRequest::NotRunning(JobState::Queued)
    );
    let c = store
        .claim(Lane::Nests(NestSizes::ANY), "w", 1_000, 2)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        store.heartbeat("s1", c.attempt, 1_000, 3).await.unwrap(),
        Heartbeat::Held
    );
    assert_eq!(
        store.request_stop("s1", account + 1, 4).await.unwrap(),
        StopRequest::Unknown,
        "another account's job is unknown to it"
    );
    assert_eq!(
        store.request_stop("s1", account, 5).await.unwrap(),
        StopRequest::Requested(5)
    );
    assert_eq!(
        store.heartbeat("s1", c.attempt, 1_000, 6).await.unwrap(),
        Heartbeat::StopRequested(5)
    );
    // each request has a mark of its own, even within the same millisecond
    assert_eq!(
        store.request_stop("s1", account, 5).await.unwrap(),
        StopRequest::Requested(6)
    );
    // clearing the honoured stop leaves a newer one; clearing that ends the stop
    assert!(!store.clear_stop("s1", c.attempt, 5).await.unwrap());
    assert_eq!(
        store.heartbeat("s1", c.attempt, 1_000, 7).await.unwrap(),
        Heartbeat::StopRequested(6)
    );
    assert!(store.clear_stop("s1", c.attempt, 6).await.unwrap());
    assert_eq!(
        store.heartbeat("s1", c.attempt, 1_000, 7).await.unwrap(),
        Heartbeat::Held
    );
    assert!(store
        .finish("s1", c.attempt, Outcome::Delivered, &[], 7)
        .await
        .unwrap());
    assert_eq!(
        store.request_stop("s1", account, 8).await.unwrap(),
        StopRequest::NotRunning(JobState::Completed)
    );
}

async fn the_export_cache_holds_one_export_per_result_and_type_until_it_expires(db: String) {
    let store = Store::open(&db).await.unwrap();
    let nest = NewJob {
        id: "n1",
        api_key_id: "k",
        kind: "nest2d:dxf",
        request: "{}",
        webhook_uri: None,
        held: false,
        reserved_ms: 0,
        size: 0,
    };
    store.enqueue(&nest, 0).await.unwrap();
    let export = |id: &'static str| NewJob {
        id,
        api_key_id: "k",
        kind: "export",
        request: "{}",
        webhook_uri: None,
        held: false,
        reserved_ms: 0,
        size: 0,
    };
    assert_eq!(
        store
            .queue_cached_export(&export("e1"), "n1", "r1", "DXF", 1)
            .await
            .unwrap(),
        CacheQueue::Queued
    );
    assert_eq!(
        store
            .queue_cached_export(&export("e2"), "n1", "r1", "DXF", 2)
            .await
            .unwrap(),
        CacheQueue::Busy,
        "the same export is being made"
    );
    let c = store
        .claim(Lane::Exports, "w", 1_000, 3)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(c.id, "e1");
    let cached = Outcome::Cached {
        payload: "{\"x\":1}",
        expires_at: 100,
    };
    assert!(store.finish("e1", c.attempt, cached, &[], 4).await.unwrap());
    let got = store
        .cached_export("n1", "r1", "DXF")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(got.job_state, JobState::Completed);
    assert_eq!(got.payload.as_deref(), Some("{\"x\":1}"));
    assert_eq!((got.created_at, got.expires_at), (Some(4), Some(100)));
    assert!(store
        .cached_export("n1", "r1", "Render")
        .await
        .unwrap()
        .is_none());
    match store
        .queue_cached_export(&export("e3"), "n1", "r1", "DXF", 50)
        .await
        .unwrap()
    {
        CacheQueue::Fresh(e) => assert_eq!(e.expires_at, Some(100)),
        other => panic!("{other:?}"),
    }
    // expired: the purge drops the payload, the row stays to say so
    assert_eq!(store.purge_export_cache(100).await.unwrap(), 1);
    let got = store
        .cached_export("n1", "r1", "DXF")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(got.payload, None);
    // and it may be made again
    assert_eq!(
        store
            .queue_cached_export(&export("e4"), "n1", "r1", "DXF", 200)
            .await
            .unwrap(),
        CacheQueue::Queued
    );
}

/// Guards that read then write hold when callers race (on PostgreSQL they run in write
/// transactions; a single statement would not see the other's write): one first account and
/// Admin key among nodes starting at once, and an account's key cap.
async fn racing_callers_cannot_pass_a_guard_twice(db: String) {
    let store = Store::open(&db).await.unwrap();
    let racers: Vec<_> = (0..6)
        .map(|i| {
            let s = store.clone();
            tokio::spawn(async move { s.bootstrap(4, i).await.unwrap() })
        })
        .collect();
    let mut printed = 0;
    for r in racers {
        printed += usize::from(r.await.unwrap().is_some());
    }
    assert_eq!(printed, 1, "one first Admin key");
    let account = store.first_account().await.unwrap().unwrap();
    assert_eq!(store.plans().await.unwrap().len(), 1, "one account");
    // the account's cap is 10 active keys; it holds 1: 12 racers, 9 places
    let racers: Vec<_> = (0..12)
        .map(|i| {
            let s = store.clone();
            tokio::spawn(async move {
                s.create_key_within_cap(&usage_key(account, &format!("r{i}"), 1), 10)
                    .await
                    .unwrap()
                    .is_ok()
            })
        })
        .collect();
    let mut created = 0;
    for r in racers {
        created += usize::from(r.await.unwrap());
    }
    assert_eq!(created, 9, "the cap holds");
}

async fn a_claim_asks_for_large_or_small_nests(db: String) {
    let store = Store::open(&db).await.unwrap();
    for (id, size, at) in [
        ("small1", 10, 1000),
        ("large", 500, 1001),
        ("small2", 5, 1002),
    ] {
        let nest = NewJob {
            size,
            ..job(id, false)
        };
        store.enqueue(&nest, at).await.unwrap();
    }
    let claim = |sizes| {
        let store = store.clone();
        async move {
            store
                .claim(Lane::Nests(sizes), "w", 60_000, 2000)
                .await
                .unwrap()
                .map(|c| (c.id, c.size))
        }
    };
    // the large one first for a node that asks for large ones, though it is not the oldest
    assert_eq!(
        claim(NestSizes::at_least(200)).await,
        Some(("large".to_string(), 500))
    );
    assert_eq!(claim(NestSizes::at_least(200)).await, None);
    assert!(NestSizes::below(200).holds(10) && !NestSizes::below(200).holds(200));
    assert_eq!(
        claim(NestSizes::below(200)).await,
        Some(("small1".to_string(), 10))
    );
    assert_eq!(claim(NestSizes::ANY).await, Some(("small2".to_string(), 5)));
}

stores::on_both_stores!(
    a_claim_asks_for_large_or_small_nests,
    racing_callers_cannot_pass_a_guard_twice,
    claim_finish_and_outbox_commit_together,
    a_worker_whose_lease_was_taken_over_cannot_write,
    heartbeats_keep_the_lease_and_repeated_interruptions_fail_the_job,
    concurrent_claims_never_share_a_job,
    failed_deliveries_retry_then_give_up,
    admission_caps_queued_plus_running_per_key,
    orphans_tried_too_often_fail_with_an_error_delivery,
    a_newer_result_supersedes_undelivered_interim_ones_and_a_job_sends_one_at_a_time,
    handing_a_job_back_at_shutdown_is_not_an_interruption,
    an_export_type_is_queued_once_per_result_unless_it_failed,
    exports_run_in_their_own_lane_outside_the_keys_parallelism,
    a_key_with_a_long_queue_does_not_hold_back_another_keys_nest,
    a_stop_is_recorded_for_a_running_job_of_the_account_and_read_by_its_heartbeat,
    the_export_cache_holds_one_export_per_result_and_type_until_it_expires,
    held_jobs_wait_and_orphans_survive_a_restart,
    keys_are_hashed_and_refused_when_wrong_expired_or_cancelled,
);
