//! Identity on the simulated field-report cluster, whose agents check what
//! each request names as the real agent does: a used disk pushed into an
//! in-place swap's bay is never wiped; a removal restored from a backup
//! taken before its OSD was replaced acts on nothing.

use super::swaps::{latest, pg_map_daemon, replace_8_in_place, rounds, rounds_until_crash, until};
use super::*;
use crate::domain::removal::{Ending, Phase as RemovalPhase, Superseded};
use crate::domain::swap::Phase;

const OTHER_OSD: &str = "1d0c2e4a-9b8e-4d0c-9a57-0d3c4e1f6a99";
const OTHER_CLUSTER: &str = "6f2c0000-f864-4e02-9720-f37e52df0000";

/// A disk from another server (another cluster's OSD on it) pushed into
/// the bay between the destroy and the zap: neither the swap's removal
/// nor the swap wipes it; the swap says what is there, and waits for a
/// blank disk.
#[tokio::test]
async fn an_in_place_swap_never_wipes_a_used_disk_pushed_into_its_bay() {
    let (_dir, d, sim) = pg_map_daemon().await;
    d.swaps().schedule(&replace_8_in_place()).await.unwrap();
    // The round that destroys osd.8 dies right after the destroy: the zap was next.
    assert!(rounds_until_crash(&d, &sim, "removal:destroy").await, "the swap's removal never destroyed osd.8");
    assert!(sim.osds().iter().any(|o| o.id == 8 && o.destroyed));
    sim.push_used_disk("f5-422-03", "/dev/sdd", "USED-DISK-FROM-ELSEWHERE", OTHER_OSD, OTHER_CLUSTER);
    let rec = until(&d, &sim, |r| r.state.phase == Phase::AwaitingDisk).await;
    let waiting = rec.waiting_on.clone().unwrap_or_default();
    assert!(
        waiting.contains("the disk in /dev/sdd is not blank (a used disk is in the slot (USED-DISK-FROM-ELSEWHERE)")
            && waiting.contains(&format!("an LV of osd.3 (fsid {OTHER_OSD})"))
            && waiting.contains("a swap never wipes a used disk"),
        "{waiting}"
    );
    for _ in 0..20 {
        rounds(&d, &sim).await;
    }
    let rec = latest(&d).await;
    assert_eq!(rec.state.phase, Phase::AwaitingDisk, "{rec:?}");
    assert_eq!(sim.used_disks(), [("f5-422-03".to_string(), "/dev/sdd".to_string())], "it keeps what it holds");
    let (_, actions) = d.swaps().get(rec.number).await.unwrap();
    assert!(actions.iter().all(|a| a.effect != "zap"), "no zap was even asked: {actions:?}");
    let why = format!(
        "a used disk is in the slot (USED-DISK-FROM-ELSEWHERE): it holds an LV of osd.3 (fsid {OTHER_OSD}), lvm \
         detected"
    );
    assert_eq!(rec.state.passed_over, [("/dev/sdd".to_string(), why.clone())]);
    let events = d.store.events(None, 100).await.unwrap();
    let said: Vec<&str> =
        events.iter().filter(|e| e.kind == EventKind::DiskNotOurs).map(|e| e.message.as_str()).collect();
    assert_eq!(said, [format!("Swap 1 leaves /dev/sdd on f5-422-03 alone: {why}")], "said once");
}

/// The backup was taken while osd.0 drained; osd.0 was then removed and a
/// new OSD took its id on the same disk. The removal restored from the
/// backup finds another uuid at the id and ends superseded: the new OSD is
/// neither reweighted, stopped, destroyed nor purged, and its disk stays.
#[tokio::test]
async fn a_removal_restored_from_before_its_osd_was_replaced_acts_on_nothing() {
    let (dir, d, sim) = super::sim_daemon(5.0).await;
    let old = sim.osds().into_iter().find(|o| o.id == 0).expect("osd.0");
    let disk = old.device.clone();
    let req = removal::RemoveRequest { ids: vec![0], zap: true, ..Default::default() };
    d.removals.schedule_removals(&req).await.unwrap();
    let draining = rounds_until(&d, &sim, 0, |r| r.state.phase == RemovalPhase::Draining).await;
    assert!(draining.state.osd_uuid.is_some(), "the uuid is recorded when it is scheduled");
    let backup = dir.path().join("mid-drain.db");
    d.store.backup_to(&backup).await.unwrap();
    let done = rounds_until(&d, &sim, 0, |r| r.state.phase == RemovalPhase::Done).await;
    let actions_at_backup = d.store.actions(done.id).await.unwrap().len();
    // A new OSD takes the freed id, on the same disk.
    let host = d.store.host(&old.host).await.unwrap();
    let recipe = crate::domain::swap::Recipe::default();
    let pacific = crate::domain::ceph_release::Release::Pacific;
    let (command, _) =
        crate::domain::swap::deploy_commands(recipe, pacific, std::slice::from_ref(&disk), &[]).remove(0);
    let made = sim.ceph_volume(&host, &CephVolumeRequest { args: command, osdspec_affinity: None }).await.unwrap();
    assert_eq!(made.exit_code, 0, "{made:?}");
    let activate = ActivateRequest { osd_fsid: String::new(), kind: crate::domain::deploy::OsdKind::Lvm, device: disk };
    sim.activate_osd(&host, 0, &activate).await.unwrap();
    sim.start_osd(&host, 0).await.unwrap();
    let new = sim.osds().into_iter().find(|o| o.id == 0).expect("the new osd.0");
    assert_ne!(Some(&new.fsid), done.state.osd_uuid.as_ref(), "another OSD, another uuid");

    d.store.close().await;
    drop(d);
    let db = dir.path().join("d.db");
    crate::store::backup::restore(&db, &backup, crate::clock::now_ms() / 1000).await.unwrap();
    let config = Config::resolve(FileConfig::default(), Overrides::default()).unwrap();
    let d = Daemon::new(Store::open(&db).await.unwrap(), Arc::new(sim.clone()), Arc::new(sim.clone()), config);
    let restored = rounds_until(&d, &sim, 0, |r| r.state.phase.is_finished()).await;
    assert_eq!(restored.state.phase, RemovalPhase::Cancelled, "{restored:?}");
    assert_eq!(restored.state.ending, Some(Ending::Superseded(Superseded::Osd { uuid: new.fsid.clone() })));
    let now = sim.osds().into_iter().find(|o| o.id == 0).expect("the new osd.0 stays");
    assert!(now.up && now.is_in && !now.destroyed && now.daemon_running, "{now:?}");
    assert_eq!(now.crush_weight, new.crush_weight, "not reweighted");
    let actions = d.store.actions(restored.id).await.unwrap();
    assert!(actions.len() < actions_at_backup, "only what was done before the backup: {actions:?}");
    let events = d.store.events(None, 100).await.unwrap();
    let ended = events.iter().find(|e| e.kind == EventKind::RemovalSuperseded).expect("said in the events");
    assert!(ended.message.contains("osd.0 is now another OSD"), "{}", ended.message);
    let status = d.read_model.removal_statuses(&[restored]).await.unwrap();
    let shown = serde_json::to_value(&status[0]).unwrap();
    assert!(shown.to_string().contains("superseded: osd.0 is now another OSD"), "osd rm status says it: {shown}");
}
