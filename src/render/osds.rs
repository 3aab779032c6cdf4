//! `osd ls`, and `osd rm status` in cephadm's columns plus progress, the
//! data left, rate, ETA (or "stalled", with the cluster's reason) and the
//! gate a removal waits on.

use super::table::{Align, Table};
use super::units::format_bytes;
use crate::clock::format_ms;
use crate::domain::bench::format_rate;
use crate::domain::cluster::format_weight;
use crate::domain::progress::format_duration;
use crate::wire::api::osds::{OsdRow, RemovalStatus};

/// `osd ls`; `wide` adds each OSD's latest bench and outlier verdict.
pub fn osd_table(osds: &[OsdRow], wide: bool) -> String {
    let mut headers = vec!["OSD", "HOST", "DEVICES", "WEIGHT", "STATUS", "PGS", "REMOVAL"];
    if wide {
        headers.extend(["BENCH", "OUTLIER"]);
    }
    let mut t = Table::new(headers).align(3, Align::Right).align(5, Align::Right);
    if wide {
        t = t.align(7, Align::Right);
    }
    for o in osds {
        let status = if o.destroyed {
            "destroyed".to_string()
        } else {
            format!("{} {}", if o.up { "up" } else { "down" }, if o.is_in { "in" } else { "out" })
        };
        let mut row = vec![
            format!("osd.{}", o.id),
            o.host.clone().unwrap_or_default(),
            o.devices.join(","),
            o.crush_weight.map(format_weight).unwrap_or_default(),
            status,
            o.pgs.map(|p| p.to_string()).unwrap_or_default(),
            o.removal.map(|p| p.as_str().to_string()).unwrap_or_default(),
        ];
        if wide {
            row.push(o.bench_bytes_per_sec.map(format_rate).unwrap_or_default());
            row.push(o.bench_outlier.clone().unwrap_or_default());
        }
        t.row(row);
    }
    t.plain()
}

/// A ten-step bar of the PGs moved off, e.g. `[######----]  60%`. Rounded
/// down, bar and percentage alike: full and 100 % only once no PG is left
/// (a bar that looks full at 95 % reads as "done").
fn progress_bar(pgs_at_start: Option<i64>, pgs_now: Option<i64>) -> String {
    match (pgs_at_start, pgs_now) {
        (Some(a), Some(n)) if a > 0 => {
            let moved = (a - n.clamp(0, a)) as u64;
            let a = a as u64;
            let filled = (moved * 10 / a) as usize;
            let percent = moved * 100 / a;
            format!("[{}{}] {percent:>3}%", "#".repeat(filled), "-".repeat(10 - filled))
        }
        _ => String::new(),
    }
}

/// Bytes per second where the ETA counts bytes, else PGs per minute.
fn rate(r: &RemovalStatus) -> String {
    match (r.eta_basis.as_deref(), r.bytes_per_s, r.pgs_per_min) {
        (Some("bytes"), Some(b), _) => format_rate(b),
        (_, _, Some(p)) => format!("{p:.1} PGs/min"),
        _ => String::new(),
    }
}

/// `osd rm status`; with `finished`, a FINISHED column (when each ended).
pub fn removal_table(rows: &[RemovalStatus], finished: bool) -> String {
    if rows.is_empty() {
        return "No OSD remove/replace operations reported\n".into();
    }
    let mut headers = vec![
        "OSD",
        "HOST",
        "STATE",
        "PGS",
        "REPLACE",
        "FORCE",
        "ZAP",
        "DRAIN STARTED AT",
        "PROGRESS",
        "DATA LEFT",
        "RATE",
        "ETA",
        "WAITING ON",
    ];
    if finished {
        headers.push("FINISHED");
    }
    let mut t = Table::new(headers).align(3, Align::Right).align(9, Align::Right);
    let yes = |v: bool| if v { "True" } else { "False" }.to_string();
    for r in rows {
        let mut waiting =
            r.waiting_on.clone().or_else(|| r.note.clone()).or_else(|| r.last_error.clone()).unwrap_or_default();
        if let Some(s) = &r.stalled {
            let why = s.reason.as_deref().unwrap_or("the cluster gives no reason");
            waiting = format!("stalled since {}: {why}; {waiting}", format_ms(s.since));
        }
        let mut row = vec![
            r.osd_id.to_string(),
            r.host.clone(),
            r.state.as_str().to_string(),
            // Unknown until the drain starts: blank, not cephadm's -1.
            r.pgs_now.map(|n| n.to_string()).unwrap_or_default(),
            yes(r.replace),
            yes(r.force),
            yes(r.zap),
            r.drain_started_at.map(format_ms).unwrap_or_default(),
            progress_bar(r.pgs_at_start, r.pgs_now),
            r.bytes_left.map(|b| format_bytes(b, 5).trim().to_string()).unwrap_or_default(),
            rate(r),
            if r.stalled.is_some() { "stalled".into() } else { r.eta_s.map(format_duration).unwrap_or_default() },
            waiting,
        ];
        if finished {
            row.push(r.finished_at.map(format_ms).unwrap_or_default());
        }
        t.row(row);
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
        assert_eq!(progress_bar(Some(100), Some(5)), "[#########-]  95%", "full only when done");
        assert_eq!(progress_bar(Some(1000), Some(1)), "[#########-]  99%");
        assert_eq!(progress_bar(None, Some(3)), "");
    }

    fn queued(osd_id: u32, finished_at: Option<i64>) -> RemovalStatus {
        RemovalStatus {
            removal_id: 1,
            osd_id,
            host: "f5-422-03".into(),
            state: crate::domain::removal::Phase::Queued,
            waiting_on: None,
            last_error: None,
            replace: false,
            force: false,
            zap: true,
            fast: false,
            ignored_blockers: vec![],
            stop_requested: false,
            devices: vec![],
            pgs_at_start: None,
            pgs_now: None,
            pgs_per_min: None,
            eta_s: None,
            eta_basis: None,
            bytes_now: None,
            bytes_left: None,
            bytes_per_s: None,
            stalled: None,
            requested_at: 0,
            drain_started_at: None,
            finished_at,
            note: None,
        }
    }

    #[test]
    fn queued_rows_have_no_pg_count_and_finished_ones_say_when() {
        let live = removal_table(&[queued(8, None)], false);
        let header = live.lines().next().unwrap();
        assert!(!header.contains("FINISHED"), "{live}");
        let pgs = header.find("PGS").unwrap();
        let row = live.lines().nth(1).unwrap();
        assert_eq!(row[pgs..pgs + 3].trim(), "", "no fake -1: {live}");
        assert!(!live.contains("-1"), "{live}");
        let done = removal_table(&[queued(8, Some(1_679_068_490_000))], true);
        assert!(done.lines().next().unwrap().trim_end().ends_with("FINISHED"), "{done}");
        assert!(done.lines().nth(1).unwrap().trim_end().ends_with("2023-03-17 15:54:50"), "{done}");
        assert_eq!(removal_table(&[], true), "No OSD remove/replace operations reported\n");
    }

    #[test]
    fn a_drain_shows_its_data_left_rate_and_eta_or_that_it_stalled() {
        let mut r = queued(8, None);
        r.state = crate::domain::removal::Phase::Draining;
        (r.pgs_at_start, r.pgs_now, r.eta_basis) = (Some(91), Some(40), Some("bytes".into()));
        (r.bytes_left, r.bytes_per_s, r.pgs_per_min, r.eta_s) =
            (Some(190.0 * 1024.0 * 1024.0 * 1024.0), Some(14.0 * 1024.0 * 1024.0), Some(0.3), Some(13_560.0));
        r.waiting_on = Some("draining: 40 PGs left".into());
        let table = removal_table(&[r.clone()], false);
        let row = table.lines().nth(1).unwrap();
        assert!(row.contains(" 190G ") && row.contains("14 MB/s") && row.contains("3h 46m"), "{table}");
        r.eta_basis = Some("pgs".into());
        assert!(removal_table(&[r.clone()], false).contains("0.3 PGs/min"), "without bytes, PGs");
        r.stalled = Some(crate::wire::api::osds::Stalled {
            since: 1_679_068_490_000,
            reason: Some("3 PGs backfill_toofull".into()),
        });
        let table = removal_table(&[r], false);
        let row = table.lines().nth(1).unwrap();
        assert!(!row.contains("3h 46m") && row.contains(" stalled "), "no ETA while stalled: {table}");
        assert!(
            row.trim_end()
                .ends_with("stalled since 2023-03-17 15:54:50: 3 PGs backfill_toofull; draining: 40 PGs left"),
            "{table}"
        );
    }
}
