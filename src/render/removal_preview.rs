//! `osd rm ID... --dry-run`: what the removal would do, as a summary, the
//! OSDs that receive data, the pools, and what stands in its way.

use super::table::{Align, Table};
use super::units::format_bytes;
use crate::domain::progress::format_duration;
use crate::wire::api::removal_preview::RemovalPreview;

fn pct(f: Option<f64>) -> String {
    f.map(|x| format!("{:.1}%", x * 100.0)).unwrap_or_default()
}

fn bytes(n: u64) -> String {
    format_bytes(n as f64, 5).trim().to_string()
}

pub fn preview_text(p: &RemovalPreview) -> String {
    let names: Vec<String> = p.osds.iter().map(|o| format!("osd.{o}")).collect();
    let eta = match p.eta_s {
        Some(s) => format!("{} ({})", format_duration(s), p.eta_basis),
        None => format!("unknown: {}", p.eta_basis),
    };
    let ok = if p.ok_to_stop { "yes" } else { "no" };
    let mut out = format!(
        "Removing {} together (dry run, nothing changed)\n\
         PGs to move:    {}\n\
         Bytes to move:  {}\n\
         ETA:            {eta}\n\
         ok-to-stop now: {ok}: {}\n",
        names.join(", "),
        p.pgs_to_move,
        bytes(p.bytes_to_move),
        p.ok_to_stop_message,
    );
    if !p.zaps.is_empty() {
        out.push_str("\nZap (--zap):\n");
        for z in &p.zaps {
            out.push_str(&format!("  osd.{} on {}: {}\n", z.osd, z.host, z.text));
        }
    }
    if !p.receivers.is_empty() {
        let mut t = Table::new(["RECEIVER", "PGS IN", "PGS OUT", "BYTES IN", "FULL BEFORE", "FULL AFTER"]);
        for c in 1..6 {
            t = t.align(c, Align::Right);
        }
        for r in &p.receivers {
            t.row([
                format!("osd.{}", r.osd),
                r.pgs_in.to_string(),
                r.pgs_out.to_string(),
                bytes(r.bytes_in),
                pct(r.fullness_before),
                pct(r.fullness_after),
            ]);
        }
        out.push('\n');
        out.push_str(&t.plain());
    }
    if !p.pools.is_empty() {
        let mut t = Table::new(["POOL", "SIZE", "FAILURE DOMAIN", "LEFT", "PGS", "MOVING", "UNDERSIZED"]);
        for c in [1, 3, 4, 5, 6] {
            t = t.align(c, Align::Right);
        }
        for i in &p.pools {
            t.row([
                i.name.clone(),
                i.size.to_string(),
                i.failure_domain.clone(),
                i.domains_left.len().to_string(),
                i.pgs.to_string(),
                i.pgs_moving.to_string(),
                i.pgs_short.to_string(),
            ]);
        }
        out.push('\n');
        out.push_str(&t.plain());
    }
    out.push_str(&format!(
        "\nRatios: nearfull {}, backfillfull {}, full {}\n",
        pct(Some(p.nearfull_ratio)),
        pct(Some(p.backfillfull_ratio)),
        pct(Some(p.full_ratio))
    ));
    for w in &p.warnings {
        out.push_str(&format!("Warning: {w}\n"));
    }
    if p.blockers.is_empty() {
        out.push_str("Blockers: none; the removal can finish\n");
    } else {
        out.push_str("Blockers (osd rm refuses this removal unless given --ignore-preview-blockers):\n");
        for b in &p.blockers {
            out.push_str(&format!("  - {b}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::api::removal_preview::{EtaSource, PoolImpact, Receiver};

    fn preview() -> RemovalPreview {
        RemovalPreview {
            osds: vec![0, 1, 2, 3],
            pgs_to_move: 44,
            bytes_to_move: 3_604_480,
            eta_s: None,
            eta_source: EtaSource::None,
            eta_bytes_per_s: None,
            eta_basis: "no recovery under way and no drain watched yet".into(),
            receivers: vec![Receiver {
                osd: 4,
                pgs_in: 20,
                pgs_out: 0,
                bytes_in: 1_638_400,
                bytes_out: 0,
                fullness_before: Some(0.0284),
                fullness_after: Some(0.0286),
            }],
            pools: vec![PoolImpact {
                pool: 2,
                name: "sandbox".into(),
                size: 2,
                min_size: 1,
                failure_domain: "host".into(),
                domains_left: vec!["f5-422-03".into()],
                pgs: 64,
                pgs_moving: 43,
                pgs_short: 64,
                pgs_below_min: 0,
            }],
            blockers: vec!["pool 'sandbox' (size 2): 64 of its 64 PGs would have fewer than 2 copies".into()],
            warnings: vec![],
            ok_to_stop: false,
            ok_to_stop_message: "unsafe to stop osd(s) at this time (9 PGs are or would become offline)".into(),
            nearfull_ratio: 0.85,
            backfillfull_ratio: 0.9,
            full_ratio: 0.95,
            moves: vec![],
            zaps: vec![],
        }
    }

    #[test]
    fn the_dry_run_reads_as_a_summary_tables_and_blockers() {
        expect_test::expect![[r#"
            Removing osd.0, osd.1, osd.2, osd.3 together (dry run, nothing changed)
            PGs to move:    44
            Bytes to move:  3520k
            ETA:            unknown: no recovery under way and no drain watched yet
            ok-to-stop now: no: unsafe to stop osd(s) at this time (9 PGs are or would become offline)

            RECEIVER  PGS IN  PGS OUT  BYTES IN  FULL BEFORE  FULL AFTER
            osd.4         20        0     1600k         2.8%        2.9%

            POOL     SIZE  FAILURE DOMAIN  LEFT  PGS  MOVING  UNDERSIZED
            sandbox     2  host               1   64      43          64

            Ratios: nearfull 85.0%, backfillfull 90.0%, full 95.0%
            Blockers (osd rm refuses this removal unless given --ignore-preview-blockers):
              - pool 'sandbox' (size 2): 64 of its 64 PGs would have fewer than 2 copies
        "#]]
        .assert_eq(&preview_text(&preview()));
    }

    #[test]
    fn the_eta_says_what_it_was_computed_from() {
        let mut p = preview();
        p.eta_s = Some(250.0);
        p.eta_source = EtaSource::RecentDrains;
        p.eta_basis = "the recent drains osdkeeper watched (osd.5), 0.01 MiB/s: 3.4 MiB in 250 s".into();
        let text = preview_text(&p);
        let eta = text.lines().find(|l| l.starts_with("ETA:")).unwrap();
        assert_eq!(
            eta,
            "ETA:            4m 10s (the recent drains osdkeeper watched (osd.5), 0.01 MiB/s: 3.4 MiB in 250 s)"
        );
    }
}
