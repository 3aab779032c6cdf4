//! `osdkeeper backup` beside a running daemon and `osdkeeper restore` with
//! it stopped: the copy holds what the daemon had stored, a restore is
//! refused while the daemon runs or for a file that is no good backup, the
//! database it replaces is kept, and the daemon starts on the restored one.

mod common;

use std::path::Path;

use common::client::Api;
use common::*;
use serde_json::Value;

const CONFIG: &str = "poll:\n  interval_s: 60\nceph:\n  bin: /bin/false\n  timeout_s: 5\n";

fn add_host(api: &Api, name: &str) {
    let a = api.add_host(&format!(r#"{{"name": "{name}", "addr": "127.0.0.1:9", "no_check": true}}"#));
    assert_eq!(a.status, 201, "{}", a.body);
}

fn host_names(api: &Api) -> Vec<String> {
    let a = api.hosts("");
    a.list().iter().map(|h| h["name"].as_str().unwrap().to_string()).collect()
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(bin()).args(args).env_remove("OSDKEEPER_CONFIG").output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

fn db_args<'a>(file: &'a Path, db: &'a Path) -> [&'a str; 3] {
    [file.to_str().unwrap(), "--db", db.to_str().unwrap()]
}

#[test]
fn backup_while_serving_and_restore_while_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let mut daemon = start_daemon(dir.path(), CONFIG, &[]);
    let api = Api::new(&daemon.url, None);
    add_host(&api, "f5-422-01");
    add_host(&api, "f5-422-02");
    let backup = dir.path().join("backup.db");

    let (code, out, err) = run(&[&["backup"][..], &db_args(&backup, &daemon.db)].concat());
    assert_eq!(code, 0, "a backup beside the running daemon: {err}");
    assert!(out.contains("2 hosts"), "it says what the copy holds: {out}");
    let (code, _, err) = run(&[&["backup"][..], &db_args(&backup, &daemon.db)].concat());
    assert_eq!(code, 1, "never over an existing file");
    assert!(err.contains("exists already"), "{err}");

    // Stored after the backup: gone after the restore, kept in the old file.
    add_host(&api, "f5-422-03");
    let (code, _, err) = run(&[&["restore"][..], &db_args(&backup, &daemon.db)].concat());
    assert_eq!(code, 1, "the daemon holds the database");
    assert!(err.contains("in use") && err.contains("stop it first"), "{err}");
    assert_eq!(host_names(&api), ["f5-422-01", "f5-422-02", "f5-422-03"], "a refused restore changes nothing");

    daemon.proc.terminate();
    let (code, out, err) = run(&[&["restore"][..], &db_args(&backup, &daemon.db)].concat());
    assert_eq!(code, 0, "{err}");
    let aside = out
        .lines()
        .find_map(|l| l.strip_prefix("the database it replaced is kept as "))
        .unwrap_or_else(|| panic!("names the old database: {out}"))
        .to_string();
    assert!(out.contains("restored") && out.contains("2 hosts"), "{out}");

    let daemon = start_daemon(dir.path(), CONFIG, &[]);
    let api = Api::new(&daemon.url, None);
    assert_eq!(host_names(&api), ["f5-422-01", "f5-422-02"], "the daemon serves the backup");
    let (code, out, err) = run(&["backup", &format!("{aside}.copy"), "--db", &aside]);
    assert_eq!(code, 0, "the replaced database is whole: {err}");
    assert!(out.contains("3 hosts"), "it still holds the host added after the backup: {out}");
}

#[test]
fn a_file_that_is_no_good_backup_is_refused_and_nothing_moves() {
    let dir = tempfile::tempdir().unwrap();
    let mut daemon = start_daemon(dir.path(), CONFIG, &[]);
    add_host(&Api::new(&daemon.url, None), "f5-422-01");
    let good = dir.path().join("good.db");
    assert_eq!(run(&[&["backup"][..], &db_args(&good, &daemon.db)].concat()).0, 0);
    daemon.proc.terminate();
    let listing = |d: &Path| {
        let mut names: Vec<String> =
            std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    };

    let garbage = dir.path().join("garbage.db");
    std::fs::write(&garbage, "not a database at all, but long enough to be read as one".repeat(100)).unwrap();
    let other = dir.path().join("other.db");
    let conn = std::process::Command::new("python3")
        .args(["-c", "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('create table t(x)'); c.commit()"])
        .arg(&other)
        .status()
        .unwrap();
    assert!(conn.success());
    // A backup from a later osdkeeper: a migration this build does not know.
    let newer = dir.path().join("newer.db");
    std::fs::copy(&good, &newer).unwrap();
    let bumped = std::process::Command::new("python3")
        .args([
            "-c",
            "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); \
             c.execute(\"insert into _sqlx_migrations select 99999, 'from the future', installed_on, 1, checksum, 0 \
             from _sqlx_migrations limit 1\"); c.commit()",
        ])
        .arg(&newer)
        .status()
        .unwrap();
    assert!(bumped.success());

    let before = listing(dir.path());
    for (file, why) in
        [(&garbage, "not a database"), (&other, "no osdkeeper database"), (&newer, "written by a newer osdkeeper")]
    {
        let (code, _, err) = run(&[&["restore"][..], &db_args(file, &daemon.db)].concat());
        assert_eq!(code, 1, "{} is refused", file.display());
        assert!(err.contains(why), "{why}: {err}");
        assert_eq!(listing(dir.path()), before, "nothing moved for {}", file.display());
    }
    let daemon = start_daemon(dir.path(), CONFIG, &[]);
    let hosts = Api::new(&daemon.url, None).hosts("");
    assert_eq!(hosts.list().iter().map(|h| h["name"].clone()).collect::<Vec<Value>>(), ["f5-422-01"]);
}

/// Runs SQL on a stopped daemon's database, as the daemon would have
/// written it: holds and a recovery boost that need a real cluster and
/// disks to come about.
fn sql(db: &Path, statements: &str) {
    let done = std::process::Command::new("python3")
        .args(["-c", "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.executescript(sys.argv[2]); c.commit()"])
        .arg(db)
        .arg(statements)
        .status()
        .unwrap();
    assert!(done.success(), "{statements}");
}

/// A `ceph` that logs its arguments and answers `config dump` with the
/// boosted osd_max_backfills (what a fast drain left on the cluster).
fn boosted_ceph(dir: &Path) -> (String, std::path::PathBuf) {
    let log = dir.join("ceph-calls.log");
    let script = dir.join("ceph");
    let dump = r#"[{"section":"osd","mask":"","name":"osd_max_backfills","value":"8"}]"#;
    let body = format!(
        "#!/bin/sh\necho \"$*\" >> {log}\ncase \"$*\" in *\"config dump\"*) echo '{dump}' ;; *) echo '{{}}' ;; esac\n",
        log = log.display()
    );
    std::fs::write(&script, body).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (script.display().to_string(), log)
}

fn held(api: &Api) -> Vec<String> {
    let a = api.held();
    assert_eq!(a.status, 200, "{}", a.body);
    a.list().iter().map(|h| format!("{} {}", h["host"].as_str().unwrap(), h["path"].as_str().unwrap())).collect()
}

// A restore puts the backup's state back, but keeps what the database it
// replaces knows of now: who may no longer act, which disks are held, and
// a recovery boost the cluster still holds.
#[test]
fn a_restore_keeps_revocations_holds_and_the_boost_made_after_the_backup() {
    let dir = tempfile::tempdir().unwrap();
    let (ceph, calls) = boosted_ceph(dir.path());
    let config = format!("poll:\n  interval_s: 60\nremoval:\n  interval_s: 1\nceph:\n  bin: {ceph}\n  timeout_s: 5\n");
    let env = [("OSDKEEPER_TOKEN", "bootstrap-secret")];
    let mut daemon = start_daemon(dir.path(), &config, &env);
    let root = Api::new(&daemon.url, Some("bootstrap-secret"));
    let secret = |name: &str, role: &str| {
        let a = root.create_token(name, role);
        assert_eq!(a.status, 201, "{}", a.body);
        a.body["secret"].as_str().unwrap().to_string()
    };
    let (alice, bob) = (secret("alice", "operate"), secret("bob", "read"));
    add_host(&root, "f5-422-01");
    add_host(&root, "f5-422-02");
    daemon.proc.terminate();
    sql(
        &daemon.db,
        "INSERT INTO held_devices (host, path, reason, since) VALUES \
         ('f5-422-01', '/dev/sdb', 'zapped by an operator', 1), ('f5-422-01', '/dev/sdc', 'zapped by an operator', 1);",
    );
    let backup = dir.path().join("backup.db");
    assert_eq!(run(&[&["backup"][..], &db_args(&backup, &daemon.db)].concat()).0, 0);

    // After the backup: alice revoked, carol made, a hold released, two
    // made (one on a host added since), a fast drain's boost set.
    let mut daemon = start_daemon(dir.path(), &config, &env);
    let root = Api::new(&daemon.url, Some("bootstrap-secret"));
    assert_eq!(root.revoke_token("alice").status, 204);
    let carol = {
        let a = root.create_token("carol", "read");
        a.body["secret"].as_str().unwrap().to_string()
    };
    add_host(&root, "f5-422-03");
    let released = root.request(
        "POST",
        "/api/v1/devices/release",
        Some(("application/json", r#"{"host": "f5-422-01", "path": "/dev/sdb"}"#)),
    );
    assert_eq!(released.status, 200, "{}", released.body);
    daemon.proc.terminate();
    let boost = r#"{"v":1,"scheduler":"wpq","saved":[{"name":"osd_max_backfills","value":null}],"set":[["osd_max_backfills","8"]],"applied":true}"#;
    sql(
        &daemon.db,
        &format!(
            "INSERT INTO held_devices (host, path, reason, since) VALUES \
             ('f5-422-01', '/dev/sdd', 'zapped by an operator', 2), ('f5-422-03', '/dev/sdb', 'zapped by an operator', 2); \
             INSERT INTO recovery_boost (id, state, started_at, updated_at) VALUES (1, '{boost}', 2, 2);"
        ),
    );
    std::fs::write(&calls, "").unwrap();

    let (code, out, err) = run(&[&["restore"][..], &db_args(&backup, &daemon.db)].concat());
    assert_eq!(code, 0, "{out}{err}");
    for said in [
        "tokens revoked after the backup, revoked again: alice",
        "tokens made after the backup, kept: carol",
        "holds made after the backup, kept: f5-422-01 /dev/sdd, f5-422-03 /dev/sdb",
        "holds released after the backup, held again (`device release` them again): f5-422-01 /dev/sdb",
        "hosts added after the backup that hold disks, kept: f5-422-03",
        "the recovery boost set on the cluster is kept",
    ] {
        assert!(out.contains(said), "{said:?} in:\n{out}");
    }

    let daemon = start_daemon(dir.path(), &config, &env);
    let as_token = |secret: &str| Api::new(&daemon.url, Some(secret)).whoami().status;
    assert_eq!(as_token(&alice), 401, "a token revoked after the backup stays revoked");
    assert_eq!((as_token(&bob), as_token(&carol)), (200, 200), "the others still work");
    let root = Api::new(&daemon.url, Some("bootstrap-secret"));
    assert_eq!(host_names(&root), ["f5-422-01", "f5-422-02", "f5-422-03"]);
    assert_eq!(held(&root), ["f5-422-01 /dev/sdb", "f5-422-01 /dev/sdc", "f5-422-01 /dev/sdd", "f5-422-03 /dev/sdb"]);
    // The boost the backup never knew is put back, as after any crash.
    wait_for_or(
        "the boost put back",
        std::time::Duration::from_secs(30),
        || {
            std::fs::read_to_string(&calls)
                .unwrap_or_default()
                .contains("config rm osd osd_max_backfills")
                .then_some(())
        },
        || std::fs::read_to_string(&daemon.log).unwrap_or_default(),
    );
}
