//! Cluster benchmarks as stored: the run's JSON (version 1 is the form the
//! old `cluster_benches` table held, without its `in_flight`, which the
//! action log now says) and the effects' JSON (`{"effect": NAME}`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{version_of, Codec};
use crate::domain::bench::cluster::{BenchEffect, ClusterBench, ClusterPhase, ClusterShape, Pass, PassResult};
use crate::domain::operation::Kind;
use crate::store::Topic;

/// The cluster benchmark kind's codec: `store.ops::<BenchCodec>()`.
pub struct BenchCodec;

#[derive(Serialize, Deserialize)]
struct BenchV1 {
    #[serde(default = "one")]
    v: u64,
    pool: String,
    own_pool: bool,
    seconds: u32,
    pg_num: u32,
    label: Option<String>,
    force: bool,
    run_name: String,
    phase: String,
    health: Option<String>,
    shape: Option<ShapeV1>,
    results: Vec<PassV1>,
    warnings: Vec<String>,
    failure: Option<String>,
}

fn one() -> u64 {
    1
}

#[derive(Serialize, Deserialize)]
struct ShapeV1 {
    osds_by_class: BTreeMap<String, u32>,
    hosts: u32,
    pool_size: u32,
    pg_num: u32,
}

#[derive(Serialize, Deserialize)]
struct PassV1 {
    pass: String,
    seconds: f64,
    ops: u64,
    op_size: u64,
    bandwidth_mb_s: f64,
    iops: f64,
    avg_latency_s: f64,
    max_latency_s: f64,
    min_latency_s: f64,
}

#[derive(Serialize, Deserialize)]
struct EffectV1 {
    effect: String,
}

fn phase_of(name: &str) -> Result<ClusterPhase, String> {
    ClusterPhase::ALL.into_iter().find(|p| p.as_str() == name).ok_or_else(|| format!("phase {name:?}"))
}

fn pass_of(name: &str) -> Result<Pass, String> {
    Pass::ALL.into_iter().find(|p| p.as_str() == name).ok_or_else(|| format!("pass {name:?}"))
}

impl Codec for BenchCodec {
    type State = ClusterBench;
    type Effect = BenchEffect;
    const KIND: Kind = Kind::ClusterBench;

    fn encode_state(b: &ClusterBench) -> String {
        let v1 = BenchV1 {
            v: 1,
            pool: b.pool.clone(),
            own_pool: b.own_pool,
            seconds: b.seconds,
            pg_num: b.pg_num,
            label: b.label.clone(),
            force: b.force,
            run_name: b.run_name.clone(),
            phase: b.phase.as_str().into(),
            health: b.health.clone(),
            shape: b.shape.as_ref().map(|s| ShapeV1 {
                osds_by_class: s.osds_by_class.clone(),
                hosts: s.hosts,
                pool_size: s.pool_size,
                pg_num: s.pg_num,
            }),
            results: b
                .results
                .iter()
                .map(|r| PassV1 {
                    pass: r.pass.as_str().into(),
                    seconds: r.seconds,
                    ops: r.ops,
                    op_size: r.op_size,
                    bandwidth_mb_s: r.bandwidth_mb_s,
                    iops: r.iops,
                    avg_latency_s: r.avg_latency_s,
                    max_latency_s: r.max_latency_s,
                    min_latency_s: r.min_latency_s,
                })
                .collect(),
            warnings: b.warnings.clone(),
            failure: b.failure.clone(),
        };
        serde_json::to_string(&v1).expect("a cluster benchmark serializes")
    }

    fn decode_state(json: &str) -> Result<ClusterBench, String> {
        match version_of(json)? {
            1 => {}
            v => return Err(format!("version {v} is newer than this osdkeeper reads")),
        }
        let s: BenchV1 = serde_json::from_str(json).map_err(|e| e.to_string())?;
        let results = s
            .results
            .into_iter()
            .map(|r| {
                Ok(PassResult {
                    pass: pass_of(&r.pass)?,
                    seconds: r.seconds,
                    ops: r.ops,
                    op_size: r.op_size,
                    bandwidth_mb_s: r.bandwidth_mb_s,
                    iops: r.iops,
                    avg_latency_s: r.avg_latency_s,
                    max_latency_s: r.max_latency_s,
                    min_latency_s: r.min_latency_s,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(ClusterBench {
            pool: s.pool,
            own_pool: s.own_pool,
            seconds: s.seconds,
            pg_num: s.pg_num,
            label: s.label,
            force: s.force,
            run_name: s.run_name,
            phase: phase_of(&s.phase)?,
            health: s.health,
            shape: s.shape.map(|x| ClusterShape {
                osds_by_class: x.osds_by_class,
                hosts: x.hosts,
                pool_size: x.pool_size,
                pg_num: x.pg_num,
            }),
            results,
            warnings: s.warnings,
            failure: s.failure,
        })
    }

    fn encode_effect(e: &BenchEffect) -> String {
        serde_json::to_string(&EffectV1 { effect: e.name().into() }).expect("an effect serializes")
    }

    fn decode_effect(json: &str) -> Result<BenchEffect, String> {
        let v1: EffectV1 = serde_json::from_str(json).map_err(|e| e.to_string())?;
        BenchEffect::parse(&v1.effect).ok_or_else(|| format!("effect {:?}", v1.effect))
    }

    fn topics(_finished: bool) -> Vec<Topic> {
        vec![Topic::ClusterBenches]
    }
}
