//! `ceph status` as it prints it, and read into the cluster's health
//! (`domain::cluster_health`).

use serde::Deserialize;

use crate::domain::cluster_health::{ClusterHealth, HealthCheck, ObjectShare, Throughput};

/// `ceph status --format json`: health, PG states and rates. The rates and
/// object counts are present only while there is something to report.
#[derive(Debug, Deserialize)]
pub struct Status {
    #[serde(default)]
    pub health: StatusHealth,
    pub pgmap: StatusPgmap,
}

#[derive(Debug, Default, Deserialize)]
pub struct StatusHealth {
    #[serde(default)]
    pub status: String,
    /// Code -> check; a BTreeMap keeps `ceph status`'s order (by code).
    #[serde(default)]
    pub checks: std::collections::BTreeMap<String, StatusCheck>,
}

#[derive(Debug, Deserialize)]
pub struct StatusCheck {
    pub severity: String,
    pub summary: StatusCheckSummary,
    #[serde(default)]
    pub muted: bool,
}

#[derive(Debug, Deserialize)]
pub struct StatusCheckSummary {
    pub message: String,
    #[serde(default)]
    pub count: i64,
}

#[derive(Debug, Deserialize)]
pub struct StatusPgmap {
    #[serde(default)]
    pub pgs_by_state: Vec<StatusPgState>,
    #[serde(default)]
    pub num_pgs: i64,
    pub degraded_objects: Option<u64>,
    pub degraded_total: Option<u64>,
    pub misplaced_objects: Option<u64>,
    pub misplaced_total: Option<u64>,
    pub unfound_objects: Option<u64>,
    pub unfound_total: Option<u64>,
    pub recovering_bytes_per_sec: Option<f64>,
    pub recovering_objects_per_sec: Option<f64>,
    pub read_bytes_sec: Option<f64>,
    pub write_bytes_sec: Option<f64>,
    pub read_op_per_sec: Option<f64>,
    pub write_op_per_sec: Option<f64>,
}

#[derive(Debug, Deserialize)]
pub struct StatusPgState {
    pub state_name: String,
    pub count: i64,
}

pub fn health_of(status: Status) -> ClusterHealth {
    let checks = status
        .health
        .checks
        .into_iter()
        .map(|(code, c)| HealthCheck {
            code,
            severity: c.severity,
            message: c.summary.message,
            count: c.summary.count,
            muted: c.muted,
        })
        .collect();
    let p = status.pgmap;
    let pg_states = p.pgs_by_state.into_iter().map(|s| (s.state_name, s.count)).collect();
    let objects = [
        ObjectShare::of(p.degraded_objects, p.degraded_total),
        ObjectShare::of(p.misplaced_objects, p.misplaced_total),
        ObjectShare::of(p.unfound_objects, p.unfound_total),
    ];
    let throughput = Throughput {
        recovery_bytes_per_sec: p.recovering_bytes_per_sec,
        recovery_objects_per_sec: p.recovering_objects_per_sec,
        client_read_bytes_per_sec: p.read_bytes_sec,
        client_write_bytes_per_sec: p.write_bytes_sec,
        client_read_ops_per_sec: p.read_op_per_sec,
        client_write_ops_per_sec: p.write_op_per_sec,
    };
    ClusterHealth::new(status.health.status, checks, p.num_pgs, pg_states, objects, throughput)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Captured from the sandbox (`ceph status -f json`) after `stop.sh DIR osd.3`.
    const OSD_DOWN: &str = include_str!("../../tests/fixtures/ceph/status_osd_down.json");
    /// Captured from the sandbox seconds after `ceph osd crush reweight osd.2 0`.
    const DRAINING: &str = include_str!("../../tests/fixtures/ceph/status_draining.json");

    fn read(text: &str) -> ClusterHealth {
        health_of(serde_json::from_str(text).expect("a ceph status document"))
    }

    #[test]
    fn a_down_osd_gives_cephs_checks_and_degraded_objects() {
        let h = read(OSD_DOWN);
        assert_eq!(h.status, "HEALTH_WARN");
        let checks: Vec<(&str, &str)> = h.checks.iter().map(|c| (c.code.as_str(), c.message.as_str())).collect();
        assert_eq!(
            checks,
            [
                ("OSD_DOWN", "1 osds down"),
                ("PG_DEGRADED", "Degraded data redundancy: 742/4000 objects degraded (18.550%), 23 pgs degraded")
            ]
        );
        assert_eq!(h.pgs, 65);
        assert_eq!(h.pg_states, [("active+clean".to_string(), 42), ("active+undersized+degraded".to_string(), 23)]);
        assert_eq!(h.object_lines(), ["742/4000 objects degraded (18.550%)"]);
        assert_eq!(h.throughput.recovery_bytes_per_sec, Some(1568091.0));
        assert_eq!(h.throughput.client_write_ops_per_sec, Some(48.0));
    }

    #[test]
    fn a_drain_is_healthy_with_misplaced_objects() {
        let h = read(DRAINING);
        assert_eq!(h.status, "HEALTH_OK");
        assert!(h.checks.is_empty());
        assert!(h.degraded.is_none());
        assert_eq!(h.object_lines(), ["635/4000 objects misplaced (15.875%)"]);
        assert_eq!(h.pgs_not_clean(), 19, "active+clean+remapped PGs still have data to move");
    }
}
