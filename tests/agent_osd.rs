//! OSD daemons judged on the host: a fake ceph-osd process (a script named
//! ceph-osd, run as `ceph-osd -i ID ...`) is seen by `GET /v1/osd/{id}`,
//! stopped by `POST /v1/osd/{id}/stop` through `--osd-stop-command`, and
//! seen gone after. Ids are in the 9000s so that a Ceph sandbox running on
//! the same machine (osd.0-5) is never named.

mod agent_common;

use std::time::{Duration, Instant};

use agent_common::{bluestore_label, client, fixture, Agent, FakeOsd, LoopDevice, LABEL_UUID};
use osdkeeper::wire::agent::{AgentErrorBody, AgentErrorCode, OsdDaemonStatus};

fn agent(extra: &[&str]) -> Agent {
    let inv = fixture("inventory_file.json");
    let mut args = vec!["--inventory-file", inv.to_str().unwrap(), "--host-name", "osd-host-1"];
    args.extend_from_slice(extra);
    Agent::start(&args, &[])
}

async fn status(agent: &Agent, id: &str) -> OsdDaemonStatus {
    let resp = client().get(agent.url(&format!("/v1/osd/{id}"))).send().await.unwrap();
    assert_eq!(resp.status(), 200, "{}", agent.log());
    resp.json().await.unwrap()
}

async fn stop(agent: &Agent, id: &str) -> reqwest::Response {
    client().post(agent.url(&format!("/v1/osd/{id}/stop"))).json(&serde_json::json!({})).send().await.unwrap()
}

/// The fake is a child of this test, so after it is killed it stays a
/// zombie until dropped: the agent must not count it.
async fn wait_until_seen(agent: &Agent, osd: &FakeOsd) -> OsdDaemonStatus {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let s = status(agent, &osd.id.to_string()).await;
        if s.running || Instant::now() > deadline {
            return s;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_running_daemon_is_seen_stopped_and_seen_gone() {
    let osd = FakeOsd::start(9107);
    let agent = agent(&["--osd-stop-command", &osd.stop_command()]);
    let s = wait_until_seen(&agent, &osd).await;
    assert!(s.running, "{s:?}");
    assert_eq!(s.osd_id, 9107);
    assert_eq!(s.pids, [osd.pid()]);
    assert_eq!(s.detail, format!("ceph-osd for osd.9107 runs (pid {})", osd.pid()));
    // osd.910 and osd.91070 are other OSDs.
    assert!(!status(&agent, "910").await.running);
    assert!(!status(&agent, "91070").await.running);

    let resp = stop(&agent, "9107").await;
    assert_eq!(resp.status(), 200, "{}", agent.log());
    let s: OsdDaemonStatus = resp.json().await.unwrap();
    assert!(!s.running && s.pids.is_empty(), "{s:?}");
    assert!(s.detail.starts_with(&format!("ran `{}", osd.dir.path().join("stop-osd").display())), "{}", s.detail);
    assert!(s.detail.contains(&format!("ceph-osd for osd.9107 (pids {}) exited after", osd.pid())), "{}", s.detail);
    assert!(osd.exited_after_stop());
    let s = status(&agent, "9107").await;
    assert!(!s.running, "{s:?}");
    assert_eq!(s.detail, "no ceph-osd process serves osd.9107 on this host");

    // Stopping again is harmless and says so.
    let resp = stop(&agent, "9107").await;
    assert_eq!(resp.status(), 200);
    let s: OsdDaemonStatus = resp.json().await.unwrap();
    assert!(!s.running);
    assert_eq!(s.detail, "no ceph-osd process serves osd.9107 on this host; nothing to stop");
    assert!(agent.log().contains("stopping an OSD daemon"), "{}", agent.log());
}

#[tokio::test]
async fn a_daemon_that_does_not_stop_is_a_timeout() {
    let osd = FakeOsd::start(9108);
    // A stop command that stops nothing.
    let agent = agent(&["--osd-stop-command", "true osd.{id}", "--osd-stop-timeout-s", "1"]);
    assert!(wait_until_seen(&agent, &osd).await.running);
    let started = Instant::now();
    let resp = stop(&agent, "9108").await;
    assert_eq!(resp.status(), 504);
    let e: AgentErrorBody = resp.json().await.unwrap();
    assert_eq!(
        e.error,
        format!("osd.9108 still runs 1 s after `true osd.9108` (pids {}); it was not stopped", osd.pid())
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(osd.alive());
}

#[tokio::test]
async fn ids_are_numbers() {
    let agent = agent(&[]);
    let c = client();
    for bad in ["abc", "+4", "-1", "4;reboot", "99999999999", "4%20"] {
        let resp = c.get(agent.url(&format!("/v1/osd/{bad}"))).send().await.unwrap();
        assert_eq!(resp.status(), 400, "{bad}");
        let e: AgentErrorBody = resp.json().await.unwrap();
        assert!(e.error.ends_with("is not an OSD id (a number such as 4)"), "{bad}: {}", e.error);
        assert_eq!(stop(&agent, bad).await.status(), 400, "{bad}");
    }
    let resp = c.get(agent.url("/v1/osd/4/stop")).send().await.unwrap();
    assert_eq!(resp.status(), 405);
}

#[test]
fn bad_templates_stop_the_agent_at_startup() {
    use agent_common::start_and_fail;
    let (status, stderr) =
        start_and_fail(&["--listen", "127.0.0.1:0", "--osd-stop-command", "systemctl stop ceph.target"], &[]);
    assert_eq!(status.code(), Some(2));
    assert!(stderr.contains("--osd-stop-command \"systemctl stop ceph.target\" must contain {id}"), "{stderr}");
    let (status, stderr) =
        start_and_fail(&["--listen", "127.0.0.1:0", "--osd-unit-template", "ceph-{fsid}@osd.{id}"], &[]);
    assert_eq!(status.code(), Some(2));
    assert!(stderr.contains("unknown placeholder in `ceph-{fsid}@osd.{id}`"), "{stderr}");
}

/// An agent limited with --devices stops only the OSDs served from them
/// (it used to stop any OSD on its host).
#[tokio::test]
async fn an_agent_limited_to_devices_does_not_stop_other_osds() {
    let dev = LoopDevice::new(1 << 30);
    let foreign = FakeOsd::start(9109);
    let own = FakeOsd::start_holding(9110, Some(&dev.path));
    let agent = Agent::start(&["--devices", &dev.path, "--osd-stop-command", &foreign.stop_command()], &[]);
    wait_until_seen(&agent, &foreign).await;
    let resp = stop(&agent, "9109").await;
    assert_eq!(resp.status(), 403, "{}", agent.log());
    let body: serde_json::Value = resp.json().await.unwrap();
    assert!(body["error"].as_str().unwrap().contains("not served from this agent's devices"), "{body}");
    assert!(foreign.alive(), "the other OSD was not touched");
    // Its own OSD (holding its device) it stops; the stop command kills the
    // fake named in the pid file of the template's directory.
    std::fs::write(foreign.dir.path().join("osd.9110.pid"), own.pid().to_string()).unwrap();
    let resp = stop(&agent, "9110").await;
    assert_eq!(resp.status(), 200, "{}", agent.log());
    assert!(own.exited_after_stop());
}

/// A stop names the OSD it means by its fsid: a daemon serving the id for
/// another OSD (the BlueStore label of the disk it holds names another) is
/// not stopped, and the refusal says what was found; the OSD named is.
#[tokio::test]
async fn a_stop_naming_another_osd_fsid_stops_nothing() {
    let dev = LoopDevice::new(1 << 30);
    dev.write_head(&bluestore_label(9111, 1 << 30));
    let osd = FakeOsd::start_holding(9111, Some(&dev.path));
    osd.wait_holding(&dev.path);
    let agent = agent(&["--osd-stop-command", &osd.stop_command()]);
    wait_until_seen(&agent, &osd).await;
    let other = "0a0a0a0a-5b8e-4d0c-9a57-0d3c4e1f6a55";
    let url = agent.url("/v1/osd/9111/stop");
    let resp = client().post(&url).json(&serde_json::json!({"osd_fsid": other})).send().await.unwrap();
    assert_eq!(resp.status(), 409, "{}", agent.log());
    let body: AgentErrorBody = resp.json().await.unwrap();
    assert_eq!(body.code, Some(AgentErrorCode::IdentityMismatch), "the daemon acts on the code");
    assert_eq!(
        body.error,
        format!(
            "refusing to stop osd.9111: the daemon serving it here is OSD fsid {LABEL_UUID} (its BlueStore label), \
             not {other}; nothing was stopped"
        )
    );
    assert!(osd.alive(), "the other OSD's daemon runs on");
    let resp = client().post(&url).json(&serde_json::json!({"osd_fsid": LABEL_UUID})).send().await.unwrap();
    assert_eq!(resp.status(), 200, "{}", agent.log());
    assert!(osd.exited_after_stop());
}
