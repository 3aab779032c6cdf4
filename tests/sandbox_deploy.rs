//! OSD creation against a real Ceph cluster: testbed/ceph-sandbox started
//! with `--ceph-volume --spare-disks 1` (every OSD made by the real
//! `ceph-volume raw prepare/activate`, one blank loop device per host), one
//! real agent per CRUSH host starting OSDs with the sandbox's `osd-start.sh`,
//! the real daemon, and a `method: raw` spec.
//!
//! One test walks the loop of the field report on one sandbox (a
//! `--ceph-volume` sandbox takes ~60 s to build, and only one may run per
//! machine): (p) a disk probe of an OSD's disk (its label, its running
//! ceph-osd) or of a disk with a BlueStore label is refused, by the daemon
//! and by the agent, the disk unchanged; (q) the spec waits for a probe of
//! each spare (`osdkeeper.probe`), the real fio probes them, a threshold
//! above what they do refuses them in the dry-run, and a spec version
//! below it lets the deployment go on; (a) applying the spec makes one running OSD on every spare,
//! with one prepare per disk; (b) `osd rm N --zap` frees a disk, `device
//! release` gives it back, and a new OSD comes up on it, through a `kill -9`
//! right after the activation; (c) after `osd rm M --replace --zap`, the new
//! OSD on that disk is osd.M again, through a `kill -9` right after the
//! prepare; (e) a prepare that ceph-volume refuses fails with its words and
//! waits for a backoff instead of looping. Only the refusal in (e) comes from
//! a wrapper around the real ceph-volume: nothing here makes the real one
//! refuse a disk the planner would pick.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::client::Api;
use common::mounts::tmpfs_layers;
use common::sandbox::{deploying_agent, full_path, Sandbox};
use common::*;
use serde_json::Value;

const TOKEN: &str = "deploy-api-token";
const AGENT_TOKEN: &str = "deploy-agent-token";
const HOSTS: [&str; 3] = ["f5-422-01", "f5-422-02", "f5-422-03"];
const SPEC: &str = "service_type: osd\nservice_id: spares\nplacement:\n  host_pattern: 'f5-422-*'\nspec:\n  method: raw\n  data_devices:\n    all: true\nosdkeeper:\n  probe:\n    min_sync_write_iops: 1\n";
/// The same spec asking more 4k sync writes of a disk than any loop device does.
const STRICT: u64 = 100_000_000;

/// Each host's loop devices: its OSDs' (from `ceph osd metadata`) and its spare.
fn devices_by_host(sb: &Sandbox) -> Vec<(String, Vec<String>, String)> {
    sb.host_disks(&HOSTS)
        .into_iter()
        .map(|(host, mut devices, spares)| {
            let spare = spares.first().cloned().unwrap_or_else(|| panic!("no spare for {host}"));
            devices.push(spare.clone());
            (host, devices, spare)
        })
        .collect()
}

/// The sandbox's ceph-volume, except that `raw prepare` fails while `flag`
/// exists; the agent finds the release beside it, in the `ceph` there.
fn ceph_volume_wrapper(dir: &Path, sb: &Sandbox, flag: &Path) -> PathBuf {
    let real = full_path(&sb.tool("ceph-volume"));
    std::os::unix::fs::symlink(full_path(&sb.tool("ceph")), dir.join("ceph")).unwrap();
    let bin = dir.join("ceph-volume-refusing");
    std::fs::write(
        &bin,
        format!(
            "#!/bin/sh\nif [ -e '{}' ] && [ \"$1 $2\" = 'raw prepare' ]; then\n  echo '--> RuntimeError: refused by the test: this disk cannot be prepared' >&2\n  exit 1\nfi\nexec {} \"$@\"\n",
            flag.display(),
            real
        ),
    )
    .unwrap();
    Command::new("chmod").arg("+x").arg(&bin).status().unwrap();
    bin
}

fn daemon_config(sb: &Sandbox) -> String {
    format!(
        "poll:\n  interval_s: 2\n  timeout_s: 30\nreconcile:\n  interval_s: 2\nremoval:\n  interval_s: 1\n{}  timeout_s: 30\n",
        sb.ceph_yaml(None)
    )
}

fn env(crash_after: Option<&'static str>) -> Vec<(&'static str, &'static str)> {
    let mut e = vec![("OSDKEEPER_TOKEN", TOKEN), ("OSDKEEPER_AGENT_TOKEN", AGENT_TOKEN)];
    if let Some(name) = crash_after {
        e.push(("OSDKEEPER_CRASH_AFTER", name));
    }
    e
}

fn deployments(url: &str) -> Vec<Value> {
    let out = cli_ok(url, Some(TOKEN), &["osd", "deploy", "status", "--format", "json", "--history", "50"]);
    serde_json::from_str::<Value>(&out).unwrap().as_array().unwrap().clone()
}

/// The latest deployment on `host` made after `after` (an id), once it is in `state`.
fn wait_deployment(url: &str, host: &str, after: i64, state: &str, timeout: Duration) -> Value {
    wait_for_or(
        &format!("a deployment on {host} to be {state}"),
        timeout,
        || {
            deployments(url)
                .into_iter()
                .rfind(|d| d["host"] == host && d["deployment_id"].as_i64().unwrap() > after)
                .filter(|d| d["state"] == state)
        },
        || format!("deployments now: {:#?}", deployments(url)),
    )
}

fn prepares(api: &Api, deployment_id: &Value) -> usize {
    let detail = api.get(&format!("/api/v1/deployments/{deployment_id}")).body;
    detail["actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["effect"].as_str().unwrap().contains("\"prepare\""))
        .count()
}

fn removal_done(url: &str, osd: u64) -> Value {
    wait_for(&format!("the removal of osd.{osd}"), Duration::from_secs(180), || {
        let (_, out, _) = cli(url, Some(TOKEN), &["osd", "rm", "status", "--format", "json", "--history", "50"]);
        let rows: Vec<Value> = serde_json::from_str(&out).ok()?;
        rows.into_iter().rfind(|r| r["osd_id"] == osd).filter(|r| r["state"] == "done")
    })
}

fn event_messages(url: &str) -> Vec<String> {
    let (_, out, _) = cli(url, Some(TOKEN), &["events", "--format", "json", "--limit", "1000"]);
    let events: Vec<Value> = serde_json::from_str(&out).unwrap_or_default();
    events
        .iter()
        .map(|e| format!("[{}] {}", e["kind"].as_str().unwrap_or(""), e["message"].as_str().unwrap_or("")))
        .collect()
}

#[test]
fn spec_osds_come_up_on_real_disks_survive_crashes_and_replace_keeps_the_id() {
    let work = tempfile::Builder::new().prefix("osdkeeper-deploy").tempdir().unwrap();
    let sb = Sandbox::start(&work.path().join("cluster"), &["--ceph-volume", "--spare-disks", "1"]);
    let flag = work.path().join("refuse-prepare");
    let ceph_volume = ceph_volume_wrapper(work.path(), &sb, &flag);
    let hosts = devices_by_host(&sb);
    let mut agents = Vec::new();
    for (host, devices, _) in &hosts {
        agents.push((host.clone(), deploying_agent(work.path(), &sb, host, devices, &ceph_volume, AGENT_TOKEN)));
    }
    let config = daemon_config(&sb);
    let mut daemon = start_daemon(work.path(), &config, &env(None));
    for (host, (_, addr)) in &agents {
        cli_ok(&daemon.url, Some(TOKEN), &["host", "add", host, addr]);
    }
    let spec_file = work.path().join("spares.yaml");
    std::fs::write(&spec_file, SPEC).unwrap();
    wait_for("every host's first inventory", Duration::from_secs(60), || {
        let (code, out, _) = cli(&daemon.url, Some(TOKEN), &["device", "ls", "--format", "json"]);
        let hosts: Vec<Value> = serde_json::from_str(&out).ok()?;
        (code == 0 && hosts.iter().all(|h| !h["inventory"].is_null())).then_some(())
    });

    let addrs: Vec<String> = agents.iter().map(|(_, (_, addr))| addr.clone()).collect();
    probe_before_deploying(&sb, &daemon.url, &hosts, &addrs, work.path());

    // Probed and below the threshold now: the dry-run names the spare of each host and nothing else.
    let dry = dry_run(&daemon.url, &spec_file);
    for (host, _, spare) in &hosts {
        let row = dry["preview"].as_array().unwrap().iter().find(|r| r["host"] == host.as_str()).unwrap();
        assert_eq!(row["data"], serde_json::json!([spare]), "{row}");
    }

    // (a) Applying it makes one running OSD on every spare, one prepare per disk.
    cli_ok(&daemon.url, Some(TOKEN), &["apply", "-i", spec_file.to_str().unwrap()]);
    let api = Api::new(&daemon.url, Some(TOKEN));
    let mut new_osds = Vec::new();
    for (host, _, spare) in &hosts {
        let d = wait_deployment(&daemon.url, host, 0, "done", Duration::from_secs(300));
        assert_eq!(prepares(&api, &d["deployment_id"]), 1, "exactly one prepare on {spare}: {d}");
        let id = sb.running_osd_on(host, spare).unwrap_or_else(|| panic!("no OSD up and in on {host}:{spare}"));
        let meta = sb.json(&["osd", "metadata", &id.to_string()]);
        assert_eq!(meta["osdspec_affinity"], "spares", "{meta}");
        new_osds.push(id);
    }
    sb.wait_clean();
    sb.wait_health_ok();
    let (code, table, _) = cli(&daemon.url, Some(TOKEN), &["osd", "deploy", "status"]);
    assert_eq!(code, 0);
    assert!(table.contains("done") && table.contains("spares"), "{table}");

    // (b) The field report's loop: remove with --zap, the disk is wiped and
    //     held; released, the spec makes a new OSD on it. The daemon is
    //     killed right after the new OSD's activation, and restarted.
    let (host1, _, spare1) = &hosts[0];
    let victim = new_osds[0];
    cli_ok(&daemon.url, Some(TOKEN), &["osd", "rm", &victim.to_string(), "--zap"]);
    removal_done(&daemon.url, victim);
    assert_eq!(blkid_type(spare1), None, "the disk was wiped");
    let (_, held, _) = cli(&daemon.url, Some(TOKEN), &["device", "held", "--format", "json"]);
    assert!(held.contains(spare1.as_str()), "{held}");
    let last = deployments(&daemon.url).iter().map(|d| d["deployment_id"].as_i64().unwrap()).max().unwrap();
    daemon.proc.terminate();
    daemon = start_daemon(work.path(), &config, &env(Some("activate")));
    cli_ok(&daemon.url, Some(TOKEN), &["device", "release", host1, spare1]);
    wait_for("the daemon to abort after the activation", Duration::from_secs(180), || {
        daemon.proc.child.try_wait().ok().flatten()
    });
    daemon = start_daemon(work.path(), &config, &env(None));
    let again = wait_deployment(&daemon.url, host1, last, "done", Duration::from_secs(300));
    assert_eq!(prepares(&api_for(&daemon), &again["deployment_id"]), 1, "{again}");
    let reborn = sb.running_osd_on(host1, spare1).expect("a new OSD up on the released disk");

    // (c) Replace: the new OSD on the disk takes the destroyed id. The daemon
    //     is killed right after the prepare, and restarted.
    let (host2, _, spare2) = &hosts[1];
    let replaced = new_osds[1];
    cli_ok(&daemon.url, Some(TOKEN), &["osd", "rm", &replaced.to_string(), "--replace", "--zap"]);
    removal_done(&daemon.url, replaced);
    assert!(sb.osd(replaced as u32).unwrap()["state"].as_array().unwrap().contains(&"destroyed".into()));
    let (_, held_dry, _) =
        cli(&daemon.url, Some(TOKEN), &["apply", "-i", spec_file.to_str().unwrap(), "--dry-run", "--format", "json"]);
    let held_dry: Value = serde_json::from_str(&held_dry).unwrap();
    let last = deployments(&daemon.url).iter().map(|d| d["deployment_id"].as_i64().unwrap()).max().unwrap();
    daemon.proc.terminate();
    daemon = start_daemon(work.path(), &config, &env(Some("prepare")));
    cli_ok(&daemon.url, Some(TOKEN), &["device", "release", host2, spare2]);
    wait_for("the daemon to abort after the prepare", Duration::from_secs(180), || {
        daemon.proc.child.try_wait().ok().flatten()
    });
    daemon = start_daemon(work.path(), &config, &env(None));
    let after_crash = wait_deployment(&daemon.url, host2, last, "done", Duration::from_secs(300));
    assert_eq!(prepares(&api_for(&daemon), &after_crash["deployment_id"]), 1, "no second prepare: {after_crash}");
    assert_eq!(sb.running_osd_on(host2, spare2), Some(replaced), "the replacement took osd.{replaced}'s id");
    let data_dir = PathBuf::from(format!("/var/lib/ceph/osd/ceph-{replaced}"));
    assert_eq!(
        tmpfs_layers(&data_dir),
        1,
        "the zap released the destroyed OSD's tmpfs: the new one is not stacked on it"
    );
    let claim = format!("--osd-id {replaced}");
    assert!(after_crash["commands"][0].as_str().unwrap().contains(&claim), "the plan claimed the id: {after_crash}");
    // The dry-run taken before the release did not plan the held disk.
    let row = held_dry["preview"].as_array().unwrap().iter().find(|r| r["host"] == host2.as_str());
    assert!(row.is_none_or(|r| r["data"].as_array().unwrap().is_empty()), "{held_dry}");

    // (e) A prepare ceph-volume refuses: its words, a backoff, no loop.
    let (host3, _, spare3) = &hosts[2];
    let third = new_osds[2];
    cli_ok(&daemon.url, Some(TOKEN), &["osd", "rm", &third.to_string(), "--zap"]);
    removal_done(&daemon.url, third);
    let data_dir = PathBuf::from(format!("/var/lib/ceph/osd/ceph-{third}"));
    assert_eq!(tmpfs_layers(&data_dir), 0, "the zap unmounted the purged OSD's data dir");
    assert!(!data_dir.exists(), "and removed it");
    std::fs::write(&flag, "").unwrap();
    let last = deployments(&daemon.url).iter().map(|d| d["deployment_id"].as_i64().unwrap()).max().unwrap();
    cli_ok(&daemon.url, Some(TOKEN), &["device", "release", host3, spare3]);
    let failed = wait_deployment(&daemon.url, host3, last, "failed", Duration::from_secs(120));
    assert!(failed["failure"].as_str().unwrap().contains("refused by the test"), "{failed}");
    assert!(failed["retry_at"].as_i64().unwrap() > failed["created_at"].as_i64().unwrap() + 50_000, "{failed}");
    std::thread::sleep(Duration::from_secs(8));
    assert_eq!(prepares(&api_for(&daemon), &failed["deployment_id"]), 1, "no loop of prepares");
    let events = event_messages(&daemon.url);
    assert!(events.iter().any(|e| e.contains("refused by the test")), "{events:#?}");

    // The event log of the whole walk, for the record.
    eprintln!("reborn osd.{reborn}; events:\n{}", events.join("\n"));
    assert!(events.iter().any(|e| e.contains(&format!("Deploying daemon osd.{replaced} on {host2}"))), "{events:#?}");
    assert!(events.iter().any(|e| e.starts_with("[osd-deployed]")), "{events:#?}");
}

/// `len` bytes of a device from its start.
fn head(dev: &str, len: usize) -> Vec<u8> {
    use std::io::Read;
    let mut buf = vec![0u8; len];
    std::fs::File::open(dev).unwrap().read_exact(&mut buf).unwrap();
    buf
}

fn write_head(dev: &str, bytes: &[u8]) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new().write(true).open(dev).unwrap();
    f.write_all_at(bytes, 0).unwrap();
    f.sync_all().unwrap();
}

/// `POST /v1/probe` straight to an agent, as the daemon would send it.
fn agent_probe(addr: &str, path: &str) -> (u16, String) {
    let base = if addr.starts_with("http") { addr.to_string() } else { format!("http://{addr}") };
    let body = serde_json::json!({"path": path, "mode": "quick", "yes_i_really_mean_it": true}).to_string();
    let a = Api::new(&base, Some(AGENT_TOKEN)).request("POST", "/v1/probe", Some(("application/json", &body)));
    (a.status, a.body["error"].as_str().unwrap_or_default().to_string())
}

fn reconciler_steps(api: &Api) -> u64 {
    let workers = api.get("/api/v1/workers").body;
    workers.as_array().unwrap().iter().find(|w| w["name"] == "reconciler").unwrap()["steps"].as_u64().unwrap()
}

fn dry_run(url: &str, file: &Path) -> Value {
    let (code, dry, err) =
        cli(url, Some(TOKEN), &["apply", "-i", file.to_str().unwrap(), "--dry-run", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&dry).unwrap()
}

fn preview_row<'a>(dry: &'a Value, host: &str) -> &'a Value {
    dry["preview"].as_array().unwrap().iter().find(|r| r["host"] == host).unwrap_or_else(|| panic!("{dry}"))
}

fn skipped_reason(row: &Value, path: &str) -> String {
    let s = row["skipped"].as_array().unwrap().iter().find(|s| s["path"] == path).unwrap_or_else(|| panic!("{row}"));
    s["reasons"][0].as_str().unwrap().to_string()
}

/// (p) and (q): refusals that leave the disks as they were, then the
/// probes of the spares that the spec waits for.
fn probe_before_deploying(
    sb: &Sandbox,
    url: &str,
    hosts: &[(String, Vec<String>, String)],
    agents: &[String],
    dir: &Path,
) {
    let started = std::time::Instant::now();
    let (host0, devices0, spare0) = &hosts[0];
    let osd_dev = &devices0[0];
    let osd_id = sb
        .json(&["osd", "metadata"])
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["bluestore_bdev_dev_node"] == osd_dev.as_str())
        .unwrap()["id"]
        .clone();
    // A running OSD rewrites parts of its first MiB (BlueFS); its label block stays.
    let label = head(osd_dev, 4096);
    let (code, _, err) = cli(url, Some(TOKEN), &["device", "probe", host0, osd_dev]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("must pass --yes-i-really-mean-it"), "{err}");
    let (code, _, err) = cli(url, Some(TOKEN), &["device", "probe", host0, osd_dev, "--yes-i-really-mean-it"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains(&format!("refusing to probe {osd_dev} on {host0}: osd.{osd_id} has its data on it")), "{err}");
    eprintln!("$ osdkeeper device probe {host0} {osd_dev} --yes-i-really-mean-it\n{err}");
    let (status, error) = agent_probe(&agents[0], osd_dev);
    assert_eq!(status, 409, "{error}");
    assert!(error.contains(&format!("it has a BlueStore label (osd.{osd_id})")), "{error}");
    assert!(error.contains("held open by ceph-osd pid") && error.contains(&format!("(osd.{osd_id})")), "{error}");
    assert_eq!(head(osd_dev, 4096), label, "the OSD's label is unchanged");

    // A spare that holds a copy of that OSD's label (and no daemon): refused, its first MiB unchanged.
    let blank = head(spare0, 1 << 20);
    write_head(spare0, &label);
    let first_mib = head(spare0, 1 << 20);
    let (status, error) = agent_probe(&agents[0], spare0);
    assert_eq!(status, 409, "{error}");
    assert!(
        error.starts_with(&format!(
            "refusing to probe {spare0}: it is not blank: it has a BlueStore label (osd.{osd_id})"
        )),
        "{error}"
    );
    assert!(!error.contains("in use") && error.ends_with("nothing was written"), "no daemon holds the copy: {error}");
    cli_ok(url, Some(TOKEN), &["device", "ls", host0, "--refresh"]);
    let (code, _, err) = cli(url, Some(TOKEN), &["device", "probe", host0, spare0, "--yes-i-really-mean-it"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("its inventory says it is not blank (Has BlueStore device label"), "{err}");
    assert_eq!(head(spare0, 1 << 20), first_mib, "the first MiB is unchanged");
    write_head(spare0, &blank);
    cli_ok(url, Some(TOKEN), &["device", "ls", host0, "--refresh"]);

    // (q) The spec waits for the spares' probes; a threshold above what they do refuses them.
    let api = Api::new(url, Some(TOKEN));
    let strict = dir.join("strict.yaml");
    std::fs::write(&strict, SPEC.replace("min_sync_write_iops: 1\n", &format!("min_sync_write_iops: {STRICT}\n")))
        .unwrap();
    cli_ok(url, Some(TOKEN), &["apply", "-i", strict.to_str().unwrap()]);
    let dry = dry_run(url, &strict);
    for (host, _, spare) in hosts {
        let row = preview_row(&dry, host);
        assert!(row["data"].as_array().unwrap().is_empty(), "{row}");
        assert!(
            skipped_reason(row, spare).starts_with("data_devices: waits for a disk probe (osdkeeper.probe)"),
            "{row}"
        );
    }
    let steps = reconciler_steps(&api);
    wait_for("two reconciler passes", Duration::from_secs(30), || (reconciler_steps(&api) >= steps + 2).then_some(()));
    assert!(deployments(url).is_empty(), "nothing is made before the probes");

    let mut queued = Vec::new();
    for (host, _, spare) in &hosts[1..] {
        let out = cli_ok(
            url,
            Some(TOKEN),
            &["device", "probe", host, spare, "--quick", "--yes-i-really-mean-it", "--no-wait", "--format", "json"],
        );
        queued.push(serde_json::from_str::<Value>(&out).unwrap()["probe_id"].as_i64().unwrap());
    }
    let text = cli_ok(url, Some(TOKEN), &["device", "probe", host0, spare0, "--yes-i-really-mean-it"]);
    assert!(
        text.contains(&format!("of {spare0} on {host0} (quick): done")) && text.contains("sync-write-4k"),
        "{text}"
    );
    eprintln!("{text}");
    for id in queued {
        wait_for(&format!("probe {id}"), Duration::from_secs(180), || {
            let (_, out, _) = cli(url, Some(TOKEN), &["device", "probes", &id.to_string(), "--format", "json"]);
            let p: Value = serde_json::from_str(&out).ok()?;
            (p["state"] == "done" || p["state"] == "failed").then_some(())
        });
    }
    let out = cli_ok(url, Some(TOKEN), &["device", "probes", "--format", "json"]);
    let probes: Vec<Value> = serde_json::from_str(&out).unwrap();
    for (host, _, spare) in hosts {
        let p = probes
            .iter()
            .find(|p| p["host"] == host.as_str() && p["path"] == spare.as_str())
            .unwrap_or_else(|| panic!("{probes:#?}"));
        assert_eq!(p["state"], "done", "{p}");
        assert_eq!(p["by_slot"], true, "a loop device has no serial: {p}");
        assert_eq!(p["jobs"].as_array().unwrap().len(), 4);
        for k in ["seq_write_bps", "seq_read_bps", "rand_read_iops", "sync_write_iops"] {
            assert!(p["figures"][k].as_f64().unwrap() > 0.0, "{k}: {p}");
        }
    }
    let wide = cli_ok(url, Some(TOKEN), &["device", "ls", "--wide"]);
    eprintln!("{wide}");
    assert!(wide.contains("(quick #") && wide.contains("its probe results belong to the slot"), "{wide}");
    let (_, text, _) = cli(url, Some(TOKEN), &["apply", "-i", strict.to_str().unwrap(), "--dry-run"]);
    eprintln!("{text}");
    let dry = dry_run(url, &strict);
    for (host, _, spare) in hosts {
        let row = preview_row(&dry, host);
        assert!(row["data"].as_array().unwrap().is_empty(), "{row}");
        let why = skipped_reason(row, spare);
        assert!(
            why.starts_with(&format!(
                "data_devices: refused by osdkeeper.probe.min_sync_write_iops {STRICT}: its 4k sync writes do "
            )),
            "{why}"
        );
        assert_eq!(row["probes"][0]["path"], spare.as_str(), "the dry-run shows the probe: {row}");
    }
    let steps = reconciler_steps(&api);
    wait_for("two reconciler passes", Duration::from_secs(30), || (reconciler_steps(&api) >= steps + 2).then_some(()));
    assert!(deployments(url).is_empty(), "refused disks are not made into OSDs");
    eprintln!("refusals, probes and gate checks took {:.0} s", started.elapsed().as_secs_f64());
}

fn api_for(d: &TestDaemon) -> Api {
    Api::new(&d.url, Some(TOKEN))
}
