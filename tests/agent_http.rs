//! The agent binary over HTTP with a fixed `--inventory-file`: health,
//! token checks, the inventory round trip, refusals, startup checks and
//! shutdown.

mod agent_common;

use std::time::Duration;

use agent_common::{client, fixture, start_and_fail, Agent, TOKEN};
use osdkeeper::wire::agent::{AgentErrorBody, AgentErrorCode, AgentIdentity, InventoryReport, InventorySource};
use serde_json::{json, Value};

fn file_agent(extra: &[&str]) -> Agent {
    let inv = fixture("inventory_file.json");
    let mut args = vec!["--inventory-file", inv.to_str().unwrap(), "--host-name", "osd-host-1"];
    args.extend_from_slice(extra);
    Agent::start(&args, &[("OSDKEEPER_AGENT_TOKEN", TOKEN)])
}

async fn error_of(resp: reqwest::Response) -> (u16, String) {
    let status = resp.status().as_u16();
    let body: AgentErrorBody = resp.json().await.expect("errors are JSON AgentErrorBody");
    // Every error answer carries the code of what it is; here, its status's.
    assert_eq!(body.code, Some(AgentErrorCode::of_status(status)), "{status} {}", body.error);
    (status, body.error)
}

#[tokio::test]
async fn health_needs_no_token_everything_else_does() {
    let agent = file_agent(&[]);
    let c = client();
    let health = c.get(agent.url("/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200);
    assert_eq!(health.json::<Value>().await.unwrap(), json!({"status": "ok"}));

    let (status, error) = error_of(c.get(agent.url("/v1/inventory")).send().await.unwrap()).await;
    assert_eq!(status, 401);
    assert!(error.contains("Authorization: Bearer"), "{error}");
    let (status, error) = error_of(c.get(agent.url("/v1/inventory")).bearer_auth("wrong").send().await.unwrap()).await;
    assert_eq!(status, 401);
    assert!(error.starts_with("wrong token: this agent takes only the token of host osd-host-1"), "{error}");
    let (status, _) =
        error_of(c.get(agent.url("/v1/inventory")).bearer_auth(format!("{TOKEN}x")).send().await.unwrap()).await;
    assert_eq!(status, 401);
    let (status, _) =
        error_of(c.post(agent.url("/v1/ceph-volume")).json(&json!({"args": []})).send().await.unwrap()).await;
    assert_eq!(status, 401, "POST without a token");
    // Unknown paths are not revealed without a token either.
    let (status, _) = error_of(c.get(agent.url("/v1/nope")).send().await.unwrap()).await;
    assert_eq!(status, 401);
    let ok = c.get(agent.url("/v1/inventory")).bearer_auth(TOKEN).send().await.unwrap();
    assert_eq!(ok.status(), 200);
}

#[tokio::test]
async fn identity_names_the_host_without_a_scan_and_needs_the_token() {
    let agent = file_agent(&[]);
    let c = client();
    let (status, _) = error_of(c.get(agent.url("/v1/identity")).send().await.unwrap()).await;
    assert_eq!(status, 401);
    let who: AgentIdentity =
        c.get(agent.url("/v1/identity")).bearer_auth(TOKEN).send().await.unwrap().json().await.unwrap();
    assert_eq!(who, AgentIdentity { host: "osd-host-1".into(), version: env!("CARGO_PKG_VERSION").into() });
}

#[tokio::test]
async fn the_inventory_file_round_trips() {
    let agent = file_agent(&[]);
    let report: InventoryReport =
        client().get(agent.url("/v1/inventory")).bearer_auth(TOKEN).send().await.unwrap().json().await.unwrap();
    let file: Vec<Value> = serde_json::from_slice(&std::fs::read(fixture("inventory_file.json")).unwrap()).unwrap();
    assert_eq!(report.devices, file);
    assert_eq!(report.source, InventorySource::File);
    assert_eq!(report.host, "osd-host-1");
    assert!(!report.can_create_osds);
    assert!(report.note.as_deref().unwrap().contains("--inventory-file"), "{:?}", report.note);
    let age_ms = chrono::Utc::now().timestamp_millis() - report.taken_at_ms;
    assert!((0..60_000).contains(&age_ms), "taken_at_ms is {age_ms} ms old");
    let parsed =
        osdkeeper::wire::ceph_volume::parse_device_list(&serde_json::to_vec(&report.devices).unwrap()).unwrap();
    assert_eq!(parsed.len(), 3);
}

#[tokio::test]
async fn devices_limit_a_file_inventory() {
    let agent = file_agent(&["--devices", "/dev/sdc,/dev/sdq"]);
    let report: InventoryReport =
        client().get(agent.url("/v1/inventory")).bearer_auth(TOKEN).send().await.unwrap().json().await.unwrap();
    let paths: Vec<&str> = report.devices.iter().map(|d| d["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["/dev/sdc"]);
    assert!(report.note.unwrap().contains("not found on this host: /dev/sdq"));
}

#[tokio::test]
async fn a_file_agent_refuses_to_create_osds() {
    let agent = file_agent(&[]);
    let c = client();
    let req =
        json!({"args": ["lvm", "batch", "--no-auto", "/dev/sdb", "--yes", "--no-systemd"], "osdspec_affinity": "hdd"});
    let (status, error) =
        error_of(c.post(agent.url("/v1/ceph-volume")).bearer_auth(TOKEN).json(&req).send().await.unwrap()).await;
    assert_eq!(status, 409);
    assert!(error.contains("fixed inventory from --inventory-file"), "{error}");
    assert!(error.contains("cannot create OSDs"), "{error}");
}

#[tokio::test]
async fn bad_requests_get_json_errors() {
    let agent = file_agent(&[]);
    let c = client();
    let (status, error) = error_of(c.get(agent.url("/v1/nope")).bearer_auth(TOKEN).send().await.unwrap()).await;
    assert_eq!((status, error.as_str()), (404, "no such endpoint: GET /v1/nope"));
    let (status, error) = error_of(c.delete(agent.url("/v1/inventory")).bearer_auth(TOKEN).send().await.unwrap()).await;
    assert_eq!((status, error.as_str()), (405, "DELETE is not allowed on /v1/inventory"));
    let resp = c
        .post(agent.url("/v1/ceph-volume"))
        .bearer_auth(TOKEN)
        .header("content-type", "application/json")
        .body("{\"argz\": 1}")
        .send()
        .await
        .unwrap();
    let (status, error) = error_of(resp).await;
    assert_eq!(status, 422);
    assert!(error.starts_with("bad request body:") && error.contains("args"), "{error}");
    let huge = json!({"args": vec!["x".repeat(1000); 100]});
    let (status, _) =
        error_of(c.post(agent.url("/v1/ceph-volume")).bearer_auth(TOKEN).json(&huge).send().await.unwrap()).await;
    assert_eq!(status, 413);
}

#[test]
fn refuses_a_public_address_without_a_token() {
    let (status, stderr) = start_and_fail(&["--listen", "0.0.0.0:0", "--host-name", "h"], &[]);
    assert_eq!(status.code(), Some(2));
    let last = stderr.lines().last().unwrap_or("");
    assert!(last.starts_with("osdkeeper agent: refusing to listen on 0.0.0.0:0 without a token"), "stderr: {stderr}");
}

#[test]
fn startup_failures_exit_2_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("inv.json");
    std::fs::write(&bad, "{\"hosts\": {}}").unwrap();
    let (status, stderr) = start_and_fail(&["--inventory-file", bad.to_str().unwrap(), "--listen", "127.0.0.1:0"], &[]);
    assert_eq!(status.code(), Some(2));
    assert!(stderr.contains("is not a ceph-volume inventory"), "{stderr}");
    let (status, stderr) = start_and_fail(&["--devices", "sdb", "--listen", "127.0.0.1:0"], &[]);
    assert_eq!(status.code(), Some(2));
    assert!(stderr.contains("--devices: sdb is not a device path"), "{stderr}");
    let (status, _) = start_and_fail(&["--listen", "not-an-address"], &[]);
    assert_eq!(status.code(), Some(2), "clap's own errors");
}

#[tokio::test]
async fn sigterm_stops_it_cleanly() {
    let mut agent = file_agent(&["--log-format", "json"]);
    assert_eq!(client().get(agent.url("/healthz")).send().await.unwrap().status(), 200);
    let status = agent.terminate(Duration::from_secs(10)).expect("the agent exits after SIGTERM");
    assert!(status.success(), "{status:?}");
    let log = agent.log();
    let line = log.lines().find(|l| l.contains("SIGTERM")).unwrap_or_else(|| panic!("no shutdown log: {log}"));
    serde_json::from_str::<Value>(line).expect("--log-format json writes JSON lines");
}

#[tokio::test]
async fn a_file_agent_refuses_zaps() {
    let agent = file_agent(&["--devices", "/dev/sdb,/dev/sdc"]);
    let c = client();
    let zap = |body: Value| c.post(agent.url("/v1/zap")).bearer_auth(TOKEN).json(&body).send();
    let (status, error) = error_of(zap(json!({"path": "/dev/sdb", "force": false})).await.unwrap()).await;
    assert_eq!(status, 400);
    assert!(error.starts_with("must pass force: true to PERMANENTLY ERASE DEVICE DATA"), "{error}");
    let (status, error) = error_of(zap(json!({"path": "/dev/nvme0n1", "force": true})).await.unwrap()).await;
    assert_eq!(
        (status, error.as_str()),
        (403, "/dev/nvme0n1 is not among the devices this agent may touch (--devices)")
    );
    let (status, error) =
        error_of(zap(json!({"path": "/dev/sdb", "force": true, "reason": "test"})).await.unwrap()).await;
    assert_eq!(status, 409);
    assert!(error.contains("fixed inventory from --inventory-file") && error.contains("wipes no devices"), "{error}");
    let (status, _) =
        error_of(c.post(agent.url("/v1/zap")).json(&json!({"path": "/dev/sdb", "force": true})).send().await.unwrap())
            .await;
    assert_eq!(status, 401, "zap needs the token");
    assert!(agent.log().contains("zap refused"), "{}", agent.log());
}

#[tokio::test]
async fn filter_for_batch_on_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let inv = dir.path().join("inv.json");
    let mut devices: Vec<Value> =
        serde_json::from_slice(&std::fs::read(fixture("inventory_file.json")).unwrap()).unwrap();
    let mut os_disk = devices[0].clone();
    os_disk["path"] = json!("/dev/sda");
    os_disk["sys_api"]["partitions"] = json!({"sda1": {"start": "2048", "sectors": "1000", "sectorsize": 512}});
    let mut part = devices[0].clone();
    part["path"] = json!("/dev/sda1");
    part["sys_api"]["type"] = json!("part");
    devices.extend([os_disk, part]);
    std::fs::write(&inv, serde_json::to_vec(&devices).unwrap()).unwrap();
    let agent = Agent::start(&["--inventory-file", inv.to_str().unwrap()], &[]);
    let c = client();
    let get = |q: &str| c.get(agent.url(&format!("/v1/inventory{q}"))).send();
    let all: InventoryReport = get("").await.unwrap().json().await.unwrap();
    assert_eq!(all.devices.len(), 5);
    let unfiltered: InventoryReport = get("?filter_for_batch=false").await.unwrap().json().await.unwrap();
    assert_eq!(unfiltered.devices.len(), 5);
    let batch: InventoryReport = get("?filter_for_batch=true").await.unwrap().json().await.unwrap();
    let paths: Vec<&str> = batch.devices.iter().map(|d| d["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["/dev/sdb", "/dev/nvme0n1", "/dev/sdc"], "unavailable /dev/sdc stays");
    assert!(batch.note.unwrap().contains("no mount table"));
    let (status, error) = error_of(get("?filter_for_batch=yes").await.unwrap()).await;
    assert_eq!(status, 400);
    assert!(error.starts_with("bad query:"), "{error}");
}

/// A web page in the operator's browser, or a rebound DNS name, reaching a
/// token-less agent on loopback: refused before anything runs.
#[tokio::test]
async fn cross_site_and_rebound_requests_are_refused() {
    let inv = fixture("inventory_file.json");
    let agent = Agent::start(&["--inventory-file", inv.to_str().unwrap(), "--host-name", "osd-host-1"], &[]);
    let c = client();
    let foreign = c
        .post(agent.url("/v1/osd/4/stop"))
        .header("origin", "https://evil.example")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    let (status, error) = error_of(foreign).await;
    assert_eq!(status, 403);
    assert!(error.contains("cross-site"), "{error}");
    // A browser's "simple" POST: no preflight, so it must not be understood.
    let simple =
        c.post(agent.url("/v1/osd/4/stop")).header("content-type", "text/plain").body("{}").send().await.unwrap();
    assert_eq!(simple.status(), 403);
    let bare = c.post(agent.url("/v1/osd/4/stop")).send().await.unwrap();
    assert_eq!(bare.status(), 403, "a POST without a content type (fetch with no-cors)");
    let rebound = c.get(agent.url("/v1/inventory")).header("host", "rebound.example:8741").send().await.unwrap();
    let (status, error) = error_of(rebound).await;
    assert_eq!(status, 403);
    assert!(error.contains("not this machine"), "{error}");
    assert_eq!(c.get(agent.url("/v1/inventory")).send().await.unwrap().status(), 200, "the daemon's own requests pass");
}

/// The inventory's ETag: an unchanged inventory is answered `304 Not
/// Modified` without a body, a changed one in full with its new ETag; the
/// token is checked first either way.
#[tokio::test]
async fn an_unchanged_inventory_is_answered_304() {
    let dir = tempfile::tempdir().unwrap();
    let inv = dir.path().join("inv.json");
    let devices: Vec<Value> = serde_json::from_slice(&std::fs::read(fixture("inventory_file.json")).unwrap()).unwrap();
    std::fs::write(&inv, serde_json::to_vec(&devices).unwrap()).unwrap();
    let agent = Agent::start(
        &["--inventory-file", inv.to_str().unwrap(), "--host-name", "osd-host-1"],
        &[("OSDKEEPER_AGENT_TOKEN", TOKEN)],
    );
    let c = client();
    let get = |if_none_match: Option<String>| {
        let mut req = c.get(agent.url("/v1/inventory?filter_for_batch=true")).bearer_auth(TOKEN);
        if let Some(tag) = if_none_match {
            req = req.header("if-none-match", tag);
        }
        req.send()
    };
    let first = get(None).await.unwrap();
    assert_eq!(first.status(), 200);
    let etag = first.headers()["etag"].to_str().unwrap().to_string();
    let report: osdkeeper::wire::agent::RawInventoryReport = first.json().await.unwrap();
    assert_eq!(etag, format!("\"{}\"", report.etag(&report.fingerprint())), "the ETag the daemon computes");

    let again = get(Some(etag.clone())).await.unwrap();
    assert_eq!(again.status(), 304);
    assert_eq!(again.headers()["etag"].to_str().unwrap(), etag);
    assert!(again.bytes().await.unwrap().is_empty(), "no body");
    assert_eq!(get(Some(format!("\"other\", W/{etag}"))).await.unwrap().status(), 304, "a list, weak");
    assert_eq!(get(Some("\"other\"".into())).await.unwrap().status(), 200);
    let no_token = c.get(agent.url("/v1/inventory")).header("if-none-match", etag.as_str()).send().await.unwrap();
    assert_eq!(no_token.status(), 401, "the token before the ETag");

    // One disk gone: the old ETag no longer matches.
    std::fs::write(&inv, serde_json::to_vec(&devices[1..]).unwrap()).unwrap();
    let changed = get(Some(etag.clone())).await.unwrap();
    assert_eq!(changed.status(), 200);
    let new_etag = changed.headers()["etag"].to_str().unwrap().to_string();
    assert_ne!(new_etag, etag);
    let report: InventoryReport = changed.json().await.unwrap();
    assert_eq!(report.devices.len(), devices.len() - 1);
    assert_eq!(get(Some(new_etag)).await.unwrap().status(), 304);
}
