//! `POST /v1/replace-header` on a real loop device: the header is written
//! on a blank disk and read back by ceph-volume 20.2's own reader (its
//! Python code from the tentacle root, `testbed/ceph-sandbox/release-root.sh`),
//! writing it again changes nothing, it is erased to zeros, and a disk that
//! is not blank or not the one named is refused with nothing written. The
//! disk's id comes from a fake ceph-volume inventory (a loop device has
//! none). Needs root and loop devices; the device is detached by path on
//! drop.

mod agent_common;

use std::process::Command;

use agent_common::{bluestore_label, client, Agent, FakeCephVolume, LoopDevice};
use osdkeeper::wire::agent::{AgentErrorBody, ReplaceHeaderResult};
use serde_json::{json, Value};

const SIX_GIB: u64 = 6 * 1024 * 1024 * 1024;
const HEADER: &[u8] = b"CEPH_DEVICE_BEING_REPLACED";
const DISK_ID: &str = "QEMU_HARDDISK_osdk-hdd-7";

/// The device as ceph-volume lists a blank disk.
fn blank_disk(path: &str) -> Value {
    json!([{
        "path": path, "available": true, "ceph_device": false, "lsm_data": {}, "device_id": DISK_ID,
        "rejected_reasons": [], "lvs": [],
        "sys_api": {"type": "disk", "partitions": {}, "size": SIX_GIB as f64, "rotational": "1",
                    "human_readable_size": "6.00 GB", "path": path},
    }])
}

async fn header(agent: &Agent, body: Value) -> reqwest::Response {
    client().post(agent.url("/v1/replace-header")).json(&body).send().await.unwrap()
}

async fn refused(resp: reqwest::Response) -> (u16, String) {
    let status = resp.status().as_u16();
    let e: AgentErrorBody = resp.json().await.expect("refusals are AgentErrorBody");
    (status, e.error)
}

/// What ceph-volume 20.2's `Device.is_being_replaced` says of the device:
/// its own `disk._dd_read(path, 26) == BEING_REPLACED_HEADER`.
fn ceph_volume_says_being_replaced(path: &str) -> bool {
    let root = Command::new("testbed/ceph-sandbox/release-root.sh").arg("tentacle").output().expect("release-root.sh");
    assert!(root.status.success(), "release-root.sh tentacle: {}", String::from_utf8_lossy(&root.stderr));
    let root = String::from_utf8(root.stdout).unwrap().trim().to_string();
    let code = format!(
        "from ceph_volume.util import disk\nfrom ceph_volume import BEING_REPLACED_HEADER\n\
         print(disk._dd_read({path:?}, 26) == BEING_REPLACED_HEADER)"
    );
    let out = Command::new("/usr/bin/python3")
        .env("PYTHONPATH", format!("{root}/usr/lib/python3/dist-packages"))
        .args(["-c", &code])
        .output()
        .expect("/usr/bin/python3");
    let said = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(out.status.success(), "/usr/bin/python3 -c {code:?}: {}", String::from_utf8_lossy(&out.stderr));
    match said.as_str() {
        "True" => true,
        "False" => false,
        other => panic!("ceph-volume's reader printed {other:?}"),
    }
}

#[tokio::test]
async fn the_header_is_written_on_a_blank_disk_read_by_ceph_volume_and_erased() {
    let dev = LoopDevice::new(SIX_GIB);
    let cv = FakeCephVolume::new();
    cv.set_inventory(&blank_disk(&dev.path));
    let agent = Agent::start(&["--ceph-volume", &cv.program(), "--host-name", "header-host"], &[]);
    let mark = json!({"path": dev.path, "mark": true, "device_id": DISK_ID, "reason": "test"});
    assert!(!ceph_volume_says_being_replaced(&dev.path));

    let resp = header(&agent, mark.clone()).await;
    assert_eq!(resp.status(), 200, "{}", agent.log());
    let r: ReplaceHeaderResult = resp.json().await.unwrap();
    assert!(r.marked && r.changed, "{r:?}");
    assert_eq!(r.steps[0], format!("held {} exclusively (O_EXCL) and found it blank", dev.path));
    assert_eq!(dev.read_at(0, 26), HEADER);
    assert!(dev.read_at(26, 4096).iter().all(|b| *b == 0), "nothing past the header");
    assert!(ceph_volume_says_being_replaced(&dev.path), "ceph-volume 20.2 reads it");

    let again: ReplaceHeaderResult = header(&agent, mark.clone()).await.json().await.unwrap();
    assert!(again.marked && !again.changed, "{again:?}");

    let erase = json!({"path": dev.path, "mark": false, "device_id": DISK_ID});
    let r: ReplaceHeaderResult = header(&agent, erase.clone()).await.json().await.unwrap();
    assert!(!r.marked && r.changed, "{r:?}");
    assert!(dev.read_at(0, 4096).iter().all(|b| *b == 0));
    assert!(!ceph_volume_says_being_replaced(&dev.path));
    let r: ReplaceHeaderResult = header(&agent, erase).await.json().await.unwrap();
    assert!(!r.changed, "nothing to erase: {r:?}");
}

#[tokio::test]
async fn another_disk_or_one_not_blank_is_refused_with_nothing_written() {
    let dev = LoopDevice::new(SIX_GIB);
    let cv = FakeCephVolume::new();
    cv.set_inventory(&blank_disk(&dev.path));
    let agent = Agent::start(&["--ceph-volume", &cv.program()], &[]);

    let other = json!({"path": dev.path, "mark": true, "device_id": "QEMU_HARDDISK_osdk-ssd-9"});
    let (status, error) = refused(header(&agent, other).await).await;
    assert_eq!(status, 409);
    assert_eq!(
        error,
        format!(
            "refusing to mark {}: the disk there now is \"{DISK_ID}\", not \"QEMU_HARDDISK_osdk-ssd-9\"; nothing was \
             written",
            dev.path
        )
    );
    let (status, error) = refused(header(&agent, json!({"path": dev.path, "mark": true, "device_id": ""})).await).await;
    assert_eq!(
        (status, error.as_str()),
        (400, format!("device_id is required: the id of the disk the header is meant for ({})", dev.path).as_str())
    );

    // A purged OSD's label is still on it.
    let label = bluestore_label(9140, SIX_GIB);
    dev.write_head(&label);
    let mark = json!({"path": dev.path, "mark": true, "device_id": DISK_ID});
    let (status, error) = refused(header(&agent, mark.clone()).await).await;
    assert_eq!(status, 409);
    assert!(
        error.starts_with(&format!(
            "refusing to mark {}: it is not blank: it has a BlueStore label (osd.9140)",
            dev.path
        )),
        "{error}"
    );
    assert_eq!(dev.read_at(0, label.len()), label, "unchanged");
    // Erasing leaves a disk without the header alone, whatever is on it.
    let erase = json!({"path": dev.path, "mark": false, "device_id": DISK_ID});
    let resp = header(&agent, erase).await;
    assert_eq!(resp.status(), 200, "{}", agent.log());
    let r: ReplaceHeaderResult = resp.json().await.unwrap();
    assert!(!r.changed && !r.marked, "{r:?}");
    assert_eq!(r.steps, [format!("{} has no header: nothing to erase", dev.path)]);
    assert_eq!(dev.read_at(0, label.len()), label, "unchanged");

    // Something blkid does not know, at the start.
    dev.write_head(&vec![0u8; label.len()]);
    dev.write_head(b"not a header");
    let (status, error) = refused(header(&agent, mark).await).await;
    assert_eq!(status, 409);
    assert!(error.contains("its first bytes are neither zeros nor the header"), "{error}");
    assert_eq!(dev.read_at(0, 12), b"not a header");
}
