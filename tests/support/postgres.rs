//! A throwaway PostgreSQL cluster for tests (DESIGN 4: the store shared by several nodes):
//! Debian's `postgresql` binaries, `initdb` in a temporary directory as a non-root user (the
//! `postgres` account when the tests run as root: PostgreSQL refuses to run as root), the
//! server on a free loopback port with its socket in that directory, stopped and removed when
//! dropped. `KERF_REQUIRE_POSTGRES=1` (set by .ci/run) makes missing binaries a failure
//! instead of a skip.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub struct PgCluster {
    bin: PathBuf,
    data: PathBuf,
    pub port: u16,
    /// `postgres://` URL of the cluster's `postgres` database (trust authentication, loopback).
    pub url: String,
    as_root: bool,
}

/// The newest installed PostgreSQL's binaries (Debian keeps them off PATH).
fn binaries() -> Option<PathBuf> {
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
        let options = format!("-p {port} -k {data} -c listen_addresses=127.0.0.1 -c fsync=off");
        let log = format!("{data}/server.log");
        let started = cluster.run(
            "pg_ctl",
            &["-D", &data, "-l", &log, "-o", &options, "-w", "start"],
        );
        assert!(
            started.status.success(),
            "pg_ctl start: {} {}",
            String::from_utf8_lossy(&started.stderr),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        Some(cluster)
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

    /// Runs SQL with psql; its output.
    pub fn psql(&self, sql: &str) -> String {
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
                "-At",
                "-c",
                sql,
            ],
        );
        assert!(
            out.status.success(),
            "psql: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
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
    }
}
