//! `bench osds`: each OSD's latest bench, and why an OSD is much slower
//! than comparable ones.

use super::table::{Align, Table};
use crate::clock::format_ms;
use crate::domain::bench::{format_disk_size, format_rate};
use crate::wire::api::bench::OsdBench;

pub fn osd_bench_table(rows: &[OsdBench]) -> String {
    if rows.is_empty() {
        return "No OSD benches reported\n".into();
    }
    let mut t = Table::new(["OSD", "HOST", "CLASS", "SIZE", "RATE", "IOPS", "STATE", "FINISHED", "OUTLIER"])
        .align(4, Align::Right)
        .align(5, Align::Right);
    for b in rows {
        let rate = b.bytes_per_sec.map(format_rate).unwrap_or_default();
        let note = b.outlier.clone().or_else(|| b.error.clone()).unwrap_or_default();
        t.row([
            format!("osd.{}", b.target.osd_id),
            b.target.host.clone(),
            b.target.device_class.clone().unwrap_or_default(),
            b.target.size_bytes.map(format_disk_size).unwrap_or_default(),
            rate,
            b.iops.map(|i| format!("{i:.0}")).unwrap_or_default(),
            b.state.as_str().to_string(),
            b.finished_at.map(format_ms).unwrap_or_default(),
            note,
        ]);
    }
    t.plain()
}
