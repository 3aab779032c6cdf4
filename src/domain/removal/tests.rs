use super::*;
use crate::domain::operation::Outcome;

/// The uuid of osd.4 when it was scheduled.
pub(super) const UUID: &str = "4a6d5b0e-5b8e-4d0c-9a57-0d3c4e1f6a55";

pub(super) fn removal(phase: Phase) -> Removal {
    let mut r = Removal::new(4, "f5-422-03".into(), false, false, true, vec!["/dev/loop4".into()]);
    r.osd_uuid = Some(UUID.into());
    r.phase = phase;
    r
}

pub(super) fn healthy() -> Observation {
    Observation {
        exists: true,
        uuid: Some(UUID.into()),
        destroyed: false,
        up: true,
        is_in: true,
        noout: false,
        crush_weight: Some(0.0098),
        pgs: Some(22),
        ok_to_stop: Some(Verdict { ok: true, message: "ok".into() }),
        safe_to_destroy: Some(Verdict { ok: false, message: "OSD(s) 4 have 22 pgs currently mapped to them".into() }),
        may_start_drain: Verdict { ok: true, message: String::new() },
        host_reachable: true,
        daemon_running: Some(true),
        clean_devices: vec![],
        replaced_devices: vec![],
        shared_now: vec![],
        // Read, and no PG short of copies: the last-copy gate lets acts go.
        copies: Some(Ok(crate::domain::copies::Copies::default())),
    }
}

fn safe(mut o: Observation) -> Observation {
    o.safe_to_destroy = Some(Verdict { ok: true, message: "safe".into() });
    o
}

/// Runs advance until it asks for an effect or waits, like the worker.
pub(super) fn run(r: &Removal, o: &Observation) -> Step {
    crate::domain::operation::walk(r, |r| advance(r, o))
}

#[test]
fn queued_starts_draining_by_reweight_and_remembers_the_weight() {
    let s = run(&removal(Phase::Queued), &healthy());
    assert_eq!(s.next.phase, Phase::Draining);
    assert_eq!(s.effect, Some(Effect::Reweight { weight: 0.0 }));
    assert_eq!(s.next.original_weight, Some(0.0098));
    assert_eq!(s.next.pgs_at_start, Some(22));
}

#[test]
fn replace_marks_out_instead() {
    let mut r = removal(Phase::Queued);
    r.replace = true;
    let s = run(&r, &healthy());
    assert_eq!(s.effect, Some(Effect::MarkOut));
    assert_eq!(s.next.was_in, Some(true));
}

#[test]
fn gates_before_a_drain() {
    let mut o = healthy();
    o.may_start_drain = Verdict { ok: false, message: "3 PGs degraded".into() };
    let s = run(&removal(Phase::Queued), &o);
    assert_eq!((s.next.phase, s.effect), (Phase::Queued, None));
    assert!(s.waiting_on.unwrap().contains("3 PGs degraded"));
    let mut o = healthy();
    o.ok_to_stop = Some(Verdict {
        ok: false,
        message: "unsafe to stop osd(s) at this time (9 PGs are or would become offline)".into(),
    });
    let s = run(&removal(Phase::Queued), &o);
    assert!(s.waiting_on.unwrap().contains("9 PGs are or would become offline"));
}

#[test]
fn draining_waits_for_zero_pgs_then_safe_to_destroy() {
    let mut o = healthy();
    o.crush_weight = Some(0.0);
    let s = run(&removal(Phase::Draining), &o);
    assert_eq!(s.waiting_on.as_deref(), Some("draining: 22 PGs left"));
    o.pgs = Some(0);
    let s = run(&removal(Phase::Draining), &o);
    assert_eq!(s.next.phase, Phase::WaitingSafe);
    assert!(s.waiting_on.unwrap().starts_with("safe-to-destroy: OSD(s) 4 have 22 pgs"));
    let s = run(&removal(Phase::Draining), &safe(o));
    assert_eq!((s.next.phase, s.effect), (Phase::Stopping, Some(Effect::StopDaemon)));
    assert!(s.next.stop_sent);
}

#[test]
fn a_drain_that_did_not_take_is_applied_again() {
    let s = run(&removal(Phase::Draining), &healthy());
    assert_eq!(s.effect, Some(Effect::Reweight { weight: 0.0 }));
}

#[test]
fn force_skips_the_pg_wait_but_not_safe_to_destroy() {
    let mut r = removal(Phase::Draining);
    r.force = true;
    let mut o = healthy();
    o.crush_weight = Some(0.0);
    let s = run(&r, &o);
    assert_eq!(s.next.phase, Phase::WaitingSafe);
    assert!(s.waiting_on.unwrap().starts_with("safe-to-destroy"));
}

#[test]
fn stop_then_purge_only_when_down_and_safe() {
    let mut r = removal(Phase::Stopping);
    r.stop_sent = true;
    let o = safe(healthy());
    let s = run(&r, &o);
    assert!(s.waiting_on.unwrap().contains("to be marked down"));
    let mut gone = o.clone();
    gone.daemon_running = Some(false);
    assert_eq!(run(&r, &gone).effect, Some(Effect::MarkDown), "daemon gone, monitors not told yet");
    let mut down = o.clone();
    down.up = false;
    let s = run(&r, &down);
    assert_eq!((s.next.phase, s.effect), (Phase::Destroying, Some(Effect::Purge)));
    let mut unsafe_down = down.clone();
    unsafe_down.safe_to_destroy = Some(Verdict { ok: false, message: "OSD(s) 4 have 3 pgs".into() });
    let s = run(&r, &unsafe_down);
    assert_eq!((s.next.phase, s.effect), (Phase::Destroying, None), "never purge an unsafe OSD");
}

#[test]
fn a_purge_that_went_through_is_not_issued_again() {
    let mut o = safe(healthy());
    o.up = false;
    o.exists = false;
    let s = run(&removal(Phase::Destroying), &o);
    assert_eq!(s.effect, Some(Effect::Zap { path: "/dev/loop4".into() }));
    assert_eq!(s.next.phase, Phase::Zapping);
}

#[test]
fn replace_destroys_and_keeps_the_id() {
    let mut r = removal(Phase::Destroying);
    r.replace = true;
    let mut o = safe(healthy());
    o.up = false;
    assert_eq!(run(&r, &o).effect, Some(Effect::Destroy));
    o.destroyed = true;
    assert_eq!(run(&r, &o).next.phase, Phase::Zapping);
}

#[test]
fn zap_each_device_once_then_done() {
    let mut r = removal(Phase::Zapping);
    r.devices = vec!["/dev/a".into(), "/dev/b".into()];
    let mut o = healthy();
    o.exists = false;
    assert_eq!(run(&r, &o).effect, Some(Effect::Zap { path: "/dev/a".into() }));
    r.zapped = vec!["/dev/a".into()];
    o.clean_devices = vec!["/dev/b".into()];
    let s = run(&r, &o);
    assert_eq!((s.next.phase, s.effect), (Phase::Done, None), "a disk already clean is not wiped again");
    r.zap = false;
    r.zapped.clear();
    assert_eq!(run(&r, &healthy()).next.phase, Phase::Done);
}

/// A new disk already in the slot (the old one pulled) is not the
/// removal's to wipe: it ends without it.
#[test]
fn a_new_disk_in_the_slot_is_never_wiped() {
    let mut r = removal(Phase::Zapping);
    r.devices = vec!["/dev/a".into(), "/dev/b".into()];
    r.device_ids = vec!["OLD-A".into(), "OLD-B".into()];
    let mut o = healthy();
    o.exists = false;
    o.replaced_devices = crate::domain::removal::replaced_devices(
        &r,
        &[
            crate::domain::inventory::Device::from(crate::domain::inventory::DeviceReport {
                path: "/dev/a".into(),
                device_id: "NEW-A".into(),
                ..Default::default()
            }),
            crate::domain::inventory::Device::from(crate::domain::inventory::DeviceReport {
                path: "/dev/b".into(),
                device_id: "OLD-B".into(),
                ..Default::default()
            }),
        ],
    );
    assert_eq!(o.replaced_devices, ["/dev/a"], "another serial at /dev/a; the old disk still at /dev/b");
    assert_eq!(run(&r, &o).effect, Some(Effect::Zap { path: "/dev/b".into() }));
    r.zapped = vec!["/dev/b".into()];
    let s = run(&r, &o);
    assert_eq!((s.next.phase, s.effect), (Phase::Done, None));
}

/// An LVM OSD whose DB shares a device with another OSD's: its LVs go first,
/// by its fsid (the purged id may be taken again), then its own disk is
/// wiped; the shared device is never wiped, nor held as freed.
#[test]
fn an_lvm_osd_loses_its_lvs_first_and_its_shared_db_device_is_never_wiped() {
    let mut r = removal(Phase::Zapping);
    r.devices = vec!["/dev/sdb".into(), "/dev/sdd".into()];
    r.lvm_fsid = Some("fe8c3e3d".into());
    r.shared_devices = vec!["/dev/sdd".into()];
    let mut o = healthy();
    o.exists = false;
    let s = run(&r, &o);
    assert_eq!(s.effect, Some(Effect::ZapLvs { fsid: "fe8c3e3d".into() }));
    let r = apply(&s.next, &Effect::ZapLvs { fsid: "fe8c3e3d".into() }, &Outcome::<String>::Done("ok".into()));
    assert!(r.lvs_zapped);
    let s = run(&r, &o);
    assert_eq!(s.effect, Some(Effect::Zap { path: "/dev/sdb".into() }), "its own disk, wiped at both ends");
    o.clean_devices = vec!["/dev/sdb".into()];
    let s = run(&r, &o);
    assert_eq!((s.next.phase, s.effect), (Phase::Done, None), "the shared /dev/sdd is left to the other OSD");
    assert_eq!(s.next.zapped, vec!["/dev/sdb".to_string()]);
    // A failed zap of the LVs is asked again; an unreachable host waits, or
    // with --force ends without wiping, naming only the OSD's own disks.
    let failed = apply(&r, &Effect::ZapLvs { fsid: "x".into() }, &Outcome::<String>::Failed("no".into()));
    assert_eq!(failed.lvs_zapped, r.lvs_zapped);
    let mut fresh = removal(Phase::Zapping);
    fresh.devices = vec!["/dev/sdb".into(), "/dev/sdd".into()];
    fresh.lvm_fsid = Some("fe8c3e3d".into());
    fresh.shared_devices = vec!["/dev/sdd".into()];
    o.host_reachable = false;
    assert!(run(&fresh, &o).waiting_on.unwrap().contains("unreachable"));
    fresh.force = true;
    let s = run(&fresh, &o);
    assert_eq!(s.next.ending, Some(Ending::NotZapped { devices: vec!["/dev/sdb".into()] }));
}

#[test]
fn rm_stop_restores_the_weight_or_marks_in() {
    let mut r = removal(Phase::Draining);
    r.stop_requested = true;
    r.original_weight = Some(0.0098);
    let mut o = healthy();
    o.crush_weight = Some(0.0);
    let s = run(&r, &o);
    assert_eq!((s.next.phase, s.effect), (Phase::Restoring, Some(Effect::Reweight { weight: 0.0098 })));
    o.crush_weight = Some(0.0098);
    assert_eq!(run(&s.next, &o).next.phase, Phase::Cancelled);
    let mut r = removal(Phase::WaitingSafe);
    r.replace = true;
    r.was_in = Some(true);
    r.stop_requested = true;
    o.is_in = false;
    assert_eq!(run(&r, &o).effect, Some(Effect::MarkIn));
    let mut q = removal(Phase::Queued);
    q.stop_requested = true;
    assert_eq!(run(&q, &healthy()).next.phase, Phase::Cancelled);
}

#[test]
fn dead_osd_and_gone_host_can_finish() {
    // The daemon died with its host: down, out, no longer in `osd df`.
    let mut o = safe(healthy());
    o.up = false;
    o.is_in = false;
    o.pgs = None;
    o.host_reachable = false;
    o.daemon_running = None;
    o.crush_weight = Some(0.0);
    let s = run(&removal(Phase::Draining), &o);
    assert_eq!(s.effect, Some(Effect::Purge), "drained (no PGs), safe, down: purge without the agent");
    let mut zapping = removal(Phase::Zapping);
    o.exists = false;
    assert!(run(&zapping, &o).waiting_on.unwrap().contains("unreachable"));
    zapping.force = true;
    let s = run(&zapping, &o);
    assert_eq!(s.next.phase, Phase::Done);
    assert!(s.next.note().unwrap().contains("not zapped"));
}

#[test]
fn an_osd_removed_elsewhere_ends_the_removal() {
    let mut o = healthy();
    o.exists = false;
    let s = run(&removal(Phase::Queued), &o);
    assert_eq!(s.next.phase, Phase::Done);
}

#[test]
fn stop_is_refused_past_the_point_of_no_return() {
    assert!(Phase::Draining.can_stop());
    assert!(!Phase::Stopping.can_stop());
    assert!(!Phase::Destroying.can_stop());
}

pub(super) fn in_place(phase: Phase) -> Removal {
    let mut r = removal(phase);
    r.replace = true;
    r.in_place = Some(InPlace::default());
    r
}

#[test]
fn in_place_sets_noout_and_stops_without_draining() {
    let s = run(&in_place(Phase::Queued), &healthy());
    assert_eq!((s.next.phase, s.effect), (Phase::Stopping, Some(Effect::Noout { on: true })));
    assert_eq!(s.next.original_weight, None, "no reweight: nothing drains");
    assert_eq!(s.next.pgs_at_start, Some(22));
    let mut o = healthy();
    o.noout = true;
    let s = run(&s.next, &o);
    assert_eq!(s.effect, Some(Effect::StopDaemon), "its 22 PGs stay on it: stopped at once");
    // A crash lost the flag, or someone lifted it: set again before the stop.
    let mut r = in_place(Phase::Stopping);
    r.stop_sent = true;
    assert_eq!(run(&r, &healthy()).effect, Some(Effect::Noout { on: true }));
}

#[test]
fn in_place_waits_for_ok_to_stop_unless_inactive_pgs_were_accepted() {
    let mut o = healthy();
    o.ok_to_stop = Some(Verdict { ok: false, message: "4 PGs would become inactive".into() });
    let s = run(&in_place(Phase::Queued), &o);
    assert_eq!((s.next.phase, s.effect), (Phase::Queued, None));
    assert!(s.waiting_on.unwrap().contains("4 PGs would become inactive"));
    let mut r = in_place(Phase::Queued);
    r.in_place = Some(InPlace { accept_inactive: true, accept_single_copy: false });
    assert_eq!(run(&r, &o).effect, Some(Effect::Noout { on: true }));
}

#[test]
fn in_place_destroys_a_down_osd_without_safe_to_destroy() {
    let mut o = healthy();
    o.up = false;
    o.noout = true;
    o.safe_to_destroy = Some(Verdict { ok: false, message: "OSD(s) 4 have 22 pgs".into() });
    let s = run(&in_place(Phase::Destroying), &o);
    assert_eq!(s.effect, Some(Effect::Destroy));
    assert!(!questions(&in_place(Phase::Destroying), &o).safe_to_destroy, "not even asked");
    let mut r = removal(Phase::Destroying);
    r.replace = true;
    assert_eq!(run(&r, &o).effect, None, "a drained removal still waits for safe-to-destroy");
}

#[test]
fn in_place_waits_under_noout_after_the_zap_until_its_id_is_back() {
    let mut o = healthy();
    (o.up, o.destroyed, o.noout) = (false, true, true);
    let mut r = in_place(Phase::Zapping);
    r.zapped = vec!["/dev/loop4".into()];
    let s = run(&r, &o);
    assert_eq!(s.next.phase, Phase::Rejoining);
    assert!(s.waiting_on.unwrap().contains("noout keeps its PGs"), "it waits; the flag stays");
    assert_eq!(s.effect, None);
    // The spec redeployed the id on the new disk: the flag goes, then the removal ends.
    let rejoining = s.next;
    let mut back = o.clone();
    (back.up, back.destroyed) = (true, false);
    let s = run(&rejoining, &back);
    assert_eq!(s.effect, Some(Effect::Noout { on: false }));
    back.noout = false;
    let s = run(&rejoining, &back);
    assert_eq!((s.next.phase, s.next.ending.clone()), (Phase::Done, Some(Ending::Rejoined)));
}

#[test]
fn a_stopped_in_place_removal_lifts_noout_and_leaves_the_id_destroyed() {
    let mut r = in_place(Phase::Rejoining);
    assert!(r.accepts_stop() && !r.phase.can_stop(), "taken, though no drain is undone");
    r.stop_requested = true;
    let mut o = healthy();
    (o.up, o.destroyed, o.noout) = (false, true, true);
    assert_eq!(run(&r, &o).effect, Some(Effect::Noout { on: false }));
    o.noout = false;
    let s = run(&r, &o);
    assert_eq!((s.next.phase, s.next.ending.clone()), (Phase::Done, Some(Ending::NooutLifted)));
    assert!(s.next.note().unwrap().contains("osd.4 stays destroyed"));
    // Stopping, destroying and zapping take the stop, and go on: it is
    // carried out once the removal waits for its new disk.
    for phase in [Phase::Stopping, Phase::Destroying, Phase::Zapping] {
        let mut r = in_place(phase);
        assert!(r.accepts_stop() && !removal(phase).accepts_stop(), "{phase:?}");
        r.stop_requested = true;
        r.stop_sent = true;
        let mut o = healthy();
        (o.up, o.noout, o.daemon_running) = (phase == Phase::Stopping, true, Some(false));
        let s = run(&r, &o);
        assert_ne!(s.next.phase, Phase::Cancelled, "{phase:?}: {s:?}");
        assert_ne!(s.effect, Some(Effect::Noout { on: false }), "{phase:?}");
    }
}

#[test]
fn in_place_does_not_wait_for_a_healthy_cluster_when_its_disk_is_dead_already() {
    let mut o = healthy();
    o.up = false;
    o.daemon_running = Some(false);
    o.may_start_drain = Verdict { ok: false, message: "44 PGs degraded".into() };
    assert!(questions(&in_place(Phase::Queued), &o).ok_to_stop, "asked all the same");
    let s = run(&in_place(Phase::Queued), &o);
    assert_eq!(s.effect, Some(Effect::Noout { on: true }), "{s:?}");
    assert_eq!(run(&removal(Phase::Queued), &o).effect, None, "a drain waits for health");
}

#[test]
fn rejoining_marks_a_new_osd_in_and_sets_noout_again_if_someone_lifted_it() {
    let mut r = in_place(Phase::Rejoining);
    r.was_in = Some(true);
    let mut o = healthy();
    (o.up, o.destroyed, o.noout, o.is_in) = (true, false, true, false);
    assert_eq!(run(&r, &o).effect, Some(Effect::MarkIn), "re-created ids start out");
    (o.up, o.destroyed, o.noout, o.is_in) = (false, true, false, true);
    assert_eq!(run(&r, &o).effect, Some(Effect::Noout { on: true }), "without it the PGs would move away");
    o.noout = true;
    let s = run(&r, &o);
    assert_eq!((s.next.phase, s.effect), (Phase::Rejoining, None));
}
