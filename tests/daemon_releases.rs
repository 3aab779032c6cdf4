//! The release of a host's ceph-volume through the real processes: an
//! agent whose ceph-volume has a `ceph` beside it that says 18.2.7 (as
//! `tests/agent_common` fakes them), and a daemon whose `ceph` answers with
//! the sandbox's recorded JSON of a 16.2.15 cluster. The host is listed
//! with its release and flagged, and `/healthz` warns about it.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::*;
use serde_json::Value;

const TOKEN: &str = "api-secret-for-tests";
const AGENT_TOKEN: &str = "agent-secret-for-tests";

fn script(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `ceph` for the daemon: the cluster's reads answered from the sandbox's
/// recorded output (Ceph 16.2.15), anything else refused.
fn fake_cluster(dir: &Path) -> std::path::PathBuf {
    let examples = repo().join("testbed/ceph-sandbox/examples");
    let answer = |file: &str| format!("cat '{}'", examples.join(file).display());
    let path = dir.join("ceph");
    script(
        &path,
        &format!(
            "#!/bin/sh\ncase \"$*\" in\n\
             *'osd dump'*) {} ;;\n*'osd df'*) {} ;;\n*'osd tree'*) {} ;;\n*'pg stat'*) {} ;;\n*versions*) {} ;;\n\
             *) echo \"not faked: $*\" >&2; exit 22 ;;\nesac\n",
            answer("osd_dump.json"),
            answer("osd_df.json"),
            answer("osd_tree.json"),
            answer("pg_stat.json"),
            answer("versions.json"),
        ),
    );
    path
}

/// A ceph-volume that prints a device list, and the `ceph` beside it,
/// whose version line is the release the agent reports.
fn fake_ceph_volume(dir: &Path, devices: &Value) -> std::path::PathBuf {
    let list = dir.join("inventory.json");
    std::fs::write(&list, devices.to_string()).unwrap();
    let path = dir.join("ceph-volume");
    script(&path, &format!("#!/bin/sh\n[ \"$1\" = inventory ] && exec cat '{}'\nexit 1\n", list.display()));
    script(
        &dir.join("ceph"),
        "#!/bin/sh\necho 'ceph version 18.2.7 (6b0e988052ec84cf2d4a54ff9bbbc5e720b621ad) reef (stable)'\n",
    );
    path
}

#[test]
fn an_agent_of_another_major_than_the_cluster_is_flagged_in_host_ls_and_healthz() {
    let dir = tempfile::tempdir().unwrap();
    let (agent_dir, cluster_dir) = (dir.path().join("agent"), dir.path().join("cluster"));
    std::fs::create_dir_all(&agent_dir).unwrap();
    std::fs::create_dir_all(&cluster_dir).unwrap();
    let inv: Value =
        serde_json::from_str(&std::fs::read_to_string(repo().join("specs/f5-422-inventory.json")).unwrap()).unwrap();
    let ceph_volume = fake_ceph_volume(&agent_dir, &inv["hosts"]["f5-422-01"]);
    let mut cmd = Command::new(bin());
    cmd.args(["agent", "--listen", "127.0.0.1:0", "--host-name", "f5-422-01", "--ceph-volume"]).arg(&ceph_volume);
    cmd.env("OSDKEEPER_AGENT_TOKEN", AGENT_TOKEN).env_remove("OSDKEEPER_CEPH_VOLUME");
    let (_agent, addr) = spawn_listening(cmd, "agent f5-422-01", &dir.path().join("agent.log"));

    let config =
        format!("poll:\n  interval_s: 1\n  timeout_s: 5\nceph:\n  bin: {}\n", fake_cluster(&cluster_dir).display());
    let daemon =
        start_daemon(dir.path(), &config, &[("OSDKEEPER_TOKEN", TOKEN), ("OSDKEEPER_AGENT_TOKEN", AGENT_TOKEN)]);
    let url = daemon.url.clone();
    cli_ok(&url, Some(TOKEN), &["host", "add", "f5-422-01", &addr]);
    let explain = || {
        let log = std::fs::read_to_string(&daemon.log).unwrap_or_default();
        format!("the daemon's log:\n{log}\nhost ls:\n{}", cli(&url, Some(TOKEN), &["host", "ls"]).1)
    };
    let listed = wait_for_or(
        "the host listed with its release, flagged",
        Duration::from_secs(30),
        || {
            let out = cli_ok(&url, Some(TOKEN), &["host", "ls", "--format", "json"]);
            let hosts: Value = serde_json::from_str(&out).unwrap();
            (!hosts[0]["release_mismatch"].is_null()).then_some(hosts[0].clone())
        },
        explain,
    );
    assert_eq!(listed["ceph_release"], "18.2.7 (reef)");
    assert_eq!(listed["release_mismatch"], "ceph-volume is Ceph 18.2.7 (reef), the cluster runs 16 pacific");
    let table = cli_ok(&url, Some(TOKEN), &["host", "ls"]);
    let row = table.lines().find(|l| l.starts_with("f5-422-01")).unwrap();
    assert!(row.ends_with("18.2.7 (reef) *"), "{table}");
    assert!(table.contains("  f5-422-01: ceph-volume is Ceph 18.2.7 (reef), the cluster runs 16 pacific\n"), "{table}");

    // `/healthz` lists the flags of the last poll round's end, which may come just after the row's.
    let health = wait_for("the flag in /healthz", Duration::from_secs(30), || {
        let health: Value = reqwest::blocking::get(format!("{url}/healthz")).unwrap().json().unwrap();
        health["warnings"].as_array().is_some_and(|w| !w.is_empty()).then_some(health)
    });
    assert_eq!(health["ceph"]["releases"][0]["version"], "16.2.15", "{health}");
    let warning = &health["warnings"][0];
    assert_eq!(warning["code"], "OSDKEEPER_CEPH_VOLUME_RELEASE", "{health}");
    assert_eq!(warning["detail"][0], "host f5-422-01: ceph-volume is Ceph 18.2.7 (reef), the cluster runs 16 pacific");

    // `osdkeeper status` says the same, without a token.
    let status = cli_ok(&url, None, &["status"]);
    assert!(status.starts_with("osdkeeper: ok (HEALTH_WARN)\nceph: answers, asked "), "{status}");
    assert!(status.contains("\nreleases: 16.2.15 pacific ("), "{status}");
    assert!(
        status.contains(
            "[WARN] OSDKEEPER_CEPH_VOLUME_RELEASE: 1 host with ceph-volume of a major release the cluster does \
             not run\n    host f5-422-01: ceph-volume is Ceph 18.2.7 (reef), the cluster runs 16 pacific"
        ),
        "{status}"
    );

    // The dashboard's health strip has both, although this `ceph` cannot say `ceph status`.
    let strip: Value = reqwest::blocking::Client::new()
        .get(format!("{url}/api/v1/cluster/status"))
        .bearer_auth(TOKEN)
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert!(strip["error"].is_string(), "{strip}");
    assert_eq!(strip["releases"][0]["release"], "pacific", "{strip}");
    assert_eq!(strip["warnings"][0], *warning, "{strip}");
}
