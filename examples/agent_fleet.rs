//! A fleet of host agents over real HTTP on loopback, for scale runs of the
//! daemon's poller (`bench/fleet_scale.py`, BENCHMARKS.md "A fleet of 2000
//! agents over HTTP").
//!
//! Every agent is the agent's own code: its router, token check and
//! inventory endpoint (`agent_server`), as `osdkeeper agent
//! --inventory-file` runs them, each on its own loopback port; one process
//! serves them all. The inventories are the simulator's (`sim`, the same
//! generated cluster as `osdkeeper demo --hosts N`), written as one
//! ceph-volume inventory file per host, which the agent reads for every
//! inventory it is asked for. The TLS rules are the agent's: plain HTTP
//! on loopback only.
//!
//!     cargo run --release --example agent_fleet -- --hosts 2000 --devices-per-host 24 --dir /tmp/fleet
//!
//! Writes `DIR/hosts.json` (`[{"name": ..., "addr": "127.0.0.1:PORT"}]`),
//! prints `ready N`, and serves until SIGTERM or Ctrl-C. The agents ask for
//! `OSDKEEPER_AGENT_TOKEN` when it is set. With `--churn K`, K hosts (in
//! turn) get a changed inventory every `--churn-every-s` seconds: one of
//! their disks is taken or freed.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Parser;
use osdkeeper::agent_client::{HostAgents, InventoryAnswer};
use osdkeeper::agent_server::{self, AgentConfig, AgentState, RawSettings};
use osdkeeper::store::ManagedHost;
use serde_json::{json, Value};

#[derive(Parser)]
struct Args {
    #[arg(long, default_value_t = 2000)]
    hosts: usize,
    #[arg(long, default_value_t = 24)]
    devices_per_host: usize,
    /// Where the inventory files and `hosts.json` go.
    #[arg(long)]
    dir: PathBuf,
    /// Hosts whose inventory changes every `--churn-every-s` seconds.
    #[arg(long, default_value_t = 0)]
    churn: usize,
    #[arg(long, default_value_t = 5)]
    churn_every_s: u64,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    std::fs::create_dir_all(args.dir.join("inventories"))?;
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(run(args))
}

async fn run(args: Args) -> anyhow::Result<()> {
    let names: Vec<String> = (1..=args.hosts).map(|i| format!("sim-{i:04}")).collect();
    let files = write_inventories(&names, args.devices_per_host, &args.dir).await?;
    let token = std::env::var("OSDKEEPER_AGENT_TOKEN").ok();
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut listed = Vec::new();
    let mut servers = Vec::new();
    for (name, file) in names.iter().zip(&files) {
        let raw = RawSettings {
            listen: Some(SocketAddr::from(([127, 0, 0, 1], 0))),
            host_name: Some(name.clone()),
            inventory_file: Some(file.clone()),
            token_env: token.clone(),
            ceph_volume_timeout_s: 60,
            inventory_timeout_s: 60,
            osd_stop_timeout_s: 60,
            osd_start_timeout_s: 60,
            ..RawSettings::default()
        };
        let config = AgentConfig::resolve(raw)?;
        let state = AgentState::from_config(&config)?;
        let listener = tokio::net::TcpListener::bind(config.listen).await?;
        listed.push(json!({"name": name, "addr": listener.local_addr()?.to_string()}));
        let mut stop = stop_rx.clone();
        let shutdown = async move {
            // A dropped sender also means: stop.
            stop.wait_for(|s| *s).await.ok();
        };
        let never = std::future::pending::<()>();
        servers.push(tokio::spawn(agent_server::serve(listener, state, None, config.http, shutdown, never)));
    }
    let hosts_file = args.dir.join("hosts.json");
    std::fs::write(&hosts_file, serde_json::to_vec_pretty(&listed)?)?;
    if args.churn > 0 {
        tokio::spawn(churn(files.clone(), args.churn, Duration::from_secs(args.churn_every_s.max(1))));
    }
    println!("ready {}", listed.len());
    let (first, _) = agent_server::shutdown_signals()?;
    first.await;
    stop_tx.send(true).ok();
    for s in servers {
        s.await??;
    }
    Ok(())
}

/// The simulator's inventory of every host, one file each (written aside
/// and renamed, so that an agent never reads half a file).
async fn write_inventories(names: &[String], per_host: usize, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let sim = osdkeeper::sim::generated_cluster(names.len(), per_host, 100.0, 1.0, 1.0);
    let mut files = Vec::with_capacity(names.len());
    for name in names {
        let InventoryAnswer::Fresh(report) = sim.inventory(&ManagedHost::unpolled(name, "sim"), None).await? else {
            anyhow::bail!("the simulator called an inventory unchanged that was never sent");
        };
        let path = dir.join("inventories").join(format!("{name}.json"));
        let devices: Vec<Value> = serde_json::from_str(report.devices.get())?;
        write_aside(&path, &devices)?;
        files.push(path);
    }
    Ok(files)
}

fn write_aside(path: &Path, devices: &[Value]) -> anyhow::Result<()> {
    let tmp = path.with_extension("json.new");
    std::fs::write(&tmp, serde_json::to_vec(devices)?)?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}

/// Every `every`, `count` more hosts (in turn) have one disk taken (an
/// OSD volume appears on it) or freed again.
async fn churn(files: Vec<PathBuf>, count: usize, every: Duration) {
    let mut next = 0usize;
    let mut tick = tokio::time::interval(every);
    tick.tick().await;
    loop {
        tick.tick().await;
        for _ in 0..count {
            let path = &files[next % files.len()];
            next += 1;
            if let Err(e) = flip_a_disk(path) {
                eprintln!("agent_fleet: cannot change {}: {e}", path.display());
            }
        }
    }
}

fn flip_a_disk(path: &Path) -> anyhow::Result<()> {
    let mut devices: Vec<Value> = serde_json::from_slice(&std::fs::read(path)?)?;
    let Some(d) = devices.last_mut() else { return Ok(()) };
    if d["available"] == json!(true) {
        d["available"] = json!(false);
        d["ceph_device"] = json!(true);
        d["rejected_reasons"] = json!(["Has a FileSystem", "LVM detected"]);
        d["lvs"] = json!([{"name": "osd-block-churn", "osd_id": "99999", "cluster_name": "ceph", "type": "block"}]);
    } else {
        d["available"] = json!(true);
        d["ceph_device"] = json!(false);
        d["rejected_reasons"] = json!([]);
        d["lvs"] = json!([]);
    }
    write_aside(path, &devices)
}
