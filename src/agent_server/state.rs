//! What every request handler shares.

use std::sync::Arc;

use super::ceph_volume::CephVolume;
use super::config::{AgentConfig, Token};
use super::inventory::{read_inventory_file, HostScanner, Inventory, InventoryError, Source};
use super::kernel_inventory::gather::Tools;
use super::kernel_inventory::KernelPaths;

#[derive(Clone)]
pub struct AgentState {
    pub inventory: Arc<Inventory>,
    pub ceph_volume: Arc<CephVolume>,
    /// Held while a command that changes the host's disks runs: one at a
    /// time per host, so two commands never pick the same free disk.
    pub busy: Arc<tokio::sync::Mutex<()>>,
    /// `None`: no token configured (the agent then listens on loopback only).
    pub token: Option<Arc<Token>>,
}

impl AgentState {
    /// Checks `--inventory-file` now, so that a bad file stops the agent
    /// before it listens.
    pub fn from_config(config: &AgentConfig) -> Result<AgentState, InventoryError> {
        let ceph_volume = CephVolume {
            program: config.ceph_volume.clone(),
            inventory_timeout: config.inventory_timeout,
            command_timeout: config.ceph_volume_timeout,
        };
        let source = match &config.inventory_file {
            Some(path) => {
                read_inventory_file(path)?;
                Source::File { path: path.clone() }
            }
            None => {
                let tools = Tools { timeout: config.inventory_timeout, ..Tools::default() };
                Source::Host(Box::new(HostScanner::new(
                    ceph_volume.clone(),
                    KernelPaths::default(),
                    tools,
                    config.names_loop_devices(),
                )))
            }
        };
        Ok(AgentState {
            inventory: Arc::new(Inventory::new(config.host_name.clone(), source, config.devices.clone())),
            ceph_volume: Arc::new(ceph_volume),
            busy: Arc::new(tokio::sync::Mutex::new(())),
            token: config.token.clone().map(Arc::new),
        })
    }
}
