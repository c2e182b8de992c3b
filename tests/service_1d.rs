//! 1D nesting through the service: the real `kerf serve` binary, a real HTTPS receiver, plans
//! small enough to check by hand.

mod support;

use serde_json::{json, Value};
use std::time::Duration;
use support::*;

const FINAL_WAIT: Duration = Duration::from_secs(60);

fn request(url: &str, stock: Value, parts: Value) -> Value {
    json!({
        "Request": {
            "Stock": stock,
            "Parts": parts,
            "Kerf": 5,
            "StartTrim": 10,
            "EndTrim": 10,
            "MaxRunTimeSeconds": 5,
            "Objective": "MinimiseStock"
        },
        "ResultsWebhookUri": url
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_1d_plan_is_delivered_and_served_and_an_impossible_one_says_why() {
    let dir = temp_dir("cut1d");
    let receiver = Receiver::start(&dir).await;
    let server = Server::start(&dir, Some(&receiver), &[]);
    let api = server.client(server.first_key.as_deref().unwrap());
    let url = format!("{}/cut1d", receiver.url);

    // two 2990s fill a 6000 bar with trims 10 + 10 and one kerf of 5 (5995 used); the 500
    // needs a second bar: 2 bars, and no plan has fewer (2 x 2995 + 505 > 6000 - 20 + 5)
    let req = request(
        &url,
        json!([{"Identifier": "6m", "Length": 6000}]),
        json!([
            {"Identifier": "A", "Length": 2990, "Quantity": 2},
            {"Identifier": "B", "Length": 500, "Quantity": 1}
        ]),
    );
    let id = api.submit("/v1/nesting/1D", &req).await;
    let got = receiver.wait_final(&id, FINAL_WAIT).await;
    let last = got.last().unwrap();
    assert_eq!(last.body["RequestId"], id.as_str());
    assert_eq!(last.body["NestingStatus"], 1);
    let result = &last.body["Result"];
    assert_eq!(result["Status"], "Success", "{result:#}");
    let plan = &result["Result"];
    assert_eq!(plan["NumberOfUniqueNests"], 2);
    assert_eq!(plan["BarsUsed"], 2);
    assert_eq!(plan["ProvenOptimal"], true);
    // each bar by hand: runs start after the start trim, each piece and its kerf after the
    // previous; the waste is what pieces, kerfs and trims leave of 6000
    let mut cut = std::collections::BTreeMap::new();
    for nest in plan["Nests"].as_array().unwrap() {
        assert_eq!(nest["StockIdentifier"], "6m");
        assert_eq!(nest["StockLength"], 6000.0);
        let mut x = 10.0;
        let mut pieces = 0u64;
        for run in nest["PlacedLengths"].as_array().unwrap() {
            let (q, len) = (
                run["Quantity"].as_u64().unwrap(),
                run["Length"].as_f64().unwrap(),
            );
            assert_eq!(run["PlacedX"].as_f64().unwrap(), x, "{nest:#}");
            x += q as f64 * (len + 5.0);
            pieces += q;
            *cut.entry(run["PartIdentifier"].as_str().unwrap().to_string())
                .or_insert(0u64) += q * nest["Multiplicity"].as_u64().unwrap();
        }
        let used = x - 5.0 + 10.0; // no kerf after the last piece; the end trim
        assert!(used <= 6000.0 && pieces > 0, "{nest:#}");
        assert_eq!(
            nest["WasteLength"].as_f64().unwrap(),
            6000.0 - used,
            "{nest:#}"
        );
    }
    assert_eq!(cut, [("A".to_string(), 2), ("B".to_string(), 1)].into());

    // the result endpoint serves the same body; the status is Completed
    let served = api
        .post_json("/v1/nesting/1D/result", &json!({"RequestId": id}))
        .await;
    assert_eq!(served.status, 200, "{}", served.text);
    assert_eq!(&served.body, result);
    assert_eq!(api.status(&id).await.body["Status"], "Completed");
    // the 2D result endpoint points to the 1D one
    let wrong = api
        .post_json("/v1/nesting/result/", &json!({"RequestId": id}))
        .await;
    assert_eq!(wrong.status, 404);
    assert!(
        wrong.text.contains("/v1/nesting/1D/result"),
        "{}",
        wrong.text
    );

    // every piece longer than every bar: the nest runs and says why nothing was cut
    let req = request(
        &url,
        json!([{"Identifier": "6m", "Length": 6000}]),
        json!([{"Identifier": "long", "Length": 7000, "Quantity": 2}]),
    );
    let id = api.submit("/v1/nesting/1D", &req).await;
    let got = receiver.wait_final(&id, FINAL_WAIT).await;
    let last = got.last().unwrap();
    assert_eq!(last.body["NestingStatus"], 2);
    let result = &last.body["Result"];
    assert_eq!(result["Status"], "Failure");
    let report = result["StatusReport"].as_str().unwrap();
    assert!(
        report.contains("long") && report.contains("longer than every stock length"),
        "{report}"
    );
    let served = api
        .post_json("/v1/nesting/1D/result", &json!({"RequestId": id}))
        .await;
    assert_eq!(served.status, 200);
    assert_eq!(&served.body, result);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_1d_requests_name_the_field_in_response_status() {
    let dir = temp_dir("cut1d-bad");
    let server = Server::start(&dir, None, &[]);
    let api = server.client(server.first_key.as_deref().unwrap());
    let url = "https://example.com/hook";
    let good_stock = json!([{"Length": 6000}]);
    let good_parts = json!([{"Length": 1000, "Quantity": 2}]);
    let mut with_bad_objective = request(url, good_stock.clone(), good_parts.clone());
    with_bad_objective["Request"]["Objective"] = json!("Cheapest");
    let mut without_webhook = request(url, good_stock.clone(), good_parts.clone());
    without_webhook
        .as_object_mut()
        .unwrap()
        .remove("ResultsWebhookUri");
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "no stock",
            request(url, json!([]), good_parts.clone()),
            "Request.Stock",
        ),
        (
            "negative stock length",
            request(url, json!([{"Length": -5}]), good_parts.clone()),
            "Request.Stock[0].Length",
        ),
        (
            "no parts",
            request(url, good_stock.clone(), Value::Null),
            "Request.Parts",
        ),
        (
            "zero quantity",
            request(
                url,
                good_stock.clone(),
                json!([{"Length": 10, "Quantity": 0}]),
            ),
            "Request.Parts[0].Quantity",
        ),
        (
            "fractional quantity",
            request(
                url,
                good_stock.clone(),
                json!([{"Length": 10, "Quantity": 1.5}]),
            ),
            "Request.Parts[0].Quantity",
        ),
        ("unknown objective", with_bad_objective, "Request.Objective"),
        ("no webhook", without_webhook, "ResultsWebhookUri"),
        (
            "plain http webhook",
            request(
                "http://example.com/hook",
                good_stock.clone(),
                good_parts.clone(),
            ),
            "ResultsWebhookUri",
        ),
        (
            "wrongly typed kerf",
            json!({"Request": {"Stock": good_stock, "Parts": good_parts, "Kerf": "thin"}, "ResultsWebhookUri": url}),
            "Request.Kerf",
        ),
    ];
    for (what, body, field) in cases {
        let a = api.post_json("/v1/nesting/1D", &body).await;
        assert_eq!(a.status, 400, "{what}: {}", a.text);
        let named = |list: &Value| {
            list.as_array()
                .is_some_and(|l| l.iter().any(|e| e["FieldName"] == field))
        };
        assert!(
            named(&a.body["Errors"]),
            "{what}: Errors name {field}: {}",
            a.text
        );
        assert!(
            named(&a.body["ResponseStatus"]["Errors"]),
            "{what}: ResponseStatus names {field}: {}",
            a.text
        );
        assert_eq!(a.body["ResponseStatus"]["ErrorCode"], "ValidationError");
    }
    let a = api.post_json("/v1/nesting/1D/result", &json!({})).await;
    assert_eq!(a.status, 400, "{}", a.text);
    assert_eq!(a.body["Status"], "Failure");
    assert_eq!(
        a.body["ResponseStatus"]["Errors"][0]["FieldName"],
        "RequestId"
    );
    let a = api
        .post_json(
            "/v1/nesting/1D/result",
            &json!({"RequestId": "no-such-job"}),
        )
        .await;
    assert_eq!(a.status, 404, "{}", a.text);
    assert_eq!(a.body["ResponseStatus"]["ErrorCode"], "NotFound");
    // nothing was queued
    let ready = api.send(api.get("/readyz")).await;
    assert_eq!(ready.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_a_running_1d_plan_and_it_finishes_after_restart() {
    // Hard28 BPP14: its optimum is one bar above the LP bound, which the solver cannot prove,
    // so it runs to its time limit
    let text = std::fs::read_to_string(data("cut1d/Hard28_BPP14.txt")).unwrap();
    let nums: Vec<f64> = text
        .split_whitespace()
        .map(|t| t.parse().unwrap())
        .collect();
    let parts: Vec<Value> = nums[2..]
        .chunks(2)
        .map(|c| json!({"Length": c[0], "Quantity": c[1]}))
        .collect();
    let dir = temp_dir("cut1d-term");
    let receiver = Receiver::start(&dir).await;
    let mut server = Server::start(&dir, Some(&receiver), &[]);
    let key = server.first_key.clone().unwrap();
    let mut req = request(
        &format!("{}/term1d", receiver.url),
        json!([{"Length": nums[1]}]),
        json!(parts),
    );
    req["Request"]["Kerf"] = json!(0);
    req["Request"]["StartTrim"] = json!(0);
    req["Request"]["EndTrim"] = json!(0);
    req["Request"]["MaxRunTimeSeconds"] = json!(20);
    let id = server.client(&key).submit("/v1/nesting/1D", &req).await;
    server
        .client(&key)
        .wait_status(&id, "Running", Duration::from_secs(30))
        .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let took = server.terminate();
    assert!(
        took < Duration::from_secs(10),
        "a 20 s plan does not hold shutdown up ({took:?})"
    );
    assert!(receiver.for_job(&id).is_empty());
    // handed back, not failed: the next start plans it to the end
    server.restart();
    let got = receiver.wait_final(&id, FINAL_WAIT).await;
    let last = got.last().unwrap();
    assert_eq!(last.body["NestingStatus"], 1);
    assert_eq!(last.body["Result"]["Result"]["BarsUsed"], 62);
}
