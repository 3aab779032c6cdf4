use super::*;
use crate::domain::event::{EventKind, Level};

async fn fresh() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("osdkeeper.db")).await.unwrap();
    (dir, store)
}

/// An empty ceph-volume inventory of `host`, taken at 2, of no known release.
fn inventory_of(host: &str) -> StoredInventory {
    StoredInventory {
        host: host.into(),
        taken_at: 2,
        received_at: 2,
        source: "ceph-volume".into(),
        can_create_osds: true,
        note: None,
        devices: "[]".into(),
        fingerprint: "f".into(),
        ceph_release: None,
    }
}

#[tokio::test]
async fn hosts_keep_their_order_and_refuse_duplicates() {
    let (_d, s) = fresh().await;
    s.add_host("b", "b:8741", &[], 1).await.unwrap();
    s.add_host("a", "a:8741", &["osd".into()], 2).await.unwrap();
    assert!(matches!(s.add_host("a", "x:1", &[], 3).await, Err(StoreError::Conflict(_))));
    let names: Vec<String> = s.hosts().await.unwrap().into_iter().map(|h| h.name).collect();
    assert_eq!(names, ["b", "a"]);
    assert_eq!(s.set_labels("a", &["x".into()]).await.unwrap().labels, ["x"]);
    assert!(matches!(s.remove_host("zz").await, Err(StoreError::NotFound(_))));
}

fn new_host(name: &str) -> NewHost {
    NewHost {
        name: name.into(),
        addr: format!("{name}:9"),
        labels: vec!["osd".into()],
        event: NewEvent {
            level: Level::Info,
            kind: EventKind::HostAdded,
            host: Some(name.into()),
            subject: None,
            message: format!("Added host {name}"),
            actor: Some("admin".into()),
        },
    }
}

#[tokio::test]
async fn hosts_added_together_come_with_their_events_and_leave_a_known_name_alone() {
    let (_d, s) = fresh().await;
    s.add_host("b", "b:8741", &[], 1).await.unwrap();
    let new = new_host;
    let added = s.add_hosts(&[new("c"), new("b"), new("a")], 5).await.unwrap();
    let got: Vec<Option<(&str, &str, &str)>> =
        added.iter().map(|a| a.as_ref().map(|(h, e)| (h.name.as_str(), h.addr.as_str(), e.message.as_str()))).collect();
    assert_eq!(got, [Some(("c", "c:9", "Added host c")), None, Some(("a", "a:9", "Added host a"))]);
    let hosts = s.hosts().await.unwrap();
    let names: Vec<(&str, &str)> = hosts.iter().map(|h| (h.name.as_str(), h.addr.as_str())).collect();
    assert_eq!(names, [("b", "b:8741"), ("c", "c:9"), ("a", "a:9")], "b kept its address");
    let logged = s.events(None, 10).await.unwrap();
    let said: Vec<(i64, Option<&str>)> = logged.iter().map(|e| (e.id, e.actor.as_deref())).collect();
    let ids: Vec<i64> = added.iter().flatten().map(|(_, e)| e.id).collect();
    assert_eq!(said, [(ids[0], Some("admin")), (ids[1], Some("admin"))]);
}

#[tokio::test]
async fn hosts_of_requests_at_the_same_time_are_each_added_once_with_their_events() {
    let (_d, s) = fresh().await;
    // 40 requests at once, "h7" asked twice: one of those two adds it.
    let names: Vec<String> = (0..39).map(|i| format!("h{i}")).chain(["h7".to_string()]).collect();
    let calls = names.iter().map(|n| {
        let (s, n) = (s.clone(), n.clone());
        tokio::spawn(async move { (n.clone(), s.add_host_joined(new_host(&n), 9).await.unwrap()) })
    });
    let answers: Vec<(String, Option<(ManagedHost, LoggedEvent)>)> =
        futures::future::join_all(calls).await.into_iter().map(|r| r.unwrap()).collect();
    for (name, added) in &answers {
        if let Some((host, event)) = added {
            assert_eq!(
                (host.name.as_str(), event.message.as_str()),
                (name.as_str(), format!("Added host {name}").as_str())
            );
        }
    }
    let twice: Vec<bool> = answers.iter().filter(|(n, _)| n == "h7").map(|(_, a)| a.is_some()).collect();
    assert_eq!(twice.iter().filter(|added| **added).count(), 1, "h7 added once: {twice:?}");
    assert_eq!(answers.iter().filter(|(_, a)| a.is_some()).count(), 39);
    assert_eq!(s.hosts().await.unwrap().len(), 39);
    let logged = s.events(None, 100).await.unwrap();
    let mut ids: Vec<i64> = answers.iter().filter_map(|(_, a)| a.as_ref().map(|(_, e)| e.id)).collect();
    let mut stored: Vec<i64> = logged.iter().map(|e| e.id).collect();
    ids.sort();
    stored.sort();
    assert_eq!(ids, stored, "one event per host added, as each request was told");
}

#[tokio::test]
async fn events_stored_together_keep_their_order() {
    let (_d, s) = fresh().await;
    let e = |message: &str| NewEvent {
        level: Level::Info,
        kind: EventKind::InventoryFirst,
        host: Some("h".into()),
        subject: None,
        message: message.into(),
        actor: None,
    };
    assert!(s.add_events(vec![], 1).await.unwrap().is_empty());
    let stored = s.add_events(vec![e("one"), e("two"), e("three")], 7).await.unwrap();
    let logged = s.events(None, 10).await.unwrap();
    assert_eq!(logged, stored);
    let said: Vec<(&str, i64)> = logged.iter().map(|e| (e.message.as_str(), e.at)).collect();
    assert_eq!(said, [("one", 7), ("two", 7), ("three", 7)]);
    assert!(logged.windows(2).all(|w| w[0].id < w[1].id));
}

#[tokio::test]
async fn poll_state_tracks_unreachable_since() {
    let (_d, s) = fresh().await;
    s.add_host("h", "h:1", &[], 1).await.unwrap();
    let f = PollFailure { at: 100, error: "timeout".into(), next_poll_at: 200 };
    assert!(s.record_poll_failure("h", &f).await.unwrap(), "first failure");
    assert!(!s.record_poll_failure("h", &PollFailure { at: 300, ..f }).await.unwrap());
    let h = s.host("h").await.unwrap();
    assert_eq!((h.unreachable_since, h.consecutive_failures), (Some(100), 2));
    assert!(s.record_poll_success("h", 400).await.unwrap(), "back after failures");
    assert_eq!(s.host("h").await.unwrap().unreachable_since, None);
}

/// The release of ceph-volume's Ceph is kept as the agent wrote it, in the
/// head every reader gets and in the ETag; a new one with the same devices
/// is a change of the inventory (another release reads the list otherwise).
#[tokio::test]
async fn an_inventorys_ceph_release_is_kept_and_a_new_one_is_a_change() {
    let (_d, s) = fresh().await;
    s.add_host("h", "h:1", &[], 1).await.unwrap();
    let mut inv = StoredInventory { ceph_release: Some("21.1.0 (umbrella)".into()), ..inventory_of("h") };
    assert_eq!(s.put_inventory(&inv).await.unwrap(), None);
    let head = s.inventory_head("h").await.unwrap().unwrap();
    assert_eq!(head.ceph_release.as_deref(), Some("21.1.0 (umbrella)"), "a release osdkeeper does not know, as text");
    assert_eq!(s.hosts_with_heads().await.unwrap()[0].1.as_ref(), Some(&head));
    assert_eq!(s.inventory("h").await.unwrap().unwrap().ceph_release, head.ceph_release);
    let counted = s.changes().count(Topic::Inventories);
    let etag = head.etag();

    inv.ceph_release = Some("18.2.7 (reef)".into());
    let replaced = s.put_inventory(&inv).await.unwrap().unwrap();
    assert_eq!((replaced.ceph_release.as_deref(), replaced.devices), (Some("21.1.0 (umbrella)"), None));
    assert!(s.changes().count(Topic::Inventories) > counted, "the same devices of another release");
    assert_ne!(s.inventory_head("h").await.unwrap().unwrap().etag(), etag);
    let counted = s.changes().count(Topic::Inventories);
    s.put_inventory(&inv).await.unwrap();
    assert_eq!(s.changes().count(Topic::Inventories), counted, "nothing new");
}

/// A round's changed inventories and their hosts' polls go in one
/// transaction; a host removed since its poll is skipped, the others kept.
#[tokio::test]
async fn polled_inventories_are_stored_together_and_a_removed_host_is_skipped() {
    let (_d, s) = fresh().await;
    for h in ["a", "b"] {
        s.add_host(h, "h:1", &[], 1).await.unwrap();
    }
    s.put_inventory(&inventory_of("a")).await.unwrap();
    s.record_poll_failure("b", &PollFailure { at: 5, error: "down".into(), next_poll_at: 6 }).await.unwrap();
    let counted = (s.changes().count(Topic::Inventories), s.changes().count(Topic::Hosts));
    let mut newer_a = inventory_of("a");
    newer_a.fingerprint = "other".into();
    newer_a.devices = "[]".into();
    let batch: Vec<PolledInventory> = [newer_a, inventory_of("gone"), inventory_of("b")]
        .into_iter()
        .map(|inv| PolledInventory { inv, next_poll_at: 900 })
        .collect();
    let put = s.put_polled_inventories(&batch).await.unwrap();
    assert_eq!(put.len(), 3);
    let a = put[0].as_ref().expect("a is stored");
    assert!(!a.was_unreachable);
    assert!(a.previous.as_ref().is_some_and(|p| p.devices.is_some()), "a's old device list, to tell what changed");
    assert_eq!(put[1], None, "no host, nothing stored");
    let b = put[2].as_ref().expect("b is stored");
    assert!(b.was_unreachable && b.previous.is_none(), "{b:?}");
    assert_eq!(s.inventory("a").await.unwrap().unwrap().devices, "[]");
    assert!(s.inventory("gone").await.unwrap().is_none());
    let hb = s.host("b").await.unwrap();
    assert_eq!((hb.consecutive_failures, hb.unreachable_since, hb.next_poll_at), (0, None, 900));
    assert!(s.changes().count(Topic::Inventories) > counted.0 && s.changes().count(Topic::Hosts) > counted.1);
}

#[tokio::test]
async fn specs_are_versioned_with_history() {
    let (_d, s) = fresh().await;
    let spec = StoredSpec {
        service_name: "osd.a".into(),
        service_id: Some("a".into()),
        source: "x".into(),
        spec_json: "{}".into(),
        unmanaged: false,
    };
    s.put_specs(std::slice::from_ref(&spec), 1).await.unwrap();
    let v2 = s.put_specs(&[spec], 2).await.unwrap();
    assert_eq!(v2[0].version, 2);
    s.remove_spec("osd.a", 3).await.unwrap();
    let history = s.spec_history("osd.a").await.unwrap();
    assert_eq!(
        history.iter().map(|(v, a, _)| (*v, a.as_str())).collect::<Vec<_>>(),
        [(1, "applied"), (2, "applied"), (2, "removed")]
    );
    assert!(matches!(s.remove_spec("osd.a", 4).await, Err(StoreError::NotFound(_))));
}

#[tokio::test]
async fn holds_and_cascades() {
    let (_d, s) = fresh().await;
    s.add_host("h", "h:1", &[], 1).await.unwrap();
    s.hold("h", "/dev/sdb", None, "zapped", 5).await.unwrap();
    s.hold("h", "/dev/sdb", None, "again", 6).await.unwrap();
    assert_eq!(s.holds().await.unwrap()[0].reason, "zapped");
    s.remove_host("h").await.unwrap();
    assert!(s.holds().await.unwrap().is_empty(), "holds go with their host");
}

#[tokio::test]
async fn events_page_forward() {
    let (_d, s) = fresh().await;
    for i in 0..5 {
        s.add_events(
            vec![NewEvent {
                level: Level::Info,
                kind: EventKind::HostAdded,
                host: None,
                subject: None,
                message: format!("e{i}"),
                actor: (i == 4).then(|| "ops".to_string()),
            }],
            i,
        )
        .await
        .unwrap();
    }
    let last2 = s.events(None, 2).await.unwrap();
    assert_eq!(last2.iter().map(|e| e.message.as_str()).collect::<Vec<_>>(), ["e3", "e4"]);
    assert_eq!(last2.iter().map(|e| e.actor.as_deref()).collect::<Vec<_>>(), [None, Some("ops")]);
    let after = s.events(Some(last2[0].id), 10).await.unwrap();
    assert_eq!(after.len(), 1);
}

#[tokio::test]
async fn events_by_host_osd_and_time() {
    let (_d, s) = fresh().await;
    for (i, (host, subject)) in [("h1", "osd.8"), ("h2", "osd.8"), ("h1", "osd.15"), ("h1", "osd.8")].iter().enumerate()
    {
        let e = NewEvent {
            level: Level::Info,
            kind: EventKind::HostAdded,
            host: Some(host.to_string()),
            subject: Some(subject.to_string()),
            message: format!("e{i}"),
            actor: None,
        };
        s.add_events(vec![e], 100 * i as i64).await.unwrap();
    }
    let messages = |events: Vec<crate::store::LoggedEvent>| events.into_iter().map(|e| e.message).collect::<Vec<_>>();
    let only = |host, subject, since| EventFilter { host, subject, since, ..EventFilter::default() };
    assert_eq!(messages(s.events_matching(&only(Some("h1"), None, None), 10).await.unwrap()), ["e0", "e2", "e3"]);
    assert_eq!(messages(s.events_matching(&only(Some("h1"), Some("osd.8"), None), 10).await.unwrap()), ["e0", "e3"]);
    assert_eq!(messages(s.events_matching(&only(None, Some("osd.8"), Some(100)), 10).await.unwrap()), ["e1", "e3"]);
    assert_eq!(
        messages(s.events_matching(&only(Some("h1"), None, None), 2).await.unwrap()),
        ["e2", "e3"],
        "the latest"
    );
    let after = EventFilter { after: Some(1), host: Some("h1"), ..EventFilter::default() };
    assert_eq!(messages(s.events_matching(&after, 1).await.unwrap()), ["e2"], "the next after a cursor");
}

#[tokio::test]
async fn one_boost_is_kept_until_forgotten() {
    use crate::domain::removal::boost::{Boost, Saved, Scheduler};
    let (_dir, store) = fresh().await;
    assert_eq!(store.boost().await.unwrap(), None);
    let mut b = Boost {
        scheduler: Scheduler::Wpq,
        saved: vec![Saved { name: "osd_max_backfills".into(), value: None }],
        set: vec![("osd_max_backfills".into(), "8".into())],
        applied: false,
    };
    store.save_boost(&b, 1).await.unwrap();
    b.applied = true;
    store.save_boost(&b, 2).await.unwrap();
    assert_eq!(store.boost().await.unwrap(), Some(b), "the second save replaced the first");
    store.forget_boost().await.unwrap();
    assert_eq!(store.boost().await.unwrap(), None);
}

/// A second process on the database (a second `Store` on the same file
/// stands in for one): the first counts its writes within about a second
/// of them, and wakes whoever waits for writes. Its own writes, of every
/// kind, are never taken for another's.
#[tokio::test]
async fn another_writer_on_the_file_is_noticed_and_its_own_writes_are_not_taken_for_one() {
    use crate::domain::operation::{Intent, NewOperation, OutcomeStatus};
    use crate::domain::removal::Removal;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("osdkeeper.db");
    let a = Store::open(&path).await.unwrap();
    let b = Store::open(&path).await.unwrap();
    a.changes().look_outside().await;

    a.add_host("h", "h:1", &["osd".into()], 1).await.unwrap();
    a.set_labels("h", &[]).await.unwrap();
    let inv = inventory_of("h");
    a.put_inventory(&inv).await.unwrap();
    a.touch_inventories(&[InventorySeen { host: "h".into(), at: 3, next_poll_at: 4 }]).await.unwrap();
    a.record_poll_failure("h", &PollFailure { at: 5, error: "down".into(), next_poll_at: 6 }).await.unwrap();
    a.record_poll_success("h", 7).await.unwrap();
    a.hold("h", "/dev/sdb", None, "zapped", 8).await.unwrap();
    a.release("h", "/dev/sdb").await.unwrap();
    let spec = StoredSpec {
        service_name: "osd.a".into(),
        service_id: Some("a".into()),
        source: "x".into(),
        spec_json: "{}".into(),
        unmanaged: false,
    };
    a.put_specs(&[spec], 9).await.unwrap();
    let e = NewEvent {
        level: Level::Info,
        kind: EventKind::HostAdded,
        host: None,
        subject: None,
        message: "m".into(),
        actor: None,
    };
    a.add_events(vec![e], 10).await.unwrap();
    a.add_token("ops", crate::domain::auth::Role::Read, &[0; 32], None, 11).await.unwrap();
    a.token_used("ops", 12).await.unwrap();
    let r = Removal::new(8, "h".into(), false, false, true, vec!["/dev/sdc".into()]);
    let new = NewOperation { subject: "osd.8".into(), host: Some("h".into()), state: r, actor: None };
    let op = a.ops::<RemovalCodec>().add(&[new], 13, |s| s.to_string(), |_, _| {}).await.unwrap().remove(0);
    a.ops::<RemovalCodec>().save(&op, op.version).await.unwrap();
    a.ops::<RemovalCodec>().request_stop(&[8], 14).await.unwrap();
    let intent = Intent { effect: "purge", args: "{}".into(), detail: String::new(), destructive: true };
    let action = a.log_action(op.id, &intent, 15).await.unwrap();
    a.finish_action(action, OutcomeStatus::Ok, "done", None, 16).await.unwrap();
    let sample = DrainSampleRow { at: 17, pgs: 1, kb_used: None, bytes_left: None, blocked: None };
    a.add_sample(op.id, &sample).await.unwrap();
    a.remove_spec("osd.a", 18).await.unwrap();
    a.remove_host("h").await.unwrap();
    assert!(!a.changes().look_outside().await, "its own writes");
    // They left a wake-up of their own.
    tokio::time::timeout(std::time::Duration::from_secs(5), a.changes().written()).await.unwrap();

    let holds = a.changes().count(Topic::Holds);
    let waiter = tokio::spawn({
        let a = a.clone();
        async move { a.changes().written().await }
    });
    b.add_host("h2", "h2:1", &[], 20).await.unwrap();
    b.hold("h2", "/dev/sdb", None, "zapped", 21).await.unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(5), waiter)
        .await
        .expect("a noticed b's writes within seconds")
        .unwrap();
    assert!(a.changes().count(Topic::Holds) > holds, "counted, though not which kind");
    assert_eq!(a.holds().await.unwrap().len(), 1, "and read");
    assert!(!a.changes().look_outside().await, "counted once");
}
