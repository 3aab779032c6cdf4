//! OSD removal against a real Ceph cluster: testbed/ceph-sandbox started
//! with `--loop` (every OSD on a loop device, so a zap really wipes a block
//! device), one real agent per CRUSH host, the real daemon.
//!
//! One test walks the lifecycle in order on one sandbox (starting a cluster
//! takes ~16 s): a zap of a running OSD's disk is refused and the disk is
//! intact; a forced removal waits while safe-to-destroy refuses, and `rm stop`
//! restores the weight; a removal with --zap --fast drains with recovery
//! raised, purges and wipes, and the recovery settings are back afterwards;
//! a replace keeps the id as destroyed; a fast removal survives `kill -9`
//! while draining and right after the purge, with each destructive command
//! issued exactly once (a `ceph` wrapper logs every command the daemon
//! runs) and the recovery settings put back. The
//! daemon acts as `client.osdkeeper` with only the caps `deploy/ceph-auth.sh`
//! gives it, so the whole lifecycle shows those caps are enough.

mod common;

use std::path::Path;
use std::time::Duration;

use common::client::Api;
use common::sandbox::{ceph_wrapper, sandbox_agent, Sandbox};
use common::*;
use serde_json::Value;

const TOKEN: &str = "sandbox-api-token";
const AGENT_TOKEN: &str = "sandbox-agent-token";
const HOSTS: [&str; 3] = ["f5-422-01", "f5-422-02", "f5-422-03"];

fn start_agent(dir: &Path, sb: &Sandbox, host: &str, devices: &[String]) -> (Proc, String) {
    sandbox_agent(dir, sb, host, devices, AGENT_TOKEN)
}

fn daemon_config(sb: &Sandbox, ceph_bin: &Path) -> String {
    format!(
        "poll:\n  interval_s: 2\n  timeout_s: 10\nreconcile:\n  enabled: false\nremoval:\n  interval_s: 1\n{}  timeout_s: 30\n  name: client.osdkeeper\n  keyring: {}\n",
        sb.ceph_yaml(Some(ceph_bin)),
        keyring(sb).display()
    )
}

fn keyring(sb: &Sandbox) -> std::path::PathBuf {
    sb.dir.join("osdkeeper.keyring")
}

/// The daemon's own cephx user, made by the script an operator runs; it
/// may not do what an admin may.
fn make_daemon_user(sb: &Sandbox) {
    sb.ceph_auth(&keyring(sb), &[]);
    let k = keyring(sb);
    let as_daemon = ["--name", "client.osdkeeper", "--keyring", k.to_str().unwrap()];
    let (code, _, err) = sb.ceph(&[&as_daemon[..], &["osd", "pool", "create", "not-allowed", "8"]].concat());
    assert_eq!(code, 13, "the daemon's user cannot create pools: {err}");
    let (code, _, err) = sb.ceph(&[&as_daemon[..], &["auth", "ls"]].concat());
    assert_eq!(code, 13, "nor read keys: {err}");
}

fn env() -> Vec<(&'static str, &'static str)> {
    vec![("OSDKEEPER_TOKEN", TOKEN), ("OSDKEEPER_AGENT_TOKEN", AGENT_TOKEN)]
}

fn status(url: &str) -> Vec<Value> {
    let out = cli_ok(url, Some(TOKEN), &["osd", "rm", "status", "--format", "json", "--history", "50"]);
    serde_json::from_str::<Value>(&out).unwrap().as_array().unwrap().clone()
}

fn removal_of(url: &str, osd: u32) -> Option<Value> {
    status(url).into_iter().rfind(|r| r["osd_id"] == osd)
}

fn wait_state(url: &str, osd: u32, state: &str, timeout: Duration) -> Value {
    wait_for_or(
        &format!("osd.{osd} to reach {state}"),
        timeout,
        || removal_of(url, osd).filter(|r| r["state"] == state),
        || {
            let (_, events, _) = cli(url, Some(TOKEN), &["events", "--osd", &osd.to_string()]);
            format!("the removal: {:?}\nits events:\n{events}", removal_of(url, osd))
        },
    )
}

#[test]
fn removal_lifecycle_on_a_real_cluster() {
    let work = tempfile::Builder::new().prefix("osdkeeper-sandbox").tempdir().unwrap();
    let sb = Sandbox::start(&work.path().join("cluster"), &["--loop"]);
    let (ceph_bin, ceph_log) = ceph_wrapper(work.path(), &sb);
    make_daemon_user(&sb);
    let loops = sb.loops();
    assert_eq!(loops.len(), 6, "{loops:?}");
    let dev = |id: u32| loops.iter().find(|(i, _)| *i == id).map(|(_, d)| d.clone()).unwrap();
    let mut agents = Vec::new();
    for (n, host) in HOSTS.iter().enumerate() {
        let ids = [2 * n as u32, 2 * n as u32 + 1];
        agents.push((host, start_agent(work.path(), &sb, host, &[dev(ids[0]), dev(ids[1])])));
    }
    let mut daemon = start_daemon(work.path(), &daemon_config(&sb, &ceph_bin), &env());
    for (host, (_, addr)) in &agents {
        cli_ok(&daemon.url, Some(TOKEN), &["host", "add", host, addr]);
    }
    wait_for("inventories of the three hosts", Duration::from_secs(120), || {
        let (_, out, _) = cli(&daemon.url, Some(TOKEN), &["device", "ls", "--format", "json"]);
        let v: Value = serde_json::from_str(&out).ok()?;
        v.as_array()?.iter().all(|h| h["devices"].as_array().is_some_and(|d| d.len() == 2)).then_some(())
    });
    let osds = cli_ok(&daemon.url, Some(TOKEN), &["osd", "ls", "--format", "json"]);
    let osds: Value = serde_json::from_str(&osds).unwrap();
    assert_eq!(osds.as_array().unwrap().len(), 6);
    assert_eq!(osds[4]["host"], "f5-422-03");
    assert_eq!(osds[4]["devices"], serde_json::json!([dev(4)]));

    // 0. The daemon knows the releases the cluster runs, as `ceph versions`
    //    says them, and /healthz lists each with its daemon count.
    let versions = sb.json(&["versions"]);
    let health = wait_for("the cluster's releases in /healthz", Duration::from_secs(60), || {
        let h = Api::new(&daemon.url, None).get("/healthz").body;
        h["ceph"]["releases"].as_array().is_some_and(|r| !r.is_empty()).then_some(h)
    });
    let listed: Vec<(String, u64)> = health["ceph"]["releases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (format!("ceph version {} ", r["version"].as_str().unwrap()), r["daemons"].as_u64().unwrap()))
        .collect();
    let overall = versions["overall"].as_object().unwrap();
    assert_eq!(listed.len(), overall.len(), "{health}\nceph versions: {versions}");
    for (line, n) in overall {
        let (_, daemons) = listed
            .iter()
            .find(|(v, _)| line.starts_with(v.as_str()))
            .unwrap_or_else(|| panic!("{line} is not in /healthz: {health}"));
        assert_eq!(Some(*daemons), n.as_u64(), "{line}: {health}");
    }
    assert!(overall.values().map(|n| n.as_u64().unwrap()).sum::<u64>() >= 8, "a mon, a mgr and six OSDs: {versions}");

    // 1. A running OSD's disk is not zapped: the daemon refuses from the
    //    cluster's view, the agent from the host's own (the device is busy).
    let (code, _, err) = cli(&daemon.url, Some(TOKEN), &["device", "zap", "f5-422-01", &dev(0), "--force"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("active OSD") && err.contains("osd.0"), "{err}");
    let agent01 = &agents[0].1 .1;
    // The agent's own API, asked directly: it refuses too.
    let agent = Api::new(&format!("http://{agent01}"), Some(AGENT_TOKEN));
    let refused = agent.request(
        "POST",
        "/v1/zap",
        Some(("application/json", &format!(r#"{{"path": "{}", "force": true}}"#, dev(0)))),
    );
    assert_eq!(refused.status, 409, "{}", refused.body);
    assert!(refused.error().contains("busy"), "{}", refused.body);
    assert_eq!(blkid_type(&dev(0)).as_deref(), Some("ceph_bluestore"), "the running OSD's disk is intact");

    // 2. A forced removal still waits for safe-to-destroy, in the cluster's
    //    words; `rm stop` in the middle of the drain restores the weight.
    let weight2 = sb.crush_weight(2);
    // The manager's balancer (upmap, on by default) moves PGs on its own
    // minute; once it did so right after the flags below, and its moved PGs
    // stayed degraded for good (norecover), so the drain never started.
    assert_eq!(sb.ceph(&["balancer", "off"]).0, 0);
    // From a clean cluster: with PGs still recovering (seen on a loaded
    // machine) the flags below would hold them degraded, and the pacing
    // rightly never starts the drain.
    sb.wait_clean();
    // norecover too: without it the monitors recover the PGs from the
    // copies other OSDs kept (log-based recovery is not backfill), and
    // safe-to-destroy turned true within ~4 s on this sandbox.
    for flag in ["norebalance", "nobackfill", "norecover"] {
        assert_eq!(sb.ceph(&["osd", "set", flag]).0, 0);
    }
    cli_ok(&daemon.url, Some(TOKEN), &["osd", "rm", "2", "--force"]);
    let waiting = wait_for_or(
        "the safe-to-destroy gate",
        Duration::from_secs(120),
        || {
            removal_of(&daemon.url, 2)
                .filter(|r| r["waiting_on"].as_str().is_some_and(|w| w.starts_with("safe-to-destroy")))
        },
        || format!("status now: {:?}", removal_of(&daemon.url, 2)),
    );
    // The cluster's own words, e.g. "OSD(s) 2 have 18 pgs currently mapped to them." or
    // "OSD(s) 2 last reported they still store some PG data, and not all PGs are active+clean; ...".
    assert!(waiting["waiting_on"].as_str().unwrap().starts_with("safe-to-destroy: OSD(s) 2 "), "{waiting}");
    assert_eq!(waiting["state"], "waiting-safe", "forced past the PG wait, held at safe-to-destroy");
    assert_eq!(sb.crush_weight(2), 0.0);
    let (code, table, _) = cli(&daemon.url, Some(TOKEN), &["osd", "rm", "status"]);
    assert_eq!(code, 0);
    assert!(
        table.contains("OSD") && table.contains("DRAIN STARTED AT") && table.contains("safe-to-destroy"),
        "{table}"
    );
    let (code, _, err) = cli(&daemon.url, Some(TOKEN), &["osd", "rm", "2"]);
    assert_eq!(code, 1, "already queued: {err}");
    assert!(err.contains("already being removed"), "{err}");
    cli_ok(&daemon.url, Some(TOKEN), &["osd", "rm", "stop", "2"]);
    wait_state(&daemon.url, 2, "cancelled", Duration::from_secs(120));
    assert_eq!(sb.crush_weight(2), weight2, "the original weight is back");
    for flag in ["norebalance", "nobackfill", "norecover"] {
        assert_eq!(sb.ceph(&["osd", "unset", flag]).0, 0);
    }
    sb.wait_clean();

    // 3. Remove osd.4 with --zap: drained, purged, its disk wiped and held.
    assert_eq!(blkid_type(&dev(4)).as_deref(), Some("ceph_bluestore"));
    //    With --fast: recovery raised while it drains, put back after. A
    //    value set before the boost comes back, one that was not is removed.
    //    Which values: wpq's limits (Pacific), mClock's profile (Reef on).
    let scheduler = Scheduler::of(&sb);
    if scheduler == Scheduler::Wpq {
        assert_eq!(sb.ceph(&["config", "set", "osd", "osd_recovery_max_active", "3"]).0, 0);
    }
    cli_ok(&daemon.url, Some(TOKEN), &["osd", "rm", "4", "--zap", "--fast"]);
    let seen_draining = wait_for("osd.4 draining", Duration::from_secs(120), || {
        removal_of(&daemon.url, 4).filter(|r| r["state"] != "queued")
    });
    assert!(seen_draining["pgs_at_start"].as_i64().unwrap() > 0, "{seen_draining}");
    let done = wait_state(&daemon.url, 4, "done", Duration::from_secs(240));
    assert!(sb.osd(4).is_none(), "osd.4 is purged");
    assert_eq!(blkid_type(&dev(4)), None, "the disk carries no signature any more");
    assert_eq!(done["devices"], serde_json::json!([dev(4)]));
    let (_, held, _) = cli(&daemon.url, Some(TOKEN), &["device", "held", "--format", "json"]);
    assert!(held.contains(&dev(4)), "{held}");
    let (_, events, _) = cli(&daemon.url, Some(TOKEN), &["events", "--limit", "200"]);
    assert!(events.contains("Successfully purged osd.4 on f5-422-03"), "{events}");
    assert!(events.contains("Zapping devices for osd.4 on f5-422-03"), "{events}");
    print_timeline(&daemon.url, &done);
    scheduler.check_boost(&daemon.url, &ceph_log);
    wait_for_or(
        "the recovery settings back",
        Duration::from_secs(30),
        || scheduler.recovery_back(&sb).then_some(()),
        || format!("config dump: {}", sb.ceph(&["config", "dump"]).1),
    );
    sb.wait_clean();

    // 4. Replace osd.1: destroyed, the id kept for the new disk.
    cli_ok(&daemon.url, Some(TOKEN), &["osd", "rm", "1", "--replace"]);
    wait_state(&daemon.url, 1, "done", Duration::from_secs(240));
    let osd1 = sb.osd(1).expect("the id is kept");
    assert!(osd1["state"].as_array().unwrap().iter().any(|s| s == "destroyed"), "{osd1}");
    sb.wait_clean();

    // 5. kill -9 while draining, then a crash right after the purge: the
    //    removal completes and each destructive command went out once.
    cli_ok(&daemon.url, Some(TOKEN), &["osd", "rm", "5", "--zap", "--fast"]);
    wait_state(&daemon.url, 5, "draining", Duration::from_secs(120));
    wait_for("the boost of osd.5's drain", Duration::from_secs(60), || {
        (count_lines(&ceph_log, scheduler.boost_line()) == 2).then_some(())
    });
    daemon.proc.kill9();
    let mut crash_env = env();
    crash_env.push(("OSDKEEPER_CRASH_AFTER", "purge"));
    let mut crashing = start_daemon(work.path(), &daemon_config(&sb, &ceph_bin), &crash_env);
    wait_for("the daemon to crash right after the purge", Duration::from_secs(240), || {
        crashing.proc.child.try_wait().ok().flatten().map(|_| ())
    });
    assert!(sb.osd(5).is_none(), "the purge went through before the crash");
    let daemon = start_daemon(work.path(), &daemon_config(&sb, &ceph_bin), &env());
    let done = wait_state(&daemon.url, 5, "done", Duration::from_secs(120));
    assert_eq!(count_lines(&ceph_log, "osd purge 5"), 1, "purge issued exactly once");
    assert_eq!(count_lines(&ceph_log, "osd purge 4"), 1);
    assert_eq!(count_lines(&ceph_log, "osd destroy 1"), 1);
    assert_eq!(blkid_type(&dev(5)), None, "osd.5's disk was wiped after the restarts");
    let detail = Api::new(&daemon.url, Some(TOKEN)).removal(&done["removal_id"], "").body;
    let zaps =
        detail["actions"].as_array().unwrap().iter().filter(|a| a["effect"].as_str().unwrap().contains("zap")).count();
    assert_eq!(zaps, 1, "{detail}");
    wait_for("the recovery settings back after the crashes", Duration::from_secs(30), || {
        scheduler.recovery_back(&sb).then_some(())
    });
}

/// The OSDs' op scheduler, which decides what `--fast` sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scheduler {
    Wpq,
    Mclock,
}

impl Scheduler {
    fn of(sb: &Sandbox) -> Scheduler {
        if sb.runs_mclock() {
            Scheduler::Mclock
        } else {
            Scheduler::Wpq
        }
    }

    /// The `config set` the boost makes first.
    fn boost_line(self) -> &'static str {
        match self {
            Scheduler::Wpq => "config set osd osd_max_backfills 8",
            Scheduler::Mclock => "config set osd osd_mclock_profile high_recovery_ops",
        }
    }

    /// What the boost set, once, and what the daemon said of it.
    fn check_boost(self, url: &str, ceph_log: &Path) {
        let events = |needle: &str| {
            wait_for(needle, Duration::from_secs(30), || {
                let (_, events, _) = cli(url, Some(TOKEN), &["events", "--limit", "200"]);
                events.lines().find(|l| l.contains(needle)).map(str::to_string)
            })
        };
        assert_eq!(count_lines(ceph_log, self.boost_line()), 1);
        let boosted = events("recovery raised");
        match self {
            // The sandbox's ceph.conf sets both at 4: twice that, and from
            // the file they win over the monitors' values, which the daemon says.
            Scheduler::Wpq => {
                assert_eq!(count_lines(ceph_log, "config set osd osd_recovery_max_active 8"), 1);
                assert!(
                    boosted.contains("osd_max_backfills 8 (was unset)") && boosted.contains("from its file settings"),
                    "{boosted}"
                );
            }
            // The profile, which the OSDs run with; the limits in the
            // sandbox's ceph.conf are the trap, named.
            Scheduler::Mclock => {
                assert_eq!(count_lines(ceph_log, "osd_max_backfills"), 0, "mClock's limits are left alone");
                assert!(boosted.contains("osd_mclock_profile high_recovery_ops (was unset)"), "{boosted}");
                assert!(!boosted.contains("but"), "the OSDs run the profile: {boosted}");
                let trap = events("osd_mclock_override_recovery_settings");
                assert!(trap.contains("osd_max_backfills = 4 (from file)"), "{trap}");
            }
        }
    }

    fn recovery_back(self, sb: &Sandbox) -> bool {
        match self {
            Scheduler::Wpq => recovery_back(sb),
            Scheduler::Mclock => {
                let (_, profile, _) = sb.ceph(&["config", "show", "osd.0", "osd_mclock_profile"]);
                let dump = sb.json(&["config", "dump"]);
                let set = dump.as_array().unwrap().iter().any(|e| e["name"] == "osd_mclock_profile");
                !set && profile.trim() == "balanced"
            }
        }
    }
}

/// The `osd` section as before the fast drains: osd_recovery_max_active 3
/// (set by the test), osd_max_backfills not set (`ceph config get` falls
/// back to the default 1).
fn recovery_back(sb: &Sandbox) -> bool {
    let dump = sb.json(&["config", "dump"]);
    let osd: Vec<(String, String)> = dump
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            e["section"] == "osd"
                && e["name"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("osd_max_backfills") || n.starts_with("osd_recovery_max_active"))
        })
        .map(|e| (e["name"].as_str().unwrap().to_string(), e["value"].as_str().unwrap().to_string()))
        .collect();
    let get = |name: &str| sb.ceph(&["config", "get", "osd", name]).1.trim().to_string();
    osd == [("osd_recovery_max_active".to_string(), "3".to_string())]
        && get("osd_recovery_max_active") == "3"
        && get("osd_max_backfills") == "1"
}

/// The removal's progress samples (when the daemon saw how many PGs left),
/// its actions as the daemon logged them, with the time since the one
/// before, then its end (BENCHMARKS.md reads the step latencies from
/// this; `bench/removal_gates.py` sets them beside the gates it saw open,
/// by the times in ms since the epoch).
fn print_timeline(url: &str, done: &Value) {
    let detail = Api::new(url, Some(TOKEN)).removal(&done["removal_id"], "").body;
    for s in detail["samples"].as_array().into_iter().flatten() {
        eprintln!("timeline osd.{}: sample {} PGs (at {})", done["osd_id"], s["pgs"], s["at"]);
    }
    let mut last: Option<i64> = None;
    for a in detail["actions"].as_array().into_iter().flatten() {
        let issued = a["issued_at"].as_i64().unwrap_or(0);
        let took = a["finished_at"].as_i64().map_or(-1, |f| f - issued);
        let gap = last.map_or(0, |l| issued - l);
        eprintln!(
            "timeline osd.{}: {} issued +{gap} ms after the previous one ended, took {took} ms (at {issued})",
            a["osd_id"], a["effect"]
        );
        last = a["finished_at"].as_i64();
    }
    if let (Some(end), Some(l)) = (done["finished_at"].as_i64(), last) {
        eprintln!("timeline osd.{}: done +{} ms after the previous one ended (at {end})", done["osd_id"], end - l);
    }
}
