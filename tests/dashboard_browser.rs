//! The dashboard in a real browser: starts `osdkeeper demo` (the simulated
//! f5-422 cluster) and runs `tests/browser/dashboard.mjs`, which drives
//! Debian's headless Chromium through playwright-core and checks what the
//! page shows: hosts and devices, a removal scheduled, followed and finished
//! through the page, the live event log, a spec applied after its dry-run,
//! the token form; then the same page over 2000 simulated hosts, and with
//! fifteen removals at once in a wide and an 800 px window.
//!
//! Needs `node`, `/usr/bin/chromium` and `tests/browser/node_modules`
//! (`npm ci` there); `scripts/test` installs them. Without them this test
//! fails with that message: it never skips.
//!
//! Screenshots (kept by CI as artifacts) go to the target directory:
//! `dashboard-screenshot.png`, `dashboard-screenshot-draining.png`,
//! `dashboard-scale-screenshot.png`, `dashboard-many-removals.png` and
//! `dashboard-many-removals-800px.png`, and `*-failure.png` when a check fails.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::{bin, repo, spawn_listening};

const CHROMIUM: &str = "/usr/bin/chromium";
/// The browser script bounds each wait by 60 s; this bounds the whole run.
const RUN_TIMEOUT: Duration = Duration::from_secs(600);

/// Both tests run a simulated cluster and a browser: one at a time, so that
/// neither starves the other of CPU (and the drain stays observable).
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn browser_dir() -> PathBuf {
    repo().join("tests/browser")
}

/// The target directory (`CARGO_TARGET_DIR` or `target/`), where CI picks up screenshots.
fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).parent().expect("the target directory").to_path_buf()
}

/// Fails (never skips) when the browser tooling is missing, naming what and who installs it.
fn require_browser_tooling() {
    let mut missing = Vec::new();
    let node_runs = Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !node_runs {
        missing.push("`node` (Debian package nodejs)".to_string());
    }
    if !Path::new(CHROMIUM).exists() {
        missing.push(format!("{CHROMIUM} (Debian package chromium)"));
    }
    if !browser_dir().join("node_modules/playwright-core").is_dir() {
        missing.push("tests/browser/node_modules (`npm ci --prefix tests/browser`)".to_string());
    }
    assert!(
        missing.is_empty(),
        "the dashboard browser test cannot run: missing {}. scripts/test installs them \
         (apt-get install chromium nodejs npm; npm ci --prefix tests/browser).",
        missing.join(", ")
    );
}

/// Starts `osdkeeper demo` with `extra` arguments; stopped by pid when dropped.
fn start_demo(dir: &Path, name: &str, extra: &[&str]) -> (common::Proc, String) {
    let mut cmd = Command::new(bin());
    cmd.args(["demo", "--listen", "127.0.0.1:0", "--db"]).arg(dir.join(format!("{name}.db"))).args(extra);
    cmd.env_remove("OSDKEEPER_TOKEN").env_remove("OSDKEEPER_AGENT_TOKEN");
    let (proc, addr) = spawn_listening(cmd, name, &dir.join(format!("{name}.log")));
    (proc, format!("http://{addr}"))
}

/// Runs dashboard.mjs with `args`; panics with its output (and the daemon's log) unless it exits 0.
fn run_browser_script(dir: &Path, args: &[&str], daemon_log: &Path) {
    let log_path = dir.join("browser.log");
    let log = std::fs::File::create(&log_path).expect("browser log");
    let mut child = Command::new("node")
        .arg(browser_dir().join("dashboard.mjs"))
        .args(args)
        .current_dir(browser_dir())
        .stdout(log.try_clone().expect("browser log"))
        .stderr(log)
        .spawn()
        .expect("start node");
    let deadline = Instant::now() + RUN_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for node") {
            break Some(status);
        }
        if Instant::now() > deadline {
            // Only this child (and, with it, its Chromium) is ended.
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let output = std::fs::read_to_string(&log_path).unwrap_or_default();
    println!("{output}");
    let ok = status.map(|s| s.success()).unwrap_or(false);
    if !ok {
        let daemon = std::fs::read_to_string(daemon_log).unwrap_or_default();
        let tail: Vec<&str> = daemon.lines().rev().take(40).collect::<Vec<_>>().into_iter().rev().collect();
        panic!(
            "the dashboard browser script {} ({})\n--- its output ---\n{output}\n--- the daemon's last log lines ---\n{}",
            match status {
                Some(s) => format!("failed: {s}"),
                None => format!("did not finish within {} s", RUN_TIMEOUT.as_secs()),
            },
            args.join(" "),
            tail.join("\n")
        );
    }
}

#[test]
fn dashboard_drives_the_field_report_cluster() {
    require_browser_tooling();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().expect("temp dir");
    let (_demo, url) = start_demo(dir.path(), "demo", &["--pace", "40"]);
    let shot = target_dir().join("dashboard-screenshot.png");
    run_browser_script(dir.path(), &[&url, shot.to_str().expect("UTF-8 path")], &dir.path().join("demo.log"));
    assert!(shot.is_file(), "no screenshot at {}", shot.display());
}

#[test]
fn dashboard_pages_through_2000_hosts() {
    require_browser_tooling();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().expect("temp dir");
    let (_demo, url) = start_demo(dir.path(), "scale", &["--hosts", "2000", "--devices-per-host", "10"]);
    let shot = target_dir().join("dashboard-scale-screenshot.png");
    run_browser_script(
        dir.path(),
        &["--scale", &url, shot.to_str().expect("UTF-8 path")],
        &dir.path().join("scale.log"),
    );
    assert!(shot.is_file(), "no screenshot at {}", shot.display());
}

/// Fifteen removals over six hosts: grouped per host with totals, compact
/// rows, finished below live, a chart of ten drains whose labels do not
/// overlap, the health strip during the backfill, and an 800 px window in
/// which nothing is cut or scrolls sideways.
#[test]
fn dashboard_shows_fifteen_removals_and_fits_800_px() {
    require_browser_tooling();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().expect("temp dir");
    let (_demo, url) = start_demo(dir.path(), "many", &["--hosts", "6", "--devices-per-host", "8"]);
    let shot = target_dir().join("dashboard-many-removals.png");
    run_browser_script(dir.path(), &["--many", &url, shot.to_str().expect("UTF-8 path")], &dir.path().join("many.log"));
    assert!(shot.is_file(), "no screenshot at {}", shot.display());
}
