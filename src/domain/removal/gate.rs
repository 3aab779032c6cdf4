//! What must hold right before a removal acts on its OSD by its id (a
//! reweight, a mark out or in, the stop, a mark down, the destroy, the
//! purge): the OSD at the id is the one scheduled, by its uuid. A purge
//! whose outcome was lost (a crash, a timeout taken for a failure), an id
//! given to a new OSD since, a removal restored from an old backup: another
//! uuid at the id ends the removal as superseded, acting on nothing more.
//! `advance` asks here first. In place, the step it decides passes the
//! last-copy gate too (`last_copy`, `copies::gate`): a stop, destroy or
//! zap waits on a fresh PG map while the cluster is worse than accepted.

use super::{Effect, Ending, InPlace, Observation, Phase, Removal, Step, Superseded};
use crate::domain::copies::{self, Hold};
use crate::domain::identity::{osd_at_id, OsdAtId};

/// The act an in-place removal's effect is, when the last-copy gate holds
/// it: the stop, the destroy, a zap.
fn last_copy_act(r: &Removal, effect: &Effect) -> Option<String> {
    r.in_place?;
    let id = r.osd_id;
    Some(match effect {
        Effect::StopDaemon => format!("the stop of osd.{id}"),
        Effect::Destroy | Effect::Purge => format!("the destroy of osd.{id}"),
        Effect::Zap { path } => format!("the zap of {path}"),
        Effect::ZapLvs { .. } => format!("the zap of osd.{id}'s LVs"),
        _ => return None,
    })
}

/// The step `advance` decided from `r`, through the last-copy gate.
pub fn last_copy(r: &Removal, step: Step, obs: &Observation) -> Step {
    let act = step.effect.as_ref().and_then(|e| last_copy_act(r, e));
    let accept = r.in_place.map(InPlace::accept).unwrap_or_default();
    let hold = match act {
        Some(_) => copies::hold(obs.copies.as_ref(), &[r.osd_id], accept),
        None => Hold::NotRead,
    };
    copies::gate(r, step, act, hold, |s| s.phase.is_finished(), |s| &mut s.last_copy_hold)
}

/// The phases whose effects act on the OSD by its id: until it is
/// destroyed or purged. Past them the id is free by design (a replacement
/// takes it; in place, the new OSD), and only disks are acted on, each
/// checked by `identity::check_zap`.
fn acts_on_the_osd(phase: Phase) -> bool {
    matches!(
        phase,
        Phase::Queued | Phase::Draining | Phase::WaitingSafe | Phase::Stopping | Phase::Destroying | Phase::Restoring
    )
}

/// Before the stop nothing cannot be undone: a removal stored without a
/// uuid (by an osdkeeper before uuids were recorded, or of an OSD that had
/// none yet) takes the one the map shows then.
fn may_adopt(phase: Phase) -> bool {
    matches!(phase, Phase::Queued | Phase::Draining | Phase::WaitingSafe | Phase::Stopping | Phase::Restoring)
}

/// The removal with the uuid it goes by: the one recorded, else (an LVM
/// OSD's fsid, which is its uuid) or, while `may_adopt`, the one the OSD
/// map shows at the id. The step that adopts it is written before its
/// effect, as every step is.
pub fn with_uuid(r: &Removal, obs: &Observation) -> Removal {
    let mut next = r.clone();
    if next.osd_uuid.is_none() {
        next.osd_uuid = r.lvm_fsid.clone();
    }
    if next.osd_uuid.is_none() && may_adopt(r.phase) && obs.exists && !obs.destroyed {
        next.osd_uuid = obs.uuid.clone();
    }
    next
}

/// The step of a removal whose OSD is no longer at its id (ended), or
/// whose OSD the map cannot tell yet (a wait); `None`: go on.
pub fn superseded(r: &Removal, obs: &Observation) -> Option<Step> {
    if !acts_on_the_osd(r.phase) {
        return None;
    }
    let id = r.osd_id;
    let end = |by: Superseded| {
        let mut next = r.clone();
        next.phase = Phase::Cancelled;
        next.ending = Some(Ending::Superseded(by));
        Step::go(next)
    };
    let Some(recorded) = r.osd_uuid.as_deref() else {
        // Past the stop without a uuid: a live OSD at the id may be a new one.
        let unsure = r.phase == Phase::Destroying && obs.exists && !obs.destroyed;
        return unsure.then(|| end(Superseded::Unrecorded));
    };
    match osd_at_id(recorded, obs.exists, obs.destroyed, obs.uuid.as_deref()) {
        OsdAtId::Recorded | OsdAtId::Gone => None,
        OsdAtId::Other { uuid } => Some(end(Superseded::Osd { uuid })),
        OsdAtId::CannotTell => Some(Step::wait(
            r.clone(),
            format!(
                "osd.{id} shows no uuid in the OSD map: another OSD may have taken its id (made, not booted yet); \
                 nothing is done to it until the map says which OSD it is"
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{healthy, removal, run, UUID};
    use super::super::*;
    use crate::domain::inventory::{Device, DeviceReport, Lv};
    use crate::domain::operation::Outcome;

    /// Another OSD's uuid at osd.4's id: made by `osd new` after a purge
    /// whose outcome was lost, or since a backup was taken.
    const NEW: &str = "9f1e2d3c-0000-4b8e-9c3a-7e5f1d2c3b4a";

    fn taken_by_another() -> Observation {
        let mut o = healthy();
        o.uuid = Some(NEW.into());
        o.safe_to_destroy = Some(Verdict::yes());
        o
    }

    fn superseded(step: &Step) -> bool {
        step.next.phase == Phase::Cancelled
            && step.next.ending == Some(Ending::Superseded(Superseded::Osd { uuid: NEW.into() }))
            && step.effect.is_none()
    }

    /// Every phase that acts on the OSD by its id, and what it would do to
    /// the OSD at its id were the gate not there.
    #[test]
    fn another_uuid_at_the_id_ends_every_phase_that_acts_on_the_osd() {
        let mut restoring = removal(Phase::Draining);
        restoring.stop_requested = true;
        restoring.original_weight = Some(1.0);
        let mut stopping = removal(Phase::Stopping);
        stopping.stop_sent = true;
        let mut down = taken_by_another();
        down.up = false;
        let cases = [
            (removal(Phase::Queued), taken_by_another(), "a reweight"),
            (removal(Phase::Draining), taken_by_another(), "a reweight"),
            (removal(Phase::WaitingSafe), taken_by_another(), "the stop"),
            (removal(Phase::Stopping), taken_by_another(), "the stop"),
            (stopping, down.clone(), "the purge"),
            (removal(Phase::Destroying), down.clone(), "the purge"),
            (removal(Phase::Destroying), taken_by_another(), "the stop (it is up: the daemon came back)"),
            (restoring, taken_by_another(), "a reweight back"),
        ];
        for (r, o, would) in cases {
            let s = run(&r, &o);
            assert!(superseded(&s), "{:?} would have asked for {would}: {s:?}", r.phase);
            assert_eq!(
                s.next.note().unwrap(),
                format!("superseded: osd.4 is now another OSD (uuid {NEW}, not {UUID}); nothing more was done to it")
            );
            assert!(!s.next.frees_devices(), "what it used may be the new OSD's");
            // The OSD it was scheduled for: it goes on.
            assert!(!superseded(&run(&r, &healthy())), "{:?}", r.phase);
        }
    }

    /// A replacement takes the destroyed id by design: once the OSD is
    /// destroyed or purged, only its disks are acted on, by their own checks.
    #[test]
    fn past_the_destroy_the_id_is_free() {
        let mut o = taken_by_another();
        o.exists = true;
        let mut r = removal(Phase::Zapping);
        r.replace = true;
        assert_eq!(run(&r, &o).effect, Some(Effect::Zap { path: "/dev/loop4".into() }));
        let mut rejoining = removal(Phase::Rejoining);
        rejoining.in_place = Some(InPlace::default());
        rejoining.replace = true;
        o.noout = true;
        assert_eq!(run(&rejoining, &o).effect, Some(Effect::Noout { on: false }), "the new OSD is back");
        // Destroyed: the map clears the uuid, the OSD is the one destroyed.
        let mut destroyed = healthy();
        (destroyed.uuid, destroyed.destroyed, destroyed.up) = (None, true, false);
        let mut replace = removal(Phase::Destroying);
        replace.replace = true;
        assert_eq!(run(&replace, &destroyed).next.phase, Phase::Zapping);
    }

    #[test]
    fn a_live_osd_without_a_uuid_is_waited_for() {
        let mut o = healthy();
        o.uuid = None;
        o.up = false;
        o.safe_to_destroy = Some(Verdict::yes());
        let s = run(&removal(Phase::Destroying), &o);
        assert_eq!((s.next.phase, s.effect.clone()), (Phase::Destroying, None));
        assert!(s.waiting_on.unwrap().starts_with("osd.4 shows no uuid in the OSD map"));
    }

    /// A removal stored before uuids were recorded takes the map's while
    /// nothing irreversible was done, and the step that takes it is the one
    /// written before its effect; past the stop it cannot tell.
    #[test]
    fn a_removal_without_a_uuid_takes_the_maps_before_the_stop_only() {
        let mut old = removal(Phase::Draining);
        old.osd_uuid = None;
        let s = run(&old, &healthy());
        assert_eq!((s.next.osd_uuid.as_deref(), s.effect), (Some(UUID), Some(Effect::Reweight { weight: 0.0 })));
        let mut late = removal(Phase::Destroying);
        late.osd_uuid = None;
        let mut o = healthy();
        o.up = false;
        o.safe_to_destroy = Some(Verdict::yes());
        let s = run(&late, &o);
        assert_eq!(s.next.ending, Some(Ending::Superseded(Superseded::Unrecorded)));
        assert_eq!((s.next.phase, s.effect), (Phase::Cancelled, None), "never purged on a guess");
        // Purged already: nothing at the id to guess about.
        o.exists = false;
        assert_eq!(run(&late, &o).effect, Some(Effect::Zap { path: "/dev/loop4".into() }));
        // An LVM OSD's recorded fsid is its uuid.
        late.lvm_fsid = Some(UUID.into());
        o.exists = true;
        assert_eq!(run(&late, &o).effect, Some(Effect::Purge));
        o.uuid = Some(NEW.into());
        assert!(superseded(&run(&late, &o)));
    }

    #[test]
    fn a_host_that_finds_another_disk_or_daemon_ends_the_removal() {
        let r = removal(Phase::Zapping);
        let found = "the disk there is \"WDC_S2\", not \"WDC_S1\"".to_string();
        let after = apply(&r, &Effect::Zap { path: "/dev/loop4".into() }, &Outcome::<String>::Refused(found.clone()));
        assert_eq!(after.phase, Phase::Cancelled);
        assert_eq!(after.ending, Some(Ending::Superseded(Superseded::Disk { path: "/dev/loop4".into(), found })));
        assert!(after.zapped.is_empty());
        let after = apply(&removal(Phase::Stopping), &Effect::StopDaemon, &Outcome::<String>::Refused("x".into()));
        assert_eq!(after.ending, Some(Ending::Superseded(Superseded::Daemon { found: "x".into() })));
        let failed = apply(&r, &Effect::Zap { path: "/dev/loop4".into() }, &Outcome::<String>::Failed("busy".into()));
        assert_eq!(failed, r, "a failure is tried again");
    }

    /// A DB device shared with no one when the removal was scheduled, on
    /// which another OSD put its DB during the drain: decided again right
    /// before the zap, and never wiped whole. An LV of a new OSD that took
    /// the id is another OSD's too (by its fsid).
    #[test]
    fn sharing_is_decided_again_right_before_the_zap() {
        let mut r = removal(Phase::Zapping);
        r.devices = vec!["/dev/sdb".into(), "/dev/sdd".into()];
        let lv = |id: &str, kind: &str, fsid: &str| Lv { osd_fsid: Some(fsid.into()), ..Lv::of_osd(id, kind) };
        let disk = |path: &str, lvs: Vec<Lv>| {
            let mut d = DeviceReport { path: path.into(), ..Default::default() };
            d.lvs = lvs;
            Device::from(d)
        };
        let inventory = [
            disk("/dev/sdb", vec![lv("4", "block", UUID)]),
            disk("/dev/sdd", vec![lv("4", "db", UUID), lv("4", "db", NEW)]),
        ];
        let mut o = healthy();
        o.exists = false;
        o.shared_now = shared_now(&r, &inventory);
        assert_eq!(o.shared_now, ["/dev/sdd"], "osd.4's DB and the new osd.4's");
        assert_eq!(run(&r, &o).effect, Some(Effect::Zap { path: "/dev/sdb".into() }));
        r.zapped = vec!["/dev/sdb".into()];
        let s = run(&r, &o);
        assert_eq!((s.next.phase, s.effect), (Phase::Done, None), "/dev/sdd is not wiped");
        // Without fsid tags, by the id.
        let untagged = [disk("/dev/sdd", vec![Lv::of_osd("4", "db"), Lv::of_osd("9", "db")])];
        assert_eq!(shared_now(&r, &untagged), ["/dev/sdd"]);
        assert!(shared_now(&r, &[disk("/dev/sdd", vec![Lv::of_osd("4", "db")])]).is_empty());
    }

    #[test]
    fn a_zap_names_the_disk_by_its_id_and_the_osd_by_its_uuid() {
        let mut r = removal(Phase::Zapping);
        r.device_ids = vec!["WDC_S1".into()];
        let e = zap_expect(&r, "/dev/loop4", Some("75757249"));
        assert_eq!(e.device_id, "WDC_S1");
        assert_eq!(e.osd_fsids, Some(vec![UUID.to_string()]));
        assert_eq!(e.cluster_fsid.as_deref(), Some("75757249"));
        r.osd_uuid = None;
        assert_eq!(zap_expect(&r, "/dev/loop4", None).osd_fsids, Some(vec![]), "no uuid: no OSD's volumes may go");
    }
}
