//! ceph-volume's `human_readable_size`: 1024-based steps, two decimals,
//! units B to PB (`ceph_volume/util/disk.py`).

const UNITS: [&str; 6] = ["B", "KB", "MB", "GB", "TB", "PB"];

/// `4000787030016.0` -> `"3.64 TB"`.
pub fn human_readable_size(bytes: f64) -> String {
    let mut size = bytes;
    let mut unit = UNITS[0];
    for u in UNITS {
        unit = u;
        // Divides on the last unit too, keeping "PB": ceph-volume's loop.
        if size >= 1024.0 {
            size /= 1024.0;
        } else {
            break;
        }
    }
    format!("{size:.2} {unit}")
}

#[cfg(test)]
mod tests {
    use super::human_readable_size;

    #[test]
    fn matches_ceph_volume() {
        let cases = [
            (4000787030016.0, "3.64 TB"),
            (1000204886016.0, "931.51 GB"),
            (274877906944.0, "256.00 GB"),
            (6442450944.0, "6.00 GB"),
            (0.0, "0.00 B"),
            (1023.0, "1023.00 B"),
            (1024.0, "1.00 KB"),
            (5368709120.0, "5.00 GB"),
            (16000900661248.0, "14.55 TB"),
            (500107862016.0, "465.76 GB"),
        ];
        for (bytes, want) in cases {
            assert_eq!(human_readable_size(bytes), want, "{bytes}");
        }
    }

    #[test]
    fn past_the_last_unit() {
        // Python's loop divides once more on the PB step and keeps the unit.
        let two_eb = 2.0 * 1024f64.powi(6);
        assert_eq!(human_readable_size(two_eb), "2.00 PB");
    }
}
