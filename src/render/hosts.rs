//! `host ls`: cephadm's `orch host ls` columns, with why a host is offline.

use super::table::Table;
use crate::clock::format_ms;
use crate::wire::api::hosts::Host;

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
