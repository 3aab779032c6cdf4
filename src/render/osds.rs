//! `osd ls`, and `osd rm status` in cephadm's columns plus progress, rate,
//! ETA and the gate a removal waits on.

use super::table::{Align, Table};
use crate::clock::format_ms;
use crate::domain::progress::format_duration;
use crate::wire::api::osds::{OsdRow, RemovalStatus};

pub fn osd_table(osds: &[OsdRow]) -> String {
    let mut t = Table::new(["OSD", "HOST", "DEVICES", "WEIGHT", "STATUS", "PGS", "REMOVAL"])
        .align(3, Align::Right)
        .align(5, Align::Right);
    for o in osds {
        let status = if o.destroyed {
            "destroyed".to_string()
        } else {
            format!("{} {}", if o.up { "up" } else { "down" }, if o.is_in { "in" } else { "out" })
        };
        t.row([
            format!("osd.{}", o.id),
            o.host.clone().unwrap_or_default(),
            o.devices.join(","),
            o.crush_weight.map(|w| format!("{w:.5}")).unwrap_or_default(),
            status,
            o.pgs.map(|p| p.to_string()).unwrap_or_default(),
            o.removal.map(|p| p.as_str().to_string()).unwrap_or_default(),
        ]);
    }
    t.plain()
}

/// A ten-step bar of the PGs moved off, e.g. `[######----]  60%`.
fn progress_bar(pgs_at_start: Option<i64>, pgs_now: Option<i64>) -> String {
    match (pgs_at_start, pgs_now) {
        (Some(a), Some(n)) if a > 0 => {
            let done = ((a - n.min(a)) as f64 / a as f64).clamp(0.0, 1.0);
            let filled = (done * 10.0).round() as usize;
            format!("[{}{}] {:>3.0}%", "#".repeat(filled), "-".repeat(10 - filled), done * 100.0)
        }
        _ => String::new(),
    }
}

pub fn removal_table(rows: &[RemovalStatus]) -> String {
    if rows.is_empty() {
        return "No OSD remove/replace operations reported\n".into();
    }
    let mut t = Table::new([
        "OSD",
        "HOST",
        "STATE",
        "PGS",
        "REPLACE",
        "FORCE",
        "ZAP",
        "DRAIN STARTED AT",
        "PROGRESS",
        "RATE",
        "ETA",
        "WAITING ON",
    ])
    .align(3, Align::Right);
    let yes = |v: bool| if v { "True" } else { "False" }.to_string();
    for r in rows {
        let waiting =
            r.waiting_on.clone().or_else(|| r.note.clone()).or_else(|| r.last_error.clone()).unwrap_or_default();
        t.row([
            r.osd_id.to_string(),
            r.host.clone(),
            r.state.as_str().to_string(),
            r.pgs_now.map(|n| n.to_string()).unwrap_or_else(|| "-1".into()),
            yes(r.replace),
            yes(r.force),
            yes(r.zap),
            r.drain_started_at.map(format_ms).unwrap_or_default(),
            progress_bar(r.pgs_at_start, r.pgs_now),
            r.pgs_per_min.map(|x| format!("{x:.1} PGs/min")).unwrap_or_default(),
            r.eta_s.map(format_duration).unwrap_or_default(),
            waiting,
        ]);
    }
    t.plain()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bar_counts_pgs_moved_off() {
        assert_eq!(progress_bar(Some(186), Some(186)), "[----------]   0%");
        assert_eq!(progress_bar(Some(100), Some(40)), "[######----]  60%");
        assert_eq!(progress_bar(Some(10), Some(0)), "[##########] 100%");
        assert_eq!(progress_bar(None, Some(3)), "");
    }
}
