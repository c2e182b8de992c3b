//! A throwaway PostgreSQL cluster for tests (DESIGN 4: the store shared by several nodes):
//! Debian's `postgresql` binaries, `initdb` in a temporary directory as a non-root user (the
//! `postgres` account when the tests run as root: PostgreSQL refuses to run as root), the
//! server on a free loopback port with its socket in that directory, stopped and removed when
//! dropped, and by a watchdog process when the test process ends without dropping it (a
//! cluster shared by a test binary lives in a static, which is never dropped).
//! `KERF_REQUIRE_POSTGRES=1` (set by .ci/run) makes missing binaries a failure instead of a
//! skip.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, OnceLock};

pub struct PgCluster {
    bin: PathBuf,
    data: PathBuf,
    pub port: u16,
    /// `postgres://` URL of the cluster's `postgres` database (trust authentication, loopback).
    pub url: String,
    as_root: bool,
    /// Stops the cluster and removes its directory when its stdin closes: when this value is
    /// dropped, or when the test process ends in any way.
    watchdog: Mutex<Option<Child>>,
}

/// The PostgreSQL binaries: the directory KERF_PG_BIN names (a build elsewhere than Debian's
/// place), else the newest installed under /usr/lib/postgresql (Debian keeps them off PATH).
fn binaries() -> Option<PathBuf> {
    if let Ok(dir) = std::env::var("KERF_PG_BIN") {
        let dir = PathBuf::from(dir);
        assert!(
            dir.join("initdb").exists() && dir.join("pg_ctl").exists(),
            "KERF_PG_BIN={} holds no initdb and pg_ctl",
            dir.display()
        );
        return Some(dir);
    }
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|b| b.join("initdb").exists() && b.join("pg_ctl").exists())
        .collect();
    versions.sort();
    versions.pop()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

impl PgCluster {
    /// Starts a cluster in a fresh directory under `dir`; None (the test skips) when
    /// PostgreSQL is not installed and not required.
    pub fn start(dir: &Path) -> Option<PgCluster> {
        let Some(bin) = binaries() else {
            assert!(
                std::env::var("KERF_REQUIRE_POSTGRES").as_deref() != Ok("1"),
                "KERF_REQUIRE_POSTGRES=1 but PostgreSQL is not installed (Debian: postgresql)"
            );
            eprintln!("PostgreSQL is not installed: the PostgreSQL tests are skipped");
            return None;
        };
        let data = dir.join("pg");
        std::fs::create_dir_all(&data).unwrap();
        let as_root = is_root();
        if as_root {
            // the cluster belongs to the unprivileged postgres account
            for path in [dir, data.as_path()] {
                let ok = Command::new("chown")
                    .arg("postgres:")
                    .arg(path)
                    .status()
                    .unwrap();
                assert!(ok.success(), "chown postgres {}", path.display());
            }
        }
        let port = free_port();
        let cluster = PgCluster {
            url: format!("postgres://postgres@127.0.0.1:{port}/postgres"),
            bin,
            data,
            port,
            as_root,
            watchdog: Mutex::new(None),
        };
        let data = cluster.data.display().to_string();
        let init = cluster.run(
            "initdb",
            &[
                "-D",
                &data,
                "-U",
                "postgres",
                "--auth=trust",
                "--no-sync",
                "-E",
                "UTF8",
            ],
        );
        assert!(
            init.status.success(),
            "initdb: {}",
            String::from_utf8_lossy(&init.stderr)
        );
        cluster.restart();
        *cluster.watchdog.lock().unwrap() = Some(cluster.spawn_watchdog());
        Some(cluster)
    }

    fn spawn_watchdog(&self) -> Child {
        let pg_ctl = self.bin.join("pg_ctl").display().to_string();
        let stop = if self.as_root {
            format!("runuser -u postgres -- {pg_ctl}")
        } else {
            pg_ctl
        };
        let data = self.data.display();
        let script = format!(
            "read _; {stop} -D '{data}' -m immediate -w stop >/dev/null 2>&1; rm -rf '{data}'; \
             rmdir \"$(dirname '{data}')\" 2>/dev/null"
        );
        Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawning the cluster's watchdog")
    }

    /// A fresh, empty database `name` in the cluster; its `postgres://` URL.
    pub fn create_database(&self, name: &str) -> String {
        self.psql(&format!("CREATE DATABASE {name}"));
        format!("postgres://postgres@127.0.0.1:{}/{name}", self.port)
    }

    /// Starts the server (at first, and again after `stop`: same directory, same port) and
    /// waits until it accepts connections.
    pub fn restart(&self) {
        let data = self.data.display().to_string();
        let options = format!(
            "-p {} -k {data} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port
        );
        let log = format!("{data}/server.log");
        let started = self.run(
            "pg_ctl",
            &["-D", &data, "-l", &log, "-o", &options, "-w", "start"],
        );
        assert!(
            started.status.success(),
            "pg_ctl start: {} {}",
            String::from_utf8_lossy(&started.stderr),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
    }

    /// Runs one of the cluster's binaries as the cluster's owner.
    fn run(&self, tool: &str, args: &[&str]) -> Output {
        let path = self.bin.join(tool);
        let mut cmd = if self.as_root {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&path);
            c
        } else {
            Command::new(&path)
        };
        cmd.args(args).output().unwrap()
    }

    /// Runs SQL with psql in the `postgres` database; its output.
    pub fn psql(&self, sql: &str) -> String {
        self.psql_in("postgres", sql)
    }

    /// Runs SQL with psql in database `database`; its output (unaligned, `|` between columns).
    pub fn psql_in(&self, database: &str, sql: &str) -> String {
        match self.try_psql_in(database, sql) {
            Ok(out) => out,
            Err(why) => panic!("psql: {why}"),
        }
    }

    /// `psql_in`, or psql's error (the server may be restarting).
    pub fn try_psql_in(&self, database: &str, sql: &str) -> Result<String, String> {
        let port = self.port.to_string();
        let out = self.run(
            "psql",
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &port,
                "-U",
                "postgres",
                "-d",
                database,
                "-At",
                "-c",
                sql,
            ],
        );
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        Ok(String::from_utf8(out.stdout).unwrap())
    }

    /// `pg_dump` of database `name`: everything it holds, as SQL text.
    pub fn dump(&self, name: &str) -> String {
        let port = self.port.to_string();
        let out = self.run(
            "pg_dump",
            &["-h", "127.0.0.1", "-p", &port, "-U", "postgres", name],
        );
        assert!(
            out.status.success(),
            "pg_dump: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Stops the server at once (the chaos tests restart it).
    pub fn stop(&self) {
        let data = self.data.display().to_string();
        let _ = self.run("pg_ctl", &["-D", &data, "-m", "immediate", "-w", "stop"]);
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.data);
        if let Some(mut watchdog) = self.watchdog.lock().unwrap().take() {
            drop(watchdog.stdin.take());
            let _ = watchdog.wait();
        }
    }
}

/// One cluster for the whole test process, started by the first test that asks (None when
/// PostgreSQL is not installed and not required). Tests share it and each takes a database
/// of its own (`create_database`); the watchdog removes it when the process ends.
pub fn shared() -> Option<&'static PgCluster> {
    static SHARED: OnceLock<Option<PgCluster>> = OnceLock::new();
    SHARED
        .get_or_init(|| {
            let dir = std::env::temp_dir().join(format!("kerf-pg-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            PgCluster::start(&dir)
        })
        .as_ref()
}
