//! Applying specs whose placement names hosts the daemon does not know,
//! or selects none.

use crate::daemon::tests::with_cluster;
use crate::daemon::DaemonError;
use crate::wire::api::specs::{ApplyQuery, HostSpecAction};

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

/// cephadm's host specs beside an OSD spec: hosts added (one commit) and
/// relabelled before the OSD spec is planned on them; a dry-run plans as
/// if they were; one agent that does not answer adds none.
#[tokio::test]
async fn host_specs_add_and_relabel_hosts_before_the_osd_specs_are_planned() {
    let (_dir, d, agents) = with_cluster().await;
    let file = "service_type: host\nhostname: f5-422-05\naddr: 10.0.0.5\nlabels: [osd]\n---\n\
                service_type: host\nhostname: f5-422-06\naddr: 10.0.0.6:9000\nlabels: osd\n---\n\
                service_type: host\nhostname: f5-422-01\nlabels: [osd]\n---\n\
                service_type: osd\nservice_id: on_osd_hosts\nplacement:\n  label: osd\ndata_devices:\n  rotational: 0\n";
    let names = |hosts: Vec<crate::store::ManagedHost>| hosts.into_iter().map(|h| h.name).collect::<Vec<_>>();
    let before = names(d.store.hosts().await.unwrap());

    let dry = d.specs.apply(file, &apply_query(true)).await.expect("dry-run");
    let said: Vec<(&str, &str, HostSpecAction)> =
        dry.host_specs.iter().map(|h| (h.name.as_str(), h.addr.as_str(), h.action)).collect();
    assert_eq!(
        said,
        [
            ("f5-422-05", "10.0.0.5:8741", HostSpecAction::Add),
            ("f5-422-06", "10.0.0.6:9000", HostSpecAction::Add),
            ("f5-422-01", "f5-422-01:8741", HostSpecAction::Relabel),
        ]
    );
    assert!(dry.empty_placements.is_empty(), "label osd matches the hosts the file labels: {:?}", dry.empty_placements);
    assert_eq!(names(d.store.hosts().await.unwrap()), before, "a dry-run adds nothing");

    agents.down.lock().unwrap().push("f5-422-06".into());
    match d.specs.apply(file, &apply_query(false)).await {
        Err(DaemonError::CannotAct(m)) => assert!(m.contains("f5-422-06") && m.contains("no host was added"), "{m}"),
        other => panic!("an agent that does not answer stops the apply: {:?}", other.map(|a| a.host_specs)),
    }
    assert_eq!(names(d.store.hosts().await.unwrap()), before);
    assert!(d.store.specs().await.unwrap().is_empty());

    let applied = d.specs.apply(file, &ApplyQuery { no_check: true, ..ApplyQuery::default() }).await.expect("applied");
    assert_eq!(applied.stored.expect("the OSD spec stored")[0].service_name, "osd.on_osd_hosts");
    let hosts = d.store.hosts().await.unwrap();
    let now: Vec<(&str, &[String])> = hosts.iter().map(|h| (h.name.as_str(), h.labels.as_slice())).collect();
    assert_eq!(now.len(), before.len() + 2, "{now:?}");
    assert!(now.contains(&("f5-422-01", &["osd".to_string()][..])), "{now:?}");
    let events = d.store.events(None, 50).await.unwrap();
    let added: Vec<&str> = events.iter().filter_map(|e| e.message.strip_prefix("Added host ")).collect();
    assert!(added.iter().any(|m| m.starts_with("f5-422-05 ")) && added.iter().any(|m| m.starts_with("f5-422-06 ")));

    let again = d.specs.apply(file, &apply_query(true)).await.unwrap();
    assert!(again.host_specs.iter().all(|h| h.action == HostSpecAction::Unchanged), "{:?}", again.host_specs);
    let moved = file.replace("addr: 10.0.0.5\n", "addr: 10.0.0.50\n");
    match d.specs.apply(&moved, &apply_query(true)).await {
        Err(DaemonError::Invalid(m)) => assert!(m.contains("f5-422-05 is known with agent 10.0.0.5:8741"), "{m}"),
        other => panic!("a known host at another address is refused: {:?}", other.map(|a| a.host_specs)),
    }
    // cephadm adds labels to a known host, never takes one away.
    let fewer = "service_type: host\nhostname: f5-422-05\naddr: 10.0.0.5\nlabels: [ssd]\n";
    let relabelled = d.specs.apply(fewer, &apply_query(false)).await.expect("relabelled");
    assert_eq!(relabelled.host_specs[0].action, HostSpecAction::Relabel);
    assert_eq!(d.store.host("f5-422-05").await.unwrap().labels, ["osd", "ssd"]);
    // A refused OSD spec leaves the file's hosts unadded.
    let refused = "service_type: host\nhostname: f5-422-09\naddr: 10.0.0.9\n---\n\
                   service_type: osd\nservice_id: typo\nplacement:\n  hosts: [f5-442-09]\ndata_devices:\n  all: true\n";
    let q = ApplyQuery { no_check: true, ..ApplyQuery::default() };
    assert!(matches!(d.specs.apply(refused, &q).await, Err(DaemonError::InvalidSpecs(_))));
    assert!(d.store.host("f5-422-09").await.is_err(), "the refused file added its host");
    let located = "service_type: host\nhostname: f5-422-07\nlocation:\n  rack: r1\n";
    match d.specs.apply(located, &apply_query(true)).await {
        Err(DaemonError::InvalidSpecs(e)) => assert_eq!(e[0].field, "location"),
        other => panic!("a CRUSH location is refused: {:?}", other.map(|a| a.host_specs)),
    }
}
