//! Which probed disks are far below disks of their kind, by the rule the
//! OSD benches use (`domain::bench::outliers`: below half the median of a
//! group of three or more), applied to each of the four figures.
//!
//! Disks are of a kind when they have the same rotational class and a
//! similar size; their model is left out on purpose: the disk this is
//! meant to find is the consumer SSD among data-centre SSDs, a different
//! model that would otherwise only be compared with itself. Quick and full
//! probes are never compared with each other: a quick probe's small region
//! sits in caches a full one gets past.

use super::{ProbeFigures, ProbeJob, ProbeMode};
use crate::domain::bench::outliers::{slow_among, Figure, Measured};

/// A disk's latest finished probe and what makes disks comparable.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbedDisk {
    /// How messages name it ("f5-422-01:/dev/sdb").
    pub name: String,
    /// "hdd", "ssd"; `None` when unknown.
    pub class: Option<String>,
    pub size_bytes: Option<u64>,
    pub mode: ProbeMode,
    pub figures: ProbeFigures,
}

/// For each disk far below its kind (by index into `all`), why: each
/// figure it is slow in, joined with "; ".
pub fn slow_disks(all: &[ProbedDisk]) -> Vec<(usize, String)> {
    let mut found: Vec<(usize, Vec<String>)> = Vec::new();
    for mode in [ProbeMode::Quick, ProbeMode::Full] {
        for job in ProbeJob::ALL {
            let measured: Vec<Measured> = all
                .iter()
                .enumerate()
                .filter(|(_, d)| d.mode == mode)
                .map(|(i, d)| Measured {
                    id: u32::try_from(i).unwrap_or(u32::MAX),
                    name: d.name.clone(),
                    device_class: d.class.clone(),
                    size_bytes: d.size_bytes,
                    model: None,
                    value: d.figures.of(job),
                })
                .collect();
            let what = match job {
                ProbeJob::SeqWrite => "sequential writes ",
                ProbeJob::SeqRead => "sequential reads ",
                ProbeJob::RandRead4k => "4k random reads ",
                ProbeJob::SyncWrite4k => "4k sync writes ",
            };
            let figure = Figure { noun: "disks", what, unit: job.unit() };
            for o in slow_among(&measured, figure) {
                let text = format!("{} ({} probes)", o.message, mode.as_str());
                match found.iter_mut().find(|(i, _)| *i == o.id as usize) {
                    Some((_, texts)) => texts.push(text),
                    None => found.push((o.id as usize, vec![text])),
                }
            }
        }
    }
    found.sort_by_key(|(i, _)| *i);
    found.into_iter().map(|(i, texts)| (i, texts.join("; "))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::bench::MB;

    const TB: u64 = 1_000_204_886_016;

    fn ssd(name: &str, sync_iops: f64) -> ProbedDisk {
        ProbedDisk {
            name: name.into(),
            class: Some("ssd".into()),
            size_bytes: Some(TB),
            mode: ProbeMode::Quick,
            figures: ProbeFigures {
                seq_write_bps: 480.0 * MB,
                seq_read_bps: 520.0 * MB,
                rand_read_iops: 90_000.0,
                sync_write_iops: sync_iops,
            },
        }
    }

    #[test]
    fn the_ssd_without_power_loss_protection_is_named() {
        let all = [
            ssd("h1:/dev/sdb", 11_000.0),
            ssd("h1:/dev/sdc", 9_800.0),
            ssd("h2:/dev/sdb", 420.0),
            ssd("h2:/dev/sdc", 10_400.0),
        ];
        assert_eq!(
            slow_disks(&all),
            [(
                2,
                "h2:/dev/sdb: 4k sync writes 420 IOPS, the other 3 SSD disks of 1 TB do 9800-11000 IOPS (quick probes)"
                    .to_string()
            )]
        );
    }

    #[test]
    fn every_slow_figure_is_said_and_kinds_and_modes_stay_apart() {
        let mut slow = ssd("h3:/dev/sdd", 400.0);
        slow.figures.seq_write_bps = 90.0 * MB;
        let all = [ssd("h1:/dev/sdb", 11_000.0), ssd("h1:/dev/sdc", 9_800.0), slow];
        let found = slow_disks(&all);
        assert_eq!(found.len(), 1);
        assert_eq!(
            found[0].1,
            "h3:/dev/sdd: sequential writes 90 MB/s, the other 2 SSD disks of 1 TB do 480 MB/s (quick probes); \
             h3:/dev/sdd: 4k sync writes 400 IOPS, the other 2 SSD disks of 1 TB do 9800-11000 IOPS (quick probes)"
        );
        // Another model is still of the same kind; a full probe or an HDD is not.
        let mut full = ssd("h4:/dev/sdb", 400.0);
        full.mode = ProbeMode::Full;
        let mut hdd = ssd("h4:/dev/sdc", 400.0);
        hdd.class = Some("hdd".into());
        let all = [ssd("h1:/dev/sdb", 11_000.0), ssd("h1:/dev/sdc", 9_800.0), full, hdd];
        assert!(slow_disks(&all).is_empty(), "{:?}", slow_disks(&all));
    }
}
