//! `deploy/install.sh` into a staging root (`--root`; no user is made and
//! systemd is not called, so this stops at the process boundary of
//! `useradd` and `systemctl`): the files, their modes, tokens made once and
//! kept, the config kept, a database backed up before an upgrade, and the
//! installed units accepted by `systemd-analyze verify`.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use common::*;

fn install(root: &Path) -> String {
    let out = Command::new("sh")
        .arg(repo().join("deploy/install.sh"))
        .args(["--role", "both", "--binary", bin(), "--root"])
        .arg(root)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "install.sh: {text}{}", String::from_utf8_lossy(&out.stderr));
    text
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
        let token = std::fs::read_to_string(etc.join(t)).unwrap();
        assert_eq!(mode(&etc.join(t)), 0o600, "{t} is root's alone");
        assert!(token.len() == 64 && token.chars().all(|c| c.is_ascii_hexdigit()), "{t}: {token:?}");
    }
    assert!(first.contains("made") && first.contains("api-token"), "{first}");
    let api_token = std::fs::read_to_string(etc.join("api-token")).unwrap();
    assert_ne!(api_token, std::fs::read_to_string(etc.join("agent-token")).unwrap(), "two different tokens");

    // The daemon started on the staged state directory, then stopped.
    let state = root.join("var/lib/osdkeeper");
    std::fs::create_dir_all(&state).unwrap();
    let mut daemon = start_daemon(&state, "poll:\n  interval_s: 60\nceph:\n  bin: /bin/false\n", &[]);
    daemon.proc.terminate();
    std::fs::write(etc.join("osdkeeper.yaml"), "listen: 127.0.0.1:9999\n").unwrap();

    let again = install(&root);
    assert_eq!(std::fs::read_to_string(etc.join("api-token")).unwrap(), api_token, "tokens are kept: {again}");
    assert_eq!(std::fs::read_to_string(etc.join("osdkeeper.yaml")).unwrap(), "listen: 127.0.0.1:9999\n");
    let backups: Vec<String> = std::fs::read_dir(&state)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("osdkeeper.db.before-upgrade-"))
        .collect();
    assert_eq!(backups.len(), 1, "the database is copied before the binary changes: {again}");

    // The units as installed: systemd knows every key and value in them.
    // Checked against this machine's systemd, with the staged binary in
    // place of /usr/local/bin/osdkeeper (which systemd checks exists).
    let units = root.join("etc/systemd/system");
    let checked = dir.path().join("units");
    std::fs::create_dir(&checked).unwrap();
    let staged = root.join("usr/local/bin/osdkeeper");
    for unit in ["osdkeeper.service", "osdkeeper-agent.service"] {
        let text = std::fs::read_to_string(units.join(unit)).unwrap();
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
        std::fs::write(checked.join(unit), text.replace("/usr/local/bin/osdkeeper", staged.to_str().unwrap())).unwrap();
        let out = Command::new("systemd-analyze")
            .arg("verify")
            .arg(checked.join(unit))
            .output()
            .expect("systemd-analyze (systemd is a test dependency)");
        let err = String::from_utf8_lossy(&out.stderr);
        let complaints: Vec<&str> = err.lines().filter(|l| l.contains(unit)).collect();
        assert!(out.status.success() && complaints.is_empty(), "{unit}: {err}");
    }
}
