//! The API a dashboard needs at thousands of hosts, against real daemons:
//! `/api/v1/osds` filtered and paged with its total, `/api/v1/summary`,
//! `/api/v1/hosts?unreachable=`, a removal's samples after a time, and the
//! stream's messages naming the hosts and OSDs that changed.
//!
//! The OSD tests run `osdkeeper demo` (the simulated field-report cluster);
//! the unreachable-host test runs `osdkeeper serve` with a real agent and a
//! host whose agent does not exist.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::thread::JoinHandle;
use std::time::Duration;

use common::*;
use serde_json::{json, Value};

const HOSTS: [&str; 4] = ["f5-422-01", "f5-422-02", "f5-422-03", "f5-422-04"];

/// `osdkeeper demo` on port 0 with `extra` arguments.
fn start_demo(dir: &Path, extra: &[&str]) -> (Proc, String) {
    let mut cmd = Command::new(bin());
    cmd.args(["demo", "--listen", "127.0.0.1:0", "--db"]).arg(dir.join("demo.db")).args(extra);
    cmd.env_remove("OSDKEEPER_TOKEN").env_remove("OSDKEEPER_AGENT_TOKEN");
    let (proc, addr) = spawn_listening(cmd, "demo", &dir.join("demo.log"));
    (proc, format!("http://{addr}"))
}

struct Answer {
    status: u16,
    headers: HashMap<String, String>,
    body: Value,
}

impl Answer {
    fn total(&self) -> usize {
        self.headers
            .get("x-total-count")
            .unwrap_or_else(|| panic!("no x-total-count in {:?}", self.headers))
            .parse()
            .unwrap()
    }

    fn list(&self) -> &Vec<Value> {
        self.body.as_array().unwrap_or_else(|| panic!("not a list: {}", self.body))
    }
}

/// GET with curl, keeping the status, the headers (lower-case names) and the JSON body.
fn get(url: &str) -> Answer {
    let dir = tempfile::tempdir().unwrap();
    let (head, body) = (dir.path().join("head"), dir.path().join("body"));
    let out = Command::new("curl")
        .args(["-s", "-D"])
        .arg(&head)
        .arg("-o")
        .arg(&body)
        .args(["-w", "%{http_code}", url])
        .output()
        .expect("curl");
    let headers = std::fs::read_to_string(&head)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once(':').map(|(k, v)| (k.trim().to_lowercase(), v.trim().to_string())))
        .collect();
    let text = std::fs::read_to_string(&body).unwrap_or_default();
    Answer {
        status: String::from_utf8_lossy(&out.stdout).trim().parse().unwrap_or(0),
        headers,
        body: serde_json::from_str(&text).unwrap_or(Value::String(text)),
    }
}

/// Reads `/api/v1/stream` for `secs` seconds in the background: (event type, JSON data) per message.
fn read_stream(url: &str, secs: u64) -> JoinHandle<Vec<(String, Value)>> {
    let url = format!("{url}/api/v1/stream");
    std::thread::spawn(move || {
        let out = Command::new("curl").args(["-sN", "--max-time", &secs.to_string(), &url]).output().expect("curl");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut messages = Vec::new();
        for block in text.split("\n\n") {
            let mut kind = None;
            let mut data = String::new();
            for line in block.lines() {
                if let Some(k) = line.strip_prefix("event:") {
                    kind = Some(k.trim().to_string());
                } else if let Some(d) = line.strip_prefix("data:") {
                    data.push_str(d.trim());
                }
            }
            if let Some(kind) = kind {
                let data =
                    serde_json::from_str(&data).unwrap_or_else(|e| panic!("{kind} carries no JSON ({e}): {data}"));
                messages.push((kind, data));
            }
        }
        messages
    })
}

fn ids(rows: &[Value]) -> Vec<u64> {
    rows.iter().map(|r| r["id"].as_u64().unwrap()).collect()
}

/// The OSD ids `keep` selects from the full list.
fn ids_where(all: &[Value], keep: impl Fn(&Value) -> bool) -> Vec<u64> {
    ids(&all.iter().filter(|r| keep(r)).cloned().collect::<Vec<_>>())
}

#[test]
fn osds_are_filtered_and_paged_with_the_total_before_paging() {
    let dir = tempfile::tempdir().unwrap();
    let (_demo, url) = start_demo(dir.path(), &[]);
    let all = get(&format!("{url}/api/v1/osds"));
    assert_eq!(all.status, 200, "{}", all.body);
    let rows = all.list().clone();
    assert_eq!(all.total(), rows.len());
    assert!(rows.len() >= 8, "the field report's cluster has OSDs on four hosts: {}", all.body);
    let all_ids = ids(&rows);
    let mut sorted = all_ids.clone();
    sorted.sort();
    assert_eq!(all_ids, sorted, "sorted by id");

    // q: an OSD by name or number, case-insensitive.
    for q in ["osd.8", "8", "OSD.8", "%20osd.8%20"] {
        let a = get(&format!("{url}/api/v1/osds?q={q}"));
        assert_eq!((ids(a.list()), a.total()), (vec![8], 1), "q={q}");
    }
    // q: part of a host name or of a device path, case-insensitive.
    let a = get(&format!("{url}/api/v1/osds?q=F5-422-03"));
    let on_03 = ids_where(&rows, |r| r["host"] == "f5-422-03");
    assert!(!on_03.is_empty());
    assert_eq!((ids(a.list()), a.total()), (on_03.clone(), on_03.len()));
    let a = get(&format!("{url}/api/v1/osds?q=/DEV/SDD"));
    let on_sdd = ids_where(&rows, |r| r["devices"].as_array().unwrap().iter().any(|d| d == "/dev/sdd"));
    assert!(!on_sdd.is_empty() && on_sdd.len() < rows.len());
    assert_eq!(ids(a.list()), on_sdd);
    let a = get(&format!("{url}/api/v1/osds?q=no-such-thing"));
    assert_eq!((a.status, a.list().len(), a.total()), (200, 0, 0));
    let a = get(&format!("{url}/api/v1/osds?q=osd.99999"));
    assert_eq!((a.list().len(), a.total()), (0, 0));

    // host: exact name only.
    let a = get(&format!("{url}/api/v1/osds?host=f5-422-03"));
    assert_eq!(ids(a.list()), on_03);
    assert_eq!(get(&format!("{url}/api/v1/osds?host=f5-422")).total(), 0, "host is not a substring match");
    let a = get(&format!("{url}/api/v1/osds?host=f5-422-03&q=/dev/sdd"));
    assert_eq!(
        ids(a.list()),
        ids_where(&rows, |r| r["host"] == "f5-422-03" && on_sdd.contains(&r["id"].as_u64().unwrap()))
    );

    // Paging: the total is counted before offset and limit; pages join up to the whole list.
    let n = rows.len();
    let mut joined = Vec::new();
    for offset in (0..n + 3).step_by(3) {
        let a = get(&format!("{url}/api/v1/osds?offset={offset}&limit=3"));
        assert_eq!(a.total(), n, "offset {offset}");
        assert_eq!(a.list().len(), n.saturating_sub(offset).min(3), "offset {offset}");
        joined.extend(ids(a.list()));
    }
    assert_eq!(joined, all_ids);
    let last = get(&format!("{url}/api/v1/osds?offset={}&limit=3", n - 1));
    assert_eq!((ids(last.list()), last.total()), (vec![*all_ids.last().unwrap()], n));
    for past in [n, n + 100] {
        let a = get(&format!("{url}/api/v1/osds?offset={past}"));
        assert_eq!((a.status, a.list().len(), a.total()), (200, 0, n));
    }
    let a = get(&format!("{url}/api/v1/osds?limit=0"));
    assert_eq!((a.list().len(), a.total()), (0, n));
    let a = get(&format!("{url}/api/v1/osds?q=f5-422-03&offset=1&limit=1"));
    assert_eq!((ids(a.list()), a.total()), (vec![on_03[1]], on_03.len()));

    // A bad parameter is a JSON 400 that names it.
    let a = get(&format!("{url}/api/v1/osds?limit=abc"));
    assert_eq!(a.status, 400);
    assert!(a.body["error"].as_str().unwrap().contains("limit"), "{}", a.body);
    let a = get(&format!("{url}/api/v1/osds/removals/1?samples_after=soon"));
    assert_eq!(a.status, 400);
    assert!(a.body["error"].as_str().unwrap().contains("samples_after"), "{}", a.body);

    // The OpenAPI document lists the new parameters and the summary.
    let doc = get(&format!("{url}/api/v1/openapi.json")).body;
    let params: Vec<&str> = doc["paths"]["/api/v1/osds"]["get"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(params, ["q", "host", "offset", "limit"]);
    assert!(doc["paths"]["/api/v1/summary"]["get"].is_object());
    let detail_params = doc["paths"]["/api/v1/osds/removals/{removal_id}"]["get"]["parameters"].to_string();
    assert!(detail_params.contains("samples_after"), "{detail_params}");
}

/// What /api/v1/devices says, counted the way the summary should count it.
fn device_counts(url: &str) -> (usize, usize) {
    let hosts = get(&format!("{url}/api/v1/devices")).body;
    let devices: Vec<&Value> =
        hosts.as_array().unwrap().iter().flat_map(|h| h["devices"].as_array().unwrap()).collect();
    let available = devices.iter().filter(|d| d["available"] == true && d["held"].is_null()).count();
    (devices.len(), available)
}

#[test]
fn a_zapped_removal_shows_in_the_summary_samples_after_and_the_stream() {
    let dir = tempfile::tempdir().unwrap();
    let (_demo, url) = start_demo(dir.path(), &["--pace", "40"]);
    wait_for("every host's inventory", Duration::from_secs(30), || {
        let s = get(&format!("{url}/api/v1/summary")).body;
        (s["hosts_without_inventory"] == 0).then_some(())
    });

    // The summary agrees with the detailed lists.
    let s = get(&format!("{url}/api/v1/summary")).body;
    let osds = get(&format!("{url}/api/v1/osds")).list().clone();
    let (devices, available) = device_counts(&url);
    assert_eq!(
        s,
        json!({
            "hosts": 4, "unreachable_hosts": [], "hosts_without_inventory": 0,
            "devices": devices, "available_devices": available, "held_devices": 0,
            "osds": osds.len(), "osds_up": osds.iter().filter(|o| o["up"] == true).count(),
            "osds_in": osds.iter().filter(|o| o["in"] == true).count(), "cluster_error": null,
            "active_removals": 0, "specs": 0,
        })
    );
    assert!(devices > 10 && available > 0, "{s}");

    // Remove osd.8 with zap while reading the stream.
    let stream = read_stream(&url, 12);
    std::thread::sleep(Duration::from_millis(500));
    let (code, body) = api(
        "POST",
        &format!("{url}/api/v1/osds/removals"),
        None,
        Some(("application/json", r#"{"ids": [8], "zap": true}"#)),
    );
    assert_eq!(code, 202, "{body}");
    let removal_id = body[0]["removal_id"].as_i64().unwrap();
    let during = get(&format!("{url}/api/v1/summary")).body;
    assert_eq!(during["active_removals"], 1, "{during}");
    let done = wait_for("osd.8's removal to finish", Duration::from_secs(60), || {
        let d = get(&format!("{url}/api/v1/osds/removals/{removal_id}")).body;
        (d["state"] == "done").then_some(d)
    });

    // samples_after: exactly the samples taken after that time.
    let samples = done["samples"].as_array().unwrap().clone();
    assert!(samples.len() >= 4, "a drain at pace 40 is sampled several times: {done}");
    let after = |t: i64| get(&format!("{url}/api/v1/osds/removals/{removal_id}?samples_after={t}"));
    let at = |i: usize| samples[i]["at"].as_i64().unwrap();
    for k in [0, samples.len() / 2, samples.len() - 2] {
        let a = after(at(k));
        assert_eq!(a.status, 200);
        assert_eq!(a.body["samples"].as_array().unwrap(), &samples[k + 1..], "after sample {k}");
        assert_eq!(a.body["state"], "done", "the status comes with it");
        assert_eq!(a.body["actions"], done["actions"], "and all the actions");
    }
    assert_eq!(after(at(0) - 1).body["samples"].as_array().unwrap(), &samples);
    assert_eq!(after(at(samples.len() - 1)).body["samples"], json!([]));
    assert_eq!(after(i64::MAX).body["samples"], json!([]));
    assert_eq!(get(&format!("{url}/api/v1/osds/removals/99999?samples_after=0")).status, 404);

    // The purged OSD and the held disk show in the summary (its OSD counts
    // are read from the cluster at most every 5 s).
    let s = wait_for("the summary to count the held disk and one OSD less", Duration::from_secs(20), || {
        let s = get(&format!("{url}/api/v1/summary")).body;
        (s["held_devices"] == 1 && s["active_removals"] == 0 && s["osds"] == osds.len() - 1).then_some(s)
    });
    let held = get(&format!("{url}/api/v1/devices/held")).body;
    assert_eq!(held[0]["path"], "/dev/sdd", "{held}");
    assert_eq!(
        (s["osds_up"].as_u64(), s["osds_in"].as_u64()),
        (Some(osds.len() as u64 - 1), Some(osds.len() as u64 - 1)),
        "{s}"
    );
    let (devices_now, available_now) = device_counts(&url);
    assert_eq!(
        (s["devices"].as_u64().unwrap() as usize, s["available_devices"].as_u64().unwrap() as usize),
        (devices_now, available_now)
    );
    assert_eq!(get(&format!("{url}/api/v1/osds?q=osd.8")).total(), 0);

    // The stream named osd.8 for the removal and the polled hosts by name.
    let messages = stream.join().unwrap();
    let removals: Vec<&Value> = messages.iter().filter(|(k, _)| k == "removals").map(|(_, d)| d).collect();
    assert!(!removals.is_empty(), "no removals message in {messages:?}");
    assert!(removals.iter().all(|d| d == &&json!({"osds": [8]})), "only osd.8 was being removed: {removals:?}");
    let polled: Vec<&Value> = messages.iter().filter(|(k, _)| k == "hosts").map(|(_, d)| d).collect();
    for d in &polled {
        let names = d["hosts"].as_array().unwrap_or_else(|| panic!("a hosts message without names: {d}"));
        assert!(!names.is_empty() && names.iter().all(|n| HOSTS.contains(&n.as_str().unwrap())), "{d}");
    }
    // The demo polls every host every 5 s: in 12 s each was named.
    for host in HOSTS {
        assert!(
            polled.iter().any(|d| d["hosts"].as_array().unwrap().iter().any(|n| n == host)),
            "{host} never named: {polled:?}"
        );
    }
    assert_eq!(messages.first().map(|(k, _)| k.as_str()), Some("hello"));
}

#[test]
fn unreachable_hosts_are_filtered_counted_and_named_in_the_stream() {
    let dir = tempfile::tempdir().unwrap();
    let inventory: Value =
        serde_json::from_str(&std::fs::read_to_string(repo().join("specs/f5-422-inventory.json")).unwrap()).unwrap();
    let file = dir.path().join("f5-422-01.json");
    std::fs::write(&file, inventory["hosts"]["f5-422-01"].to_string()).unwrap();
    let mut cmd = Command::new(bin());
    cmd.args(["agent", "--listen", "127.0.0.1:0", "--host-name", "f5-422-01", "--inventory-file"]).arg(&file);
    let (_agent, agent_addr) = spawn_listening(cmd, "agent", &dir.path().join("agent.log"));
    // No Ceph here: a `ceph` that notes each call and fails.
    let calls = dir.path().join("ceph-calls.log");
    let fake_ceph = dir.path().join("ceph");
    std::fs::write(
        &fake_ceph,
        format!("#!/bin/sh\necho \"$*\" >> '{}'\necho 'no cluster here' >&2\nexit 1\n", calls.display()),
    )
    .unwrap();
    std::fs::set_permissions(&fake_ceph, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let config =
        format!("poll:\n  interval_s: 1\n  timeout_s: 2\nceph:\n  bin: {}\n  timeout_s: 5\n", fake_ceph.display());
    let daemon = start_daemon(dir.path(), &config, &[]);
    let url = daemon.url.clone();
    let stream = read_stream(&url, 8);
    // A free port nobody listens on: its polls are refused.
    let dead_port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    for (name, addr) in [("f5-422-01", agent_addr.clone()), ("dead-01", format!("127.0.0.1:{dead_port}"))] {
        let body = json!({"name": name, "addr": addr}).to_string();
        assert_eq!(api("POST", &format!("{url}/api/v1/hosts"), None, Some(("application/json", &body))).0, 201);
    }
    wait_for("dead-01 to be unreachable and f5-422-01 polled", Duration::from_secs(30), || {
        let s = get(&format!("{url}/api/v1/summary")).body;
        (s["unreachable_hosts"] == json!(["dead-01"]) && s["hosts_without_inventory"] == 1).then_some(())
    });

    let down = get(&format!("{url}/api/v1/hosts?unreachable=true"));
    assert_eq!((down.status, down.total()), (200, 1));
    assert_eq!(down.list()[0]["name"], "dead-01");
    assert!(down.list()[0]["unreachable_since"].is_i64() && down.list()[0]["last_error"].is_string(), "{}", down.body);
    let up = get(&format!("{url}/api/v1/hosts?unreachable=false"));
    assert_eq!((up.total(), up.list()[0]["name"].as_str()), (1, Some("f5-422-01")));
    let all = get(&format!("{url}/api/v1/hosts"));
    assert_eq!(all.total(), 2);
    let second = get(&format!("{url}/api/v1/hosts?offset=1&limit=1"));
    assert_eq!((second.total(), second.list().len(), second.list()[0]["name"].as_str()), (2, 1, Some("dead-01")));
    assert_eq!(get(&format!("{url}/api/v1/hosts?unreachable=maybe")).status, 400);

    let s = get(&format!("{url}/api/v1/summary")).body;
    let (devices, available) = device_counts(&url);
    assert_eq!(
        (s["hosts"].as_u64(), s["devices"].as_u64(), s["available_devices"].as_u64()),
        (Some(2), Some(devices as u64), Some(available as u64))
    );
    assert!(devices > 0, "{s}");
    assert!(s["osds"].is_null() && s["osds_up"].is_null() && s["osds_in"].is_null(), "no cluster, no OSD counts: {s}");
    let error = s["cluster_error"].as_str().unwrap();
    assert!(error.contains("cannot read the cluster") && error.contains("no cluster here"), "{s}");

    // One read of the cluster answers every summary for 5 s, its failure too.
    let reads =
        || std::fs::read_to_string(&calls).unwrap_or_default().lines().filter(|l| l.contains("osd dump")).count();
    let before = reads();
    assert!(before >= 1);
    for _ in 0..5 {
        assert_eq!(get(&format!("{url}/api/v1/summary")).status, 200);
    }
    assert!(reads() <= before + 1, "five summaries in a row read the cluster {} times", reads() - before);
    std::thread::sleep(Duration::from_millis(5200));
    let again = reads();
    get(&format!("{url}/api/v1/summary"));
    assert_eq!(reads(), again + 1, "after 5 s the cluster is read again");

    // Both hosts' polls are announced by name: the answered one and the refused one.
    let messages = stream.join().unwrap();
    let named: Vec<String> = messages
        .iter()
        .filter(|(k, _)| k == "hosts")
        .flat_map(|(_, d)| d["hosts"].as_array().unwrap().iter().map(|n| n.as_str().unwrap().to_string()))
        .collect();
    assert!(named.iter().any(|n| n == "f5-422-01") && named.iter().any(|n| n == "dead-01"), "{messages:?}");
    assert!(named.iter().all(|n| n == "f5-422-01" || n == "dead-01"), "{named:?}");
}
