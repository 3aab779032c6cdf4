//! How long the in-place way takes to make its new OSDs, at the pace this
//! cluster's own deployments went lately. The degraded window runs from
//! the old OSD's stop through the new one's making to the end of its
//! backfill: on the sandbox the making was over half of it (docs/design/
//! swap.md, "The preview"), so a window of the backfill alone was an
//! estimate nearly three times too short. How long the slot stays empty is the
//! operator's and is not counted.

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
        let made_them = s.phase == DeployPhase::Done && s.attempt == 1 && s.steps.iter().all(|p| p.sent);
        made_them.then_some(())?;
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
pub const RECENT: usize = 5;

/// `count` OSDs made on `host`, at the median pace per OSD of the latest
/// deployments there, or of the latest anywhere when the host made none
/// (hosts of one cluster run the same ceph-volume); none without any.
/// `recent` is newest first.
pub fn making(host: &str, count: usize, recent: &[Made]) -> Option<Making> {
    let usable = |m: &&Made| m.osds > 0 && m.took_ms > 0;
    let here: Vec<&Made> = recent.iter().filter(usable).filter(|m| m.host == host).take(RECENT).collect();
    let (picked, place) = if here.is_empty() {
        (recent.iter().filter(usable).take(RECENT).collect::<Vec<_>>(), "on other hosts".to_string())
    } else {
        (here, format!("on {host}"))
    };
    if picked.is_empty() || count == 0 {
        return None;
    }
    let mut per_osd: Vec<f64> = picked.iter().map(|m| m.took_ms as f64 / 1000.0 / m.osds as f64).collect();
    per_osd.sort_by(f64::total_cmp);
    let mid = per_osd.len() / 2;
    let median = if per_osd.len() % 2 == 1 { per_osd[mid] } else { (per_osd[mid - 1] + per_osd[mid]) / 2.0 };
    let of = match picked.len() {
        1 => format!("as the last deployment {place} went"),
        n => format!("the median of the last {n} deployments {place}"),
    };
    Some(Making { seconds: median * count as f64, basis: format!("{median:.0} s an OSD, {of}") })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn made(host: &str, osds: usize, took_s: i64) -> Made {
        Made { host: host.into(), osds, took_ms: took_s * 1000 }
    }

    #[test]
    fn the_hosts_own_deployments_first_per_osd_and_by_median() {
        let recent = [made("b", 1, 5), made("a", 2, 60), made("a", 1, 40), made("a", 1, 20), made("b", 1, 5)];
        let m = making("a", 2, &recent).unwrap();
        assert_eq!(m.seconds, 60.0, "per OSD 30, 40, 20: median 30, two OSDs");
        assert_eq!(m.basis, "30 s an OSD, the median of the last 3 deployments on a");
        let even = making("a", 1, &recent[..3]).unwrap();
        assert_eq!(even.seconds, 35.0, "30 and 40");
    }

    #[test]
    fn other_hosts_when_this_one_made_none_and_none_without_any() {
        let recent = [made("b", 1, 12), made("c", 0, 50), made("c", 1, 0)];
        let m = making("a", 1, &recent).unwrap();
        assert_eq!((m.seconds, m.basis.as_str()), (12.0, "12 s an OSD, as the last deployment on other hosts went"));
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
