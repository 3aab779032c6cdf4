//! Runs a script of `tests/browser/` (playwright-core driving Debian's
//! headless Chromium) against a daemon, for the dashboard tests: the demo's
//! (`tests/dashboard_browser.rs`) and the real sandbox's
//! (`tests/sandbox_bench.rs`). Without node, Chromium or the script's
//! modules the test fails with what is missing: it never skips.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::repo;

const CHROMIUM: &str = "/usr/bin/chromium";
/// The browser scripts bound each wait by 60 s; this bounds a whole run.
const RUN_TIMEOUT: Duration = Duration::from_secs(600);

pub fn browser_dir() -> PathBuf {
    repo().join("tests/browser")
}

/// The target directory (`CARGO_TARGET_DIR` or `target/`), where CI picks up screenshots.
pub fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).parent().expect("the target directory").to_path_buf()
}

/// Fails (never skips) when the browser tooling is missing, naming what and who installs it.
pub fn require_browser_tooling() {
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

/// Runs `tests/browser/SCRIPT` with `args` and `env`, its output logged to
/// `dir/browser.log`; panics with that output (and the daemon's last log
/// lines) unless it exits 0.
pub fn run_browser_script(script: &str, dir: &Path, args: &[&str], env: &[(&str, &str)], daemon_log: &Path) {
    let log_path = dir.join("browser.log");
    let log = std::fs::File::create(&log_path).expect("browser log");
    let mut child = Command::new("node")
        .arg(browser_dir().join(script))
        .args(args)
        .envs(env.iter().copied())
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
            "the browser script {script} {} ({})\n--- its output ---\n{output}\n--- the daemon's last log lines ---\n{}",
            match status {
                Some(s) => format!("failed: {s}"),
                None => format!("did not finish within {} s", RUN_TIMEOUT.as_secs()),
            },
            args.join(" "),
            tail.join("\n")
        );
    }
}
