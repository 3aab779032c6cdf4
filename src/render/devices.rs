//! `device ls` (cephadm's `orch device ls`, plus held devices, unreachable
//! hosts and, with `--wide`, each disk's probe) and `device held`.

use super::probes::device_probe_cell;
use super::table::{Align, Table};
use super::units::format_bytes;
use crate::clock::{format_age, format_ms, now_ms};
use crate::wire::api::devices::{Hold, HostDevices};

pub fn device_table(hosts: &[HostDevices], wide: bool) -> String {
    let headers: Vec<&str> = if wide {
        vec![
            "HOST",
            "PATH",
            "TYPE",
            "TRANSPORT",
            "RPM",
            "DEVICE ID",
            "SIZE",
            "HEALTH",
            "IDENT",
            "FAULT",
            "AVAILABLE",
            "REFRESHED",
            "REJECT REASONS",
            "PROBE",
        ]
    } else {
        vec!["HOST", "PATH", "TYPE", "DEVICE ID", "SIZE", "AVAILABLE", "REFRESHED", "REJECT REASONS"]
    };
    let size_col = headers.iter().position(|h| *h == "SIZE").expect("size column");
    let mut t = Table::new(headers.iter().copied()).align(size_col, Align::Right);
    let mut notes = Vec::new();
    let text = |v: &Option<String>| v.clone().unwrap_or_default();
    for h in hosts {
        let refreshed = h.inventory.as_ref().map(|i| format_age((i.age_s * 1000.0) as i64)).unwrap_or_default();
        if let Some(since) = h.unreachable_since {
            notes.push(format!(
                "{}: unreachable for {} ({}); showing the last inventory",
                h.host,
                format_age(now_ms() - since).trim_end_matches(" ago"),
                text(&h.last_error)
            ));
        }
        if h.inventory.is_none() {
            notes.push(format!("{}: no inventory yet", h.host));
        }
        if let Some(e) = &h.refresh_error {
            notes.push(format!("{}: refresh failed: {e}", h.host));
        }
        for d in &h.devices {
            let mut reasons = d.rejected_reasons.clone();
            if let Some(why) = &d.held {
                reasons.insert(0, format!("held by osdkeeper: {why}"));
            }
            if let Some(why) = &d.deploy_failure {
                reasons.insert(0, format!("OSD creation failed: {why}"));
            }
            let available = if d.available && d.held.is_none() { "Yes" } else { "" };
            let size = d.size_bytes.map(|b| format_bytes(b, 5)).unwrap_or_default();
            let mut row = vec![h.host.clone(), d.path.clone(), d.kind.clone()];
            if wide {
                row.extend([text(&d.transport), text(&d.rpm)]);
            }
            row.extend([d.device_id.clone(), size]);
            if wide {
                row.extend([text(&d.health), text(&d.ident), text(&d.fault)]);
            }
            row.extend([available.to_string(), refreshed.clone(), reasons.join(", ")]);
            if wide {
                row.push(d.probe.as_ref().map(device_probe_cell).unwrap_or_default());
                if let Some(p) = &d.probe {
                    if let Some(o) = &p.outlier {
                        notes.push(format!("{}:{} is far below comparable disks: {o}", h.host, d.path));
                    }
                    if let Some(f) = p.failure.as_ref().filter(|_| !p.pending) {
                        notes.push(format!("{}:{}: the last probe failed: {f}", h.host, d.path));
                    }
                    if p.by_slot && p.figures.is_some() {
                        notes.push(format!(
                            "{}:{} reports no serial/WWN: its probe results belong to the slot, not to the disk",
                            h.host, d.path
                        ));
                    }
                }
            }
            t.row(row);
        }
    }
    let mut out = t.plain();
    for n in notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out
}

pub fn held_table(held: &[Hold]) -> String {
    let mut t = Table::new(["HOST", "PATH", "SINCE", "REASON"]);
    for h in held {
        t.row([h.host.clone(), h.path.clone(), format_ms(h.since), h.reason.clone()]);
    }
    t.plain()
}
