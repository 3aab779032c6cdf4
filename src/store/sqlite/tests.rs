//! The adapter's own tests: migrations of databases older releases left.

use crate::domain::bench::cluster::{BenchEffect, ClusterPhase, Pass};
use crate::domain::operation::{NewOperation, OutcomeStatus};
use crate::domain::probe::run::ProbePhase;
use crate::domain::removal::{Phase, Removal};
use crate::store::{BenchCodec, Codec, DeploymentCodec, ProbeCodec, RemovalCodec, Store, StoredInventory};

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
    let r9 = Removal::new(9, "h".into(), false, false, true, vec!["/dev/sdz".into()]);
    let new = NewOperation { subject: "osd.9".into(), host: Some("h".into()), state: r9, actor: None };
    let next = s.ops::<RemovalCodec>().add(&[new], 2000, |s| format!("{s} taken"), |_, _| {}).await.unwrap();
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

/// A device list stored as text before lists were deflated reads as it
/// was, is what the next inventory replaces, and is written deflated then.
#[tokio::test]
async fn a_device_list_stored_as_text_reads_back_and_is_deflated_when_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("osdkeeper.db");
    let s = Store::open(&path).await.unwrap();
    s.add_host("h1", "127.0.0.1:1", &[], 1).await.unwrap();
    drop(s);
    let options = sqlx::sqlite::SqliteConnectOptions::new().filename(&path);
    let pool = sqlx::SqlitePool::connect_with(options).await.unwrap();
    let old = r#"[{"path":"/dev/sdb","available":true}]"#;
    sqlx::query(
        "INSERT INTO inventories (host, taken_at, received_at, source, can_create_osds, note, fingerprint)
         VALUES ('h1', 5, 5, 'agent', 1, NULL, 'f-old')",
    )
    .execute(&pool)
    .await
    .unwrap();
    sqlx::query("INSERT INTO inventory_devices (host, devices) VALUES ('h1', ?)")
        .bind(old)
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;

    let s = Store::open(&path).await.unwrap();
    assert_eq!(s.inventory("h1").await.unwrap().unwrap().devices, old);
    let new = StoredInventory {
        host: "h1".into(),
        taken_at: 9,
        received_at: 9,
        source: "agent".into(),
        can_create_osds: true,
        note: None,
        devices: r#"[{"path":"/dev/sdb","available":false}]"#.into(),
        fingerprint: "f-new".into(),
        ceph_release: None,
    };
    let replaced = s.put_inventory(&new).await.unwrap().unwrap();
    assert_eq!((replaced.fingerprint.as_str(), replaced.devices.as_deref()), ("f-old", Some(old)));
    assert_eq!(s.inventory("h1").await.unwrap().unwrap(), new);
    drop(s);
    let pool = sqlx::SqlitePool::connect_with(sqlx::sqlite::SqliteConnectOptions::new().filename(&path)).await.unwrap();
    let kind: String = sqlx::query_scalar("SELECT typeof(devices) FROM inventory_devices WHERE host = 'h1'")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(kind, "blob");
}
