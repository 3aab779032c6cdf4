//! Swaps as operators read them: `osd replace --dry-run` (every way side
//! by side, and why the asked one would be refused) and `swap ls`.

use super::table::{Align, Table};
use super::units::format_bytes;
use crate::domain::progress::format_duration;
use crate::wire::api::devices::ReplaceWays;
use crate::wire::api::swaps::{MakingEstimate, PoolRiskRow, SwapPreview, SwapStatus, WayRow};

fn bytes(n: u64) -> String {
    format_bytes(n as f64, 5).trim().to_string()
}

fn osds(ids: &[u32]) -> String {
    ids.iter().map(|o| format!("osd.{o}")).collect::<Vec<_>>().join(", ")
}

pub fn preview_text(p: &SwapPreview) -> String {
    let disks: Vec<&str> = p.disks.iter().map(|d| d.path.as_str()).collect();
    let head =
        format!("Swapping {} out, {} in on {} (dry run, nothing changed)\n\n", osds(&p.osds), disks.join(", "), p.host);
    let ways = Ways {
        ways: &p.ways,
        bytes_per_s: p.bytes_per_s,
        eta_basis: &p.eta_basis,
        lost: &p.lost,
        single_copy: &p.single_copy,
        inactive: &p.inactive,
        making: p.making.as_ref(),
        refusals: &p.refusals,
    };
    head + &ways_text(&ways)
}

/// `device replace --dry-run`'s two ways.
pub fn replace_ways_text(w: &ReplaceWays) -> String {
    ways_text(&Ways {
        ways: &w.ways,
        bytes_per_s: w.bytes_per_s,
        eta_basis: &w.eta_basis,
        lost: &w.lost,
        single_copy: &w.single_copy,
        inactive: &w.inactive,
        making: w.making.as_ref(),
        refusals: &w.refusals,
    })
}

/// Ways side by side, the in-place way's risks, and the refusals.
struct Ways<'a> {
    ways: &'a [WayRow],
    bytes_per_s: Option<f64>,
    eta_basis: &'a str,
    lost: &'a [PoolRiskRow],
    single_copy: &'a [PoolRiskRow],
    inactive: &'a [PoolRiskRow],
    making: Option<&'a MakingEstimate>,
    refusals: &'a [String],
}

fn ways_text(p: &Ways) -> String {
    let mut out = String::new();
    let mut t = Table::new(["WAY", "BYTES MOVED", "OFF THE OLD OSDS", "PGS", "DEGRADED PGS", "TIME"]);
    for c in 1..6 {
        t = t.align(c, Align::Right);
    }
    for w in p.ways {
        let unknown = || "once the new OSDs exist".to_string();
        t.row([
            w.way.clone(),
            w.bytes.map_or_else(unknown, bytes),
            w.off_old_bytes.map(bytes).unwrap_or_default(),
            w.pgs.map(|n| n.to_string()).unwrap_or_default(),
            w.pgs_degraded.to_string(),
            match (w.bytes, w.eta_s) {
                (None, _) => String::new(),
                (_, Some(s)) => format_duration(s),
                (_, None) => "unknown".into(),
            },
        ]);
    }
    out.push_str(&t.plain());
    out.push_str(&match p.bytes_per_s {
        Some(rate) => format!("\nTimes at {}/s: {}.\n", bytes(rate as u64), p.eta_basis),
        None => format!("\nNo times: {}.\n", p.eta_basis),
    });
    if let Some(w) = p.ways.iter().find(|w| w.way == "in-place" && w.pgs_degraded > 0) {
        // How long the slot stays empty is the operator's to say; the
        // making and the rebuild are estimated apart, each on its basis.
        let making = match p.making {
            Some(m) => format!("about {}: {}", format_duration(m.seconds), m.basis),
            None => "no deployment seen yet to time it".into(),
        };
        out.push_str(&format!(
            "In place, {} PGs run a copy short from the old OSDs' stop until the new disk is in and its OSDs are \
             made ({making}), then for the rebuild's TIME.\n",
            w.pgs_degraded
        ));
    }
    let risks = [
        (p.lost, "left with no copy (refused whatever the flags)"),
        (p.single_copy, "left with one copy"),
        (p.inactive, "inactive (client I/O stops)"),
    ];
    for (list, what) in risks {
        for r in list {
            out.push_str(&format!(
                "In place: {} PGs of pool '{}' (size {}, min_size {}) {what}, {}.\n",
                r.pgs,
                r.pool,
                r.size,
                r.min_size,
                bytes(r.bytes)
            ));
        }
    }
    if !p.refusals.is_empty() {
        out.push_str("\nRefused as asked:\n");
        for r in p.refusals {
            out.push_str(&format!("  {r}\n"));
        }
    }
    out
}

pub fn swap_table(rows: &[SwapStatus]) -> String {
    if rows.is_empty() {
        return "No swaps reported\n".into();
    }
    let mut t = Table::new(["SWAP", "HOST", "WAY", "OUT", "IN", "STATE", "PGS LEFT", "DATA LEFT", "WAITING ON"]);
    for r in rows {
        let ins: Vec<String> = r
            .disks
            .iter()
            .map(|d| match d.osd {
                Some(id) => format!("{} (osd.{id})", d.path),
                None => d.path.clone(),
            })
            .collect();
        t.row([
            r.swap_id.to_string(),
            r.host.clone(),
            r.way.as_str().to_string(),
            osds(&r.osds),
            ins.join(", "),
            r.state.as_str().to_string(),
            r.pgs_left.map(|n| n.to_string()).unwrap_or_default(),
            r.bytes_left.map(bytes).unwrap_or_default(),
            r.waiting_on.clone().or_else(|| r.ending.clone()).unwrap_or_default(),
        ]);
    }
    t.plain()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn way(name: &str, bytes: u64, degraded: usize, eta_s: f64) -> WayRow {
        WayRow {
            way: name.into(),
            bytes: Some(bytes),
            pgs: Some(12),
            off_old_bytes: None,
            receivers: Vec::new(),
            eta_s: Some(eta_s),
            pgs_degraded: degraded,
        }
    }

    #[test]
    fn the_in_place_time_is_the_rebuild_s_and_the_making_is_said_apart() {
        let ways = [way("drain-first", 30 << 20, 0, 60.0), way("in-place", 13 << 20, 12, 16.0)];
        let made = MakingEstimate { seconds: 41.0, basis: "41 s an OSD, as the last deployment on a went".into() };
        let mut w = Ways {
            ways: &ways,
            bytes_per_s: Some(1024.0 * 1024.0),
            eta_basis: "the recovery rate of the last hour",
            lost: &[],
            single_copy: &[],
            inactive: &[],
            making: Some(&made),
            refusals: &[],
        };
        let text = ways_text(&w);
        assert!(
            text.contains(
                "In place, 12 PGs run a copy short from the old OSDs' stop until the new disk is in and its OSDs are \
                 made (about 41s: 41 s an OSD, as the last deployment on a went), then for the rebuild's TIME.\n"
            ),
            "{text}"
        );
        w.making = None;
        let text = ways_text(&w);
        assert!(text.contains("its OSDs are made (no deployment seen yet to time it), then"), "{text}");
        let drain_only = [way("drain-first", 30 << 20, 0, 60.0)];
        w.ways = &drain_only;
        let text = ways_text(&w);
        assert!(!text.contains("In place"), "{text}");
    }
}
