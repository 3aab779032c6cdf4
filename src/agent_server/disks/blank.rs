//! When a device counts as blank, so that a disk probe may write on it:
//! nothing on it (no BlueStore label, no partition table or partitions, no
//! signature blkid finds, no logical volumes, not a Ceph device) and
//! nothing using it (no process with it open, no kernel holder, no mount).
//! The facts are gathered on the host right before fio runs, with the
//! device held exclusively (`probe`); this is only the rule, so it can be
//! tested on any machine.

use crate::agent_server::disks::holders::Holders;
use crate::agent_server::inventory::kernel::signatures;

/// What the host says about a device, gathered while it is held exclusively.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BlankFacts {
    /// `Some(whoami)` when it carries a BlueStore label, at its head or a
    /// copy further in (19.2+; `None` inside: a label without an OSD id).
    pub bluestore: Option<Option<u32>>,
    /// Where that label is: 0 for the head, else the copy's offset.
    pub bluestore_at: u64,
    /// A GPT header at LBA 1.
    pub gpt: bool,
    /// Partitions the kernel or the inventory lists.
    pub partitions: Vec<String>,
    /// What `blkid -p` finds: `TYPE`, `PTTYPE` values (ext4, LVM2_member, dos, ...).
    pub signatures: Vec<String>,
    /// Logical volumes the inventory lists on it.
    pub lvs: usize,
    /// ceph-volume calls it a Ceph device.
    pub ceph_device: bool,
    /// An exclusive open failed with EBUSY (a mount, a device-mapper
    /// table, a running ceph-osd that opened it exclusively).
    pub busy: bool,
    /// Processes with it open (the agent itself left out), kernel holders, mounts.
    pub holders: Holders,
}

/// Why the device is not blank, one reason per finding; empty when it is.
pub fn refusals(f: &BlankFacts) -> Vec<String> {
    let mut out = Vec::new();
    let copy = match f.bluestore_at {
        0 => String::new(),
        at => format!(
            " at {}: a copy Ceph 19.2+ writes, which its tools read though the head's is gone",
            signatures::shown_offset(at)
        ),
    };
    match f.bluestore {
        Some(Some(id)) => out.push(format!("it has a BlueStore label (osd.{id}){copy}")),
        Some(None) => out.push(format!("it has a BlueStore label{copy}")),
        None => {}
    }
    if f.gpt {
        out.push("it has a GPT partition table".to_string());
    }
    if !f.partitions.is_empty() {
        out.push(format!("it has partitions ({})", f.partitions.join(", ")));
    }
    if !f.signatures.is_empty() {
        out.push(format!("blkid finds signatures on it ({})", f.signatures.join(", ")));
    }
    if f.lvs > 0 {
        out.push(format!("it holds {} logical volume(s)", f.lvs));
    }
    if f.ceph_device && f.bluestore.is_none() && f.lvs == 0 {
        out.push("ceph-volume reports it as a Ceph device".to_string());
    }
    if f.busy {
        out.push("it is busy (an exclusive open failed with EBUSY)".to_string());
    }
    if !f.holders.is_empty() {
        out.push(format!("it is in use: {}", f.holders));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent_server::disks::holders::ProcessHolder;

    #[test]
    fn a_blank_disk_has_nothing_to_say() {
        assert!(refusals(&BlankFacts::default()).is_empty());
    }

    #[test]
    fn an_osds_disk_is_refused_for_its_label_and_its_daemon() {
        let f = BlankFacts {
            bluestore: Some(Some(3)),
            ceph_device: true,
            holders: Holders {
                processes: vec![ProcessHolder { pid: 4242, comm: "ceph-osd".into(), osd: Some(3) }],
                ..Holders::default()
            },
            ..BlankFacts::default()
        };
        assert_eq!(
            refusals(&f),
            ["it has a BlueStore label (osd.3)", "it is in use: held open by ceph-osd pid 4242 (osd.3)"],
            "the label says whose it is; the Ceph-device flag adds nothing then"
        );
    }

    #[test]
    fn every_trace_of_use_is_named() {
        let f = BlankFacts {
            bluestore: Some(None),
            bluestore_at: 0,
            gpt: true,
            partitions: vec!["sdb1".into(), "sdb2".into()],
            signatures: vec!["LVM2_member".into()],
            lvs: 2,
            ceph_device: true,
            busy: true,
            holders: Holders { kernel: vec!["dm-0".into()], mount_points: vec!["/mnt/x".into()], ..Holders::default() },
        };
        assert_eq!(
            refusals(&f),
            [
                "it has a BlueStore label",
                "it has a GPT partition table",
                "it has partitions (sdb1, sdb2)",
                "blkid finds signatures on it (LVM2_member)",
                "it holds 2 logical volume(s)",
                "it is busy (an exclusive open failed with EBUSY)",
                "it is in use: in use by dm-0; mounted at /mnt/x",
            ]
        );
        let copy = BlankFacts { bluestore: Some(Some(2)), bluestore_at: 1 << 30, ..BlankFacts::default() };
        assert_eq!(
            refusals(&copy),
            ["it has a BlueStore label (osd.2) at 1 GiB: a copy Ceph 19.2+ writes, which its tools read though the head's is gone"]
        );
        let busy = BlankFacts { busy: true, ..BlankFacts::default() };
        assert_eq!(refusals(&busy), ["it is busy (an exclusive open failed with EBUSY)"], "even with no holder found");
        let only_flag = BlankFacts { ceph_device: true, ..BlankFacts::default() };
        assert_eq!(refusals(&only_flag), ["ceph-volume reports it as a Ceph device"]);
        let fs = BlankFacts { signatures: vec!["ext4".into()], ..BlankFacts::default() };
        assert_eq!(refusals(&fs), ["blkid finds signatures on it (ext4)"]);
    }
}
