//! Benchmarks against a real Ceph cluster: testbed/ceph-sandbox started
//! with `--loop` (each OSD on its own loop device, so one OSD's disk can
//! be slowed down for real), the real daemon, and the CLI.
//!
//! `bench cluster` runs write, seq and rand on a pool it makes, stores
//! plausible numbers with the cluster's shape and removes the pool; it is
//! refused while the cluster is not HEALTH_OK and on a pool holding other
//! objects; on a given empty pool it removes only its objects; two runs
//! compare. `bench osds --all` stores one result per OSD; then one OSD's
//! ceph-osd process is put into a blkio cgroup that throttles its writes
//! to its loop device (this machine runs cgroup v1), and the next `bench
//! osds --all` names it as the outlier among the comparable OSDs. Then the
//! dashboard is driven in headless Chromium (`tests/browser/benchmarks.mjs`):
//! its benchmarks chart, comparison and OSD list must show what the API
//! holds (the simulator has no benchmarks: these are the real figures).

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::browser::{require_browser_tooling, run_browser_script, target_dir};
use common::sandbox::{full_path, Sandbox};
use common::throttle::Throttle;
use common::*;
use serde_json::Value;

const TOKEN: &str = "sandbox-api-token";

fn daemon_config(sb: &Sandbox, rados: &Path) -> String {
    format!(
        "poll:\n  interval_s: 2\n  timeout_s: 10\nreconcile:\n  enabled: false\n{}  rados_bin: {}\n  timeout_s: 30\n",
        sb.ceph_yaml(None),
        rados.display()
    )
}

/// A `rados` that logs each command line the daemon runs, then runs the sandbox's own.
fn rados_wrapper(dir: &Path, sb: &Sandbox) -> (PathBuf, PathBuf) {
    let log = dir.join("rados-commands.log");
    let bin = dir.join("rados-logged");
    let real = full_path(&sb.tool("rados"));
    std::fs::write(&bin, format!("#!/bin/sh\necho \"$*\" >> '{}'\nexec {} \"$@\"\n", log.display(), real)).unwrap();
    assert!(std::process::Command::new("chmod").arg("+x").arg(&bin).status().unwrap().success());
    (bin, log)
}

fn json(url: &str, args: &[&str]) -> Value {
    let mut full = args.to_vec();
    full.extend(["--format", "json"]);
    let (code, out, err) = cli(url, Some(TOKEN), &full);
    // A run that failed answers on stdout (its JSON, with its failure).
    assert_eq!(code, 0, "osdkeeper {}: exit {code}\nstdout: {out}\nstderr: {err}", full.join(" "));
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out}"))
}

#[test]
fn benchmarks_on_a_real_cluster() {
    require_browser_tooling();
    let work = tempfile::Builder::new().prefix("osdkeeper-bench").tempdir().unwrap();
    let sb = Sandbox::start(&work.path().join("cluster"), &["--loop"]);
    let loops = sb.loops();
    assert_eq!(loops.len(), 6, "{loops:?}");
    let (rados, rados_log) = rados_wrapper(work.path(), &sb);
    let config = daemon_config(&sb, &rados);
    let mut daemon = start_daemon(work.path(), &config, &[("OSDKEEPER_TOKEN", TOKEN)]);
    let url = daemon.url.as_str();

    // 1. A cluster benchmark on a pool of its own: three passes with
    //    plausible numbers, the cluster's shape, warnings about a short
    //    run, and the pool gone afterwards.
    sb.wait_health_ok();
    let run = json(url, &["bench", "cluster", "--seconds", "3", "--label", "before"]);
    assert_eq!((run["phase"].as_str(), run["failure"].as_str()), (Some("done"), None), "{run}");
    let pool = run["pool"].as_str().unwrap().to_string();
    assert_eq!(pool, format!("osdkeeper-bench-{}", run["bench_id"]));
    let passes: Vec<&str> = run["results"].as_array().unwrap().iter().map(|r| r["pass"].as_str().unwrap()).collect();
    assert_eq!(passes, ["write", "seq", "rand"], "{run}");
    for r in run["results"].as_array().unwrap() {
        let mb = r["bandwidth_mb_s"].as_f64().unwrap();
        assert!(mb > 0.5 && mb < 100_000.0, "{r}");
        assert!(r["ops"].as_u64().unwrap() > 0 && r["op_size"] == 4194304, "{r}");
        assert!(r["avg_latency_s"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["max_latency_s"].as_f64() >= r["avg_latency_s"].as_f64(), "{r}");
    }
    assert_eq!(
        run["shape"],
        serde_json::json!({"osds_by_class": {"hdd": 6}, "hosts": 3, "pool_size": 2, "pg_num": 32})
    );
    assert_eq!(run["health"], "HEALTH_OK");
    let warnings: Vec<&str> = run["warnings"].as_array().unwrap().iter().map(|w| w.as_str().unwrap()).collect();
    assert!(warnings.iter().any(|w| w.starts_with("each pass ran 3 s")), "{warnings:?}");
    assert!(warnings.iter().any(|w| w.starts_with("the write pass wrote")), "{warnings:?}");
    let pools = sb.json(&["osd", "pool", "ls"]);
    assert!(!pools.as_array().unwrap().iter().any(|p| p == pool.as_str()), "the test pool is removed: {pools}");

    // 2. Refused while the cluster is not HEALTH_OK (noout makes it HEALTH_WARN), and on a pool with data.
    assert_eq!(sb.ceph(&["osd", "set", "noout"]).0, 0);
    wait_for("HEALTH_WARN", Duration::from_secs(30), || {
        (sb.json(&["health"])["status"] == "HEALTH_WARN").then_some(())
    });
    let (code, _, err) = cli(url, Some(TOKEN), &["bench", "cluster", "--seconds", "1"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("HEALTH_WARN") && err.contains("force"), "{err}");
    // The dashboard's health strip has the same words as `ceph status`
    // (its read is shared for 5 s, so it may lag the flag by that much).
    let api = common::client::Api::new(url, Some(TOKEN));
    let status = wait_for("the strip's HEALTH_WARN", Duration::from_secs(30), || {
        let s = api.get("/api/v1/cluster/status").body;
        (s["health"] == "HEALTH_WARN").then_some(s)
    });
    let checks = status["checks"].as_array().unwrap();
    assert!(checks.iter().any(|c| c["code"] == "OSDMAP_FLAGS" && c["message"] == "noout flag(s) set"), "{status}");
    let in_states: i64 = status["pg_states"].as_array().unwrap().iter().map(|s| s["count"].as_i64().unwrap()).sum();
    assert_eq!(in_states, status["pgs"].as_i64().unwrap(), "every PG is in one listed state: {status}");
    assert_eq!(sb.ceph(&["osd", "unset", "noout"]).0, 0);
    sb.wait_health_ok();
    let objects = |pool: &str| -> u64 {
        let df = sb.json(&["df"]);
        df["pools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == pool)
            .map(|p| p["stats"]["objects"].as_u64().unwrap())
            .unwrap()
    };
    assert!(objects("sandbox") > 0);
    let (code, _, err) = cli(url, Some(TOKEN), &["bench", "cluster", "--pool", "sandbox", "--seconds", "1"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("pool sandbox holds") && err.contains("allow_pool_with_data"), "{err}");
    assert_eq!(json(url, &["bench", "ls"]).as_array().unwrap().len(), 1, "nothing stored for refused runs");

    // 3. A given empty pool: the benchmark's objects are removed, the pool stays.
    assert_eq!(sb.ceph(&["osd", "pool", "create", "testbench", "16", "16"]).0, 0);
    assert_eq!(sb.ceph(&["osd", "pool", "application", "enable", "testbench", "rados"]).0, 0);
    sb.wait_clean();
    sb.wait_health_ok();
    let args = ["bench", "cluster", "--pool", "testbench", "--seconds", "2", "--label", "after", "--format", "json"];
    let (code, out, err) = cli(url, Some(TOKEN), &args);
    if code != 0 {
        panic!(
            "osdkeeper {}: exit {code}\nstdout: {out}\nstderr: {err}\nceph health detail: {:?}\npg ls-by-pool \
             testbench: {:?}\nosd pool ls detail: {:?}",
            args.join(" "),
            sb.ceph(&["health", "detail"]),
            sb.ceph(&["pg", "ls-by-pool", "testbench"]),
            sb.ceph(&["osd", "pool", "ls", "detail"])
        );
    }
    let given: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out}"));
    assert_eq!(given["phase"], "done", "{given}");
    assert_eq!(given["shape"]["pg_num"], 16, "{given}");
    let left = std::process::Command::new(sb.tool("rados"))
        .arg("--conf")
        .arg(sb.conf())
        .args(["-p", "testbench", "ls"])
        .output()
        .unwrap();
    assert!(left.status.success() && left.stdout.is_empty(), "objects left: {}", String::from_utf8_lossy(&left.stdout));
    assert!(
        sb.json(&["osd", "pool", "ls"]).as_array().unwrap().iter().any(|p| p == "testbench"),
        "the given pool stays"
    );

    // 4. The two side by side.
    let (a, b) = (run["bench_id"].to_string(), given["bench_id"].to_string());
    let cmp = json(url, &["bench", "compare", &a, &b]);
    assert_eq!(cmp["passes"].as_array().unwrap().len(), 3, "{cmp}");
    let write_mb = &cmp["passes"][0]["metrics"][0];
    assert_eq!(
        (write_mb["name"].as_str(), write_mb["a"].as_f64()),
        (Some("MB/s"), run["results"][0]["bandwidth_mb_s"].as_f64())
    );
    assert!(write_mb["change_percent"].is_number(), "{cmp}");
    assert!(cmp["differences"].as_array().unwrap().iter().any(|d| d == "pg_num: 32 then 16"), "{cmp}");
    let text = cli_ok(url, Some(TOKEN), &["bench", "compare", &a, &b]);
    assert!(text.contains("A: benchmark 1 (before)") && text.contains("%") && text.contains("avg latency s"), "{text}");
    let (code, listing, _) = cli(url, Some(TOKEN), &["bench", "ls"]);
    assert_eq!(code, 0);
    assert!(listing.contains("before") && listing.contains("after") && listing.contains("MB/s"), "{listing}");

    // 5. One result per OSD, with numbers a disk can have.
    let first = json(url, &["bench", "osds", "--all", "--bytes", "52428800", "--block-size", "4194304"]);
    let first = first.as_array().unwrap();
    let ids: Vec<u64> = first.iter().map(|b| b["osd_id"].as_u64().unwrap()).collect();
    assert_eq!(ids, vec![0, 1, 2, 3, 4, 5], "{first:?}");
    for b in first {
        assert_eq!(b["state"], "done", "{b}");
        let rate = b["bytes_per_sec"].as_f64().unwrap();
        assert!(rate > 1e6 && rate < 1e11, "{b}");
        assert_eq!((b["bytes"].as_u64(), b["block_size"].as_u64()), (Some(52428800), Some(4194304)), "{b}");
        assert_eq!(b["device_class"], "hdd", "{b}");
        assert_eq!(b["size_bytes"], 10737418240u64, "{b}");
    }
    // At most one OSD per host at a time: on each host, one bench ended before the next began.
    for host in ["f5-422-01", "f5-422-02", "f5-422-03"] {
        let mut spans: Vec<(i64, i64)> = first
            .iter()
            .filter(|b| b["host"] == host)
            .map(|b| (b["started_at"].as_i64().unwrap(), b["finished_at"].as_i64().unwrap()))
            .collect();
        spans.sort();
        assert_eq!(spans.len(), 2, "{host}: {first:?}");
        assert!(spans[0].1 <= spans[1].0, "two benches at once on {host}: {spans:?}");
    }
    // A size the OSD would not bench is refused with the field and value, and nothing is queued.
    let (code, _, err) = cli(url, Some(TOKEN), &["bench", "osds", "0", "--block-size", "512"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("block_size 512 is out of range"), "{err}");
    let (code, _, err) = cli(url, Some(TOKEN), &["bench", "osds", "42"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("osd.42 does not exist"), "{err}");
    let history = json(url, &["bench", "osds", "--results"]);
    assert_eq!(history.as_array().unwrap().len(), 6, "one stored result per OSD: {history}");

    // 6. osd.5 writes to its disk throttled to 16 MiB/s: it is the outlier,
    //    in `bench osds`, `osd ls --wide` and the event log. 200 MiB per
    //    OSD: a bench of 20 MiB on a loop device lasts 0.05 s, and one pause
    //    of a loaded machine halved a healthy OSD's rate (CI flagged osd.3
    //    at 140 MB/s beside 306-519 MB/s).
    let slow = 5;
    let pid = std::fs::read_to_string(sb.dir.join(format!("run/osd.{slow}.pid"))).unwrap().trim().to_string();
    let device = loops.iter().find(|(id, _)| *id == slow).map(|(_, d)| d.clone()).unwrap();
    let group = format!("osdkeeper-test-{}", std::process::id());
    let throttle = Throttle::writes(&[pid], &[device], 16 << 20, &group);
    let second = json(url, &["bench", "osds", "--all", "--bytes", "209715200"]);
    drop(throttle);
    let flagged: Vec<(u64, String)> = second
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| Some((b["osd_id"].as_u64()?, b["outlier"].as_str()?.to_string())))
        .collect();
    assert_eq!(flagged.len(), 1, "only the throttled OSD is an outlier: {second}");
    assert_eq!(flagged[0].0, slow as u64, "{second}");
    assert!(
        flagged[0].1.starts_with("osd.5: ") && flagged[0].1.contains("the other 5 HDD OSDs of 10.7 GB do"),
        "{}",
        flagged[0].1
    );
    let table = cli_ok(url, Some(TOKEN), &["osd", "ls", "--wide"]);
    let row = table.lines().find(|l| l.starts_with("osd.5 ")).unwrap();
    assert!(row.contains("MB/s") && row.contains("the other 5 HDD OSDs"), "{table}");
    let events = json(url, &["events"]);
    assert!(
        events.as_array().unwrap().iter().any(|e| e["kind"] == "bench-outlier" && e["subject"] == "osd.5"),
        "{events}"
    );

    // 7. The dashboard, in headless Chromium, shows what the API holds: the
    //    chart of both runs per pass with their labels and figures, the
    //    warnings, the comparison's % change (pg_num differed), and osd.5's
    //    verdict in the OSD list. Screenshots go to the target directory:
    //    dashboard-benchmarks.png and its -panel, -osds and -800px.
    let shot = target_dir().join("dashboard-benchmarks.png");
    run_browser_script(
        "benchmarks.mjs",
        work.path(),
        &[url, shot.to_str().expect("UTF-8 path"), "2", &slow.to_string()],
        &[("OSDKEEPER_TOKEN", TOKEN)],
        &daemon.log,
    );
    assert!(shot.is_file(), "no screenshot at {}", shot.display());

    // 8. A crash right after the write pass: after the restart the pass is
    //    not run again (one `rados bench ... write` in the log), the run is
    //    failed with the reason, and the pool it made is removed.
    daemon.proc.terminate();
    let crash_dir = work.path().join("crash");
    std::fs::create_dir(&crash_dir).unwrap();
    let writes_before = count_lines(&rados_log, " write ");
    let env = [("OSDKEEPER_TOKEN", TOKEN), ("OSDKEEPER_CRASH_AFTER", "bench-write")];
    let mut crashing = start_daemon(&crash_dir, &config, &env);
    sb.wait_health_ok();
    // Forced: this step is about the crash. The health gate is step 2's; a
    // loaded machine's transient warning (slow OSD heartbeats) at the
    // run's own check would end the run before its write pass.
    let queued = json(&crashing.url, &["bench", "cluster", "--seconds", "2", "--no-wait", "--force"]);
    let pool = queued["pool"].as_str().unwrap().to_string();
    let bench_id = queued["bench_id"].to_string();
    let show = || cli(&crashing.url, Some(TOKEN), &["bench", "show", &bench_id, "--format", "json"]);
    let crash_log = crashing.log.clone();
    let why = |run: &str| {
        format!(
            "the run: {run}\n{}\n--- rados commands:\n{}\n--- the daemon's log:\n{}",
            sb.ceph(&["health", "detail"]).1,
            std::fs::read_to_string(&rados_log).unwrap_or_default(),
            std::fs::read_to_string(&crash_log).unwrap_or_default()
        )
    };
    let exit = wait_for_or(
        "the daemon to abort after the write pass",
        Duration::from_secs(120),
        || {
            if let Some(status) = crashing.proc.child.try_wait().unwrap() {
                return Some(status);
            }
            // A run that ended instead (refused at its health check, or its
            // pool never ready) is the failure: said at once, with its why.
            let (code, out, _) = show();
            let run: Value = serde_json::from_str(&out).unwrap_or_default();
            let ended = code == 0 && matches!(run["phase"].as_str(), Some("failed" | "done"));
            assert!(!ended, "the run ended without the crash after its write pass: {}", why(&out));
            None
        },
        || {
            let (_, out, err) = show();
            why(&format!("{out}{err}"))
        },
    );
    assert!(!exit.success(), "the crashing daemon exited as if stopped: {exit}");
    assert!(
        sb.json(&["osd", "pool", "ls"]).as_array().unwrap().iter().any(|p| p == pool.as_str()),
        "the pool was made"
    );
    assert_eq!(count_lines(&rados_log, " write "), writes_before + 1);
    let daemon = start_daemon(&crash_dir, &config, &[("OSDKEEPER_TOKEN", TOKEN)]);
    let run = wait_for("the cut-off run to be cleaned up", Duration::from_secs(120), || {
        let run = json(&daemon.url, &["bench", "show", &bench_id]);
        (run["phase"] == "failed").then_some(run)
    });
    assert!(run["failure"].as_str().unwrap().contains("during the write phase"), "{run}");
    assert_eq!(run["results"], serde_json::json!([]), "{run}");
    assert_eq!(count_lines(&rados_log, " write "), writes_before + 1, "the write pass is not repeated");
    assert_eq!(count_lines(&rados_log, " seq "), count_lines(&rados_log, " rand "), "no read pass after the crash");
    assert!(
        !sb.json(&["osd", "pool", "ls"]).as_array().unwrap().iter().any(|p| p == pool.as_str()),
        "the pool is removed"
    );
}
