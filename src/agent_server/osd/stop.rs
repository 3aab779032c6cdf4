//! Stopping an OSD's daemon: how (a systemd unit, or a command for
//! clusters that run OSDs some other way), then waiting until no process
//! serves the id any more, because a stop command may return before the
//! daemon has let go of its disk.
//!
//! The command is never given to a shell: the template is split on
//! whitespace and `{id}` is replaced by a number in each word, so nothing
//! in a request can reach a shell or add an argument.

use crate::agent_server::host_roots::HostRoots;
use std::time::{Duration, Instant};

use crate::agent_server::osd::status::{describe, join_pids, osd_pids};
use crate::agent_server::process::command_line;
use crate::agent_server::process::{self, Keep, Limits, RunError};
use crate::wire::agent::{same_uuid, OsdDaemonStatus};

pub const DEFAULT_UNIT_TEMPLATE: &str = "ceph-osd@{id}";
pub(super) const PLACEHOLDER: &str = "{id}";
/// How often the processes are looked at while waiting for them to exit.
pub(super) const POLL: Duration = Duration::from_millis(100);

/// How a daemon is stopped (or started, `osd_start`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ControlMethod {
    /// `systemctl stop|start <unit>`.
    Systemd { unit_template: String },
    /// A program and its arguments, `{id}` in any of them.
    Command { words: Vec<String> },
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    #[error("is empty")]
    Empty,
    #[error("must contain {{id}} (otherwise every OSD would be stopped the same way)")]
    NoId,
    #[error("has an unknown placeholder in `{0}`: only {{id}} is replaced")]
    UnknownPlaceholder(String),
    #[error("does not make a systemd unit name (letters, digits and :_.-@\\ only, not starting with -)")]
    BadUnit,
}

impl ControlMethod {
    pub fn systemd(template: &str) -> Result<ControlMethod, TemplateError> {
        let t = template.trim();
        check_placeholders(t)?;
        // Checked with a sample id: the result must be one unit name, not
        // an option or several words for systemctl.
        let sample = t.replace(PLACEHOLDER, "0");
        let unit_char = |c: char| c.is_ascii_alphanumeric() || ":_.-@\\".contains(c);
        if sample.starts_with('-') || !sample.chars().all(unit_char) {
            return Err(TemplateError::BadUnit);
        }
        Ok(ControlMethod::Systemd { unit_template: t.to_string() })
    }

    pub fn command(template: &str) -> Result<ControlMethod, TemplateError> {
        let words: Vec<String> = template.split_whitespace().map(str::to_string).collect();
        if words.is_empty() {
            return Err(TemplateError::Empty);
        }
        check_placeholders(&words.join(" "))?;
        Ok(ControlMethod::Command { words })
    }

    /// The command line that stops `osd_id`.
    pub fn argv(&self, osd_id: u32) -> Vec<String> {
        self.argv_for("stop", osd_id)
    }

    /// The command line for systemd's `verb` (`stop`, `start`), or the command.
    pub fn argv_for(&self, verb: &str, osd_id: u32) -> Vec<String> {
        let id = osd_id.to_string();
        match self {
            ControlMethod::Systemd { unit_template } => {
                vec!["systemctl".into(), verb.into(), unit_template.replace(PLACEHOLDER, &id)]
            }
            ControlMethod::Command { words } => words.iter().map(|w| w.replace(PLACEHOLDER, &id)).collect(),
        }
    }
}

pub(super) fn check_placeholders(template: &str) -> Result<(), TemplateError> {
    if template.is_empty() {
        return Err(TemplateError::Empty);
    }
    if !template.contains(PLACEHOLDER) {
        return Err(TemplateError::NoId);
    }
    let rest = template.replace(PLACEHOLDER, "");
    if rest.contains(['{', '}']) {
        let word = template.split_whitespace().find(|w| w.replace(PLACEHOLDER, "").contains(['{', '}']));
        return Err(TemplateError::UnknownPlaceholder(word.unwrap_or(template).to_string()));
    }
    Ok(())
}

/// The answer to a stop when no process serves the id.
pub fn nothing_to_stop(osd_id: u32) -> OsdDaemonStatus {
    OsdDaemonStatus {
        osd_id,
        running: false,
        pids: Vec::new(),
        detail: format!("{}; nothing to stop", describe(osd_id, &[])),
    }
}

/// Why a stop did not end with the daemon gone.
#[derive(Debug, thiserror::Error)]
pub enum StopError {
    #[error("cannot list the host's processes: {0}")]
    Scan(std::io::Error),
    #[error("could not run `{command}`: {source}")]
    Run { command: String, source: RunError },
    #[error("`{command}` exited with status {code} ({stderr}) and osd.{osd_id} still runs (pids {pids})")]
    Failed { command: String, code: i32, stderr: String, osd_id: u32, pids: String },
    #[error(
        "osd.{osd_id} still runs {} s after `{command}` (pids {pids}); it was not stopped",
        .waited.as_secs()
    )]
    StillRunning { command: String, osd_id: u32, pids: String, waited: Duration },
    #[error("the stop stopped unexpectedly: {0}")]
    Task(String),
    #[error(
        "refusing to stop osd.{osd_id}: the daemon serving it here is OSD fsid {found} (its BlueStore label), not \
         {expected}; nothing was stopped"
    )]
    OtherOsd { osd_id: u32, expected: String, found: String },
}

/// Everything a stop needs.
#[derive(Debug, Clone)]
pub struct OsdControl {
    pub method: ControlMethod,
    /// How long the daemon may take to exit, the command included.
    pub timeout: Duration,
    pub roots: HostRoots,
}

impl OsdControl {
    pub async fn status(&self, osd_id: u32) -> Result<OsdDaemonStatus, StopError> {
        let roots = self.roots.clone();
        tokio::task::spawn_blocking(move || crate::agent_server::osd::status::status(&roots, osd_id))
            .await
            .map_err(|e| StopError::Task(e.to_string()))?
            .map_err(StopError::Scan)
    }

    /// Whether the running daemon of `osd_id` is the OSD `expected`: an
    /// error when its label names another, `Ok(true)` when no label could
    /// be read (nothing to tell it by).
    async fn check_fsid(&self, osd_id: u32, expected: &str) -> Result<bool, StopError> {
        let roots = self.roots.clone();
        let found =
            tokio::task::spawn_blocking(move || crate::agent_server::osd::devices::running_fsids(&roots, osd_id))
                .await
                .map_err(|e| StopError::Task(e.to_string()))?
                .map_err(StopError::Scan)?;
        if found.is_empty() {
            return Ok(true);
        }
        if found.iter().any(|f| same_uuid(f, expected)) {
            return Ok(false);
        }
        Err(StopError::OtherOsd { osd_id, expected: expected.to_string(), found: found.join(", ") })
    }

    async fn pids(&self, osd_id: u32) -> Result<Vec<u32>, StopError> {
        let roots = self.roots.clone();
        tokio::task::spawn_blocking(move || osd_pids(&roots, osd_id))
            .await
            .map_err(|e| StopError::Task(e.to_string()))?
            .map_err(StopError::Scan)
    }

    /// Stops the daemon of `osd_id` and waits for its processes to exit.
    /// Nothing is run when none serves the id, so a repeated stop is
    /// harmless; nor when `fsid` names another OSD than the one the
    /// daemon's label names (a daemon whose label cannot be read is
    /// stopped, and the answer says so).
    pub async fn stop(&self, osd_id: u32, fsid: Option<&str>) -> Result<OsdDaemonStatus, StopError> {
        let before = self.pids(osd_id).await?;
        if before.is_empty() {
            return Ok(nothing_to_stop(osd_id));
        }
        let unverified = match fsid {
            Some(expected) => self.check_fsid(osd_id, expected).await?,
            None => false,
        };
        let argv = self.method.argv(osd_id);
        let Some((program, args)) = argv.split_first() else {
            return Err(StopError::Run {
                command: String::new(),
                source: RunError::NotFound { program: "(empty stop command)".into() },
            });
        };
        let command = command_line(program, args, &[]);
        tracing::info!(osd_id, pids = %join_pids(&before), %command, "stopping an OSD daemon");
        let started = Instant::now();
        let mut cmd = tokio::process::Command::new(program);
        cmd.args(args).current_dir("/").kill_on_drop(true);
        let limits = Limits { timeout: self.timeout, max_output: 64 * 1024, keep: Keep::Tail };
        let finished = match process::run(cmd, limits).await {
            Ok(f) => Some(f),
            // The daemon may still go away within the time left.
            Err(e @ RunError::TimedOut { .. }) => {
                tracing::warn!(osd_id, "{e}");
                None
            }
            Err(source) => return Err(StopError::Run { command, source }),
        };
        let deadline = started + self.timeout;
        loop {
            let pids = self.pids(osd_id).await?;
            if pids.is_empty() {
                let how = match &finished {
                    Some(f) if f.status.success() => format!("ran `{command}`"),
                    Some(f) => format!("ran `{command}` (exit status {})", f.exit_code()),
                    None => format!("ran `{command}` (killed after {} s)", self.timeout.as_secs()),
                };
                let detail = format!(
                    "{how}; ceph-osd for osd.{osd_id} (pids {}) exited after {:.1} s{}",
                    join_pids(&before),
                    started.elapsed().as_secs_f64(),
                    if unverified { "; its fsid could not be read from the devices it held" } else { "" }
                );
                tracing::info!(osd_id, "{detail}");
                return Ok(OsdDaemonStatus { osd_id, running: false, pids, detail });
            }
            if let Some(f) = finished.as_ref().filter(|f| !f.status.success()) {
                return Err(StopError::Failed {
                    command,
                    code: f.exit_code(),
                    stderr: f.stderr.last_line(),
                    osd_id,
                    pids: join_pids(&pids),
                });
            }
            if Instant::now() >= deadline {
                return Err(StopError::StillRunning { command, osd_id, pids: join_pids(&pids), waited: self.timeout });
            }
            tokio::time::sleep(POLL).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent_server::osd::proc_scan::fake::FakeProc;

    #[test]
    fn unit_templates() {
        let m = ControlMethod::systemd(DEFAULT_UNIT_TEMPLATE).unwrap();
        assert_eq!(m.argv(4), ["systemctl", "stop", "ceph-osd@4"]);
        let fsid = "ceph-6f2c1a9e-0d4b-4b8e-9c3a-7e5f1d2c3b4a@osd.{id}";
        assert_eq!(
            ControlMethod::systemd(fsid).unwrap().argv(12),
            ["systemctl", "stop", "ceph-6f2c1a9e-0d4b-4b8e-9c3a-7e5f1d2c3b4a@osd.12"]
        );
        assert_eq!(ControlMethod::systemd("ceph-osd.target"), Err(TemplateError::NoId));
        assert_eq!(ControlMethod::systemd(""), Err(TemplateError::Empty));
        assert!(matches!(ControlMethod::systemd("ceph-osd@{id} other"), Err(TemplateError::BadUnit)));
        assert!(matches!(ControlMethod::systemd("--all{id}"), Err(TemplateError::BadUnit)));
        assert!(matches!(ControlMethod::systemd("x@{id};reboot"), Err(TemplateError::BadUnit)));
        let e = ControlMethod::systemd("ceph-{fsid}@osd.{id}").unwrap_err();
        assert_eq!(e.to_string(), "has an unknown placeholder in `ceph-{fsid}@osd.{id}`: only {id} is replaced");
    }

    #[test]
    fn command_templates_are_split_not_shelled() {
        let m = ControlMethod::command("testbed/ceph-sandbox/stop.sh /tmp/sb  osd.{id}").unwrap();
        assert_eq!(m.argv(4), ["testbed/ceph-sandbox/stop.sh", "/tmp/sb", "osd.4"]);
        // Shell syntax is passed on as plain words, never interpreted.
        let m = ControlMethod::command("kill-osd {id};reboot $(x) '{id}'").unwrap();
        assert_eq!(m.argv(7), ["kill-osd", "7;reboot", "$(x)", "'7'"]);
        let m = ControlMethod::command("stop {id} {id}").unwrap();
        assert_eq!(m.argv(0), ["stop", "0", "0"]);
        assert_eq!(ControlMethod::command("   "), Err(TemplateError::Empty));
        assert_eq!(ControlMethod::command("systemctl stop ceph-osd.target"), Err(TemplateError::NoId));
        let e = ControlMethod::command("/bin/kill {pid} {id}").unwrap_err();
        assert_eq!(e, TemplateError::UnknownPlaceholder("{pid}".into()));
        assert!(matches!(ControlMethod::command("stop {id"), Err(TemplateError::NoId)));
        assert!(matches!(ControlMethod::command("stop {id}}"), Err(TemplateError::UnknownPlaceholder(_))));
    }

    fn control(p: &FakeProc, words: &[&str], timeout_ms: u64) -> OsdControl {
        OsdControl {
            method: ControlMethod::Command { words: words.iter().map(|w| w.to_string()).collect() },
            timeout: Duration::from_millis(timeout_ms),
            roots: HostRoots { proc: p.root(), ..HostRoots::default() },
        }
    }

    #[tokio::test]
    async fn stopping_a_stopped_daemon_runs_nothing() {
        let p = FakeProc::new();
        let marker = p.dir.path().join("ran");
        let c = control(&p, &["touch", marker.to_str().unwrap(), "{id}"], 2000);
        let s = c.stop(3, None).await.unwrap();
        assert!(!s.running);
        assert_eq!(s.detail, "no ceph-osd process serves osd.3 on this host; nothing to stop");
        assert!(!marker.exists());
    }

    #[tokio::test]
    async fn waits_for_the_processes_to_go() {
        let p = FakeProc::new();
        let dir = p.add(300, 'S', "ceph-osd", &["ceph-osd", "-i", "5"]);
        // The "stop command" makes the fake process a zombie.
        let stat = dir.join("stat");
        let script = format!("echo '300 (ceph-osd) Z 1' > {}", stat.display());
        let c = control(&p, &["sh", "-c", &script, "stop-{id}"], 5000);
        let s = c.stop(5, None).await.unwrap();
        assert!(!s.running && s.pids.is_empty());
        assert!(s.detail.starts_with("ran `sh -c 'echo "), "{}", s.detail);
        assert!(s.detail.contains("ceph-osd for osd.5 (pids 300) exited after"), "{}", s.detail);
    }

    #[tokio::test]
    async fn a_daemon_of_another_osd_under_the_id_is_not_stopped() {
        let p = FakeProc::new();
        p.add(302, 'S', "ceph-osd", &["ceph-osd", "-i", "7"]);
        let block = p.dir.path().join("block");
        std::fs::write(&block, crate::agent_server::disks::label::test_label(Some("7"), 2)).unwrap();
        p.open(302, 9, block.to_str().unwrap());
        let marker = p.dir.path().join("ran");
        let c = control(&p, &["touch", marker.to_str().unwrap(), "{id}"], 300);
        let e = c.stop(7, Some("0a0a0a0a-2ea4-4bec-afa7-b42bb5513f12")).await.unwrap_err();
        assert_eq!(
            e.to_string(),
            "refusing to stop osd.7: the daemon serving it here is OSD fsid f9364872-2ea4-4bec-afa7-b42bb5513f12 \
             (its BlueStore label), not 0a0a0a0a-2ea4-4bec-afa7-b42bb5513f12; nothing was stopped"
        );
        assert!(!marker.exists(), "the stop command did not run");
        // The OSD named: stopped (the fake stays, so the stop times out, after the command ran).
        let e = c.stop(7, Some("F9364872-2EA4-4BEC-AFA7-B42BB5513F12")).await.unwrap_err();
        assert!(matches!(e, StopError::StillRunning { .. }), "{e}");
        assert!(marker.exists());
    }

    #[tokio::test]
    async fn a_daemon_that_stays_is_reported() {
        let p = FakeProc::new();
        p.add(301, 'S', "ceph-osd", &["ceph-osd", "--id", "6"]);
        let c = control(&p, &["true", "{id}"], 300);
        let e = c.stop(6, None).await.unwrap_err();
        assert_eq!(e.to_string(), "osd.6 still runs 0 s after `true 6` (pids 301); it was not stopped");
        let c = control(&p, &["sh", "-c", "echo cannot >&2; exit 3", "{id}"], 2000);
        let e = c.stop(6, None).await.unwrap_err();
        assert_eq!(
            e.to_string(),
            "`sh -c 'echo cannot >&2; exit 3' 6` exited with status 3 (cannot) and osd.6 still runs (pids 301)"
        );
        let c = control(&p, &["/nonexistent/stop", "{id}"], 2000);
        assert!(matches!(c.stop(6, None).await, Err(StopError::Run { source: RunError::NotFound { .. }, .. })));
    }
}
