//! TLS on every hop, with real processes on loopback: `osdkeeper certs`
//! makes a CA and certificates; an agent serves HTTPS; the daemon serves
//! HTTPS and checks the agent against the CA; the CLI checks the daemon.
//! Plain HTTP off loopback is refused by the daemon, the agent and the CLI.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::*;
use serde_json::Value;

const TOKEN: &str = "api-secret-for-tls-tests";
const AGENT_TOKEN: &str = "agent-secret-for-tls-tests";
const CONFIG: &str = "poll:\n  interval_s: 1\n  timeout_s: 5\nreconcile:\n  interval_s: 1\n";

fn certs(dir: &Path) {
    let out = Command::new(bin())
        .args(["certs", "--out"])
        .arg(dir)
        .args(["--daemon", "127.0.0.1,localhost", "--host", "osd-host-1,127.0.0.1"])
        .output()
        .unwrap();
    assert!(out.status.success(), "certs: {}", String::from_utf8_lossy(&out.stderr));
}

fn tls_agent(dir: &Path, certs: &Path) -> (Proc, String) {
    let inventory = repo().join("tests/fixtures/agent/inventory_file.json");
    let mut cmd = Command::new(bin());
    cmd.args(["agent", "--listen", "127.0.0.1:0", "--host-name", "osd-host-1", "--inventory-file"])
        .arg(inventory)
        .arg("--tls-cert")
        .arg(certs.join("osd-host-1.pem"))
        .arg("--tls-key")
        .arg(certs.join("osd-host-1-key.pem"))
        .env("OSDKEEPER_AGENT_TOKEN", AGENT_TOKEN);
    spawn_listening(cmd, "agent", &dir.join("agent.log"))
}

fn tls_daemon(dir: &Path, certs: &Path) -> (Proc, String) {
    let config = dir.join("osdkeeper.yaml");
    std::fs::write(&config, CONFIG).unwrap();
    let mut cmd = Command::new(bin());
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--db"])
        .arg(dir.join("osdkeeper.db"))
        .arg("--config")
        .arg(&config)
        .arg("--tls-cert")
        .arg(certs.join("daemon.pem"))
        .arg("--tls-key")
        .arg(certs.join("daemon-key.pem"))
        .arg("--agent-ca")
        .arg(certs.join("ca.pem"))
        .env("OSDKEEPER_TOKEN", TOKEN)
        .env("OSDKEEPER_AGENT_TOKEN", AGENT_TOKEN);
    spawn_listening(cmd, "daemon", &dir.join("daemon.log"))
}

/// The CLI with the given URL and CA (none: OSDKEEPER_CACERT unset).
fn cli_tls(url: &str, ca: Option<&Path>, args: &[&str]) -> (i32, String, String) {
    let mut cmd = Command::new(bin());
    cmd.args(args).env("OSDKEEPER_URL", url).env("OSDKEEPER_TOKEN", TOKEN).env_remove("OSDKEEPER_CACERT");
    if let Some(ca) = ca {
        cmd.env("OSDKEEPER_CACERT", ca);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Sends `request` as is over TLS (checked against `ca`) and reads the
/// answer until the daemon closes: for requests no HTTP client would send.
fn raw_tls_request(addr: &str, ca: &Path, request: &[u8]) -> String {
    use rustls::pki_types::pem::PemObject;
    use std::io::{Read, Write};
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls::pki_types::CertificateDer::pem_file_iter(ca).unwrap() {
        roots.add(cert.unwrap()).unwrap();
    }
    let config =
        rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
    let mut conn = rustls::ClientConnection::new(std::sync::Arc::new(config), name).unwrap();
    let mut tcp = std::net::TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut tls = rustls::Stream::new(&mut conn, &mut tcp);
    tls.write_all(request).unwrap();
    let mut out = Vec::new();
    // The daemon closes after its error answer (without close_notify, hence the error).
    let _ = tls.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

fn blocking_client(ca: &Path) -> reqwest::blocking::Client {
    let pem = std::fs::read(ca).unwrap();
    let mut b = reqwest::blocking::Client::builder().tls_built_in_root_certs(false);
    for c in reqwest::Certificate::from_pem_bundle(&pem).unwrap() {
        b = b.add_root_certificate(c);
    }
    b.build().unwrap()
}

#[test]
fn cli_daemon_and_agent_talk_tls_checked_against_the_ca() {
    let dir = tempfile::tempdir().unwrap();
    let pki = dir.path().join("pki");
    certs(&pki);
    let ca = pki.join("ca.pem");
    let (_agent, agent_addr) = tls_agent(dir.path(), &pki);
    let (_daemon, daemon_addr) = tls_daemon(dir.path(), &pki);
    let url = format!("https://{daemon_addr}");

    // The agent answers HTTPS with a certificate of the CA, and nothing in clear.
    let https = blocking_client(&ca);
    let health = https.get(format!("https://{agent_addr}/healthz")).send().unwrap();
    assert_eq!(health.status(), 200);
    let clear = reqwest::blocking::Client::new()
        .get(format!("http://{agent_addr}/v1/inventory"))
        .bearer_auth(AGENT_TOKEN)
        .timeout(Duration::from_secs(5))
        .send();
    assert!(clear.map(|r| !r.status().is_success()).unwrap_or(true), "the agent served its inventory in clear");

    // The CLI trusts only the CA it is given: not the system's roots, not nothing.
    let (code, _, err) = cli_tls(&url, None, &["host", "ls"]);
    assert_ne!(code, 0);
    assert!(
        err.contains("did not prove who it is") && err.contains("--cacert"),
        "an unchecked daemon is refused: {err}"
    );
    let other = dir.path().join("other");
    certs(&other);
    let (code, _, err) = cli_tls(&url, Some(&other.join("ca.pem")), &["host", "ls"]);
    assert_ne!(code, 0, "a certificate of another CA is refused: {err}");

    let agent_url = format!("https://{agent_addr}");
    let (code, out, err) = cli_tls(&url, Some(&ca), &["host", "add", "osd-host-1", &agent_url]);
    assert_eq!(code, 0, "host add over TLS: {out}{err}");
    // The daemon polls the agent over TLS, checked against --agent-ca.
    let devices = wait_for_or(
        "the TLS agent's devices in device ls",
        Duration::from_secs(30),
        || {
            let (code, out, _) = cli_tls(&url, Some(&ca), &["device", "ls", "--format", "json"]);
            let v: Value = serde_json::from_str(&out).ok()?;
            let n = v.as_array()?.iter().map(|h| h["devices"].as_array().map_or(0, |d| d.len())).sum::<usize>();
            (code == 0 && n > 0).then_some(n)
        },
        || std::fs::read_to_string(dir.path().join("daemon.log")).unwrap_or_default(),
    );
    let file: Vec<Value> = serde_json::from_str(
        &std::fs::read_to_string(repo().join("tests/fixtures/agent/inventory_file.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(devices, file.len(), "every device of the agent's inventory");

    // The dashboard is served over HTTPS too.
    let page = https.get(format!("{url}/")).send().unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.text().unwrap().contains("<html"), "the dashboard page");

    // hyper's own answers (here 414) carry a JSON body under TLS too.
    let long_uri = format!("GET /api/v1/hosts?{} HTTP/1.1\r\nHost: {daemon_addr}\r\n\r\n", "a".repeat(70_000));
    let answer = raw_tls_request(&daemon_addr, &ca, long_uri.as_bytes());
    assert!(answer.starts_with("HTTP/1.1 414"), "{}", &answer[..answer.len().min(300)]);
    let body: Value = serde_json::from_str(answer.split("\r\n\r\n").nth(1).unwrap_or("")).expect("a JSON body");
    assert!(body["error"].as_str().unwrap().contains("URI is too long"), "{body}");
}

#[test]
fn an_agent_with_a_certificate_of_another_ca_is_not_polled() {
    let dir = tempfile::tempdir().unwrap();
    let pki = dir.path().join("pki");
    let rogue = dir.path().join("rogue");
    certs(&pki);
    certs(&rogue);
    let (_agent, agent_addr) = tls_agent(dir.path(), &rogue);
    let (_daemon, daemon_addr) = tls_daemon(dir.path(), &pki);
    let url = format!("https://{daemon_addr}");
    let ca = pki.join("ca.pem");
    let agent_url = format!("https://{agent_addr}");
    // `host add` asks the agent first, and refuses one it cannot trust.
    let (code, _, err) = cli_tls(&url, Some(&ca), &["host", "add", "osd-host-1", &agent_url]);
    assert_ne!(code, 0, "an agent the CA did not sign was added");
    assert!(err.to_lowercase().contains("certificate") && err.contains("--no-check"), "{err}");
    // Added anyway, it is still never trusted.
    let (code, _, err) = cli_tls(&url, Some(&ca), &["host", "add", "osd-host-1", &agent_url, "--no-check"]);
    assert_eq!(code, 0, "{err}");
    let error = wait_for("the poll's error", Duration::from_secs(30), || {
        let (_, out, _) = cli_tls(&url, Some(&ca), &["host", "ls", "--format", "json"]);
        let v: Value = serde_json::from_str(&out).ok()?;
        v[0]["last_error"].as_str().map(str::to_string)
    });
    assert!(error.to_lowercase().contains("certificate"), "{error}");
    let (_, out, _) = cli_tls(&url, Some(&ca), &["device", "ls", "--format", "json"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    let n: usize = v.as_array().unwrap().iter().map(|h| h["devices"].as_array().map_or(0, |d| d.len())).sum();
    assert_eq!(n, 0, "nothing was taken from an agent the CA did not sign: {out}");
}

fn refused_start(args: &[&str], env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new(bin());
    cmd.args(args).env_remove("OSDKEEPER_TOKEN").env_remove("OSDKEEPER_AGENT_TOKEN");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert!(!out.status.success(), "{args:?} started");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn plain_http_off_loopback_is_refused_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let err =
        refused_start(&["serve", "--listen", "0.0.0.0:0", "--db", db.to_str().unwrap()], &[("OSDKEEPER_TOKEN", TOKEN)]);
    assert!(err.contains("refusing to serve plain HTTP"), "{err}");
    let inventory = repo().join("tests/fixtures/agent/inventory_file.json");
    let err = refused_start(
        &["agent", "--listen", "0.0.0.0:0", "--inventory-file", inventory.to_str().unwrap()],
        &[("OSDKEEPER_AGENT_TOKEN", AGENT_TOKEN)],
    );
    assert!(err.contains("refusing to serve plain HTTP"), "{err}");
    // The CLI keeps its token rather than send it in clear (nothing listens there).
    let (code, _, err) = cli_tls("http://192.0.2.1:8740", None, &["host", "ls"]);
    assert_eq!(code, 1);
    assert!(err.contains("in clear"), "{err}");
}
