//! Key management over HTTP through the real `kerf serve` (spec "Account and keys"): create,
//! list, revoke, regenerate, change type, browser origins; Admin only; one account never sees
//! or touches another's keys; the plan's active-key cap.

mod support;

use serde_json::{json, Value};
use std::process::Command;
use support::*;

/// A call with `key` (Accept: application/json), optionally with a JSON body and an Origin.
async fn call(
    server: &Server,
    key: &str,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
    origin: Option<&str>,
) -> Answer {
    let c = server.client(key);
    let mut req = c
        .http
        .request(method, format!("{}{path}", server.base))
        .bearer_auth(key)
        .header("Accept", "application/json");
    if let Some(b) = body {
        req = req.json(&b);
    }
    if let Some(o) = origin {
        req = req.header("Origin", o);
    }
    c.send(req).await
}

async fn get(server: &Server, key: &str, path: &str) -> Answer {
    call(server, key, reqwest::Method::GET, path, None, None).await
}

async fn post(server: &Server, key: &str, path: &str, body: Value) -> Answer {
    call(server, key, reqwest::Method::POST, path, Some(body), None).await
}

async fn delete(server: &Server, key: &str, path: &str) -> Answer {
    call(server, key, reqwest::Method::DELETE, path, None, None).await
}

/// GET `path` with `key`, from a browser on `origin`.
async fn get_from(server: &Server, key: &str, path: &str, origin: &str) -> Answer {
    call(server, key, reqwest::Method::GET, path, None, Some(origin)).await
}

async fn validate(server: &Server, key: &str, origin: Option<&str>) -> u16 {
    call(
        server,
        key,
        reqwest::Method::GET,
        "/v1/auth/validate",
        None,
        origin,
    )
    .await
    .status
}

/// Runs `kerf ARGS... --database DB` on the server's store and gives its standard output,
/// trimmed (the commands that make things print them alone).
fn kerf(server: &Server, args: &[&str]) -> String {
    let o = Command::new(kerf_bin())
        .args(args)
        .arg("--database")
        .arg(&server.db)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap().trim().to_string()
}

/// A server on a fresh store, and the Admin key its first start printed.
fn start(name: &str) -> (Server, String) {
    let server = Server::start(&temp_dir(name), None, &[]);
    let admin = server
        .first_key
        .clone()
        .expect("the first start prints a key");
    (server, admin)
}

/// A new Admin key on a new account of the server's store (`kerf accounts create`, then
/// `kerf keys create --account`).
fn other_account_admin(server: &Server) -> String {
    let id = kerf(server, &["accounts", "create", "--name", "other"]);
    kerf(
        server,
        &["keys", "create", "--type", "Admin", "--account", &id],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_are_created_listed_regenerated_retyped_and_revoked_by_admin_keys_only() {
    let (server, admin) = start("keys");

    // create: the secret once, the fields as given
    let a = post(
        &server,
        &admin,
        "/admin/keys",
        json!({"Reference": "line 2", "Email": "ops@shop.example", "Parallelism": 3}),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.text);
    let usage = a.body["ApiKey"].as_str().unwrap().to_string();
    let usage_id = a.body["ApiKeyId"].as_str().unwrap().to_string();
    assert!(usage.starts_with(&format!("kerf_{usage_id}_")));
    assert_eq!(a.body["ClientRef"], "line 2");
    assert_eq!(a.body["KeyType"], "Usage");
    assert_eq!(a.body["Parallelism"], 3);
    assert_eq!(a.body["IsActive"], true);
    assert_eq!(a.body["Expired"], false);
    assert!(a.body.get("Expires").is_none(), "never expires: no Expires");
    assert_eq!(validate(&server, &usage, None).await, 200);

    // a Usage key is refused on every admin call
    for (method, path) in [
        (reqwest::Method::GET, "/admin/keys".to_string()),
        (reqwest::Method::POST, "/admin/keys".to_string()),
        (reqwest::Method::DELETE, format!("/admin/keys/{usage_id}")),
        (
            reqwest::Method::POST,
            format!("/admin/keys/{usage_id}/regenerate"),
        ),
        (
            reqwest::Method::PATCH,
            format!("/admin/keys/{usage_id}/type"),
        ),
        (reqwest::Method::GET, format!("/apikeys/{usage_id}/origins")),
        (
            reqwest::Method::POST,
            format!("/apikeys/{usage_id}/origins"),
        ),
        (
            reqwest::Method::DELETE,
            format!("/apikeys/{usage_id}/origins"),
        ),
        (
            reqwest::Method::PATCH,
            format!("/admin/keys/{usage_id}/weight"),
        ),
    ] {
        let a = call(
            &server,
            &usage,
            method.clone(),
            &path,
            Some(json!({})),
            None,
        )
        .await;
        assert_eq!(a.status, 403, "{method} {path}: {}", a.text);
        assert!(a.text.contains("Admin"), "{}", a.text);
    }
    // and no key at all is 401
    let a = server
        .client("")
        .send(
            reqwest::Client::new()
                .get(format!("{}/admin/keys", server.base))
                .header("Accept", "application/json"),
        )
        .await;
    assert_eq!(a.status, 401, "{}", a.text);

    // bad fields name the field
    for (body, name) in [
        (json!({"Parallelism": 0}), "Parallelism"),
        (json!({"KeyType": "Boss"}), "KeyType"),
        (json!({"Expires": "tomorrow"}), "Expires"),
        (json!({"Expires": "2001-01-01T00:00:00Z"}), "Expires"),
        (json!({"Colour": "red"}), "Colour"),
    ] {
        let a = post(&server, &admin, "/admin/keys", body.clone()).await;
        assert_eq!(a.status, 400, "{body}: {}", a.text);
        assert!(a.text.contains(name), "{body}: {}", a.text);
    }

    // list: every key, no secrets
    let a = get(&server, &admin, "/admin/keys").await;
    assert_eq!(a.status, 200, "{}", a.text);
    let list = a.body.as_array().unwrap();
    assert_eq!(list.len(), 2, "{}", a.text);
    assert!(list.iter().all(|k| k.get("ApiKey").is_none()), "{}", a.text);
    assert!(list.iter().any(|k| k["ApiKeyId"] == usage_id.as_str()));
    assert!(list.iter().all(|k| k["Weight"] == 1.0));

    // regenerate: a new secret, the old one fails at once, everything else stays
    let a = post(
        &server,
        &admin,
        &format!("/apikeys/{usage_id}/origins"),
        json!({"Origin": "https://shop.example"}),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.text);
    let a = post(
        &server,
        &admin,
        &format!("/admin/keys/{usage_id}/regenerate"),
        json!({}),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.text);
    let renewed = a.body["ApiKey"].as_str().unwrap().to_string();
    assert_ne!(renewed, usage);
    assert_eq!(a.body["ApiKeyId"], usage_id.as_str());
    assert_eq!(a.body["ClientRef"], "line 2");
    assert_eq!(a.body["Parallelism"], 3);
    assert_eq!(a.body["Email"], "ops@shop.example");
    assert_eq!(validate(&server, &usage, None).await, 401);
    assert_eq!(validate(&server, &renewed, None).await, 200);
    let a = get(&server, &admin, &format!("/apikeys/{usage_id}/origins")).await;
    assert_eq!(
        a.body["Origins"],
        json!(["https://shop.example"]),
        "{}",
        a.text
    );
    // what the store kept, read back: expiry and type too
    let a = post(
        &server,
        &admin,
        "/admin/keys",
        json!({"Reference": "r2", "KeyType": "Admin", "Parallelism": 2, "Expires": "2099-01-01T00:00:00Z"}),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.text);
    let second_admin_id = a.body["ApiKeyId"].as_str().unwrap().to_string();
    let before = a.body.clone();
    let a = post(
        &server,
        &admin,
        &format!("/admin/keys/{second_admin_id}/regenerate"),
        json!({}),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.text);
    let listed = get(&server, &admin, "/admin/keys").await.body;
    let after = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["ApiKeyId"] == second_admin_id.as_str())
        .unwrap()
        .clone();
    for f in [
        "ClientRef",
        "KeyType",
        "Parallelism",
        "Expires",
        "Weight",
        "IsTrial",
    ] {
        assert_eq!(after[f], before[f], "{f} after regeneration");
    }
    // an expired key cannot be regenerated (and does not count against the cap, below)
    let expired = server.create_key("Usage", 1, Some("2001-01-01T00:00:00Z"));
    let expired_id = expired.split('_').nth(1).unwrap().to_string();
    let a = post(
        &server,
        &admin,
        &format!("/admin/keys/{expired_id}/regenerate"),
        json!({}),
    )
    .await;
    assert_eq!(a.status, 409, "{}", a.text);

    // type: Usage -> Admin opens the admin calls; the last active Admin cannot step down
    let patch = |key: String, id: String, t: &'static str| {
        let server = &server;
        async move {
            call(
                server,
                &key,
                reqwest::Method::PATCH,
                &format!("/admin/keys/{id}/type"),
                Some(json!({ "KeyType": t })),
                None,
            )
            .await
        }
    };
    let first_id = admin.split('_').nth(1).unwrap().to_string();
    // with two Admin keys one may step down; the last one may not, nor be revoked
    let a = patch(admin.clone(), second_admin_id.clone(), "Usage").await;
    assert_eq!(a.status, 200, "{}", a.text);
    let a = patch(admin.clone(), first_id.clone(), "Usage").await;
    assert_eq!(a.status, 409, "{}", a.text);
    let a = delete(&server, &admin, &format!("/admin/keys/{first_id}")).await;
    assert_eq!(a.status, 409, "{}", a.text);
    let a = patch(admin.clone(), usage_id.clone(), "Admin").await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.body["KeyType"], "Admin");
    assert_eq!(get(&server, &renewed, "/admin/keys").await.status, 200);
    let a = patch(admin.clone(), usage_id.clone(), "usage").await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.body["KeyType"], "Usage");
    let a = patch(admin.clone(), usage_id.clone(), "Owner").await;
    assert_eq!(a.status, 400, "{}", a.text);

    // revoke: the record with CancelledDate; the key fails at once; again is the same answer
    let del = |id: String| {
        let server = &server;
        let admin = admin.clone();
        async move { delete(server, &admin, &format!("/admin/keys/{id}")).await }
    };
    let a = del(usage_id.clone()).await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.body["IsActive"], false);
    let cancelled = a.body["CancelledDate"].as_str().unwrap().to_string();
    assert_eq!(validate(&server, &renewed, None).await, 401);
    let a = del(usage_id.clone()).await;
    assert_eq!(a.body["CancelledDate"], cancelled.as_str(), "{}", a.text);
    let a = post(
        &server,
        &admin,
        &format!("/admin/keys/{usage_id}/regenerate"),
        json!({}),
    )
    .await;
    assert_eq!(a.status, 409, "{}", a.text);
    assert_eq!(del("0123abcd".into()).await.status, 404);

    // another account: sees only its own keys, and ours are unknown to it
    let other = other_account_admin(&server);
    let a = get(&server, &other, "/admin/keys").await;
    assert_eq!(a.body.as_array().map(Vec::len), Some(1), "{}", a.text);
    let origin = json!({"Origin": "https://x.example"});
    for (method, path, body) in [
        (
            reqwest::Method::DELETE,
            format!("/admin/keys/{first_id}"),
            None,
        ),
        (
            reqwest::Method::POST,
            format!("/admin/keys/{first_id}/regenerate"),
            None,
        ),
        (
            reqwest::Method::PATCH,
            format!("/admin/keys/{first_id}/type"),
            Some(json!({"KeyType": "Usage"})),
        ),
        (
            reqwest::Method::GET,
            format!("/apikeys/{usage_id}/origins"),
            None,
        ),
        (
            reqwest::Method::POST,
            format!("/apikeys/{usage_id}/origins"),
            Some(origin.clone()),
        ),
        (
            reqwest::Method::DELETE,
            format!("/apikeys/{usage_id}/origins"),
            Some(origin),
        ),
    ] {
        let a = call(&server, &other, method.clone(), &path, body, None).await;
        assert_eq!(a.status, 404, "{method} {path}: {}", a.text);
    }
    assert_eq!(validate(&server, &admin, None).await, 200, "ours untouched");

    // the plan's cap on active keys (default 10): revoked and expired keys do not count
    let mut made = 0;
    loop {
        let a = post(&server, &admin, "/admin/keys", json!({})).await;
        if a.status == 409 {
            assert!(a.text.contains("10 active keys"), "{}", a.text);
            break;
        }
        assert_eq!(a.status, 200, "{}", a.text);
        made += 1;
        assert!(made < 20, "no cap");
    }
    assert_eq!(made, 8, "the first two keys and 8 more");
    let a = get(&server, &admin, "/admin/keys").await;
    let last = a.body.as_array().unwrap().last().unwrap()["ApiKeyId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(del(last).await.status, 200);
    // one place free, four asking at once: exactly one gets it
    let ask = || post(&server, &admin, "/admin/keys", json!({}));
    let (a, b, c, d) = tokio::join!(ask(), ask(), ask(), ask());
    let mut statuses = vec![a.status, b.status, c.status, d.status];
    statuses.sort();
    assert_eq!(statuses, vec![200, 409, 409, 409]);

    // the fair-sharing weight: a number above 0, at most 1000
    let weight_path = format!("/admin/keys/{first_id}/weight");
    let weight = |body: Value| {
        let (server, admin, path) = (&server, admin.clone(), weight_path.clone());
        async move {
            call(
                server,
                &admin,
                reqwest::Method::PATCH,
                &path,
                Some(body),
                None,
            )
            .await
        }
    };
    let a = weight(json!({"Weight": 2.5})).await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.body["Weight"], 2.5);
    let listed = get(&server, &admin, "/admin/keys").await.body;
    assert!(listed
        .as_array()
        .unwrap()
        .iter()
        .any(|k| k["ApiKeyId"] == first_id.as_str() && k["Weight"] == 2.5));
    for bad in [
        json!({"Weight": 0}),
        json!({"Weight": -1}),
        json!({"Weight": 5000}),
        json!({}),
    ] {
        let a = weight(bad.clone()).await;
        assert_eq!(a.status, 400, "{bad}: {}", a.text);
        assert!(a.text.contains("Weight"), "{}", a.text);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_with_origins_is_used_only_from_them() {
    let (server, admin) = start("origins");
    let a = post(
        &server,
        &admin,
        "/admin/keys",
        json!({"Reference": "browser"}),
    )
    .await;
    let key = a.body["ApiKey"].as_str().unwrap().to_string();
    let id = a.body["ApiKeyId"].as_str().unwrap().to_string();
    let path = format!("/apikeys/{id}/origins");

    // no list: not limited
    assert_eq!(
        validate(&server, &key, Some("https://anything.example")).await,
        200
    );
    let a = get(&server, &admin, &path).await;
    assert_eq!(a.body["Origins"], json!([]), "{}", a.text);

    // kept in the form browsers send: the default port left out
    let a = post(
        &server,
        &admin,
        &path,
        json!({"Origin": "https://a.example:443"}),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.body["Origins"], json!(["https://a.example"]));
    let a = post(
        &server,
        &admin,
        &path,
        json!({"Origin": "http://b.example:8080"}),
    )
    .await;
    assert_eq!(
        a.body["Origins"],
        json!(["https://a.example", "http://b.example:8080"])
    );
    for bad in ["a.example", "https://a.example/app", "ftp://a.example"] {
        let a = post(&server, &admin, &path, json!({ "Origin": bad })).await;
        assert_eq!(a.status, 400, "{bad}: {}", a.text);
        assert!(a.text.contains("Origin"), "{}", a.text);
    }

    // the origin matrix: scheme, host and non-default port must all match
    for (origin, want) in [
        ("https://a.example", 200),
        ("https://a.example:443", 200),
        ("HTTPS://A.EXAMPLE", 200),
        ("http://a.example", 403),
        ("https://a.example:8443", 403),
        ("https://sub.a.example", 403),
        ("http://b.example:8080", 200),
        ("http://b.example", 403),
        ("null", 403),
    ] {
        assert_eq!(
            validate(&server, &key, Some(origin)).await,
            want,
            "{origin}"
        );
    }
    // CORS: a preflight is answered for the origins some key allows, with what the API uses
    let preflight = |origin: &'static str| {
        let url = format!("{}/v1/nesting", server.base);
        async move {
            reqwest::Client::new()
                .request(reqwest::Method::OPTIONS, url)
                .header("Origin", origin)
                .header("Access-Control-Request-Method", "POST")
                .header(
                    "Access-Control-Request-Headers",
                    "authorization,content-type",
                )
                .send()
                .await
                .unwrap()
        }
    };
    let r = preflight("https://a.example").await;
    assert_eq!(r.status(), 204);
    let h = r.headers();
    assert_eq!(h["access-control-allow-origin"], "https://a.example");
    let methods = h["access-control-allow-methods"].to_str().unwrap();
    assert!(
        methods.contains("POST") && methods.contains("DELETE"),
        "{methods}"
    );
    let headers = h["access-control-allow-headers"].to_str().unwrap();
    assert!(headers.contains("Authorization") && headers.contains("Content-Type"));
    assert_eq!(preflight("http://a.example").await.status(), 403);
    assert_eq!(preflight("https://evil.example").await.status(), 403);
    // and the answers to such a browser's requests may be read by its page
    let a = get_from(&server, &key, "/v1/auth/validate", "https://a.example").await;
    assert_eq!(a.status, 200);
    assert_eq!(
        a.headers["access-control-allow-origin"],
        "https://a.example"
    );
    let a = get_from(&server, &key, "/v1/auth/validate", "http://a.example").await;
    assert_eq!(a.status, 403);
    assert!(a.headers.get("access-control-allow-origin").is_none());

    // a request without Origin is not a browser's
    assert_eq!(validate(&server, &key, None).await, 200);
    // the Admin key has no list of its own
    assert_eq!(
        validate(&server, &admin, Some("http://b.example")).await,
        200
    );

    // removal, by body or by query; an origin not on the list is 404
    let a = call(
        &server,
        &admin,
        reqwest::Method::DELETE,
        &path,
        Some(json!({"Origin": "https://a.example"})),
        None,
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.body["Origins"], json!(["http://b.example:8080"]));
    let a = delete(
        &server,
        &admin,
        &format!("{path}?Origin=http%3A%2F%2Fb.example%3A8080"),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.body["Origins"], json!([]));
    let a = call(
        &server,
        &admin,
        reqwest::Method::DELETE,
        &path,
        Some(json!({"Origin": "https://a.example"})),
        None,
    )
    .await;
    assert_eq!(a.status, 404, "{}", a.text);
    // an empty list again: not limited, and no preflight is answered for the origin
    assert_eq!(validate(&server, &key, Some("http://a.example")).await, 200);
    assert_eq!(preflight("https://a.example").await.status(), 403);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_reports_the_plan_and_the_allowance_falls_by_each_nests_time() {
    let dir = temp_dir("status");
    let receiver = Receiver::start(&dir).await;
    let server = Server::start(&dir, Some(&receiver), &[]);
    let admin = server
        .first_key
        .clone()
        .expect("the first start prints a key");
    let usage = server.create_key("Usage", 2, None);
    kerf(
        &server,
        &[
            "accounts",
            "set-plan",
            "--account",
            "1",
            "--included-minutes",
            "10",
            "--credit",
            "5",
            "--had-trial",
            "true",
        ],
    );
    let a = get(&server, &usage, "/v1/status").await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.body["HasHadTrail"], true, "the spec's spelling");
    assert_eq!(a.body["IsOnTrial"], false);
    assert_eq!(a.body["RequiresPayment"], false);
    let balance = &a.body["NestingAccountBalance"];
    assert_eq!(balance["UserId"], 1);
    assert_eq!(balance["RemainingAllowanceSeconds"], 600.0);
    assert_eq!(balance["RemainingAllowance"], 10.0);
    assert_eq!(balance["RemainingCredit"], 5.0);
    assert_eq!(balance["HasActiveSubscription"], true);
    assert!(balance["PaidUntil"].is_null());
    let day = |field: &str| {
        chrono::DateTime::parse_from_rfc3339(balance[field].as_str().unwrap())
            .unwrap()
            .timestamp()
    };
    assert_eq!(day("EndDate") - day("StartDate"), 30 * 24 * 3600);

    // a real nest of about two seconds: the allowance falls by its nesting time
    let url = format!("{}/status", receiver.url);
    let req = dxf_request(&[("part_1.dxf", 4)], (600.0, 400.0), Some(&url), 2.0, false);
    let id = server.client(&usage).submit("/v1/nesting", &req).await;
    receiver
        .wait_final(&id, std::time::Duration::from_secs(120))
        .await;
    let a = get(&server, &admin, "/v1/status").await;
    let left = a.body["NestingAccountBalance"]["RemainingAllowanceSeconds"]
        .as_f64()
        .unwrap();
    assert!(left < 600.0 - 1.0 && left > 600.0 - 60.0, "{left}");
    let shown = kerf(&server, &["accounts", "show", "--account", "1"]);
    assert!(shown.contains("used by 1 nests"), "{shown}");
    // another account's status is its own
    let other = other_account_admin(&server);
    let a = get(&server, &other, "/v1/status").await;
    assert_eq!(a.body["NestingAccountBalance"]["UserId"], 2, "{}", a.text);
    assert_eq!(
        a.body["NestingAccountBalance"]["RemainingAllowanceSeconds"], 36000.0,
        "a new account's default plan: 600 minutes, none used"
    );
    let listed = kerf(&server, &["accounts", "list"]);
    assert!(listed.contains("other"), "{listed}");

    // the account's recent jobs (the dashboard's list): Admin only, its own account's only
    let jobs = get(&server, &admin, "/admin/jobs?Limit=10").await;
    assert_eq!(jobs.status, 200, "{}", jobs.text);
    let listed = jobs.body["Jobs"].as_array().unwrap();
    assert_eq!(listed.len(), 1, "{}", jobs.text);
    assert_eq!(listed[0]["RequestId"], id.as_str());
    assert_eq!(listed[0]["Kind"], "2D nest");
    assert_eq!(listed[0]["Status"], "Completed");
    assert_eq!(listed[0]["HasRender"], true);
    assert!(listed[0]["StartedAt"].is_string() && listed[0]["CompletedAt"].is_string());
    assert_eq!(get(&server, &usage, "/admin/jobs").await.status, 403);
    let bad = get(&server, &admin, "/admin/jobs?Limit=0").await;
    assert_eq!(bad.status, 400, "{}", bad.text);
    assert!(bad.text.contains("Limit"), "{}", bad.text);
    let theirs = get(&server, &other, "/admin/jobs").await;
    assert_eq!(theirs.body["Jobs"], json!([]), "{}", theirs.text);
}

/// The fairness row of key `id` in a /usage/fairness answer.
fn fairness_row<'a>(usage: &'a Value, id: &str) -> &'a Value {
    usage["Keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ApiKeyId"] == id)
        .unwrap_or_else(|| panic!("no row for {id} in {usage}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fairness_admits_within_floor_and_pool_refuses_past_them_or_runs_overage() {
    let dir = temp_dir("fairness");
    let receiver = Receiver::start(&dir).await;
    let server = Server::start(&dir, Some(&receiver), &[]);
    let admin = server.first_key.clone().unwrap();
    let admin_id = admin.split('_').nth(1).unwrap().to_string();
    let usage = server.create_key("Usage", 2, None);
    let usage_id = usage.split('_').nth(1).unwrap().to_string();
    // 6 s included: a pool of 1.2 s, floors of 2.4 s for each of the two keys (weights 1)
    kerf(
        &server,
        &[
            "accounts",
            "set-plan",
            "--account",
            "1",
            "--included-minutes",
            "0.1",
            "--fairness",
            "true",
        ],
    );
    let book = get(&server, &admin, "/usage/fairness").await;
    assert_eq!(book.status, 200, "{}", book.text);
    assert_eq!(book.body["FairnessEnabled"], true);
    assert_eq!(book.body["OverageEnabled"], false);
    assert_eq!(book.body["IncludedMinutes"], 0.1);
    let pool = book.body["SharedBurstMinutes"].as_f64().unwrap();
    assert!((pool - 0.02).abs() < 1e-9, "20 % of the included minutes");
    assert_eq!(book.body["Keys"].as_array().unwrap().len(), 2);
    for id in [&admin_id, &usage_id] {
        let row = fairness_row(&book.body, id);
        assert_eq!(row["Weight"], 1.0);
        assert_eq!(row["ConsumedMinutes"], 0.0);
        assert_eq!(row["ReservedMinutes"], 0.0);
        assert_eq!(row["OverageMinutes"], 0.0);
        let floor = row["EffectiveFloorMinutes"].as_f64().unwrap();
        assert!((floor - 0.04).abs() < 1e-9, "{row}");
        assert_eq!(row["Sizing"], "Under");
    }

    // a nest reserving 4 s: past the floor (2.4 s) by more than the pool (1.2 s) holds
    let hook = format!("{}/fair", receiver.url);
    let client = server.client(&usage);
    let big = dxf_request(
        &[("part_1.dxf", 2)],
        (600.0, 400.0),
        Some(&hook),
        4.0,
        false,
    );
    let a = client.post_json("/v1/nesting", &big).await;
    assert_eq!(a.status, 429, "{}", a.text);
    assert!(
        a.text.contains("floor") && a.text.contains("burst pool"),
        "{}",
        a.text
    );
    assert!(a.text.contains("overage is not enabled"), "{}", a.text);
    let retry: u64 = a.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!(retry >= 1, "{retry}");
    // within the floor: admitted, and it holds its 2 s while queued or running
    let small = dxf_request(
        &[("part_1.dxf", 2)],
        (600.0, 400.0),
        Some(&hook),
        2.0,
        false,
    );
    let id = client.submit("/v1/nesting", &small).await;
    let book = get(&server, &admin, "/usage/fairness").await;
    let row = fairness_row(&book.body, &usage_id);
    let consumed = row["ConsumedMinutes"].as_f64().unwrap();
    let reserved = row["ReservedMinutes"].as_f64().unwrap();
    assert!(
        (reserved - 2.0 / 60.0).abs() < 1e-9 || (reserved == 0.0 && consumed > 0.0),
        "reserved while it runs, consumed once it ended: {row}"
    );
    receiver
        .wait_final(&id, std::time::Duration::from_secs(120))
        .await;
    let book = get(&server, &admin, "/usage/fairness").await;
    let row = fairness_row(&book.body, &usage_id);
    assert_eq!(row["ReservedMinutes"], 0.0, "{row}");
    let consumed = row["ConsumedMinutes"].as_f64().unwrap();
    assert!(consumed > 0.0 && consumed < 1.0, "{row}");
    assert_eq!(row["OverageMinutes"], 0.0);
    // the other key's row did not move
    assert_eq!(fairness_row(&book.body, &admin_id)["ConsumedMinutes"], 0.0);

    // a held nest reserves nothing; its delayed start passes the same gate
    let mut held = big.clone();
    held["AutomaticallyStartNesting"] = json!(false);
    let held_id = client.submit("/v1/nesting", &held).await;
    let start = client
        .post_json("/v1/nesting/delayedstart", &json!({"RequestId": held_id}))
        .await;
    assert_eq!(start.status, 429, "{}", start.text);
    assert!(
        start.body["ErrorReason"]
            .as_str()
            .unwrap()
            .contains("floor"),
        "{}",
        start.text
    );
    assert!(start.headers.get("retry-after").is_some());

    // with overage on, the refused nest runs, and its minutes are overage
    kerf(
        &server,
        &[
            "accounts",
            "set-plan",
            "--account",
            "1",
            "--overage",
            "true",
        ],
    );
    let start = client
        .post_json("/v1/nesting/delayedstart", &json!({"RequestId": held_id}))
        .await;
    assert_eq!(start.status, 200, "{}", start.text);
    receiver
        .wait_final(&held_id, std::time::Duration::from_secs(120))
        .await;
    let after_held = fairness_row(
        &get(&server, &admin, "/usage/fairness").await.body,
        &usage_id,
    )["OverageMinutes"]
        .as_f64()
        .unwrap();
    assert!(after_held > 0.0);
    let id = client.submit("/v1/nesting", &big).await;
    receiver
        .wait_final(&id, std::time::Duration::from_secs(120))
        .await;
    let book = get(&server, &admin, "/usage/fairness").await;
    assert_eq!(book.body["OverageEnabled"], true);
    let row = fairness_row(&book.body, &usage_id);
    let overage = row["OverageMinutes"].as_f64().unwrap();
    let all = row["ConsumedMinutes"].as_f64().unwrap();
    assert!(overage > after_held && all > overage, "{row}");
    assert!(
        (all - overage - consumed).abs() < 1e-9,
        "the overage nest adds to ConsumedMinutes only as overage: {row}"
    );
    let floor = row["EffectiveFloorMinutes"].as_f64().unwrap();
    assert_eq!(
        row["Sizing"],
        if all > floor { "Over" } else { "Right" },
        "{row}"
    );

    // a Usage key may not read it; another account reads its own book only
    assert_eq!(get(&server, &usage, "/usage/fairness").await.status, 403);
    let other = other_account_admin(&server);
    let book = get(&server, &other, "/usage/fairness").await;
    assert_eq!(book.status, 200, "{}", book.text);
    assert_eq!(book.body["FairnessEnabled"], false, "informational only");
    assert_eq!(book.body["IncludedMinutes"], 600.0);
    let rows = book.body["Keys"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{}", book.text);
    assert_ne!(rows[0]["ApiKeyId"], usage_id.as_str());
    // with fairness off nothing is gated: the big nest is admitted on the other account
    let other_client = server.client(&other);
    let id = other_client.submit("/v1/nesting", &big).await;
    receiver
        .wait_final(&id, std::time::Duration::from_secs(120))
        .await;

    // revoking a key and making another does not give the plan's minutes back: the revoked
    // key's minutes (all but overage) stay in the book with no floor, drawn from the pool
    kerf(
        &server,
        &[
            "accounts",
            "set-plan",
            "--account",
            "1",
            "--overage",
            "false",
        ],
    );
    let before = fairness_row(
        &get(&server, &admin, "/usage/fairness").await.body,
        &usage_id,
    )["CountedMinutes"]
        .as_f64()
        .unwrap();
    assert!(before > 0.0);
    let revoked = delete(&server, &admin, &format!("/admin/keys/{usage_id}")).await;
    assert_eq!(revoked.status, 200, "{}", revoked.text);
    let fresh = server.create_key("Usage", 2, None);
    let book = get(&server, &admin, "/usage/fairness").await;
    assert!(
        book.body["Keys"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["ApiKeyId"] != usage_id.as_str()),
        "rows are active keys: {}",
        book.text
    );
    let drawn = book.body["SharedBurstDrawnMinutes"].as_f64().unwrap();
    assert!((drawn - before).abs() < 1e-9, "{drawn} {before}");
    // the new key's floor is 2.4 s; a 3 s nest needs 0.6 s of the pool, which the revoked
    // key's minutes already hold unless they were under 0.6 s
    let mid = dxf_request(
        &[("part_1.dxf", 2)],
        (600.0, 400.0),
        Some(&hook),
        3.0,
        false,
    );
    let a = server.client(&fresh).post_json("/v1/nesting", &mid).await;
    let pool_left = 0.02 - before;
    let expected = if pool_left >= 0.6 / 60.0 { 200 } else { 429 };
    assert_eq!(a.status, expected, "pool left {pool_left} min: {}", a.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_past_its_request_rate_gets_429_with_retry_after() {
    let server = Server::start(&temp_dir("rate"), None, &["--key-requests-per-minute", "3"]);
    let admin = server.first_key.clone().unwrap();
    let other = server.create_key("Usage", 1, None);
    for _ in 0..3 {
        assert_eq!(validate(&server, &admin, None).await, 200);
    }
    let a = get(&server, &admin, "/v1/auth/validate").await;
    assert_eq!(a.status, 429, "{}", a.text);
    assert!(a.text.contains("rate limit"), "{}", a.text);
    let retry: u64 = a.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=20).contains(&retry), "{retry}");
    assert_eq!(
        validate(&server, &other, None).await,
        200,
        "each key has its own"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_servers_own_public_origin_is_not_held_to_a_keys_origin_list() {
    let server = Server::start(
        &temp_dir("public-origin"),
        None,
        &["--public-origin", "https://KERF.example:443"],
    );
    let admin = server.first_key.clone().unwrap();
    let usage = server.create_key("Usage", 1, None);
    let usage_id = usage.split('_').nth(1).unwrap().to_string();
    let a = post(
        &server,
        &admin,
        &format!("/apikeys/{usage_id}/origins"),
        json!({"Origin": "https://a.example"}),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(
        validate(&server, &usage, Some("https://a.example")).await,
        200
    );
    assert_eq!(
        validate(&server, &usage, Some("https://kerf.example")).await,
        200,
        "the dashboard's origin, as the operator named it"
    );
    assert_eq!(
        validate(&server, &usage, Some("http://kerf.example")).await,
        403
    );
    assert_eq!(
        validate(&server, &usage, Some("https://b.example")).await,
        403
    );
    // the Host header is not trusted for it: an origin that matches Host is still refused
    let c = server.client(&usage);
    let host = server.base.trim_start_matches("http://").to_string();
    let r = c
        .send(
            c.get("/v1/auth/validate")
                .header("Origin", format!("http://{host}")),
        )
        .await;
    assert_eq!(r.status, 403, "{}", r.text);
}
