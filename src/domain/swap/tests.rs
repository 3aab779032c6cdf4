//! (state, observation) → step, phase by phase, for both ways.

use super::handover::tests::pg;
use super::*;
use crate::domain::removal::Phase as RemovalPhase;

/// osd.8 (0.9 of CRUSH weight) out, /dev/sdb (1.7) in, on f5-422-03.
pub(super) fn swap(phase: Phase) -> Swap {
    let olds = vec![OldOsd {
        id: 8,
        uuid: Some(uuid(8)),
        weight: 0.9,
        devices: vec!["/dev/sdd".into()],
        device_ids: vec!["HDD-8".into()],
    }];
    let news =
        vec![NewDisk { path: "/dev/sdb".into(), device_id: "SSD-B".into(), weight: 1.7, osd: None, planned_id: None }];
    Swap { phase, ..Swap::new("f5-422-03".into(), Way::FreeBay, olds, news) }
}

/// The uuid of the OSD the swap knows by `id`.
pub(super) fn uuid(id: u32) -> String {
    format!("{id:08x}-5151-4000-8000-000000000008")
}

pub(super) fn osd(id: u32, weight: f64) -> OsdSeen {
    OsdSeen { id, uuid: Some(uuid(id)), up: true, is_in: true, destroyed: false, crush_weight: Some(weight) }
}

/// A disk of the host: blank, or holding the LV of the OSD `of`.
pub(super) fn disk(path: &str, id: &str, of: Option<&str>) -> DiskNow {
    DiskNow {
        path: path.into(),
        device_id: id.into(),
        blank: of.is_none(),
        osd_fsids: of.map(|f| vec![f.to_string()]).unwrap_or_default(),
        holds: of.map(|f| format!("an LV of osd.8 (fsid {f})")).unwrap_or_default(),
    }
}

pub(super) fn calm() -> Observation {
    Observation {
        osds: vec![osd(8, 0.9), osd(15, 1.6)],
        balancer_on: Some(true),
        initial_weight_set: Some(false),
        max_backfills: 1,
        ..Observation::default()
    }
}

/// The new OSD (osd.20) made and at the hand-over weight.
pub(super) fn deployed(mut s: Swap) -> (Swap, Observation) {
    s.news[0].osd = Some(20);
    let mut o = calm();
    o.osds.push(osd(20, HANDOVER_WEIGHT));
    o.balancer_on = Some(false);
    o.deployment =
        Some(DeploymentSeen { number: 4, finished: true, gave_up: None, osds: vec![(20, "/dev/sdb".into())] });
    (s, o)
}

/// Runs advance until it asks for an effect or waits, as the kernel does.
pub(super) fn run(s: &Swap, o: &Observation) -> Step {
    crate::domain::operation::walk(s, |s| advance(s, o))
}

#[test]
fn queued_waits_for_a_healthy_cluster_then_pauses_the_balancer_it_remembers() {
    let mut o = calm();
    o.healthy = Some("3 PGs degraded".into());
    let s = run(&swap(Phase::Queued), &o);
    assert_eq!((s.next.phase, s.waiting_on.as_deref()), (Phase::Queued, Some("waiting: 3 PGs degraded")));
    let s = run(&swap(Phase::Queued), &calm());
    assert_eq!((s.next.phase, s.effect), (Phase::Preparing, Some(Effect::PauseBalancer)));
    assert!(s.next.balancer_paused && s.next.balancer_was_on == Some(true), "written before it is asked");
    let mut down = calm();
    down.osds[0].up = false;
    assert_eq!(run(&swap(Phase::Queued), &down).waiting_on.as_deref(), Some("waiting: osd.8 is down"));
}

#[test]
fn preparing_sets_the_initial_weight_once_then_stores_the_deployment() {
    let mut o = calm();
    o.balancer_on = Some(false);
    o.taken_ids = vec![0, 1, 2, 4];
    let s = run(&swap(Phase::Preparing), &o);
    assert_eq!(s.effect, Some(Effect::SetInitialWeight));
    assert_eq!(s.next.news[0].planned_id, Some(3), "the lowest id no OSD has, planned before the option is set");
    assert_eq!(initial_weight_sections(&s.next), vec!["osd.3".to_string()]);
    o.initial_weight_set = Some(true);
    o.taken_ids.push(3);
    let again = run(&s.next, &o);
    assert_eq!(again.effect, Some(Effect::SetInitialWeight), "set for every planned id, not for some");
    assert_eq!(again.next.news[0].planned_id, Some(3), "planned once");
    o.initial_weight_complete = true;
    let s = run(&s.next, &o);
    assert_eq!((s.next.phase, s.effect), (Phase::Deploying, Some(Effect::Deploy)));
}

#[test]
fn deploying_waits_for_the_deployment_then_holds_the_new_osd_at_the_hand_over_weight() {
    let (s, mut o) = deployed(swap(Phase::Deploying));
    let mut s0 = s.clone();
    s0.news[0].osd = None;
    o.initial_weight_set = Some(true);
    let mut running = o.clone();
    running.deployment = Some(DeploymentSeen { number: 4, finished: false, gave_up: None, osds: vec![] });
    let st = run(&s0, &running);
    assert_eq!((st.waiting_on.as_deref(), st.next.deployment), (Some("deploying: deployment 4"), Some(4)));
    // It came up at its own weight (the option did not reach it): held at W0.
    o.osds[2].crush_weight = Some(1.7);
    let st = run(&s0, &o);
    assert_eq!(st.effect, Some(Effect::Reweight { osd: 20, weight: HANDOVER_WEIGHT }));
    assert_eq!(st.next.news[0].osd, Some(20));
    o.osds[2].crush_weight = Some(6.0 / 65536.0);
    assert_eq!(run(&s0, &o).effect, Some(Effect::ClearInitialWeight), "0.0001 as CRUSH keeps it");
    let mut gave_up = o.clone();
    gave_up.deployment =
        Some(DeploymentSeen { number: 4, finished: true, gave_up: Some("exit 1".into()), osds: vec![] });
    let st = run(&s0, &gave_up);
    assert_eq!(st.next.phase, Phase::Unwinding, "{st:?}");
    assert_eq!(st.effect, Some(Effect::ClearInitialWeight), "the option is put back first");
}

#[test]
fn handing_over_issues_the_planned_entries_written_before_they_go_out() {
    let (s, mut o) = deployed(swap(Phase::HandingOver));
    o.pgs = Some(vec![pg("1.0", &[8, 3], &[20, 3]), pg("1.1", &[8, 4], &[15, 4]), pg("1.3", &[15, 4], &[15, 4])]);
    let st = run(&s, &o);
    let Some(Effect::Upmap { items }) = &st.effect else { panic!("{st:?}") };
    assert_eq!(items.len(), 2);
    assert_eq!(st.next.handed, *items, "the state lists them before the effect");
    assert_eq!((st.next.pgs_left, st.next.bytes_left), (Some(2), Some(200)));
    // Issued and backfilling: nothing more while the reservations are taken.
    let mut moving = o.clone();
    for p in moving.pgs.as_mut().unwrap().iter_mut().take(2) {
        p.items = upmap::entry(&p.raw, &p.final_up, false);
        p.up = p.final_up.clone();
        p.state = "active+remapped+backfilling".into();
    }
    let st = run(&st.next, &moving);
    assert_eq!(st.effect, None);
    assert!(st.waiting_on.unwrap().starts_with("handing over: 2 PGs moving"));
}

#[test]
fn settling_sets_the_final_weights_at_once_then_removes_only_no_op_entries() {
    let (mut s, mut o) = deployed(swap(Phase::HandingOver));
    s.handed = vec![UpmapItem { pgid: "1.0".into(), pairs: vec![(8, 20)] }];
    let mut p = pg("1.0", &[8, 3], &[20, 3]);
    p.items = vec![(8, 20)];
    p.up = vec![20, 3];
    p.acting = vec![20, 3];
    o.pgs = Some(vec![p.clone(), pg("1.3", &[15, 4], &[15, 4])]);
    let st = run(&s, &o);
    assert_eq!(
        (st.next.phase, st.effect),
        (Phase::Settling, Some(Effect::SetWeights { weights: vec![(8, 0.0), (20, 1.7)] }))
    );
    // Set: the raw sets are the final ones; the entry is a no-op until the monitors drop it.
    o.osds[0].crush_weight = Some(0.0);
    o.osds[2].crush_weight = Some(1.7);
    p.raw = vec![20, 3];
    o.pgs = Some(vec![p.clone()]);
    let st = run(&st.next, &o);
    assert_eq!(st.effect, Some(Effect::RmUpmap { pgids: vec!["1.0".into()] }));
    assert!(st.next.settled);
    p.items.clear();
    o.pgs = Some(vec![p]);
    let st = run(&st.next, &o);
    assert_eq!((st.next.phase, st.effect), (Phase::Retiring, Some(Effect::Retire)));
}

#[test]
fn settling_goes_back_to_handing_over_when_the_map_moved() {
    let (s, mut o) = deployed(swap(Phase::Settling));
    o.pgs = Some(vec![pg("1.0", &[8, 3], &[20, 3])]);
    let st = run(&s, &o);
    assert_eq!(st.next.phase, Phase::HandingOver);
    assert_eq!(st.effect, None, "never set the weights while a PG would move");
}

#[test]
fn retiring_waits_for_the_removals_then_puts_the_balancer_back() {
    let (mut s, mut o) = deployed(swap(Phase::Retiring));
    s.retired = true;
    s.balancer_paused = true;
    s.balancer_was_on = Some(true);
    assert_eq!(run(&s, &o).waiting_on.as_deref(), Some("retiring: the removals are not read yet"));
    o.removals = Some(vec![removal(RemovalPhase::WaitingSafe)]);
    assert_eq!(run(&s, &o).waiting_on.as_deref(), Some("retiring: removal of osd.8"));
    o.removals = Some(vec![removal(RemovalPhase::Done)]);
    let st = run(&s, &o);
    assert_eq!((st.next.phase, st.effect), (Phase::Finishing, Some(Effect::ResumeBalancer)));
    o.balancer_on = Some(true);
    assert_eq!(run(&st.next, &o).next.phase, Phase::Done);
}

#[test]
fn a_stop_keeps_what_was_handed_over_and_puts_back_what_was_set() {
    let (mut s, mut o) = deployed(swap(Phase::HandingOver));
    s.stop_requested = true;
    s.balancer_paused = true;
    s.balancer_was_on = Some(true);
    s.initial_weight_set = true;
    o.initial_weight_set = Some(true);
    let st = run(&s, &o);
    assert_eq!((st.next.phase, st.effect), (Phase::Unwinding, Some(Effect::ClearInitialWeight)));
    o.initial_weight_set = Some(false);
    // Nothing handed over: the balancer comes back.
    let st = run(&st.next, &o);
    assert_eq!(st.effect, Some(Effect::ResumeBalancer));
    o.balancer_on = Some(true);
    let st = run(&st.next, &o);
    assert_eq!(st.next.phase, Phase::Stopped);
    assert_eq!(st.next.ending.as_deref(), Some("stopped; nothing was handed over"));
    // Something handed over: kept, and the balancer stays off (it would move it back).
    s.handed = vec![UpmapItem { pgid: "1.0".into(), pairs: vec![(8, 20)] }];
    o.balancer_on = Some(false);
    let st = run(&s, &o);
    assert_eq!((st.next.phase, st.effect), (Phase::Stopped, None));
    assert!(st.next.ending.unwrap().contains("1 PG handed over to their final place are kept there"));
}

#[test]
fn stop_is_refused_once_the_old_osds_are_retired() {
    assert!(swap(Phase::HandingOver).can_stop());
    for p in [Phase::Settling, Phase::Retiring, Phase::Finishing] {
        assert!(!swap(p).can_stop(), "{p:?}");
    }
    // In place, until its removal has begun (the daemon's `swap stop` asks the removal).
    assert!(in_place(Phase::Retiring).can_stop());
    for p in [Phase::AwaitingDisk, Phase::Deploying, Phase::Recovering] {
        assert!(!in_place(p).can_stop(), "{p:?}: the old OSD is destroyed, the way back is forward");
    }
    let mut s = swap(Phase::Settling);
    s.stop_requested = true;
    let (_, o) = deployed(s.clone());
    assert_ne!(run(&s, &o).next.phase, Phase::Unwinding);
}

#[test]
fn a_restart_observes_again() {
    let s = swap(Phase::HandingOver);
    assert_eq!(interrupted(&s), s);
    assert_eq!(apply(&s, &Effect::Retire, &crate::domain::operation::Outcome::Done(())), s, "seen in the store");
}

/// The swap's removal of osd.8, in `phase`.
pub(super) fn removal(phase: RemovalPhase) -> RemovalSeen {
    RemovalSeen { osd: 8, phase, stop_requested: false, rejoined: false, waiting_on: None, note: None }
}

pub(super) fn in_place(phase: Phase) -> Swap {
    let mut s = swap(phase);
    s.way = Way::InPlace;
    s.news =
        vec![NewDisk { path: "/dev/sdd".into(), device_id: String::new(), weight: 0.9, osd: None, planned_id: None }];
    s
}

/// The old OSD's `noout`, stop, destroy and zap are its in-place
/// removal's (`domain::removal`); the swap stores it, says what it waits
/// on, then makes the new OSD with the old id and waits for its copies.
#[test]
fn in_place_retires_the_old_osd_by_an_in_place_removal_then_makes_it_again_on_a_new_disk() {
    let mut o = calm();
    o.healthy = Some("3 PGs degraded".into());
    assert_eq!(run(&in_place(Phase::Queued), &o).waiting_on.as_deref(), Some("waiting: 3 PGs degraded"));
    o.healthy = None;
    let st = run(&in_place(Phase::Queued), &o);
    assert_eq!((st.next.phase, st.effect.clone()), (Phase::Retiring, None), "{st:?}");
    assert_eq!(st.waiting_on.as_deref(), Some("retiring: the removal is not read yet"));
    o.removals = Some(vec![]);
    let st = run(&st.next, &o);
    assert_eq!(st.effect, Some(Effect::Retire), "stored once the swap sees none of its own");
    assert_eq!(run(&st.next, &o).effect, Some(Effect::Retire), "a crash before the store: asked again");
    let mut r = removal(RemovalPhase::Queued);
    r.waiting_on = Some("ok-to-stop: unsafe to stop osd(s) at this time (20 PGs are or would become offline)".into());
    o.removals = Some(vec![r.clone()]);
    let st = run(&st.next, &o);
    assert_eq!(st.effect, None, "never twice");
    assert_eq!(
        st.waiting_on.as_deref(),
        Some("removal of osd.8 (queued): ok-to-stop: unsafe to stop osd(s) at this time (20 PGs are or would become offline)")
    );
    // Destroyed and zapped: the removal waits for the id under noout, the swap for a new disk.
    (r.phase, r.waiting_on) = (RemovalPhase::Rejoining, Some("rejoining: osd.8 waits for its new disk".into()));
    o.removals = Some(vec![r.clone()]);
    o.osds[0] = OsdSeen { up: false, destroyed: true, uuid: None, ..o.osds[0].clone() };
    o.disks = vec![disk("/dev/sdd", "HDD-8", None)];
    let st = run(&st.next, &o);
    assert_eq!(st.next.phase, Phase::AwaitingDisk);
    assert!(st.waiting_on.unwrap().starts_with("waiting for a new disk in /dev/sdd"), "the old disk, wiped");
    o.disks = vec![disk("/dev/sdd", "HDD-NEW", None)];
    let st = run(&st.next, &o);
    assert_eq!((st.next.phase, st.effect), (Phase::Deploying, Some(Effect::Deploy)));
    assert_eq!(st.next.news[0].device_id, "HDD-NEW");
    o.deployment =
        Some(DeploymentSeen { number: 2, finished: true, gave_up: None, osds: vec![(8, "/dev/sdd".into())] });
    o.osds[0] = OsdSeen { up: true, destroyed: false, uuid: Some("new-osd-8".into()), ..o.osds[0].clone() };
    o.short_pgs = Some(0);
    let st = run(&st.next, &o);
    assert_eq!(st.next.phase, Phase::Recovering);
    assert_eq!(
        st.waiting_on.as_deref(),
        Some("recovering: removal of osd.8 (rejoining): rejoining: osd.8 waits for its new disk")
    );
    (r.phase, r.rejoined, r.waiting_on) = (RemovalPhase::Done, true, None);
    o.removals = Some(vec![r]);
    o.short_pgs = Some(12);
    let st = run(&st.next, &o);
    assert_eq!(st.waiting_on.as_deref(), Some("recovering: 12 PGs degraded, undersized or not active"));
    o.short_pgs = Some(0);
    let st = run(&st.next, &o);
    assert_eq!((st.next.phase, st.effect, st.next.ending), (Phase::Done, None, None));
}

/// The removal ends otherwise (another OSD's daemon under the id, an
/// id made again by someone else): the swap ends with its words, or goes
/// on with the id that is back.
#[test]
fn in_place_ends_with_its_removals_words_or_goes_on_with_an_id_made_by_someone_else() {
    let mut o = calm();
    let mut r = removal(RemovalPhase::Cancelled);
    r.note = Some("superseded: the daemon serving osd.8 on f5-422-03 is not the OSD scheduled (x)".into());
    o.removals = Some(vec![r.clone()]);
    let st = run(&in_place(Phase::Retiring), &o);
    assert_eq!((st.next.phase, st.effect), (Phase::Failed, None));
    assert_eq!(
        st.next.ending.as_deref(),
        Some("failed: the removal of osd.8 ended: superseded: the daemon serving osd.8 on f5-422-03 is not the OSD scheduled (x)")
    );
    (r.phase, r.rejoined, r.note) = (RemovalPhase::Done, true, None);
    o.removals = Some(vec![r]);
    o.osds[0].uuid = Some("made-by-a-spec".into());
    o.short_pgs = Some(0);
    let st = run(&in_place(Phase::Retiring), &o);
    assert_eq!((st.next.phase, st.effect.clone()), (Phase::Done, None), "{st:?}");
    assert_eq!(st.next.ending.as_deref(), Some("osd.8 was made again on f5-422-03 by someone else"));
}

#[test]
fn in_place_without_serials_takes_a_blank_disk_only_at_a_slot_other_than_the_old_disk() {
    // Loop devices (the real sandbox) and some controllers give no serial:
    // the wiped old disk and a new one look alike at the old disk's path.
    let mut s = in_place(Phase::AwaitingDisk);
    s.olds[0].device_ids = vec![String::new()];
    let mut o = calm();
    o.osds[0] = OsdSeen { up: false, destroyed: true, uuid: None, ..o.osds[0].clone() };
    o.disks = vec![disk("/dev/sdd", "", None), disk("/dev/sdg", "", None)];
    let st = run(&s, &o);
    assert!(st.waiting_on.unwrap().starts_with("waiting for a new disk in /dev/sdd"), "the old disk, wiped");
    // The slot named with `--with`: what is there is not the old disk, wiped where it is.
    s.news[0].path = "/dev/sdg".into();
    let st = run(&s, &o);
    assert_eq!((st.next.phase, st.effect), (Phase::Deploying, Some(Effect::Deploy)));
    // Unless it carries the old disk's id (moved there).
    s.olds[0].device_ids = vec!["HDD-8".into()];
    o.disks = vec![disk("/dev/sdg", "HDD-8", None)];
    assert_eq!(run(&s, &o).next.phase, Phase::AwaitingDisk);
}

/// `swap stop` before the removal began: the swap asks it to stop, and
/// ends with its words once it has; with none stored, at once.
#[test]
fn in_place_stop_before_its_removal_began_stops_the_removal() {
    let mut s = in_place(Phase::Queued);
    s.stop_requested = true;
    let st = run(&s, &calm());
    assert_eq!((st.next.phase, st.effect), (Phase::Stopped, None));
    assert_eq!(st.next.ending.as_deref(), Some("stopped before osd.8 was stopped; nothing was changed"));
    s.phase = Phase::Retiring;
    let mut o = calm();
    o.removals = Some(vec![]);
    assert_eq!(run(&s, &o).next.phase, Phase::Stopped, "none stored: nothing to stop");
    let mut r = removal(RemovalPhase::Queued);
    o.removals = Some(vec![r.clone()]);
    let st = run(&s, &o);
    assert_eq!((st.next.phase, st.effect), (Phase::Retiring, Some(Effect::StopRemovals)));
    r.stop_requested = true;
    o.removals = Some(vec![r.clone()]);
    let st = run(&s, &o);
    assert_eq!((st.effect, st.waiting_on.as_deref()), (None, Some("removal of osd.8 (queued): under way")));
    (r.phase, r.note) = (RemovalPhase::Cancelled, Some("stopped before osd.8 was stopped; nothing was changed".into()));
    o.removals = Some(vec![r.clone()]);
    let st = run(&s, &o);
    assert_eq!(st.next.phase, Phase::Stopped);
    assert_eq!(st.next.ending.as_deref(), Some("stopped before osd.8 was stopped; nothing was changed"));
    // Past its stop, the removal carries the stop out once destroyed and zapped; the swap makes nothing.
    (r.phase, r.note) = (RemovalPhase::Rejoining, None);
    o.removals = Some(vec![r]);
    assert_eq!(run(&s, &o).next.phase, Phase::Retiring, "not awaiting a disk it will not use");
}

#[test]
fn the_lowest_free_ids_skip_every_taken_one_in_any_order() {
    assert_eq!(lowest_free_ids(&[3, 0, 1, 1], 3), vec![2, 4, 5]);
    assert_eq!(lowest_free_ids(&[], 2), vec![0, 1]);
    assert_eq!(lowest_free_ids(&[5], 0), Vec::<u32>::new());
}

#[test]
fn a_swap_that_cannot_read_the_pg_map_says_why_it_waits() {
    let mut o = calm();
    o.balancer_on = None;
    o.input_error = Some("the simulator keeps no PG map".into());
    let s = run(&swap(Phase::Queued), &o);
    assert_eq!(s.waiting_on.as_deref(), Some("balancer status: cannot be read: the simulator keeps no PG map"));
    o.input_error = None;
    assert_eq!(run(&swap(Phase::Queued), &o).waiting_on.as_deref(), Some("balancer status: not read yet"));
}

#[test]
fn the_in_place_window_ends_once_no_pg_is_short_of_copies_or_inactive() {
    let states = |list: &[(&str, i64)]| list.iter().map(|(s, n)| (s.to_string(), *n)).collect::<Vec<_>>();
    // Re-peering after the new OSD's boot: neither degraded nor undersized.
    assert_eq!(short_pgs(&states(&[("active+clean", 20), ("peering", 12)])), 12);
    assert_eq!(short_pgs(&states(&[("active+undersized+degraded+remapped+backfilling", 3)])), 3);
    assert_eq!(short_pgs(&states(&[("activating", 1), ("active+clean+scrubbing+deep", 5)])), 1);
    // A drain or the balancer moving PGs elsewhere does not hold it.
    assert_eq!(short_pgs(&states(&[("active+clean", 30), ("active+remapped+backfill_wait", 2)])), 0);
}
