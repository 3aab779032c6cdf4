//! `spec ls`, `spec show`, `events`.

use super::table::Table;
use crate::clock::format_ms;
use crate::wire::api::events::Event;
use crate::wire::api::specs::{SpecDetail, SpecRecord};

pub fn spec_table(specs: &[SpecRecord]) -> String {
    let mut t = Table::new(["NAME", "VERSION", "MANAGED", "UPDATED"]);
    for s in specs {
        let managed = if s.unmanaged { "no" } else { "yes" };
        t.row([s.service_name.clone(), s.version.to_string(), managed.into(), format_ms(s.updated_at)]);
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
