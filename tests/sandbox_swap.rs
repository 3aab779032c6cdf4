//! A disk swap on a real Ceph cluster (testbed/ceph-sandbox with
//! `--ceph-volume --spare-disks 2`: two OSDs and two blank loop devices per
//! host, every OSD made by the real ceph-volume), against the cephadm way
//! on the same cluster, and the in-place way and `swap stop`, in one run:
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
//! 3. `osd replace C --in-place --with HOST:SPARE` for an OSD C of the
//!    third host: refused on the size-2 pool (Ceph's own words for the
//!    risk checked), then accepted with `--accept-single-copy`: C stopped
//!    under `noout`, destroyed keeping its id and its disk wiped by the
//!    swap's in-place removal, and a new OSD with C's id on the spare
//!    backfills from the other copies; at the end HEALTH_OK, `noout` off,
//!    no upmap entry naming C. The degraded window (PGs below size, seen
//!    from outside every second) is printed beside the window the swap's
//!    record estimated.
//! 4. A free-bay swap on the second host stopped during its hand-over
//!    (backfill paused with `nobackfill` so that the entries are still in
//!    flight): it ends `stopped`, and the cluster, read with the ceph CLI,
//!    keeps each entry the swap issued with the old OSD in at its weight,
//!    the new one at the hand-over weight, no `osd_crush_initial_weight`
//!    left, the balancer off (docs/design/swap.md, "Stop"), and once
//!    backfill goes on every PG active+clean on its entry's targets and
//!    HEALTH_OK.
//!
//! The daemon acts as the cephx user `deploy/ceph-auth.sh` makes, so the
//! caps it gives are the ones a swap needs.
//!
//! The bytes each way made Ceph recover are the sum, over the OSDs, of
//! their `recovery_bytes` perf counter (counted by the OSD that receives a
//! copy; none of the receivers restarts meanwhile, the in-place OSD's new
//! daemon counting from 0): the swap must move less than drain-then-add,
//! the in-place way at most 0.55 of it. The numbers are printed
//! (BENCHMARKS.md). One sandbox serves every step: it takes 50 s to start.

mod common;

use osdkeeper::clock::now_ms;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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

/// What the OSDs received since `before` (an OSD new since then from 0;
/// an OSD whose daemon was made again, the in-place way's, is left out of
/// `before`: its new daemon counts from 0).
fn received_since(sb: &Sandbox, before: &BTreeMap<u64, u64>) -> u64 {
    recovery_bytes(sb)
        .iter()
        .map(|(id, n)| {
            let then = before.get(id).copied().unwrap_or(0);
            n.checked_sub(then).unwrap_or_else(|| panic!("osd.{id}'s recovery_bytes fell from {then} to {n}"))
        })
        .sum()
}

/// What a `DegradedWatch` saw.
#[derive(Clone, Default)]
struct Watched {
    /// The most PGs seen degraded or undersized at once, and the states then.
    worst: u64,
    states: String,
    /// The first and the last sample with any PG degraded or undersized,
    /// each as (its command's start, its end) in ms since the epoch: the
    /// states were read somewhere in between.
    first: Option<(i64, i64)>,
    last: Option<(i64, i64)>,
    /// Every sample whose states differ from the one before: (start, end, states).
    timeline: Vec<(i64, i64, String)>,
}

impl Watched {
    /// How long PGs were surely below size: from the end of the first
    /// sample that saw it to the start of the last one (a `ceph` command
    /// takes a second or more on a loaded machine, so its end is not when
    /// it read the states).
    fn window_ms(&self) -> Option<i64> {
        Some(self.last?.0 - self.first?.1)
    }

    /// At most: from the start of the first such sample to the end of the
    /// last, and on to the next sample's start (the next did not see it).
    fn window_at_most_ms(&self) -> Option<i64> {
        let last = self.last?;
        let next = self.timeline.iter().map(|t| t.0).find(|start| *start > last.0).unwrap_or(last.1);
        Some(next.max(last.1) - self.first?.0)
    }

    /// The timeline, in seconds from `zero_ms`.
    fn told(&self, zero_ms: i64) -> String {
        let at = |ms: i64| (ms - zero_ms) as f64 / 1000.0;
        self.timeline.iter().map(|(a, b, st)| format!("  {:+.1}..{:+.1} s: {st}\n", at(*a), at(*b))).collect()
    }
}

/// Samples the PG states every second until stopped: the most PGs seen
/// degraded or undersized at once, the states then, and when.
struct DegradedWatch {
    stop: Arc<AtomicBool>,
    seen: Arc<Mutex<Watched>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl DegradedWatch {
    fn start(sb: &Sandbox) -> DegradedWatch {
        let stop = Arc::new(AtomicBool::new(false));
        let seen = Arc::new(Mutex::new(Watched::default()));
        let (tool, conf) = (sb.tool("ceph"), sb.conf());
        let (s, w) = (stop.clone(), seen.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                let began = now_ms();
                let out = std::process::Command::new(&tool)
                    .arg("--conf")
                    .arg(&conf)
                    .args(["pg", "stat", "--format", "json"])
                    .output()
                    .unwrap();
                let ended = now_ms();
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
                    let text = Value::Array(states).to_string();
                    let mut w = w.lock().unwrap();
                    if short > 0 {
                        w.first.get_or_insert((began, ended));
                        w.last = Some((began, ended));
                    }
                    if short > w.worst {
                        (w.worst, w.states) = (short, text.clone());
                    }
                    if w.timeline.last().is_none_or(|(_, _, before)| *before != text) {
                        w.timeline.push((began, ended, text));
                    }
                }
                std::thread::sleep(Duration::from_secs(1));
            }
        });
        DegradedWatch { stop, seen, thread: Some(thread) }
    }

    fn finish(mut self) -> Watched {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().unwrap().join().unwrap();
        self.seen.lock().unwrap().clone()
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

/// Waits for swap `id` to end, and returns its detail.
fn wait_ended(sb: &Sandbox, url: &str, id: i64) -> Value {
    wait_for_or(
        "the swap to end",
        Duration::from_secs(900),
        || {
            let d = swap_detail(url, id);
            ["done", "failed", "stopped"].contains(&d["state"].as_str()?).then_some(d)
        },
        || format!("{:#}\nPGs: {}", swap_detail(url, id), sb.ceph(&["pg", "stat"]).1),
    )
}

/// When the swap's action `effect` was first issued (ms since the epoch).
fn issued_at(detail: &Value, effect: &str) -> i64 {
    let actions = detail["actions"].as_array().unwrap();
    let found = actions.iter().find(|a| a["effect"] == effect);
    found.and_then(|a| a["issued_at"].as_i64()).unwrap_or_else(|| panic!("no {effect} action: {detail:#}"))
}

/// When the swap's last action `effect` ended (ms since the epoch).
fn last_finished_at(detail: &Value, effect: &str) -> i64 {
    let actions = detail["actions"].as_array().unwrap();
    let found = actions.iter().filter(|a| a["effect"] == effect).filter_map(|a| a["finished_at"].as_i64()).max();
    found.unwrap_or_else(|| panic!("no {effect} action ended: {detail:#}"))
}

#[test]
fn a_swap_moves_less_than_drain_then_add_never_degrades_and_survives_a_crash() {
    let started = Instant::now();
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
    // `host swap` asks the same of a spec: its dry-run on the host names the
    // spare, its `method` says how the new OSD is made.
    let spec = work.path().join("spare.yaml");
    std::fs::write(
        &spec,
        format!(
            "service_type: osd\nservice_id: spare\nplacement:\n  hosts: [{host1}]\nmethod: raw\n\
             spec:\n  data_devices:\n    paths: [{}]\n",
            spares1[0]
        ),
    )
    .unwrap();
    let by_spec = cli_ok(
        &daemon.url,
        Some(TOKEN),
        &[
            "host",
            "swap",
            host1,
            "--spec",
            spec.to_str().unwrap(),
            "--osds",
            &a.to_string(),
            "--dry-run",
            "--format",
            "json",
        ],
    );
    let by_spec: Value = serde_json::from_str(&by_spec).unwrap();
    let by_ids = cli_ok(
        &daemon.url,
        Some(TOKEN),
        &["osd", "replace", &a.to_string(), "--with", &with, "--method", "raw", "--dry-run", "--format", "json"],
    );
    let by_ids: Value = serde_json::from_str(&by_ids).unwrap();
    for field in ["host", "way", "osds", "disks"] {
        assert_eq!(by_spec[field], by_ids[field], "host swap and osd replace agree on {field}: {by_spec} {by_ids}");
    }
    assert_eq!(by_spec["disks"][0]["path"], spares1[0].as_str(), "{by_spec}");
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
    let done = wait_ended(&sb, &daemon.url, id);
    assert_eq!(done["state"], "done", "{done:#}");
    sb.wait_clean();
    sb.wait_health_ok();
    let seen = watch.finish();
    assert_eq!(seen.worst, 0, "PGs degraded or undersized during the swap: {}", seen.states);
    let swap_bytes = received_since(&sb, &before);
    // What an operator sees of it: the preview, then the swap and the log.
    eprintln!("the preview:\n{preview}");
    eprintln!("{}", cli_ok(&daemon.url, Some(TOKEN), &["swap", "status", &id.to_string()]));
    eprintln!("{}", cli_ok(&daemon.url, Some(TOKEN), &["events", "--since", "30m"]));

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

    in_place(&sb, &daemon.url, &disks[2], then_add_bytes);
    stopped_midway(&sb, &daemon.url, &disks[1]);
    println!("measured: the whole test {:.0} s", started.elapsed().as_secs_f64());
    drop(agents);
}

/// 3. The in-place way for the host's first OSD, into the host's first
///    spare: refused on the size-2 pool, then accepted.
fn in_place(sb: &Sandbox, url: &str, (host, old_disks, spares): &(String, Vec<String>, Vec<String>), then_add: u64) {
    let c = sb.osds_under(host)[0];
    let old_disk = old_disks.iter().find(|d| sb.running_osd_on(host, d) == Some(c)).cloned().unwrap();
    let (id, with) = (c.to_string(), format!("{host}:{}", spares[0]));
    let replace = |more: &[&str]| {
        let mut args = vec!["osd", "replace", id.as_str(), "--in-place", "--with", with.as_str()];
        args.extend_from_slice(more);
        cli(url, Some(TOKEN), &args)
    };
    // Every PG with a copy on C keeps one copy meanwhile: Ceph's own count.
    let on_c = sb.json(&["pg", "ls-by-osd", &id])["pg_stats"].as_array().map_or(0, Vec::len);
    let refusal = format!(
        "way: in-place would leave {on_c} PGs of pool 'sandbox' (size 2, min_size 1) with one copy left until the new OSD \
         has backfilled them; --accept-single-copy takes that risk"
    );
    let (code, out, err) = replace(&["--dry-run", "--format", "json"]);
    assert_eq!(code, 0, "the preview: {out}{err}");
    let preview: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(preview["refusals"], serde_json::json!([refusal]), "{preview:#}");
    let row = preview["ways"].as_array().unwrap().iter().find(|w| w["way"] == "in-place").cloned().unwrap();
    assert_eq!(row["pgs_degraded"], on_c, "{preview:#}");
    // The swaps before this one made OSDs: their deployments time the making.
    let making = &preview["making"];
    assert!(making["seconds"].as_f64().is_some_and(|s| s > 0.0), "no making estimated: {preview:#}");
    let (_, text, _) = replace(&["--dry-run", "--accept-single-copy"]);
    eprintln!("the in-place preview:\n{text}");
    let swaps_before = cli_ok(url, Some(TOKEN), &["swap", "ls", "--format", "json"]);
    let (code, out, err) = replace(&[]);
    assert_ne!(code, 0, "scheduled without --accept-single-copy: {out}");
    assert!(err.contains(&refusal) && err.contains("nothing was scheduled"), "stderr: {err}\nexpected: {refusal}");
    assert_eq!(cli_ok(url, Some(TOKEN), &["swap", "ls", "--format", "json"]), swaps_before, "nothing stored");

    let before: BTreeMap<u64, u64> = recovery_bytes(sb).into_iter().filter(|(osd, _)| *osd != c).collect();
    let (watch, began) = (DegradedWatch::start(sb), Instant::now());
    let (code, out, err) = replace(&["--accept-single-copy", "--format", "json"]);
    assert_eq!(code, 0, "with --accept-single-copy: {out}{err}");
    let swap: Value = serde_json::from_str(&out).unwrap();
    let swap_id = swap["swap_id"].as_i64().unwrap();
    assert!(swap["risk"]["accepted"][0].as_str().unwrap().contains("with one copy"), "the risk recorded: {swap:#}");
    let done = wait_ended(sb, url, swap_id);
    assert_eq!(done["state"], "done", "{done:#}");
    let wall = began.elapsed();
    sb.wait_clean();
    sb.wait_health_ok();
    let seen = watch.finish();
    let bytes = received_since(sb, &before);

    assert_eq!(done["disks"][0]["osd"], c, "the old id: {done:#}");
    assert_eq!(sb.running_osd_on(host, &spares[0]), Some(c), "osd.{c} up and in on {}", spares[0]);
    assert_eq!(blkid_type(&old_disk), None, "osd.{c}'s old disk {old_disk} wiped");
    let o = sb.osd(c as u32).unwrap();
    assert!(!o["state"].as_array().unwrap().iter().any(|f| f == "noout" || f == "destroyed"), "osd.{c}: {o}");
    let names_c = |e: &Value| e["mappings"].as_array().unwrap().iter().any(|m| m["from"] == c || m["to"] == c);
    let upmaps = upmap_entries(sb);
    assert!(!upmaps.iter().any(names_c), "an upmap entry names osd.{c}: {upmaps:?}");
    assert!(seen.worst > 0, "osd.{c}'s PGs were never seen below size: the watch missed the window");
    // osdkeeper's own view of the window: from the stop (by the swap's
    // removal, in the swap's actions) to the swap's end once it saw no PG
    // short of copies; the removal lifted `noout` before, once C was up.
    let kept = done["degraded_window"]["seconds"].as_f64().unwrap_or_else(|| panic!("a closed window: {done:#}"));
    let (stopped, closed) = (issued_at(&done, "stop-daemon"), done["finished_at"].as_i64().unwrap());
    assert_eq!(done["degraded_window"]["until"].as_i64(), Some(closed), "closed at the swap's end: {done:#}");
    assert!(kept <= (closed - stopped) as f64 / 1000.0, "the window runs from the stop to the swap's end: {kept} s");
    assert!(last_finished_at(&done, "rm-noout") <= closed, "noout lifted before the end: {done:#}");
    // What the outside watch surely saw lies inside the swap's window: a
    // sample that saw PGs below size ended after the stop was issued, and
    // one began before the swap's last look found none (its end). The
    // daemon runs on this machine: one clock.
    let window = seen.window_ms().unwrap() as f64 / 1000.0;
    let (first, last) = (seen.first.unwrap(), seen.last.unwrap());
    assert!(
        first.1 >= stopped && last.0 <= closed,
        "PGs seen below size from {:+.1} s to {:+.1} s after the stop, outside the swap's window of {kept:.1} s; the \
         PG states from the stop on:\n{}the swap: {done:#}",
        (first.1 - stopped) as f64 / 1000.0,
        (last.0 - stopped) as f64 / 1000.0,
        seen.told(stopped)
    );
    let (estimated, made) = (done["risk"]["window_s"].as_f64(), done["risk"]["making_s"].as_f64());
    let (estimated, made) = (estimated.unwrap_or(f64::NAN), made.unwrap_or(f64::NAN));
    println!(
        "measured: in-place {bytes} bytes, drain-then-add {then_add} bytes, ratio {:.2}; degraded window {window:.0}-{:.0} s \
         (up to {} PGs below size; osdkeeper: {kept:.0} s from the stop to the swap's end; the record's estimate: \
         making {made:.0} s ({}) + backfill {estimated:.0} s); the swap {:.0} s",
        bytes as f64 / then_add as f64,
        seen.window_at_most_ms().unwrap() as f64 / 1000.0,
        seen.worst,
        making["basis"],
        wall.as_secs_f64()
    );
    assert!(bytes > 0, "the in-place way moved nothing");
    assert!(bytes as f64 <= 0.55 * then_add as f64, "in-place {bytes} bytes, drain-then-add {then_add}");
}

/// 4. A free-bay swap of the host's first OSD for its first spare, stopped
///    while its hand-over is in flight (backfill paused).
fn stopped_midway(sb: &Sandbox, url: &str, (host, _, spares): &(String, Vec<String>, Vec<String>)) {
    let d = sb.osds_under(host)[0];
    let weight = sb.crush_weight(d as u32);
    let entries_before = upmap_entries(sb);
    assert_eq!(sb.ceph(&["osd", "set", "nobackfill"]).0, 0);
    let with = format!("{host}:{}", spares[0]);
    let out = cli_ok(url, Some(TOKEN), &["osd", "replace", &d.to_string(), "--with", &with, "--format", "json"]);
    let id = serde_json::from_str::<Value>(&out).unwrap()["swap_id"].as_i64().unwrap();
    wait_for_or(
        "the hand-over's first entries",
        Duration::from_secs(600),
        || {
            let s = swap_detail(url, id);
            (s["state"] == "handing-over" && s["handed"].as_u64() > Some(0)).then_some(())
        },
        || format!("{:#}\nPGs: {}", swap_detail(url, id), sb.ceph(&["pg", "stat"]).1),
    );
    cli_ok(url, Some(TOKEN), &["swap", "stop", &id.to_string()]);
    let stopped = wait_ended(sb, url, id);
    let why = || {
        format!(
            "{stopped:#}\nosd dump: {}\nPGs: {}",
            sb.ceph(&["osd", "dump"]).1,
            sb.ceph(&["pg", "dump", "pgs_brief"]).1
        )
    };
    assert_eq!(stopped["state"], "stopped", "{}", why());
    let ending = stopped["ending"].as_str().unwrap_or_default();
    assert!(ending.contains("handed over to their final place are kept there"), "{}", why());
    let (code, _, err) = cli(url, Some(TOKEN), &["swap", "stop", &id.to_string()]);
    assert!(code != 0 && err.contains("has ended"), "a second stop: {err}");
    let new = stopped["disks"][0]["osd"].as_u64().expect("the new OSD made before the stop");

    // The entries the swap issued, as its actions logged them.
    let mut issued: BTreeMap<String, Vec<(u64, u64)>> = BTreeMap::new();
    for a in stopped["actions"].as_array().unwrap().iter().filter(|a| a["effect"] == "upmap") {
        for command in a["detail"].as_str().unwrap().split("; ") {
            let words: Vec<&str> = command.split(' ').collect();
            let pairs: Vec<u64> = words[4..].iter().map(|w| w.parse().unwrap()).collect();
            issued.insert(words[3].to_string(), pairs.chunks(2).map(|p| (p[0], p[1])).collect());
        }
    }
    assert_eq!(issued.len() as u64, stopped["handed"].as_u64().unwrap(), "{}", why());
    assert_eq!(sb.ceph(&["osd", "unset", "nobackfill"]).0, 0);
    sb.wait_clean();
    sb.wait_health_ok();

    // From outside: each entry kept as issued, its PG clean on the targets
    // and off the sources; nothing else of the swap's pinned.
    let entries = upmap_entries(sb);
    let pgs = sb.json(&["pg", "dump", "pgs_brief"]);
    let pgs = pgs["pg_stats"].as_array().cloned().unwrap_or_else(|| pgs.as_array().cloned().unwrap_or_default());
    for (pgid, pairs) in &issued {
        let entry = entries.iter().find(|e| e["pgid"] == pgid.as_str());
        let kept: Option<Vec<(u64, u64)>> = entry.map(|e| {
            e["mappings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| (m["from"].as_u64().unwrap(), m["to"].as_u64().unwrap()))
                .collect()
        });
        // An entry issued empty (`rm-pg-upmap-items`) is one the swap took off.
        assert_eq!(kept.as_ref(), (!pairs.is_empty()).then_some(pairs), "{pgid}'s entry: {entries:?}");
        let pg = pgs.iter().find(|p| p["pgid"] == pgid.as_str()).unwrap_or_else(|| panic!("{pgid}: {pgs:?}"));
        let acting: Vec<u64> = pg["acting"].as_array().unwrap().iter().filter_map(Value::as_u64).collect();
        assert!(pairs.iter().all(|(from, to)| acting.contains(to) && !acting.contains(from)), "{pgid}: {pg}");
        assert_eq!(pg["state"], "active+clean", "{pgid}: {pg}");
    }
    let swaps = |e: &Value| {
        let names = e["mappings"].as_array().unwrap().iter().any(|m| m["from"] == d || m["to"] == new);
        names && !entries_before.contains(e) && !issued.contains_key(e["pgid"].as_str().unwrap())
    };
    let others: Vec<&Value> = entries.iter().filter(|e| swaps(e)).collect();
    assert!(others.is_empty(), "entries of the swap's OSDs it did not issue: {others:?}");
    assert!(entries_before.iter().all(|e| entries.contains(e)), "before: {entries_before:?}\nafter: {entries:?}");
    // The old OSD in at its weight, the new one at the hand-over weight.
    let old = sb.osd(d as u32).unwrap();
    assert!(old["up"] == 1 && old["in"] == 1, "osd.{d}: {old}");
    assert!((sb.crush_weight(d as u32) - weight).abs() < 1e-4, "osd.{d} at {weight}: {}", sb.crush_weight(d as u32));
    let n = sb.osd(new as u32).unwrap();
    assert!(n["up"] == 1 && n["in"] == 1, "osd.{new}: {n}");
    assert!((sb.crush_weight(new as u32) - 0.0001).abs() < 1e-4, "osd.{new} at W0: {}", sb.crush_weight(new as u32));
    // What was set is put back, but the balancer stays off: it would undo the hand-over.
    let config = sb.json(&["config", "dump"]);
    let left: Vec<&Value> =
        config.as_array().unwrap().iter().filter(|e| e["name"] == "osd_crush_initial_weight").collect();
    assert!(left.is_empty(), "osd_crush_initial_weight left: {left:?}");
    assert_eq!(sb.json(&["balancer", "status"])["active"], false, "the balancer stays off");
    println!("measured: swap stopped with {} entries kept, HEALTH_OK", issued.len());
}
