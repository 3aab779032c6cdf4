//! What the agent lets the daemon run through `POST /v1/ceph-volume`: only
//! OSD creation (`lvm batch`, `raw prepare`), with the flags the planner
//! writes, and only on devices this agent reports. The arguments are read
//! by the command's one grammar, the planner's
//! (`wire::agent::ceph_volume_grammar`), so every device ceph-volume will
//! use is checked, however it is written; anything it does not understand
//! is refused. This module is the policy over that reading.

use std::collections::BTreeSet;

use crate::wire::agent::ceph_volume_grammar::{roles, Role, UsageError};
use crate::wire::ceph_volume::Release;

/// Why a request is refused; the text goes back to the daemon as is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("no arguments given; expected `lvm batch ...` or `raw prepare ...`")]
    Empty,
    #[error("only `lvm batch` and `raw prepare` may be run through the agent; refused `{0}`")]
    Subcommand(String),
    #[error("argument {index} contains a NUL byte")]
    Nul { index: usize },
    #[error("{0} is not a device in this host's current inventory")]
    UnknownDevice(String),
    #[error("{0} is not among the devices this agent may touch (--devices)")]
    NotAllowed(String),
    #[error("`{0}` is not a device path: devices are written as absolute /dev/... paths")]
    NotADevicePath(String),
    #[error("ceph-volume flag {0} is not one the agent passes on")]
    UnknownFlag(String),
    #[error("malformed arguments: {0}")]
    Malformed(String),
}

/// The two accepted commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    LvmBatch,
    RawPrepare,
}

/// Checks the subcommand and that every argument can be passed on.
pub fn check_shape(args: &[String]) -> Result<Action, Refusal> {
    if let Some(index) = args.iter().position(|a| a.contains('\0')) {
        return Err(Refusal::Nul { index });
    }
    match (args.first().map(String::as_str), args.get(1).map(String::as_str)) {
        (None, _) => Err(Refusal::Empty),
        (Some("lvm"), Some("batch")) => Ok(Action::LvmBatch),
        (Some("raw"), Some("prepare")) => Ok(Action::RawPrepare),
        (Some(first), second) => {
            let shown = match second {
                Some(s) if !s.starts_with('-') => format!("{first} {s}"),
                _ => first.to_string(),
            };
            Err(Refusal::Subcommand(shown))
        }
    }
}

/// The flags the planner writes, which the agent passes on (ceph-volume's
/// grammar has more: `--report`, `--prepare`, `--auto`, `--format`).
fn passed_on(action: Action, name: &str) -> bool {
    let common = [
        "--dmcrypt",
        "--bluestore",
        "--no-systemd",
        "--crush-device-class",
        "--osds-per-device",
        "--data-allocate-fraction",
        // 19.2.1 and 20.2; the grammar refuses them for releases without them.
        "--with-tpm",
        "--objectstore",
    ];
    let own: &[&str] = match action {
        Action::LvmBatch => &[
            "--no-auto",
            "--yes",
            "--db-devices",
            "--wal-devices",
            "--journal-devices",
            "--block-db-size",
            "--block-wal-size",
            "--osd-ids",
        ],
        Action::RawPrepare => &["--data", "--block.db", "--block.wal", "--osd-id"],
    };
    common.contains(&name) || own.contains(&name)
}

/// The flags that take a list (one value at least, for the agent).
const LISTS: [&str; 4] = ["--db-devices", "--wal-devices", "--journal-devices", "--osd-ids"];

/// The devices the arguments name, as the grammar reads them: `lvm
/// batch`'s positional devices and its `--*-devices` lists, `raw
/// prepare`'s `--data`, `--block.db`, `--block.wal` (also as
/// `--flag=value`). A device must be written as an absolute path:
/// ceph-volume runs from `/`, so `dev/sdb` or `./dev/sdb` would reach
/// `/dev/sdb` past the checks; a value that is no device must not look
/// like a path.
pub fn devices(action: Action, args: &[String], release: Release) -> Result<Vec<String>, Refusal> {
    let flag_name = |w: &str| w.split_once('=').map_or(w, |(name, _)| name).to_string();
    if let Some(unknown) =
        args.iter().filter(|w| w.starts_with("--")).map(|w| flag_name(w)).find(|n| !passed_on(action, n))
    {
        return Err(Refusal::UnknownFlag(unknown));
    }
    let roles = roles(args, release).map_err(|UsageError(why)| Refusal::Malformed(why))?;
    let mut out = Vec::new();
    let mut take = |value: &str, device: bool| -> Result<(), Refusal> {
        if value.is_empty() {
            return Err(Refusal::Malformed("an empty argument".into()));
        }
        if device {
            if !value.starts_with("/dev/") {
                return Err(Refusal::NotADevicePath(value.to_string()));
            }
            out.push(value.to_string());
        } else if value.starts_with('/') || value.contains("..") {
            return Err(Refusal::Malformed(format!("`{value}` where a value, not a path, belongs")));
        }
        Ok(())
    };
    for (i, (word, role)) in args.iter().zip(&roles).enumerate() {
        match role {
            Role::Command => {}
            Role::Flag => {
                let followed = matches!(roles.get(i + 1), Some(Role::Device | Role::Value));
                if LISTS.contains(&word.as_str()) && !followed {
                    return Err(Refusal::Malformed(format!("{word} needs a value")));
                }
            }
            Role::FlagWith { device } => take(word.split_once('=').map_or("", |(_, v)| v), *device)?,
            Role::Device => take(word, true)?,
            Role::Value => take(word, false)?,
            Role::Stray => return Err(Refusal::Malformed(format!("unexpected argument `{word}`"))),
        }
    }
    Ok(out)
}

/// Every device must be a device of the current inventory (compared as
/// written: `/dev/../dev/sdb` or a by-id link is refused), and one of
/// `--devices` when the agent was given a list.
pub fn check_devices(
    args: &[String],
    inventory: &BTreeSet<String>,
    allowed: Option<&BTreeSet<String>>,
    release: Release,
) -> Result<Vec<String>, Refusal> {
    let action = check_shape(args)?;
    let named = devices(action, args, release)?;
    for path in &named {
        if allowed.is_some_and(|a| !a.contains(path)) {
            return Err(Refusal::NotAllowed(path.to_string()));
        }
        if !inventory.contains(path) {
            return Err(Refusal::UnknownDevice(path.to_string()));
        }
    }
    Ok(named)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    fn set(items: &[&str]) -> BTreeSet<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn only_osd_creation() {
        assert_eq!(check_shape(&args("lvm batch --no-auto /dev/sdb --yes")), Ok(Action::LvmBatch));
        assert_eq!(check_shape(&args("raw prepare --bluestore --data /dev/sdb")), Ok(Action::RawPrepare));
        assert_eq!(check_shape(&[]), Err(Refusal::Empty));
        let zap = check_shape(&args("lvm zap /dev/sdb --destroy")).unwrap_err();
        assert_eq!(
            zap.to_string(),
            "only `lvm batch` and `raw prepare` may be run through the agent; refused `lvm zap`"
        );
        assert_eq!(check_shape(&args("--help")), Err(Refusal::Subcommand("--help".into())));
        assert_eq!(check_shape(&args("lvm --batch")), Err(Refusal::Subcommand("lvm".into())));
        assert_eq!(check_shape(&["lvm".into(), "batch".into(), "/dev/sdb\0".into()]), Err(Refusal::Nul { index: 2 }));
    }

    #[test]
    fn every_path_must_be_a_reported_device() {
        let inv = set(&["/dev/sdb", "/dev/sdc", "/dev/nvme0n1"]);
        let a = args("lvm batch --no-auto /dev/sdb /dev/sdc --db-devices /dev/nvme0n1 --yes --no-systemd");
        assert_eq!(check_devices(&a, &inv, None, Release::Pacific).unwrap(), ["/dev/sdb", "/dev/sdc", "/dev/nvme0n1"]);
        let a = args("raw prepare --bluestore --data /dev/sdb --block.db=/dev/sdz");
        assert_eq!(check_devices(&a, &inv, None, Release::Pacific), Err(Refusal::UnknownDevice("/dev/sdz".into())));
        let a = args("lvm batch /dev/../dev/sdb");
        assert_eq!(
            check_devices(&a, &inv, None, Release::Pacific),
            Err(Refusal::UnknownDevice("/dev/../dev/sdb".into()))
        );
        let a = args("lvm batch /etc/passwd");
        assert!(check_devices(&a, &inv, None, Release::Pacific).is_err());
        // Relative paths reach /dev/sdb from ceph-volume's working directory `/`.
        for bad in [
            "lvm batch --no-auto dev/sdb --yes",
            "lvm batch --no-auto ./dev/sdb",
            "raw prepare --bluestore --data=dev/sdb",
            "raw prepare --bluestore --data dev/sdb",
            "lvm batch --no-auto /dev/sdb --db-devices dev/nvme0n1",
        ] {
            assert!(
                matches!(check_devices(&args(bad), &inv, None, Release::Pacific), Err(Refusal::NotADevicePath(_))),
                "{bad}"
            );
        }
        // Flags the planner never writes, and values where a device is due.
        assert_eq!(
            check_devices(&args("lvm batch --no-auto /dev/sdb --prepare"), &inv, None, Release::Pacific),
            Err(Refusal::UnknownFlag("--prepare".into()))
        );
        assert!(check_devices(&args("raw prepare --data /dev/sdb /dev/sdc"), &inv, None, Release::Pacific).is_err());
        assert!(check_devices(&args("lvm batch /dev/sdb --crush-device-class /dev/sdc"), &inv, None, Release::Pacific)
            .is_err());
        assert!(check_devices(&args("lvm batch /dev/sdb --osd-ids"), &inv, None, Release::Pacific).is_err());
        let a = args("lvm batch /dev/sdc");
        let err = check_devices(&a, &inv, Some(&set(&["/dev/sdb"])), Release::Pacific).unwrap_err();
        assert_eq!(err.to_string(), "/dev/sdc is not among the devices this agent may touch (--devices)");
        // Values that are not paths pass through.
        let a = args("lvm batch /dev/sdb --crush-device-class ssd --osd-ids 3 4 --block-db-size 1000");
        assert_eq!(check_devices(&a, &inv, None, Release::Pacific).unwrap(), ["/dev/sdb"]);
        let a =
            args("raw prepare --bluestore --data /dev/sdb --block.db=/dev/nvme0n1 --osd-id 3 --crush-device-class ssd");
        assert_eq!(check_devices(&a, &inv, None, Release::Pacific).unwrap(), ["/dev/sdb", "/dev/nvme0n1"]);
    }
}
