//! The removal preview and the refusal of a removal that could not finish,
//! on the simulated cluster.

use super::*;

#[tokio::test]
async fn a_removal_that_cannot_finish_is_refused_unless_told_to_ignore_the_blockers() {
    let (_dir, d, sim) = sim_daemon(0.01).await;
    let osds = sim.osds();
    let keep = osds[0].host.clone();
    let ids: Vec<u32> = osds.iter().filter(|o| o.host != keep && !o.destroyed).map(|o| o.id).collect();
    let weights: Vec<f64> = osds.iter().map(|o| o.crush_weight).collect();
    let req = |ignore| removal::RemoveRequest {
        ids: ids.clone(),
        ignore_preview_blockers: ignore,
        ..removal::RemoveRequest::default()
    };
    let preview = d.removals.preview_removal(&ids, false).await.unwrap();
    assert!(preview.blockers.iter().any(|b| b.starts_with("pool 'rbd' (size 2)")), "{:?}", preview.blockers);
    match d.removals.schedule_removals(&req(false)).await {
        Err(DaemonError::RefusedUnsafe(m)) => {
            assert!(m.contains("pool 'rbd'") && m.contains("--ignore-preview-blockers"), "{m}")
        }
        other => panic!("not refused: {other:?}"),
    }
    assert!(d.store.ops::<crate::store::RemovalCodec>().active().await.unwrap().is_empty(), "nothing was queued");
    assert_eq!(sim.osds().iter().map(|o| o.crush_weight).collect::<Vec<_>>(), weights);

    let recs = d.removals.schedule_removals(&req(true)).await.unwrap();
    assert_eq!(recs.len(), ids.len());
    assert_eq!(recs[0].state.ignored_blockers, preview.blockers, "the override is in the record");
    let stored = d.store.ops::<crate::store::RemovalCodec>().by_id(recs[0].id).await.unwrap();
    assert_eq!(stored.state.ignored_blockers, preview.blockers);
    let events = d.store.events(None, 50).await.unwrap();
    let scheduled = events.iter().find(|e| e.kind == EventKind::RemovalScheduled).unwrap();
    assert_eq!(scheduled.level, crate::domain::event::Level::Warning);
    assert!(
        scheduled.message.contains("ignoring the preview's blockers (--ignore-preview-blockers): pool 'rbd'"),
        "{scheduled:?}"
    );
}

#[tokio::test]
async fn the_preview_of_one_osd_moves_only_its_pgs_and_changes_nothing() {
    let (_dir, d, sim) = sim_daemon(0.01).await;
    let before = sim.osds();
    let p = d.removals.preview_removal(&[15], false).await.unwrap();
    assert!(p.pgs_to_move > 0 && p.blockers.is_empty(), "{p:?}");
    // The host loses weight too, so a sibling's PG may leave it (as with
    // CRUSH's straw2): data leaves only that host, and nothing lands on 15.
    let host = before.iter().find(|o| o.id == 15).unwrap().host.clone();
    let on_host = |id: &u32| before.iter().any(|o| o.id == *id && o.host == host);
    assert!(p.moves.iter().all(|m| m.from.iter().all(on_host) && !m.to.contains(&15)), "{:?}", p.moves);
    assert!(p.moves.iter().any(|m| m.from == [15]));
    assert_eq!(p.bytes_to_move, p.moves.iter().map(|m| m.bytes).sum::<u64>());
    assert_eq!(p.eta_s, None, "no throughput observed yet");
    assert_eq!(p.eta_source, crate::wire::api::removal_preview::EtaSource::None);
    assert_eq!(sim.osds(), before);
    assert!(d.store.ops::<crate::store::RemovalCodec>().active().await.unwrap().is_empty());
    assert!(matches!(d.removals.preview_removal(&[15, 15], false).await, Err(DaemonError::Invalid(_))));
    assert!(matches!(d.removals.preview_removal(&[999], false).await, Err(DaemonError::NotFound(_))));
}

/// Once a drain was watched, the preview's ETA comes from its samples
/// (the simulator reports no recovery rate of its own).
#[tokio::test]
async fn after_a_drain_the_preview_estimates_at_the_rate_it_moved_data() {
    use crate::domain::removal::Phase;
    use crate::wire::api::removal_preview::EtaSource;
    let (_dir, d, sim) = sim_daemon(0.5).await;
    let req = removal::RemoveRequest { ids: vec![15], ..Default::default() };
    d.removals.schedule_removals(&req).await.unwrap();
    let done = rounds_until(&d, &sim, 15, |r| r.state.phase == Phase::Done).await;
    let samples = d.store.samples(done.id).await.unwrap();
    let (first, last) = (samples.first().unwrap(), samples.iter().find(|s| s.bytes_left == Some(0)).unwrap());
    let moved = first.bytes_left.unwrap() as f64;
    let rate = moved / ((last.at - first.at) as f64 / 1000.0);
    let p = d.removals.preview_removal(&[8], false).await.unwrap();
    assert_eq!(p.eta_source, EtaSource::RecentDrains, "{}", p.eta_basis);
    let used = p.eta_bytes_per_s.unwrap();
    assert!((used - rate).abs() < 1e-6 * rate, "{used} vs {rate}");
    assert!((p.eta_s.unwrap() - p.bytes_to_move as f64 / rate).abs() < 1e-3, "{p:?}");
    assert!(p.eta_basis.starts_with("the recent drains osdkeeper watched (osd.15)"), "{}", p.eta_basis);
}
