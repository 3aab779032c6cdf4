//! The API a dashboard needs at thousands of hosts, against real daemons:
//! `/api/v1/osds` filtered and paged with its total, `/api/v1/summary`,
//! `/api/v1/hosts?unreachable=`, a removal's samples after a time, and the
//! stream's messages naming the hosts and OSDs that changed.
//!
//! The OSD tests run `osdkeeper demo` (the simulated field-report cluster);
//! the unreachable-host test runs `osdkeeper serve` with a real agent and a
//! host whose agent does not exist.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::client::Api;
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
    let api = Api::new(&url, None);
    let all = api.osds("");
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
        let a = api.osds(&format!("q={q}"));
        assert_eq!((ids(a.list()), a.total()), (vec![8], 1), "q={q}");
    }
    // q: part of a host name or of a device path, case-insensitive.
    let a = api.osds("q=F5-422-03");
    let on_03 = ids_where(&rows, |r| r["host"] == "f5-422-03");
    assert!(!on_03.is_empty());
    assert_eq!((ids(a.list()), a.total()), (on_03.clone(), on_03.len()));
    let a = api.osds("q=/DEV/SDD");
    let on_sdd = ids_where(&rows, |r| r["devices"].as_array().unwrap().iter().any(|d| d == "/dev/sdd"));
    assert!(!on_sdd.is_empty() && on_sdd.len() < rows.len());
    assert_eq!(ids(a.list()), on_sdd);
    let a = api.osds("q=no-such-thing");
    assert_eq!((a.status, a.list().len(), a.total()), (200, 0, 0));
    let a = api.osds("q=osd.99999");
    assert_eq!((a.list().len(), a.total()), (0, 0));

    // host: exact name only.
    let a = api.osds("host=f5-422-03");
    assert_eq!(ids(a.list()), on_03);
    assert_eq!(api.osds("host=f5-422").total(), 0, "host is not a substring match");
    let a = api.osds("host=f5-422-03&q=/dev/sdd");
    assert_eq!(
        ids(a.list()),
        ids_where(&rows, |r| r["host"] == "f5-422-03" && on_sdd.contains(&r["id"].as_u64().unwrap()))
    );

    // Paging: the total is counted before offset and limit; pages join up to the whole list.
    let n = rows.len();
    let mut joined = Vec::new();
    for offset in (0..n + 3).step_by(3) {
        let a = api.osds(&format!("offset={offset}&limit=3"));
        assert_eq!(a.total(), n, "offset {offset}");
        assert_eq!(a.list().len(), n.saturating_sub(offset).min(3), "offset {offset}");
        joined.extend(ids(a.list()));
    }
    assert_eq!(joined, all_ids);
    let last = api.osds(&format!("offset={}&limit=3", n - 1));
    assert_eq!((ids(last.list()), last.total()), (vec![*all_ids.last().unwrap()], n));
    for past in [n, n + 100] {
        let a = api.osds(&format!("offset={past}"));
        assert_eq!((a.status, a.list().len(), a.total()), (200, 0, n));
    }
    let a = api.osds("limit=0");
    assert_eq!((a.list().len(), a.total()), (0, n));
    let a = api.osds("q=f5-422-03&offset=1&limit=1");
    assert_eq!((ids(a.list()), a.total()), (vec![on_03[1]], on_03.len()));

    // A bad parameter is a JSON 400 that names it.
    let a = api.osds("limit=abc");
    assert_eq!(a.status, 400);
    assert!(a.body["error"].as_str().unwrap().contains("limit"), "{}", a.body);
    let a = api.removal(1, "samples_after=soon");
    assert_eq!(a.status, 400);
    assert!(a.body["error"].as_str().unwrap().contains("samples_after"), "{}", a.body);

    // The OpenAPI document lists the new parameters and the summary.
    let doc = api.openapi().body;
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
fn device_counts(api: &Api) -> (usize, usize) {
    let hosts = api.devices("").body;
    let devices: Vec<&Value> =
        hosts.as_array().unwrap().iter().flat_map(|h| h["devices"].as_array().unwrap()).collect();
    let available = devices.iter().filter(|d| d["available"] == true && d["held"].is_null()).count();
    (devices.len(), available)
}

#[test]
fn a_zapped_removal_shows_in_the_summary_samples_after_and_the_stream() {
    let dir = tempfile::tempdir().unwrap();
    let (_demo, url) = start_demo(dir.path(), &["--pace", "40"]);
    let api = Api::new(&url, None);
    wait_for("every host's inventory", Duration::from_secs(30), || {
        let s = api.summary().body;
        (s["hosts_without_inventory"] == 0).then_some(())
    });

    // The summary agrees with the detailed lists.
    let s = api.summary().body;
    let osds = api.osds("").list().clone();
    let (devices, available) = device_counts(&api);
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
    let stream = api.stream(12);
    std::thread::sleep(Duration::from_millis(500));
    let scheduled = api.schedule_removals(r#"{"ids": [8], "zap": true}"#);
    assert_eq!(scheduled.status, 202, "{}", scheduled.body);
    let removal_id = scheduled.body[0]["removal_id"].as_i64().unwrap();
    let during = api.summary().body;
    assert_eq!(during["active_removals"], 1, "{during}");
    let done = wait_for("osd.8's removal to finish", Duration::from_secs(60), || {
        let d = api.removal(removal_id, "").body;
        (d["state"] == "done").then_some(d)
    });

    // samples_after: exactly the samples taken after that time.
    let samples = done["samples"].as_array().unwrap().clone();
    assert!(samples.len() >= 4, "a drain at pace 40 is sampled several times: {done}");
    let after = |t: i64| api.removal(removal_id, &format!("samples_after={t}"));
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
    assert_eq!(api.removal(99999, "samples_after=0").status, 404);

    // The purged OSD and the held disk show in the summary (its OSD counts
    // are read from the cluster at most every 5 s).
    let s = wait_for("the summary to count the held disk and one OSD less", Duration::from_secs(20), || {
        let s = api.summary().body;
        (s["held_devices"] == 1 && s["active_removals"] == 0 && s["osds"] == osds.len() - 1).then_some(s)
    });
    let held = api.held().body;
    assert_eq!(held[0]["path"], "/dev/sdd", "{held}");
    assert_eq!(
        (s["osds_up"].as_u64(), s["osds_in"].as_u64()),
        (Some(osds.len() as u64 - 1), Some(osds.len() as u64 - 1)),
        "{s}"
    );
    let (devices_now, available_now) = device_counts(&api);
    assert_eq!(
        (s["devices"].as_u64().unwrap() as usize, s["available_devices"].as_u64().unwrap() as usize),
        (devices_now, available_now)
    );
    assert_eq!(api.osds("q=osd.8").total(), 0);

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
    // Every read through that `ceph`: no cluster session beside it.
    let config = format!(
        "poll:\n  interval_s: 1\n  timeout_s: 2\nceph:\n  bin: {}\n  timeout_s: 5\n  session: false\n",
        fake_ceph.display()
    );
    let daemon = start_daemon(dir.path(), &config, &[]);
    let api = Api::new(&daemon.url, None);
    let stream = api.stream(8);
    // A free port nobody listens on: its polls are refused.
    let dead_port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    for (name, addr) in [("f5-422-01", agent_addr.clone()), ("dead-01", format!("127.0.0.1:{dead_port}"))] {
        // dead-01 is added unchecked: nothing answers there.
        let body = json!({"name": name, "addr": addr, "no_check": name == "dead-01"}).to_string();
        assert_eq!(api.add_host(&body).status, 201);
    }
    wait_for("dead-01 to be unreachable and f5-422-01 polled", Duration::from_secs(30), || {
        let s = api.summary().body;
        (s["unreachable_hosts"] == json!(["dead-01"]) && s["hosts_without_inventory"] == 1).then_some(())
    });

    let down = api.hosts("unreachable=true");
    assert_eq!((down.status, down.total()), (200, 1));
    assert_eq!(down.list()[0]["name"], "dead-01");
    assert!(down.list()[0]["unreachable_since"].is_i64() && down.list()[0]["last_error"].is_string(), "{}", down.body);
    let up = api.hosts("unreachable=false");
    assert_eq!((up.total(), up.list()[0]["name"].as_str()), (1, Some("f5-422-01")));
    let all = api.hosts("");
    assert_eq!(all.total(), 2);
    let second = api.hosts("offset=1&limit=1");
    assert_eq!((second.total(), second.list().len(), second.list()[0]["name"].as_str()), (2, 1, Some("dead-01")));
    assert_eq!(api.hosts("unreachable=maybe").status, 400);

    let s = api.summary().body;
    let (devices, available) = device_counts(&api);
    assert_eq!(
        (s["hosts"].as_u64(), s["devices"].as_u64(), s["available_devices"].as_u64()),
        (Some(2), Some(devices as u64), Some(available as u64))
    );
    assert!(devices > 0, "{s}");
    assert!(s["osds"].is_null() && s["osds_up"].is_null() && s["osds_in"].is_null(), "no cluster, no OSD counts: {s}");
    let error = s["cluster_error"].as_str().unwrap();
    assert!(error.contains("cannot read the cluster") && error.contains("no cluster here"), "{s}");

    // One read of the cluster answers every summary for 5 s, its failure
    // too: the daemon reads it again every 5 s, however many ask meanwhile.
    let reads =
        || std::fs::read_to_string(&calls).unwrap_or_default().lines().filter(|l| l.contains("osd dump")).count();
    let before = reads();
    assert!(before >= 1);
    let (start, mut asked) = (std::time::Instant::now(), 0);
    while start.elapsed() < Duration::from_millis(5200) {
        assert_eq!(api.summary().status, 200);
        asked += 1;
        std::thread::sleep(Duration::from_millis(20));
    }
    let after = reads();
    assert!(after > before, "after 5 s the cluster is read again");
    assert!(after <= before + 2, "{asked} summaries in 5.2 s read the cluster {} times", after - before);

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
