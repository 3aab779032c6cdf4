//! (state, observation) → step, phase by phase, for both ways.

use super::handover::tests::pg;
use super::*;
use crate::domain::cluster::Verdict;

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
    OsdSeen {
        id,
        uuid: Some(uuid(id)),
        up: true,
        is_in: true,
        destroyed: false,
        crush_weight: Some(weight),
        noout: false,
    }
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
        host_reachable: true,
        // Read, and no PG short of copies: the last-copy gate lets acts go.
        copies: Some(Ok(crate::domain::copies::Copies::default())),
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
    o.removals = vec![RemovalSeen { osd: 8, finished: false, cancelled: false }];
    assert_eq!(run(&s, &o).waiting_on.as_deref(), Some("retiring: removal of osd.8"));
    o.removals[0].finished = true;
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
    assert!(Phase::HandingOver.can_stop());
    for p in [Phase::Settling, Phase::Retiring, Phase::Stopping, Phase::Destroying] {
        assert!(!p.can_stop(), "{p:?}");
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
    let zapped = apply(&s, &Effect::Zap { path: "/dev/sdd".into() }, &crate::domain::operation::Outcome::Done(()));
    assert_eq!(zapped.zapped, ["/dev/sdd"]);
}

pub(super) fn in_place(phase: Phase) -> Swap {
    let mut s = swap(phase);
    s.way = Way::InPlace;
    s.news =
        vec![NewDisk { path: "/dev/sdd".into(), device_id: String::new(), weight: 0.9, osd: None, planned_id: None }];
    s
}

#[test]
fn in_place_stops_under_noout_destroys_keeping_the_id_and_waits_for_a_new_disk() {
    let mut o = calm();
    o.ok_to_stop = Some(Verdict::yes());
    let st = run(&in_place(Phase::Queued), &o);
    assert_eq!((st.next.phase, st.effect), (Phase::Noout, Some(Effect::Noout { osd: 8 })));
    o.osds[0].noout = true;
    let st = run(&st.next, &o);
    assert_eq!((st.next.phase, st.effect), (Phase::Stopping, Some(Effect::StopDaemon { osd: 8 })));
    o.osds[0].up = false;
    let st = run(&st.next, &o);
    assert_eq!(st.effect, Some(Effect::Destroy { osd: 8 }));
    o.osds[0].destroyed = true;
    o.osds[0].uuid = None;
    o.disks = vec![disk("/dev/sdd", "HDD-8", Some(&uuid(8)))];
    let st = run(&st.next, &o);
    assert_eq!(st.effect, Some(Effect::Zap { path: "/dev/sdd".into() }));
    // Wiped: blank with the old disk's id, which is not a new disk.
    o.disks = vec![disk("/dev/sdd", "HDD-8", None)];
    let st = run(&st.next, &o);
    assert_eq!(st.next.phase, Phase::AwaitingDisk);
    assert!(st.waiting_on.unwrap().starts_with("waiting for a new disk in /dev/sdd"));
    o.disks = vec![disk("/dev/sdd", "HDD-NEW", None)];
    let st = run(&st.next, &o);
    assert_eq!((st.next.phase, st.effect), (Phase::Deploying, Some(Effect::Deploy)));
    assert_eq!(st.next.news[0].device_id, "HDD-NEW");
    o.deployment =
        Some(DeploymentSeen { number: 2, finished: true, gave_up: None, osds: vec![(8, "/dev/sdd".into())] });
    o.osds[0] = OsdSeen { up: true, destroyed: false, uuid: Some("new-osd-8".into()), ..o.osds[0].clone() };
    o.short_pgs = Some(12);
    let st = run(&st.next, &o);
    assert_eq!(st.waiting_on.as_deref(), Some("recovering: 12 PGs degraded, undersized or not active"));
    o.short_pgs = Some(0);
    let st = run(&st.next, &o);
    assert_eq!(st.effect, Some(Effect::ClearNoout { osd: 8 }));
    o.osds[0].noout = false;
    assert_eq!(run(&st.next, &o).next.phase, Phase::Done);
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

#[test]
fn in_place_waits_on_ok_to_stop_unless_inactive_pgs_were_accepted() {
    let mut o = calm();
    o.ok_to_stop = Some(Verdict::no("unsafe to stop osd(s) at this time (20 PGs are or would become offline)"));
    let st = run(&in_place(Phase::Queued), &o);
    assert!(st.waiting_on.unwrap().contains("20 PGs are or would become offline"));
    let mut s = in_place(Phase::Queued);
    s.risk = Some(Risk {
        pgs_degraded: 20,
        bytes: 1,
        accepted: vec![],
        window_s: None,
        making_s: None,
        accept_inactive: true,
        accept_single_copy: false,
    });
    assert_eq!(run(&s, &o).effect, Some(Effect::Noout { osd: 8 }));
}

#[test]
fn in_place_stop_before_the_daemon_stops_clears_noout() {
    let mut s = in_place(Phase::Noout);
    s.stop_requested = true;
    let mut o = calm();
    o.osds[0].noout = true;
    let st = run(&s, &o);
    assert_eq!((st.next.phase, st.effect), (Phase::Restoring, Some(Effect::ClearNoout { osd: 8 })));
    o.osds[0].noout = false;
    let st = run(&st.next, &o);
    assert_eq!(st.next.phase, Phase::Stopped);
    assert!(!Phase::Stopping.can_stop(), "after the stop the way back is forward");
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
