//! What the removal preview reads from the cluster, in one go: the osdmap
//! (`ceph osd getmap`), CRUSH's placement of every PG on it now and with
//! the drained OSDs at CRUSH weight 0 (Ceph's own `osdmaptool
//! --adjust-crush-weight` on a copy, then `--upmap-cleanup` as the
//! monitors clean the entries a CRUSH change invalidates, and
//! `--test-map-pgs-dump-all`, whose up sets have the entries left
//! applied), PG bytes, pools and their
//! rules, OSD usage and ratios, `ok-to-stop`, and the recovery rate if the
//! cluster is recovering. Nothing on the cluster changes: the map is
//! edited in a temporary directory, removed when the preview is done.

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::process::Command;

use super::cli::CephCli;
use super::copies::{data_shards, erasure_profiles};
use super::status::Status;
use super::wire::{parse_pgs_dump_all, CrushRule, MappedPg, OsdDfSizes, OsdDumpPools, OsdTree, PgDump};
use super::{CephError, CephRelease};
use crate::domain::ceph_release::Release;
use crate::domain::drain_preview::{CrushItem, OsdUsage, PgPlacement, PoolRule, PreviewInput, Ratios};

/// Why `tool` (of release `tool`) cannot be trusted with a map that
/// requires `required` (a release name, as `osd dump` gives it): an older
/// osdmaptool decodes a newer map without a word and skips what it does
/// not know, so its placements would be quietly wrong.
fn tool_too_old(program: &str, tool: &CephRelease, required: &str) -> Option<String> {
    let needed = Release::of_name(required)?;
    (tool.release < needed).then(|| {
        format!(
            "{program} is Ceph {tool}, older than this cluster (require_osd_release {required}): it would misread \
             the osdmap; install {} {}'s osdmaptool (package ceph-base) on the daemon's host, or point \
             ceph.osdmaptool at one",
            needed.major(),
            needed.name()
        )
    })
}

/// Each pool with what its CRUSH rule asks for, and the copies its PGs
/// need to be read (`shards`: each erasure-code profile's k).
pub(super) fn pool_rules(
    osd_dump: &OsdDumpPools,
    rules: &[CrushRule],
    shards: &HashMap<String, u32>,
) -> Result<Vec<PoolRule>, CephError> {
    osd_dump
        .pools
        .iter()
        .map(|p| {
            let (root, device_class, failure_domain) = rules
                .iter()
                .find(|r| r.rule_id == p.crush_rule)
                .map(CrushRule::placement)
                .unwrap_or((None, None, "osd".into()));
            Ok(PoolRule {
                id: p.pool,
                name: p.pool_name.clone(),
                size: p.size,
                min_size: p.min_size,
                data_shards: data_shards(p.kind, &p.erasure_code_profile, &p.pool_name, shards)?,
                root,
                device_class,
                failure_domain,
            })
        })
        .collect()
}

impl CephCli {
    /// The pools of `osd dump` with their rules and k (`pool_rules`).
    pub(super) async fn pool_rules_of(
        &self,
        osd_dump: &OsdDumpPools,
        rules: &[CrushRule],
    ) -> Result<Vec<PoolRule>, CephError> {
        let profiles = erasure_profiles(osd_dump.pools.iter().map(|p| (p.kind, p.erasure_code_profile.as_str())));
        pool_rules(osd_dump, rules, &self.erasure_shards(&profiles).await?)
    }
}

/// The CRUSH hierarchy of `osd tree`, weights as they are now.
pub(super) fn crush_items(tree: OsdTree) -> Vec<CrushItem> {
    tree.nodes
        .into_iter()
        .map(|n| CrushItem {
            id: n.id,
            name: n.name,
            kind: n.kind,
            children: n.children,
            crush_weight: n.crush_weight,
            device_class: n.device_class,
        })
        .collect()
}

/// Each PG of the map now, with its sets after the drain and its bytes,
/// joined by pgid through indexes: a scan of both lists per PG was
/// quadratic, minutes at the hundreds of thousands of PGs of a large
/// cluster. The first entry of a pgid wins, as a scan would have found it.
pub(super) fn placements(up_now: Vec<MappedPg>, up_after: &[MappedPg], dump: &PgDump) -> Vec<PgPlacement> {
    let mut after: HashMap<&str, &MappedPg> = HashMap::with_capacity(up_after.len());
    for p in up_after {
        after.entry(p.pgid.as_str()).or_insert(p);
    }
    let mut num_bytes: HashMap<&str, i64> = HashMap::with_capacity(dump.pg_stats.len());
    for s in &dump.pg_stats {
        num_bytes.entry(s.pgid.as_str()).or_insert(s.stat_sum.num_bytes);
    }
    up_now
        .into_iter()
        .map(|now| {
            let after = after.get(now.pgid.as_str());
            let bytes = num_bytes.get(now.pgid.as_str()).map_or(0, |b| (*b).max(0));
            let pool = now.pgid.split('.').next().and_then(|p| p.parse().ok()).unwrap_or(-1);
            PgPlacement {
                pool,
                up_after: after.map(|a| a.up.clone()).unwrap_or_default(),
                placed_now: now.raw.len(),
                placed_after: after.map_or(0, |a| a.raw.len()),
                pgid: now.pgid,
                up_now: now.up,
                bytes: bytes as u64,
            }
        })
        .collect()
}

impl CephCli {
    pub(super) async fn gather_preview_input(&self, ids: &[u32]) -> Result<PreviewInput, CephError> {
        let weights: Vec<(u32, f64)> = ids.iter().map(|id| (*id, 0.0)).collect();
        let (osd_dump, up_now, up_after) = self.map_with_weights(&weights).await?;

        let mut ok_args = vec!["osd".to_string(), "ok-to-stop".to_string()];
        ok_args.extend(ids.iter().map(u32::to_string));
        let ok_args: Vec<&str> = ok_args.iter().map(String::as_str).collect();
        // Independent reads, each a process start of the ceph CLI: at once.
        let (dump, rules, tree, df, status, ok_to_stop) = tokio::try_join!(
            self.json::<PgDump>(&["pg", "dump", "pgs"]),
            self.json::<Vec<CrushRule>>(&["osd", "crush", "rule", "dump"]),
            self.json::<OsdTree>(&["osd", "tree"]),
            self.json::<OsdDfSizes>(&["osd", "df"]),
            self.json::<Status>(&["status"]),
            self.answer(&ok_args),
        )?;

        let pgs = placements(up_now, &up_after, &dump);
        let pools = self.pool_rules_of(&osd_dump, &rules).await?;
        let crush = crush_items(tree);
        let usage = df
            .nodes
            .iter()
            .filter_map(|n| Some(OsdUsage { id: u32::try_from(n.id).ok()?, kb: n.kb, kb_used: n.kb_used }))
            .collect();
        Ok(PreviewInput {
            osds: ids.to_vec(),
            pgs,
            pools,
            crush,
            usage,
            ratios: Ratios {
                nearfull: osd_dump.nearfull_ratio,
                backfillfull: osd_dump.backfillfull_ratio,
                full: osd_dump.full_ratio,
            },
            ok_to_stop,
            recovery_now: status.pgmap.recovering_bytes_per_sec,
            recent_drains: Vec::new(),
        })
    }

    /// CRUSH's placement of every PG now and on a copy of the osdmap with
    /// these CRUSH weights (`osdmaptool --adjust-crush-weight ... --save`,
    /// then `--upmap-cleanup` and `--test-map-pgs-dump-all`: raw sets, and
    /// up sets with the upmap entries the monitors keep applied as Ceph
    /// applies them), with `osd dump`. The map is edited in a temporary
    /// directory, removed after.
    pub(super) async fn map_with_weights(
        &self,
        weights: &[(u32, f64)],
    ) -> Result<(OsdDumpPools, Vec<MappedPg>, Vec<MappedPg>), CephError> {
        let dir = tempfile::Builder::new()
            .prefix("osdkeeper-preview")
            .tempdir()
            .map_err(|e| CephError::Tool { command: "a temporary directory".into(), message: e.to_string() })?;
        let now = dir.path().join("osdmap");
        let after = dir.path().join("osdmap.after");
        let now_s = now.to_string_lossy().into_owned();
        let getmap = ["osd", "getmap", "-o", &now_s];
        // `osd dump` first: it says which release the map requires of osdmaptool.
        let (tool, osd_dump, _) = tokio::try_join!(
            self.osdmaptool_release(),
            self.json::<OsdDumpPools>(&["osd", "dump"]),
            self.ok(&getmap),
        )?;
        if let Some(why) = tool_too_old(&self.osdmaptool, &tool, &osd_dump.require_osd_release) {
            return Err(CephError::Tool {
                command: format!("{} on this cluster's osdmap", self.osdmaptool),
                message: why,
            });
        }
        tokio::fs::copy(&now, &after)
            .await
            .map_err(|e| CephError::Tool { command: format!("copy {now_s}"), message: e.to_string() })?;
        if !weights.is_empty() {
            let adjust: Vec<String> = weights.iter().map(|(id, w)| format!("{id}:{w}")).collect();
            self.osdmaptool(&after, &["--adjust-crush-weight", &adjust.join(","), "--save"]).await?;
        }
        let dump_all = ["--test-map-pgs-dump-all"];
        // The monitors drop the upmap entries a CRUSH change leaves invalid
        // (one onto an OSD at weight 0, say) with the change itself: the
        // copy's placement is osdmaptool's after the same cleanup.
        let cleanup = dir.path().join("upmap-cleanup").to_string_lossy().into_owned();
        let cleaned_dump_all = ["--upmap-cleanup", &cleanup, "--test-map-pgs-dump-all"];
        let (now_text, after_text) =
            tokio::try_join!(self.osdmaptool(&now, &dump_all), self.osdmaptool(&after, &cleaned_dump_all))?;
        let decode = |m| CephError::Decode { command: "osdmaptool --test-map-pgs-dump-all".into(), message: m };
        let up_now = parse_pgs_dump_all(&now_text).map_err(decode)?;
        let up_after = parse_pgs_dump_all(&after_text).map_err(decode)?;
        drop(dir);
        Ok((osd_dump, up_now, up_after))
    }

    /// The release of the osdmaptool the daemon runs (`osdmaptool --version`).
    async fn osdmaptool_release(&self) -> Result<CephRelease, CephError> {
        let command = format!("{} --version", self.osdmaptool);
        let text = self.tool(&self.osdmaptool, &command, &["--version"]).await?;
        CephRelease::parse(&text).map_err(|e| CephError::Tool { command, message: e.to_string() })
    }

    /// `osdmaptool MAP ARGS...` with the same time bound as a ceph command.
    pub(super) async fn osdmaptool(&self, map: &Path, args: &[&str]) -> Result<String, CephError> {
        let command = format!("{} {} {}", self.osdmaptool, map.display(), args.join(" "));
        let mut full = vec![map.to_string_lossy().into_owned()];
        full.extend(args.iter().map(|a| a.to_string()));
        let full: Vec<&str> = full.iter().map(String::as_str).collect();
        self.tool(&self.osdmaptool, &command, &full).await
    }

    /// One of Ceph's tools (osdmaptool, crushtool) with `args`, bounded
    /// like a ceph command; its stdout.
    pub(super) async fn tool(&self, program: &str, command: &str, args: &[&str]) -> Result<String, CephError> {
        let command = command.to_string();
        let child = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| CephError::Spawn { bin: program.to_string(), message: e.to_string() })?;
        let out = tokio::time::timeout(self.timeout + Duration::from_secs(5), child.wait_with_output())
            .await
            .map_err(|_| CephError::Timeout { command: command.clone(), seconds: self.timeout.as_secs() })?
            .map_err(|e| CephError::Spawn { bin: program.to_string(), message: e.to_string() })?;
        if !out.status.success() {
            let message = String::from_utf8_lossy(&out.stderr).trim().lines().last().unwrap_or("").to_string();
            return Err(CephError::Tool { command, message });
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mapped(pgid: &str, raw: &[u32], up: &[u32]) -> MappedPg {
        MappedPg { pgid: pgid.into(), raw: raw.to_vec(), up: up.to_vec() }
    }

    fn placed(pgid: &str, pool: i64, now: &[u32], after: &[u32], placed: (usize, usize), bytes: u64) -> PgPlacement {
        let (placed_now, placed_after) = placed;
        PgPlacement {
            pgid: pgid.into(),
            pool,
            up_now: now.to_vec(),
            up_after: after.to_vec(),
            placed_now,
            placed_after,
            bytes,
        }
    }

    #[test]
    fn an_osdmaptool_older_than_the_map_is_refused_with_what_to_do() {
        let pacific =
            CephRelease::parse("ceph version 16.2.15 (618f440892089921c3e944a991122ddc44e60516) pacific (stable)")
                .unwrap();
        let why = tool_too_old("/usr/bin/osdmaptool", &pacific, "tentacle").unwrap();
        assert_eq!(
            why,
            "/usr/bin/osdmaptool is Ceph 16.2.15 (pacific), older than this cluster (require_osd_release tentacle): \
             it would misread the osdmap; install 20 tentacle's osdmaptool (package ceph-base) on the daemon's \
             host, or point ceph.osdmaptool at one"
        );
        assert_eq!(tool_too_old("osdmaptool", &pacific, "pacific"), None);
        assert_eq!(tool_too_old("osdmaptool", &pacific, "octopus"), None, "older maps are read");
        let tentacle = CephRelease::parse("20.2.4").unwrap();
        assert_eq!(tool_too_old("osdmaptool", &tentacle, "reef"), None, "newer tools read older maps");
        assert_eq!(tool_too_old("osdmaptool", &tentacle, ""), None, "no requirement named");
    }

    #[test]
    fn each_pg_is_joined_by_pgid_with_its_sets_after_and_its_bytes() {
        let now = vec![
            mapped("2.0", &[0, 2], &[0, 2]),
            mapped("2.1", &[1, 3], &[1]),
            mapped("3.0", &[4, 5], &[4, 5]),
            mapped("4.0", &[0, 1], &[0, 1]),
        ];
        // Listed in another order; 3.0 has no line after, nor stats; the first of a pgid counts.
        let after = [
            mapped("2.1", &[3, 5], &[3, 5]),
            mapped("4.0", &[0, 1], &[0, 1]),
            mapped("2.0", &[1, 2], &[1, 2]),
            mapped("2.0", &[9], &[9]),
        ];
        let dump: PgDump = serde_json::from_str(
            r#"{"pg_stats": [
                {"pgid": "2.1", "stat_sum": {"num_bytes": 70}},
                {"pgid": "2.0", "stat_sum": {"num_bytes": 100}},
                {"pgid": "2.1", "stat_sum": {"num_bytes": 1}},
                {"pgid": "4.0", "stat_sum": {"num_bytes": -5}}
            ]}"#,
        )
        .unwrap();
        assert_eq!(
            placements(now, &after, &dump),
            [
                placed("2.0", 2, &[0, 2], &[1, 2], (2, 2), 100),
                placed("2.1", 2, &[1], &[3, 5], (2, 2), 70),
                placed("3.0", 3, &[4, 5], &[], (2, 0), 0),
                placed("4.0", 4, &[0, 1], &[0, 1], (2, 2), 0),
            ]
        );
    }
}
