//! Starting an OSD's daemon once ceph-volume made and activated it: with
//! systemd (`systemctl start ceph-osd@{id}`, what a package-installed host
//! does) or a command template for hosts without it, then waiting until a
//! ceph-osd process serves the id. A running daemon is left alone, so a
//! repeated start is harmless.

use crate::agent_server::host_roots::HostRoots;
use std::time::{Duration, Instant};

use crate::agent_server::osd::status::{describe, join_pids, osd_pids};
use crate::agent_server::osd::stop::{ControlMethod, POLL};
use crate::agent_server::process::command_line;
use crate::agent_server::process::{self, Keep, Limits, RunError};
use crate::wire::agent::OsdDaemonStatus;

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("cannot list the host's processes: {0}")]
    Scan(std::io::Error),
    #[error("could not run `{command}`: {source}")]
    Run { command: String, source: RunError },
    #[error("`{command}` exited with status {code}: {stderr}")]
    Failed { command: String, code: i32, stderr: String },
    #[error("no ceph-osd serves osd.{osd_id} {} s after `{command}`", .waited.as_secs())]
    NotRunning { command: String, osd_id: u32, waited: Duration },
    #[error("the start stopped unexpectedly: {0}")]
    Task(String),
}

#[derive(Debug, Clone)]
pub struct OsdStarter {
    pub method: ControlMethod,
    /// How long the daemon may take to appear, the command included.
    pub timeout: Duration,
    pub roots: HostRoots,
}

impl OsdStarter {
    async fn pids(&self, osd_id: u32) -> Result<Vec<u32>, StartError> {
        let roots = self.roots.clone();
        tokio::task::spawn_blocking(move || osd_pids(&roots, osd_id))
            .await
            .map_err(|e| StartError::Task(e.to_string()))?
            .map_err(StartError::Scan)
    }

    pub async fn start(&self, osd_id: u32) -> Result<OsdDaemonStatus, StartError> {
        let before = self.pids(osd_id).await?;
        if !before.is_empty() {
            let detail = format!("{}; nothing to start", describe(osd_id, &before));
            return Ok(OsdDaemonStatus { osd_id, running: true, pids: before, detail });
        }
        let argv = self.method.argv_for("start", osd_id);
        let (program, args) = argv.split_first().expect("a checked template has a program");
        let command = command_line(program, args, &[]);
        tracing::info!(osd_id, %command, "starting an OSD daemon");
        let started = Instant::now();
        let mut cmd = tokio::process::Command::new(program);
        // A daemon that forks must outlive the command: no kill on drop.
        cmd.args(args).current_dir("/");
        let limits = Limits { timeout: self.timeout, max_output: 64 * 1024, keep: Keep::Tail };
        let finished =
            process::run(cmd, limits).await.map_err(|source| StartError::Run { command: command.clone(), source })?;
        if !finished.status.success() {
            return Err(StartError::Failed {
                command,
                code: finished.exit_code(),
                stderr: finished.stderr.last_line(),
            });
        }
        let deadline = started + self.timeout;
        loop {
            let pids = self.pids(osd_id).await?;
            if !pids.is_empty() {
                let detail = format!(
                    "ran `{command}`; ceph-osd for osd.{osd_id} runs (pids {}) after {:.1} s",
                    join_pids(&pids),
                    started.elapsed().as_secs_f64()
                );
                tracing::info!(osd_id, "{detail}");
                return Ok(OsdDaemonStatus { osd_id, running: true, pids, detail });
            }
            if Instant::now() >= deadline {
                return Err(StartError::NotRunning { command, osd_id, waited: self.timeout });
            }
            tokio::time::sleep(POLL).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent_server::osd::proc_scan::fake::FakeProc;

    fn starter(p: &FakeProc, words: &[&str], timeout_ms: u64) -> OsdStarter {
        OsdStarter {
            method: ControlMethod::Command { words: words.iter().map(|w| w.to_string()).collect() },
            timeout: Duration::from_millis(timeout_ms),
            roots: HostRoots { proc: p.root(), ..HostRoots::default() },
        }
    }

    #[tokio::test]
    async fn a_running_daemon_is_left_alone() {
        let p = FakeProc::new();
        p.add(400, 'S', "ceph-osd", &["ceph-osd", "-i", "7"]);
        let marker = p.dir.path().join("ran");
        let s = starter(&p, &["touch", marker.to_str().unwrap(), "{id}"], 2000).start(7).await.unwrap();
        assert!(s.running && s.detail.ends_with("nothing to start"), "{}", s.detail);
        assert!(!marker.exists(), "nothing was run");
    }

    #[tokio::test]
    async fn waits_for_the_daemon_to_appear() {
        let p = FakeProc::new();
        // The "start command" makes a fake ceph-osd process appear, as a fork would.
        let dir = p.root().join("401");
        let script = format!(
            "mkdir -p {d} && printf 'ceph-osd\\0-i\\0{{}}\\0' > {d}/cmdline && echo '401 (ceph-osd) S 1' > {d}/stat && \
             echo ceph-osd > {d}/comm",
            d = dir.display()
        );
        let script = script.replace("{}", "8");
        let s = starter(&p, &["sh", "-c", &script, "start-{id}"], 5000).start(8).await.unwrap();
        assert!(s.running && s.pids == [401], "{s:?}");
        assert!(s.detail.contains("ceph-osd for osd.8 runs (pids 401)"), "{}", s.detail);
    }

    #[tokio::test]
    async fn a_start_that_brings_nothing_up_is_an_error() {
        let p = FakeProc::new();
        let e = starter(&p, &["true", "{id}"], 300).start(9).await.unwrap_err();
        assert_eq!(e.to_string(), "no ceph-osd serves osd.9 0 s after `true 9`");
        let e = starter(&p, &["sh", "-c", "echo no such osd >&2; exit 1", "{id}"], 2000).start(9).await.unwrap_err();
        assert_eq!(e.to_string(), "`sh -c 'echo no such osd >&2; exit 1' 9` exited with status 1: no such osd");
    }
}
