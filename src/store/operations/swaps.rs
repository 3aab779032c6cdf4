//! Swaps as stored: the state's JSON (version 1) and the effects' JSON
//! (`{"effect": "upmap", "items": [...]}`).

use serde::{Deserialize, Serialize};

use super::{version_of, Codec};
use crate::domain::operation::Kind;
use crate::domain::spec::Method;
use crate::domain::swap::{Effect, NewDisk, OldOsd, Phase, Recipe, Risk, Swap, UpmapItem, Way};
use crate::store::Topic;

/// The swap kind's codec: `store.ops::<SwapCodec>()`.
pub struct SwapCodec;

#[derive(Serialize, Deserialize)]
struct SwapV1 {
    v: u64,
    host: String,
    way: String,
    olds: Vec<OldV1>,
    news: Vec<NewV1>,
    /// How the new OSDs are made: "raw" or "lvm"; absent in swaps stored
    /// before it was recorded, which all made LVM OSDs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    method: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    encrypted: bool,
    phase: String,
    stop_requested: bool,
    balancer_was_on: Option<bool>,
    balancer_paused: bool,
    initial_weight_set: bool,
    deployment: Option<i64>,
    handed: Vec<ItemV1>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    cannot_hand: Vec<String>,
    settled: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    kept_pins: Vec<String>,
    retired: bool,
    pgs_left: Option<usize>,
    bytes_left: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    risk: Option<RiskV1>,
    /// Disks left alone, each with why; absent before it was recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    passed_over: Vec<(String, String)>,
    failure: Option<String>,
    ending: Option<String>,
}

/// The phases of the in-place way an osdkeeper before its removals ran
/// the steps itself in (`noout`, the stop, the destroy, the zap): read as
/// failed, saying what may be left, since which of its steps went through
/// is not recorded in a form the removal reads.
const LEGACY_IN_PLACE: [&str; 5] = ["noout", "stopping", "destroying", "zapping", "restoring"];

fn legacy_ending(phase: &str, olds: &[OldV1]) -> String {
    let osd = olds.first().map(|o| format!("osd.{}", o.id)).unwrap_or_else(|| "the old OSD".into());
    format!(
        "failed: stored by an older osdkeeper in phase {phase}, which this one no longer runs (its in-place steps \
         are a removal's now): {osd} may be stopped, destroyed or zapped, with noout set: `ceph osd tree` tells \
         which, `ceph osd rm-noout {osd}` lifts the flag"
    )
}

#[derive(Serialize, Deserialize)]
struct OldV1 {
    id: u32,
    /// The OSD's uuid when the swap was asked for; absent in swaps stored
    /// before it was recorded (`domain::swap::gate` says what then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    uuid: Option<String>,
    weight: f64,
    devices: Vec<String>,
    device_ids: Vec<String>,
}

#[derive(Serialize, Deserialize)]
struct NewV1 {
    path: String,
    device_id: String,
    weight: f64,
    osd: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    planned_id: Option<u32>,
}

#[derive(Serialize, Deserialize)]
struct ItemV1 {
    pgid: String,
    /// (from, to) pairs.
    pairs: Vec<(u32, u32)>,
}

#[derive(Serialize, Deserialize)]
struct RiskV1 {
    pgs_degraded: usize,
    bytes: u64,
    accepted: Vec<String>,
    window_s: Option<f64>,
    /// Swaps stored before the making was estimated have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    making_s: Option<f64>,
    accept_inactive: bool,
    /// Absent in swaps stored before it was recorded: single copy was
    /// accepted then if the risk accepted says so (`legacy_single_copy`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    accept_single_copy: Option<bool>,
}

/// Whether a swap stored before `accept_single_copy` was recorded had
/// single copy accepted: its accepted risks name PGs left with one copy.
fn legacy_single_copy(accepted: &[String]) -> bool {
    accepted.iter().any(|w| w.contains(" with one copy"))
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "effect", rename_all = "kebab-case")]
enum EffectV1 {
    PauseBalancer,
    ResumeBalancer,
    SetInitialWeight,
    ClearInitialWeight,
    Deploy,
    Reweight { osd: u32, weight: f64 },
    Upmap { items: Vec<ItemV1> },
    SetWeights { weights: Vec<(u32, f64)> },
    RmUpmap { pgids: Vec<String> },
    Retire,
    StopRemovals,
}

fn item_v1(i: &UpmapItem) -> ItemV1 {
    ItemV1 { pgid: i.pgid.clone(), pairs: i.pairs.clone() }
}

fn item(i: ItemV1) -> UpmapItem {
    UpmapItem { pgid: i.pgid, pairs: i.pairs }
}

impl Codec for SwapCodec {
    type State = Swap;
    type Effect = Effect;
    const KIND: Kind = Kind::Swap;

    fn encode_state(s: &Swap) -> String {
        let v1 = SwapV1 {
            v: 1,
            host: s.host.clone(),
            way: s.way.as_str().into(),
            olds: s
                .olds
                .iter()
                .map(|o| OldV1 {
                    id: o.id,
                    uuid: o.uuid.clone(),
                    weight: o.weight,
                    devices: o.devices.clone(),
                    device_ids: o.device_ids.clone(),
                })
                .collect(),
            news: s
                .news
                .iter()
                .map(|n| NewV1 {
                    path: n.path.clone(),
                    device_id: n.device_id.clone(),
                    weight: n.weight,
                    osd: n.osd,
                    planned_id: n.planned_id,
                })
                .collect(),
            method: Some(s.recipe.method.as_str().into()),
            encrypted: s.recipe.encrypted,
            phase: s.phase.as_str().into(),
            stop_requested: s.stop_requested,
            balancer_was_on: s.balancer_was_on,
            balancer_paused: s.balancer_paused,
            initial_weight_set: s.initial_weight_set,
            deployment: s.deployment,
            handed: s.handed.iter().map(item_v1).collect(),
            cannot_hand: s.cannot_hand.clone(),
            settled: s.settled,
            kept_pins: s.kept_pins.clone(),
            retired: s.retired,
            pgs_left: s.pgs_left,
            bytes_left: s.bytes_left,
            risk: s.risk.as_ref().map(|r| RiskV1 {
                pgs_degraded: r.pgs_degraded,
                bytes: r.bytes,
                accepted: r.accepted.clone(),
                window_s: r.window_s,
                making_s: r.making_s,
                accept_inactive: r.accept_inactive,
                accept_single_copy: Some(r.accept_single_copy),
            }),
            passed_over: s.passed_over.clone(),
            failure: s.failure.clone(),
            ending: s.ending.clone(),
        };
        serde_json::to_string(&v1).expect("a swap serializes")
    }

    fn decode_state(json: &str) -> Result<Swap, String> {
        match version_of(json)? {
            1 => {}
            v => return Err(format!("version {v} is newer than this osdkeeper reads")),
        }
        let v1: SwapV1 = serde_json::from_str(json).map_err(|e| e.to_string())?;
        let (phase, ending) = match Phase::parse(&v1.phase) {
            Some(p) => (p, v1.ending),
            None if LEGACY_IN_PLACE.contains(&v1.phase.as_str()) => {
                (Phase::Failed, Some(legacy_ending(&v1.phase, &v1.olds)))
            }
            None => return Err(format!("phase {:?}", v1.phase)),
        };
        Ok(Swap {
            host: v1.host,
            way: Way::parse(&v1.way).ok_or_else(|| format!("way {:?}", v1.way))?,
            olds: v1
                .olds
                .into_iter()
                .map(|o| OldOsd {
                    id: o.id,
                    uuid: o.uuid,
                    weight: o.weight,
                    devices: o.devices,
                    device_ids: o.device_ids,
                })
                .collect(),
            news: v1
                .news
                .into_iter()
                .map(|n| NewDisk {
                    path: n.path,
                    device_id: n.device_id,
                    weight: n.weight,
                    osd: n.osd,
                    planned_id: n.planned_id,
                })
                .collect(),
            recipe: Recipe {
                method: match v1.method.as_deref() {
                    None => Method::Lvm,
                    Some(m) => Method::parse(m).ok_or_else(|| format!("method {m:?}"))?,
                },
                encrypted: v1.encrypted,
            },
            phase,
            stop_requested: v1.stop_requested,
            balancer_was_on: v1.balancer_was_on,
            balancer_paused: v1.balancer_paused,
            initial_weight_set: v1.initial_weight_set,
            deployment: v1.deployment,
            handed: v1.handed.into_iter().map(item).collect(),
            cannot_hand: v1.cannot_hand,
            settled: v1.settled,
            kept_pins: v1.kept_pins,
            retired: v1.retired,
            pgs_left: v1.pgs_left,
            bytes_left: v1.bytes_left,
            risk: v1.risk.map(|r| Risk {
                pgs_degraded: r.pgs_degraded,
                bytes: r.bytes,
                accept_single_copy: r.accept_single_copy.unwrap_or_else(|| legacy_single_copy(&r.accepted)),
                accepted: r.accepted,
                window_s: r.window_s,
                making_s: r.making_s,
                accept_inactive: r.accept_inactive,
            }),
            passed_over: v1.passed_over,
            failure: v1.failure,
            ending,
        })
    }

    fn encode_effect(e: &Effect) -> String {
        let v1 = match e {
            Effect::PauseBalancer => EffectV1::PauseBalancer,
            Effect::ResumeBalancer => EffectV1::ResumeBalancer,
            Effect::SetInitialWeight => EffectV1::SetInitialWeight,
            Effect::ClearInitialWeight => EffectV1::ClearInitialWeight,
            Effect::Deploy => EffectV1::Deploy,
            Effect::Reweight { osd, weight } => EffectV1::Reweight { osd: *osd, weight: *weight },
            Effect::Upmap { items } => EffectV1::Upmap { items: items.iter().map(item_v1).collect() },
            Effect::SetWeights { weights } => EffectV1::SetWeights { weights: weights.clone() },
            Effect::RmUpmap { pgids } => EffectV1::RmUpmap { pgids: pgids.clone() },
            Effect::Retire => EffectV1::Retire,
            Effect::StopRemovals => EffectV1::StopRemovals,
        };
        serde_json::to_string(&v1).expect("an effect serializes")
    }

    fn decode_effect(json: &str) -> Result<Effect, String> {
        let v1: EffectV1 = serde_json::from_str(json).map_err(|e| e.to_string())?;
        Ok(match v1 {
            EffectV1::PauseBalancer => Effect::PauseBalancer,
            EffectV1::ResumeBalancer => Effect::ResumeBalancer,
            EffectV1::SetInitialWeight => Effect::SetInitialWeight,
            EffectV1::ClearInitialWeight => Effect::ClearInitialWeight,
            EffectV1::Deploy => Effect::Deploy,
            EffectV1::Reweight { osd, weight } => Effect::Reweight { osd, weight },
            EffectV1::Upmap { items } => Effect::Upmap { items: items.into_iter().map(item).collect() },
            EffectV1::SetWeights { weights } => Effect::SetWeights { weights },
            EffectV1::RmUpmap { pgids } => Effect::RmUpmap { pgids },
            EffectV1::Retire => Effect::Retire,
            EffectV1::StopRemovals => Effect::StopRemovals,
        })
    }

    fn topics(_finished: bool) -> Vec<Topic> {
        vec![Topic::Swaps]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_swap_and_its_effects_read_back_as_written() {
        let mut s = Swap::new(
            "f5-422-03".into(),
            Way::FreeBay,
            vec![OldOsd {
                id: 8,
                uuid: Some("4a6d5b0e-5b8e-4d0c-9a57-0d3c4e1f6a55".into()),
                weight: 0.9,
                devices: vec!["/dev/sdd".into()],
                device_ids: vec!["X".into()],
            }],
            vec![NewDisk {
                path: "/dev/sdb".into(),
                device_id: "Y".into(),
                weight: 1.7,
                osd: Some(20),
                planned_id: Some(20),
            }],
        );
        s.phase = Phase::HandingOver;
        s.recipe = Recipe { method: Method::Raw, encrypted: true };
        s.handed = vec![UpmapItem { pgid: "1.a".into(), pairs: vec![(8, 20)] }];
        s.risk = Some(Risk {
            pgs_degraded: 3,
            bytes: 9,
            accepted: vec!["x".into()],
            window_s: None,
            making_s: Some(41.5),
            accept_inactive: true,
            accept_single_copy: true,
        });
        s.passed_over = vec![("/dev/sdd".into(), "a used disk is in the slot (Z)".into())];
        assert_eq!(SwapCodec::decode_state(&SwapCodec::encode_state(&s)).unwrap(), s);
        // Stored before single copy was recorded: accepted if a risk of one copy was.
        let before = SwapCodec::encode_state(&s).replace(r#","accept_single_copy":true"#, "");
        assert!(!SwapCodec::decode_state(&before).unwrap().risk.unwrap().accept_single_copy, "\"x\" is not one");
        let words = r#""accepted":["2 PGs of pool 'rbd' (size 2, min_size 1) with one copy until the new OSD has backfilled them"]"#;
        let one_copy = before.replace(r#""accepted":["x"]"#, words);
        assert!(SwapCodec::decode_state(&one_copy).unwrap().risk.unwrap().accept_single_copy);
        let before_uuids = SwapCodec::encode_state(&s).replace(r#""uuid":"4a6d5b0e-5b8e-4d0c-9a57-0d3c4e1f6a55","#, "");
        assert_eq!(SwapCodec::decode_state(&before_uuids).unwrap().olds[0].uuid, None, "a swap stored before uuids");
        let upmap = Effect::Upmap { items: s.handed.clone() };
        let json = SwapCodec::encode_effect(&upmap);
        assert_eq!(json, r#"{"effect":"upmap","items":[{"pgid":"1.a","pairs":[[8,20]]}]}"#);
        assert_eq!(SwapCodec::decode_effect(&json).unwrap(), upmap);
        // In a phase of the in-place way as an older osdkeeper ran it: failed, saying what may be left.
        let legacy = SwapCodec::encode_state(&s).replace(r#""phase":"handing-over""#, r#""phase":"stopping""#);
        let legacy = SwapCodec::decode_state(&legacy).unwrap();
        assert_eq!(legacy.phase, Phase::Failed);
        assert!(legacy.ending.unwrap().contains("in phase stopping, which this one no longer runs"));
        let newer = SwapCodec::encode_state(&s).replace(r#""v":1"#, r#""v":2"#);
        assert_eq!(SwapCodec::decode_state(&newer).unwrap_err(), "version 2 is newer than this osdkeeper reads");
    }

    #[test]
    fn a_swap_stored_before_recipes_makes_lvm_osds() {
        let mut s = Swap::new("h".into(), Way::FreeBay, Vec::new(), Vec::new());
        s.recipe = Recipe { method: Method::Raw, encrypted: true };
        let json = SwapCodec::encode_state(&s);
        assert!(json.contains(r#""method":"raw","encrypted":true"#), "{json}");
        let before = json.replace(r#""method":"raw","encrypted":true,"#, "");
        assert_eq!(SwapCodec::decode_state(&before).unwrap().recipe, Recipe { method: Method::Lvm, encrypted: false });
    }
}
