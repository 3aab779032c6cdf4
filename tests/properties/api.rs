//! API bodies, queries and paths: whatever a client sends, the daemon (on
//! the simulated cluster, in-process, no background workers) answers below
//! 500 and with JSON; an error body names what was wrong.

use std::sync::OnceLock;

use osdkeeper::config::{Config, FileConfig, Overrides};
use osdkeeper::daemon::Daemon;
use osdkeeper::store::Store;
use proptest::prelude::*;

struct Server {
    url: String,
    http: reqwest::blocking::Client,
    _runtime: tokio::runtime::Runtime,
    _dir: tempfile::TempDir,
}

/// One daemon for every case: cases must not depend on each other's
/// changes, and none does (each judges only the answer to its request).
fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("d.db");
        let url = runtime.block_on(async move {
            let sim = osdkeeper::sim::field_report_cluster(20.0, 10.0, 1.0).manual_clock();
            let store = Store::open(&db).await.unwrap();
            let config = Config::resolve(FileConfig::default(), Overrides::default()).unwrap();
            let settings = osdkeeper::api::ApiSettings {
                token: None,
                max_body_bytes: config.max_body_bytes,
                store: store.clone(),
            };
            let d = Daemon::new(store, std::sync::Arc::new(sim.clone()), std::sync::Arc::new(sim), config);
            for name in ["f5-422-01", "f5-422-02"] {
                let h = d.inventory.add_host(name, &format!("{name}:8741"), &[], true).await.unwrap();
                d.inventory.poll_host(&h).await.unwrap();
            }
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let url = format!("http://{}", listener.local_addr().unwrap());
            let app = osdkeeper::api::router(d, settings);
            let limits = osdkeeper::http_server::ServerLimits::with_max_connections(64);
            let wrap = osdkeeper::api::raw_errors::JsonErrors::new;
            tokio::spawn(osdkeeper::http_server::serve(listener, app, None, limits, std::future::pending(), wrap));
            url
        });
        Server { url, http: reqwest::blocking::Client::new(), _runtime: runtime, _dir: dir }
    })
}

fn answer_is_sound(method: &str, path: &str, content_type: &str, body: Vec<u8>) -> Result<(), TestCaseError> {
    let s = server();
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let resp = s
        .http
        .request(method, format!("{}{path}", s.url))
        .header("content-type", content_type)
        .body(body)
        .send()
        .map_err(|e| TestCaseError::fail(format!("{path}: no answer: {e}")))?;
    let status = resp.status().as_u16();
    let text = resp.text().unwrap_or_default();
    prop_assert!(status < 500, "{} {}: {}", status, path, text);
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| TestCaseError::fail(format!("{status} {path}: not JSON ({e}): {text:.200}")))?;
    if status >= 400 {
        prop_assert!(v["error"].as_str().is_some_and(|e| !e.is_empty()), "{} {}: {}", status, path, text);
        prop_assert!(text.len() < 4000, "{} {}: a {}-byte error", status, path, text.len());
    }
    Ok(())
}

/// Keys of the API's request bodies, and some that are not.
const BODY_KEYS: &[&str] =
    &["name", "addr", "labels", "label", "host", "path", "force", "ids", "replace", "zap", "extra", ""];

const ROUTES: &[&str] = &[
    "/api/v1/hosts",
    "/api/v1/hosts/f5-422-01/labels",
    "/api/v1/hosts/nohost/labels",
    "/api/v1/devices/release",
    "/api/v1/devices/zap",
    "/api/v1/osds/removals",
    "/api/v1/osds/removals/stop",
];

fn body_value() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        (0u32..20).prop_map(serde_json::Value::from),
        prop::sample::select(&["f5-422-01", "/dev/sdb", "/dev/sdc", "h:1", "bad host;x", "", "osd"][..])
            .prop_map(serde_json::Value::from),
        "[a-z0-9./: -]{0,12}".prop_map(serde_json::Value::from),
        Just(serde_json::Value::from("x".repeat(70_000))),
    ];
    let value = leaf.prop_recursive(2, 12, 4, |inner| prop::collection::vec(inner, 0..4).prop_map(Into::into));
    prop::collection::vec((prop::sample::select(BODY_KEYS), value), 0..5)
        .prop_map(|kv| serde_json::Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect()))
}

/// A body as sent: the JSON, sometimes damaged at a few bytes.
fn body_bytes() -> impl Strategy<Value = Vec<u8>> {
    (body_value(), prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..3)).prop_map(|(v, cuts)| {
        let mut bytes = serde_json::to_vec(&v).unwrap();
        for (at, b) in cuts {
            let i = at.index(bytes.len());
            bytes[i] = b;
        }
        bytes
    })
}

const QUERY_KEYS: &[&str] = &["limit", "offset", "host", "state", "q", "unreachable", "dry_run", "refresh", "after"];

fn query() -> impl Strategy<Value = String> {
    let value = prop_oneof![
        Just("abc".to_string()),
        Just("-1".to_string()),
        Just("18446744073709551616".to_string()),
        Just("%ff".to_string()),
        Just("true".to_string()),
        (0u64..100).prop_map(|n| n.to_string()),
        "[a-z0-9%&=]{0,8}",
    ];
    prop::collection::vec((prop::sample::select(QUERY_KEYS), value), 0..4)
        .prop_map(|kv| kv.into_iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("&"))
}

const GETS: &[&str] = &[
    "/api/v1/hosts",
    "/api/v1/devices",
    "/api/v1/osds",
    "/api/v1/osds/removals",
    "/api/v1/events",
    "/api/v1/deployments",
    "/api/v1/summary",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn json_bodies_get_json_answers_below_500(route in prop::sample::select(ROUTES), body in body_bytes()) {
        answer_is_sound("POST", route, "application/json", body)?;
    }

    #[test]
    fn queries_get_json_answers_below_500(path in prop::sample::select(GETS), q in query()) {
        answer_is_sound("GET", &format!("{path}?{q}"), "application/json", Vec::new())?;
    }

    #[test]
    fn path_parameters_get_json_answers_below_500(
        prefix in prop::sample::select(&["/api/v1/osds/removals/", "/api/v1/deployments/", "/api/v1/specs/",
            "/api/v1/hosts/", "/api/v1/assets/"][..]),
        tail in "[a-zA-Z0-9%._~-]{0,30}",
        method in prop::sample::select(&["GET", "DELETE", "POST", "PUT"][..]),
    ) {
        answer_is_sound(method, &format!("{prefix}{tail}"), "application/json", b"{}".to_vec())?;
    }

    #[test]
    fn spec_bodies_get_json_answers_below_500(text in super::spec_text(), cuts in prop::collection::vec(any::<(prop::sample::Index, u8)>(), 0..3)) {
        let mut bytes = text.into_bytes();
        for (at, b) in cuts {
            let i = at.index(bytes.len());
            bytes[i] = b;
        }
        answer_is_sound("POST", "/api/v1/specs?dry_run=true", "application/yaml", bytes)?;
    }
}

/// Errors quote at most an excerpt of what was sent, in the message and in
/// each field of the answer.
#[test]
fn errors_about_huge_values_stay_short() {
    let big = "x".repeat(200_000);
    let spec = format!(
        "service_type: osd\nservice_id: {big}\nplacement: {{hosts: ['h:{big}']}}\ndata_devices: {{all: true}}\n"
    );
    answer_is_sound("POST", "/api/v1/specs?dry_run=true", "application/yaml", spec.into_bytes()).unwrap();
    for (route, body) in [
        ("/api/v1/osds/removals", format!(r#"{{"ids": [1], "zap": "{big}"}}"#)),
        ("/api/v1/hosts", format!(r#"{{"name": 5, "addr": "{big}", "{big}": 1}}"#)),
        ("/api/v1/devices/zap", format!(r#"{{"{big}": 1}}"#)),
    ] {
        answer_is_sound("POST", route, "application/json", body.into_bytes()).unwrap();
    }
    answer_is_sound("GET", &format!("/api/v1/osds?limit={}", "9".repeat(30_000)), "", Vec::new()).unwrap();
}
