//! Cheap requests that would cost a lot (issue 35), against the real
//! binaries: half-sent requests held open against the daemon and the
//! agent, a body that never ends, more connections than the cap, made-up
//! methods and `/metrics`, a 1 GB agent answer, and the scalar-alias spec
//! offline and through the daemon.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

fn healthz_within(url: &str, limit: Duration) -> reqwest::Result<reqwest::blocking::Response> {
    reqwest::blocking::Client::builder().timeout(limit).build().unwrap().get(format!("{url}/healthz")).send()
}

/// A process's peak resident memory (`VmHWM`), in bytes.
fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
}

/// The scalar-alias spec of issue 35: 1 MB, one 600 KB anchored scalar
/// and 90 000 aliases of it (54 GB once every alias is copied).
fn scalar_alias_spec(dir: &Path) -> std::path::PathBuf {
    let text = format!(
        "service_type: osd\nservice_id: s\nplacement: {{host_pattern: '*'}}\nspec:\n  data_devices:\n    \
         model: &a '{}'\n  db_devices:\n    paths: [{}]\n",
        "x".repeat(600_000),
        vec!["*a"; 90_000].join(",")
    );
    assert!(text.len() < 1 << 20, "{} bytes", text.len());
    let path = dir.join("aliases.yaml");
    std::fs::write(&path, text).unwrap();
    path
}

/// Runs `args` with a 4 GiB address space, so that a regression fails
/// here rather than taking the machine's memory.
fn bounded(args: &[&str]) -> Command {
    let mut cmd = Command::new("prlimit");
    cmd.arg(format!("--as={}", 4u64 << 30)).arg("--").args(args);
    cmd
}

const REFUSAL: &str = "at line 8, column 28: anchors and aliases copy more than 4194304 bytes of text";

#[test]
fn the_scalar_alias_spec_is_refused_in_one_line_by_preview() {
    let dir = tempfile::tempdir().unwrap();
    let spec = scalar_alias_spec(dir.path());
    let inventory = repo().join("specs/f5-422-inventory.json");
    let out =
        bounded(&[bin(), "preview", "--spec", spec.to_str().unwrap(), "--inventory", inventory.to_str().unwrap()])
            .output()
            .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // 2: the file cannot be read as a spec file at all (docs/cli.md).
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains(REFUSAL), "{stderr}");
}

/// `osdkeeper serve` as `start_daemon` starts it, with a 4 GiB address space.
fn start_bounded_daemon(dir: &Path) -> (Proc, String) {
    let db = dir.join("osdkeeper.db");
    let mut cmd = bounded(&[bin(), "serve", "--listen", "127.0.0.1:0", "--db", db.to_str().unwrap()]);
    cmd.env_remove("OSDKEEPER_TOKEN").env_remove("OSDKEEPER_AGENT_TOKEN");
    let (proc, addr) = spawn_listening(cmd, "daemon", &dir.join("daemon.log"));
    (proc, format!("http://{addr}"))
}

#[test]
fn the_scalar_alias_spec_is_refused_by_the_daemon_which_stays_small() {
    let dir = tempfile::tempdir().unwrap();
    let spec = scalar_alias_spec(dir.path());
    let (daemon, url) = start_bounded_daemon(dir.path());
    let (code, out, err) = cli(&url, None, &["apply", "-i", spec.to_str().unwrap(), "--dry-run"]);
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(REFUSAL), "{err}");
    let body = std::fs::read(&spec).unwrap();
    let answer = reqwest::blocking::Client::new()
        .post(format!("{url}/api/v1/specs?dry_run=true"))
        .header("content-type", "application/yaml")
        .body(body)
        .send()
        .unwrap();
    assert_eq!(answer.status(), 400);
    assert!(answer.text().unwrap().contains(REFUSAL));
    let peak = peak_rss(daemon.pid());
    eprintln!("the daemon's peak RSS: {} MiB", peak >> 20);
    assert!(peak < 200 << 20, "peak {} MiB", peak >> 20);
    assert_eq!(healthz_within(&url, Duration::from_secs(2)).unwrap().status(), 200);
}

#[test]
fn made_up_methods_leave_metrics_as_they_were() {
    let dir = tempfile::tempdir().unwrap();
    let daemon = start_daemon(dir.path(), "", &[]);
    let client = reqwest::blocking::Client::new();
    let ask = |method: &str, path: &str| {
        let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        client.request(m, format!("{}{path}", daemon.url)).send().unwrap().status().as_u16()
    };
    let series = || -> std::collections::BTreeSet<String> {
        let text = client.get(format!("{}/metrics", daemon.url)).send().unwrap().text().unwrap();
        let http = text.lines().filter(|l| l.starts_with("osdkeeper_http_request_duration_seconds"));
        http.map(|l| l.rsplit_once(' ').unwrap().0.to_string()).collect()
    };
    // Made-up methods on a route and elsewhere, once each, and the scrape itself.
    ask("WARMUP", "/api/v1/hosts");
    ask("WARMUP", "/nowhere");
    series();
    let before = series();
    for i in 0..5000 {
        let path = if i % 2 == 0 { "/api/v1/hosts".to_string() } else { format!("/made/up/{i}") };
        ask(&format!("M{i:05}"), &path);
    }
    let after = series();
    assert_eq!(before, after, "the series of /metrics changed");
    assert!(after.iter().any(|s| s.contains("method=\"other\",route=\"/api/v1/hosts\"")), "{after:#?}");
    assert!(after.iter().any(|s| s.contains("method=\"other\",route=\"unmatched\"")), "{after:#?}");
}

/// What answers at an agent's address: its identity as `h1`, and an
/// inventory of `total` bytes sent in chunks until the reader stops
/// reading. Returns the address and how many bytes each inventory answer
/// got out.
fn endless_inventory_agent(total: u64) -> (String, std::sync::mpsc::Receiver<u64>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let (tx, rx) = std::sync::mpsc::channel();
    thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let tx = tx.clone();
            thread::spawn(move || {
                let mut head = [0u8; 4096];
                let n = conn.read(&mut head).unwrap_or(0);
                let line = String::from_utf8_lossy(&head[..n]).lines().next().unwrap_or("").to_string();
                if line.contains("/v1/identity") {
                    let body = r#"{"host": "h1", "version": "0"}"#;
                    let answer = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = conn.write_all(answer.as_bytes());
                    return;
                }
                let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n";
                let _ = conn.write_all(head.as_bytes());
                let chunk = format!("100000\r\n{}\r\n", "x".repeat(1 << 20));
                let mut sent = 0u64;
                while sent < total && conn.write_all(chunk.as_bytes()).is_ok() {
                    sent += 1 << 20;
                }
                let _ = tx.send(sent);
            });
        }
    });
    (addr, rx)
}

#[test]
fn a_1_gb_agent_answer_is_refused_within_its_cap() {
    let cap: u64 = 65 << 20;
    let (addr, sent) = endless_inventory_agent(1 << 30);
    let dir = tempfile::tempdir().unwrap();
    let daemon = start_daemon(dir.path(), "poll:\n  interval_s: 1\n", &[]);
    let before = peak_rss(daemon.proc.pid());
    cli_ok(&daemon.url, None, &["host", "add", "h1", &addr]);
    let sent = sent.recv_timeout(Duration::from_secs(120)).expect("the inventory asked for");
    assert!(sent < cap + (32 << 20), "the daemon read on: {sent} bytes went out");
    let host = wait_for("the host's error", Duration::from_secs(60), || {
        let out = cli_ok(&daemon.url, None, &["host", "ls", "--format", "json"]);
        let hosts: Value = serde_json::from_str(&out).unwrap();
        hosts[0]["last_error"].as_str().map(str::to_string)
    });
    let said = format!("answered /v1/inventory with more than {cap} bytes, the most the daemon reads from that route");
    assert!(host.contains(&said), "{host}");
    let grown = peak_rss(daemon.proc.pid()).saturating_sub(before);
    eprintln!("sent {} MiB before the daemon stopped reading; its peak RSS grew by {} MiB", sent >> 20, grown >> 20);
    assert!(grown < cap + (32 << 20), "the daemon grew by {} MiB", grown >> 20);
    assert_eq!(healthz_within(&daemon.url, Duration::from_secs(2)).unwrap().status(), 200);
}

fn host_port(url: &str) -> &str {
    url.trim_start_matches("http://")
}

const HALF_SENT: &[u8] = b"GET /healthz HTTP/1.1\r\nhost: x\r\n";

/// `n` connections to `addr`, each with a request's head begun and never ended.
fn half_sent(addr: &str, n: usize) -> Vec<TcpStream> {
    (0..n)
        .map(|i| {
            let mut c = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connection {i}: {e}"));
            c.write_all(HALF_SENT).unwrap();
            c
        })
        .collect()
}

/// Waits until the server ends each connection (end of file, or a reset),
/// at most `within` from `since`; panics naming the first still open then.
fn all_closed(conns: Vec<TcpStream>, since: Instant, within: Duration) {
    for (i, mut c) in conns.into_iter().enumerate() {
        let left = within.saturating_sub(since.elapsed()).max(Duration::from_millis(1));
        c.set_read_timeout(Some(left)).unwrap();
        let mut buf = [0u8; 1024];
        loop {
            match c.read(&mut buf) {
                Ok(0) => break,
                // hyper may say 408 before it closes.
                Ok(_) => continue,
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
                Err(e) => panic!("connection {i} still open {:?} after it was opened: {e}", since.elapsed()),
            }
        }
    }
}

#[test]
fn the_daemon_answers_healthz_beside_1100_half_sent_requests_and_closes_them() {
    let dir = tempfile::tempdir().unwrap();
    let daemon = start_daemon(dir.path(), "http:\n  header_read_timeout_s: 3\n", &[]);
    let opened = Instant::now();
    let held = half_sent(host_port(&daemon.url), 1100);
    let asked = Instant::now();
    let health = healthz_within(&daemon.url, Duration::from_secs(2)).expect("/healthz within 2 s");
    assert_eq!(health.status(), 200, "answered in {:?}", asked.elapsed());
    all_closed(held, opened, Duration::from_secs(60));
    // Closed by their timeout, not at once: each was held about 3 s.
    assert!(opened.elapsed() >= Duration::from_secs(3), "{:?}", opened.elapsed());
    assert_eq!(healthz_within(&daemon.url, Duration::from_secs(2)).unwrap().status(), 200);
}

#[test]
fn the_daemon_serves_at_most_its_connection_cap() {
    let dir = tempfile::tempdir().unwrap();
    let daemon = start_daemon(dir.path(), "http:\n  header_read_timeout_s: 60\n  max_connections: 20\n", &[]);
    let addr = host_port(&daemon.url).to_string();
    let mut held = half_sent(&addr, 20);
    // The kernel queues connections in the order they came: the 20 held
    // ones are served, the next waits for one of them to end.
    let refused = healthz_within(&daemon.url, Duration::from_secs(1));
    assert!(refused.is_err(), "answered beyond the cap: {refused:?}");
    drop(held.pop());
    let health = healthz_within(&daemon.url, Duration::from_secs(10)).expect("answered once a slot is free");
    assert_eq!(health.status(), 200);
}

#[test]
fn a_body_that_never_ends_is_cut_off() {
    let dir = tempfile::tempdir().unwrap();
    let daemon = start_daemon(dir.path(), "http:\n  request_timeout_s: 2\n", &[]);
    let head = "POST /api/v1/specs?dry_run=true HTTP/1.1\r\nhost: 127.0.0.1\r\n\
                content-type: application/yaml\r\ncontent-length: 1000\r\n\r\nservice_type: osd\n";
    body_cut_off_after_2_s(host_port(&daemon.url), head);
}

/// Sends `request`, whose body is shorter than its `content-length` says,
/// and expects a 400 for a body late by the 2 s allowed, then the end.
fn body_cut_off_after_2_s(addr: &str, request: &str) {
    let mut c = TcpStream::connect(addr).unwrap();
    c.write_all(request.as_bytes()).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut answer = String::new();
    c.read_to_string(&mut answer).expect("an answer, then the connection closed");
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("did not arrive within 2 s of its head"), "{answer}");
}

fn start_agent(dir: &Path, flags: &[&str]) -> (Proc, String) {
    let inventory = repo().join("tests/fixtures/agent/inventory_file.json");
    let mut cmd = Command::new(bin());
    cmd.args(["agent", "--listen", "127.0.0.1:0", "--host-name", "h1", "--inventory-file"]).arg(inventory);
    cmd.args(flags).env_remove("OSDKEEPER_AGENT_TOKEN");
    let (proc, addr) = spawn_listening(cmd, "agent", &dir.join("agent.log"));
    (proc, format!("http://{addr}"))
}

#[test]
fn the_agent_answers_healthz_beside_half_sent_requests_closes_them_and_cuts_slow_bodies_off() {
    let dir = tempfile::tempdir().unwrap();
    let (_agent, url) = start_agent(dir.path(), &["--header-read-timeout-s", "2", "--request-timeout-s", "2"]);
    let opened = Instant::now();
    let held = half_sent(host_port(&url), 200);
    assert_eq!(healthz_within(&url, Duration::from_secs(2)).expect("/healthz within 2 s").status(), 200);
    all_closed(held, opened, Duration::from_secs(60));
    assert!(opened.elapsed() >= Duration::from_secs(2), "{:?}", opened.elapsed());

    let head = "POST /v1/zap HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n\
                content-length: 100\r\n\r\n{\"path\": ";
    body_cut_off_after_2_s(host_port(&url), head);
}

#[test]
fn the_agent_serves_at_most_its_connection_cap() {
    let dir = tempfile::tempdir().unwrap();
    let (_agent, url) = start_agent(dir.path(), &["--header-read-timeout-s", "60", "--max-connections", "5"]);
    let mut held = half_sent(host_port(&url), 5);
    assert!(healthz_within(&url, Duration::from_secs(1)).is_err(), "answered beyond the cap");
    drop(held.pop());
    assert_eq!(healthz_within(&url, Duration::from_secs(10)).expect("a slot is free").status(), 200);
}

#[test]
fn a_tls_handshake_never_begun_is_cut_off_at_the_header_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let pki = dir.path().join("pki");
    let made = Command::new(bin())
        .args(["certs", "--daemon", "127.0.0.1", "--host", "h1,127.0.0.1", "--out"])
        .arg(&pki)
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let (cert, key) = (pki.join("h1.pem"), pki.join("h1-key.pem"));
    let tls = ["--tls-cert", cert.to_str().unwrap(), "--tls-key", key.to_str().unwrap()];
    let (_agent, url) = start_agent(dir.path(), &[&tls[..], &["--header-read-timeout-s", "2"]].concat());
    let opened = Instant::now();
    let held = (0..50).map(|_| TcpStream::connect(host_port(&url)).unwrap()).collect();
    // Well before the 10 s a TLS acceptor's own handshake timeout would take.
    all_closed(held, opened, Duration::from_secs(8));
    assert!(opened.elapsed() >= Duration::from_secs(2), "{:?}", opened.elapsed());
}
