//! `deploy/install.sh` into a staging root (`--root`; no user is made and
//! systemd is not called, so this stops at the process boundary of
//! `useradd` and `systemctl`): the files, their modes, the API token and
//! the agent key made once and kept, the local host's own agent token, the
//! config kept, a database backed up before an upgrade, and the installed
//! units accepted by `systemd-analyze verify`; then an install from before
//! per-host agent tokens moved to them: the shared token kept for the
//! daemon by a drop-in, each host given its own, the key never.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use common::*;

/// install.sh with these arguments into `root`: its exit status, stdout and stderr.
fn install_with(root: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new("sh")
        .arg(repo().join("deploy/install.sh"))
        .args(["--binary", bin(), "--root"])
        .arg(root)
        .args(args)
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

fn install_as(root: &Path, args: &[&str]) -> String {
    let (code, out, err) = install_with(root, args);
    assert_eq!(code, 0, "install.sh {args:?}: {out}{err}");
    out
}

fn install(root: &Path) -> String {
    install_as(root, &["--role", "both", "--host-name", "osd-host-1"])
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// `osdkeeper agent-token HOST` with the staged key.
fn token_of(etc: &Path, host: &str) -> String {
    let out =
        Command::new(bin()).args(["agent-token", host, "--key-file"]).arg(etc.join("agent-key")).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// `systemd-analyze verify` of a staged unit and its drop-ins, with the
/// staged binary in place of /usr/local/bin/osdkeeper (which systemd
/// checks exists).
fn verify(root: &Path, checked: &Path, unit: &str) {
    let units = root.join("etc/systemd/system");
    let staged = root.join("usr/local/bin/osdkeeper");
    let text = read(&units.join(unit));
    std::fs::write(checked.join(unit), text.replace("/usr/local/bin/osdkeeper", staged.to_str().unwrap())).unwrap();
    let drop_ins = units.join(format!("{unit}.d"));
    if drop_ins.is_dir() {
        let to = checked.join(format!("{unit}.d"));
        std::fs::create_dir_all(&to).unwrap();
        for f in std::fs::read_dir(&drop_ins).unwrap() {
            let f = f.unwrap();
            std::fs::copy(f.path(), to.join(f.file_name())).unwrap();
        }
    }
    // The directory first, so that its drop-ins are read too (a trailing
    // colon keeps systemd's own directories after it).
    let out = Command::new("systemd-analyze")
        .arg("verify")
        .arg(checked.join(unit))
        .env("SYSTEMD_UNIT_PATH", format!("{}:", checked.display()))
        .output()
        .expect("systemd-analyze (systemd is a test dependency)");
    let err = String::from_utf8_lossy(&out.stderr);
    let complaints: Vec<&str> = err.lines().filter(|l| l.contains(unit)).collect();
    assert!(out.status.success() && complaints.is_empty(), "{unit}: {err}");
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())).permissions().mode() & 0o777
}

#[test]
fn installs_then_upgrades_keeping_config_tokens_and_state() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let first = install(&root);
    let etc = root.join("etc/osdkeeper");
    assert_eq!(mode(&root.join("usr/local/bin/osdkeeper")), 0o755);
    assert_eq!(mode(&etc), 0o750);
    assert_eq!(mode(&etc.join("osdkeeper.yaml")), 0o640);
    for t in ["api-token", "agent-token"] {
        let token = read(&etc.join(t));
        let token = token.trim_end();
        assert_eq!(mode(&etc.join(t)), 0o600, "{t} is root's alone");
        assert!(token.len() == 64 && token.chars().all(|c| c.is_ascii_hexdigit()), "{t}: {token:?}");
    }
    assert!(first.contains("made") && first.contains("api-token"), "{first}");
    let api_token = read(&etc.join("api-token"));
    // The daemon's agent key, and this host's own token derived from it.
    let key = read(&etc.join("agent-key"));
    assert_eq!(mode(&etc.join("agent-key")), 0o600);
    assert!(key.starts_with("osdkeeper-agent-key-v1:") && key.len() == 23 + 64, "{key:?}");
    assert_eq!(read(&etc.join("agent-token")), token_of(&etc, "osd-host-1"), "osd-host-1's own token: {first}");
    assert_ne!(api_token.trim_end(), read(&etc.join("agent-token")).trim_end(), "two different tokens");
    assert!(!root.join("etc/systemd/system/osdkeeper.service.d").exists(), "no shared token on a new install");

    // The daemon started on the staged state directory, then stopped.
    let state = root.join("var/lib/osdkeeper");
    std::fs::create_dir_all(&state).unwrap();
    let mut daemon = start_daemon(&state, "poll:\n  interval_s: 60\nceph:\n  bin: /bin/false\n", &[]);
    daemon.proc.terminate();
    std::fs::write(etc.join("osdkeeper.yaml"), "listen: 127.0.0.1:9999\n").unwrap();

    let again = install(&root);
    assert_eq!(read(&etc.join("api-token")), api_token, "tokens are kept: {again}");
    assert_eq!(read(&etc.join("agent-key")), key, "the key is kept: {again}");
    assert_eq!(std::fs::read_to_string(etc.join("osdkeeper.yaml")).unwrap(), "listen: 127.0.0.1:9999\n");
    let backups: Vec<String> = std::fs::read_dir(&state)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("osdkeeper.db.before-upgrade-"))
        .collect();
    assert_eq!(backups.len(), 1, "the database is copied before the binary changes: {again}");

    // The units as installed: systemd knows every key and value in them.
    // Checked against this machine's systemd.
    let units = root.join("etc/systemd/system");
    let checked = dir.path().join("units");
    std::fs::create_dir(&checked).unwrap();
    for unit in ["osdkeeper.service", "osdkeeper-agent.service"] {
        let text = read(&units.join(unit));
        assert!(text.contains("ExecStart=/usr/local/bin/osdkeeper "), "{unit}");
        if unit == "osdkeeper-agent.service" {
            // A mount namespace of the agent's own would keep the OSDs' data
            // directories that ceph-volume mounts from the OSDs systemd starts.
            let own_namespace = [
                "PrivateTmp",
                "ProtectHome",
                "ProtectControlGroups",
                "ProtectKernelLogs",
                "ProtectSystem",
                "ReadOnlyPaths",
                "InaccessiblePaths",
                "TemporaryFileSystem",
                "PrivateMounts",
                "MountFlags",
                "BindPaths",
            ];
            let set: Vec<&str> = text
                .lines()
                .filter(|l| own_namespace.iter().any(|o| l.trim_start().starts_with(&format!("{o}="))))
                .collect();
            assert!(set.is_empty(), "the agent's unit must not give it a mount namespace of its own: {set:?}");
        }
        verify(&root, &checked, unit);
    }
}

#[test]
fn moves_an_install_with_one_shared_token_to_each_hosts_own() {
    let dir = tempfile::tempdir().unwrap();
    // The daemon's host and a storage host as an install before per-host
    // tokens left them: the same agent-token on both, no key.
    let (daemon_root, host_root) = (dir.path().join("daemon"), dir.path().join("host"));
    let shared = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    for root in [&daemon_root, &host_root] {
        let etc = root.join("etc/osdkeeper");
        std::fs::create_dir_all(&etc).unwrap();
        std::fs::write(etc.join("agent-token"), shared).unwrap();
    }
    let etc = daemon_root.join("etc/osdkeeper");

    // The daemon's host: the key made, the shared token kept for the daemon
    // through a drop-in that systemd takes.
    let out = install_as(&daemon_root, &["--role", "daemon"]);
    assert!(read(&etc.join("agent-key")).starts_with("osdkeeper-agent-key-v1:"), "{out}");
    assert_eq!(read(&etc.join("agent-token.shared")), shared);
    assert_eq!(mode(&etc.join("agent-token.shared")), 0o600);
    let drop_in = daemon_root.join("etc/systemd/system/osdkeeper.service.d/shared-agent-token.conf");
    let conf = read(&drop_in);
    assert!(
        conf.contains("LoadCredential=agent-token-shared:/etc/osdkeeper/agent-token.shared")
            && conf.contains("Environment=OSDKEEPER_AGENT_TOKEN_FILE=%d/agent-token-shared"),
        "{conf}"
    );
    let checked = dir.path().join("units");
    std::fs::create_dir(&checked).unwrap();
    verify(&daemon_root, &checked, "osdkeeper.service");
    let unit = read(&daemon_root.join("etc/systemd/system/osdkeeper.service"));
    assert!(unit.contains("--agent-key-file %d/agent-key") && !unit.contains("agent-token"), "{unit}");
    // Run again (an upgrade): nothing of it changes, the drop-in is not made twice.
    let key = read(&etc.join("agent-key"));
    std::fs::write(&drop_in, "# the operator's edit\n").unwrap();
    install_as(&daemon_root, &["--role", "daemon"]);
    assert_eq!(read(&etc.join("agent-key")), key);
    assert_eq!(read(&drop_in), "# the operator's edit\n");

    // The storage host: kept on the shared token until given its own.
    let host_etc = host_root.join("etc/osdkeeper");
    let out = install_as(&host_root, &["--role", "agent"]);
    assert!(out.contains("kept") && read(&host_etc.join("agent-token")) == shared, "{out}");
    // The daemon's key is refused as a host's token, and nothing changes.
    let (code, _, err) =
        install_with(&host_root, &["--role", "agent", "--agent-token", etc.join("agent-key").to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("is the daemon's agent key"), "{err}");
    assert_eq!(read(&host_etc.join("agent-token")), shared);
    // Its own token, as the daemon's host prints it.
    let own = dir.path().join("osd-host-2.agent-token");
    std::fs::write(&own, token_of(&etc, "osd-host-2")).unwrap();
    let out = install_as(&host_root, &["--role", "agent", "--agent-token", own.to_str().unwrap()]);
    assert!(out.contains("this host's own agent token"), "{out}");
    assert_eq!(read(&host_etc.join("agent-token")), token_of(&etc, "osd-host-2"));
    assert_eq!(mode(&host_etc.join("agent-token")), 0o600);
    assert!(!host_etc.join("agent-key").exists(), "the key stays on the daemon's host");
}
