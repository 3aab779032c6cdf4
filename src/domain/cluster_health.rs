//! The cluster's health as `ceph status` gives it: the health status and
//! its checks in Ceph's own words, placement group states, degraded and
//! misplaced objects, and recovery and client throughput. What an operator
//! otherwise keeps `ceph -s` open for beside the dashboard.

/// One health check (`OSD_DOWN`, `PG_DEGRADED`, ...).
#[derive(Debug, Clone, PartialEq)]
pub struct HealthCheck {
    /// Ceph's code, e.g. `OSD_DOWN`.
    pub code: String,
    /// `HEALTH_WARN` or `HEALTH_ERR`.
    pub severity: String,
    /// Ceph's one-line summary, e.g. "1 osds down".
    pub message: String,
    pub count: i64,
    /// Muted with `ceph health mute`: listed, but it does not make the status.
    pub muted: bool,
}

/// Objects in some state out of all object copies (`degraded_objects` of
/// `degraded_total`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ObjectShare {
    pub objects: u64,
    pub total: u64,
}

impl ObjectShare {
    /// None when nothing is in that state: `ceph status` leaves the keys out then.
    pub fn of(objects: Option<u64>, total: Option<u64>) -> Option<ObjectShare> {
        match (objects, total) {
            (Some(objects), Some(total)) if objects > 0 && total > 0 => Some(ObjectShare { objects, total }),
            _ => None,
        }
    }

    pub fn percent(&self) -> f64 {
        self.objects as f64 * 100.0 / self.total as f64
    }
}

/// Rates `ceph status` reports; each None when the cluster does not report
/// it (idle).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Throughput {
    pub recovery_bytes_per_sec: Option<f64>,
    pub recovery_objects_per_sec: Option<f64>,
    pub client_read_bytes_per_sec: Option<f64>,
    pub client_write_bytes_per_sec: Option<f64>,
    pub client_read_ops_per_sec: Option<f64>,
    pub client_write_ops_per_sec: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ClusterHealth {
    /// `HEALTH_OK`, `HEALTH_WARN` or `HEALTH_ERR`.
    pub status: String,
    /// Errors first, then warnings, each by code: the worst is read first.
    pub checks: Vec<HealthCheck>,
    pub pgs: i64,
    /// State -> count, most PGs first (as `ceph -s` lists them).
    pub pg_states: Vec<(String, i64)>,
    pub degraded: Option<ObjectShare>,
    pub misplaced: Option<ObjectShare>,
    pub unfound: Option<ObjectShare>,
    pub throughput: Throughput,
}

impl ClusterHealth {
    /// Puts checks and PG states in the order they are shown.
    pub fn new(
        status: String,
        mut checks: Vec<HealthCheck>,
        pgs: i64,
        mut pg_states: Vec<(String, i64)>,
        objects: [Option<ObjectShare>; 3],
        throughput: Throughput,
    ) -> ClusterHealth {
        let rank = |s: &str| if s == "HEALTH_ERR" { 0 } else { 1 };
        checks.sort_by(|a, b| (a.muted, rank(&a.severity), &a.code).cmp(&(b.muted, rank(&b.severity), &b.code)));
        pg_states.retain(|(_, n)| *n > 0);
        pg_states.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let [degraded, misplaced, unfound] = objects;
        ClusterHealth { status, checks, pgs, pg_states, degraded, misplaced, unfound, throughput }
    }

    /// The data lines of `ceph -s` about objects, in its words and
    /// precision: "742/4000 objects degraded (18.550%)".
    pub fn object_lines(&self) -> Vec<String> {
        [(self.degraded, "degraded"), (self.misplaced, "misplaced"), (self.unfound, "unfound")]
            .into_iter()
            .filter_map(|(share, what)| {
                share.map(|s| format!("{}/{} objects {what} ({:.3}%)", s.objects, s.total, s.percent()))
            })
            .collect()
    }

    /// PGs neither active nor clean: what a drain or a failure is doing now.
    pub fn pgs_not_clean(&self) -> i64 {
        self.pg_states.iter().filter(|(s, _)| !is_active_clean(s)).map(|(_, n)| n).sum()
    }
}

/// `active+clean` exactly, or with flags that do not mean data is moving
/// or at risk (`scrubbing`, `deep`, `snaptrim`).
fn is_active_clean(state: &str) -> bool {
    let parts: Vec<&str> = state.split('+').collect();
    parts.contains(&"active")
        && parts.contains(&"clean")
        && parts.iter().all(|p| matches!(*p, "active" | "clean" | "scrubbing" | "deep" | "snaptrim" | "snaptrim_wait"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(code: &str, severity: &str, muted: bool) -> HealthCheck {
        HealthCheck { code: code.into(), severity: severity.into(), message: code.into(), count: 1, muted }
    }

    #[test]
    fn errors_come_before_warnings_and_muted_checks_last() {
        let h = ClusterHealth::new(
            "HEALTH_ERR".into(),
            vec![
                check("PG_DEGRADED", "HEALTH_WARN", false),
                check("OSD_FULL", "HEALTH_ERR", true),
                check("OSD_DOWN", "HEALTH_WARN", false),
                check("PG_DAMAGED", "HEALTH_ERR", false),
            ],
            0,
            vec![],
            [None, None, None],
            Throughput::default(),
        );
        let codes: Vec<&str> = h.checks.iter().map(|c| c.code.as_str()).collect();
        assert_eq!(codes, ["PG_DAMAGED", "OSD_DOWN", "PG_DEGRADED", "OSD_FULL"]);
    }

    #[test]
    fn pg_states_most_first_and_empty_ones_dropped() {
        let h = ClusterHealth::new(
            "HEALTH_OK".into(),
            vec![],
            65,
            vec![
                ("active+clean+scrubbing".into(), 2),
                ("active+clean".into(), 40),
                ("peering".into(), 0),
                ("active+remapped+backfilling".into(), 23),
            ],
            [None, None, None],
            Throughput::default(),
        );
        let states: Vec<&str> = h.pg_states.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(states, ["active+clean", "active+remapped+backfilling", "active+clean+scrubbing"]);
        assert_eq!(h.pgs_not_clean(), 23, "scrubbing is clean; backfilling is not");
    }

    #[test]
    fn object_lines_use_cephs_words_and_precision() {
        let h = ClusterHealth::new(
            "HEALTH_WARN".into(),
            vec![],
            65,
            vec![],
            [
                ObjectShare::of(Some(742), Some(4000)),
                ObjectShare::of(Some(635), Some(4000)),
                ObjectShare::of(Some(0), Some(4000)),
            ],
            Throughput::default(),
        );
        assert_eq!(h.object_lines(), ["742/4000 objects degraded (18.550%)", "635/4000 objects misplaced (15.875%)"]);
    }
}
