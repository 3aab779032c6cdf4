//! Named tokens and roles against real daemons: every change refused to a
//! `read` token and the admin's changes to an `operate` one (the routes
//! taken from the router itself), 401 for missing, wrong and revoked
//! tokens, the event log naming who asked, the bootstrap token as admin,
//! and concurrent `osd rm stop` of one removal without a single 5xx.
//!
//! Most run `osdkeeper demo` (the simulated cluster, no token configured):
//! the first token is created without one, and from then on every request
//! needs a token.

mod common;

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use common::client::Api;
use common::*;
use osdkeeper::domain::auth::{is_mutating, need, Need, Role};
use serde_json::Value;

fn start_demo(dir: &Path) -> (Proc, String) {
    let mut cmd = Command::new(bin());
    cmd.args(["demo", "--listen", "127.0.0.1:0", "--db"]).arg(dir.join("demo.db"));
    cmd.env_remove("OSDKEEPER_TOKEN").env_remove("OSDKEEPER_AGENT_TOKEN");
    let (proc, addr) = spawn_listening(cmd, "demo", &dir.join("demo.log"));
    (proc, format!("http://{addr}"))
}

/// A new token's secret.
fn token(admin: &Api, name: &str, role: &str) -> String {
    let a = admin.create_token(name, role);
    assert_eq!(a.status, 201, "{}", a.body);
    assert_eq!((a.body["name"].as_str(), a.body["role"].as_str()), (Some(name), Some(role)));
    a.body["secret"].as_str().expect("the secret, once").to_string()
}

/// A request to the route with its parameters filled in; the body is never
/// read when the role refuses (the check runs before the handler).
fn call(api: &Api, method: &str, route: &str) -> common::client::Answer {
    let mut path = String::new();
    for part in route.split('/').skip(1) {
        path.push('/');
        path.push_str(if part.starts_with('{') { "x" } else { part });
    }
    let ctype = if route == "/api/v1/specs" { "application/yaml" } else { "application/json" };
    let body = if method == "POST" { Some((ctype, "{}")) } else { None };
    api.request(method, &path, body)
}

/// What a refused request must not change (hosts without their poll times).
fn state(api: &Api) -> Vec<Value> {
    let hosts: Vec<Value> =
        api.hosts("").list().iter().map(|h| serde_json::json!([h["name"], h["addr"], h["labels"]])).collect();
    vec![Value::Array(hosts), api.specs().body, api.held().body, api.get("/api/v1/osds/removals").body]
}

fn needs(method: &str, route: &str, role: Role) -> bool {
    need(method, route) == Need::Role(role)
}

#[test]
fn a_read_token_changes_nothing_and_an_operate_token_cannot_do_what_needs_admin() {
    let dir = tempfile::tempdir().unwrap();
    let (_demo, url) = start_demo(dir.path());
    let open = Api::new(&url, None);
    assert_eq!(open.whoami().body["open"], true, "no token yet: loopback, anyone is admin");
    let root_secret = token(&open, "root", "admin");
    let root = Api::new(&url, Some(&root_secret));
    let a = open.hosts("");
    assert_eq!(a.status, 401, "one token exists: every request needs one: {}", a.body);
    assert!(a.error().contains("needs a token"), "{}", a.body);
    assert_eq!(open.healthz().status, 200, "health needs none");
    let viewer = Api::new(&url, Some(&token(&root, "viewer", "read")));
    let ops = Api::new(&url, Some(&token(&root, "ops", "operate")));
    assert_eq!(viewer.whoami().body, serde_json::json!({"name": "viewer", "role": "read", "open": false}));
    assert_eq!(ops.whoami().body["role"], "operate");
    assert_eq!(viewer.hosts("").status, 200, "read sees");
    assert_eq!(viewer.get("/api/v1/events").status, 200);
    let before = state(&root);

    // Every mutating route of the router itself, not a list kept here.
    let changes: Vec<(&str, &str)> = osdkeeper::api::routes().into_iter().filter(|(m, _)| is_mutating(m)).collect();
    assert!(changes.len() >= 12, "{changes:?}");
    for (method, route) in &changes {
        let a = call(&viewer, method, route);
        assert_eq!(a.status, 403, "read token, {method} {route}: {}", a.body);
        let needed = a.body["required_role"].as_str().unwrap();
        assert!(needed == "operate" || needed == "admin", "{}", a.body);
        assert!(a.error().contains(needed) && a.error().contains("viewer"), "{}", a.body);
        assert_eq!(a.body["role"], "read");
    }
    for (method, route) in &changes {
        let a = call(&ops, method, route);
        if needs(method, route, Role::Admin) {
            assert_eq!((a.status, a.body["required_role"].as_str()), (403, Some("admin")), "{method} {route}");
        } else {
            assert!(needs(method, route, Role::Operate), "{method} {route}");
            assert!(![401, 403].contains(&a.status), "operate may {method} {route}: {}", a.body);
        }
    }
    for must_be_admin in ["/api/v1/devices/zap", "/api/v1/devices/release", "/api/v1/hosts", "/api/v1/tokens"] {
        assert!(changes.contains(&("POST", must_be_admin)) && needs("POST", must_be_admin, Role::Admin));
    }
    assert_eq!(ops.tokens().status, 403, "listing tokens is the admin's too");
    assert_eq!(state(&root), before, "no refused request changed anything");

    // The log names who was refused what.
    let events = root.events("limit=1000").body;
    let denied: Vec<&Value> = events.as_array().unwrap().iter().filter(|e| e["kind"] == "access-denied").collect();
    assert!(denied.iter().any(|e| e["actor"] == "viewer" && e["message"].as_str().unwrap().contains("devices/zap")));
    assert!(denied.iter().any(|e| e["actor"] == "ops"));

    // token ls: names and roles, never a secret; revoked means refused at once.
    let out = cli_ok(&url, Some(&root_secret), &["token", "ls"]);
    for name in ["root", "viewer", "ops"] {
        assert!(out.contains(name), "{out}");
    }
    assert!(!out.contains("osdk_"), "no secret in token ls: {out}");
    assert_eq!(root.revoke_token("ops").status, 204);
    let a = ops.hosts("");
    assert_eq!(a.status, 401, "{}", a.body);
    assert!(a.error().contains("revoked"), "{}", a.body);
    assert_eq!(root.create_token("ops", "read").status, 409, "a revoked name is not reused");
    assert_eq!(root.revoke_token("nobody").status, 404);
    assert_eq!(root.create_token("no spaces", "read").status, 400);
    let a = root.create_token("x", "root");
    assert!(a.status == 422 && a.error().contains("operate"), "{}", a.body);
    assert_eq!(Api::new(&url, Some("osdk_guessed")).hosts("").status, 401);
}

#[test]
fn the_event_of_a_zap_names_its_token() {
    let dir = tempfile::tempdir().unwrap();
    let (_demo, url) = start_demo(dir.path());
    let alice = Api::new(&url, Some(&token(&Api::new(&url, None), "alice", "admin")));
    let free = wait_for("an available device", Duration::from_secs(30), || {
        let hosts = alice.devices("").body;
        hosts.as_array()?.iter().find_map(|h| {
            let d = h["devices"].as_array()?.iter().find(|d| d["available"] == true)?;
            Some((h["host"].as_str()?.to_string(), d["path"].as_str()?.to_string()))
        })
    });
    let (host, path) = free;
    let a = alice.zap(&serde_json::json!({"host": host, "path": path, "force": true}).to_string());
    assert_eq!(a.status, 200, "{}", a.body);
    let events = alice.events("limit=1000").body;
    let zaps: Vec<&Value> = events
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| (e["kind"] == "zap" || e["kind"] == "zapped") && e["host"] == host.as_str())
        .collect();
    assert_eq!(zaps.len(), 2, "the intent and the outcome: {events}");
    for e in zaps {
        assert_eq!(e["actor"], "alice", "{e}");
        assert!(e["message"].as_str().unwrap().contains(&path), "{e}");
    }
    let out = cli_ok(&url, Some(&token(&alice, "cli", "read")), &["events", "--limit", "1000"]);
    assert!(out.lines().any(|l| l.contains(&path) && l.ends_with("(by alice)")), "{out}");
    // What the daemon does on its own (polls) names nobody.
    assert!(events.as_array().unwrap().iter().any(|e| e["kind"] == "inventory-first" && e["actor"].is_null()));
}

#[test]
fn the_configured_token_is_the_bootstrap_admin() {
    let dir = tempfile::tempdir().unwrap();
    let daemon = start_daemon(dir.path(), "", &[("OSDKEEPER_TOKEN", "boot-secret")]);
    let boot = Api::new(&daemon.url, Some("boot-secret"));
    assert_eq!(boot.whoami().body, serde_json::json!({"name": "bootstrap", "role": "admin", "open": false}));
    assert_eq!(boot.add_host(r#"{"name": "f5-422-09", "addr": "127.0.0.1:9", "no_check": true}"#).status, 201);
    let events = boot.events("").body;
    let added = events.as_array().unwrap().iter().find(|e| e["kind"] == "host-added").unwrap();
    assert_eq!(added["actor"], "bootstrap");
    let ls = boot.tokens();
    assert_eq!(ls.body[0]["name"], "bootstrap");
    assert_eq!(ls.body[0]["configured"], true);
    assert_eq!(boot.revoke_token("bootstrap").status, 409, "it lives in the configuration");
    let reader = Api::new(&daemon.url, Some(&token(&boot, "reader", "read")));
    assert_eq!(reader.add_label("f5-422-09", r#"{"label": "osd"}"#).status, 403);
    let (code, out, _) = cli(&daemon.url, Some("boot-secret"), &["token", "create", "ops", "--role", "operate"]);
    assert_eq!(code, 0);
    let ops = Api::new(&daemon.url, Some(out.trim()));
    assert_eq!(ops.whoami().body["name"], "ops", "the CLI prints only the secret on stdout");
    assert_eq!(Api::new(&daemon.url, None).hosts("").status, 401);
    let doc = boot.openapi().body;
    for (path, method) in [("/api/v1/tokens", "post"), ("/api/v1/tokens/{name}", "delete"), ("/api/v1/whoami", "get")] {
        assert!(doc["paths"][path][method].is_object(), "{method} {path} is documented");
    }
}

/// Item 8 of the security issue: 39 of 155 racing `osd rm stop` of one
/// removal answered 500 "database is locked". Each must answer 200, 404
/// or 409.
#[test]
fn concurrent_stops_of_one_removal_never_fail_on_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let (_demo, url) = start_demo(dir.path());
    let ops = {
        let root = Api::new(&url, Some(&token(&Api::new(&url, None), "root", "admin")));
        token(&root, "ops", "operate")
    };
    let api = Api::new(&url, Some(&ops));
    wait_for("every host's inventory", Duration::from_secs(30), || {
        (api.summary().body["hosts_without_inventory"] == 0).then_some(())
    });
    let scheduled = api.schedule_removals(r#"{"ids": [8]}"#);
    assert_eq!(scheduled.status, 202, "{}", scheduled.body);
    const RACERS: usize = 150;
    let barrier = Arc::new(Barrier::new(RACERS));
    let racers: Vec<_> = (0..RACERS)
        .map(|_| {
            let (url, ops, barrier) = (url.clone(), ops.clone(), barrier.clone());
            std::thread::spawn(move || {
                let api = Api::new(&url, Some(&ops));
                barrier.wait();
                let a = api.stop_removals(r#"{"ids": [8]}"#);
                (a.status, a.body.to_string())
            })
        })
        .collect();
    let answers: Vec<(u16, String)> = racers.into_iter().map(|t| t.join().unwrap()).collect();
    let failed: Vec<&(u16, String)> = answers.iter().filter(|(s, _)| *s >= 500).collect();
    assert!(failed.is_empty(), "{} of {RACERS} failed: {:?}", failed.len(), &failed[..failed.len().min(3)]);
    assert!(answers.iter().all(|(s, _)| [200, 404, 409].contains(s)), "{answers:?}");
    assert!(answers.iter().any(|(s, _)| *s == 200), "one of them stopped it");
}
