use super::*;
use crate::domain::bench::cluster::{new_run, BenchEffect, ClusterPhase, Pass};
use crate::domain::operation::{Intent, OutcomeStatus};
use crate::domain::probe::run::ProbePhase;
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
    let newer = r#"{"v": 2, "osd_id": 8}"#;
    assert_eq!(RemovalCodec::decode_state(newer).unwrap_err(), "version 2 is newer than this osdkeeper reads");
    assert_eq!(version_of(r#"{"osd_id": 8}"#), Ok(1), "rows from before versions are version 1");
}

/// A database as release 0.1 left it (migrations up to 0012), with a row
/// of each old table, read through the operation tables after 0013.
#[tokio::test]
async fn the_migration_carries_every_old_row_over() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("osdkeeper.db");
    let options = sqlx::sqlite::SqliteConnectOptions::new().filename(&path).create_if_missing(true);
    let pool = sqlx::SqlitePool::connect_with(options).await.unwrap();
    let mut old = sqlx::migrate!("./migrations");
    old.migrations = std::borrow::Cow::Owned(old.migrations.iter().filter(|m| m.version < 13).cloned().collect());
    old.run(&pool).await.unwrap();
    for sql in [
        r#"INSERT INTO removals (id, osd_id, host, state, phase, active, waiting_on, pgs_now, kb_used_now, requested_at,
             drain_started_at, updated_at, version)
           VALUES (7, 8, 'f5-422-03', '{"osd_id":8,"host":"f5-422-03","replace":false,"force":false,"zap":true,
             "phase":"draining","original_weight":1.5,"was_in":true,"devices":["/dev/sdd"],"zapped":[],
             "stop_requested":false,"stop_sent":false,"pgs_at_start":131}', 'draining', 1, 'draining: 40 PGs left',
             40, 2048, 1000, 1100, 1200, 3)"#,
        r#"INSERT INTO removal_samples (removal_id, at, pgs, kb_used, bytes_left, blocked)
           VALUES (7, 1150, 90, 4096, 500, NULL), (7, 1200, 40, 2048, 200, 'backfill_toofull')"#,
        r#"INSERT INTO removal_actions (removal_id, osd_id, effect, destructive, issued_at, finished_at, outcome)
           VALUES (7, 8, '{"effect":"reweight","weight":0.0}', 0, 1100, 1101, 'ok: reweighted osd.8 to 0'),
                  (7, 8, '{"effect":"purge"}', 1, 1300, NULL, NULL)"#,
        r#"INSERT INTO deployments (id, host, service_name, state, phase, active, created_at, updated_at, finished_at)
           VALUES (3, 'f5-422-01', 'osd.ssds', '{"host":"f5-422-01","service_name":"osd.ssds","service_id":"ssds",
             "spec_version":2,"run_key":"k","crush_device_class":null,"steps":[{"command":"raw prepare --bluestore --data /dev/sdf",
             "disks":["/dev/sdf"],"sent":true,"succeeded":true,"failure":null}],"osds":[{"id":12,"osd_fsid":"u",
             "kind":"raw","device":"/dev/sdf","activated":true,"started":true,"verified":true}],"phase":"done",
             "attempt":1,"failure":null,"retry_at":null,"verifying_since":5}', 'done', 0, 10, 20, 20)"#,
        r#"INSERT INTO deployment_actions (deployment_id, effect, detail, issued_at, finished_at, outcome)
           VALUES (3, '{"effect":"prepare","step":0}', 'ceph-volume raw prepare --bluestore --data /dev/sdf', 11, 12,
                   'failed: exit 1: boom')"#,
        r#"INSERT INTO cluster_benches (id, label, state, phase, active, created_at, updated_at, actor)
           VALUES (4, 'before', '{"pool":"osdkeeper-bench-4","own_pool":true,"seconds":60,"pg_num":32,"label":"before",
             "force":false,"run_name":"osdkeeper-bench-4","phase":"write","in_flight":true,"health":"HEALTH_OK",
             "shape":null,"results":[],"warnings":[],"failure":null}', 'write', 1, 30, 31, 'admin')"#,
        r#"INSERT INTO disk_probes (id, disk_key, host, path, device_id, device_class, size_bytes, model, mode, state,
             requested_at, started_at, finished_at, seq_write_bps, seq_read_bps, rand_read_iops, sync_write_iops,
             jobs_json, fio_json, command, steps_json, actor)
           VALUES (5, 'id:SSD_1', 'f5-422-02', '/dev/sdg', 'SSD_1', 'ssd', 1000, 'SSD', 'quick', 'done', 40, 41, 42,
             1.0, 2.0, 3.0, 4.0, '[]', '{"jobs":[]}', 'fio --name=x', '["checked"]', 'admin'),
                  (6, 'slot:f5-422-02:/dev/loop9', 'f5-422-02', '/dev/loop9', NULL, 'hdd', 1000, NULL, 'full', 'running',
             50, 51, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)"#,
    ] {
        sqlx::query(sql).execute(&pool).await.unwrap();
    }
    pool.close().await;

    let s = Store::open(&path).await.unwrap();
    let r = s.ops::<RemovalCodec>().get(7).await.unwrap();
    assert_eq!((r.subject.as_str(), r.state.phase, r.version), ("osd.8", Phase::Draining, 3));
    let st = &r.state;
    assert_eq!((st.pgs_now, st.kb_used_now, st.drain_started_at), (Some(40), Some(2048), Some(1100)), "columns joined");
    assert_eq!((r.created_at, r.waiting_on.as_deref()), (1000, Some("draining: 40 PGs left")));
    assert_eq!(s.samples(r.id).await.unwrap().len(), 2);
    let actions = s.actions(r.id).await.unwrap();
    assert_eq!((actions[0].effect.as_str(), actions[0].outcome), ("reweight", Some(OutcomeStatus::Ok)));
    assert_eq!(actions[0].outcome_detail.as_deref(), Some("reweighted osd.8 to 0"));
    assert_eq!(s.ops::<RemovalCodec>().interrupted().await.unwrap()[0].1.effect, "purge", "still cut off");
    // The next removal goes on from the old numbers.
    let next = s.ops::<RemovalCodec>().add(&[removal(9)], 2000, taken, |_, _| {}).await.unwrap();
    assert_eq!(next[0].number, 8);

    let d = s.ops::<DeploymentCodec>().get(3).await.unwrap();
    assert_eq!((d.subject.as_str(), d.state.osds[0].id, d.finished_at), ("f5-422-01:osd.ssds", 12, Some(20)));
    let a = &s.actions(d.id).await.unwrap()[0];
    assert_eq!(
        (a.effect.as_str(), a.outcome, a.outcome_detail.as_deref()),
        ("prepare", Some(OutcomeStatus::Failed), Some("exit 1: boom"))
    );

    let b = s.ops::<BenchCodec>().get(4).await.unwrap();
    assert_eq!((b.state.phase, b.actor.as_deref()), (ClusterPhase::Write, Some("admin")));
    let cut = s.ops::<BenchCodec>().interrupted().await.unwrap();
    assert_eq!(
        BenchCodec::decode_effect(&cut[0].1.args),
        Ok(BenchEffect::Pass(Pass::Write)),
        "in_flight became an open action"
    );

    let done = s.ops::<ProbeCodec>().get(5).await.unwrap();
    assert_eq!((done.state.phase, done.state.figures.unwrap().sync_write_iops), (ProbePhase::Done, 4.0));
    assert_eq!((done.state.steps.clone(), done.host.as_deref()), (vec!["checked".to_string()], Some("f5-422-02")));
    let fio = s.latest_action(done.id, "probe").await.unwrap().unwrap();
    assert_eq!((fio.output.as_deref(), fio.outcome), (Some(r#"{"jobs":[]}"#), Some(OutcomeStatus::Ok)));
    let running = s.ops::<ProbeCodec>().get(6).await.unwrap();
    assert_eq!((running.state.phase, running.state.key.by_slot()), (ProbePhase::Running, true));
    assert_eq!(s.ops::<ProbeCodec>().interrupted().await.unwrap()[0].0.number, 6, "fio was under way: cut off");
    assert_eq!(s.ops::<ProbeCodec>().current().await.unwrap().len(), 2);
}
