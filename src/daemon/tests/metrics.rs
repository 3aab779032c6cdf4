//! `/metrics`' figures per host, now from memory (the read model's hosts,
//! the inventory times the store last wrote), against the way they were
//! computed per scrape: from the store's hosts and inventories read then.
//! They follow polls at once, and changes of hosts after the read model's
//! refresh (its worker runs one shortly after every write).

use super::with_cluster;
use crate::clock::now_ms;
use crate::daemon::Daemon;
use crate::daemon::HostMetrics;
use crate::store::Topic;

/// As `/metrics` computed them per scrape before, with ages as of `now`.
async fn from_store(d: &Daemon, now: i64) -> Vec<HostMetrics> {
    let errors = d.inventory.poll_errors();
    let hosts = d.store.hosts_with_heads().await.unwrap();
    hosts
        .into_iter()
        .map(|(h, inv)| HostMetrics {
            inventory_age_s: inv.map(|i| (now - i.taken_at) as f64 / 1000.0),
            unreachable: h.unreachable_since.is_some(),
            poll_errors: errors.get(&h.name).copied().unwrap_or(0),
            name: h.name,
        })
        .collect()
}

/// The figures from memory, checked against the store's.
async fn same_as_the_store(d: &Daemon, when: &str) -> Vec<HostMetrics> {
    let now = now_ms();
    let shown = d.read_model.host_metrics(now, &d.inventory.poll_errors()).await.unwrap();
    assert_eq!(shown, from_store(d, now).await, "{when}");
    shown
}

fn of<'a>(shown: &'a [HostMetrics], host: &str) -> &'a HostMetrics {
    shown.iter().find(|h| h.name == host).unwrap_or_else(|| panic!("{host} in {shown:?}"))
}

const HOUR_MS: i64 = 3_600_000;

#[tokio::test]
async fn host_figures_follow_polls_and_host_changes_through_the_read_model() {
    let (_dir, d, agents) = with_cluster().await;
    let shown = same_as_the_store(&d, "at start").await;
    assert_eq!(shown.len(), 4);
    assert!(shown.iter().all(|h| h.inventory_age_s.is_some_and(|a| a < 60.0) && !h.unreachable));

    // A changed inventory, taken an hour ago by the agent's clock.
    agents.devices.lock().unwrap().get_mut("f5-422-01").unwrap().pop();
    *agents.taken_at_ms.lock().unwrap() = Some(now_ms() - HOUR_MS);
    let host = d.store.host("f5-422-01").await.unwrap();
    d.inventory.poll_host(&host).await.unwrap();
    let shown = same_as_the_store(&d, "changed inventory").await;
    assert!(of(&shown, "f5-422-01").inventory_age_s.unwrap() >= 3600.0, "{shown:?}");

    // Seen again unchanged: only its time is written, which the store
    // counts as no change; no refresh of the read model.
    *agents.taken_at_ms.lock().unwrap() = None;
    let counts = [Topic::Hosts, Topic::Inventories].map(|t| d.store.changes().count(t));
    d.inventory.poll_host(&host).await.unwrap();
    assert_eq!([Topic::Hosts, Topic::Inventories].map(|t| d.store.changes().count(t)), counts);
    let shown = same_as_the_store(&d, "unchanged inventory seen again").await;
    assert!(of(&shown, "f5-422-01").inventory_age_s.unwrap() < 60.0, "{shown:?}");

    // Unreachable: a change of the host, shown after the refresh.
    agents.down.lock().unwrap().push("f5-422-02".into());
    let host = d.store.host("f5-422-02").await.unwrap();
    assert!(d.inventory.poll_host(&host).await.is_err());
    d.read_model.refresh().await.unwrap();
    let shown = same_as_the_store(&d, "unreachable").await;
    assert!(of(&shown, "f5-422-02").unreachable && of(&shown, "f5-422-02").poll_errors == 1, "{shown:?}");

    // Removed, then added again: no inventory until it is polled, whatever
    // time its inventory had before.
    d.inventory.remove_host("f5-422-03", false).await.unwrap();
    d.read_model.refresh().await.unwrap();
    let shown = same_as_the_store(&d, "removed").await;
    assert!(shown.iter().all(|h| h.name != "f5-422-03"), "{shown:?}");
    let host = d.inventory.add_host("f5-422-03", "f5-422-03:8741", &[], false).await.unwrap();
    d.read_model.refresh().await.unwrap();
    let shown = same_as_the_store(&d, "added again").await;
    assert_eq!(of(&shown, "f5-422-03").inventory_age_s, None);
    *agents.taken_at_ms.lock().unwrap() = Some(now_ms() - 2 * HOUR_MS);
    d.inventory.poll_host(&host).await.unwrap();
    d.read_model.refresh().await.unwrap();
    let shown = same_as_the_store(&d, "polled again").await;
    assert!(of(&shown, "f5-422-03").inventory_age_s.unwrap() >= 7200.0, "{shown:?}");
}
