//! `host drain` against a real Ceph cluster (testbed/ceph-sandbox with
//! `--loop`: three hosts of two OSDs, pool `sandbox` of size 2, one copy
//! per host), one real agent per CRUSH host and the real daemon.
//!
//! The sandbox's drains are made to behave like a real cluster's: they
//! backfill (the PG logs are trimmed first, `Sandbox::make_drains_backfill`)
//! and last long enough to stop one in the middle and to watch the
//! estimator: about half a minute on Pacific (`osd_recovery_sleep` slows
//! every recovery op); on Reef and Tentacle, whose mClock scheduler forces
//! those sleeps to 0, 10-15 s, from more data (140 MB on the host instead of
//! 3 MB) and one backfill at a time.
//!
//! One test, in order on one sandbox: the host's preview (its OSDs' PGs
//! move, nothing changes; its moves are the drain's own remap, PG by PG)
//! and `host rm` refused while it has OSDs; then
//! `host drain f5-422-03 --fast` (its OSDs begin together: neither is
//! first sent PGs of the other), then `host drain stop` while they drain,
//! the drain held still rather than raced: backfill frozen (`nobackfill`,
//! `norecover`)
//! before it starts, one receiving OSD then given no backfill slot
//! (`osd_max_backfills` 0) so that the PGs it must take stay on the host,
//! the rest let go until data is seen leaving, then frozen again:
//! their CRUSH weights come back, the host loses `_no_schedule`, the
//! recovery settings are put back. Then the same drain to its end: no OSD
//! left under the host, HEALTH_OK (two hosts still hold the pool's two
//! copies), the settings back, `host rm` allowed; on the way the status's
//! ETA is recorded against the drain's real end (printed for
//! BENCHMARKS.md), and what must hold is checked: an ETA once a rate is
//! known, the bytes left falling to 0, no stall shown while they fall.
//! Last, a preview estimates at the rate those drains moved data.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use common::client::Api;
use common::sandbox::{sandbox_agent, test_release, Sandbox};
use common::*;
use serde_json::Value;

const TOKEN: &str = "sandbox-api-token";
const AGENT_TOKEN: &str = "sandbox-agent-token";
const HOSTS: [&str; 3] = ["f5-422-01", "f5-422-02", "f5-422-03"];
const HOST: &str = "f5-422-03";
/// `removal.stall_after_s`: shorter than the drain, so a stall could show.
const STALL_AFTER_S: u64 = 30;
/// The sandbox's OSDs: the other hosts' receive the drained host's.
const EVERY_OSD: [u32; 6] = [0, 1, 2, 3, 4, 5];
const RECEIVERS: [u32; 4] = [0, 1, 2, 3];

fn env() -> Vec<(&'static str, &'static str)> {
    vec![("OSDKEEPER_TOKEN", TOKEN), ("OSDKEEPER_AGENT_TOKEN", AGENT_TOKEN)]
}

fn osdkeeper(url: &str, args: &[&str]) -> String {
    let (code, out, err) = cli(url, Some(TOKEN), args);
    assert_eq!(code, 0, "osdkeeper {args:?}: {err}");
    out
}

/// `host drain status HOST --format json`.
fn drain_status(url: &str) -> Value {
    serde_json::from_str(&osdkeeper(url, &["host", "drain", "status", HOST, "--format", "json"])).unwrap()
}

/// The host's latest removal of `osd`, finished ones included.
fn removal_of(url: &str, osd: u32) -> Option<Value> {
    let out = osdkeeper(url, &["osd", "rm", "status", "--format", "json", "--history", "50"]);
    serde_json::from_str::<Value>(&out).unwrap().as_array().unwrap().iter().rfind(|r| r["osd_id"] == osd).cloned()
}

/// `osd rm status --format json`: the live removals, from the daemon's store only.
fn live_removals(url: &str) -> Vec<Value> {
    let out = osdkeeper(url, &["osd", "rm", "status", "--format", "json"]);
    serde_json::from_str::<Value>(&out).unwrap().as_array().unwrap().clone()
}

fn wait_state(url: &str, osd: u32, state: &str, timeout: Duration) -> Value {
    wait_for_or(
        &format!("osd.{osd} to reach {state}"),
        timeout,
        || removal_of(url, osd).filter(|r| r["state"] == state),
        || format!("the removal now: {:?}", removal_of(url, osd)),
    )
}

/// `ceph config get osd NAME`: what the `osd` section says (the default when unset).
fn config_get(sb: &Sandbox, name: &str) -> String {
    sb.ceph(&["config", "get", "osd", name]).1.trim().to_string()
}

/// What the daemon reads the bytes left from (`pg ls-by-osd`), one PG a
/// line, for a failure's message.
fn pgs_listed(sb: &Sandbox, osd: u64) -> String {
    let listed = sb.json(&["pg", "ls-by-osd", &osd.to_string()]);
    let pgs = listed["pg_stats"].as_array().cloned().unwrap_or_default();
    let lines: Vec<String> = pgs
        .iter()
        .map(|p| {
            let s = &p["stat_sum"];
            format!(
                "{} {} up {} acting {} bytes {} objects {} misplaced {} degraded {}",
                p["pgid"],
                p["state"],
                p["up"],
                p["acting"],
                s["num_bytes"],
                s["num_objects"],
                s["num_objects_misplaced"],
                s["num_objects_degraded"]
            )
        })
        .collect();
    format!("osd.{osd}: {} PGs listed\n{}", pgs.len(), lines.join("\n"))
}

/// The PGs on an OSD (`osd df`).
fn pgs_on(sb: &Sandbox, osd: u32) -> i64 {
    let df = sb.json(&["osd", "df"]);
    df["nodes"].as_array().unwrap().iter().find(|n| n["id"] == osd).unwrap()["pgs"].as_i64().unwrap()
}

fn no_schedule(url: &str) -> bool {
    let hosts: Value = serde_json::from_str(&osdkeeper(url, &["host", "ls", "--format", "json"])).unwrap();
    let host = hosts.as_array().unwrap().iter().find(|h| h["name"] == HOST).unwrap().clone();
    host["labels"].as_array().unwrap().iter().any(|l| l == "_no_schedule")
}

/// The fast drain's boost in the config database, as `ceph config get` reads
/// it. wpq (Pacific): the sandbox's ceph.conf runs both limits at 4, so 8
/// while it lasts; unset (the default 1 and 0) before and after. mClock
/// (Reef on): the profile high_recovery_ops while it lasts; unset (the
/// default balanced) before and after.
fn boost_set(sb: &Sandbox) -> bool {
    if sb.runs_mclock() {
        return config_get(sb, "osd_mclock_profile") == "high_recovery_ops";
    }
    config_get(sb, "osd_max_backfills") == "8" && config_get(sb, "osd_recovery_max_active") == "8"
}

fn boost_gone(sb: &Sandbox) -> bool {
    if sb.runs_mclock() {
        return config_get(sb, "osd_mclock_profile") == "balanced";
    }
    config_get(sb, "osd_max_backfills") == "1" && config_get(sb, "osd_recovery_max_active") == "0"
}

/// The settings as `ceph config get` reads them now, for a timeout's message.
fn recovery_settings(sb: &Sandbox) -> String {
    format!(
        "osd_max_backfills {}, osd_recovery_max_active {}, osd_mclock_profile {}",
        config_get(sb, "osd_max_backfills"),
        config_get(sb, "osd_recovery_max_active"),
        config_get(sb, "osd_mclock_profile")
    )
}

/// Waits (generously: the machine may be loaded) for the settings `want`
/// says, printing what `ceph config get` last read if they never come.
fn wait_settings(sb: &Sandbox, what: &str, want: fn(&Sandbox) -> bool) {
    wait_for_or(what, Duration::from_secs(120), || want(sb).then_some(()), || recovery_settings(sb));
}

/// Under mClock the OSDs backfill one PG at a time: unslowed, the whole
/// host drained within 4 s on Tentacle, before a rate (and so an ETA) could
/// be shown, and slowing the disks instead (blkio) made BlueStore raise a
/// slow-operations alert that holds HEALTH_WARN for a day. mClock takes
/// the limit only with its override on, and the sandbox's ceph.conf sets
/// it, which only a runtime value beats. `--fast` sets the profile, not
/// this.
fn one_backfill_at_a_time(sb: &Sandbox) {
    assert_eq!(sb.ceph(&["config", "set", "osd", "osd_mclock_override_recovery_settings", "true"]).0, 0);
    let running =
        |id: u32| sb.ceph(&["config", "show", &format!("osd.{id}"), "osd_max_backfills"]).1.trim().to_string();
    wait_for_or(
        "every OSD to backfill one PG at a time",
        Duration::from_secs(60),
        || {
            sb.ceph(&["tell", "osd.*", "config", "set", "osd_max_backfills", "1"]);
            (0..6).all(|id| running(id) == "1").then_some(())
        },
        || format!("osd_max_backfills: {:?}", (0..6).map(running).collect::<Vec<_>>()),
    );
}

/// A PG with a copy on a drained OSD, as the PG map has it once the OSD's
/// weight is 0: the OSDs it backfills (`up` less `acting`) and the OSD that
/// reserves the backfill first (the acting primary).
#[derive(Debug, Clone)]
struct PgMove {
    pgid: String,
    from: Vec<u64>,
    targets: Vec<u64>,
    primary: u64,
}

/// The PGs listed on `osds` that no longer map to any of them.
fn pg_moves_off(sb: &Sandbox, osds: &[u64]) -> Vec<PgMove> {
    let ids = |v: &Value| -> Vec<u64> { v.as_array().unwrap().iter().filter_map(Value::as_u64).collect() };
    let mut moves: Vec<PgMove> = Vec::new();
    for osd in osds {
        let listed = sb.json(&["pg", "ls-by-osd", &osd.to_string()]);
        for p in listed["pg_stats"].as_array().cloned().unwrap_or_default() {
            let pgid = p["pgid"].as_str().unwrap().to_string();
            let (up, acting) = (ids(&p["up"]), ids(&p["acting"]));
            if moves.iter().any(|m| m.pgid == pgid) || up.iter().any(|o| osds.contains(o)) {
                continue;
            }
            moves.push(PgMove {
                pgid,
                from: acting.iter().copied().filter(|o| osds.contains(o)).collect(),
                targets: up.iter().copied().filter(|o| !acting.contains(o)).collect(),
                primary: p["acting_primary"].as_u64().unwrap(),
            });
        }
    }
    moves
}

/// The PGs `pg ls-by-osd` lists on any of `osds`.
fn pgs_listed_on(sb: &Sandbox, osds: &[u64]) -> BTreeSet<String> {
    let listed = |osd: &u64| sb.json(&["pg", "ls-by-osd", &osd.to_string()])["pg_stats"].clone();
    let pgids = |v: Value| -> Vec<String> {
        v.as_array().into_iter().flatten().filter_map(|p| Some(p["pgid"].as_str()?.to_string())).collect()
    };
    osds.iter().flat_map(|osd| pgids(listed(osd))).collect()
}

/// Every PG's up set now (`pg dump pgs_brief`).
fn up_sets(sb: &Sandbox) -> BTreeMap<String, Vec<u64>> {
    let pgs = sb.pgs_brief();
    let ids = |v: &Value| -> Vec<u64> { v.as_array().unwrap().iter().filter_map(Value::as_u64).collect() };
    pgs.iter().map(|p| (p["pgid"].as_str().unwrap().to_string(), ids(&p["up"]))).collect()
}

/// The PGs whose up set now has an OSD it lacked `before`: those a CRUSH
/// change moves, however far their data got.
fn pgs_gaining_an_osd(sb: &Sandbox, before: &BTreeMap<String, Vec<u64>>) -> BTreeSet<String> {
    let gains = |pgid: &str, up: &[u64]| before.get(pgid).is_none_or(|old| up.iter().any(|o| !old.contains(o)));
    up_sets(sb).into_iter().filter(|(pgid, up)| gains(pgid, up)).map(|(pgid, _)| pgid).collect()
}

/// Backfill and recovery frozen (`nobackfill`, `norecover`): no copy moves.
fn freeze(sb: &Sandbox) {
    for flag in ["nobackfill", "norecover"] {
        assert_eq!(sb.ceph(&["osd", "set", flag]).0, 0, "osd set {flag}");
    }
}

fn thaw(sb: &Sandbox) {
    for flag in ["nobackfill", "norecover"] {
        assert_eq!(sb.ceph(&["osd", "unset", flag]).0, 0, "osd unset {flag}");
    }
}

/// The receiving OSD that takes no backfill while the drain is stopped,
/// and what that leaves of the drain. A PG that backfills onto it, or
/// whose backfill it must reserve as primary, is held: its copy stays on
/// the host until the OSD takes backfill again, whatever the machine's
/// speed. The others are free to leave (every other OSD takes as many
/// backfills as there are PGs, so a held PG's reservation delays none).
struct HeldDrain {
    osd: u64,
    held: Vec<PgMove>,
    free: Vec<PgMove>,
}

impl HeldDrain {
    /// The first receiving OSD that holds a PG of each drained OSD and
    /// leaves one of them both held and free PGs (so that its data is seen
    /// leaving while it still drains); else the first that does the latter.
    /// The PG map is CRUSH's answer, the same at every run of a release.
    fn choose(moves: &[PgMove]) -> HeldDrain {
        let split = |osd: u64| {
            let (held, free): (Vec<PgMove>, Vec<PgMove>) =
                moves.iter().cloned().partition(|m| m.primary == osd || m.targets.contains(&osd));
            HeldDrain { osd, held, free }
        };
        let mut candidates: Vec<HeldDrain> = (0..4).map(split).collect();
        let holds = |h: &HeldDrain, o: u64| h.held.iter().any(|m| m.from.contains(&o));
        let frees = |h: &HeldDrain, o: u64| h.free.iter().any(|m| m.from.contains(&o));
        let seen_leaving = |h: &HeldDrain| [4, 5].into_iter().any(|o| holds(h, o) && frees(h, o));
        let holds_both = |h: &HeldDrain| seen_leaving(h) && [4, 5].into_iter().all(|o| holds(h, o));
        let chosen = candidates.iter().position(holds_both).or_else(|| candidates.iter().position(seen_leaving));
        let Some(chosen) = chosen else {
            panic!("no receiving OSD holds part of a drained OSD's PGs and frees the rest: {moves:?}")
        };
        candidates.swap_remove(chosen)
    }

    /// The held OSD takes no backfill; every other OSD as many as there
    /// are PGs.
    fn hold(&self, sb: &Sandbox) {
        set_max_backfills(sb, &EVERY_OSD, |id| if u64::from(id) == self.osd { "0".into() } else { "64".into() });
    }

    /// The drained OSDs a held PG keeps a copy on.
    fn held_osds(&self) -> Vec<u64> {
        let mut osds: Vec<u64> = self.held.iter().flat_map(|m| m.from.clone()).collect();
        osds.sort_unstable();
        osds.dedup();
        osds
    }
}

/// `osd_max_backfills` as osd.N runs it now.
fn max_backfills_running(sb: &Sandbox, id: u32) -> String {
    sb.ceph(&["config", "show", &format!("osd.{id}"), "osd_max_backfills"]).1.trim().to_string()
}

/// Sets `osd_max_backfills` on each of `osds` at runtime (above the
/// config database and ceph.conf; under mClock it holds with the override
/// the sandbox sets) and waits until each runs it.
fn set_max_backfills(sb: &Sandbox, osds: &[u32], value: impl Fn(u32) -> String) {
    if sb.runs_mclock() {
        assert_eq!(sb.ceph(&["config", "set", "osd", "osd_mclock_override_recovery_settings", "true"]).0, 0);
    }
    let running = || osds.iter().map(|id| (*id, max_backfills_running(sb, *id))).collect::<Vec<_>>();
    wait_for_or(
        &format!("osds {osds:?} to run the osd_max_backfills asked for"),
        Duration::from_secs(60),
        || {
            for id in osds {
                sb.ceph(&["tell", &format!("osd.{id}"), "config", "set", "osd_max_backfills", &value(*id)]);
            }
            running().iter().all(|(id, now)| *now == value(*id)).then_some(())
        },
        || format!("osd_max_backfills (osd, running): {:?}", running()),
    );
}

#[test]
fn a_host_drain_stops_in_the_middle_and_then_drains_the_host_to_health_ok() {
    let t0 = Instant::now();
    let step = |what: &str| eprintln!("timing: {what} at {:.1} s", t0.elapsed().as_secs_f64());
    let work = tempfile::Builder::new().prefix("osdkeeper-sandbox-host-drain").tempdir().unwrap();
    // mClock (17.2+) cannot be slowed by recovery sleeps: there the drain
    // is made long by data instead: 3000 objects of 64 KiB, not 300 of 16.
    let mut options = vec!["--loop"];
    if test_release() != "pacific" {
        options.extend(["--objects", "3000", "--object-size", "65536"]);
    }
    let sb = Sandbox::start(&work.path().join("cluster"), &options);
    let loops = sb.loops();
    let dev = |id: u32| loops.iter().find(|(i, _)| *i == id).map(|(_, d)| d.clone()).unwrap();
    let mut agents = Vec::new();
    for (n, host) in HOSTS.iter().enumerate() {
        let ids = [2 * n as u32, 2 * n as u32 + 1];
        agents.push((host, sandbox_agent(work.path(), &sb, host, &[dev(ids[0]), dev(ids[1])], AGENT_TOKEN)));
    }
    let config = format!(
        "poll:\n  interval_s: 2\n  timeout_s: 10\nreconcile:\n  enabled: false\nremoval:\n  interval_s: 1\n  \
         stall_after_s: {STALL_AFTER_S}\n{}  timeout_s: 30\n",
        sb.ceph_yaml(None)
    );
    let daemon = start_daemon(work.path(), &config, &env());
    for (host, (_, addr)) in &agents {
        osdkeeper(&daemon.url, &["host", "add", host, addr]);
    }
    step("sandbox, agents and daemon up");
    // Nothing else may move PGs meanwhile (the balancer's upmaps did, once).
    assert_eq!(sb.ceph(&["balancer", "off"]).0, 0);
    sb.make_drains_backfill();
    step("PG logs trimmed");
    // Slow enough to be caught in the middle: wpq sleeps between recovery
    // ops; mClock forces those sleeps to 0, so there the OSDs backfill one
    // PG at a time instead.
    assert_eq!(sb.ceph(&["config", "set", "osd", "osd_recovery_sleep", "0.5"]).0, 0);
    if sb.runs_mclock() {
        one_backfill_at_a_time(&sb);
    }
    assert!(boost_gone(&sb));
    let weights = [sb.crush_weight(4), sb.crush_weight(5)];
    assert!(weights.iter().all(|w| *w > 0.0), "{weights:?}");
    let pinned = sb.pin_a_pg_onto(4, &[4, 5]);
    step("a PG pinned onto osd.4 by an upmap entry");

    // 0. Before anything: the host's preview, which changes nothing; and
    //    `host rm` refused while the host has OSDs. Every PG with a copy
    //    on the host moves; CRUSH may move a few others within their hosts
    //    (a retry's draw changes with the host gone), and the preview's
    //    moves are held to the drain's own remap below, PG by PG.
    // `osd df` counts each OSD's PGs from the OSDs' own reports, a few
    // seconds behind the PG map (the pinned PG, just moved).
    let counted_in_the_pg_map = |osd: u64| up_sets(&sb).values().filter(|up| up.contains(&osd)).count() as i64;
    let pgs_before = wait_for_or(
        "osd df to count osd.4's and osd.5's PGs as the PG map does",
        Duration::from_secs(120),
        || {
            let counted = [pgs_on(&sb, 4), pgs_on(&sb, 5)];
            (counted == [counted_in_the_pg_map(4), counted_in_the_pg_map(5)]).then_some(counted)
        },
        || {
            format!(
                "osd df: {:?}, the PG map: {:?}",
                [pgs_on(&sb, 4), pgs_on(&sb, 5)],
                [counted_in_the_pg_map(4), counted_in_the_pg_map(5)]
            )
        },
    );
    let on_host = pgs_listed_on(&sb, &[4, 5]);
    let up_before = up_sets(&sb);
    let p: Value =
        serde_json::from_str(&osdkeeper(&daemon.url, &["host", "drain", HOST, "--dry-run", "--format", "json"]))
            .unwrap();
    assert_eq!(p["blockers"], serde_json::json!([]), "two hosts keep the pool's two copies: {p}");
    let previewed: BTreeSet<String> =
        p["moves"].as_array().unwrap().iter().map(|m| m["pgid"].as_str().unwrap().to_string()).collect();
    assert_eq!(p["pgs_to_move"].as_u64(), Some(previewed.len() as u64), "{p}");
    assert!(on_host.is_subset(&previewed), "every PG with a copy on the host moves: {on_host:?} vs {p}");
    assert!(previewed.contains(&pinned), "the monitors drop {pinned}'s entry onto osd.4 at weight 0: {p}");
    assert!(p["bytes_to_move"].as_u64().is_some_and(|b| b > 0), "{p}");
    assert_eq!([sb.crush_weight(4), sb.crush_weight(5)], weights, "a preview changes no weight");
    assert!(!no_schedule(&daemon.url) && live_removals(&daemon.url).is_empty(), "nor the host, nor the queue");
    let (code, _, err) = cli(&daemon.url, Some(TOKEN), &["host", "rm", HOST]);
    assert!(code == 1 && err.contains("osd.4, osd.5"), "host rm of a host with OSDs: {code} {err}");

    // 1. Stopped in the middle, the drain held still: backfill frozen
    //    before it starts; once its PGs are remapped, one receiving OSD
    //    takes no backfill, the others as many as there are PGs, and the
    //    freeze is lifted: the PGs that need the held OSD stay on the host
    //    however fast the machine is, the others leave.
    let running_backfills: Vec<String> = EVERY_OSD.iter().map(|id| max_backfills_running(&sb, *id)).collect();
    freeze(&sb);
    step("backfill frozen; host drain --fast");
    let s: Value =
        serde_json::from_str(&osdkeeper(&daemon.url, &["host", "drain", HOST, "--fast", "--format", "json"])).unwrap();
    assert_eq!(s["no_schedule"], true, "{s}");
    let mut ids: Vec<u64> = s["removals"].as_array().unwrap().iter().map(|r| r["osd_id"].as_u64().unwrap()).collect();
    ids.sort_unstable();
    assert_eq!(ids, [4, 5], "{s}");
    let moves = wait_for_or(
        "both OSDs draining, every PG the preview named remapped, and only those",
        Duration::from_secs(300),
        || {
            let rs = live_removals(&daemon.url);
            let draining = rs.iter().filter(|r| r["state"] == "draining").count();
            let moves = pg_moves_off(&sb, &[4, 5]);
            let remapped = pgs_gaining_an_osd(&sb, &up_before) == previewed;
            (draining == 2 && remapped).then_some(moves)
        },
        || {
            format!(
                "status now: {:?}\nPGs off the host: {:?}\nPGs gaining an OSD: {:?}\npreviewed: {previewed:?}",
                live_removals(&daemon.url),
                pg_moves_off(&sb, &[4, 5]),
                pgs_gaining_an_osd(&sb, &up_before)
            )
        },
    );
    let hold = HeldDrain::choose(&moves);
    eprintln!("held drain: osd.{} takes no backfill; held {:?}, free {:?}", hold.osd, hold.held, hold.free);
    hold.hold(&sb);
    thaw(&sb);
    step("backfill released but for the held OSD");
    // Each OSD's bytes against its own first figure: the two drains start
    // a round apart, so a sum first seen for one OSD only is no baseline.
    let mut first_left: std::collections::HashMap<u64, f64> = std::collections::HashMap::new();
    let seen = std::cell::RefCell::new(Vec::new());
    wait_for_or(
        "the host's OSDs draining, with data seen leaving",
        Duration::from_secs(300),
        || {
            let rs = live_removals(&daemon.url);
            let states: Vec<String> =
                rs.iter().map(|r| format!("osd.{} {} {}", r["osd_id"], r["state"], r["bytes_left"])).collect();
            seen.borrow_mut().push(format!("{:.1} s: {}", t0.elapsed().as_secs_f64(), states.join(", ")));
            let draining: Vec<(u64, f64)> = rs
                .iter()
                .filter(|r| r["state"] == "draining")
                .filter_map(|r| Some((r["osd_id"].as_u64()?, r["bytes_left"].as_f64()?)))
                .collect();
            let falling = draining.iter().any(|(osd, left)| *left < *first_left.entry(*osd).or_insert(*left));
            let left: f64 = draining.iter().map(|(_, left)| left).sum();
            (falling && left > 0.0).then_some(())
        },
        || {
            let mut seen = seen.borrow_mut();
            seen.dedup_by(|a, b| a.split_once(": ").map(|x| x.1) == b.split_once(": ").map(|x| x.1));
            format!(
                "status now: {:?}; seen (when it changed): {seen:?}\nPGs: {:?}",
                live_removals(&daemon.url),
                pg_moves_off(&sb, &[4, 5])
            )
        },
    );
    freeze(&sb);
    step("data seen leaving; backfill frozen");
    // The host's OSDs began together: none was first sent PGs of the other
    // (CRUSH moves some of a reweighted OSD's PGs to its host's other OSDs).
    let at_start: Vec<i64> =
        [4, 5].iter().map(|osd| removal_of(&daemon.url, *osd).unwrap()["pgs_at_start"].as_i64().unwrap()).collect();
    assert_eq!(
        at_start,
        pgs_before,
        "PGs at the drains' start vs before the drain; removals: {:?}; events: {}",
        [removal_of(&daemon.url, 4), removal_of(&daemon.url, 5)],
        osdkeeper(&daemon.url, &["events", "--limit", "30"])
    );
    wait_settings(&sb, "the fast drain's recovery settings", boost_set);
    // An OSD with a held PG still drains with PGs left, until the stop;
    // one whose PGs all left before the freeze is past undo.
    let frozen = drain_status(&daemon.url);
    let rs = frozen["removals"].as_array().unwrap();
    let undoable: Vec<u64> = rs
        .iter()
        .filter(|r| r["state"] == "draining" && r["pgs_now"].as_i64().is_some_and(|n| n > 0))
        .map(|r| r["osd_id"].as_u64().unwrap())
        .collect();
    assert!(
        hold.held_osds().iter().all(|osd| undoable.contains(osd)),
        "every OSD with a held PG still drains ({:?}): {frozen}\nPGs: {:?}",
        hold.held_osds(),
        pg_moves_off(&sb, &[4, 5])
    );
    let left: f64 = rs.iter().filter_map(|r| r["bytes_left"].as_f64()).sum();
    assert!(
        left > 0.0 && frozen["totals"]["bytes_left"].as_f64() == Some(left),
        "the host's totals: {frozen}\nwhat `pg ls-by-osd` says of them: {}",
        undoable.iter().map(|osd| pgs_listed(&sb, *osd)).collect::<Vec<_>>().join("\n")
    );
    step("host drain stop");
    let stop: Value =
        serde_json::from_str(&osdkeeper(&daemon.url, &["host", "drain", "stop", HOST, "--format", "json"])).unwrap();
    let ids = |v: &Value| -> Vec<u64> { v.as_array().unwrap().iter().map(|i| i.as_u64().unwrap()).collect() };
    let (stopped, continuing) = (ids(&stop["stopped"]), ids(&stop["continuing"]));
    assert!(undoable.iter().all(|o| stopped.contains(o)), "{stop} after {frozen}");
    eprintln!("host drain stop: stopped {stopped:?}, continuing {continuing:?}");
    for osd in &stopped {
        wait_state(&daemon.url, *osd as u32, "cancelled", Duration::from_secs(180));
        assert_eq!(sb.crush_weight(*osd as u32), weights[*osd as usize - 4], "osd.{osd}'s CRUSH weight is back");
    }
    for osd in &continuing {
        wait_state(&daemon.url, *osd as u32, "done", Duration::from_secs(420));
    }
    assert_eq!(stop["no_schedule_removed"], continuing.is_empty(), "{stop}");
    assert_eq!(no_schedule(&daemon.url), !continuing.is_empty(), "specs may choose the host again once nothing runs");
    wait_settings(&sb, "the recovery settings back after the stop", boost_gone);
    set_max_backfills(&sb, &EVERY_OSD, |id| running_backfills[id as usize].clone());
    thaw(&sb);
    sb.wait_clean();

    // 2. The same drain to its end, its ETA watched every second, held the
    //    same way until the status shows one: frozen until the daemon has
    //    read the bytes on both OSDs, then the free PGs let go (a fall it
    //    sees, so a rate) while the held ones keep bytes left (so an ETA);
    //    then everything released. The ETA's accuracy is read from then on.
    step("stopped, cluster clean; backfill frozen; host drain --fast again");
    freeze(&sb);
    let started = Instant::now();
    osdkeeper(&daemon.url, &["host", "drain", HOST, "--fast"]);
    let polls: std::cell::RefCell<Vec<(f64, Value)>> = Default::default();
    let boosted = std::cell::Cell::new(false);
    let poll = || {
        // `osd rm status` reads the daemon's store only: a poll a second
        // even on a loaded machine (`host drain status` asks Ceph too).
        let live = live_removals(&daemon.url);
        polls.borrow_mut().push((started.elapsed().as_secs_f64(), Value::Array(live.clone())));
        boosted.set(boosted.get() || boost_set(&sb));
        std::thread::sleep(Duration::from_millis(500));
        live
    };
    let shown = || format!("polls (seconds, status): {:?}", polls.borrow());
    let both_read = |r: &Value| r["state"] == "draining" && r["bytes_left"].is_number();
    wait_for_or(
        "both OSDs draining, with their bytes left read",
        Duration::from_secs(300),
        || (poll().iter().filter(|r| both_read(r)).count() == 2).then_some(()),
        shown,
    );
    hold.hold(&sb);
    thaw(&sb);
    step("backfill released but for the held OSD");
    wait_for_or(
        "an ETA in the status while held PGs keep bytes left",
        Duration::from_secs(300),
        || poll().iter().any(|r| r["state"] == "draining" && r["eta_s"].is_number()).then_some(()),
        shown,
    );
    // The receiving OSDs as before; the drained ones leave (purged once
    // drained), whatever they run.
    set_max_backfills(&sb, &RECEIVERS, |id| running_backfills[id as usize].clone());
    step("an ETA shown; the held OSD released");
    wait_for_or(
        "the host's removals to finish",
        Duration::from_secs(900),
        || poll().is_empty().then_some(()),
        || format!("status now: {}", drain_status(&daemon.url)),
    );
    step("the host's removals done");
    let mut samples_of: std::collections::BTreeMap<u64, Vec<(i64, i64)>> = Default::default();
    for osd in [4, 5] {
        let done = removal_of(&daemon.url, osd).unwrap();
        assert_eq!(done["state"], "done", "{done}");
        assert!(sb.osd(osd).is_none(), "osd.{osd} is purged");
        let detail = Api::new(&daemon.url, Some(TOKEN)).removal(&done["removal_id"], "").body;
        let samples = detail["samples"].as_array().unwrap();
        let bytes: Vec<i64> = samples.iter().filter_map(|s| s["bytes_left"].as_i64()).collect();
        let series = samples.iter().filter_map(|s| Some((s["at"].as_i64()?, s["bytes_left"].as_i64()?)));
        samples_of.insert(osd as u64, series.collect());
        assert!(bytes.iter().max().is_some_and(|b| *b > 0), "osd.{osd} had data to move: {samples:?}");
        assert_eq!(bytes.last(), Some(&0), "osd.{osd}'s bytes left fell to 0: {samples:?}");
    }
    assert!(boosted.get(), "recovery raised while it drained");
    let tree = sb.json(&["osd", "tree"]);
    let host = tree["nodes"].as_array().unwrap().iter().find(|n| n["name"] == HOST).cloned();
    assert!(
        host.as_ref().is_none_or(|h| h["children"].as_array().is_none_or(|c| c.is_empty())),
        "no OSD left under {HOST}: {host:?}"
    );
    sb.wait_health_ok();
    let s = drain_status(&daemon.url);
    assert_eq!(s["osds_in_cluster"], serde_json::json!([]), "{s}");
    assert_eq!(s["no_schedule"], true, "a drained host stays _no_schedule until it is removed: {s}");
    wait_settings(&sb, "the recovery settings back after the drain", boost_gone);
    step("HEALTH_OK");
    check_the_estimates(&polls.borrow(), &samples_of);

    // 3. A preview now estimates at the rate the drains moved data (no
    //    recovery under way), and says so.
    sb.wait_clean();
    let recovering = || sb.json(&["status"])["pgmap"]["recovering_bytes_per_sec"].clone();
    wait_for_or(
        "ceph status to show no recovery",
        Duration::from_secs(180),
        || recovering().as_f64().is_none_or(|r| r == 0.0).then_some(()),
        || format!("recovering_bytes_per_sec: {}", recovering()),
    );
    let p: Value =
        serde_json::from_str(&osdkeeper(&daemon.url, &["osd", "rm", "0", "--dry-run", "--format", "json"])).unwrap();
    eprintln!("preview after the drains: eta {:?} ({})", p["eta_s"], p["eta_basis"]);
    assert_eq!(p["eta_source"], "recent_drains", "{p}");
    assert!(p["eta_bytes_per_s"].as_f64().is_some_and(|r| r > 0.0), "{p}");
    let basis = p["eta_basis"].as_str().unwrap();
    assert!(basis.contains("osd.4") && basis.contains("osd.5"), "{basis}");
    osdkeeper(&daemon.url, &["host", "rm", HOST]);
    step("preview and host rm");
}

/// What must hold of the ETA the status showed while the host drained, and
/// the table BENCHMARKS.md reads (ETA against the drain's real end).
/// `samples_of`: each OSD's stored samples (ms since the epoch, bytes left).
fn check_the_estimates(polls: &[(f64, Value)], samples_of: &std::collections::BTreeMap<u64, Vec<(i64, i64)>>) {
    let draining = |s: &Value| s.as_array().is_some_and(|rs| rs.iter().any(|r| r["state"] == "draining"));
    // The host's totals as `host drain status` adds them up (no bytes
    // before the worker first read them).
    let totals = |s: &Value| {
        let rs = s.as_array().unwrap();
        let left: Vec<f64> = rs.iter().filter_map(|r| r["bytes_left"].as_f64()).collect();
        let eta = rs.iter().filter_map(|r| r["eta_s"].as_f64()).reduce(f64::max);
        ((!left.is_empty()).then(|| left.iter().sum::<f64>()), eta)
    };
    let end = polls.iter().rfind(|(_, s)| draining(s)).map(|(t, _)| *t).expect("the drain was seen");
    let mut etas = 0;
    let mut shown = None;
    for (t, s) in polls {
        let rs = s.as_array().unwrap();
        let (left, eta) = totals(s);
        // Printed when it changes (BENCHMARKS.md, "The drain ETA on the sandbox").
        if draining(s) && shown != Some((left, eta)) {
            shown = Some((left, eta));
            let show = |v: Option<f64>, digits: usize| v.map_or("-".into(), |v| format!("{v:.digits$}"));
            eprintln!(
                "eta host {HOST}: t {t:6.1} s, bytes left {:>9}, ETA {:>6}, drained in {:5.1} s",
                show(left, 0),
                show(eta, 1),
                end - t,
            );
        }
        for r in rs.iter().filter(|r| r["state"] == "draining") {
            let osd = r["osd_id"].as_u64().unwrap();
            let left = r["bytes_left"].as_f64();
            let rate = r["bytes_per_s"].as_f64().unwrap_or(0.0);
            // An ETA once a rate is known, unless stalled.
            if left.is_some_and(|l| l > 0.0) && rate > 0.0 && r["stalled"].is_null() {
                assert!(r["eta_s"].is_number(), "a rate but no ETA: {r}");
                etas += 1;
            }
            // A stall only after the bytes made no new fall for the whole
            // wait, in the daemon's own samples: a status read can trail
            // them, so the polls alone cannot tell.
            if let Some(since) = r["stalled"]["since"].as_i64() {
                let s = &samples_of[&osd];
                let run: Vec<&(i64, i64)> = s.iter().filter(|(at, _)| *at >= since).collect();
                assert!(run.first().is_some_and(|(at, _)| *at == since), "no sample where the stall began: {r}, {s:?}");
                let wait_ms = STALL_AFTER_S as i64 * 1000;
                let within: Vec<i64> = run.iter().filter(|(at, _)| *at <= since + wait_ms).map(|p| p.1).collect();
                assert!(within.windows(2).all(|w| w[1] >= w[0]), "stalled while its bytes fell: {r}, samples {s:?}");
                assert!(run.last().is_some_and(|(at, _)| at - since >= wait_ms), "stalled before the wait: {r}, {s:?}");
            }
        }
    }
    assert!(etas > 0, "an ETA was shown while the host drained");
}
