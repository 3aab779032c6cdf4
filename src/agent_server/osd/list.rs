//! The OSDs ceph-volume finds on this host's devices: `ceph-volume raw list`
//! (BlueStore labels) and `ceph-volume lvm list` (LV tags), limited to the
//! devices this agent reports, and activating one of them. On one machine
//! that plays several hosts (the Ceph sandbox) every device is visible to
//! every agent; each lists and touches only its own.

use std::collections::BTreeSet;
use std::path::Path;

use crate::agent_server::ceph_volume::CephVolume;
use crate::agent_server::inventory::device_list::is_loop_device;
use crate::agent_server::inventory::kernel::signatures::read_label;
use crate::agent_server::process::RunError;
use crate::wire::agent::{ActivateRequest, CommandResult, HostOsds, ListedOsd, OsdKind};
use crate::wire::ceph_volume::Release;
use crate::wire::ceph_volume_list::{merge_raw, parse_lvm_list, read_raw_entries, RawEntry};

#[derive(Debug, thiserror::Error)]
pub enum ListError {
    #[error(transparent)]
    Run(#[from] RunError),
    #[error("`ceph-volume {what} list` exited with status {code}: {stderr}")]
    Exit { what: &'static str, code: i32, stderr: String },
    #[error("`ceph-volume {what} list` printed something unreadable: {message}")]
    Output { what: &'static str, message: String },
}

/// Whether an OSD uses only devices this agent may touch.
fn ours(osd: &ListedOsd, devices: &BTreeSet<String>) -> bool {
    [Some(&osd.device), osd.db_device.as_ref(), osd.wal_device.as_ref()]
        .into_iter()
        .flatten()
        .all(|d| devices.contains(d))
}

fn loop_env(devices: &BTreeSet<String>) -> Vec<(String, String)> {
    if devices.iter().any(|d| is_loop_device(d)) {
        vec![("CEPH_VOLUME_ALLOW_LOOP_DEVICES".to_string(), "1".to_string())]
    } else {
        Vec::new()
    }
}

/// `raw list` on the agent's devices and `lvm list`. A host without LVM
/// (or without any LV) makes `lvm list` fail: that is a note, not an error;
/// a `raw list` that fails is an error (no OSD could be seen).
pub async fn list(cv: &CephVolume, devices: &BTreeSet<String>) -> Result<HostOsds, ListError> {
    let paths = devices.clone();
    let labelled = tokio::task::spawn_blocking(move || labelled(&paths)).await.unwrap_or_else(|e| {
        tracing::warn!(
            "reading the devices' BlueStore labels stopped: {e}; the listing is taken as ceph-volume gives it"
        );
        BTreeSet::new()
    });
    list_with(cv, devices, &labelled).await
}

/// The devices that carry a BlueStore label, at the head or a copy (what
/// `ceph-bluestore-tool show-label` reads in 20.2). One that cannot be
/// read is left out: ceph-volume cannot read it either.
fn labelled(devices: &BTreeSet<String>) -> BTreeSet<String> {
    devices.iter().filter(|d| matches!(read_label(Path::new(d)), Ok(Some(_)))).cloned().collect()
}

/// `list`, told which devices carry a BlueStore label.
///
/// One `raw list` for all devices, as before 20.2; but 20.2 reads them all
/// with one `ceph-bluestore-tool show-label`, which answers `{}` when one
/// device makes it abort (a 2 KiB device does), and keeps one label per OSD
/// (an OSD with its DB on another device loses one of the two). So when a
/// labelled device is named by no entry, those devices are listed again one
/// at a time and the entries merged: a listing costs one call, plus one per
/// device the first call lost (`BENCHMARKS.md`).
async fn list_with(
    cv: &CephVolume,
    devices: &BTreeSet<String>,
    labelled: &BTreeSet<String>,
) -> Result<HostOsds, ListError> {
    let env = loop_env(devices);
    let mut entries = raw_list(cv, devices.iter(), &env).await?;
    let mut notes = Vec::new();
    let missed: Vec<&String> = labelled
        .iter()
        .filter(|d| devices.contains(*d) && !entries.iter().any(|e| e.devices().any(|x| x == d.as_str())))
        .collect();
    if devices.len() > 1 && !missed.is_empty() {
        let shown: Vec<&str> = missed.iter().map(|d| d.as_str()).collect();
        let note = format!(
            "`ceph-volume raw list` of {} devices named no OSD on {}, which carry BlueStore labels (ceph-volume 20.2 \
             lists nothing when one device makes ceph-bluestore-tool abort, and one label per OSD); listed them one at a time",
            devices.len(),
            shown.join(", ")
        );
        tracing::info!("{note}");
        notes.push(note);
        for d in missed {
            match raw_list(cv, [d], &env).await {
                Ok(found) => entries.extend(found),
                Err(e) => notes.push(e.to_string()),
            }
        }
    }
    let mut osds = merge_raw(entries);
    let lvm = cv.run(&["lvm", "list", "--format", "json"].map(String::from), &env).await?;
    if lvm.exit_code == 0 {
        match parse_lvm_list(lvm.stdout.as_bytes()) {
            Ok(found) => osds.extend(found),
            Err(e) => notes.push(format!("`ceph-volume lvm list` printed something unreadable: {e}")),
        }
    } else {
        notes.push(format!("`ceph-volume lvm list` exited with status {}: {}", lvm.exit_code, last_line(&lvm)));
    }
    osds.retain(|o| ours(o, devices));
    osds.sort_by_key(|o| o.osd_id);
    Ok(HostOsds { osds, notes })
}

/// One `raw list` call on `devices`, its entries unmerged.
async fn raw_list<'a>(
    cv: &CephVolume,
    devices: impl IntoIterator<Item = &'a String>,
    env: &[(String, String)],
) -> Result<Vec<RawEntry>, ListError> {
    let mut args: Vec<String> = ["raw", "list", "--format", "json"].map(String::from).to_vec();
    args.extend(devices.into_iter().cloned());
    let raw = cv.run(&args, env).await?;
    if raw.exit_code != 0 {
        return Err(ListError::Exit { what: "raw", code: raw.exit_code, stderr: last_line(&raw) });
    }
    read_raw_entries(raw.stdout.as_bytes()).map_err(|e| ListError::Output { what: "raw", message: e.to_string() })
}

fn last_line(r: &CommandResult) -> String {
    r.stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").to_string()
}

/// The activation command for an OSD the listing shows. Raw OSDs have no
/// systemd units in ceph-volume 16.2 (`raw activate` refuses without
/// `--no-systemd`); LVM OSDs get them unless the host starts OSDs some other way.
/// A raw OSD's DB and WAL devices are named too: 16.2-18.2 read the
/// labels of the devices given, and without them would start the OSD with
/// no `block.db` link (`check_activation` keeps 19.2+ out).
pub fn activate_args(osd: &ListedOsd, with_systemd: bool) -> Vec<String> {
    let id = osd.osd_id.to_string();
    let mut args: Vec<String> = match osd.kind {
        OsdKind::Raw => ["raw", "activate", "--device", &osd.device, "--osd-id", &id, "--osd-uuid", &osd.osd_fsid]
            .map(String::from)
            .to_vec(),
        OsdKind::Lvm => ["lvm", "activate", &id, &osd.osd_fsid].map(String::from).to_vec(),
    };
    if osd.kind == OsdKind::Raw {
        for (flag, dev) in [("--block.db", &osd.db_device), ("--block.wal", &osd.wal_device)] {
            if let Some(dev) = dev {
                args.extend([flag.to_string(), dev.clone()]);
            }
        }
    }
    if osd.kind == OsdKind::Raw || !with_systemd {
        args.push("--no-systemd".into());
    }
    args
}

/// Why an activation request is refused before anything runs. `release`:
/// ceph-volume's, where known.
pub fn check_activation(
    req: &ActivateRequest,
    osd_id: u32,
    listed: &HostOsds,
    release: Option<Release>,
) -> Result<ListedOsd, String> {
    // A purged OSD's disk that was not wiped keeps its label, id and all:
    // once the id is given to a new OSD, the host lists it twice, and the
    // request's fsid says which one is meant.
    let with_id = || listed.osds.iter().filter(|o| o.osd_id == osd_id);
    let Some(osd) = with_id().find(|o| o.osd_fsid == req.osd_fsid).or_else(|| with_id().next()) else {
        return Err(format!("ceph-volume lists no osd.{osd_id} on this host's devices"));
    };
    if osd.osd_fsid != req.osd_fsid || osd.kind != req.kind || (req.kind == OsdKind::Raw && osd.device != req.device) {
        return Err(format!(
            "osd.{osd_id} on this host is {} {} on {}, not {} {} on {}",
            kind_name(osd.kind),
            osd.osd_fsid,
            osd.device,
            kind_name(req.kind),
            req.osd_fsid,
            req.device
        ));
    }
    let separate: Vec<&str> = [&osd.db_device, &osd.wal_device].into_iter().flatten().map(String::as_str).collect();
    if osd.kind == OsdKind::Raw && !separate.is_empty() && release.is_some_and(|r| r >= Release::Squid) {
        // 19.2 and 20.2 ignore `--block.db` and take the DB from their own
        // listing, which keeps one device per OSD: it would start without it.
        return Err(format!(
            "osd.{osd_id} is a raw OSD with its DB/WAL on {}: ceph-volume 19.2+'s `raw activate` ignores \
             --block.db/--block.wal and its listing keeps one device per OSD, so it would start the OSD without \
             them; activate it by hand (ceph-bluestore-tool prime-osd-dir, then the block, block.db and block.wal \
             links) or with ceph-volume of 18.2 or older",
            separate.join(", ")
        ));
    }
    Ok(osd.clone())
}

fn kind_name(k: OsdKind) -> &'static str {
    match k {
        OsdKind::Raw => "raw",
        OsdKind::Lvm => "lvm",
    }
}

/// Activates one OSD (idempotent: ceph-volume re-primes an activated one).
pub async fn activate(
    cv: &CephVolume,
    osd: &ListedOsd,
    with_systemd: bool,
    devices: &BTreeSet<String>,
) -> Result<CommandResult, RunError> {
    cv.run(&activate_args(osd, with_systemd), &loop_env(devices)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn osd(id: u32, kind: OsdKind, device: &str) -> ListedOsd {
        ListedOsd {
            osd_id: id,
            osd_fsid: format!("uuid-{id}"),
            cluster_fsid: "fsid".into(),
            kind,
            device: device.into(),
            db_device: None,
            wal_device: None,
            osdspec_affinity: None,
        }
    }

    #[test]
    fn activation_commands_raw_run_for_real_in_sandbox_deploy_lvm_only_here_no_device_mapper() {
        assert_eq!(
            activate_args(&osd(6, OsdKind::Raw, "/dev/loop6"), true).join(" "),
            "raw activate --device /dev/loop6 --osd-id 6 --osd-uuid uuid-6 --no-systemd"
        );
        assert_eq!(activate_args(&osd(3, OsdKind::Lvm, "/dev/sdb"), true).join(" "), "lvm activate 3 uuid-3");
        assert_eq!(
            activate_args(&osd(3, OsdKind::Lvm, "/dev/sdb"), false).join(" "),
            "lvm activate 3 uuid-3 --no-systemd"
        );
    }

    #[test]
    fn only_the_listed_osd_with_its_fsid_is_activated() {
        let listed = HostOsds { osds: vec![osd(6, OsdKind::Raw, "/dev/loop6")], notes: vec![] };
        let req = |fsid: &str, device: &str| ActivateRequest {
            osd_fsid: fsid.into(),
            kind: OsdKind::Raw,
            device: device.into(),
        };
        assert!(check_activation(&req("uuid-6", "/dev/loop6"), 6, &listed, None).is_ok());
        assert_eq!(
            check_activation(&req("uuid-6", "/dev/loop6"), 7, &listed, None).unwrap_err(),
            "ceph-volume lists no osd.7 on this host's devices"
        );
        let e = check_activation(&req("other", "/dev/loop6"), 6, &listed, None).unwrap_err();
        assert_eq!(e, "osd.6 on this host is raw uuid-6 on /dev/loop6, not raw other on /dev/loop6");
        assert!(check_activation(&req("uuid-6", "/dev/loop7"), 6, &listed, None).is_err());
    }

    /// Seen on the sandbox: osd.2 purged without a wipe, its id planned for
    /// a swap's new OSD; the agent refused the new one, naming the old.
    #[test]
    fn an_id_listed_twice_after_a_purge_without_wipe_is_activated_by_its_fsid() {
        let mut stale = osd(2, OsdKind::Raw, "/dev/loop2");
        stale.osd_fsid = "uuid-purged".into();
        let listed = HostOsds { osds: vec![stale, osd(2, OsdKind::Raw, "/dev/loop8")], notes: vec![] };
        let req = ActivateRequest { osd_fsid: "uuid-2".into(), kind: OsdKind::Raw, device: "/dev/loop8".into() };
        assert_eq!(check_activation(&req, 2, &listed, None).unwrap().device, "/dev/loop8");
        let other = ActivateRequest { osd_fsid: "uuid-9".into(), ..req };
        let e = check_activation(&other, 2, &listed, None).unwrap_err();
        assert_eq!(e, "osd.2 on this host is raw uuid-purged on /dev/loop2, not raw uuid-9 on /dev/loop8");
    }

    /// The release's code: 16.2, 17.2.9 and 18.2.7 `raw/activate.py` add
    /// `--block.db` and `--block.wal` to the devices they read; 19.2.3
    /// `objectstore/rawbluestore.py` and 20.2.4 `objectstore/raw.py` read
    /// only `--device(s)`, and their listing keeps one label per OSD.
    #[test]
    fn a_raw_osd_with_its_db_elsewhere_is_activated_with_it_and_refused_from_squid_19_2_3_code_on() {
        let mut o = osd(2, OsdKind::Raw, "/dev/loop10");
        o.db_device = Some("/dev/loop11".into());
        assert_eq!(
            activate_args(&o, true).join(" "),
            "raw activate --device /dev/loop10 --osd-id 2 --osd-uuid uuid-2 --block.db /dev/loop11 --no-systemd"
        );
        let listed = HostOsds { osds: vec![o], notes: vec![] };
        let req = ActivateRequest { osd_fsid: "uuid-2".into(), kind: OsdKind::Raw, device: "/dev/loop10".into() };
        for release in [None, Some(Release::Pacific), Some(Release::Quincy), Some(Release::Reef)] {
            assert!(check_activation(&req, 2, &listed, release).is_ok(), "{release:?}");
        }
        for release in [Release::Squid, Release::Tentacle] {
            let e = check_activation(&req, 2, &listed, Some(release)).unwrap_err();
            assert!(e.starts_with("osd.2 is a raw OSD with its DB/WAL on /dev/loop11: ceph-volume 19.2+'s"), "{e}");
        }
        let alone = HostOsds { osds: vec![osd(6, OsdKind::Raw, "/dev/loop6")], notes: vec![] };
        let req = ActivateRequest { osd_fsid: "uuid-6".into(), kind: OsdKind::Raw, device: "/dev/loop6".into() };
        assert!(check_activation(&req, 6, &alone, Some(Release::Tentacle)).is_ok(), "one device: 20.2 activates it");
    }

    /// A ceph-volume that answers what Tentacle's (20.2.4) printed for the
    /// same calls (`tests/fixtures/ceph_volume/raw_list_tentacle_20.2.4_*`,
    /// recorded by `testbed/ceph-sandbox/record-formats.sh`): osd.2 on
    /// /dev/loop10 with its DB on /dev/loop11, and a 2 KiB /dev/loop12.
    fn tentacle(dir: &tempfile::TempDir, batched: &str) -> CephVolume {
        let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/ceph_volume/raw_list_tentacle_20.2.4_");
        let script = format!(
            "#!/bin/sh\necho \"$*\" >> {log}\ncase \"$*\" in\n\
             'raw list --format json /dev/loop10') cat {fixtures}main.json;;\n\
             'raw list --format json /dev/loop11') cat {fixtures}db.json;;\n\
             'raw list --format json /dev/loop12') echo '{{}}';;\n\
             'raw list --format json /dev/loop1'*) cat {fixtures}{batched}.json;;\n\
             *) exit 1;;\nesac\n",
            log = dir.path().join("calls").display()
        );
        let path = dir.path().join("ceph-volume");
        std::fs::write(&path, script).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        let timeout = std::time::Duration::from_secs(5);
        CephVolume { program: path.display().to_string(), inventory_timeout: timeout, command_timeout: timeout }
    }

    fn set(items: &[&str]) -> BTreeSet<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[tokio::test]
    async fn tentacle_20_2_4_raw_list_is_listed_again_one_device_at_a_time_when_it_lost_a_labelled_device() {
        let labelled = set(&["/dev/loop10", "/dev/loop11"]);
        let whole =
            |l: &HostOsds| l.osds.iter().map(|o| (o.osd_id, o.device.clone(), o.db_device.clone())).collect::<Vec<_>>();
        let want = vec![(2, "/dev/loop10".to_string(), Some("/dev/loop11".to_string()))];
        // A tiny device empties the batched answer: both labelled devices again.
        let dir = tempfile::tempdir().unwrap();
        let cv = tentacle(&dir, "tiny_main_db");
        let listed = list_with(&cv, &set(&["/dev/loop10", "/dev/loop11", "/dev/loop12"]), &labelled).await.unwrap();
        assert_eq!(whole(&listed), want);
        assert!(listed.notes[0].contains("named no OSD on /dev/loop10, /dev/loop11"), "{:?}", listed.notes);
        let calls = std::fs::read_to_string(dir.path().join("calls")).unwrap();
        assert_eq!(calls.lines().filter(|l| l.starts_with("raw list")).count(), 3, "{calls}");
        // The DB's label replaced the OSD's: the main device again.
        let dir = tempfile::tempdir().unwrap();
        let cv = tentacle(&dir, "main_db");
        let listed = list_with(&cv, &set(&["/dev/loop10", "/dev/loop11"]), &labelled).await.unwrap();
        assert_eq!(whole(&listed), want);
        // The OSD's replaced the DB's: the DB device again.
        let dir = tempfile::tempdir().unwrap();
        let cv = tentacle(&dir, "db_main");
        let listed = list_with(&cv, &set(&["/dev/loop10", "/dev/loop11"]), &labelled).await.unwrap();
        assert_eq!(whole(&listed), want);
        let calls = std::fs::read_to_string(dir.path().join("calls")).unwrap();
        assert!(calls.contains("raw list --format json /dev/loop11\n"), "{calls}");
        // Nothing lost, nothing listed again: one call.
        let dir = tempfile::tempdir().unwrap();
        let cv = tentacle(&dir, "main");
        let listed = list_with(&cv, &set(&["/dev/loop10", "/dev/loop12"]), &set(&["/dev/loop10"])).await.unwrap();
        assert_eq!(listed.osds.len(), 1);
        let calls = std::fs::read_to_string(dir.path().join("calls")).unwrap();
        assert_eq!(calls.lines().filter(|l| l.starts_with("raw list")).count(), 1, "{calls}");
        assert_eq!(listed.notes.len(), 1, "only lvm list's: {:?}", listed.notes);
    }

    #[test]
    fn other_hosts_osds_are_not_ours() {
        let mine: BTreeSet<String> = ["/dev/loop6".to_string(), "/dev/loop0".to_string()].into();
        assert!(ours(&osd(6, OsdKind::Raw, "/dev/loop6"), &mine));
        assert!(!ours(&osd(7, OsdKind::Raw, "/dev/loop7"), &mine));
        let mut with_db = osd(0, OsdKind::Raw, "/dev/loop0");
        with_db.db_device = Some("/dev/loop9".into());
        assert!(!ours(&with_db, &mine), "a DB on another host's device is not ours to touch");
    }
}
