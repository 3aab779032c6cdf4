//! `osdkeeper demo`: the daemon on a fresh database with the simulated
//! cluster of the field report (hosts f5-422-01..04, their HDDs and SSDs,
//! OSDs holding placement groups that drain at a watchable pace), agents
//! in-process. No Ceph, no disks, no network beyond loopback.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use super::{serve_with, shutdown_signal, ServeError};
use crate::agent_client::HostAgents;
use crate::ceph::CephCluster;
use crate::clock::now_ms;
use crate::config::{Config, FileConfig, Overrides};
use crate::store::Store;

/// Placement groups per OSD at start, and PGs a draining OSD sheds per
/// second at pace 1 (186 PGs take about six minutes; --pace speeds it up).
pub const DEMO_PGS: f64 = 120.0;
pub const DEMO_DRAIN_RATE: f64 = 0.5;

/// `scale` = Some((hosts, disks per host)) runs a generated cluster of that
/// size instead of the field report's four hosts.
pub async fn demo(
    listen: SocketAddr,
    db: PathBuf,
    pace: f64,
    scale: Option<(usize, usize)>,
    max_draining: Option<usize>,
    pg_map: bool,
) -> Result<(), ServeError> {
    let overrides = Overrides { listen: Some(listen), db: Some(db.clone()), ..Overrides::default() };
    let mut config = Config::resolve(FileConfig::default(), overrides).map_err(|e| ServeError::Demo(e.to_string()))?;
    config.poll_interval = std::time::Duration::from_secs(5);
    config.reconcile_interval = std::time::Duration::from_secs(5);
    config.removal_interval = std::time::Duration::from_millis(500);
    if let Some(n) = max_draining {
        config.max_draining = n.max(1);
    }
    let (sim, hosts): (crate::sim::SimCluster, Vec<String>) = match scale {
        None => (
            crate::sim::field_report_cluster(DEMO_PGS, DEMO_DRAIN_RATE, pace),
            ["f5-422-01", "f5-422-02", "f5-422-03", "f5-422-04"].map(String::from).to_vec(),
        ),
        Some((n, per)) => (
            crate::sim::generated_cluster(n, per, DEMO_PGS, DEMO_DRAIN_RATE, pace),
            (1..=n).map(|i| format!("sim-{i:04}")).collect(),
        ),
    };
    let sim = if pg_map { sim.with_pg_map() } else { sim };
    let store =
        Store::open(&db).await.map_err(|source| ServeError::Store { path: db.display().to_string(), source })?;
    for host in &hosts {
        if store.host(host).await.is_err() {
            let labels = if host == "f5-422-04" { vec!["osd".to_string()] } else { vec!["osd".into(), "mon".into()] };
            store
                .add_host(host, &format!("{host}.sim:8741"), &labels, now_ms())
                .await
                .map_err(|source| ServeError::Store { path: db.display().to_string(), source })?;
        }
    }
    store.close().await;
    let agents: Arc<dyn HostAgents> = Arc::new(sim.clone());
    let ceph: Arc<dyn CephCluster> = Arc::new(sim);
    serve_with(config, agents, ceph, shutdown_signal()).await
}
