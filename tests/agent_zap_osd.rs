//! `POST /v1/zap-osd` over HTTP on a real agent limited to some devices
//! (`--devices`): an OSD with an LV on any other device is refused before
//! ceph-volume is asked to zap anything; one whose LVs are all on the
//! agent's devices is zapped. ceph-volume is a stand-in (its `lvm list`
//! and `lvm zap`); the devices are names only, so no root is needed. Ids
//! are in the 9000s, which no sandbox OSD on this machine has.

mod agent_common;

use agent_common::{client, Agent, FakeCephVolume};
use osdkeeper::wire::agent::{AgentErrorBody, ZapOsdResult};
use serde_json::{json, Value};

const CLUSTER: &str = "75757249-f864-4e02-9720-f37e52df334e";

/// One LV as `ceph-volume lvm list --format json` shows it.
fn lv(kind: &str, id: u32, fsid: &str, device: &str) -> Value {
    json!({
        "type": kind,
        "devices": [device],
        "path": format!("/dev/ceph-{id}/osd-{kind}-{fsid}"),
        "tags": {"ceph.osd_id": id.to_string(), "ceph.osd_fsid": fsid, "ceph.cluster_fsid": CLUSTER, "ceph.type": kind}
    })
}

fn agent(cv: &FakeCephVolume, devices: &[&str]) -> Agent {
    let program = cv.program();
    let mut args = vec!["--host-name", "zap-osd-host", "--ceph-volume", &program, "--boot-activation-window-s", "0"];
    // Not systemd's units: this machine's are not the test's to change.
    args.extend(["--osd-stop-command", "/bin/true {id}", "--osd-start-command", "/bin/true {id}"]);
    for d in devices {
        args.extend(["--devices", d]);
    }
    Agent::start(&args, &[])
}

async fn zap_osd(agent: &Agent, id: u32, fsid: &str) -> reqwest::Response {
    let body = json!({"osd_id": id, "osd_fsid": fsid, "force": true, "reason": "test"});
    client().post(agent.url("/v1/zap-osd")).json(&body).send().await.unwrap()
}

#[tokio::test]
async fn an_osd_with_an_lv_outside_the_agents_devices_is_not_zapped() {
    let cv = FakeCephVolume::new();
    let (outside, inside) = ("9e1f0000-0000-4000-8000-000000009301", "9e1f0000-0000-4000-8000-000000009302");
    cv.set_lvm_list(&json!({
        // osd.9301: its block on the agent's device, its DB on another one.
        "9301": [lv("block", 9301, outside, "/dev/sdzz"), lv("db", 9301, outside, "/dev/sdzy")],
        "9302": [lv("block", 9302, inside, "/dev/sdzz")],
    }));
    let agent = agent(&cv, &["/dev/sdzz"]);

    let resp = zap_osd(&agent, 9301, outside).await;
    let status = resp.status().as_u16();
    let error: AgentErrorBody = resp.json().await.unwrap();
    assert_eq!(status, 403, "{}\n{}", error.error, agent.log());
    assert!(
        error.error.contains("osd.9301") && error.error.contains("/dev/sdzy") && error.error.contains("--devices"),
        "says which OSD, which device and why: {}",
        error.error
    );
    assert!(!error.error.contains("/dev/sdzz"), "names only the devices outside: {}", error.error);
    assert!(!cv.calls().iter().any(|c| c.contains("lvm zap")), "nothing zapped: {:?}", cv.calls());

    // All of an OSD's LVs on the agent's devices: zapped.
    let resp = zap_osd(&agent, 9302, inside).await;
    assert_eq!(resp.status(), 200, "{}", agent.log());
    let done: ZapOsdResult = resp.json().await.unwrap();
    assert_eq!(done.devices, ["/dev/sdzz"]);
    let zaps: Vec<String> = cv.calls().into_iter().filter(|c| c.contains("lvm zap")).collect();
    assert_eq!(zaps.len(), 1, "{zaps:?}");
    assert!(zaps[0].contains(&format!("--osd-id 9302 --osd-fsid {inside}")), "{zaps:?}");
}

// Without --devices the agent may touch every device of its host: the
// same OSD is zapped (the limit above is --devices', not a refusal of DBs).
#[tokio::test]
async fn an_agent_without_devices_zaps_the_osd_on_every_device() {
    let cv = FakeCephVolume::new();
    let fsid = "9e1f0000-0000-4000-8000-000000009303";
    cv.set_lvm_list(&json!({"9303": [lv("block", 9303, fsid, "/dev/sdzz"), lv("db", 9303, fsid, "/dev/sdzy")]}));
    let agent = agent(&cv, &[]);
    let resp = zap_osd(&agent, 9303, fsid).await;
    assert_eq!(resp.status(), 200, "{}", agent.log());
    let done: ZapOsdResult = resp.json().await.unwrap();
    assert_eq!(done.devices, ["/dev/sdzy", "/dev/sdzz"]);
}
