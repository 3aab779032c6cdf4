//! Whether a host's ceph-volume is of another major release than the
//! cluster: the flag `host ls`, the dashboard and `/healthz` show.
//!
//! ceph-volume writes OSDs for the release it belongs to (the BlueStore
//! label, the LVM tags, `raw` vs `lvm` defaults) and lists devices in that
//! release's words; OSDs it makes are started by that host's `ceph-osd`.
//! A host whose packages are of a major the cluster does not run is a
//! host left behind by an upgrade or upgraded ahead of it.
//!
//! The rule compares majors only (18.2.4 beside 18.2.7 is a point release,
//! which Ceph supports mixed). While the cluster runs two majors (an upgrade
//! under way, `ceph versions` lists both), a host matching either is not
//! flagged: an upgrade goes host by host, so during it every host runs the
//! old major or the new one, and flagging either would warn on every host of
//! every upgrade. Only a major the cluster runs nowhere is flagged; once the
//! upgrade ends and the cluster runs one major, the hosts left behind are.
//! A release the daemon cannot read, or a cluster whose releases are not
//! read yet, flags nothing: no warning is made of what is not known.

use crate::domain::ceph_release::{CephRelease, ReleaseError};

/// A host whose ceph-volume is of a major the cluster runs nowhere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleaseMismatch {
    /// The release as the agent reported it (`18.2.7 (reef)`).
    pub agent: String,
    pub agent_major: u32,
    /// The majors the cluster's daemons run, lowest first, each once.
    pub cluster_majors: Vec<u32>,
}

impl ReleaseMismatch {
    /// One line, for a host's row and the health detail.
    pub fn message(&self) -> String {
        format!("ceph-volume is Ceph {}, the cluster runs {}", self.agent, self.cluster_runs())
    }

    /// The cluster's majors: `16 pacific and 18 reef`.
    pub fn cluster_runs(&self) -> String {
        let majors: Vec<String> = self.cluster_majors.iter().map(|m| major_name(*m)).collect();
        majors.join(" and ")
    }
}

/// `18 reef`, or the bare major for one osdkeeper does not know.
fn major_name(major: u32) -> String {
    match crate::domain::ceph_release::Release::of_major(major) {
        Some(r) => r.to_string(),
        None => major.to_string(),
    }
}

/// The major of a release as the agent reported it; None when the text
/// names no version (a major osdkeeper does not know still has its number).
pub fn major_of(reported: &str) -> Option<u32> {
    match CephRelease::parse(reported) {
        Ok(r) => Some(r.release.major()),
        Err(ReleaseError::Unknown { major, .. }) => Some(major),
        Err(ReleaseError::Unreadable(_) | ReleaseError::Mismatch { .. }) => None,
    }
}

/// The flag for a host whose agent reported `agent` (None: no release, as
/// with an inventory file or the kernel's view), against the majors the
/// cluster's daemons run (empty: not read yet).
pub fn release_mismatch(agent: Option<&str>, cluster_majors: &[u32]) -> Option<ReleaseMismatch> {
    let agent = agent?;
    let agent_major = major_of(agent)?;
    if cluster_majors.is_empty() || cluster_majors.contains(&agent_major) {
        return None;
    }
    let mut majors = cluster_majors.to_vec();
    majors.sort_unstable();
    majors.dedup();
    Some(ReleaseMismatch { agent: agent.to_string(), agent_major, cluster_majors: majors })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_of_another_major_is_flagged_and_says_both() {
        let m = release_mismatch(Some("18.2.7 (reef)"), &[16]).expect("reef against pacific");
        assert_eq!((m.agent_major, m.cluster_majors.as_slice()), (18, &[16][..]));
        assert_eq!(m.message(), "ceph-volume is Ceph 18.2.7 (reef), the cluster runs 16 pacific");
        assert!(release_mismatch(Some("16.2.15 (pacific)"), &[18]).is_some(), "left behind");
    }

    #[test]
    fn the_same_major_of_another_point_release_is_not_flagged() {
        assert_eq!(release_mismatch(Some("18.2.4 (reef)"), &[18]), None);
        assert_eq!(release_mismatch(Some("ceph version 18.2.7 (6b0e) reef (stable)"), &[18]), None);
    }

    #[test]
    fn during_an_upgrade_either_major_the_cluster_runs_matches() {
        assert_eq!(release_mismatch(Some("16.2.15 (pacific)"), &[16, 18]), None, "not upgraded yet");
        assert_eq!(release_mismatch(Some("18.2.7 (reef)"), &[18, 16]), None, "upgraded already");
        let m = release_mismatch(Some("20.2.4 (tentacle)"), &[18, 16, 18]).expect("neither");
        assert_eq!(m.cluster_majors, [16, 18], "each major once, lowest first");
        assert!(m.message().ends_with("the cluster runs 16 pacific and 18 reef"), "{}", m.message());
    }

    #[test]
    fn a_major_osdkeeper_does_not_know_is_compared_by_its_number() {
        let m = release_mismatch(Some("21.2.0 (umbrella)"), &[20]).expect("a newer release than osdkeeper knows");
        assert_eq!(m.agent_major, 21);
        assert_eq!(m.message(), "ceph-volume is Ceph 21.2.0 (umbrella), the cluster runs 20 tentacle");
        assert!(release_mismatch(Some("20.2.4 (tentacle)"), &[21]).unwrap().message().ends_with("runs 21"));
        assert_eq!(release_mismatch(Some("21.2.0"), &[21]), None);
    }

    #[test]
    fn what_is_not_known_flags_nothing() {
        assert_eq!(release_mismatch(None, &[16]), None, "no release reported");
        assert_eq!(release_mismatch(Some("18.2.7 (reef)"), &[]), None, "the cluster's releases not read yet");
        assert_eq!(release_mismatch(Some("not a version"), &[16]), None);
        assert_eq!(release_mismatch(Some("18.2.7 (pacific)"), &[16]), None, "contradicts itself: unreadable");
        assert_eq!(major_of("not a version"), None);
    }
}
