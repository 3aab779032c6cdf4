//! An id given to a new OSD while a removal's purge outcome was lost, on a
//! real cluster: testbed/ceph-sandbox with `--loop`, one real agent per
//! CRUSH host, the real daemon. The daemon removes osd.5 with `--zap` and
//! dies right after the purge (`OSDKEEPER_CRASH_AFTER=purge`), before it
//! recorded the outcome; a new OSD is made with id 5 on the same disk
//! (`ceph osd new UUID 5`, `ceph-osd --mkfs`), as a deployment would;
//! the daemon starts again. The removal finds another uuid at the id: it
//! ends superseded, and the new OSD is neither stopped, marked down,
//! destroyed nor purged, and its disk is not wiped (a `ceph` wrapper logs
//! every command the daemon runs).

mod common;

use std::process::Command;
use std::time::Duration;

use common::loop_hosts::*;
use common::sandbox::{ceph_wrapper, Sandbox};
use common::*;
use serde_json::Value;

fn removal_of(url: &str, osd: u32) -> Option<Value> {
    let out = cli_ok(url, Some(TOKEN), &["osd", "rm", "status", "--format", "json", "--history", "50"]);
    serde_json::from_str::<Value>(&out).unwrap().as_array().unwrap().iter().rfind(|r| r["osd_id"] == osd).cloned()
}

/// Runs one of the sandbox's own Ceph programs; it must succeed.
fn run(sb: &Sandbox, tool: &str, args: &[&str], env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new(sb.tool(tool));
    cmd.args(args).env("PATH", sb.path_env());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap_or_else(|e| panic!("run {tool}: {e}"));
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    assert!(out.status.success(), "{tool} {args:?}: {}{}", text(&out.stdout), text(&out.stderr));
    text(&out.stdout)
}

/// A new OSD with `id` on `device` under `host`, as a deployment makes one
/// on a disk it finds blank: a new uuid and key, its label written by
/// `ceph-osd --mkfs`, started. Its uuid.
fn new_osd(sb: &Sandbox, id: u32, host: &str, device: &str) -> String {
    let out = Command::new("dd")
        .args(["if=/dev/zero", &format!("of={device}"), "bs=1M", "count=10", "oflag=direct"])
        .output()
        .unwrap();
    assert!(out.status.success(), "dd: {}", String::from_utf8_lossy(&out.stderr));
    let data = sb.dir.join(format!("osd.{id}"));
    std::fs::rename(&data, sb.dir.join(format!("osd.{id}.purged"))).unwrap();
    std::fs::create_dir(&data).unwrap();
    let uuid = String::from_utf8(Command::new("uuidgen").output().unwrap().stdout).unwrap().trim().to_string();
    let key = run(sb, "ceph-authtool", &["--gen-print-key"], &[]).trim().to_string();
    let secrets = sb.dir.join("new-osd-secrets.json");
    std::fs::write(&secrets, format!(r#"{{"cephx_secret": "{key}"}}"#)).unwrap();
    let conf = sb.conf();
    let conf = conf.to_str().unwrap();
    let made =
        run(sb, "ceph", &["--conf", conf, "osd", "new", &uuid, &id.to_string(), "-i", secrets.to_str().unwrap()], &[]);
    assert_eq!(made.trim(), id.to_string(), "the freed id is given again");
    let keyring = data.join("keyring");
    run(
        sb,
        "ceph-authtool",
        &["--create-keyring", keyring.to_str().unwrap(), "--name", &format!("osd.{id}"), "--add-key", &key],
        &[],
    );
    run(sb, "ceph-osd", &["-c", conf, "-i", &id.to_string(), "--mkfs", "--osd-uuid", &uuid], &[]);
    run(sb, "ceph-osd", &["-c", conf, "-i", &id.to_string()], &[("NODE_NAME", host)]);
    uuid
}

#[test]
fn an_id_reused_while_a_purges_outcome_was_lost_is_never_acted_on() {
    let work = tempfile::Builder::new().prefix("osdkeeper-sandbox").tempdir().unwrap();
    let sb = Sandbox::start(&work.path().join("cluster"), &["--loop"]);
    let (ceph_bin, ceph_log) = ceph_wrapper(work.path(), &sb);
    let dev = |id: u32| device_of(&sb, id);
    let agents = agents(work.path(), &sb);
    let old_uuid = sb.osd(5).unwrap()["uuid"].as_str().unwrap().to_string();

    // The removal, and a crash right after the purge went through.
    let mut crash_env = env();
    crash_env.push(("OSDKEEPER_CRASH_AFTER", "purge"));
    let mut crashing = start_daemon(work.path(), &daemon_config(&sb, &ceph_bin), &crash_env);
    add_hosts(&crashing.url, &agents);
    cli_ok(&crashing.url, Some(TOKEN), &["osd", "rm", "5", "--zap", "--fast"]);
    wait_for("the daemon to crash right after the purge", Duration::from_secs(300), || {
        crashing.proc.child.try_wait().ok().flatten().map(|_| ())
    });
    assert!(sb.osd(5).is_none(), "the purge went through before the crash");
    assert_eq!(count_lines(&ceph_log, "osd purge 5"), 1);

    // A deployment takes the freed id on the same disk.
    let new_uuid = new_osd(&sb, 5, "f5-422-03", &dev(5));
    assert_ne!(new_uuid, old_uuid);
    wait_for_or(
        "the new osd.5 up and in",
        Duration::from_secs(120),
        || sb.osd(5).filter(|o| o["up"] == 1 && o["in"] == 1 && o["uuid"] == new_uuid.as_str()).map(|_| ()),
        || format!("osd.5 now: {:?}", sb.osd(5)),
    );
    let commands_before = std::fs::read_to_string(&ceph_log).unwrap().lines().count();
    let agent_log = work.path().join("agent-f5-422-03.log");
    let agent_lines_before = std::fs::read_to_string(&agent_log).unwrap_or_default().lines().count();

    // The daemon again: the removal it left at the purge finds another OSD at the id.
    let daemon = start_daemon(work.path(), &daemon_config(&sb, &ceph_bin), &env());
    let ended = wait_for_or(
        "the removal of osd.5 to end",
        Duration::from_secs(120),
        || removal_of(&daemon.url, 5).filter(|r| r["state"] == "cancelled" || r["state"] == "done"),
        || format!("the removal: {:?}", removal_of(&daemon.url, 5)),
    );
    assert_eq!(ended["state"], "cancelled", "{ended}");
    let note = ended["note"].as_str().unwrap_or_default();
    assert_eq!(
        note,
        format!("superseded: osd.5 is now another OSD (uuid {new_uuid}, not {old_uuid}); nothing more was done to it")
    );
    let (_, events, _) = cli(&daemon.url, Some(TOKEN), &["events", "--osd", "5"]);
    assert!(events.contains("osd.5 is now another OSD"), "{events}");
    // A few more rounds: nothing is done to the new OSD.
    std::thread::sleep(Duration::from_secs(5));
    let osd = sb.osd(5).expect("the new osd.5 is not purged");
    assert_eq!(
        (osd["up"].as_i64(), osd["in"].as_i64(), osd["uuid"].as_str()),
        (Some(1), Some(1), Some(new_uuid.as_str()))
    );
    assert!(!osd["state"].as_array().unwrap().iter().any(|s| s == "destroyed"), "{osd}");
    let log = std::fs::read_to_string(&ceph_log).unwrap();
    let since: Vec<&str> = log.lines().skip(commands_before).collect();
    for act in ["osd purge", "osd destroy", "osd down", "osd out", "osd crush reweight"] {
        assert!(!since.iter().any(|l| l.contains(act)), "`{act}` after the restart: {since:#?}");
    }
    let agent_now = std::fs::read_to_string(&agent_log).unwrap_or_default();
    let agent_since: Vec<&str> = agent_now.lines().skip(agent_lines_before).collect();
    assert!(!agent_since.iter().any(|l| l.contains("stopping an OSD daemon") || l.contains("zap")), "{agent_since:#?}");
    assert_eq!(blkid_type(&dev(5)).as_deref(), Some("ceph_bluestore"), "the new OSD's disk is not wiped");
}
