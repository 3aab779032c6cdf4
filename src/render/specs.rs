//! `spec ls`, `spec show`, `events`.

use super::table::{Align, Table};
use crate::clock::format_ms;
use crate::wire::api::events::Event;
use crate::wire::api::specs::{SpecDetail, SpecListing};

/// cephadm's `orch ls` columns that mean something for OSD specs (NAME,
/// RUNNING, PLACEMENT), then the spec's version and when it changed.
pub fn spec_table(specs: &[SpecListing]) -> String {
    let mut t = Table::new(["NAME", "RUNNING", "PLACEMENT", "VERSION", "UPDATED"]).align(1, Align::Right);
    for s in specs {
        t.row([
            s.spec.service_name.clone(),
            s.running.to_string(),
            s.placement.clone(),
            s.spec.version.to_string(),
            format_ms(s.spec.updated_at),
        ]);
    }
    t.plain()
}

/// The spec as applied, then its history as YAML comments.
pub fn spec_source(detail: &SpecDetail) -> String {
    let mut out = detail.spec.source.clone();
    for (version, action, at) in &detail.history {
        out.push_str(&format!("# version {version} {action} at {}\n", format_ms(*at)));
    }
    out
}

pub fn event_lines(events: &[Event]) -> String {
    events
        .iter()
        .map(|e| {
            let by = e.actor.as_deref().map(|a| format!(" (by {a})")).unwrap_or_default();
            format!("{} [{}] {}{by}\n", format_ms(e.at), e.level.as_str().to_uppercase(), e.message)
        })
        .collect()
}
