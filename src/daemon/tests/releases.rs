//! Each host's ceph-volume release against the cluster's (the simulated
//! cluster runs 16.2.15): stored when it changes with the same devices,
//! flagged on the host's row and in `/healthz` when of another major, an
//! event when it changes and when a host becomes flagged or is no longer.

use super::with_cluster;
use crate::domain::event::{EventKind, Level};
use crate::wire::api::hosts::{Host, HostQuery};

async fn hosts(d: &crate::daemon::Daemon) -> Vec<Host> {
    d.inventory.hosts(&HostQuery::default()).await.unwrap().items
}

async fn release_events(d: &crate::daemon::Daemon) -> Vec<(Level, String)> {
    let events = d.store.events(None, 500).await.unwrap();
    events.into_iter().filter(|e| e.kind == EventKind::HostCephRelease).map(|e| (e.level, e.message)).collect()
}

#[tokio::test]
async fn a_host_of_another_major_is_flagged_until_it_matches_again() {
    let (_dir, d, agents) = with_cluster().await;
    let (one, two) = ("f5-422-01", "f5-422-02");
    let set = |host: &str, release: &str| agents.ceph_release.lock().unwrap().insert(host.into(), release.into());
    set(one, "16.2.15 (pacific)");
    set(two, "18.2.7 (reef)");
    let poll = |name: &'static str| {
        let d = d.clone();
        async move { d.inventory.poll_host(&d.store.host(name).await.unwrap()).await.unwrap() }
    };
    let fingerprint = d.store.inventory_head(two).await.unwrap().unwrap().fingerprint;
    poll(one).await;
    poll(two).await;
    let head = d.store.inventory_head(two).await.unwrap().unwrap();
    assert_eq!(head.ceph_release.as_deref(), Some("18.2.7 (reef)"), "stored although the devices are the same");
    assert_eq!(head.fingerprint, fingerprint);

    let listed = hosts(&d).await;
    let row = |name: &str| listed.iter().find(|h| h.name == name).unwrap().clone();
    assert!(d.cluster.releases_seen().is_none(), "not read by these tests' daemon until asked");
    assert_eq!(row(two).release_mismatch, None, "the cluster's releases not read: nothing flagged");
    assert!(d.health().warnings.is_empty());
    d.inventory.note_release_flags().await.unwrap();
    d.cluster.releases().await.unwrap();
    // The first look after start only remembers who is flagged.
    d.inventory.note_release_flags().await.unwrap();
    let listed = hosts(&d).await;
    let row = |name: &str| listed.iter().find(|h| h.name == name).unwrap().clone();
    assert_eq!((row(one).ceph_release.as_deref(), row(one).release_mismatch), (Some("16.2.15 (pacific)"), None));
    assert_eq!(
        row(two).release_mismatch.as_deref(),
        Some("ceph-volume is Ceph 18.2.7 (reef), the cluster runs 16 pacific")
    );
    let warnings = d.health().warnings;
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0].code, "OSDKEEPER_CEPH_VOLUME_RELEASE");
    assert_eq!(warnings[0].message, "1 host with ceph-volume of a major release the cluster does not run");
    assert_eq!(warnings[0].detail, ["host f5-422-02: ceph-volume is Ceph 18.2.7 (reef), the cluster runs 16 pacific"]);
    let devices = d.inventory.devices(&Default::default()).await.unwrap().items;
    let of_two = devices.iter().find(|h| h.host == two).unwrap();
    assert_eq!(of_two.inventory.as_ref().unwrap().ceph_release.as_deref(), Some("18.2.7 (reef)"));
    assert!(of_two.release_mismatch.is_some(), "the dashboard's host view has the flag too");

    // Its packages downgraded to the cluster's major: no longer flagged.
    set(two, "16.2.15 (pacific)");
    poll(two).await;
    d.inventory.note_release_flags().await.unwrap();
    assert_eq!(hosts(&d).await.iter().find(|h| h.name == two).unwrap().release_mismatch, None);
    assert!(d.health().warnings.is_empty());
    // Polled again unchanged: no event again.
    poll(two).await;
    d.inventory.note_release_flags().await.unwrap();
    // Upgraded ahead of the cluster: flagged again, a warning in the log.
    set(two, "19.2.3 (squid)");
    poll(two).await;
    d.inventory.note_release_flags().await.unwrap();
    assert!(hosts(&d).await.iter().find(|h| h.name == two).unwrap().release_mismatch.is_some());
    assert_eq!(
        release_events(&d).await,
        [
            (Level::Info, "ceph-volume on f5-422-01 is now Ceph 16.2.15 (pacific) (was unknown)".into()),
            (Level::Info, "ceph-volume on f5-422-02 is now Ceph 18.2.7 (reef) (was unknown)".into()),
            (Level::Info, "ceph-volume on f5-422-02 is now Ceph 16.2.15 (pacific) (was 18.2.7 (reef))".into()),
            (
                Level::Info,
                "Host f5-422-02 is no longer flagged: its ceph-volume is of a release the cluster runs".into()
            ),
            (Level::Info, "ceph-volume on f5-422-02 is now Ceph 19.2.3 (squid) (was 16.2.15 (pacific))".into()),
            (
                Level::Warning,
                "Host f5-422-02 is flagged: ceph-volume is Ceph 19.2.3 (squid), the cluster runs 16 pacific".into()
            ),
        ],
        "oldest first; flagged at the first look after start: remembered, not told"
    );
    // `/healthz` lists it from the last look; a removed host goes at once.
    assert_eq!(d.health().warnings[0].detail.len(), 1);
    d.inventory.remove_host(two, true).await.unwrap();
    assert!(d.health().warnings.is_empty(), "{:?}", d.health());
}
