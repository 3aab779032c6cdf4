//! Active/standby daemons on one database kept in RADOS (Ceph's SQLite
//! VFS), on the real sandbox: the first daemon leads, the next ones wait
//! and say where the leader is; kill -9 of the leader hands over once its
//! lock expires (the old one blocklisted, checked in Ceph), a clean stop at
//! once, and a leader frozen past its lock stops without another step when
//! it wakes. The daemons act as the cephx user `deploy/ceph-auth.sh` makes
//! with the database's pool. The VFS is loaded into the daemon, so the
//! daemons run with the release's own libraries (`Sandbox::osdkeeper`):
//! on 18.2 and 20.2 the cluster gives their client a lock timeout and
//! renewal interval other than Ceph's defaults (which 16.2 cannot take),
//! and the daemons must fence by them: the bound they report, a hand-over
//! after kill -9 within that timeout, and a leader frozen past that bound
//! (but not past its lock) stopping as it wakes. A dead locker that is not
//! blocklisted is refused. A backup taken through the leader is restored
//! into its database once no daemon leads on it, the replaced one kept
//! beside it; a restore killed before its commit leaves the old content.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::client::Api;
use common::sandbox::{ceph_wrapper, sandbox_agent, test_release, Sandbox};
use common::*;
use serde_json::Value;

const POOL: &str = "osdkeeper";
const DB: &str = "ceph:osdkeeper/ha-test/osdkeeper.db";
/// The second set of daemons, which drains an OSD: its own database.
const DRAIN_DB: &str = "ceph:osdkeeper/ha-drain/osdkeeper.db";
const AGENT_TOKEN: &str = "ha-agent-token";
const HOSTS: [&str; 3] = ["f5-422-01", "f5-422-02", "f5-422-03"];
/// `cephsqlite_lock_renewal_timeout` as Ceph sets it (the restore test's).
const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(30);

/// The VFS's lock as the daemons' client is given it, and the bound the
/// daemons must derive from it (the timeout less two renewals and 4 s).
struct Lock {
    timeout: Duration,
    interval: Duration,
    bound: Duration,
}

/// 16.2 takes only Ceph's defaults (30 s, 2 s); 18.2 and 20.2 are given
/// 12 s and 1 s for the daemons' client in the monitors' config.
fn lock_of_this_release(sb: &Sandbox) -> Lock {
    if test_release() == "pacific" {
        return Lock {
            timeout: DEFAULT_LOCK_TIMEOUT,
            interval: Duration::from_secs(2),
            bound: Duration::from_secs(22),
        };
    }
    let lock =
        Lock { timeout: Duration::from_secs(12), interval: Duration::from_secs(1), bound: Duration::from_secs(6) };
    for (option, value) in
        [("cephsqlite_lock_renewal_timeout", lock.timeout), ("cephsqlite_lock_renewal_interval", lock.interval)]
    {
        let ms = value.as_millis().to_string();
        let (code, _, err) = sb.ceph(&["config", "set", "client.osdkeeper", option, &ms]);
        assert_eq!(code, 0, "config set client.osdkeeper {option} {ms}: {err}");
    }
    lock
}

fn keyring(sb: &Sandbox) -> PathBuf {
    sb.dir.join("osdkeeper.keyring")
}

/// The daemons' config: Ceph as `client.osdkeeper` through `ceph_bin` (a
/// wrapper that logs each command), and the release's `rados` (the leader's
/// record, the lock's holder).
fn config(dir: &Path, sb: &Sandbox, ceph_bin: &Path) -> PathBuf {
    let path = dir.join("osdkeeper.yaml");
    let yaml = format!(
        "{}  rados_bin: {}\n  name: client.osdkeeper\n  keyring: {}\nreconcile:\n  enabled: false\npoll:\n  interval_s: 2\nremoval:\n  interval_s: 1\n",
        sb.ceph_yaml(Some(ceph_bin)),
        sb.tool("rados").display(),
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

fn serve(sb: &Sandbox, dir: &Path, name: &str, config: &Path, db: &str, extra: &[&str]) -> Serving {
    let log = dir.join(format!("{name}.log"));
    let mut cmd = sb.osdkeeper();
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--db", db, "--config"])
        .arg(config)
        .args(extra)
        .env_remove("OSDKEEPER_TOKEN")
        .env("OSDKEEPER_AGENT_TOKEN", AGENT_TOKEN)
        .env("OSDKEEPER_TEST_DAEMON", name)
        .env_remove("CEPH_ARGS");
    let (proc, addr) = spawn_listening(cmd, name, &log);
    Serving { proc, url: format!("http://{addr}"), log }
}

/// /healthz's status and body; (0, the error) when nothing answers (a
/// daemon that died), so that a wait says so with the daemon's log.
fn health(d: &Serving) -> (u16, Value) {
    let http = reqwest::blocking::Client::builder().timeout(Duration::from_secs(30)).build().unwrap();
    match http.get(format!("{}/healthz", d.url)).send() {
        Ok(r) => {
            let status = r.status().as_u16();
            (status, r.json().unwrap_or(Value::Null))
        }
        Err(e) => (0, Value::String(e.to_string())),
    }
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
    stands_by_for_db(d, leader, DB)
}

fn stands_by_for_db(d: &Serving, leader: &Serving, db: &str) {
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
    assert_eq!(body["db"], db, "{body}");
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

/// `serve --db DB` refused in one line saying `why`; it never listens.
fn refused(sb: &Sandbox, dir: &Path, config: &Path, db: &str, extra: &[&str], why: &str) {
    let out = sb
        .osdkeeper()
        .args(["serve", "--listen", "127.0.0.1:0", "--db", db, "--config"])
        .arg(config)
        .args(extra)
        .env_remove("CEPH_ARGS")
        .current_dir(dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains(why), "serve --db {db}: {:?}\n{err}", out.status);
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("listening on"), "{db} never serves");
}

/// How long the database's lock has left (`rados lock info`: the OSD sets
/// its expiration at each renewal, the VFS's timeout later).
fn lock_left(sb: &Sandbox, namespace: &str) -> Duration {
    let out = Command::new(sb.tool("rados"))
        .arg("--conf")
        .arg(sb.conf())
        .args(["-p", POOL, "-N", namespace, "lock", "info", "osdkeeper.db.0000000000000000", "striper.lock"])
        .args(["--format", "json"])
        .output()
        .unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    let info: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("rados lock info: {e}: {}", String::from_utf8_lossy(&out.stderr)));
    let expiration = info["lockers"][0]["expiration"].as_str().unwrap_or_else(|| panic!("one holder: {info}"));
    let date = Command::new("date").args(["-d", expiration, "+%s.%N"]).output().unwrap();
    let at: f64 = String::from_utf8_lossy(&date.stdout).trim().parse().unwrap_or_else(|e| panic!("{expiration}: {e}"));
    Duration::from_secs_f64((at - now.as_secs_f64()).max(0.0))
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

/// The daemons' user as an operator has it, then given the database's
/// pool (made by the script): run again, it gives an existing user the new caps.
fn daemons_user(sb: &Sandbox) {
    for args in [&[][..], &[POOL][..]] {
        sb.ceph_auth(&keyring(sb), args);
    }
    let caps = sb.json(&["auth", "get", "client.osdkeeper"]);
    assert!(caps.to_string().contains("allow rwx pool=osdkeeper"), "{caps}");
}

#[test]
fn standbys_take_over_a_database_in_rados_after_a_crash_a_stop_and_a_freeze_and_finish_a_drain() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let sb = Sandbox::start(&dir.join("ceph"), &["--loop"]);
    daemons_user(&sb);
    // Every daemon runs Ceph through this wrapper, whose log (each command
    // with the pid that ran it) is the audit of what each one did.
    let (ceph_bin, ceph_log) = ceph_wrapper(dir, &sb);
    let config = config(dir, &sb, &ceph_bin);

    let lock = lock_of_this_release(&sb);

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
        refused(&sb, dir, &config, db, extra, why);
    }
    // A dead locker that is not blocklisted leaves nothing to fence the
    // database with.
    let dead_locker = ["client.osdkeeper", "cephsqlite_blocklist_dead_locker"];
    assert_eq!(sb.ceph(&["config", "set", dead_locker[0], dead_locker[1], "false"]).0, 0);
    refused(
        &sb,
        dir,
        &config,
        DB,
        &[],
        "cannot lead ceph:osdkeeper/ha-test/osdkeeper.db: cephsqlite_blocklist_dead_locker is false",
    );
    assert_eq!(sb.ceph(&["config", "rm", dead_locker[0], dead_locker[1]]).0, 0);

    // The first daemon leads, fencing by the lock its VFS runs with; what
    // it writes is in RADOS.
    let mut a = serve(&sb, dir, "a", &config, DB, &[]);
    leads(&a, Duration::from_secs(60), &[]);
    let derived = format!(
        "fences itself {} s after its last commit that went through (cephsqlite_lock_renewal_timeout {} ms, \
         cephsqlite_lock_renewal_interval {} ms)",
        lock.bound.as_secs(),
        lock.timeout.as_millis(),
        lock.interval.as_millis()
    );
    assert!(a.log().contains(&derived), "the daemon reports the bound it derived ({derived}):\n{}", a.log());
    let left = lock_left(&sb, "ha-test");
    assert!(
        left <= lock.timeout + Duration::from_millis(500)
            && left + lock.interval + Duration::from_secs(3) > lock.timeout,
        "the VFS holds its lock for the timeout the daemon derived from ({:?}): {left:?} left",
        lock.timeout
    );
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
    let mut b = serve(&sb, dir, "b", &config, DB, &[]);
    stands_by_for(&b, &a);
    let (code, _, err) = cli(&b.url, None, &["host", "ls"]);
    assert_ne!(code, 0, "a standby does not answer for the leader");
    assert!(err.contains("standby") && err.contains(&a.url), "the CLI says where the leader is: {err}");

    // kill -9: the lock expires, the standby takes it and blocklists the old holder.
    let blocked_before = blocklist(&sb);
    a.proc.kill9();
    let took = leads(&b, lock.timeout + Duration::from_secs(10), &[&a]);
    eprintln!("kill -9 of the leader: the standby led {:.1} s later", took.as_secs_f64());
    assert!(
        took + lock.interval + Duration::from_secs(1) >= lock.timeout,
        "the lock outlived its holder by the timeout ({:?}), less a renewal: {took:?}",
        lock.timeout
    );
    let hosts = cli_ok(&b.url, None, &["host", "ls", "--format", "json"]);
    assert!(hosts.contains("f5-422-01"), "what the old leader wrote is there: {hosts}");
    let blocked = blocklist(&sb);
    assert!(
        blocked.len() > blocked_before.len(),
        "the old leader is blocklisted: {blocked:?} (before: {blocked_before:?})"
    );

    // A clean stop hands over at once, without waiting for the lock to expire.
    let mut c = serve(&sb, dir, "c", &config, DB, &[]);
    stands_by_for(&c, &b);
    assert_eq!(b.proc.terminate(), Some(0), "a clean stop: {}", b.log());
    let took = leads(&c, lock.timeout / 2, &[&b]);
    eprintln!("clean stop of the leader: the standby led {:.2} s after it exited", took.as_secs_f64());

    // Frozen past its bound, though not past its lock (the standby still
    // waits): the old leader, woken, stops at once, saying why, before its
    // next step; the standby leads once the lock expires.
    let d = serve(&sb, dir, "d", &config, DB, &[]);
    stands_by_for(&d, &c);
    let signal =
        |name: &str, pid: u32| assert!(Command::new("kill").args([name, &pid.to_string()]).status().unwrap().success());
    signal("-STOP", c.proc.pid());
    let frozen_at = std::fs::read_to_string(&ceph_log).unwrap_or_default().lines().count();
    std::thread::sleep(lock.bound + Duration::from_millis(1500));
    let waiting = health(&d).0;
    signal("-CONT", c.proc.pid());
    assert_eq!(waiting, 503, "the frozen leader's lock had not expired yet: the standby still waited");
    let status =
        exits(&mut c, Duration::from_secs(10)).unwrap_or_else(|| panic!("the woken leader still runs:\n{}", c.log()));
    assert!(!status.success(), "{status:?}");
    let said = c.log();
    let why = format!("lost the lock on {DB} (this process did not run for ");
    let bound = format!("past its bound of {} s", lock.bound.as_secs());
    assert!(said.contains(&why) && said.contains(&bound), "it says why it stopped ({why}... {bound}):\n{said}");
    let took = leads(&d, lock.timeout + Duration::from_secs(10), &[&c]);
    eprintln!("leader frozen past its bound: the standby led {:.1} s after it woke", took.as_secs_f64());
    let mine = "daemon=c ";
    let audit = std::fs::read_to_string(&ceph_log).unwrap();
    let after: Vec<&str> = audit.lines().skip(frozen_at).filter(|l| l.starts_with(mine)).collect();
    assert!(after.is_empty(), "the woken leader sent no Ceph command: {after:?}");
    assert!(
        audit.lines().take(frozen_at).any(|l| l.starts_with(mine)),
        "its commands before are in the audit:\n{audit}"
    );
    let hosts = cli_ok(&d.url, None, &["host", "ls", "--format", "json"]);
    assert!(hosts.contains("f5-422-01"), "{hosts}");

    // A backup goes through the leader's own connection (the lock admits
    // no other), to a file on its machine, checked; never over a file.
    let copy = dir.join("ha-backup.db");
    let copy_text = copy.to_str().unwrap();
    let said = cli_ok(&d.url, None, &["backup", copy_text, "--db", DB]);
    assert!(said.contains("1 hosts") && copy.exists(), "{said}");
    let (code, _, err) = cli(&d.url, None, &["backup", copy_text, "--db", DB]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("exists already"), "{err}");

    drop((a, b, c, d));

    // A removal under way when its leader is killed: the standby finishes
    // it, and each destructive command went out once.
    let loops = sb.loops();
    let dev = |id: u32| loops.iter().find(|(i, _)| *i == id).map(|(_, d)| d.clone()).unwrap();
    let _agents: Vec<(Proc, String)> = HOSTS
        .iter()
        .enumerate()
        .map(|(n, host)| {
            let (first, second) = (2 * n as u32, 2 * n as u32 + 1);
            sandbox_agent(dir, &sb, host, &[dev(first), dev(second)], AGENT_TOKEN)
        })
        .collect();
    let mut a = serve(&sb, dir, "drain-a", &config, DRAIN_DB, &[]);
    leads(&a, Duration::from_secs(60), &[]);
    for (host, (_, addr)) in HOSTS.iter().zip(&_agents) {
        cli_ok(&a.url, None, &["host", "add", host, addr]);
    }
    wait_for("inventories of the three hosts", Duration::from_secs(120), || {
        let (_, out, _) = cli(&a.url, None, &["device", "ls", "--format", "json"]);
        let v: Value = serde_json::from_str(&out).ok()?;
        v.as_array()?.iter().all(|h| h["devices"].as_array().is_some_and(|d| d.len() == 2)).then_some(())
    });
    // The drain is held where it is (as in tests/sandbox_removal.rs) until
    // the standby leads: the balancer off, and no backfill or recovery.
    assert_eq!(sb.ceph(&["balancer", "off"]).0, 0);
    sb.wait_clean();
    for flag in ["norebalance", "nobackfill", "norecover"] {
        assert_eq!(sb.ceph(&["osd", "set", flag]).0, 0);
    }
    cli_ok(&a.url, None, &["osd", "rm", "4", "--zap"]);
    let before = wait_removal(&a, 4, "draining", Duration::from_secs(120));
    let b = serve(&sb, dir, "drain-b", &config, DRAIN_DB, &[]);
    stands_by_for_db(&b, &a, DRAIN_DB);
    a.proc.kill9();
    let took = leads(&b, lock.timeout + Duration::from_secs(10), &[&a]);
    eprintln!("kill -9 of the leader mid-drain: the standby led {:.1} s later", took.as_secs_f64());
    let going = removal(&b, 4).unwrap_or_else(|| panic!("the new leader knows the removal:\n{}", b.log()));
    // The same removal, its drain not started again: held at the drain or
    // at safe-to-destroy (PGs remapped off the OSD, none backfilled yet).
    assert!(["draining", "waiting-safe"].contains(&going["state"].as_str().unwrap()), "it carries on: {going}");
    assert_eq!(going["removal_id"], before["removal_id"], "{going}");
    assert_eq!(going["drain_started_at"], before["drain_started_at"], "the drain goes on, not again: {going}");
    for flag in ["norebalance", "nobackfill", "norecover"] {
        assert_eq!(sb.ceph(&["osd", "unset", flag]).0, 0);
    }
    let done = wait_removal(&b, 4, "done", Duration::from_secs(300));
    assert!(sb.osd(4).is_none(), "osd.4 is purged");
    assert_eq!(count_lines(&ceph_log, "osd purge 4"), 1, "purge issued exactly once");
    assert_eq!(blkid_type(&dev(4)), None, "its disk was wiped");
    let detail = Api::new(&b.url, None).removal(&done["removal_id"], "").body;
    let zaps =
        detail["actions"].as_array().unwrap().iter().filter(|a| a["effect"].as_str().unwrap().contains("zap")).count();
    assert_eq!(zaps, 1, "zapped exactly once: {detail}");
    let (_, events, _) = cli(&b.url, None, &["events", "--limit", "200"]);
    eprintln!("the event log after the failover mid-drain:\n{events}");
    assert!(
        events
            .lines()
            .any(|l| l.contains("as a standby; the leader before: ") && l.contains(&format!("pid {}", a.proc.pid()))),
        "the new leader says it took over, and from whom: {events}"
    );
    assert!(events.contains("Scheduled OSD(s) for removal: osd.4 (zap)"), "the old leader's events are kept: {events}");
    assert!(events.contains("Successfully purged osd.4 on f5-422-03"), "{events}");
}

fn removal(d: &Serving, osd: u32) -> Option<Value> {
    let out = cli_ok(&d.url, None, &["osd", "rm", "status", "--format", "json", "--history", "50"]);
    let all: Value = serde_json::from_str(&out).unwrap();
    all.as_array().unwrap().iter().rfind(|r| r["osd_id"] == osd).cloned()
}

fn wait_removal(d: &Serving, osd: u32, state: &str, timeout: Duration) -> Value {
    wait_for_or(
        &format!("osd.{osd} to reach {state}"),
        timeout,
        || removal(d, osd).filter(|r| r["state"] == state),
        || {
            let (_, events, _) = cli(&d.url, None, &["events", "--osd", &osd.to_string()]);
            format!("the removal: {:?}\nits events:\n{events}\n--- the daemon's log:\n{}", removal(d, osd), d.log())
        },
    )
}

/// The database the restore test backs up and restores.
const RESTORE_DB: &str = "ceph:osdkeeper/restore-test/osdkeeper.db";

/// `osdkeeper restore` with the daemons' config, bounded: a restore that
/// waits on a held lock must say so, not hang. (exit code, stdout, stderr).
fn restore(sb: &Sandbox, dir: &Path, config: &Path, file: &Path, db: &str) -> (i32, String, String) {
    restore_with(sb, dir, config, file, db, &[])
}

fn restore_with(
    sb: &Sandbox,
    dir: &Path,
    config: &Path,
    file: &Path,
    db: &str,
    env: &[(&str, &str)],
) -> (i32, String, String) {
    let (out, err) = (dir.join("restore.out"), dir.join("restore.err"));
    let mut child = sb
        .osdkeeper()
        .envs(env.iter().copied())
        .arg("restore")
        .arg(file)
        .args(["--db", db, "--config"])
        .arg(config)
        .env_remove("CEPH_ARGS")
        .env_remove("CEPH_CONF")
        .env_remove("OSDKEEPER_CONFIG")
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "`osdkeeper restore {} --db {db}` still ran after 90 s\n--- stdout:\n{}\n--- stderr:\n{}",
                file.display(),
                std::fs::read_to_string(&out).unwrap_or_default(),
                std::fs::read_to_string(&err).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    (status.code().unwrap_or(-1), read(&out), read(&err))
}

fn host_names(d: &Serving) -> Vec<String> {
    let out = cli_ok(&d.url, None, &["host", "ls", "--format", "json"]);
    let hosts: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    hosts.as_array().unwrap().iter().map(|h| h["name"].as_str().unwrap().to_string()).collect()
}

#[test]
fn a_backup_is_restored_into_a_database_in_rados_once_no_daemon_leads_and_the_replaced_one_is_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let sb = Sandbox::start(&dir.join("ceph"), &[]);
    daemons_user(&sb);
    let (ceph_bin, _) = ceph_wrapper(dir, &sb);
    let config = config(dir, &sb, &ceph_bin);
    let said = |what: &str, (code, out, err): &(i32, String, String)| {
        format!("{what}: exit {code}\n--- stdout:\n{out}\n--- stderr:\n{err}")
    };

    let mut a = serve(&sb, dir, "restore-a", &config, RESTORE_DB, &[]);
    leads(&a, Duration::from_secs(60), &[]);
    cli_ok(&a.url, None, &["host", "add", "f5-422-01", "127.0.0.1:9", "--no-check"]);
    let copy = dir.join("restore-backup.db");
    let out = cli_ok(&a.url, None, &["backup", copy.to_str().unwrap(), "--db", RESTORE_DB]);
    assert!(out.contains("1 hosts"), "{out}");
    // Stored after the backup: gone after the restore, kept in the copy aside.
    cli_ok(&a.url, None, &["host", "add", "f5-422-02", "127.0.0.1:9", "--no-check"]);

    // Refused while a daemon leads, at once, naming it; nothing changes.
    let started = Instant::now();
    let refused = restore(&sb, dir, &config, &copy, RESTORE_DB);
    let (code, _, err) = &refused;
    assert_eq!(*code, 1, "{}", said("a restore while a daemon leads", &refused));
    assert!(
        err.contains("in use") && err.contains(&a.url) && err.contains("stop every daemon"),
        "it names the leader and what to do: {}",
        said("restore", &refused)
    );
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(started.elapsed() < Duration::from_secs(30), "refused without waiting for the lock");
    assert_eq!(host_names(&a), ["f5-422-01", "f5-422-02"], "a refused restore changes nothing");

    // A file that is no good backup is refused, saying why.
    let garbage = dir.join("garbage.db");
    std::fs::write(&garbage, "not a database at all, but long enough to be read as one".repeat(100)).unwrap();
    let refused = restore(&sb, dir, &config, &garbage, RESTORE_DB);
    assert_eq!(refused.0, 1, "{}", said("a restore of garbage", &refused));
    assert!(refused.2.contains("garbage.db") && refused.2.contains("not a database"), "{}", said("restore", &refused));

    assert_eq!(a.proc.terminate(), Some(0), "a clean stop: {}", a.log());
    // A restore that dies before its commit leaves the old content: the
    // next opener, once the dead one's lock expired, rolls its journal back.
    let crashed =
        restore_with(&sb, dir, &config, &copy, RESTORE_DB, &[("OSDKEEPER_CRASH_AFTER", "restore-statements")]);
    assert!(crashed.2.contains("aborting before the restore's commit"), "{}", said("the crashed restore", &crashed));
    let mut after_crash = serve(&sb, dir, "restore-after-crash", &config, RESTORE_DB, &[]);
    leads(&after_crash, DEFAULT_LOCK_TIMEOUT + Duration::from_secs(30), &[]);
    assert_eq!(host_names(&after_crash), ["f5-422-01", "f5-422-02"], "the old content, whole:\n{}", after_crash.log());
    assert_eq!(after_crash.proc.terminate(), Some(0), "{}", after_crash.log());

    let done = restore(&sb, dir, &config, &copy, RESTORE_DB);
    assert_eq!(done.0, 0, "{}", said("the restore with no daemon", &done));
    assert!(
        done.1.contains(&format!("restored {RESTORE_DB}")) && done.1.contains("1 hosts"),
        "{}",
        said("restore", &done)
    );
    let aside = done
        .1
        .lines()
        .find_map(|l| l.strip_prefix("the database it replaced is kept as "))
        .unwrap_or_else(|| panic!("it names the replaced database: {}", said("restore", &done)))
        .to_string();
    assert!(aside.starts_with(&format!("{RESTORE_DB}.before-restore-")), "{aside}");

    // The next daemon leads on the backup's state, and the copy aside
    // holds what was replaced.
    let mut b = serve(&sb, dir, "restore-b", &config, RESTORE_DB, &[]);
    leads(&b, Duration::from_secs(60), &[]);
    assert_eq!(host_names(&b), ["f5-422-01"], "the daemon serves the backup:\n{}", b.log());
    cli_ok(&b.url, None, &["host", "add", "f5-422-03", "127.0.0.1:9", "--no-check"]);
    assert_eq!(b.proc.terminate(), Some(0), "{}", b.log());
    let mut c = serve(&sb, dir, "restore-aside", &config, &aside, &[]);
    leads(&c, Duration::from_secs(60), &[]);
    assert_eq!(host_names(&c), ["f5-422-01", "f5-422-02"], "the replaced database is kept whole:\n{}", c.log());
    assert_eq!(c.proc.terminate(), Some(0), "{}", c.log());
}
