//! Every PG's copies, read fresh for the last-copy gate
//! (`domain::copies`): `pg dump pgs_brief` (each PG's acting set; a
//! missing erasure-coded shard is CRUSH_ITEM_NONE, left out), `osd dump`
//! (each pool's size, min_size, pg_num and erasure-code profile, each
//! OSD's up flag) and, once per erasure-code profile its pools use,
//! `osd erasure-code-profile get` for its k: the shards a PG needs to be
//! read. A PG map the manager says is not ready is an error: nothing is
//! decided on it.

use std::collections::HashMap;

use serde::Deserialize;

use super::cli::CephCli;
use super::CephError;
use crate::domain::copies::{Copies, Pg, Pool};

/// `pg dump pgs_brief`.
#[derive(Debug, Deserialize)]
struct PgsBrief {
    /// False while the manager has not yet heard from the OSDs (just started).
    #[serde(default)]
    pg_ready: Option<bool>,
    #[serde(default)]
    pg_stats: Vec<BriefPg>,
}

#[derive(Debug, Deserialize)]
struct BriefPg {
    pgid: String,
    #[serde(default)]
    acting: Vec<u64>,
}

/// What `osd dump` says of pools and OSDs for the count.
#[derive(Debug, Deserialize)]
struct CopiesDump {
    #[serde(default)]
    pools: Vec<DumpPool>,
    #[serde(default)]
    osds: Vec<DumpOsd>,
}

#[derive(Debug, Deserialize)]
struct DumpPool {
    pool: i64,
    pool_name: String,
    /// 1 replicated, 3 erasure-coded.
    #[serde(rename = "type", default)]
    kind: u8,
    size: u32,
    min_size: u32,
    #[serde(default)]
    pg_num: u32,
    #[serde(default)]
    erasure_code_profile: String,
}

#[derive(Debug, Deserialize)]
struct DumpOsd {
    osd: u32,
    #[serde(default)]
    up: u8,
}

/// `osd erasure-code-profile get NAME`: every value a string ("k": "2").
#[derive(Debug, Deserialize)]
struct Profile {
    k: serde_json::Value,
}

const ERASURE: u8 = 3;

/// A PG's acting set: CRUSH_ITEM_NONE (a missing shard) left out.
fn acting(list: &[u64]) -> Vec<u32> {
    list.iter().filter_map(|o| u32::try_from(*o).ok()).filter(|o| *o != i32::MAX as u32).collect()
}

fn profile_k(name: &str, p: &Profile) -> Result<u32, CephError> {
    let k = match &p.k {
        serde_json::Value::String(s) => s.trim().parse().ok(),
        serde_json::Value::Number(n) => n.as_u64().and_then(|k| u32::try_from(k).ok()),
        _ => None,
    };
    k.filter(|k| *k > 0).ok_or_else(|| CephError::Decode {
        command: format!("osd erasure-code-profile get {name}"),
        message: format!("k is {}, not a count of shards", p.k),
    })
}

/// The copies from the three answers; `shards` gives each erasure-code
/// profile's k.
fn read(brief: PgsBrief, dump: CopiesDump, shards: &HashMap<String, u32>) -> Result<Copies, CephError> {
    if brief.pg_ready == Some(false) {
        return Err(CephError::Decode {
            command: "pg dump pgs_brief".into(),
            message: "the manager's PG map is not ready yet (pg_ready false)".into(),
        });
    }
    let pools = dump
        .pools
        .iter()
        .map(|p| {
            Ok(Pool {
                id: p.pool,
                name: p.pool_name.clone(),
                size: p.size,
                min_size: p.min_size,
                data_shards: data_shards(p.kind, &p.erasure_code_profile, &p.pool_name, shards)?,
                pg_num: p.pg_num,
            })
        })
        .collect::<Result<Vec<_>, CephError>>()?;
    let pgs = brief
        .pg_stats
        .into_iter()
        .map(|p| Pg {
            pool: p.pgid.split('.').next().and_then(|n| n.parse().ok()).unwrap_or(-1),
            acting: acting(&p.acting),
            pgid: p.pgid,
        })
        .collect();
    Ok(Copies { pgs, pools, down: dump.osds.iter().filter(|o| o.up == 0).map(|o| o.osd).collect() })
}

/// The copies a PG of a pool of type `kind` needs to be read: 1
/// replicated, its profile's k erasure-coded (an error when the profile
/// was not read).
pub(super) fn data_shards(
    kind: u8,
    profile: &str,
    pool: &str,
    shards: &HashMap<String, u32>,
) -> Result<u32, CephError> {
    if kind != ERASURE {
        return Ok(1);
    }
    shards.get(profile).copied().ok_or_else(|| CephError::Decode {
        command: format!("osd erasure-code-profile get {profile}"),
        message: format!("pool '{pool}' is erasure-coded and its profile's k is not known"),
    })
}

/// The erasure-code profiles pools of these (type, profile) use.
pub(super) fn erasure_profiles<'a>(pools: impl Iterator<Item = (u8, &'a str)>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (kind, profile) in pools {
        if kind == ERASURE && !out.iter().any(|p| p == profile) {
            out.push(profile.to_string());
        }
    }
    out
}

impl CephCli {
    pub(super) async fn read_copies(&self) -> Result<Copies, CephError> {
        let (brief, dump) = tokio::try_join!(
            self.json::<PgsBrief>(&["pg", "dump", "pgs_brief"]),
            self.json::<CopiesDump>(&["osd", "dump"]),
        )?;
        let profiles = erasure_profiles(dump.pools.iter().map(|p| (p.kind, p.erasure_code_profile.as_str())));
        let shards = self.erasure_shards(&profiles).await?;
        read(brief, dump, &shards)
    }

    /// Each of these erasure-code profiles with its k, asked once each.
    pub(super) async fn erasure_shards(&self, profiles: &[String]) -> Result<HashMap<String, u32>, CephError> {
        let mut out = HashMap::new();
        for name in profiles {
            let profile = self.json::<Profile>(&["osd", "erasure-code-profile", "get", name]).await?;
            out.insert(name.clone(), profile_k(name, &profile)?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pacific's and Tentacle's answers (the sandbox's, an EC pool added).
    #[test]
    fn the_copies_read_from_the_pg_dump_the_osd_dump_and_the_profiles() {
        let brief: PgsBrief = serde_json::from_str(
            r#"{"pg_ready":true,"pg_stats":[
                {"pgid":"2.1f","state":"active+undersized+degraded","up":[1],"acting":[1],"up_primary":1,"acting_primary":1},
                {"pgid":"3.0","state":"active+undersized","up":[2,2147483647,4],"acting":[2,2147483647,4],"up_primary":2,"acting_primary":2}]}"#,
        )
        .unwrap();
        let dump: CopiesDump = serde_json::from_str(
            r#"{"pools":[{"pool":2,"pool_name":"sandbox","type":1,"size":2,"min_size":1,"pg_num":64,"erasure_code_profile":""},
                {"pool":3,"pool_name":"ec","type":3,"size":3,"min_size":2,"pg_num":8,"erasure_code_profile":"k2m1"}],
                "osds":[{"osd":1,"up":1},{"osd":4,"up":0}]}"#,
        )
        .unwrap();
        let profile: Profile = serde_json::from_str(r#"{"k":"2","m":"1","plugin":"jerasure"}"#).unwrap();
        let shards = HashMap::from([("k2m1".to_string(), profile_k("k2m1", &profile).unwrap())]);
        let c = read(brief, dump, &shards).unwrap();
        assert_eq!(c.pgs[1], Pg { pgid: "3.0".into(), pool: 3, acting: vec![2, 4] }, "the missing shard left out");
        assert_eq!((c.pools[0].data_shards, c.pools[1].data_shards, c.pools[1].pg_num), (1, 2, 8));
        assert_eq!(c.down, [4]);
        let not_ready: PgsBrief = serde_json::from_str(r#"{"pg_ready":false,"pg_stats":[]}"#).unwrap();
        let empty: CopiesDump = serde_json::from_str(r#"{"pools":[],"osds":[]}"#).unwrap();
        let e = read(not_ready, empty, &shards).unwrap_err().to_string();
        assert!(e.contains("not ready yet"), "{e}");
        let unknown: CopiesDump = serde_json::from_str(
            r#"{"pools":[{"pool":3,"pool_name":"ec","type":3,"size":3,"min_size":2,"pg_num":8,"erasure_code_profile":"x"}]}"#,
        )
        .unwrap();
        let brief: PgsBrief = serde_json::from_str(r#"{"pg_stats":[]}"#).unwrap();
        assert!(read(brief, unknown, &shards).unwrap_err().to_string().contains("its profile's k is not known"));
        let bad: Profile = serde_json::from_str(r#"{"k":"two"}"#).unwrap();
        assert!(profile_k("x", &bad).is_err());
        assert_eq!(erasure_profiles([(3, "a"), (1, ""), (3, "b"), (3, "a")].into_iter()), ["a", "b"]);
        let number: Profile = serde_json::from_str(r#"{"k":4}"#).unwrap();
        assert_eq!(profile_k("y", &number).unwrap(), 4);
    }
}
