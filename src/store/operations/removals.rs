//! RemovalCodec as stored: the state's JSON (version 1 is the form the old
//! `removals` table held, with the figures it kept in columns merged in),
//! the effects' JSON, and a drain's progress samples.

use serde::{Deserialize, Serialize};

use super::{version_of, Codec, Ops};
use crate::domain::operation::Kind;
use crate::domain::removal::{Effect, Ending, InPlace, Phase, Removal, Superseded};
use crate::store::{Result, Store, Topic};

/// The removal kind's codec: `store.ops::<RemovalCodec>()`.
pub struct RemovalCodec;

/// A progress sample of a drain.
#[derive(Debug, Clone, PartialEq)]
pub struct DrainSampleRow {
    pub at: i64,
    pub pgs: i64,
    pub kb_used: Option<i64>,
    pub bytes_left: Option<i64>,
    pub blocked: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct RemovalV1 {
    #[serde(default = "one")]
    v: u64,
    osd_id: u32,
    /// The OSD's uuid when it was scheduled; absent in removals stored
    /// before it was recorded (`domain::removal::with_uuid` says what then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    osd_uuid: Option<String>,
    host: String,
    replace: bool,
    force: bool,
    zap: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    fast: bool,
    phase: String,
    original_weight: Option<f64>,
    was_in: Option<bool>,
    devices: Vec<String>,
    #[serde(default)]
    device_ids: Vec<String>,
    zapped: Vec<String>,
    /// Version 2: an LVM OSD's fsid; its LVs are zapped by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    lvm_fsid: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    shared_devices: Vec<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    lvs_zapped: bool,
    stop_requested: bool,
    stop_sent: bool,
    pgs_at_start: Option<i64>,
    #[serde(default)]
    pgs_now: Option<i64>,
    #[serde(default)]
    kb_used_now: Option<i64>,
    #[serde(default)]
    drain_started_at: Option<i64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    ignored_blockers: Vec<String>,
    /// The `device replace` slot it serves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    slot: Option<String>,
    /// Version 3: no drain, the OSD destroyed under `noout`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    in_place: Option<InPlaceV1>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ending: Option<EndingV1>,
    /// The act an in-place removal holds (the last copy); absent when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_copy_hold: Option<String>,
    /// How it ended, as text, in records written before `ending` existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    note: Option<String>,
}

fn one() -> u64 {
    1
}

#[derive(Serialize, Deserialize)]
struct InPlaceV1 {
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    accept_inactive: bool,
    /// Absent before it was recorded: not accepted (the last-copy gate
    /// then waits while a PG has one copy).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    accept_single_copy: bool,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
enum EndingV1 {
    RemovedOutside,
    StoppedBeforeDrain,
    NotZapped { devices: Vec<String> },
    GoneWhileRestoring,
    MarkedInAgain,
    WeightRestored { weight: Option<f64> },
    Rejoined,
    NooutLifted,
    SupersededByOsd { uuid: String },
    SupersededByDisk { path: String, found: String },
    SupersededByDaemon { found: String },
    SupersededUnrecorded,
}

impl From<&Ending> for EndingV1 {
    fn from(e: &Ending) -> EndingV1 {
        match e {
            Ending::RemovedOutside => EndingV1::RemovedOutside,
            Ending::StoppedBeforeDrain => EndingV1::StoppedBeforeDrain,
            Ending::NotZapped { devices } => EndingV1::NotZapped { devices: devices.clone() },
            Ending::GoneWhileRestoring => EndingV1::GoneWhileRestoring,
            Ending::MarkedInAgain => EndingV1::MarkedInAgain,
            Ending::WeightRestored { weight } => EndingV1::WeightRestored { weight: *weight },
            Ending::Rejoined => EndingV1::Rejoined,
            Ending::NooutLifted => EndingV1::NooutLifted,
            Ending::Superseded(Superseded::Osd { uuid }) => EndingV1::SupersededByOsd { uuid: uuid.clone() },
            Ending::Superseded(Superseded::Disk { path, found }) => {
                EndingV1::SupersededByDisk { path: path.clone(), found: found.clone() }
            }
            Ending::Superseded(Superseded::Daemon { found }) => EndingV1::SupersededByDaemon { found: found.clone() },
            Ending::Superseded(Superseded::Unrecorded) => EndingV1::SupersededUnrecorded,
        }
    }
}

impl From<EndingV1> for Ending {
    fn from(e: EndingV1) -> Ending {
        match e {
            EndingV1::RemovedOutside => Ending::RemovedOutside,
            EndingV1::StoppedBeforeDrain => Ending::StoppedBeforeDrain,
            EndingV1::NotZapped { devices } => Ending::NotZapped { devices },
            EndingV1::GoneWhileRestoring => Ending::GoneWhileRestoring,
            EndingV1::MarkedInAgain => Ending::MarkedInAgain,
            EndingV1::WeightRestored { weight } => Ending::WeightRestored { weight },
            EndingV1::Rejoined => Ending::Rejoined,
            EndingV1::NooutLifted => Ending::NooutLifted,
            EndingV1::SupersededByOsd { uuid } => Ending::Superseded(Superseded::Osd { uuid }),
            EndingV1::SupersededByDisk { path, found } => Ending::Superseded(Superseded::Disk { path, found }),
            EndingV1::SupersededByDaemon { found } => Ending::Superseded(Superseded::Daemon { found }),
            EndingV1::SupersededUnrecorded => Ending::Superseded(Superseded::Unrecorded),
        }
    }
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "effect", rename_all = "kebab-case")]
enum EffectV1 {
    Reweight { weight: f64 },
    MarkOut,
    MarkIn,
    MarkDown,
    StopDaemon,
    Destroy,
    Purge,
    Zap { path: String },
    ZapLvs { fsid: String },
    Noout { on: bool },
}

impl Codec for RemovalCodec {
    type State = Removal;
    type Effect = Effect;
    const KIND: Kind = Kind::Removal;

    fn encode_state(r: &Removal) -> String {
        let v1 = RemovalV1 {
            // Version 2 says what version 1 readers would misread: the
            // devices they would wipe by path include a shared DB device.
            // Version 3, what earlier readers would drain: an in-place one.
            v: if r.in_place.is_some() {
                3
            } else if r.lvm_fsid.is_some() {
                2
            } else {
                1
            },
            osd_id: r.osd_id,
            osd_uuid: r.osd_uuid.clone(),
            host: r.host.clone(),
            replace: r.replace,
            force: r.force,
            zap: r.zap,
            fast: r.fast,
            phase: r.phase.as_str().into(),
            original_weight: r.original_weight,
            was_in: r.was_in,
            devices: r.devices.clone(),
            device_ids: r.device_ids.clone(),
            zapped: r.zapped.clone(),
            lvm_fsid: r.lvm_fsid.clone(),
            shared_devices: r.shared_devices.clone(),
            lvs_zapped: r.lvs_zapped,
            stop_requested: r.stop_requested,
            stop_sent: r.stop_sent,
            pgs_at_start: r.pgs_at_start,
            pgs_now: r.pgs_now,
            kb_used_now: r.kb_used_now,
            drain_started_at: r.drain_started_at,
            ignored_blockers: r.ignored_blockers.clone(),
            slot: r.slot.clone(),
            in_place: r
                .in_place
                .map(|i| InPlaceV1 { accept_inactive: i.accept_inactive, accept_single_copy: i.accept_single_copy }),
            ending: r.ending.as_ref().map(EndingV1::from),
            last_copy_hold: r.last_copy_hold.clone(),
            note: r.legacy_note.clone(),
        };
        serde_json::to_string(&v1).expect("a removal serializes")
    }

    fn decode_state(json: &str) -> std::result::Result<Removal, String> {
        match version_of(json)? {
            1..=3 => {}
            v => return Err(format!("version {v} is newer than this osdkeeper reads")),
        }
        let s: RemovalV1 = serde_json::from_str(json).map_err(|e| e.to_string())?;
        let phase = Phase::parse(&s.phase).ok_or_else(|| format!("phase {:?}", s.phase))?;
        let mut r = Removal::new(s.osd_id, s.host, s.replace, s.force, s.zap, s.devices);
        r.osd_uuid = s.osd_uuid;
        r.fast = s.fast;
        r.phase = phase;
        r.original_weight = s.original_weight;
        r.was_in = s.was_in;
        r.device_ids = s.device_ids;
        r.zapped = s.zapped;
        r.lvm_fsid = s.lvm_fsid;
        r.shared_devices = s.shared_devices;
        r.lvs_zapped = s.lvs_zapped;
        r.stop_requested = s.stop_requested;
        r.stop_sent = s.stop_sent;
        r.pgs_at_start = s.pgs_at_start;
        r.pgs_now = s.pgs_now;
        r.kb_used_now = s.kb_used_now;
        r.drain_started_at = s.drain_started_at;
        r.ignored_blockers = s.ignored_blockers;
        r.slot = s.slot;
        r.in_place = s
            .in_place
            .map(|i| InPlace { accept_inactive: i.accept_inactive, accept_single_copy: i.accept_single_copy });
        r.ending = s.ending.map(Ending::from);
        r.last_copy_hold = s.last_copy_hold;
        r.legacy_note = s.note;
        Ok(r)
    }

    fn encode_effect(e: &Effect) -> String {
        let v1 = match e {
            Effect::Reweight { weight } => EffectV1::Reweight { weight: *weight },
            Effect::MarkOut => EffectV1::MarkOut,
            Effect::MarkIn => EffectV1::MarkIn,
            Effect::MarkDown => EffectV1::MarkDown,
            Effect::StopDaemon => EffectV1::StopDaemon,
            Effect::Destroy => EffectV1::Destroy,
            Effect::Purge => EffectV1::Purge,
            Effect::Zap { path } => EffectV1::Zap { path: path.clone() },
            Effect::ZapLvs { fsid } => EffectV1::ZapLvs { fsid: fsid.clone() },
            Effect::Noout { on } => EffectV1::Noout { on: *on },
        };
        serde_json::to_string(&v1).expect("an effect serializes")
    }

    fn decode_effect(json: &str) -> std::result::Result<Effect, String> {
        let v1: EffectV1 = serde_json::from_str(json).map_err(|e| e.to_string())?;
        Ok(match v1 {
            EffectV1::Reweight { weight } => Effect::Reweight { weight },
            EffectV1::MarkOut => Effect::MarkOut,
            EffectV1::MarkIn => Effect::MarkIn,
            EffectV1::MarkDown => Effect::MarkDown,
            EffectV1::StopDaemon => Effect::StopDaemon,
            EffectV1::Destroy => Effect::Destroy,
            EffectV1::Purge => Effect::Purge,
            EffectV1::Zap { path } => Effect::Zap { path },
            EffectV1::ZapLvs { fsid } => Effect::ZapLvs { fsid },
            EffectV1::Noout { on } => Effect::Noout { on },
        })
    }

    fn topics(finished: bool) -> Vec<Topic> {
        if finished {
            vec![Topic::Removals, Topic::FinishedRemovals]
        } else {
            vec![Topic::Removals]
        }
    }
}

/// The subject of an OSD's removal.
pub fn subject(osd_id: u32) -> String {
    format!("osd.{osd_id}")
}

impl Ops<'_, RemovalCodec> {
    /// Sets the stop flag of the active removals of `osd_ids`, all or none:
    /// each must be one that can still be stopped.
    pub async fn request_stop(&self, osd_ids: &[u32], now: i64) -> Result<Vec<crate::domain::removal::RemovalRecord>> {
        let subjects: Vec<String> = osd_ids.iter().map(|&id| subject(id)).collect();
        self.update_active(
            &subjects,
            now,
            |s| Some(format!("{s} is not being removed")),
            |r| {
                if !r.accepts_stop() {
                    return Err(format!(
                        "osd.{} is past the point of no return ({}): its daemon is being stopped or it is being \
                         destroyed",
                        r.osd_id,
                        r.phase.as_str()
                    ));
                }
                r.stop_requested = true;
                Ok(true)
            },
        )
        .await
    }

    /// Makes the active removals of `osd_ids` fast (`host drain --fast`
    /// asked again); returns how many were not fast yet.
    pub async fn make_fast(&self, osd_ids: &[u32], now: i64) -> Result<usize> {
        let subjects: Vec<String> = osd_ids.iter().map(|&id| subject(id)).collect();
        let changed = self
            .update_active(
                &subjects,
                now,
                |_| None,
                |r| {
                    let was = r.fast;
                    r.fast = true;
                    Ok(!was)
                },
            )
            .await?;
        Ok(changed.len())
    }
}

impl Store {
    pub async fn add_sample(&self, operation_id: i64, sample: &DrainSampleRow) -> Result<()> {
        self.backend.add_sample(operation_id, sample).await?;
        self.changed(Topic::Removals);
        Ok(())
    }

    pub async fn samples(&self, operation_id: i64) -> Result<Vec<DrainSampleRow>> {
        self.backend.samples(operation_id).await
    }

    /// The samples no older than `window_ms` before the newest one: all the
    /// progress estimate looks at, without reading hours of history per status.
    pub async fn recent_samples(&self, operation_id: i64, window_ms: i64) -> Result<Vec<DrainSampleRow>> {
        self.backend.recent_samples(operation_id, window_ms).await
    }

    /// The samples taken after `after` (ms, exclusive), oldest first: what a
    /// client holding the samples up to `after` is missing.
    pub async fn samples_after(&self, operation_id: i64, after: i64) -> Result<Vec<DrainSampleRow>> {
        self.backend.samples_after(operation_id, after).await
    }
}
