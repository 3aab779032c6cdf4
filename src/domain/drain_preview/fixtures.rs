//! Test values shared by the preview's tests and the pacing's: the
//! sandbox's layout (three hosts of two OSDs, `host0`..`host2` holding
//! osd.0-1, 2-3, 4-5) and its pool, one copy per host.

use super::{CrushItem, PoolRule};

/// Three hosts of two OSDs (the sandbox's layout), 1 GiB OSDs.
pub(crate) fn crush() -> Vec<CrushItem> {
    let mut items = vec![CrushItem {
        id: -1,
        name: "default".into(),
        kind: "root".into(),
        children: vec![-2, -3, -4],
        crush_weight: None,
        device_class: None,
    }];
    for h in 0..3i64 {
        items.push(CrushItem {
            id: -2 - h,
            name: format!("host{h}"),
            kind: "host".into(),
            children: vec![2 * h, 2 * h + 1],
            crush_weight: None,
            device_class: None,
        });
        for o in [2 * h, 2 * h + 1] {
            items.push(CrushItem {
                id: o,
                name: format!("osd.{o}"),
                kind: "osd".into(),
                children: vec![],
                crush_weight: Some(1.0),
                device_class: Some("hdd".into()),
            });
        }
    }
    items
}

pub(crate) fn pool(size: u32) -> PoolRule {
    PoolRule {
        id: 2,
        name: "sandbox".into(),
        size,
        min_size: 1,
        data_shards: 1,
        root: Some("default".into()),
        device_class: None,
        failure_domain: "host".into(),
    }
}
