//! After a boot: the LVs of this host's LVM OSDs that LVM left inactive.
//!
//! ceph-volume's boot unit of an OSD (`ceph-volume@lvm-ID-FSID`, enabled
//! when the OSD was made) waits for the OSD's LVs to appear, then starts
//! it; it never activates an LV, and gives up after its tries. LVM's event
//! activation can miss a VG: on Debian 12 (lvm2 2.03.16) the initramfs's
//! udev marks a PV's VG online (`/run/lvm/vgs_online`) before its own
//! `vgchange` runs; when the initramfs stops udev before that `vgchange`
//! ends, the root's udev finds the VG already online and activates
//! nothing. Seen on the emulated hosts under load (BENCHMARKS.md, "LVs
//! left inactive at boot"): the OSD stays down until someone runs
//! `lvchange -ay`.
//!
//! So for the first minutes after a boot the agent looks every 30 s, and
//! an LV tagged as an OSD's whose boot unit is enabled (the host means it
//! to start) and that was inactive on two looks in a row is activated;
//! the unit's next try then starts the OSD (a unit that already gave up
//! is started again). Nothing else is touched: an OSD whose unit is not
//! enabled (removed, or never meant to start at boot) keeps its LVs as
//! they are, and so does a device the agent was not given (`--devices`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::agent_server::osd::boot_lvs::{decide, enabled_osds, parse_lvs, unit_of, OsdLv, LVS_ARGS};
use crate::agent_server::process::command_line;
use crate::agent_server::process::{self, Keep, Limits, RunError};

/// How often the LVs are looked at while the window is open.
pub const INTERVAL: Duration = Duration::from_secs(30);

/// Seconds since boot, from `/proc/uptime`.
pub fn uptime(proc_root: &Path) -> std::io::Result<Duration> {
    let text = std::fs::read_to_string(proc_root.join("uptime"))?;
    let secs: f64 = text
        .split_whitespace()
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("unreadable uptime {text:?}")))?;
    Ok(Duration::from_secs_f64(secs))
}

/// Where the looks read and what they run; tests point these elsewhere.
#[derive(Debug, Clone)]
pub struct BootActivation {
    /// Looks stop once the host has been up this long.
    pub window: Duration,
    pub interval: Duration,
    pub proc_root: PathBuf,
    /// systemd's `multi-user.target.wants`, where enabled units are linked.
    pub wants_dir: PathBuf,
    pub lvs: String,
    pub lvchange: String,
    pub systemctl: String,
    /// `--devices`: only LVs on these are activated.
    pub allowed: Option<BTreeSet<String>>,
}

impl BootActivation {
    pub fn new(window: Duration, allowed: Option<BTreeSet<String>>) -> BootActivation {
        BootActivation {
            window,
            interval: INTERVAL,
            proc_root: PathBuf::from("/proc"),
            wants_dir: PathBuf::from("/etc/systemd/system/multi-user.target.wants"),
            lvs: "lvs".into(),
            lvchange: "lvchange".into(),
            systemctl: "systemctl".into(),
            allowed,
        }
    }

    /// Looks until the window closes. `busy` is the agent's one-command
    /// lock: an activation does not run beside a ceph-volume command.
    pub async fn run(self, busy: Arc<tokio::sync::Mutex<()>>) {
        let mut inactive = BTreeSet::new();
        loop {
            match uptime(&self.proc_root) {
                Ok(up) if up >= self.window => {
                    tracing::debug!(up_s = up.as_secs(), "past the boot window: no more looks at the OSDs' LVs");
                    return;
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(
                        "cannot tell how long the host has been up ({e}); the OSDs' LVs are not looked after"
                    );
                    return;
                }
            }
            inactive = self.look(&busy, &inactive).await;
            tokio::time::sleep(self.interval).await;
        }
    }

    /// One look: returns the LVs seen inactive (the next look's memory).
    pub async fn look(&self, busy: &tokio::sync::Mutex<()>, inactive_before: &BTreeSet<String>) -> BTreeSet<String> {
        let out = match self.output(&self.lvs, &LVS_ARGS).await {
            Ok(out) => out,
            Err(e) => {
                tracing::debug!("no look at the OSDs' LVs: {e}");
                return BTreeSet::new();
            }
        };
        let lvs = parse_lvs(&out);
        let names: Vec<String> = match std::fs::read_dir(&self.wants_dir) {
            Ok(dir) => dir.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect(),
            Err(_) => Vec::new(),
        };
        let enabled = enabled_osds(names.iter().map(String::as_str));
        let (now, inactive) = decide(&lvs, &enabled, self.allowed.as_ref(), inactive_before);
        if now.is_empty() {
            return inactive;
        }
        let _held = busy.lock().await;
        // Read again under the lock: a zap or a deployment that held it may
        // have removed or activated them meanwhile.
        let again = match self.output(&self.lvs, &LVS_ARGS).await {
            Ok(out) => parse_lvs(&out),
            Err(e) => {
                tracing::warn!("cannot read the OSDs' LVs again before activating them: {e}");
                return inactive;
            }
        };
        // Every LV of an OSD first (its block and its DB), then its unit once.
        let mut units = BTreeSet::new();
        for lv in now {
            if again.iter().any(|l| l.path == lv.path && !l.active) && self.activate(lv).await {
                units.insert((lv.osd_id, unit_of(lv)));
            }
        }
        for (osd_id, unit) in units {
            self.start_if_done(osd_id, &unit).await;
        }
        inactive
    }

    /// `lvchange -ay`; whether it worked (a failure is logged here).
    async fn activate(&self, lv: &OsdLv) -> bool {
        let unit = unit_of(lv);
        if let Err(e) = self.output(&self.lvchange, &["-ay", &lv.path]).await {
            tracing::error!(osd_id = lv.osd_id, lv = %lv.path, "osd.{}'s LV {} is inactive though its boot unit {unit} is enabled, and could not be activated: {e}", lv.osd_id, lv.path);
            return false;
        }
        tracing::warn!(
            osd_id = lv.osd_id,
            lv = %lv.path,
            "activated osd.{}'s LV {}: LVM left it inactive at boot though its boot unit {unit} is enabled",
            lv.osd_id,
            lv.path
        );
        true
    }

    /// A unit still trying ("activating") finds the LVs on its next try.
    /// One that gave up is started again: ceph-volume-systemd exits 0 after
    /// its last try, so the unit reads "inactive", not "failed".
    async fn start_if_done(&self, osd_id: u32, unit: &str) {
        let state = match self.call(&self.systemctl, &["is-active", unit]).await {
            Ok((_, stdout)) => stdout.trim().to_string(),
            Err(e) => {
                tracing::error!(osd_id, "cannot tell whether {unit} still tries: {e}");
                return;
            }
        };
        if state != "activating" {
            let started = async {
                self.output(&self.systemctl, &["reset-failed", unit]).await?;
                self.output(&self.systemctl, &["start", "--no-block", unit]).await
            };
            match started.await {
                Ok(_) => tracing::warn!(
                    osd_id,
                    "{unit} was {state}, done trying before its LVs were there; started it again"
                ),
                Err(e) => tracing::error!(osd_id, "{unit} had given up and could not be started again: {e}"),
            }
        }
    }

    /// Runs a tool to its end; its stdout when it exits 0.
    async fn output(&self, program: &str, args: &[&str]) -> Result<String, LookError> {
        match self.call(program, args).await? {
            (None, stdout) => Ok(stdout),
            (Some(failed), _) => Err(failed),
        }
    }

    /// Runs a tool to its end: how it failed (if it did) and its stdout.
    async fn call(&self, program: &str, args: &[&str]) -> Result<(Option<LookError>, String), LookError> {
        let mut cmd = tokio::process::Command::new(program);
        cmd.args(args).current_dir("/");
        let command = command_line(program, &args.iter().map(|a| a.to_string()).collect::<Vec<_>>(), &[]);
        let limits = Limits { timeout: Duration::from_secs(120), max_output: 4 << 20, keep: Keep::Head };
        let done =
            process::run(cmd, limits).await.map_err(|source| LookError::Run { command: command.clone(), source })?;
        let failed = (!done.status.success()).then(|| LookError::Failed {
            command,
            code: done.exit_code(),
            stderr: done.stderr.last_line(),
        });
        Ok((failed, done.stdout.text()))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LookError {
    #[error("could not run `{command}`: {source}")]
    Run { command: String, source: RunError },
    #[error("`{command}` exited with status {code}: {stderr}")]
    Failed { command: String, code: i32, stderr: String },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent_server::osd::boot_lvs::tests::LVS;

    #[test]
    fn uptime_is_read_from_proc() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("uptime"), "182.44 301.12\n").unwrap();
        assert_eq!(uptime(dir.path()).unwrap().as_secs(), 182);
        std::fs::write(dir.path().join("uptime"), "x\n").unwrap();
        assert!(uptime(dir.path()).is_err());
    }

    /// The tools as scripts that keep their state in files: `lvs` prints
    /// `lvs.out`, `lvchange -ay` marks the LV active in it, and every call
    /// is logged.
    fn fake_host(dir: &Path, gave_up: bool) -> BootActivation {
        let log = dir.join("calls.log");
        let write = |name: &str, body: &str| {
            let path = dir.join(name);
            std::fs::write(&path, format!("#!/bin/sh\necho \"{name} $*\" >> {}\n{body}\n", log.display())).unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
            path.display().to_string()
        };
        let out = dir.join("lvs.out");
        std::fs::write(&out, LVS).unwrap();
        let lvs = write("lvs", &format!("cat {}", out.display()));
        let lvchange = write("lvchange", &format!("sed -i \"s|$2;;|$2;active;|\" {}", out.display()));
        let state = if gave_up { "inactive" } else { "activating" };
        let systemctl = write("systemctl", &format!("[ \"$1\" = is-active ] && {{ echo {state}; exit 3; }}; exit 0"));
        let wants = dir.join("wants");
        std::fs::create_dir_all(&wants).unwrap();
        std::fs::write(wants.join("ceph-volume@lvm-2-f2.service"), "").unwrap();
        std::fs::write(dir.join("uptime"), "60.0 10.0\n").unwrap();
        BootActivation {
            window: Duration::from_secs(900),
            interval: Duration::from_millis(10),
            proc_root: dir.to_path_buf(),
            wants_dir: wants,
            lvs,
            lvchange,
            systemctl,
            allowed: None,
        }
    }

    fn calls(dir: &Path) -> Vec<String> {
        std::fs::read_to_string(dir.join("calls.log")).unwrap_or_default().lines().map(String::from).collect()
    }

    #[tokio::test]
    async fn looks_activate_an_enabled_osds_lvs_once_then_start_its_unit_done_trying_once() {
        let dir = tempfile::tempdir().unwrap();
        let host = fake_host(dir.path(), true);
        let busy = tokio::sync::Mutex::new(());
        let seen = host.look(&busy, &BTreeSet::new()).await;
        assert_eq!(calls(dir.path()), ["lvs --noheadings --separator ; -o lv_path,lv_active,lv_tags,devices"]);
        let seen = host.look(&busy, &seen).await;
        assert_eq!(seen.len(), 2, "what the second look saw inactive, before it acted");
        let seen = host.look(&busy, &seen).await;
        assert!(seen.is_empty(), "both LVs are active now: {seen:?}");
        let unit = "ceph-volume@lvm-2-f2.service";
        let acted: Vec<String> = calls(dir.path()).into_iter().filter(|c| !c.starts_with("lvs ")).collect();
        assert_eq!(
            acted,
            [
                "lvchange -ay /dev/ceph-b/osd-block-f2".to_string(),
                "lvchange -ay /dev/ceph-c/osd-db-f2".to_string(),
                format!("systemctl is-active {unit}"),
                format!("systemctl reset-failed {unit}"),
                format!("systemctl start --no-block {unit}"),
            ]
        );
    }

    #[tokio::test]
    async fn a_unit_still_trying_is_left_to_find_its_lv() {
        let dir = tempfile::tempdir().unwrap();
        let host = fake_host(dir.path(), false);
        let busy = tokio::sync::Mutex::new(());
        let seen = host.look(&busy, &BTreeSet::new()).await;
        host.look(&busy, &seen).await;
        assert!(!calls(dir.path()).iter().any(|c| c.contains("start")), "{:?}", calls(dir.path()));
        assert_eq!(calls(dir.path()).iter().filter(|c| c.starts_with("lvchange")).count(), 2);
    }

    #[tokio::test]
    async fn an_lv_activated_while_the_look_waited_for_the_lock_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let host = fake_host(dir.path(), true);
        let busy = Arc::new(tokio::sync::Mutex::new(()));
        let seen = host.look(&busy, &BTreeSet::new()).await;
        let held = busy.clone().lock_owned().await;
        let (h, b) = (host.clone(), busy.clone());
        let look = tokio::spawn(async move { h.look(&b, &seen).await });
        // Once the look has read the LVs (its second `lvs`) it waits for the lock.
        while calls(dir.path()).iter().filter(|c| c.starts_with("lvs ")).count() < 2 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // A deployment holding the lock activates the block LV meanwhile.
        let out = dir.path().join("lvs.out");
        let text = std::fs::read_to_string(&out).unwrap();
        std::fs::write(&out, text.replace("/dev/ceph-b/osd-block-f2;;", "/dev/ceph-b/osd-block-f2;active;")).unwrap();
        drop(held);
        look.await.unwrap();
        let activated: Vec<String> = calls(dir.path()).into_iter().filter(|c| c.starts_with("lvchange")).collect();
        assert_eq!(activated, ["lvchange -ay /dev/ceph-c/osd-db-f2"]);
    }

    #[tokio::test]
    async fn past_the_window_nothing_is_looked_at() {
        let dir = tempfile::tempdir().unwrap();
        let host = fake_host(dir.path(), true);
        std::fs::write(dir.path().join("uptime"), "901.0 10.0\n").unwrap();
        host.run(Arc::new(tokio::sync::Mutex::new(()))).await;
        assert!(calls(dir.path()).is_empty(), "{:?}", calls(dir.path()));
    }
}
