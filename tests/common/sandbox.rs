//! The real Ceph sandbox (testbed/ceph-sandbox) for the tests that run
//! against a cluster: started in a test's own directory, stopped (daemons
//! and the loop devices it attached, by its own records) when dropped.
//!
//! The Ceph release comes from `OSDKEEPER_TEST_CEPH_RELEASE` (`pacific`,
//! the host's packages, when unset; `reef` or `tentacle` run Ceph from the
//! sandbox's Debian root). A test reaches Ceph's programs only through
//! `Sandbox::tool`, and configures the daemon with `Sandbox::ceph_yaml`, so
//! the same test talks to the release it is told: a Pacific client cannot
//! even authenticate to a Tentacle cluster (its cephx keys are aes256k).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use super::{bin, repo, spawn_listening, wait_for_or, Proc};

/// The release the sandbox tests run against, as `start.sh --release` names it.
pub fn test_release() -> String {
    let release = std::env::var("OSDKEEPER_TEST_CEPH_RELEASE").unwrap_or_default();
    match release.as_str() {
        "" => "pacific".to_string(),
        "pacific" | "reef" | "tentacle" => release,
        other => panic!("OSDKEEPER_TEST_CEPH_RELEASE={other:?}: the sandbox runs pacific, reef or tentacle"),
    }
}

pub fn sandbox_scripts() -> PathBuf {
    std::env::var_os("OSDKEEPER_SANDBOX_DIR").map(PathBuf::from).unwrap_or_else(|| repo().join("testbed/ceph-sandbox"))
}

/// The sandbox, stopped (daemons and the loop devices it attached, by its
/// own records) when dropped.
pub struct Sandbox {
    pub dir: PathBuf,
    /// The OSDs' scheduler, asked once (tests ask in their wait loops).
    mclock: std::sync::OnceLock<bool>,
}

impl Sandbox {
    /// `start.sh DIR` with `options` (e.g. `--loop`, or `--ceph-volume --spare-disks 1`).
    pub fn start(dir: &Path, options: &[&str]) -> Sandbox {
        let scripts = sandbox_scripts();
        assert!(
            scripts.join("start.sh").exists(),
            "the Ceph sandbox scripts are not at {} (they are in the repository at testbed/ceph-sandbox; OSDKEEPER_SANDBOX_DIR overrides)",
            scripts.display()
        );
        let port_base = free_port_base();
        let release = test_release();
        let out = Command::new(scripts.join("start.sh"))
            .arg(dir)
            .args(options)
            .args(["--port-base", &port_base.to_string(), "--release", &release])
            .output()
            .expect("run start.sh");
        let sandbox = Sandbox { dir: dir.to_path_buf(), mclock: std::sync::OnceLock::new() };
        assert!(
            out.status.success(),
            "the {release} sandbox did not start:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        sandbox.write_python();
        let versions = sandbox.json(&["versions"]);
        let overall = versions["overall"].as_object().cloned().unwrap_or_default();
        assert!(
            !overall.is_empty() && overall.keys().all(|line| line.contains(&format!(") {release} ("))),
            "the sandbox was asked for {release} but runs {versions}"
        );
        sandbox
    }

    /// The sandbox's own Ceph program `name`: the release root's through its
    /// wrapper in `DIR/bin`, or the host's from PATH for pacific.
    pub fn tool(&self, name: &str) -> PathBuf {
        let own = self.dir.join("bin").join(name);
        if own.exists() {
            own
        } else {
            PathBuf::from(name)
        }
    }

    /// A Python with the release's own `rados` binding (the root's python3
    /// for reef and tentacle), as one program: the daemon's cluster session
    /// takes a single path.
    pub fn python(&self) -> PathBuf {
        self.dir.join("test-bin/python3")
    }

    fn write_python(&self) {
        let in_root = self.dir.join("bin/in-root");
        let body = if in_root.exists() {
            format!("#!/bin/sh\nexec '{}' python3 \"$@\"\n", in_root.display())
        } else {
            "#!/bin/sh\nexec /usr/bin/python3 \"$@\"\n".to_string()
        };
        let path = self.python();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, body).unwrap();
        assert!(Command::new("chmod").arg("+x").arg(&path).status().unwrap().success());
    }

    /// `osdkeeper` run with the release's own libraries: the root's loader
    /// and library path for reef and tentacle, so that the Ceph SQLite VFS
    /// the daemon loads (`libsqlite3-mod-ceph`, in the root with ceph-mgr)
    /// is that release's; the host's for pacific. The binary, built against
    /// the host's older glibc, runs on the root's. Its child processes (the
    /// `ceph` wrapper, Python) are the host's programs, as before.
    pub fn osdkeeper(&self) -> Command {
        let release = test_release();
        if release == "pacific" {
            return Command::new(bin());
        }
        let out = Command::new(sandbox_scripts().join("release-root.sh"))
            .args([release.as_str(), "--no-install"])
            .output()
            .expect("run release-root.sh");
        assert!(out.status.success(), "release-root.sh {release}: {}", String::from_utf8_lossy(&out.stderr));
        let root = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
        let libs = ["lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu/ceph"]
            .map(|d| root.join(d).display().to_string())
            .join(":");
        let mut cmd = Command::new(root.join("lib64/ld-linux-x86-64.so.2"));
        cmd.arg("--library-path").arg(libs).arg(bin());
        cmd
    }

    /// PATH with the release's programs first, for a script that runs `ceph`.
    pub fn path_env(&self) -> String {
        let host = std::env::var("PATH").unwrap_or_default();
        format!("{}:{host}", self.dir.join("bin").display())
    }

    /// The daemon's `ceph:` settings that reach this sandbox with its own
    /// release's programs (`bin` when the test has no wrapper of its own),
    /// the cluster session on in every release; the test adds the rest.
    pub fn ceph_yaml(&self, bin: Option<&Path>) -> String {
        let bin = bin.map(Path::to_path_buf).unwrap_or_else(|| self.tool("ceph"));
        format!(
            "ceph:\n  conf: {}\n  bin: {}\n  osdmaptool: {}\n  session: true\n  python: {}\n",
            self.conf().display(),
            bin.display(),
            self.tool("osdmaptool").display(),
            self.python().display()
        )
    }

    /// `stop.sh DIR NAME`: SIGTERM to that daemon's pid (osd.4, mgr.x).
    pub fn stop_daemon(&self, name: &str) {
        let out = Command::new(sandbox_scripts().join("stop.sh")).arg(&self.dir).arg(name).output().unwrap();
        assert!(out.status.success(), "stop.sh {name}: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// `start.sh DIR` again: starts the daemons that are not running (not
    /// the purged OSDs) and waits for all PGs active+clean.
    pub fn start_stopped(&self) {
        let out = Command::new(sandbox_scripts().join("start.sh")).arg(&self.dir).output().unwrap();
        assert!(out.status.success(), "start.sh again: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// Whether the OSDs run mClock (Quincy on) rather than wpq (Pacific),
    /// which decides what a fast drain sets.
    pub fn runs_mclock(&self) -> bool {
        *self.mclock.get_or_init(|| {
            let (_, queue, _) = self.ceph(&["config", "show", "osd.0", "osd_op_queue"]);
            match queue.trim() {
                "wpq" => false,
                "mclock_scheduler" => true,
                other => panic!("osd.0 runs the op queue {other:?}"),
            }
        })
    }

    pub fn conf(&self) -> PathBuf {
        self.dir.join("ceph.conf")
    }

    pub fn ceph(&self, args: &[&str]) -> (i32, String, String) {
        let out = Command::new(self.tool("ceph")).arg("--conf").arg(self.conf()).args(args).output().expect("ceph");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into(),
            String::from_utf8_lossy(&out.stderr).into(),
        )
    }

    pub fn json(&self, args: &[&str]) -> Value {
        let mut full = args.to_vec();
        full.extend(["--format", "json"]);
        let (code, out, err) = self.ceph(&full);
        assert_eq!(code, 0, "ceph {args:?}: {err}");
        serde_json::from_str(out.trim()).unwrap()
    }

    /// osd.N -> its loop device, from the sandbox's own record.
    pub fn loops(&self) -> Vec<(u32, String)> {
        std::fs::read_to_string(self.dir.join("run/loops"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| {
                let mut f = l.split_whitespace();
                let id = f.next()?.strip_prefix("osd.")?.parse().ok()?;
                Some((id, f.next()?.to_string()))
            })
            .collect()
    }

    pub fn osd(&self, id: u32) -> Option<Value> {
        self.json(&["osd", "dump"])["osds"].as_array().unwrap().iter().find(|o| o["osd"] == id).cloned()
    }

    pub fn crush_weight(&self, id: u32) -> f64 {
        let tree = self.json(&["osd", "tree"]);
        tree["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["id"] == id)
            .and_then(|n| n["crush_weight"].as_f64())
            .unwrap()
    }

    /// Each host's OSD devices (from `ceph osd metadata`) and its spares
    /// (`--spare-disks`, from the sandbox's record), host by host.
    pub fn host_disks(&self, hosts: &[&str]) -> Vec<(String, Vec<String>, Vec<String>)> {
        let meta = self.json(&["osd", "metadata"]);
        let spares = std::fs::read_to_string(self.dir.join("run/spares")).unwrap_or_default();
        hosts
            .iter()
            .map(|host| {
                let osds: Vec<String> = meta
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|m| m["hostname"] == *host)
                    .filter_map(|m| m["bluestore_bdev_dev_node"].as_str().map(str::to_string))
                    .collect();
                let mine: Vec<String> = spares
                    .lines()
                    .filter_map(|l| l.strip_prefix(&format!("{host} ")))
                    .filter_map(|r| r.split_whitespace().next().map(str::to_string))
                    .collect();
                (host.to_string(), osds, mine)
            })
            .collect()
    }

    /// The OSDs under `host` in CRUSH, lowest id first.
    pub fn osds_under(&self, host: &str) -> Vec<u64> {
        let tree = self.json(&["osd", "tree"]);
        let node = tree["nodes"].as_array().and_then(|n| n.iter().find(|n| n["name"] == host).cloned());
        let mut ids: Vec<u64> = node
            .and_then(|n| n["children"].as_array().cloned())
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_u64)
            .collect();
        ids.sort();
        ids
    }

    /// The OSD whose block is `device` on `host`, when it is up and in
    /// under that host in CRUSH.
    pub fn running_osd_on(&self, host: &str, device: &str) -> Option<u64> {
        let meta = self.json(&["osd", "metadata"]);
        let id = meta.as_array()?.iter().find(|m| m["hostname"] == host && m["bluestore_bdev_dev_node"] == device)?
            ["id"]
            .as_u64()?;
        let osd = self.osd(id as u32)?;
        (osd["up"] == 1 && osd["in"] == 1 && self.osds_under(host).contains(&id)).then_some(id)
    }

    /// `deploy/ceph-auth.sh KEYRING ARGS...` against this cluster, as an
    /// operator makes the daemon's cephx user.
    pub fn ceph_auth(&self, keyring: &Path, args: &[&str]) {
        let out = Command::new(repo().join("deploy/ceph-auth.sh"))
            .arg(keyring)
            .args(args)
            .env("CEPH_CONF", self.conf())
            .env("PATH", self.path_env())
            .output()
            .unwrap();
        assert!(out.status.success(), "ceph-auth.sh {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// Waits for HEALTH_OK; on a loaded machine transient checks (slow
    /// pings, slow ops) can take a while to clear, and a timeout says which.
    pub fn wait_health_ok(&self) {
        wait_for_or(
            "HEALTH_OK",
            Duration::from_secs(180),
            || (self.json(&["health"])["status"] == "HEALTH_OK").then_some(()),
            || format!("ceph health detail: {}\n{}", self.ceph(&["health", "detail"]).1, self.disk_state()),
        )
    }

    /// The test machine's disk as the sandbox sees it: a mon warns of low
    /// space (MON_DISK_LOW) when the disk its store is on fills, whoever
    /// filled it, so a health timeout says how full it is and how much of
    /// it the sandbox itself holds.
    pub fn disk_state(&self) -> String {
        let run = |cmd: &str, args: &[&str]| match Command::new(cmd).args(args).output() {
            Ok(out) => format!(
                "$ {cmd} {}\n{}{}",
                args.join(" "),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
            Err(e) => format!("$ {cmd}: {e}\n"),
        };
        let dir = self.dir.display().to_string();
        format!("{}{}", run("df", &["-h", &dir]), run("du", &["-sh", &dir]))
    }

    /// Waits (generously: recovery crawls on a loaded machine) for every PG
    /// active+clean, printing the PG states last seen if they never are.
    pub fn wait_clean(&self) {
        let states = || self.json(&["pg", "stat"])["pg_summary"]["num_pg_by_state"].clone();
        wait_for_or(
            "all PGs active+clean",
            Duration::from_secs(300),
            || {
                let s = states();
                let s = s.as_array()?;
                (s.len() == 1 && s[0]["name"] == "active+clean").then_some(())
            },
            || format!("PGs by state: {}", states()),
        );
    }
}

impl Sandbox {
    /// Every PG's brief stats (`pg dump pgs_brief`, whether the release
    /// wraps them in `pg_stats` or prints the list alone).
    pub fn pgs_brief(&self) -> Vec<Value> {
        let dump = self.json(&["pg", "dump", "pgs_brief"]);
        dump["pg_stats"].as_array().cloned().unwrap_or_else(|| dump.as_array().cloned().unwrap_or_default())
    }

    /// Pins a PG with no copy on `host_osds` (the OSDs of `osd`'s host)
    /// onto `osd` with an upmap entry, as the balancer does, and waits
    /// until it is clean there. A drain of `osd` must move it too: the
    /// monitors drop an entry onto an OSD at CRUSH weight 0. Its PG id.
    pub fn pin_a_pg_onto(&self, osd: u64, host_osds: &[u64]) -> String {
        let pgs = self.pgs_brief();
        let away = |p: &&Value| {
            p["up"].as_array().unwrap().iter().all(|o| o.as_u64().is_some_and(|o| !host_osds.contains(&o)))
        };
        let pg = pgs.iter().find(away).unwrap_or_else(|| panic!("no PG away from {host_osds:?}: {pgs:?}"));
        let (pgid, from) = (pg["pgid"].as_str().unwrap().to_string(), pg["up"][0].as_u64().unwrap());
        let (code, _, err) = self.ceph(&["osd", "pg-upmap-items", &pgid, &from.to_string(), &osd.to_string()]);
        assert_eq!(code, 0, "pg-upmap-items {pgid} {from} {osd}: {err}");
        // The PG stats (`pg dump`, `osd df`, `pg stat`) trail the OSD map
        // (`pg map`) by seconds: until they show the PG clean on `osd`, a
        // reading of "before" may still be the PG's old place.
        let stats = || self.pgs_brief().into_iter().find(|p| p["pgid"] == pgid.as_str()).unwrap_or_default();
        let on = |p: &Value, set: &str| p[set].as_array().is_some_and(|s| s.iter().any(|o| o.as_u64() == Some(osd)));
        wait_for_or(
            &format!("the PG stats to show {pgid} clean on osd.{osd}"),
            Duration::from_secs(120),
            || {
                let p = stats();
                (on(&p, "up") && on(&p, "acting") && p["state"] == "active+clean").then_some(())
            },
            || format!("{pgid} in the PG stats: {}, in the OSD map: {}", stats(), self.json(&["pg", "map", &pgid])),
        );
        self.wait_clean();
        pgid
    }

    /// Makes drains backfill, as on a real cluster, instead of recovering
    /// from the PG logs: the sandbox's PGs hold a few objects each, all
    /// still in their logs (Ceph keeps at least 250 entries), so a PG
    /// given a new OSD recovers it from the log with the old OSD out of
    /// the acting set at once (PGs degraded, nothing left to watch on the
    /// drained OSD). With the logs trimmed to a couple of entries (every
    /// object written again under the shorter limits) a new OSD must be
    /// backfilled while the old one stays in the acting set. Checked: no
    /// PG's log starts at the beginning any more.
    pub fn make_drains_backfill(&self) {
        for (name, value) in
            [("osd_min_pg_log_entries", "1"), ("osd_max_pg_log_entries", "2"), ("osd_pg_log_trim_min", "1")]
        {
            assert_eq!(self.ceph(&["config", "set", "osd", name, value]).0, 0, "config set {name}");
        }
        let running = || self.ceph(&["config", "show", "osd.0", "osd_pg_log_trim_min"]).1.trim().to_string();
        wait_for_or(
            "the OSDs to run with the short PG logs",
            Duration::from_secs(120),
            || (running() == "1").then_some(()),
            || format!("osd.0 runs osd_pg_log_trim_min {}", running()),
        );
        let script = r#"
import os, sys, rados
c = rados.Rados(conffile=sys.argv[1]); c.connect(timeout=30)
io = c.open_ioctx("sandbox")
names = [o.key for o in io.list_objects()]
for _ in range(3):
    done = [io.aio_write_full(n, os.urandom(io.stat(n)[0])) for n in names]
    for d in done: d.wait_for_complete()
io.close(); c.shutdown()
"#;
        let out = Command::new(self.python()).args(["-c", script]).arg(self.conf()).output().unwrap();
        assert!(out.status.success(), "rewriting the objects: {}", String::from_utf8_lossy(&out.stderr));
        let untrimmed = || {
            let pgs = self.json(&["pg", "ls-by-pool", "sandbox"]);
            let pgs = pgs["pg_stats"].as_array().cloned().unwrap_or_default();
            let left: Vec<String> = pgs
                .iter()
                .filter(|p| p["stat_sum"]["num_objects"] != 0 && p["log_start"] == "0'0")
                .map(|p| format!("{} ({} entries)", p["pgid"], p["log_size"]))
                .collect();
            left
        };
        wait_for_or(
            "every PG log trimmed",
            Duration::from_secs(60),
            || untrimmed().is_empty().then_some(()),
            || format!("untrimmed: {:?}", untrimmed()),
        );
        self.wait_clean();
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = Command::new(sandbox_scripts().join("stop.sh")).arg(&self.dir).output();
    }
}

/// A base for the sandbox's 200 ports: below the kernel's ephemeral range
/// (32768-60999 here), where an outgoing connection of any process may hold
/// a port for a minute (measured: a mon failed to bind 47800 that way after
/// the previous sandbox test), and every port of the block free right now.
/// Each call of one test process starts its search at a block of its own:
/// two tests of a file start their sandboxes side by side, and both found
/// the same block free before either bound it.
pub fn free_port_base() -> u16 {
    static CALLS: std::sync::atomic::AtomicU16 = std::sync::atomic::AtomicU16::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let first = 20000 + ((std::process::id() % 60) as u16 + call) % 60 * 200;
    (0..60u16)
        .map(|i| 20000 + (first - 20000 + i * 200) % 12000)
        .find(|base| (*base..base + 200).all(|p| std::net::TcpListener::bind(("127.0.0.1", p)).is_ok()))
        .expect("no block of 200 free ports in 20000-31999 for the sandbox")
}

/// A program's full path: the sandbox's own, or the host's found on PATH.
pub fn full_path(tool: &Path) -> String {
    if tool.is_absolute() {
        return tool.display().to_string();
    }
    let found = Command::new("sh").arg("-c").arg(format!("command -v {}", tool.display())).output().unwrap();
    let found = String::from_utf8(found.stdout).unwrap().trim().to_string();
    assert!(!found.is_empty(), "{} is not on PATH", tool.display());
    found
}

/// A `ceph` that logs each command line the daemon runs, then runs the
/// sandbox's own.
pub fn ceph_wrapper(dir: &Path, sb: &Sandbox) -> (PathBuf, PathBuf) {
    let log = dir.join("ceph-commands.log");
    let bin = dir.join("ceph-logged");
    let real = full_path(&sb.tool("ceph"));
    // Each line names the daemon that ran the command (its
    // `OSDKEEPER_TEST_DAEMON`, inherited by every command it starts, and
    // its pid), then the command's arguments.
    let line = "daemon=${OSDKEEPER_TEST_DAEMON:-} pid=$PPID $*";
    std::fs::write(&bin, format!("#!/bin/sh\necho \"{line}\" >> '{}'\nexec {} \"$@\"\n", log.display(), real)).unwrap();
    Command::new("chmod").arg("+x").arg(&bin).status().unwrap();
    (bin, log)
}

/// A real agent for one CRUSH host of the sandbox, reporting `devices`; it
/// stops an OSD daemon with the sandbox's own `stop.sh DIR osd.N`. Only this
/// sandbox's ceph-osd processes are its OSDs: another sandbox on the
/// machine runs an osd.4 too.
pub fn sandbox_agent(dir: &Path, sb: &Sandbox, host: &str, devices: &[String], token: &str) -> (Proc, String) {
    let mut cmd = Command::new(bin());
    cmd.args(["agent", "--listen", "127.0.0.1:0", "--host-name", host, "--devices", &devices.join(",")]);
    cmd.arg("--osd-cluster-conf").arg(sb.conf());
    cmd.arg("--ceph-volume").arg(sb.tool("ceph-volume"));
    cmd.arg("--osd-stop-command").arg(format!(
        "{} {} osd.{{id}}",
        sandbox_scripts().join("stop.sh").display(),
        sb.dir.display()
    ));
    cmd.env("OSDKEEPER_AGENT_TOKEN", token);
    spawn_listening(cmd, &format!("agent {host}"), &dir.join(format!("agent-{host}.log")))
}

/// A real agent that also makes OSDs: `ceph_volume` (the sandbox's, or a
/// wrapper around it) prepares and activates them, and the sandbox's
/// `osd-start.sh DIR ID HOST` starts them under `host`.
pub fn deploying_agent(
    dir: &Path,
    sb: &Sandbox,
    host: &str,
    devices: &[String],
    ceph_volume: &Path,
    token: &str,
) -> (Proc, String) {
    let mut cmd = Command::new(bin());
    cmd.args(["agent", "--listen", "127.0.0.1:0", "--host-name", host, "--devices", &devices.join(",")]);
    let scripts = sandbox_scripts();
    cmd.arg("--osd-stop-command").arg(format!("{} {} osd.{{id}}", scripts.join("stop.sh").display(), sb.dir.display()));
    cmd.arg("--osd-start-command").arg(format!(
        "{} {} {{id}} {host}",
        scripts.join("osd-start.sh").display(),
        sb.dir.display()
    ));
    cmd.arg("--ceph-volume").arg(ceph_volume);
    cmd.arg("--osd-cluster-conf").arg(sb.conf());
    cmd.env("OSDKEEPER_AGENT_TOKEN", token).env("CEPH_CONF", sb.conf()).env("CEPH_VOLUME_LOG_PATH", sb.dir.join("log"));
    spawn_listening(cmd, &format!("agent {host}"), &dir.join(format!("agent-{host}.log")))
}
