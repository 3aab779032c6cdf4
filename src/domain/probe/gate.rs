//! The spec option `osdkeeper.probe` (`domain::spec::extension` reads it):
//! a deployment waits until each new disk of the spec has a finished probe,
//! and refuses a disk whose probe is below a threshold (or, when asked, far
//! below comparable disks). What it decides for one disk is a `GateMiss`,
//! small enough to sit in the planner's per-device verdicts; the words come
//! from `describe`, with the numbers.

use super::{ProbeJob, ProbeMode, ProbeStatus};
use crate::domain::inventory::Device;
use crate::domain::selection::{Pass, Passes, Selection, Skipped};
use crate::domain::spec::Role;

/// What a spec asks of its new disks' probes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProbeGate {
    /// `full`: a quick probe is not enough. `quick` (the default): either.
    pub mode: Option<ProbeMode>,
    /// Per job, the least its figure may be (MB/s for the sequential jobs,
    /// IOPS for the 4k ones), in `ProbeJob::ALL` order.
    pub min: [Option<f64>; 4],
    /// Refuse a disk the probe outliers name.
    pub refuse_outliers: bool,
}

impl ProbeGate {
    pub fn min_of(&self, job: ProbeJob) -> Option<f64> {
        self.min[index(job)]
    }

    pub fn set_min(&mut self, job: ProbeJob, value: f64) {
        self.min[index(job)] = Some(value);
    }

    /// The threshold in the figure's own unit (bytes per second for rates).
    fn threshold(&self, job: ProbeJob) -> Option<f64> {
        let v = self.min_of(job)?;
        Some(match job.unit() {
            crate::domain::bench::outliers::Unit::Rate => v * crate::domain::bench::MB,
            crate::domain::bench::outliers::Unit::Iops => v,
        })
    }
}

fn index(job: ProbeJob) -> usize {
    ProbeJob::ALL.iter().position(|j| *j == job).expect("every job is in ALL")
}

/// Why the gate keeps a disk back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateMiss {
    /// No probe of the disk yet.
    NotProbed,
    /// One is queued or running.
    Pending,
    /// The latest failed and none finished before it.
    Failed,
    /// The spec wants a full probe; the disk has a quick one.
    NeedsFull,
    /// Below the spec's threshold for this job.
    Below(ProbeJob),
    /// Far below comparable disks, and the spec refuses outliers.
    Outlier,
}

impl GateMiss {
    /// A refusal stands until the disk is probed again; the others wait
    /// for a probe to come.
    pub fn refuses(self) -> bool {
        matches!(self, GateMiss::Below(_) | GateMiss::Outlier)
    }
}

/// Whether a new disk with these probes may become an OSD of the spec.
pub fn check(gate: &ProbeGate, status: Option<&ProbeStatus>) -> Result<(), GateMiss> {
    let Some(status) = status else { return Err(GateMiss::NotProbed) };
    if status.pending {
        // A result coming in may change the verdict; never deploy onto a
        // disk fio is writing to.
        return Err(GateMiss::Pending);
    }
    let Some(done) = &status.done else {
        return Err(if status.failure.is_some() { GateMiss::Failed } else { GateMiss::NotProbed });
    };
    if gate.mode == Some(ProbeMode::Full) && done.mode == ProbeMode::Quick {
        return Err(GateMiss::NeedsFull);
    }
    for job in ProbeJob::ALL {
        if gate.threshold(job).is_some_and(|least| done.figures.of(job) < least) {
            return Err(GateMiss::Below(job));
        }
    }
    if gate.refuse_outliers && done.outlier.is_some() {
        return Err(GateMiss::Outlier);
    }
    Ok(())
}

/// The reason, with the numbers, and what to run for a disk that waits.
pub fn describe(gate: &ProbeGate, status: Option<&ProbeStatus>, miss: GateMiss, path: &str) -> String {
    let probe_it = format!("`osdkeeper device probe HOST {path} --yes-i-really-mean-it`");
    let done = status.and_then(|s| s.done.as_ref());
    match miss {
        GateMiss::NotProbed => format!("waits for a disk probe (osdkeeper.probe): {probe_it}"),
        GateMiss::Pending => "waits for its disk probe, queued or running (osdkeeper.probe)".to_string(),
        GateMiss::Failed => format!(
            "waits for a disk probe (osdkeeper.probe): the last one failed ({}); {probe_it}",
            status.and_then(|s| s.failure.as_deref()).unwrap_or("no reason recorded")
        ),
        GateMiss::NeedsFull => format!(
            "waits for a full disk probe (osdkeeper.probe.mode: full; it has a quick one): \
             `osdkeeper device probe HOST {path} --yes-i-really-mean-it --full`"
        ),
        GateMiss::Below(job) => {
            let least = gate.min_of(job).unwrap_or_default();
            let (found, id) = done.map(|d| (d.figures.of(job), d.probe_id)).unwrap_or_default();
            format!(
                "refused by osdkeeper.probe.{} {}: its {} do {} (probe {id})",
                job.threshold_key(),
                trim_number(least),
                job.title(),
                job.unit().show(found)
            )
        }
        GateMiss::Outlier => format!(
            "refused by osdkeeper.probe.refuse_outliers: {}",
            done.and_then(|d| d.outlier.as_deref()).unwrap_or("far below comparable disks")
        ),
    }
}

/// Takes out of a host's selection the new disks the gate keeps back, each
/// into `skipped` with its verdict. A new disk is one the inventory calls
/// available; a disk that already holds an OSD, or a path the inventory
/// does not list, is left as cephadm chose it. With DB, WAL or journal
/// devices the host's OSDs share them, and ceph-volume pairs them by
/// position: they are made together or, while one disk waits or is
/// refused, not at all.
pub fn hold_back(gate: &ProbeGate, devices: &[Device], sel: &mut Selection) {
    let index = |path: &str| devices.iter().position(|d| *d.path == *path);
    let verdict = |path: &str| -> Option<(usize, GateMiss)> {
        let i = index(path)?;
        let d = &devices[i];
        if !d.available {
            return None;
        }
        check(gate, d.probe.as_deref()).err().map(|miss| (i, miss))
    };
    let roles = [Role::Data, Role::Db, Role::Wal, Role::Journal];
    let shared = !sel.db.is_empty() || !sel.wal.is_empty() || !sel.journal.is_empty();
    let mut kept: Vec<Skipped> = Vec::new();
    if shared {
        let misses: Vec<(Role, usize, GateMiss)> = roles
            .iter()
            .flat_map(|&role| sel.role(role).iter().filter_map(move |p| verdict(p).map(|(i, m)| (role, i, m))))
            .collect();
        if misses.is_empty() {
            return;
        }
        for role in roles {
            for path in std::mem::take(role_mut(sel, role)) {
                let Some(i) = index(&path) else { continue };
                let pass = match misses.iter().find(|(r, j, _)| *r == role && *j == i) {
                    Some((_, _, miss)) => Pass::Probe(*miss),
                    None => Pass::ProbeShared,
                };
                kept.push(Skipped { device: i, passes: Passes::single(role, pass) });
            }
        }
    } else {
        sel.data.retain(|path| match verdict(path) {
            Some((i, miss)) => {
                kept.push(Skipped { device: i, passes: Passes::single(Role::Data, Pass::Probe(miss)) });
                false
            }
            None => true,
        });
    }
    if kept.is_empty() {
        return;
    }
    sel.skipped.extend(kept);
    sel.skipped.sort_by_key(|s| s.device);
}

fn role_mut(sel: &mut Selection, role: Role) -> &mut Vec<std::sync::Arc<str>> {
    match role {
        Role::Data => &mut sel.data,
        Role::Db => &mut sel.db,
        Role::Wal => &mut sel.wal,
        Role::Journal => &mut sel.journal,
    }
}

/// A threshold as written: `100`, `2.5`.
fn trim_number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        v.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::bench::MB;
    use crate::domain::probe::{ProbeDone, ProbeFigures};

    fn done(mode: ProbeMode, sync_iops: f64, seq_write_mb: f64) -> ProbeStatus {
        ProbeStatus {
            done: Some(ProbeDone {
                probe_id: 7,
                mode,
                figures: ProbeFigures {
                    seq_write_bps: seq_write_mb * MB,
                    seq_read_bps: 500.0 * MB,
                    rand_read_iops: 80_000.0,
                    sync_write_iops: sync_iops,
                },
                finished_at: 0,
                outlier: None,
            }),
            pending: false,
            failure: None,
        }
    }

    fn gate(sync_min: Option<f64>) -> ProbeGate {
        let mut g = ProbeGate::default();
        if let Some(v) = sync_min {
            g.set_min(ProbeJob::SyncWrite4k, v);
        }
        g
    }

    #[test]
    fn a_disk_waits_until_it_has_a_finished_probe() {
        let g = gate(None);
        assert_eq!(check(&g, None), Err(GateMiss::NotProbed));
        let queued = ProbeStatus { pending: true, ..ProbeStatus::default() };
        assert_eq!(check(&g, Some(&queued)), Err(GateMiss::Pending));
        let failed = ProbeStatus { failure: Some("the agent refused".into()), ..ProbeStatus::default() };
        assert_eq!(check(&g, Some(&failed)), Err(GateMiss::Failed));
        assert_eq!(check(&g, Some(&done(ProbeMode::Quick, 400.0, 300.0))), Ok(()));
        // A newer probe under way is waited for, though an older one passed.
        let mut again = done(ProbeMode::Quick, 400.0, 300.0);
        again.pending = true;
        assert_eq!(check(&g, Some(&again)), Err(GateMiss::Pending));
        assert!(!GateMiss::Pending.refuses() && GateMiss::Below(ProbeJob::SeqRead).refuses());
    }

    #[test]
    fn thresholds_refuse_with_the_number_found() {
        let g = gate(Some(2000.0));
        let slow = done(ProbeMode::Quick, 420.0, 300.0);
        let miss = check(&g, Some(&slow)).unwrap_err();
        assert_eq!(miss, GateMiss::Below(ProbeJob::SyncWrite4k));
        assert_eq!(
            describe(&g, Some(&slow), miss, "/dev/sdb"),
            "refused by osdkeeper.probe.min_sync_write_iops 2000: its 4k sync writes do 420 IOPS (probe 7)"
        );
        assert_eq!(check(&g, Some(&done(ProbeMode::Quick, 2000.0, 300.0))), Ok(()), "the threshold itself passes");
        // Rates are in MB/s as written in the spec.
        let mut g = ProbeGate::default();
        g.set_min(ProbeJob::SeqWrite, 100.0);
        assert_eq!(check(&g, Some(&done(ProbeMode::Full, 1.0, 99.5))), Err(GateMiss::Below(ProbeJob::SeqWrite)));
        assert_eq!(check(&g, Some(&done(ProbeMode::Full, 1.0, 100.0))), Ok(()));
    }

    #[test]
    fn a_full_probe_can_be_required_and_outliers_refused() {
        let g = ProbeGate { mode: Some(ProbeMode::Full), ..ProbeGate::default() };
        let quick = done(ProbeMode::Quick, 400.0, 300.0);
        assert_eq!(check(&g, Some(&quick)), Err(GateMiss::NeedsFull));
        assert_eq!(
            describe(&g, Some(&quick), GateMiss::NeedsFull, "/dev/sdb"),
            "waits for a full disk probe (osdkeeper.probe.mode: full; it has a quick one): \
             `osdkeeper device probe HOST /dev/sdb --yes-i-really-mean-it --full`"
        );
        assert_eq!(check(&g, Some(&done(ProbeMode::Full, 400.0, 300.0))), Ok(()));
        let mut odd = done(ProbeMode::Quick, 400.0, 300.0);
        odd.done.as_mut().unwrap().outlier = Some("h:/dev/sdb: 4k sync writes 400 IOPS, ...".into());
        assert_eq!(check(&ProbeGate::default(), Some(&odd)), Ok(()), "outliers pass unless refused");
        let refusing = ProbeGate { refuse_outliers: true, ..ProbeGate::default() };
        assert_eq!(check(&refusing, Some(&odd)), Err(GateMiss::Outlier));
        assert_eq!(
            describe(&refusing, Some(&odd), GateMiss::Outlier, "/dev/sdb"),
            "refused by osdkeeper.probe.refuse_outliers: h:/dev/sdb: 4k sync writes 400 IOPS, ..."
        );
        assert_eq!(
            describe(&refusing, None, GateMiss::NotProbed, "/dev/sdc"),
            "waits for a disk probe (osdkeeper.probe): `osdkeeper device probe HOST /dev/sdc --yes-i-really-mean-it`"
        );
    }

    fn disk(path: &str, available: bool, probe: Option<ProbeStatus>) -> Device {
        let report = crate::domain::inventory::DeviceReport { path: path.into(), available, ..Default::default() };
        Device { report, probe: probe.map(std::sync::Arc::new), ..Device::default() }
    }

    fn sel(data: &[&str], db: &[&str]) -> Selection {
        Selection {
            data: data.iter().map(|p| std::sync::Arc::from(*p)).collect(),
            db: db.iter().map(|p| std::sync::Arc::from(*p)).collect(),
            ..Selection::default()
        }
    }

    fn kept(s: &Selection) -> Vec<(usize, Pass)> {
        s.skipped.iter().map(|k| (k.device, k.passes.iter().next().unwrap().1)).collect()
    }

    #[test]
    fn new_disks_wait_one_by_one_and_used_ones_pass() {
        let g = gate(Some(2000.0));
        let devices = [
            disk("/dev/sda", false, None),
            disk("/dev/sdb", true, Some(done(ProbeMode::Quick, 9000.0, 300.0))),
            disk("/dev/sdc", true, None),
            disk("/dev/sdd", true, Some(done(ProbeMode::Quick, 300.0, 300.0))),
        ];
        // sda holds an OSD of the spec already (cephadm lists it again);
        // /dev/sdz is a path the inventory does not list.
        let mut s = sel(&["/dev/sda", "/dev/sdb", "/dev/sdc", "/dev/sdd", "/dev/sdz"], &[]);
        hold_back(&g, &devices, &mut s);
        assert_eq!(s.data.iter().map(|p| &**p).collect::<Vec<_>>(), ["/dev/sda", "/dev/sdb", "/dev/sdz"]);
        assert_eq!(
            kept(&s),
            [(2, Pass::Probe(GateMiss::NotProbed)), (3, Pass::Probe(GateMiss::Below(ProbeJob::SyncWrite4k)))]
        );
    }

    #[test]
    fn disks_sharing_a_db_device_are_made_together() {
        let g = ProbeGate::default();
        let ok = || Some(done(ProbeMode::Quick, 9000.0, 300.0));
        let devices = [disk("/dev/nvme0n1", true, None), disk("/dev/sdb", true, ok()), disk("/dev/sdc", true, ok())];
        let mut s = sel(&["/dev/sdb", "/dev/sdc"], &["/dev/nvme0n1"]);
        hold_back(&g, &devices, &mut s);
        assert!(s.data.is_empty() && s.db.is_empty());
        assert_eq!(kept(&s), [(0, Pass::Probe(GateMiss::NotProbed)), (1, Pass::ProbeShared), (2, Pass::ProbeShared)]);
        let devices = [disk("/dev/nvme0n1", true, ok()), disk("/dev/sdb", true, ok()), disk("/dev/sdc", true, ok())];
        let mut s = sel(&["/dev/sdb", "/dev/sdc"], &["/dev/nvme0n1"]);
        hold_back(&g, &devices, &mut s);
        assert_eq!((s.data.len(), s.db.len(), s.skipped.len()), (2, 1, 0), "all probed: all made");
    }
}
