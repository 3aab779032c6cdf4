//! The dry-run as a table: cephadm's OSDSPEC PREVIEWS (its notes, then one
//! row per OSD of ceph-volume's report, in the report's order), then what
//! cephadm does not say: why each other device was not chosen or would not
//! be used, warnings, and the ceph-volume commands.

use std::fmt::Write as _;

use super::table::{pad, Align, Table};
use crate::text::{put, putln};
use crate::wire::api::preview::{PlannedOsds, PreviewDoc};

/// The human-readable dry-run (the CLI renders the daemon's answer with it
/// too, so both print the same).
pub fn preview_table(p: &PreviewDoc) -> String {
    let mut out = String::new();
    out.push_str("################\nOSDSPEC PREVIEWS\n################\n");
    let mut t = Table::new(["SERVICE", "NAME", "HOST", "DATA", "DB", "WAL"]);
    for row in &p.preview {
        let name = row.service_id.clone().unwrap_or_default();
        match &row.planned_osds {
            PlannedOsds::Osds(osds) => {
                for o in osds {
                    let dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
                    t.row([
                        "osd".to_string(),
                        name.clone(),
                        row.host.clone(),
                        o.data.clone(),
                        dash(&o.db),
                        dash(&o.wal),
                    ]);
                }
            }
            // cephadm lists nothing for a host whose report failed; we keep
            // a row so that the host is not missed, and the reason goes
            // with the warnings (it is long).
            PlannedOsds::Refused { .. } => t.row([
                "osd".to_string(),
                name.clone(),
                row.host.clone(),
                "(none: refused, see Warnings)".into(),
                "-".into(),
                "-".into(),
            ]),
        }
    }
    for row in &p.preview {
        for n in &row.report_notes {
            putln!(out, "{n}");
        }
    }
    if t.is_empty() {
        out.push_str("No OSDs would be created.\n");
    } else {
        out.push_str(&t.boxed());
    }
    let mut not_chosen = String::new();
    let mut warnings = String::new();
    let mut cmds = String::new();
    let mut probes = String::new();
    for row in &p.preview {
        let name = row.service_id.as_deref().unwrap_or("<unnamed>");
        let host = &row.host;
        let age = row
            .inventory_age_s
            .map(|a| format!(" (inventory {})", crate::clock::format_age((a * 1000.0) as i64)))
            .unwrap_or_default();
        if !row.skipped.is_empty() || !row.unused.is_empty() {
            putln!(not_chosen, "  {name} on {host}{age}:");
            let w = row.skipped.iter().chain(&row.unused).map(|s| s.path.len()).max().unwrap_or(0);
            for sk in row.skipped.iter().chain(&row.unused) {
                let why = if sk.reasons.is_empty() { "not looked at".to_string() } else { sk.reasons.join("; ") };
                putln!(not_chosen, "    {}  {why}", pad(&sk.path, w, Align::Left));
            }
        }
        if let PlannedOsds::Refused { error } = &row.planned_osds {
            putln!(warnings, "  {name} on {host}: {error}");
        }
        for w in &row.warnings {
            putln!(warnings, "  {name} on {host}: {w}");
        }
        for c in &row.commands {
            putln!(cmds, "  {host}: ceph-volume {c}");
        }
        for n in &row.probes {
            let outlier = n.outlier.as_deref().map(|o| format!("; OUTLIER: {o}")).unwrap_or_default();
            putln!(
                probes,
                "  {name} on {host}: {}  probe {} ({}): {}{outlier}",
                n.path,
                n.probe_id,
                n.mode.as_str(),
                crate::domain::probe::ProbeFigures::from(n.figures).summary()
            );
        }
    }
    for n in &p.notes {
        putln!(warnings, "  {}: {}", n.service_id.as_deref().unwrap_or("<unnamed>"), n.note);
    }
    for (title, text) in
        [("Not chosen", &not_chosen), ("Disk probes", &probes), ("Warnings", &warnings), ("Commands", &cmds)]
    {
        if !text.is_empty() {
            put!(out, "\n{title}:\n{text}");
        }
    }
    if !p.errors.is_empty() {
        out.push_str("\nInvalid documents:\n");
        for e in &p.errors {
            putln!(out, "  {}", e.error);
        }
    }
    out
}
