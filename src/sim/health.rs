//! The simulated cluster's `ceph status`: what a real one reports while
//! OSDs drain (remapped PGs backfilling, misplaced objects, a recovery
//! rate) or are down with data on them (degraded PGs and the checks Ceph
//! raises for them), from the simulator's PG counts.

use super::cluster::SimState;
use super::placement::PG_BYTES;
use crate::domain::cluster_health::{ClusterHealth, HealthCheck, ObjectShare, Throughput};

/// Objects in one simulated PG (4 MiB of 64 KiB objects).
const OBJECTS_PER_PG: u64 = 64;
/// Copies of every object (the demo's pools have size 2).
const COPIES: u64 = 2;
/// PGs one draining OSD backfills at once (`osd_max_backfills`' old default).
const BACKFILLS_PER_OSD: i64 = 1;

pub(super) fn health(s: &SimState) -> ClusterHealth {
    let live: Vec<_> = s.osds.iter().filter(|o| !o.destroyed).collect();
    let total_pgs = (live.iter().map(|o| o.pgs).sum::<f64>() / COPIES as f64).round() as i64;
    let draining: Vec<_> = live.iter().filter(|o| o.up && (o.crush_weight == 0.0 || !o.is_in) && o.pgs > 0.0).collect();
    let down: Vec<_> = live.iter().filter(|o| !o.up && o.is_in).collect();
    let remapped: i64 = draining.iter().map(|o| o.pgs.ceil() as i64).sum();
    let degraded: i64 = down.iter().map(|o| o.pgs.ceil() as i64).sum();
    let backfilling = remapped.min(BACKFILLS_PER_OSD * draining.len() as i64);
    let mut pg_states = vec![
        ("active+remapped+backfilling".to_string(), backfilling),
        ("active+remapped+backfill_wait".to_string(), remapped - backfilling),
        ("active+undersized+degraded".to_string(), degraded),
    ];
    pg_states.push(("active+clean".to_string(), (total_pgs - remapped - degraded).max(0)));
    let copies = (total_pgs.max(0) as u64) * OBJECTS_PER_PG * COPIES;
    let degraded_objects = degraded as u64 * OBJECTS_PER_PG;
    let mut checks = Vec::new();
    if !down.is_empty() {
        checks.push(check("OSD_DOWN", format!("{} osds down", down.len()), down.len() as i64));
    }
    if degraded > 0 {
        let pct = degraded_objects as f64 * 100.0 / copies.max(1) as f64;
        checks.push(check(
            "PG_DEGRADED",
            format!("Degraded data redundancy: {degraded_objects}/{copies} objects degraded ({pct:.3}%), {degraded} pgs degraded"),
            degraded,
        ));
    }
    let rate = if draining.is_empty() { None } else { Some(s.drain_rate * s.pace * draining.len() as f64) };
    let throughput = Throughput {
        recovery_bytes_per_sec: rate.map(|pgs| pgs * PG_BYTES as f64),
        recovery_objects_per_sec: rate.map(|pgs| pgs * OBJECTS_PER_PG as f64),
        ..Throughput::default()
    };
    let status = if checks.is_empty() { "HEALTH_OK" } else { "HEALTH_WARN" };
    ClusterHealth::new(
        status.to_string(),
        checks,
        total_pgs,
        pg_states,
        [
            ObjectShare::of(Some(degraded_objects), Some(copies)),
            ObjectShare::of(Some(remapped as u64 * OBJECTS_PER_PG), Some(copies)),
            None,
        ],
        throughput,
    )
}

fn check(code: &str, message: String, count: i64) -> HealthCheck {
    HealthCheck { code: code.into(), severity: "HEALTH_WARN".into(), message, count, muted: false }
}
