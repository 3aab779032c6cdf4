//! The poller with fake agents: unchanged inventories (answered "unchanged"
//! to their ETag, or sent again in full by an agent that ignores it) are
//! neither parsed nor stored again, only seen; changed ones are stored with
//! their change event, also after a restart emptied the parse cache.

use std::sync::Arc;

use super::{daemon_on, with_cluster, FakeAgents};
use crate::clock::now_ms;
use crate::domain::event::EventKind;

/// A time no poll of these tests happens at: a stored inventory carries it.
const MARK: i64 = 1_234;

async fn events_of(d: &crate::daemon::Daemon, kind: EventKind) -> usize {
    d.store.events(None, 500).await.unwrap().iter().filter(|e| e.kind == kind).count()
}

#[tokio::test]
async fn an_unchanged_inventory_is_only_seen_again() {
    for ignores_etag in [false, true] {
        let (_dir, d, agents) = with_cluster().await;
        *agents.ignores_etag.lock().unwrap() = ignores_etag;
        *agents.taken_at_ms.lock().unwrap() = Some(MARK);
        let host = d.store.host("f5-422-01").await.unwrap();
        let before = d.store.inventory("f5-422-01").await.unwrap().unwrap();
        let parsed =
            d.inventory.cache().cached("f5-422-01", &before.fingerprint).expect("parsed by the poll that stored it");
        let changes = events_of(&d, EventKind::DevicesChanged).await;

        let asked_at = now_ms();
        d.inventory.poll_host(&host).await.unwrap();

        let (asked, named) = agents.inventory_requests.lock().unwrap().last().cloned().unwrap();
        assert_eq!(asked, "f5-422-01");
        let head = d.store.inventory_head("f5-422-01").await.unwrap().unwrap();
        assert_eq!(named, Some(head.etag()), "the poll named the stored inventory's ETag");
        let after = d.store.inventory("f5-422-01").await.unwrap().unwrap();
        assert_ne!(after.taken_at, MARK, "not stored again (ignores_etag: {ignores_etag})");
        assert!(after.taken_at >= asked_at && after.received_at == after.taken_at, "seen now: {after:?}");
        assert_eq!((&after.devices, &after.fingerprint), (&before.devices, &before.fingerprint));
        let still = d.inventory.cache().cached("f5-422-01", &after.fingerprint).unwrap();
        assert!(Arc::ptr_eq(&parsed, &still), "not parsed again");
        assert_eq!(events_of(&d, EventKind::DevicesChanged).await, changes);
        let h = d.store.host("f5-422-01").await.unwrap();
        let interval = d.config().poll_interval.as_millis() as i64;
        assert!(h.next_poll_at > after.taken_at + interval * 7 / 10 && h.next_poll_at <= after.taken_at + interval);
    }
}

#[tokio::test]
async fn a_changed_inventory_is_stored_with_its_event_also_after_a_restart() {
    let (dir, d, agents) = with_cluster().await;
    *agents.taken_at_ms.lock().unwrap() = Some(MARK);
    let host = d.store.host("f5-422-02").await.unwrap();
    let mut devices = agents.devices.lock().unwrap()["f5-422-02"].clone();
    devices.retain(|dev| dev["path"] != "/dev/sde");
    agents.devices.lock().unwrap().insert("f5-422-02".into(), devices.clone());
    d.inventory.poll_host(&host).await.unwrap();
    let stored = d.store.inventory("f5-422-02").await.unwrap().unwrap();
    assert_eq!(stored.taken_at, MARK, "stored as the agent sent it");
    assert!(!stored.devices.contains("\"/dev/sde\""));
    let parsed = d.inventory.cache().cached("f5-422-02", &stored.fingerprint).expect("the poll's parse is kept");
    assert!(!parsed.iter().any(|dev| &*dev.path == "/dev/sde"));
    let events = d.store.events(None, 100).await.unwrap();
    let changed: Vec<&str> =
        events.iter().filter(|e| e.kind == EventKind::DevicesChanged).map(|e| e.message.as_str()).collect();
    assert_eq!(changed, ["Detected new or changed devices on f5-422-02: removed /dev/sde"]);

    // A new daemon on the same database has parsed nothing yet: what
    // changed is read from the stored inventory it replaces.
    let store = crate::store::Store::open(&dir.path().join("d.db")).await.unwrap();
    let again = Arc::new(FakeAgents::default());
    devices.retain(|dev| dev["path"] != "/dev/sdf");
    again.devices.lock().unwrap().insert("f5-422-02".into(), devices);
    let d2 = daemon_on(store, again);
    d2.inventory.poll_host(&host).await.unwrap();
    let events = d2.store.events(None, 100).await.unwrap();
    let changed: Vec<&str> =
        events.iter().filter(|e| e.kind == EventKind::DevicesChanged).map(|e| e.message.as_str()).collect();
    assert_eq!(changed.len(), 2, "{changed:?}");
    assert!(changed.contains(&"Detected new or changed devices on f5-422-02: removed /dev/sdf"), "{changed:?}");
}

#[tokio::test]
async fn a_round_writes_unchanged_inventories_together_and_spreads_the_next_polls() {
    let (_dir, d, agents) = with_cluster().await;
    let hosts = d.store.hosts().await.unwrap();
    for h in &hosts {
        d.store.record_poll_success(&h.name, 0).await.unwrap();
    }
    // One host was failing; it answers "unchanged" now.
    agents.down.lock().unwrap().push("f5-422-03".into());
    let h3 = d.store.host("f5-422-03").await.unwrap();
    assert!(d.inventory.poll_host(&h3).await.is_err());
    // Due now, still failing.
    let failure = crate::store::PollFailure { at: 1, error: "refused".into(), next_poll_at: 0 };
    d.store.record_poll_failure("f5-422-03", &failure).await.unwrap();
    agents.down.lock().unwrap().clear();
    let reachable = events_of(&d, EventKind::HostReachable).await;
    *agents.taken_at_ms.lock().unwrap() = Some(MARK);
    let started = now_ms();
    d.inventory.poll_due().await.unwrap();

    let interval = d.config().poll_interval.as_millis() as i64;
    for h in d.store.hosts().await.unwrap() {
        let inv = d.store.inventory(&h.name).await.unwrap().unwrap();
        assert!(inv.taken_at >= started, "{} seen in this round, not stored again: {inv:?}", h.name);
        assert!(h.unreachable_since.is_none() && h.consecutive_failures == 0, "{h:?}");
        let wait = h.next_poll_at - inv.taken_at;
        assert!((interval * 8 / 10..=interval).contains(&wait), "{}: next poll {wait} ms later", h.name);
    }
    assert_eq!(events_of(&d, EventKind::HostReachable).await, reachable + 1, "f5-422-03 is reachable again");
    let requests = agents.inventory_requests.lock().unwrap().clone();
    assert!(requests.iter().rev().take(4).all(|(_, etag)| etag.is_some()), "each named its ETag: {requests:?}");
}
