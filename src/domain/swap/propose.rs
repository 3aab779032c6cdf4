//! The swap a dry-run proposes: a spec would make OSDs on a host where
//! OSDs are being removed. Drained first, then refilled by the new OSDs,
//! their data would move twice; swapped, once.

use crate::domain::removal::Phase as RemovalPhase;

#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    pub host: String,
    /// The OSDs being removed there whose removal can still be stopped.
    pub osds: Vec<u32>,
    /// The disks the spec would make OSDs on.
    pub devices: Vec<String>,
    /// Those of `osds` already draining: what left them stays where it went.
    pub draining: Vec<u32>,
}

impl Proposal {
    /// What the operator runs instead.
    pub fn command(&self) -> String {
        let ids: Vec<String> = self.osds.iter().map(u32::to_string).collect();
        format!(
            "osdkeeper osd rm stop {ids} && osdkeeper osd replace {ids} --with {}:{}",
            self.host,
            self.devices.join(","),
            ids = ids.join(" ")
        )
    }

    /// The proposal in words, as the dry-run prints it.
    pub fn text(&self) -> String {
        let names = |ids: &[u32]| ids.iter().map(|i| format!("osd.{i}")).collect::<Vec<_>>().join(", ");
        let mut text = format!(
            "{} new OSD{} on {} can take {}'s data directly, moving it once (drained first, it moves out, then back): {}",
            self.devices.len(),
            if self.devices.len() == 1 { "" } else { "s" },
            self.host,
            names(&self.osds),
            self.command()
        );
        if !self.draining.is_empty() {
            text.push_str(&format!("; {} already draining: what left stays where it went", names(&self.draining)));
        }
        text
    }
}

/// The proposal for one host, given the disks a spec would make OSDs on
/// and the removals running there (OSD id, phase); none when there is
/// nothing to swap.
pub fn propose(host: &str, devices: &[String], removing: &[(u32, RemovalPhase)]) -> Option<Proposal> {
    let mut osds: Vec<u32> = removing.iter().filter(|(_, p)| p.can_stop()).map(|(id, _)| *id).collect();
    if devices.is_empty() || osds.is_empty() {
        return None;
    }
    osds.sort_unstable();
    let draining = osds.iter().copied().filter(|id| removing.iter().any(|(o, p)| o == id && p.is_draining())).collect();
    Some(Proposal { host: host.to_string(), osds, devices: devices.to_vec(), draining })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removals_that_can_still_stop_are_proposed_for_the_spec_s_new_disks() {
        let removing = [(15, RemovalPhase::Draining), (8, RemovalPhase::Queued), (3, RemovalPhase::Stopping)];
        let p = propose("f5-422-03", &["/dev/sdg".into(), "/dev/sdh".into()], &removing).unwrap();
        assert_eq!((p.osds.clone(), p.draining.clone()), (vec![8, 15], vec![15]), "osd.3 is past its stop");
        assert_eq!(
            p.text(),
            "2 new OSDs on f5-422-03 can take osd.8, osd.15's data directly, moving it once (drained first, it moves \
             out, then back): osdkeeper osd rm stop 8 15 && osdkeeper osd replace 8 15 --with f5-422-03:/dev/sdg,/dev/sdh; \
             osd.15 already draining: what left stays where it went"
        );
        assert_eq!(propose("f5-422-03", &[], &removing), None, "no new disk");
        assert_eq!(propose("f5-422-03", &["/dev/sdg".into()], &[(3, RemovalPhase::Stopping)]), None);
    }
}
