use super::*;
use crate::domain::bench::cluster::new_run;
use crate::domain::operation::{Intent, OutcomeStatus};
use crate::domain::removal::{Effect, Phase, Removal};

async fn fresh() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("osdkeeper.db")).await.unwrap();
    (dir, store)
}

fn removal(osd: u32) -> NewOperation<Removal> {
    let r = Removal::new(osd, "h".into(), false, false, true, vec![format!("/dev/osd{osd}")]);
    NewOperation { subject: format!("osd.{osd}"), host: Some("h".into()), state: r, actor: Some("ops".into()) }
}

fn taken(s: &str) -> String {
    format!("{s} is already being removed")
}

#[tokio::test]
async fn operations_are_numbered_per_kind_and_one_is_active_per_subject() {
    let (_d, s) = fresh().await;
    let added = s.ops::<RemovalCodec>().add(&[removal(8), removal(15)], 10, taken, |_, _| {}).await.unwrap();
    assert_eq!(added.iter().map(|o| o.number).collect::<Vec<_>>(), [1, 2]);
    assert_eq!((added[0].actor.as_deref(), added[0].created_at, added[0].version), (Some("ops"), 10, 0));
    let bench = new_run(None, None, None, None, false).unwrap();
    let b = NewOperation { subject: "cluster".into(), host: None, state: bench, actor: None };
    let named = |n: i64, b: &mut crate::domain::bench::cluster::ClusterBench| b.pool = format!("pool-{n}");
    let run = s.ops::<BenchCodec>().add(&[b], 11, |_| "busy".into(), named).await.unwrap().remove(0);
    assert_eq!((run.number, run.state.pool.as_str()), (1, "pool-1"), "its own numbering, filled in the same write");
    // All or none: osd.8 is being removed, so osd.3 is not queued either.
    let e = s.ops::<RemovalCodec>().add(&[removal(3), removal(8)], 12, taken, |_, _| {}).await.unwrap_err();
    assert!(matches!(&e, StoreError::Conflict(m) if m == "osd.8 is already being removed"), "{e:?}");
    assert!(s.ops::<RemovalCodec>().active_on("osd.3").await.unwrap().is_none());
    assert_eq!(s.ops::<RemovalCodec>().get(2).await.unwrap().subject, "osd.15");
    assert!(matches!(s.ops::<RemovalCodec>().get(9).await, Err(StoreError::NotFound(_))));
}

#[tokio::test]
async fn a_write_needs_the_version_it_read_and_a_finished_one_leaves_the_active() {
    let (_d, s) = fresh().await;
    let ops = s.ops::<RemovalCodec>();
    let mut op = ops.add(&[removal(8)], 10, taken, |_, _| {}).await.unwrap().remove(0);
    let read = op.version;
    op.state.phase = Phase::Done;
    op.finished_at = Some(20);
    op.version = ops.save(&op, read).await.unwrap();
    assert!(matches!(ops.save(&op, read).await, Err(StoreError::Conflict(_))), "a stale version is refused");
    assert!(ops.active().await.unwrap().is_empty());
    assert_eq!(ops.finished(5).await.unwrap()[0].state.phase, Phase::Done);
    // Its subject is free again.
    assert_eq!(ops.add(&[removal(8)], 30, taken, |_, _| {}).await.unwrap()[0].number, 2);
    assert_eq!(ops.with_finished(0).await.unwrap().len(), 1, "the active one, no history");
    assert_eq!(ops.with_finished(5).await.unwrap().len(), 2);
}

#[tokio::test]
async fn stop_requests_are_all_or_none() {
    let (_d, s) = fresh().await;
    let ops = s.ops::<RemovalCodec>();
    let mut past = ops.add(&[removal(8), removal(15)], 10, taken, |_, _| {}).await.unwrap().remove(1);
    past.state.phase = Phase::Stopping;
    ops.save(&past, past.version).await.unwrap();
    let e = ops.request_stop(&[8, 15], 20).await.unwrap_err();
    assert!(matches!(&e, StoreError::Conflict(m) if m.contains("past the point of no return")), "{e:?}");
    assert!(!ops.active_on("osd.8").await.unwrap().unwrap().state.stop_requested, "nothing changed");
    let stopped = ops.request_stop(&[8], 21).await.unwrap();
    assert!(stopped[0].state.stop_requested && stopped[0].version == 1);
    assert!(
        matches!(ops.request_stop(&[4], 22).await, Err(StoreError::NotFound(m)) if m == "osd.4 is not being removed")
    );
    assert_eq!(ops.make_fast(&[8, 15, 4], 23).await.unwrap(), 2, "an OSD not being removed is passed over");
    assert_eq!(ops.make_fast(&[8], 24).await.unwrap(), 0, "already fast");
}

#[tokio::test]
async fn an_action_without_an_outcome_is_found_as_cut_off() {
    let (_d, s) = fresh().await;
    let ops = s.ops::<RemovalCodec>();
    let op = ops.add(&[removal(8)], 10, taken, |_, _| {}).await.unwrap().remove(0);
    let intent = |e: &Effect| Intent {
        effect: crate::domain::operation::Effect::name(e),
        args: RemovalCodec::encode_effect(e),
        detail: "d".into(),
        destructive: false,
    };
    let first = s.log_action(op.id, &intent(&Effect::Reweight { weight: 0.0 }), 11).await.unwrap();
    s.finish_action(first, OutcomeStatus::Ok, "reweighted", None, 12).await.unwrap();
    assert!(ops.interrupted().await.unwrap().is_empty());
    assert!(ops.acting(&[op.id]).await.unwrap().is_empty());
    s.log_action(op.id, &intent(&Effect::Purge), 13).await.unwrap();
    let cut = ops.interrupted().await.unwrap();
    assert_eq!(cut.len(), 1);
    assert_eq!((cut[0].0.id, cut[0].1.effect.as_str()), (op.id, "purge"));
    assert_eq!(RemovalCodec::decode_effect(&cut[0].1.args), Ok(Effect::Purge));
    assert_eq!(ops.acting(&[op.id, 99]).await.unwrap(), [op.id]);
    let actions = s.actions(op.id).await.unwrap();
    assert_eq!(actions.len(), 2);
    assert!(actions[0].succeeded() && actions[1].outcome.is_none());
    assert_eq!(actions[0].args, r#"{"effect":"reweight","weight":0.0}"#, "the API's form of an effect");
}

#[tokio::test]
async fn recent_samples_are_the_window_before_the_newest() {
    let (_dir, store) = fresh().await;
    let rec = &store.ops::<RemovalCodec>().add(&[removal(8)], 0, taken, |_, _| {}).await.unwrap()[0];
    assert!(store.recent_samples(rec.id, 1000).await.unwrap().is_empty());
    for (at, pgs) in [(0, 90), (500, 80), (1500, 60), (2000, 50), (2500, 40)] {
        let sample = DrainSampleRow { at, pgs, kb_used: None, bytes_left: Some(pgs * 4096), blocked: None };
        store.add_sample(rec.id, &sample).await.unwrap();
    }
    let at = |v: Vec<DrainSampleRow>| v.iter().map(|s| s.at).collect::<Vec<_>>();
    assert_eq!(at(store.recent_samples(rec.id, 1000).await.unwrap()), vec![1500, 2000, 2500]);
    assert_eq!(at(store.recent_samples(rec.id, 0).await.unwrap()), vec![2500]);
    assert_eq!(at(store.recent_samples(rec.id, 10_000).await.unwrap()), at(store.samples(rec.id).await.unwrap()));
    assert_eq!(store.samples_after(rec.id, 2000).await.unwrap()[0].bytes_left, Some(40 * 4096), "bytes kept");
}

#[test]
fn a_state_of_a_newer_release_is_refused_not_misread() {
    let newer = r#"{"v": 4, "osd_id": 8}"#;
    assert_eq!(RemovalCodec::decode_state(newer).unwrap_err(), "version 4 is newer than this osdkeeper reads");
    assert_eq!(version_of(r#"{"osd_id": 8}"#), Ok(1), "rows from before versions are version 1");
}

/// Version 2 carries an LVM OSD's fsid and its shared devices, which a
/// version 1 reader would drop and then wipe the shared DB device by path.
#[test]
fn an_lvm_removal_is_written_as_version_2_and_read_back_whole() {
    let mut r = crate::domain::removal::Removal::new(
        3,
        "f5-422-01".into(),
        false,
        false,
        true,
        vec!["/dev/sdb".into(), "/dev/sdd".into()],
    );
    r.lvm_fsid = Some("fe8c3e3d-8d2b-4a45-9804-a4c06db4b76e".into());
    r.shared_devices = vec!["/dev/sdd".into()];
    r.lvs_zapped = true;
    let json = RemovalCodec::encode_state(&r);
    assert_eq!(version_of(&json), Ok(2), "{json}");
    assert_eq!(RemovalCodec::decode_state(&json).unwrap(), r);
    let plain = crate::domain::removal::Removal::new(4, "f5-422-01".into(), false, false, true, vec![]);
    assert_eq!(version_of(&RemovalCodec::encode_state(&plain)), Ok(1), "a raw OSD's removal stays version 1");
}

/// Version 3 is an in-place removal, which an earlier reader would drain.
#[test]
fn an_in_place_removal_is_written_as_version_3_and_read_back_whole() {
    use crate::domain::removal::{Effect, Ending, InPlace, Phase, Removal};
    let mut r = Removal::new(3, "f5-422-02".into(), true, false, true, vec!["/dev/sdb".into()]);
    r.lvm_fsid = Some("fe8c3e3d-8d2b-4a45-9804-a4c06db4b76e".into());
    r.in_place = Some(InPlace { accept_inactive: true, accept_single_copy: true });
    r.phase = Phase::Rejoining;
    r.ending = Some(Ending::NooutLifted);
    r.last_copy_hold = Some("the zap of /dev/sdb waits: pool 'rbd' (size 2, min_size 1): ...".into());
    let json = RemovalCodec::encode_state(&r);
    assert_eq!(version_of(&json), Ok(3), "{json}");
    assert_eq!(RemovalCodec::decode_state(&json).unwrap(), r);
    let before = json.replace(r#","accept_single_copy":true"#, "");
    let read = RemovalCodec::decode_state(&before).unwrap().in_place.unwrap();
    assert!(read.accept_inactive && !read.accept_single_copy, "stored before it was recorded: not accepted");
    for e in [Effect::Noout { on: true }, Effect::Noout { on: false }] {
        assert_eq!(RemovalCodec::decode_effect(&RemovalCodec::encode_effect(&e)).unwrap(), e);
    }
}

/// The uuid a removal goes by, and how it ended when another OSD or disk
/// took its place; a record stored before uuids reads with none.
#[test]
fn a_removals_uuid_and_its_superseded_ending_read_back_and_old_records_have_none() {
    use crate::domain::removal::{Ending, Phase, Removal, Superseded};
    let mut r = Removal::new(5, "f5-422-03".into(), false, false, true, vec!["/dev/loop5".into()]);
    r.osd_uuid = Some("4a6d5b0e-5b8e-4d0c-9a57-0d3c4e1f6a55".into());
    r.phase = Phase::Cancelled;
    for by in [
        Superseded::Osd { uuid: "9f1e2d3c-0000-4b8e-9c3a-7e5f1d2c3b4a".into() },
        Superseded::Disk { path: "/dev/loop5".into(), found: "the disk there is \"B\", not \"A\"".into() },
        Superseded::Daemon { found: "fsid 9f1e".into() },
        Superseded::Unrecorded,
    ] {
        r.ending = Some(Ending::Superseded(by));
        assert_eq!(RemovalCodec::decode_state(&RemovalCodec::encode_state(&r)).unwrap(), r);
    }
    let before = r#"{"v":1,"osd_id":5,"host":"f5-422-03","replace":false,"force":false,"zap":true,
        "phase":"destroying","original_weight":1.0,"was_in":true,"devices":["/dev/loop5"],"zapped":[],
        "stop_requested":false,"stop_sent":true,"pgs_at_start":20}"#;
    let old = RemovalCodec::decode_state(before).unwrap();
    assert_eq!((old.osd_uuid, old.phase), (None, Phase::Destroying));
}
