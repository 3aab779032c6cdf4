//! The agent on a real loop device named in `--devices` (no inventory file,
//! so the host is scanned): it reports exactly that device, sees a BlueStore
//! label written to it, and runs ceph-volume (a stand-in) only on it.
//! Needs root and loop devices; the devices are detached by path on drop.

mod agent_common;

use std::time::Duration;

use agent_common::{client, Agent, FakeCephVolume, LoopDevice};
use osdkeeper::wire::agent::{AgentErrorBody, AgentErrorCode, CommandResult, InventoryReport, InventorySource};
use osdkeeper::wire::ceph_volume::parse_device_list;
use serde_json::json;

const SIX_GIB: u64 = 6 * 1024 * 1024 * 1024;

async fn inventory(agent: &Agent) -> InventoryReport {
    let resp = client().get(agent.url("/v1/inventory")).send().await.unwrap();
    assert_eq!(resp.status(), 200, "{}", agent.log());
    resp.json().await.unwrap()
}

async fn post(agent: &Agent, body: serde_json::Value) -> reqwest::Response {
    client().post(agent.url("/v1/ceph-volume")).json(&body).send().await.unwrap()
}

#[tokio::test]
async fn reports_a_loop_device_and_its_bluestore_label() {
    let dev = LoopDevice::new(SIX_GIB);
    let cv = FakeCephVolume::new();
    let agent =
        Agent::start(&["--devices", &dev.path, "--ceph-volume", &cv.program(), "--host-name", "loop-host"], &[]);

    let report = inventory(&agent).await;
    assert_eq!(report.source, InventorySource::Kernel);
    assert!(report.can_create_osds);
    assert_eq!(report.devices.len(), 1, "{:#?}", report.devices);
    let d = &report.devices[0];
    assert_eq!(d["path"], dev.path.as_str());
    assert_eq!(d["available"], true, "{d:#}");
    assert_eq!(d["rejected_reasons"], json!([]));
    assert_eq!(d["sys_api"]["type"], "disk");
    assert_eq!(d["sys_api"]["size"], json!(SIX_GIB as f64));
    assert_eq!(d["sys_api"]["human_readable_size"], "6.00 GB");
    let parsed = parse_device_list(&serde_json::to_vec(&report.devices).unwrap()).unwrap();
    assert!(parsed[0].available);
    let want_type = if d["sys_api"]["rotational"] == "1" { "hdd" } else { "ssd" };
    assert_eq!(parsed[0].human_type(), want_type);
    assert_eq!(parsed[0].size_bytes, Some(SIX_GIB as f64));
    assert!(cv.calls().is_empty(), "ceph-volume inventory is not asked about loop devices");

    let mut label = b"bluestore block device\n4a6d5b0e-5b8e-4d0c-9a57-0d3c4e1f6a55\n".to_vec();
    label.resize(4096, 0);
    dev.write_head(&label);
    let report = inventory(&agent).await;
    let d = &report.devices[0];
    assert_eq!(d["available"], false, "{d:#}");
    let reasons: Vec<&str> = d["rejected_reasons"].as_array().unwrap().iter().map(|r| r.as_str().unwrap()).collect();
    assert!(reasons.contains(&"Has BlueStore device label"), "{reasons:?}");
}

#[tokio::test]
async fn runs_a_fake_ceph_volume_on_named_devices_only_up_to_the_process_boundary() {
    let dev = LoopDevice::new(SIX_GIB);
    let cv = FakeCephVolume::new();
    let agent = Agent::start(&["--devices", &dev.path, "--ceph-volume", &cv.program()], &[]);

    let refused = post(&agent, json!({"args": ["lvm", "zap", &dev.path, "--destroy"]})).await;
    assert_eq!(refused.status(), 400);
    let e: AgentErrorBody = refused.json().await.unwrap();
    assert_eq!(e.error, "only `lvm batch` and `raw prepare` may be run through the agent; refused `lvm zap`");

    let refused = post(&agent, json!({"args": ["lvm", "batch", "--no-auto", &dev.path, "/dev/sda", "--yes"]})).await;
    assert_eq!(refused.status(), 400);
    let e: AgentErrorBody = refused.json().await.unwrap();
    assert_eq!(e.error, "/dev/sda is not among the devices this agent may touch (--devices)");
    assert!(cv.calls().is_empty(), "nothing ran: {:?}", cv.calls());

    let args = ["raw", "prepare", "--bluestore", "--data", &dev.path];
    let resp = post(&agent, json!({"args": args, "osdspec_affinity": "fast"})).await;
    assert_eq!(resp.status(), 200, "{}", agent.log());
    let result: CommandResult = resp.json().await.unwrap();
    assert_eq!(result.exit_code, 0);
    assert_eq!(result.stdout, format!("created: {}\n", args.join(" ")));
    assert_eq!(result.stderr, "--> some progress\n");
    assert!(result.command.starts_with("CEPH_VOLUME_OSDSPEC_AFFINITY=fast CEPH_VOLUME_ALLOW_LOOP_DEVICES=1 "));
    assert_eq!(cv.calls(), [format!("args={} affinity=fast loops=1", args.join(" "))]);

    // One command at a time: a second one while the first runs is refused.
    let slow =
        post(&agent, json!({"args": ["lvm", "batch", "--no-auto", &dev.path, "--yes"], "osdspec_affinity": "slow"}));
    let second = async {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !cv.calls().iter().any(|c| c.contains("affinity=slow")) {
            assert!(std::time::Instant::now() < deadline, "the slow command never started: {}", agent.log());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        post(&agent, json!({"args": ["lvm", "batch", "--no-auto", &dev.path, "--yes"]})).await
    };
    let (first, second) = tokio::join!(slow, second);
    assert_eq!(first.status(), 200);
    assert_eq!(second.status(), 409);
    let e: AgentErrorBody = second.json().await.unwrap();
    assert!(e.error.contains("still running"), "{}", e.error);
    assert_eq!(e.code, Some(AgentErrorCode::Busy), "the daemon knows it by its code");
    assert_eq!(cv.calls().len(), 2, "the refused command did not run");
    drop(agent);

    // A command that outlives its timeout is killed and reported as such.
    let agent =
        Agent::start(&["--devices", &dev.path, "--ceph-volume", &cv.program(), "--ceph-volume-timeout-s", "1"], &[]);
    let resp = post(&agent, json!({"args": ["lvm", "batch", &dev.path], "osdspec_affinity": "hang"})).await;
    assert_eq!(resp.status(), 504);
    let e: AgentErrorBody = resp.json().await.unwrap();
    assert_eq!(e.error, "ceph-volume did not finish within 1 s and was killed (last stderr line: --> some progress)");
    assert_eq!(e.code, Some(AgentErrorCode::TimedOut));
}
