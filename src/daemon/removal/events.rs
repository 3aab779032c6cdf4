//! The events a removal's phase changes record, in cephadm's words where it
//! has them ("Successfully purged osd.15 on f5-422-03").

use super::Removals;
use crate::domain::copies::hold_event;
use crate::domain::event::{EventKind, Level};
use crate::domain::removal::{Ending, Phase, RemovalRecord};

/// The event for entering `rec`'s phase from `before`, if that change has one.
pub fn announcement(rec: &RemovalRecord, before: Phase) -> Option<(EventKind, String)> {
    let r = &rec.state;
    let id = r.osd_id;
    let host = r.host.as_str();
    Some(match r.phase {
        Phase::Draining => (
            EventKind::RemovalDraining,
            format!(
                "Draining osd.{id} on {host} ({} PGs){}",
                rec.state.pgs_now.map(|p| p.to_string()).unwrap_or_else(|| "?".into()),
                if r.replace { ", marked out for replacement" } else { "" }
            ),
        ),
        Phase::WaitingSafe => (
            EventKind::RemovalDrained,
            format!(
                "osd.{id} on {host} is drained{}",
                if r.force && rec.state.pgs_now != Some(0) { " (forced)" } else { "" }
            ),
        ),
        Phase::Stopping if r.in_place.is_some() => (
            EventKind::RemovalStopping,
            format!("Setting noout on osd.{id} and removing its daemon from {host}: replaced in place, not drained"),
        ),
        Phase::Stopping => (EventKind::RemovalStopping, format!("Removing daemon osd.{id} from {host}")),
        Phase::Destroying => (
            EventKind::RemovalDestroying,
            format!("osd.{id} is down; {} it", if r.replace { "destroying" } else { "purging" }),
        ),
        Phase::Zapping if before == Phase::Destroying || before == Phase::Stopping => (
            EventKind::RemovalPurged,
            if r.replace {
                format!("Successfully destroyed old osd.{id} on {host}; ready for replacement")
            } else {
                format!("Successfully purged osd.{id} on {host}")
            },
        ),
        Phase::Done => (
            EventKind::RemovalDone,
            match r.note() {
                Some(n) => format!("Removal of osd.{id} on {host} finished: {n}"),
                None => format!("Successfully removed osd.{id} on {host}"),
            },
        ),
        Phase::Restoring => (EventKind::RemovalRestoring, format!("Restoring osd.{id} on {host}")),
        Phase::Rejoining => (
            EventKind::RemovalRejoining,
            format!(
                "osd.{id} on {host} is destroyed and zapped; noout keeps its PGs in place until a new disk takes its id"
            ),
        ),
        Phase::Cancelled if matches!(r.ending, Some(Ending::Superseded(_))) => (
            EventKind::RemovalSuperseded,
            format!("Removal of osd.{id} on {host} ended, {}", r.note().unwrap_or_default()),
        ),
        Phase::Cancelled => {
            (EventKind::RemovalCancelled, format!("Removal of osd.{id} stopped: {}", r.note().unwrap_or_default()))
        }
        Phase::Queued | Phase::Zapping => return None,
    })
}

impl Removals {
    /// An in-place removal's last-copy hold, when it begins or lifts.
    pub(super) async fn announce_hold(&self, before: &RemovalRecord, after: &RemovalRecord) {
        let r = &after.state;
        let who = format!("osd.{} on {}", r.osd_id, r.host);
        let change = hold_event(&who, before.state.last_copy_hold.as_ref(), r.last_copy_hold.as_ref());
        if let Some((kind, level, message)) = change {
            let subject = format!("osd.{}", r.osd_id);
            self.events.record(level, kind, Some(&r.host), Some(&subject), message).await;
        }
    }

    /// Records the phase change, and holds the freed devices as soon as the
    /// OSD is gone: before the wipe makes them look free to the planner
    /// (and again at the end, for a removal that skipped the purge).
    pub(super) async fn announce(&self, rec: &RemovalRecord, before: Phase) {
        if matches!(rec.state.phase, Phase::Zapping | Phase::Done) {
            self.inventory.hold_freed_devices(&rec.state).await;
        }
        // A `device replace` slot whose new disk came in while this removal
        // ran waited for it to end (in place: for its disks to be zapped).
        if rec.state.slot.is_some() && (rec.state.phase.is_finished() || rec.state.phase == Phase::Rejoining) {
            self.inventory.recheck_slots(&rec.state.host).await;
        }
        if let Some((kind, message)) = announcement(rec, before) {
            let subject = format!("osd.{}", rec.state.osd_id);
            let level = if kind == EventKind::RemovalSuperseded { Level::Warning } else { Level::Info };
            self.events.record(level, kind, Some(&rec.state.host), Some(&subject), message).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::removal::{queued_record, Removal};

    fn rec(phase: Phase, replace: bool) -> RemovalRecord {
        let mut removal = Removal::new(15, "f5-422-03".into(), replace, false, true, vec!["/dev/sde".into()]);
        removal.phase = phase;
        let mut r = queued_record(1, removal, 0);
        r.state.pgs_now = Some(186);
        r
    }

    #[test]
    fn cephadm_words_for_each_change() {
        let said = announcement;
        assert_eq!(
            said(&rec(Phase::Draining, false), Phase::Queued),
            Some((EventKind::RemovalDraining, "Draining osd.15 on f5-422-03 (186 PGs)".into()))
        );
        assert_eq!(
            said(&rec(Phase::Zapping, false), Phase::Destroying),
            Some((EventKind::RemovalPurged, "Successfully purged osd.15 on f5-422-03".into()))
        );
        assert_eq!(
            said(&rec(Phase::Zapping, true), Phase::Destroying).unwrap().1,
            "Successfully destroyed old osd.15 on f5-422-03; ready for replacement"
        );
        let mut outside = rec(Phase::Done, false);
        outside.state.ending = Some(Ending::RemovedOutside);
        assert_eq!(
            said(&outside, Phase::Queued).unwrap().1,
            "Removal of osd.15 on f5-422-03 finished: osd.15 no longer exists (removed outside osdkeeper)"
        );
        assert_eq!(said(&rec(Phase::Queued, false), Phase::Queued), None);
        let mut taken = rec(Phase::Cancelled, false);
        taken.state.osd_uuid = Some("4a6d5b0e-5b8e-4d0c-9a57-0d3c4e1f6a55".into());
        taken.state.ending = Some(Ending::Superseded(crate::domain::removal::Superseded::Osd {
            uuid: "9f1e2d3c-0000-4b8e-9c3a-7e5f1d2c3b4a".into(),
        }));
        assert_eq!(
            said(&taken, Phase::Destroying),
            Some((
                EventKind::RemovalSuperseded,
                "Removal of osd.15 on f5-422-03 ended, superseded: osd.15 is now another OSD (uuid \
                 9f1e2d3c-0000-4b8e-9c3a-7e5f1d2c3b4a, not 4a6d5b0e-5b8e-4d0c-9a57-0d3c4e1f6a55); nothing more was \
                 done to it"
                    .into()
            ))
        );
    }
}
