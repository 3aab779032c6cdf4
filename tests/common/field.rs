//! The operator's side of the real-host tests: the agents installed on
//! the emulated hosts by deploy/install.sh, the daemon beside the mon, the
//! CLI as an operator's shell runs it, and the checks made from outside
//! osdkeeper (ceph as client.admin, the hosts' own tools).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use super::real_hosts::RealCluster;
use super::{bin, repo, spawn_listening, wait_for_or, Proc};

pub const HOSTS: [&str; 3] = ["f5-422-01", "f5-422-02", "f5-422-03"];
pub const TOKEN: &str = "field-report-api-token-0123456789abcdef";
pub const AGENT_TOKEN: &str = "field-report-agent-token-0123456789abcdef";
/// How long an agent's ceph-volume listing may take: the hosts are
/// emulated (no KVM on the machines this runs on), where Python starts
/// slowly and a `ceph-volume inventory` under load took minutes.
pub const SLOW_S: u64 = 900;

/// The daemon as the operator's shell reaches it: on 127.0.0.1 of the
/// run's network namespace, where the daemon runs beside the mon.
pub struct Operator<'a> {
    pub cluster: &'a RealCluster,
}

impl Operator<'_> {
    pub fn run(&self, args: &[&str]) -> (i32, String, String) {
        let out = self
            .cluster
            .ns_command(bin())
            .args(args)
            .env("OSDKEEPER_URL", "http://127.0.0.1:8740")
            .env("OSDKEEPER_TOKEN", TOKEN)
            .output()
            .expect("run the CLI");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    pub fn ok(&self, args: &[&str]) -> String {
        let (code, out, err) = self.run(args);
        assert_eq!(code, 0, "`osdkeeper {}` exited {code}\n--- stdout:\n{out}\n--- stderr:\n{err}", args.join(" "));
        out
    }

    pub fn json(&self, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.extend(["--format", "json"]);
        let out = self.ok(&all);
        serde_json::from_str(&out)
            .unwrap_or_else(|e| panic!("`osdkeeper {}` printed no JSON ({e}):\n{out}", all.join(" ")))
    }
}

/// The test's run directory (`OSDKEEPER_TEST_DIR`, else the temporary
/// one): `osdk-NAME-PID`, kept for reading after a failure and removed
/// after a pass (a field report's is ~80 MB of logs and keys).
pub struct RunDir(PathBuf);

impl std::ops::Deref for RunDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("the run's files are kept in {}", self.0.display());
        } else if let Err(e) = std::fs::remove_dir_all(&self.0) {
            eprintln!("could not remove {}: {e}", self.0.display());
        }
    }
}

pub fn run_dir(name: &str) -> RunDir {
    let base = std::env::var_os("OSDKEEPER_TEST_DIR").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
    let dir = base.join(format!("osdk-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    RunDir(dir)
}

pub fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

pub fn local(program: &str, args: &[&str]) {
    let out = Command::new(program).args(args).output().unwrap_or_else(|e| panic!("run {program}: {e}"));
    assert!(
        out.status.success(),
        "`{program} {}` failed:\n{}\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The binary, the deploy directory and the certificates in the run's
/// share (every host reads it at /mnt/osdk); then deploy/install.sh on
/// each host, as an operator runs it, and the agent's unit started.
pub fn install_agents(cluster: &RealCluster) -> PathBuf {
    let share = cluster.share();
    // The debug binary's symbols are most of its size; the hosts need none.
    local("objcopy", &["--strip-debug", bin(), &share.join("osdkeeper").display().to_string()]);
    local("cp", &["-r", &repo().join("deploy").display().to_string(), &share.display().to_string()]);
    let pki = share.join("pki");
    let mut certs = vec!["certs".to_string(), "--out".into(), pki.display().to_string()];
    certs.extend(["--daemon".into(), "ceph-admin,10.88.0.254".into()]);
    for (i, h) in HOSTS.iter().enumerate() {
        certs.extend(["--host".into(), format!("{h},10.88.0.{}", i + 1)]);
    }
    local(bin(), &certs.iter().map(String::as_str).collect::<Vec<_>>());
    // The share is read-only and world-readable: the secrets are copied
    // from it once, then it is emptied of them below.
    write(&share.join("agent-token"), AGENT_TOKEN);
    std::thread::scope(|s| {
        for host in HOSTS {
            s.spawn(move || {
                // The token and the certificate first: install.sh keeps what
                // it finds, and the unit reads them at its start.
                cluster.sh_ok(
                    host,
                    &format!(
                        // Emulated hosts: one `ceph-volume inventory` may take minutes.
                        "set -e; cd /mnt/osdk
                         install -d -m 0750 /etc/osdkeeper /etc/osdkeeper/pki
                         install -m 0600 agent-token /etc/osdkeeper/agent-token
                         install -m 0644 pki/{host}.pem /etc/osdkeeper/pki/{host}.pem
                         install -m 0600 pki/{host}-key.pem /etc/osdkeeper/pki/{host}-key.pem
                         echo OSDKEEPER_AGENT_OPTS=\"--inventory-timeout-s {slow}\" > /etc/default/osdkeeper-agent
                         deploy/install.sh --role agent --binary ./osdkeeper
                         systemctl enable --now osdkeeper-agent",
                        slow = SLOW_S
                    ),
                );
            });
        }
    });
    for h in HOSTS {
        std::fs::remove_file(pki.join(format!("{h}-key.pem"))).unwrap();
    }
    std::fs::remove_file(share.join("agent-token")).unwrap();
    pki
}

/// Every host added with its agent's address on the private L2 and the
/// `osd` label, side by side: the agent's check of each takes an emulated
/// inventory.
pub fn add_hosts(op: &Operator) {
    std::thread::scope(|s| {
        for (i, host) in HOSTS.iter().enumerate() {
            s.spawn(move || {
                op.ok(&["host", "add", host, &format!("https://10.88.0.{}:8741", i + 1), "--labels", "osd"]);
            });
        }
    });
}

/// The daemon, on this machine in the run's network namespace (an admin
/// host on the storage hosts' network), as its own cephx user made by
/// deploy/ceph-auth.sh.
pub fn start_daemon(cluster: &RealCluster, run: &Path, pki: &Path) -> Proc {
    let keyring = run.join("ceph.client.osdkeeper.keyring");
    // The benchmarks' pool, made by the admin: the daemon's user may write
    // there and nowhere else.
    admin(cluster, "ceph osd pool create bench 32 && ceph osd pool application enable bench rados");
    let auth = cluster
        .ns_command("sh")
        .arg(repo().join("deploy/ceph-auth.sh"))
        .args(["--bench-pool", "bench"])
        .arg(&keyring)
        .output()
        .unwrap();
    assert!(
        auth.status.success(),
        "deploy/ceph-auth.sh failed:\n{}\n{}",
        String::from_utf8_lossy(&auth.stdout),
        String::from_utf8_lossy(&auth.stderr)
    );
    // rados bench waits for its writes in flight after its seconds: 16
    // writes of 4 MiB to emulated OSDs outlasted the default minute.
    // Inventories every 5 minutes, not every minute: a `ceph-volume
    // inventory` takes an emulated host 12 s idle and over a minute while
    // it prepares OSDs, and polls of every host back to back took the CPU
    // the deployments needed (activations took 3 minutes). What the test
    // changes is looked at anyway: `device ls --refresh`, and the
    // deployments' own polls after each ceph-volume run.
    let config = run.join("osdkeeper.yaml");
    write(
        &config,
        &format!(
            "agents: {{ca: {ca}}}\n\
             ceph: {{conf: {conf}, name: client.osdkeeper, keyring: {keyring}, timeout_s: 60, session: true, bench_slack_s: 600}}\n\
             poll: {{interval_s: 300, timeout_s: {slow}}}\n\
             reconcile: {{enabled: true, interval_s: 15}}\n\
             removal: {{interval_s: 5}}\n",
            ca = pki.join("ca.pem").display(),
            conf = cluster.run.join("ceph/ceph.conf").display(),
            keyring = keyring.display(),
            slow = SLOW_S,
        ),
    );
    let log = run.join("daemon.log");
    let mut cmd = cluster.ns_command(bin());
    cmd.args(["serve", "--listen", "127.0.0.1:8740", "--db"])
        .arg(run.join("osdkeeper.db"))
        .arg("--config")
        .arg(&config)
        .env("OSDKEEPER_TOKEN", TOKEN)
        .env("OSDKEEPER_AGENT_TOKEN", AGENT_TOKEN);
    let (proc, _) = spawn_listening(cmd, "daemon", &log);
    proc
}

/// The enabled `ceph-volume@lvm-ID-FSID` units of osd.`id` (`*`: of all
/// OSDs) on `host`, each checked with `systemctl is-enabled`. Enabled
/// instances of a template are the links in the target's wants directory:
/// `systemctl list-unit-files` lists the template alone.
pub fn lvm_units(cluster: &RealCluster, host: &str, id: &str) -> Vec<String> {
    let out = cluster.sh_ok(
        host,
        &format!(
            "cd /etc/systemd/system/multi-user.target.wants && for u in ceph-volume@lvm-{id}-*; do \
               [ -e \"$u\" ] || continue; echo \"$u $(systemctl is-enabled \"$u\")\"; done"
        ),
    );
    out.lines()
        .map(|l| {
            let (unit, state) = l.split_once(' ').unwrap_or((l, ""));
            assert_eq!(state, "enabled", "{unit} on {host} is linked but systemd says {state:?}");
            unit.to_string()
        })
        .collect()
}

/// A shell command line as client.admin in the run's namespace.
pub fn admin(cluster: &RealCluster, command: &str) {
    let out = cluster.ns_command("sh").args(["-c", command]).output().unwrap();
    assert!(
        out.status.success(),
        "`{command}` failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

pub fn wait_health_ok(cluster: &RealCluster, timeout: Duration) {
    wait_for_or(
        "HEALTH_OK",
        timeout,
        || (cluster.admin_ceph(&["health"])["status"] == "HEALTH_OK").then_some(()),
        || cluster.admin_ceph(&["health", "detail"]).to_string(),
    );
}

/// `bench cluster` on the bench pool; its run's id.
pub fn bench(op: &Operator, label: &str) -> i64 {
    let out = op.json(&["bench", "cluster", "--pool", "bench", "--seconds", "10", "--label", label]);
    assert_eq!((out["phase"].as_str(), out["failure"].as_str()), (Some("done"), None), "the {label} benchmark: {out}");
    out["bench_id"].as_i64().unwrap_or_else(|| panic!("no bench_id: {out}"))
}

/// The OSD whose data is on `path` of `host`, by `ceph osd metadata`.
pub fn osd_on(cluster: &RealCluster, tree: &Value, host: &str, path: &str) -> u64 {
    let dev = path.trim_start_matches("/dev/");
    *osds_under(tree, host)
        .iter()
        .find(|id| cluster.admin_ceph(&["osd", "metadata", &id.to_string()])["bluestore_bdev_devices"] == dev)
        .unwrap_or_else(|| panic!("no OSD of {host} on {path}: {tree}"))
}

/// Each host's disks by their bay (the serial's tail: HDD1, SSD1, ...), as
/// its inventory names them: the kernel's names (sda, sdb) follow the
/// order the disks answered the scan in, which differs from host to host.
pub fn wait_disks(op: &Operator, bays: &[&str]) -> BTreeMap<String, BTreeMap<String, String>> {
    wait_for_or(
        &format!("every host's inventory with its disks {bays:?}"),
        Duration::from_secs(600),
        || {
            let listed = op.json(&["device", "ls", "--refresh"]);
            let mut all = BTreeMap::new();
            for h in listed.as_array()? {
                let host = h["host"].as_str()?.to_string();
                let mut by_bay = BTreeMap::new();
                for d in h["devices"].as_array()? {
                    let id = d["device_id"].as_str().unwrap_or_default();
                    if let Some(bay) = bays.iter().find(|b| id.ends_with(&format!("-{b}"))) {
                        by_bay.insert(bay.to_string(), d["path"].as_str()?.to_string());
                    }
                }
                if by_bay.len() != bays.len() {
                    return None;
                }
                all.insert(host, by_bay);
            }
            (all.len() == HOSTS.len()).then_some(all)
        },
        || op.ok(&["device", "ls"]),
    )
}

pub fn preview_row<'a>(dry: &'a Value, host: &str) -> &'a Value {
    dry["preview"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["host"] == host)
        .unwrap_or_else(|| panic!("no row for {host}: {dry}"))
}

/// `ceph osd tree` once `n` OSDs are up and in, seen from the admin side.
pub fn wait_osds(cluster: &RealCluster, op: &Operator, n: usize, timeout: Duration) -> Value {
    wait_for_or(
        &format!("{n} OSDs up and in"),
        timeout,
        || {
            let tree = cluster.admin_ceph(&["osd", "tree"]);
            let up_in = tree["nodes"]
                .as_array()?
                .iter()
                .filter(|n| n["type"] == "osd" && n["status"] == "up" && n["reweight"].as_f64() == Some(1.0))
                .count();
            (up_in == n).then_some(tree)
        },
        || {
            format!(
                "osd tree: {}\ndeployments: {}\nevents: {}",
                cluster.admin_ceph(&["osd", "tree"]),
                op.ok(&["osd", "deploy", "status", "--history", "20"]),
                op.ok(&["events", "--since", "30m"])
            )
        },
    )
}

pub fn osd_ids(tree: &Value) -> Vec<u64> {
    tree["nodes"].as_array().unwrap().iter().filter(|n| n["type"] == "osd").map(|n| n["id"].as_u64().unwrap()).collect()
}

/// The OSD ids CRUSH has under `host`.
pub fn osds_under(tree: &Value, host: &str) -> Vec<u64> {
    let nodes = tree["nodes"].as_array().unwrap();
    let Some(h) = nodes.iter().find(|n| n["type"] == "host" && n["name"] == host) else { return Vec::new() };
    h["children"].as_array().unwrap().iter().map(|c| c.as_i64().unwrap() as u64).collect()
}
