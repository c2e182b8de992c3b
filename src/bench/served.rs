//! A real `kerf serve` (this binary) on a fresh SQLite store in a temporary directory, for the
//! benchmarks that measure the service from outside: started with the given arguments,
//! killed and its directory removed on drop.

use anyhow::{anyhow, bail, Context, Result};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

pub struct Served {
    child: Child,
    pub dir: PathBuf,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// The first Admin key, printed at the first start.
    pub admin: String,
}

impl Served {
    /// Starts `kerf serve --listen 127.0.0.1:0 --database DIR/kerf.db ARGS...`.
    pub fn start(name: &str, args: &[&str]) -> Result<Served> {
        let dir = std::env::temp_dir().join(format!(
            "kerf-bench-{name}-{}-{}",
            std::process::id(),
            crate::store::now_ms()
        ));
        std::fs::create_dir_all(&dir)?;
        let exe = std::env::current_exe().context("finding this kerf binary")?;
        let child = Command::new(exe)
            .args(["serve", "--listen", "127.0.0.1:0", "--database"])
            .arg(dir.join("kerf.db"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("starting kerf serve")?;
        // owned by the guard from here: an early error below still kills it
        let mut served = Served {
            child,
            dir,
            base: String::new(),
            admin: String::new(),
        };
        let stdout = served
            .child
            .stdout
            .take()
            .ok_or_else(|| anyhow!("no stdout"))?;
        for line in BufReader::new(stdout).lines() {
            let line = line?;
            if line.starts_with("kerf_") {
                served.admin = line.trim().to_string();
            } else if let Some(addr) = line.strip_prefix("listening on ") {
                served.base = addr.trim().to_string();
                break;
            }
        }
        if served.base.is_empty() {
            bail!("kerf serve did not start");
        }
        if served.admin.is_empty() {
            bail!("kerf serve printed no first key");
        }
        Ok(served)
    }

    /// The server's resident memory in bytes (Linux: /proc; None elsewhere).
    pub fn resident_bytes(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let kib: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))?
            .split_whitespace()
            .next()?
            .parse()
            .ok()?;
        Some(kib * 1024)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
