//! Shared harness for the integration tests: real `osdkeeper` processes
//! (daemon and agents) on port 0, stopped by pid when the test ends.

#![allow(dead_code)]

pub mod browser;
pub mod client;
pub mod field;
pub mod loop_hosts;
pub mod mounts;
pub mod real_hosts;
pub mod sandbox;
pub mod throttle;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_osdkeeper")
}

pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A child process stopped (SIGTERM, then SIGKILL) when dropped.
pub struct Proc {
    pub child: Child,
    pub name: String,
}

impl Proc {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL, as a crash would.
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM and wait; returns the exit status code.
    pub fn terminate(&mut self) -> Option<i32> {
        let _ = Command::new("kill").arg("-TERM").arg(self.pid().to_string()).status();
        let deadline = Instant::now() + Duration::from_secs(15);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.kill9();
        None
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.terminate();
        }
    }
}

/// Starts a command that prints `listening on ADDR` and returns the address.
pub fn spawn_listening(mut cmd: Command, name: &str, log: &Path) -> (Proc, String) {
    cmd.stdout(Stdio::piped()).stderr(Stdio::from(std::fs::File::create(log).expect("log file")));
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut sent = false;
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if !sent {
                if let Some(addr) = line.strip_prefix("listening on ") {
                    let _ = tx.send(addr.trim().to_string());
                    sent = true;
                }
            }
        }
    });
    let proc = Proc { child, name: name.to_string() };
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(addr) => (proc, addr),
        Err(_) => {
            let logs = std::fs::read_to_string(log).unwrap_or_default();
            panic!("{name} did not start listening; its log:\n{logs}");
        }
    }
}

pub struct TestDaemon {
    pub proc: Proc,
    pub url: String,
    pub db: PathBuf,
    pub log: PathBuf,
}

/// Starts `osdkeeper serve` on port 0 with a config file and environment.
pub fn start_daemon(dir: &Path, config_yaml: &str, env: &[(&str, &str)]) -> TestDaemon {
    let config = dir.join("osdkeeper.yaml");
    std::fs::write(&config, config_yaml).unwrap();
    let db = dir.join("osdkeeper.db");
    let mut cmd = Command::new(bin());
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--db"]).arg(&db).arg("--config").arg(&config);
    cmd.env_remove("OSDKEEPER_TOKEN").env_remove("OSDKEEPER_AGENT_TOKEN");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let n = std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0);
    let log = dir.join(format!("daemon-{n}.log"));
    let (proc, addr) = spawn_listening(cmd, "daemon", &log);
    TestDaemon { proc, url: format!("http://{addr}"), db, log }
}

/// Runs the CLI against a daemon; returns (exit code, stdout, stderr).
pub fn cli(url: &str, token: Option<&str>, args: &[&str]) -> (i32, String, String) {
    let mut cmd = Command::new(bin());
    cmd.args(args).env("OSDKEEPER_URL", url).env_remove("OSDKEEPER_TOKEN");
    if let Some(t) = token {
        cmd.env("OSDKEEPER_TOKEN", t);
    }
    let out = cmd.output().expect("run the CLI");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The CLI, which must succeed: on failure the panic names the command,
/// its exit status, its stdout and its stderr (a failing command may say
/// why on either: `device probe` prints a failed probe's record on stdout).
pub fn cli_ok(url: &str, token: Option<&str>, args: &[&str]) -> String {
    let (code, out, err) = cli(url, token, args);
    assert_eq!(code, 0, "`osdkeeper {}` exited {code}\n--- stdout:\n{out}\n--- stderr:\n{err}", args.join(" "));
    out
}

/// `wait_for`, with more to say when it times out.
pub fn wait_for_or<T>(
    what: &str,
    timeout: Duration,
    mut check: impl FnMut() -> Option<T>,
    explain: impl FnOnce() -> String,
) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = check() {
            return v;
        }
        if Instant::now() > deadline {
            panic!("timed out waiting for {what}; {}", explain());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Polls `check` until it returns Some or the timeout passes.
pub fn wait_for<T>(what: &str, timeout: Duration, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = check() {
            return v;
        }
        if Instant::now() > deadline {
            panic!("timed out waiting for {what}");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The signature `blkid` finds on a device (`ceph_bluestore`), if any.
pub fn blkid_type(dev: &str) -> Option<String> {
    let out = Command::new("blkid").args(["-p", "-o", "value", "-s", "TYPE", dev]).output().ok()?;
    let t = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (!t.is_empty()).then_some(t)
}

/// How many lines of a log (the Ceph commands a wrapper logged) hold `needle`.
pub fn count_lines(log: &Path, needle: &str) -> usize {
    std::fs::read_to_string(log).unwrap_or_default().lines().filter(|l| l.contains(needle)).count()
}
