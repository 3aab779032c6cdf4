//! A disk swap on a real Ceph cluster (testbed/ceph-sandbox with
//! `--ceph-volume --spare-disks 2`: two OSDs and two blank loop devices per
//! host, every OSD made by the real ceph-volume), against the cephadm way
//! on the same cluster, in one run:
//!
//! 1. `osd replace A --with HOST:SPARE`: the new OSD is made first (raw,
//!    as A was), A's placement groups are handed over with
//!    `pg-upmap-items`, the weights set, A purged and its disk wiped. The
//!    daemon is killed right after the first hand-over batch went through
//!    and restarted: the swap finishes with no entry issued twice. While
//!    it runs, no PG is ever degraded or undersized; at the end the
//!    cluster is HEALTH_OK with no upmap entry left.
//! 2. The drain-then-add way for an OSD B of another host, with plain
//!    `ceph` commands (CRUSH weight 0, wait, purge) and a spec for the new
//!    disk.
//!
//! The daemon acts as the cephx user `deploy/ceph-auth.sh` makes, so the
//! caps it gives are the ones a swap needs.
//!
//! The bytes each way made Ceph recover are the sum, over the OSDs, of
//! their `recovery_bytes` perf counter (counted by the OSD that receives a
//! copy; none of the receivers restarts meanwhile): the swap must move
//! less than drain-then-add. Both numbers are printed (BENCHMARKS.md).

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::sandbox::{deploying_agent, Sandbox};
use common::*;
use serde_json::Value;

const TOKEN: &str = "swap-api-token";
const AGENT_TOKEN: &str = "swap-agent-token";
const HOSTS: [&str; 3] = ["f5-422-01", "f5-422-02", "f5-422-03"];

/// Every OSD's `recovery_bytes` counter now.
fn recovery_bytes(sb: &Sandbox) -> BTreeMap<u64, u64> {
    let ids: Vec<u64> = sb.json(&["osd", "ls"]).as_array().unwrap().iter().filter_map(Value::as_u64).collect();
    ids.into_iter()
        .map(|id| {
            let dump = sb.json(&["tell", &format!("osd.{id}"), "perf", "dump"]);
            let n = dump["osd"]["recovery_bytes"].as_u64().unwrap_or_else(|| panic!("osd.{id}: no recovery_bytes"));
            (id, n)
        })
        .collect()
}

/// What the OSDs received since `before` (an OSD new since then from 0).
fn received_since(sb: &Sandbox, before: &BTreeMap<u64, u64>) -> u64 {
    recovery_bytes(sb).iter().map(|(id, n)| n - before.get(id).copied().unwrap_or(0)).sum()
}

/// Samples the PG states every second until stopped; the most PGs seen
/// degraded or undersized at once, and the states then.
struct DegradedWatch {
    stop: Arc<AtomicBool>,
    worst: Arc<Mutex<(u64, String)>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl DegradedWatch {
    fn start(sb: &Sandbox) -> DegradedWatch {
        let stop = Arc::new(AtomicBool::new(false));
        let worst = Arc::new(Mutex::new((0, String::new())));
        let (tool, conf) = (sb.tool("ceph"), sb.conf());
        let (s, w) = (stop.clone(), worst.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                let out = std::process::Command::new(&tool)
                    .arg("--conf")
                    .arg(&conf)
                    .args(["pg", "stat", "--format", "json"])
                    .output()
                    .unwrap();
                if let Ok(v) = serde_json::from_slice::<Value>(&out.stdout) {
                    let states = v["pg_summary"]["num_pg_by_state"].as_array().cloned().unwrap_or_default();
                    let short: u64 = states
                        .iter()
                        .filter(|st| {
                            let name = st["name"].as_str().unwrap_or("");
                            name.split('+').any(|f| f == "degraded" || f == "undersized")
                        })
                        .map(|st| st["num"].as_u64().unwrap_or(0))
                        .sum();
                    let mut w = w.lock().unwrap();
                    if short > w.0 {
                        *w = (short, Value::Array(states).to_string());
                    }
                }
                std::thread::sleep(Duration::from_secs(1));
            }
        });
        DegradedWatch { stop, worst, thread: Some(thread) }
    }

    fn finish(mut self) -> (u64, String) {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().unwrap().join().unwrap();
        self.worst.lock().unwrap().clone()
    }
}

/// The daemon acts as the cephx user `deploy/ceph-auth.sh` makes, with
/// only the caps it gives: a swap needs some a removal does not.
fn daemon_config(sb: &Sandbox, keyring: &Path) -> String {
    format!(
        "poll:\n  interval_s: 2\n  timeout_s: 30\nreconcile:\n  interval_s: 2\nremoval:\n  interval_s: 1\n{}  timeout_s: 30\n  name: client.osdkeeper\n  keyring: {}\n",
        sb.ceph_yaml(None),
        keyring.display()
    )
}

fn env(crash_after: Option<&'static str>) -> Vec<(&'static str, &'static str)> {
    let mut e = vec![("OSDKEEPER_TOKEN", TOKEN), ("OSDKEEPER_AGENT_TOKEN", AGENT_TOKEN)];
    if let Some(name) = crash_after {
        e.push(("OSDKEEPER_CRASH_AFTER", name));
    }
    e
}

/// `swap status N`: the swap's fields with its `actions` beside them.
fn swap_detail(url: &str, id: i64) -> Value {
    serde_json::from_str(&cli_ok(url, Some(TOKEN), &["swap", "status", &id.to_string(), "--format", "json"])).unwrap()
}

fn upmap_entries(sb: &Sandbox) -> Vec<Value> {
    sb.json(&["osd", "dump"])["pg_upmap_items"].as_array().cloned().unwrap_or_default()
}

#[test]
fn a_swap_moves_less_than_drain_then_add_never_degrades_and_survives_a_crash() {
    let work = tempfile::Builder::new().prefix("osdkeeper-swap").tempdir().unwrap();
    // More data than the default (300 objects of 128 KiB): the bytes moved
    // are compared, and every OSD holds some.
    let sb = Sandbox::start(
        &work.path().join("cluster"),
        &["--ceph-volume", "--spare-disks", "2", "--object-size", "131072"],
    );
    sb.make_drains_backfill();
    // The balancer would add entries of its own while the bytes are counted
    // (those it made since the start stay: the swap must leave them).
    assert_eq!(sb.ceph(&["balancer", "off"]).0, 0);
    let disks = sb.host_disks(&HOSTS);
    assert!(disks.iter().all(|(_, _, spares)| spares.len() == 2), "two spares per host: {disks:?}");
    let mut agents = Vec::new();
    for (host, osds, spares) in &disks {
        let devices: Vec<String> = osds.iter().chain(spares).cloned().collect();
        agents.push((
            host.clone(),
            deploying_agent(work.path(), &sb, host, &devices, &sb.tool("ceph-volume"), AGENT_TOKEN),
        ));
    }
    let keyring = work.path().join("osdkeeper.keyring");
    sb.ceph_auth(&keyring, &[]);
    let config = daemon_config(&sb, &keyring);
    let mut daemon = start_daemon(work.path(), &config, &env(Some("swap:upmap")));
    for (host, (_, addr)) in &agents {
        cli_ok(&daemon.url, Some(TOKEN), &["host", "add", host, addr]);
    }
    wait_for("every host's first inventory", Duration::from_secs(60), || {
        let (code, out, _) = cli(&daemon.url, Some(TOKEN), &["device", "ls", "--format", "json"]);
        let hosts: Vec<Value> = serde_json::from_str(&out).ok()?;
        (code == 0 && hosts.iter().all(|h| !h["inventory"].is_null())).then_some(())
    });

    // 1. The swap of the first host's first OSD for its first spare.
    let (host1, old_disks1, spares1) = &disks[0];
    let a = sb.osds_under(host1)[0];
    let old_disk = old_disks1.iter().find(|d| sb.running_osd_on(host1, d) == Some(a)).cloned().unwrap();
    let with = format!("{host1}:{}", spares1[0]);
    let preview = cli_ok(&daemon.url, Some(TOKEN), &["osd", "replace", &a.to_string(), "--with", &with, "--dry-run"]);
    assert!(preview.contains("swap") && preview.contains("drain-then-add"), "{preview}");
    let before = recovery_bytes(&sb);
    let pinned_before = upmap_entries(&sb);
    let watch = DegradedWatch::start(&sb);
    let out =
        cli_ok(&daemon.url, Some(TOKEN), &["osd", "replace", &a.to_string(), "--with", &with, "--format", "json"]);
    let swap: Value = serde_json::from_str(&out).unwrap();
    let id = swap["swap_id"].as_i64().unwrap();
    assert_eq!(swap["method"], "raw", "made as osd.{a} was: {swap}");
    wait_for_or(
        "the daemon to abort after the first hand-over batch",
        Duration::from_secs(600),
        || daemon.proc.child.try_wait().ok().flatten(),
        || std::fs::read_to_string(&daemon.log).unwrap_or_default(),
    );
    daemon = start_daemon(work.path(), &config, &env(None));
    let done = wait_for_or(
        "the swap to end",
        Duration::from_secs(900),
        || {
            let d = swap_detail(&daemon.url, id);
            ["done", "failed", "stopped"].contains(&d["state"].as_str()?).then_some(d)
        },
        || format!("{:#}\nPGs: {}", swap_detail(&daemon.url, id), sb.ceph(&["pg", "stat"]).1),
    );
    assert_eq!(done["state"], "done", "{done:#}");
    sb.wait_clean();
    sb.wait_health_ok();
    let (worst, states) = watch.finish();
    assert_eq!(worst, 0, "PGs degraded or undersized during the swap: {states}");
    let swap_bytes = received_since(&sb, &before);

    let new = done["disks"][0]["osd"].as_u64().expect("the new OSD");
    assert_eq!(sb.running_osd_on(host1, &spares1[0]), Some(new), "osd.{new} up and in on {}", spares1[0]);
    assert!(sb.osd(a as u32).is_none(), "osd.{a} purged");
    // Nothing pinned by the swap; the entries the balancer had made
    // elsewhere before it was turned off are left as they were.
    let names = |e: &Value, id: u64| e["mappings"].as_array().unwrap().iter().any(|m| m["from"] == id || m["to"] == id);
    let after = upmap_entries(&sb);
    assert!(!after.iter().any(|e| names(e, a) || names(e, new)), "pinned by the swap: {after:?}");
    let elsewhere: Vec<&Value> = pinned_before.iter().filter(|e| !names(e, a)).collect();
    assert!(elsewhere.iter().all(|e| after.contains(e)), "before: {pinned_before:?}\nafter: {after:?}");
    assert_eq!(blkid_type(&old_disk), None, "osd.{a}'s disk {old_disk} wiped");
    // Every entry issued once, across the crash.
    let actions = done["actions"].as_array().unwrap();
    let mut pgids: Vec<String> = actions
        .iter()
        .filter(|a| a["effect"] == "upmap")
        .flat_map(|a| {
            let detail = a["detail"].as_str().unwrap();
            detail.split("; ").filter_map(|c| c.split(' ').nth(3).map(str::to_string)).collect::<Vec<_>>()
        })
        .collect();
    assert!(!pgids.is_empty(), "no hand-over: {done:#}");
    let issued = pgids.len();
    pgids.sort();
    pgids.dedup();
    assert_eq!(issued, pgids.len(), "an entry issued twice: {done:#}");

    // 2. The cephadm way for the second host's first OSD: drained with
    //    plain ceph commands, purged, then a spec takes its spare.
    let (host2, _, spares2) = &disks[1];
    let b = sb.osds_under(host2)[0];
    let before = recovery_bytes(&sb);
    assert_eq!(sb.ceph(&["osd", "crush", "reweight", &format!("osd.{b}"), "0"]).0, 0);
    wait_for_or(
        &format!("osd.{b} safe to destroy"),
        Duration::from_secs(600),
        || (sb.ceph(&["osd", "safe-to-destroy", &b.to_string()]).0 == 0).then_some(()),
        || sb.ceph(&["pg", "stat"]).1,
    );
    sb.wait_clean();
    sb.stop_daemon(&format!("osd.{b}"));
    assert_eq!(sb.ceph(&["osd", "purge", &b.to_string(), "--yes-i-really-mean-it"]).0, 0);
    let spec = format!(
        "service_type: osd\nservice_id: after-drain\nplacement:\n  hosts: [{host2}]\nspec:\n  method: raw\n  data_devices:\n    paths: [{}]\n",
        spares2[1]
    );
    let spec_file = work.path().join("after-drain.yaml");
    std::fs::write(&spec_file, spec).unwrap();
    cli_ok(&daemon.url, Some(TOKEN), &["apply", "-i", spec_file.to_str().unwrap()]);
    wait_for_or(
        "the new OSD on the second host",
        Duration::from_secs(600),
        || sb.running_osd_on(host2, &spares2[1]),
        || cli(&daemon.url, Some(TOKEN), &["osd", "deploy", "status"]).1,
    );
    sb.wait_clean();
    sb.wait_health_ok();
    let then_add_bytes = received_since(&sb, &before);
    println!(
        "measured: swap {swap_bytes} bytes, drain-then-add {then_add_bytes} bytes, ratio {:.2}",
        swap_bytes as f64 / then_add_bytes as f64
    );
    assert!(swap_bytes > 0, "the swap moved nothing");
    assert!(swap_bytes < then_add_bytes, "swap {swap_bytes} bytes, drain-then-add {then_add_bytes}");
    drop(agents);
}
