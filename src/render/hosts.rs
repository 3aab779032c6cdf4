//! `host ls`: cephadm's `orch host ls` columns, with why a host is offline.

use super::table::Table;
use crate::clock::format_ms;
use crate::wire::api::hosts::{Host, HostDrainStatus, HostDrainStop};

pub fn host_table(hosts: &[Host]) -> String {
    let mut t = Table::new(["HOST", "ADDR", "LABELS", "STATUS"]);
    for h in hosts {
        let status = match h.unreachable_since {
            Some(since) => {
                format!("Offline since {} ({})", format_ms(since), h.last_error.as_deref().unwrap_or_default())
            }
            None => String::new(),
        };
        t.row([h.name.clone(), h.addr.clone(), h.labels.join(" "), status]);
    }
    format!("{}{} hosts in cluster\n", t.plain(), hosts.len())
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
