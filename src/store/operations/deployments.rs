//! Deployments as stored: the state's JSON (version 1 is the form the old
//! `deployments` table held, its commands one line each; version 2 holds
//! each command as its list of arguments) and the effects' JSON.

use serde::{Deserialize, Serialize};

use super::{version_of, Codec};
use crate::domain::deploy::{DeployEffect, DeployPhase, Deployment, NewOsd, OsdKind, PrepareStep};
use crate::domain::operation::Kind;
use crate::store::Topic;

/// The deployment kind's codec: `store.ops::<DeploymentCodec>()`.
pub struct DeploymentCodec;

#[derive(Serialize, Deserialize)]
struct DeploymentV1 {
    #[serde(default = "one")]
    v: u64,
    host: String,
    service_name: String,
    service_id: Option<String>,
    spec_version: i64,
    run_key: String,
    crush_device_class: Option<String>,
    steps: Vec<StepV1>,
    osds: Vec<OsdV1>,
    phase: String,
    attempt: u32,
    failure: Option<String>,
    retry_at: Option<i64>,
    verifying_since: Option<i64>,
}

/// Reads a stored command: its arguments (a list), or, as version 1 stored
/// it, one line whose words are split on `' '`, as the deployment worker
/// split it to run it then.
fn argv_or_line<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Stored {
        Argv(Vec<String>),
        Line(String),
    }
    Ok(match Stored::deserialize(d)? {
        Stored::Argv(argv) => argv,
        Stored::Line(line) => line.split(' ').map(str::to_string).collect(),
    })
}

fn one() -> u64 {
    1
}

#[derive(Serialize, Deserialize)]
struct StepV1 {
    /// The arguments after `ceph-volume`: a list from version 2 on, one
    /// line before (read as the words it was split into when it ran).
    #[serde(deserialize_with = "argv_or_line")]
    command: Vec<String>,
    disks: Vec<String>,
    sent: bool,
    succeeded: bool,
    failure: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct OsdV1 {
    id: u32,
    osd_fsid: String,
    kind: String,
    device: String,
    activated: bool,
    started: bool,
    verified: bool,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "effect", rename_all = "kebab-case")]
enum EffectV1 {
    Prepare { step: usize },
    Activate { osd: u32 },
    Start { osd: u32 },
    ClearDeviceClass { osd: u32 },
    HoldDisks,
}

fn kind_name(k: OsdKind) -> &'static str {
    match k {
        OsdKind::Raw => "raw",
        OsdKind::Lvm => "lvm",
    }
}

fn kind_of(name: &str) -> Result<OsdKind, String> {
    match name {
        "raw" => Ok(OsdKind::Raw),
        "lvm" => Ok(OsdKind::Lvm),
        other => Err(format!("OSD kind {other:?}")),
    }
}

impl Codec for DeploymentCodec {
    type State = Deployment;
    type Effect = DeployEffect;
    const KIND: Kind = Kind::Deployment;

    fn encode_state(d: &Deployment) -> String {
        let v1 = DeploymentV1 {
            v: 2,
            host: d.host.clone(),
            service_name: d.service_name.clone(),
            service_id: d.service_id.clone(),
            spec_version: d.spec_version,
            run_key: d.run_key.clone(),
            crush_device_class: d.crush_device_class.clone(),
            steps: d
                .steps
                .iter()
                .map(|s| StepV1 {
                    command: s.command.clone(),
                    disks: s.disks.clone(),
                    sent: s.sent,
                    succeeded: s.succeeded,
                    failure: s.failure.clone(),
                })
                .collect(),
            osds: d
                .osds
                .iter()
                .map(|o| OsdV1 {
                    id: o.id,
                    osd_fsid: o.osd_fsid.clone(),
                    kind: kind_name(o.kind).into(),
                    device: o.device.clone(),
                    activated: o.activated,
                    started: o.started,
                    verified: o.verified,
                })
                .collect(),
            phase: d.phase.as_str().into(),
            attempt: d.attempt,
            failure: d.failure.clone(),
            retry_at: d.retry_at,
            verifying_since: d.verifying_since,
        };
        serde_json::to_string(&v1).expect("a deployment serializes")
    }

    fn decode_state(json: &str) -> Result<Deployment, String> {
        match version_of(json)? {
            1 | 2 => {}
            v => return Err(format!("version {v} is newer than this osdkeeper reads")),
        }
        let s: DeploymentV1 = serde_json::from_str(json).map_err(|e| e.to_string())?;
        let osds = s
            .osds
            .into_iter()
            .map(|o| {
                Ok(NewOsd {
                    id: o.id,
                    osd_fsid: o.osd_fsid,
                    kind: kind_of(&o.kind)?,
                    device: o.device,
                    activated: o.activated,
                    started: o.started,
                    verified: o.verified,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Deployment {
            host: s.host,
            service_name: s.service_name,
            service_id: s.service_id,
            spec_version: s.spec_version,
            run_key: s.run_key,
            crush_device_class: s.crush_device_class,
            steps: s
                .steps
                .into_iter()
                .map(|p| PrepareStep {
                    command: p.command,
                    disks: p.disks,
                    sent: p.sent,
                    succeeded: p.succeeded,
                    failure: p.failure,
                })
                .collect(),
            osds,
            phase: DeployPhase::parse(&s.phase).ok_or_else(|| format!("phase {:?}", s.phase))?,
            attempt: s.attempt,
            failure: s.failure,
            retry_at: s.retry_at,
            verifying_since: s.verifying_since,
        })
    }

    fn encode_effect(e: &DeployEffect) -> String {
        let v1 = match e {
            DeployEffect::Prepare { step } => EffectV1::Prepare { step: *step },
            DeployEffect::Activate { osd } => EffectV1::Activate { osd: *osd },
            DeployEffect::Start { osd } => EffectV1::Start { osd: *osd },
            DeployEffect::ClearDeviceClass { osd } => EffectV1::ClearDeviceClass { osd: *osd },
            DeployEffect::HoldDisks => EffectV1::HoldDisks,
        };
        serde_json::to_string(&v1).expect("an effect serializes")
    }

    fn decode_effect(json: &str) -> Result<DeployEffect, String> {
        let v1: EffectV1 = serde_json::from_str(json).map_err(|e| e.to_string())?;
        Ok(match v1 {
            EffectV1::Prepare { step } => DeployEffect::Prepare { step },
            EffectV1::Activate { osd } => DeployEffect::Activate { osd },
            EffectV1::Start { osd } => DeployEffect::Start { osd },
            EffectV1::ClearDeviceClass { osd } => DeployEffect::ClearDeviceClass { osd },
            EffectV1::HoldDisks => DeployEffect::HoldDisks,
        })
    }

    fn topics(_finished: bool) -> Vec<Topic> {
        vec![Topic::Deployments]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Codec;

    #[test]
    fn every_effect_reads_back_as_written() {
        let all = [
            DeployEffect::Prepare { step: 2 },
            DeployEffect::Activate { osd: 3 },
            DeployEffect::Start { osd: 4 },
            DeployEffect::ClearDeviceClass { osd: 5 },
            DeployEffect::HoldDisks,
        ];
        for e in all {
            let json = DeploymentCodec::encode_effect(&e);
            assert_eq!(DeploymentCodec::decode_effect(&json), Ok(e), "{json}");
        }
        assert_eq!(
            DeploymentCodec::encode_effect(&DeployEffect::ClearDeviceClass { osd: 5 }),
            r#"{"effect":"clear-device-class","osd":5}"#
        );
    }

    /// A deployment stored before commands were kept as their arguments:
    /// its command was one line, and reads as the words the worker split
    /// it into.
    #[test]
    fn a_deployment_stored_with_its_command_as_one_line_still_reads() {
        let old = r#"{"host":"f5-422-01","service_name":"osd.spares","service_id":"spares","spec_version":1,
            "run_key":"lvm batch --no-auto /dev/sdb --yes --no-systemd [disks: S1]","crush_device_class":null,
            "steps":[{"command":"lvm batch --no-auto /dev/sdb --yes --no-systemd","disks":["/dev/sdb"],
                      "sent":true,"succeeded":false,"failure":null}],
            "osds":[],"phase":"preparing","attempt":1,"failure":null,"retry_at":null,"verifying_since":null}"#;
        let d = DeploymentCodec::decode_state(old).unwrap();
        assert_eq!(d.steps[0].command, ["lvm", "batch", "--no-auto", "/dev/sdb", "--yes", "--no-systemd"]);
        // Written again, it is version 2 with a list, and reads back the same.
        let again = DeploymentCodec::encode_state(&d);
        assert!(
            again.contains(r#""command":["lvm","batch","--no-auto","/dev/sdb","--yes","--no-systemd"]"#),
            "{again}"
        );
        assert!(again.starts_with(r#"{"v":2,"#), "{again}");
        assert_eq!(DeploymentCodec::decode_state(&again).unwrap(), d);
        let bad = old.replace(r#""command":"lvm batch --no-auto /dev/sdb --yes --no-systemd""#, r#""command":7"#);
        assert!(DeploymentCodec::decode_state(&bad).is_err(), "neither a list nor a line");
    }
}
