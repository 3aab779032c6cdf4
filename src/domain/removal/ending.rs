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
    /// Another OSD or another disk took the place of the one scheduled:
    /// nothing more was done.
    Superseded(Superseded),
}

/// What took the removal's place.
#[derive(Debug, Clone, PartialEq)]
pub enum Superseded {
    /// Another OSD has the id now (its uuid; the one scheduled in `Removal::osd_uuid`).
    Osd { uuid: String },
    /// The disk at this path is not the one the OSD had: what the host found there.
    Disk { path: String, found: String },
    /// The daemon serving the id on its host is another OSD's: what the host found.
    Daemon { found: String },
    /// The removal was stored without its OSD's uuid (by an osdkeeper
    /// before uuids were recorded) and was past the stop: the OSD now at
    /// the id cannot be told from a new one.
    Unrecorded,
}

impl Ending {
    pub fn describe(&self, r: &Removal) -> String {
        let id = r.osd_id;
        match self {
            Ending::RemovedOutside => format!("osd.{id} no longer exists (removed outside osdkeeper)"),
            Ending::StoppedBeforeDrain if r.in_place.is_some() => {
                format!("stopped before osd.{id} was stopped; nothing was changed")
            }
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
            Ending::Superseded(Superseded::Osd { uuid }) => format!(
                "superseded: osd.{id} is now another OSD (uuid {uuid}, not {}); nothing more was done to it",
                r.osd_uuid.as_deref().unwrap_or("the one scheduled")
            ),
            Ending::Superseded(Superseded::Disk { path, found }) => format!(
                "superseded: the disk at {path} on {} is not the one osd.{id} had ({found}); it was not zapped, and \
                 nothing more was done",
                r.host
            ),
            Ending::Superseded(Superseded::Daemon { found }) => format!(
                "superseded: the daemon serving osd.{id} on {} is not the OSD scheduled ({found}); it was not \
                 stopped, and nothing more was done",
                r.host
            ),
            Ending::Superseded(Superseded::Unrecorded) => format!(
                "superseded: osd.{id}'s uuid was not recorded (the removal was stored by an older osdkeeper) and an \
                 OSD that cannot be told from a new one has its id; nothing more was done: `osdkeeper osd rm {id}` \
                 again if it is the same OSD"
            ),
        }
    }
}
