//! One ceph-volume command line (its argv after `ceph-volume`), read as
//! the argparse of a release's ceph-volume reads `lvm batch` and `raw
//! prepare` (16.2's flags; `--with-tpm` from 19.2.1, `--objectstore` from
//! 20.2, which older releases refuse): the one grammar of the command. The planner plans OSDs from it, so the dry-run,
//! the apply and the simulator work from exactly the same input; the agent
//! checks every device and value a request names by it before running
//! ceph-volume (`roles`, through `wire::agent`).
//!
//! A word starting with `--` is a flag, also as `--flag=value`; anything
//! else is a value. Flags are not abbreviated (argparse would take
//! `--no-sys` for `--no-systemd`; here it is unknown, and refused).

use std::sync::Arc;

use super::size;
use crate::domain::ceph_release::Release;

/// What one command asks ceph-volume for.
pub enum Invocation {
    Batch(BatchArgs),
    Raw(RawArgs),
}

/// `lvm batch`, with argparse's conversions done.
pub struct BatchArgs {
    pub data: Vec<Arc<str>>,
    pub db: Vec<Arc<str>>,
    pub wal: Vec<Arc<str>>,
    pub osds_per_device: i64,
    pub data_allocate_fraction: f64,
    /// Bytes; `None` when not given.
    pub block_db_size: Option<f64>,
    pub block_wal_size: Option<f64>,
    pub dmcrypt: bool,
    pub osd_ids: Vec<String>,
    /// Whose ceph-volume plans it: 20.2 assigns DB and WAL otherwise.
    pub release: Release,
}

/// `raw prepare`: one OSD on whole devices.
pub struct RawArgs {
    pub data: Arc<str>,
    pub db: Option<Arc<str>>,
    pub wal: Option<Arc<str>>,
    pub dmcrypt: bool,
    pub osd_id: Option<String>,
}

/// argparse's usage error, on which ceph-volume exits 2.
#[derive(Debug, Clone, PartialEq)]
pub struct UsageError(pub String);

/// What a word of the command is to ceph-volume.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// `lvm`, `batch`, `raw`, `prepare`.
    Command,
    /// A flag; its value, if it takes one, is the next word.
    Flag,
    /// `--flag=value`: a flag with its value in the same word.
    FlagWith { device: bool },
    /// A device ceph-volume will use.
    Device,
    /// A value that is no device (a size, an id, a class, ...).
    Value,
    /// A word `raw prepare` has no place for. The planner pairs raw devices
    /// as the cephadm oracle does, without reading the rest of the line
    /// (cephadm appends `--osds-per-device` to `raw prepare` too); the
    /// agent refuses it.
    Stray,
}

/// Reads a command as the ceph-volume of `release` does. `roles`, when
/// given, gets each word's role, one per word, as far as the reading went.
pub fn parse<S: AsRef<str>>(
    args: &[S],
    roles: Option<&mut Vec<Role>>,
    release: Release,
) -> Result<Invocation, UsageError> {
    let words: Vec<&str> = args.iter().map(AsRef::as_ref).collect();
    let mut scratch = Vec::new();
    let roles = roles.unwrap_or(&mut scratch);
    roles.clear();
    match words.as_slice() {
        ["lvm", "batch", rest @ ..] => {
            roles.extend([Role::Command; 2]);
            batch(rest, roles, release).map(Invocation::Batch)
        }
        ["raw", "prepare", rest @ ..] => {
            roles.extend([Role::Command; 2]);
            raw(rest, roles).map(Invocation::Raw)
        }
        _ => Err(UsageError(format!("osdkeeper plans only `lvm batch` and `raw prepare`, not `{}`", words.join(" ")))),
    }
}

/// The words' roles, or why ceph-volume would refuse them.
pub fn roles<S: AsRef<str>>(args: &[S], release: Release) -> Result<Vec<Role>, UsageError> {
    let mut roles = Vec::with_capacity(args.len());
    parse(args, Some(&mut roles), release)?;
    Ok(roles)
}

/// A flag's name and the value given with it (`--flag=value`).
fn split_flag(word: &str) -> (&str, Option<&str>) {
    match word.split_once('=') {
        Some((name, value)) => (name, Some(value)),
        None => (word, None),
    }
}

/// Which list the next bare word goes to.
#[derive(Clone, Copy, PartialEq)]
enum List {
    Data,
    Db,
    Wal,
    Journal,
    Ids,
    Closed,
}

/// Whether `release`'s `lvm batch` has the flag at all.
fn batch_knows(name: &str, release: Release) -> bool {
    match name {
        "--with-tpm" => release >= Release::Squid,
        // 19.2.3's batch has it (bluestore, seastore) though its cephadm never passes it.
        "--objectstore" => release >= Release::Squid,
        _ => true,
    }
}

fn batch(words: &[&str], roles: &mut Vec<Role>, release: Release) -> Result<BatchArgs, UsageError> {
    let mut b = BatchArgs {
        data: Vec::new(),
        db: Vec::new(),
        wal: Vec::new(),
        osds_per_device: 1,
        data_allocate_fraction: 1.0,
        block_db_size: None,
        block_wal_size: None,
        dmcrypt: false,
        osd_ids: Vec::new(),
        release,
    };
    let mut list = List::Closed;
    // argparse gives the positional devices the first run of bare words
    // that no option takes, wherever it is; a second run is an error.
    let mut positional_done = false;
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        i += 1;
        if !w.starts_with("--") {
            if list == List::Closed && !positional_done {
                list = List::Data;
            }
            roles.push(if list == List::Ids { Role::Value } else { Role::Device });
            match list {
                List::Data => b.data.push(Arc::from(w)),
                List::Db => b.db.push(Arc::from(w)),
                List::Wal => b.wal.push(Arc::from(w)),
                List::Ids => b.osd_ids.push(w.to_string()),
                List::Journal => {}
                List::Closed => {
                    roles.pop();
                    return Err(UsageError(format!("unrecognized arguments: {w}")));
                }
            }
            continue;
        }
        // A flag ends the list before it.
        positional_done |= list == List::Data;
        list = List::Closed;
        let (name, inline) = split_flag(w);
        if !batch_knows(name, release) {
            return Err(UsageError(format!("unrecognized arguments: {w}")));
        }
        let takes = match name {
            "--db-devices" | "--wal-devices" | "--journal-devices" => Some(true),
            "--osd-ids" => Some(false),
            "--block-db-size"
            | "--block-wal-size"
            | "--osds-per-device"
            | "--data-allocate-fraction"
            | "--crush-device-class"
            | "--objectstore"
            | "--format" => Some(false),
            "--dmcrypt" | "--with-tpm" | "--no-auto" | "--auto" | "--yes" | "--no-systemd" | "--report"
            | "--bluestore" | "--prepare" => None,
            _ => return Err(UsageError(format!("unrecognized arguments: {w}"))),
        };
        let value = match (takes, inline) {
            (None, Some(v)) => return Err(UsageError(format!("argument {name}: ignored explicit argument '{v}'"))),
            (None, None) => {
                roles.push(Role::Flag);
                None
            }
            (Some(device), Some(v)) => {
                roles.push(Role::FlagWith { device });
                Some(v)
            }
            (Some(_), None) => {
                roles.push(Role::Flag);
                None
            }
        };
        // A list flag opens its list (an explicit `=value` is its one
        // value); any other flag's value is the next word.
        let list_of = match name {
            "--db-devices" => Some(List::Db),
            "--wal-devices" => Some(List::Wal),
            "--journal-devices" => Some(List::Journal),
            "--osd-ids" => Some(List::Ids),
            _ => None,
        };
        if let Some(l) = list_of {
            match (l, value) {
                (List::Db, Some(v)) => b.db.push(Arc::from(v)),
                (List::Wal, Some(v)) => b.wal.push(Arc::from(v)),
                (List::Ids, Some(v)) => b.osd_ids.push(v.to_string()),
                (_, Some(_)) => {}
                (_, None) => list = l,
            }
            continue;
        }
        let Some(takes_device) = takes else {
            if name == "--dmcrypt" {
                b.dmcrypt = true;
            }
            continue;
        };
        let v = match value {
            Some(v) => v,
            None => {
                let next = words.get(i).copied().filter(|v| !v.starts_with("--"));
                i += 1;
                let v = next.ok_or_else(|| UsageError(format!("argument {name}: expected one argument")))?;
                roles.push(if takes_device { Role::Device } else { Role::Value });
                v
            }
        };
        match name {
            "--block-db-size" => b.block_db_size = Some(size_value(name, v)?),
            "--block-wal-size" => b.block_wal_size = Some(size_value(name, v)?),
            "--osds-per-device" => {
                b.osds_per_device =
                    v.trim().parse().map_err(|_| UsageError(format!("argument {name}: invalid int value: '{v}'")))?;
            }
            "--data-allocate-fraction" => {
                let f = size::python_float(v)
                    .ok_or_else(|| UsageError(format!("argument {name}: invalid ValidFraction value: '{v}'")))?;
                if f.is_nan() || f <= 0.0 || f > 1.0 {
                    return Err(UsageError(format!("Fraction {f:.6} not in (0,1.0]")));
                }
                b.data_allocate_fraction = f;
            }
            "--objectstore" if !["bluestore", "seastore"].contains(&v) => {
                return Err(UsageError(format!(
                    "argument {name}: invalid choice: '{v}' (choose from 'bluestore', 'seastore')"
                )));
            }
            _ => {}
        }
    }
    Ok(b)
}

/// argparse names the converter in its message: `Size.parse` is `parse`.
fn size_value(flag: &str, v: &str) -> Result<f64, UsageError> {
    size::parse(v).ok_or_else(|| UsageError(format!("argument {flag}: invalid parse value: '{v}'")))
}

/// `raw prepare`: the devices and what shapes the OSD, each taken where it
/// first appears. Like the cephadm oracle, the rest of the line is not
/// judged: words with no place in it are `Role::Stray`.
fn raw(words: &[&str], roles: &mut Vec<Role>) -> Result<RawArgs, UsageError> {
    let (mut data, mut db, mut wal, mut osd_id) = (None, None, None, None);
    let mut dmcrypt = false;
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        i += 1;
        if !w.starts_with("--") {
            roles.push(Role::Stray);
            continue;
        }
        let (name, inline) = split_flag(w);
        let slot = match name {
            "--data" => Some((&mut data, true)),
            "--block.db" => Some((&mut db, true)),
            "--block.wal" => Some((&mut wal, true)),
            "--osd-id" => Some((&mut osd_id, false)),
            "--crush-device-class" | "--osds-per-device" | "--data-allocate-fraction" => None,
            _ => {
                dmcrypt |= name == "--dmcrypt";
                roles.push(if inline.is_some() { Role::FlagWith { device: false } } else { Role::Flag });
                continue;
            }
        };
        let device = slot.as_ref().is_some_and(|(_, d)| *d);
        let value = match inline {
            Some(v) => {
                roles.push(Role::FlagWith { device });
                Some(v)
            }
            None => {
                roles.push(Role::Flag);
                let next = words.get(i).copied().filter(|v| !v.starts_with("--"));
                if next.is_some() {
                    i += 1;
                    roles.push(if device { Role::Device } else { Role::Value });
                }
                next
            }
        };
        if let (Some((slot, _)), Some(v)) = (slot, value) {
            slot.get_or_insert_with(|| v.to_string());
        }
    }
    let data = data.ok_or_else(|| UsageError("the following arguments are required: --data".into()))?;
    Ok(RawArgs { data: Arc::from(data), db: db.map(Arc::from), wal: wal.map(Arc::from), dmcrypt, osd_id })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split(' ').map(str::to_string).collect()
    }

    fn shown(roles: &[Role]) -> String {
        let one = |r: &Role| match r {
            Role::Command => "c",
            Role::Flag => "f",
            Role::FlagWith { device: true } => "F",
            Role::FlagWith { device: false } => "v=",
            Role::Device => "D",
            Role::Value => "v",
            Role::Stray => "?",
        };
        roles.iter().map(one).collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn every_word_has_its_role() {
        let cmd = "lvm batch --no-auto /dev/sdb /dev/sdc --db-devices /dev/nvme0n1 --block-db-size 30G --dmcrypt \
                   --osds-per-device 2 --osd-ids 3 4 --yes --no-systemd --crush-device-class ssd";
        assert_eq!(shown(&roles(&argv(cmd), Release::Pacific).unwrap()), "c c f D D f D f v f f v f v v f f f v");
        let cmd = "lvm batch /dev/sdb --db-devices=/dev/nvme0n1 --block-db-size=30G --journal-devices /dev/sdj";
        assert_eq!(shown(&roles(&argv(cmd), Release::Pacific).unwrap()), "c c D F v= f D");
        let cmd = "raw prepare --bluestore --data /dev/sdb --block.db=/dev/nvme0n1 --osd-id 3 --osds-per-device 2 x";
        assert_eq!(shown(&roles(&argv(cmd), Release::Pacific).unwrap()), "c c f f D F f v f v ?");
    }

    #[test]
    fn values_given_with_the_flag_count_as_given_after_it() {
        let Invocation::Batch(b) =
            parse(&argv("lvm batch /dev/sdb --db-devices=/dev/sdc --block-db-size=1G"), None, Release::Pacific)
                .unwrap_or_else(|e| panic!("{e:?}"))
        else {
            panic!("a batch")
        };
        assert_eq!((b.db.len(), b.block_db_size), (1, Some(1024.0 * 1024.0 * 1024.0)));
        let Ok(Invocation::Raw(r)) =
            parse(&argv("raw prepare --data=/dev/sdb --block.wal /dev/sdc --data /dev/sdd"), None, Release::Pacific)
        else {
            panic!("a raw prepare")
        };
        assert_eq!((&*r.data, r.wal.as_deref()), ("/dev/sdb", Some("/dev/sdc")), "the first --data counts");
        for (bad, why) in [
            ("lvm batch /dev/sdb --yes=1", "argument --yes: ignored explicit argument '1'"),
            ("lvm batch /dev/sdb --no-sys", "unrecognized arguments: --no-sys"),
            ("lvm batch /dev/sdb --crush-device-class", "argument --crush-device-class: expected one argument"),
            ("lvm batch /dev/sdb --yes /dev/sdc", "unrecognized arguments: /dev/sdc"),
            ("raw prepare --bluestore", "the following arguments are required: --data"),
            ("lvm zap /dev/sdb", "osdkeeper plans only `lvm batch` and `raw prepare`, not `lvm zap /dev/sdb`"),
        ] {
            assert_eq!(parse(&argv(bad), None, Release::Pacific).err(), Some(UsageError(why.into())), "{bad}");
        }
    }

    /// 20.2's translate appends `--objectstore bluestore` (19.2.3's batch
    /// already takes it) and, for `tpm2`, `--with-tpm`: each release's
    /// ceph-volume takes the flags it has and refuses the others, as its
    /// argparse does.
    #[test]
    fn each_release_takes_its_own_flags() {
        let cmd = argv("lvm batch --no-auto /dev/sdb --objectstore bluestore --dmcrypt --with-tpm --yes --no-systemd");
        assert_eq!(shown(&roles(&cmd, Release::Tentacle).unwrap()), "c c f D f v f f f f");
        assert_eq!(shown(&roles(&cmd, Release::Squid).unwrap()), "c c f D f v f f f f", "as 19.2.3's code does");
        for old in [Release::Pacific, Release::Quincy, Release::Reef] {
            assert_eq!(
                roles(&cmd, old).err(),
                Some(UsageError("unrecognized arguments: --objectstore".into())),
                "{old}"
            );
        }
        let tpm = argv("lvm batch /dev/sdb --dmcrypt --with-tpm");
        assert!(roles(&tpm, Release::Squid).is_ok(), "19.2.1 has --with-tpm");
        assert_eq!(roles(&tpm, Release::Reef).err(), Some(UsageError("unrecognized arguments: --with-tpm".into())));
        let seastore = argv("lvm batch /dev/sdb --objectstore=seastore");
        assert!(roles(&seastore, Release::Tentacle).is_ok());
        assert_eq!(
            roles(&argv("lvm batch /dev/sdb --objectstore filestore"), Release::Tentacle).err(),
            Some(UsageError(
                "argument --objectstore: invalid choice: 'filestore' (choose from 'bluestore', 'seastore')".into()
            ))
        );
    }
}
