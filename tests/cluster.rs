//! Scale-out on PostgreSQL (issue 19): real processes, 2 front ends (`kerf serve
//! --no-workers`) and 3 workers (`kerf worker`) on one throwaway PostgreSQL database. Nests
//! are submitted through both front ends while a worker and a front end are killed with
//! SIGKILL and restarted and PostgreSQL itself is restarted; every job must end Completed with
//! exactly one final result stored and its final webhook delivered. (The long version, with
//! hundreds of nests and kills every few seconds, is `kerf bench cluster`.)

mod support;

#[path = "support/postgres.rs"]
mod postgres;

use std::collections::HashMap;
use std::process::Command;
use std::time::{Duration, Instant};
use support::*;

const NESTS: usize = 24;

fn nest(receiver: &Receiver, i: usize) -> serde_json::Value {
    dxf_request(
        &[("part_3.dxf", 2 + (i % 3) as u32)],
        (600.0, 400.0),
        Some(&format!("{}/cluster/{i}", receiver.url)),
        1.0,
        false,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_front_ends_and_three_workers_lose_nothing_to_kills_and_a_database_restart() {
    let dir = temp_dir("cluster");
    let Some(pg) = postgres::PgCluster::start(&dir) else {
        return;
    };
    let db = pg.create_database("kerf");
    let receiver = Receiver::start(&dir).await;
    let front =
        |_: usize| Server::start_node(&dir, &db, &["serve", "--no-workers"], Some(&receiver), &[]);
    let worker = |_: usize| {
        Server::start_node(
            &dir,
            &db,
            &["worker"],
            Some(&receiver),
            &["--workers", "2", "--compute", "cpu"],
        )
    };
    let mut fronts: Vec<Server> = (0..2).map(front).collect();
    let mut workers: Vec<Server> = (0..3).map(worker).collect();
    let key = create_key(&db, "Usage", 8, None);

    // every node is listed, by /readyz on either front end and by `kerf nodes`
    let ready = fronts[1]
        .client(&key)
        .send(fronts[1].client(&key).get("/readyz"))
        .await;
    assert_eq!(ready.status, 200, "{}", ready.text);
    let roles: Vec<&str> = ready.body["Nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["Role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["front", "front", "worker", "worker", "worker"]);
    // each advertises what it evaluates on: nothing on a front end
    for n in ready.body["Nodes"].as_array().unwrap() {
        let want = if n["Role"] == "front" { "none" } else { "cpu" };
        assert_eq!(n["Compute"], want, "{n}");
    }
    assert_eq!(ready.body["Role"], "front");
    assert_eq!(ready.body["Compute"], "none");
    let listed = Command::new(kerf_bin())
        .args(["nodes", "--database", &db])
        .output()
        .unwrap();
    assert!(listed.status.success());
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.contains("5 live node(s)"), "{listed}");
    assert_eq!(listed.matches(" worker ").count(), 3, "{listed}");

    // nests through both front ends; a worker dies halfway and comes back
    let mut ids = Vec::new();
    for i in 0..NESTS {
        let via = &fronts[i % 2];
        ids.push(
            via.client(&key)
                .submit("/v1/nesting", &nest(&receiver, i))
                .await,
        );
        if i == NESTS / 2 {
            workers[0].kill();
            workers[0].restart();
        }
    }
    // a front end dies and comes back (on a new port); the other answers meanwhile
    fronts[1].kill();
    let api = fronts[0].client(&key);
    assert_eq!(api.status(&ids[1]).await.status, 200);
    fronts[1].restart();
    // the database itself restarts under the running nodes
    tokio::time::sleep(Duration::from_secs(2)).await;
    pg.stop();
    tokio::time::sleep(Duration::from_secs(1)).await;
    pg.restart();
    workers[2].kill();
    workers[2].restart();

    // every job ends Completed, through either front end, with its final webhook delivered
    let end = Instant::now() + Duration::from_secs(240);
    for (i, id) in ids.iter().enumerate() {
        let api = fronts[i % 2].client(&key);
        loop {
            let st = api.status(id).await;
            if st.body["Status"] == "Completed" {
                break;
            }
            assert_ne!(st.body["Status"], "Failed", "{}", st.text);
            assert!(Instant::now() < end, "{id} never completed: {}", st.text);
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        let got = receiver.wait_final(id, Duration::from_secs(60)).await;
        assert!(
            got.iter()
                .any(|d| d.answered == 200 && d.body["Status"]["NestingStatus"] == 1),
            "{id}: {got:#?}"
        );
    }
    // exactly one final result stored per job
    let rows = pg.psql_in(
        "kerf",
        "SELECT job_id, COUNT(*) FROM results GROUP BY job_id",
    );
    let counts: HashMap<&str, &str> = rows.lines().filter_map(|l| l.split_once('|')).collect();
    for id in &ids {
        assert_eq!(counts.get(id.as_str()), Some(&"1"), "{id}: {rows}");
    }
    for s in fronts.iter_mut().chain(workers.iter_mut()) {
        s.kill();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hub_on_one_front_end_hears_and_stops_nests_that_workers_run() {
    let Some(script) = signalr_script("cluster.mjs") else {
        return;
    };
    let Some(pg) = postgres::shared() else {
        return;
    };
    let dir = temp_dir("cluster-hub");
    let db = pg.create_database("kerf_hub");
    let front = |_| Server::start_node(&dir, &db, &["serve", "--no-workers"], None, &[]);
    let fronts: Vec<Server> = (0..2).map(front).collect();
    let _worker = Server::start_node(
        &dir,
        &db,
        &["worker"],
        None,
        &["--workers", "2", "--compute", "cpu"],
    );
    let key = create_key(&db, "Usage", 4, None);
    // submitted through one front end, watched, started and stopped through the other
    let submit = fronts[1].client(&key);
    let held = submit.submit("/v1/nesting", &held_request(3, 2.0)).await;
    // many parts on several sheets: the search runs to its time limit unless stopped
    let long = submit.submit("/v1/nesting", &held_request(80, 60.0)).await;
    let lines = run_signalr_script(
        &script,
        &[
            ("KERF_BASE", &fronts[0].base),
            ("KERF_KEY", &key),
            ("KERF_HELD", &held),
            ("KERF_LONG", &long),
        ],
    )
    .await;
    assert_eq!(transcript_step(&lines, "StartNesting held")["ok"], true);
    let held_final = lines
        .iter()
        .rfind(|l| l["step"] == "event NestingResult" && l["RequestId"] == held.as_str())
        .unwrap();
    assert_eq!(held_final["NestingStatus"], 1);
    assert_eq!(held_final["PartsPlaced"], 3);
    assert!(
        transcript_step(&lines, "held done")["progress"]
            .as_u64()
            .unwrap()
            >= 1
    );
    // the stop crossed to the worker: the long nest ended long before its 60 s
    assert_eq!(transcript_step(&lines, "StopNesting long")["ok"], true);
    let done = transcript_step(&lines, "long done");
    assert!(done["seconds"].as_f64().unwrap() < 40.0, "{done}");
    let status = fronts[0].client(&key).status(&long).await;
    assert_eq!(status.body["Status"], "Completed", "{}", status.text);
}

#[test]
fn worker_and_front_end_roles_need_a_shared_database() {
    let dir = temp_dir("roles-sqlite");
    let db = dir.join("kerf.db");
    for role in [&["worker"][..], &["serve", "--no-workers"][..]] {
        let out = Command::new(kerf_bin())
            .args(role)
            .arg("--database")
            .arg(&db)
            .output()
            .unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("postgres://"), "{err}");
    }
}
