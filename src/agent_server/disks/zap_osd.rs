//! `POST /v1/zap-osd`: removing what ceph-volume made for one LVM OSD, and
//! only that: its block VG, its DB and WAL LVs wherever they are, its
//! dm-crypt mappings, its `ceph-volume@lvm-ID-FSID` unit.
//!
//! A disk zapped by its path takes everything on it: on a DB device shared
//! by several OSDs, that is the other OSDs' DBs. `ceph-volume lvm zap
//! --destroy --osd-id ID --osd-fsid FSID` removes the LVs tagged with that
//! OSD alone, the VG and the PV with them where nothing else is left. The
//! fsid pins the OSD: once it is purged its id is free, and a new OSD made
//! on this host meanwhile may carry it.
//!
//! An agent limited to some devices (`--devices`) zaps only an OSD whose
//! LVs are all on them: listed before the zap, under the agent's lock.
//! The request names the devices the daemon recorded for the OSD: an LV
//! of it on any other device refuses the zap before anything is removed.
//!
//! ceph-volume's exit status is not trusted: the LVs are listed again
//! afterwards and the zap fails if any of that OSD's is left. Its unit is
//! disabled afterwards (ceph-volume's zap leaves it enabled: at the next
//! boot it would retry for minutes an OSD that is gone).

use std::collections::BTreeSet;

use crate::agent_server::ceph_volume::CephVolume;
use crate::agent_server::disks::zap::{running_osd_pids, ZapError};
use crate::agent_server::host_roots::HostRoots;
use crate::agent_server::osd::status::join_pids;
use crate::agent_server::process::command_line;
use crate::agent_server::process::{self, Keep, Limits};
use crate::wire::agent::{CommandResult, ListedOsd, ZapOsdRequest, ZapOsdResult};
use crate::wire::ceph_volume_list::parse_lvm_list;

pub struct OsdZapper {
    pub ceph_volume: std::sync::Arc<CephVolume>,
    pub roots: HostRoots,
    /// The host runs its OSDs with systemd (ceph-volume enables a unit per
    /// LVM OSD there).
    pub systemd: bool,
    /// `--devices`: an OSD with an LV on any other device is not zapped.
    pub allowed: Option<BTreeSet<String>>,
}

impl OsdZapper {
    /// Zaps one OSD's LVs. The caller checked `force` and holds the agent's
    /// one-command-at-a-time lock. Safe to repeat: an OSD with no LV left
    /// is reported as such, and its unit disabled if it still is enabled.
    pub async fn zap(&self, req: &ZapOsdRequest) -> Result<ZapOsdResult, ZapError> {
        let (id, fsid) = (req.osd_id, req.osd_fsid.as_str());
        let pids = running_osd_pids(&self.roots, id).await?;
        if !pids.is_empty() {
            return Err(ZapError::OsdRunning { path: format!("osd.{id}'s LVs"), osd_id: id, pids: join_pids(&pids) });
        }
        let before = self.listed(id, fsid).await?;
        let mut steps = Vec::new();
        let devices: BTreeSet<String> = before.iter().flat_map(osd_devices).collect();
        self.check_allowed(id, &devices)?;
        if let Some(named) = &req.devices {
            let elsewhere: Vec<&String> = devices.iter().filter(|d| !named.contains(d)).collect();
            if !elsewhere.is_empty() {
                return Err(ZapError::LvsElsewhere {
                    osd_id: id,
                    fsid: fsid.to_string(),
                    found: elsewhere.iter().map(|d| d.as_str()).collect::<Vec<_>>().join(", "),
                    named: named.join(", "),
                });
            }
        }
        if before.is_empty() {
            steps.push(format!("ceph-volume lists no LV of osd.{id} (fsid {fsid}): nothing left to zap"));
        } else {
            let args: Vec<String> =
                ["lvm", "zap", "--destroy", "--osd-id", &id.to_string(), "--osd-fsid", fsid].map(String::from).into();
            tracing::info!(osd = id, %fsid, reason = req.reason.as_deref().unwrap_or("no reason given"), "zapping an OSD's LVs");
            let (command, result) = self.ceph_volume_run(&args).await?;
            if result.exit_code != 0 {
                let stderr = last_line(&result.stderr);
                return Err(ZapError::LvmZap { command, code: result.exit_code, stderr });
            }
            steps.push(format!("ran {command}"));
            let left = self.listed(id, fsid).await?;
            if !left.is_empty() {
                let on: BTreeSet<String> = left.iter().flat_map(osd_devices).collect();
                return Err(ZapError::LvsLeft {
                    command,
                    osd_id: id,
                    devices: on.into_iter().collect::<Vec<_>>().join(", "),
                });
            }
            steps.push(format!(
                "ceph-volume lists no LV of osd.{id} any more (it had LVs on {})",
                devices.iter().cloned().collect::<Vec<_>>().join(", ")
            ));
        }
        if self.systemd {
            steps.push(disable_unit(&format!("ceph-volume@lvm-{id}-{fsid}.service")).await?);
        }
        Ok(ZapOsdResult { osd_id: id, osd_fsid: fsid.to_string(), devices: devices.into_iter().collect(), steps })
    }

    /// Refuses an OSD with an LV on a device outside `--devices`.
    fn check_allowed(&self, id: u32, devices: &BTreeSet<String>) -> Result<(), ZapError> {
        let Some(allowed) = &self.allowed else { return Ok(()) };
        let outside: Vec<&str> = devices.iter().filter(|d| !allowed.contains(*d)).map(String::as_str).collect();
        if outside.is_empty() {
            return Ok(());
        }
        Err(ZapError::OsdOutsideDevices { osd_id: id, devices: outside.join(", ") })
    }

    /// Runs ceph-volume; the command line comes back for the errors to name.
    async fn ceph_volume_run(&self, args: &[String]) -> Result<(String, CommandResult), ZapError> {
        let command = command_line(&self.ceph_volume.program, args, &[]);
        let result = self
            .ceph_volume
            .run(args, &[])
            .await
            .map_err(|source| ZapError::LvmZapRun { command: command.clone(), source })?;
        Ok((command, result))
    }

    /// The OSD's entries in `ceph-volume lvm list` (none when it has no LV).
    async fn listed(&self, id: u32, fsid: &str) -> Result<Vec<ListedOsd>, ZapError> {
        let args: Vec<String> = ["lvm", "list", "--format", "json"].map(String::from).into();
        let (command, result) = self.ceph_volume_run(&args).await?;
        // A host without any LV makes `lvm list` fail ("No valid Ceph lvm devices found").
        if result.exit_code != 0 {
            if result.stderr.contains("No valid Ceph") || result.stdout.contains("No valid Ceph") {
                return Ok(Vec::new());
            }
            return Err(ZapError::LvmZap { command, code: result.exit_code, stderr: last_line(&result.stderr) });
        }
        let all = parse_lvm_list(result.stdout.as_bytes())
            .map_err(|e| ZapError::Listing { command, message: e.to_string() })?;
        Ok(all.into_iter().filter(|o| o.osd_id == id && o.osd_fsid == fsid).collect())
    }
}

fn osd_devices(o: &ListedOsd) -> Vec<String> {
    [Some(&o.device), o.db_device.as_ref(), o.wal_device.as_ref()].into_iter().flatten().cloned().collect()
}

fn last_line(text: &str) -> String {
    text.lines().rev().map(str::trim).find(|l| !l.is_empty()).unwrap_or("").to_string()
}

/// Disables a unit if it is enabled; says what it found or did.
async fn disable_unit(unit: &str) -> Result<String, ZapError> {
    let limits = Limits { timeout: std::time::Duration::from_secs(60), max_output: 64 * 1024, keep: Keep::Tail };
    let mut cmd = tokio::process::Command::new("systemctl");
    cmd.args(["is-enabled", unit]).kill_on_drop(true);
    let state = process::run(cmd, limits)
        .await
        .map_err(|source| ZapError::LvmZapRun { command: format!("systemctl is-enabled {unit}"), source })?;
    let said = state.stdout.text().trim().to_string();
    if said != "enabled" {
        return Ok(format!("{unit} is not enabled ({})", if said.is_empty() { "not found" } else { &said }));
    }
    let mut cmd = tokio::process::Command::new("systemctl");
    cmd.args(["disable", unit]).kill_on_drop(true);
    let done = process::run(cmd, limits)
        .await
        .map_err(|source| ZapError::LvmZapRun { command: format!("systemctl disable {unit}"), source })?;
    if !done.status.success() {
        return Err(ZapError::LvmZap {
            command: format!("systemctl disable {unit}"),
            code: done.exit_code(),
            stderr: done.stderr.last_line(),
        });
    }
    Ok(format!("disabled {unit} (ceph-volume's zap leaves it enabled; at boot it would wait for an OSD that is gone)"))
}
