//! Test support for the service: the real `kerf serve` binary on a random port with a
//! temporary SQLite file, and a real HTTPS webhook receiver on loopback whose certificate is
//! made here (a throwaway CA signs it; the server trusts the CA through --webhook-ca-file).
#![allow(dead_code)]

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::Router;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_rustls::rustls;

/// A fresh directory under the system's temp dir.
pub fn temp_dir(name: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let dir = std::env::temp_dir().join(format!("kerf-svc-{name}-{}-{nanos}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// One POST the receiver got.
#[derive(Clone, Debug)]
pub struct Delivered {
    /// The path it was POSTed to.
    pub path: String,
    pub raw: String,
    pub body: serde_json::Value,
    pub content_type: Option<String>,
    pub authorization: Option<String>,
    /// What the receiver answered.
    pub answered: u16,
    pub at: Instant,
}

#[derive(Default)]
struct ReceiverState {
    got: Mutex<Vec<Delivered>>,
    /// Answer 500 to this many more requests.
    fail_next: AtomicUsize,
    /// Answer 500 to every request.
    always_fail: std::sync::atomic::AtomicBool,
}

/// A real HTTPS webhook receiver on 127.0.0.1.
pub struct Receiver {
    pub url: String,
    pub ca_file: PathBuf,
    state: Arc<ReceiverState>,
}

async fn receive(
    State(s): State<Arc<ReceiverState>>,
    uri: axum::http::Uri,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    let fail = s.always_fail.load(Ordering::SeqCst)
        || s.fail_next
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
    let status = if fail {
        StatusCode::INTERNAL_SERVER_ERROR
    } else {
        StatusCode::OK
    };
    let raw = String::from_utf8_lossy(&body).to_string();
    s.got.lock().unwrap().push(Delivered {
        path: uri.path().to_string(),
        body: serde_json::from_str(&raw).unwrap_or(serde_json::Value::Null),
        raw,
        content_type: headers
            .get("content-type")
            .map(|v| v.to_str().unwrap_or("").to_string()),
        authorization: headers
            .get("authorization")
            .map(|v| v.to_str().unwrap_or("").to_string()),
        answered: status.as_u16(),
        at: Instant::now(),
    });
    status
}

/// A TLS listener for axum: accepts TCP, completes the handshake, hands over the stream.
struct TlsListener {
    tcp: tokio::net::TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
}

impl axum::serve::Listener for TlsListener {
    type Io = tokio_rustls::server::TlsStream<tokio::net::TcpStream>;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Ok((tcp, addr)) = self.tcp.accept().await else {
                continue;
            };
            if let Ok(tls) = self.acceptor.accept(tcp).await {
                return (tls, addr);
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}

impl Receiver {
    pub async fn start(dir: &Path) -> Receiver {
        use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
        let ca_key = KeyPair::generate().unwrap();
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "kerf test CA");
        let ca_cert = ca_params.self_signed(&ca_key).unwrap();
        let leaf_key = KeyPair::generate().unwrap();
        let leaf = CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])
            .unwrap()
            .signed_by(&leaf_key, &Issuer::from_params(&ca_params, &ca_key))
            .unwrap();
        let ca_file = dir.join("webhook-ca.pem");
        std::fs::write(&ca_file, ca_cert.pem()).unwrap();

        let config = rustls::ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(
                vec![leaf.der().clone()],
                rustls::pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into()),
            )
            .unwrap();
        let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = tcp.local_addr().unwrap().port();
        let state = Arc::new(ReceiverState::default());
        let app = Router::new()
            .route("/hook/{*rest}", post(receive))
            .route("/hook", post(receive))
            .with_state(state.clone());
        let listener = TlsListener {
            tcp,
            acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(config)),
        };
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Receiver {
            url: format!("https://127.0.0.1:{port}/hook"),
            ca_file,
            state,
        }
    }

    pub fn fail_next(&self, n: usize) {
        self.state.fail_next.store(n, Ordering::SeqCst);
    }

    pub fn always_fail(&self, on: bool) {
        self.state.always_fail.store(on, Ordering::SeqCst);
    }

    pub fn all(&self) -> Vec<Delivered> {
        self.state.got.lock().unwrap().clone()
    }

    /// Deliveries whose body names `request_id`.
    pub fn for_job(&self, request_id: &str) -> Vec<Delivered> {
        self.all()
            .into_iter()
            .filter(|d| d.body["RequestId"] == request_id)
            .collect()
    }

    /// Waits until a delivery to `path` (under the receiver's url) was answered 2xx; returns it.
    pub async fn wait_path(&self, path: &str, timeout: Duration) -> Delivered {
        let end = Instant::now() + timeout;
        loop {
            if let Some(d) = self
                .all()
                .into_iter()
                .find(|d| d.path.ends_with(path) && d.answered == 200)
            {
                return d;
            }
            assert!(
                Instant::now() < end,
                "no delivery to {path} within {timeout:?}; got {:#?}",
                self.all().iter().map(|d| &d.path).collect::<Vec<_>>()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits until a 2xx-answered delivery for the job has NestingStatus 1 or 2 (in Status for
    /// 2D bodies, at the top for 1D ones); returns all
    /// deliveries for the job.
    pub async fn wait_final(&self, request_id: &str, timeout: Duration) -> Vec<Delivered> {
        let end = Instant::now() + timeout;
        loop {
            let got = self.for_job(request_id);
            // 2D bodies carry Status.NestingStatus, 1D ones NestingStatus
            let status = |d: &Delivered| {
                d.body["Status"]["NestingStatus"]
                    .as_i64()
                    .or(d.body["NestingStatus"].as_i64())
            };
            if got
                .iter()
                .any(|d| d.answered == 200 && matches!(status(d), Some(1 | 2)))
            {
                return got;
            }
            assert!(
                Instant::now() < end,
                "no final delivery for {request_id} within {timeout:?}; got {got:#?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// The real `kerf serve` process.
pub struct Server {
    child: Option<Child>,
    pub base: String,
    pub dir: PathBuf,
    /// The store: the SQLite file, or the postgres:// URL.
    pub db: PathBuf,
    /// The Admin key printed at the first start.
    pub first_key: Option<String>,
    /// Whether the latest start printed a key (only a start on an empty store may).
    pub last_start_printed_key: bool,
    args: Vec<String>,
}

pub fn kerf_bin() -> &'static str {
    env!("CARGO_BIN_EXE_kerf")
}

impl Server {
    /// Starts `kerf serve` on a random port with `dir/kerf.db`, webhooks to loopback allowed
    /// and `receiver`'s CA trusted, plus `extra` arguments.
    pub fn start(dir: &Path, receiver: Option<&Receiver>, extra: &[&str]) -> Server {
        let db = dir.join("kerf.db");
        Server::start_node(dir, &db.to_string_lossy(), &["serve"], receiver, extra)
    }

    /// Starts a node: `role` is `["serve"]`, `["serve", "--no-workers"]` or `["worker"]`, on
    /// `database` (a path or a postgres:// URL); an HTTP node on a random port. Webhooks to
    /// loopback are allowed and `receiver`'s CA trusted; then `extra` arguments.
    pub fn start_node(
        dir: &Path,
        database: &str,
        role: &[&str],
        receiver: Option<&Receiver>,
        extra: &[&str],
    ) -> Server {
        let mut args: Vec<String> = role.iter().map(|s| s.to_string()).collect();
        if role[0] == "serve" {
            args.extend(["--listen".into(), "127.0.0.1:0".into()]);
        }
        args.extend([
            "--database".into(),
            database.to_string(),
            "--webhook-allow-cidr".into(),
            "127.0.0.0/8".into(),
        ]);
        if let Some(r) = receiver {
            args.push("--webhook-ca-file".into());
            args.push(r.ca_file.to_string_lossy().into());
        }
        args.extend(extra.iter().map(|s| s.to_string()));
        let mut s = Server {
            child: None,
            base: String::new(),
            dir: dir.to_path_buf(),
            db: PathBuf::from(database),
            first_key: None,
            last_start_printed_key: false,
            args,
        };
        s.spawn();
        s
    }

    fn spawn(&mut self) {
        static LOGS: AtomicUsize = AtomicUsize::new(0);
        let n = LOGS.fetch_add(1, Ordering::SeqCst);
        let log = std::fs::File::create(self.dir.join(format!("server-{n}.log"))).unwrap();
        let mut child = Command::new(kerf_bin())
            .args(&self.args)
            .env("KERF_LOG", "info,kerf=debug")
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log))
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let end = Instant::now() + Duration::from_secs(60);
        let mut lines = Vec::new();
        self.last_start_printed_key = false;
        loop {
            let line = rx
                .recv_timeout(end.saturating_duration_since(Instant::now()))
                .unwrap_or_else(|_| panic!("kerf serve did not start; it printed {lines:?}"));
            if let Some(addr) = line.strip_prefix("listening on ") {
                self.base = addr.trim().to_string();
                break;
            }
            if line.starts_with("worker ") && line.ends_with(" ready") {
                break;
            }
            if line.starts_with("kerf_") {
                self.last_start_printed_key = true;
                self.first_key
                    .get_or_insert_with(|| line.trim().to_string());
            }
            lines.push(line);
        }
        self.child = Some(child);
    }

    /// The running process's id.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// SIGKILL: no shutdown of any kind.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            c.kill().unwrap();
            c.wait().unwrap();
        }
    }

    /// SIGTERM, then waits for the process to exit; returns how long it took.
    pub fn terminate(&mut self) -> Duration {
        let mut c = self.child.take().expect("running");
        let t = Instant::now();
        let ok = Command::new("kill")
            .args(["-TERM", &c.id().to_string()])
            .status()
            .unwrap();
        assert!(ok.success());
        let status = c.wait().unwrap();
        assert!(
            status.success(),
            "kerf serve exited with {status} after SIGTERM"
        );
        t.elapsed()
    }

    /// Starts the same command again on the same database (a new port).
    pub fn restart(&mut self) {
        assert!(self.child.is_none(), "stop it first");
        self.spawn();
    }

    /// Creates a key with `kerf keys create` on this server's database.
    pub fn create_key(&self, key_type: &str, parallelism: u32, expires: Option<&str>) -> String {
        create_key(&self.db, key_type, parallelism, expires)
    }

    pub fn client(&self, key: &str) -> Client {
        Client {
            base: self.base.clone(),
            key: key.to_string(),
            http: reqwest::Client::new(),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

pub fn create_key(
    db: impl AsRef<std::ffi::OsStr>,
    key_type: &str,
    parallelism: u32,
    expires: Option<&str>,
) -> String {
    let mut cmd = Command::new(kerf_bin());
    cmd.args(["keys", "create", "--database"]).arg(db).args([
        "--type",
        key_type,
        "--parallelism",
        &parallelism.to_string(),
    ]);
    if let Some(e) = expires {
        cmd.args(["--expires", e]);
    }
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    assert_eq!(out.lines().count(), 1, "the key alone: {out:?}");
    out.trim().to_string()
}

/// An API client with a key; every call answers (status, JSON body or Null, headers).
pub struct Client {
    pub base: String,
    pub key: String,
    pub http: reqwest::Client,
}

pub struct Answer {
    pub status: u16,
    pub body: serde_json::Value,
    pub text: String,
    pub headers: reqwest::header::HeaderMap,
}

impl Client {
    pub async fn send(&self, req: reqwest::RequestBuilder) -> Answer {
        let r = req.send().await.unwrap();
        let status = r.status().as_u16();
        let headers = r.headers().clone();
        let text = r.text().await.unwrap();
        Answer {
            status,
            body: serde_json::from_str(&text).unwrap_or(serde_json::Value::Null),
            text,
            headers,
        }
    }
    pub fn post(&self, path: &str) -> reqwest::RequestBuilder {
        self.http
            .post(format!("{}{path}", self.base))
            .bearer_auth(&self.key)
            .header("Accept", "application/json")
    }
    pub fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.http
            .get(format!("{}{path}", self.base))
            .bearer_auth(&self.key)
            .header("Accept", "application/json")
    }
    pub async fn post_json(&self, path: &str, body: &serde_json::Value) -> Answer {
        self.send(self.post(path).json(body)).await
    }
    /// Submits to `path` and returns the RequestId (the submission must be accepted).
    pub async fn submit(&self, path: &str, body: &serde_json::Value) -> String {
        let a = self.post_json(path, body).await;
        assert_eq!(a.status, 200, "{}", a.text);
        a.body["RequestId"].as_str().unwrap().to_string()
    }
    pub async fn status(&self, request_id: &str) -> Answer {
        self.send(self.get(&format!("/v1/nesting/status?RequestId={request_id}")))
            .await
    }
    /// Polls the status until `pred` holds.
    pub async fn wait_status(&self, request_id: &str, want: &str, timeout: Duration) -> Answer {
        let end = Instant::now() + timeout;
        loop {
            let a = self.status(request_id).await;
            if a.body["Status"] == want {
                return a;
            }
            assert!(
                Instant::now() < end,
                "{request_id} never became {want}: {}",
                a.text
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// A DxfNestingRequest of real DXF parts from tests/data: (file, quantity) on one sheet.
pub fn dxf_request(
    parts: &[(&str, u32)],
    sheet: (f64, f64),
    webhook: Option<&str>,
    seconds: f64,
    interim: bool,
) -> serde_json::Value {
    use base64::Engine;
    let parts: Vec<serde_json::Value> = parts
        .iter()
        .map(|(f, q)| {
            serde_json::json!({
                "Identifier": f.trim_end_matches(".dxf"),
                "FileNameWithExtension": f,
                "Base64EncodedGeometryDefinition":
                    base64::engine::general_purpose::STANDARD.encode(std::fs::read(data(f)).unwrap()),
                "Quantity": q,
                "AllowableRotation": "Rotate90",
            })
        })
        .collect();
    let mut v = serde_json::json!({
        "Request": {
            "Parts": parts,
            "Sheets": [{"Identifier": "S1", "RectangularXDimension": sheet.0, "RectangularYDimension": sheet.1, "Quantity": 0}],
            "NestSettings": {"PartSpacing": 2.0, "MaxRunTimeSeconds": seconds, "ReportIntermediateResults": interim, "MaximumCPUCount": 1},
        },
    });
    if let Some(w) = webhook {
        v["ResultsWebhookUri"] = w.into();
    }
    v
}

/// A trivial nest (POST /v1/nesting/parametric): one parametric rectangle on a large sheet,
/// ended by the utilisation target once placed. Service benchmarks measure the service with
/// it, not the engine.
pub fn trivial_nest(webhook: &str) -> serde_json::Value {
    use base64::Engine;
    let rect = base64::engine::general_purpose::STANDARD
        .encode(serde_json::json!({"Shape": "Rectangle", "Width": 100, "Height": 50}).to_string());
    serde_json::json!({
        "ResultsWebhookUri": webhook,
        "Request": {
            "Parts": [{"Identifier": "r", "EncodedPartJson": rect, "Quantity": 1}],
            "Sheets": [{"Identifier": "S", "RectangularXDimension": 1000, "RectangularYDimension": 500}],
            "NestSettings": {"MaxRunTimeSeconds": 1, "UtilisationStopTarget": 1, "MaximumCPUCount": 1},
        }
    })
}

/// The node script `tests/hub/NAME` that drives the hub with the official SignalR client, if
/// node and `npm ci --prefix tests/hub` are there; None (the test says it skipped) when not,
/// unless KERF_REQUIRE_NODE=1 (as in CI), which fails it.
pub fn signalr_script(name: &str) -> Option<PathBuf> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/hub")
        .join(name);
    let modules = script
        .with_file_name("node_modules")
        .join("@microsoft/signalr");
    let node_ok = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if node_ok && modules.is_dir() {
        return Some(script);
    }
    assert!(
        std::env::var("KERF_REQUIRE_NODE").as_deref() != Ok("1"),
        "KERF_REQUIRE_NODE=1 but node or tests/hub/node_modules is missing (npm ci --prefix tests/hub)"
    );
    eprintln!("skipped: no node, or no @microsoft/signalr in tests/hub/node_modules");
    None
}

/// Runs a hub script under node with `env`; the transcript it printed, one JSON value per
/// line (it must exit 0).
pub async fn run_signalr_script(script: &Path, env: &[(&str, &str)]) -> Vec<serde_json::Value> {
    let mut node = Command::new("node");
    node.arg(script);
    for (k, v) in env {
        node.env(k, v);
    }
    let out = tokio::task::spawn_blocking(move || node.output())
        .await
        .unwrap()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    // the transcript, for whoever reads the test's output
    println!("{stdout}");
    assert!(
        out.status.success(),
        "node failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The first line of a hub transcript at `step`.
pub fn transcript_step<'a>(lines: &'a [serde_json::Value], step: &str) -> &'a serde_json::Value {
    lines
        .iter()
        .find(|l| l["step"] == step)
        .unwrap_or_else(|| panic!("no step {step:?} in the transcript"))
}

/// A held nest (AutomaticallyStartNesting false, no webhook: it streams over the hub) of
/// `copies` copies of part_1.dxf, for `seconds`.
pub fn held_request(copies: u32, seconds: f64) -> serde_json::Value {
    let mut req = dxf_request(
        &[("part_1.dxf", copies)],
        (600.0, 400.0),
        None,
        seconds,
        false,
    );
    req["AutomaticallyStartNesting"] = serde_json::json!(false);
    req
}

/// A benchmark's setting from the environment, else `default`.
pub fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
