//! The router served in-process on a one-thread runtime, against the
//! simulated cluster: what only shows when the runtime has no thread to
//! spare (tests/daemon_api.rs drives the real binary).

use std::sync::Arc;

use crate::config::{Config, FileConfig, Overrides};
use crate::daemon::Daemon;
use crate::store::Store;

const SPEC: &str = "service_type: osd\nservice_id: all\nplacement: {host_pattern: '*'}\ndata_devices: {all: true}\n";

async fn serve_sim() -> (tempfile::TempDir, Arc<Daemon>, String) {
    let sim = crate::sim::field_report_cluster(20.0, 10.0, 1.0).manual_clock();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("d.db")).await.unwrap();
    let config = Config::resolve(FileConfig::default(), Overrides::default()).unwrap();
    let settings = super::ApiSettings { token: None, max_body_bytes: config.max_body_bytes, store: store.clone() };
    let d = Daemon::new(store, Arc::new(sim.clone()), Arc::new(sim), config);
    for name in ["f5-422-01", "f5-422-02"] {
        let h = d.inventory.add_host(name, &format!("{name}:8741"), &[], true).await.unwrap();
        d.inventory.poll_host(&h).await.unwrap();
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let app = super::router(d.clone(), settings);
    let limits = crate::http_server::ServerLimits::with_max_connections(64);
    let serving = crate::http_server::serve(listener, app, None, limits, std::future::pending(), |s| s);
    tokio::spawn(serving);
    (dir, d, url)
}

/// With one runtime thread, `/healthz` and the status endpoints can answer
/// during a plan only if the plan runs elsewhere. The plan is held at a
/// gate in the blocking pool while they are asked, so nothing here depends
/// on how long planning takes; on the runtime, the held plan would block
/// the only thread, and the gate's failsafe would let it go before any of
/// them answered (`release` then says so).
#[tokio::test(flavor = "current_thread")]
async fn health_and_status_answer_while_a_spec_is_planned() {
    let (_dir, d, url) = serve_sim().await;
    let http = reqwest::Client::new();
    let hold = d.specs.hold_planning();
    let apply = tokio::spawn(
        http.post(format!("{url}/api/v1/specs?dry_run=true"))
            .header("content-type", "application/yaml")
            .body(SPEC)
            .send(),
    );
    hold.started().await;
    for path in ["/healthz", "/api/v1/summary", "/api/v1/hosts", "/api/v1/workers", "/api/v1/specs"] {
        let r = http.get(format!("{url}{path}")).send().await.unwrap();
        assert_eq!(r.status(), 200, "{path}");
    }
    assert!(!apply.is_finished(), "the dry-run waits for its plan");
    assert!(hold.release(), "the plan was still held when the others answered");
    let r = apply.await.unwrap().unwrap();
    assert_eq!(r.status(), 200);
    let body: serde_json::Value = r.json().await.unwrap();
    assert!(body["preview"].as_array().is_some_and(|rows| !rows.is_empty()), "{body}");
}
