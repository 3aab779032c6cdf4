//! A fake host for tests: a sysfs tree, device nodes holding each device's
//! first bytes, and udev records, built in a temporary directory with the
//! layout of the real ones (`sys/block`, `sys/dev/block`, `dev`,
//! `run/udev/data`), so that ceph-volume's own code can be pointed at it too.

use std::path::{Path, PathBuf};

use super::KernelPaths;

/// One whole device. Values are written as the kernel writes them.
#[derive(Debug, Clone)]
pub struct Disk {
    pub name: &'static str,
    pub maj_min: &'static str,
    pub bytes: u64,
    pub rotational: bool,
    pub vendor: Option<&'static str>,
    pub model: Option<&'static str>,
    pub rev: Option<&'static str>,
    pub ro: bool,
    pub removable: bool,
    pub scheduler: &'static str,
    pub logical_block: u32,
    /// The device's first bytes (the node's content).
    pub head: Vec<u8>,
    /// `E:` properties of its udev record; `None`: no record.
    pub udev: Option<Vec<(&'static str, &'static str)>>,
    pub partitions: Vec<Part>,
    /// Devices holding this one (their names under `holders/`).
    pub holders: Vec<&'static str>,
    pub slaves: Vec<&'static str>,
    /// device-mapper `(uuid, name)`.
    pub dm: Option<(&'static str, &'static str)>,
    /// An attached loop device (has `loop/`).
    pub loop_attached: bool,
}

#[derive(Debug, Clone)]
pub struct Part {
    pub name: &'static str,
    pub maj_min: &'static str,
    pub number: u32,
    pub start: u64,
    pub bytes: u64,
    pub head: Vec<u8>,
    pub udev: Option<Vec<(&'static str, &'static str)>>,
}

impl Disk {
    pub fn new(name: &'static str, maj_min: &'static str, bytes: u64) -> Disk {
        Disk {
            name,
            maj_min,
            bytes,
            rotational: true,
            vendor: None,
            model: None,
            rev: None,
            ro: false,
            removable: false,
            scheduler: "none [mq-deadline] kyber bfq",
            logical_block: 512,
            head: Vec::new(),
            udev: None,
            partitions: Vec::new(),
            holders: Vec::new(),
            slaves: Vec::new(),
            dm: None,
            loop_attached: false,
        }
    }
}

impl Part {
    pub fn new(name: &'static str, maj_min: &'static str, number: u32, start: u64, bytes: u64) -> Part {
        Part { name, maj_min, number, start, bytes, head: Vec::new(), udev: None }
    }
}

pub struct FakeHost {
    dir: tempfile::TempDir,
}

fn write(path: &Path, content: impl AsRef<[u8]>) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, content).unwrap();
}

fn udev_record(root: &Path, maj_min: &str, props: &Option<Vec<(&str, &str)>>) {
    if let Some(props) = props {
        let text: String = props.iter().map(|(k, v)| format!("E:{k}={v}\n")).collect();
        write(&root.join(format!("run/udev/data/b{maj_min}")), format!("I:1234\n{text}G:systemd\n"));
    }
}

impl FakeHost {
    pub fn new() -> FakeHost {
        let dir = tempfile::tempdir().unwrap();
        for d in ["sys/block", "sys/dev/block", "dev", "run/udev/data"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        FakeHost { dir }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn paths(&self) -> KernelPaths {
        KernelPaths {
            sys_block: self.root().join("sys/block"),
            dev: self.root().join("dev"),
            udev_data: self.root().join("run/udev/data"),
        }
    }

    pub fn add(&self, d: &Disk) -> &FakeHost {
        let root = self.root();
        let sys = root.join("sys/block").join(d.name);
        let flag = |b: bool| if b { "1\n" } else { "0\n" };
        write(&sys.join("dev"), format!("{}\n", d.maj_min));
        write(&sys.join("size"), format!("{}\n", d.bytes / 512));
        write(&sys.join("ro"), flag(d.ro));
        write(&sys.join("removable"), flag(d.removable));
        write(&sys.join("queue/rotational"), flag(d.rotational));
        write(&sys.join("queue/scheduler"), format!("{}\n", d.scheduler));
        write(&sys.join("queue/logical_block_size"), format!("{}\n", d.logical_block));
        write(&sys.join("queue/hw_sector_size"), format!("{}\n", d.logical_block));
        write(&sys.join("queue/nr_requests"), "256\n");
        write(&sys.join("queue/discard_granularity"), if d.rotational { "0\n" } else { "512\n" });
        for (file, value) in [("vendor", d.vendor), ("model", d.model), ("rev", d.rev)] {
            if let Some(v) = value {
                write(&sys.join("device").join(file), format!("{v}\n"));
            }
        }
        std::fs::create_dir_all(sys.join("holders")).unwrap();
        std::fs::create_dir_all(sys.join("slaves")).unwrap();
        for h in &d.holders {
            std::os::unix::fs::symlink(format!("../../{h}"), sys.join("holders").join(h)).unwrap();
        }
        for s in &d.slaves {
            std::os::unix::fs::symlink(format!("../../{s}"), sys.join("slaves").join(s)).unwrap();
        }
        if let Some((uuid, name)) = d.dm {
            write(&sys.join("dm/uuid"), format!("{uuid}\n"));
            write(&sys.join("dm/name"), format!("{name}\n"));
            write(&root.join("dev/mapper").join(name), &d.head);
        }
        if d.loop_attached {
            write(&sys.join("loop/backing_file"), "/var/tmp/disk.img\n");
        }
        std::os::unix::fs::symlink(format!("../../block/{}", d.name), root.join("sys/dev/block").join(d.maj_min))
            .unwrap();
        write(&root.join("dev").join(d.name), &d.head);
        udev_record(root, d.maj_min, &d.udev);
        for p in &d.partitions {
            let psys = sys.join(p.name);
            write(&psys.join("dev"), format!("{}\n", p.maj_min));
            write(&psys.join("partition"), format!("{}\n", p.number));
            write(&psys.join("start"), format!("{}\n", p.start));
            write(&psys.join("size"), format!("{}\n", p.bytes / 512));
            write(&psys.join("ro"), "0\n");
            std::fs::create_dir_all(psys.join("holders")).unwrap();
            std::os::unix::fs::symlink(
                format!("../../block/{}/{}", d.name, p.name),
                root.join("sys/dev/block").join(p.maj_min),
            )
            .unwrap();
            write(&root.join("dev").join(p.name), &p.head);
            udev_record(root, p.maj_min, &p.udev);
        }
        self
    }

    /// Where a fixture file of this module's tests lives.
    pub fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agent").join(name)
    }
}

/// A BlueStore label's start, as `ceph-bluestore-tool` writes it.
pub fn bluestore_head() -> Vec<u8> {
    let mut h = b"bluestore block device\n2a1f6b7e-2b0a-4f4c-9a57-0d3c4e1f6a55\n".to_vec();
    h.resize(4096, 0);
    h
}

/// A protective MBR and a GPT header at LBA 1.
pub fn gpt_head() -> Vec<u8> {
    let mut h = vec![0u8; 4096];
    h[510] = 0x55;
    h[511] = 0xaa;
    h[512..520].copy_from_slice(b"EFI PART");
    h
}

const GB: u64 = 1_000_000_000;

/// The host the fixtures `host_lsblk.json`, `host_blkid.txt` and
/// `host_pvs.json` describe: one device per case worth checking.
pub fn standard_host() -> FakeHost {
    let host = FakeHost::new();
    let seagate = |name, mm, serial| Disk {
        vendor: Some("SEAGATE "),
        model: Some("ST4000NM0025    "),
        rev: Some("E002"),
        udev: Some(vec![
            ("ID_BUS", "scsi"),
            ("ID_VENDOR", "SEAGATE"),
            ("ID_MODEL", "ST4000NM0025"),
            ("ID_SCSI_SERIAL", serial),
            ("ID_SERIAL_SHORT", "5000c500a1b2c3d4"),
        ]),
        ..Disk::new(name, mm, 4000787030016)
    };
    let ata = |name, mm, bytes, model: &'static str, udev_model: &'static str, serial| Disk {
        vendor: Some("ATA     "),
        model: Some(model),
        rev: Some("0003"),
        rotational: false,
        udev: Some(vec![("ID_BUS", "ata"), ("ID_MODEL", udev_model), ("ID_SERIAL_SHORT", serial)]),
        ..Disk::new(name, mm, bytes)
    };
    // A blank data disk.
    host.add(&seagate("sda", "8:0", "ZC18JX1Q"));
    // Partitioned (GPT): an xfs partition, mounted, and an empty one.
    host.add(&Disk {
        head: gpt_head(),
        partitions: vec![
            Part { udev: Some(vec![("ID_BUS", "scsi")]), ..Part::new("sdb1", "8:17", 1, 2048, 100 * GB) },
            Part { udev: Some(vec![("ID_BUS", "scsi")]), ..Part::new("sdb2", "8:18", 2, 195315712, 200 * GB) },
        ],
        ..seagate("sdb", "8:16", "ZC18JX2A")
    });
    // A filesystem straight on the disk.
    host.add(&seagate("sdc", "8:32", "ZC18JX3B"));
    // A used OSD disk: a ceph VG with no room left.
    host.add(&Disk { holders: vec!["dm-0"], ..seagate("sdd", "8:48", "ZC18JX4C") });
    // A shared DB SSD with room for more DB LVs.
    host.add(&ata("sde", "8:64", 960197124096, "INTEL SSDSC2KG96", "INTEL_SSDSC2KG960G8", "PHYG0001"));
    // Read-only.
    host.add(&Disk { ro: true, ..seagate("sdf", "8:80", "ZC18JX5D") });
    // A USB stick.
    host.add(&Disk {
        vendor: Some("SanDisk "),
        model: Some("Ultra Fit       "),
        rev: Some("1.00"),
        removable: true,
        udev: Some(vec![
            ("ID_BUS", "usb"),
            ("ID_VENDOR", "SanDisk"),
            ("ID_MODEL", "Ultra_Fit"),
            ("ID_SERIAL", "SanDisk_Ultra_Fit_4C530001"),
            ("ID_SERIAL_SHORT", "4C530001"),
        ]),
        ..Disk::new("sdg", "8:96", 61530439680)
    });
    // Too small.
    host.add(&ata("sdh", "8:112", 4294967296, "SATA SSD        ", "SATA_SSD", "TINY0001"));
    // A BlueStore label on the raw device.
    host.add(&Disk { head: bluestore_head(), ..seagate("sdi", "8:128", "ZC18JX6E") });
    // An empty GPT and nothing else.
    host.add(&Disk { head: gpt_head(), ..seagate("sdj", "8:144", "ZC18JX7F") });
    // No udev record at all: lsblk's transport and serial stand in.
    host.add(&Disk {
        vendor: Some("WD      "),
        model: Some("Elements 25A2   "),
        ..Disk::new("sdk", "8:160", 2000398934016)
    });
    // Left by ceph-disk.
    host.add(&Disk {
        head: gpt_head(),
        partitions: vec![Part {
            udev: Some(vec![("ID_BUS", "scsi")]),
            ..Part::new("sdl1", "8:177", 1, 2048, 3_000 * GB)
        }],
        ..seagate("sdl", "8:176", "ZC18JX8G")
    });
    // Two paths of a multipath LUN, and the map.
    for (name, mm) in [("sdn", "8:208"), ("sdo", "8:224")] {
        host.add(&Disk { holders: vec!["dm-1"], ..seagate(name, mm, "ZC18JX9H") });
    }
    host.add(&Disk {
        dm: Some(("mpath-35000c500a1b2c3ff", "mpatha")),
        slaves: vec!["sdn", "sdo"],
        udev: Some(vec![("DM_NAME", "mpatha"), ("ID_SERIAL", "35000c500a1b2c3ff")]),
        ..Disk::new("dm-1", "254:1", 4000787030016)
    });
    // The OSD's LV on sdd: not a device to report.
    host.add(&Disk {
        dm: Some((
            "LVM-Xb1kUcQ2dfpTc5fzsJwWMfiOFl0L3Gm5H2nNSLHzb8TX8cW0wTp2gBY8ZkdQxl3B",
            "ceph--6f2c--osd--block--1d0c",
        )),
        slaves: vec!["sdd"],
        ..Disk::new("dm-0", "254:0", 4000783007744)
    });
    // An NVMe drive: no vendor file, no scheduler.
    host.add(&Disk {
        rotational: false,
        model: Some("Samsung SSD 970 EVO Plus 1TB            "),
        scheduler: "[none] mq-deadline",
        udev: Some(vec![
            ("ID_MODEL", "Samsung SSD 970 EVO Plus 1TB"),
            ("ID_SERIAL_SHORT", "S4EWNX0R123456"),
            ("ID_SERIAL", "Samsung SSD 970 EVO Plus 1TB_S4EWNX0R123456"),
        ]),
        ..Disk::new("nvme0n1", "259:0", 1000204886016)
    });
    // An attached loop device, reported only when named.
    host.add(&Disk { loop_attached: true, ..Disk::new("loop0", "7:0", 6442450944) });
    // A detached one: never reported.
    host.add(&Disk::new("loop1", "7:1", 0));
    host
}
