//! Active/standby daemons on one database kept in RADOS (Ceph's SQLite
//! VFS), on the real sandbox: the first daemon leads, the next ones wait
//! and say where the leader is; kill -9 of the leader hands over once its
//! lock expires (the old one blocklisted, checked in Ceph), a clean stop at
//! once, and a leader frozen past its lock stops without another step when
//! it wakes. The daemons act as the cephx user `deploy/ceph-auth.sh` makes
//! with the database's pool. Runs on the host's Ceph (16.2): the VFS is
//! loaded into the daemon, so it is the host's library whatever the
//! cluster runs.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::client::Api;
use common::sandbox::Sandbox;
use common::*;
use serde_json::Value;

const POOL: &str = "osdkeeper";
const DB: &str = "ceph:osdkeeper/ha-test/osdkeeper.db";
/// `cephsqlite_lock_renewal_timeout`, which 16.2 does not let us change.
const LOCK_TIMEOUT: Duration = Duration::from_secs(30);

fn keyring(sb: &Sandbox) -> PathBuf {
    sb.dir.join("osdkeeper.keyring")
}

fn config(dir: &Path, sb: &Sandbox) -> PathBuf {
    let path = dir.join("osdkeeper.yaml");
    let yaml = format!(
        "{}  name: client.osdkeeper\n  keyring: {}\nreconcile:\n  enabled: false\n",
        sb.ceph_yaml(None),
        keyring(sb).display()
    );
    std::fs::write(&path, yaml).unwrap();
    path
}

struct Serving {
    proc: Proc,
    url: String,
    log: PathBuf,
}

impl Serving {
    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

fn serve(dir: &Path, name: &str, config: &Path, db: &str, extra: &[&str]) -> Serving {
    let log = dir.join(format!("{name}.log"));
    let mut cmd = Command::new(bin());
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--db", db, "--config"])
        .arg(config)
        .args(extra)
        .env_remove("OSDKEEPER_TOKEN")
        .env_remove("OSDKEEPER_AGENT_TOKEN")
        .env_remove("CEPH_ARGS");
    let (proc, addr) = spawn_listening(cmd, name, &log);
    Serving { proc, url: format!("http://{addr}"), log }
}

fn health(d: &Serving) -> (u16, Value) {
    let a = Api::new(&d.url, None).healthz();
    (a.status, a.body)
}

/// Waits until `d` leads (its /healthz answers 200) and says how long it took.
fn leads(d: &Serving, within: Duration, others: &[&Serving]) -> Duration {
    let start = Instant::now();
    wait_for_or(
        &format!("{} to lead", d.proc.name),
        within,
        || (health(d).0 == 200).then_some(()),
        || {
            let mut s = format!("its /healthz: {:?}\n--- its log:\n{}", health(d), d.log());
            for o in others {
                s.push_str(&format!("\n--- {}'s log:\n{}", o.proc.name, o.log()));
            }
            s
        },
    );
    start.elapsed()
}

/// Waits until `d` is a standby that names `leader` as the leader.
fn stands_by_for(d: &Serving, leader: &Serving) {
    let (status, body) = wait_for_or(
        &format!("{} to stand by for {}", d.proc.name, leader.url),
        Duration::from_secs(30),
        || {
            let (status, body) = health(d);
            (body["leader"]["url"] == leader.url.as_str()).then_some((status, body))
        },
        || format!("its /healthz: {:?}\n--- its log:\n{}", health(d), d.log()),
    );
    assert_eq!(status, 503, "a standby is not ready to serve: {body}");
    assert_eq!(body["status"], "standby", "{body}");
    assert_eq!(body["db"], DB, "{body}");
    assert_eq!(body["leader"]["pid"], leader.proc.pid(), "{body}");
    let message = body["message"].as_str().unwrap();
    assert!(message.contains(&leader.url), "the standby says where to go: {message}");
}

/// The blocklisted addresses. 16.2.15 prints the range blocklist as a
/// second JSON list after the first.
fn blocklist(sb: &Sandbox) -> Vec<String> {
    let (code, out, err) = sb.ceph(&["osd", "blocklist", "ls", "--format", "json"]);
    assert_eq!(code, 0, "ceph osd blocklist ls: {err}");
    let first: Value = serde_json::Deserializer::from_str(out.trim())
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("no JSON in {out:?}"))
        .unwrap_or_else(|e| panic!("{e}: {out:?}"));
    first.as_array().unwrap().iter().map(|e| e["addr"].as_str().unwrap_or_default().to_string()).collect()
}

fn exits(d: &mut Serving, within: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if let Ok(Some(status)) = d.proc.child.try_wait() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

#[test]
fn standbys_take_over_a_database_in_rados_after_a_crash_a_stop_and_a_freeze() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let sb = Sandbox::start(&dir.join("ceph"), &["--osds", "3"]);
    let out = Command::new(repo().join("deploy/ceph-auth.sh"))
        .arg(keyring(&sb))
        .arg(POOL)
        .env("CEPH_CONF", sb.conf())
        .env("PATH", sb.path_env())
        .output()
        .unwrap();
    assert!(out.status.success(), "ceph-auth.sh: {}", String::from_utf8_lossy(&out.stderr));
    let config = config(dir, &sb);

    // What is wrong is said in one line, and nothing starts.
    for (db, extra, why) in [
        ("ceph:osdkeeper", &[][..], "expected ceph:POOL/NAMESPACE/NAME"),
        (
            "ceph:no-such-pool/ha/osdkeeper.db",
            &[][..],
            "the pool no-such-pool does not exist; start with --create-pool",
        ),
        ("some.db", &["--create-pool"][..], "--create-pool is for a database in RADOS"),
    ] {
        let out = Command::new(bin())
            .args(["serve", "--listen", "127.0.0.1:0", "--db", db, "--config"])
            .arg(&config)
            .args(extra)
            .current_dir(dir)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(why), "serve --db {db}: {:?}\n{err}", out.status);
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert!(!String::from_utf8_lossy(&out.stdout).contains("listening on"), "{db} never serves");
    }

    // The first daemon leads; what it writes is in RADOS.
    let mut a = serve(dir, "a", &config, DB, &[]);
    leads(&a, Duration::from_secs(60), &[]);
    cli_ok(&a.url, None, &["host", "add", "f5-422-01", "127.0.0.1:9", "--no-check"]);
    let (code, objects, err) = {
        let out = Command::new(sb.tool("rados"))
            .args(["--conf"])
            .arg(sb.conf())
            .args(["-p", POOL, "-N", "ha-test", "ls"])
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    assert_eq!(code, Some(0), "rados ls: {err}");
    assert!(objects.lines().any(|o| o.starts_with("osdkeeper.db.")), "the database's objects: {objects}");

    // The second waits, says where the leader is, and serves nothing else.
    let mut b = serve(dir, "b", &config, DB, &[]);
    stands_by_for(&b, &a);
    let (code, _, err) = cli(&b.url, None, &["host", "ls"]);
    assert_ne!(code, 0, "a standby does not answer for the leader");
    assert!(err.contains("standby") && err.contains(&a.url), "the CLI says where the leader is: {err}");

    // kill -9: the lock expires, the standby takes it and blocklists the old holder.
    let blocked_before = blocklist(&sb);
    a.proc.kill9();
    let took = leads(&b, LOCK_TIMEOUT + Duration::from_secs(10), &[&a]);
    eprintln!("kill -9 of the leader: the standby led {:.1} s later", took.as_secs_f64());
    let hosts = cli_ok(&b.url, None, &["host", "ls", "--format", "json"]);
    assert!(hosts.contains("f5-422-01"), "what the old leader wrote is there: {hosts}");
    let blocked = blocklist(&sb);
    assert!(
        blocked.len() > blocked_before.len(),
        "the old leader is blocklisted: {blocked:?} (before: {blocked_before:?})"
    );

    // A clean stop hands over at once, without waiting for the lock to expire.
    let mut c = serve(dir, "c", &config, DB, &[]);
    stands_by_for(&c, &b);
    assert_eq!(b.proc.terminate(), Some(0), "a clean stop: {}", b.log());
    let took = leads(&c, LOCK_TIMEOUT / 2, &[&b]);
    eprintln!("clean stop of the leader: the standby led {:.2} s after it exited", took.as_secs_f64());

    // Frozen past its lock: the standby takes over; the old leader, woken,
    // stops at once instead of acting.
    let d = serve(dir, "d", &config, DB, &[]);
    stands_by_for(&d, &c);
    let signal =
        |name: &str, pid: u32| assert!(Command::new("kill").args([name, &pid.to_string()]).status().unwrap().success());
    signal("-STOP", c.proc.pid());
    let took = leads(&d, LOCK_TIMEOUT + Duration::from_secs(10), &[&c]);
    eprintln!("leader frozen: the standby led {:.1} s after SIGSTOP", took.as_secs_f64());
    signal("-CONT", c.proc.pid());
    let status =
        exits(&mut c, Duration::from_secs(10)).unwrap_or_else(|| panic!("the woken leader still runs:\n{}", c.log()));
    assert!(!status.success(), "{status:?}");
    let said = c.log();
    assert!(said.contains("lost the lock on ceph:osdkeeper/ha-test/osdkeeper.db"), "it says why it stopped:\n{said}");
    let hosts = cli_ok(&d.url, None, &["host", "ls", "--format", "json"]);
    assert!(hosts.contains("f5-422-01"), "{hosts}");
}
