//! What a swap reads from and does to the cluster through the CLI
//! (docs/design/swap.md): every PG now and in the final map (osdmaptool on
//! a copy of the osdmap, `placement.rs`), joined by pgid with `pg dump
//! pgs` (state, acting set, bytes) and `osd dump` (upmap entries, pool
//! types, per-OSD flags); `pg-upmap-items`; the final CRUSH weights in one
//! CRUSH change (`osd getcrushmap`, `crushtool --reweight-item` for each,
//! `osd setcrushmap` with the CRUSH version it read, so that a change made
//! in between is refused rather than overwritten); the balancer; `noout`.

use std::collections::HashMap;

use serde::Deserialize;

use super::cli::CephCli;
use super::status::Status;
use super::wire::{CrushRule, MappedPg, PgDump, PgStatEntry};
use super::CephError;
use crate::domain::swap::cost::{Placement, SwapPlacements};
use crate::domain::swap::{PgNow, SwapInput};

/// What `osd dump` says beyond `OsdDumpPools`: the upmap entries, each
/// pool's type (1 replicated, 3 erasure) and each OSD's flags.
#[derive(Debug, Deserialize)]
struct UpmapDump {
    #[serde(default)]
    pools: Vec<PoolType>,
    #[serde(default)]
    osds: Vec<OsdFlags>,
    #[serde(default)]
    pg_upmap_items: Vec<UpmapEntry>,
}

#[derive(Debug, Deserialize)]
struct PoolType {
    pool: i64,
    #[serde(rename = "type", default)]
    kind: u8,
}

#[derive(Debug, Deserialize)]
struct OsdFlags {
    osd: u32,
    #[serde(default)]
    up: u8,
}

#[derive(Debug, Deserialize)]
struct UpmapEntry {
    pgid: String,
    #[serde(default)]
    mappings: Vec<UpmapPair>,
}

#[derive(Debug, Deserialize)]
struct UpmapPair {
    from: u32,
    to: u32,
}

#[derive(Debug, Deserialize)]
struct BalancerStatus {
    active: bool,
}

const ERASURE: u8 = 3;

fn as_osds(list: &[u64]) -> Vec<u32> {
    list.iter().filter_map(|o| u32::try_from(*o).ok()).filter(|o| *o != i32::MAX as u32).collect()
}

/// Every PG of the map, its two placements joined with its stats and entry.
fn join(now: Vec<MappedPg>, after: &[MappedPg], stats: &PgDump, dump: &UpmapDump) -> Vec<PgNow> {
    let after: HashMap<&str, &MappedPg> = after.iter().map(|p| (p.pgid.as_str(), p)).collect();
    let stats: HashMap<&str, &PgStatEntry> = stats.pg_stats.iter().map(|s| (s.pgid.as_str(), s)).collect();
    let items: HashMap<&str, Vec<(u32, u32)>> = dump
        .pg_upmap_items
        .iter()
        .map(|e| (e.pgid.as_str(), e.mappings.iter().map(|m| (m.from, m.to)).collect()))
        .collect();
    now.into_iter()
        .map(|pg| {
            let pool = pg.pgid.split('.').next().and_then(|p| p.parse().ok()).unwrap_or(-1);
            let stat = stats.get(pg.pgid.as_str());
            let fin = after.get(pg.pgid.as_str());
            PgNow {
                erasure: dump.pools.iter().any(|p| p.pool == pool && p.kind == ERASURE),
                acting: stat.map(|s| as_osds(&s.acting)).unwrap_or_else(|| pg.up.clone()),
                state: stat.map(|s| s.state.clone()).unwrap_or_else(|| "unknown".into()),
                bytes: stat.map_or(0, |s| s.stat_sum.num_bytes.max(0) as u64),
                items: items.get(pg.pgid.as_str()).cloned().unwrap_or_default(),
                final_raw: fin.map(|f| f.raw.clone()).unwrap_or_default(),
                final_up: fin.map(|f| f.up.clone()).unwrap_or_default(),
                pool,
                raw: pg.raw,
                up: pg.up,
                pgid: pg.pgid,
            }
        })
        .collect()
}

impl CephCli {
    pub(super) async fn read_swap_input(&self, weights: &[(u32, f64)], probe: u32) -> Result<SwapInput, CephError> {
        let (_, now, after) = self.map_with_weights(weights).await?;
        let who = format!("osd.{probe}");
        let config_show = ["config", "show", who.as_str(), "osd_max_backfills"];
        let (stats, dump, max, balancer) = tokio::try_join!(
            self.json::<PgDump>(&["pg", "dump", "pgs"]),
            self.json::<UpmapDump>(&["osd", "dump"]),
            self.ok(&config_show),
            self.json::<BalancerStatus>(&["balancer", "status"]),
        )?;
        let max_backfills = max.stdout.trim().parse().map_err(|_| CephError::Decode {
            command: format!("config show {who} osd_max_backfills"),
            message: format!("not a count: {:?}", max.stdout.trim()),
        })?;
        Ok(SwapInput { pgs: join(now, &after, &stats, &dump), max_backfills, balancer_on: balancer.active })
    }

    /// Now and with the old OSDs drained, from osdmaptool. The final map
    /// needs the new OSDs, which do not exist before the swap makes them:
    /// their ids decide which PGs CRUSH gives them, and osdmaptool cannot
    /// add an OSD to a map. Until crushtool adds them to a copy (next step,
    /// docs/design/swap.md), the final sets are left empty and the preview
    /// says the swap's own bytes are known once the OSDs exist.
    pub(super) async fn read_swap_placements(&self, olds: &[u32]) -> Result<SwapPlacements, CephError> {
        let weights: Vec<(u32, f64)> = olds.iter().map(|id| (*id, 0.0)).collect();
        let (osd_dump, now, drained) = self.map_with_weights(&weights).await?;
        let (stats, rules, dump, status) = tokio::try_join!(
            self.json::<PgDump>(&["pg", "dump", "pgs"]),
            self.json::<Vec<CrushRule>>(&["osd", "crush", "rule", "dump"]),
            self.json::<UpmapDump>(&["osd", "dump"]),
            self.json::<Status>(&["status"]),
        )?;
        let drained: HashMap<&str, &MappedPg> = drained.iter().map(|p| (p.pgid.as_str(), p)).collect();
        let stats: HashMap<&str, &PgStatEntry> = stats.pg_stats.iter().map(|s| (s.pgid.as_str(), s)).collect();
        let pgs = now
            .into_iter()
            .map(|pg| {
                let stat = stats.get(pg.pgid.as_str());
                Placement {
                    pool: pg.pgid.split('.').next().and_then(|p| p.parse().ok()).unwrap_or(-1),
                    bytes: stat.map_or(0, |s| s.stat_sum.num_bytes.max(0) as u64),
                    acting: stat.map(|s| as_osds(&s.acting)).unwrap_or_else(|| pg.up.clone()),
                    drained: drained.get(pg.pgid.as_str()).map(|d| d.up.clone()).unwrap_or_default(),
                    final_: Vec::new(),
                    now: pg.up,
                    pgid: pg.pgid,
                }
            })
            .collect();
        Ok(SwapPlacements {
            pgs,
            pools: self.pool_rules_of(&osd_dump, &rules).await?,
            down: dump.osds.iter().filter(|o| o.up == 0).map(|o| o.osd).collect(),
            recovery_now: status.pgmap.recovering_bytes_per_sec,
            final_known: false,
        })
    }

    pub(super) async fn upmap(&self, pgid: &str, pairs: &[(u32, u32)]) -> Result<(), CephError> {
        if pairs.is_empty() {
            return self.ok(&["osd", "rm-pg-upmap-items", pgid]).await.map(|_| ());
        }
        let mut args = vec!["osd".to_string(), "pg-upmap-items".into(), pgid.into()];
        for (from, to) in pairs {
            args.push(from.to_string());
            args.push(to.to_string());
        }
        self.ok(&args.iter().map(String::as_str).collect::<Vec<_>>()).await.map(|_| ())
    }

    /// The weights in one CRUSH change: the map is edited by crushtool in a
    /// temporary directory and set with the CRUSH version it was read at.
    pub(super) async fn crush_weights(&self, weights: &[(u32, f64)]) -> Result<(), CephError> {
        let dir = tempfile::Builder::new()
            .prefix("osdkeeper-crush")
            .tempdir()
            .map_err(|e| CephError::Tool { command: "a temporary directory".into(), message: e.to_string() })?;
        let mut file = dir.path().join("crush.0");
        let path = file.to_string_lossy().into_owned();
        let got = self.ok(&["osd", "getcrushmap", "-o", &path]).await?;
        // `getcrushmap` names the version it read (on stderr, before 17.2 on stdout too).
        let version =
            format!("{}\n{}", got.stdout, got.stderr).lines().filter_map(|l| l.trim().parse::<u64>().ok()).next_back();
        let crushtool = self.crushtool();
        for (i, (id, weight)) in weights.iter().enumerate() {
            let next = dir.path().join(format!("crush.{}", i + 1));
            let (input, output) = (file.to_string_lossy().into_owned(), next.to_string_lossy().into_owned());
            let (name, w) = (format!("osd.{id}"), weight.to_string());
            let args = ["-i", input.as_str(), "--reweight-item", name.as_str(), w.as_str(), "-o", output.as_str()];
            self.tool(&crushtool, &format!("{crushtool} {}", args.join(" ")), &args).await?;
            file = next;
        }
        let path = file.to_string_lossy().into_owned();
        let mut args = vec!["osd".to_string(), "setcrushmap".into(), "-i".into(), path];
        args.extend(version.map(|v| v.to_string()));
        self.ok(&args.iter().map(String::as_str).collect::<Vec<_>>()).await?;
        drop(dir);
        Ok(())
    }

    /// crushtool beside the osdmaptool the daemon runs (package ceph-base has both).
    fn crushtool(&self) -> String {
        match self.osdmaptool.rsplit_once('/') {
            Some((dir, _)) => format!("{dir}/crushtool"),
            None => "crushtool".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_pg_is_joined_with_its_stats_entry_and_final_sets() {
        let now = vec![
            MappedPg { pgid: "1.0".into(), raw: vec![8, 3], up: vec![20, 3] },
            MappedPg { pgid: "2.1".into(), raw: vec![4, 5, 6], up: vec![4, 5, 6] },
        ];
        let after = [MappedPg { pgid: "1.0".into(), raw: vec![20, 3], up: vec![20, 3] }];
        let stats: PgDump = serde_json::from_str(
            r#"{"pg_stats":[{"pgid":"1.0","state":"active+remapped+backfilling","up":[20,3],"acting":[8,3],
                "stat_sum":{"num_bytes":4096}}]}"#,
        )
        .unwrap();
        let dump: UpmapDump = serde_json::from_str(
            r#"{"pools":[{"pool":1,"type":1},{"pool":2,"type":3}],
                "osds":[{"osd":8,"up":1,"state":["exists","up","noout"]}],
                "pg_upmap_items":[{"pgid":"1.0","mappings":[{"from":8,"to":20}]}]}"#,
        )
        .unwrap();
        let pgs = join(now, &after, &stats, &dump);
        let p = &pgs[0];
        assert_eq!((p.pool, p.erasure, p.bytes, &p.items), (1, false, 4096, &vec![(8, 20)]));
        assert_eq!(
            (&p.acting, p.state.as_str(), &p.final_up),
            (&vec![8, 3], "active+remapped+backfilling", &vec![20, 3])
        );
        let q = &pgs[1];
        assert!(q.erasure && q.final_up.is_empty() && q.state == "unknown", "{q:?}");
        assert_eq!(q.acting, [4, 5, 6], "no stats: where CRUSH puts it");
    }
}
