//! `osdkeeper status`: the daemon's `/healthz` as `ceph health detail`
//! reads, with the releases the cluster runs.

use crate::wire::api::error::Health;

/// `now_ms` says how long ago the cluster was last asked.
pub fn health_text(h: &Health, now_ms: i64) -> String {
    let mut out = Vec::new();
    let summary = if h.warnings.is_empty() { "HEALTH_OK" } else { "HEALTH_WARN" };
    out.push(format!("osdkeeper: {} ({summary})", h.status));
    let asked = h.ceph.checked_at.map(|at| format!(", asked {} ago", ago(now_ms - at))).unwrap_or_default();
    match (&h.ceph.error, h.ceph.connected) {
        (_, true) => out.push(format!("ceph: answers{asked}")),
        (Some(why), false) => out.push(format!("ceph: does not answer{asked}: {why}")),
        (None, false) => out.push("ceph: not asked yet".to_string()),
    }
    let majors = {
        let mut m: Vec<u32> = h.ceph.releases.iter().map(|r| r.major).collect();
        m.dedup();
        m.len()
    };
    let runs = h
        .ceph
        .releases
        .iter()
        .map(|r| format!("{} {} ({} daemon{})", r.version, r.release, r.daemons, if r.daemons == 1 { "" } else { "s" }))
        .collect::<Vec<_>>()
        .join(", ");
    out.push(match majors {
        0 => "releases: not read yet".to_string(),
        1 => format!("releases: {runs}"),
        _ => format!("releases: {runs}: an upgrade is under way (specs are planned as the oldest runs)"),
    });
    for w in &h.warnings {
        out.push(format!("[{}] {}: {}", w.severity.trim_start_matches("HEALTH_"), w.code, w.message));
        out.extend(w.detail.iter().map(|d| format!("    {d}")));
    }
    out.join("\n")
}

fn ago(ms: i64) -> String {
    match ms.max(0) / 1000 {
        s if s < 120 => format!("{s} s"),
        s if s < 7200 => format!("{} min", s / 60),
        s => format!("{} h", s / 3600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::api::error::{CephHealth, HealthWarning, RunningRelease};

    fn release(version: &str, name: &str, major: u32, daemons: u64) -> RunningRelease {
        RunningRelease { version: version.into(), release: name.into(), major, daemons }
    }

    #[test]
    fn the_releases_an_upgrade_and_the_warnings_are_said() {
        let mut h = Health {
            status: "ok".into(),
            ceph: CephHealth {
                connected: true,
                checked_at: Some(1_000),
                error: None,
                releases: vec![release("18.2.7", "reef", 18, 9)],
            },
            warnings: vec![],
        };
        assert_eq!(
            health_text(&h, 6_000),
            "osdkeeper: ok (HEALTH_OK)\nceph: answers, asked 5 s ago\nreleases: 18.2.7 reef (9 daemons)"
        );
        h.ceph.releases = vec![release("18.2.7", "reef", 18, 4), release("20.2.4", "tentacle", 20, 1)];
        h.warnings = vec![HealthWarning {
            code: "OSDKEEPER_CEPH_VOLUME_RELEASE".into(),
            severity: "HEALTH_WARN".into(),
            message: "1 host's ceph-volume is of another release than the cluster".into(),
            detail: vec!["host f5-422-03: ceph-volume 16.2.15 (pacific)".into()],
        }];
        let text = health_text(&h, 1_000 + 600_000);
        assert!(text.starts_with("osdkeeper: ok (HEALTH_WARN)\nceph: answers, asked 10 min ago\n"), "{text}");
        assert!(text.contains("20.2.4 tentacle (1 daemon): an upgrade is under way"), "{text}");
        assert!(
            text.ends_with(
                "[WARN] OSDKEEPER_CEPH_VOLUME_RELEASE: 1 host's ceph-volume is of another release than the cluster\n    \
                 host f5-422-03: ceph-volume 16.2.15 (pacific)"
            ),
            "{text}"
        );
        h.ceph = CephHealth { connected: false, checked_at: None, error: Some("timed out".into()), releases: vec![] };
        let text = health_text(&h, 0);
        assert!(text.contains("\nceph: does not answer: timed out\nreleases: not read yet\n"), "{text}");
    }
}
