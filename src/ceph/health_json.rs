//! `ceph health --format json` as the benchmarks read it.

use serde::Deserialize;

/// `ceph health --format json`: its status and the codes of its checks.
#[derive(Debug, Deserialize)]
pub struct Health {
    pub status: String,
    #[serde(default)]
    pub checks: std::collections::BTreeMap<String, serde::de::IgnoredAny>,
}

impl Health {
    /// `HEALTH_OK`, or the status with the checks that make it so
    /// (`HEALTH_WARN (OSDMAP_FLAGS, SLOW_OPS)`).
    pub fn said(&self) -> String {
        if self.status == "HEALTH_OK" || self.checks.is_empty() {
            return self.status.clone();
        }
        format!("{} ({})", self.status, self.checks.keys().cloned().collect::<Vec<_>>().join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn health_is_said_with_the_codes_of_its_checks() {
        let warn = r#"{"status":"HEALTH_WARN","checks":{"SLOW_OPS":{"severity":"HEALTH_WARN","summary":
            {"message":"2 slow ops","count":2},"muted":false},"OSDMAP_FLAGS":{"severity":"HEALTH_WARN",
            "summary":{"message":"noout flag(s) set","count":1},"muted":false}},"mutes":[]}"#;
        let h: Health = serde_json::from_str(warn).unwrap();
        assert_eq!(h.said(), "HEALTH_WARN (OSDMAP_FLAGS, SLOW_OPS)");
        let ok: Health = serde_json::from_str(r#"{"status":"HEALTH_OK","checks":{},"mutes":[]}"#).unwrap();
        assert_eq!(ok.said(), "HEALTH_OK");
    }
}
