//! The service end to end: the real `kerf serve` binary on a random port with a temporary
//! SQLite file, real DXF parts from tests/data, and a real HTTPS webhook receiver on loopback
//! whose certificate is made in the test and trusted through --webhook-ca-file.

mod support;

use serde_json::{json, Value};
use std::time::Duration;
use support::*;

const FINAL_WAIT: Duration = Duration::from_secs(120);

fn nesting_status(d: &Delivered) -> i64 {
    d.body["Status"]["NestingStatus"].as_i64().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn happy_path_delivers_interim_and_final_results_and_serves_them() {
    let dir = temp_dir("happy");
    let receiver = Receiver::start(&dir).await;
    let server = Server::start(&dir, Some(&receiver), &[]);
    let key = server
        .first_key
        .clone()
        .expect("a first start prints an Admin key");
    let api = server.client(&key);

    let req = dxf_request(
        &[("part_1.dxf", 4), ("part_6.dxf", 3), ("donut_r12.dxf", 2)],
        (500.0, 300.0),
        Some(&format!("{}/happy", receiver.url)),
        4.0,
        true,
    );
    let a = api.post_json("/v1/nesting", &req).await;
    assert_eq!(a.status, 200, "{}", a.text);
    let id = a.body["RequestId"].as_str().unwrap().to_string();
    assert!(!id.is_empty());

    let got = receiver.wait_final(&id, FINAL_WAIT).await;
    let (last, earlier) = got.split_last().unwrap();
    assert_eq!(nesting_status(last), 1, "the final delivery comes last");
    assert!(
        !earlier.is_empty() && earlier.iter().all(|d| nesting_status(d) == 0),
        "interim results (NestingStatus 0) precede the final one: {got:#?}"
    );
    for d in &got {
        assert_eq!(d.content_type.as_deref(), Some("application/json"));
        assert_eq!(d.authorization, None, "deliveries carry no Authorization");
        assert_eq!(d.body["RequestId"], id.as_str());
        assert_eq!(d.body["NestIdentifier"], id.as_str());
        let s = &d.body["Status"];
        assert!(s["ResultIdentity"].as_str().is_some_and(|r| !r.is_empty()));
        let sheets = s["NestedSheetsInfo"].as_array().unwrap();
        assert!(!sheets.is_empty());
        let placed_by_sheets: u64 = sheets
            .iter()
            .map(|n| n["Multiplicity"].as_u64().unwrap() * n["PartCount"].as_u64().unwrap())
            .sum();
        assert_eq!(placed_by_sheets, s["PartsPlaced"].as_u64().unwrap());
        assert!(s["UnplacedParts"].is_array());
        assert_eq!(s["Units"], "mm");
    }
    let fin = &last.body["Status"];
    assert_eq!(fin["PartsRequested"], 9);
    assert_eq!(fin["PartsPlaced"], 9, "{fin:#}");

    // the status record and the result endpoint agree with the webhook
    let st = api.status(&id).await;
    assert_eq!(st.status, 200);
    assert_eq!(st.body["Status"], "Completed");
    assert_eq!(st.body["ResultIdentity"], fin["ResultIdentity"]);
    assert!(st.body["CompletedAt"].as_str().unwrap().ends_with('Z'));
    assert_eq!(st.body["Error"], Value::Null);

    let r = api
        .post_json(
            "/v1/nesting/result/",
            &json!({"RequestId": id, "ResultIdentity": fin["ResultIdentity"]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.body["Status"], *fin,
        "Status is the message the webhook delivered"
    );
    assert_eq!(r.body["Summary"]["PartsPlaced"], 9);
    let placements: usize = r.body["Nests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            n["Placements"].as_array().unwrap().len() * n["Multiplicity"].as_u64().unwrap() as usize
        })
        .sum();
    assert_eq!(placements, 9);
    let parts = r.body["Parts"].as_array().unwrap();
    assert_eq!(parts.len(), 3);
    assert!(parts
        .iter()
        .all(|p| p["Area"].as_f64().unwrap() > 0.0 && p["Placed"] == p["Requested"]));

    // the latest interim result stays available under its own identity
    let interim = &earlier.last().unwrap().body["Status"];
    let r0 = api
        .post_json(
            "/v1/nesting/result/",
            &json!({"RequestId": id, "ResultIdentity": interim["ResultIdentity"]}),
        )
        .await;
    assert_eq!(r0.status, 200);
    assert_eq!(r0.body["Status"]["NestingStatus"], 0);

    // nothing failed
    let failures = api.send(api.get("/v1/nesting/failures")).await;
    assert_eq!(failures.status, 200);
    assert_eq!(failures.body, json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_form_and_delayed_start() {
    let dir = temp_dir("delayed");
    let receiver = Receiver::start(&dir).await;
    let server = Server::start(&dir, Some(&receiver), &[]);
    let api = server.client(server.first_key.as_deref().unwrap());

    // the query-parameter form: Request as a JSON string
    let full = dxf_request(
        &[("square_polyline_r12.dxf", 3)],
        (400.0, 400.0),
        None,
        1.0,
        false,
    );
    let query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("Request", &full["Request"].to_string())
        .append_pair("ResultsWebhookUri", &format!("{}/q", receiver.url))
        .append_pair("AutomaticallyStartNesting", "false")
        .finish();
    let a = api.send(api.post(&format!("/v1/nesting?{query}"))).await;
    assert_eq!(a.status, 200, "{}", a.text);
    let id = a.body["RequestId"].as_str().unwrap().to_string();

    // held: reported as Queued, nothing runs, nothing is delivered
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(api.status(&id).await.body["Status"], "Queued");
    assert!(receiver.for_job(&id).is_empty());

    let start = api
        .post_json("/v1/nesting/delayedstart", &json!({"RequestId": id}))
        .await;
    assert_eq!(start.status, 200, "{}", start.text);
    assert_eq!(start.body, json!({"Success": true, "ErrorReason": null}));
    let got = receiver.wait_final(&id, FINAL_WAIT).await;
    assert_eq!(nesting_status(got.last().unwrap()), 1);
    assert_eq!(got.last().unwrap().body["Status"]["PartsPlaced"], 3);

    let again = api
        .post_json("/v1/nesting/delayedstart", &json!({"RequestId": id}))
        .await;
    assert_eq!(again.status, 409);
    assert_eq!(again.body["Success"], false);
    assert!(again.body["ErrorReason"]
        .as_str()
        .unwrap()
        .contains("not waiting"));
    let unknown = api
        .post_json("/v1/nesting/delayedstart", &json!({"RequestId": "nope"}))
        .await;
    assert_eq!(unknown.status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_receiver_gets_the_same_body_again_and_a_dead_one_is_listed() {
    let dir = temp_dir("retry");
    let receiver = Receiver::start(&dir).await;
    let server = Server::start(&dir, Some(&receiver), &["--webhook-retry-delays", "1,1"]);
    let api = server.client(server.first_key.as_deref().unwrap());

    receiver.fail_next(1);
    let req = dxf_request(
        &[("part_2.dxf", 2)],
        (400.0, 400.0),
        Some(&format!("{}/retry", receiver.url)),
        1.0,
        false,
    );
    let id = api.submit("/v1/nesting", &req).await;
    let got = receiver.wait_final(&id, FINAL_WAIT).await;
    assert_eq!(got.len(), 2, "one failed attempt, one success: {got:#?}");
    assert_eq!((got[0].answered, got[1].answered), (500, 200));
    assert_eq!(got[0].raw, got[1].raw, "every attempt sends the same body");
    assert!(
        got[1].at - got[0].at >= Duration::from_millis(900),
        "retried after the delay"
    );

    // a receiver that never answers 2xx: three attempts, then given up and listed
    receiver.always_fail(true);
    let req = dxf_request(
        &[("part_2.dxf", 1)],
        (400.0, 400.0),
        Some(&format!("{}/dead", receiver.url)),
        1.0,
        false,
    );
    let dead = api.submit("/v1/nesting", &req).await;
    let end = std::time::Instant::now() + FINAL_WAIT;
    let listed = loop {
        let f = api
            .send(api.get(&format!("/v1/nesting/failures?RequestId={dead}")))
            .await;
        assert_eq!(f.status, 200);
        if f.body.as_array().is_some_and(|a| !a.is_empty()) {
            break f.body;
        }
        assert!(
            std::time::Instant::now() < end,
            "the dead delivery was never listed"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let entry = &listed[0];
    assert_eq!(entry["RequestId"], dead.as_str());
    assert_eq!(entry["Status"], "Completed", "the job itself succeeded");
    let d = &entry["Deliveries"][0];
    assert_eq!(d["GaveUp"], true);
    assert_eq!(d["Attempts"], 3);
    assert_eq!(d["LastStatusCode"], 500);
    assert!(d["Uri"].as_str().unwrap().ends_with("/dead"));
    assert_eq!(receiver.for_job(&dead).len(), 3);
    // the delivered job is not a failure
    let all = api.send(api.get("/v1/nesting/failures")).await;
    assert_eq!(all.body.as_array().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_during_a_nest_then_restart_still_completes_and_delivers() {
    let dir = temp_dir("sigkill");
    let receiver = Receiver::start(&dir).await;
    let mut server = Server::start(&dir, Some(&receiver), &[]);
    let key = server.first_key.clone().unwrap();
    let req = dxf_request(
        &[("part_3.dxf", 6), ("part_7.dxf", 6)],
        (600.0, 400.0),
        Some(&format!("{}/kill", receiver.url)),
        8.0,
        false,
    );
    let id = server.client(&key).submit("/v1/nesting", &req).await;
    server
        .client(&key)
        .wait_status(&id, "Running", Duration::from_secs(30))
        .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    server.kill();
    assert!(
        receiver.for_job(&id).is_empty(),
        "killed before it could finish"
    );

    server.restart();
    assert!(
        !server.last_start_printed_key,
        "the Admin key is printed at the first start only"
    );
    let api = server.client(&key);
    let got = receiver.wait_final(&id, FINAL_WAIT).await;
    let finals: Vec<_> = got.iter().filter(|d| nesting_status(d) == 1).collect();
    assert_eq!(finals.len(), 1, "{got:#?}");
    assert_eq!(finals[0].body["Status"]["PartsPlaced"], 12);
    let st = api.status(&id).await;
    assert_eq!(st.body["Status"], "Completed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_that_keeps_killing_its_worker_fails_and_is_listed() {
    let dir = temp_dir("poison");
    let receiver = Receiver::start(&dir).await;
    let mut server = Server::start(&dir, Some(&receiver), &[]);
    let key = server.first_key.clone().unwrap();
    let req = dxf_request(
        &[("part_5.dxf", 8)],
        (500.0, 500.0),
        Some(&format!("{}/poison", receiver.url)),
        30.0,
        false,
    );
    let id = server.client(&key).submit("/v1/nesting", &req).await;
    for _ in 0..3 {
        server
            .client(&key)
            .wait_status(&id, "Running", Duration::from_secs(30))
            .await;
        server.kill();
        server.restart();
    }
    let api = server.client(&key);
    let st = api
        .wait_status(&id, "Failed", Duration::from_secs(30))
        .await;
    assert!(
        st.body["Error"]
            .as_str()
            .unwrap()
            .contains("interrupted 3 times"),
        "{}",
        st.text
    );
    let got = receiver.wait_final(&id, FINAL_WAIT).await;
    let last = got.last().unwrap();
    assert_eq!(nesting_status(last), 2, "an Error delivery");
    assert_eq!(last.body["Status"]["ErrorCode"], "Interrupted");
    assert!(last.body["Status"]["ErrorReport"]
        .as_str()
        .unwrap()
        .contains("interrupted"));
    let f = api.send(api.get("/v1/nesting/failures")).await;
    assert_eq!(f.body[0]["RequestId"], id.as_str());
    assert_eq!(f.body[0]["Status"], "Failed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_hands_running_jobs_back_and_they_finish_after_restart() {
    let dir = temp_dir("sigterm");
    let receiver = Receiver::start(&dir).await;
    let mut server = Server::start(&dir, Some(&receiver), &[]);
    let key = server.first_key.clone().unwrap();
    let req = dxf_request(
        &[("part_8.dxf", 6)],
        (500.0, 500.0),
        Some(&format!("{}/term", receiver.url)),
        15.0,
        false,
    );
    let id = server.client(&key).submit("/v1/nesting", &req).await;
    server
        .client(&key)
        .wait_status(&id, "Running", Duration::from_secs(30))
        .await;
    let took = server.terminate();
    assert!(
        took < Duration::from_secs(30),
        "a 15 s nest does not hold shutdown up ({took:?})"
    );
    assert!(receiver.for_job(&id).is_empty());
    // handed back: queued again, not failed; the next start runs it to the end
    server.restart();
    let api = server.client(&key);
    let st = api.status(&id).await;
    assert!(
        matches!(st.body["Status"].as_str(), Some("Queued" | "Running")),
        "{}",
        st.text
    );
    let got = receiver.wait_final(&id, FINAL_WAIT).await;
    assert_eq!(nesting_status(got.last().unwrap()), 1);
    assert_eq!(api.status(&id).await.body["Status"], "Completed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_runs_its_parallelism_at_once_queues_a_few_more_and_is_refused_past_that() {
    let dir = temp_dir("parallel");
    let receiver = Receiver::start(&dir).await;
    // two workers (this machine may have more cores), one waiting nest allowed per key
    let server = Server::start(
        &dir,
        Some(&receiver),
        &["--workers", "2", "--max-queued-per-key", "1"],
    );
    let usage = server.create_key("Usage", 1, None);
    let api = server.client(&usage);
    let v = api.send(api.get("/v1/auth/validate")).await;
    assert_eq!(v.body["KeyType"], "Usage");
    let req = dxf_request(
        &[("part_5.dxf", 1), ("part_1.dxf", 2)],
        (400.0, 400.0),
        Some(&format!("{}/par", receiver.url)),
        3.0,
        false,
    );
    // a job held for a delayed start, to be started when the key is at its limit
    let mut held_req = req.clone();
    held_req["AutomaticallyStartNesting"] = json!(false);
    let held = api.submit("/v1/nesting", &held_req).await;
    let first = api.submit("/v1/nesting", &req).await;
    api.wait_status(&first, "Running", Duration::from_secs(30))
        .await;
    let second = api.submit("/v1/nesting", &req).await;
    // Parallelism 1: the second waits although a worker is free
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_eq!(api.status(&second).await.body["Status"], "Queued");
    let third = api.post_json("/v1/nesting", &req).await;
    assert_eq!(third.status, 429, "{}", third.text);
    assert_eq!(third.body["RequestId"], "");
    let why = third.body["Error"].as_str().unwrap();
    assert!(
        why.contains("Parallelism of 1") && why.contains("1 waiting"),
        "{why}"
    );
    assert!(third.headers.get("retry-after").is_some());
    let start = api
        .post_json("/v1/nesting/delayedstart", &json!({"RequestId": held}))
        .await;
    assert_eq!(start.status, 429, "{}", start.text);
    assert_eq!(start.body["Success"], false);
    assert!(start.headers.get("retry-after").is_some());
    // another key has its own allowance, and runs beside it
    let admin = server.client(server.first_key.as_deref().unwrap());
    let other = admin.submit("/v1/nesting", &req).await;
    admin
        .wait_status(&other, "Running", Duration::from_secs(30))
        .await;
    // the first ends, the second runs, and the key may submit again
    receiver.wait_final(&first, FINAL_WAIT).await;
    api.wait_status(&second, "Running", Duration::from_secs(30))
        .await;
    assert_eq!(api.post_json("/v1/nesting", &req).await.status, 200);
    receiver.wait_final(&second, FINAL_WAIT).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_their_status_and_name_the_field() {
    use base64::Engine;
    let dir = temp_dir("bad");
    let server = Server::start(&dir, None, &["--body-limit-mib", "1"]);
    let key = server.first_key.clone().unwrap();
    let api = server.client(&key);
    let expired = server.create_key("Usage", 1, Some("2020-01-01T00:00:00Z"));
    let good = dxf_request(
        &[("square_polyline_r12.dxf", 1)],
        (100.0, 100.0),
        Some("https://example.com/hook"),
        1.0,
        false,
    );
    let with = |path: &[&str], v: Value| {
        let mut r = good.clone();
        let mut at = &mut r;
        for p in &path[..path.len() - 1] {
            at = match p.parse::<usize>() {
                Ok(i) => &mut at[i],
                Err(_) => &mut at[*p],
            };
        }
        at[*path.last().unwrap()] = v;
        r
    };
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let http = reqwest::Client::new();
    let url = format!("{}/v1/nesting", server.base);
    let post = || {
        http.post(&url)
            .header("Accept", "application/json")
            .bearer_auth(&key)
    };

    // (what, request, status, text the answer must contain)
    let cases: Vec<(&str, reqwest::RequestBuilder, u16, &str)> = vec![
        ("malformed JSON", post().body("{\"Request\": {"), 400, "EOF"),
        ("not an object", post().body("[1,2]"), 400, "invalid type"),
        (
            "wrong type",
            post().json(&with(&["Request", "Parts", "0", "Quantity"], json!("four"))),
            400,
            "Request.Parts[0].Quantity",
        ),
        (
            "bad base64",
            post().json(&with(
                &["Request", "Parts", "0", "Base64EncodedGeometryDefinition"],
                json!("%%%"),
            )),
            400,
            "Request.Parts[0].Base64EncodedGeometryDefinition",
        ),
        (
            "undecodable geometry",
            post().json(&with(
                &["Request", "Parts", "0", "Base64EncodedGeometryDefinition"],
                json!(b64(b"this is not a drawing")),
            )),
            400,
            "Request.Parts[0]",
        ),
        (
            "missing Request",
            post().json(&json!({"ResultsWebhookUri": "https://example.com/h"})),
            400,
            "\"Request\"",
        ),
        (
            "no sheets",
            post().json(&with(&["Request", "Sheets"], json!([]))),
            400,
            "Request.Sheets",
        ),
        (
            "unknown enum",
            post().json(&with(
                &["Request", "NestSettings", "NestingOrigin"],
                json!("Middle"),
            )),
            400,
            "Request.NestSettings.NestingOrigin",
        ),
        (
            "unknown compression",
            post().json(&with(
                &["Request", "Parts", "0", "GeometryDefinitionCompressionType"],
                json!("Rar"),
            )),
            400,
            "GeometryDefinitionCompressionType",
        ),
        (
            "http webhook",
            post().json(&with(&["ResultsWebhookUri"], json!("http://example.com/h"))),
            400,
            "ResultsWebhookUri",
        ),
        (
            "relative webhook",
            post().json(&with(&["ResultsWebhookUri"], json!("/hook"))),
            400,
            "ResultsWebhookUri",
        ),
        (
            "no webhook",
            post().json(&with(&["ResultsWebhookUri"], Value::Null)),
            400,
            "ResultsWebhookUri",
        ),
        (
            "private webhook address",
            post().json(&with(&["ResultsWebhookUri"], json!("https://10.1.2.3/h"))),
            400,
            "ResultsWebhookUri",
        ),
        (
            "no key and no Accept: the key is checked first",
            http.post(&url).json(&good),
            401,
            "Authorization",
        ),
        (
            "no Accept",
            http.post(&url).bearer_auth(&key).json(&good),
            406,
            "Accept",
        ),
        (
            "wrong Accept",
            http.post(&url)
                .bearer_auth(&key)
                .header("Accept", "text/xml")
                .json(&good),
            406,
            "Accept",
        ),
        (
            "no key",
            http.post(&url)
                .header("Accept", "application/json")
                .json(&good),
            401,
            "Authorization",
        ),
        (
            "not Bearer",
            http.post(&url)
                .header("Accept", "application/json")
                .header("Authorization", format!("Basic {key}"))
                .json(&good),
            401,
            "Bearer",
        ),
        (
            "unknown key",
            http.post(&url)
                .header("Accept", "application/json")
                .bearer_auth("kerf_0123456789abcdef_00")
                .json(&good),
            401,
            "not valid",
        ),
        (
            "expired key",
            http.post(&url)
                .header("Accept", "application/json")
                .bearer_auth(&expired)
                .json(&good),
            401,
            "expired",
        ),
        (
            "status without id",
            api.get("/v1/nesting/status"),
            400,
            "RequestId",
        ),
        (
            "status of unknown job",
            api.get("/v1/nesting/status?RequestId=nope"),
            404,
            "nope",
        ),
        (
            "result of unknown job",
            api.post("/v1/nesting/result/")
                .json(&json!({"RequestId": "nope"})),
            404,
            "nope",
        ),
        (
            "unknown endpoint",
            api.get("/v1/nesting/nothing"),
            404,
            "/v1/nesting/nothing",
        ),
        (
            "empty quote",
            api.post("/v1/nesting/quotenesting").json(&json!({})),
            400,
            "Request",
        ),
        (
            "empty legacy submission",
            api.post("/v1/nesting/legacy").json(&json!({})),
            400,
            "LegacyNestingXML",
        ),
    ];
    for (what, req, status, needle) in cases {
        let a = api.send(req).await;
        assert_eq!(a.status, status, "{what}: {}", a.text);
        assert!(
            a.text.contains(needle),
            "{what}: answer {} does not mention {needle}",
            a.text
        );
        if a.text.starts_with('{') {
            assert!(a.body.is_object(), "{what}: JSON body");
        }
        if status == 400 && !what.starts_with("status") && !what.starts_with("result") {
            // submissions answer in the ApiNestingResult shape, naming the field
            assert_eq!(a.body["RequestId"], "", "{what}: {}", a.text);
            assert!(
                a.body["Errors"][0]["FieldName"].is_string(),
                "{what}: {}",
                a.text
            );
        }
        if status == 401 || status == 406 {
            assert_eq!(
                a.body["RequestId"], "",
                "{what}: the ApiNestingResult shape"
            );
        }
    }
    // too big: refused from its declared length, before the body is sent
    let raw = too_big_declared(&server.base, &key).await;
    assert!(raw.starts_with("HTTP/1.1 413"), "{raw}");
    assert!(
        raw.contains("\"RequestId\":\"\"") && raw.contains("larger"),
        "{raw}"
    );

    // nothing was queued, and the server is fine
    assert_eq!(
        api.send(api.get("/v1/nesting/failures")).await.body,
        json!([])
    );
    let ok = api.post_json("/v1/nesting", &good).await;
    assert_eq!(ok.status, 200, "{}", ok.text);
    let health = reqwest::get(format!("{}/healthz", server.base))
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    let openapi: Value = reqwest::get(format!("{}/openapi.json", server.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(openapi["openapi"].as_str().unwrap().starts_with("3."));
    for path in [
        "/v1/nesting",
        "/v1/nesting/geometry",
        "/v1/nesting/parametric",
        "/v1/nesting/status",
        "/v1/nesting/result/",
        "/v1/nesting/delayedstart",
        "/v1/nesting/failures",
        "/v1/auth/validate",
        "/v1/apiKey/validUntil",
        "/healthz",
        "/readyz",
    ] {
        assert!(
            openapi["paths"][path].is_object(),
            "{path} in the OpenAPI document"
        );
    }
    // both methods of the export call, and the render call
    assert!(openapi["paths"]["/v1/nesting/export"]["get"].is_object());
    assert!(openapi["paths"]["/v1/nesting/export"]["post"].is_object());
    assert!(openapi["paths"]["/v1/nesting/render/"]["get"].is_object());
    let schemas = &openapi["components"]["schemas"];
    for s in [
        "RenderResponse",
        "ExportFailure",
        "DxfNestingRequest",
        "Base64Part",
        "NestingResultData",
        "NestingStatusResponse",
        "ReportSourceResponseV1",
    ] {
        assert!(schemas[s].is_object(), "{s} in the OpenAPI document");
    }
    assert!(schemas["Base64Part"]["properties"]["Base64EncodedGeometryDefinition"].is_object());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn key_endpoints_and_parametric_submissions() {
    let dir = temp_dir("keys");
    let receiver = Receiver::start(&dir).await;
    let server = Server::start(&dir, Some(&receiver), &[]);
    let admin = server.client(server.first_key.as_deref().unwrap());
    let v = admin.send(admin.get("/v1/auth/validate")).await;
    assert_eq!(
        (v.status, v.body["Valid"].clone(), v.body["KeyType"].clone()),
        (200, json!(true), json!("Admin"))
    );
    let until = admin.send(admin.get("/v1/apiKey/validUntil")).await;
    assert_eq!(until.body["Expires"], "9999-12-31T23:59:59Z");
    let dated = server.client(&server.create_key("Usage", 2, Some("2099-06-30T12:00:00+02:00")));
    let until = dated.send(dated.get("/v1/apiKey/validUntil")).await;
    assert_eq!(until.body["Expires"], "2099-06-30T10:00:00.000Z");
    // a parametric nest submitted with the dated Usage key runs end to end
    let req = json!({
        "ResultsWebhookUri": format!("{}/param", receiver.url),
        "Request": {
            "Parts": [
                {"Identifier": "ring", "EncodedPartJson": base64_json(&json!({"Shape": "Ring", "OuterDiameter": 80, "InnerDiameter": 50})), "Quantity": 3},
                {"Identifier": "plate", "EncodedPartJson": base64_json(&json!({"Shape": "Rectangle", "Width": 120, "Height": 60})), "Quantity": 2},
            ],
            "Sheets": [{"Identifier": "S", "RectangularXDimension": 300, "RectangularYDimension": 200}],
            "NestSettings": {"MaxRunTimeSeconds": 1, "PartSpacing": 3, "MaximumCPUCount": 1},
        }
    });
    let a = dated.post_json("/v1/nesting/parametric", &req).await;
    assert_eq!(a.status, 200, "{}", a.text);
    let id = a.body["RequestId"].as_str().unwrap();
    let got = receiver.wait_final(id, FINAL_WAIT).await;
    assert_eq!(got.last().unwrap().body["Status"]["PartsPlaced"], 5);
    // keys of one account see each other's jobs
    assert_eq!(
        admin.status(id).await.status,
        200,
        "keys of one account share jobs"
    );
}

fn base64_json(v: &Value) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(v.to_string())
}

/// Sends only the head of a POST declaring a 2 MiB body and returns what the server answers.
async fn too_big_declared(base: &str, key: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = base.trim_start_matches("http://");
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /v1/nesting HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\nContent-Length: 2097152\r\n\r\n"
    );
    s.write_all(head.as_bytes()).await.unwrap();
    let mut buf = vec![0u8; 8192];
    let n = tokio::time::timeout(Duration::from_secs(10), s.read(&mut buf))
        .await
        .expect("answered without waiting for the body")
        .unwrap();
    String::from_utf8_lossy(&buf[..n]).to_string()
}
