//! `device replace` on the simulated field-report cluster: a shared DB
//! SSD takes both its OSDs down and holds their HDDs until a new SSD is in
//! its slot; an HDD leaves the DB SSD it shares to the specs; `--clear`.

use super::*;
use crate::domain::removal::Phase;
use crate::wire::api::devices::ReplaceBody;

fn body(host: &str, path: &str) -> ReplaceBody {
    ReplaceBody { host: host.into(), path: path.into(), ..ReplaceBody::default() }
}

async fn held_on(d: &Arc<Daemon>, host: &str) -> Vec<(String, Option<String>)> {
    let holds = d.store.holds().await.unwrap();
    holds.into_iter().filter(|h| h.host == host).map(|h| (h.path, h.waits_for_slot)).collect()
}

async fn removals(d: &Arc<Daemon>) -> Vec<crate::domain::removal::RemovalRecord> {
    d.store.ops::<crate::store::RemovalCodec>().with_finished(50).await.unwrap()
}

#[tokio::test]
async fn a_shared_db_ssd_takes_its_osds_down_and_their_hdds_wait_for_the_new_ssd() {
    let (_dir, d, sim) = sim_daemon(50.0).await;
    // f5-422-02's /dev/sdc holds the DBs of osd.3 (/dev/sdb) and osd.11 (/dev/sdf).
    let dry = d.removals.replace_device(&ReplaceBody { dry_run: true, ..body("f5-422-02", "/dev/sdc") }).await.unwrap();
    let osds: Vec<(u32, Vec<String>)> = dry.osds.iter().map(|o| (o.osd, o.kinds.clone())).collect();
    assert_eq!(osds, [(3, vec!["db".to_string()]), (11, vec!["db".to_string()])], "{dry:?}");
    assert_eq!(dry.waiting, ["/dev/sdb", "/dev/sdf"]);
    assert_eq!(dry.preview.as_ref().map(|p| p.osds.clone()), Some(vec![3, 11]));
    assert!(dry.text[1].contains("/dev/sdb, /dev/sdf stay held until a new disk is in /dev/sdc's slot"), "{dry:?}");
    assert!(removals(&d).await.is_empty() && held_on(&d, "f5-422-02").await.is_empty(), "a dry run stores nothing");

    let refused = d.removals.replace_device(&body("f5-422-02", "/dev/sdc")).await;
    assert!(matches!(&refused, Err(DaemonError::Invalid(m)) if m.contains("--yes-i-really-mean-it")), "{refused:?}");
    assert!(removals(&d).await.is_empty() && held_on(&d, "f5-422-02").await.is_empty(), "a refusal stores nothing");

    let go = ReplaceBody { yes_i_really_mean_it: true, ..body("f5-422-02", "/dev/sdc") };
    d.removals.replace_device(&go).await.unwrap();
    let slot = Some("/dev/sdc".to_string());
    let held = held_on(&d, "f5-422-02").await;
    assert_eq!(
        held,
        [("/dev/sdb".into(), slot.clone()), ("/dev/sdc".into(), slot.clone()), ("/dev/sdf".into(), slot.clone())],
        "the intent is written with the removals"
    );
    let recs = removals(&d).await;
    assert!(recs.iter().all(|r| r.state.replace && r.state.zap), "{recs:?}");
    let mut ids: Vec<u32> = recs.iter().map(|r| r.state.osd_id).collect();
    ids.sort();
    assert_eq!(ids, [3, 11]);
    for id in [3, 11] {
        rounds_until(&d, &sim, id, |r| r.state.phase == Phase::Done).await;
    }
    assert!(sim.osds().iter().filter(|o| o.id == 3 || o.id == 11).all(|o| o.destroyed), "ids kept, destroyed");

    // The zapped SSD is still the old disk: everything stays held, and a
    // spec for those very disks makes nothing.
    let host = d.store.host("f5-422-02").await.unwrap();
    d.inventory.poll_host(&host).await.unwrap();
    assert_eq!(held_on(&d, "f5-422-02").await.len(), 3);
    assert!(sim.marked().is_empty(), "a host that does not say its ceph-volume's release gets no header");
    let spec =
        "service_type: osd\nservice_id: hdd_with_db\nplacement:\n  hosts: [f5-422-02]\nspec:\n  data_devices:\n    \
                paths: [/dev/sdb, /dev/sdf]\n  db_devices:\n    paths: [/dev/sdc]\n";
    d.specs.apply(spec, &ApplyQuery::default()).await.unwrap();
    d.specs.reconcile_once().await.unwrap();
    let deployments = || async { d.store.ops::<crate::store::DeploymentCodec>().with_finished(10).await.unwrap() };
    assert!(deployments().await.is_empty(), "held disks are not deployed: {:?}", deployments().await);

    // A new SSD in the slot: every hold of the replacement is lifted.
    sim.swap_disk("f5-422-02", "/dev/sdc", "Samsung_SSD_870_S9001");
    d.inventory.poll_host(&host).await.unwrap();
    assert!(held_on(&d, "f5-422-02").await.is_empty(), "{:?}", held_on(&d, "f5-422-02").await);
    let events = d.store.events(None, 300).await.unwrap();
    let filled = events.iter().find(|e| e.kind == EventKind::DeviceSlotFilled).expect("the slot's event");
    assert!(filled.message.contains("released /dev/sdb, /dev/sdc, /dev/sdf"), "{}", filled.message);
    // The spec now takes the HDDs, their DBs on the new SSD, with the ids kept.
    d.specs.reconcile_once().await.unwrap();
    let recs = deployments().await;
    let claimed: Vec<u32> = recs.iter().flat_map(|r| r.state.steps.iter().flat_map(|s| s.claimed_ids())).collect();
    assert_eq!(claimed, [3, 11], "{recs:?}");
}

#[tokio::test]
async fn an_hdd_leaves_its_shared_db_ssd_to_the_specs_and_clear_undoes_it() {
    let (_dir, d, sim) = sim_daemon(50.0).await;
    // osd.8's DB is on /dev/sdf with osd.15's: only the HDD waits.
    let go = ReplaceBody { yes_i_really_mean_it: true, ..body("f5-422-03", "/dev/sdd") };
    let answer = d.removals.replace_device(&go).await.unwrap();
    assert_eq!((answer.osds.len(), answer.osds[0].osd), (1, 8));
    assert!(answer.waiting.is_empty(), "{answer:?}");
    assert_eq!(held_on(&d, "f5-422-03").await, [("/dev/sdd".to_string(), Some("/dev/sdd".to_string()))]);

    let cleared = d.removals.clear_device_replacement("f5-422-03", "/dev/sdd").await.unwrap();
    assert_eq!((cleared.stopped.clone(), cleared.released.clone()), (vec![8], vec!["/dev/sdd".to_string()]));
    assert!(cleared.not_stopped.is_empty());
    rounds_until(&d, &sim, 8, |r| r.state.phase.is_finished()).await;
    let osd = sim.osds().into_iter().find(|o| o.id == 8).expect("osd.8 stays");
    assert!(!osd.destroyed && osd.is_in, "{osd:?}");
    assert!(held_on(&d, "f5-422-03").await.is_empty());
    let again = d.removals.clear_device_replacement("f5-422-03", "/dev/sdd").await;
    assert!(matches!(again, Err(DaemonError::NotFound(_))), "{again:?}");

    // A disk no OSD uses has nothing to replace, and nothing is stored.
    let blank =
        d.removals.replace_device(&ReplaceBody { yes_i_really_mean_it: true, ..body("f5-422-03", "/dev/sdc") }).await;
    assert!(matches!(&blank, Err(DaemonError::Conflict(m)) if m.contains("nothing to replace")), "{blank:?}");
    assert!(held_on(&d, "f5-422-03").await.is_empty());
}

/// Waits (up to 10 s) until the simulated disks with the header are `want`:
/// the header is written and erased in tasks of their own.
async fn marked_becomes(sim: &crate::sim::SimCluster, want: &[(&str, &str)]) {
    let want: Vec<(String, String)> = want.iter().map(|(h, p)| (h.to_string(), p.to_string())).collect();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while sim.marked() != want {
        assert!(std::time::Instant::now() < deadline, "marked: {:?}, want {want:?}", sim.marked());
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

async fn header_events(d: &Arc<Daemon>) -> Vec<String> {
    let events = d.store.events(None, 300).await.unwrap();
    events.into_iter().filter(|e| e.kind == EventKind::DeviceReplaceHeader).map(|e| e.message).collect()
}

/// Waits (up to 10 s) for the `n`th header event: a task records it after
/// the agent's answer.
async fn header_events_reach(d: &Arc<Daemon>, n: usize) -> Vec<String> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let said = header_events(d).await;
        if said.len() >= n {
            return said;
        }
        assert!(std::time::Instant::now() < deadline, "{n} header events awaited, {said:?}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// `device replace` of osd.8's HDD on a host whose ceph-volume is 20.2,
/// up to the header on the old disk (its removal over, the disk zapped).
async fn marked_replacement() -> (tempfile::TempDir, Arc<Daemon>, crate::sim::SimCluster, crate::store::ManagedHost) {
    let (dir, d, sim) = sim_daemon(50.0).await;
    sim.set_ceph_volume_release("20.2.4 (tentacle)");
    let host = d.store.host("f5-422-03").await.unwrap();
    d.inventory.poll_host(&host).await.unwrap();
    let go = ReplaceBody { yes_i_really_mean_it: true, ..body("f5-422-03", "/dev/sdd") };
    d.removals.replace_device(&go).await.unwrap();
    // A look while its OSD is being removed writes nothing.
    d.inventory.poll_host(&host).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert!(sim.marked().is_empty(), "not while its OSD is being removed");
    rounds_until(&d, &sim, 8, |r| r.state.phase == Phase::Done).await;
    d.inventory.poll_host(&host).await.unwrap();
    marked_becomes(&sim, &[("f5-422-03", "/dev/sdd")]).await;
    (dir, d, sim, host)
}

/// On a host whose ceph-volume reads it (19.2.1+), the old disk still in
/// its slot gets the being-replaced header once its OSD's removal is over,
/// once; `--clear` erases it, even before an inventory showed it.
#[tokio::test]
async fn the_old_disk_in_its_slot_is_marked_being_replaced_and_clear_erases_it() {
    let (_dir, d, sim, host) = marked_replacement().await;
    let said = header_events_reach(&d, 1).await;
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(said[0].starts_with("Marked /dev/sdd ("), "{}", said[0]);
    assert!(
        said[0].ends_with(
            "on f5-422-03 as being replaced: ceph-volume lists it as `being_replaced` until a new disk is in its slot"
        ),
        "{}",
        said[0]
    );
    assert_eq!(held_on(&d, "f5-422-03").await.len(), 1, "osdkeeper's own hold stays");

    // No inventory since the write: the stored one does not show the header yet.
    let cleared = d.removals.clear_device_replacement("f5-422-03", "/dev/sdd").await.unwrap();
    assert_eq!(cleared.released, ["/dev/sdd"]);
    marked_becomes(&sim, &[]).await;
    let said = header_events_reach(&d, 2).await;
    assert_eq!(said.len(), 2, "{said:?}");
    assert!(said.iter().any(|m| m.starts_with("Erased the being-replaced header from /dev/sdd (")), "{said:?}");
    // Later looks write nothing again: the hold is gone.
    d.inventory.poll_host(&host).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert_eq!((sim.marked().len(), header_events(&d).await.len()), (0, 2));
}

/// Written once: the next inventories show it; a `device release` of the
/// slot erases it; a new disk in a slot carries none.
#[tokio::test]
async fn the_header_is_written_once_and_a_release_of_the_slot_erases_it() {
    let (_dir, d, sim, host) = marked_replacement().await;
    header_events_reach(&d, 1).await;
    for _ in 0..2 {
        d.inventory.poll_host(&host).await.unwrap();
    }
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert_eq!(header_events(&d).await.len(), 1, "{:?}", header_events(&d).await);
    d.inventory.release_device("f5-422-03", "/dev/sdd").await.unwrap();
    marked_becomes(&sim, &[]).await;
    let said = header_events_reach(&d, 2).await;
    assert!(said[1].starts_with("Erased the being-replaced header from /dev/sdd ("), "{said:?}");
}

/// An erasure that finds the agent away is said once and tried again at
/// the host's next poll, which goes through once it answers.
#[tokio::test]
async fn an_erasure_that_fails_is_tried_again_at_the_next_poll() {
    let (_dir, d, sim, host) = marked_replacement().await;
    header_events_reach(&d, 1).await;
    sim.set_unreachable("f5-422-03", true);
    d.removals.clear_device_replacement("f5-422-03", "/dev/sdd").await.unwrap();
    let said = header_events_reach(&d, 2).await;
    assert!(said[1].starts_with("Could not erase the being-replaced header from /dev/sdd ("), "{said:?}");
    assert!(said[1].contains("tried again after its next poll"), "{}", said[1]);
    assert_eq!(sim.marked().len(), 1);
    // Still away: tried again, said no more.
    let _ = d.inventory.poll_host(&host).await;
    let _ = d.inventory.refresh(&["f5-422-03".to_string()], std::time::Duration::from_secs(5)).await;
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert_eq!(header_events(&d).await.len(), 2, "{:?}", header_events(&d).await);
    sim.set_unreachable("f5-422-03", false);
    d.inventory.poll_host(&host).await.unwrap();
    marked_becomes(&sim, &[]).await;
    let said = header_events_reach(&d, 3).await;
    assert!(said[2].starts_with("Erased the being-replaced header from /dev/sdd ("), "{said:?}");
}

/// A hold left at the slot by an older disk (another serial) would let the
/// slot look filled at once: the replacement's own hold takes its place, and
/// a refused replacement puts the old one back as it was.
#[tokio::test]
async fn an_older_hold_at_the_slot_gives_way_and_comes_back_when_refused() {
    let (_dir, d, _sim) = sim_daemon(50.0).await;
    d.store.hold("f5-422-02", "/dev/sdc", Some("OLDER_DISK_S0001"), "zapped by an operator", 7).await.unwrap();
    let go = ReplaceBody { yes_i_really_mean_it: true, ..body("f5-422-02", "/dev/sdc") };
    d.removals.replace_device(&go).await.unwrap();
    let holds = d.store.holds().await.unwrap();
    let slot = holds.iter().find(|h| h.path == "/dev/sdc").unwrap();
    assert_eq!(
        (slot.device_id.as_deref(), slot.waits_for_slot.as_deref()),
        (Some("Samsung_SSD_860_S1009"), Some("/dev/sdc")),
        "{slot:?}"
    );
    let host = d.store.host("f5-422-02").await.unwrap();
    d.inventory.poll_host(&host).await.unwrap();
    assert_eq!(held_on(&d, "f5-422-02").await.len(), 3, "the disk in the slot is the one replaced");

    // osd.8 is being removed already: the replacement of its disk is
    // refused, and the hold found there is put back as it was.
    let (_dir, d, _sim) = sim_daemon(50.0).await;
    d.store.hold("f5-422-03", "/dev/sdd", Some("OLDER_DISK_S0002"), "zapped by an operator", 7).await.unwrap();
    let rm = removal::RemoveRequest { ids: vec![8], ..Default::default() };
    d.removals.schedule_removals(&rm).await.unwrap();
    let go = ReplaceBody { yes_i_really_mean_it: true, ..body("f5-422-03", "/dev/sdd") };
    let refused = d.removals.replace_device(&go).await;
    assert!(matches!(&refused, Err(DaemonError::Conflict(m)) if m.contains("already being removed")), "{refused:?}");
    let holds = d.store.holds().await.unwrap();
    let back: Vec<_> =
        holds.iter().map(|h| (h.path.as_str(), h.device_id.as_deref(), h.since, h.waits_for_slot.clone())).collect();
    assert_eq!(back, [("/dev/sdd", Some("OLDER_DISK_S0002"), 7, None)]);
}

/// `--in-place`: nothing drains; both OSDs of the failed DB SSD are stopped
/// under noout and destroyed, wait for the new SSD, take their ids back on
/// it, and only then is noout lifted. Refused until its risk is accepted,
/// where it has one.
#[tokio::test]
async fn in_place_keeps_the_pgs_under_noout_until_the_ids_are_back() {
    let (_dir, d, sim) = sim_daemon(50.0).await;
    let in_place = || ReplaceBody { in_place: true, ..body("f5-422-02", "/dev/sdc") };
    let dry = d.removals.replace_device(&ReplaceBody { dry_run: true, ..in_place() }).await.unwrap();
    let ways = dry.ways.as_ref().expect("both ways' costs");
    let names: Vec<&str> = ways.ways.iter().map(|w| w.way.as_str()).collect();
    assert_eq!(names, ["drain-first", "in-place"]);
    let (drain, place) = (&ways.ways[0], &ways.ways[1]);
    assert!(drain.bytes.unwrap() > place.bytes.unwrap(), "drained first, the bytes move twice: {ways:?}");
    assert!(place.pgs_degraded > 0 && drain.pgs_degraded == 0, "{ways:?}");
    assert!(dry.text[0].contains("not drained: noout set"), "{:?}", dry.text);
    assert!(removals(&d).await.is_empty() && held_on(&d, "f5-422-02").await.is_empty(), "a dry run stores nothing");

    let accept = ReplaceBody { yes_i_really_mean_it: true, ..in_place() };
    let risky = !ways.refusals.is_empty();
    if risky {
        let refused = d.removals.replace_device(&accept).await;
        assert!(matches!(&refused, Err(DaemonError::RefusedUnsafe(m)) if m.contains("--accept-")), "{refused:?}");
        assert!(removals(&d).await.is_empty() && held_on(&d, "f5-422-02").await.is_empty(), "refused: nothing stored");
    }
    let weights = |sim: &crate::sim::SimCluster| -> Vec<f64> {
        sim.osds().iter().filter(|o| o.id == 3 || o.id == 11).map(|o| o.crush_weight).collect()
    };
    let before = weights(&sim);
    let go = ReplaceBody { accept_single_copy: risky, accept_inactive: risky, ..accept };
    d.removals.replace_device(&go).await.unwrap();
    for id in [3, 11] {
        let rec = rounds_until(&d, &sim, id, |r| r.state.phase == Phase::Rejoining).await;
        assert!(rec.state.in_place.is_some() && rec.state.drain_started_at.is_none(), "{rec:?}");
    }
    let osds = sim.osds();
    let gone: Vec<_> = osds.iter().filter(|o| o.id == 3 || o.id == 11).collect();
    assert!(gone.iter().all(|o| o.destroyed && o.noout && !o.up), "destroyed under noout: {gone:?}");
    assert_eq!(weights(&sim), before, "never reweighted: nothing drained");

    // The new SSD: the holds are lifted although the removals still wait,
    // and the specs give the ids back.
    sim.swap_disk("f5-422-02", "/dev/sdc", "Samsung_SSD_870_S9001");
    let host = d.store.host("f5-422-02").await.unwrap();
    d.inventory.poll_host(&host).await.unwrap();
    assert!(held_on(&d, "f5-422-02").await.is_empty(), "{:?}", held_on(&d, "f5-422-02").await);
    let spec =
        "service_type: osd\nservice_id: hdd_with_db\nplacement:\n  hosts: [f5-422-02]\nspec:\n  data_devices:\n    \
                paths: [/dev/sdb, /dev/sdf]\n  db_devices:\n    paths: [/dev/sdc]\n";
    d.specs.apply(spec, &ApplyQuery::default()).await.unwrap();
    d.specs.reconcile_once().await.unwrap();
    for _ in 0..200 {
        d.deployments.round().await.unwrap();
        let up = sim.osds().iter().filter(|o| (o.id == 3 || o.id == 11) && o.up && !o.destroyed).count();
        if up == 2 {
            break;
        }
        sim.advance(std::time::Duration::from_millis(20));
    }
    for id in [3, 11] {
        let rec = rounds_until(&d, &sim, id, |r| r.state.phase == Phase::Done).await;
        assert_eq!(rec.state.ending, Some(crate::domain::removal::Ending::Rejoined), "{rec:?}");
        // The re-created id kept its noout (as `osd new` keeps it): lifted once.
        let actions = d.store.actions(rec.id).await.unwrap();
        let count = |e: &str| actions.iter().filter(|a| a.effect == e).count();
        assert_eq!((count("noout"), count("destroy"), count("rm-noout")), (1, 1, 1), "{actions:?}");
        assert_eq!(count("reweight") + count("mark-out"), 0, "nothing drained: {actions:?}");
    }
    let osds = sim.osds();
    let back: Vec<_> = osds.iter().filter(|o| o.id == 3 || o.id == 11).collect();
    assert!(back.iter().all(|o| o.up && !o.destroyed && !o.noout), "back, noout lifted: {back:?}");
}

/// The holds of a slot are lifted in one write: a planner pass running
/// meanwhile (the poll wakes it before it lifts them) sees all of the
/// slot's disks held or none. Lifted one by one, a pass once saw the first
/// HDD free and the new SSD (whose serial the old disk's hold no longer
/// covers) with the second HDD still held, and deployed one HDD on the whole
/// SSD with both ids: the other id never came back, the SSD being full.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_filled_slot_lifts_all_its_holds_at_once() {
    let (_dir, d, sim) = sim_daemon(50.0).await;
    let go = ReplaceBody { yes_i_really_mean_it: true, ..body("f5-422-02", "/dev/sdc") };
    d.removals.replace_device(&go).await.unwrap();
    for id in [3, 11] {
        rounds_until(&d, &sim, id, |r| r.state.phase == Phase::Done).await;
    }
    let host = d.store.host("f5-422-02").await.unwrap();
    d.inventory.poll_host(&host).await.unwrap();
    assert_eq!(held_on(&d, "f5-422-02").await.len(), 3);

    sim.swap_disk("f5-422-02", "/dev/sdc", "Samsung_SSD_870_S9001");
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (d, stop) = (d.clone(), stop.clone());
        tokio::spawn(async move {
            let mut seen = std::collections::BTreeSet::new();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                seen.insert(held_on(&d, "f5-422-02").await.len());
                tokio::task::yield_now().await;
            }
            seen
        })
    };
    let writes = d.store.changes().count(crate::store::Topic::Holds);
    d.inventory.poll_host(&host).await.unwrap();
    let writes = d.store.changes().count(crate::store::Topic::Holds) - writes;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let seen = reader.await.unwrap();
    assert!(held_on(&d, "f5-422-02").await.is_empty());
    assert!(seen.iter().all(|n| *n == 0 || *n == 3), "a reader saw the slot half released: {seen:?}");
    assert_eq!(writes, 1, "the slot's three holds go in one write");
}
