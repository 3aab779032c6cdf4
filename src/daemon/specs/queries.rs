//! The stored specs as `spec ls` lists them: how many OSDs each has, and
//! its placement in cephadm's words.

use super::apply::stored_document;
use super::Specs;
use crate::daemon::DaemonError;
use crate::domain::spec::Placement;
use crate::wire::api::specs::{SpecDetail, SpecListing};

impl Specs {
    pub async fn specs(&self) -> Result<Vec<SpecListing>, DaemonError> {
        let (specs, snapshot) = tokio::try_join!(async { Ok(self.store.specs().await?) }, self.snapshot())?;
        Ok(specs
            .into_iter()
            .enumerate()
            .map(|(i, spec)| {
                let affinity = spec.service_id.clone().unwrap_or_default();
                let running =
                    snapshot.view.existing_daemons.get(&affinity).map_or(0, |per_host| per_host.values().sum());
                let placement = if spec.unmanaged {
                    "<unmanaged>".to_string()
                } else {
                    match stored_document(&spec, i, self.cluster.planning_release()) {
                        Ok(doc) => doc.spec.as_ref().map(|s| pretty(&s.placement)).unwrap_or_default(),
                        Err(e) => {
                            // Listed anyway: the stored source is shown by `spec show`.
                            tracing::warn!(service = spec.service_name, "cannot re-read a stored spec: {e}");
                            String::new()
                        }
                    }
                };
                SpecListing { spec: spec.into(), running, placement }
            })
            .collect())
    }

    pub async fn spec(&self, service_name: &str) -> Result<SpecDetail, DaemonError> {
        let spec = self.store.spec(service_name).await?;
        let history = self.store.spec_history(service_name).await?;
        Ok(SpecDetail { spec: spec.into(), history })
    }
}

/// cephadm's `PlacementSpec.pretty_str()`: the parts that are set, joined by `;`.
fn pretty(p: &Placement) -> String {
    let mut parts = Vec::new();
    if !p.hosts.is_empty() {
        let hosts: Vec<String> = p
            .hosts
            .iter()
            .map(|h| {
                let network = if h.network.is_empty() { String::new() } else { format!(":{}", h.network) };
                let name = if h.name.is_empty() { String::new() } else { format!("={}", h.name) };
                format!("{}{network}{name}", h.hostname)
            })
            .collect();
        parts.push(hosts.join(";"));
    }
    if let Some(n) = p.count.filter(|n| *n != 0) {
        parts.push(format!("count:{n}"));
    }
    if let Some(n) = p.count_per_host.filter(|n| *n != 0) {
        parts.push(format!("count-per-host:{n}"));
    }
    if let Some(l) = p.label.as_deref().filter(|l| !l.is_empty()) {
        parts.push(format!("label:{l}"));
    }
    if let Some(pattern) = p.host_pattern.as_deref().filter(|h| !h.is_empty()) {
        parts.push(pattern.to_string());
    }
    parts.join(";")
}

#[cfg(test)]
mod tests {
    use super::pretty;
    use crate::domain::spec::parse_spec_file;

    fn placement_of(yaml: &str) -> String {
        let docs = parse_spec_file(yaml).unwrap();
        pretty(&docs[0].spec.as_ref().expect("a valid spec").placement)
    }

    #[test]
    fn placements_read_as_in_orch_ls() {
        let spec = |placement: &str| {
            format!("service_type: osd\nservice_id: s\nplacement:\n{placement}\ndata_devices:\n  all: true\n")
        };
        assert_eq!(placement_of(&spec("  host_pattern: 'f5-422-0*'")), "f5-422-0*");
        assert_eq!(placement_of(&spec("  label: osd")), "label:osd");
        assert_eq!(placement_of(&spec("  hosts: [f5-422-01, f5-422-02]")), "f5-422-01;f5-422-02");
        assert_eq!(placement_of(&spec("  count: 3\n  label: osd")), "count:3;label:osd");
    }
}
