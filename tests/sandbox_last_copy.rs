//! The last copy, on a real cluster: testbed/ceph-sandbox with `--loop`
//! (pool 'sandbox', size 2), one real agent per CRUSH host, the real
//! daemon. `osd replace 5 --in-place --accept-single-copy` is scheduled
//! and the daemon dies right after the `noout` of the swap's removal
//! (`OSDKEEPER_CRASH_AFTER=removal:noout`), before the stop. The OSD
//! holding the other copy of one of osd.5's PGs is stopped (with its own
//! `noout`, so that nothing moves). The daemon starts again: the stop of
//! osd.5 waits, naming the PGs that would have no copy, the swap saying so
//! in its removal's words, and osd.5 is neither stopped, destroyed nor
//! zapped (a `ceph` wrapper logs every command the daemon runs). Once that
//! OSD is back, the removal goes on to the stop, the destroy and the zap,
//! and the swap waits for the new disk.

mod common;

use std::process::Command;
use std::time::Duration;

use common::loop_hosts::*;
use common::sandbox::{ceph_wrapper, Sandbox};
use common::*;
use serde_json::Value;

fn swap_detail(url: &str, id: i64) -> Value {
    serde_json::from_str(&cli_ok(url, Some(TOKEN), &["swap", "status", &id.to_string(), "--format", "json"])).unwrap()
}

/// A PG of pool 'sandbox' with a copy on osd.5 and its other copy's OSD.
fn pg_sharing_with_5(sb: &Sandbox) -> (String, u64) {
    sb.pgs_brief()
        .iter()
        .filter_map(|pg| {
            let acting: Vec<u64> = pg["acting"].as_array()?.iter().filter_map(Value::as_u64).collect();
            let other = acting.iter().find(|o| **o != 5).copied()?;
            acting.contains(&5).then(|| (pg["pgid"].as_str().unwrap_or_default().to_string(), other))
        })
        .find(|(pgid, _)| !pgid.starts_with("1."))
        .expect("a PG of pool 'sandbox' with a copy on osd.5")
}

/// Starts osd.`id` of the `--loop` sandbox again under `host`.
fn start_osd(sb: &Sandbox, id: u64, host: &str) {
    let conf = sb.conf();
    let out = Command::new(sb.tool("ceph-osd"))
        .args(["-c", conf.to_str().unwrap(), "-i", &id.to_string()])
        .env("PATH", sb.path_env())
        .env("NODE_NAME", host)
        .output()
        .unwrap();
    assert!(out.status.success(), "ceph-osd -i {id}: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn an_in_place_stop_waits_while_the_osd_holding_the_other_copy_is_down() {
    let work = tempfile::Builder::new().prefix("osdkeeper-sandbox").tempdir().unwrap();
    let sb = Sandbox::start(&work.path().join("cluster"), &["--loop"]);
    let (ceph_bin, ceph_log) = ceph_wrapper(work.path(), &sb);
    let dev = |id: u32| device_of(&sb, id);
    let agents = agents(work.path(), &sb);

    // The swap, and a crash right after its removal's noout: the stop was next.
    let mut crash_env = env();
    crash_env.push(("OSDKEEPER_CRASH_AFTER", "removal:noout"));
    let mut crashing = start_daemon(work.path(), &daemon_config(&sb, &ceph_bin), &crash_env);
    add_hosts(&crashing.url, &agents);
    let replace = ["osd", "replace", "5", "--in-place", "--accept-single-copy", "--format", "json"];
    let scheduled: Value = serde_json::from_str(&cli_ok(&crashing.url, Some(TOKEN), &replace)).unwrap();
    let swap_id = scheduled["swap_id"].as_i64().expect("a swap id");
    wait_for("the daemon to crash right after the noout", Duration::from_secs(120), || {
        crashing.proc.child.try_wait().ok().flatten().map(|_| ())
    });
    assert_eq!(count_lines(&ceph_log, "osd add-noout osd.5"), 1, "the noout went through before the crash");

    // The other copy of a PG of osd.5 goes down, held where it is by noout.
    let (pgid, partner) = pg_sharing_with_5(&sb);
    let partner_host = host_of(partner as u32);
    sb.ceph(&["osd", "add-noout", &format!("osd.{partner}")]);
    sb.stop_daemon(&format!("osd.{partner}"));
    wait_for_or(
        &format!("osd.{partner} down"),
        Duration::from_secs(120),
        || sb.osd(partner as u32).filter(|o| o["up"] == 0).map(|_| ()),
        || format!("osd.{partner}: {:?}", sb.osd(partner as u32)),
    );
    let commands_before = std::fs::read_to_string(&ceph_log).unwrap().lines().count();

    // The daemon again: the stop of osd.5 waits.
    let daemon = start_daemon(work.path(), &daemon_config(&sb, &ceph_bin), &env());
    let held = wait_for_or(
        "the stop of osd.5 to wait on the last copy",
        Duration::from_secs(120),
        || {
            let d = swap_detail(&daemon.url, swap_id);
            let waiting = d["waiting_on"].as_str()?.to_string();
            waiting.starts_with("removal of osd.5 (stopping): the stop of osd.5 waits").then_some(waiting)
        },
        || format!("the swap: {:#}", swap_detail(&daemon.url, swap_id)),
    );
    assert!(held.contains("pool 'sandbox' (size 2, min_size 1)") && held.contains("with no copy left"), "{held}");
    assert!(held.contains(&pgid) || held.contains("more"), "{pgid} named: {held}");
    assert!(held.contains("no flag accepts a PG's last copy"), "{held}");
    let (_, events, _) = cli(&daemon.url, Some(TOKEN), &["events"]);
    assert!(events.contains("the stop of osd.5 waits"), "{events}");
    // More rounds: nothing is done to osd.5.
    std::thread::sleep(Duration::from_secs(5));
    let osd5 = sb.osd(5).expect("osd.5 exists");
    assert_eq!(osd5["up"], 1, "osd.5 was stopped: {osd5}");
    let log = std::fs::read_to_string(&ceph_log).unwrap();
    let since: Vec<&str> = log.lines().skip(commands_before).collect();
    for act in ["osd destroy", "osd down", "osd purge"] {
        assert!(!since.iter().any(|l| l.contains(act)), "`{act}` while held: {since:#?}");
    }
    let agent_log = std::fs::read_to_string(work.path().join("agent-f5-422-03.log")).unwrap_or_default();
    assert!(!agent_log.lines().any(|l| l.contains("stopping an OSD daemon") || l.contains("zap")), "{agent_log}");
    assert_eq!(blkid_type(&dev(5)).as_deref(), Some("ceph_bluestore"), "osd.5's disk is not wiped");

    // The other copy is back: the removal goes on to the stop, destroy and zap.
    start_osd(&sb, partner, partner_host);
    let on = wait_for_or(
        "the swap to wait for the new disk",
        Duration::from_secs(300),
        || Some(swap_detail(&daemon.url, swap_id)).filter(|d| d["state"] == "awaiting-disk"),
        || format!("the swap: {:#}\nPGs: {}", swap_detail(&daemon.url, swap_id), sb.ceph(&["pg", "stat"]).1),
    );
    let osd5 = sb.osd(5).expect("osd.5 keeps its id");
    assert!(osd5["state"].as_array().unwrap().iter().any(|s| s == "destroyed"), "{osd5}\n{on:#}");
    let (_, events, _) = cli(&daemon.url, Some(TOKEN), &["events"]);
    assert!(events.contains("goes on, the cluster no worse than accepted again"), "{events}");
    sb.ceph(&["osd", "rm-noout", &format!("osd.{partner}")]);
    drop(agents);
}
