//! Every OSD with its host, devices, weight, state and removal, filtered
//! and paged.

use std::collections::HashMap;

use crate::daemon::{Daemon, DaemonError};
use crate::domain::cluster::OsdDevices;
use crate::domain::removal::Phase;
use crate::wire::api::osds::{OsdQuery, OsdRow};
use crate::wire::api::Page;

/// What `q` asks for, parsed once.
enum OsdFilter {
    Id(u32),
    Text(String),
}

impl OsdFilter {
    fn parse(q: &str) -> Option<OsdFilter> {
        let q = q.trim().to_lowercase();
        if q.is_empty() {
            return None;
        }
        let bare = q.strip_prefix("osd.").unwrap_or(&q);
        match bare.parse::<u32>() {
            Ok(id) if bare.bytes().all(|b| b.is_ascii_digit()) => Some(OsdFilter::Id(id)),
            _ => Some(OsdFilter::Text(q)),
        }
    }

    fn matches(&self, row: &OsdRow) -> bool {
        match self {
            OsdFilter::Id(id) => row.id == *id,
            OsdFilter::Text(t) => {
                row.host.as_deref().is_some_and(|h| h.to_lowercase().contains(t.as_str()))
                    || row.devices.iter().any(|d| d.to_lowercase().contains(t.as_str()))
            }
        }
    }
}

impl Daemon {
    pub async fn osds(&self, q: &OsdQuery) -> Result<Page<OsdRow>, DaemonError> {
        let state = self.ceph.state().await.map_err(DaemonError::cluster_unreadable)?;
        let meta: HashMap<u32, OsdDevices> = match self.ceph.all_osd_devices().await {
            Ok(all) => all.into_iter().collect(),
            Err(e) => {
                // The list still shows every OSD, with its CRUSH host and no devices.
                tracing::warn!("cannot read OSD metadata: {e}");
                HashMap::new()
            }
        };
        let active: HashMap<u32, Phase> =
            self.store.active_removals().await?.into_iter().map(|r| (r.removal.osd_id, r.removal.phase)).collect();
        let benches = match self.bench_brief().await {
            Ok(b) => b,
            Err(e) => {
                // The list still shows every OSD, without bench results.
                tracing::warn!("cannot read the OSD bench results: {e}");
                HashMap::new()
            }
        };
        let filter = q.q.as_deref().and_then(OsdFilter::parse);
        let mut rows: Vec<OsdRow> = state
            .osds
            .iter()
            .map(|o| {
                let m = meta.get(&o.id);
                OsdRow {
                    id: o.id,
                    host: m.map(|m| m.hostname.clone()).filter(|h| !h.is_empty()).or_else(|| o.crush_host.clone()),
                    crush_weight: o.crush_weight,
                    up: o.up,
                    is_in: o.is_in,
                    destroyed: o.destroyed,
                    pgs: o.pgs,
                    devices: m.map(|m| m.dev_nodes.clone()).unwrap_or_default(),
                    removal: active.get(&o.id).copied(),
                    bench_bytes_per_sec: benches.get(&o.id).map(|b| b.0),
                    bench_outlier: benches.get(&o.id).and_then(|b| b.1.clone()),
                }
            })
            .filter(|r| q.host.as_ref().is_none_or(|h| r.host.as_ref() == Some(h)))
            .filter(|r| filter.as_ref().is_none_or(|f| f.matches(r)))
            .collect();
        rows.sort_by_key(|r| r.id);
        // The total before paging, so that a picker can say "200 of 9000".
        Ok(Page::of(rows, q.offset, q.limit))
    }
}
