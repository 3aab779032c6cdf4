//! Benchmarks against a real Ceph cluster: ../shared/ceph-sandbox started
//! with `--loop` (each OSD on its own loop device, so one OSD's disk can
//! be slowed down for real), the real daemon, and the CLI.
//!
//! `bench osds --all` stores one result per OSD; then one OSD's ceph-osd
//! process is put into a blkio cgroup that throttles its writes to its
//! loop device (this machine runs cgroup v1), and the next `bench osds
//! --all` names it as the outlier among the comparable OSDs.

mod common;

use std::path::{Path, PathBuf};

use common::sandbox::Sandbox;
use common::*;
use serde_json::Value;

const TOKEN: &str = "sandbox-api-token";
const BLKIO: &str = "/sys/fs/cgroup/blkio";

fn daemon_config(sb: &Sandbox) -> String {
    format!(
        "poll:\n  interval_s: 2\n  timeout_s: 10\nreconcile:\n  enabled: false\nceph:\n  conf: {}\n  timeout_s: 30\n",
        sb.conf().display()
    )
}

fn json(url: &str, args: &[&str]) -> Value {
    let mut full = args.to_vec();
    full.extend(["--format", "json"]);
    let (code, out, err) = cli(url, Some(TOKEN), &full);
    assert_eq!(code, 0, "{args:?}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out}"))
}

/// A blkio cgroup holding one process, with a write limit on one device;
/// the process goes back to the root group and the group is removed when
/// dropped.
struct Throttle {
    group: PathBuf,
    pid: String,
}

impl Throttle {
    fn writes(pid: &str, device: &str, bytes_per_sec: u64, name: &str) -> Throttle {
        let out = std::process::Command::new("lsblk").args(["-dno", "MAJ:MIN", device]).output().unwrap();
        let major_minor = String::from_utf8_lossy(&out.stdout).trim().to_string();
        assert!(major_minor.contains(':'), "lsblk {device}: {major_minor:?}");
        let group = Path::new(BLKIO).join(name);
        std::fs::create_dir(&group).unwrap_or_else(|e| panic!("mkdir {}: {e}", group.display()));
        let throttle = Throttle { group: group.clone(), pid: pid.to_string() };
        std::fs::write(group.join("blkio.throttle.write_bps_device"), format!("{major_minor} {bytes_per_sec}"))
            .unwrap();
        std::fs::write(group.join("cgroup.procs"), pid).unwrap();
        throttle
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        if let Err(e) = std::fs::write(Path::new(BLKIO).join("cgroup.procs"), &self.pid) {
            eprintln!("cannot move {} back to the root blkio group: {e}", self.pid);
        }
        if let Err(e) = std::fs::remove_dir(&self.group) {
            eprintln!("cannot remove {}: {e}", self.group.display());
        }
    }
}

#[test]
fn benchmarks_on_a_real_cluster() {
    let work = tempfile::Builder::new().prefix("osdkeeper-bench").tempdir().unwrap();
    let sb = Sandbox::start(&work.path().join("cluster"), &["--loop"]);
    let loops = sb.loops();
    assert_eq!(loops.len(), 6, "{loops:?}");
    let daemon = start_daemon(work.path(), &daemon_config(&sb), &[("OSDKEEPER_TOKEN", TOKEN)]);
    let url = daemon.url.as_str();

    // 1. One result per OSD, with numbers a disk can have.
    let first = json(url, &["bench", "osds", "--all", "--bytes", "52428800", "--block-size", "4194304"]);
    let first = first.as_array().unwrap();
    let ids: Vec<u64> = first.iter().map(|b| b["osd_id"].as_u64().unwrap()).collect();
    assert_eq!(ids, vec![0, 1, 2, 3, 4, 5], "{first:?}");
    for b in first {
        assert_eq!(b["state"], "done", "{b}");
        let rate = b["bytes_per_sec"].as_f64().unwrap();
        assert!(rate > 1e6 && rate < 1e11, "{b}");
        assert_eq!((b["bytes"].as_u64(), b["block_size"].as_u64()), (Some(52428800), Some(4194304)), "{b}");
        assert_eq!(b["device_class"], "hdd", "{b}");
        assert_eq!(b["size_bytes"], 10737418240u64, "{b}");
    }
    let history = json(url, &["bench", "osds", "--results"]);
    assert_eq!(history.as_array().unwrap().len(), 6, "one stored result per OSD: {history}");

    // 2. osd.5's writes to its disk throttled to 4 MB/s: it is the outlier,
    //    in `bench osds`, `osd ls --wide` and the event log.
    let slow = 5;
    let pid = std::fs::read_to_string(sb.dir.join(format!("run/osd.{slow}.pid"))).unwrap().trim().to_string();
    let device = loops.iter().find(|(id, _)| *id == slow).map(|(_, d)| d.clone()).unwrap();
    let group = format!("osdkeeper-test-{}", std::process::id());
    let throttle = Throttle::writes(&pid, &device, 4 << 20, &group);
    let second = json(url, &["bench", "osds", "--all", "--bytes", "20971520"]);
    drop(throttle);
    let flagged: Vec<(u64, String)> = second
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| Some((b["osd_id"].as_u64()?, b["outlier"].as_str()?.to_string())))
        .collect();
    assert_eq!(flagged.len(), 1, "only the throttled OSD is an outlier: {second}");
    assert_eq!(flagged[0].0, slow as u64, "{second}");
    assert!(
        flagged[0].1.starts_with("osd.5: ") && flagged[0].1.contains("the other 5 HDD OSDs of 10.7 GB do"),
        "{}",
        flagged[0].1
    );
    let (code, table, err) = cli(url, Some(TOKEN), &["osd", "ls", "--wide"]);
    assert_eq!(code, 0, "{err}");
    let row = table.lines().find(|l| l.starts_with("osd.5 ")).unwrap();
    assert!(row.contains("MB/s") && row.contains("the other 5 HDD OSDs"), "{table}");
    let events = json(url, &["events"]);
    assert!(
        events.as_array().unwrap().iter().any(|e| e["kind"] == "bench-outlier" && e["subject"] == "osd.5"),
        "{events}"
    );
}
