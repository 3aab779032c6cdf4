//! Applying specs whose placement names hosts the daemon does not know,
//! or selects none.

use crate::daemon::tests::with_cluster;
use crate::daemon::DaemonError;
use crate::wire::api::specs::ApplyQuery;

fn apply_query(dry_run: bool) -> ApplyQuery {
    ApplyQuery { dry_run, ..ApplyQuery::default() }
}

#[tokio::test]
async fn a_host_the_daemon_does_not_know_refuses_the_apply_and_the_dry_run() {
    let (_dir, d, _agents) = with_cluster().await;
    let typo = "service_type: osd\nservice_id: ssd\nplacement:\n  hosts: [f5-442-01, f5-422-02]\ndata_devices:\n  rotational: 0\n";
    for dry_run in [true, false] {
        match d.specs.apply(typo, &apply_query(dry_run)).await {
            Err(DaemonError::InvalidSpecs(errors)) => {
                assert_eq!(errors.len(), 1, "{errors:?}");
                assert_eq!(
                    (errors[0].field.as_str(), errors[0].value.as_deref()),
                    ("placement.hosts", Some("f5-442-01"))
                );
                assert!(errors[0].message.contains("did you mean f5-422-01?"), "{}", errors[0].message);
                assert!(errors[0].message.contains("f5-422-04"), "names the known hosts: {}", errors[0].message);
            }
            other => panic!("an unknown host must be refused (dry_run {dry_run}): {:?}", other.map(|a| a.stored)),
        }
    }
    assert!(d.store.specs().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_label_matching_no_host_is_warned_and_stored_only_when_confirmed() {
    let (_dir, d, _agents) = with_cluster().await;
    let spec = "service_type: osd\nservice_id: ssd\nplacement:\n  label: ssd-nodes\ndata_devices:\n  rotational: 0\n";
    let dry = d.specs.apply(spec, &apply_query(true)).await.expect("a dry-run with a warning");
    let note = dry.preview.notes.iter().find(|n| n.note.starts_with("NO HOST MATCHES: placement label 'ssd-nodes'"));
    assert!(note.is_some(), "{:?}", dry.preview.notes);
    assert_eq!(dry.empty_placements.len(), 1, "the answer says what needs confirming");
    assert!(dry.empty_placements[0].starts_with("osd.ssd: placement label 'ssd-nodes'"), "{:?}", dry.empty_placements);
    match d.specs.apply(spec, &apply_query(false)).await {
        Err(DaemonError::Invalid(m)) => assert!(m.contains("--allow-empty-placement"), "{m}"),
        other => panic!("an empty placement needs confirming: {:?}", other.map(|a| a.stored)),
    }
    assert!(d.store.specs().await.unwrap().is_empty(), "refused means nothing stored");
    let q = ApplyQuery { allow_empty_placement: true, ..ApplyQuery::default() };
    let stored = d.specs.apply(spec, &q).await.expect("confirmed").stored.expect("stored");
    assert_eq!(stored[0].service_name, "osd.ssd");
    d.inventory.label("f5-422-01", "ssd-nodes", true).await.unwrap();
    let dry = d.specs.apply(spec, &apply_query(true)).await.unwrap();
    assert!(dry.preview.notes.iter().all(|n| !n.note.starts_with("NO HOST")), "{:?}", dry.preview.notes);
}
