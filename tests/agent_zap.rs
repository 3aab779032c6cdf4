//! `POST /v1/zap` on real loop devices: refused while the device is held
//! exclusively (as a running ceph-osd or a mount holds it) or while the
//! OSD its label or LVM tags name runs, then a wipe of both ends that
//! blkid no longer recognises, after which the device is available again.
//! Needs root and loop devices; devices are detached by path, fake
//! ceph-osd processes killed by pid, on drop.

mod agent_common;
#[path = "common/mounts.rs"]
mod mounts;

use std::path::{Path, PathBuf};
use std::process::Command;

use agent_common::{bluestore_label, client, Agent, FakeCephVolume, FakeOsd, LoopDevice};
use mounts::tmpfs_layers;
use osdkeeper::agent_server::disks::exclusive::{ExclusiveDevice, ExclusiveError};
use osdkeeper::wire::agent::{AgentErrorBody, AgentErrorCode, InventoryReport, InventorySource, ZapResult};
use serde_json::{json, Value};

const SIX_GIB: u64 = 6 * 1024 * 1024 * 1024;
const TEN_MIB: usize = 10 * 1024 * 1024;
const MAGIC: &[u8] = b"bluestore block device\n";

async fn zap(agent: &Agent, body: Value) -> reqwest::Response {
    client().post(agent.url("/v1/zap")).json(&body).send().await.unwrap()
}

async fn refused(resp: reqwest::Response) -> (u16, String) {
    let (status, error, _) = refused_with_code(resp).await;
    (status, error)
}

/// A refusal with its code, which every error answer carries.
async fn refused_with_code(resp: reqwest::Response) -> (u16, String, AgentErrorCode) {
    let status = resp.status().as_u16();
    let e: AgentErrorBody = resp.json().await.expect("refusals are AgentErrorBody");
    let code = e.code.unwrap_or_else(|| panic!("no code with {status} {}", e.error));
    (status, e.error, code)
}

async fn inventory(agent: &Agent, query: &str) -> InventoryReport {
    let resp = client().get(agent.url(&format!("/v1/inventory{query}"))).send().await.unwrap();
    assert_eq!(resp.status(), 200, "{}", agent.log());
    resp.json().await.unwrap()
}

fn blkid(path: &str) -> (i32, String) {
    let out = Command::new("blkid").args(["-c", "/dev/null", "-p", path]).output().expect("run blkid");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
}

#[tokio::test]
async fn refused_while_held_then_wiped_at_both_ends() {
    let dev = LoopDevice::new(SIX_GIB);
    let agent = Agent::start(&["--devices", &dev.path, "--host-name", "zap-host"], &[]);
    dev.write_head(&bluestore_label(9120, SIX_GIB));
    let tail = b"something at the end of the disk";
    dev.write_at(SIX_GIB - 4096, tail);
    // A copy of a label where Tentacle keeps one (a real one: osd.2's at 1 GiB).
    let copy = include_bytes!("fixtures/ceph_volume/bluestore_label_tentacle_20.2.4_copy_at_1GiB.bin");
    dev.write_at(1 << 30, copy);
    let before = inventory(&agent, "").await;
    assert_eq!(before.source, InventorySource::Kernel);
    assert_eq!(before.devices[0]["available"], false);
    let (code, found) = blkid(&dev.path);
    assert_eq!(code, 0, "blkid sees the label: {found}");
    assert!(found.contains("ceph_bluestore"), "{found}");

    // Held as a running OSD holds it: refused, and nothing is written.
    let held = dev.hold_exclusively();
    let body = json!({"path": dev.path, "force": true, "reason": "removal of osd.9120 (test)"});
    let (status, error, code) = refused_with_code(zap(&agent, body.clone()).await).await;
    assert_eq!(code, AgentErrorCode::Conflict, "a busy device is a refusal, not a busy agent: {error}");
    assert_eq!(status, 409);
    assert!(error.contains("busy"), "{error}");
    assert!(error.starts_with(&format!("refusing to zap {}: it is busy", dev.path)), "{error}");
    assert!(error.contains(&format!("pid {}", std::process::id())), "names this test as the holder: {error}");
    assert!(dev.read_at(0, MAGIC.len()) == MAGIC, "the label is still there");
    assert_eq!(dev.read_at(SIX_GIB - 4096, tail.len()), tail);
    // The same check the agent makes on LVs stacked on a disk.
    let probe = ExclusiveDevice::probe(&dev.path);
    assert!(matches!(probe, Err(ExclusiveError::Busy { .. })), "{probe:?}");
    drop(held);
    ExclusiveDevice::probe(&dev.path).expect("free once released");

    let resp = zap(&agent, body).await;
    assert_eq!(resp.status(), 200, "{}", agent.log());
    let result: ZapResult = resp.json().await.unwrap();
    assert_eq!(result.path, dev.path);
    let tail_offset = SIX_GIB - TEN_MIB as u64;
    assert_eq!(
        result.steps,
        [
            format!("held {} exclusively (O_EXCL)", dev.path),
            "found the BlueStore label of osd.9120, whose ceph-osd does not run here".to_string(),
            "zeroed 10 MiB at offset 0".to_string(),
            "zeroed 4096 bytes at offset 1073741824 (where Ceph 19.2+ keeps a copy of the BlueStore label)".to_string(),
            format!("zeroed 10 MiB at offset {tail_offset}"),
            "flushed the writes to the device (fsync)".to_string(),
            format!("released {}", dev.path),
        ]
    );
    let (code, found) = blkid(&dev.path);
    assert_eq!((code, found.as_str()), (2, ""), "blkid -p finds nothing");
    assert!(dev.read_at(0, TEN_MIB).iter().all(|b| *b == 0), "the first 10 MiB are zero");
    assert!(dev.read_at(tail_offset, TEN_MIB).iter().all(|b| *b == 0), "the last 10 MiB are zero");
    assert!(dev.read_at(1 << 30, 4096).iter().all(|b| *b == 0), "the label copy is zero");

    let after = inventory(&agent, "").await;
    assert_eq!(after.devices[0]["available"], true, "{:#}", after.devices[0]);
    assert_eq!(after.devices[0]["rejected_reasons"], json!([]));
    let log = agent.log();
    assert!(log.contains("removal of osd.9120 (test)") && log.contains("zapped"), "{log}");
}

#[tokio::test]
async fn refused_while_the_osd_of_its_label_runs() {
    let dev = LoopDevice::new(SIX_GIB);
    dev.write_head(&bluestore_label(9121, SIX_GIB));
    let osd = FakeOsd::start(9121);
    let agent = Agent::start(&["--devices", &dev.path], &[]);
    let body = json!({"path": dev.path, "force": true});
    // The fake holds no device, so the exclusive open succeeds; the label
    // still names a running daemon.
    let (status, error) = refused(zap(&agent, body.clone()).await).await;
    assert_eq!(status, 409, "{error}");
    assert_eq!(
        error,
        format!(
            "refusing to zap {}: osd.9121 has its data on it and its ceph-osd runs on this host (pids {}); \
             stop the OSD first",
            dev.path,
            osd.pid()
        )
    );
    assert!(dev.read_at(0, MAGIC.len()) == MAGIC, "the label is still there");
    drop(osd);
    let resp = zap(&agent, body).await;
    assert_eq!(resp.status(), 200, "{}", agent.log());
    assert!(dev.read_at(0, 4096).iter().all(|b| *b == 0));
}

/// Tmpfs mounts this test made, unmounted (every layer) by their paths on drop.
struct TmpfsMounts(Vec<PathBuf>);

impl TmpfsMounts {
    /// What `ceph-volume raw prepare` and `activate` leave on a host: a
    /// tmpfs on the data dir with `whoami` and a `block` link to the device.
    fn data_dir(&mut self, dir: &Path, device: &str, osd_id: u32) {
        std::fs::create_dir_all(dir).unwrap();
        let out = Command::new("mount").args(["-t", "tmpfs", "tmpfs"]).arg(dir).output().expect("run mount");
        assert!(out.status.success(), "mount -t tmpfs: {}", String::from_utf8_lossy(&out.stderr));
        self.0.push(dir.to_path_buf());
        std::os::unix::fs::symlink(device, dir.join("block")).unwrap();
        std::fs::write(dir.join("whoami"), format!("{osd_id}\n")).unwrap();
    }
}

impl Drop for TmpfsMounts {
    fn drop(&mut self) {
        for dir in &self.0 {
            while tmpfs_layers(dir) > 0 {
                if !Command::new("umount").arg(dir).status().is_ok_and(|s| s.success()) {
                    eprintln!("could not unmount {}", dir.display());
                    break;
                }
            }
        }
    }
}

#[tokio::test]
async fn a_zap_unmounts_the_stale_tmpfs_data_dirs_of_its_device_and_no_others() {
    let dev = LoopDevice::new(SIX_GIB);
    let root = tempfile::tempdir().unwrap();
    let mut mounts = TmpfsMounts(Vec::new());
    // osd.9140 made twice on the device (a --replace): prepare stacked a
    // second tmpfs over the first.
    let ours = root.path().join("ceph-9140");
    mounts.data_dir(&ours, &dev.path, 9140);
    mounts.data_dir(&ours, &dev.path, 9140);
    let theirs = root.path().join("ceph-9141");
    mounts.data_dir(&theirs, "/dev/osdkeeper-test-elsewhere", 9141);
    dev.write_head(&bluestore_label(9140, SIX_GIB));
    let data_root = root.path().to_string_lossy().into_owned();
    let agent = Agent::start(&["--devices", &dev.path, "--osd-data-dir", &data_root], &[]);
    let body = json!({"path": dev.path, "force": true, "reason": "removal of osd.9140 (test)"});

    // A data dir of the device whose OSD runs: refused before anything is written.
    let osd = FakeOsd::start(9140);
    let (status, error) = refused(zap(&agent, body.clone()).await).await;
    assert_eq!(status, 409, "{error}");
    assert!(
        error.contains(&format!("osd.9140 has its data on it and its ceph-osd runs on this host (pids {})", osd.pid())),
        "{error}"
    );
    assert!(dev.read_at(0, MAGIC.len()) == MAGIC, "the label is still there");
    assert_eq!(tmpfs_layers(&ours), 2);
    drop(osd);

    let resp = zap(&agent, body.clone()).await;
    assert_eq!(resp.status(), 200, "{}", agent.log());
    let result: ZapResult = resp.json().await.unwrap();
    let shown = ours.display();
    let tail = &result.steps[result.steps.len() - 2..];
    assert_eq!(
        tail,
        [
            format!("unmounted the stale tmpfs data dir {shown} of osd.9140 (2 layers)"),
            format!("removed the empty data dir {shown}"),
        ],
        "{:#?}",
        result.steps
    );
    assert_eq!(tmpfs_layers(&ours), 0);
    assert!(!ours.exists());
    assert_eq!(tmpfs_layers(&theirs), 1, "another device's data dir stays mounted");
    assert!(theirs.join("whoami").exists());

    // Safe to repeat: the device is blank and nothing is left to release.
    let resp = zap(&agent, body).await;
    assert_eq!(resp.status(), 200, "{}", agent.log());
    let again: ZapResult = resp.json().await.unwrap();
    assert!(again.steps.iter().all(|s| !s.contains("data dir")), "{:#?}", again.steps);
    assert_eq!(tmpfs_layers(&theirs), 1);
}

/// The device as ceph-volume would list it with an OSD's LV on it.
fn lvm_device(path: &str, osd_id: &str) -> Value {
    json!([{
        "path": path, "available": false, "ceph_device": true, "lsm_data": {}, "device_id": "",
        "rejected_reasons": ["Insufficient space (<10 extents) on vgs", "LVM detected"],
        "sys_api": {"type": "disk", "partitions": {}, "size": SIX_GIB as f64, "rotational": "1",
                    "human_readable_size": "6.00 GB", "path": path},
        "lvs": [{"name": "osd-block-1d0c", "osd_id": osd_id, "cluster_name": "ceph", "type": "block",
                 "osd_fsid": "1d0c", "cluster_fsid": "6f2c", "osdspec_affinity": "", "block_uuid": "x"}]
    }])
}

#[tokio::test]
async fn lvm_devices_go_through_a_fake_ceph_volume_lvm_zap_first_up_to_the_process_boundary() {
    let dev = LoopDevice::new(SIX_GIB);
    dev.write_head(b"LABELONE\x01\x00\x00\x00\x00\x00\x00\x00LVM2 001");
    let cv = FakeCephVolume::new();
    cv.set_inventory(&lvm_device(&dev.path, "9122"));
    let osd = FakeOsd::start(9122);
    // No --devices: the host's inventory is what ceph-volume lists.
    let agent = Agent::start(&["--ceph-volume", &cv.program()], &[]);
    assert_eq!(inventory(&agent, "").await.source, InventorySource::CephVolume);
    let body = json!({"path": dev.path, "force": true, "reason": "device zap (test)"});

    let (status, error) = refused(zap(&agent, body.clone()).await).await;
    assert_eq!(status, 409);
    assert!(error.contains("osd.9122 has its data on it and its ceph-osd runs on this host"), "{error}");
    assert!(!cv.calls().iter().any(|c| c.contains("lvm zap")), "ceph-volume was not run: {:?}", cv.calls());
    drop(osd);

    cv.fail_zaps();
    let (status, error) = refused(zap(&agent, body.clone()).await).await;
    assert_eq!(status, 500);
    assert!(
        error.ends_with("failed with exit status 1 (--> RuntimeError: Unable to zap); nothing was wiped"),
        "{error}"
    );
    assert_eq!(&dev.read_at(0, 8), b"LABELONE");
    std::fs::remove_file(cv.dir.path().join("fail-zap")).unwrap();

    let resp = zap(&agent, body).await;
    assert_eq!(resp.status(), 200, "{}", agent.log());
    let result: ZapResult = resp.json().await.unwrap();
    assert_eq!(
        result.steps[0],
        format!("ran CEPH_VOLUME_ALLOW_LOOP_DEVICES=1 {} lvm zap --destroy {}", cv.program(), dev.path)
    );
    assert_eq!(result.steps[1], format!("held {} exclusively (O_EXCL)", dev.path));
    let zaps: Vec<String> = cv.calls().into_iter().filter(|c| c.contains("lvm zap")).collect();
    assert_eq!(zaps.len(), 2, "{zaps:?}");
    assert_eq!(zaps[1], format!("args=lvm zap --destroy {} affinity= loops=1", dev.path));
    assert!(dev.read_at(0, TEN_MIB).iter().all(|b| *b == 0));
}

#[tokio::test]
async fn refusals_on_a_host_agent() {
    let dev = LoopDevice::new(SIX_GIB);
    let agent = Agent::start(&["--devices", &format!("{},/dev/loop999", dev.path)], &[]);
    let (status, error) = refused(zap(&agent, json!({"path": dev.path, "force": false})).await).await;
    assert_eq!(status, 400);
    assert!(error.contains("must pass force: true to PERMANENTLY ERASE DEVICE DATA"), "{error}");
    let (status, error) = refused(zap(&agent, json!({"path": "/dev/sda", "force": true})).await).await;
    assert_eq!((status, error.as_str()), (403, "/dev/sda is not among the devices this agent may touch (--devices)"));
    let (status, error) = refused(zap(&agent, json!({"path": "/dev/loop999", "force": true})).await).await;
    assert_eq!((status, error.as_str()), (404, "/dev/loop999 is not a device in this host's current inventory"));
    let (status, _) = refused(zap(&agent, json!({"path": "/dev/../dev/sda", "force": true})).await).await;
    assert_eq!(status, 400);
    let (status, _) = refused(zap(&agent, json!({"path": dev.path})).await).await;
    assert_eq!(status, 422, "force is required in the body");

    // The named loop device is what cephadm would see.
    let report = inventory(&agent, "?filter_for_batch=true").await;
    let paths: Vec<&str> = report.devices.iter().map(|d| d["path"].as_str().unwrap()).collect();
    assert_eq!(paths, [dev.path.as_str()]);
}

#[tokio::test]
async fn one_disk_command_at_a_time() {
    let dev = LoopDevice::new(SIX_GIB);
    let cv = FakeCephVolume::new();
    // It serves from the agent's device, as a real OSD would: the agent may stop it.
    let osd = FakeOsd::start_holding(9123, Some(&dev.path));
    let agent = Agent::start(
        &["--devices", &dev.path, "--ceph-volume", &cv.program(), "--osd-stop-command", &osd.stop_command()],
        &[],
    );
    let c = client();
    let slow = c
        .post(agent.url("/v1/ceph-volume"))
        .json(&json!({"args": ["lvm", "batch", "--no-auto", &dev.path, "--yes"], "osdspec_affinity": "slow"}))
        .send();
    let while_it_runs = async {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !cv.calls().iter().any(|c| c.contains("affinity=slow")) {
            assert!(std::time::Instant::now() < deadline, "the slow command never started: {}", agent.log());
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        let zapped = refused_with_code(zap(&agent, json!({"path": dev.path, "force": true})).await).await;
        let stopped = refused_with_code(
            c.post(agent.url("/v1/osd/9123/stop")).json(&serde_json::json!({})).send().await.unwrap(),
        )
        .await;
        let idle = c.post(agent.url("/v1/osd/9124/stop")).json(&serde_json::json!({})).send().await.unwrap();
        (zapped, stopped, idle.status().as_u16())
    };
    let (first, (zapped, stopped, idle)) = tokio::join!(slow, while_it_runs);
    assert_eq!(first.unwrap().status(), 200);
    assert_eq!(zapped.0, 409);
    assert!(zapped.1.contains("still running"), "{}", zapped.1);
    assert_eq!(zapped.2, AgentErrorCode::Busy, "the daemon knows it by its code");
    assert_eq!(stopped.0, 409);
    assert!(stopped.1.contains("still running"), "{}", stopped.1);
    assert_eq!(stopped.2, AgentErrorCode::Busy);
    assert_eq!(idle, 200, "a stopped OSD needs no lock");
    assert!(osd.alive());
    let resp = c.post(agent.url("/v1/osd/9123/stop")).json(&serde_json::json!({})).send().await.unwrap();
    assert_eq!(resp.status(), 200, "{}", agent.log());
    assert!(osd.exited_after_stop());
}
