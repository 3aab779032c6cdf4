//! The removal preview against a real Ceph cluster (testbed/ceph-sandbox
//! with `--loop`: three hosts of two OSDs, pool `sandbox` of size 2, one
//! copy per host), with one real agent per CRUSH host and the real daemon.
//!
//! One test, in order on one sandbox: removing every OSD of two hosts is
//! refused with a blocker that names the pool, and the cluster is left as
//! it was; then the preview of one OSD is compared with what its drain
//! actually moved, PG by PG: the same PGs, from the same OSDs, to the same
//! OSDs (CRUSH's own answer, nothing else changing the map meanwhile);
//! then a drain waits, saying why in the cluster's terms, while another
//! OSD is stopped and PGs are degraded, and proceeds once it is back.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::client::Api;
use common::sandbox::{sandbox_agent, test_release, Sandbox};
use common::*;
use serde_json::Value;

const TOKEN: &str = "sandbox-api-token";
const AGENT_TOKEN: &str = "sandbox-agent-token";
const HOSTS: [&str; 3] = ["f5-422-01", "f5-422-02", "f5-422-03"];

fn env() -> Vec<(&'static str, &'static str)> {
    vec![("OSDKEEPER_TOKEN", TOKEN), ("OSDKEEPER_AGENT_TOKEN", AGENT_TOKEN)]
}

/// PG id -> its up set, sorted, as the cluster reports it now.
fn up_sets(sb: &Sandbox) -> BTreeMap<String, Vec<u32>> {
    let dump = sb.json(&["pg", "dump", "pgs"]);
    dump["pg_stats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|pg| {
            let mut up: Vec<u32> = pg["up"].as_array().unwrap().iter().map(|o| o.as_u64().unwrap() as u32).collect();
            up.sort_unstable();
            (pg["pgid"].as_str().unwrap().to_string(), up)
        })
        .collect()
}

fn sorted(v: &Value) -> Vec<u32> {
    let mut out: Vec<u32> = v.as_array().unwrap().iter().map(|o| o.as_u64().unwrap() as u32).collect();
    out.sort_unstable();
    out
}

fn preview(url: &str, ids: &[&str]) -> Value {
    let mut args = vec!["osd", "rm"];
    args.extend(ids);
    args.extend(["--dry-run", "--format", "json"]);
    let out = cli_ok(url, Some(TOKEN), &args);
    serde_json::from_str(&out).unwrap()
}

fn removal_of(url: &str, osd: u32) -> Option<Value> {
    let out = cli_ok(url, Some(TOKEN), &["osd", "rm", "status", "--format", "json", "--history", "50"]);
    serde_json::from_str::<Value>(&out).unwrap().as_array().unwrap().iter().rfind(|r| r["osd_id"] == osd).cloned()
}

#[test]
fn the_preview_refuses_what_cannot_finish_and_predicts_what_moves() {
    let work = tempfile::Builder::new().prefix("osdkeeper-sandbox-preview").tempdir().unwrap();
    let sb = Sandbox::start(&work.path().join("cluster"), &["--loop"]);
    let loops = sb.loops();
    let dev = |id: u32| loops.iter().find(|(i, _)| *i == id).map(|(_, d)| d.clone()).unwrap();
    let mut agents = Vec::new();
    for (n, host) in HOSTS.iter().enumerate() {
        let ids = [2 * n as u32, 2 * n as u32 + 1];
        agents.push((host, sandbox_agent(work.path(), &sb, host, &[dev(ids[0]), dev(ids[1])], AGENT_TOKEN)));
    }
    let config = format!(
        "poll:\n  interval_s: 2\n  timeout_s: 10\nreconcile:\n  enabled: false\nremoval:\n  interval_s: 1\n{}  timeout_s: 30\n",
        sb.ceph_yaml(None)
    );
    let daemon = start_daemon(work.path(), &config, &env());
    for (host, (_, addr)) in &agents {
        cli_ok(&daemon.url, Some(TOKEN), &["host", "add", host, addr]);
    }
    // Nothing else may change the map while the prediction is checked.
    assert_eq!(sb.ceph(&["balancer", "off"]).0, 0);
    sb.wait_clean();

    // 1. Every OSD of two of the three hosts: the pool keeps one host, its
    //    PGs one copy of two. The preview says so, and `osd rm` refuses.
    let weights: Vec<f64> = (0..6).map(|id| sb.crush_weight(id)).collect();
    let two_hosts = preview(&daemon.url, &["0", "1", "2", "3"]);
    let blockers: Vec<&str> = two_hosts["blockers"].as_array().unwrap().iter().map(|b| b.as_str().unwrap()).collect();
    assert!(
        blockers.iter().any(|b| b.starts_with("pool 'sandbox' (size 2)") && b.contains("only 1 would keep weight")),
        "{blockers:?}"
    );
    let (code, _, err) = cli(&daemon.url, Some(TOKEN), &["osd", "rm", "0", "1", "2", "3"]);
    assert_eq!(code, 1, "refused: {err}");
    assert!(err.contains("pool 'sandbox'") && err.contains("--ignore-preview-blockers"), "{err}");
    assert_eq!(removal_of(&daemon.url, 0), None, "nothing was scheduled");
    let after: Vec<f64> = (0..6).map(|id| sb.crush_weight(id)).collect();
    assert_eq!(after, weights, "the weights are intact");
    let table = cli_ok(&daemon.url, Some(TOKEN), &["osd", "rm", "0", "1", "2", "3", "--dry-run"]);
    assert!(table.contains("Blockers (osd rm refuses") && table.contains("pool 'sandbox'"), "{table}");

    // 2. One OSD: the preview, then the drain, then what really moved;
    //    one PG pinned onto it by an upmap entry, as the balancer pins.
    let pinned = sb.pin_a_pg_onto(1, &[0, 1]);
    let before = up_sets(&sb);
    let started = std::time::Instant::now();
    let p = preview(&daemon.url, &["1"]);
    // BENCHMARKS.md reads the preview's latency from this line.
    eprintln!("timing: osd rm 1 --dry-run answered in {} ms", started.elapsed().as_millis());
    assert_eq!(p["blockers"], serde_json::json!([]), "{p}");
    assert_eq!(p["ok_to_stop"], true, "{p}");
    // Every PG on osd.1 moves; so may some of osd.0's (their host lost weight).
    let on_osd1: Vec<&String> = before.iter().filter(|(_, up)| up.contains(&1)).map(|(pg, _)| pg).collect();
    assert!(!on_osd1.is_empty());
    let moving: Vec<&str> = p["moves"].as_array().unwrap().iter().map(|m| m["pgid"].as_str().unwrap()).collect();
    assert!(on_osd1.iter().all(|pg| moving.contains(&pg.as_str())), "{on_osd1:?} vs {moving:?}");
    assert_eq!(p["pgs_to_move"], moving.len());
    assert!(moving.contains(&pinned.as_str()), "the monitors drop {pinned}'s entry onto osd.1 at weight 0: {p}");
    assert!(p["bytes_to_move"].as_u64().unwrap() > 0, "{p}");
    cli_ok(&daemon.url, Some(TOKEN), &["osd", "rm", "1"]);
    wait_for_or(
        "osd.1's removal to finish",
        Duration::from_secs(300),
        || removal_of(&daemon.url, 1).filter(|r| r["state"] == "done"),
        || format!("status now: {:?}", removal_of(&daemon.url, 1)),
    );
    sb.wait_clean();
    let now = up_sets(&sb);
    let mut actual: Vec<(String, Vec<u32>, Vec<u32>)> = Vec::new();
    for (pgid, up) in &before {
        let after = &now[pgid];
        let from: Vec<u32> = up.iter().filter(|o| !after.contains(o)).copied().collect();
        let to: Vec<u32> = after.iter().filter(|o| !up.contains(o)).copied().collect();
        if !from.is_empty() || !to.is_empty() {
            actual.push((pgid.clone(), from, to));
        }
    }
    let mut predicted: Vec<(String, Vec<u32>, Vec<u32>)> = p["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["pgid"].as_str().unwrap().to_string(), sorted(&m["from"]), sorted(&m["to"])))
        .collect();
    predicted.sort();
    assert_eq!(predicted, actual, "the PGs that moved, from where and to where, are the ones predicted");
    let mut receivers: Vec<u32> = actual.iter().flat_map(|(_, _, to)| to.clone()).collect();
    receivers.sort_unstable();
    receivers.dedup();
    let predicted_receivers: Vec<u32> =
        p["receivers"].as_array().unwrap().iter().map(|r| r["osd"].as_u64().unwrap() as u32).collect();
    assert_eq!(predicted_receivers, receivers);
    let samples = Api::new(&daemon.url, Some(TOKEN)).removal(&removal_of(&daemon.url, 1).unwrap()["removal_id"], "");
    let samples = samples.body["samples"].as_array().unwrap().clone();
    assert!(!samples.is_empty() && samples.iter().all(|s| s["bytes_left"].is_u64()), "{samples:?}");
    let preview_of_2 = preview(&daemon.url, &["2"]);

    // 3. Pacing by health: with osd.4 stopped its PGs are degraded, and a
    //    drain of osd.2 waits, saying so; once osd.4 is back it proceeds.
    //    (The preview lets it be scheduled: the PGs short of osd.4 are not
    //    the removal's doing.)
    sb.stop_daemon("osd.4");
    wait_for("PGs degraded with osd.4 stopped", Duration::from_secs(120), || {
        let s = sb.json(&["pg", "stat"]);
        let states = s["pg_summary"]["num_pg_by_state"].as_array()?.clone();
        states.iter().any(|st| st["name"].as_str().is_some_and(|n| n.contains("degraded"))).then_some(())
    });
    let weight2 = sb.crush_weight(2);
    cli_ok(&daemon.url, Some(TOKEN), &["osd", "rm", "2"]);
    let waiting = wait_for_or(
        "osd.2's removal to wait on the degraded PGs",
        Duration::from_secs(60),
        || removal_of(&daemon.url, 2).filter(|r| r["waiting_on"].as_str().is_some_and(|w| w.starts_with("waiting: "))),
        || format!("status now: {:?}", removal_of(&daemon.url, 2)),
    );
    let why = waiting["waiting_on"].as_str().unwrap();
    assert!(why.contains("PGs degraded") && why.contains("PGs undersized"), "in the cluster's terms: {why}");
    assert_eq!(waiting["state"], "queued", "{waiting}");
    let (_, table, _) = cli(&daemon.url, Some(TOKEN), &["osd", "rm", "status"]);
    assert!(table.contains("waiting: ") && table.contains("PGs degraded"), "{table}");
    assert_eq!(sb.crush_weight(2), weight2, "no drain while degraded");
    sb.start_stopped();
    wait_for_or(
        "osd.2's removal to finish once osd.4 is back",
        Duration::from_secs(300),
        || removal_of(&daemon.url, 2).filter(|r| r["state"] == "done"),
        || format!("status now: {:?}", removal_of(&daemon.url, 2)),
    );
    sb.wait_clean();
    older_tools_are_refused(work.path(), &sb, &config);
    eprintln!(
        "preview of osd.1: {} PGs, {} bytes, eta {:?} ({:?}); a later preview of osd.2: eta {:?} ({:?})",
        p["pgs_to_move"],
        p["bytes_to_move"],
        p["eta_s"],
        p["eta_basis"],
        preview_of_2["eta_s"],
        preview_of_2["eta_basis"],
    );
}

/// On a newer cluster, the host's own Pacific osdmaptool would misread the
/// map: the preview is refused, saying which tool and what to do.
fn older_tools_are_refused(work: &std::path::Path, sb: &Sandbox, config: &str) {
    if test_release() == "pacific" {
        return;
    }
    let dir = work.join("old-osdmaptool");
    std::fs::create_dir_all(&dir).unwrap();
    let own = sb.tool("osdmaptool").display().to_string();
    let config = config.replace(&format!("osdmaptool: {own}\n"), "osdmaptool: /usr/bin/osdmaptool\n");
    assert!(config.contains("osdmaptool: /usr/bin/osdmaptool"), "{config}");
    let daemon = start_daemon(&dir, &config, &env());
    let (code, _, err) = cli(&daemon.url, Some(TOKEN), &["osd", "rm", "3", "--dry-run"]);
    assert_ne!(code, 0, "refused: {err}");
    let required = format!("older than this cluster (require_osd_release {})", test_release());
    assert!(err.contains("/usr/bin/osdmaptool is Ceph 16.2.") && err.contains(&required), "{err}");
}
