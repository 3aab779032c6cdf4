//! How long the in-place way takes to make its new OSDs, at the pace this
//! cluster's own deployments went lately. The degraded window runs from
//! the old OSD's stop through the new one's making to the end of its
//! backfill: on the sandbox the backfill alone was estimated at 8 s of a
//! 22 s window, and the making is 6-9 s of it (docs/design/swap.md, "The
//! degraded window"). A deployment's time has a fixed part (its rounds,
//! the verification) beside ceph-volume's per OSD, so deployments of as
//! many OSDs as the way makes are preferred to a pace per OSD. It counts
//! from the deployment's creation, so time queued behind another one of
//! its host counts too; the median keeps such outliers out. How long the
//! slot stays empty is the operator's and is not counted.

use crate::domain::cluster::same_host;
use crate::domain::deploy::{DeployPhase, DeploymentRecord};

/// A deployment that made its OSDs.
#[derive(Debug, Clone, PartialEq)]
pub struct Made {
    pub host: String,
    pub osds: usize,
    /// From its creation to its OSDs seen up and in.
    pub took_ms: i64,
}

impl Made {
    /// A deployment that ended well at its first try (a failed try's time
    /// says nothing of the pace), every prepare sent: one that found its
    /// OSDs already made, as after a restart or on a cluster whose OSDs
    /// predate osdkeeper, ends in a second.
    pub fn of(d: &DeploymentRecord) -> Option<Made> {
        let s = &d.state;
        if s.phase != DeployPhase::Done || s.attempt != 1 || !s.steps.iter().all(|p| p.sent) {
            return None;
        }
        Some(Made { host: s.host.clone(), osds: s.osds.len(), took_ms: d.finished_at? - d.created_at })
    }
}

/// The making's estimate and where it comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct Making {
    pub seconds: f64,
    /// "41 s an OSD, the median of the last 3 deployments on f5-422-03".
    pub basis: String,
}

/// The deployments an estimate looks at, newest first.
const RECENT: usize = 5;

/// `count` OSDs made on `host`: the median time of the latest deployments
/// there that made as many, else `count` times their median pace per OSD;
/// from the latest anywhere when the host made none (hosts of one cluster
/// run the same ceph-volume); none without any. `recent` is newest first.
pub fn making(host: &str, count: usize, recent: &[Made]) -> Option<Making> {
    let usable = |m: &&Made| m.osds > 0 && m.took_ms > 0;
    let here: Vec<&Made> = recent.iter().filter(usable).filter(|m| same_host(&m.host, host)).take(RECENT).collect();
    let (picked, place) = if here.is_empty() {
        (recent.iter().filter(usable).take(RECENT).collect::<Vec<_>>(), "on other hosts".to_string())
    } else {
        (here, format!("on {host}"))
    };
    if picked.is_empty() || count == 0 {
        return None;
    }
    let alike: Vec<&&Made> = picked.iter().filter(|m| m.osds == count).collect();
    let of = |n: usize, what: &str| match n {
        1 => format!("as the last deployment {what}{place} went"),
        n => format!("the median of the last {n} deployments {what}{place}"),
    };
    if !alike.is_empty() {
        let seconds = median(alike.iter().map(|m| m.took_ms as f64 / 1000.0).collect());
        let osds = if count == 1 { "of 1 OSD ".to_string() } else { format!("of {count} OSDs ") };
        return Some(Making { seconds, basis: of(alike.len(), &osds) });
    }
    let per_osd = median(picked.iter().map(|m| m.took_ms as f64 / 1000.0 / m.osds as f64).collect());
    Some(Making { seconds: per_osd * count as f64, basis: format!("{per_osd:.0} s an OSD, {}", of(picked.len(), "")) })
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    crate::domain::bench::outliers::median(&values)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn made(host: &str, osds: usize, took_s: i64) -> Made {
        Made { host: host.into(), osds, took_ms: took_s * 1000 }
    }

    #[test]
    fn the_hosts_own_deployments_of_as_many_osds_first() {
        let recent = [made("b", 1, 5), made("a", 2, 60), made("a", 1, 40), made("a", 1, 20), made("b", 1, 5)];
        let one = making("a", 1, &recent).unwrap();
        assert_eq!((one.seconds, one.basis.as_str()), (30.0, "the median of the last 2 deployments of 1 OSD on a"));
        let two = making("a.example.org", 2, &recent).unwrap();
        assert_eq!((two.seconds, two.basis.as_str()), (60.0, "as the last deployment of 2 OSDs on a.example.org went"));
    }

    #[test]
    fn otherwise_a_pace_per_osd_by_median() {
        let recent = [made("a", 2, 60), made("a", 1, 40), made("a", 1, 20)];
        let m = making("a", 3, &recent).unwrap();
        assert_eq!(m.seconds, 90.0, "per OSD 30, 40, 20: median 30, three OSDs");
        assert_eq!(m.basis, "30 s an OSD, the median of the last 3 deployments on a");
        let even = making("a", 3, &recent[..2]).unwrap();
        assert_eq!(even.seconds, 105.0, "30 and 40");
    }

    #[test]
    fn other_hosts_when_this_one_made_none_and_none_without_any() {
        let recent = [made("b", 1, 12), made("c", 0, 50), made("c", 1, 0)];
        let m = making("a", 2, &recent).unwrap();
        assert_eq!((m.seconds, m.basis.as_str()), (24.0, "12 s an OSD, as the last deployment on other hosts went"));
        assert_eq!(making("a", 1, &recent[1..]), None, "no OSD, no time: nothing to go by");
        assert_eq!(making("a", 0, &recent), None);
    }

    #[test]
    fn only_deployments_that_prepared_their_osds_at_the_first_try_count() {
        use crate::domain::deploy::{Deployment, NewOsd, OsdKind};
        let argv = ["raw", "prepare", "--data", "/dev/sdb"].map(String::from).to_vec();
        let mut d = Deployment::new("a".into(), "osd.x".into(), None, 1, "k".into(), None, vec![(argv, vec![])]);
        let osd = NewOsd {
            id: 3,
            osd_fsid: "f".into(),
            kind: OsdKind::Raw,
            device: "/dev/sdb".into(),
            activated: true,
            started: true,
            verified: true,
        };
        (d.osds, d.phase, d.steps[0].sent) = (vec![osd], DeployPhase::Done, true);
        let rec = DeploymentRecord {
            id: 1,
            number: 1,
            subject: "a:osd.x".into(),
            host: Some("a".into()),
            state: d,
            waiting_on: None,
            last_error: None,
            actor: None,
            created_at: 1_000,
            updated_at: 31_000,
            finished_at: Some(31_000),
            failures: 0,
            version: 5,
        };
        assert_eq!(Made::of(&rec), Some(Made { host: "a".into(), osds: 1, took_ms: 30_000 }));
        let mut found_made = rec.clone();
        found_made.state.steps[0].sent = false;
        assert_eq!(Made::of(&found_made), None, "its OSD was there already");
        let mut retried = rec.clone();
        retried.state.attempt = 2;
        assert_eq!(Made::of(&retried), None);
        let mut failed = rec.clone();
        failed.state.phase = DeployPhase::GaveUp;
        assert_eq!(Made::of(&failed), None);
    }

    #[test]
    fn only_the_latest_few_count() {
        let mut recent = vec![made("a", 1, 10); RECENT];
        recent.push(made("a", 1, 1000));
        recent.push(made("a", 1, 1000));
        assert_eq!(making("a", 1, &recent).unwrap().seconds, 10.0);
    }
}
