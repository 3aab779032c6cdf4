//! Which OSDs (or disks) are much slower than the ones they should match.
//!
//! They are compared only with comparable ones: the same device class, the
//! same model where both are known, and a similar size (within
//! `SIMILAR_SIZE` of the smallest of the group: a 4 TB and a 12 TB HDD
//! differ by design, not by fault).
//!
//! The rule: in a group of at least `MIN_GROUP`, one is an outlier when
//! its figure is below `SLOW_FRACTION` of the group's **median**. Why
//! the median and not the mean: one slow disk drags a mean down (a very
//! slow one drags it far, and hides a second slow disk), while the median
//! of three or more stays among the healthy disks as long as fewer than
//! half are slow; and one fast disk (a cache, a newer model) does not make
//! its healthy peers look slow, as it would against a mean or against the
//! median of the others in a group of three. Why at least three: with two
//! nothing says which of the two is wrong. Why half:
//! `ceph tell osd.N bench` (and fio) on the same disk varies by a few tens of
//! percent from run to run (caches, other clients); a disk at less than
//! half the speed of its peers is the failing or mismatched disk the field
//! reports find (38 MB/s among 118-131 MB/s), not noise. Only slow ones
//! are flagged: a fast one slows nobody down. The same rule judges OSD
//! benches (`outliers`) and disk probes (`slow_among` with the probe's
//! figure and unit, `domain::probe::outliers`).

use super::{format_disk_size, format_rate};

pub const MIN_GROUP: usize = 3;
pub const SLOW_FRACTION: f64 = 0.5;
pub const SIMILAR_SIZE: f64 = 1.25;

/// One measured subject (an OSD's latest bench, a disk's latest probe) and
/// what makes subjects comparable.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// Identifies the subject to the caller (an OSD id, an index).
    pub id: u32,
    /// How the message names it ("osd.11", "f5-422-01:/dev/sdb").
    pub name: String,
    pub device_class: Option<String>,
    pub size_bytes: Option<u64>,
    pub model: Option<String>,
    /// The figure compared: higher is better.
    pub value: f64,
}

impl Measured {
    /// An OSD's bench rate, named `osd.N`.
    pub fn osd(
        osd: u32,
        device_class: Option<String>,
        size_bytes: Option<u64>,
        model: Option<String>,
        bytes_per_sec: f64,
    ) -> Measured {
        Measured { id: osd, name: format!("osd.{osd}"), device_class, size_bytes, model, value: bytes_per_sec }
    }
}

/// What the figures are and how the message words them.
#[derive(Debug, Clone, Copy)]
pub struct Figure {
    /// "OSDs", "disks".
    pub noun: &'static str,
    /// Before the value: "" or "4k sync writes ".
    pub what: &'static str,
    pub unit: Unit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Bytes per second, shown in Ceph's MB/s.
    Rate,
    /// Operations per second.
    Iops,
}

impl Unit {
    pub fn show(self, v: f64) -> String {
        match self {
            Unit::Rate => format_rate(v),
            Unit::Iops => format!("{v:.0} IOPS"),
        }
    }

    fn suffix(self) -> &'static str {
        match self {
            Unit::Rate => " MB/s",
            Unit::Iops => " IOPS",
        }
    }
}

/// The OSD benches' figure.
pub const OSD_RATE: Figure = Figure { noun: "OSDs", what: "", unit: Unit::Rate };

#[derive(Debug, Clone, PartialEq)]
pub struct Outlier {
    pub id: u32,
    /// e.g. "osd.11: 38 MB/s, the other 5 HDD OSDs of 1 TB do 118-131 MB/s".
    pub message: String,
}

/// The middle of values sorted ascending (at least one).
pub(crate) fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// Groups of comparable subjects, each sorted by id.
pub fn groups(all: &[Measured]) -> Vec<Vec<&Measured>> {
    let mut by_kind: Vec<Vec<&Measured>> = Vec::new();
    for m in all {
        let class = m.device_class.as_deref().map(str::to_lowercase);
        let same = by_kind.iter_mut().find(|g| {
            let first = g[0];
            first.device_class.as_deref().map(str::to_lowercase) == class
                && first.model == m.model
                && first.size_bytes.is_some() == m.size_bytes.is_some()
        });
        match same {
            Some(g) => g.push(m),
            None => by_kind.push(vec![m]),
        }
    }
    let mut out = Vec::new();
    for mut kind in by_kind {
        kind.sort_by_key(|m| (m.size_bytes, m.id));
        let mut current: Vec<&Measured> = Vec::new();
        for m in kind {
            let fits = match (current.first().and_then(|f| f.size_bytes), m.size_bytes) {
                (Some(first), Some(size)) => (size as f64) <= first as f64 * SIMILAR_SIZE,
                _ => true,
            };
            if !fits {
                out.push(std::mem::take(&mut current));
            }
            current.push(m);
        }
        if !current.is_empty() {
            out.push(current);
        }
    }
    for g in &mut out {
        g.sort_by_key(|m| m.id);
    }
    out
}

/// The slow OSDs by bench rate, by id, each with what it is compared against.
pub fn outliers(all: &[Measured]) -> Vec<Outlier> {
    slow_among(all, OSD_RATE)
}

/// The slow subjects by `figure`, by id, each with what it is compared against.
pub fn slow_among(all: &[Measured], figure: Figure) -> Vec<Outlier> {
    let mut found = Vec::new();
    for group in groups(all) {
        if group.len() < MIN_GROUP {
            continue;
        }
        let mut values: Vec<f64> = group.iter().map(|o| o.value).collect();
        values.sort_by(f64::total_cmp);
        let reference = median(&values);
        for m in &group {
            if m.value < reference * SLOW_FRACTION {
                let mut others: Vec<f64> = group.iter().filter(|o| o.id != m.id).map(|o| o.value).collect();
                others.sort_by(f64::total_cmp);
                found.push(Outlier { id: m.id, message: describe(m, &group, &others, figure) });
            }
        }
    }
    found.sort_by_key(|o| o.id);
    found
}

fn describe(m: &Measured, group: &[&Measured], others: &[f64], figure: Figure) -> String {
    let class = m.device_class.as_deref().map(str::to_uppercase).unwrap_or_else(|| "unclassified".into());
    let size = match group.iter().filter_map(|o| o.size_bytes).min() {
        Some(s) => format!(" of {}", format_disk_size(s)),
        None => String::new(),
    };
    let model = m.model.as_deref().map(|md| format!(" ({md})")).unwrap_or_default();
    let unit = figure.unit;
    let (low, high) = (others[0], others[others.len() - 1]);
    let range = if unit.show(low) == unit.show(high) {
        unit.show(low)
    } else {
        format!("{}-{}", unit.show(low).trim_end_matches(unit.suffix()), unit.show(high))
    };
    format!(
        "{}: {}{}, the other {} {class} {}{size}{model} do {range}",
        m.name,
        figure.what,
        unit.show(m.value),
        others.len(),
        figure.noun
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::bench::MB;

    const TB: u64 = 1_000_204_886_016;

    fn hdd(osd: u32, mb_s: f64) -> Measured {
        Measured::osd(osd, Some("hdd".into()), Some(TB), None, mb_s * MB)
    }

    fn flagged(all: &[Measured]) -> Vec<u32> {
        outliers(all).iter().map(|o| o.id).collect()
    }

    #[test]
    fn the_slow_disk_among_its_peers_is_named_with_their_range() {
        let all = [hdd(1, 118.0), hdd(2, 131.0), hdd(3, 125.0), hdd(11, 38.0), hdd(5, 120.0), hdd(6, 129.0)];
        let found = outliers(&all);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].message, "osd.11: 38 MB/s, the other 5 HDD OSDs of 1 TB do 118-131 MB/s");
    }

    #[test]
    fn two_osds_never_make_an_outlier() {
        assert_eq!(flagged(&[hdd(0, 120.0), hdd(1, 10.0)]), Vec::<u32>::new());
    }

    #[test]
    fn three_are_enough_and_the_fast_ones_are_not_flagged() {
        assert_eq!(flagged(&[hdd(0, 120.0), hdd(1, 110.0), hdd(2, 30.0)]), vec![2]);
        // One fast disk does not make its peers slow: the median is 110.
        assert_eq!(flagged(&[hdd(0, 300.0), hdd(1, 110.0), hdd(2, 100.0)]), Vec::<u32>::new());
    }

    #[test]
    fn noise_within_half_of_the_others_is_not_an_outlier() {
        assert_eq!(flagged(&[hdd(0, 120.0), hdd(1, 90.0), hdd(2, 65.0), hdd(3, 130.0)]), Vec::<u32>::new());
    }

    #[test]
    fn one_very_slow_disk_does_not_hide_a_second_slow_one() {
        // A mean of the others would drop to ~75 for osd.4 and let 40 pass.
        let all = [hdd(0, 120.0), hdd(1, 125.0), hdd(2, 118.0), hdd(3, 2.0), hdd(4, 40.0)];
        assert_eq!(flagged(&all), vec![3, 4]);
    }

    #[test]
    fn only_comparable_osds_are_compared() {
        let mut ssd = hdd(7, 40.0);
        ssd.device_class = Some("ssd".into());
        let mut big = hdd(8, 40.0);
        big.size_bytes = Some(12 * TB);
        let mut other_model = hdd(9, 40.0);
        other_model.model = Some("ST4000VN008".into());
        // osd.7, 8 and 9 are each alone of their kind; the three 1 TB HDDs match each other.
        let all = [hdd(0, 120.0), hdd(1, 125.0), hdd(2, 118.0), ssd, big, other_model];
        assert_eq!(flagged(&all), Vec::<u32>::new());
        let sizes: Vec<usize> = groups(&all).iter().map(Vec::len).collect();
        assert_eq!(sizes, vec![3, 1, 1, 1]);
    }

    #[test]
    fn similar_sizes_group_together() {
        let mut a = hdd(3, 20.0);
        a.size_bytes = Some(TB + TB / 10);
        let all = [hdd(0, 120.0), hdd(1, 125.0), a];
        assert_eq!(flagged(&all), vec![3]);
        let found = outliers(&all);
        assert_eq!(found[0].message, "osd.3: 20 MB/s, the other 2 HDD OSDs of 1 TB do 120-125 MB/s");
    }

    #[test]
    fn other_figures_read_in_their_unit() {
        let disk = |id: u32, iops: f64| Measured {
            id,
            name: format!("h:/dev/sd{}", (b'a' + id as u8) as char),
            device_class: Some("ssd".into()),
            size_bytes: Some(TB),
            model: None,
            value: iops,
        };
        let figure = Figure { noun: "disks", what: "4k sync writes ", unit: Unit::Iops };
        let found = slow_among(&[disk(0, 9500.0), disk(1, 11000.0), disk(2, 120.0), disk(3, 10200.0)], figure);
        assert_eq!(found.len(), 1);
        assert_eq!(
            found[0].message,
            "h:/dev/sdc: 4k sync writes 120 IOPS, the other 3 SSD disks of 1 TB do 9500-11000 IOPS"
        );
    }
}
