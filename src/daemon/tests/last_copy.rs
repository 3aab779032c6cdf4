//! The last copy on the simulated field-report cluster (pool 'rbd', size
//! 2): an in-place swap that every flag accepted is refused, or its
//! removal held right before its act (the swap saying so), while an OSD
//! holding the other copy of one of its PGs is down; it goes on once that
//! OSD is back.

use super::swaps::{latest, pg_map_daemon, replace_8_in_place, rounds, rounds_until_crash, until};
use super::*;
use crate::ceph::CephCluster;
use crate::domain::removal::{InPlace, Phase as RemovalPhase, RemovalRecord};
use crate::domain::swap::Phase;

/// An OSD that holds the other copy of one of osd.8's PGs.
async fn partner_of_8(sim: &crate::sim::SimCluster) -> u32 {
    let copies = sim.copies().await.unwrap();
    let pg = copies.pgs.iter().find(|pg| pg.acting.contains(&8)).expect("osd.8 holds a PG");
    *pg.acting.iter().find(|o| **o != 8).expect("a PG of size 2 has another copy")
}

/// An in-place swap of osd.8 accepting every risk a flag can accept.
fn replace_8_accepting_everything() -> swap::SwapRequest {
    let mut req = replace_8_in_place();
    req.accept.inactive = true;
    req
}

async fn held_events(d: &Arc<Daemon>) -> Vec<String> {
    let events = d.store.events(None, 200).await.unwrap();
    events.into_iter().filter(|e| e.kind == EventKind::InPlaceHeld).map(|e| e.message).collect()
}

/// The swap's actions and its removal's, as `swap status` shows them.
async fn effects(d: &Arc<Daemon>, number: i64) -> Vec<String> {
    d.swaps().get(number).await.unwrap().1.into_iter().map(|a| a.effect).collect()
}

async fn removal_of_8(d: &Arc<Daemon>) -> RemovalRecord {
    let removals = d.store.ops::<crate::store::RemovalCodec>();
    removals.latest_on(&crate::store::removal_subject(8)).await.unwrap().expect("the swap's removal of osd.8")
}

/// What the swap waits on: its removal, in the removal's words.
fn said_by(removal: &RemovalRecord) -> String {
    let waiting = removal.waiting_on.clone().unwrap_or_default();
    format!("removal of osd.8 ({}): {waiting}", removal.state.phase.as_str())
}

#[tokio::test]
async fn an_in_place_swap_is_refused_while_a_pg_of_its_osd_has_no_other_copy() {
    let (_dir, d, sim) = pg_map_daemon().await;
    let partner = partner_of_8(&sim).await;
    sim.set_osd_failed(partner, true);
    let Err(DaemonError::RefusedUnsafe(why)) = d.swaps().schedule(&replace_8_accepting_everything()).await else {
        panic!("an in-place swap that would leave a PG with no copy was scheduled")
    };
    assert!(why.contains("with no copy left") && why.contains("no flag takes that risk"), "{why}");
    assert!(d.store.ops::<crate::store::SwapCodec>().with_finished(10).await.unwrap().is_empty(), "nothing stored");
}

/// The other copy's OSD fails after the swap was scheduled and before its
/// stop: the stop waits, naming the PGs, and nothing acts on osd.8 until
/// that OSD is back.
#[tokio::test]
async fn an_in_place_stop_waits_while_an_osd_holding_the_other_copy_is_down() {
    let (_dir, d, sim) = pg_map_daemon().await;
    let (rec, _) = d.swaps().schedule(&replace_8_accepting_everything()).await.unwrap();
    let partner = partner_of_8(&sim).await;
    sim.set_osd_failed(partner, true);
    for _ in 0..20 {
        rounds(&d, &sim).await;
    }
    let held = latest(&d).await;
    assert_eq!(held.state.phase, Phase::Retiring, "{held:?}");
    let removal = removal_of_8(&d).await;
    assert_eq!(removal.state.phase, RemovalPhase::Stopping, "{removal:?}");
    let accepted = InPlace { accept_inactive: true, accept_single_copy: true };
    assert_eq!((removal.state.in_place, removal.state.slot.as_deref()), (Some(accepted), Some("/dev/sdd")));
    assert_eq!(held.waiting_on, Some(said_by(&removal)));
    let waiting = removal.waiting_on.clone().unwrap_or_default();
    assert!(waiting.starts_with("the stop of osd.8 waits: pool 'rbd' (size 2, min_size 1):"), "{waiting}");
    assert!(waiting.contains("with no copy left") && waiting.contains("no flag accepts a PG's last copy"), "{waiting}");
    let o8 = sim.osds().into_iter().find(|o| o.id == 8).unwrap();
    assert!(o8.up && o8.daemon_running && !o8.destroyed, "osd.8 was acted on: {o8:?}");
    assert!(
        !effects(&d, rec.number).await.iter().any(|e| e == "stop-daemon" || e == "mark-down" || e == "destroy"),
        "stopped or destroyed"
    );
    let events = held_events(&d).await;
    assert_eq!(events.len(), 1, "one event when the hold began, none per round: {events:?}");
    assert!(events[0].contains("the stop of osd.8 waits"), "{events:?}");
    sim.set_osd_failed(partner, false);
    until(&d, &sim, |r| r.state.phase == Phase::AwaitingDisk).await;
    let removal = removal_of_8(&d).await;
    assert!(removal.state.last_copy_hold.is_none(), "the hold is cleared: {removal:?}");
    let lifted = d.store.events(None, 200).await.unwrap();
    assert!(lifted.iter().any(|e| e.kind == EventKind::InPlaceHoldLifted), "its lifting is recorded");
    assert!(sim.osds().iter().any(|o| o.id == 8 && o.destroyed), "then it goes on");
}

/// osd.8 destroyed, then the OSD holding the other copy of its PGs fails:
/// the zap of its disk, now the only place of those copies, waits.
#[tokio::test]
async fn an_in_place_zap_waits_while_the_disk_holds_the_last_copy() {
    let (_dir, d, sim) = pg_map_daemon().await;
    let (rec, _) = d.swaps().schedule(&replace_8_accepting_everything()).await.unwrap();
    let partner = partner_of_8(&sim).await;
    assert!(rounds_until_crash(&d, &sim, "removal:destroy").await, "the swap's removal never destroyed osd.8");
    sim.set_osd_failed(partner, true);
    for _ in 0..20 {
        rounds(&d, &sim).await;
    }
    let held = latest(&d).await;
    let removal = removal_of_8(&d).await;
    assert_eq!((held.state.phase, removal.state.phase), (Phase::Retiring, RemovalPhase::Zapping), "{held:?}");
    assert_eq!(held.waiting_on, Some(said_by(&removal)));
    let waiting = removal.waiting_on.clone().unwrap_or_default();
    assert!(waiting.starts_with("the zap of ") && waiting.contains("with no copy left"), "{waiting}");
    let zaps = |effects: Vec<String>| effects.iter().any(|e| e == "zap" || e == "zap-lvs");
    assert!(!zaps(effects(&d, rec.number).await), "no zap was asked");
    sim.set_osd_failed(partner, false);
    until(&d, &sim, |r| r.state.phase == Phase::AwaitingDisk).await;
    assert!(zaps(effects(&d, rec.number).await), "zapped once the other copy is back");
}
