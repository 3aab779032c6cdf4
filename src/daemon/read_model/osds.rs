//! The OSD list from memory: every OSD of the last good read of the
//! cluster with its host and devices (`ceph osd metadata`, read again when
//! the OSDs change and at least every `METADATA_TTL`), the phase of its
//! removal and its latest bench; filtered and paged per request.

use std::collections::HashMap;
use std::time::Duration;

use crate::ceph::ClusterState;
use crate::domain::cluster::OsdDevices;
use crate::domain::removal::Phase;
use crate::wire::api::osds::{OsdQuery, OsdRow};
use crate::wire::api::Page;

/// How long OSD metadata is reused while the OSDs (ids, up, destroyed)
/// stay the same: a host or device changes only when an OSD restarts,
/// which a read of the cluster shows as down and up, unless both fall
/// between two reads.
pub const METADATA_TTL: Duration = Duration::from_secs(60);

/// Each OSD's devices and metadata host, by id.
pub type Metadata = HashMap<u32, OsdDevices>;

/// Each OSD's latest bench: bytes per second and why it is an outlier.
pub type BenchBrief = HashMap<u32, (f64, Option<String>)>;

/// What makes OSD metadata stale: the OSDs, whether up, whether destroyed.
pub fn metadata_key(state: &ClusterState) -> Vec<(u32, bool, bool)> {
    state.osds.iter().map(|o| (o.id, o.up, o.destroyed)).collect()
}

/// Every OSD, by id.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OsdRows {
    rows: Vec<OsdRow>,
}

impl OsdRows {
    pub fn build(state: &ClusterState, meta: &Metadata, phases: &HashMap<u32, Phase>, benches: &BenchBrief) -> OsdRows {
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
                    removal: phases.get(&o.id).copied(),
                    bench_bytes_per_sec: benches.get(&o.id).map(|b| b.0),
                    bench_outlier: benches.get(&o.id).and_then(|b| b.1.clone()),
                }
            })
            .collect();
        rows.sort_by_key(|r| r.id);
        OsdRows { rows }
    }

    /// The rows `q` asks for, with the total before paging (so that a
    /// picker can say "200 of 9000").
    pub fn page(&self, q: &OsdQuery) -> Page<OsdRow> {
        let filter = q.q.as_deref().and_then(OsdFilter::parse);
        let matching = self
            .rows
            .iter()
            .filter(|r| q.host.as_ref().is_none_or(|h| r.host.as_ref() == Some(h)))
            .filter(|r| filter.as_ref().is_none_or(|f| f.matches(r)));
        let page = Page::of(matching.collect::<Vec<&OsdRow>>(), q.offset, q.limit);
        Page { items: page.items.into_iter().cloned().collect(), total: page.total }
    }
}

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
