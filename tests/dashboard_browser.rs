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

use std::path::Path;
use std::process::Command;
use std::sync::Mutex;

use common::browser::{require_browser_tooling, run_browser_script, target_dir};
use common::{bin, spawn_listening};

/// Both tests run a simulated cluster and a browser: one at a time, so that
/// neither starves the other of CPU (and the drain stays observable).
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Starts `osdkeeper demo` with `extra` arguments; stopped by pid when dropped.
fn start_demo(dir: &Path, name: &str, extra: &[&str]) -> (common::Proc, String) {
    let mut cmd = Command::new(bin());
    cmd.args(["demo", "--listen", "127.0.0.1:0", "--db"]).arg(dir.join(format!("{name}.db"))).args(extra);
    cmd.env_remove("OSDKEEPER_TOKEN").env_remove("OSDKEEPER_AGENT_TOKEN");
    let (proc, addr) = spawn_listening(cmd, name, &dir.join(format!("{name}.log")));
    (proc, format!("http://{addr}"))
}

/// Runs dashboard.mjs with `args`; panics with its output (and the daemon's log) unless it exits 0.
fn run_dashboard_script(dir: &Path, args: &[&str], daemon_log: &Path) {
    run_browser_script("dashboard.mjs", dir, args, &[], daemon_log);
}

#[test]
fn dashboard_drives_the_field_report_cluster() {
    require_browser_tooling();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().expect("temp dir");
    let (_demo, url) = start_demo(dir.path(), "demo", &["--pace", "40"]);
    let shot = target_dir().join("dashboard-screenshot.png");
    run_dashboard_script(dir.path(), &[&url, shot.to_str().expect("UTF-8 path")], &dir.path().join("demo.log"));
    assert!(shot.is_file(), "no screenshot at {}", shot.display());
}

#[test]
fn dashboard_pages_through_2000_hosts() {
    require_browser_tooling();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().expect("temp dir");
    let (_demo, url) = start_demo(dir.path(), "scale", &["--hosts", "2000", "--devices-per-host", "10"]);
    let shot = target_dir().join("dashboard-scale-screenshot.png");
    run_dashboard_script(
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
    run_dashboard_script(
        dir.path(),
        &["--many", &url, shot.to_str().expect("UTF-8 path")],
        &dir.path().join("many.log"),
    );
    assert!(shot.is_file(), "no screenshot at {}", shot.display());
}
