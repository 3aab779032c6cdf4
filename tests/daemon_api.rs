//! The whole daemon on port 0 with a real SQLite file and real agent
//! processes serving fixture inventories (`osdkeeper agent --inventory-file`).

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::client::Api;
use common::*;
use serde_json::Value;

const TOKEN: &str = "api-secret-for-tests";
const AGENT_TOKEN: &str = "agent-secret-for-tests";
const SPEC: &str = "specs/field-report-ssds.yaml";

fn fixture() -> Value {
    serde_json::from_str(&std::fs::read_to_string(repo().join("specs/f5-422-inventory.json")).unwrap()).unwrap()
}

fn write_host_inventory(dir: &Path, host: &str, devices: &Value) -> std::path::PathBuf {
    // Written aside and renamed, so that the agent never reads half a file.
    let p = dir.join(format!("{host}.json"));
    let tmp = dir.join(format!("{host}.json.new"));
    std::fs::write(&tmp, serde_json::to_string_pretty(devices).unwrap()).unwrap();
    std::fs::rename(&tmp, &p).unwrap();
    p
}

/// What a timed-out wait prints: the daemon's log and its events.
fn explain(log: &Path, url: &str) -> String {
    let log = std::fs::read_to_string(log).unwrap_or_default();
    let (_, events, _) = cli(url, Some(TOKEN), &["events", "--limit", "100"]);
    format!("the daemon's log:\n{log}\nits events:\n{events}")
}

fn start_agent(dir: &Path, host: &str, inventory: &Path) -> (Proc, String) {
    let mut cmd = Command::new(bin());
    cmd.args(["agent", "--listen", "127.0.0.1:0", "--host-name", host, "--inventory-file"]).arg(inventory);
    cmd.env("OSDKEEPER_AGENT_TOKEN", AGENT_TOKEN);
    spawn_listening(cmd, &format!("agent {host}"), &dir.join(format!("agent-{host}.log")))
}

const CONFIG: &str = "poll:\n  interval_s: 1\n  timeout_s: 5\nreconcile:\n  interval_s: 1\n";

fn env() -> Vec<(&'static str, &'static str)> {
    vec![("OSDKEEPER_TOKEN", TOKEN), ("OSDKEEPER_AGENT_TOKEN", AGENT_TOKEN)]
}

/// The events of one kind, newest first.
fn events_of(url: &str, kind: &str) -> Vec<Value> {
    let (_, ev, _) = cli(url, Some(TOKEN), &["events", "--format", "json", "--limit", "500"]);
    let ev: Value = serde_json::from_str(&ev).unwrap_or_default();
    ev.as_array().into_iter().flatten().filter(|e| e["kind"] == kind).cloned().collect()
}

/// A disk swap on f5-422-02: /dev/sde leaves its agent's file; waits for
/// the event that names it.
fn swap_out_sde(dir: &Path, inv: &Value, url: &str, daemon_log: &Path) {
    let mut changed = inv["hosts"]["f5-422-02"].clone();
    changed.as_array_mut().unwrap().retain(|d| d["path"] != "/dev/sde");
    write_host_inventory(dir, "f5-422-02", &changed);
    let ev = wait_for_or(
        "a devices-changed event",
        Duration::from_secs(30),
        || events_of(url, "devices-changed").into_iter().next(),
        || explain(daemon_log, url),
    );
    assert_eq!(ev["message"], "Detected new or changed devices on f5-422-02: removed /dev/sde");
}

fn devices(url: &str) -> Value {
    let out = cli_ok(url, Some(TOKEN), &["device", "ls", "--format", "json"]);
    serde_json::from_str(&out).unwrap()
}

fn project(rows: &Value) -> Vec<String> {
    let mut v: Vec<String> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let keys = ["service_id", "host", "data", "db", "wal", "journal", "commands", "skipped", "warnings"];
            let m: serde_json::Map<String, Value> = keys.iter().map(|k| (k.to_string(), r[*k].clone())).collect();
            Value::Object(m).to_string()
        })
        .collect();
    v.sort();
    v
}

#[test]
fn daemon_with_two_agents_answers_dry_runs_like_preview_and_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let inv = fixture();
    let f1 = write_host_inventory(dir.path(), "f5-422-01", &inv["hosts"]["f5-422-01"]);
    let f2 = write_host_inventory(dir.path(), "f5-422-02", &inv["hosts"]["f5-422-02"]);
    let (_a1, addr1) = start_agent(dir.path(), "f5-422-01", &f1);
    let (_a2, addr2) = start_agent(dir.path(), "f5-422-02", &f2);
    let mut daemon = start_daemon(dir.path(), CONFIG, &env());
    let url = daemon.url.clone();
    let daemon_log = daemon.log.clone();

    let (code, out, err) = cli(&url, Some(TOKEN), &["host", "add", "f5-422-01", &addr1, "--labels", "osd,mon"]);
    assert_eq!(code, 0, "{out}{err}");
    cli_ok(&url, Some(TOKEN), &["host", "add", "f5-422-02", &addr2]);
    wait_for_or(
        "both inventories",
        Duration::from_secs(30),
        || {
            let d = devices(&url);
            d.as_array().unwrap().iter().all(|h| !h["inventory"].is_null()).then_some(())
        },
        || explain(&daemon_log, &url),
    );

    // device ls: cephadm's columns, a row per device, the age of the inventory.
    let (code, table, _) = cli(&url, Some(TOKEN), &["device", "ls"]);
    assert_eq!(code, 0);
    assert!(table.starts_with("HOST"), "{table}");
    assert!(table.contains("REFRESHED") && table.contains("REJECT REASONS"), "{table}");
    let sdf = table.lines().find(|l| l.starts_with("f5-422-01") && l.contains("/dev/sdf")).expect("a row for sdf");
    assert!(sdf.contains("ssd") && sdf.contains("1863G") && sdf.contains("Yes") && sdf.contains("s ago"), "{sdf}");
    let sdb = table.lines().find(|l| l.starts_with("f5-422-02") && l.contains("/dev/sdb")).unwrap();
    assert!(sdb.contains("Insufficient space (<10 extents) on vgs, LVM detected"), "{sdb}");
    // Like cephadm (`ceph-volume inventory --filter-for-batch`), disks with partitions are not listed.
    assert!(!table.contains("/dev/sda"), "{table}");

    // The dry-run equals the offline preview on the same inventory.
    let (code, out, err) =
        cli(&url, Some(TOKEN), &["apply", "-i", repo().join(SPEC).to_str().unwrap(), "--dry-run", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let dry: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(dry["dry_run"], true);
    assert!(dry["preview"][0]["inventory_age_s"].as_f64().unwrap() < 60.0);
    // The same inventory as the daemon holds: the agents filter like
    // `ceph-volume inventory --filter-for-batch` (disks with partitions go).
    let batch = |host: &str| -> Value {
        let list = inv["hosts"][host].as_array().unwrap();
        let keep = |d: &&Value| d["sys_api"]["partitions"].as_object().is_none_or(|p| p.is_empty());
        Value::Array(list.iter().filter(keep).cloned().collect())
    };
    let two_hosts = serde_json::json!({"hosts": {"f5-422-01": batch("f5-422-01"), "f5-422-02": batch("f5-422-02")}});
    let offline_inv = dir.path().join("two.json");
    std::fs::write(&offline_inv, two_hosts.to_string()).unwrap();
    let offline = Command::new(bin())
        .args([
            "preview",
            "--spec",
            repo().join(SPEC).to_str().unwrap(),
            "--inventory",
            offline_inv.to_str().unwrap(),
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let offline: Value = serde_json::from_slice(&offline.stdout).unwrap();
    assert_eq!(project(&dry["preview"]), project(&offline["preview"]));
    assert!(!dry["preview"].as_array().unwrap().is_empty());
    let (_, specs, _) = cli(&url, Some(TOKEN), &["spec", "ls", "--format", "json"]);
    assert_eq!(serde_json::from_str::<Value>(&specs).unwrap(), serde_json::json!([]), "a dry-run stores nothing");

    // Apply: stored with its history; the agents serve fixed files, so the
    // reconciler is told it cannot create OSDs, and says so.
    let out = cli_ok(&url, Some(TOKEN), &["apply", "-i", repo().join(SPEC).to_str().unwrap()]);
    assert!(out.contains("Scheduled osd.osd_spec_F5-422_SSDs update..."), "{out}");
    let refused = wait_for_or(
        "the reconciler's refusal event",
        Duration::from_secs(30),
        || {
            let (_, ev, _) = cli(&url, Some(TOKEN), &["events", "--format", "json", "--limit", "100"]);
            let ev: Value = serde_json::from_str(&ev).ok()?;
            ev.as_array()?.iter().find(|e| e["kind"] == "osd-create-refused").cloned()
        },
        || explain(&daemon_log, &url),
    );
    assert!(refused["message"].as_str().unwrap().contains("inventory"), "{refused}");

    // A disk swap on f5-422-02: the agent's file changes, an event names it.
    swap_out_sde(dir.path(), &inv, &url, &daemon_log);

    // Restart on the same database: hosts, specs, inventories and events stay.
    let events_before = cli(&url, Some(TOKEN), &["events", "--format", "json", "--limit", "1000"]).1;
    let events_before: Value = serde_json::from_str(&events_before).unwrap();
    assert_eq!(daemon.proc.terminate(), Some(0), "SIGTERM shuts the daemon down cleanly");
    let daemon2 = start_daemon(dir.path(), CONFIG, &env());
    let url = daemon2.url.clone();
    let (_, hosts, _) = cli(&url, Some(TOKEN), &["host", "ls", "--format", "json"]);
    let hosts: Value = serde_json::from_str(&hosts).unwrap();
    assert_eq!(hosts.as_array().unwrap().len(), 2);
    assert_eq!(hosts[0]["labels"], serde_json::json!(["osd", "mon"]));
    let (_, specs, _) = cli(&url, Some(TOKEN), &["spec", "ls", "--format", "json"]);
    assert_eq!(serde_json::from_str::<Value>(&specs).unwrap()[0]["service_name"], "osd.osd_spec_F5-422_SSDs");
    let d = devices(&url);
    assert!(d.as_array().unwrap().iter().all(|h| !h["devices"].as_array().unwrap().is_empty()));
    let events_after: Value =
        serde_json::from_str(&cli(&url, Some(TOKEN), &["events", "--format", "json", "--limit", "1000"]).1).unwrap();
    let first_ids: Vec<&Value> = events_before.as_array().unwrap().iter().map(|e| &e["id"]).collect();
    let kept: Vec<&Value> = events_after.as_array().unwrap().iter().map(|e| &e["id"]).take(first_ids.len()).collect();
    assert_eq!(first_ids, kept);
}

#[test]
fn bad_requests_get_a_clear_4xx_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let inv = fixture();
    let f1 = write_host_inventory(dir.path(), "f5-422-03", &inv["hosts"]["f5-422-03"]);
    let (_agent, addr) = start_agent(dir.path(), "f5-422-03", &f1);
    let daemon = start_daemon(dir.path(), CONFIG, &env());
    let url = daemon.url.as_str();
    assert_eq!(cli(url, Some(TOKEN), &["host", "add", "f5-422-03", &addr]).0, 0);
    let spec = std::fs::read_to_string(repo().join(SPEC)).unwrap();
    let api = Api::new(url, Some(TOKEN));
    assert_eq!(api.apply(&spec, "").status, 201);
    let state = || {
        let hosts = api.hosts("").body;
        let specs = api.specs().body;
        (hosts.as_array().unwrap().iter().map(|h| (h["name"].clone(), h["labels"].clone())).collect::<Vec<_>>(), specs)
    };
    let before = state();

    let a = api.apply("service_type: osd\n  bad: [indent\n", "");
    assert_eq!(a.status, 400);
    assert!(a.error().contains("not valid YAML"), "{}", a.body);

    let invalid = "service_type: osd\nservice_id: osd_spec_F5-422_SSDs\nplacement: {host_pattern: '*'}\ndata_devices: {rotational: '0'}\n";
    let a = api.apply(invalid, "");
    assert_eq!(a.status, 422);
    assert_eq!(a.body["errors"][0]["field"], "data_devices.rotational", "{}", a.body);
    assert!(a.error().contains("nothing was applied"));

    let a = api.add_label("nohost", r#"{"label": "x"}"#);
    assert_eq!(a.status, 404);
    assert!(a.error().contains("unknown host nohost"), "{}", a.body);
    assert_eq!(api.devices("host=nohost").status, 404);

    let a = api.add_host(r#"{"name": "bad host;rm -rf", "addr": "1.2.3.4:1"}"#);
    assert_eq!(a.status, 400);
    assert!(a.error().contains("invalid host name"), "{}", a.body);

    let huge = format!("{spec}# {}\n", "x".repeat(2 << 20));
    let a = api.apply(&huge, "");
    assert_eq!(a.status, 413, "{}", a.body);
    assert!(a.body["error"].is_string(), "{}", a.body);

    let anonymous = api.with_token(None);
    let a = anonymous.hosts("");
    assert_eq!(a.status, 401);
    assert!(a.error().contains("token"), "{}", a.body);
    assert_eq!(api.with_token(Some("wrong")).hosts("").status, 401);
    let a = anonymous.apply(&spec, "");
    assert_eq!((a.status, a.body["error"].is_string()), (401, true));
    assert_eq!(anonymous.healthz().status, 200, "health needs no token");

    assert_eq!(state(), before, "no bad request changed anything");
    let doc = api.openapi();
    assert_eq!(doc.status, 200);
    assert!(doc.body["paths"]["/api/v1/specs"]["post"].is_object(), "the OpenAPI document lists the routes");
}

/// What a web page in the operator's browser could send: refused, and nothing changes.
#[test]
fn cross_site_requests_are_refused_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    // No token: a loopback daemon, the case a web page could reach.
    let daemon = start_daemon(dir.path(), CONFIG, &[]);
    let api = Api::new(&daemon.url, None);
    let spec = std::fs::read_to_string(repo().join(SPEC)).unwrap();
    let yaml = Some(("application/yaml", spec.as_str()));
    let foreign = api.request_with("POST", "/api/v1/specs", yaml, &[("origin", "https://evil.example")]);
    assert_eq!(foreign.status, 403, "{}", foreign.body);
    assert!(foreign.error().contains("cross-site"), "{}", foreign.body);
    for simple in ["text/plain", "application/x-www-form-urlencoded"] {
        let a = api.request("POST", "/api/v1/specs", Some((simple, spec.as_str())));
        assert_eq!(a.status, 403, "{simple}: {}", a.body);
    }
    let rebound = api.request_with("GET", "/api/v1/hosts", None, &[("host", "evil.example:8740")]);
    assert_eq!(rebound.status, 403, "{}", rebound.body);
    assert!(rebound.error().contains("not this machine"), "{}", rebound.body);
    assert_eq!(api.specs().body, serde_json::json!([]), "nothing was stored");
    // The daemon's own page (same origin) and the CLI still work.
    let own = api.request_with("POST", "/api/v1/specs?dry_run=true", yaml, &[("origin", daemon.url.as_str())]);
    assert_eq!(own.status, 200, "{}", own.body);
}

#[test]
fn the_daemon_refuses_an_open_listener_without_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(bin())
        .args(["serve", "--listen", "0.0.0.0:0", "--db"])
        .arg(dir.path().join("x.db"))
        .env_remove("OSDKEEPER_TOKEN")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("without a token"));
}

/// Every error is a JSON body, also a path parameter of the wrong type.
#[test]
fn path_errors_are_json() {
    let dir = tempfile::tempdir().unwrap();
    let daemon = start_daemon(dir.path(), CONFIG, &[]);
    let a = Api::new(&daemon.url, None).get("/api/v1/osds/removals/not-a-number");
    assert_eq!(a.status, 400);
    assert!(a.error().contains("not-a-number") || a.error().contains("parse"), "{}", a.body);
}

/// One raw HTTP/1.1 exchange: the status and the body of the answer.
fn raw_request(addr: &str, request: &[u8]) -> (u16, String) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    // The server may answer and close before it has read all of a huge head.
    let _ = s.write_all(request);
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer);
    let text = String::from_utf8_lossy(&answer).to_string();
    let status = text.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default();
    (status, body)
}

/// Also what hyper answers by itself (a request it cannot parse, a URI or
/// a head too long) and what the extractors refuse is a JSON error.
#[test]
fn http_layer_errors_are_json() {
    let dir = tempfile::tempdir().unwrap();
    let daemon = start_daemon(dir.path(), CONFIG, &[]);
    let addr = daemon.url.trim_start_matches("http://").to_string();
    let long_uri = format!("GET /api/v1/hosts?{} HTTP/1.1\r\nHost: {addr}\r\n\r\n", "a".repeat(70_000));
    // hyper stops at a head over ~408 KiB, but one read can take a head of
    // up to twice that whole before it looks (CI once got 200 for 500 KB):
    // 1 MB is always too large.
    let long_head = format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\nx-big: {}\r\n\r\n", "b".repeat(1_000_000));
    let spec = "service_type: osd\nid: \u{1}x\n";
    let not_utf8 = format!(
        "POST /api/v1/specs?dry_run=true HTTP/1.1\r\nHost: {addr}\r\ncontent-type: application/yaml\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{spec}",
        spec.len()
    );
    let bad_header = format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\nno colon here\r\n\r\n");
    for (request, want, says) in [
        (long_uri, 414, "URI is too long"),
        (long_head, 431, "header fields are too large"),
        (bad_header, 400, "cannot be read as HTTP"),
        ("NOT-HTTP\r\n\r\n".to_string(), 400, "cannot be read as HTTP"),
        (
            not_utf8,
            400,
            "not UTF-8 text: byte 0xff cannot start or continue a character at byte offset 22 (line 2, column 5)",
        ),
    ] {
        // The one byte 0x01 of the spec stands for 0xff, which no &str holds.
        let bytes: Vec<u8> = request.bytes().map(|b| if b == 1 { 0xff } else { b }).collect();
        let (status, body) = raw_request(&addr, &bytes);
        assert_eq!(status, want, "{body}");
        let v: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{want}: {e}: {body:?}"));
        assert!(v["error"].as_str().unwrap().contains(says), "{body}");
    }
    let api = Api::new(&daemon.url, None);
    for (a, want) in [
        (api.get("/api/v1/osds?limit=abc"), 400),
        (api.get("/api/v1/nothing-here"), 404),
        (api.request("PUT", "/api/v1/hosts", None), 405),
        (api.add_host("{\"name\": 5}"), 422),
    ] {
        assert_eq!(a.status, want, "{}", a.body);
        assert!(a.body["error"].is_string(), "{want}: {}", a.body);
    }
}

/// Polls through the real agent's HTTP code: an unchanged inventory is
/// answered `304 Not Modified` to the ETag the daemon names, and only seen
/// again (its time moves, nothing else is recorded); a changed one comes in
/// full, is stored, and its change is an event.
#[test]
fn unchanged_inventories_are_answered_304_and_only_seen_again() {
    let dir = tempfile::tempdir().unwrap();
    let inv = fixture();
    let file = write_host_inventory(dir.path(), "f5-422-02", &inv["hosts"]["f5-422-02"]);
    let mut cmd = Command::new(bin());
    cmd.args(["agent", "--listen", "127.0.0.1:0", "--host-name", "f5-422-02", "--inventory-file"]).arg(&file);
    cmd.env("OSDKEEPER_AGENT_TOKEN", AGENT_TOKEN).env("RUST_LOG", "info,tower_http=debug");
    let agent_log = dir.path().join("agent.log");
    let (_agent, addr) = spawn_listening(cmd, "agent f5-422-02", &agent_log);
    let daemon = start_daemon(dir.path(), CONFIG, &env());
    let url = daemon.url.clone();
    cli_ok(&url, Some(TOKEN), &["host", "add", "f5-422-02", &addr]);
    let taken_at = || devices(&url)[0]["inventory"]["taken_at"].as_i64();
    let first = wait_for_or("the inventory", Duration::from_secs(30), taken_at, || explain(&daemon.log, &url));
    let answered = |status: &str| {
        let log = std::fs::read_to_string(&agent_log).unwrap_or_default();
        log.lines().filter(|l| l.contains("/v1/inventory") && l.contains(&format!("status={status}"))).count()
    };
    wait_for_or(
        "two polls answered 304, the inventory seen again",
        Duration::from_secs(30),
        || (answered("304") >= 2 && taken_at()? > first).then_some(()),
        || explain(&daemon.log, &url),
    );
    assert_eq!(events_of(&url, "inventory-first").len(), 1);
    assert!(events_of(&url, "devices-changed").is_empty());
    let full_answers = answered("200");

    swap_out_sde(dir.path(), &inv, &url, &daemon.log);
    assert!(answered("200") > full_answers, "the changed inventory came in full");
    let listed = devices(&url);
    let paths: Vec<&str> =
        listed[0]["devices"].as_array().unwrap().iter().map(|d| d["path"].as_str().unwrap()).collect();
    assert!(!paths.is_empty() && !paths.contains(&"/dev/sde"), "{paths:?}");
}
