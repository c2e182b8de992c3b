//! The dashboard in a real headless Chromium, driven over WebDriver (chromedriver) against the
//! real `kerf serve`: sign in, create a key and use its shown secret in a real API call,
//! revoke it and see the call fail, add an origin, read the plan and the recent jobs with a
//! render. A screenshot of each page goes to KERF_SCREENSHOTS_DIR when it is set (README's
//! pictures come from there), else beside the test's server log.
//!
//! Needs Debian's `chromium` and `chromium-driver` (.ci/run installs them). Without them the
//! test says so and passes, unless KERF_REQUIRE_BROWSER=1 (as in CI), which fails it.

mod support;

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use support::*;

const WAIT: Duration = Duration::from_secs(30);

fn find_program(names: &[&str], extra_dirs: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(extra_dirs.iter().map(PathBuf::from))
        .flat_map(|dir| names.iter().map(move |n| dir.join(n)))
        .find(|p| p.is_file())
}

/// chromedriver on a free port, killed on drop.
struct Driver {
    child: Child,
    url: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_driver(program: &Path, log: &Path) -> Driver {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(program)
        .arg(format!("--port={port}"))
        .arg(format!("--log-path={}", log.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting chromedriver");
    let end = Instant::now() + WAIT;
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < end, "chromedriver did not listen");
        std::thread::sleep(Duration::from_millis(100));
    }
    Driver {
        child,
        url: format!("http://127.0.0.1:{port}"),
    }
}

async fn browser(driver: &Driver, chromium: &Path) -> Client {
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": chromium,
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1360,900", "--hide-scrollbars"],
        }),
    );
    // the page's confirm() before revoking or regenerating: the user says yes
    caps.insert("unhandledPromptBehavior".into(), json!("accept"));
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&driver.url)
        .await
        .expect("a Chromium session")
}

/// Waits until the element at `css` is displayed and its text holds `want`; gives the text.
async fn wait_text(c: &Client, css: &str, want: &str) -> String {
    let end = Instant::now() + WAIT;
    loop {
        if let Ok(e) = c.find(Locator::Css(css)).await {
            if e.is_displayed().await.unwrap_or(false) {
                let text = e.text().await.unwrap_or_default();
                if text.contains(want) {
                    return text;
                }
                assert!(Instant::now() < end, "{css} shows {text:?}, never {want:?}");
            }
        }
        assert!(Instant::now() < end, "{css} never showed {want:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn click(c: &Client, css: &str) {
    c.wait()
        .at_most(WAIT)
        .for_element(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"))
        .click()
        .await
        .unwrap_or_else(|e| panic!("clicking {css}: {e}"));
}

async fn fill(c: &Client, css: &str, text: &str) {
    let e = c
        .wait()
        .at_most(WAIT)
        .for_element(Locator::Css(css))
        .await
        .unwrap();
    e.clear().await.unwrap();
    e.send_keys(text).await.unwrap();
}

async fn screenshot(c: &Client, dir: &Path, name: &str) {
    // let fonts and the last paint settle
    tokio::time::sleep(Duration::from_millis(300)).await;
    let png = c.screenshot().await.unwrap();
    std::fs::write(dir.join(format!("dashboard-{name}.png")), png).unwrap();
}

async fn validate_status(server: &Server, key: &str) -> u16 {
    let c = server.client(key);
    c.send(c.get("/v1/auth/validate")).await.status
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_manages_keys_origins_and_shows_plan_and_jobs_in_a_real_browser() {
    let required = std::env::var("KERF_REQUIRE_BROWSER").is_ok_and(|v| v == "1");
    let chromium = find_program(&["chromium", "chromium-browser", "google-chrome"], &[]);
    let chromedriver = find_program(&["chromedriver"], &["/usr/lib/chromium"]);
    let (Some(chromium), Some(chromedriver)) = (chromium, chromedriver) else {
        assert!(
            !required,
            "KERF_REQUIRE_BROWSER=1 but chromium or chromedriver is missing (apt-get install chromium chromium-driver)"
        );
        eprintln!("skipped: no chromium and chromedriver on this machine");
        return;
    };
    let dir = temp_dir("dashboard");
    let shots = std::env::var_os("KERF_SCREENSHOTS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| dir.clone());
    std::fs::create_dir_all(&shots).unwrap();
    let receiver = Receiver::start(&dir).await;
    let server = Server::start(&dir, Some(&receiver), &[]);
    let admin = server.first_key.clone().unwrap();
    let usage = server.create_key("Usage", 2, None);
    let usage_id = usage.split('_').nth(1).unwrap().to_string();

    // a real nest, so that the jobs page has a result to render
    let hook = format!("{}/dash", receiver.url);
    let req = dxf_request(
        &[("part_1.dxf", 3)],
        (600.0, 400.0),
        Some(&hook),
        1.0,
        false,
    );
    let nest_id = server.client(&usage).submit("/v1/nesting", &req).await;
    receiver
        .wait_final(&nest_id, Duration::from_secs(120))
        .await;

    let driver = start_driver(&chromedriver, &dir.join("chromedriver.log"));
    let c = browser(&driver, &chromium).await;
    let dashboard = format!("{}/dashboard", server.base);

    // signed out: the sign-in form; a Usage key and a wrong key are refused with a reason
    c.goto(&dashboard).await.unwrap();
    wait_text(&c, "#signin h1", "Sign in").await;
    screenshot(&c, &shots, "signin").await;
    fill(&c, "#signin-key", &usage).await;
    click(&c, "#signin-submit").await;
    wait_text(&c, "#signin-error", "Usage key").await;
    fill(&c, "#signin-key", "kerf_nope").await;
    click(&c, "#signin-submit").await;
    wait_text(&c, "#signin-error", "not a kerf API key").await;
    fill(&c, "#signin-key", "kerf_0123456789abcdef_00ff").await;
    click(&c, "#signin-submit").await;
    wait_text(&c, "#signin-error", "not valid").await;

    // sign in: the keys page lists the account's keys
    fill(&c, "#signin-key", &admin).await;
    click(&c, "#signin-submit").await;
    wait_text(&c, &format!("tr[data-key='{usage_id}']"), "Active").await;
    let stored: serde_json::Value = c
        .execute(
            "return sessionStorage.getItem('kerf.dashboard.key');",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(stored, json!(admin), "the key is kept in session storage");
    let local: serde_json::Value = c
        .execute("return localStorage.length;", vec![])
        .await
        .unwrap();
    assert_eq!(local, json!(0), "and nowhere else");

    // create a key: its secret is shown once, and it works in a real API call
    click(&c, "#new-key").await;
    fill(&c, "#create-form input[name=Reference]", "press brake cell").await;
    fill(&c, "#create-form input[name=Email]", "cell@shop.example").await;
    fill(&c, "#create-form input[name=Parallelism]", "2").await;
    click(&c, "#create-form button[type=submit]").await;
    let secret = wait_text(&c, "#secret-value", "kerf_").await;
    let new_id = secret.split('_').nth(1).unwrap().to_string();
    wait_text(&c, &format!("tr[data-key='{new_id}']"), "press brake cell").await;
    screenshot(&c, &shots, "keys").await;
    assert_eq!(validate_status(&server, &secret).await, 200);
    click(&c, "#secret-copy").await;
    wait_text(&c, "#secret-copy", "Copied").await;
    click(&c, "#secret-done").await;

    // revoke it: the row says so and the same call now fails
    click(
        &c,
        &format!("tr[data-key='{new_id}'] button[data-action=revoke]"),
    )
    .await;
    wait_text(&c, &format!("tr[data-key='{new_id}']"), "Revoked").await;
    wait_text(&c, "#flash", "revoked").await;
    assert_eq!(validate_status(&server, &secret).await, 401);

    // origins: add one to the Usage key; kerf keeps it in its canonical form
    c.goto(&format!("{dashboard}#/origins")).await.unwrap();
    let select = c
        .wait()
        .at_most(WAIT)
        .for_element(Locator::Css("#origins-key"))
        .await
        .unwrap();
    select.select_by_value(&usage_id).await.unwrap();
    wait_text(&c, "#origins-empty", "not limited").await;
    fill(&c, "#origin-input", "https://Shop.Example:443").await;
    click(&c, "#origin-form button[type=submit]").await;
    wait_text(&c, "#origins-table tbody", "https://shop.example").await;
    screenshot(&c, &shots, "origins").await;
    let c_api = server.client(&admin);
    let listed = c_api
        .send(c_api.get(&format!("/apikeys/{usage_id}/origins")))
        .await;
    assert_eq!(listed.body["Origins"], json!(["https://shop.example"]));
    // a bad origin: the server's reason is shown
    fill(&c, "#origin-input", "ftp://shop.example").await;
    click(&c, "#origin-form button[type=submit]").await;
    wait_text(&c, "#flash.alert-error", "Origin").await;

    // plan and fairness: the figures of /v1/status and /usage/fairness
    c.goto(&format!("{dashboard}#/plan")).await.unwrap();
    wait_text(&c, "#plan-stats", "Nesting minutes left").await;
    wait_text(&c, "#plan-stats", "min drawn").await;
    wait_text(&c, "#fairness-table tbody", &usage_id).await;
    wait_text(&c, "#fairness-state", "Informational").await;
    screenshot(&c, &shots, "plan").await;

    // recent jobs: the nest, Completed, with its render
    c.goto(&format!("{dashboard}#/jobs")).await.unwrap();
    let row = format!("tr[data-job='{nest_id}']");
    wait_text(&c, &row, "Completed").await;
    wait_text(&c, &row, "Live view").await;
    click(&c, &format!("{row} button")).await;
    wait_text(&c, "#render-title", &nest_id).await;
    let src = c
        .find(Locator::Css("#render-img"))
        .await
        .unwrap()
        .attr("src")
        .await
        .unwrap()
        .unwrap_or_default();
    assert!(
        src.starts_with("data:image/png;base64,"),
        "{}",
        &src[..src.len().min(40)]
    );
    let width: serde_json::Value = c
        .execute(
            "return document.getElementById('render-img').naturalWidth;",
            vec![],
        )
        .await
        .unwrap();
    assert!(
        width.as_u64().unwrap_or(0) > 100,
        "the render decoded: {width}"
    );
    screenshot(&c, &shots, "jobs").await;

    // the live view of a held nest: start it, watch it run, stop it, make an export
    let mut held = dxf_request(&[("part_1.dxf", 80)], (600.0, 400.0), None, 60.0, false);
    held["AutomaticallyStartNesting"] = json!(false);
    let live_id = server.client(&usage).submit("/v1/nesting", &held).await;
    c.goto(&format!("{}/dashboard/nests/{live_id}", server.base))
        .await
        .unwrap();
    wait_text(&c, "#nest-state", "Held").await;
    click(&c, "#start").await;
    wait_text(&c, "#nest-state", "Running").await;
    // a figure from the hub: time elapsed while it runs
    wait_text(&c, "#fig-elapsed", " s").await;
    // the first interim result draws the layout
    let end = std::time::Instant::now() + WAIT;
    while !c
        .find(Locator::Css("#layout"))
        .await
        .unwrap()
        .is_displayed()
        .await
        .unwrap_or(false)
    {
        assert!(
            std::time::Instant::now() < end,
            "no layout drawn while the nest ran"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    screenshot(&c, &shots, "live").await;
    click(&c, "#stop").await;
    wait_text(&c, "#nest-state", "Completed").await;
    wait_text(&c, "#fig-result", "final result").await;
    // an export that needs settings the request lacks: the server's reason is shown
    click(&c, "#export-buttons button[data-type=DXF]").await;
    wait_text(&c, "#flash.alert-error", "DXF").await;
    click(&c, "#export-buttons button[data-type=Result]").await;
    wait_text(&c, "#exports-table tbody", "Result").await;
    let status = server.client(&usage).status(&live_id).await;
    assert_eq!(status.body["Status"], "Completed", "{}", status.text);

    // signing out forgets the key
    c.goto(&dashboard).await.unwrap();
    wait_text(&c, "#signout", "Sign out").await;
    click(&c, "#signout").await;
    wait_text(&c, "#signin h1", "Sign in").await;
    let stored: serde_json::Value = c
        .execute("return sessionStorage.length;", vec![])
        .await
        .unwrap();
    assert_eq!(stored, json!(0));
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_is_served_with_a_strict_content_security_policy() {
    let server = Server::start(&temp_dir("dashboard-headers"), None, &[]);
    let http = reqwest::Client::new();
    for (path, kind) in [
        ("/dashboard", "text/html"),
        ("/dashboard/dashboard.css", "text/css"),
        ("/dashboard/dashboard.js", "text/javascript"),
    ] {
        let r = http
            .get(format!("{}{path}", server.base))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{path}");
        let h = r.headers();
        assert!(
            h["content-type"].to_str().unwrap().starts_with(kind),
            "{path}"
        );
        let csp = h["content-security-policy"].to_str().unwrap();
        assert!(csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'"));
        assert_eq!(h["x-content-type-options"], "nosniff");
    }
    // no key, no data: the page itself holds none, the API refuses without one
    let r = http
        .get(format!("{}/admin/keys", server.base))
        .header("Accept", "application/json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
}
