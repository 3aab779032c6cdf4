//! Swaps on the simulated field-report cluster with its PG map: a free-bay
//! swap from request to purge, against a drain-then-add of the same disk;
//! a crash in the middle of the hand-over; `swap stop`; the in-place way's
//! refusal on a size-2 pool.

use super::*;
use crate::agent_client::HostAgents;
use crate::domain::copies::Accept;
use crate::domain::swap::{Phase, SwapRecord, Way};
use crate::store::SwapCodec;

/// osd.8 (an HDD of 931 GB on f5-422-03) out, the free SSD /dev/sdb of that host in.
pub(super) fn replace_8() -> swap::SwapRequest {
    swap::SwapRequest {
        osds: vec![8],
        host: None,
        devices: vec!["/dev/sdb".into()],
        way: Way::FreeBay,
        accept: Accept::default(),
        method: None,
        encrypted: false,
    }
}

/// osd.8 replaced in place, its single-copy risk accepted.
pub(super) fn replace_8_in_place() -> swap::SwapRequest {
    let mut req = replace_8();
    req.way = Way::InPlace;
    req.devices.clear();
    req.accept.single_copy = true;
    req
}

pub(super) async fn pg_map_daemon() -> (tempfile::TempDir, Arc<Daemon>, crate::sim::SimCluster) {
    daemon_on_sim(crate::sim::field_report_cluster(20.0, 10.0, 50.0).manual_clock().with_pg_map()).await
}

pub(super) async fn latest(d: &Arc<Daemon>) -> SwapRecord {
    d.store.ops::<SwapCodec>().with_finished(10).await.unwrap().pop().expect("a swap")
}

/// One round of each worker a swap leans on, then 20 ms of the cluster's time.
pub(super) async fn rounds(d: &Arc<Daemon>, sim: &crate::sim::SimCluster) {
    d.swaps().round().await.unwrap();
    d.deployments.round().await.unwrap();
    d.removals.round().await.unwrap();
    sim.advance(std::time::Duration::from_millis(20));
}

/// Rounds, each armed to crash right after `effect` (`kind:effect`) went
/// through, until one did: whether it did.
pub(super) async fn rounds_until_crash(d: &Arc<Daemon>, sim: &crate::sim::SimCluster, effect: &str) -> bool {
    for _ in 0..400 {
        let (d2, sim2) = (d.clone(), sim.clone());
        let armed = operations::crash::CRASH_AFTER_IN_TEST.scope(effect.to_string(), async move {
            rounds(&d2, &sim2).await;
        });
        if tokio::spawn(armed).await.is_err() {
            return true;
        }
    }
    false
}

pub(super) async fn until(
    d: &Arc<Daemon>,
    sim: &crate::sim::SimCluster,
    done: impl Fn(&SwapRecord) -> bool,
) -> SwapRecord {
    for _ in 0..400 {
        rounds(d, sim).await;
        let rec = latest(d).await;
        if done(&rec) {
            return rec;
        }
    }
    panic!("the swap did not get there: {:?}", latest(d).await);
}

fn clean(sim: &crate::sim::SimCluster) -> bool {
    let states = futures::executor::block_on(sim.state()).unwrap().pg_states;
    states.iter().all(|(s, n)| s == "active+clean" || *n == 0)
}

#[tokio::test]
async fn a_free_bay_swap_moves_less_than_drain_then_add_and_leaves_nothing_pinned() {
    let (_dir, d, sim) = pg_map_daemon().await;
    let (rec, costs) = d.swaps().schedule(&replace_8()).await.unwrap();
    assert_eq!((rec.state.host.as_str(), rec.state.phase), ("f5-422-03", Phase::Queued));
    let (swap_bytes, then_add) = (costs.swap.unwrap().bytes, costs.drain_then_add.unwrap().bytes);
    assert!(swap_bytes < then_add, "the preview: {swap_bytes} < {then_add}");
    let rec = until(&d, &sim, |r| r.state.phase.is_finished()).await;
    assert_eq!(rec.state.phase, Phase::Done, "{rec:?}");
    let new = rec.state.news[0].osd.expect("the new OSD");
    let osds = sim.osds();
    assert!(osds.iter().all(|o| o.id != 8), "osd.8 purged");
    let o = osds.iter().find(|o| o.id == new).unwrap();
    assert!((o.crush_weight - rec.state.news[0].weight).abs() < 1e-9, "at its own weight: {o:?}");
    assert!(sim.upmaps().is_empty(), "nothing pinned: {:?}", sim.upmaps());
    assert!(clean(&sim));
    let moved = sim.moved_bytes();
    assert!(moved > 0 && moved <= swap_bytes, "moved {moved}, planned {swap_bytes}");
    // Each action once: one deployment, one settle, one removal; the balancer back on.
    let actions = d.store.actions(rec.id).await.unwrap();
    let count = |name: &str| actions.iter().filter(|a| a.effect == name).count();
    assert_eq!((count("deploy"), count("set-weights"), count("retire")), (1, 1, 1), "{actions:?}");
    assert_eq!((count("pause-balancer"), count("resume-balancer")), (1, 1));
    assert!(d.store.holds().await.unwrap().iter().all(|h| h.path != "/dev/sdb"), "the new disk is not held");

    // The same disk the cephadm way, on a fresh cluster: drain osd.8, then add the SSD.
    let (_dir2, d2, sim2) = pg_map_daemon().await;
    let req = removal::RemoveRequest { ids: vec![8], zap: true, ..Default::default() };
    d2.removals.schedule_removals(&req).await.unwrap();
    rounds_until(&d2, &sim2, 8, |r| r.state.phase == crate::domain::removal::Phase::Done).await;
    let host = d2.store.host("f5-422-03").await.unwrap();
    let recipe = crate::domain::swap::Recipe::default();
    let pacific = crate::domain::ceph_release::Release::Pacific;
    let (command, _) = crate::domain::swap::deploy_commands(recipe, pacific, &["/dev/sdb".into()], &[]).remove(0);
    let request = CephVolumeRequest { args: command, osdspec_affinity: None };
    assert_eq!(sim2.ceph_volume(&host, &request).await.unwrap().exit_code, 0);
    let added = sim2.osds().into_iter().find(|o| o.host == "f5-422-03" && o.device == "/dev/sdb").unwrap().id;
    let activate = ActivateRequest {
        osd_fsid: String::new(),
        kind: crate::domain::deploy::OsdKind::Lvm,
        device: "/dev/sdb".into(),
    };
    sim2.activate_osd(&host, added, &activate).await.unwrap();
    sim2.start_osd(&host, added).await.unwrap();
    for _ in 0..400 {
        sim2.advance(std::time::Duration::from_millis(20));
        if clean(&sim2) {
            break;
        }
    }
    assert!(clean(&sim2));
    assert!(moved < sim2.moved_bytes(), "swap moved {moved}, drain then add {}", sim2.moved_bytes());
}

#[tokio::test]
async fn a_crash_in_the_hand_over_resumes_without_issuing_or_moving_anything_twice() {
    let (_dir, d, sim) = pg_map_daemon().await;
    d.swaps().schedule(&replace_8()).await.unwrap();
    // Every round armed: the one that issues the first entries dies right after they went through.
    assert!(rounds_until_crash(&d, &sim, "swap:upmap").await, "the hand-over never began");
    let issued = sim.upmaps();
    assert!(!issued.is_empty(), "the entries went through before the crash");
    let rec = latest(&d).await;
    let actions = d.store.actions(rec.id).await.unwrap();
    assert!(actions.last().is_some_and(|a| a.effect == "upmap" && a.outcome.is_none()), "{actions:?}");
    let rec = until(&d, &sim, |r| r.state.phase.is_finished()).await;
    assert_eq!(rec.state.phase, Phase::Done, "{rec:?}");
    let actions = d.store.actions(rec.id).await.unwrap();
    let cut = actions.iter().find(|a| a.effect == "upmap").unwrap();
    assert_eq!(cut.outcome, Some(crate::domain::operation::OutcomeStatus::Unknown), "closed as cut off");
    // No PG's entry was issued again: each pgid appears in one upmap action only.
    let mut pgids: Vec<String> = actions
        .iter()
        .filter(|a| a.effect == "upmap")
        .flat_map(|a| a.detail.split("; ").filter_map(|c| c.split(' ').nth(3).map(str::to_string)).collect::<Vec<_>>())
        .collect();
    let n = pgids.len();
    pgids.sort();
    pgids.dedup();
    assert_eq!(n, pgids.len(), "an entry issued twice: {actions:?}");
    // And the data moved as much as a swap without a crash moves.
    let (_dir2, d2, sim2) = pg_map_daemon().await;
    d2.swaps().schedule(&replace_8()).await.unwrap();
    until(&d2, &sim2, |r| r.state.phase.is_finished()).await;
    assert_eq!(sim.moved_bytes(), sim2.moved_bytes());
}

#[tokio::test]
async fn a_stopped_swap_keeps_what_it_handed_over_and_leaves_a_clean_cluster() {
    let (_dir, d, sim) = pg_map_daemon().await;
    d.swaps().schedule(&replace_8()).await.unwrap();
    let rec = until(&d, &sim, |r| r.state.phase == Phase::HandingOver && !r.state.handed.is_empty()).await;
    d.swaps().stop(rec.number).await.unwrap();
    let rec = until(&d, &sim, |r| r.state.phase.is_finished()).await;
    assert_eq!(rec.state.phase, Phase::Stopped, "{rec:?}");
    assert!(rec.state.ending.as_deref().unwrap().contains("handed over to their final place are kept there"));
    for _ in 0..100 {
        sim.advance(std::time::Duration::from_millis(20));
    }
    assert!(clean(&sim), "every PG active+clean, none degraded");
    let osds = sim.osds();
    let old = osds.iter().find(|o| o.id == 8).expect("osd.8 stays");
    assert!(old.up && old.is_in && old.crush_weight > 0.5, "in at its weight: {old:?}");
    assert!(!sim.upmaps().is_empty(), "the entries stay, valid");
    assert!(matches!(d.swaps().stop(rec.number).await, Err(DaemonError::Conflict(_))), "ended");
}

#[tokio::test]
async fn a_swap_stopped_before_it_began_changes_nothing_and_lets_the_disk_go() {
    let (_dir, d, sim) = pg_map_daemon().await;
    let (rec, _) = d.swaps().schedule(&replace_8()).await.unwrap();
    assert!(d.store.holds().await.unwrap().iter().any(|h| h.path == "/dev/sdb"), "held from specs");
    d.swaps().stop(rec.number).await.unwrap();
    let rec = until(&d, &sim, |r| r.state.phase.is_finished()).await;
    assert_eq!(rec.state.phase, Phase::Stopped);
    assert_eq!(rec.state.ending.as_deref(), Some("stopped; nothing was handed over"));
    assert!(d.store.actions(rec.id).await.unwrap().is_empty(), "nothing was done");
    assert!(d.store.holds().await.unwrap().iter().all(|h| h.path != "/dev/sdb"), "the disk is free again");
}

#[tokio::test]
async fn the_in_place_way_is_refused_on_a_size_two_pool_unless_its_risk_is_accepted() {
    let (_dir, d, _sim) = pg_map_daemon().await;
    let mut req = replace_8();
    req.way = Way::InPlace;
    req.devices.clear();
    let Err(DaemonError::RefusedUnsafe(why)) = d.swaps().schedule(&req).await else { panic!("not refused") };
    assert!(why.contains("pool 'rbd' (size 2, min_size 1) with one copy"), "{why}");
    assert!(why.contains("--accept-single-copy takes that risk") && why.ends_with("nothing was scheduled"), "{why}");
    assert!(d.store.ops::<SwapCodec>().with_finished(10).await.unwrap().is_empty(), "nothing stored");
    let (_, _, refusals) = d.swaps().preview(&req).await.unwrap();
    assert_eq!(refusals.len(), 1, "the preview says so too");
    req.accept.single_copy = true;
    let (rec, _) = d.swaps().schedule(&req).await.unwrap();
    let risk = rec.state.risk.expect("the risk taken is recorded");
    assert!(risk.pgs_degraded > 0 && risk.accepted[0].contains("with one copy"), "{risk:?}");
    assert_eq!(rec.state.news[0].path, "/dev/sdd", "the old disk's slot");
    let events = d.store.events(None, 20).await.unwrap();
    let scheduled = events.iter().find(|e| e.kind == EventKind::SwapScheduled).unwrap();
    assert_eq!(scheduled.level, crate::domain::event::Level::Warning);
}

#[tokio::test]
async fn an_in_place_swap_keeps_the_id_and_rebuilds_its_copies_once_from_the_others() {
    let (_dir, d, sim) = pg_map_daemon().await;
    let req = replace_8_in_place();
    let (_, costs) = d.swaps().schedule(&req).await.unwrap();
    assert_eq!(costs.in_place.making, None, "no deployment yet to time the making by");
    let rec = until(&d, &sim, |r| r.state.phase == Phase::AwaitingDisk).await;
    assert!(rec.waiting_on.unwrap().starts_with("waiting for a new disk in /dev/sdd on f5-422-03"));
    assert!(sim.osds().iter().any(|o| o.id == 8 && o.destroyed), "destroyed, its id kept");
    assert!(!clean(&sim), "its PGs run a copy short meanwhile");
    sim.swap_disk("f5-422-03", "/dev/sdd", "NEW-DISK-IN-BAY-4");
    let rec = until(&d, &sim, |r| r.state.phase.is_finished()).await;
    assert_eq!(rec.state.phase, Phase::Done, "{rec:?}");
    assert_eq!((rec.state.news[0].osd, rec.state.news[0].device_id.as_str()), (Some(8), "NEW-DISK-IN-BAY-4"));
    let o = sim.osds().into_iter().find(|o| o.id == 8).unwrap();
    assert!(o.up && o.is_in && !o.destroyed && o.device == "/dev/sdd", "{o:?}");
    assert!(clean(&sim));
    assert_eq!(sim.moved_bytes(), costs.in_place.bytes, "each of its copies rebuilt once");
    assert!(sim.osds().iter().all(|o| !o.noout), "noout taken off at the end");
    // The next preview times the making by the deployment this swap ran.
    let (_, next, _) = d.swaps().preview(&req).await.unwrap();
    let making = next.in_place.making.expect("the swap's own deployment gives the pace");
    assert!(making.seconds > 0.0 && making.basis == "as the last deployment of 1 OSD on f5-422-03 went", "{making:?}");
}

/// `swap stop` of an in-place swap whose removal has not begun: the
/// removal is stopped, nothing was changed; once it has begun (`noout`
/// set), the way back is forward.
#[tokio::test]
async fn an_in_place_swap_stops_with_its_removal_until_that_has_begun() {
    let (_dir, d, sim) = pg_map_daemon().await;
    let (rec, _) = d.swaps().schedule(&replace_8_in_place()).await.unwrap();
    for _ in 0..3 {
        d.swaps().round().await.unwrap();
    }
    let removals = d.store.ops::<crate::store::RemovalCodec>();
    let removal = removals.active_on(&crate::store::removal_subject(8)).await.unwrap();
    let removal = removal.expect("the swap's removal of osd.8 is stored");
    assert_eq!(removal.state.phase, crate::domain::removal::Phase::Queued);
    d.swaps().stop(rec.number).await.unwrap();
    let rec = until(&d, &sim, |r| r.state.phase.is_finished()).await;
    assert_eq!(rec.state.phase, Phase::Stopped, "{rec:?}");
    assert_eq!(rec.state.ending.as_deref(), Some("stopped before osd.8 was stopped; nothing was changed"));
    let o8 = sim.osds().into_iter().find(|o| o.id == 8).unwrap();
    assert!(o8.up && o8.is_in && !o8.destroyed && !o8.noout, "{o8:?}");
    // Again, and stopped once its removal has set noout: refused.
    let (rec, _) = d.swaps().schedule(&replace_8_in_place()).await.unwrap();
    d.swaps().round().await.unwrap();
    d.swaps().round().await.unwrap();
    d.removals.round().await.unwrap();
    let Err(DaemonError::Conflict(why)) = d.swaps().stop(rec.number).await else { panic!("stopped past noout") };
    assert!(why.contains("past the point of no return (the removal of osd.8 is"), "{why}");
}

#[tokio::test]
async fn a_swap_is_refused_with_the_field_the_value_and_why() {
    let (_dir, d, _sim) = pg_map_daemon().await;
    let mut req = replace_8();
    req.devices = vec!["/dev/sdd".into()];
    let Err(DaemonError::Invalid(why)) = d.swaps().schedule(&req).await else { panic!("accepted") };
    assert!(why.starts_with("devices: /dev/sdd on f5-422-03: not blank"), "{why}");
    req.devices = vec!["/dev/sdb".into()];
    req.osds = vec![8, 2];
    let Err(DaemonError::Invalid(why)) = d.swaps().schedule(&req).await else { panic!("accepted") };
    assert!(why.starts_with("osds: osd.2: on f5-422-01, not on f5-422-03"), "{why}");
    req.osds = vec![8];
    req.host = Some("f5-422-01".into());
    let Err(DaemonError::Invalid(why)) = d.swaps().schedule(&req).await else { panic!("accepted") };
    assert!(why.starts_with("host: f5-422-01: the OSDs are on f5-422-03"), "{why}");
    req.host = None;
    d.swaps().schedule(&req).await.unwrap();
    let mut other = replace_8();
    other.osds = vec![15];
    other.devices = vec!["/dev/sdc".into()];
    assert!(matches!(d.swaps().schedule(&other).await, Err(DaemonError::Conflict(_))), "one swap at a time");
}

#[tokio::test]
async fn a_dry_run_making_osds_where_osds_are_being_removed_proposes_the_swap() {
    let (_dir, d, _sim) = pg_map_daemon().await;
    let spec = "service_type: osd\nservice_id: ssds\nplacement:\n  hosts: [f5-422-03]\nspec:\n  data_devices:\n    paths: [/dev/sdb]\n";
    let q = crate::wire::api::specs::ApplyQuery { dry_run: true, ..Default::default() };
    let dry = d.specs.apply(spec, &q).await.unwrap();
    assert!(dry.swap_proposals.is_empty(), "no removal yet: {:?}", dry.swap_proposals);
    let req = removal::RemoveRequest { ids: vec![8], zap: true, ..Default::default() };
    d.removals.schedule_removals(&req).await.unwrap();
    let dry = d.specs.apply(spec, &q).await.unwrap();
    assert_eq!(dry.swap_proposals.len(), 1, "{:?}", dry.swap_proposals);
    let p = &dry.swap_proposals[0];
    assert_eq!(
        (p.host.as_str(), p.osds.as_slice(), p.devices.as_slice()),
        ("f5-422-03", &[8][..], &["/dev/sdb".to_string()][..])
    );
    assert_eq!(p.command, "osdkeeper osd rm stop 8 && osdkeeper osd replace 8 --with f5-422-03:/dev/sdb");
}
