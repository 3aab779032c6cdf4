//! The ceph-volume commands the cephadm of the spec's release runs for a
//! host's selection (`translate.to_ceph_volume`), flag for flag and in the
//! same order, so that osdkeeper creates the same OSDs cephadm would: 17.2
//! makes one command per CRUSH device class, 20.2 appends `--objectstore`,
//! 19.2.1 on `--with-tpm` for `tpm2`. Built as its arguments
//! (argv) and carried so to the agent; joined by spaces only to be shown.

use std::sync::Arc;

use crate::domain::ceph_release::Release;
use crate::domain::selection::Selection;
use crate::domain::spec::{DriveSpec, Method};
use crate::domain::value::excerpt;

/// One ceph-volume command: its arguments after `ceph-volume`, as run.
pub type Argv = Vec<String>;

/// A command as people read it (previews, events, the deployments'
/// list): its words joined by spaces, as cephadm writes it.
pub fn shown(argv: &[String]) -> String {
    CommandLine(argv).to_string()
}

/// `shown`, written where it is displayed without a string in between.
pub struct CommandLine<'a>(pub &'a [String]);

impl std::fmt::Display for CommandLine<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, word) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            f.write_str(word)?;
        }
        Ok(())
    }
}

/// Adds a word the command is built from. cephadm writes its command as
/// one string and splits it on `' '` to run it (`cmd.split(' ')`), so a
/// value with a space in it is two arguments there; so it is here.
fn push(argv: &mut Argv, word: &str) {
    argv.extend(word.split(' ').map(str::to_string));
}

/// A flag and its value.
fn push_flag(argv: &mut Argv, flag: &str, value: &str) {
    argv.push(flag.to_string());
    push(argv, value);
}

/// The commands for one host; empty when nothing was selected as data.
/// cephadm's dry-run variant appends `plan::PREVIEW_SUFFIX`.
pub fn ceph_volume_commands(spec: &DriveSpec, sel: &Selection, osd_id_claims: &[String]) -> Vec<Argv> {
    if sel.data.is_empty() {
        return Vec::new();
    }
    let raw = spec.method == Some(Method::Raw);
    // 16.2 puts the spec's class last; 17.2 on makes one command per class,
    // the class inside it (`translate.prepare_devices`).
    let per_class = spec.release >= Release::Quincy;
    let mut cmds: Vec<Argv> = Vec::new();
    let mut dbs: Vec<&Arc<str>> = sel.db.iter().collect();
    let mut wals: Vec<&Arc<str>> = sel.wal.iter().collect();
    for (class, data) in class_groups(spec, sel, per_class) {
        if raw {
            // 17.2 on reverses the db and wal lists for every class and
            // pops from their ends, so a second class gets them in another
            // order than the first; 16.2 pairs them by position (one class).
            dbs.reverse();
            wals.reverse();
            for d in data {
                let mut c = words(&["raw", "prepare", "--bluestore"]);
                push_flag(&mut c, "--data", d);
                if let Some(db) = dbs.pop() {
                    push_flag(&mut c, "--block.db", db);
                }
                if let Some(wal) = wals.pop() {
                    push_flag(&mut c, "--block.wal", wal);
                }
                if let Some(class) = class.filter(|_| per_class) {
                    push_flag(&mut c, "--crush-device-class", class);
                }
                cmds.push(c);
            }
            continue;
        }
        let mut c = words(&["lvm", "batch", "--no-auto"]);
        data.iter().for_each(|d| push(&mut c, d));
        if !sel.db.is_empty() {
            c.push("--db-devices".into());
            sel.db.iter().for_each(|d| push(&mut c, d));
        }
        if !sel.wal.is_empty() {
            c.push("--wal-devices".into());
            sel.wal.iter().for_each(|d| push(&mut c, d));
        }
        if let Some(v) = &spec.block_wal_size {
            push_flag(&mut c, "--block-wal-size", v);
        }
        if let Some(v) = &spec.block_db_size {
            push_flag(&mut c, "--block-db-size", v);
        }
        if let Some(class) = class.filter(|_| per_class) {
            push_flag(&mut c, "--crush-device-class", class);
        }
        if spec.release >= Release::Tentacle {
            // osdkeeper's specs are bluestore only (as is cephadm's validation).
            push_flag(&mut c, "--objectstore", "bluestore");
        }
        cmds.push(c);
    }
    for (i, c) in cmds.iter_mut().enumerate() {
        if spec.encrypted {
            c.push("--dmcrypt".into());
        }
        if spec.tpm2 {
            c.push("--with-tpm".into());
        }
        if let Some(n) = &spec.osds_per_device {
            push_flag(c, "--osds-per-device", n);
        }
        if let Some(f) = &spec.data_allocate_fraction {
            push_flag(c, "--data-allocate-fraction", f);
        }
        if raw {
            // One prepare per disk, so one claimed id each: `raw prepare`
            // takes `--osd-id` (cephadm passes all as `--osd-ids`, which
            // `raw prepare` refuses).
            if let Some(id) = osd_id_claims.get(i) {
                push_flag(c, "--osd-id", id);
            }
        } else if !osd_id_claims.is_empty() {
            c.push("--osd-ids".into());
            osd_id_claims.iter().for_each(|id| push(c, id));
        }
        if !raw {
            c.extend(["--yes".to_string(), "--no-systemd".to_string()]);
        }
        if let Some(class) = spec.crush_device_class.as_ref().filter(|_| !per_class) {
            push_flag(c, "--crush-device-class", class);
        }
    }
    cmds
}

fn words(list: &[&str]) -> Argv {
    list.iter().map(|w| w.to_string()).collect()
}

/// The data devices by class, in the order each class first appears: a
/// device's own class (`paths:` entry), else the spec's, else none. Before
/// 17.2 there is one group, whatever the classes.
fn class_groups<'a>(
    spec: &'a DriveSpec,
    sel: &'a Selection,
    per_class: bool,
) -> Vec<(Option<&'a str>, Vec<&'a Arc<str>>)> {
    let mut groups: Vec<(Option<&str>, Vec<&Arc<str>>)> = Vec::new();
    for (i, d) in sel.data.iter().enumerate() {
        let own = sel.data_classes.get(i).and_then(|c| c.as_deref());
        let class = if per_class { own.or(spec.crush_device_class.as_deref()) } else { None };
        match groups.iter_mut().find(|(c, _)| *c == class) {
            Some((_, list)) => list.push(d),
            None => groups.push((class, vec![d])),
        }
    }
    groups
}

/// cephadm refuses raw mode unless data and db (and wal) pair up one to one.
pub fn raw_ratio_error(spec: &DriveSpec, sel: &Selection, host: &str) -> Option<String> {
    if spec.method != Some(Method::Raw) {
        return None;
    }
    let nd = sel.data.len();
    for (kind, n) in [("db", sel.db.len()), ("wal", sel.wal.len())] {
        if nd > 0 && n > 0 && nd != n {
            return Some(format!(
                "Raw mode only supports a 1:1 ratio of data to {kind} devices. Found {nd} potential data device(s) and {n} potential {kind} device(s) on host {}",
                excerpt(host)
            ));
        }
    }
    None
}
