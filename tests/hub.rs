//! The live hub (DESIGN 5.8) against the official SignalR JavaScript client,
//! `@microsoft/signalr` from npm, run under node (tests/hub/flow.mjs): connect with a Bearer
//! key, subscribe, start a held nest and watch its progress and results, stop a long nest and
//! get its best result as the final one, bad invocations answered with errors on a connection
//! that stays, a late subscriber served at once, a wrong key refused at negotiate. And POST
//! /v1/nesting/continue over REST.
//!
//! The node test needs node and `npm ci --prefix tests/hub` (.ci/run does both). Without them
//! it says so and passes, unless KERF_REQUIRE_NODE=1 (as in CI), which fails it.

mod support;

use serde_json::{json, Value};
use std::process::Command;
use std::time::Duration;
use support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_signalr_client_watches_starts_and_stops_nests() {
    let Some(script) = signalr_script("flow.mjs") else {
        return;
    };
    let dir = temp_dir("hub");
    let server = Server::start(&dir, None, &[]);
    let key = server.first_key.clone().unwrap();
    let api = server.client(&key);
    let held = api.submit("/v1/nesting", &held_request(3, 2.0)).await;
    // many parts on several sheets: the search runs to its time limit unless stopped
    let long = api.submit("/v1/nesting", &held_request(80, 60.0)).await;
    let dropped = api.submit("/v1/nesting", &held_request(80, 4.0)).await;
    let other_account = {
        let o = Command::new(kerf_bin())
            .args(["accounts", "create", "--name", "other", "--database"])
            .arg(&server.db)
            .output()
            .unwrap();
        String::from_utf8(o.stdout).unwrap().trim().to_string()
    };
    let other_key = {
        let o = Command::new(kerf_bin())
            .args(["keys", "create", "--account", &other_account, "--database"])
            .arg(&server.db)
            .output()
            .unwrap();
        String::from_utf8(o.stdout).unwrap().trim().to_string()
    };
    let foreign = server
        .client(&other_key)
        .submit("/v1/nesting", &held_request(1, 1.0))
        .await;

    // the script stops itself after 120 s of waiting
    let lines = run_signalr_script(
        &script,
        &[
            ("KERF_BASE", &server.base),
            ("KERF_KEY", &key),
            ("KERF_HELD", &held),
            ("KERF_LONG", &long),
            ("KERF_FOREIGN", &foreign),
            ("KERF_DROP", &dropped),
        ],
    )
    .await;

    assert_eq!(transcript_step(&lines, "connected")["state"], "Connected");
    let sub = transcript_step(&lines, "SubscribeToNest held");
    assert_eq!(sub["ok"], true, "{sub}");
    assert_eq!(sub["result"], json!({"RequestId": held, "Status": "Held"}));
    assert_eq!(transcript_step(&lines, "StartNesting held")["ok"], true);
    // the held nest: progress, then its final result, all parts placed
    let finals: Vec<&Value> = lines
        .iter()
        .filter(|l| l["step"] == "event NestingResult" && l["RequestId"] == held.as_str())
        .collect();
    assert_eq!(finals.last().unwrap()["NestingStatus"], 1, "{finals:?}");
    assert_eq!(finals.last().unwrap()["PartsPlaced"], 3);
    assert_eq!(
        finals.iter().filter(|l| l["NestingStatus"] == 1).count(),
        1,
        "one final result: {finals:?}"
    );
    assert_eq!(
        finals[0]["NestingStatus"], 0,
        "an interim result (the first layout) before the final one: {finals:?}"
    );
    let done = transcript_step(&lines, "held done");
    assert!(done["progress"].as_u64().unwrap() >= 1, "{done}");
    // the long nest, stopped: its final result long before its 60 s
    assert_eq!(transcript_step(&lines, "StopNesting long")["ok"], true);
    let long_done = transcript_step(&lines, "long done");
    assert!(long_done["seconds"].as_f64().unwrap() < 40.0, "{long_done}");
    let long_final = lines
        .iter()
        .rfind(|l| l["step"] == "event NestingResult" && l["RequestId"] == long.as_str())
        .unwrap();
    assert_eq!(long_final["NestingStatus"], 1);
    assert!(long_final["PartsPlaced"].as_u64().unwrap() >= 1);
    let again = transcript_step(&lines, "StopNesting long again");
    assert_eq!(again["ok"], false);
    assert!(
        again["error"].as_str().unwrap().contains("not running"),
        "{again}"
    );
    // the same result over REST: the stop's result is the job's final one
    let status = api.status(&long).await;
    assert_eq!(status.body["Status"], "Completed", "{}", status.text);

    // bad invocations: errors that say what is wrong, the connection stays
    for (step, says) in [
        ("unknown method", "unknown hub method 'Nope'"),
        ("no arguments", "takes one argument"),
        ("wrong argument type", "takes one argument"),
        ("another account's job", "no job"),
        ("start a job twice", "not waiting for a delayed start"),
        ("GenerateExport bad type", "ResponseType"),
        ("GenerateExport no arguments", "takes three arguments"),
    ] {
        let l = transcript_step(&lines, step);
        assert_eq!(l["ok"], false, "{l}");
        assert!(l["error"].as_str().unwrap().contains(says), "{step}: {l}");
    }
    assert_eq!(
        transcript_step(&lines, "still connected")["state"],
        "Connected"
    );
    // a late (or reconnecting) subscriber gets the latest result at once
    let late = transcript_step(&lines, "late result");
    assert_eq!(late["RequestId"], held.as_str());
    assert_eq!(late["NestingStatus"], 1);
    // a connection dropped mid-nest loses nothing: the nest ran on, and the next connection
    // got its final result
    let drop = transcript_step(&lines, "dropped mid-nest");
    assert_eq!(drop["state"], "Disconnected", "{drop}");
    let after = transcript_step(&lines, "final after the drop");
    assert_eq!(after["PartsPlaced"], 80, "{after}");
    let status = api.status(&dropped).await;
    assert_eq!(status.body["Status"], "Completed", "{}", status.text);
    // a wrong key: refused at negotiate
    let wrong = transcript_step(&lines, "wrong key");
    assert_eq!(wrong["ok"], false);
    assert!(wrong["error"].as_str().unwrap().contains("401"), "{wrong}");
}

/// The dashboard's live view ships the official browser client: byte for byte the npm
/// package's (assets/dashboard/vendor/README.md).
#[test]
fn the_vendored_signalr_browser_client_is_the_packages() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let package =
        root.join("tests/hub/node_modules/@microsoft/signalr/dist/browser/signalr.min.js");
    if !package.is_file() {
        let required = std::env::var("KERF_REQUIRE_NODE").is_ok_and(|v| v == "1");
        assert!(
            !required,
            "KERF_REQUIRE_NODE=1 but tests/hub/node_modules is missing"
        );
        eprintln!("skipped: no tests/hub/node_modules");
        return;
    }
    let vendored = std::fs::read(root.join("assets/dashboard/vendor/signalr.min.js")).unwrap();
    assert!(
        std::fs::read(package).unwrap() == vendored,
        "assets/dashboard/vendor/signalr.min.js differs from the package's"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_stops_a_running_nest_with_its_best_result_as_the_final_one() {
    let dir = temp_dir("continue");
    let receiver = Receiver::start(&dir).await;
    let server = Server::start(&dir, Some(&receiver), &[]);
    let api = server.client(server.first_key.as_deref().unwrap());
    let hook = format!("{}/long", receiver.url);
    let req = dxf_request(
        &[("part_1.dxf", 80)],
        (600.0, 400.0),
        Some(&hook),
        60.0,
        false,
    );
    let id = api.submit("/v1/nesting", &req).await;
    api.wait_status(&id, "Running", Duration::from_secs(30))
        .await;
    let started = std::time::Instant::now();
    let a = api
        .post_json("/v1/nesting/continue", &json!({"RequestId": id}))
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.body, json!({"Success": true, "ErrorReason": null}));
    let got = receiver.wait_final(&id, Duration::from_secs(60)).await;
    assert!(
        started.elapsed() < Duration::from_secs(40),
        "{:?}",
        started.elapsed()
    );
    let last = &got.last().unwrap().body;
    assert_eq!(last["Status"]["NestingStatus"], 1, "{last}");
    assert!(last["Status"]["PartsPlaced"].as_u64().unwrap() >= 1);
    // not running any more: Success false with the reason
    let again = api
        .post_json("/v1/nesting/continue", &json!({"RequestId": id}))
        .await;
    assert_eq!(again.status, 409, "{}", again.text);
    assert_eq!(again.body["Success"], false);
    assert!(again.body["ErrorReason"]
        .as_str()
        .unwrap()
        .contains("not running"));
    let unknown = api
        .post_json("/v1/nesting/continue", &json!({"RequestId": "nope"}))
        .await;
    assert_eq!(unknown.status, 404);
    assert_eq!(unknown.body["Success"], false);
    let missing = api.post_json("/v1/nesting/continue", &json!({})).await;
    assert_eq!(missing.status, 400, "{}", missing.text);
}
