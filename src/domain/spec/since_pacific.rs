//! What cephadm's spec reading gained after 16.2, by release: the keys
//! `config` (17.2), `tpm2` (19.2.1), the filter `actuators` (18.2) and
//! `paths` entries that name their own `crush_device_class` (17.2). Each is
//! read as that release's cephadm reads it, then either carried out by the
//! planner (`tpm2`, per-path classes) or refused with the reason osdkeeper
//! cannot (`config`, `actuators`).

use super::error::FieldError;
use crate::domain::ceph_release::Release;
use crate::domain::value::{excerpt, Value};

/// Keys a release's `DriveGroupSpec._supported_features` adds to 16.2's.
pub(super) fn is_added_feature(key: &str, release: Release) -> bool {
    match key {
        "config" => release >= Release::Quincy,
        "tpm2" => release >= Release::Squid,
        _ => false,
    }
}

/// The device filters a release knows, as its error message lists them.
pub(super) fn filters(release: Release) -> &'static [&'static str] {
    if release >= Release::Reef {
        &["actuators", "paths", "size", "vendor", "model", "rotational", "limit", "all"]
    } else {
        &["paths", "size", "vendor", "model", "rotational", "limit", "all"]
    }
}

/// `config:` (17.2+): cephadm sets these options for the service's daemons.
/// osdkeeper does not manage Ceph's configuration, so a spec that asks for
/// it is refused rather than planned without it; an empty one asks nothing.
pub(super) fn config(value: Option<Value>) -> Result<(), FieldError> {
    let Some(v) = value.filter(Value::truthy) else { return Ok(()) };
    let Value::Map(entries) = &v else {
        return Err(FieldError::cephadm(
            "config",
            Some(v.display()),
            format!("config must be a mapping of option: value ('{}' object has no attribute 'items')", v.type_name()),
        ));
    };
    let keys: Vec<String> = entries.iter().map(|(k, _)| excerpt(&k.python_str())).collect();
    Err(FieldError::stricter(
        "config",
        Some(v.display()),
        format!(
            "osdkeeper does not set Ceph options for the OSDs it makes, so it cannot carry out config ({}); \
             set them with `ceph config set osd <option> <value>` (or per OSD, or for a CRUSH device class with \
             `osd/class:<class>`) and leave config out of the spec",
            keys.join(", ")
        ),
    ))
}

/// `tpm2` (20.2+) is only meaningful with `encrypted`: without it
/// ceph-volume records the flag as a tag and makes an unencrypted OSD.
pub(super) fn check_tpm2(tpm2: bool, encrypted: bool) -> Result<(), FieldError> {
    if tpm2 && !encrypted {
        return Err(FieldError::stricter(
            "tpm2",
            Some("true".into()),
            "tpm2 needs encrypted: true: the TPM holds the key of the OSD's dm-crypt volume, and without \
             encrypted ceph-volume only tags the OSD and makes it unencrypted",
        ));
    }
    Ok(())
}

/// `actuators` (18.2+): cephadm selects the disks whose `actuators` equal
/// it (Python's `==`; 0 and null add no filter). osdkeeper's device report
/// does not carry `sys_api.actuators` yet, so it cannot tell a
/// dual-actuator disk from another: a spec that filters on it is refused
/// rather than planned on the wrong disks.
pub(super) fn actuators(v: Option<Value>, field: &str) -> Result<(), FieldError> {
    match v {
        None | Some(Value::Null) | Some(Value::Int(0)) => Ok(()),
        Some(v) => Err(FieldError::stricter(
            field,
            Some(v.display()),
            "osdkeeper cannot select by actuators yet (it does not read a disk's actuator count from \
             ceph-volume's inventory); select dual-actuator disks by model or paths, with osds_per_device: 2",
        )),
    }
}

/// One entry of `paths:` as 17.2+ reads it: a path, or `{path,
/// crush_device_class}`. The result is the path and its own class.
pub(super) fn path_entry(
    entry: &Value,
    field: &str,
    data: bool,
    release: Release,
) -> Result<(String, Option<String>), FieldError> {
    let bad_path =
        |v: &Value| FieldError::stricter(field, Some(v.display()), "each path must be a device path such as /dev/sdb");
    let Value::Map(keys) = entry else {
        return match entry {
            Value::Str(p) if !p.is_empty() => Ok((p.clone(), None)),
            other => Err(bad_path(other)),
        };
    };
    if release < Release::Quincy {
        return Err(FieldError::stricter(
            field,
            Some(entry.display()),
            "each path must be a device path such as /dev/sdb ({path, crush_device_class} entries need the \
             cephadm of Ceph 17.2 or later; this spec is read as Ceph 16.2's)",
        ));
    }
    let (mut path, mut class) = (None, None);
    for (k, v) in keys {
        match k.as_str() {
            Some("path") => path = Some(v),
            Some("crush_device_class") => class = Some(v),
            _ => {
                return Err(FieldError::stricter(
                    format!("{field}.{}", excerpt(&k.python_str())),
                    None,
                    "a paths entry has only path and crush_device_class; cephadm would ignore this key",
                ))
            }
        }
    }
    let path = match path {
        Some(Value::Str(p)) if !p.is_empty() => p.clone(),
        None | Some(Value::Str(_)) if data => {
            return Err(FieldError::cephadm(format!("{field}.path"), None, "Device path cannot be empty"))
        }
        other => return Err(bad_path(other.unwrap_or(&Value::Null))),
    };
    let class = match class {
        None | Some(Value::Null) => None,
        Some(Value::Str(c)) if c.is_empty() => None,
        Some(Value::Str(c)) => Some(c.clone()),
        Some(v) => {
            return Err(FieldError::stricter(
                format!("{field}.crush_device_class"),
                Some(v.display()),
                "crush_device_class must be a string such as ssd, hdd or nvme",
            ))
        }
    };
    Ok((path, class))
}
