//! Benchmarks as values: the size of a per-OSD bench and its bounds
//! (`osd`), which OSDs are much slower than comparable ones (`outliers`),
//! a cluster benchmark's passes and phases (`cluster`), what makes a run
//! too short or too small to mean much (`methodology`), and two runs side
//! by side (`compare`).
//!
//! Rates are in Ceph's "MB/s", which `rados bench` computes as MiB per
//! second: the same unit for both benchmarks, so that numbers an operator
//! compares with old `rados bench` logs line up.

pub mod cluster;
pub mod compare;
pub mod methodology;
pub mod osd;
pub mod outliers;

/// Bytes in Ceph's "MB" (`rados bench` divides by 1 048 576).
pub const MB: f64 = 1_048_576.0;

/// A rate in Ceph's MB/s, without decimals from 10 MB/s on.
pub fn format_rate(bytes_per_sec: f64) -> String {
    let mb = bytes_per_sec / MB;
    if mb >= 10.0 {
        format!("{mb:.0} MB/s")
    } else {
        format!("{mb:.1} MB/s")
    }
}

/// A disk's size as vendors label it (decimal units: a "1 TB" disk holds
/// 1 000 204 886 016 bytes), with at most one decimal.
pub fn format_disk_size(bytes: u64) -> String {
    let units = ["B", "kB", "MB", "GB", "TB", "PB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 999.5 && unit + 1 < units.len() {
        v /= 1000.0;
        unit += 1;
    }
    let text = format!("{v:.1}");
    let text = text.strip_suffix(".0").unwrap_or(&text);
    format!("{text} {}", units[unit])
}

#[cfg(test)]
mod tests {
    #[test]
    fn rates_and_sizes_read_as_operators_write_them() {
        assert_eq!(super::format_rate(38.0 * super::MB), "38 MB/s");
        assert_eq!(super::format_rate(2.54 * super::MB), "2.5 MB/s");
        assert_eq!(super::format_disk_size(1_000_204_886_016), "1 TB");
        assert_eq!(super::format_disk_size(10_737_418_240), "10.7 GB");
        assert_eq!(super::format_disk_size(4_000_787_030_016), "4 TB");
        assert_eq!(super::format_disk_size(512), "512 B");
    }
}
