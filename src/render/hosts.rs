//! `host ls`: cephadm's `orch host ls` columns, with why a host is offline.

use super::table::Table;
use crate::clock::format_ms;
use crate::wire::api::hosts::{Host, HostDrainStatus, HostDrainStop};

pub fn host_table(hosts: &[Host]) -> String {
    let mut t = Table::new(["HOST", "ADDR", "LABELS", "STATUS", "CEPH VOLUME"]);
    let mut flagged = Vec::new();
    for h in hosts {
        let status = match h.unreachable_since {
            Some(since) => {
                format!("Offline since {} ({})", format_ms(since), h.last_error.as_deref().unwrap_or_default())
            }
            None => String::new(),
        };
        let mut release = h.ceph_release.clone().unwrap_or_default();
        if let Some(why) = &h.release_mismatch {
            // A marker in the row, the reason under the table: a row stays one line.
            release.push_str(" *");
            flagged.push(format!("  {}: {why}\n", h.name));
        }
        t.row([h.name.clone(), h.addr.clone(), h.labels.join(" "), status, release]);
    }
    let mut out = format!("{}{} hosts in cluster\n", t.plain(), hosts.len());
    if !flagged.is_empty() {
        out.push_str("* ceph-volume of a major release the cluster does not run:\n");
        out.extend(flagged);
    }
    out
}

/// `host drain status HOST`: the host's totals, then its removals as `osd rm status` lists them.
pub fn host_drain_text(s: &HostDrainStatus) -> String {
    let t = &s.totals;
    let mut out = format!(
        "Host {}: {} {}, {} still draining or queued; {} OSD(s) left in the cluster{}\n",
        s.host,
        t.removals,
        if t.removals == 1 { "removal" } else { "removals" },
        t.draining,
        s.osds_in_cluster.len(),
        if s.no_schedule { " (_no_schedule: specs skip it)" } else { "" },
    );
    if t.pgs_at_start > 0 || t.bytes_left > 0.0 {
        out.push_str(&format!(
            "PGs left {} of {}, {} still to move, ETA {}\n",
            t.pgs_left,
            t.pgs_at_start,
            super::units::format_bytes(t.bytes_left, 5).trim(),
            t.eta_s.map(crate::domain::progress::format_duration).unwrap_or_else(|| "unknown".into()),
        ));
    }
    out.push_str(&super::osds::removal_table(&s.removals, false));
    out
}

/// `host drain stop HOST`.
pub fn host_drain_stop_text(s: &HostDrainStop) -> String {
    let names = |ids: &[u32]| ids.iter().map(|i| format!("osd.{i}")).collect::<Vec<_>>().join(", ");
    let mut out = String::new();
    if s.stopped.is_empty() && s.continuing.is_empty() {
        out.push_str(&format!("No removal is running on host {}\n", s.host));
    }
    if !s.stopped.is_empty() {
        out.push_str(&format!("Stopped the removal of {}; their weights will be restored\n", names(&s.stopped)));
    }
    if !s.continuing.is_empty() {
        out.push_str(&format!("Past the point of no return, finishing: {}\n", names(&s.continuing)));
    }
    if s.no_schedule_removed {
        out.push_str(&format!("Removed _no_schedule from {}: specs may place OSDs on it again\n", s.host));
    } else {
        out.push_str(&format!("{} keeps _no_schedule until those removals end\n", s.host));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(name: &str, release: Option<&str>, mismatch: Option<&str>) -> Host {
        Host {
            name: name.into(),
            addr: format!("{name}:8741"),
            labels: vec!["osd".into()],
            added_at: 0,
            unreachable_since: None,
            last_error: None,
            consecutive_failures: 0,
            next_poll_at: 0,
            ceph_release: release.map(str::to_string),
            release_mismatch: mismatch.map(str::to_string),
        }
    }

    #[test]
    fn a_host_of_another_major_is_marked_and_why_is_said_under_the_table() {
        let text = host_table(&[
            host("h1", Some("16.2.15 (pacific)"), None),
            host("h2", Some("18.2.7 (reef)"), Some("ceph-volume is Ceph 18.2.7 (reef), the cluster runs 16 pacific")),
            host("h3", None, None),
        ]);
        let expected = "\
HOST  ADDR     LABELS  STATUS  CEPH VOLUME
h1    h1:8741  osd             16.2.15 (pacific)
h2    h2:8741  osd             18.2.7 (reef) *
h3    h3:8741  osd
3 hosts in cluster
* ceph-volume of a major release the cluster does not run:
  h2: ceph-volume is Ceph 18.2.7 (reef), the cluster runs 16 pacific
";
        assert_eq!(text, expected, "\n{text}");
        assert!(!host_table(&[host("h1", None, None)]).contains('*'), "nothing flagged, no footnote");
    }
}
