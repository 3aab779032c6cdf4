//! What every request handler shares.

use std::sync::Arc;

use crate::agent_server::ceph_volume::release::KnownRelease;
use crate::agent_server::ceph_volume::CephVolume;
use crate::agent_server::config::{AgentConfig, Token};
use crate::agent_server::disks::probe::Prober;
use crate::agent_server::disks::replace_header::HeaderMarker;
use crate::agent_server::disks::zap::Zapper;
use crate::agent_server::disks::zap_osd::OsdZapper;
use crate::agent_server::host_roots::HostRoots;
use crate::agent_server::inventory::kernel::gather::Tools;
use crate::agent_server::inventory::kernel::KernelPaths;
use crate::agent_server::inventory::{read_inventory_file, HostScanner, Inventory, InventoryError, Source};
use crate::agent_server::osd::listing_cache::ListingCache;
use crate::agent_server::osd::start::OsdStarter;
use crate::agent_server::osd::stop::OsdControl;

#[derive(Clone)]
pub struct AgentState {
    pub inventory: Arc<Inventory>,
    pub ceph_volume: Arc<CephVolume>,
    /// Held while a command that changes the host's disks or daemons runs
    /// (ceph-volume, a zap, an OSD stop): one at a time per host, so two
    /// commands never pick the same free disk, and a zap never races the
    /// creation of an OSD.
    pub busy: Arc<tokio::sync::Mutex<()>>,
    /// `None`: no token configured (the agent then listens on loopback only).
    pub token: Option<Arc<Token>>,
    pub osd: Arc<OsdControl>,
    pub starter: Arc<OsdStarter>,
    pub zapper: Arc<Zapper>,
    pub osd_zapper: Arc<OsdZapper>,
    pub prober: Arc<Prober>,
    pub header: Arc<HeaderMarker>,
    /// The last OSD listing, until a command here changes the disks.
    pub listings: Arc<ListingCache>,
    /// ceph-volume's Ceph release, asked now and then (the inventory's too).
    pub release: Arc<KnownRelease>,
}

impl AgentState {
    /// Checks `--inventory-file` now, so that a bad file stops the agent
    /// before it listens.
    pub fn from_config(config: &AgentConfig) -> Result<AgentState, InventoryError> {
        let roots = HostRoots {
            cluster_conf: config.osd_cluster_conf.clone(),
            osd_data: config.osd_data_dir.clone(),
            ..HostRoots::default()
        };
        let ceph_volume = CephVolume {
            program: config.ceph_volume.clone(),
            inventory_timeout: config.inventory_timeout,
            command_timeout: config.ceph_volume_timeout,
        };
        let release = Arc::new(KnownRelease::default());
        let source = match &config.inventory_file {
            Some(path) => {
                read_inventory_file(path)?;
                Source::File { path: path.clone() }
            }
            None => {
                let tools = Tools { timeout: config.inventory_timeout, ..Tools::default() };
                let mut scanner =
                    HostScanner::new(ceph_volume.clone(), KernelPaths::default(), tools, config.names_loop_devices());
                scanner.proc_root = roots.proc.clone();
                scanner.release = release.clone();
                Source::Host(Box::new(scanner))
            }
        };
        let inventory = Arc::new(Inventory::new(config.host_name.clone(), source, config.devices.clone()));
        let ceph_volume = Arc::new(ceph_volume);
        let osd = Arc::new(OsdControl {
            method: config.osd_stop.clone(),
            timeout: config.osd_stop_timeout,
            roots: roots.clone(),
        });
        let starter = Arc::new(OsdStarter {
            method: config.osd_start.clone(),
            timeout: config.osd_start_timeout,
            roots: roots.clone(),
        });
        let prober = Arc::new(Prober {
            inventory: inventory.clone(),
            roots: roots.clone(),
            fio: "fio".into(),
            blkid: "blkid".into(),
        });
        let header =
            Arc::new(HeaderMarker { inventory: inventory.clone(), roots: roots.clone(), blkid: "blkid".into() });
        let osd_zapper = Arc::new(OsdZapper {
            ceph_volume: ceph_volume.clone(),
            roots: roots.clone(),
            systemd: matches!(config.osd_start, crate::agent_server::osd::stop::ControlMethod::Systemd { .. }),
            allowed: config.devices.clone(),
        });
        let zapper = Arc::new(Zapper {
            inventory: inventory.clone(),
            ceph_volume: ceph_volume.clone(),
            roots,
            blkid: "blkid".into(),
        });
        Ok(AgentState {
            inventory,
            ceph_volume,
            busy: Arc::new(tokio::sync::Mutex::new(())),
            token: config.token.clone().map(Arc::new),
            osd,
            starter,
            zapper,
            osd_zapper,
            prober,
            header,
            listings: Arc::default(),
            release,
        })
    }
}
