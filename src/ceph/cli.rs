//! `CephCluster` over the `ceph` command line.
//!
//! Why the CLI and not the manager's REST API: it needs nothing enabled on
//! the cluster (restful and dashboard cannot even be loaded together in
//! 16.2), it is present wherever an admin keyring is, and its JSON is the
//! documented format. Each call runs `ceph [--conf FILE] --connect-timeout N
//! ... --format json` with a hard timeout; the reads the removal worker
//! repeats every round go through the cluster session instead when it runs
//! (`session.rs`: the same commands, without a process start each).
//!
//! Destroy and purge are issued **without** `--yes-i-really-mean-it`: in
//! 16.2 that flag also skips the monitors' safe-to-destroy check, and the
//! flag-less form succeeds exactly when the OSD is safe to destroy.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::process::Command;

use super::reads::read_command;
use super::session::{Connection, Session};
use super::wire::{OsdDf, OsdDump, OsdMetadata, OsdTree, PgStat, Versions};
use super::{
    CephCluster, CephError, CephRelease, ClusterHealth, ClusterState, Copies, DbEntry, OsdDevices, OsdState,
    PacingFacts, PgOnOsd, PreviewInput, RecoveryNow, SwapInput, SwapPlacements, Verdict,
};

pub struct CephCli {
    pub bin: String,
    /// The `rados` CLI, for cluster benchmarks.
    pub rados_bin: String,
    pub conf: Option<PathBuf>,
    pub timeout: Duration,
    /// How long a `rados bench` pass may run past its seconds; `None`: its seconds + 60 s.
    pub bench_slack: Option<Duration>,
    /// `--name` (a cephx user with only the caps the daemon needs).
    pub name: Option<String>,
    pub keyring: Option<PathBuf>,
    /// Ceph's osdmaptool, for the removal preview [default: osdmaptool from PATH].
    pub osdmaptool: String,
    /// Serves the reads `reads.rs` lists when set; the CLI runs everything else.
    pub session: Option<Session>,
}

pub(super) struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// ceph's error lines look like "Error EBUSY: OSD(s) 1 have 22 pgs ..."; keep the words.
pub(super) fn clean(stderr: &str) -> String {
    let line = stderr.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("").trim();
    match line.strip_prefix("Error ") {
        Some(rest) => rest.split_once(": ").map(|(_, m)| m.to_string()).unwrap_or_else(|| rest.to_string()),
        None => line.to_string(),
    }
}

impl CephCli {
    async fn run(&self, args: &[&str]) -> Result<Output, CephError> {
        if let (Some(session), Some((target, command))) = (&self.session, read_command(args)) {
            let to = Connection {
                conf: self.conf.as_deref(),
                name: self.name.as_deref(),
                keyring: self.keyring.as_deref(),
                timeout: self.timeout,
            };
            if let Some(out) = session.command(&to, target, &command, &args.join(" ")).await? {
                return Ok(out);
            }
        }
        self.run_within(args, self.timeout).await
    }

    /// `ceph ARGS` with its own bound (a bench runs longer than a query).
    pub(super) async fn run_within(&self, args: &[&str], timeout: Duration) -> Result<Output, CephError> {
        let mut full = vec!["--connect-timeout".to_string(), self.timeout.as_secs().max(1).to_string()];
        full.extend(args.iter().map(|a| a.to_string()));
        self.spawn(&self.bin, &full, &args.join(" "), timeout).await
    }

    /// `rados ARGS` (its cluster found the same way), bounded by `timeout`.
    pub(super) async fn rados(&self, args: &[&str], timeout: Duration) -> Result<Output, CephError> {
        let full: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        let out = self.spawn(&self.rados_bin, &full, &format!("rados {}", args.join(" ")), timeout).await?;
        if out.code != 0 {
            return Err(CephError::Command {
                command: format!("rados {}", args.join(" ")),
                code: out.code,
                message: clean(&out.stderr),
            });
        }
        Ok(out)
    }

    async fn spawn(&self, bin: &str, args: &[String], command: &str, timeout: Duration) -> Result<Output, CephError> {
        let mut cmd = Command::new(bin);
        if let Some(conf) = &self.conf {
            cmd.arg("--conf").arg(conf);
        }
        if let Some(name) = &self.name {
            cmd.arg("--name").arg(name);
        }
        if let Some(keyring) = &self.keyring {
            cmd.arg("--keyring").arg(keyring);
        }
        cmd.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
        let child = cmd.spawn().map_err(|e| CephError::Spawn { bin: bin.to_string(), message: e.to_string() })?;
        let out = tokio::time::timeout(timeout + Duration::from_secs(5), child.wait_with_output())
            .await
            .map_err(|_| CephError::Timeout { command: command.to_string(), seconds: timeout.as_secs() })?
            .map_err(|e| CephError::Spawn { bin: bin.to_string(), message: e.to_string() })?;
        Ok(Output {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }

    pub(super) async fn ok(&self, args: &[&str]) -> Result<Output, CephError> {
        let out = self.run(args).await?;
        if out.code != 0 {
            return Err(CephError::Command { command: args.join(" "), code: out.code, message: clean(&out.stderr) });
        }
        Ok(out)
    }

    pub(super) async fn json<T: serde::de::DeserializeOwned>(&self, args: &[&str]) -> Result<T, CephError> {
        let mut full: Vec<&str> = args.to_vec();
        full.extend(["--format", "json"]);
        let out = self.ok(&full).await?;
        // Manager commands print a newline before the JSON.
        serde_json::from_str(out.stdout.trim())
            .map_err(|e| CephError::Decode { command: args.join(" "), message: e.to_string() })
    }

    /// A yes/no command: exit 0 is yes, EBUSY (16) or EAGAIN (11) is no with a reason.
    pub(super) async fn answer(&self, args: &[&str]) -> Result<Verdict, CephError> {
        let out = self.run(args).await?;
        match out.code {
            0 => Ok(Verdict { ok: true, message: out.stdout.trim().lines().last().unwrap_or("ok").to_string() }),
            11 | 16 => Ok(Verdict { ok: false, message: clean(&out.stderr) }),
            code => Err(CephError::Command { command: args.join(" "), code, message: clean(&out.stderr) }),
        }
    }
}

fn ids_arg(ids: &[u32]) -> Vec<String> {
    ids.iter().map(u32::to_string).collect()
}

impl CephCluster for CephCli {
    fn state(&self) -> BoxFuture<'_, Result<ClusterState, CephError>> {
        Box::pin(async move {
            // Side by side: each is a CLI start of half a second or more, and
            // the removal worker reads this every round between its steps.
            // The first failure in this order is the one reported, whichever ended first.
            let (dump, df, tree, pg) = futures::join!(
                self.json::<OsdDump>(&["osd", "dump"]),
                self.json::<OsdDf>(&["osd", "df"]),
                self.json::<OsdTree>(&["osd", "tree"]),
                self.json::<PgStat>(&["pg", "stat"]),
            );
            let (dump, df, tree, pg) = (dump?, df?, tree?, pg?);
            let host_of = |id: i64| {
                tree.nodes.iter().find(|n| n.kind == "host" && n.children.contains(&id)).map(|n| n.name.clone())
            };
            let osds = dump
                .osds
                .iter()
                .map(|o| {
                    let id = i64::from(o.osd);
                    let usage = df.nodes.iter().find(|n| n.id == id);
                    let node = tree.nodes.iter().find(|n| n.id == id);
                    OsdState {
                        id: o.osd,
                        up: o.up == 1,
                        is_in: o.is_in == 1,
                        destroyed: o.state.iter().any(|s| s == "destroyed"),
                        noout: o.state.iter().any(|s| s == "noout"),
                        crush_weight: node.and_then(|n| n.crush_weight).or(usage.map(|u| u.crush_weight)),
                        pgs: usage.map(|u| u.pgs),
                        kb_used: usage.map(|u| u.kb_used),
                        crush_host: host_of(id),
                        device_class: node.and_then(|n| n.device_class.clone()),
                        uuid: o.uuid.clone().filter(|u| !u.is_empty() && u != "00000000-0000-0000-0000-000000000000"),
                    }
                })
                .collect();
            let pg_states = pg.pg_summary.num_pg_by_state.into_iter().map(|s| (s.name, s.num)).collect();
            Ok(ClusterState { fsid: dump.fsid, osds, pg_states })
        })
    }

    fn versions(&self) -> BoxFuture<'_, Result<Vec<(CephRelease, u64)>, CephError>> {
        Box::pin(async move {
            let v: Versions = self.json(&["versions"]).await?;
            v.releases().map_err(|e| CephError::Decode { command: "versions".into(), message: e.to_string() })
        })
    }

    fn status(&self) -> BoxFuture<'_, Result<ClusterHealth, CephError>> {
        Box::pin(async move { Ok(super::status::health_of(self.json(&["status"]).await?)) })
    }

    fn osd_devices(&self, id: u32) -> BoxFuture<'_, Result<OsdDevices, CephError>> {
        Box::pin(async move {
            let m: OsdMetadata = self.json(&["osd", "metadata", &id.to_string()]).await?;
            Ok(devices_of(m))
        })
    }

    fn all_osd_devices(&self) -> BoxFuture<'_, Result<Vec<(u32, OsdDevices)>, CephError>> {
        Box::pin(async move {
            let all: Vec<OsdMetadata> = self.json(&["osd", "metadata"]).await?;
            Ok(all.into_iter().filter_map(|m| m.id.map(|id| (id, devices_of(m)))).collect())
        })
    }

    fn ok_to_stop(&self, ids: &[u32]) -> BoxFuture<'_, Result<Verdict, CephError>> {
        let ids = ids_arg(ids);
        Box::pin(async move {
            let mut args = vec!["osd", "ok-to-stop"];
            args.extend(ids.iter().map(String::as_str));
            self.answer(&args).await
        })
    }

    fn safe_to_destroy(&self, ids: &[u32]) -> BoxFuture<'_, Result<Verdict, CephError>> {
        let ids = ids_arg(ids);
        Box::pin(async move {
            let mut args = vec!["osd", "safe-to-destroy"];
            args.extend(ids.iter().map(String::as_str));
            self.answer(&args).await
        })
    }

    fn reweight(&self, id: u32, weight: f64) -> BoxFuture<'_, Result<(), CephError>> {
        Box::pin(async move {
            self.ok(&["osd", "crush", "reweight", &format!("osd.{id}"), &weight.to_string()]).await.map(|_| ())
        })
    }

    fn mark_out(&self, id: u32) -> BoxFuture<'_, Result<(), CephError>> {
        Box::pin(async move { self.ok(&["osd", "out", &id.to_string()]).await.map(|_| ()) })
    }

    fn mark_in(&self, id: u32) -> BoxFuture<'_, Result<(), CephError>> {
        Box::pin(async move { self.ok(&["osd", "in", &id.to_string()]).await.map(|_| ()) })
    }

    fn mark_down(&self, id: u32) -> BoxFuture<'_, Result<(), CephError>> {
        Box::pin(async move { self.ok(&["osd", "down", &id.to_string()]).await.map(|_| ()) })
    }

    fn destroy(&self, id: u32) -> BoxFuture<'_, Result<(), CephError>> {
        Box::pin(async move { self.ok(&["osd", "destroy", &id.to_string()]).await.map(|_| ()) })
    }

    fn purge(&self, id: u32) -> BoxFuture<'_, Result<(), CephError>> {
        Box::pin(async move { self.ok(&["osd", "purge", &id.to_string()]).await.map(|_| ()) })
    }

    fn rm_device_class(&self, id: u32) -> BoxFuture<'_, Result<(), CephError>> {
        Box::pin(async move { self.ok(&["osd", "crush", "rm-device-class", &format!("osd.{id}")]).await.map(|_| ()) })
    }

    fn preview_input(&self, ids: &[u32]) -> BoxFuture<'_, Result<PreviewInput, CephError>> {
        let ids = ids.to_vec();
        Box::pin(async move { self.gather_preview_input(&ids).await })
    }

    fn pgs_on_osd(&self, id: u32) -> BoxFuture<'_, Result<Vec<PgOnOsd>, CephError>> {
        Box::pin(self.read_pgs_on_osd(id))
    }

    fn pacing_facts(&self, probe: u32) -> BoxFuture<'_, Result<PacingFacts, CephError>> {
        Box::pin(self.read_pacing_facts(probe))
    }

    fn recovery_config(&self, probe: u32) -> BoxFuture<'_, Result<RecoveryNow, CephError>> {
        Box::pin(self.read_recovery_config(probe))
    }

    fn config_dump(&self) -> BoxFuture<'_, Result<Vec<DbEntry>, CephError>> {
        Box::pin(self.read_config_dump())
    }

    fn config_set(&self, section: &str, name: &str, value: &str) -> BoxFuture<'_, Result<(), CephError>> {
        let args = ["config".to_string(), "set".into(), section.into(), name.into(), value.into()];
        Box::pin(async move { self.ok(&args.iter().map(String::as_str).collect::<Vec<_>>()).await.map(|_| ()) })
    }

    fn config_rm(&self, section: &str, name: &str) -> BoxFuture<'_, Result<(), CephError>> {
        let args = ["config".to_string(), "rm".into(), section.into(), name.into()];
        Box::pin(async move { self.ok(&args.iter().map(String::as_str).collect::<Vec<_>>()).await.map(|_| ()) })
    }

    fn swap_input(&self, weights: &[(u32, f64)], probe: u32) -> BoxFuture<'_, Result<SwapInput, CephError>> {
        let weights = weights.to_vec();
        Box::pin(async move { self.read_swap_input(&weights, probe).await })
    }

    fn swap_placements(
        &self,
        olds: &[u32],
        _host: &str,
        _new_weights: &[f64],
    ) -> BoxFuture<'_, Result<SwapPlacements, CephError>> {
        let olds = olds.to_vec();
        Box::pin(async move { self.read_swap_placements(&olds).await })
    }

    fn pg_upmap_items(&self, pgid: &str, pairs: &[(u32, u32)]) -> BoxFuture<'_, Result<(), CephError>> {
        let (pgid, pairs) = (pgid.to_string(), pairs.to_vec());
        Box::pin(async move { self.upmap(&pgid, &pairs).await })
    }

    fn set_crush_weights(&self, weights: &[(u32, f64)]) -> BoxFuture<'_, Result<(), CephError>> {
        let weights = weights.to_vec();
        Box::pin(async move { self.crush_weights(&weights).await })
    }

    fn set_balancer(&self, on: bool) -> BoxFuture<'_, Result<(), CephError>> {
        Box::pin(async move { self.ok(&["balancer", if on { "on" } else { "off" }]).await.map(|_| ()) })
    }

    fn set_noout(&self, id: u32, on: bool) -> BoxFuture<'_, Result<(), CephError>> {
        Box::pin(async move {
            let verb = if on { "add-noout" } else { "rm-noout" };
            self.ok(&["osd", verb, &format!("osd.{id}")]).await.map(|_| ())
        })
    }

    fn destroy_unchecked(&self, id: u32) -> BoxFuture<'_, Result<(), CephError>> {
        Box::pin(
            async move { self.ok(&["osd", "destroy", &id.to_string(), "--yes-i-really-mean-it"]).await.map(|_| ()) },
        )
    }

    fn copies(&self) -> BoxFuture<'_, Result<Copies, CephError>> {
        Box::pin(self.read_copies())
    }
}

fn devices_of(m: OsdMetadata) -> OsdDevices {
    let mut dev_nodes: Vec<String> = Vec::new();
    for node in [&m.bluestore_bdev_dev_node, &m.bluefs_db_dev_node, &m.bluefs_wal_dev_node].into_iter().flatten() {
        if !node.is_empty() && !dev_nodes.contains(node) {
            dev_nodes.push(node.clone());
        }
    }
    // An LVM OSD's nodes are its LVs (`/dev/dm-0`, a dm-crypt mapping over
    // one): no disk an inventory lists. `devices` names the disks beneath.
    if dev_nodes.is_empty() || dev_nodes.iter().any(|n| is_device_mapper(n)) {
        dev_nodes = m.devices.split(',').filter(|d| !d.is_empty()).map(|d| format!("/dev/{d}")).collect();
    }
    let device_ids = m
        .device_ids
        .split(',')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    OsdDevices { hostname: m.hostname, dev_nodes, device_ids }
}

fn is_device_mapper(node: &str) -> bool {
    node.strip_prefix("/dev/").is_some_and(|n| n.starts_with("dm-") || n.starts_with("mapper/"))
}

#[cfg(test)]
mod tests {
    /// The shape of `ceph osd metadata` of an LVM OSD with its DB on a
    /// shared SSD (Ceph 16.2 on the real-host testbed).
    #[test]
    fn an_lvm_osd_s_devices_are_the_disks_beneath_its_lvs() {
        let m: super::OsdMetadata = serde_json::from_value(serde_json::json!({
            "hostname": "f5-422-01",
            "devices": "sda,sdc",
            "bluestore_bdev_dev_node": "/dev/dm-0",
            "bluefs_db_dev_node": "/dev/dm-2",
            "device_ids": "sda=QEMU_QEMU_HARDDISK_TB1-HDD1,sdc=QEMU_QEMU_HARDDISK_TB1-SSD1",
        }))
        .unwrap();
        let d = super::devices_of(m);
        assert_eq!(d.dev_nodes, ["/dev/sda", "/dev/sdc"]);
        assert_eq!(d.device_ids.len(), 2);
        let raw: super::OsdMetadata = serde_json::from_value(serde_json::json!({
            "hostname": "h", "devices": "loop1", "bluestore_bdev_dev_node": "/dev/loop1"
        }))
        .unwrap();
        assert_eq!(super::devices_of(raw).dev_nodes, ["/dev/loop1"], "a raw OSD keeps its node");
    }

    #[test]
    fn error_words_are_kept() {
        assert_eq!(
            super::clean("Error EBUSY: OSD(s) 1 have 22 pgs currently mapped to them. \n"),
            "OSD(s) 1 have 22 pgs currently mapped to them."
        );
        assert_eq!(super::clean("Error EBUSY: osd.1 is not `down`.\n"), "osd.1 is not `down`.");
    }
}
