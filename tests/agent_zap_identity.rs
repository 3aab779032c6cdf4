//! `POST /v1/zap` names what it may destroy, and the agent refuses
//! anything else on real loop devices, writing nothing: another disk at
//! the path (its id), an LV of another OSD or of another cluster (the LVs'
//! tags, listed again before the zap), a raw disk whose BlueStore label
//! names another OSD. The refusal carries `identity_mismatch`, the code the
//! daemon acts on, and says what was found. Needs root and loop devices.

mod agent_common;

use agent_common::{bluestore_label, client, Agent, FakeCephVolume, LoopDevice, LABEL_CLUSTER, LABEL_UUID};
use osdkeeper::wire::agent::{AgentErrorBody, AgentErrorCode, ZapResult};
use serde_json::{json, Value};

const SIX_GIB: u64 = 6 * 1024 * 1024 * 1024;
const MAGIC: &[u8] = b"bluestore block device\n";
const OTHER_OSD: &str = "1d0c2e4a-9b8e-4d0c-9a57-0d3c4e1f6a99";
const OTHER_CLUSTER: &str = "6f2c0000-f864-4e02-9720-f37e52df0000";

async fn zap(agent: &Agent, body: Value) -> reqwest::Response {
    client().post(agent.url("/v1/zap")).json(&body).send().await.unwrap()
}

/// A refusal for what is on the disk: 409 with `identity_mismatch`, and its words.
async fn mismatch(agent: &Agent, body: Value) -> String {
    let resp = zap(agent, body).await;
    assert_eq!(resp.status(), 409, "{}", agent.log());
    let e: AgentErrorBody = resp.json().await.unwrap();
    assert_eq!(e.code, Some(AgentErrorCode::IdentityMismatch), "{}", e.error);
    e.error
}

/// The disk as ceph-volume would list it, with its id and these LVs.
fn listed(path: &str, device_id: &str, lvs: Value) -> Value {
    let lvm = lvs.as_array().is_some_and(|l| !l.is_empty());
    json!([{
        "path": path, "available": false, "ceph_device": lvm, "lsm_data": {}, "device_id": device_id,
        "rejected_reasons": if lvm { json!(["LVM detected"]) } else { json!(["Has BlueStore device label"]) },
        "sys_api": {"type": "disk", "partitions": {}, "size": SIX_GIB as f64, "rotational": "1",
                    "human_readable_size": "6.00 GB", "path": path},
        "lvs": lvs
    }])
}

fn block_lv(osd_id: &str, osd_fsid: &str, cluster_fsid: &str) -> Value {
    json!([{"name": "osd-block-x", "osd_id": osd_id, "cluster_name": "ceph", "type": "block",
            "osd_fsid": osd_fsid, "cluster_fsid": cluster_fsid, "osdspec_affinity": ""}])
}

#[tokio::test]
async fn a_zap_naming_another_disk_is_refused_with_what_is_there() {
    let dev = LoopDevice::new(SIX_GIB);
    dev.write_head(&bluestore_label(9124, SIX_GIB));
    let cv = FakeCephVolume::new();
    cv.set_inventory(&listed(&dev.path, "QEMU_HARDDISK_ZAPTEST-A", json!([])));
    let agent = Agent::start(&["--ceph-volume", &cv.program()], &[]);
    let named = |id: &str| {
        json!({"path": dev.path, "force": true, "reason": "removal of osd.9124 (test)", "device_id": id,
               "osd_fsids": [LABEL_UUID], "cluster_fsid": LABEL_CLUSTER})
    };
    let error = mismatch(&agent, named("QEMU_HARDDISK_ZAPTEST-B")).await;
    assert_eq!(
        error,
        format!(
            "refusing to zap {}: the disk there is \"QEMU_HARDDISK_ZAPTEST-A\", not \"QEMU_HARDDISK_ZAPTEST-B\"; \
             nothing was wiped",
            dev.path
        )
    );
    assert!(dev.read_at(0, MAGIC.len()) == MAGIC, "the label is still there");
    // The disk named, with only the OSD named on it: wiped.
    let resp = zap(&agent, named("QEMU_HARDDISK_ZAPTEST-A")).await;
    assert_eq!(resp.status(), 200, "{}", agent.log());
    let result: ZapResult = resp.json().await.unwrap();
    let checked = format!("checked under the claim that {} is the disk named, with nothing else's on it", dev.path);
    assert!(result.steps.contains(&checked), "{:#?}", result.steps);
    assert!(dev.read_at(0, 4096).iter().all(|b| *b == 0));
}

#[tokio::test]
async fn a_zap_of_a_disk_with_lvs_of_another_osd_or_cluster_is_refused_before_ceph_volume_runs() {
    let dev = LoopDevice::new(SIX_GIB);
    dev.write_head(b"LABELONE\x01\x00\x00\x00\x00\x00\x00\x00LVM2 001");
    let cv = FakeCephVolume::new();
    let agent = Agent::start(&["--ceph-volume", &cv.program()], &[]);
    let ours = json!({"path": dev.path, "force": true, "device_id": "", "osd_fsids": [LABEL_UUID],
                      "cluster_fsid": LABEL_CLUSTER});
    // A new OSD's LV (another fsid, the same id), put there since.
    cv.set_inventory(&listed(&dev.path, "", block_lv("9125", OTHER_OSD, LABEL_CLUSTER)));
    let error = mismatch(&agent, ours.clone()).await;
    assert_eq!(
        error,
        format!(
            "refusing to zap {}: it holds the block LV of osd.9125 of OSD fsid {OTHER_OSD}, which the zap does not \
             name; nothing was wiped",
            dev.path
        )
    );
    // Our OSD's fsid, but another cluster's LV (a disk from another cluster).
    cv.set_inventory(&listed(&dev.path, "", block_lv("9125", LABEL_UUID, OTHER_CLUSTER)));
    let error = mismatch(&agent, ours.clone()).await;
    assert!(error.contains(&format!("of another cluster ({OTHER_CLUSTER}, not {LABEL_CLUSTER})")), "{error}");
    assert!(!cv.calls().iter().any(|c| c.contains("lvm zap")), "ceph-volume was not run: {:?}", cv.calls());
    assert_eq!(&dev.read_at(0, 8), b"LABELONE", "nothing was written");
    // The OSD named, of the cluster named: its LVs go, then the disk.
    cv.set_inventory(&listed(&dev.path, "", block_lv("9125", LABEL_UUID, LABEL_CLUSTER)));
    let resp = zap(&agent, ours).await;
    assert_eq!(resp.status(), 200, "{}", agent.log());
    assert!(cv.calls().iter().any(|c| c.contains("lvm zap --destroy")), "{:?}", cv.calls());
    assert!(dev.read_at(0, 4096).iter().all(|b| *b == 0));
}

/// A raw OSD's disk without a serial is told by its BlueStore label's OSD
/// uuid, read again through the exclusive claim the wipe is made through.
#[tokio::test]
async fn a_raw_disk_without_a_serial_is_told_by_its_label() {
    let dev = LoopDevice::new(SIX_GIB);
    dev.write_head(&bluestore_label(9126, SIX_GIB));
    let agent = Agent::start(&["--devices", &dev.path], &[]);
    let error =
        mismatch(&agent, json!({"path": dev.path, "force": true, "device_id": "", "osd_fsids": [OTHER_OSD]})).await;
    assert_eq!(
        error,
        format!(
            "refusing to zap {}: it carries the BlueStore label of osd.9126, OSD fsid {LABEL_UUID}, which the zap \
             does not name; nothing was wiped",
            dev.path
        )
    );
    assert!(dev.read_at(0, MAGIC.len()) == MAGIC, "the label is still there");
    let named = json!({"path": dev.path, "force": true, "device_id": "", "osd_fsids": [LABEL_UUID]});
    let resp = zap(&agent, named).await;
    assert_eq!(resp.status(), 200, "{}", agent.log());
    assert!(dev.read_at(0, 4096).iter().all(|b| *b == 0));
}
