//! What the agent lets the daemon run through `POST /v1/ceph-volume`: only
//! OSD creation (`lvm batch`, `raw prepare`), and only on devices this agent
//! reports. Everything that looks like a path must be such a device, so a
//! request cannot point ceph-volume at anything else on the host.

use std::collections::BTreeSet;

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

/// Every path among the arguments, including `--flag=/dev/x` values.
pub fn paths(args: &[String]) -> Vec<&str> {
    args.iter()
        .map(|a| match a.split_once('=') {
            Some((flag, value)) if flag.starts_with('-') => value,
            _ => a.as_str(),
        })
        .filter(|a| a.starts_with('/'))
        .collect()
}

/// Every path must be a device of the current inventory (compared as
/// written: `/dev/../dev/sdb` or a by-id link is refused), and one of
/// `--devices` when the agent was given a list.
pub fn check_devices(
    args: &[String],
    inventory: &BTreeSet<String>,
    allowed: Option<&BTreeSet<String>>,
) -> Result<Vec<String>, Refusal> {
    let mut devices = Vec::new();
    for path in paths(args) {
        if allowed.is_some_and(|a| !a.contains(path)) {
            return Err(Refusal::NotAllowed(path.to_string()));
        }
        if !inventory.contains(path) {
            return Err(Refusal::UnknownDevice(path.to_string()));
        }
        devices.push(path.to_string());
    }
    Ok(devices)
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
        assert_eq!(check_devices(&a, &inv, None).unwrap(), ["/dev/sdb", "/dev/sdc", "/dev/nvme0n1"]);
        let a = args("raw prepare --bluestore --data /dev/sdb --block.db=/dev/sdz");
        assert_eq!(check_devices(&a, &inv, None), Err(Refusal::UnknownDevice("/dev/sdz".into())));
        let a = args("lvm batch /dev/../dev/sdb");
        assert_eq!(check_devices(&a, &inv, None), Err(Refusal::UnknownDevice("/dev/../dev/sdb".into())));
        let a = args("lvm batch /etc/passwd");
        assert!(check_devices(&a, &inv, None).is_err());
        let a = args("lvm batch /dev/sdc");
        let err = check_devices(&a, &inv, Some(&set(&["/dev/sdb"]))).unwrap_err();
        assert_eq!(err.to_string(), "/dev/sdc is not among the devices this agent may touch (--devices)");
        // Values that are not paths pass through.
        let a = args("lvm batch /dev/sdb --crush-device-class ssd --osd-ids 3 4 --block-db-size 1000");
        assert_eq!(check_devices(&a, &inv, None).unwrap(), ["/dev/sdb"]);
    }
}
