//! `osd deploy status`: each deployment of a spec on a host, its OSDs, and
//! what it waits on or why it failed.

use super::table::Table;
use crate::clock::format_ms;
use crate::wire::api::deployments::DeploymentStatus;

pub fn deployment_table(rows: &[DeploymentStatus]) -> String {
    if rows.is_empty() {
        return "No OSD deployments reported\n".into();
    }
    let mut t = Table::new(["HOST", "SERVICE", "STATE", "ATTEMPT", "DISKS", "OSDS", "STARTED", "WAITING ON"]);
    for r in rows {
        let osds: Vec<String> = r
            .osds
            .iter()
            .map(|o| {
                let how = if o.verified {
                    "up"
                } else if o.started {
                    "started"
                } else if o.activated {
                    "activated"
                } else {
                    "prepared"
                };
                format!("osd.{} ({how})", o.id)
            })
            .collect();
        let why =
            r.waiting_on.clone().or_else(|| r.failure.clone()).or_else(|| r.last_error.clone()).unwrap_or_default();
        t.row([
            r.host.clone(),
            r.service_name.clone(),
            r.state.as_str().to_string(),
            r.attempt.to_string(),
            r.disks.join(","),
            osds.join(", "),
            format_ms(r.created_at),
            why,
        ]);
    }
    t.plain()
}
