//! How a removal ended when it did not end plainly, as a value: the worker
//! decides on it (holding devices or not) and the status shows its words.

use super::Removal;

#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    /// The OSD left the cluster without osdkeeper purging it.
    RemovedOutside,
    /// `rm stop` before the drain began.
    StoppedBeforeDrain,
    /// Forced removal finished while its host was unreachable: these
    /// devices were not wiped.
    NotZapped { devices: Vec<String> },
    /// The OSD vanished while its weight was being restored.
    GoneWhileRestoring,
    /// `rm stop` of a replace: the OSD is `in` again.
    MarkedInAgain,
    /// `rm stop`: the CRUSH weight it had before the drain is back.
    WeightRestored { weight: Option<f64> },
    /// In place: the OSD is back up on its new disk, `noout` lifted.
    Rejoined,
    /// In place, stopped while it waited for its new OSD: `noout` lifted.
    NooutLifted,
}

impl Ending {
    pub fn describe(&self, r: &Removal) -> String {
        let id = r.osd_id;
        match self {
            Ending::RemovedOutside => format!("osd.{id} no longer exists (removed outside osdkeeper)"),
            Ending::StoppedBeforeDrain => "stopped before the drain began; nothing was changed".into(),
            Ending::NotZapped { devices } => format!(
                "host {host} unreachable: {} not zapped; run `osdkeeper device zap {host} <path> --force` when it is back",
                devices.join(", "),
                host = r.host
            ),
            Ending::GoneWhileRestoring => format!("osd.{id} no longer exists"),
            Ending::MarkedInAgain => "stopped; the OSD was marked in again".into(),
            Ending::WeightRestored { weight } => format!(
                "stopped; CRUSH weight restored to {}",
                weight.map(crate::domain::cluster::format_weight).unwrap_or_else(|| "its value".into())
            ),
            Ending::Rejoined => format!("osd.{id} is back on its new disk; noout lifted"),
            Ending::NooutLifted => format!(
                "stopped while osd.{id} waited for its new disk: noout lifted, so Ceph rebuilds its copies on the \
                 other OSDs; osd.{id} stays destroyed"
            ),
        }
    }
}
