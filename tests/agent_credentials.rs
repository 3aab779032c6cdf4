//! Each host's agent takes its own token only, with real processes over
//! HTTPS: `osdkeeper certs` makes the CA, the certificates, the daemon's
//! agent key and each host's token; two agents serve with their own; one
//! host's token is refused by the other host's agent, for reading and for
//! a command alike, while the daemon, which holds the key, reaches both.
//! Then the move from one shared token: a daemon with the key and the old
//! shared token reaches an agent that still takes the shared token, and
//! names that host in a warning; without the shared token it no longer
//! reaches it, and says which token the agent wants.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::*;
use serde_json::Value;

const CONFIG: &str = "poll:\n  interval_s: 1\n  timeout_s: 5\nreconcile:\n  enabled: false\n";

fn certs(pki: &Path) {
    let out = Command::new(bin())
        .args(["certs", "--out"])
        .arg(pki)
        .args(["--daemon", "127.0.0.1", "--host", "osd-host-1,127.0.0.1", "--host", "osd-host-2,127.0.0.1"])
        .output()
        .unwrap();
    assert!(out.status.success(), "certs: {}", String::from_utf8_lossy(&out.stderr));
}

/// An HTTPS agent for `host` with the token in `token_file`.
fn agent(dir: &Path, pki: &Path, host: &str, token_file: &Path) -> (Proc, String) {
    let mut cmd = Command::new(bin());
    cmd.args(["agent", "--listen", "127.0.0.1:0", "--host-name", host, "--inventory-file"])
        .arg(repo().join("tests/fixtures/agent/inventory_file.json"))
        .arg("--token-file")
        .arg(token_file)
        .arg("--tls-cert")
        .arg(pki.join(format!("{host}.pem")))
        .arg("--tls-key")
        .arg(pki.join(format!("{host}-key.pem")))
        .env_remove("OSDKEEPER_AGENT_TOKEN");
    let (proc, addr) = spawn_listening(cmd, host, &dir.join(format!("{host}.log")));
    (proc, format!("https://{addr}"))
}

/// A daemon on loopback whose agents are checked against the CA, with the
/// given `agents:` keys and environment.
fn daemon(dir: &Path, pki: &Path, agents: &str, env: &[(&str, &str)]) -> TestDaemon {
    let config = format!("{CONFIG}agents:\n  ca: {}\n{agents}", pki.join("ca.pem").display());
    start_daemon(dir, &config, env)
}

fn https(pki: &Path) -> reqwest::blocking::Client {
    let pem = std::fs::read(pki.join("ca.pem")).unwrap();
    let mut b = reqwest::blocking::Client::builder().tls_built_in_root_certs(false).timeout(Duration::from_secs(30));
    for c in reqwest::Certificate::from_pem_bundle(&pem).unwrap() {
        b = b.add_root_certificate(c);
    }
    b.build().unwrap()
}

fn token(pki: &Path, host: &str) -> String {
    std::fs::read_to_string(pki.join(format!("{host}.agent-token"))).unwrap().trim().to_string()
}

/// The devices the daemon holds per host, once every host has some.
fn devices_of_every_host(daemon: &TestDaemon, hosts: usize) -> Vec<(String, usize)> {
    wait_for_or(
        "every host's devices",
        Duration::from_secs(30),
        || {
            let (code, out, _) = cli(&daemon.url, None, &["device", "ls", "--format", "json"]);
            let v: Value = serde_json::from_str(&out).ok()?;
            let per_host: Vec<(String, usize)> = v
                .as_array()?
                .iter()
                .map(|h| (h["name"].as_str().unwrap_or("").to_string(), h["devices"].as_array().map_or(0, Vec::len)))
                .collect();
            (code == 0 && per_host.len() == hosts && per_host.iter().all(|(_, n)| *n > 0)).then_some(per_host)
        },
        || std::fs::read_to_string(&daemon.log).unwrap_or_default(),
    )
}

fn host_error(daemon: &TestDaemon, host: &str) -> Option<String> {
    let (_, out, _) = cli(&daemon.url, None, &["host", "ls", "--format", "json"]);
    let v: Value = serde_json::from_str(&out).ok()?;
    let h = v.as_array()?.iter().find(|h| h["name"] == host)?;
    h["last_error"].as_str().map(str::to_string)
}

#[test]
fn one_hosts_token_is_refused_by_another_hosts_agent_and_the_daemon_reaches_each_with_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let pki = dir.path().join("pki");
    certs(&pki);
    let (t1, t2) = (token(&pki, "osd-host-1"), token(&pki, "osd-host-2"));
    assert_ne!(t1, t2, "each host its own token");
    let (_a1, url1) = agent(dir.path(), &pki, "osd-host-1", &pki.join("osd-host-1.agent-token"));
    let (_a2, url2) = agent(dir.path(), &pki, "osd-host-2", &pki.join("osd-host-2.agent-token"));

    // Root on osd-host-1 holds t1: osd-host-2's agent refuses it, to read
    // and to act (the zap is refused before anything is looked at).
    let client = https(&pki);
    let identity = |url: &str, token: &str| client.get(format!("{url}/v1/identity")).bearer_auth(token).send().unwrap();
    let refused = identity(&url2, &t1);
    assert_eq!(refused.status(), 401);
    let said: Value = refused.json().unwrap();
    assert!(said["error"].as_str().unwrap().contains("only the token of host osd-host-2"), "{said}");
    let zap = client
        .post(format!("{url2}/v1/zap-osd"))
        .bearer_auth(&t1)
        .json(&serde_json::json!({"osd_id": 9401, "osd_fsid": "9e1f0000-0000-4000-8000-000000009401", "force": true}))
        .send()
        .unwrap();
    assert_eq!(zap.status(), 401);
    let stop = client.post(format!("{url2}/v1/osd/9401/stop")).bearer_auth(&t1).json(&serde_json::json!({}));
    assert_eq!(stop.send().unwrap().status(), 401);
    assert_eq!(identity(&url1, &t2).status(), 401, "and the other way round");
    assert_eq!(identity(&url1, &t1).status(), 200);
    assert_eq!(identity(&url2, &t2).status(), 200);

    // `agent-token` on the daemon's machine prints what certs wrote.
    let printed = Command::new(bin())
        .args(["agent-token", "osd-host-2", "--key-file"])
        .arg(pki.join("agent-key"))
        .output()
        .unwrap();
    assert!(printed.status.success(), "{}", String::from_utf8_lossy(&printed.stderr));
    assert_eq!(String::from_utf8_lossy(&printed.stdout).trim(), t2);

    // The daemon holds the key: it derives each host's token and reaches both.
    let key = format!("  key_file: {}\n", pki.join("agent-key").display());
    let daemon = daemon(dir.path(), &pki, &key, &[]);
    for (host, url) in [("osd-host-1", &url1), ("osd-host-2", &url2)] {
        let (code, out, err) = cli(&daemon.url, None, &["host", "add", host, url]);
        assert_eq!(code, 0, "host add {host} (its agent asked with its own token): {out}{err}");
    }
    let per_host = devices_of_every_host(&daemon, 2);
    assert_eq!(per_host.len(), 2, "{per_host:?}");
    // A host known under another name gets that name's token, which its agent refuses.
    let (code, _, err) = cli(&daemon.url, None, &["host", "add", "osd-host-3", &url1]);
    assert_ne!(code, 0);
    assert!(err.contains("401") && err.contains("only the token of host osd-host-1"), "{err}");
}

#[test]
fn a_daemon_moving_from_the_shared_token_reaches_agents_not_moved_yet_and_names_them() {
    let dir = tempfile::tempdir().unwrap();
    let pki = dir.path().join("pki");
    certs(&pki);
    let shared: PathBuf = dir.path().join("agent-token.shared");
    std::fs::write(&shared, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n").unwrap();
    // osd-host-1 still takes the shared token; osd-host-2 has its own.
    let (_a1, url1) = agent(dir.path(), &pki, "osd-host-1", &shared);
    let (_a2, url2) = agent(dir.path(), &pki, "osd-host-2", &pki.join("osd-host-2.agent-token"));
    let key = format!("  key_file: {}\n", pki.join("agent-key").display());

    // As the drop-in deploy/install.sh writes for an install that had the shared token.
    let shared_env = shared.to_str().unwrap();
    let mut moving = daemon(dir.path(), &pki, &key, &[("OSDKEEPER_AGENT_TOKEN_FILE", shared_env)]);
    for (host, url) in [("osd-host-1", &url1), ("osd-host-2", &url2)] {
        let (code, out, err) = cli(&moving.url, None, &["host", "add", host, url]);
        assert_eq!(code, 0, "host add {host}: {out}{err}");
    }
    devices_of_every_host(&moving, 2);
    let log = std::fs::read_to_string(&moving.log).unwrap();
    let named = |host: &str| log.lines().any(|l| l.contains(&format!("the agent of {host} refused its own token")));
    assert!(named("osd-host-1"), "the host still on the shared token is named:\n{log}");
    assert!(!named("osd-host-2"), "the host on its own token is not:\n{log}");
    assert_eq!(
        log.lines().filter(|l| l.contains("the agent of osd-host-1 refused its own token")).count(),
        1,
        "named once, not at every poll:\n{log}"
    );
    moving.proc.terminate();

    // The shared token removed from the daemon: the host not moved is no
    // longer reached, and its error says which token its agent wants.
    let done = daemon(dir.path(), &pki, &key, &[]);
    let error = wait_for_or(
        "osd-host-1's poll error",
        Duration::from_secs(30),
        || host_error(&done, "osd-host-1"),
        || std::fs::read_to_string(&done.log).unwrap_or_default(),
    );
    assert!(error.contains("401") && error.contains("only the token of host osd-host-1"), "{error}");
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(host_error(&done, "osd-host-2"), None, "the host on its own token is still reached");
}
